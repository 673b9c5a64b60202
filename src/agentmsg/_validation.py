"""The bridge to protovalidate: the rules live in the proto, this runs them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import protovalidate

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


def violations_of(pb: Message) -> list[Violation]:
    """Every rule the message breaks, as agentmsg violations (empty when valid)."""
    return [Violation(_field_path(v), v.proto.rule_id, v.proto.message) for v in _VALIDATOR.collect_violations(pb)]


def check(pb: Message) -> None:
    """Raise :class:`ValidationError` listing every violation, if there is any."""
    found = violations_of(pb)
    if found:
        raise ValidationError(found, pb.DESCRIPTOR.name)
