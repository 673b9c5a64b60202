"""How a tool runner stops gracefully: the part ``ToolRunner`` and ``McpRunner`` share.

Asked to stop (SIGTERM or SIGINT when it handles signals, ``drain()``, ``stop()``), a runner

1. tells the service it is draining (``ServeToolsRequest.drain``): the service takes its tools off at once,
   so a new call goes to a runner that registers them next or is answered ``NOT_FOUND``, and answers
   ``Draining`` behind every call it had already sent;
2. lets the calls in flight finish, for ``grace`` seconds at most;
3. answers those still running as cancelled (``is_error`` results that say so) and cancels them;
4. closes its side of the stream, which unregisters it; and
5. exports the spans it has not exported yet (:func:`~agentmsg.service.telemetry.flush_tracing`).

A second signal cuts the grace short: what still runs is answered cancelled at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import grpc

from agentmsg.content import ToolCallContent, ToolResultContent
from agentmsg.errors import ValidationError
from agentmsg.service.telemetry import flush_tracing
from agentmsg.v1 import tool_service_pb2

__all__ = [
    "CLOSE_WAIT",
    "DEFAULT_GRACE",
    "FLUSH_TIMEOUT",
    "STOP_SIGNALS",
    "ServedStream",
    "Stop",
    "cancelled_result",
    "checked_grace",
    "flush_spans",
    "stop_on_signals",
]

log = logging.getLogger("agentmsg.runner")

DEFAULT_GRACE = 10.0  # seconds a stopping runner gives its calls in flight (a Kubernetes pod gets 30 in all)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
CLOSE_WAIT = 5.0  # seconds for the last outcomes to go out and the service to end the stream after a drain
FLUSH_TIMEOUT = 5.0  # seconds for the spans not yet exported


def checked_grace(grace: float) -> float:
    """A runner's ``grace``, refused unless a number of seconds >= 0."""
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not grace >= 0:
        raise ValidationError.single("grace", "gte", f"must be a number of seconds >= 0, not {grace!r}")
    return float(grace)


class Stop:
    """A stop asked of a serving runner (one per ``serve()``, made in its event loop): when, and its grace."""

    def __init__(self, runner: str) -> None:
        self.runner = runner
        self.asked = asyncio.Event()
        self.ended = asyncio.Event()
        self.grace = 0.0
        """The seconds the calls in flight get (from the first ask to the deadline)."""
        self._asked_at: float | None = None
        self._deadline: float | None = None
        self._changed = asyncio.Event()

    def ask(self, grace: float) -> None:
        """Stop, giving the calls in flight ``grace`` seconds; asked again, it may hurry, never wait longer."""
        now = asyncio.get_running_loop().time()
        if self._asked_at is None:
            self._asked_at = now
        deadline = now + max(grace, 0.0)
        if self._deadline is None or deadline < self._deadline:
            self._deadline, self.grace = deadline, round(deadline - self._asked_at, 3)
            self._changed.set()
        self.asked.set()

    def signalled(self, grace: float, signum: int) -> None:
        name = signal.Signals(signum).name
        if self.asked.is_set():
            log.warning("runner %r: %s again; the calls in flight are answered cancelled now", self.runner, name)
            self.ask(0.0)
        else:
            log.warning("runner %r: %s; draining (the calls in flight get %g s)", self.runner, name, grace)
            self.ask(grace)

    async def until(self, *futures: asyncio.Future[Any]) -> bool:
        """Wait until one of ``futures`` is done or the grace ends; whether one is done."""
        loop = asyncio.get_running_loop()
        while not any(future.done() for future in futures):
            remaining = (self._deadline if self._deadline is not None else loop.time()) - loop.time()
            if remaining <= 0:
                return False
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({*futures, changed}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
        return True

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when asked to stop meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.asked.wait(), seconds)


@contextlib.contextmanager
def stop_on_signals(stop: Stop, grace: float) -> Iterator[None]:
    """SIGTERM and SIGINT ask ``stop`` to drain with ``grace`` (a second one: at once), while the block runs."""
    if threading.current_thread() is not threading.main_thread():
        raise ValidationError.single(
            "handle_signals", "main_thread", "signal handlers can be installed only by the main thread's event loop"
        )
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.signalled, grace, signum)
    try:
        yield
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


def cancelled_result(call: ToolCallContent, runner: str, grace: float) -> ToolResultContent:
    """What the caller of a call cut off by a drain's end gets."""
    return ToolResultContent.error(
        call.id,
        f"cancelled: the tool runner {runner!r} stopped and the call did not finish within its grace ({grace:g} s)",
        name=call.name,
    )


class ServedStream:
    """One ``ServeTools`` stream's side of a runner: its writes, and the calls it runs by the service's handle."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.running: dict[str, asyncio.Task[None]] = {}
        self.answering: set[str] = set()  # calls whose result is made: being sent, never cut off
        self.cut: set[str] = set()  # calls a drain's grace ran out on: answered cancelled
        self.last = asyncio.Event()  # the service's Draining came, or the stream ended: no call follows
        self.closed = False  # this side is closed: a call that still comes is left to the service
        self._writing = asyncio.Lock()

    async def send(self, request: tool_service_pb2.ServeToolsRequest) -> None:
        async with self._writing:
            await self.stream.write(request)

    async def answer(self, slot: str, call: ToolCallContent, result: ToolResultContent, handle: str) -> None:
        """Send a call's outcome (lost quietly when the stream is gone: the service answered the caller)."""
        self.answering.add(slot)
        outcome = tool_service_pb2.ToolCallOutcome(call_id=call.id, result=result.pb.tool_result, handle=handle)
        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
            await self.send(tool_service_pb2.ServeToolsRequest(outcome=outcome))

    def start(self, slot: str, work: Coroutine[Any, Any, None]) -> None:
        """Run a call the service sent (``slot``: its handle, or its id from a server older than handles)."""
        if self.closed:
            work.close()  # after this side closed nothing can answer it: the service answers its caller
            return
        task = asyncio.ensure_future(work)
        self.running[slot] = task

        def forget(_: asyncio.Task[None]) -> None:
            if self.running.get(slot) is task:
                del self.running[slot]
            self.answering.discard(slot)

        task.add_done_callback(forget)

    def cancel(self, slot: str) -> bool:
        """The service's cancel (the caller cancelled, or its deadline passed): nobody waits for the result."""
        found = self.running.get(slot)
        if found is not None:
            found.cancel()
        return found is not None

    def cancel_all(self) -> None:
        for task in self.running.values():
            task.cancel()

    async def drain(self, stop: Stop, reader: asyncio.Future[None]) -> None:
        """Steps 1-4 of the module docstring on this stream (``reader`` reads the service's side)."""
        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
            await self.send(tool_service_pb2.ServeToolsRequest(drain=tool_service_pb2.DrainTools()))
        last = asyncio.ensure_future(self.last.wait())
        try:
            await stop.until(last, reader)  # every call the service sent has come
        finally:
            last.cancel()
        while self.running and not reader.done():
            everything = asyncio.ensure_future(asyncio.wait(list(self.running.values())))
            try:
                if not await stop.until(everything, reader):
                    break
            finally:
                everything.cancel()
        late = [slot for slot in self.running if slot not in self.answering]
        for slot in late:
            self.cut.add(slot)
            self.running[slot].cancel()
        if self.running:  # the cut calls answer cancelled; the finished ones send their outcomes
            await asyncio.wait(list(self.running.values()), timeout=CLOSE_WAIT)
        if late:
            log.warning(
                "runner %r: %d call(s) did not finish within the grace (%g s): answered cancelled",
                stop.runner,
                len(late),
                stop.grace,
            )
        self.closed = True
        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
            async with self._writing:
                await self.stream.done_writing()
        await asyncio.wait({reader}, timeout=CLOSE_WAIT)  # the service ends the stream once it read this side


async def flush_spans() -> None:
    """Step 5: the spans not exported yet go now (a batch processor would wait out its delay)."""
    if not await asyncio.to_thread(flush_tracing, FLUSH_TIMEOUT):
        log.warning("some spans were not exported within %g s", FLUSH_TIMEOUT)
