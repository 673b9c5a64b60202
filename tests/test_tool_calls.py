"""Tool calls keep the model's argument text verbatim; tool definitions too."""

from __future__ import annotations

import json

import pytest

import agentmsg as am


def test_argument_text_is_kept_byte_for_byte() -> None:
    text = '{"z": 1,  "a": 12345678901234567890, "f": 1.0, "u": "\\u00e9"}'
    call = am.ToolCallContent("c1", "f", arguments=text)
    decoded = am.ContentBase.from_bytes(call.to_bytes())
    assert isinstance(decoded, am.ToolCallContent)
    assert decoded.arguments == text
    assert am.ContentBase.from_json(call.to_json()).arguments == text  # type: ignore[union-attr]
    args = decoded.args
    assert list(args) == ["z", "a", "f", "u"]  # key order kept
    assert args["a"] == 12345678901234567890  # integers stay integers, unbounded
    assert isinstance(args["a"], int)
    assert args["u"] == "é"


def test_args_given_as_a_dict_are_written_as_compact_json() -> None:
    call = am.ToolCallContent("c1", "f", {"b": [1, 2], "a": "é"})
    assert call.arguments == '{"b":[1,2],"a":"é"}'
    assert call.args == {"b": [1, 2], "a": "é"}
    assert am.ToolCallContent("c1", "f").arguments == "{}"
    with pytest.raises(am.ValidationError, match="not both"):
        am.ToolCallContent("c1", "f", {"a": 1}, arguments="{}")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"city": "Par', "invalid JSON"),
        ("[1, 2]", "list is not an object"),
        ('"just a string"', "str is not an object"),
        ("{'single': 'quotes'}", "invalid JSON"),
        ("nul", "invalid JSON"),
    ],
)
def test_invalid_argument_text_is_kept_and_reported(text: str, reason: str) -> None:
    call = am.ToolCallContent("call_9", "search", arguments=text)
    assert call.arguments == text
    assert call.arguments_error is not None
    assert reason in call.arguments_error
    with pytest.raises(am.ToolArgumentsError) as info:
        _ = call.args
    error = info.value
    assert (error.call_id, error.name, error.arguments) == ("call_9", "search", text)
    assert "call_9" in str(error)
    assert "search" in str(error)
    # It survives every form unchanged.
    back = am.ContentBase.from_bytes(call.to_bytes())
    assert isinstance(back, am.ToolCallContent)
    assert back.arguments == text
    assert am.ContentBase.from_dict(json.loads(json.dumps(call.to_dict()))) == call


def test_empty_argument_text_means_no_arguments() -> None:
    call = am.ToolCallContent("c", "now", arguments="")
    assert call.args == {}
    assert call.arguments_error is None


def test_deeply_nested_arguments_report_instead_of_crashing() -> None:
    text = "[" * 100_000 + "]" * 100_000
    call = am.ToolCallContent("c", "f", arguments=text)
    assert call.arguments_error is not None
    with pytest.raises(am.ToolArgumentsError):
        _ = call.args


def test_tool_call_fields() -> None:
    call = am.ToolCallContent(
        "c", "read_file", {"p": "a"}, kind=am.ToolKind.READ, index=2, signature="g", server_name="fs", metadata={"n": 1}
    )
    assert call.kind is am.ToolKind.READ
    assert (call.index, call.signature, call.server_name, call.metadata) == (2, "g", "fs", {"n": 1})
    assert call.type == "tool_call"
    assert am.ToolCallContent("c", "f").kind is None  # not stated, as the seed's default
    assert am.ToolCallContent("c", "f", kind="mcp").kind is am.ToolKind.MCP
    # A kind number from a newer peer reads as UNKNOWN and is kept on the wire.
    call.pb.tool_call.kind = 77  # type: ignore[assignment]
    back = am.ContentBase.from_bytes(call.to_bytes())
    assert isinstance(back, am.ToolCallContent)
    assert back.kind is am.ToolKind.UNKNOWN
    assert back.pb.tool_call.kind == 77


def test_metadata_numbers_come_back_as_ints() -> None:
    result = am.ToolResultContent("c", "x", metadata={"n": 3, "f": 2.5, "nested": {"k": [1, True, None]}})
    back = am.ContentBase.from_bytes(result.to_bytes())
    assert isinstance(back, am.ToolResultContent)
    assert back.metadata == {"n": 3, "f": 2.5, "nested": {"k": [1, True, None]}}
    assert isinstance(back.metadata["n"], int)


def test_tool_result_fields_and_text() -> None:
    result = am.ToolResultContent("c", [am.TextContent("a"), am.TextContent("b")], terminate=True)
    assert result.text == "ab"
    assert result.terminate
    assert not result.is_error
    error = am.ToolResultContent.error("c", "boom", name="f")
    assert (error.is_error, error.text, error.name) == (True, "boom", "f")
    assert am.ToolResultContent("c").blocks == ()
    assert am.ToolResultContent("c").content == ""


def test_tool_definition() -> None:
    schema = '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'
    tool = am.ToolDefinition("get_weather", "Weather by city", schema, kind="web")
    assert tool.parameters_json == schema  # verbatim, key order kept for prompt caching
    assert tool.parameters["required"] == ["city"]
    assert tool.kind is am.ToolKind.WEB
    assert am.ToolDefinition.from_bytes(tool.to_bytes()) == tool
    assert am.ToolDefinition.from_json(tool.to_json()) == tool
    assert am.ToolDefinition("f", parameters={"type": "object"}).parameters_json == '{"type":"object"}'
    assert am.ToolDefinition("noargs").parameters == {}
    with pytest.raises(am.ValidationError) as info:
        am.ToolDefinition("f", parameters="[1]")
    assert info.value.violations[0].field == "parameters"
    with pytest.raises(am.ValidationError):
        am.ToolDefinition("f", parameters="{oops")
