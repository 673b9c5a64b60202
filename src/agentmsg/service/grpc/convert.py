"""``agentmsg.v1.ConvertService`` over gRPC: a thin servicer over
:class:`~agentmsg.service.handlers.convert.ConvertHandler`."""

from __future__ import annotations

from typing import Any

import grpc

from agentmsg.service.grpc.calls import _guard, caller_of, capture, register
from agentmsg.service.handlers.convert import CONVERT_SERVICE, ConvertHandler
from agentmsg.v1 import convert_service_pb2, convert_service_pb2_grpc

__all__ = ["ConvertServicer", "add_convert_service"]

Context = grpc.aio.ServicerContext[Any, Any]


class ConvertServicer(convert_service_pb2_grpc.ConvertServiceServicer):
    """``agentmsg.v1.ConvertService`` over gRPC: each RPC calls the handler as the call's caller."""

    def __init__(self, handler: ConvertHandler) -> None:
        self.handler = handler

    @_guard
    async def ToProvider(  # noqa: N802 - the RPC's name
        self, request: convert_service_pb2.ToProviderRequest, context: Context
    ) -> convert_service_pb2.ToProviderResponse:
        return await self.handler.ToProvider(request, caller_of(context))

    @_guard
    async def FromProvider(  # noqa: N802
        self, request: convert_service_pb2.FromProviderRequest, context: Context
    ) -> convert_service_pb2.FromProviderResponse:
        return await self.handler.FromProvider(request, caller_of(context))


def add_convert_service(servicer: ConvertServicer, server: grpc.aio.Server) -> None:
    """Register the servicer (each handler tolerant of undecodable requests)."""
    register(server, CONVERT_SERVICE, capture(convert_service_pb2_grpc.add_ConvertServiceServicer_to_server, servicer))
