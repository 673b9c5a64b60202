"""What every RPC of the service shares, on every transport: the size limits and request validation.

Every request is validated against the contract (protovalidate) before it is
acted on; a violation is a :class:`~agentmsg.errors.ValidationError`, which each
transport answers INVALID_ARGUMENT with ``google.rpc.BadRequest`` field violations
(:mod:`agentmsg.service.status`). How a failing gRPC call ends is
:mod:`agentmsg.service.grpc.calls`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from agentmsg import _validation
from agentmsg.errors import ValidationError, Violation

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENTRY_OVERHEAD",
    "HTTP2_MAX_FRAME",
    "REPLY_ROOM",
    "check_messages",
    "fit",
    "reply_budget",
    "undecodable",
]

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


def undecodable(type_name: str, exc: Exception, *, json: bool = False) -> ValidationError:
    """The refusal of a request body that is not an encoding of ``type_name`` (protobuf bytes, or with ``json``
    ProtoJSON): one violation, rule ``decode``, naming the type and the decoder's complaint. Every transport
    answers it the same way: INVALID_ARGUMENT with this ``google.rpc.BadRequest`` violation."""
    if json:
        problem = f"the request body is not valid ProtoJSON for {type_name}: {exc}"
    else:
        problem = f"the request bytes are not a valid {type_name} encoding: {exc}"
    return ValidationError([Violation("", "decode", problem)], type_name)


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
