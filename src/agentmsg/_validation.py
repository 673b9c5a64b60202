"""The bridge to protovalidate: the rules live in the proto, this runs them."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import protovalidate
from google.protobuf import descriptor

from agentmsg.errors import ValidationError, Violation

if TYPE_CHECKING:
    from google.protobuf.message import Message

# One shared validator: it caches the compiled rules per message type.
_VALIDATOR = protovalidate.Validator()


def _field_path(violation: protovalidate.Violation) -> str:
    path = violation.proto.field
    if path is None:
        return ""  # a rule of the message being validated itself (a message-level CEL rule at the root)
    parts: list[str] = []
    for element in path.elements:
        name = element.field_name
        subscript: Any = element.subscript
        if subscript is not None:
            value = subscript.value
            name += f"[{value!r}]" if isinstance(value, str) else f"[{value}]"
        parts.append(name)
    return ".".join(parts)


TIMESTAMP = "google.protobuf.Timestamp"
NANOS_MAX = 999_999_999


@cache
def _timestamp_fields(message_type: descriptor.Descriptor) -> tuple[descriptor.FieldDescriptor, ...]:
    """The fields of ``message_type`` that are, or lead to, a Timestamp (computed once per type)."""
    found: list[descriptor.FieldDescriptor] = []
    for field in message_type.fields:
        target = field.message_type
        if target is None:
            continue
        if target.full_name == TIMESTAMP or (target is not message_type and _leads_to_timestamp(target, set())):
            found.append(field)
    return tuple(found)


def _leads_to_timestamp(message_type: descriptor.Descriptor, seen: set[str]) -> bool:
    if message_type.full_name in seen:
        return False
    seen.add(message_type.full_name)
    for field in message_type.fields:
        target = field.message_type
        if target is not None and (target.full_name == TIMESTAMP or _leads_to_timestamp(target, seen)):
            return True
    return False


def _bad_nanos(pb: Message, path: str, found: list[Violation]) -> None:
    """The Timestamp nanos rule (0 to 999,999,999) that protovalidate cannot check.

    Its CEL sees a Timestamp already normalised (nanos -5 reads as one second less, 999,999,995 ns), so the
    contract's ``timestamp`` range rule cannot see a value whose nanos are out of range; the field's comment
    in message.proto states the rule and this enforces it for Python and the server.
    """
    if pb.DESCRIPTOR.full_name == TIMESTAMP:
        nanos = pb.nanos  # type: ignore[attr-defined]
        if not 0 <= nanos <= NANOS_MAX:
            found.append(Violation(path, "timestamp.nanos", f"nanos must be 0 to {NANOS_MAX:,}, got {nanos}"))
        return
    for field in _timestamp_fields(pb.DESCRIPTOR):
        name = f"{path}.{field.name}" if path else field.name
        if field.is_repeated:
            for i, item in enumerate(getattr(pb, field.name)):
                _bad_nanos(item, f"{name}[{i}]", found)
        elif pb.HasField(field.name):
            _bad_nanos(getattr(pb, field.name), name, found)


def violations_of(pb: Message) -> list[Violation]:
    """Every rule the message breaks, as agentmsg violations (empty when valid)."""
    found = [Violation(_field_path(v), v.proto.rule_id, v.proto.message) for v in _VALIDATOR.collect_violations(pb)]
    _bad_nanos(pb, "", found)
    return found


def check(pb: Message) -> None:
    """Raise :class:`ValidationError` listing every violation, if there is any."""
    found = violations_of(pb)
    if found:
        raise ValidationError(found, pb.DESCRIPTOR.name)
