"""What every RPC of the service shares: the size limits, request validation, and how a failing call ends.

Every request is validated against the contract (protovalidate) before it is
acted on; a violation is INVALID_ARGUMENT with ``google.rpc.BadRequest`` field
violations. Every other failure maps to a status through
:mod:`agentmsg.service.status`; anything else is INTERNAL and logged, so nothing
a peer sends crashes the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc

from agentmsg import _validation
from agentmsg.errors import AgentMsgError, ValidationError
from agentmsg.service import status

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "ENTRY_OVERHEAD", "HTTP2_MAX_FRAME", "REPLY_ROOM", "fit", "reply_budget"]

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
    found = _validation.violations_of(request)
    if found:
        raise ValidationError(found, type(request).__name__)


async def _fail(context: grpc.aio.ServicerContext, name: str, exc: Exception) -> None:  # type: ignore[type-arg]
    """End a call that raised: agentmsg errors as rich statuses; anything else INTERNAL, logged."""
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
