"""One MCP server's tools, supervised: what the standalone runner and the server's hosted MCP servers share.

:class:`McpTools` starts (stdio) or reaches (streamable HTTP) an MCP server, reads its ``tools/list`` (names with
``prefix`` in front, kind ``MCP``), answers calls with a ``tools/call``, and keeps the server up:

- a call's timeout is the MCP request's timeout, and a cancelled call cancels the request, which sends the MCP
  server ``notifications/cancelled``;
- ``notifications/tools/list_changed`` makes it list again (:attr:`McpTools.changed` is set when the tools changed);
- a server that exits is restarted with exponential backoff; one that cannot start (its command does not exist, or
  it never came up in ``start_attempts`` tries in a row) raises :class:`McpServerStartError`; a call in flight when
  it dies, or arriving while it is down, gets an ``is_error`` result saying so, never a hang;
- a tool whose definition is bad is left out and named in :attr:`McpTools.problems`; a malformed result gives an
  ``is_error`` result naming the problem. The MCP server's output is validated here, once: it is the trust
  boundary.

How the tools are offered is the subclass's: :class:`~agentmsg.mcp.runner.McpRunner` registers them with an agentmsg
server over gRPC; :class:`~agentmsg.mcp.hosted.HostedMcp` registers them in the server it runs in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TextIO

import mcp_types
from mcp.shared.exceptions import MCPError

from agentmsg import errors
from agentmsg._logtext import loggable
from agentmsg.content import ToolCallContent, ToolKind, ToolResultContent, parse_json_object
from agentmsg.errors import ValidationError
from agentmsg.mcp._session import McpConnection, MCPServerSpec, connect, describe, list_tools
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.mcp import from_mcp_result, read_mcp_tools
from agentmsg.tools import ToolDefinition
from agentmsg.v1 import content_pb2

__all__ = ["McpServerStartError", "McpTools"]

log = logging.getLogger("agentmsg.mcp")


class McpServerStartError(errors.AgentMsgError):
    """The MCP server a runner starts (stdio) cannot start: its command does not exist or may not run, or it never
    came up in ``start_attempts`` tries in a row. The runner stops with this error instead of retrying forever. (A
    server reached by URL runs elsewhere and may come up later: it is retried.)"""


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _first(*waits: Coroutine[Any, Any, Any], timeout: float | None = None) -> int | None:
    """Wait for the first of ``waits`` to finish (the others are cancelled): its index, or None after ``timeout``."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        done, _ = await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
    return next((index for index, task in enumerate(tasks) if task in done), None)


def _reason(exc: BaseException) -> str:
    """The innermost useful message of an error (task groups wrap what the transport raised)."""
    exc = _innermost(exc)
    if isinstance(exc, MCPError):
        return f"{exc.message} (MCP error {exc.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class McpTools:
    """One MCP server's tools, supervised (see the module docstring)."""

    def __init__(
        self,
        server: MCPServerSpec,
        *,
        name: str,
        prefix: str = "",
        restart_delay: float = 0.5,
        max_restart_delay: float = 30.0,
        errlog: TextIO | None = None,
        start_attempts: int = 5,
    ) -> None:
        if start_attempts < 1:
            raise ValidationError.single("start_attempts", "gte", f"must be at least 1, got {start_attempts}")
        self.server = server
        self.name = name
        self.prefix = prefix
        self._restart = (restart_delay, max_restart_delay)
        self._start_attempts = start_attempts
        self._errlog = errlog
        self.tools: list[ToolDefinition] = []
        """The tools served (or about to be), names prefixed."""
        self.problems: dict[str, str] = {}
        """The MCP server's tools left out, by name (or ``#index``), with what is wrong."""
        self.last_error: str | None = None
        """Why the MCP server is down, while it is."""
        self.restarts = 0
        self.connected = asyncio.Event()
        """Set while the MCP server is up."""
        self.failed = asyncio.Event()
        """Set once an attempt to start or reach the MCP server failed (cleared when it is up)."""
        self._names: dict[str, str] = {}
        self._conn: McpConnection | None = None
        self._changed = asyncio.Event()
        self._relist = asyncio.Event()
        self._stopping = asyncio.Event()  # stop_supervising() asked the supervisor to end
        self._interruptible = False  # the supervisor waits where one native cancel can end it without a leak

    def _on_tools_changed(self) -> None:
        self._relist.set()

    async def _load_tools(self, conn: McpConnection) -> None:
        raw = await list_tools(conn)
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

    async def supervise(self) -> None:
        """Keep the MCP server up (see :class:`McpTools`); raises :class:`McpServerStartError` when it cannot start.

        Run it as a task and end it with :meth:`stop_supervising`, not ``Task.cancel()`` alone: a cancel landing
        while the connection closes cuts the shutdown short and leaves the server process and its transport
        behind.
        """
        first, most = self._restart
        delay = first
        loop = asyncio.get_running_loop()
        ever_up, failed_starts = False, 0
        while not self._stopping.is_set():
            started = loop.time()
            stage = "did not start (it exited or hung up before the handshake and tools/list)"
            try:
                self._interruptible = True  # until the connection begins to close (on_close) or is up
                connecting = connect(self.server, self._on_tools_changed, errlog=self._errlog, on_close=self._closing)
                async with connecting as conn:
                    await self._load_tools(conn)
                    self._interruptible = False
                    stage = "stopped"
                    self._conn, self.last_error = conn, None
                    ever_up = True
                    self.failed.clear()
                    self.connected.set()
                    log.info("MCP server %s up: %d tool(s)", describe(self.server), len(self.tools))
                    if await self._serve_connection(conn):
                        return  # asked to stop: leaving the connection uncancelled lets the shutdown run whole
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
                self.failed.set()
                if self._stopping.is_set():
                    return
                log.warning("%s; restarting in %.1fs", self.last_error, delay)
            finally:
                self._interruptible = False
                self._conn = None
                self.connected.clear()
            if loop.time() - started > most:
                delay = first  # it ran well for a while: this is a new failure, not the same one again
            if await _first(self._stopping.wait(), timeout=delay) == 0:
                return  # asked to stop during the restart delay
            self.restarts += 1
            delay = min(delay * 2, most)

    def _closing(self) -> None:
        self._interruptible = False  # the transport's shutdown is about to run: no cancel may land in it

    async def _serve_connection(self, conn: McpConnection) -> bool:
        """Wait on the live connection, listing again on ``list_changed``: True when asked to stop, False when the
        connection ended."""
        while True:
            await _first(self._stopping.wait(), self._relist.wait(), conn.ended.wait())
            if self._stopping.is_set():
                return True
            if conn.ended.is_set():
                return False
            self._relist.clear()
            self._interruptible = True  # a tools/list in flight: a stop may cancel it
            try:
                await self._load_tools(conn)
            finally:
                self._interruptible = False

    async def stop_supervising(self, supervisor: asyncio.Task[None]) -> None:
        """End the :meth:`supervise` task ``supervisor`` and return once it has ended, the MCP server stopped and
        reaped and its transport closed.

        A connected server is left as a session ends (stdin closed, then a grace, SIGTERM and SIGKILL, a few
        seconds at most); a restart delay ends at once; a start in progress (the spawn, the handshake, the first
        ``tools/list``) or a ``tools/list`` in flight is cancelled, once. A connection already closing (the server
        exited) is never cancelled: its shutdown finishes, then the supervisor stops. Cancelling the caller meanwhile
        does not cut this short (that would cancel the supervisor mid-shutdown): the cancellation is raised once the
        supervisor has ended. The supervisor's own outcome stays in the task (``McpServerStartError``, or cancelled).
        """
        self._stopping.set()
        if self._interruptible and not supervisor.done():
            supervisor.cancel()
        cancelled = False
        while not supervisor.done():
            try:
                await asyncio.wait([supervisor])
            except asyncio.CancelledError:
                cancelled = True  # bounded: the shutdown is, and a start is cancelled
        self._stopping.clear()
        if cancelled:
            raise asyncio.CancelledError

    async def call(self, call: ToolCallContent, timeout: float | None = None) -> ToolResultContent:
        """Run one call on the MCP server: its result, or an ``is_error`` result saying what went wrong."""
        return await self.call_pb(call.pb.tool_call, timeout)

    async def call_pb(self, call: content_pb2.ToolCallContent, timeout: float | None = None) -> ToolResultContent:
        """:meth:`call` for the call's message as it is (the server's CallTool holds it, checked: no wrapper made)."""
        mcp_name = self._names.get(call.name)
        if mcp_name is None:
            return ToolResultContent.error(call.id, f"{self.name!r} has no tool {call.name!r}", name=call.name)
        conn = self._conn
        if conn is None:
            why = f" ({self.last_error})" if self.last_error else ""
            return ToolResultContent.error(
                call.id,
                f"the MCP server {describe(self.server)} is not running; it is being restarted{why}",
                name=call.name,
            )
        args, problem = parse_json_object(call.arguments)
        if args is None:
            return ToolResultContent.error(call.id, f"invalid arguments: {problem}", name=call.name)
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
