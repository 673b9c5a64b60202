"""MCP both ways (the ``agentmsg[mcp]`` extra, the official ``mcp`` SDK).

- :class:`McpRunner`: any MCP server (stdio or streamable HTTP) as an
  agentmsg tool runner (``agentmsg mcp runner``).
- :func:`create_mcp_server`, :func:`serve_stdio`, :func:`serve_http`: the
  cluster's tools as an MCP server (``agentmsg mcp serve``).

The pure converters they use are in :mod:`agentmsg.providers.mcp`.
"""

from __future__ import annotations

from agentmsg.mcp._session import MCPServerSpec, describe, stdio_server
from agentmsg.mcp.runner import McpRunner, McpServerStartError
from agentmsg.mcp.server import AgentmsgMcpServer, create_mcp_server, serve_http, serve_stdio

__all__ = [
    "AgentmsgMcpServer",
    "MCPServerSpec",
    "McpRunner",
    "McpServerStartError",
    "create_mcp_server",
    "describe",
    "serve_http",
    "serve_stdio",
    "stdio_server",
]
