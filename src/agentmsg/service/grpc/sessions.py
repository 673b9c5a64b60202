"""``agentmsg.v1.SessionService`` over gRPC: a thin servicer over
:class:`~agentmsg.service.handlers.sessions.SessionHandler`.

What only gRPC does lives here: ``AppendMessage``'s deserializer keeps a large message's received encoding
(the store holds a view of the request rather than a second encoding), and ``Subscribe``'s batches are framed
once and the encoded replies shared by every subscriber of the node (:class:`~agentmsg.service.frames.FrameCache`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from agentmsg.service.frames import (
    DEFAULT_REPLY_CACHE_BYTES,
    FrameCache,
    ReceivedAppend,
    blind_encoding,
    field_span,
    is_canonical,
)
from agentmsg.service.grpc.calls import _guard, _guard_stream, caller_of, capture, register
from agentmsg.service.handlers.sessions import SESSION_SERVICE, SessionHandler
from agentmsg.v1 import message_pb2, session_service_pb2, session_service_pb2_grpc

__all__ = ["SessionServicer", "add_session_service"]

# Below this size re-encoding a message costs less than checking its received encoding is the canonical one.
KEEP_RECEIVED_MIN = 64 * 1024


def _receive_append(data: bytes) -> session_service_pb2.AppendMessageRequest | ReceivedAppend:
    """AppendMessage's deserializer: parse, and for a large message keep the bytes it came in.

    The store then holds a view of the request instead of a second encoding of a megabyte it already has
    (a copy and its page faults); only when the bytes are what the deterministic encoder would write.
    """
    parse = session_service_pb2.AppendMessageRequest.FromString
    span = field_span(data, _MESSAGE_FIELD) if len(data) >= KEEP_RECEIVED_MIN else None
    if span is None:
        return parse(data)
    encoding = memoryview(data)[span[0] : span[1]]
    if not is_canonical(encoding, message_pb2.Message.DESCRIPTOR):
        return parse(data)
    # Parsed with its media payloads cut short (validation reads only their presence, the store keeps
    # `encoding`); anything the cut form does not parse is parsed whole, for the parser's own error.
    blind = blind_encoding(data, session_service_pb2.AppendMessageRequest.DESCRIPTOR)
    try:
        request = parse(data if blind is None else blind)
    except DecodeError:
        request = parse(data)
    return ReceivedAppend(request, encoding)


_MESSAGE_FIELD = session_service_pb2.AppendMessageRequest.DESCRIPTOR.fields_by_name["message"].number
_receive_append.request_type = session_service_pb2.AppendMessageRequest  # type: ignore[attr-defined] # errors name it


def _serialize_response(response: Any) -> bytes:
    """Subscribe responses are messages, or bytes already encoded by :mod:`~agentmsg.service.frames`."""
    return response if isinstance(response, bytes) else bytes(response.SerializeToString())


def add_session_service(servicer: SessionServicer, server: grpc.aio.Server) -> None:
    """Register the servicer, with the append deserializer and the Subscribe serializer above."""
    handlers = capture(session_service_pb2_grpc.add_SessionServiceServicer_to_server, servicer)
    handlers["AppendMessage"] = grpc.unary_unary_rpc_method_handler(
        servicer.AppendMessage,
        request_deserializer=_receive_append,
        response_serializer=session_service_pb2.AppendMessageResponse.SerializeToString,
    )
    handlers["Subscribe"] = grpc.unary_stream_rpc_method_handler(
        servicer.Subscribe,
        request_deserializer=session_service_pb2.SubscribeRequest.FromString,
        response_serializer=_serialize_response,
    )
    register(server, SESSION_SERVICE, handlers)


Context = grpc.aio.ServicerContext[Any, Any]


class SessionServicer(session_service_pb2_grpc.SessionServiceServicer):
    """``agentmsg.v1.SessionService`` over gRPC: each RPC calls the handler as the call's caller."""

    def __init__(self, handler: SessionHandler, *, reply_cache_bytes: int = DEFAULT_REPLY_CACHE_BYTES) -> None:
        self.handler = handler
        # Subscribers of a session read the same batches: each is framed once and shared.
        self.frames = FrameCache(handler.budget, reply_cache_bytes)
        # A deleted session's batches go (its id may start a new log); after an outage, every session's do
        # (one deleted while the store was away must not be served from here).
        handler.store.on_delete(self.frames.forget)
        handler.store.on_health(lambda healthy: self.frames.forget() if healthy else None)

    @_guard
    async def AppendMessage(  # noqa: N802 - the RPC's name
        self, request: session_service_pb2.AppendMessageRequest | ReceivedAppend, context: Context
    ) -> session_service_pb2.AppendMessageResponse:
        return await self.handler.AppendMessage(request, caller_of(context))

    @_guard
    async def AppendMessages(  # noqa: N802
        self, request: session_service_pb2.AppendMessagesRequest, context: Context
    ) -> session_service_pb2.AppendMessagesResponse:
        return await self.handler.AppendMessages(request, caller_of(context))

    @_guard
    async def ListMessages(  # noqa: N802
        self, request: session_service_pb2.ListMessagesRequest, context: Context
    ) -> session_service_pb2.ListMessagesResponse:
        return await self.handler.ListMessages(request, caller_of(context))

    @_guard_stream
    async def Subscribe(  # noqa: N802
        self, request: session_service_pb2.SubscribeRequest, context: Context
    ) -> AsyncIterator[session_service_pb2.SubscribeResponse | bytes]:
        async for reply in self.handler.Subscribe(request, caller_of(context), self.frames):
            yield reply

    @_guard
    async def PublishStream(  # noqa: N802
        self, request_iterator: AsyncIterator[session_service_pb2.PublishStreamRequest], context: Context
    ) -> session_service_pb2.PublishStreamResponse:
        return await self.handler.PublishStream(request_iterator, caller_of(context))

    @_guard
    async def BranchSession(  # noqa: N802
        self, request: session_service_pb2.BranchSessionRequest, context: Context
    ) -> session_service_pb2.BranchSessionResponse:
        return await self.handler.BranchSession(request, caller_of(context))

    @_guard
    async def CompactSession(  # noqa: N802
        self, request: session_service_pb2.CompactSessionRequest, context: Context
    ) -> session_service_pb2.CompactSessionResponse:
        return await self.handler.CompactSession(request, caller_of(context))

    @_guard
    async def BuildContext(  # noqa: N802
        self, request: session_service_pb2.BuildContextRequest, context: Context
    ) -> session_service_pb2.BuildContextResponse:
        return await self.handler.BuildContext(request, caller_of(context))

    @_guard
    async def DeleteSession(  # noqa: N802
        self, request: session_service_pb2.DeleteSessionRequest, context: Context
    ) -> session_service_pb2.DeleteSessionResponse:
        return await self.handler.DeleteSession(request, caller_of(context))

    @_guard
    async def ListSessions(  # noqa: N802
        self, request: session_service_pb2.ListSessionsRequest, context: Context
    ) -> session_service_pb2.ListSessionsResponse:
        return await self.handler.ListSessions(request, caller_of(context))
