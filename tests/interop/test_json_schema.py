"""The contract's JSON Schema (schema/agentmsg.v1.schema.json, scripts/json_schema.py) against the golden values.

Two independent validators judge every value: Python's ``jsonschema`` and npm's ``ajv`` (its draft 2020-12
dialect, run by ``node tests/interop/json_schema.mjs`` once for all values). The golden ProtoJSON values are the
vectors (tests/vectors/*.json, listed in manifest.json), every event and expected message of the fold vectors
(tests/vectors/fold/) and the messages of the golden session export (tests/golden/session/v1.jsonl).

- Every value that ProtoJSON parses and protovalidate passes is accepted by both.
- Every value that breaks a rule the schema says (not a CEL rule) is rejected by both.
- One-field mutations of the valid values, made from the buf.validate rules read off the descriptors (not off the
  schema), are rejected by both; and in reverse, each one is refused by ProtoJSON parsing or by protovalidate.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from jsonschema import Draft202012Validator
from nodetools import ROOT, require_node, run_node
from referencing import Registry, Resource

import agentmsg as am
from buf.validate import validate_pb2

SCHEMA_PATH = ROOT / "schema" / "agentmsg.v1.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VECTORS = ROOT / "tests" / "vectors"
FD = FieldDescriptor
# protovalidate rule ids the schema expresses; anything else (CEL rules, string.uri) it does not check.
STANDARD = re.compile(r"^(required|(string|bytes|int32|int64|uint32|uint64|double|float|repeated|map|enum)\.[a-z_]+)$")
NOT_EXPRESSED = {"string.uri"}  # `format: uri` is an annotation: formats are not asserted
WELL_KNOWN_VALUE = "google.protobuf.Value"  # any JSON: no wrong type


@dataclass(frozen=True)
class Case:
    name: str
    type: str  # full message name
    value: Any


def message_class(type_name: str) -> Any:
    return message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(type_name))


def golden() -> list[Case]:
    cases: list[Case] = []
    manifest = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
    for entry in manifest:
        if entry["json"] is not None:
            value = json.loads((VECTORS / entry["json"]).read_text(encoding="utf-8"))
            cases.append(Case(entry["name"], entry["type"], value))
    for path in sorted((VECTORS / "fold").glob("*.json")):
        fold = json.loads(path.read_text(encoding="utf-8"))
        for i, event in enumerate(fold["events"]):
            cases.append(Case(f"fold/{path.stem}/events[{i}]", "agentmsg.v1.StreamEvent", event))
        if fold["expect"].get("message") is not None:
            cases.append(Case(f"fold/{path.stem}/expect", "agentmsg.v1.Message", fold["expect"]["message"]))
    lines = (ROOT / "tests" / "golden" / "session" / "v1.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines[1:], start=2):  # the first line is the export's header, not a message
        cases.append(Case(f"session/v1.jsonl:{i}", "agentmsg.v1.Message", json.loads(line)))
    return cases


def verdict(case: Case) -> tuple[bool, list[str]]:
    """(parses as ProtoJSON, protovalidate's rule ids) for a value."""
    try:
        parsed = json_format.ParseDict(copy.deepcopy(case.value), message_class(case.type)())
    except json_format.ParseError:
        return False, []
    return True, sorted({v.rule_id for v in am.violations(parsed)})


def expressed(rule_ids: list[str]) -> bool:
    return any(STANDARD.match(r) and r not in NOT_EXPRESSED for r in rule_ids)


# --- mutations from the buf.validate rules -------------------------------------------------------------------


def field_rules(field: FieldDescriptor) -> Any | None:
    options = field.GetOptions()
    return options.Extensions[validate_pb2.field] if options.HasExtension(validate_pb2.field) else None


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def wrong_type(field: FieldDescriptor) -> Any:
    """A JSON value of a type ProtoJSON never accepts for `field`."""
    if is_map(field) or (field.message_type is not None and not field.is_repeated):
        return [1]
    return {"wrong": 1}


def other_arm_value(field: FieldDescriptor) -> Any:
    """A well-typed value for a oneof arm (its own rules aside: the pair of arms is what must be refused)."""
    if field.message_type is not None:
        return {}
    return {FD.TYPE_STRING: "x", FD.TYPE_BYTES: "", FD.TYPE_BOOL: True}.get(field.type, 1)


def bound_mutations(field: FieldDescriptor, rules: Any) -> Iterator[tuple[str, Any]]:
    """Values just outside a numeric rule (gte / gt / lte / lt, finite)."""
    typed = rules.WhichOneof("type")
    if typed is None or typed in ("string", "bytes", "enum", "repeated", "map", "timestamp", "bool"):
        return
    numeric = getattr(rules, typed)
    is_float = field.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT)
    step = 0.5 if is_float else 1
    as_json: Callable[[Any], Any] = str if field.type in (FD.TYPE_INT64, FD.TYPE_UINT64) else (lambda v: v)
    if numeric.HasField("gte"):
        yield f"{typed}.gte", as_json(numeric.gte - step)
    if numeric.HasField("gt"):
        yield f"{typed}.gt", as_json(numeric.gt)
    if numeric.HasField("lte"):
        yield f"{typed}.lte", as_json(numeric.lte + step)
    if numeric.HasField("lt"):
        yield f"{typed}.lt", as_json(numeric.lt)
    if is_float and (numeric.finite or numeric.ListFields()):
        yield f"{typed}.finite", "NaN"


def string_mutations(rules: Any) -> Iterator[tuple[str, Any]]:
    if rules.WhichOneof("type") != "string":
        return
    string = rules.string
    zero_ignored = rules.ignore == validate_pb2.IGNORE_IF_ZERO_VALUE  # "" passes whatever the rules say
    if string.HasField("min_len") and not (zero_ignored and string.min_len == 1):
        yield "string.min_len", "x" * (string.min_len - 1)
    if string.HasField("max_len"):
        yield "string.max_len", "x" * (string.max_len + 1)
    if string.HasField("pattern"):
        candidates = ("", " ", "!", "a b", "\n", "x" * 300)
        misses = [c for c in candidates if not re.search(string.pattern, c) and not (zero_ignored and c == "")]
        yield "string.pattern", misses[0]


def value_mutations(field: FieldDescriptor, rules: Any | None) -> Iterator[tuple[str, Any]]:
    """Replacements of one value of `field` that break one of its rules (or its type)."""
    if field.type == FD.TYPE_ENUM:
        yield "enum name", "NOT_A_DEFINED_VALUE"
        if rules is not None and rules.WhichOneof("type") == "enum" and rules.enum.defined_only:
            yield "enum.defined_only", max(v.number for v in field.enum_type.values) + 1000
    if rules is not None:
        yield from string_mutations(rules)
        yield from bound_mutations(field, rules)


@dataclass(frozen=True)
class Mutation:
    name: str  # where and what, for the test id
    type: str
    value: Any


def at(root: Any, path: list[Any]) -> Any:
    for key in path:
        root = root[key]
    return root


def mutate(root: Any, path: list[Any], change: Callable[[dict[str, Any]], None]) -> Any:
    out = copy.deepcopy(root)
    change(at(out, path))
    return out


def mutations_of(case: Case) -> Iterator[Mutation]:
    """Every one-field mutation of a valid value the rules (and ProtoJSON's types) make."""
    root = case.value

    def walk(obj: dict[str, Any], desc: Descriptor, path: list[Any]) -> Iterator[Mutation]:
        where = f"{desc.full_name}@{'/'.join(map(str, path))}:"
        yield Mutation(f"{where} unknown field", case.type, mutate(root, path, lambda o: o.update(notAField=1)))
        by_json = {f.json_name: f for f in desc.fields} | {f.name: f for f in desc.fields}
        for key, value in obj.items():
            field = by_json[key]
            rules = field_rules(field)
            here = [*path, key]
            label = f"{where}{key}"

            if field.message_type is None or field.message_type.full_name != WELL_KNOWN_VALUE:
                bad = wrong_type(field)
                yield Mutation(
                    f"{label} wrong type", case.type, mutate(root, path, lambda o, k=key, b=bad: o.update({k: b}))
                )
            required = rules is not None and rules.required
            if required or (not field.has_presence and not field.is_repeated and _zero_breaks(field, rules)):
                yield Mutation(f"{label} removed", case.type, mutate(root, path, lambda o, k=key: o.pop(k)))

            oneof = field.containing_oneof
            if oneof is not None and not (len(oneof.fields) == 1 and oneof.name.startswith("_")):
                for other in oneof.fields:
                    if other.json_name not in obj and other.name not in obj:
                        arm = other_arm_value(other)
                        yield Mutation(
                            f"{label} with oneof arm {other.json_name}",
                            case.type,
                            mutate(root, path, lambda o, k=other.json_name, a=arm: o.update({k: a})),
                        )
                if oneof.GetOptions().Extensions[validate_pb2.oneof].required:
                    yield Mutation(
                        f"{label} oneof arm removed", case.type, mutate(root, path, lambda o, k=key: o.pop(k))
                    )

            if is_map(field):
                map_rules = rules.map if rules is not None and rules.HasField("map") else None
                if map_rules is not None and map_rules.keys.WhichOneof("type") == "string" and value:
                    first = next(iter(value.values()))
                    yield Mutation(
                        f"{label} map key",
                        case.type,
                        mutate(root, here, lambda m, v=first: m.update({"Not A Key!": v})),
                    )
                continue
            if field.is_repeated:
                repeated = rules.repeated if rules is not None and rules.HasField("repeated") else None
                if repeated is not None and repeated.HasField("min_items"):
                    n = repeated.min_items - 1
                    yield Mutation(
                        f"{label} repeated.min_items",
                        case.type,
                        mutate(root, path, lambda o, k=key, n=n: o.update({k: o[k][:n]})),
                    )
                if repeated is not None and repeated.HasField("max_items") and value:
                    n = repeated.max_items + 1
                    yield Mutation(
                        f"{label} repeated.max_items",
                        case.type,
                        mutate(root, path, lambda o, k=key, n=n: o.update({k: [o[k][0]] * n})),
                    )
                items = repeated.items if repeated is not None and repeated.HasField("items") else None
                elements = list(enumerate(value))
            else:
                items = rules
                elements = [(None, value)]
            for index, element in elements:
                element_path = here if index is None else [*here, index]
                for rule, replacement in value_mutations(field, items):
                    yield Mutation(
                        f"{label}{'' if index is None else f'[{index}]'} {rule}",
                        case.type,
                        _replace(root, element_path, replacement),
                    )
                if field.message_type is not None and field.message_type.full_name.startswith("agentmsg."):
                    yield from walk(element, field.message_type, element_path)

    yield from walk(root, descriptor_pool.Default().FindMessageTypeByName(case.type), [])


def _replace(root: Any, path: list[Any], value: Any) -> Any:
    out = copy.deepcopy(root)
    at(out, path[:-1])[path[-1]] = value
    return out


def _zero_breaks(field: FieldDescriptor, rules: Any | None) -> bool:
    """Whether protovalidate rejects the implicit-presence `field` at its zero value (so leaving it out breaks it)."""
    if rules is None or rules.ignore in (validate_pb2.IGNORE_IF_ZERO_VALUE, validate_pb2.IGNORE_ALWAYS):
        return False
    if rules.WhichOneof("type") == "string":
        string = rules.string
        return string.min_len > 0 or (string.HasField("pattern") and re.search(string.pattern, "") is None)
    return False


# --- the validators ------------------------------------------------------------------------------------------


def python_verdicts(cases: list[Case] | list[Mutation]) -> list[list[str]]:
    """Python jsonschema's errors for each value (empty when valid)."""
    registry: Registry[Any] = Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA))
    validators: dict[str, Draft202012Validator] = {}
    out = []
    for case in cases:
        if case.type not in validators:
            validators[case.type] = Draft202012Validator(
                {"$ref": f"{SCHEMA['$id']}#/$defs/{case.type}"}, registry=registry
            )
        out.append(
            [
                f"{'/'.join(map(str, e.absolute_path))} {e.message}"
                for e in validators[case.type].iter_errors(case.value)
            ]
        )
    return out


def ajv_verdicts(cases: list[Case] | list[Mutation]) -> list[list[str]]:
    """ajv's errors for each value (empty when valid), from one node process."""
    node = require_node("ajv")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.json"
        path.write_text(json.dumps([{"type": c.type, "value": c.value} for c in cases]), encoding="utf-8")
        results: list[dict[str, Any]] = run_node(node, "json_schema.mjs", str(SCHEMA_PATH), str(path))
    assert len(results) == len(cases)
    return [[] if r["valid"] else r["errors"] for r in results]


GOLDEN = golden()
VALID = [c for c in GOLDEN if verdict(c) == (True, [])]


def unique_mutations() -> list[Mutation]:
    """The mutations of every valid golden value, one per message type, field and rule (the rest repeat)."""
    seen: set[str] = set()
    out = []
    for case in VALID:
        for mutation in mutations_of(case):
            key = re.sub(
                r"@[^ ]*?:", ".", re.sub(r"\[\d+\]", "[]", mutation.name)
            )  # the path dropped: type, field, rule
            if key not in seen:
                seen.add(key)
                out.append(mutation)
    return out


MUTATIONS = unique_mutations()


@pytest.fixture(scope="module")
def golden_verdicts() -> tuple[list[list[str]], list[list[str]]]:
    return python_verdicts(GOLDEN), ajv_verdicts(GOLDEN)


@pytest.fixture(scope="module")
def mutation_verdicts() -> tuple[list[list[str]], list[list[str]]]:
    return python_verdicts(MUTATIONS), ajv_verdicts(MUTATIONS)


def test_the_schema_is_a_valid_draft_2020_12_schema_with_a_definition_per_message() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    pool = descriptor_pool.Default()
    for name in ("agentmsg.v1.Message", "agentmsg.v1.Content", "agentmsg.v1.StreamEvent", "agentmsg.v1.Usage"):
        pool.FindMessageTypeByName(name)
        assert SCHEMA["$defs"][name]["additionalProperties"] is False


def test_the_golden_values_cover_every_kind_of_vector() -> None:
    assert len(VALID) > 150  # vectors, fold events and messages, the session export
    kinds = {c.type for c in VALID}
    assert {"agentmsg.v1.Message", "agentmsg.v1.Content", "agentmsg.v1.StreamEvent", "agentmsg.v1.Usage"} <= kinds
    assert len(MUTATIONS) > 300


def test_every_valid_golden_value_validates_in_both_validators(
    golden_verdicts: tuple[list[list[str]], list[list[str]]],
) -> None:
    python, ajv = golden_verdicts
    refused = [
        f"{case.name}: python {p} ajv {a}"
        for case, p, a in zip(GOLDEN, python, ajv, strict=True)
        if verdict(case) == (True, []) and (p or a)
    ]
    assert refused == []


def test_a_golden_value_that_breaks_an_expressible_rule_is_refused_by_both(
    golden_verdicts: tuple[list[list[str]], list[list[str]]],
) -> None:
    python, ajv = golden_verdicts
    checked = 0
    wrong = []
    for case, p, a in zip(GOLDEN, python, ajv, strict=True):
        parses, rule_ids = verdict(case)
        if parses and expressed(rule_ids):
            checked += 1
            if not p or not a:
                wrong.append(f"{case.name} breaks {rule_ids}: python {p} ajv {a}")
        elif parses and rule_ids and (p or a):  # only CEL rules (and string.uri): the schema must not guess them
            wrong.append(f"{case.name} breaks only {rule_ids}, not in the schema, yet python {p} ajv {a}")
    assert wrong == []
    assert checked >= 20


def test_every_one_field_mutation_is_refused_by_both_validators(
    mutation_verdicts: tuple[list[list[str]], list[list[str]]],
) -> None:
    python, ajv = mutation_verdicts
    accepted = [
        f"{m.name}: python {'refused' if p else 'ACCEPTED'} ajv {'refused' if a else 'ACCEPTED'}"
        for m, p, a in zip(MUTATIONS, python, ajv, strict=True)
        if not p or not a
    ]
    assert accepted == []
    kinds = {m.name.rsplit(" ", 1)[-1] for m in MUTATIONS} | {" ".join(m.name.split(" ")[1:]) for m in MUTATIONS}
    for kind in ("string.min_len", "int32.gte", "int64.gte", "repeated.min_items", "removed", "name", "type", "field"):
        assert any(k.endswith(kind) for k in kinds), kind


def test_every_mutation_the_schema_refuses_is_refused_by_protojson_or_protovalidate() -> None:
    accepted = []
    for mutation in MUTATIONS:
        parses, rule_ids = verdict(Case(mutation.name, mutation.type, mutation.value))
        if parses and not rule_ids:
            accepted.append(mutation.name)
    assert accepted == []


# --- the forms ProtoJSON parsers accept besides the canonical one (docs/json-schema.md) --------------------------

TS = "2026-01-02T03:04:05Z"
USER = {"id": "m1", "timestamp": TS, "user": {"content": [{"text": {"text": "hi"}}]}}
# Accepted by ProtoJSON parsing, protovalidate and the schema alike.
ALTERNATIVES = [
    Case("int64 as a JSON number", "agentmsg.v1.Usage", {"inputTokens": 812, "outputTokens": "64"}),
    Case("enum by number", "agentmsg.v1.AssistantMessage", {"content": [], "stopReason": 1, "error": "x"}),
    Case("the proto field name", "agentmsg.v1.ToolResultContent", {"id": "c1", "is_error": True}),
    Case("a media type in capitals (RE2's (?i:image))", "agentmsg.v1.ImageContent", {"data": "", "mediaType": "IMAGE/PNG"}),  # noqa: E501
    Case("URL-safe base64 without padding", "agentmsg.v1.ImageContent", {"data": "-_8", "mediaType": "image/png"}),
    Case("a timestamp with an offset", "agentmsg.v1.Message", USER | {"timestamp": "2026-01-02T03:04:05.1+02:00"}),
    Case("NaN as a logprob (no rule on it)", "agentmsg.v1.TokenLogprob", {"token": "a", "logprob": "NaN"}),
    Case("an empty media type (ignored)", "agentmsg.v1.ImageContent", {"url": "https://a.test/", "mediaType": ""}),
]  # fmt: skip
# Refused by the schema though ProtoJSON parsers read them: the schema is stricter on purpose (see the docs).
STRICTER = [
    Case("null for a field", "agentmsg.v1.Message", USER | {"name": None}),
    Case("a 32-bit integer as a string", "agentmsg.v1.ToolCallContent", {"id": "c", "name": "n", "index": "1"}),
    Case("a double as a string", "agentmsg.v1.UsageCost", {"total": "0.5"}),
    Case("a field under both names", "agentmsg.v1.ToolResultContent", {"id": "c1", "isError": True, "is_error": False}),
]


def test_the_alternative_forms_protojson_reads_are_accepted_by_both_validators() -> None:
    assert [verdict(c) for c in ALTERNATIVES] == [(True, [])] * len(ALTERNATIVES)
    assert python_verdicts(ALTERNATIVES) == [[]] * len(ALTERNATIVES)
    assert ajv_verdicts(ALTERNATIVES) == [[]] * len(ALTERNATIVES)


def test_the_schema_is_stricter_than_protojson_parsing_only_where_documented() -> None:
    assert [verdict(c) for c in STRICTER] == [(True, [])] * len(STRICTER)  # Python's json_format reads them
    assert all(python_verdicts(STRICTER))
    assert all(ajv_verdicts(STRICTER))


# --- the generator's boundaries ------------------------------------------------------------------------------


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("json_schema_script", ROOT / "scripts" / "json_schema.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_translates_re2_patterns_to_ecma_262_or_refuses() -> None:
    script = generator()
    translated = script.ecma_pattern(r"^(?i:image)/[a-z]+(\s*;)?$")
    assert translated == r"^[Ii][Mm][Aa][Gg][Ee]/[a-z]+([\t\n\f\r ]*;)?$"
    assert re.search(translated, "Image/png ;")
    assert not re.search(translated, "Image/png\u00a0;")  # RE2's \s is ASCII
    for unsupported in (r"^(?s:.)$", r"^(?i:a-b)$", r"^\p{L}$"):
        with pytest.raises(script.UnsupportedRuleError):
            script.ecma_pattern(unsupported)


def test_the_generator_refuses_a_rule_it_cannot_render_instead_of_dropping_it() -> None:
    script = generator()
    rules = validate_pb2.FieldRules()
    rules.string.email = True
    with pytest.raises(script.UnsupportedRuleError, match=r"string\.email"):
        script.scalar(FD.TYPE_STRING, rules, None)
    rules = validate_pb2.FieldRules()
    rules.int64.gte = 5  # a floor other than 0 or 1 has no pattern for the string form of an int64
    with pytest.raises(script.UnsupportedRuleError, match="64-bit"):
        script.scalar(FD.TYPE_INT64, rules, None)
    rules = validate_pb2.FieldRules()
    rules.int32.gte = 5
    assert script.scalar(FD.TYPE_INT32, rules, None)["minimum"] == 5
