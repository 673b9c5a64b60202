"""``agentmsg.v1.ToolService`` over gRPC: a thin servicer over :class:`~agentmsg.service.handlers.tools.ToolHandler`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from agentmsg.service.grpc.calls import _guard, _guard_stream, caller_of, capture, register
from agentmsg.service.handlers.tools import TOOL_SERVICE, ToolHandler
from agentmsg.v1 import tool_service_pb2, tool_service_pb2_grpc

__all__ = ["ToolServicer", "add_tool_service"]

Context = grpc.aio.ServicerContext[Any, Any]


class ToolServicer(tool_service_pb2_grpc.ToolServiceServicer):
    """``agentmsg.v1.ToolService`` over gRPC: each RPC calls the handler as the call's caller."""

    def __init__(self, handler: ToolHandler) -> None:
        self.handler = handler

    @_guard_stream
    async def ServeTools(  # noqa: N802
        self, request_iterator: AsyncIterator[tool_service_pb2.ServeToolsRequest], context: Context
    ) -> AsyncIterator[tool_service_pb2.ServeToolsResponse]:
        async for response in self.handler.ServeTools(request_iterator, caller_of(context)):
            yield response

    @_guard
    async def ListTools(  # noqa: N802
        self, request: tool_service_pb2.ListToolsRequest, context: Context
    ) -> tool_service_pb2.ListToolsResponse:
        return await self.handler.ListTools(request, caller_of(context))

    @_guard
    async def CallTool(  # noqa: N802
        self, request: tool_service_pb2.CallToolRequest, context: Context
    ) -> tool_service_pb2.CallToolResponse:
        return await self.handler.CallTool(request, caller_of(context))


def add_tool_service(servicer: ToolServicer, server: grpc.aio.Server) -> None:
    """Register the servicer (each handler tolerant of undecodable requests)."""
    register(server, TOOL_SERVICE, capture(tool_service_pb2_grpc.add_ToolServiceServicer_to_server, servicer))
