"""A gRPC call's :class:`~agentmsg.service.handlers.Caller`: its metadata and its deadline."""

from __future__ import annotations

import grpc

from agentmsg.service.handlers import Caller

__all__ = ["caller_of"]


def caller_of(context: grpc.aio.ServicerContext) -> Caller:  # type: ignore[type-arg]
    """The caller of the call ``context`` serves: its metadata (the bearer token) and its remaining deadline."""
    return Caller.within(tuple(context.invocation_metadata() or ()), context.time_remaining())
