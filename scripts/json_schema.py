"""Write the contract's JSON Schema (draft 2020-12): `make schema` writes schema/agentmsg.v1.schema.json.

    .venv/bin/python scripts/json_schema.py [--out schema/agentmsg.v1.schema.json]
    .venv/bin/python scripts/json_schema.py --check     # fail when the checked-in schema is not what the protos give

One file, one ``$defs`` entry per message and enum of ``agentmsg.v1`` (keyed by full name, e.g.
``agentmsg.v1.Message``), read from the generated ``_pb2`` modules' descriptors and their ``buf.validate``
options. The schema describes the ProtoJSON form (docs/json-schema.md says what is accepted and why):

- field names in lowerCamelCase (``jsonName``); unknown names are refused, as ProtoJSON parsers do;
- 64-bit integers as decimal strings or JSON integers, 32-bit integers as JSON integers, bytes as base64,
  ``Timestamp`` as RFC 3339, ``Duration`` as ``"1.5s"``, ``Struct`` / ``Value`` / ``ListValue`` / wrappers as
  ProtoJSON maps them; enums by name or by number;
- a oneof holds at most one arm (exactly one when ``buf.validate.oneof.required``);
- the protovalidate rules JSON Schema can say: ``required``, string ``min_len`` / ``max_len`` / ``pattern`` /
  ``const`` / ``in``, numeric ranges, ``repeated`` ``min_items`` / ``max_items`` / ``unique``, map key
  patterns, ``enum.defined_only`` / ``in`` / ``not_in``, ``double.finite``, the timestamp range. A rule this
  script does not know makes it fail (a new rule is rendered, never dropped silently);
  CEL rules cannot be said in JSON Schema and are listed in each definition's ``$comment``.

The output depends only on the descriptors, so it is the same on every machine.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

from google.protobuf import descriptor
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor, FileDescriptor

from agentmsg.v1 import (
    content_pb2,
    convert_service_pb2,
    message_pb2,
    session_service_pb2,
    stream_pb2,
    tool_pb2,
    tool_service_pb2,
    usage_pb2,
)
from buf.validate import validate_pb2

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "schema" / "agentmsg.v1.schema.json"
SCHEMA_ID = "urn:agentmsg:schema:agentmsg.v1"
MODULES = (
    content_pb2,
    message_pb2,
    stream_pb2,
    tool_pb2,
    usage_pb2,
    session_service_pb2,
    tool_service_pb2,
    convert_service_pb2,
)

FD = FieldDescriptor
INT32 = {FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32, FD.TYPE_UINT32, FD.TYPE_FIXED32}
INT64 = {FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64, FD.TYPE_UINT64, FD.TYPE_FIXED64}
UNSIGNED = {FD.TYPE_UINT32, FD.TYPE_FIXED32, FD.TYPE_UINT64, FD.TYPE_FIXED64}
FLOATS = {FD.TYPE_DOUBLE, FD.TYPE_FLOAT}
RULE_FIELD = {  # FieldRules' type oneof arm for each scalar type
    FD.TYPE_INT32: "int32", FD.TYPE_SINT32: "sint32", FD.TYPE_SFIXED32: "sfixed32", FD.TYPE_UINT32: "uint32",
    FD.TYPE_FIXED32: "fixed32", FD.TYPE_INT64: "int64", FD.TYPE_SINT64: "sint64", FD.TYPE_SFIXED64: "sfixed64",
    FD.TYPE_UINT64: "uint64", FD.TYPE_FIXED64: "fixed64", FD.TYPE_DOUBLE: "double", FD.TYPE_FLOAT: "float",
}  # fmt: skip

# The RFC 3339 form ProtoJSON parsers read: years 0001-9999, up to nine fractional digits, Z or an offset.
TIMESTAMP = {
    "type": "string",
    "format": "date-time",
    "pattern": r"^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:"
    r"[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$",
}
INT64_STRING = r"^-?[0-9]+$"
BASE64 = r"^[A-Za-z0-9+/_-]*={0,2}$"  # standard or URL-safe alphabet, padding optional: what parsers accept
FLOAT_WORDS = ["NaN", "Infinity", "-Infinity"]
WELL_KNOWN: dict[str, Any] = {
    "google.protobuf.Timestamp": TIMESTAMP,
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]{1,12}(\.[0-9]{1,9})?s$"},
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": True,
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Empty": {"type": "object", "maxProperties": 0},
    "google.protobuf.FieldMask": {"type": "string"},
    "google.protobuf.Any": {"type": "object", "required": ["@type"], "properties": {"@type": {"type": "string"}}},
}
WRAPPERS = {
    "google.protobuf.DoubleValue": FD.TYPE_DOUBLE, "google.protobuf.FloatValue": FD.TYPE_FLOAT,
    "google.protobuf.Int64Value": FD.TYPE_INT64, "google.protobuf.UInt64Value": FD.TYPE_UINT64,
    "google.protobuf.Int32Value": FD.TYPE_INT32, "google.protobuf.UInt32Value": FD.TYPE_UINT32,
    "google.protobuf.BoolValue": FD.TYPE_BOOL, "google.protobuf.StringValue": FD.TYPE_STRING,
    "google.protobuf.BytesValue": FD.TYPE_BYTES,
}  # fmt: skip


class UnsupportedRuleError(Exception):
    """A buf.validate rule this script cannot render: teach the script to render it (or say in the docs why not)."""


def ecma_pattern(pattern: str) -> str:
    """An RE2 pattern (protovalidate's dialect) as an ECMA-262 one with the same meaning on these inputs.

    ``(?i:letters)`` becomes ``[Ll][Ee]...`` (ECMA-262 as Node 20 runs it has no inline flags) and ``\\s`` RE2's
    ASCII class (ECMA-262's also matches Unicode spaces). Anything else with ``(?`` fails loudly.
    """

    def fold(match: re.Match[str]) -> str:
        letters = match.group(1)
        if not letters.isalpha() or not letters.isascii():
            raise UnsupportedRuleError(f"case-insensitive group other than ASCII letters in {pattern!r}")
        return "".join(f"[{c.upper()}{c.lower()}]" for c in letters)

    out = re.sub(r"\(\?i:([^()]*)\)", fold, pattern)
    if "(?" in out or "\\p" in out or "\\z" in out or "\\A" in out:
        raise UnsupportedRuleError(f"an RE2 construct with no ECMA-262 equivalent in {pattern!r}")
    return out.replace(r"\s", r"[\t\n\f\r ]")


def number_bounds(rules: Any, kind: str) -> dict[str, Any]:
    """minimum / maximum / exclusive* / const / enum from a numeric rule message (Int64Rules, DoubleRules, ...)."""
    out: dict[str, Any] = {}
    for name, value in rules.ListFields():
        key = name.name
        if key == "gte":
            out["minimum"] = value
        elif key == "gt":
            out["exclusiveMinimum"] = value
        elif key == "lte":
            out["maximum"] = value
        elif key == "lt":
            out["exclusiveMaximum"] = value
        elif key == "const":
            out["const"] = value
        elif key == "in":
            out["enum"] = list(value)
        elif key == "not_in":
            out["not"] = {"enum": list(value)}
        elif key == "finite":
            pass  # the caller leaves out NaN and the infinities
        else:
            raise UnsupportedRuleError(f"{kind}.{key}")
    return out


def int64_string(bounds: dict[str, Any], kind: str) -> dict[str, Any]:
    """The decimal-string form of a 64-bit integer under `bounds`: only a floor of 0 is expressible as a pattern."""
    if not bounds:
        return {"type": "string", "pattern": INT64_STRING}
    if bounds in ({"minimum": 0}, {"exclusiveMinimum": -1}):
        return {"type": "string", "pattern": r"^[0-9]+$"}
    if bounds in ({"exclusiveMinimum": 0}, {"minimum": 1}):
        return {"type": "string", "pattern": r"^0*[1-9][0-9]*$"}
    raise UnsupportedRuleError(f"{kind} bounds {bounds} on the string form of a 64-bit integer")


def scalar(field_type: int, rules: Any | None, enum: EnumDescriptor | None) -> dict[str, Any]:
    """The schema of one scalar or enum value, with its rules applied."""
    kind = RULE_FIELD.get(field_type) or {FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes", FD.TYPE_BOOL: "bool"}.get(
        field_type, "enum"
    )
    typed = rules.WhichOneof("type") if rules is not None else None
    typed_rules = getattr(rules, typed) if typed else None
    if typed and typed != kind:
        raise UnsupportedRuleError(f"{typed} rules on a {kind} field")

    if enum is not None:
        names = [v.name for v in enum.values]
        numbers: dict[str, Any] = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
        if typed_rules is not None:
            for f, value in typed_rules.ListFields():
                if f.name == "defined_only" and value:
                    numbers = {"enum": [v.number for v in enum.values]}
                elif f.name == "in":
                    names = [v.name for v in enum.values if v.number in value]
                    numbers = {"enum": list(value)}
                elif f.name == "not_in":
                    names = [v.name for v in enum.values if v.number not in value]
                    numbers = {"allOf": [numbers, {"not": {"enum": list(value)}}]}
                elif f.name == "const":
                    names = [v.name for v in enum.values if v.number == value]
                    numbers = {"const": value}
                else:
                    raise UnsupportedRuleError(f"enum.{f.name}")
        by_name = {"$ref": f"#/$defs/{enum.full_name}"} if len(names) == len(enum.values) else {"enum": names}
        return {"anyOf": [by_name, numbers]}

    if field_type == FD.TYPE_STRING:
        out: dict[str, Any] = {"type": "string"}
        for f, value in typed_rules.ListFields() if typed_rules is not None else []:
            name = f.name
            if name == "min_len":
                out["minLength"] = value
            elif name == "max_len":
                out["maxLength"] = value
            elif name == "len":
                out["minLength"] = out["maxLength"] = value
            elif name == "pattern":
                out["pattern"] = ecma_pattern(value)
            elif name == "const":
                out["const"] = value
            elif name == "in":
                out["enum"] = list(value)
            elif name == "not_in":
                out["not"] = {"enum": list(value)}
            elif name == "uri":  # an annotation: validators do not assert formats by default (docs/json-schema.md)
                out["format"] = "uri"
            else:
                raise UnsupportedRuleError(f"string.{name}")
        return out
    if field_type == FD.TYPE_BYTES:
        if typed_rules is not None and typed_rules.ListFields():
            raise UnsupportedRuleError("bytes rules")
        return {"type": "string", "contentEncoding": "base64", "pattern": BASE64}
    if field_type == FD.TYPE_BOOL:
        if typed_rules is not None and typed_rules.ListFields():
            raise UnsupportedRuleError("bool rules")
        return {"type": "boolean"}
    bounds = number_bounds(typed_rules, kind) if typed_rules is not None else {}
    if field_type in UNSIGNED:
        bounds.setdefault("minimum", 0)
    if field_type in INT32:
        limits = (0, 2**32 - 1) if field_type in UNSIGNED else (-(2**31), 2**31 - 1)
        return {"type": "integer", "minimum": limits[0], "maximum": limits[1]} | bounds
    if field_type in INT64:
        return {"anyOf": [int64_string(bounds, kind), {"type": "integer"} | bounds]}
    if field_type in FLOATS:
        finite = typed_rules is not None and typed_rules.finite
        if finite or bounds:  # protovalidate fails NaN and the infinities on any range, and on `finite`
            return {"type": "number"} | bounds
        return {"anyOf": [{"type": "number"}, {"enum": FLOAT_WORDS}]}
    raise UnsupportedRuleError(f"field type {field_type}")


def wrapper(field_type: int) -> dict[str, Any]:
    return scalar(field_type, None, None)


def message_ref(message: descriptor.Descriptor) -> dict[str, Any]:
    name = message.full_name
    if name in WELL_KNOWN:
        known = WELL_KNOWN[name]
        return known if isinstance(known, dict) else {}
    if name in WRAPPERS:
        return wrapper(WRAPPERS[name])
    return {"$ref": f"#/$defs/{name}"}


def timestamp_rules(rules: Any) -> None:
    """Only the range every Timestamp in JSON already has (years 1-9999, which TIMESTAMP's pattern says) passes."""
    for f, value in rules.ListFields():
        if f.name == "gte" and (value.seconds, value.nanos) <= (-62135596800, 0):
            continue
        if f.name == "lte" and (value.seconds, value.nanos) >= (253402300799, 999999999):
            continue
        raise UnsupportedRuleError(f"timestamp.{f.name} narrower than RFC 3339's years 0001-9999")


def value_schema(field: FieldDescriptor, rules: Any | None) -> dict[str, Any]:
    """One value of `field` (an element, for a repeated field), with `rules` (the element's rules)."""
    if field.type == FD.TYPE_MESSAGE:
        typed = rules.WhichOneof("type") if rules is not None else None
        if typed == "timestamp":
            timestamp_rules(rules.timestamp)
        elif typed is not None:
            raise UnsupportedRuleError(f"{typed} rules on a message field")
        return message_ref(field.message_type)
    return scalar(field.type, rules, field.enum_type if field.type == FD.TYPE_ENUM else None)


def zero_value(field: FieldDescriptor) -> Any:
    """The ProtoJSON of a scalar field's zero value, as written explicitly (ProtoJSON emitters leave it out)."""
    if field.type == FD.TYPE_ENUM:
        return field.enum_type.values_by_number[0].name
    return {FD.TYPE_STRING: "", FD.TYPE_BYTES: "", FD.TYPE_BOOL: False}.get(field.type, 0)


def zero_fails(field: FieldDescriptor, schema: dict[str, Any], rules: Any) -> bool:
    """Whether protovalidate rejects an implicit-presence field left at its zero value (so the key is required)."""
    if rules is not None and rules.ignore in (validate_pb2.IGNORE_IF_ZERO_VALUE, validate_pb2.IGNORE_ALWAYS):
        return False
    if field.type == FD.TYPE_STRING:
        if schema.get("minLength", 0) > 0:
            return True
        pattern = schema.get("pattern")
        return pattern is not None and re.search(pattern, "") is None
    if field.type in INT32:
        lo = schema.get("minimum", -(2**31))
        hi = schema.get("maximum", 2**31 - 1)
        return not lo <= 0 <= hi or schema.get("exclusiveMinimum", -1) >= 0 or schema.get("exclusiveMaximum", 1) <= 0
    return False


def present(field: FieldDescriptor) -> dict[str, Any]:
    """The schema of "`field` is present": under its jsonName or, where that differs, its proto name."""
    if field.name == field.json_name:
        return {"required": [field.json_name]}
    return {"anyOf": [{"required": [field.json_name]}, {"required": [field.name]}]}


def message_schema(message: descriptor.Descriptor) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    alias: dict[str, Any] = {}
    required: list[FieldDescriptor] = []
    comments: list[str] = []
    message_rules = message.GetOptions().Extensions[validate_pb2.message]
    for f, _ in message_rules.ListFields():
        if f.name != "cel":
            raise UnsupportedRuleError(f"message rule {f.name} on {message.full_name}")
    for cel in message_rules.cel:
        comments.append(f"CEL rule {cel.id!r} (not expressible here): {cel.expression}")
    for field in message.fields:
        rules = (
            field.GetOptions().Extensions[validate_pb2.field]
            if field.GetOptions().HasExtension(validate_pb2.field)
            else None
        )
        for f, _ in rules.ListFields() if rules is not None else []:
            if f.containing_oneof is None and f.name not in ("required", "ignore", "cel"):
                raise UnsupportedRuleError(f"field rule {f.name} on {field.full_name}")
        if rules is not None and rules.ignore == validate_pb2.IGNORE_ALWAYS:
            rules = None
        for cel in rules.cel if rules is not None else []:
            comments.append(f"CEL rule on {field.json_name} {cel.id!r} (not expressible here): {cel.expression}")
        is_required = rules is not None and rules.required
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_field, value_field = field.message_type.fields
            map_rules = rules.map if rules is not None and rules.HasField("map") else None
            if rules is not None and rules.WhichOneof("type") not in (None, "map"):
                raise UnsupportedRuleError(f"{rules.WhichOneof('type')} rules on a map")
            keys = value_schema(key_field, map_rules.keys if map_rules and map_rules.HasField("keys") else None)
            values = value_schema(value_field, map_rules.values if map_rules and map_rules.HasField("values") else None)
            schema: dict[str, Any] = {"type": "object", "additionalProperties": values}
            if key_field.type == FD.TYPE_STRING:
                schema["propertyNames"] = keys
            else:  # ProtoJSON writes other keys as their decimal (or true / false) text
                schema["propertyNames"] = {"pattern": r"^(-?[0-9]+|true|false)$"}
            for f, value in map_rules.ListFields() if map_rules else []:
                if f.name == "min_pairs":
                    schema["minProperties"] = value
                elif f.name == "max_pairs":
                    schema["maxProperties"] = value
                elif f.name not in ("keys", "values"):
                    raise UnsupportedRuleError(f"map.{f.name}")
            if is_required:
                schema["minProperties"] = max(1, schema.get("minProperties", 0))
                required.append(field)
        elif field.is_repeated:
            repeated = rules.repeated if rules is not None and rules.HasField("repeated") else None
            if rules is not None and rules.WhichOneof("type") not in (None, "repeated"):
                raise UnsupportedRuleError(f"{rules.WhichOneof('type')} rules on a repeated field")
            items = repeated.items if repeated is not None and repeated.HasField("items") else None
            schema = {"type": "array", "items": value_schema(field, items)}
            for cel in items.cel if items is not None else []:
                comments.append(f"CEL rule on {field.json_name}[] {cel.id!r} (not expressible here): {cel.expression}")
            for f, value in repeated.ListFields() if repeated is not None else []:
                if f.name == "min_items":
                    schema["minItems"] = value
                elif f.name == "max_items":
                    schema["maxItems"] = value
                elif f.name == "unique":
                    schema["uniqueItems"] = value
                elif f.name != "items":
                    raise UnsupportedRuleError(f"repeated.{f.name}")
            if is_required:
                schema["minItems"] = max(1, schema.get("minItems", 0))
            if schema.get("minItems", 0) > 0:
                required.append(field)
        else:
            schema = value_schema(field, rules)
            if rules is not None and rules.ignore == validate_pb2.IGNORE_IF_ZERO_VALUE and field.message_type is None:
                schema = {"anyOf": [{"const": zero_value(field)}, schema]}  # the rules hold only when it is set
            if is_required or (not field.has_presence and zero_fails(field, schema, rules)):
                required.append(field)
        properties[field.json_name] = schema
        if field.name != field.json_name:  # ProtoJSON parsers take the proto name too, but not both at once
            properties[field.name] = schema
            alias[field.json_name] = {"not": {"required": [field.name]}}

    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if alias:
        out["dependentSchemas"] = alias
    exclusive: list[dict[str, Any]] = []
    plain = [f.json_name for f in required if f.name == f.json_name]
    if plain:
        out["required"] = plain
    exclusive.extend(present(f) for f in required if f.name != f.json_name)
    for oneof in message.oneofs:
        if len(oneof.fields) == 1 and oneof.fields[0].has_presence and oneof.name.startswith("_"):
            continue  # a proto3 `optional` field's synthetic oneof
        arms = [f.json_name for f in oneof.fields]
        one = [present(f) for f in oneof.fields]
        oneof_rules = oneof.GetOptions().Extensions[validate_pb2.oneof]
        if any(f.name != "required" for f, _ in oneof_rules.ListFields()):
            raise UnsupportedRuleError(f"oneof rules other than required on {oneof.full_name}")
        if oneof_rules.required:
            exclusive.append({"oneOf": one, "$comment": f"oneof {oneof.name}: exactly one of {', '.join(arms)}"})
        else:
            none = {"not": {"anyOf": one}}
            exclusive.append(
                {"oneOf": [*one, none], "$comment": f"oneof {oneof.name}: at most one of {', '.join(arms)}"}
            )
    if exclusive:
        out["allOf"] = exclusive
    if comments:
        out["$comment"] = "; ".join(comments)
    return out


def enum_schema(enum: EnumDescriptor) -> dict[str, Any]:
    return {"type": "string", "enum": [value.name for value in enum.values]}


def walk(files: list[FileDescriptor]) -> dict[str, Any]:
    defs: dict[str, Any] = {}

    def add_message(message: descriptor.Descriptor) -> None:
        if message.GetOptions().map_entry:
            return
        defs[message.full_name] = message_schema(message)
        for enum in message.enum_types:
            defs[enum.full_name] = enum_schema(enum)
        for nested in message.nested_types:
            add_message(nested)

    for file in files:
        for enum in file.enum_types_by_name.values():
            defs[enum.full_name] = enum_schema(enum)
        for message in file.message_types_by_name.values():
            add_message(message)
    return dict(sorted(defs.items()))


def build() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "agentmsg.v1 (ProtoJSON)",
        "description": "The ProtoJSON form of every agentmsg.v1 message, with the protovalidate rules JSON Schema can"
        " express. Generated by scripts/json_schema.py from the contract's descriptors: do not edit. Validate a value"
        ' against one definition, e.g. {"$ref": "' + SCHEMA_ID + '#/$defs/agentmsg.v1.Message"}. See'
        " docs/json-schema.md.",
        "$defs": walk([module.DESCRIPTOR for module in MODULES]),
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="fail when the file differs from a fresh rendering")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            diff = difflib.unified_diff(
                current.splitlines(), text.splitlines(), str(args.out), "generated", lineterm=""
            )
            print("\n".join(list(diff)[:60]), file=sys.stderr)
            print(f"{args.out.relative_to(ROOT)} is stale: run make schema and commit", file=sys.stderr)
            return 1
        print(f"{args.out.relative_to(ROOT)} is current")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT)} ({len(build()['$defs'])} definitions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
