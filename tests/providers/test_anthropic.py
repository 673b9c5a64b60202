"""The Anthropic Messages converter (``agentmsg.providers.anthropic``).

Golden payloads live in ``tests/golden/anthropic/*.json``; each names, under
``_source``, the ``anthropic`` SDK type files and the platform documentation
pages it follows. Every payload written here is validated against the SDK's
own types (``MessageParam``, the ``system`` parameter's type, ``Message``).
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Union

import anthropic
import pytest
from anthropic.types import Message, MessageParam, TextBlockParam
from anthropic.types.beta import BetaMessage
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from sdk_check import validate_with

from agentmsg import (
    AssistantMessage,
    AudioContent,
    BaseMessage,
    Citation,
    CompactionSummaryMessage,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    ImageContent,
    Provenance,
    ProviderContent,
    RedactedThinkingContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    TokenLogprob,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    Usage,
    UsageCost,
    UserMessage,
    ValidationError,
)
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.anthropic import (
    API,
    PROVIDER,
    from_anthropic,
    from_anthropic_response,
    to_anthropic,
    to_anthropic_response,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "anthropic"
SDK_ROOT = Path(anthropic.__file__).resolve().parent.parent
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
PDF = b"%PDF-1.4\n%%EOF\n"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
ANTHROPIC = Provenance(PROVIDER, API, "claude-a", "msg_1")
WEB_SEARCH_ERROR = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
}
CHAR_CITATION = {
    "type": "char_location",
    "cited_text": "hello",
    "document_index": 0,
    "document_title": None,
    "start_char_index": 0,
    "end_char_index": 5,
}
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")


# --------------------------------------------------------------------------- helpers


def load_golden(name: str) -> dict[str, Any]:
    """A golden fixture's payload (or response), with its ``_source`` note checked and stripped."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["sdk"] == f"anthropic=={anthropic.__version__}"
    assert source["types"], name
    for type_file in source["types"]:
        assert (SDK_ROOT / type_file).is_file(), f"{name}: no SDK file {type_file}"
    assert source["docs"]
    assert all(url.startswith("https://platform.claude.com/docs/en/") for url in source["docs"])
    (key,) = doc
    assert key in ("payload", "response")
    value: dict[str, Any] = doc[key]
    return value


def check_request(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate a request payload with the SDK's types (every lazy iterable forced); return it."""
    assert set(payload) <= {"system", "messages"}
    validate_with(list[MessageParam], payload["messages"])
    if "system" in payload:
        validate_with(Union[str, Iterable[TextBlockParam]], payload["system"])  # noqa: UP007 - the SDK's own spelling
    return payload


def check_response(response: dict[str, Any]) -> dict[str, Any]:
    Message.model_validate(response)
    return response


def expand(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with string message content written as one text block (what to_anthropic writes)."""
    out = dict(payload)
    out["messages"] = [
        {**m, "content": [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]}
        for m in payload["messages"]
    ]
    return out


def shape(messages: Sequence[BaseMessage]) -> list[tuple[type, tuple[Any, ...], str]]:
    """What the format carries of each message: its class, its blocks and its name.

    The format has no message ids or timestamps, and a request carries no
    usage, stop reason, error or provenance, so those are left out here.
    """
    return [(type(m), m.contents, m.name) for m in messages]


def losses(report: ConversionReport) -> list[tuple[str, str]]:
    return [(loss.path, loss.what) for loss in report.losses]


def violations(exc: pytest.ExceptionInfo[ValidationError]) -> dict[str, str]:
    return {v.field: v.rule_id for v in exc.value.violations}


def bmp_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1, 1)).save(buffer, "BMP")
    return buffer.getvalue()


def conversation() -> list[BaseMessage]:
    """Everything the format holds, written the way it reads back (positions as indexes, call names)."""
    return [
        SystemMessage([TextContent("You are terse."), TextContent("Use metric units.")]),
        UserMessage(
            [
                TextContent("Look at these."),
                ImageContent(PNG),
                ImageContent.from_url("https://example.com/cat.jpg"),
                ImageContent.from_url("https://example.com/render"),
                ImageContent.from_file_id("file_img"),
                DocumentContent(PDF, title="Q3 report"),
                DocumentContent.from_text("plain words"),
                DocumentContent.from_url("https://example.com/paper.pdf"),
                DocumentContent.from_file_id("file_doc", title="Uploaded"),
                ProviderContent.from_block(
                    PROVIDER, {"type": "search_result", "source": "kb", "title": "T", "content": []}
                ),
            ]
        ),
        AssistantMessage(
            [
                ThinkingContent("Two tools.", "sig-1"),
                RedactedThinkingContent("opaque"),
                TextContent("Checking."),
                ToolCallContent("toolu_1", "read_file", arguments='{"path": "a.txt"}', metadata={"approved": True}),
                ToolCallContent("toolu_2", "lookup", arguments='{"q": 1, "tags": ["x", null], "f": 1.5}', index=1),
                HostedToolCallContent(
                    "srvtoolu_1",
                    "web_search",
                    "{}",
                    kind="web_search",
                    original=ProviderContent.from_block(
                        PROVIDER, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
                    ),
                ),
                HostedToolResultContent(
                    "srvtoolu_1",
                    kind="web_search",
                    error_code="max_uses_exceeded",
                    original=ProviderContent.from_block(PROVIDER, WEB_SEARCH_ERROR),
                ),
                TextContent(
                    "Cited.",
                    citations=[
                        Citation.document(
                            0,
                            chars=(0, 5),
                            cited_text="hello",
                            original=ProviderContent.from_block(PROVIDER, CHAR_CITATION),
                        )
                    ],
                ),
            ],
            usage=Usage(input_tokens=10, output_tokens=5),
            stop_reason=StopReason.TOOL_CALLS,
            stop_reason_raw="tool_use",
            provenance=ANTHROPIC,
        ),
        ToolMessage(
            [
                ToolResultContent("toolu_1", "hello", name="read_file", metadata={"bytes": 5}, terminate=True),
                ToolResultContent(
                    "toolu_2",
                    [TextContent("see"), ImageContent(PNG), DocumentContent(PDF)],
                    is_error=True,
                    name="lookup",
                    index=1,
                ),
            ]
        ),
        UserMessage([TextContent("And now?")]),
        AssistantMessage([TextContent("Done.")], stop_reason="stop", provenance=ANTHROPIC),
        UserMessage([ToolResultContent("toolu_1", "late", name="read_file"), TextContent("x")]),
    ]


# --------------------------------------------------------------------------- golden payloads


@pytest.mark.parametrize("name", ["text.json", "vision.json", "documents.json", "tool_use.json", "thinking.json"])
def test_golden_requests_are_valid_sdk_payloads(name: str) -> None:
    check_request(load_golden(name))


def test_golden_text_reads_string_and_block_content() -> None:
    payload = load_golden("text.json")
    messages = from_anthropic(payload)
    assert shape(messages) == [
        (SystemMessage, (TextContent("Answer in one sentence."),), ""),
        (UserMessage, (TextContent("Good morning."),), ""),
        (AssistantMessage, (TextContent("Good morning! What can I do for you?"),), ""),
        (UserMessage, (TextContent("Why is the sky blue?"), TextContent("Keep it short.")), ""),
    ]
    assert messages[2].provenance is None  # type: ignore[union-attr]
    report = ConversionReport()
    assert check_request(to_anthropic(messages, system_as="string", report=report)) == expand(payload)
    assert not report


def test_golden_vision_reads_every_image_source() -> None:
    payload = load_golden("vision.json")
    (message,) = from_anthropic(payload)
    inline, by_url, by_file, text = message.contents
    assert inline == ImageContent(PNG, media_type="image/png")
    assert isinstance(by_url, ImageContent)
    assert by_url.url == "https://example.com/photos/ant.jpg"
    assert by_url.media_type == "image/jpeg"  # guessed from the path, as ImageContent.from_url does
    assert by_file == ImageContent.from_file_id("file_011CNha8iCJcU1wXNR6q4V8w")
    assert text == TextContent("What do these three images have in common?")
    report = ConversionReport()
    assert check_request(to_anthropic([message], report=report)) == payload
    assert not report


def test_golden_documents_read_every_source_and_context_and_ignore_the_citations_switch() -> None:
    payload = load_golden("documents.json")
    (message,) = from_anthropic(payload)
    pdf, by_url, text, by_file, prompt = message.contents
    assert pdf == DocumentContent(PDF, media_type="application/pdf", title="Minimal PDF")
    assert by_url == DocumentContent.from_url("https://example.com/papers/report.pdf", media_type="application/pdf")
    assert text == DocumentContent.from_text("The grass is green. The sky is blue.", title="Colours").with_context(
        "A note written for this test."
    )
    assert isinstance(text, DocumentContent)
    assert text.context == "A note written for this test."
    assert text.media_type == "text/plain"
    assert by_file == DocumentContent.from_file_id("file_011CNvxoj286tYUAZFiZMf1U")
    assert prompt == TextContent("Summarise these documents.")
    expected = json.loads(json.dumps(payload))
    del expected["messages"][0]["content"][2]["citations"]  # a request setting (citations on or off), not data
    report = ConversionReport()
    assert check_request(to_anthropic([message], report=report)) == expected
    assert not report


def test_golden_tool_use_splits_results_into_tool_messages_and_writes_them_back_exactly() -> None:
    payload = load_golden("tool_use.json")
    messages = from_anthropic(payload)
    assert [type(m) for m in messages] == [
        SystemMessage,
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
        ToolMessage,
        UserMessage,
        AssistantMessage,
    ]
    assert messages[0].contents == (TextContent("You can call tools."), TextContent("Use metric units."))
    assert isinstance(messages[2], AssistantMessage)
    _, paris, oslo = messages[2].contents
    assert paris == ToolCallContent(
        "toolu_01A09q90qw90lq917835lq9", "get_weather", arguments='{"location": "Paris, France"}'
    )
    assert isinstance(oslo, ToolCallContent)
    # json.dumps's own separators, as Anthropic's stream spells input_json_delta; key order kept
    assert oslo.arguments == '{"location": "Oslo, Norway", "unit": "celsius", "days": 2}'
    assert oslo.index == 1
    assert messages[3].contents == (
        ToolResultContent("toolu_01A09q90qw90lq917835lq9", "18 degrees, clear", name="get_weather"),
        ToolResultContent(
            "toolu_01B19r91rx91mr918846mr0", "weather service unavailable", is_error=True, name="get_weather", index=1
        ),
    )
    assert isinstance(messages[4], AssistantMessage)
    map_call = messages[4].contents[0]
    assert isinstance(map_call, ToolCallContent)
    assert map_call.args == {"city": "Oslo", "zoom": 12.5, "layers": ["roads", "parks"], "legend": None}
    assert messages[5].contents == (
        ToolResultContent(
            "toolu_01C29s92sy92ns919857ns1",
            [TextContent("Map of Oslo:"), ImageContent(PNG, media_type="image/png")],
            name="get_map",
        ),
        ToolResultContent("toolu_01D39t93tz93ot920868ot2", name="clear_cache", index=1),
    )
    assert messages[6].contents == (TextContent("Thanks. Which city is warmer?"),)
    report = ConversionReport()
    assert check_request(to_anthropic(messages, report=report)) == payload
    assert not report
    assert report.id_map == {}


def test_golden_thinking_turns_get_anthropic_provenance_and_replay() -> None:
    payload = load_golden("thinking.json")
    messages = from_anthropic(payload)
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage, ToolMessage, AssistantMessage]
    first, last = messages[1], messages[3]
    assert isinstance(first, AssistantMessage)
    assert isinstance(last, AssistantMessage)
    assert first.provenance == Provenance(PROVIDER, API)  # only this API makes signed thinking; model unknown
    assert first.contents[0] == ThinkingContent(
        "The user wants the current weather; I should call get_weather.",
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    )
    assert first.contents[1] == RedactedThinkingContent(
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    )
    assert last.contents[0] == ThinkingContent("", "ErUBCkYIBxgCIkDmkiJ2nYs0EXAMPLEONLY")
    report = ConversionReport()
    assert check_request(to_anthropic(messages, report=report, model="claude-opus-4-8")) == payload
    assert not report


def test_golden_response_reads_usage_stop_reason_and_provenance() -> None:
    response = check_response(load_golden("response.json"))
    message = from_anthropic_response(response)
    assert message.contents == (
        ThinkingContent("I need the weather tool.", "EqQBCgIYAhIMsignature"),
        TextContent("Let me check."),
        ToolCallContent(
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "get_weather",
            arguments='{"location": "San Francisco, CA", "unit": "celsius"}',
        ),
    )
    assert message.usage == Usage(
        input_tokens=2095, output_tokens=503, cache_read_tokens=4102, cache_write_tokens=2051, reasoning_tokens=120
    )
    assert message.usage is not None
    assert message.usage.known("total_tokens") is None  # not reported: stays unknown
    assert message.stop_reason is StopReason.TOOL_CALLS
    assert message.stop_reason_raw == "tool_use"
    assert message.provenance == Provenance(PROVIDER, API, "claude-opus-4-8", "msg_01XFDUDYJgAACzvnptvVoYEL")
    report = ConversionReport()
    assert check_response(to_anthropic_response(message, report=report)) == response
    assert not report
    # The response replays as the next request's assistant turn, thinking included.
    assert to_anthropic([message], model="claude-opus-4-8")["messages"][0]["content"] == response["content"]


def test_golden_web_search_response_reads_hosted_tools_and_citations_by_default() -> None:
    response = check_response(load_golden("response_web_search.json"))
    message = from_anthropic_response(response)
    text, use, result, answer = message.contents
    assert text == TextContent("I'll search for that.")
    assert isinstance(use, HostedToolCallContent)
    assert (use.id, use.name, use.kind, use.input) == (
        "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
        "web_search",
        HostedToolKind.WEB_SEARCH,
        '{"query": "claude shannon birth date"}',
    )
    assert use.original is not None
    assert use.original.block() == response["content"][1]
    assert isinstance(result, HostedToolResultContent)
    assert (result.call_id, result.kind, result.is_error) == (use.id, HostedToolKind.WEB_SEARCH, False)
    (hit,) = result.search_results
    assert (hit.url, hit.title, hit.page_age, hit.encrypted_content) == (
        "https://en.wikipedia.org/wiki/Claude_Shannon",
        "Claude Shannon - Wikipedia",
        "April 30, 2025",
        "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
    )
    assert isinstance(answer, TextContent)
    assert answer.content == "Claude Shannon was born on April 30, 1916."
    (citation,) = answer.citations
    assert (citation.source_kind, citation.url, citation.title) == (
        "web",
        "https://en.wikipedia.org/wiki/Claude_Shannon",
        "Claude Shannon - Wikipedia",
    )
    assert citation.cited_text.startswith("Claude Elwood Shannon")
    assert message.stop_reason is StopReason.STOP
    assert message.usage == Usage(
        input_tokens=6039,
        output_tokens=931,
        cache_read_tokens=0,
        cache_write_tokens=0,
        hosted_tool_requests={"web_search": 1, "web_fetch": 0},
    )
    report = ConversionReport()
    assert check_response(to_anthropic_response(message, report=report)) == response
    assert not report
    # The next request sends the turn back exactly, encrypted content and index included.
    assert to_anthropic([message], model="claude-opus-4-8")["messages"][0]["content"] == response["content"]
    # Hosted tool blocks are known types: reading them needs no pass-through.
    assert from_anthropic_response(response, pass_through_unknown=False).contents == message.contents


# --------------------------------------------------------------------------- round trips


def test_round_trip_of_everything_the_format_holds() -> None:
    messages = conversation()
    report = ConversionReport()
    payload = check_request(to_anthropic(messages, report=report))
    assert report.summary() == "nothing lost"
    back = from_anthropic(payload, id_map=report.id_map, pass_through_unknown=True)
    # Tool-call metadata and tool-result metadata / terminate never reach a provider (rule 5).
    expected = [*messages]
    assistant, tool = messages[2].contents, messages[3].contents
    expected[2] = AssistantMessage(
        [*assistant[:3], ToolCallContent("toolu_1", "read_file", arguments='{"path": "a.txt"}'), *assistant[4:]]  # type: ignore[list-item]
    )
    expected[3] = ToolMessage([ToolResultContent("toolu_1", "hello", name="read_file"), tool[1]])  # type: ignore[list-item]
    # A user message that starts with a tool result reads back as a tool message and a user message.
    expected[-1:] = [ToolMessage([ToolResultContent("toolu_1", "late", name="read_file")]), UserMessage.text("x")]
    assert shape(back) == shape(expected)
    assert back[2].provenance == Provenance(PROVIDER, API)  # type: ignore[union-attr]


def test_tool_results_then_user_text_merge_into_one_user_turn_and_split_back() -> None:
    messages: list[BaseMessage] = [
        UserMessage.text("go"),
        AssistantMessage([ToolCallContent("t1", "f", {})], provenance=ANTHROPIC),
        ToolMessage([ToolResultContent("t1", "ok", name="f")]),
        UserMessage.text("and?"),
        AssistantMessage.text("a"),
        AssistantMessage.text("b"),
    ]
    payload = check_request(to_anthropic(messages, report=ConversionReport()))
    assert payload["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "text", "text": "and?"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    back = from_anthropic(payload)
    assert shape(back[:4]) == shape(messages[:4])
    # Consecutive assistant messages are one turn in the format: they read back as one message.
    assert shape(back[4:]) == [(AssistantMessage, (TextContent("a"), TextContent("b")), "")]


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    prompt=_TEXT,
    answer=_TEXT,
    call_id=_TEXT,
    name=st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True),
    args=st.dictionaries(_TEXT, _JSON, max_size=4),
    result=st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    is_error=st.booleans(),
)
def test_round_trip_property(
    prompt: str, answer: str, call_id: str, name: str, args: dict[str, Any], result: str, is_error: bool
) -> None:
    messages: list[BaseMessage] = [
        SystemMessage.text(answer),
        UserMessage.text(prompt),
        AssistantMessage(
            # the readers spell input as json.dumps does (the module docstring says why)
            [TextContent(answer), ToolCallContent(call_id, name, arguments=json.dumps(args, ensure_ascii=False))],
            provenance=ANTHROPIC,
        ),
        ToolMessage([ToolResultContent(call_id, result, name=name, is_error=is_error)]),
    ]
    report = ConversionReport()
    payload = check_request(to_anthropic(messages, report=report))
    assert not report
    for turn in payload["messages"]:
        for block in turn["content"]:
            if block["type"] == "tool_use":
                assert ID_PATTERN.match(block["id"])
                assert block["input"] == args
    assert shape(from_anthropic(payload, id_map=report.id_map)) == shape(messages)


def test_tool_ids_are_rewritten_consistently_and_restored() -> None:
    odd = "call:1/weird id"
    messages: list[BaseMessage] = [
        UserMessage.text("go"),
        AssistantMessage([ToolCallContent(odd, "f", {}), ToolCallContent("ok_id", "g", {}, index=1)]),
        ToolMessage([ToolResultContent(odd, "r", name="f"), ToolResultContent("ok_id", "s", name="g", index=1)]),
    ]
    report = ConversionReport()
    payload = check_request(to_anthropic(messages, report=report))
    use = payload["messages"][1]["content"][0]
    result = payload["messages"][2]["content"][0]
    assert use["id"] == result["tool_use_id"] != odd
    assert ID_PATTERN.match(use["id"])
    assert payload["messages"][1]["content"][1]["id"] == "ok_id"
    assert report.id_map == {use["id"]: odd}
    assert not report  # a rewritten id is not a loss: the map gives it back
    assert shape(from_anthropic(payload, id_map=report.id_map)) == shape(messages)
    plain = from_anthropic(payload)
    assert plain[1].contents[0] == ToolCallContent(use["id"], "f", {})


def test_arguments_are_parsed_and_reserialised_as_the_stream_spells_them() -> None:
    call = ToolCallContent("t1", "f", arguments='{"b": [1, 2],  "a": "\\u00e9", "n": 1e2}')
    payload = to_anthropic([AssistantMessage([call])])
    assert payload["messages"][0]["content"][0]["input"] == {"b": [1, 2], "a": "é", "n": 100.0}
    (back,) = from_anthropic(payload)
    assert back.contents[0] == ToolCallContent("t1", "f", arguments='{"b": [1, 2], "a": "é", "n": 100.0}')
    # Blank arguments are an empty object, nothing lost.
    blank = to_anthropic([AssistantMessage([ToolCallContent("t2", "f", arguments=" ")])])
    assert blank["messages"][0]["content"][0]["input"] == {}


@pytest.mark.parametrize("text", ['{"a": 1', "[1, 2]", '{"x": NaN}', "null"])
def test_arguments_that_are_not_a_json_object_become_empty_and_are_reported(text: str) -> None:
    report = ConversionReport()
    payload = check_request(
        to_anthropic([AssistantMessage([ToolCallContent("t1", "f", arguments=text)])], report=report)
    )
    assert payload["messages"][0]["content"][0]["input"] == {}
    assert losses(report) == [("[0].contents[0].arguments", "tool-call arguments")]
    assert "{} sent instead" in report.losses[0].reason


# --------------------------------------------------------------------------- structure and options


def test_every_system_message_is_hoisted_in_order() -> None:
    messages: list[BaseMessage] = [
        SystemMessage([TextContent("one"), TextContent("two")]),
        UserMessage.text("hi"),
        SystemMessage.text("later"),
        AssistantMessage.text("ok"),
    ]
    report = ConversionReport()
    blocks = check_request(to_anthropic(messages, report=report))
    assert blocks["system"] == [
        {"type": "text", "text": "one"},
        {"type": "text", "text": "two"},
        {"type": "text", "text": "later"},
    ]
    assert [turn["role"] for turn in blocks["messages"]] == ["user", "assistant"]
    # The later system message moved: its place in the conversation is reported (issue 16, bug 6).
    assert losses(report) == [("[2]", "the system message's place in the conversation")]
    text = check_request(to_anthropic(messages, system_as="string", report=ConversionReport()))
    assert text["system"] == "onetwo\n\nlater"  # blocks joined as text_content() does, messages by a blank line
    # Read back, the system prompt is one message, first.
    assert shape(from_anthropic(blocks))[0] == (
        SystemMessage,
        (TextContent("one"), TextContent("two"), TextContent("later")),
        "",
    )
    assert "system" not in to_anthropic([UserMessage.text("hi")])
    with pytest.raises(ValidationError):
        to_anthropic(messages, system_as="xml")  # type: ignore[arg-type]


def test_system_entries_inside_messages_are_read_in_place() -> None:
    payload = {
        "system": [],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "Be brief from now on."}]},
            {"role": "assistant", "content": "ok"},
        ],
    }
    check_request(payload)
    assert [type(m) for m in from_anthropic(payload)] == [UserMessage, SystemMessage, AssistantMessage]
    assert from_anthropic({"system": "", "messages": []}) == []


def test_session_messages_are_projected_or_refused() -> None:
    compaction = CompactionSummaryMessage("Earlier: greetings.", 10)
    payload = to_anthropic([compaction, UserMessage.text("next")])
    assert payload["messages"][0]["role"] == "user"
    assert "<summary>\nEarlier: greetings.\n</summary>" in payload["messages"][0]["content"][0]["text"]
    assert payload["messages"][0]["content"][1] == {"type": "text", "text": "next"}
    with pytest.raises(ValidationError) as info:
        to_anthropic([compaction], session_messages="refuse")
    assert violations(info) == {"[0]": "session_message"}


def test_a_single_message_is_refused() -> None:
    with pytest.raises(ValidationError):
        to_anthropic(UserMessage.text("hi"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- losses, strict mode, warnings


def test_thinking_replays_only_to_its_own_api_and_model() -> None:
    def thinking_of(provenance: Provenance | None, model: str | None) -> tuple[list[dict[str, Any]], list[str]]:
        message = AssistantMessage(
            [ThinkingContent("hmm", "sig"), RedactedThinkingContent("enc"), TextContent("hi")], provenance=provenance
        )
        report = ConversionReport()
        payload = check_request(to_anthropic([message], report=report, model=model))
        return payload["messages"][0]["content"], [loss.what for loss in report.losses]

    kept = [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "redacted_thinking", "data": "enc"},
        {"type": "text", "text": "hi"},
    ]
    assert thinking_of(ANTHROPIC, None) == (kept, [])
    assert thinking_of(ANTHROPIC, "claude-a") == (kept, [])
    dropped = ([{"type": "text", "text": "hi"}], ["thinking", "redacted thinking"])
    assert thinking_of(ANTHROPIC, "claude-b") == dropped
    assert thinking_of(None, None) == dropped
    assert thinking_of(Provenance("google", "google-generative-ai", "gemini"), None) == dropped
    # Replayable but unsigned: never sent unsigned.
    report = ConversionReport()
    unsigned = to_anthropic(
        [AssistantMessage([ThinkingContent("hmm"), TextContent("x")], provenance=ANTHROPIC)], report=report
    )
    assert unsigned["messages"][0]["content"] == [{"type": "text", "text": "x"}]
    assert losses(report) == [("[0].contents[0]", "thinking")]
    assert "no signature" in report.losses[0].reason


def test_everything_the_format_cannot_hold_is_reported_with_its_path() -> None:
    messages: list[BaseMessage] = [
        SystemMessage([TextContent("sys", signature="g-sig"), TextContent("")], name="policy"),
        UserMessage(
            [
                TextContent(""),
                ImageContent(PNG, detail="high"),
                ImageContent(bmp_bytes()),
                ImageContent.from_url("https://example.com/cat.jpg", media_type="image/png"),
                ImageContent.from_file_id("file_1", media_type="image/png"),
                AudioContent(WAV),
                DocumentContent(PDF, filename="a.pdf"),
                DocumentContent.from_text("# hi", media_type="text/markdown"),
                DocumentContent(b"\x00\x01", media_type="application/octet-stream"),
                DocumentContent.from_url("https://example.com/notes.txt"),
                DocumentContent.from_file_id("file_2", media_type="application/pdf"),
                ProviderContent.from_block("openai", {"type": "input_file", "file_id": "f"}),
                DocumentContent.from_url("https://example.com/a.pdf", media_type="application/pdf; v=1"),
            ],
            name="alice",
        ),
        AssistantMessage(
            [
                ThinkingContent("other", "sig"),
                ToolCallContent("t1", "f", {}, kind="read", signature="ts", server_name="mcp", index=3),
            ],
            provenance=Provenance("openai", "openai-responses", "gpt"),
        ),
        ToolMessage(
            [
                ToolResultContent("t1", [TextContent("a"), AudioContent(WAV)], name="g", index=2, metadata={"k": 1}),
            ]
        ),
        AssistantMessage([], error="upstream timeout", stop_reason="error"),
    ]
    report = ConversionReport()
    payload = check_request(to_anthropic(messages, report=report))
    assert losses(report) == [
        ("[0].name", "participant name 'policy'"),
        ("[0].contents[0].signature", "text signature"),
        ("[0].contents[1]", "empty text block"),
        ("[1].name", "participant name 'alice'"),
        ("[1].contents[0]", "empty text block"),
        ("[1].contents[1].detail", "image detail 'high'"),
        ("[1].contents[2]", "image (image/bmp)"),
        ("[1].contents[3].media_type", "media type 'image/png'"),
        ("[1].contents[4].media_type", "media type 'image/png'"),
        ("[1].contents[5]", "audio"),
        ("[1].contents[6].filename", "file name 'a.pdf'"),
        ("[1].contents[7].media_type", "media type 'text/markdown'"),
        ("[1].contents[8]", "document (application/octet-stream)"),
        ("[1].contents[9]", "document by URL (text/plain)"),
        ("[1].contents[10].media_type", "media type 'application/pdf'"),
        ("[1].contents[11]", "openai block 'input_file'"),
        ("[1].contents[12].media_type", "media type 'application/pdf; v=1'"),
        ("[2].contents[0]", "thinking"),
        ("[2].contents[1].kind", "tool kind 'read'"),
        ("[2].contents[1].signature", "tool-call signature"),
        ("[2].contents[1].server_name", "server name 'mcp'"),
        ("[2].contents[1].index", "index 3"),
        ("[3].contents[0].content[1]", "audio"),
        ("[3].contents[0].name", "tool name 'g'"),
        ("[3].contents[0].index", "index 2"),
        ("[4]", "empty assistant message"),
    ]
    # What is kept is still written; metadata, terminate, usage and provenance are never reported.
    assert payload["system"] == [{"type": "text", "text": "sys"}]
    user = payload["messages"][0]["content"]
    assert [block["type"] for block in user] == ["image", "image", "image", *["document"] * 4]
    assert user[4]["source"] == {"type": "text", "media_type": "text/plain", "data": "# hi"}
    assert payload["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]


def test_strict_mode_raises_conversion_error() -> None:
    with pytest.raises(ConversionError) as info:
        to_anthropic([UserMessage([TextContent("x"), AudioContent(WAV)])], strict=True)
    assert [(loss.path, loss.what) for loss in info.value.losses] == [("[0].contents[1]", "audio")]
    assert info.value.target == "Anthropic Messages"
    # Nothing lost: strict mode passes.
    assert to_anthropic([UserMessage.text("x")], strict=True)["messages"][0]["role"] == "user"


def test_a_loss_warns_when_no_report_is_given() -> None:
    with pytest.warns(ConversionWarning, match=r"Anthropic Messages: 1 item\(s\) dropped"):
        payload = to_anthropic([UserMessage([TextContent("x"), AudioContent(WAV)])])
    assert payload["messages"] == [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    with pytest.warns(ConversionWarning):
        to_anthropic_response(AssistantMessage.text("x"))  # usage unknown: written as 0


def test_anthropic_provider_blocks_go_back_verbatim() -> None:
    block = {"type": "search_result", "source": "https://kb", "title": "T", "content": [{"type": "text", "text": "c"}]}
    payload = {"messages": [{"role": "user", "content": [block, {"type": "text", "text": "q"}]}]}
    with pytest.raises(ValidationError) as info:
        from_anthropic(payload, pass_through_unknown=False)
    assert violations(info) == {"messages[0].content[0].type": "anthropic.unknown_type"}
    (message,) = from_anthropic(payload)  # kept by default
    assert message.contents[0] == ProviderContent.from_block(PROVIDER, block)
    assert check_request(to_anthropic([message])) == payload


# --------------------------------------------------------------------------- bad input


def test_bad_payload_reports_every_problem_with_its_path() -> None:
    payload = {
        "system": 5,
        "messages": [
            {"role": "bot", "content": "hi"},
            {
                "role": "user",
                "content": [
                    {"type": "video", "url": "x"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": PNG_B64}},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "!!"}},
                    {"type": "image", "source": {"type": "url", "url": "not a url"}},
                    {"type": "document", "source": {"type": "base64", "media_type": "text/plain", "data": "eA=="}},
                    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "search_result"}]},
                    {"type": "tool_result", "tool_use_id": 7, "is_error": "yes"},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}, {"type": "text"}]},
            {"role": "user", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}]},
            {"role": "assistant", "content": []},
            "not a message",
            {"role": "user"},
        ],
    }
    with pytest.raises(ValidationError) as info:
        from_anthropic(payload)
    assert violations(info) == {
        "system": "anthropic.type",
        "messages[0].role": "anthropic.enum",
        "messages[1].content[1].source.media_type": "anthropic.enum",
        "messages[1].content[2].source.data": "anthropic.base64",
        "messages[1].content[3].source.url": "string.uri",
        "messages[1].content[4].source.media_type": "anthropic.enum",
        "messages[1].content[6].tool_use_id": "anthropic.type",
        "messages[1].content[6].is_error": "anthropic.type",
        "messages[2].content[0].input": "anthropic.required",
        "messages[2].content[1].text": "anthropic.required",
        "messages[3].content[0].type": "anthropic.unsupported",
        "messages[4].content": "anthropic.min_items",
        "messages[5]": "anthropic.type",
        "messages[6].content": "anthropic.required",
    }


def test_a_plain_messages_list_gives_paths_from_the_list() -> None:
    with pytest.raises(ValidationError) as info:
        from_anthropic([{"role": "user", "content": [{"type": "text", "text": 3}]}])
    assert violations(info) == {"[0].content[0].text": "anthropic.type"}
    with pytest.raises(ValidationError) as info:
        from_anthropic({"system": "x"})
    assert violations(info) == {"messages": "anthropic.required"}
    with pytest.raises(ValidationError) as info:
        from_anthropic({"messages": {"role": "user"}})
    assert violations(info) == {"messages": "anthropic.type"}


def test_unknown_blocks_are_kept_in_every_role_that_holds_provider_blocks() -> None:
    reference = {"type": "tool_reference", "tool_name": "get_weather"}
    payload: dict[str, Any] = {
        "system": [{"type": "text", "text": "hi"}],
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [reference]}]},
            {"role": "user", "content": [{"type": "document", "source": {"type": "content", "content": "c"}}]},
            {
                "role": "system",
                "content": [{"type": "text", "text": "Tools changed."}, {"type": "tool_addition", "tool": reference}],
            },
        ],
    }
    tool, document, system_entry = from_anthropic({"messages": payload["messages"]})
    (result,) = tool.contents
    assert isinstance(result, ToolResultContent)
    assert result.blocks == (ProviderContent.from_block(PROVIDER, reference),)  # tool search's tool_reference
    assert isinstance(document.contents[0], ProviderContent)
    assert document.contents[0].block_type == "document"
    assert isinstance(system_entry, SystemMessage)
    assert system_entry.contents[1] == ProviderContent.from_block(PROVIDER, payload["messages"][2]["content"][1])
    # Written back exactly: the system entry with a tool_addition stays a system entry in `messages`.
    report = ConversionReport()
    written = to_anthropic([tool, system_entry], report=report)
    assert written == {"messages": [payload["messages"][0], payload["messages"][2]]}
    assert not report
    with pytest.raises(ValidationError) as info:
        from_anthropic(payload, pass_through_unknown=False)
    assert violations(info) == {
        "messages[0].content[0].content[0].type": "anthropic.unknown_type",
        "messages[1].content[0].type": "anthropic.unsupported",  # a known type in a form agentmsg cannot type
        "messages[2].content[1].type": "anthropic.unknown_type",
    }


# --------------------------------------------------------------------------- responses


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("end_turn", StopReason.STOP),
        ("stop_sequence", StopReason.STOP),
        ("max_tokens", StopReason.LENGTH),
        ("model_context_window_exceeded", StopReason.LENGTH),
        ("tool_use", StopReason.TOOL_CALLS),
        ("refusal", StopReason.CONTENT_FILTER),
        ("pause_turn", None),
        ("a_future_reason", None),
        (None, None),
    ],
)
def test_response_stop_reasons(raw: str | None, normalised: StopReason | None) -> None:
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-a",
        "content": [{"type": "text", "text": "x"}],
        "stop_reason": raw,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    message = from_anthropic_response(response)
    assert message.stop_reason is normalised
    assert message.stop_reason_raw == (raw or "")
    report = ConversionReport()
    out = to_anthropic_response(message, report=report)
    if raw == "a_future_reason":  # not a value the SDK's StopReason knows: written as null, and reported
        assert out["stop_reason"] is None
        assert losses(report) == [("stop_reason_raw", "stop reason 'a_future_reason'")]
        return
    if raw is not None:  # the SDK's Message requires a stop reason outside streaming
        check_response(out)
    assert out == response
    assert not report


def test_response_with_no_content() -> None:
    base = {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-a", "stop_sequence": None}
    usage = {"input_tokens": 5, "output_tokens": 1}
    done = from_anthropic_response({**base, "content": [], "stop_reason": "end_turn", "usage": usage})
    assert done.contents == (TextContent(""),)  # an agentmsg assistant message needs a block
    assert to_anthropic_response(done)["content"] == []
    cut = from_anthropic_response({**base, "content": [], "stop_reason": "max_tokens", "usage": usage})
    assert cut.contents == ()
    assert check_response(to_anthropic_response(cut))["content"] == []


def test_response_usage_keeps_presence() -> None:
    base = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [{"type": "text", "text": "x"}]}
    bare = from_anthropic_response(
        {**base, "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 4}}
    )
    assert bare.usage == Usage(input_tokens=3, output_tokens=4)
    assert bare.usage is not None
    assert bare.usage.known("cache_read_tokens") is None
    nulls = {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": None, "output_tokens_details": None}
    assert from_anthropic_response({**base, "usage": nulls}).usage == Usage(input_tokens=3, output_tokens=4)
    assert from_anthropic_response(base).usage is None


def test_response_writing_reports_what_the_response_object_cannot_hold() -> None:
    message = AssistantMessage(
        [TextContent("hi"), ToolCallContent("call 1", "f", {"a": 1}), ThinkingContent("t", "s")],
        usage=Usage(output_tokens=7, total_tokens=9, cost=UsageCost(total=0.1)),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="tool_calls",
        error="partial",
        provenance=Provenance("openai", "openai-chat-completions", "gpt-x", "chatcmpl-1"),
        name="bot",
    )
    report = ConversionReport()
    out = check_response(to_anthropic_response(message, report=report))
    assert losses(report) == [
        ("name", "participant name 'bot'"),
        ("provenance", "provenance openai/openai-chat-completions"),
        ("contents[2]", "thinking"),
        ("stop_reason_raw", "stop reason 'tool_calls'"),
        ("error", "error text"),
        ("usage.input_tokens", "unknown input_tokens"),
        ("usage.total_tokens", "total_tokens"),
        ("usage.cost", "cost"),
    ]
    assert out["stop_reason"] == "tool_use"
    assert out["usage"] == {"input_tokens": 0, "output_tokens": 7}
    safe = out["content"][1]["id"]
    assert ID_PATTERN.match(safe)
    assert report.id_map == {safe: "call 1"}
    assert (out["id"], out["model"]) == ("chatcmpl-1", "gpt-x")
    back = from_anthropic_response(out, id_map=report.id_map)
    assert back.contents == (TextContent("hi"), ToolCallContent("call 1", "f", arguments='{"a": 1}'))
    aborted = AssistantMessage([], stop_reason=StopReason.ABORT, usage=Usage(input_tokens=1, output_tokens=0))
    report = ConversionReport()
    assert check_response(to_anthropic_response(aborted, report=report, model="claude-a"))["stop_reason"] is None
    assert losses(report) == [("stop_reason", "stop reason 'abort'")]
    with pytest.raises(ValidationError):
        to_anthropic_response(UserMessage.text("x"))  # type: ignore[arg-type]


def test_bad_response_reports_every_problem() -> None:
    response = {
        "type": "completion",
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t"}],
        "stop_reason": 3,
        "usage": {"input_tokens": "many", "output_tokens": True, "output_tokens_details": {"thinking_tokens": -1}},
    }
    with pytest.raises(ValidationError) as info:
        from_anthropic_response(response)
    assert violations(info) == {
        "type": "anthropic.enum",
        "role": "anthropic.enum",
        "content[0].type": "anthropic.unsupported",
        "stop_reason": "anthropic.type",
        "usage.input_tokens": "anthropic.type",
        "usage.output_tokens": "anthropic.type",
        "usage.reasoning_tokens": "int64.gte",
    }
    with pytest.raises(ValidationError) as info:
        from_anthropic_response({"id": "m"})
    assert violations(info) == {"content": "anthropic.required"}


# --------------------------------------------------------------------------- contract v1.1: hosted tools, citations


def test_golden_hosted_tools_response_reads_every_result_shape_and_goes_back_exactly() -> None:
    response = load_golden("response_hosted_tools.json")
    BetaMessage.model_validate(response)  # MCP connector blocks are beta
    message = from_anthropic_response(response)
    pages, search = message.contents[:2]
    assert isinstance(pages, TextContent)
    assert [(c.source_kind, c.document_index, c.location, c.file_id) for c in pages.citations] == [
        ("document", 0, ("pages", 2, 3), ""),
        ("document", 1, ("blocks", 0, 1), "file_011Doc"),
    ]
    assert isinstance(search, TextContent)
    (found,) = search.citations
    assert (found.source_kind, found.source, found.title, found.search_result_index, found.location) == (
        "search_result",
        "https://kb.example.com/policy",
        "Remote work policy",
        0,
        ("blocks", 0, 1),
    )
    calls, results = message.hosted_tool_calls(), message.hosted_tool_results()
    assert [(c.name, c.kind, c.server) for c in calls] == [
        ("search_issues", HostedToolKind.MCP, "github"),
        ("deploy", HostedToolKind.MCP, "ops"),
        ("code_execution", HostedToolKind.CODE_EXECUTION, ""),
        ("web_fetch", HostedToolKind.WEB_FETCH, ""),
        ("web_search", HostedToolKind.WEB_SEARCH, ""),
        ("text_editor_code_execution", HostedToolKind.CODE_EXECUTION, ""),
        ("tool_search_tool_bm25", HostedToolKind.TOOL_SEARCH, ""),
    ]
    assert calls[0].input_value == {"query": "is:open label:bug", "limit": 5}
    assert [r.call_id for r in results] == [c.id for c in calls]
    issues, denied, code, fetch, searched, created, tools = results
    assert (issues.text, issues.is_error) == ("3 open bugs", False)
    assert (denied.text, denied.is_error, denied.error_code) == ("permission denied", True, None)
    assert code.code_execution is not None
    assert (code.code_execution.encrypted_stdout, code.code_execution.stdout) == ("EqQBCioIAhgCIiQ", "")
    assert (fetch.is_error, fetch.error_code) == (True, "url_not_accessible")
    assert (searched.is_error, searched.error_code) == (True, "max_uses_exceeded")
    assert (created.body, created.blocks, created.original is not None) == (None, (), True)
    assert (tools.error_code, tools.error_message) == ("unavailable", "the tool index is rebuilding")
    assert (message.stop_reason, message.stop_reason_raw, message.stop_sequence) == (
        StopReason.STOP,
        "stop_sequence",
        "END",
    )
    assert message.usage == Usage(
        input_tokens=812,
        output_tokens=240,
        cache_read_tokens=1024,
        cache_write_tokens=2048,
        cache_write_5m_tokens=2048,
        cache_write_1h_tokens=0,
        hosted_tool_requests={"web_search": 1, "web_fetch": 1},
    )
    report = ConversionReport()
    assert to_anthropic_response(message, report=report) == response
    assert not report
    # Other formats read the typed fields; the verbatim blocks go back to this API only.
    assert all(block.original is not None for block in (*calls, *results))


def test_typed_citations_are_projected_and_what_the_format_lacks_is_reported() -> None:
    text = TextContent(
        "Cited.",
        citations=[
            Citation.document(2, title="Atlas", chars=(3, 9), cited_text="capital"),
            Citation.search_result("kb://1", search_result_index=1, blocks=(0, 2), cited_text="row"),
            Citation.web("https://example.com/", "Ex", start_index=0, end_index=6),  # OpenAI's url_citation shape
            Citation.file("file_1", filename="a.md"),
            Citation.document(0, pages=(1, 2), confidence=0.9, start_index=0, end_index=3),
        ],
        logprobs=[TokenLogprob("Cited", -0.1)],
    )
    report = ConversionReport()
    payload = check_request(to_anthropic([AssistantMessage([text])], report=report))
    (written,) = payload["messages"][0]["content"]
    assert written["citations"] == [
        {
            "type": "char_location",
            "cited_text": "capital",
            "document_index": 2,
            "document_title": "Atlas",
            "start_char_index": 3,
            "end_char_index": 9,
        },
        {
            "type": "search_result_location",
            "cited_text": "row",
            "search_result_index": 1,
            "source": "kb://1",
            "title": None,
            "start_block_index": 0,
            "end_block_index": 2,
        },
        {
            "type": "page_location",
            "cited_text": "",
            "document_index": 0,
            "document_title": None,
            "start_page_number": 1,
            "end_page_number": 2,
        },
    ]
    assert losses(report) == [
        ("[0].contents[0].citations[2]", "web citation"),
        ("[0].contents[0].citations[3]", "file citation"),
        ("[0].contents[0].citations[4].start_index", "the cited span"),
        ("[0].contents[0].citations[4].confidence", "citation confidence"),
        ("[0].contents[0].logprobs", "token logprobs"),
    ]
    assert "encrypted_index" in report.losses[0].reason


def test_hosted_tool_blocks_go_back_only_to_anthropic() -> None:
    openai_item = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}}
    call = HostedToolCallContent(
        "ws_1", "web_search", "{}", kind="web_search", original=ProviderContent.from_block("openai", openai_item)
    )
    result = HostedToolResultContent("ws_1", kind="web_search", search_results=[])
    report = ConversionReport()
    payload = to_anthropic([UserMessage.text("q"), AssistantMessage([call, result, TextContent("a")])], report=report)
    assert payload["messages"][1]["content"] == [{"type": "text", "text": "a"}]
    assert losses(report) == [
        ("[1].contents[0]", "hosted tool call web_search"),
        ("[1].contents[1]", "hosted tool result web_search"),
    ]
    assert "ran at openai" in report.losses[0].reason
    assert "no Anthropic original" in report.losses[1].reason


def test_tool_input_text_is_the_same_from_both_readers() -> None:
    # Issue 16, bug 5: the response reader spells input as json.dumps does, which is how the stream's
    # input_json_delta fragments spell it (the stream keeps them verbatim): one call, one text.
    response = check_response(load_golden("response.json"))
    message = from_anthropic_response(response)
    (call,) = message.tool_calls()
    assert call.arguments == json.dumps(response["content"][2]["input"], ensure_ascii=False)
    unicode = from_anthropic_response(
        {**response, "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"city": "Zürich"}}]}
    )
    assert unicode.tool_calls()[0].arguments == '{"city": "Zürich"}'


def test_tool_use_keys_without_a_field_go_back_exactly() -> None:
    # Programmatic tool calling: the API puts `caller` on tool_use blocks (real responses carry
    # {"type": "direct"} on every call); it lives in ToolCallContent.provider_extra.
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_01Code"}
    block = {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}, "caller": caller}
    payload = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [block]}]}
    _, reply = from_anthropic(payload)
    (call,) = reply.contents
    assert isinstance(call, ToolCallContent)
    assert call.arguments == '{"city": "Oslo"}'
    assert call.provider_extra is not None
    assert call.provider_extra.block() == {"type": "tool_use", "caller": caller}
    report = ConversionReport()
    assert to_anthropic([*from_anthropic(payload)], report=report) == payload | {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}, payload["messages"][1]]
    }
    assert not report
    plain = from_anthropic({"messages": [{"role": "assistant", "content": [{**block, "caller": None} | {}]}]})
    assert plain[0].contents[0].provider_extra is not None  # type: ignore[union-attr]
    bare = {k: v for k, v in block.items() if k != "caller"}
    assert (
        from_anthropic({"messages": [{"role": "assistant", "content": [bare]}]})[0].contents[0].provider_extra is None
    )  # type: ignore[union-attr]
    # Another provider's extra keys are reported, not sent.
    foreign = ToolCallContent(
        "c1", "f", {}, provider_extra=ProviderContent.from_block("openai", {"type": "function_call", "namespace": "x"})
    )
    report = ConversionReport()
    out = to_anthropic([AssistantMessage([foreign])], report=report)
    assert out["messages"][0]["content"] == [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]
    assert losses(report) == [("[0].contents[0].provider_extra", "openai tool-call fields")]


# -- response keys no field holds (AssistantMessage.provider_extra)

# Shapes as recorded: pydantic-ai's test_anthropic_code_execution_tool cassette (container), the Vercel AI
# SDK's anthropic-refusal fixture (stop_details), anthropic-compaction (usage.iterations) and
# anthropic-clear-tool-uses (context_management).
RESPONSE_WITH_EXTRAS: dict[str, Any] = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-opus-4-8",
    "content": [{"type": "text", "text": "I cannot help with that."}],
    "stop_reason": "refusal",
    "stop_sequence": None,
    "stop_details": {
        "type": "refusal",
        "category": "cyber",
        "explanation": "This request triggered restrictions on violative cyber content.",
    },
    "container": {"id": "container_011CaNRhtVsGiXZx1CgSETLH", "expires_at": "2026-04-24T11:19:38.758845Z"},
    "context_management": {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1}]},
    "usage": {
        "input_tokens": 682,
        "output_tokens": 1320,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "service_tier": "standard",
        "iterations": [
            {"input_tokens": 60385, "output_tokens": 592, "type": "compaction"},
            {"input_tokens": 682, "output_tokens": 1320, "type": "message"},
        ],
    },
}


def test_response_keys_no_field_holds_are_kept_verbatim_and_written_back() -> None:
    message = from_anthropic_response(RESPONSE_WITH_EXTRAS)
    extra = message.provider_extra
    assert extra is not None
    assert (extra.provider, extra.block_type) == ("anthropic", "message")
    # exactly the keys the typed fields do not hold; service_tier is billing, not message data
    assert extra.block() == {
        "type": "message",
        "stop_details": RESPONSE_WITH_EXTRAS["stop_details"],
        "container": RESPONSE_WITH_EXTRAS["container"],
        "context_management": RESPONSE_WITH_EXTRAS["context_management"],
        "usage": {"iterations": RESPONSE_WITH_EXTRAS["usage"]["iterations"]},
    }
    report = ConversionReport()
    written = to_anthropic_response(message, report=report)
    assert report.losses == []
    assert written["container"] == RESPONSE_WITH_EXTRAS["container"]
    assert written["stop_details"] == RESPONSE_WITH_EXTRAS["stop_details"]
    assert written["context_management"] == RESPONSE_WITH_EXTRAS["context_management"]
    # merged into the usage object the typed fields make, not in place of it
    assert written["usage"]["iterations"] == RESPONSE_WITH_EXTRAS["usage"]["iterations"]
    assert written["usage"]["input_tokens"] == 682
    assert written["usage"]["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}


def test_a_plain_response_has_no_provider_extra() -> None:
    body = {**RESPONSE_WITH_EXTRAS, "stop_details": None, "container": None, "stop_reason": "end_turn"}
    del body["context_management"]
    body["usage"] = {"input_tokens": 3, "output_tokens": 4, "service_tier": "standard", "inference_geo": "us"}
    assert from_anthropic_response(body).provider_extra is None


def test_unknown_usage_subkeys_are_kept_beside_the_typed_ones() -> None:
    body = {
        **RESPONSE_WITH_EXTRAS,
        "usage": {"input_tokens": 1, "output_tokens": 2, "server_tool_use": {"web_search_requests": 1, "region": "eu"}},
    }
    message = from_anthropic_response(body)
    assert message.usage is not None
    assert message.usage.hosted_tool_requests == {"web_search": 1}
    extra = message.provider_extra
    assert extra is not None
    assert extra.block()["usage"] == {"server_tool_use": {"region": "eu"}}
    assert to_anthropic_response(message)["usage"]["server_tool_use"] == {"web_search_requests": 1, "region": "eu"}


def test_another_providers_response_keys_are_reported_not_written() -> None:
    message = AssistantMessage(
        [TextContent("hi")],
        provenance=ANTHROPIC,
        provider_extra=ProviderContent.from_block("openai", {"type": "response", "background": True}),
    )
    report = ConversionReport()
    written = to_anthropic_response(message, report=report)
    assert "background" not in written
    assert "provider_extra" in [loss.path for loss in report.losses]


def test_provider_extra_must_be_provider_content() -> None:
    with pytest.raises(ValidationError, match="provider_extra"):
        AssistantMessage([TextContent("hi")], provider_extra={"type": "message"})  # type: ignore[arg-type]
