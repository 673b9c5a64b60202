"""One client connection to an MCP server (stdio or streamable HTTP), with raw requests.

Over stdio (on POSIX) the connection is :mod:`agentmsg.mcp._stdio`'s, on asyncio's pipes with no task hop per
call; over streamable HTTP (and stdio on Windows) it is the SDK's client session.

The SDK's typed calls validate a whole ``tools/list`` at once, so one tool with
a bad schema would hide every other tool; the bridge reads the raw JSON-RPC
results and checks them itself, tool by tool and block by block
(:mod:`agentmsg.providers.mcp`). Either connection does the handshake, the
framing, the notifications, and the ``notifications/cancelled`` a cancelled or
timed-out request sends.

The connection opens with the ``initialize`` handshake (protocol 2025-11-25
at newest), which the reference servers and the SDK's own servers (of both
eras) accept.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

import anyio
import mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import CallOptions
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from agentmsg.mcp._stdio import open_stdio

__all__ = ["MCPServerSpec", "McpConnection", "connect", "describe", "list_tools", "stdio_server"]

MCPServerSpec = StdioServerParameters | str
"""An MCP server: a command to run over stdio, or the URL of a streamable HTTP endpoint."""


def describe(server: MCPServerSpec) -> str:
    """The server as people would write it: the URL, or the command line."""
    if isinstance(server, str):
        return server
    return " ".join([server.command, *server.args])


class _WatchedDispatcher(JSONRPCDispatcher):
    """A dispatcher that says when its connection ended (the server exited or hung up)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended = anyio.Event()

    async def run(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().run(*args, **kwargs)
        finally:
            self.ended.set()


class _Ended(Protocol):
    def is_set(self) -> bool: ...
    async def wait(self) -> Any: ...


class McpConnection(Protocol):
    """A live, initialised MCP client connection (over stdio, :class:`~agentmsg.mcp._stdio.StdioConnection`;
    otherwise :class:`SdkConnection`)."""

    protocol_version: str
    server_name: str
    list_changed: bool

    @property
    def ended(self) -> _Ended:
        """Set when the server exited or closed the connection."""
        ...

    async def request(self, method: str, params: Mapping[str, Any] | None, timeout: float | None = None) -> Any:
        """A request's raw result (a JSON value). Raises ``MCPError`` for an error response or a timeout."""
        ...


@dataclass
class SdkConnection:
    """A live, initialised MCP client connection through the SDK's session."""

    session: ClientSession
    dispatcher: _WatchedDispatcher
    protocol_version: str
    server_name: str
    list_changed: bool
    _headers: dict[str, str] = field(default_factory=dict)

    @property
    def ended(self) -> anyio.Event:
        """Set when the server exited or closed the connection."""
        return self.dispatcher.ended

    async def request(self, method: str, params: Mapping[str, Any] | None, timeout: float | None = None) -> Any:
        """A request's raw result (a JSON object). Raises ``MCPError`` for an error response or a timeout."""
        opts: CallOptions = {"headers": dict(self._headers)}
        if timeout is not None:
            opts["timeout"] = timeout
        return await self.dispatcher.send_raw_request(method, params, opts)


async def list_tools(conn: McpConnection, page_limit: int = 100) -> list[Any]:
    """Every tool of the server's ``tools/list``, page after page, raw."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(page_limit):
        result = await conn.request("tools/list", {"cursor": cursor} if cursor else None)
        page = result.get("tools") if isinstance(result, Mapping) else None
        if not isinstance(page, list):
            raise ValueError(f"tools/list: expected a result with a tools list, got {str(result)[:200]}")
        tools.extend(page)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return tools
    raise ValueError(f"tools/list: more than {page_limit} pages")


def _handshake(result: Any) -> tuple[str, str, bool]:
    """An ``initialize`` result's protocol version, server name and whether it sends ``tools/list_changed``;
    ValueError for a result this client cannot work with."""
    if not isinstance(result, Mapping):
        raise ValueError(f"initialize: expected a result object, got {str(result)[:200]}")
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise ValueError(f"initialize: unsupported protocol version from the server: {version!r}")
    info = result.get("serverInfo")
    name = info.get("name") if isinstance(info, Mapping) else None
    capabilities = result.get("capabilities")
    tools = capabilities.get("tools") if isinstance(capabilities, Mapping) else None
    changed = tools.get("listChanged") if isinstance(tools, Mapping) else None
    return str(version), name if isinstance(name, str) else "", changed is True


@asynccontextmanager
async def _stdio(
    server: StdioServerParameters,
    on_tools_changed: Callable[[], None] | None,
    errlog: TextIO | None,
    client_name: str,
    on_close: Callable[[], None] | None,
) -> AsyncIterator[McpConnection]:
    conn = await open_stdio(server, errlog=errlog, on_tools_changed=on_tools_changed)
    try:
        try:
            client_info = {"name": client_name, "version": "1"}
            params = {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": client_info}
            version, name, changed = _handshake(await conn.request("initialize", params))
            conn.protocol_version, conn.server_name, conn.list_changed = version, name, changed
            conn.notify("notifications/initialized")
            yield conn
        finally:
            if on_close is not None:
                on_close()
    finally:
        await conn.close()


@asynccontextmanager
async def connect(
    server: MCPServerSpec,
    on_tools_changed: Callable[[], None] | None = None,
    *,
    errlog: TextIO | None = None,
    client_name: str = "agentmsg",
    on_close: Callable[[], None] | None = None,
) -> AsyncIterator[McpConnection]:
    """Start (stdio) or reach (HTTP) an MCP server and do the handshake.

    ``on_close`` is called the moment the connection begins to close (the handshake failed, or the body ended, raised
    or was cancelled), before the transport shuts down: a stdio server is then stopped (stdin closed, a grace,
    SIGTERM, SIGKILL). Over stdio the stop runs to its end whatever is cancelled meanwhile; the SDK's transport (HTTP,
    Windows) closes under an anyio shield, which a native ``Task.cancel()`` does not respect: a cancel landing there
    would leave its transport open, so whoever may cancel the task must not from then on
    (``McpTools.stop_supervising`` does not).

    ``on_tools_changed`` is called on each ``notifications/tools/list_changed``.
    """
    if not isinstance(server, str) and sys.platform != "win32":
        async with _stdio(server, on_tools_changed, errlog, client_name, on_close) as conn:
            yield conn
        return
    async with AsyncExitStack() as stack:
        if isinstance(server, str):
            streams = await stack.enter_async_context(streamable_http_client(server))
        else:
            # Nothing awaits between the spawn and the transport's task group, nor from here to the try below.
            streams = await stack.enter_async_context(stdio_client(server, errlog=errlog or sys.stderr))
        try:
            read, write = streams[0], streams[1]
            dispatcher = _WatchedDispatcher(read, write)

            async def handle(message: IncomingMessage) -> None:
                if on_tools_changed is not None and isinstance(message, mcp_types.ToolListChangedNotification):
                    on_tools_changed()

            session = ClientSession(
                dispatcher=dispatcher,
                message_handler=handle,
                client_info=mcp_types.Implementation(name=client_name, version="1"),
            )
            await stack.enter_async_context(session)
            result = await session.initialize()
            tools = result.capabilities.tools
            yield SdkConnection(
                session=session,
                dispatcher=dispatcher,
                protocol_version=result.protocol_version,
                server_name=result.server_info.name,
                list_changed=bool(tools and tools.list_changed),
                _headers={MCP_PROTOCOL_VERSION_HEADER: result.protocol_version},
            )
        finally:
            if on_close is not None:
                on_close()


def stdio_server(command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """An MCP server run as ``command args...`` over stdio.

    The child gets the SDK's safe default environment (``HOME``, ``PATH``...)
    plus ``env``: a server that needs a secret is given it by name.
    """
    return StdioServerParameters(command=command, args=list(args), env=dict(env) if env else None)
