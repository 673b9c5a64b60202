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
import mcp_types
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError

from agentmsg import errors
from agentmsg._logtext import loggable
from agentmsg.content import ToolCallContent, ToolKind, ToolResultContent
from agentmsg.errors import ToolArgumentsError, ValidationError
from agentmsg.mcp._session import McpConnection, MCPServerSpec, connect, describe
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.mcp import from_mcp_result, read_mcp_tools
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


class McpServerStartError(errors.AgentMsgError):
    """The MCP server a runner starts (stdio) cannot start: its command does not exist or may not run, or it never
    came up in ``start_attempts`` tries in a row. The runner stops with this error instead of retrying forever. (A
    server reached by URL runs elsewhere and may come up later: it is retried.)"""


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _reason(exc: BaseException) -> str:
    """The innermost useful message of an error (task groups wrap what the transport raised)."""
    exc = _innermost(exc)
    if isinstance(exc, MCPError):
        return f"{exc.message} (MCP error {exc.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class McpRunner:
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
        if start_attempts < 1:
            raise ValidationError.single("start_attempts", "gte", f"must be at least 1, got {start_attempts}")
        self.target = target
        self.server = server
        self.name = name or f"mcp:{describe(server)}"[:200]
        self.prefix = prefix
        self._token = token
        self._tls = (root_certificates, private_key, certificate_chain)
        self._restart = (restart_delay, max_restart_delay)
        self._start_attempts = start_attempts
        self._errlog = errlog
        self.grace = checked_grace(grace)
        """Seconds a stopping runner gives its calls in flight before it answers them cancelled."""
        self._stop: Stop | None = None  # while serving
        self.tools: list[ToolDefinition] = []
        """The tools registered (or about to be), names prefixed."""
        self.problems: dict[str, str] = {}
        """The MCP server's tools left out, by name (or ``#index``), with what is wrong."""
        self.last_error: str | None = None
        """Why the MCP server is down, while it is."""
        self.restarts = 0
        self.runner_id: str | None = None
        self.registered = asyncio.Event()
        """Set once the service accepted a registration (cleared while re-registering)."""
        self.connected = asyncio.Event()
        """Set while the MCP server is up."""
        self._names: dict[str, str] = {}
        self._conn: McpConnection | None = None
        self._changed = asyncio.Event()
        self._relist = asyncio.Event()

    # --- the MCP side -----------------------------------------------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist.set()

    async def _load_tools(self, conn: McpConnection) -> None:
        raw = await conn.list_tools()
        definitions, problems = read_mcp_tools(raw, kind=ToolKind.MCP, report=ConversionReport())
        self.problems = {}
        for index, found in problems.items():
            tool = raw[index]
            named = tool.get("name") if isinstance(tool, dict) else None
            label = named if isinstance(named, str) and named else f"#{index}"
            self.problems[label] = "; ".join(str(v) for v in found.found)
            log.warning("MCP tool %s left out: %s", loggable(label), self.problems[label])
        prefixed = []
        names: dict[str, str] = {}
        for definition in definitions:
            if self.prefix + definition.name in names:
                self.problems[definition.name] = "the server lists two tools by this name: the first one is served"
                log.warning("MCP tool %s left out: %s", loggable(definition.name), self.problems[definition.name])
                continue
            renamed = definition.copy()
            renamed.pb.name = self.prefix + definition.name
            prefixed.append(renamed)
            names[renamed.name] = definition.name
        if [d.pb.SerializeToString() for d in prefixed] != [d.pb.SerializeToString() for d in self.tools]:
            self.tools, self._names = prefixed, names
            self._changed.set()

    async def _supervise(self) -> None:
        first, most = self._restart
        delay = first
        loop = asyncio.get_running_loop()
        ever_up, failed_starts = False, 0
        while True:
            started = loop.time()
            stage = "did not start (it exited or hung up before the handshake and tools/list)"
            try:
                async with connect(self.server, self._on_message, errlog=self._errlog) as conn:
                    await self._load_tools(conn)
                    stage = "stopped"
                    self._conn, self.last_error = conn, None
                    ever_up = True
                    self.connected.set()
                    log.info("MCP server %s up: %d tool(s)", describe(self.server), len(self.tools))
                    while not conn.ended.is_set():
                        waits = [asyncio.ensure_future(self._relist.wait()), asyncio.ensure_future(conn.ended.wait())]
                        try:
                            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                        finally:
                            for waiting in waits:
                                waiting.cancel()
                        if self._relist.is_set() and not conn.ended.is_set():
                            self._relist.clear()
                            await self._load_tools(conn)
                    raise ConnectionError("the MCP server exited or closed the connection")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.last_error = f"MCP server {describe(self.server)} {stage}: {_reason(exc)}"
                if not ever_up and not isinstance(self.server, str):  # a URL's server may come up later
                    # A command that does not exist never will; one that never came up in a row of tries is not
                    # coming (npx waiting at "Ok to proceed?" on a pipe, a wrong path): stop, saying why.
                    failed_starts += 1
                    if isinstance(_innermost(exc), (FileNotFoundError, PermissionError)):
                        raise McpServerStartError(f"{self.last_error} (the command cannot run)") from exc
                    if failed_starts >= self._start_attempts:
                        raise McpServerStartError(
                            f"{self.last_error} (gave up after {failed_starts} attempts in a row)"
                        ) from exc
                log.warning("%s; restarting in %.1fs", self.last_error, delay)
            finally:
                self._conn = None
                self.connected.clear()
            if loop.time() - started > most:
                delay = first  # it ran well for a while: this is a new failure, not the same one again
            await asyncio.sleep(delay)
            self.restarts += 1
            delay = min(delay * 2, most)

    async def call(self, call: ToolCallContent, timeout: float | None = None) -> ToolResultContent:
        """Run one call on the MCP server (what the runner does for each call the service sends)."""
        mcp_name = self._names.get(call.name)
        if mcp_name is None:
            return ToolResultContent.error(call.id, f"this runner has no tool {call.name!r}", name=call.name)
        conn = self._conn
        if conn is None:
            why = f" ({self.last_error})" if self.last_error else ""
            return ToolResultContent.error(
                call.id,
                f"the MCP server {describe(self.server)} is not running; it is being restarted{why}",
                name=call.name,
            )
        try:
            args = call.args
        except ToolArgumentsError as exc:
            return ToolResultContent.error(call.id, f"invalid arguments: {exc.reason}", name=call.name)
        try:
            raw = await conn.request("tools/call", {"name": mcp_name, "arguments": args}, timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                message = f"the MCP server {describe(self.server)} went away during the call; it is being restarted"
            elif exc.code == mcp_types.REQUEST_TIMEOUT:
                message = (
                    f"the MCP server gave no result within the call's deadline ({timeout:g}s); the call was cancelled"
                )
            else:
                message = f"the MCP server refused the call: {exc.message} (MCP error {exc.code})"
            return ToolResultContent.error(call.id, message, name=call.name)
        try:
            return from_mcp_result(raw, call.id, name=call.name, index=call.index)
        except ValidationError as exc:
            return ToolResultContent.error(
                call.id, f"the MCP server's result for {mcp_name!r} is malformed: {exc}", name=call.name
            )

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
        supervisor = asyncio.ensure_future(self._supervise())
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
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, McpServerStartError):  # raised above when it was
                await supervisor
            if stop.asked.is_set():
                await flush_spans()
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

    def run(self) -> None:
        """Serve until SIGTERM or SIGINT, then drain (see :meth:`drain`) and return (blocking; the main thread)."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.serve(handle_signals=True))
