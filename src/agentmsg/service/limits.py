"""Bounds on the work one request can make the server do, checked before the work.

A request is bounded in bytes by gRPC (``max_message_bytes``, after any decompression: the decoded size), in
nesting by protobuf's parser (100 levels of messages: about 32 levels of ``Struct`` inside a tool result's
``metadata``; deeper is undecodable, ``INVALID_ARGUMENT`` rule ``decode``), and in entries by the contract
(``AppendMessagesRequest.messages``: at most 1,000, ``repeated.max_items``). Within those, the work a request
causes grows with its content blocks: every block is validated, and one message of 8,000 small blocks (800 kB)
took the event loop for seconds. :class:`RequestLimits` bounds the blocks per message and per request (nested
tool-result content counted) and the events of one ``PublishStream``; each is counted from lengths the parser
already knows, before any validation, and a request over a bound is ``INVALID_ARGUMENT`` naming the field, the
bound and the ``agentmsg serve`` flag that sets it.

The defaults leave room several times over for real traffic: the largest message of the recorded provider
corpus (``tests/corpus``) has 146 blocks, and none of its requests holds more than 146 blocks or 15 messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentmsg.errors import ValidationError, Violation
from agentmsg.v1 import content_pb2, message_pb2, session_service_pb2
from buf.validate import validate_pb2

__all__ = [
    "DEFAULT_MAX_BLOCKS",
    "DEFAULT_MAX_REQUEST_BLOCKS",
    "DEFAULT_MAX_STREAM_EVENTS",
    "MAX_BATCH",
    "RequestLimits",
]

DEFAULT_MAX_BLOCKS = 1024
DEFAULT_MAX_REQUEST_BLOCKS = 8192
DEFAULT_MAX_STREAM_EVENTS = 100_000
# The contract's own bound on AppendMessages (buf.validate repeated.max_items), checked here before anything
# iterates the list: validation would otherwise walk millions of empty messages (2 bytes each) before refusing.
MAX_BATCH: int = (
    session_service_pb2.AppendMessagesRequest.DESCRIPTOR.fields_by_name["messages"]
    .GetOptions()
    .Extensions[validate_pb2.field]  # type: ignore[attr-defined]
    .repeated.max_items
)


def _role_content() -> dict[str, str]:
    """Each role arm of ``Message`` whose body holds content blocks, and that field's name."""
    out: dict[str, str] = {}
    for fd in message_pb2.Message.DESCRIPTOR.oneofs_by_name["role"].fields:
        body: Any = fd.message_type
        for inner in body.fields:
            if inner.message_type is not None and inner.message_type is content_pb2.Content.DESCRIPTOR:
                out[fd.name] = inner.name
    return out


def _nested_content() -> dict[str, str]:
    """Each arm of ``Content`` holding blocks of its own (tool results), and that field's name."""
    out: dict[str, str] = {}
    for fd in content_pb2.Content.DESCRIPTOR.oneofs_by_name["kind"].fields:
        block: Any = fd.message_type
        for inner in block.fields:
            if inner.message_type is content_pb2.Content.DESCRIPTOR:
                out[fd.name] = inner.name
    return out


_ROLE_CONTENT = _role_content()
_NESTED = _nested_content()


def _blocks(content: Any, room: int) -> int:
    """The blocks in ``content`` and in the tool results it holds; stops counting once past ``room``."""
    count = len(content)
    if count > room:
        return count
    for block in content:
        arm = block.WhichOneof("kind")
        field = _NESTED.get(arm) if arm is not None else None
        if field is not None:
            count += _blocks(getattr(getattr(block, arm), field), room - count)
            if count > room:
                return count
    return count


def message_blocks(message: message_pb2.Message, room: int) -> int:
    """The content blocks of ``message`` (nested ones counted), counted up to just past ``room``."""
    arm = message.WhichOneof("role")
    field = _ROLE_CONTENT.get(arm) if arm is not None else None
    if arm is None or field is None:
        return 0
    return _blocks(getattr(getattr(message, arm), field), room)


@dataclass(frozen=True)
class RequestLimits:
    """What one request may ask of the server (``ServerConfig.limits``; ``agentmsg serve --max-blocks`` ...)."""

    max_blocks: int = DEFAULT_MAX_BLOCKS
    """Content blocks in one message, tool-result content included."""
    max_request_blocks: int = DEFAULT_MAX_REQUEST_BLOCKS
    """Content blocks in one request, all its messages together."""
    max_stream_events: int = DEFAULT_MAX_STREAM_EVENTS
    """Events in one ``PublishStream``."""

    def __post_init__(self) -> None:
        for name in ("max_blocks", "max_request_blocks", "max_stream_events"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def check_messages(self, messages: Sequence[message_pb2.Message], field: str) -> None:
        """Refuse a batch over the contract's count, a message over ``max_blocks``, or a request over
        ``max_request_blocks`` (``field``: ``"message"`` for one message, ``"messages"`` for a batch)."""
        if len(messages) > MAX_BATCH:
            raise ValidationError.single(
                field, "repeated.max_items", f"value must contain no more than {MAX_BATCH} item(s)"
            )
        total = 0
        found: list[Violation] = []
        for i, message in enumerate(messages):
            room = min(self.max_blocks, self.max_request_blocks - total)
            count = message_blocks(message, room)
            where = f"{field}[{i}]" if field == "messages" else field
            if count > self.max_blocks:
                found.append(
                    Violation(
                        f"{where}.content",
                        "limits.max_blocks",
                        f"the message has more than {self.max_blocks} content blocks (tool-result content "
                        f"counted); this server takes at most {self.max_blocks} a message (--max-blocks)",
                    )
                )
                break
            total += count
            if total > self.max_request_blocks:
                found.append(
                    Violation(
                        field,
                        "limits.max_request_blocks",
                        f"the request has more than {self.max_request_blocks} content blocks; this server takes "
                        f"at most {self.max_request_blocks} a request (--max-request-blocks)",
                    )
                )
                break
        if found:
            raise ValidationError(found, "request limits")

    def check_stream(self, events: int, received: int, max_bytes: int) -> None:
        """Refuse a ``PublishStream`` past ``max_stream_events`` events, or whose events came to more than
        ``max_bytes`` (the service passes twice the most one session entry may be: the message they fold into
        is refused above that, and is smaller than its events)."""
        if events > self.max_stream_events:
            raise ValidationError.single(
                "event",
                "limits.max_stream_events",
                f"the stream sent more than {self.max_stream_events} events; this server takes at most "
                f"{self.max_stream_events} a stream (--max-stream-events)",
            )
        if received > max_bytes:
            raise ValidationError.single(
                "event",
                "limits.max_stream_bytes",
                f"the stream's events came to more than {max_bytes} bytes, twice the most one session entry may "
                "be (the server's maximum message size less room for framing)",
            )

    def check_blocks(self, blocks: int) -> None:
        """Refuse a ``PublishStream`` that opened more than ``max_blocks`` content blocks."""
        if blocks > self.max_blocks:
            raise ValidationError.single(
                "event",
                "limits.max_blocks",
                f"the stream opened more than {self.max_blocks} content blocks; this server takes at most "
                f"{self.max_blocks} a message (--max-blocks)",
            )
