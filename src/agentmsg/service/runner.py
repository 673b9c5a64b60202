"""``ToolRunner``: serve decorated Python functions as tools through the service.

::

    runner = ToolRunner("127.0.0.1:50051", name="files")

    @runner.tool(kind="read")
    def read_file(path: str, limit: int = 100) -> str:
        "Read the first lines of a text file."
        ...

    runner.run()  # or: await runner.serve()

A function's JSON Schema comes from its signature (str, int, float, bool,
list, dict, and ``X | None``; parameters without defaults are required), or
from ``parameters=``. It may be sync (run in a worker thread) or async. It
returns a str, a content block, a list of blocks, a
:class:`~agentmsg.ToolResultContent`, or any JSON value (sent as JSON text).
An exception becomes an ``is_error`` result with its message. A cancel from
the service (the caller cancelled or its deadline passed) cancels an async
tool; a sync tool cannot be interrupted, and its late result is discarded.

A runner outlives its server: when the connection is lost (a restart, a
network gap) it reconnects with capped exponential backoff and registers its
tools again, with no step from its owner.

It stops gracefully (:mod:`agentmsg.service.draining`): on SIGTERM or SIGINT
(:meth:`ToolRunner.run`, or ``serve(handle_signals=True)``), :meth:`~ToolRunner.drain`
or :meth:`~ToolRunner.stop`, it asks the service for no new call, gives the
calls in flight ``grace`` seconds (10 by default), answers those still running
as cancelled, unregisters, and exports its last spans.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
import logging
import random
import threading
import time
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from agentmsg._eventloop import EventLoopName
from agentmsg._eventloop import run as run_on
from agentmsg._logtext import loggable
from agentmsg.content import ContentBase, ToolCallContent, ToolKind, ToolResultContent
from agentmsg.errors import AgentMsgError, ConflictError, ToolArgumentsError, UnavailableError, ValidationError
from agentmsg.service import status
from agentmsg.service.draining import (
    CLOSE_WAIT,
    DEFAULT_GRACE,
    FLUSH_TIMEOUT,
    ServedStream,
    Stop,
    cancelled_result,
    checked_grace,
    flush_spans,
    stop_on_signals,
)
from agentmsg.service.telemetry import instrument_stub, tool_execution
from agentmsg.tools import ToolDefinition
from agentmsg.v1 import content_pb2, tool_service_pb2, tool_service_pb2_grpc

__all__ = ["ToolRunner", "schema_for"]

log = logging.getLogger("agentmsg.runner")

INITIAL_BACKOFF = 0.1  # seconds before the first reconnection attempt; doubled each failure up to max_backoff
MAX_BACKOFF = 10.0

F = typing.TypeVar("F", bound=Callable[..., Any])
_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}


def _json_type(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _json_type(options[0])
        return {"anyOf": [_json_type(a) for a in options]}
    base = origin or annotation
    if base in _JSON_TYPES:
        schema: dict[str, Any] = {"type": _JSON_TYPES[base]}
        args = typing.get_args(annotation)
        if base is list and args:
            schema["items"] = _json_type(args[0])
        return schema
    return {}


def schema_for(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for a function's parameters, from its annotations."""
    hints = typing.get_type_hints(function)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        properties[name] = _json_type(hints.get(name, Any))
        if parameter.default is parameter.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


@dataclass
class _Tool:
    definition: ToolDefinition
    function: Callable[..., Any]


def _result(call: ToolCallContent, value: Any) -> ToolResultContent:
    if isinstance(value, ToolResultContent):
        if value.id != call.id:
            pb = content_pb2.Content()
            pb.CopyFrom(value.pb)
            pb.tool_result.id = call.id
            return ToolResultContent._wrap(pb)
        return value
    if isinstance(value, str):
        return ToolResultContent(call.id, value, name=call.name, index=call.index)
    if isinstance(value, ContentBase):
        return ToolResultContent(call.id, [value], name=call.name, index=call.index)  # type: ignore[list-item]
    if isinstance(value, list) and value and all(isinstance(v, ContentBase) for v in value):
        return ToolResultContent(call.id, value, name=call.name, index=call.index)
    return ToolResultContent(
        call.id, json.dumps(value, ensure_ascii=False, default=str), name=call.name, index=call.index
    )


async def _in_thread(function: Callable[..., Any], args: Mapping[str, Any]) -> Any:
    """A sync tool on a thread of its own, a daemon: one that never returns cannot keep a stopped runner alive."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()  # the call's span stays current inside the tool

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return  # the call was cancelled: its late result is discarded
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error if isinstance(error, Exception) else RuntimeError(repr(error)))

    def work() -> None:
        try:
            value, error = context.run(function, **args), None
        except BaseException as exc:  # handed to the caller, whatever it is
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name=f"agentmsg-tool-{getattr(function, '__name__', 'tool')}", daemon=True).start()
    return await future


class ToolRunner:
    """Serves Python functions as tools through an agentmsg server (see the module docstring)."""

    def __init__(
        self,
        target: str,
        *,
        name: str = "python-runner",
        token: str | None = None,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        reconnect: bool = True,
        max_backoff: float = MAX_BACKOFF,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        self.target = target
        self.name = name
        self.reconnect = reconnect
        self.max_backoff = max_backoff
        self.grace = checked_grace(grace)
        """Seconds a stopping runner gives its calls in flight before it answers them cancelled."""
        self._stop: Stop | None = None  # while serving
        self._token = token
        self._tls = (root_certificates, private_key, certificate_chain)
        self._tools: dict[str, _Tool] = {}
        self.runner_id: str | None = None
        self.registered = asyncio.Event()
        # start() / stop(): the background thread, its loop and the serving task.
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    @typing.overload
    def tool(self, function: F) -> F: ...
    @typing.overload
    def tool(
        self,
        function: None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | str | None = None,
        kind: ToolKind | str | None = None,
        requires_approval: bool = False,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        function: F | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | str | None = None,
        kind: ToolKind | str | None = None,
        requires_approval: bool = False,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool (usable bare, ``@runner.tool``, or with options).

        ``requires_approval=True``: the service runs a call of the tool only after a person approves it (an
        approval block for the call appended to the call's session); a denied call is answered with an error
        result naming who denied it and why, and the function does not run.
        """

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            if tool_name in self._tools:
                raise ValidationError.single("name", "unique", f"tool {tool_name!r} is registered twice")
            definition = ToolDefinition(
                tool_name,
                description if description is not None else inspect.getdoc(fn) or "",
                parameters if parameters is not None else schema_for(fn),
                kind=kind,
                requires_approval=requires_approval,
            )
            self._tools[tool_name] = _Tool(definition, fn)
            return fn

        return register(function) if function is not None else register

    @property
    def definitions(self) -> list[ToolDefinition]:
        """The registered tools."""
        return [tool.definition for tool in self._tools.values()]

    async def call(self, call: ToolCallContent) -> ToolResultContent:
        """Run one call locally (what the runner does for each call the service sends)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResultContent.error(call.id, f"this runner has no tool {call.name!r}", name=call.name)
        try:
            args = call.args
        except ToolArgumentsError as exc:
            return ToolResultContent.error(call.id, f"invalid arguments: {exc.reason}", name=call.name)
        try:
            if inspect.iscoroutinefunction(tool.function):
                value = await tool.function(**args)
            else:
                value = await _in_thread(tool.function, args)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool's failure is its result, not the runner's
            return ToolResultContent.error(call.id, f"{type(exc).__name__}: {exc}", name=call.name)
        try:
            return _result(call, value)
        except AgentMsgError as exc:
            return ToolResultContent.error(call.id, f"the tool's return value cannot be sent: {exc}", name=call.name)

    async def serve(self, *, handle_signals: bool = False) -> None:
        """Connect, register, and answer calls, until drained (:meth:`drain`) or cancelled.

        A lost connection (the server restarting or unreachable) is retried with capped exponential
        backoff (``max_backoff`` seconds at most between attempts), and the tools are registered again.
        A refused registration raises (a tool name another runner serves, a token without ``tools:serve``);
        so does a refusal after a reconnection, unless it is a tool name still held by this runner's
        previous registration (a cluster keeps it until the old node's lease ends), which is retried.
        With ``reconnect=False`` it returns when the first connection ends.

        ``handle_signals``: SIGTERM and SIGINT drain the runner (a second one ends the grace at once); only in
        the main thread's event loop. Cancelled, the runner stops at once: its calls in flight go unanswered
        and the service answers their callers that the runner went away.
        """
        if not self._tools:
            raise ValidationError.single("tools", "required", "register at least one tool before serving")
        stop = self._stop = Stop(self.name)
        try:
            with stop_on_signals(stop, self.grace) if handle_signals else contextlib.nullcontext():
                await self._serve(stop)
            if stop.asked.is_set():
                await flush_spans()
        finally:
            self._stop = None
            stop.ended.set()

    async def _serve(self, stop: Stop) -> None:
        delay, registered_before = INITIAL_BACKOFF, False
        while not stop.asked.is_set():
            try:
                await self._serve_once(stop)
            except (UnavailableError, grpc.RpcError) as exc:
                if stop.asked.is_set():
                    return  # stopping anyway: the server answers the callers of what was in flight
                if not self.reconnect:
                    raise
                log.warning("runner %s lost the server at %s: %s", self.name, self.target, exc)
            except ConflictError:
                if stop.asked.is_set():
                    return
                if not (self.reconnect and registered_before):
                    raise
                log.warning("runner %s: its tools are still held by its previous registration; retrying", self.name)
            else:
                if not self.reconnect or stop.asked.is_set():
                    return
                log.warning("runner %s: the server at %s closed the connection", self.name, self.target)
            if self.registered.is_set():
                registered_before, delay = True, INITIAL_BACKOFF
            self.registered.clear()
            await stop.sleep(delay * (0.5 + random.random() / 2))  # noqa: S311 - jitter, not secrecy
            delay = min(delay * 2, self.max_backoff)

    async def drain(self, grace: float | None = None) -> None:
        """Stop serving gracefully, and return once :meth:`serve` has ended (in the event loop it serves in).

        The service is told to send no new call (it takes the tools off at once: a new call goes to a runner
        that registers them next, or is answered ``NOT_FOUND``); the calls in flight get ``grace`` seconds
        (``self.grace`` when None) to finish; those still running are answered cancelled; then the runner
        unregisters and exports the spans it has not exported yet. Nothing happens when it is not serving.
        """
        grace = self.grace if grace is None else checked_grace(grace)
        stop = self._stop
        if stop is None:
            return
        stop.ask(grace)
        await stop.ended.wait()

    async def _serve_once(self, stop: Stop) -> None:
        """One connection: register, answer calls until it ends or the runner drains (a failure raised as an
        agentmsg error)."""
        root, key, chain = self._tls
        if root is not None or chain is not None:
            channel = grpc.aio.secure_channel(self.target, grpc.ssl_channel_credentials(root, key, chain))
        else:
            channel = grpc.aio.insecure_channel(self.target)
        metadata = (("authorization", f"Bearer {self._token}"),) if self._token else ()
        stub = instrument_stub(tool_service_pb2_grpc.ToolServiceStub(channel), "agentmsg-runner")
        # The explicit write API (no request generator): nothing is left suspended if the call ends early.
        served = ServedStream(stub.ServeTools(metadata=metadata))

        async def run(call: ToolCallContent, slot: str, handle: str, trace_context: Mapping[str, str]) -> None:
            with tool_execution(call, trace_context) as record:  # a span in the caller's trace, when tracing
                try:
                    result = await self.call(call)
                except asyncio.CancelledError:
                    if slot not in served.cut:
                        raise  # the service's cancel: nobody waits for the result
                    result = cancelled_result(call, self.name, stop.grace)
                record(result)
            await served.answer(slot, call, result, handle)

        async def read() -> None:
            try:
                while (message := await served.stream.read()) is not grpc.aio.EOF:
                    response: tool_service_pb2.ServeToolsResponse = message
                    kind = response.WhichOneof("kind")
                    if kind == "registered":
                        self.runner_id = response.registered.runner_id
                        self.registered.set()
                    elif kind == "run":
                        call = ToolCallContent._wrap(content_pb2.Content(tool_call=response.run.call))
                        # The service's handle names the call (a server older than handles: its call id does).
                        slot = response.run.handle or call.id
                        served.start(slot, run(call, slot, response.run.handle, dict(response.run.trace_context)))
                    elif kind == "cancel":
                        cancel = response.cancel
                        if served.cancel(cancel.handle or cancel.call_id):
                            log.info("call %s cancelled (%s)", loggable(cancel.call_id), loggable(cancel.reason))
                    elif kind == "draining":
                        served.last.set()
            finally:
                served.last.set()

        reader = asyncio.ensure_future(read())
        asked = asyncio.ensure_future(stop.asked.wait())
        try:
            await served.send(
                tool_service_pb2.ServeToolsRequest(
                    register=tool_service_pb2.RegisterTools(
                        runner_name=self.name, tools=[d.pb for d in self.definitions]
                    )
                )
            )
            await asyncio.wait({reader, asked}, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                await served.drain(stop, reader)
            if reader.done():
                reader.result()  # raises what ended the stream
        except grpc.RpcError as exc:
            raise status.from_rpc_error(exc) from None
        finally:
            for task in (reader, asked):
                task.cancel()
            served.cancel_all()
            served.stream.cancel()
            await channel.close()

    def run(self, *, loop: EventLoopName = "auto") -> None:
        """Serve until SIGTERM or SIGINT, then drain (see :meth:`drain`) and return (blocking; the main thread).

        ``loop`` is the event loop it serves on: ``auto`` (uvloop when it is installed, else asyncio's), ``uvloop``
        or ``asyncio``; a name that is not one of them, or ``uvloop`` when it is not installed, raises
        :class:`~agentmsg.ValidationError` (field ``loop``) before anything starts."""
        with contextlib.suppress(KeyboardInterrupt):
            run_on(self.serve(handle_signals=True), loop)

    def start(self, timeout: float = 10.0) -> None:
        """Serve in a background thread (with its own event loop) and return once the tools are registered.

        For a runner beside other code in one program (a script, a notebook, a test); :meth:`stop` ends it.
        Raises what :meth:`serve` raised if it ended first (a refused registration), or
        :class:`~agentmsg.UnavailableError` if the tools were not registered within ``timeout`` seconds.
        """
        if self._thread is not None and self._thread.is_alive():
            raise ValidationError.single("runner", "state", f"runner {self.name!r} is already started")
        loop = asyncio.new_event_loop()
        ended: list[BaseException] = []

        def main() -> None:
            asyncio.set_event_loop(loop)
            self._task = loop.create_task(self.serve())
            try:
                loop.run_until_complete(self._task)
            except BaseException as exc:
                ended.append(exc)
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=main, name=f"agentmsg-runner-{self.name}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.registered.is_set():
            if not self._thread.is_alive():
                if ended and not isinstance(ended[0], asyncio.CancelledError):
                    raise ended[0]
                raise UnavailableError(f"runner {self.name!r} stopped before registering its tools")
            if time.monotonic() > deadline:
                self._cancel()  # nothing registered, nothing to drain
                raise UnavailableError(f"runner {self.name!r} could not register at {self.target} in {timeout:g} s")
            time.sleep(0.01)

    def stop(self, grace: float | None = None) -> None:
        """End a runner started with :meth:`start`: drain it (see :meth:`drain`; ``grace`` seconds for its calls
        in flight, ``self.grace`` when None) and wait for its thread."""
        grace = self.grace if grace is None else checked_grace(grace)
        thread, loop, task = self._thread, self._loop, self._task
        if thread is None or loop is None or task is None or not thread.is_alive():
            return
        drain = self.drain(grace)
        try:
            asyncio.run_coroutine_threadsafe(drain, loop)
        except RuntimeError:  # the loop closed meanwhile: the thread is ending
            drain.close()
        thread.join(grace + CLOSE_WAIT * 2 + FLUSH_TIMEOUT)
        self._cancel()  # the server did not answer in time: stop at once

    def _cancel(self) -> None:
        thread, loop, task = self._thread, self._loop, self._task
        if thread is None or loop is None or task is None or not thread.is_alive():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the thread is ending
            loop.call_soon_threadsafe(task.cancel)
        thread.join(CLOSE_WAIT)
