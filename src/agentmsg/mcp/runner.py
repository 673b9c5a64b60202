"""``McpRunner``: any MCP server as an agentmsg tool runner.

::

    runner = McpRunner("127.0.0.1:50051", stdio_server("npx", ["@modelcontextprotocol/server-everything"]))
    await runner.serve()

It starts (stdio) or reaches (streamable HTTP) the MCP server, reads its
``tools/list``, registers the tools with the agentmsg service (``ServeTools``,
kind ``MCP``, names with ``prefix`` in front), and answers each call with a
``tools/call``:

- the call's deadline is the MCP request's timeout, and a cancel from the
  service (the caller cancelled, or its deadline passed) cancels the request,
  which sends the MCP server ``notifications/cancelled``;
- ``notifications/tools/list_changed`` makes it list again and re-register
  when the tools changed;
- a server that exits is restarted with exponential backoff; one that cannot start
  (its command does not exist, or it never came up in ``start_attempts``
  tries in a row) stops the runner with :class:`McpServerStartError`;
  a call in flight when it dies, or arriving while it is down, gets an
  ``is_error`` result saying so, never a hang;
- a tool whose definition is bad (a schema that is not a JSON object...) is
  left out and named in :attr:`McpRunner.problems`; a malformed result gives
  an ``is_error`` result naming the problem. The other tools go on serving;
- it stops gracefully, as ``ToolRunner`` does (:mod:`agentmsg.service.draining`):
  on SIGTERM or SIGINT (:meth:`McpRunner.run`, ``serve(handle_signals=True)``)
  or :meth:`McpRunner.drain`, the service sends it no new call, the calls in
  flight get ``grace`` seconds, those still running are cancelled (the MCP
  server hears ``notifications/cancelled``) and answered so, then it
  unregisters, stops the MCP server and exports its last spans.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TextIO

import grpc

from agentmsg import errors
from agentmsg._eventloop import EventLoopName
from agentmsg._eventloop import run as run_on
from agentmsg._logtext import loggable
from agentmsg.content import ToolCallContent
from agentmsg.mcp._session import MCPServerSpec, describe
from agentmsg.mcp._tools import McpServerStartError, McpTools
from agentmsg.service.draining import (
    DEFAULT_GRACE,
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

__all__ = ["McpRunner", "McpServerStartError"]

log = logging.getLogger("agentmsg.mcp.runner")

_RPC_ERRORS: dict[grpc.StatusCode, type[errors.ServiceError]] = {
    grpc.StatusCode.ALREADY_EXISTS: errors.ConflictError,
    grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
}
# How long a re-registration waits for the calls still running on the old connection.
_DRAIN_SECONDS = 10.0


class McpRunner(McpTools):
    """Serves an MCP server's tools through an agentmsg server (see the module docstring)."""

    def __init__(
        self,
        target: str,
        server: MCPServerSpec,
        *,
        name: str | None = None,
        prefix: str = "",
        token: str | None = None,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        restart_delay: float = 0.5,
        max_restart_delay: float = 30.0,
        errlog: TextIO | None = None,
        grace: float = DEFAULT_GRACE,
        start_attempts: int = 5,
    ) -> None:
        super().__init__(
            server,
            name=name or f"mcp:{describe(server)}"[:200],
            prefix=prefix,
            restart_delay=restart_delay,
            max_restart_delay=max_restart_delay,
            errlog=errlog,
            start_attempts=start_attempts,
        )
        self.target = target
        self._token = token
        self._tls = (root_certificates, private_key, certificate_chain)
        self.grace = checked_grace(grace)
        """Seconds a stopping runner gives its calls in flight before it answers them cancelled."""
        self._stop: Stop | None = None  # while serving
        self.runner_id: str | None = None
        self.registered = asyncio.Event()
        """Set once the service accepted a registration (cleared while re-registering)."""

    # --- the agentmsg side ------------------------------------------------------------------------------------

    def _channel(self) -> grpc.aio.Channel:
        root, key, chain = self._tls
        if root is not None or chain is not None:
            return grpc.aio.secure_channel(self.target, grpc.ssl_channel_credentials(root, key, chain))
        return grpc.aio.insecure_channel(self.target)

    async def _serve_stream(
        self, stub: tool_service_pb2_grpc.ToolServiceAsyncStub, tools: list[ToolDefinition], stop: Stop
    ) -> None:
        """Register ``tools`` and answer calls until the tools change or the runner drained (returns) or the stream
        ends (raises)."""
        metadata = (("authorization", f"Bearer {self._token}"),) if self._token else ()
        served = ServedStream(stub.ServeTools(metadata=metadata))

        async def run(
            call: ToolCallContent, slot: str, timeout: float | None, handle: str, trace_context: dict[str, str]
        ) -> None:
            with tool_execution(call, trace_context) as record:  # a span in the caller's trace, when tracing
                try:
                    result = await self.call(call, timeout)
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
                        timeout = (
                            response.run.timeout.ToTimedelta().total_seconds()
                            if response.run.HasField("timeout")
                            else None
                        )
                        # The service's handle names the call (a server older than handles: its call id does).
                        slot = response.run.handle or call.id
                        served.start(
                            slot, run(call, slot, timeout, response.run.handle, dict(response.run.trace_context))
                        )
                    elif kind == "cancel":
                        if served.cancel(response.cancel.handle or response.cancel.call_id):
                            log.info(
                                "call %s cancelled (%s)",
                                loggable(response.cancel.call_id),
                                loggable(response.cancel.reason),
                            )
                    elif kind == "draining":
                        served.last.set()
            finally:
                served.last.set()
            if not served.closed:
                raise errors.UnavailableError("the agentmsg server closed the runner's stream")

        register = tool_service_pb2.RegisterTools(runner_name=self.name, tools=[d.pb for d in tools])
        reader = asyncio.ensure_future(read())
        changed = asyncio.ensure_future(self._changed.wait())
        asked = asyncio.ensure_future(stop.asked.wait())
        try:
            await served.send(tool_service_pb2.ServeToolsRequest(register=register))
            await asyncio.wait([reader, changed, asked], return_when=asyncio.FIRST_COMPLETED)
            if reader.done():
                reader.result()  # raises what ended the stream
            if stop.asked.is_set():
                await served.drain(stop, reader)
            elif served.running:
                await asyncio.wait(list(served.running.values()), timeout=_DRAIN_SECONDS)
        except grpc.RpcError as exc:
            code = exc.code()
            raise _RPC_ERRORS.get(code, errors.UnavailableError)(
                f"agentmsg server {self.target}: {exc.details()} ({code.name})"
            ) from None
        finally:
            self.registered.clear()
            for task in (reader, changed, asked):
                task.cancel()
            served.cancel_all()
            served.stream.cancel()

    async def _register(self, stop: Stop) -> None:
        channel = self._channel()
        try:
            stub = instrument_stub(tool_service_pb2_grpc.ToolServiceStub(channel), "agentmsg-runner")
            while not stop.asked.is_set():
                changed = asyncio.ensure_future(self._changed.wait())
                asked = asyncio.ensure_future(stop.asked.wait())
                try:
                    await asyncio.wait([changed, asked], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    changed.cancel()
                    asked.cancel()
                if stop.asked.is_set():
                    return
                self._changed.clear()
                if self.tools:
                    await self._serve_stream(stub, list(self.tools), stop)
        finally:
            await channel.close()

    async def serve(self, *, handle_signals: bool = False) -> None:
        """Run until drained (:meth:`drain`) or cancelled; raises when the agentmsg service refuses the runner or
        goes away, and :class:`McpServerStartError` when the MCP server cannot start (its command cannot run, or it
        never came up in ``start_attempts`` tries in a row; once it has been up, it is restarted whenever it exits).

        ``handle_signals``: SIGTERM and SIGINT drain the runner (a second one ends the grace at once); only in the
        main thread's event loop.
        """
        stop = self._stop = Stop(self.name)
        supervisor = asyncio.ensure_future(self.supervise())
        try:
            with stop_on_signals(stop, self.grace) if handle_signals else contextlib.nullcontext():
                registering = asyncio.ensure_future(self._register(stop))
                try:
                    await asyncio.wait({registering, supervisor}, return_when=asyncio.FIRST_COMPLETED)
                    if supervisor.done() and not registering.done():
                        supervisor.result()  # the MCP server cannot start: McpServerStartError
                    await registering
                except errors.ServiceError:
                    if not stop.asked.is_set():
                        raise  # stopping anyway: the server answers the callers of what was in flight
                finally:
                    if not registering.done():
                        registering.cancel()
                        with contextlib.suppress(asyncio.CancelledError, errors.ServiceError):
                            await registering
        finally:
            self._stop = None
            try:
                await self.stop_supervising(supervisor)  # the MCP server stopped, reaped, its transport closed
                with contextlib.suppress(asyncio.CancelledError, McpServerStartError):  # raised above when it was
                    await supervisor
                if stop.asked.is_set():
                    await flush_spans()
            finally:
                stop.ended.set()

    async def drain(self, grace: float | None = None) -> None:
        """Stop serving gracefully, and return once :meth:`serve` has ended (in the event loop it serves in): no new
        call, ``grace`` seconds (``self.grace`` when None) for the calls in flight, the rest cancelled and answered
        so, then unregistered, the MCP server stopped and the spans exported. Nothing happens when not serving."""
        grace = self.grace if grace is None else checked_grace(grace)
        stop = self._stop
        if stop is None:
            return
        stop.ask(grace)
        await stop.ended.wait()

    def run(self, *, loop: EventLoopName = "auto") -> None:
        """Serve until SIGTERM or SIGINT, then drain (see :meth:`drain`) and return (blocking; the main thread).

        ``loop`` is the event loop it serves on: ``auto`` (uvloop when it is installed, else asyncio's), ``uvloop``
        or ``asyncio``; a name that is not one of them, or ``uvloop`` when it is not installed, raises
        :class:`~agentmsg.ValidationError` (field ``loop``) before anything starts."""
        with contextlib.suppress(KeyboardInterrupt):
            run_on(self.serve(handle_signals=True), loop)
