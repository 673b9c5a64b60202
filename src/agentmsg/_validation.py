"""The bridge to protovalidate: the rules live in the proto, this runs them.

Two ways in:

- :func:`check` / :func:`violations_of` run protovalidate itself (the full pass, used where data crosses a
  boundary: the service, ``validate=True`` decoding, :meth:`validate`). Inline media bytes are swapped for a
  one-byte placeholder first (:func:`_media_blind`): the contract's rules only ask whether the bytes are there,
  and protovalidate's CEL otherwise copies every megabyte into its evaluation.
- :func:`ensure` is what the wrappers' constructors call. It runs a checker compiled from the same rules in the
  proto (:func:`_compile`): plain field rules (``string.min_len``, ``int32.gte``, ``required``,
  ``repeated.min_items``...), the per-role kind rules (``has(this.a) || has(this.b)`` over a oneof) and the
  message-level expressions it knows are checked directly; a message type whose rules it does not know (URI
  and pattern rules on media, a new rule someone adds) is handed to protovalidate alone. The checker only
  answers "valid or not": the moment it says "not", the full pass runs and its error is raised, so a refused
  message is refused with exactly the violations (fields, rule ids, messages) protovalidate gives.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import protovalidate
from google.protobuf import descriptor
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agentmsg.errors import ValidationError, Violation
from agentmsg.v1 import session_service_pb2, stream_pb2, tool_service_pb2
from buf.validate import validate_pb2

# The protovalidate option extensions (the generated module has no stubs for them).
_FIELD: Any = validate_pb2.field  # type: ignore[attr-defined]
_MESSAGE: Any = validate_pb2.message  # type: ignore[attr-defined]
_ONEOF: Any = validate_pb2.oneof  # type: ignore[attr-defined]

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
    blind = _media_blind(pb)
    found = [
        Violation(_field_path(v), v.proto.rule_id, v.proto.message)
        for v in _VALIDATOR.collect_violations(pb if blind is None else blind)
    ]
    _bad_nanos(pb, "", found)  # the bytes are not swapped in the message itself
    return found


def check(pb: Message) -> None:
    """Raise :class:`ValidationError` listing every violation, if there is any (the full protovalidate pass)."""
    found = violations_of(pb)
    if found:
        raise ValidationError(found, pb.DESCRIPTOR.name)


def ensure(pb: Message) -> None:
    """:func:`check`, answered by the compiled checker when the message is valid (what constructors call)."""
    if not _checker(pb.DESCRIPTOR)(pb):
        check(pb)


def is_valid(pb: Message) -> bool:
    """True when the message breaks no rule (compiled checker first, protovalidate when it cannot tell)."""
    return _checker(pb.DESCRIPTOR)(pb) or not violations_of(pb)


# --------------------------------------------------------------------------------------------------------------
# The compiled checker. Sound, not complete: True means protovalidate finds nothing; False means "ask it".

_Check = Callable[[Any], bool]
_CHECKERS: dict[str, _Check] = {}  # finished checkers only: what any thread may call

# Message-level CEL expressions the checker knows, by their exact text. Any other expression (or an edit to one
# of these) makes its message type go to protovalidate.
_KNOWN_MESSAGE_CEL: dict[str, Callable[[Any], _Check | None]] = {}


def _known(expression: str) -> Callable[[Callable[[Any], _Check | None]], Callable[[Any], _Check | None]]:
    def register(build: Callable[[Any], _Check | None]) -> Callable[[Any], _Check | None]:
        _KNOWN_MESSAGE_CEL[expression] = build
        return build

    return register


@_known("size(this.content) > 0 || this.error != '' || this.stop_reason in [2, 4, 5, 6]")
def _assistant_required(desc: Any) -> _Check | None:
    if not {"content", "error", "stop_reason"} <= set(desc.fields_by_name.keys()):
        return None
    return lambda pb: len(pb.content) > 0 or pb.error != "" or pb.stop_reason in (2, 4, 5, 6)


@_known("!has(this.data) || this.media_type != ''")
def _media_type_for_data(desc: Any) -> _Check | None:
    data = desc.fields_by_name.get("data")
    if data is None or data.containing_oneof is None or "media_type" not in desc.fields_by_name:
        return None
    oneof = data.containing_oneof.name
    return lambda pb: pb.WhichOneof(oneof) != "data" or pb.media_type != ""


_HAS_ANY = re.compile(r"has\(this\.([a-z_][a-z0-9_]*)\)(?:\s*\|\|\s*has\(this\.([a-z_][a-z0-9_]*)\))*")
_HAS_ONE = re.compile(r"has\(this\.([a-z_][a-z0-9_]*)\)")


def _item_kind(expression: str, item: Any) -> tuple[str, frozenset[str]] | None:
    """``has(this.a) || has(this.b) ...`` over the arms of one oneof of the item: (the oneof, the arms)."""
    if item is None or not _HAS_ANY.fullmatch(expression):
        return None
    names = _HAS_ONE.findall(expression)
    fields = [item.fields_by_name.get(name) for name in names]
    oneofs = {f.containing_oneof.name if f is not None and f.containing_oneof is not None else None for f in fields}
    if len(oneofs) != 1 or None in oneofs or any(f.type != FieldDescriptor.TYPE_MESSAGE for f in fields if f):
        return None
    (oneof,) = oneofs
    assert oneof is not None
    return oneof, frozenset(names)


def _set_fields(rules: Any) -> set[str]:
    return {fd.name for fd, _ in rules.ListFields()}


_RULE_KINDS = frozenset({"repeated", "string", "int32", "int64", "double", "float", "enum", "timestamp"})


class _Rules:
    """A field's own rules, as the generated checker needs them."""

    def __init__(self) -> None:
        self.fails: list[tuple[str, Any]] = []  # a condition on `v` (the value) meaning "broken", and its constant
        self.kinds: list[tuple[str, frozenset[str]]] = []  # per repeated item: (oneof, allowed arms)
        self.required = False


# Patterns the checker runs with Python's ``re``: anchored at both ends, made of bracket classes of plain
# characters, groups and counted repeats only. For these RE2 (protovalidate's) and ``re`` agree (no escapes,
# flags, alternations or ``.``; ``$`` is the end of the text in both when matched whole); any other pattern
# sends its message type to protovalidate.
_PLAIN_PATTERN = re.compile(r"\^(?:\[\^?[A-Za-z0-9._:!#$&+-]+\]|[()]|\{\d+(?:,\d+)?\}|[?*+])+\$")


def _plain_pattern(pattern: str) -> Callable[[str], Any] | None:
    """A ``fullmatch`` equal to RE2's verdict for ``pattern``, or None when that cannot be promised."""
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    try:
        return re.compile(pattern[1:-1]).fullmatch
    except re.error:  # e.g. a repeat of a repeat: protovalidate's to judge
        return None


def _field_rules(fd: Any) -> _Rules | None:
    """The field's own rules, or None when one is not a rule the checker knows."""
    out = _Rules()
    options = fd.GetOptions()
    if not options.HasExtension(_FIELD):
        return out
    rules = options.Extensions[_FIELD]
    top = _set_fields(rules)
    if "required" in top:
        if fd.type != FieldDescriptor.TYPE_MESSAGE or fd.is_repeated or fd.containing_oneof is not None:
            return None
        out.required = rules.required
        top.discard("required")
    if not top:
        return out
    if len(top) != 1:
        return None
    (kind,) = top
    if kind not in _RULE_KINDS:
        return None  # field-level CEL, bytes, maps, durations...: protovalidate's
    sub = getattr(rules, kind)
    inner = _set_fields(sub)
    if kind == "repeated" and fd.is_repeated and inner <= {"min_items", "max_items", "items"}:
        if "min_items" in inner:
            out.fails.append(("len(v) < {}", sub.min_items))
        if "max_items" in inner:
            out.fails.append(("len(v) > {}", sub.max_items))
        if "items" in inner:
            if _set_fields(sub.items) != {"cel"}:
                return None
            for rule in sub.items.cel:
                found = _item_kind(rule.expression, fd.message_type)
                if found is None:
                    return None
                out.kinds.append(found)
        return out
    if fd.is_repeated:
        return None
    if kind == "string" and inner == {"min_len"} and fd.type == FieldDescriptor.TYPE_STRING:
        out.fails.append(("len(v) < {}", sub.min_len))  # protovalidate counts code points, as len() does
    elif kind == "string" and inner == {"pattern"} and fd.type == FieldDescriptor.TYPE_STRING:
        matcher = _plain_pattern(sub.pattern)
        if matcher is None:
            return None
        out.fails.append(("{}(v) is None", matcher))
    elif kind in ("int32", "int64") and inner == {"gte"}:
        out.fails.append(("v < {}", sub.gte))
    elif kind in ("double", "float") and inner <= {"gte", "finite"}:
        if "gte" in inner:
            out.fails.append(("not (v >= {})", sub.gte))  # NaN breaks gte, as in protovalidate
        if sub.finite:
            out.fails.append(("not {}(v)", math.isfinite))
    elif kind == "timestamp" and inner <= {"gte", "lte"} and fd.message_type.full_name == TIMESTAMP:
        # Compared as (seconds, nanos): the Timestamp checker below sends nanos out of range to protovalidate.
        if "gte" in inner:
            out.fails.append(("(v.seconds, v.nanos) < {}", (sub.gte.seconds, sub.gte.nanos)))
        if "lte" in inner:
            out.fails.append(("(v.seconds, v.nanos) > {}", (sub.lte.seconds, sub.lte.nanos)))
    elif kind == "enum" and inner == {"defined_only"} and fd.type == FieldDescriptor.TYPE_ENUM:
        if sub.defined_only:
            out.fails.append(("v not in {}", frozenset(v.number for v in fd.enum_type.values)))
    else:
        return None
    return out


def checker(desc: Any) -> Callable[[Any], bool]:
    """The compiled checker of a message type: True means protovalidate finds nothing; False, "ask it"."""
    return _checker(desc)


# Checkers being compiled, published to _CHECKERS together once the outermost one is done: a checker that
# refers to a type still compiling (a recursive type) is never seen by another thread before that type is.
_STAGED: dict[str, _Check] = {}
_COMPILING = threading.RLock()


def _checker(desc: Any) -> _Check:
    name = desc.full_name
    found = _CHECKERS.get(name)
    if found is not None:
        return found
    with _COMPILING:
        found = _CHECKERS.get(name) or _STAGED.get(name)
        if found is not None:
            return found
        outermost = not _STAGED
        try:
            # A recursive type (Content -> ToolResultContent -> Content) finds the late-bound entry while compiling.
            _STAGED[name] = lambda pb: _CHECKERS[name](pb)  # noqa: PLW0108 - looked up when called
            found = _STAGED[name] = _compile(desc)
            if outermost:
                _CHECKERS.update(_STAGED)
        finally:
            if outermost:
                _STAGED.clear()
    return found


def _rule_free(desc: Any, seen: frozenset[str] = frozenset()) -> bool:
    """No rule anywhere in the type or the types it holds (Struct, Timestamp, plain text blocks)."""
    if desc.full_name in seen:
        return True
    if desc.full_name == TIMESTAMP:
        return False  # the nanos rule agentmsg checks itself (_bad_nanos)
    seen |= {desc.full_name}
    if desc.GetOptions().HasExtension(_MESSAGE):
        return False
    if any(o.GetOptions().HasExtension(_ONEOF) for o in desc.oneofs):
        return False
    for fd in desc.fields:
        if fd.GetOptions().HasExtension(_FIELD):
            return False
        if fd.type == FieldDescriptor.TYPE_MESSAGE and not _rule_free(fd.message_type, seen):
            return False
    return True


def _by_protovalidate(pb: Message) -> bool:
    return not violations_of(pb)


def _always(pb: Message) -> bool:
    return True


def _nanos_in_range(pb: Any) -> bool:
    return bool(0 <= pb.nanos <= NANOS_MAX)


def _compile(desc: Any) -> _Check:
    """A checker for one message type, generated from its rules; protovalidate on the type when one is unknown.

    The checker is Python source made from the rules (one ``if`` per rule, no per-rule call), so checking a
    small message costs about what building it does.
    """
    if desc.full_name == TIMESTAMP:
        return _nanos_in_range
    if _rule_free(desc):
        return _always
    names: dict[str, Any] = {}

    def const(value: Any) -> str:
        key = f"k{len(names)}"
        names[key] = value
        return key

    body: list[str] = []

    def emit_value(rules: _Rules, nested: _Check | None, repeated: bool, indent: str) -> None:
        body.extend(f"{indent}if {template.format(const(value))}: return False" for template, value in rules.fails)
        if repeated and (rules.kinds or nested is not None):
            body.append(f"{indent}for item in v:")
            for oneof, allowed in rules.kinds:
                body.append(f"{indent}    if item.WhichOneof({oneof!r}) not in {const(allowed)}: return False")
            if nested is not None:
                body.append(f"{indent}    if not {const(nested)}(item): return False")
        elif nested is not None:
            body.append(f"{indent}if not {const(nested)}(v): return False")

    options = desc.GetOptions()
    whole: list[_Check] = []
    if options.HasExtension(_MESSAGE):
        message_rules = options.Extensions[_MESSAGE]
        if _set_fields(message_rules) != {"cel"}:
            return _by_protovalidate
        for rule in message_rules.cel:
            build = _KNOWN_MESSAGE_CEL.get(rule.expression)
            compiled = build(desc) if build is not None else None
            if compiled is None:
                return _by_protovalidate
            whole.append(compiled)
    required_oneofs: set[str] = set()
    for oneof in desc.oneofs:
        if oneof.GetOptions().HasExtension(_ONEOF):
            oneof_rules = oneof.GetOptions().Extensions[_ONEOF]
            if _set_fields(oneof_rules) - {"required"}:
                return _by_protovalidate
            if oneof_rules.required:
                required_oneofs.add(oneof.name)

    arms: dict[str, list[tuple[Any, _Rules, _Check | None]]] = {}
    for fd in desc.fields:
        rules = _field_rules(fd)
        if rules is None:
            return _by_protovalidate
        nested: _Check | None = None
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry:
                if not _rule_free(fd.message_type):
                    return _by_protovalidate
                continue
            if not _rule_free(fd.message_type):
                nested = _checker(fd.message_type)
        if not rules.fails and not rules.kinds and nested is None and not rules.required:
            continue
        if fd.containing_oneof is not None and not fd.is_repeated:
            arms.setdefault(fd.containing_oneof.name, []).append((fd, rules, nested))
            continue
        if fd.has_presence and not fd.is_repeated:
            # Rules on a field with presence apply only when it is set; `required` asks that it be set.
            if rules.fails or nested is not None:
                body.append(f"if pb.HasField({fd.name!r}):")
                body.append(f"    v = pb.{fd.name}")
                emit_value(rules, nested, False, "    ")
                if rules.required:
                    body.append("else: return False")
            elif rules.required:
                body.append(f"if not pb.HasField({fd.name!r}): return False")
        else:
            body.append(f"v = pb.{fd.name}")
            emit_value(rules, nested, fd.is_repeated, "")
    for oneof in desc.oneofs:
        listed = arms.get(oneof.name, [])
        if not listed and oneof.name not in required_oneofs:
            continue
        body.append(f"arm = pb.WhichOneof({oneof.name!r})")
        if oneof.name in required_oneofs:
            body.append("if arm is None: return False")
        for i, (fd, rules, nested) in enumerate(listed):
            body.append(f"{'el' if i else ''}if arm == {fd.name!r}:")
            body.append(f"    v = pb.{fd.name}")
            emit_value(rules, nested, False, "    ")
    body.extend(f"if not {const(check)}(pb): return False" for check in whole)
    source = "def check(pb):\n" + "".join(f"    {line}\n" for line in [*body, "return True"])
    exec(compile(source, f"<agentmsg checker for {desc.full_name}>", "exec"), names)  # noqa: S102 - our own source
    check: _Check = names["check"]
    return check


# --------------------------------------------------------------------------------------------------------------
# Media-blind validation: swap inline bytes for a placeholder of the same presence before protovalidate runs.


def _bytes_blind_fields() -> frozenset[str]:
    """Names of bytes fields whose value no rule reads: presence (``has(this.x)``) is all any rule asks.

    Checked over every rule text in the contract's files (a rule of a holding message could read
    ``this.image.data`` too), so a new rule reading the bytes (``size(this.data)``) turns the swap off for
    that field name.
    """
    expressions: list[str] = []
    names: set[str] = set()
    files = [session_service_pb2.DESCRIPTOR, tool_service_pb2.DESCRIPTOR, stream_pb2.DESCRIPTOR]
    seen_files: set[str] = set()
    types: list[Any] = []
    while files:
        file = files.pop()
        if file.name in seen_files:
            continue
        seen_files.add(file.name)
        files.extend(file.dependencies)
        if not file.package.startswith("agentmsg."):
            continue
        pending = list(file.message_types_by_name.values())
        while pending:
            desc = pending.pop()
            types.append(desc)
            pending.extend(desc.nested_types)
    for desc in types:
        expressions.extend(_expressions_of(desc))
        for fd in desc.fields:
            if fd.type == FieldDescriptor.TYPE_BYTES and not fd.GetOptions().HasExtension(_FIELD):
                names.add(fd.name)
    return frozenset(name for name in names if all(_only_presence(e, name) for e in expressions))


def _expressions_of(desc: Any) -> list[str]:
    out: list[str] = []
    options = desc.GetOptions()
    if options.HasExtension(_MESSAGE):
        out += [rule.expression for rule in options.Extensions[_MESSAGE].cel]
    for fd in desc.fields:
        if fd.GetOptions().HasExtension(_FIELD):
            rules = fd.GetOptions().Extensions[_FIELD]
            out += [rule.expression for rule in rules.cel]
            out += [rule.expression for rule in rules.repeated.items.cel]
    return out


def _only_presence(expression: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", re.sub(rf"has\(this\.{re.escape(name)}\)", "", expression)) is None


_BLIND = _bytes_blind_fields()


def swappable(fd: Any) -> bool:
    """An inline media payload: a bytes arm of a oneof (a media `source`) whose value no rule reads."""
    oneof = fd.containing_oneof
    return bool(
        fd.type == FieldDescriptor.TYPE_BYTES
        and fd.name in _BLIND
        and not fd.is_repeated
        and oneof is not None
        and oneof.name != "_" + fd.name  # not a proto3 `optional` field's own oneof
    )


def _media_blind(pb: Message) -> Message | None:
    """A copy of ``pb`` with its inline media bytes swapped for one byte, or None when it holds none.

    The copy is built field by field along the paths that lead to media, so the bytes are never read or
    copied (reading a bytes field copies it); everything else is copied whole.
    """
    if not _has_media(pb):
        return None
    copy = type(pb)()
    _blind_into(copy, pb)
    return copy


def _has_media(pb: Any) -> bool:
    """Whether swappable bytes are set anywhere in ``pb`` (presence only: the bytes are not read)."""
    holders = _HOLDERS.get(pb.DESCRIPTOR.full_name)
    if holders is None:
        holders = _HOLDERS[pb.DESCRIPTOR.full_name] = _holders(pb.DESCRIPTOR)
    for name, kind, arms in holders:
        if kind == "oneof":
            arm = pb.WhichOneof(name)
            if arm in arms and (arms[arm] == "bytes" or _has_media(getattr(pb, arm))):
                return True
        elif kind == "repeated":
            if any(_has_media(item) for item in getattr(pb, name)):
                return True
        elif pb.HasField(name) and (kind == "bytes" or _has_media(getattr(pb, name))):
            return True
    return False


_PLANS: dict[str, list[tuple[str, str, str]]] = {}


def _plan(desc: Any) -> list[tuple[str, str, str]]:
    """How :func:`_blind_into` copies each field of ``desc``: (name, how, its oneof or "")."""
    plan = _PLANS.get(desc.full_name)
    if plan is not None:
        return plan
    plan = []
    for fd in desc.fields:
        oneof = fd.containing_oneof.name if fd.containing_oneof is not None else ""
        message_type = fd.message_type if fd.type == FieldDescriptor.TYPE_MESSAGE else None
        leads = message_type is not None and _leads_to_bytes(message_type, frozenset({desc.full_name}))
        if swappable(fd):
            how = "swap"
        elif message_type is not None and message_type.GetOptions().map_entry:
            how = "map"
        elif fd.is_repeated:
            how = "walk_repeated" if leads else "repeated"
        elif message_type is not None:
            how = "walk" if leads else "message"
        else:
            how = "presence" if fd.has_presence else "implicit"
        plan.append((fd.name, how, oneof))
    _PLANS[desc.full_name] = plan
    return plan


def _blind_into(dst: Any, src: Any) -> None:
    for name, how, oneof in _plan(src.DESCRIPTOR):
        if how == "swap":
            if (src.WhichOneof(oneof) == name) if oneof else src.HasField(name):
                setattr(dst, name, b"\x00")
        elif how == "walk":
            if src.HasField(name):
                sub = getattr(dst, name)
                sub.SetInParent()
                _blind_into(sub, getattr(src, name))
        elif how == "walk_repeated":
            target = getattr(dst, name)
            for item in getattr(src, name):
                _blind_into(target.add(), item)
        elif how == "message":
            if src.HasField(name):
                sub = getattr(dst, name)
                sub.SetInParent()
                sub.CopyFrom(getattr(src, name))
        elif how == "repeated":
            values = getattr(src, name)
            if len(values):
                getattr(dst, name).extend(values)
        elif how == "map":
            values = getattr(src, name)
            target = getattr(dst, name)
            for key in values:
                value = values[key]
                if isinstance(value, Message):
                    target[key].CopyFrom(value)
                else:
                    target[key] = value
        elif how == "presence":
            if src.HasField(name):
                setattr(dst, name, getattr(src, name))
        else:
            setattr(dst, name, getattr(src, name))


_HOLDERS: dict[str, list[tuple[str, str, dict[str, str]]]] = {}


def _holders(desc: Any) -> list[tuple[str, str, dict[str, str]]]:
    """The fields of ``desc`` that are, or lead to, swappable bytes.

    Rows ``(name, kind, arms)``: kind "bytes", "message" or "repeated" for a field; "oneof" for a oneof (name
    is the oneof's), with ``arms`` mapping each of its arms that matters to "bytes" or "message".
    """
    out: list[tuple[str, str, dict[str, str]]] = []
    oneofs: dict[str, dict[str, str]] = {}
    for fd in desc.fields:
        if fd.type == FieldDescriptor.TYPE_BYTES:
            if not swappable(fd):
                continue
            kind = "bytes"
        elif fd.type == FieldDescriptor.TYPE_MESSAGE and not fd.message_type.GetOptions().map_entry:
            if not _leads_to_bytes(fd.message_type, frozenset({desc.full_name})):
                continue
            kind = "repeated" if fd.is_repeated else "message"
        else:
            continue
        if fd.containing_oneof is not None:
            oneofs.setdefault(fd.containing_oneof.name, {})[fd.name] = kind
        else:
            out.append((fd.name, kind, {}))
    out += [(name, "oneof", arms) for name, arms in oneofs.items()]
    return out


def _leads_to_bytes(desc: Any, seen: frozenset[str]) -> bool:
    if desc.full_name in seen:
        return True  # a cycle: the type is already being walked
    for fd in desc.fields:
        if swappable(fd):
            return True
        message_type = fd.message_type if fd.type == FieldDescriptor.TYPE_MESSAGE else None
        walk = message_type is not None and not message_type.GetOptions().map_entry
        if walk and _leads_to_bytes(message_type, seen | {desc.full_name}):
            return True
    return False
