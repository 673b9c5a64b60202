"""Tool definitions in every format, both ways: round trips for what each format holds, losses reported,
payloads checked against the providers' own SDK types, bad input named at its path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from anthropic.types import ToolParam
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from sdk_check import validate_with

import agentmsg as am
from agentmsg.cli import main
from agentmsg.providers import tools as formats
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.mcp import from_mcp_tools, to_mcp_tools

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "A city"}, "days": {"type": "integer"}},
    "required": ["city"],
}
OUTPUT = {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}

# What each format holds beyond name, description and parameters.
HOLDS: dict[str, dict[str, Any]] = {
    "openai-chat": {"strict": True},
    "openai-responses": {"strict": False},
    "anthropic": {"strict": True},
    "gemini": {"output_schema": OUTPUT},
    "mcp": {
        "title": "Weather",
        "output_schema": OUTPUT,
        "read_only_hint": True,
        "destructive_hint": False,
        "idempotent_hint": True,
        "open_world_hint": True,
    },
}
EVERYTHING: dict[str, Any] = {**HOLDS["mcp"], "strict": True, "kind": "web"}
SDK_TYPES = {
    "openai-chat": ChatCompletionFunctionToolParam,
    "openai-responses": FunctionToolParam,
    "anthropic": ToolParam,
    "mcp": mcp_types.Tool,
}


def definition(**extra: Any) -> am.ToolDefinition:
    return am.ToolDefinition("get_weather", "The weather in a city.", SCHEMA, **extra)


@pytest.mark.parametrize("fmt", formats.TOOL_FORMATS)
def test_round_trip_of_what_the_format_holds(fmt: formats.ToolFormat) -> None:
    original = [definition(**HOLDS[fmt]), am.ToolDefinition("ping", "", {"type": "object"})]
    report = ConversionReport()
    written = formats.to_tools(fmt, original, report=report)
    assert not report.losses
    back = formats.from_tools(fmt, json.loads(json.dumps(written)), report=report)
    assert back == original
    assert not report.losses
    assert back[0].parameters_json == json.dumps(SCHEMA, separators=(",", ":"))  # key order kept


@pytest.mark.parametrize("fmt", [f for f in formats.TOOL_FORMATS if f in SDK_TYPES])
def test_payloads_match_the_sdk_types(fmt: formats.ToolFormat) -> None:
    for tool in formats.to_tools(fmt, [definition(**HOLDS[fmt])]):
        validate_with(SDK_TYPES[fmt], tool)


@pytest.mark.parametrize("fmt", formats.TOOL_FORMATS)
def test_what_a_format_cannot_hold_is_reported(fmt: formats.ToolFormat) -> None:
    full = definition(**EVERYTHING)
    report = ConversionReport()
    formats.to_tools(fmt, [full], report=report)
    lost = {loss.path for loss in report.losses}
    expected = {f"[0].{field}" for field in ("kind", *EVERYTHING) if field not in HOLDS[fmt] and field != "kind"}
    assert lost == expected | {"[0].kind"}
    with pytest.raises(ConversionError, match="kind"):
        formats.to_tools(fmt, [full], strict=True)
    with pytest.warns(ConversionWarning):
        formats.to_tools(fmt, [full])


def test_chat_shapes() -> None:
    d = definition(strict=True)
    assert formats.to_openai_chat_tools([d]) == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": SCHEMA,
                "strict": True,
            },
        }
    ]
    assert formats.to_openai_responses_tools([d])[0] == {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": SCHEMA,
        "strict": True,
    }
    assert formats.to_anthropic_tools([d])[0]["input_schema"] == SCHEMA
    assert formats.to_gemini_tools([definition()]) == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "The weather in a city.", "parametersJsonSchema": SCHEMA}
            ]
        }
    ]
    assert formats.to_gemini_tools([]) == []


def test_no_parameters() -> None:
    bare = am.ToolDefinition("now")
    assert formats.to_openai_chat_tools([bare]) == [{"type": "function", "function": {"name": "now"}}]
    assert formats.from_openai_chat_tools([{"type": "function", "function": {"name": "now"}}]) == [bare]
    assert formats.to_anthropic_tools([bare])[0]["input_schema"] == {"type": "object"}  # Anthropic requires one
    assert to_mcp_tools([bare])[0]["inputSchema"] == {"type": "object"}  # so does MCP


def test_gemini_openapi_schema_is_read_as_json_schema() -> None:
    payload = {
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "find",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "q": {"type": "STRING", "nullable": True},
                                "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
                            },
                            "required": ["q"],
                        },
                        "response": {"type": "OBJECT", "properties": {"n": {"type": "INTEGER"}}},
                    }
                ]
            },
            {"googleSearch": {}},
        ]
    }
    report = ConversionReport()
    (found,) = formats.from_gemini_tools(payload, report=report)
    assert found.parameters == {
        "type": "object",
        "properties": {"q": {"type": ["string", "null"]}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["q"],
    }
    assert found.output_schema == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert [loss.path for loss in report.losses] == ["tools[1].googleSearch"]


def test_hosted_tools_and_unknown_fields_are_reported() -> None:
    report = ConversionReport()
    chat = formats.from_openai_chat_tools(
        {"tools": [{"type": "web_search"}, {"type": "function", "function": {"name": "f", "extra": 1}}]},
        report=report,
    )
    assert [d.name for d in chat] == ["f"]
    assert [loss.path for loss in report.losses] == ["tools[0]", "tools[1].function.extra"]
    report = ConversionReport()
    anthropic = formats.from_anthropic_tools(
        [
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "g", "input_schema": SCHEMA, "cache_control": {}},
        ],
        report=report,
    )
    assert [d.name for d in anthropic] == ["g"]
    assert [loss.path for loss in report.losses] == ["[0]", "[1].cache_control"]


def test_bad_definitions_are_named_at_their_path() -> None:
    with pytest.raises(am.ValidationError) as caught:
        formats.from_openai_chat_tools(
            [
                {"type": "function", "function": {"description": "no name"}},
                {"type": "function", "function": {"name": "f", "parameters": "not a schema"}},
                {"type": "function", "function": {"name": "g", "strict": "yes"}},
                "a string",
            ]
        )
    fields = [v.field for v in caught.value.violations]
    assert fields == ["[0].function.name", "[1].function.parameters", "[2].function.strict", "[3]"]
    with pytest.raises(am.ValidationError, match="expected a list of tools"):
        formats.from_anthropic_tools({"tools": {"name": "x"}})
    with pytest.raises(am.ValidationError, match="unknown tool format"):
        formats.to_tools("nope", [])  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError, match="single definition"):
        formats.to_openai_chat_tools(definition())  # type: ignore[arg-type]


def test_mcp_tool_fields() -> None:
    tool = {
        "name": "echo",
        "title": "Echo Tool",
        "description": "Echoes",
        "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        "execution": {"taskSupport": "forbidden"},
        "annotations": {"title": "Echo", "readOnlyHint": True, "openWorldHint": False},
        "icons": [{"src": "https://example.com/i.png"}],
    }
    report = ConversionReport()
    (read,) = from_mcp_tools([tool], kind=am.ToolKind.MCP, report=report)
    assert (read.title, read.read_only_hint, read.open_world_hint, read.destructive_hint) == (
        "Echo Tool",
        True,
        False,
        None,
    )
    assert read.kind is am.ToolKind.MCP
    assert read.parameters_json == '{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}'
    assert sorted(loss.path for loss in report.losses) == ["[0].annotations.title", "[0].execution", "[0].icons"]
    (titled,) = from_mcp_tools([{"name": "t", "inputSchema": {}, "annotations": {"title": "From annotations"}}])
    assert titled.title == "From annotations"


def test_mcp_tool_schema_that_is_not_json() -> None:
    with pytest.raises(am.ValidationError) as caught:
        from_mcp_tools(
            [
                {"name": "a", "inputSchema": "{type: object"},
                {"name": "b", "inputSchema": [1]},
                {"name": "c"},
                {"name": "d", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}},
            ]
        )
    found = {(v.field, v.rule_id) for v in caught.value.violations}
    assert found == {
        ("[0].inputSchema", "json"),
        ("[1].inputSchema", "type"),
        ("[2].inputSchema", "required"),
        ("[3].annotations.readOnlyHint", "type"),
    }
    assert "not JSON" in str(caught.value)


def test_definition_fields_and_validation() -> None:
    d = definition(**EVERYTHING)
    assert d.output_schema == OUTPUT
    assert (d.read_only_hint, d.destructive_hint, d.idempotent_hint, d.open_world_hint, d.strict) == (
        True,
        False,
        True,
        True,
        True,
    )
    assert am.ToolDefinition.from_bytes(d.to_bytes()) == d
    assert am.ToolDefinition.from_json(d.to_json()) == d
    assert am.ToolDefinition("x").read_only_hint is None
    with pytest.raises(am.ValidationError, match="output_schema"):
        am.ToolDefinition("x", output_schema="[1, 2]")
    with pytest.raises(am.ValidationError, match="strict"):
        am.ToolDefinition("x", strict="yes")  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError, match="title"):
        am.ToolDefinition("x", title=3)  # type: ignore[arg-type]


def test_convert_keeps_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = {
        "model": "gpt",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [*formats.to_openai_chat_tools([definition(strict=True)]), {"type": "web_search"}],
    }
    source = tmp_path / "request.json"
    source.write_text(json.dumps(request))
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", str(source)]) == 0
    out = capsys.readouterr()
    converted = json.loads(out.out)
    assert converted["tools"] == formats.to_anthropic_tools([definition(strict=True)])
    assert "tools[1]: the 'web_search' tool dropped" in out.err
    assert main(["convert", "--from", "openai-chat", "--to", "gemini", str(source)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["tools"] == formats.to_gemini_tools([definition()])
    assert "tools[0].strict: strict dropped" in out.err
    assert main(["convert", "--from", "openai-chat", "--to", "openai-responses", str(source)]) == 0
    responses = json.loads(capsys.readouterr().out)
    assert responses["tools"] == formats.to_openai_responses_tools([definition(strict=True)])
    assert responses["input"][0]["role"] == "user"
    assert main(["convert", "--from", "openai-chat", "--to", "seed1", str(source)]) == 0
    assert "tools: 2 tool definition(s) dropped: the seed1 format has no tools" in capsys.readouterr().err
    assert main(["convert", "--strict", "--from", "openai-chat", "--to", "seed1", str(source)]) == 2
    assert "tools" in capsys.readouterr().err
    # without tools the output keeps its shape
    source.write_text(json.dumps({"messages": request["messages"]}))
    assert main(["convert", "--from", "openai-chat", "--to", "openai-chat", str(source)]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), list)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_SCHEMA = st.dictionaries(_TEXT, _JSON, max_size=4)
_HINT = st.none() | st.booleans()


@st.composite
def definitions(draw: st.DrawFn, fmt: str) -> am.ToolDefinition:
    """A definition holding only what ``fmt`` holds (names, texts and schemas drawn freely)."""
    held = HOLDS[fmt]
    fields: dict[str, Any] = {}
    if "title" in held:
        fields["title"] = draw(_TEXT)
    if "output_schema" in held:
        fields["output_schema"] = draw(st.none() | _SCHEMA.filter(bool))
    for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
        if hint in held:
            fields[hint] = draw(_HINT)
    if "strict" in held:
        fields["strict"] = draw(_HINT)
    parameters = draw(_SCHEMA.filter(bool))
    return am.ToolDefinition(draw(_TEXT.filter(bool)), draw(_TEXT), parameters, **fields)


@pytest.mark.parametrize("fmt", formats.TOOL_FORMATS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_round_trip_property(fmt: formats.ToolFormat, data: st.DataObject) -> None:
    original = data.draw(st.lists(definitions(fmt), max_size=3))
    report = ConversionReport()
    written = json.loads(json.dumps(formats.to_tools(fmt, original, report=report)))
    assert formats.from_tools(fmt, written, report=report) == original
    assert not report.losses
