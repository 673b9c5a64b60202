"""The cluster's tools as an MCP server.

:func:`create_mcp_server` builds an MCP server (the SDK's low-level ``Server``)
over an :class:`~agentmsg.service.AsyncClient`:

- ``tools/list`` is the cluster's ``ListTools``, each definition written by
  :func:`agentmsg.providers.mcp.to_mcp_tools` (a runner's definition that MCP
  cannot hold is reported in the log);
- ``tools/call`` is ``CallTool``: a new call id, the arguments as JSON, the
  server's ``call_timeout`` as the deadline; the MCP request's cancellation
  cancels the gRPC call, which cancels the call on its runner. The result is
  written by :func:`~agentmsg.providers.mcp.to_mcp_result` (what an MCP
  runner read comes back unchanged). An unknown tool is an MCP
  ``INVALID_PARAMS`` error, the service being unreachable ``INTERNAL_ERROR``;
  a tool that failed is an ``isError`` result, as MCP asks;
- ``notifications/tools/list_changed`` goes to every connected client when
  the cluster's tools change (polled every ``poll_interval`` seconds; at the
  2026-07-28 protocol, to its ``subscriptions/listen`` streams).

:func:`serve_stdio` and :func:`serve_http` run it (``agentmsg mcp serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types
import pydantic
import uvicorn
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from agentmsg._logtext import loggable
from agentmsg.content import ToolCallContent
from agentmsg.errors import AgentMsgError, CancelledError, NotFoundError, ValidationError
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.mcp import to_mcp_result, to_mcp_tools
from agentmsg.service import AsyncClient, RegisteredTool

__all__ = ["AgentmsgMcpServer", "create_mcp_server", "serve_http", "serve_stdio"]

log = logging.getLogger("agentmsg.mcp.server")

# Connections to tell about changed tools: the newest ones, at most this many.
_MAX_WATCHERS = 1024


class AgentmsgMcpServer(Server[Any]):
    """The SDK's low-level MCP server over an agentmsg client (see the module docstring)."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        name: str = "agentmsg",
        call_timeout: float = 60.0,
        poll_interval: float = 1.0,
    ) -> None:
        self.client = client
        self.call_timeout = call_timeout
        self.poll_interval = poll_interval
        self.bus = InMemorySubscriptionBus()
        self._watchers: OrderedDict[int, ServerSession] = OrderedDict()
        self._listed: tuple[bytes, ...] | None = None
        # Input schemas by tool name, from the last ListTools: the SDK checks a 2026-07-28 HTTP call's
        # Mcp-Param headers against it, which would otherwise cost a ListTools for every tools/call.
        self._schemas: dict[str, dict[str, Any]] = {}
        self.http_port: int | None = None
        """The port :func:`serve_http` listens on, once it does."""
        super().__init__(
            name,
            version="1",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
            get_tool_input_schema=self._schemas.get,
        )

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, saying that the tool list changes (it is the cluster's)."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )

    async def _tools(self) -> list[RegisteredTool]:
        try:
            return await self.client.list_tools()
        except AgentMsgError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, f"agentmsg ListTools failed: {exc}") from None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        connection = getattr(ctx.session, "_connection", ctx.session)
        self._watchers[id(connection)] = ctx.session
        self._watchers.move_to_end(id(connection))
        while len(self._watchers) > _MAX_WATCHERS:
            self._watchers.popitem(last=False)
        registered = await self._tools()
        self._remember(registered)
        report = ConversionReport()
        tools = to_mcp_tools([t.tool for t in registered], report=report)
        for loss in report.losses:
            log.debug("tools/list: %s", loss)
        listed = []
        for tool in tools:
            try:
                listed.append(mcp_types.Tool.model_validate(tool))
            except pydantic.ValidationError as exc:  # one runner's odd definition must not hide the others
                log.warning("tools/list: %s left out, not a valid MCP tool: %s", loggable(tool.get("name")), exc)
        return mcp_types.ListToolsResult(tools=listed)

    def _remember(self, registered: list[RegisteredTool]) -> tuple[bytes, ...]:
        """Keep the tools' input schemas; the listing as bytes, to compare with the next one."""
        self._schemas.clear()
        for tool in registered:
            if tool.tool.parameters_json:
                with contextlib.suppress(AgentMsgError):
                    self._schemas[tool.tool.name] = tool.tool.parameters
        self._listed = tuple(t.tool.pb.SerializeToString() for t in registered)
        return self._listed

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        call_id = f"mcp-{uuid.uuid4().hex}"
        arguments = json.dumps(params.arguments or {}, ensure_ascii=False)
        try:
            call = ToolCallContent(call_id, params.name, arguments=arguments)
        except ValidationError as exc:
            raise MCPError(mcp_types.INVALID_PARAMS, f"invalid tools/call: {exc}") from None
        try:
            result = await self.client.call_tool(call, timeout=self.call_timeout)
        except NotFoundError as exc:
            raise MCPError(mcp_types.INVALID_PARAMS, f"unknown tool {params.name!r}: {exc}") from None
        except CancelledError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, f"the call was cancelled: {exc}") from None
        except AgentMsgError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, f"agentmsg CallTool failed: {exc}") from None
        report = ConversionReport()
        written = to_mcp_result(result, report=report)
        for loss in report.losses:
            log.info("tools/call %s: %s", loggable(params.name), loss)
        try:
            return mcp_types.CallToolResult.model_validate(written)
        except pydantic.ValidationError as exc:
            message = f"the result of {params.name!r} is not a valid MCP result: {exc}"
            raise MCPError(mcp_types.INTERNAL_ERROR, message) from None

    async def watch_tools(self) -> None:
        """Tell the connected clients whenever the cluster's tools change (runs until cancelled)."""
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                registered = await self.client.list_tools()
            except AgentMsgError as exc:
                log.warning("ListTools failed: %s", exc)
                continue
            before = self._listed
            if self._remember(registered) != before and before is not None:
                await self.notify_tools_changed()

    async def notify_tools_changed(self) -> None:
        """Send ``notifications/tools/list_changed`` to every client that listed the tools."""
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self._watchers.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # a client that went away: forget it
                log.debug("list_changed not sent: %s", exc)
                self._watchers.pop(key, None)


def create_mcp_server(
    client: AsyncClient, *, name: str = "agentmsg", call_timeout: float = 60.0, poll_interval: float = 1.0
) -> AgentmsgMcpServer:
    """An MCP server whose tools are the cluster's (see the module docstring)."""
    return AgentmsgMcpServer(client, name=name, call_timeout=call_timeout, poll_interval=poll_interval)


@asynccontextmanager
async def _watching(server: AgentmsgMcpServer) -> AsyncIterator[None]:
    watcher = asyncio.ensure_future(server.watch_tools())
    try:
        yield
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def serve_stdio(server: AgentmsgMcpServer) -> None:
    """Serve one MCP client over this process's stdin and stdout."""
    async with _watching(server), stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(
    server: AgentmsgMcpServer, port: int, *, host: str = "127.0.0.1", ready: asyncio.Event | None = None
) -> None:
    """Serve MCP clients over streamable HTTP at ``http://host:port/mcp`` (port 0: any free port)."""
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    async with _watching(server):
        serving = asyncio.ensure_future(web.serve())
        try:
            while not web.started and not serving.done():
                await asyncio.sleep(0.01)
            if web.started:
                server.http_port = web.servers[0].sockets[0].getsockname()[1]
                log.info("MCP endpoint http://%s:%d/mcp (the tools of agentmsg)", host, server.http_port)
                if ready is not None:
                    ready.set()
            await asyncio.shield(serving)
        finally:
            # Cancelled: let uvicorn close its sockets and connections itself rather than cutting it off.
            web.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await serving
