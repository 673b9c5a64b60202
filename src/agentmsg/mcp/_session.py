"""One client connection to an MCP server (stdio or streamable HTTP), with raw requests.

The SDK's typed calls validate a whole ``tools/list`` at once, so one tool with
a bad schema would hide every other tool; the bridge reads the raw JSON-RPC
results and checks them itself, tool by tool and block by block
(:mod:`agentmsg.providers.mcp`). The SDK still does the handshake, the
framing, the notifications, and the ``notifications/cancelled`` a cancelled or
timed-out request sends.

The connection opens with the ``initialize`` handshake (protocol 2025-11-25
at newest), which the reference servers and the SDK's own servers (of both
eras) accept.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import CallOptions
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

__all__ = ["MCPServerSpec", "McpConnection", "connect", "describe", "stdio_server"]

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


@dataclass
class McpConnection:
    """A live, initialised MCP client connection."""

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

    async def list_tools(self, page_limit: int = 100) -> list[Any]:
        """Every tool of ``tools/list``, page after page, raw."""
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(page_limit):
            result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            page = result.get("tools") if isinstance(result, Mapping) else None
            if not isinstance(page, list):
                raise ValueError(f"tools/list: expected a result with a tools list, got {str(result)[:200]}")
            tools.extend(page)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        raise ValueError(f"tools/list: more than {page_limit} pages")


@asynccontextmanager
async def connect(
    server: MCPServerSpec,
    on_message: Callable[[IncomingMessage], Awaitable[None]] | None = None,
    *,
    errlog: TextIO | None = None,
    client_name: str = "agentmsg",
    on_close: Callable[[], None] | None = None,
) -> AsyncIterator[McpConnection]:
    """Start (stdio) or reach (HTTP) an MCP server and do the handshake.

    ``on_close`` is called the moment the connection begins to close (the handshake failed, or the body ended, raised
    or was cancelled), before the transport shuts down: the SDK then stops a stdio server (stdin closed, a grace,
    SIGTERM, SIGKILL) and closes its transport under an anyio shield, which a native ``Task.cancel()`` does not
    respect. A cancel landing there would leave the process unreaped and its transport open, so whoever may cancel
    the task must not from then on (``McpTools.stop_supervising`` does not).
    """
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
                if on_message is not None:
                    await on_message(message)

            session = ClientSession(
                dispatcher=dispatcher,
                message_handler=handle,
                client_info=mcp_types.Implementation(name=client_name, version="1"),
            )
            await stack.enter_async_context(session)
            result = await session.initialize()
            tools = result.capabilities.tools
            yield McpConnection(
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
