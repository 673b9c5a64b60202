"""JSON values in ``google.protobuf.Struct`` / ``Value`` fields (app-only metadata).

Protobuf stores JSON numbers as doubles. Reading back, a whole number within
±2**53 becomes an ``int`` again, so ``{"n": 1}`` round-trips as ``{"n": 1}``;
larger integers lose precision, as in any JSON number a JavaScript peer reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2

from agentmsg.errors import ValidationError

_EXACT = 2**53


def _restore(value: Any) -> Any:
    if isinstance(value, float):
        # -0.0 stays a float: an int would lose its sign.
        if value.is_integer() and -_EXACT <= value <= _EXACT and not (value == 0 and math.copysign(1.0, value) < 0):
            return int(value)
        return value
    if isinstance(value, dict):
        return {key: _restore(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_restore(item) for item in value]
    return value


# Objects and arrays nested deeper than this are refused: each level is two or three protobuf message
# levels (Struct, map entry, Value), and protobuf's decoders stop at 100 levels in all, envelope included.
MAX_DEPTH = 24


def _plain(value: Any, field: str, depth: int = 0) -> Any:
    """Check that ``value`` is JSON data and return it with tuples made lists."""
    if isinstance(value, str):
        _utf8(value, field)
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError.single(field, "json", "NaN and infinity are not JSON numbers")
        return value
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_DEPTH:
        raise ValidationError.single(
            field, "json.depth", f"nested more than {MAX_DEPTH} levels (protobuf could not decode it)"
        )
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValidationError.single(field, "json", f"object keys must be strings, got {type(key).__name__}")
            _utf8(key, field)
            out[key] = _plain(item, f"{field}.{key}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{field}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise ValidationError.single(field, "json", f"{type(value).__name__} is not a JSON value")


def _checked(value: Any, field: str) -> Any:
    """:func:`_plain`, with a value nested too deeply to walk refused (rather than a RecursionError)."""
    try:
        return _plain(value, field)
    except RecursionError:
        raise ValidationError.single(field, "json", "the value is nested too deeply") from None


def _utf8(value: str, field: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError.single(field, "string.utf8", f"not encodable as UTF-8: {exc.reason}") from None


def fill_struct(target: struct_pb2.Struct, value: Mapping[str, Any] | None, field: str) -> None:
    """Write a JSON object into a Struct field."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValidationError.single(field, "type", f"expected a JSON object (dict), got {type(value).__name__}")
    target.update(_checked(value, field))


def fill_value(target: struct_pb2.Value, value: Any, field: str) -> None:
    """Write any JSON value into a Value field."""
    plain = _checked(value, field)
    if plain is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif isinstance(plain, bool):
        target.bool_value = plain
    elif isinstance(plain, (int, float)):
        target.number_value = plain
    elif isinstance(plain, str):
        target.string_value = plain
    elif isinstance(plain, dict):
        target.struct_value.update(plain)
    else:
        target.list_value.extend(plain)


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a plain dict (whole numbers as int)."""
    result: dict[str, Any] = _restore({key: _value_of(item) for key, item in struct.fields.items()})
    return result


def value_to_python(value: struct_pb2.Value) -> Any:
    """A Value as plain Python (whole numbers as int); an unset Value is None."""
    return _restore(_value_of(value))


def _value_of(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "struct_value":
        return {key: _value_of(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value_of(item) for item in value.list_value.values]
    return getattr(value, kind)
