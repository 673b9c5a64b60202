"""What every RPC of the service shares: the size limits, request validation, and how a failing call ends.

Every request is validated against the contract (protovalidate) before it is
acted on; a violation is INVALID_ARGUMENT with ``google.rpc.BadRequest`` field
violations. Every other failure maps to a status through
:mod:`agentmsg.service.status`; anything else is INTERNAL and logged, so nothing
a peer sends crashes the server.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc

from agentmsg import _validation
from agentmsg.errors import AgentMsgError, ValidationError, Violation
from agentmsg.service import status

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENTRY_OVERHEAD",
    "HTTP2_MAX_FRAME",
    "REPLY_ROOM",
    "capture",
    "check_messages",
    "fit",
    "register",
    "reply_budget",
]

log = logging.getLogger("agentmsg.service")

DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
HTTP2_MAX_FRAME = 16 * 1024 * 1024 - 1  # the largest frame HTTP/2 allows
# Bytes every reply keeps free below the maximum message size: for the fields around the messages (offsets,
# tokens, tags and lengths) with a wide margin. Replies are filled with messages up to the rest.
REPLY_ROOM = 64 * 1024
# The most one message adds to a reply besides its own bytes: the LoggedMessage and repeated-field tags and
# lengths and a 10-byte offset varint.
ENTRY_OVERHEAD = 32


def reply_budget(max_message_bytes: int) -> int:
    """The bytes of messages one reply may carry under ``max_message_bytes``; also the most one entry may be."""
    return max(max_message_bytes - REPLY_ROOM, max_message_bytes // 2)


def fit(sizes: Sequence[int], budget: int) -> int:
    """How many of the leading items (of these encoded sizes) one reply carries: at least one, and no more
    than keep the reply within ``budget`` bytes."""
    total = 0
    for count, size in enumerate(sizes):
        total += size + ENTRY_OVERHEAD
        if total > budget and count:
            return count
    return len(sizes)


# --- validation and errors ------------------------------------------------------------------


def _check(request: Any) -> None:
    """Refuse a request that breaks the contract, with protovalidate's violations.

    The checker compiled from the proto's rules answers first (a few microseconds a block); protovalidate
    runs only when it says "not valid", for the exact violations.
    """
    if _validation.checker(request.DESCRIPTOR)(request):
        return
    found = _validation.violations_of(request)
    if found:
        raise ValidationError(found, type(request).__name__)


# Seconds of validation after which a request that carries many messages lets the event loop turn.
SLICE = 0.005


async def check_messages(request: Any, field: str) -> None:
    """:func:`_check` for a request carrying a list of messages (``field``), one message at a time.

    The event loop turns every :data:`SLICE` seconds of checking, so other clients are served meanwhile, and
    protovalidate (whose pass over one call holds the loop: it is native code that keeps the GIL) runs on one
    message at a time, and only on the messages the compiled checker finds wrong. Each message is bounded by
    :class:`~agentmsg.service.limits.RequestLimits` before this runs.
    """
    messages = getattr(request, field)
    check = _validation.checker(request.DESCRIPTOR.fields_by_name[field].message_type)
    failing: list[int] = []
    turn = time.perf_counter()
    for i, message in enumerate(messages):
        if not check(message):
            failing.append(i)
        if time.perf_counter() - turn > SLICE:
            await asyncio.sleep(0)
            turn = time.perf_counter()
    # The request's own fields, with the list cut to its first message: copied field by field, not the whole
    # request (8 MB of messages). The count rules see a list as long as the request's only when it has one
    # item or none; longer lists were counted by RequestLimits (at most the contract's max_items).
    envelope = type(request)()
    for fd, value in request.ListFields():
        if fd.name == field:
            getattr(envelope, field).append(value[0])
        elif fd.is_repeated:
            getattr(envelope, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(envelope, fd.name).CopyFrom(value)
        else:
            setattr(envelope, fd.name, value)
    found: list[Violation] = []
    if not _validation.checker(envelope.DESCRIPTOR)(envelope):
        prefix = f"{field}["
        found += [v for v in _validation.violations_of(envelope) if not v.field.startswith(prefix) or len(messages) < 2]
        if len(messages) == 1:
            failing = []  # already checked with the envelope
    for i in failing:
        await asyncio.sleep(0)
        found += [
            Violation(f"{field}[{i}].{v.field}" if v.field else f"{field}[{i}]", v.rule_id, v.message)
            for v in _validation.violations_of(messages[i])
        ]
    if found:
        raise ValidationError(found, type(request).__name__)


async def _fail(context: grpc.aio.ServicerContext, name: str, exc: Exception) -> None:  # type: ignore[type-arg]
    """End a call that raised: agentmsg errors as rich statuses; anything else INTERNAL, logged.

    A call that has ended already (its peer left while the handler answered, and the answer failed) is left as it is.
    """
    if context.done():
        log.debug("%s ended before it could answer: %s", name, exc)
        return
    if isinstance(exc, AgentMsgError):
        await status.abort(context, exc)
    log.error("internal error in %s", name, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, "internal error; see the server log")


def _guard(
    method: Callable[..., Awaitable[Any]],
) -> Callable[..., Awaitable[Any]]:
    """Unary handlers: failures end the call through :func:`_fail`."""

    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        try:
            return await method(self, request, context)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            await _fail(context, method.__name__, exc)

    wrapper.__name__ = method.__name__
    return wrapper


def _guard_stream(
    method: Callable[..., AsyncIterator[Any]],
) -> Callable[..., AsyncIterator[Any]]:
    """Streaming handlers: failures end the call through :func:`_fail`."""

    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        try:
            async for item in method(self, request, context):
                yield item
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            await _fail(context, method.__name__, exc)

    wrapper.__name__ = method.__name__
    return wrapper


# --- registration: generated handlers, made tolerant of undecodable requests -------------------------------


class _Captured:
    """Stands in for a server to take the generated handlers (so they can be adjusted before registering)."""

    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.handlers = handlers


def capture(add_to_server: Callable[[Any, Any], None], servicer: Any) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """The method handlers a generated ``add_*Servicer_to_server`` would register for ``servicer``."""
    captured = _Captured()
    add_to_server(servicer, captured)
    return dict(captured.handlers)


class _Undecodable:
    """Request bytes that are not an encoding of the method's request type: the call ends INVALID_ARGUMENT."""

    def __init__(self, type_name: str, exc: Exception) -> None:
        self.error = ValidationError(
            [Violation("", "decode", f"the request bytes are not a valid {type_name} encoding: {exc}")], type_name
        )


def _tolerant(deserialize: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    # The generated deserializer is the request class's FromString: its class names the expected type.
    owner = getattr(deserialize, "__self__", None) or getattr(deserialize, "request_type", None)
    type_name = owner.DESCRIPTOR.full_name if owner is not None else "request"

    def decode(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as exc:  # a DecodeError, or anything a malformed peer provokes: never raised into gRPC
            return _Undecodable(type_name, exc)

    return decode


async def _decoded_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        if isinstance(request, _Undecodable):
            raise request.error
        yield request


def _decoding(handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with undecodable request bytes answered INVALID_ARGUMENT with a ``google.rpc.BadRequest``
    (gRPC would answer UNKNOWN, naming a Python exception class). In a request stream the bad message raises
    the ValidationError where the handler reads it, and the handler ends the call with it."""
    assert handler.request_deserializer is not None
    kwargs: dict[str, Any] = {
        "request_deserializer": _tolerant(handler.request_deserializer),
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        unary_unary: Any = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
            if isinstance(request, _Undecodable):
                await status.abort(context, request.error)
            return await unary_unary(request, context)

        return grpc.unary_unary_rpc_method_handler(unary, **kwargs)
    if handler.unary_stream is not None:
        unary_stream: Any = handler.unary_stream
        server_streaming: Any
        if inspect.isasyncgenfunction(unary_stream):

            async def server_streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
                if isinstance(request, _Undecodable):
                    await status.abort(context, request.error)
                async for item in unary_stream(request, context):
                    yield item

        else:  # a handler that writes its replies with context.write (health's Watch)

            async def server_streaming(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
                if isinstance(request, _Undecodable):
                    await status.abort(context, request.error)
                return await unary_stream(request, context)

        return grpc.unary_stream_rpc_method_handler(server_streaming, **kwargs)
    if handler.stream_unary is not None:
        stream_unary: Any = handler.stream_unary

        async def client_streaming(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
            return await stream_unary(_decoded_stream(requests), context)

        return grpc.stream_unary_rpc_method_handler(client_streaming, **kwargs)
    assert handler.stream_stream is not None
    stream_stream: Any = handler.stream_stream

    async def bidi(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        try:
            async for item in stream_stream(_decoded_stream(requests), context):
                yield item
        except ValidationError as exc:  # an undecodable message a handler let through (reflection's) ends here
            await status.abort(context, exc)

    return grpc.stream_stream_rpc_method_handler(bidi, **kwargs)


def register(server: grpc.aio.Server, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]) -> None:
    """Register a service's handlers, each tolerant of undecodable requests."""
    tolerant = {name: _decoding(handler) for name, handler in handlers.items()}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, tolerant),))
    server.add_registered_method_handlers(service, tolerant)
