"""What the UI-protocol converters share: the ``agentmsg`` metadata key, the envelope of a
message, media as data URLs, and the loss reporting of :mod:`agentmsg.providers._common`.

The rules (written in docs/ui-streams.md as well):

1. ``from_x(to_x(m)) == m`` for everything protocol x has a place for. A message's own
   fields that no protocol field holds (timestamp, provenance, usage, stop reason, error,
   parent id, a session message's fields) ride in the protocol's metadata slot under the key
   ``"agentmsg"``, which both protocols leave to the application.
2. What the protocol cannot hold is never dropped silently: a :class:`Loss` in the
   :class:`ConversionReport`, a :class:`ConversionError` with ``strict=True``, or one
   :class:`ConversionWarning` per call (as for the provider converters).
3. Signed reasoning crosses only where agentmsg's replay rule allows it: a signature (or
   redacted reasoning) goes out only from a message whose provenance names its producer,
   and that provenance goes with it, so whoever reads the message back replays it only to
   that producer (:func:`~agentmsg.providers._common.may_replay`). A message without
   provenance loses its signatures, reported.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from agentmsg.content import AudioContent, DocumentContent, ImageContent
from agentmsg.errors import ValidationError
from agentmsg.messages import BaseMessage, message_to_dict
from agentmsg.providers._common import (
    ConversionError,
    ConversionReport,
    ConversionWarning,
    Loss,
    PayloadErrors,
    Reporter,
    json_type,
    may_replay,
)

__all__ = [
    "AGENTMSG_KEY",
    "ConversionError",
    "ConversionReport",
    "ConversionWarning",
    "Loss",
    "PayloadErrors",
    "Reporter",
    "agentmsg_meta",
    "check_messages",
    "data_url",
    "envelope",
    "json_type",
    "may_replay",
    "media_from_url",
    "parse_data_url",
]

AGENTMSG_KEY = "agentmsg"
"""The metadata key under which agentmsg keeps the fields a UI protocol has no place for."""

_ENVELOPE_SKIP = frozenset({"role", "id", "contents"})


def envelope(message: BaseMessage, *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """A message's dict form without its role, id and contents (and ``skip``): the fields a protocol lacks.

    Keys with an empty value (``error: ""``, ``stop_reason: None``) are left out; reading
    gives them back as the defaults they are.
    """
    skipped = _ENVELOPE_SKIP | set(skip)
    out: dict[str, Any] = {}
    for key, value in message_to_dict(message).items():  # type: ignore[arg-type]
        if key in skipped or value is None or value == "":
            continue
        out[key] = value
    return out


def check_messages(messages: Iterable[BaseMessage]) -> list[tuple[str, BaseMessage]]:
    """Each message with its input path; a single message or a non-message is refused by path."""
    if isinstance(messages, BaseMessage):
        raise ValidationError.single("", "type", "expected a list of messages, got a single message")
    out: list[tuple[str, BaseMessage]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            raise ValidationError.single(f"[{i}]", "type", f"expected a message, got {type(message).__name__}")
        out.append((f"[{i}]", message))
    return out


def data_url(media_type: str, data: bytes) -> str:
    """``data:<type>;base64,<data>``."""
    return f"data:{media_type or 'application/octet-stream'};base64,{base64.b64encode(data).decode('ascii')}"


def parse_data_url(url: str) -> tuple[str, bytes] | None:
    """(media type, bytes) of a base64 data URL, or None when ``url`` is not one."""
    if url[:5].lower() != "data:" or "," not in url:
        return None
    head, _, body = url[5:].partition(",")
    params = head.split(";")
    if "base64" not in (p.strip().lower() for p in params[1:]):
        return None
    try:
        data = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None
    return params[0].strip(), data


def media_from_url(
    kind: str, url: str, media_type: str, *, filename: str = ""
) -> ImageContent | AudioContent | DocumentContent:
    """An image, audio or document block from a URL (a data URL gives inline bytes)."""
    parsed = parse_data_url(url)
    if kind == "image":
        if parsed is not None:
            return ImageContent(parsed[1], media_type=media_type or parsed[0])
        return ImageContent.from_url(url, media_type=media_type or None)
    if kind == "audio":
        if parsed is not None:
            return AudioContent(parsed[1], media_type=media_type or parsed[0])
        return AudioContent.from_url(url, media_type=media_type or None)
    if parsed is not None:
        return DocumentContent(parsed[1], media_type=media_type or parsed[0], filename=filename)
    return DocumentContent.from_url(url, media_type=media_type or None, filename=filename)


def agentmsg_meta(metadata: Any) -> Mapping[str, Any]:
    """The ``agentmsg`` entry of a protocol metadata object, or an empty mapping."""
    if isinstance(metadata, Mapping):
        entry = metadata.get(AGENTMSG_KEY)
        if isinstance(entry, Mapping):
            return entry
    return {}
