"""MCP servers the agentmsg server hosts itself (``agentmsg serve --mcp NAME=COMMAND``, ``ServerConfig.mcp_servers``).

The server starts (stdio) or reaches (streamable HTTP) each MCP server and serves its tools as a runner's: named
``NAME.`` + the MCP tool's name, kind ``MCP``, in ``ListTools``, claimed for the whole cluster, under the same
``tools:call`` scope. A call goes engine → server → MCP server: the server's ``CallTool`` hands it to the MCP
session in its own process, with no runner stream and no second process between. Everything else is the
standalone runner's (:class:`~agentmsg.mcp._tools.McpTools`, shared with :class:`~agentmsg.mcp.runner.McpRunner`):
the caller's deadline bounds the call and a cancelled or overdue call sends the MCP server
``notifications/cancelled``; a server that exits is restarted, and a call in flight or arriving while it is down
gets an ``is_error`` result; ``notifications/tools/list_changed`` re-registers the tools; a malformed result is an
``is_error`` result naming the problem. What the MCP server sends is validated once, where it enters.

The standalone runner (``agentmsg mcp runner``) stays for MCP servers that must run on another machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shlex
from collections.abc import Sequence
from typing import TextIO

from agentmsg.content import ToolCallContent
from agentmsg.errors import ConflictError, ValidationError
from agentmsg.mcp._session import MCPServerSpec, describe, stdio_server
from agentmsg.mcp._tools import McpServerStartError, McpTools
from agentmsg.service.handlers.tools import ToolHandler
from agentmsg.service.telemetry import inject_context, tool_execution, tracing_enabled
from agentmsg.v1 import content_pb2

__all__ = ["HostedMcp", "mcp_server_spec"]

log = logging.getLogger("agentmsg.mcp.hosted")

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def mcp_server_spec(name: str, server: str | Sequence[str]) -> MCPServerSpec:
    """What ``ServerConfig.mcp_servers[name]`` holds, checked: an ``http://`` or ``https://`` URL (streamable
    HTTP), or a command run over stdio, as its argv or as one command line (split as a POSIX shell would; no shell
    runs it). ValidationError names the entry and the problem."""
    where = f"mcp_servers[{name!r}]"
    if not NAME.fullmatch(name):
        raise ValidationError.single(
            where, "pattern", "the name must be 1 to 64 letters, digits, '_' or '-' (it prefixes the tool names)"
        )
    if isinstance(server, str):
        if server.startswith(("http://", "https://")):
            return server
        try:
            argv = shlex.split(server)
        except ValueError as exc:
            raise ValidationError.single(where, "command", f"cannot split the command line: {exc}") from None
    else:
        argv = list(server)
    if not argv or not argv[0] or not all(isinstance(arg, str) for arg in argv):
        raise ValidationError.single(where, "required", "give a command to run (or an http:// or https:// URL)")
    return stdio_server(argv[0], argv[1:])


class HostedMcp(McpTools):
    """One MCP server whose tools the agentmsg server serves itself (see the module docstring)."""

    def __init__(
        self,
        name: str,
        server: MCPServerSpec,
        handler: ToolHandler,
        *,
        restart_delay: float = 0.5,
        max_restart_delay: float = 30.0,
        errlog: TextIO | None = None,
        start_attempts: int = 5,
    ) -> None:
        super().__init__(
            server,
            name=f"mcp:{name}",
            prefix=f"{name}.",
            restart_delay=restart_delay,
            max_restart_delay=max_restart_delay,
            errlog=errlog,
            start_attempts=start_attempts,
        )
        self.handler = handler
        self.runner_id: str | None = None
        """The id the tools are registered under (ListTools' ``runner_id``), while they are."""
        self.registered = asyncio.Event()
        """Set while the tools are registered."""
        self._supervisor: asyncio.Task[None] | None = None
        self._offering: asyncio.Task[None] | None = None

    async def _call(self, call: content_pb2.ToolCallContent) -> content_pb2.ToolResultContent:
        """A call from the server's CallTool: the runner's span, in the caller's trace; the MCP server's result."""
        if not tracing_enabled():
            return (await self.call_pb(call)).pb.tool_result
        wrapped = ToolCallContent._wrap(content_pb2.Content(tool_call=call))
        trace_context: dict[str, str] = {}
        inject_context(trace_context)
        with tool_execution(wrapped, trace_context) as record:
            result = await self.call(wrapped)
            record(result)
        return result.pb.tool_result

    async def _register(self) -> None:
        """Serve the tools as they are now (those served before are taken off first)."""
        self._changed.clear()
        self._withdraw()
        if self.tools:
            registered = await self.handler.host(self.name, [tool.pb for tool in self.tools], self._call)
            self.runner_id = registered.runner_id
            self.registered.set()

    def _withdraw(self) -> None:
        self.registered.clear()
        if self.runner_id is not None:
            self.handler.unhost(self.runner_id)
            self.runner_id = None

    async def _offer(self) -> None:
        """Re-register whenever the MCP server's tools change (``notifications/tools/list_changed``)."""
        while True:
            await self._changed.wait()
            try:
                await self._register()
            except ConflictError as exc:
                self.last_error = f"its tools changed, and they cannot all be served: {exc}"
                log.error("MCP server %s: %s", describe(self.server), self.last_error)

    async def start(self) -> None:
        """Start (or reach) the MCP server and serve its tools; returns once they are served.

        Raises :class:`McpServerStartError` when a command cannot start (as the runner does), and ConflictError when
        one of its tools' names is already served. A server reached by URL that is not up yet does not hold the
        start: it is retried in the background, and its tools are served once it answers.
        """
        supervisor = self._supervisor = asyncio.ensure_future(self.supervise())
        waits = [asyncio.ensure_future(self.connected.wait())]
        if isinstance(self.server, str):
            waits.append(asyncio.ensure_future(self.failed.wait()))
        try:
            try:
                await asyncio.wait([supervisor, *waits], return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
            if self._supervisor is not supervisor:
                return  # stopped meanwhile (stop())
            if supervisor.done():
                try:
                    supervisor.result()
                except McpServerStartError as exc:
                    raise McpServerStartError(f"hosted MCP server {self.name!r}: {exc}") from exc
            if self.connected.is_set():
                await self._register()
        except BaseException:
            await self.stop()  # a cancelled start too: the MCP server is stopped, not left running
            raise
        self._offering = asyncio.ensure_future(self._offer())

    async def stop(self) -> None:
        """Take the tools off and stop the MCP server (a call still in flight gets an ``is_error`` result)."""
        self._withdraw()
        offering, supervisor = self._offering, self._supervisor
        self._offering = self._supervisor = None
        if offering is not None:
            offering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await offering
        if supervisor is not None:
            await self.stop_supervising(supervisor)  # the MCP server stopped, reaped, its transport closed
            with contextlib.suppress(asyncio.CancelledError, McpServerStartError):
                await supervisor
