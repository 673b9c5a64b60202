"""OpenAI Chat Completions (``agentmsg.providers.openai_chat``): goldens, round trips, losses, bad input, responses.

Golden payloads live in ``tests/golden/openai_chat/*.json``; each names, under
``_source``, the SDK types and API guide sections it follows. Every payload
``to_openai_chat`` writes is validated against the SDK's own
``ChatCompletionMessageParam`` (every lazy part forced), and every response
``to_openai_chat_response`` writes against ``ChatCompletion``.

What the format cannot carry, and the tests therefore leave out of their
comparisons: message ids and timestamps (request messages have none), and an
assistant message's usage / stop reason / provenance in requests (response
data; a refusal alone comes back as CONTENT_FILTER).
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from sdk_check import validate_with

from agentmsg import (
    AgentMessage,
    AssistantMessage,
    AudioContent,
    BaseMessage,
    BranchSummaryMessage,
    Citation,
    CompactionSummaryMessage,
    CustomMessage,
    DocumentContent,
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
    message_from_proto,
)
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.openai_chat import (
    API,
    BLOCK_FORMAT,
    PROVIDER,
    from_openai_chat,
    from_openai_chat_response,
    to_openai_chat,
    to_openai_chat_response,
)
from agentmsg.v1 import message_pb2

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "openai_chat"

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(20)
PDF = b"%PDF-1.4\n%%EOF\n"
BOARDWALK = (
    "https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/"
    "2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"
)


# --------------------------------------------------------------------------- helpers


def load_golden(name: str) -> dict[str, Any]:
    """A golden file with its ``_source`` note checked and stripped."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["sdk"] == "openai 3.52.0"
    assert source["types"]
    assert source["docs"].startswith("https://developers.openai.com/")
    return doc  # type: ignore[no-any-return]


def sdk_messages(payload: list[dict[str, Any]]) -> None:
    """The payload is valid for the SDK's own request types, message by message and as a list."""
    for message in payload:
        validate_with(ChatCompletionMessageParam, message)
    validate_with(list[ChatCompletionMessageParam], payload)


def sdk_response(response: dict[str, Any]) -> None:
    ChatCompletion.model_validate(response)


def write(
    messages: Iterable[BaseMessage], *, check_sdk: bool = True, **options: Any
) -> tuple[list[dict[str, Any]], ConversionReport]:
    """``to_openai_chat`` with a report; the payload checked against the SDK types (parts of a type the SDK
    does not know, passed through verbatim, cannot pass that check: ``check_sdk=False``)."""
    report = ConversionReport()
    payload = to_openai_chat(messages, report=report, **options)
    if check_sdk:
        sdk_messages(payload)
    json.dumps(payload)  # plain JSON, no SDK objects
    return payload, report


def shape(messages: Sequence[AgentMessage]) -> list[tuple[Any, ...]]:
    """What a request can carry: the role, the participant name and the blocks (not ids or timestamps)."""
    return [(type(m).__name__, m.name, m.contents) for m in messages]


def losses(report: ConversionReport) -> list[tuple[str, str]]:
    return [(loss.path, loss.what) for loss in report.losses]


def violations(excinfo: pytest.ExceptionInfo[ValidationError]) -> list[tuple[str, str]]:
    return [(v.field, v.rule_id) for v in excinfo.value.violations]


def drop_documented(response: dict[str, Any]) -> dict[str, Any]:
    """A response without the fields the module docstring lists as dropped on reading."""
    out = json.loads(json.dumps(response))
    for key in ("service_tier", "system_fingerprint"):
        out.pop(key, None)
    message = out["choices"][0]["message"]
    if message.get("annotations") == []:
        del message["annotations"]
    usage = out.get("usage")
    if usage:  # details agentmsg has no field for are kept when not 0 (a zero count equals an absent one)
        for key, typed in (
            ("prompt_tokens_details", {"cached_tokens", "cache_write_tokens"}),
            ("completion_tokens_details", {"reasoning_tokens"}),
        ):
            if key in usage:
                usage[key] = {k: v for k, v in usage[key].items() if k in typed or v not in (0, None)}
    return out  # type: ignore[no-any-return]


def call(call_id: str, name: str, arguments: str, index: int = 0) -> ToolCallContent:
    return ToolCallContent(call_id, name, arguments=arguments, index=index)


# --------------------------------------------------------------------------- golden requests


def _golden_expectations() -> dict[str, tuple[list[BaseMessage], dict[str, Any]]]:
    return {
        "text_conversation.json": (
            [
                SystemMessage.text("Talk like a pirate."),
                UserMessage.text("Are semicolons optional in JavaScript?", name="alice"),
                AssistantMessage.text("Arr, mostly they be optional, matey."),
                UserMessage([TextContent("And in Python?"), TextContent("Keep it short.")]),
            ],
            {"system_role": "developer"},
        ),
        "vision.json": (
            [
                UserMessage(
                    [
                        TextContent("What's in these images?"),
                        ImageContent.from_url(BOARDWALK, detail="high"),
                        ImageContent(PNG, detail="low"),
                        ImageContent.from_url("https://example.com/chart.png"),
                    ]
                )
            ],
            {},
        ),
        "audio_input.json": ([UserMessage([TextContent("What is in this recording?"), AudioContent(WAV)])], {}),
        "file_input.json": (
            [
                UserMessage(
                    [
                        DocumentContent(PDF, filename="draconomicon.pdf"),
                        DocumentContent.from_file_id("file-6F2ksmvXxt4VdoqmHRw6kL"),
                        TextContent("What is the first dragon in the book?"),
                    ]
                )
            ],
            {},
        ),
        "tool_calls.json": (
            [
                UserMessage.text("What's the weather like in Paris today, and in Bogotá?"),
                AssistantMessage(
                    [
                        call("call_12345xyz", "get_weather", '{"location":"Paris, France"}'),
                        call(
                            "call_67890abc",
                            "get_weather",
                            '{"location": "Bogotá, Colombia", "units": "celsius"}',
                            index=1,
                        ),
                    ]
                ),
                ToolMessage(
                    [
                        ToolResultContent("call_12345xyz", "14°C, partly cloudy", name="get_weather"),
                        ToolResultContent(
                            "call_67890abc",
                            [TextContent("18°C"), TextContent(", light rain")],
                            name="get_weather",
                            index=1,
                        ),
                    ]
                ),
                AssistantMessage.text("Paris: 14°C and partly cloudy. Bogotá: 18°C with light rain."),
            ],
            {},
        ),
        "refusal_history.json": (
            [
                SystemMessage.text("Extract the event as JSON."),
                UserMessage.text("How do I pick a lock?"),
                AssistantMessage.text(
                    "I'm sorry, I cannot assist with that request.", stop_reason=StopReason.CONTENT_FILTER
                ),
                UserMessage.text("Fine. Alice and Bob meet on Friday."),
            ],
            {},
        ),
    }


@pytest.mark.parametrize("name", sorted(_golden_expectations()))
def test_golden_request_reads_and_writes_exactly(name: str) -> None:
    expected, options = _golden_expectations()[name]
    golden = load_golden(name)["messages"]
    sdk_messages(golden)
    read = from_openai_chat(golden)
    assert shape(read) == shape(expected)
    payload, report = write(expected, **options)
    assert payload == golden
    assert report.losses == []
    # And a whole request body is accepted too.
    assert shape(from_openai_chat({"model": "gpt-4.1", "messages": golden})) == shape(expected)


def test_golden_refusal_reads_as_content_filter() -> None:
    read = from_openai_chat(load_golden("refusal_history.json")["messages"])
    assistant = read[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.stop_reason is StopReason.CONTENT_FILTER
    assert assistant.stop_reason_raw == ""
    assert [m.stop_reason for m in read if isinstance(m, AssistantMessage)] == [StopReason.CONTENT_FILTER]


def test_golden_tool_results_take_name_and_index_from_their_calls() -> None:
    read = from_openai_chat(load_golden("tool_calls.json")["messages"])
    results = read[2]
    assert isinstance(results, ToolMessage)
    assert [(r.id, r.name, r.index) for r in results.results()] == [
        ("call_12345xyz", "get_weather", 0),
        ("call_67890abc", "get_weather", 1),
    ]


# --------------------------------------------------------------------------- golden responses


def _response_expectations() -> dict[str, AssistantMessage]:
    return {
        "response_text.json": AssistantMessage.text(
            "Hello! How can I assist you today?",
            usage=Usage(
                input_tokens=19,
                output_tokens=10,
                cache_read_tokens=0,
                reasoning_tokens=0,
                total_tokens=29,
            ),
            stop_reason=StopReason.STOP,
            stop_reason_raw="stop",
            provenance=Provenance(PROVIDER, API, "gpt-4.1-2025-04-14", "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"),
            timestamp=1741569952,
        ),
        "response_cached_reasoning.json": AssistantMessage.text(
            "The answer is 42.",
            usage=Usage(
                input_tokens=22,
                output_tokens=300,
                cache_read_tokens=1920,
                cache_write_tokens=64,
                reasoning_tokens=192,
                total_tokens=2306,
            ),
            stop_reason=StopReason.LENGTH,
            stop_reason_raw="length",
            provenance=Provenance(PROVIDER, API, "o4-mini-2025-04-16", "chatcmpl-cache-1"),
            timestamp=1750000000,
        ),
        "response_tool_calls.json": AssistantMessage(
            [
                call("call_12345xyz", "get_weather", '{"location":"Paris, France"}'),
                call("call_67890abc", "get_weather", '{"location":"Bogotá, Colombia"}', index=1),
            ],
            usage=Usage(input_tokens=82, output_tokens=51, total_tokens=133),
            stop_reason=StopReason.TOOL_CALLS,
            stop_reason_raw="tool_calls",
            provenance=Provenance(PROVIDER, API, "gpt-4.1-2025-04-14", "chatcmpl-tools-1"),
            timestamp=1750000100,
        ),
        "response_web_search.json": AssistantMessage(
            [
                TextContent(
                    "Spain won Euro 2024 [uefa.com].",
                    citations=[
                        Citation.web(
                            "https://www.uefa.com/euro2024/news/final/?utm_source=openai",
                            "Spain win EURO 2024",
                            start_index=20,
                            end_index=30,
                            original=ProviderContent(
                                BLOCK_FORMAT,
                                "url_citation",
                                '{"type":"url_citation","url_citation":{"end_index":30,"start_index":20,'
                                '"title":"Spain win EURO 2024","url":"https://www.uefa.com/euro2024/news/final/?utm_source=openai"}}',
                            ),
                        )
                    ],
                    logprobs=[
                        TokenLogprob(
                            "Spain",
                            -0.0001,
                            bytes=b"Spain",
                            top_logprobs=[TokenLogprob("Spain", -0.0001, bytes=b"Spain")],
                        ),
                        TokenLogprob(
                            " won", -0.02, bytes=b" won", top_logprobs=[TokenLogprob(" won", -0.02, bytes=b" won")]
                        ),
                    ],
                ),
                ProviderContent(BLOCK_FORMAT, "response.usage", '{"prompt_tokens_details":{"text_tokens":14}}'),
            ],
            usage=Usage(input_tokens=14, output_tokens=12, cache_read_tokens=0, reasoning_tokens=0, total_tokens=26),
            stop_reason=StopReason.STOP,
            stop_reason_raw="stop",
            provenance=Provenance(PROVIDER, API, "gpt-4o-search-preview-2025-03-11", "chatcmpl-search-1"),
            timestamp=1750000300,
        ),
        "response_refusal.json": AssistantMessage.text(
            "I'm sorry, I cannot assist with that request.",
            usage=Usage(input_tokens=51, output_tokens=11, total_tokens=62),
            stop_reason=StopReason.CONTENT_FILTER,
            stop_reason_raw="stop",
            provenance=Provenance(PROVIDER, API, "gpt-4o-2024-08-06", "chatcmpl-refusal-1"),
            timestamp=1750000200,
        ),
    }


def _same_response(got: AssistantMessage, expected: AssistantMessage) -> None:
    assert got.contents == expected.contents
    assert got.usage == expected.usage
    assert (got.stop_reason, got.stop_reason_raw) == (expected.stop_reason, expected.stop_reason_raw)
    assert got.provenance == expected.provenance
    assert got.timestamp == expected.timestamp


@pytest.mark.parametrize("name", sorted(_response_expectations()))
def test_golden_response_reads_and_round_trips(name: str) -> None:
    golden = load_golden(name)["response"]
    sdk_response(golden)
    expected = _response_expectations()[name]
    got = from_openai_chat_response(golden)
    _same_response(got, expected)
    report = ConversionReport()
    written = to_openai_chat_response(got, report=report)
    sdk_response(written)
    assert report.losses == []
    assert written == drop_documented(golden)
    _same_response(from_openai_chat_response(written), expected)


# --------------------------------------------------------------------------- the round-trip law


def holdable_conversation() -> list[BaseMessage]:
    """Everything the format can carry, each once."""
    custom_call = ProviderContent.from_block(
        PROVIDER, {"id": "call_custom_1", "type": "custom", "custom": {"name": "grammar", "input": "x = 1"}}
    )
    custom_call = ProviderContent(BLOCK_FORMAT, "tool_calls.custom", custom_call.json)
    return [
        SystemMessage([TextContent("Rule one."), TextContent("Rule two.")], name="ops"),
        UserMessage(
            [
                TextContent("Look, listen and read:"),
                ImageContent(PNG, detail="auto"),
                ImageContent(PNG, media_type="image/png"),
                ImageContent.from_url("https://example.test/photo.jpeg", detail="low"),
                ImageContent.from_url("https://example.test/no-extension"),
                AudioContent(WAV),
                AudioContent(MP3, media_type="audio/mpeg"),
                DocumentContent(PDF, filename="spec.pdf"),
                DocumentContent.from_text("plain words", filename="notes.txt"),
                DocumentContent.from_file_id("file-abc", filename="report.pdf"),
                DocumentContent.from_file_id("file-def"),
            ],
            name="bob",
        ),
        AssistantMessage(
            [
                TextContent(""),
                TextContent("Two calls."),
                call("call_1", "lookup", '{"q": "cat", "n": 10}'),
                call("call_2", "lookup", "{}", index=1),
                custom_call,
            ],
            name="helper",
        ),
        ToolMessage(
            [
                ToolResultContent("call_1", "a cat", name="lookup"),
                ToolResultContent("call_2", [TextContent("line 1"), TextContent("")], name="lookup", index=1),
                ToolResultContent("call_custom_1", "", name="grammar", index=2),
            ]
        ),
        AssistantMessage.text("I won't do that.", stop_reason=StopReason.CONTENT_FILTER),
        UserMessage([ToolResultContent("call_x", [TextContent("")])]),
        AssistantMessage.text("ok"),
        ToolMessage([ToolResultContent("unknown_call", "late")]),
    ]


def test_round_trip_law_for_everything_the_format_holds() -> None:
    messages = holdable_conversation()
    payload, report = write(messages)
    assert report.losses == []
    back = from_openai_chat(payload, pass_through_unknown=True)
    # A user message holding only tool results comes back as a tool message: the format has no
    # tool results in user messages (nothing is lost, the role changes).
    expected = [*messages[:5], ToolMessage(messages[5].contents), *messages[6:]]  # type: ignore[list-item]
    assert shape(back) == shape(expected)
    refusal = back[4]
    assert isinstance(refusal, AssistantMessage)
    assert refusal.stop_reason is StopReason.CONTENT_FILTER
    assert payload[6] == {"role": "assistant", "refusal": "I won't do that."}
    # Writing the result again gives the same payload.
    assert write(back)[0] == payload


def test_round_trip_with_one_tool_message_per_result() -> None:
    messages: list[BaseMessage] = [
        AssistantMessage([call("a", "f", "{}"), call("b", "f", "{}", index=1)]),
        ToolMessage([ToolResultContent("a", "1", name="f")]),
        ToolMessage([ToolResultContent("b", "2", name="f", index=1)]),
    ]
    payload, report = write(messages)
    assert report.losses == []
    assert shape(from_openai_chat(payload, merge_tool_messages=False)) == shape(messages)
    merged = from_openai_chat(payload)
    results = [*messages[1].contents, *messages[2].contents]
    assert shape(merged) == shape([messages[0], ToolMessage(results)])  # type: ignore[arg-type]


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,20}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    system=_TEXT,
    user=st.lists(_TEXT, min_size=1, max_size=3),
    answer=st.lists(_TEXT, max_size=2),
    calls=st.lists(st.tuples(_NAME, _TEXT, _TEXT), max_size=3, unique_by=lambda c: c[0]),
)
def test_round_trip_property(system: str, user: list[str], answer: list[str], calls: list[Any]) -> None:
    """Random text and argument text (valid JSON or not) survive a request round trip verbatim."""
    tool_calls = [call(f"id_{name}", name, arguments, index=k) for k, (name, arguments, _) in enumerate(calls)]
    messages: list[BaseMessage] = [
        SystemMessage.text(system),
        UserMessage([TextContent(text) for text in user]),
        AssistantMessage([*(TextContent(text) for text in answer), *tool_calls] or [TextContent("")]),
    ]
    if calls:
        messages.append(
            ToolMessage(
                [ToolResultContent(f"id_{name}", out, name=name, index=k) for k, (name, _, out) in enumerate(calls)]
            )
        )
    payload, report = write(messages)
    assert report.losses == []
    assert shape(from_openai_chat(payload, allow_invalid_arguments=True)) == shape(messages)


# --------------------------------------------------------------------------- writing: shapes


def test_user_tool_results_become_tool_messages_in_order() -> None:
    message = UserMessage(
        [ToolResultContent("c1", "one"), TextContent("and"), ToolResultContent("c2", "two"), TextContent("end")],
        name="u",
    )
    payload, report = write([message])
    assert payload == [
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "user", "content": "and", "name": "u"},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "user", "content": "end", "name": "u"},
    ]
    assert report.losses == []


def test_tool_result_content_forms() -> None:
    payload, _ = write(
        [
            ToolMessage(
                [
                    ToolResultContent("a", ""),
                    ToolResultContent("b", [TextContent("")]),
                    ToolResultContent("c", "text"),
                    ToolResultContent("d", [TextContent("x"), TextContent("y")]),
                ]
            )
        ]
    )
    assert [m["content"] for m in payload] == [
        "",
        [{"type": "text", "text": ""}],
        "text",
        [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
    ]


def test_assistant_shapes() -> None:
    payload, report = write(
        [
            AssistantMessage(stop_reason=StopReason.LENGTH),
            AssistantMessage([TextContent("a"), TextContent("b")], name="bot"),
            AssistantMessage([call("c", "f", '{"a":1}')]),
        ]
    )
    assert payload == [
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "name": "bot"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
        },
    ]
    assert report.losses == []


def test_refusal_rule_uses_the_raw_stop_reason() -> None:
    refusal = AssistantMessage(
        [TextContent("Part one."), TextContent("No.")], stop_reason="content_filter", stop_reason_raw="refusal"
    )
    filtered = AssistantMessage.text("Cut he", stop_reason="content_filter", stop_reason_raw="content_filter")
    payload, report = write([refusal, filtered])
    assert payload == [
        {"role": "assistant", "content": "Part one.", "refusal": "No."},
        {"role": "assistant", "content": "Cut he"},
    ]
    assert report.losses == []


def test_response_data_and_app_data_are_not_reported() -> None:
    messages: list[BaseMessage] = [
        AssistantMessage(
            [ToolCallContent("c", "f", {"a": 1}, metadata={"trace": "t1"})],
            usage=Usage(input_tokens=1, output_tokens=2, cost=UsageCost(total=0.1)),
            stop_reason="tool_calls",
            stop_reason_raw="tool_use",
            error="",
            provenance=Provenance("anthropic", "anthropic-messages", "claude", "msg_1"),
        ),
        ToolMessage(
            [ToolResultContent("c", "ok", metadata={"rows": 1}, terminate=True, terminate_message="stop here")]
        ),
    ]
    payload, report = write(messages)
    assert report.losses == []
    assert payload[1] == {"role": "tool", "tool_call_id": "c", "content": "ok"}
    assert payload[0]["tool_calls"][0]["function"]["arguments"] == '{"a":1}'


def test_developer_role_and_bad_system_role() -> None:
    payload, _ = write([SystemMessage.text("be brief", name="policy")], system_role="developer")
    assert payload == [{"role": "developer", "content": "be brief", "name": "policy"}]
    with pytest.raises(ValidationError) as info:
        to_openai_chat([SystemMessage.text("x")], system_role="assistant")  # type: ignore[arg-type]
    assert violations(info) == [("system_role", "enum")]


def test_inline_document_without_filename_gets_one() -> None:
    payload, report = write(
        [
            UserMessage(
                [
                    DocumentContent(PDF),
                    DocumentContent.from_text("hi"),
                    DocumentContent(b"{}", media_type="application/x-nope"),
                ]
            )
        ]
    )
    files = [part["file"]["filename"] for part in payload[0]["content"]]
    assert files == ["document.pdf", "document.txt", "document"]
    assert report.losses == []
    back = from_openai_chat(payload)[0].contents
    assert [block.filename for block in back if isinstance(block, DocumentContent)] == files


def test_session_messages_are_projected_or_refused() -> None:
    messages: list[BaseMessage] = [
        CompactionSummaryMessage("Earlier: hello."),
        BranchSummaryMessage("Went left."),
        CustomMessage("note", [TextContent("hi"), ImageContent(PNG)]),
    ]
    payload, report = write(messages)
    assert [m["role"] for m in payload] == ["user", "user", "user"]
    assert "<summary>\nEarlier: hello.\n</summary>" in payload[0]["content"]
    assert payload[2]["content"][0] == {"type": "text", "text": '<custom type="note">\nhi\n</custom>'}
    assert payload[2]["content"][1]["type"] == "image_url"
    assert report.losses == []
    with pytest.raises(ValidationError) as info:
        to_openai_chat(messages, session_messages="refuse")
    assert violations(info) == [("[0]", "session_message")]


def test_assistant_audio_goes_back_by_id_in_requests() -> None:
    audio = ProviderContent(
        BLOCK_FORMAT, "message.audio", json.dumps({"audio": {"id": "audio_1", "data": "AAAA", "transcript": "hi"}})
    )
    payload, report = write([AssistantMessage([TextContent("hi"), audio])])
    assert payload == [{"role": "assistant", "content": "hi", "audio": {"id": "audio_1"}}]
    assert report.losses == []


# --------------------------------------------------------------------------- writing: losses


def test_every_loss_is_reported_with_its_input_path() -> None:
    unknown = message_from_proto(message_pb2.Message(id="z"))
    messages: list[BaseMessage] = [
        SystemMessage([TextContent("sys", signature="g-sig")]),
        UserMessage(
            [
                AudioContent.from_url("https://example.test/a.mp3"),
                AudioContent(b"OggS" + bytes(20)),
                AudioContent(WAV, media_type="audio/x-wav"),
                ImageContent.from_file_id("file-img"),
                ImageContent(PNG, detail="medium"),
                ImageContent.from_url("https://example.test/img", media_type="image/webp"),
                DocumentContent.from_url("https://example.test/d.pdf"),
                DocumentContent(PDF, filename="t.pdf", title="Title"),
                DocumentContent.from_file_id("file-doc", media_type="application/pdf"),
                DocumentContent.from_text("x", media_type="text/plain; charset=utf-8", filename="x.txt"),
                ProviderContent.from_block("anthropic", {"type": "search_result", "x": 1}),
                ProviderContent(BLOCK_FORMAT, "tool_calls.custom", '{"id":"c9","type":"custom"}'),
            ]
        ),
        AssistantMessage(
            [
                ThinkingContent("hmm", "sig"),
                RedactedThinkingContent("opaque"),
                ProviderContent(BLOCK_FORMAT, "message.annotations", '{"annotations":[{"type":"url_citation"}]}'),
                ToolCallContent("c1", "f", {}, kind="read", server_name="mcp1", signature="s", index=3),
                TextContent("after the call"),
            ]
        ),
        ToolMessage(
            [ToolResultContent("c1", [TextContent("t"), ImageContent(PNG)], is_error=True, name="g", index=2)],
            name="runner",
        ),
        UserMessage([ToolResultContent("c1", "again", name="f")], name="carol"),
        unknown,
    ]
    report = ConversionReport()
    payload = to_openai_chat(messages, report=report)
    sdk_messages(payload)
    assert losses(report) == [
        ("[0].contents[0]", "text signature"),
        ("[1].contents[0]", "audio by URL or file id"),
        ("[1].contents[1]", "audio (audio/ogg)"),
        ("[1].contents[2]", "media type 'audio/x-wav'"),
        ("[1].contents[3]", "image by file id"),
        ("[1].contents[4]", "image detail 'medium'"),
        ("[1].contents[5]", "image media type 'image/webp'"),
        ("[1].contents[6]", "document by URL"),
        ("[1].contents[7]", "document title"),
        ("[1].contents[8]", "media type 'application/pdf'"),
        ("[1].contents[9]", "media type 'text/plain; charset=utf-8'"),
        ("[1].contents[10]", "anthropic block 'search_result'"),
        ("[1].contents[11]", "openai-chat-completions block 'tool_calls.custom'"),
        ("[2].contents[0]", "thinking"),
        ("[2].contents[1]", "redacted thinking"),
        ("[2].contents[3]", "tool kind 'read'"),
        ("[2].contents[3]", "server name"),
        ("[2].contents[3]", "tool-call signature"),
        ("[2].contents[3]", "index 3"),
        ("[2].contents[4]", "block order"),
        ("[2].contents[2]", "assistant field 'annotations'"),
        ("[3].name", "name"),
        ("[3].contents[0].content[1]", "image in a tool result"),
        ("[3].contents[0]", "error flag"),
        ("[3].contents[0]", "name 'g'"),
        ("[3].contents[0]", "index 2"),
        ("[4].name", "name"),
        ("[5]", "message of an unknown role"),
    ]
    # What could be kept still went out.
    user = payload[1]["content"]
    assert user[0] == {"type": "input_audio", "input_audio": {"data": base64.b64encode(WAV).decode(), "format": "wav"}}
    assert user[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
    assert user[5]["file"]["file_data"].startswith("data:text/plain;base64,")
    assert payload[2] == {
        "role": "assistant",
        "content": "after the call",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert payload[3] == {"role": "tool", "tool_call_id": "c1", "content": "t"}
    assert len(payload) == 5


def test_strict_raises_and_no_report_warns() -> None:
    lossy = [AssistantMessage([ThinkingContent("hmm", "sig"), TextContent("hi")])]
    with pytest.raises(ConversionError) as info:
        to_openai_chat(lossy, strict=True)
    assert info.value.target == "OpenAI Chat Completions"
    assert [loss.path for loss in info.value.losses] == ["[0].contents[0]"]
    with pytest.warns(ConversionWarning, match="1 item"):
        payload = to_openai_chat(lossy)
    assert payload == [{"role": "assistant", "content": "hi"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_openai_chat([UserMessage.text("fine")])  # nothing lost: nothing said
        to_openai_chat([UserMessage.text("fine")], strict=True)


def test_refusal_followed_by_a_part_reports_the_order() -> None:
    part = ProviderContent.from_block(BLOCK_FORMAT, {"type": "future_part"})
    message = AssistantMessage([TextContent("No."), part], stop_reason="content_filter")
    payload, report = write([message], check_sdk=False)
    assert payload == [{"role": "assistant", "content": [{"type": "future_part"}], "refusal": "No."}]
    assert losses(report) == [("[0].contents[1]", "block order")]


# --------------------------------------------------------------------------- reading: bad input


def test_reading_reports_every_problem_with_its_path() -> None:
    payload = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "not a url", "detail": "huge"}}]},
        {"role": "wizard", "content": "hi"},
        "not an object",
        {"content": "no role"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}},
                {"id": "", "type": "function", "function": {"name": "", "arguments": 3}},
                {"id": "c3", "type": "custom", "custom": {"name": "g", "input": "x"}},
                {"id": "c4", "type": "mystery"},
            ],
        },
        {"role": "tool", "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]},
        {"role": "user", "content": [{"type": "future_part"}, {"text": "no type"}, 7]},
        {"role": "system", "content": []},
        {"role": "user", "content": None},
        {"role": "assistant", "content": None},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "ogg"}}]},
        {"role": "user", "content": [{"type": "file", "file": {"file_id": "f", "file_data": "AAAA"}}]},
        {"role": "user", "content": [{"type": "file", "file": {"filename": "x.pdf"}}]},
        {"role": "user", "content": "x", "name": 5},
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "original"}}],
        },
        {"role": "assistant", "content": "x", "annotations": [{"type": "url_citation"}]},
        {"role": "user", "content": "\ud800"},
    ]
    with pytest.raises(ValidationError) as info:
        from_openai_chat(payload, pass_through_unknown=False)
    assert violations(info) == [
        ("messages[0].content[0].image_url.detail", "openai_chat.enum"),
        ("messages[1].role", "openai_chat.role"),
        ("messages[2]", "openai_chat.type"),
        ("messages[3].role", "openai_chat.required"),
        ("messages[4].content[0].image_url.url", "openai_chat.media"),
        ("messages[5].tool_calls[0].function.arguments", "openai_chat.json"),
        ("messages[5].tool_calls[1].id", "openai_chat.min_len"),
        ("messages[5].tool_calls[1].function.name", "openai_chat.min_len"),
        ("messages[5].tool_calls[1].function.arguments", "openai_chat.type"),
        ("messages[5].tool_calls[2].type", "openai_chat.unsupported"),
        ("messages[5].tool_calls[3].type", "openai_chat.unknown_type"),
        ("messages[6].tool_call_id", "openai_chat.required"),
        ("messages[6].content[0].type", "openai_chat.unsupported"),
        ("messages[7].content[0].type", "openai_chat.unknown_type"),
        ("messages[7].content[1].type", "openai_chat.required"),
        ("messages[7].content[2]", "openai_chat.type"),
        ("messages[8].content", "openai_chat.min_items"),
        ("messages[9].content", "openai_chat.required"),
        ("messages[10].content", "openai_chat.required"),
        ("messages[11].content[0].input_audio.format", "openai_chat.enum"),
        ("messages[12].content[0].file", "openai_chat.exclusive"),
        ("messages[13].content[0].file.file_data", "openai_chat.required"),
        ("messages[14].name", "openai_chat.type"),
        ("messages[15].content[0].image_url.detail", "openai_chat.unsupported"),
        ("messages[16].annotations", "openai_chat.unsupported"),
        ("messages[17].content", "openai_chat.string.utf8"),
    ]
    assert str(info.value).startswith("invalid OpenAI Chat Completions messages:")


def test_reading_bad_urls_and_base64() -> None:
    payload = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "not a url"}}]},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "%%%", "format": "mp3"}}]},
        {"role": "user", "content": [{"type": "file", "file": {"file_data": "data:application/pdf;base64,%%"}}]},
    ]
    with pytest.raises(ValidationError) as info:
        from_openai_chat(payload)
    assert violations(info) == [
        ("messages[0].content[0].image_url.url", "openai_chat.string.uri"),
        ("messages[1].content[0].input_audio.data", "openai_chat.media"),
        ("messages[2].content[0].file.file_data", "openai_chat.media"),
    ]


@pytest.mark.parametrize("payload", ["text", {"model": "x"}, 3, {"messages": "nope"}])
def test_reading_needs_a_list_of_messages(payload: Any) -> None:
    with pytest.raises(ValidationError) as info:
        from_openai_chat(payload)
    assert violations(info) == [("messages", "openai_chat.type")]


def test_invalid_arguments_are_kept_on_request() -> None:
    payload = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1'}}],
        }
    ]
    (message,) = from_openai_chat(payload, allow_invalid_arguments=True)
    assert isinstance(message, AssistantMessage)
    (tool_call,) = message.tool_calls()
    assert tool_call.arguments == '{"a": 1'
    assert tool_call.arguments_error is not None
    assert write([message])[0] == payload


def test_pass_through_keeps_unknown_items_verbatim_and_writes_them_back() -> None:
    payload = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "future_part", "future_part": {"z": [1, "ü"]}},
                {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "original"}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}, {"type": "hologram", "hologram": {}}],
            "audio": {"id": "audio_abc"},
            "tool_calls": [
                {"id": "c3", "type": "custom", "custom": {"name": "grammar", "input": "x = 1"}},
                {"id": "c4", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "done"},
        {"role": "tool", "tool_call_id": "c4", "content": "done"},
    ]
    read = from_openai_chat(payload, pass_through_unknown=True)
    user, assistant, tools = read
    assert [(b.block_type, b.provider) for b in user.contents if isinstance(b, ProviderContent)] == [
        ("future_part", "openai-chat-completions"),
        ("image_url", "openai-chat-completions"),
    ]
    assert [b.type for b in assistant.contents] == ["text", "provider", "provider", "provider", "tool_call"]
    kept = [b for b in assistant.contents if isinstance(b, ProviderContent)]
    assert [b.block_type for b in kept] == ["hologram", "message.audio", "tool_calls.custom"]
    assert kept[2].block() == payload[1]["tool_calls"][0]  # type: ignore[index]
    assert isinstance(tools, ToolMessage)
    assert [(r.name, r.index) for r in tools.results()] == [("grammar", 0), ("f", 1)]
    written, report = write(read, check_sdk=False)
    assert written == payload
    assert report.losses == []


def test_legacy_function_messages() -> None:
    payload = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": '{"c":"Oslo"}'}},
        {"role": "function", "name": "get_weather", "content": "cold"},
        {"role": "function", "name": "other", "content": None},
    ]
    _user, assistant, results = from_openai_chat(payload)
    assert isinstance(assistant, AssistantMessage)
    assert assistant.contents == (call("function_call_1", "get_weather", '{"c":"Oslo"}'),)
    assert isinstance(results, ToolMessage)
    assert results.contents == (
        ToolResultContent("function_call_1", "cold", name="get_weather"),
        ToolResultContent("function_call_3", "", name="other"),
    )
    # Written back in today's form.
    written, _ = write([assistant, results])
    assert written[0] == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "function_call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"c":"Oslo"}'},
            }
        ],
    }
    assert written[1] == {"role": "tool", "tool_call_id": "function_call_1", "content": "cold"}


def test_id_map_restores_original_ids() -> None:
    payload = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "safe_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "safe_1", "content": "ok"},
    ]
    assistant, tools = from_openai_chat(payload, id_map={"safe_1": "toolu:01/original"})
    assert [c.id for c in assistant.tool_calls()] == ["toolu:01/original"]  # type: ignore[union-attr]
    assert [(r.id, r.name) for r in tools.results()] == [("toolu:01/original", "f")]  # type: ignore[union-attr]


def test_reading_accepts_null_optionals_and_content_null_with_calls() -> None:
    payload = [
        {"role": "user", "content": "hi", "name": None},
        {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}],
        },
        {"role": "assistant", "content": "", "tool_calls": None},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "No"}, {"type": "text", "text": "Sorry."}]},
    ]
    user, with_call, empty, refused = from_openai_chat(payload)
    assert user.name == ""
    assert with_call.contents == (call("c", "f", ""),)
    assert empty.contents == (TextContent(""),)
    # Refusal parts come after the text; the message is a refusal.
    assert refused.contents == (TextContent("Sorry."), TextContent("No"))
    assert isinstance(refused, AssistantMessage)
    assert refused.stop_reason is StopReason.CONTENT_FILTER


# --------------------------------------------------------------------------- responses


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("stop", StopReason.STOP),
        ("length", StopReason.LENGTH),
        ("tool_calls", StopReason.TOOL_CALLS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("function_call", StopReason.TOOL_CALLS),
        ("something_new", None),
        (None, None),
    ],
)
def test_finish_reasons(finish: str | None, reason: StopReason | None) -> None:
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": finish}],
    }
    message = from_openai_chat_response(response)
    assert message.stop_reason is reason
    assert message.stop_reason_raw == (finish or "")
    assert message.usage is None  # not reported: unknown, not zero


def _response(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-x",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        **extra,
    }


def test_response_usage_keeps_presence() -> None:
    no_details = from_openai_chat_response(
        _response({"content": "x"}, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    )
    assert no_details.usage == Usage(input_tokens=10, output_tokens=5, total_tokens=15)
    nulls = from_openai_chat_response(
        _response(
            {"content": "x"},
            usage={
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "total_tokens": 15,
                "prompt_tokens_details": None,
                "completion_tokens_details": {"reasoning_tokens": None},
            },
        )
    )
    assert nulls.usage == no_details.usage
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response(
            _response(
                {"content": "x"},
                usage={
                    "prompt_tokens": 10,
                    "completion_tokens": -1,
                    "total_tokens": True,
                    "prompt_tokens_details": {"cached_tokens": 11},
                },
            )
        )
    assert violations(info) == [
        ("usage.completion_tokens", "openai_chat.usage"),
        ("usage.total_tokens", "openai_chat.type"),
        ("usage.prompt_tokens", "openai_chat.usage"),
    ]


def test_response_keeps_invalid_arguments_and_refusal_with_content() -> None:
    response = _response(
        {
            "content": "Partial answer.",
            "refusal": "I can't finish this.",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"cut'}}],
        },
    )
    message = from_openai_chat_response(response)
    assert message.contents == (
        TextContent("Partial answer."),
        TextContent("I can't finish this."),
        call("c", "f", '{"cut'),
    )
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.CONTENT_FILTER, "stop")
    written = to_openai_chat_response(message, report=ConversionReport())
    sdk_response(written)
    assert written["choices"][0]["message"] == {"role": "assistant", **response["choices"][0]["message"]}
    assert written["choices"][0]["finish_reason"] == "stop"


def test_response_url_citations_are_citations_on_the_text() -> None:
    annotation = {
        "type": "url_citation",
        "url_citation": {"start_index": 0, "end_index": 4, "title": "T", "url": "https://x.test"},
    }
    response = _response({"content": "Text", "annotations": [annotation]})
    message = from_openai_chat_response(response)
    (text,) = message.contents
    assert isinstance(text, TextContent)
    (citation,) = text.citations
    assert (citation.source_kind, citation.url, citation.title) == ("web", "https://x.test", "T")
    assert (citation.start_index, citation.end_index) == (0, 4)
    report = ConversionReport()
    written = to_openai_chat_response(message, report=report)
    sdk_response(written)
    assert written["choices"][0]["message"]["annotations"] == [annotation]
    assert not report
    # A request has no annotations: reported there.
    report = ConversionReport()
    to_openai_chat([message], report=report)
    assert losses(report) == [("[0].contents[0].citations", "citations")]
    # An annotation of another kind keeps the whole field verbatim (a provider block).
    other = _response({"content": "Text", "annotations": [annotation, {"type": "file_citation", "file_id": "f"}]})
    kept = from_openai_chat_response(other)
    assert [type(b).__name__ for b in kept.contents] == ["TextContent", "ProviderContent"]
    assert to_openai_chat_response(kept)["choices"][0]["message"]["annotations"] == [
        annotation,
        {"type": "file_citation", "file_id": "f"},
    ]


def test_citations_from_other_formats_become_url_citations_shifted_into_the_joined_content() -> None:
    web = Citation.web("https://a.test", "A", start_index=1, end_index=3)
    whole = Citation.web("https://b.test")
    document = Citation.document(0, chars=(0, 2))
    message = AssistantMessage(
        [TextContent("Hello "), TextContent("world", citations=[web, whole, document])],
        stop_reason="stop",
    )
    report = ConversionReport()
    written = to_openai_chat_response(message, report=report)
    assert written["choices"][0]["message"]["annotations"] == [
        {
            "type": "url_citation",
            "url_citation": {"end_index": 9, "start_index": 7, "title": "A", "url": "https://a.test"},
        },
        {
            "type": "url_citation",
            "url_citation": {"end_index": 11, "start_index": 6, "title": "", "url": "https://b.test"},
        },
    ]
    assert ("contents[1].citations[2]", "document citation") in losses(report)


def test_response_logprobs_are_token_logprobs_on_content_and_refusal() -> None:
    def token(text: str, logprob: float, top: list[Any] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"token": text, "logprob": logprob, "bytes": list(text.encode())}
        if top is not None:
            entry["top_logprobs"] = top
        return entry

    content = [token("Hi", -0.1, [token("Hi", -0.1), token("Hey", -2.5)]), token("!", -0.01, [])]
    response = _response({"content": "Hi!"})
    response["choices"][0]["logprobs"] = {"content": content, "refusal": None}
    message = from_openai_chat_response(response)
    (text,) = message.contents
    assert isinstance(text, TextContent)
    assert [(t.token, t.logprob, t.bytes) for t in text.logprobs] == [("Hi", -0.1, b"Hi"), ("!", -0.01, b"!")]
    assert [t.token for t in text.logprobs[0].top_logprobs] == ["Hi", "Hey"]
    report = ConversionReport()
    written = to_openai_chat_response(message, report=report)
    sdk_response(written)
    assert written["choices"][0]["logprobs"] == {"content": content, "refusal": None}
    assert not report
    refused = _response({"content": None, "refusal": "No."})
    refused["choices"][0]["logprobs"] = {"content": None, "refusal": [token("No", -0.2, []), token(".", 0.0, [])]}
    message = from_openai_chat_response(refused)
    assert to_openai_chat_response(message)["choices"][0]["logprobs"] == {
        "content": None,
        "refusal": refused["choices"][0]["logprobs"]["refusal"],
    }
    report = ConversionReport()
    to_openai_chat([message], report=report)
    assert losses(report) == [("[0].contents[0].logprobs", "token logprobs")]


def test_usage_details_without_a_field_are_kept_for_the_response() -> None:
    response = _response({"content": "ok"})
    response["usage"] = {
        "prompt_tokens": 64,
        "completion_tokens": 9,
        "total_tokens": 73,
        "prompt_tokens_details": {"audio_tokens": 44, "cached_tokens": 0, "text_tokens": 20},
        "completion_tokens_details": {"reasoning_tokens": 0, "text_tokens": 9, "audio_tokens": 0},
    }
    message = from_openai_chat_response(response)
    assert message.usage == Usage(
        input_tokens=64, output_tokens=9, cache_read_tokens=0, reasoning_tokens=0, total_tokens=73
    )
    written = to_openai_chat_response(message)
    assert written["usage"]["prompt_tokens_details"] == {"cached_tokens": 0, "audio_tokens": 44, "text_tokens": 20}
    assert written["usage"]["completion_tokens_details"] == {"reasoning_tokens": 0, "text_tokens": 9}
    # not model input: a request leaves the block out without a report
    report = ConversionReport()
    assert to_openai_chat([message], report=report) == [{"role": "assistant", "content": "ok"}]
    assert not report


def test_response_bad_input() -> None:
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response({"object": "chat.completion.chunk", "choices": [], "created": "now"})
    assert violations(info) == [
        ("object", "openai_chat.enum"),
        ("created", "openai_chat.type"),
        ("choices", "openai_chat.min_items"),
    ]
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response(
            {"choices": [{"message": {"role": "user", "content": None}, "finish_reason": "stop"}]}
        )
    assert violations(info) == [("choices[0].message.role", "openai_chat.role")]
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response({"choices": [{"message": {"content": None}, "finish_reason": "stop"}]})
    assert violations(info) == [("choices[0].message.content", "openai_chat.required")]
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response([])  # type: ignore[arg-type]
    assert violations(info) == [("", "openai_chat.type")]
    # An empty response is fine when the finish reason allows it.
    empty = from_openai_chat_response({"choices": [{"message": {"content": None}, "finish_reason": "length"}]})
    assert empty.contents == ()
    assert empty.stop_reason is StopReason.LENGTH


def test_second_choice() -> None:
    response = _response({"content": "first"})
    response["choices"].append(
        {"index": 1, "message": {"role": "assistant", "content": "second"}, "finish_reason": "stop"}
    )
    assert from_openai_chat_response(response, choice=1).contents == (TextContent("second"),)
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response(response, choice=2)
    assert violations(info) == [("choices", "openai_chat.min_items")]


def test_to_response_from_another_provider_reports_losses() -> None:
    message = AssistantMessage(
        [ThinkingContent("hmm", "sig"), TextContent("One. "), TextContent("Two."), call("toolu_1", "f", "{}")],
        usage=Usage(input_tokens=5, cache_write_tokens=7, output_tokens=3, cost=UsageCost(total=0.01)),
        stop_reason="abort",
        stop_reason_raw="aborted",
        error="user pressed stop",
        provenance=Provenance("anthropic", "anthropic-messages", "claude-x", "msg_01"),
        name="bot",
        id="m1",
        timestamp=1700000000.75,
    )
    report = ConversionReport()
    written = to_openai_chat_response(message, report=report)
    sdk_response(written)
    assert written == {
        "id": "msg_01",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "claude-x",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "One. Two.",
                    "refusal": None,
                    "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": 3,
            "total_tokens": 15,
            "prompt_tokens_details": {"cache_write_tokens": 7},
        },
    }
    assert losses(report) == [
        ("contents[0]", "thinking"),
        ("contents[2]", "text block boundary"),
        ("name", "name"),
        ("error", "error"),
        ("provenance", "provenance anthropic/anthropic-messages"),
        ("stop_reason", "stop reason 'abort'"),
        ("usage.total_tokens", "unknown total"),
        ("usage.cost", "cost"),
    ]
    with pytest.raises(ConversionError):
        to_openai_chat_response(message, strict=True)
    with pytest.warns(ConversionWarning):
        to_openai_chat_response(message)


def test_to_response_without_provenance_or_usage() -> None:
    message = AssistantMessage.text("hi", id="abc", timestamp=5, stop_reason="stop")
    written = to_openai_chat_response(message, report=ConversionReport(), model="gpt-x")
    sdk_response(written)
    assert (written["id"], written["model"], written["created"]) == ("chatcmpl-abc", "gpt-x", 5)
    assert "usage" not in written
    back = from_openai_chat_response(written)
    assert back.provenance == Provenance(PROVIDER, API, "gpt-x", "chatcmpl-abc")
    with pytest.raises(ValidationError):
        to_openai_chat_response(UserMessage.text("x"))  # type: ignore[arg-type]
    unknown_counts = AssistantMessage.text("x", usage=Usage(total_tokens=9), stop_reason="stop")
    report = ConversionReport()
    usage = to_openai_chat_response(unknown_counts, report=report)["usage"]
    assert usage == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 9}
    assert losses(report) == [
        ("usage.input_tokens", "unknown input token count"),
        ("usage.output_tokens", "unknown output token count"),
    ]


# --------------------------------------------------------------------------- the SDK check itself


def test_sdk_check_catches_a_bad_nested_part() -> None:
    import pydantic

    bad = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": 5}}]}
    with pytest.raises(pydantic.ValidationError):
        validate_with(ChatCompletionMessageParam, bad)
    with pytest.raises(pydantic.ValidationError):
        sdk_messages(
            [{"role": "tool", "tool_call_id": "c", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
        )


def test_response_created_out_of_range_and_bad_model() -> None:
    with pytest.raises(ValidationError) as info:
        from_openai_chat_response(
            {"created": 10**20, "model": "\ud800", "choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}
        )
    assert violations(info) == [("created", "openai_chat.range"), ("model", "openai_chat.string.utf8")]


def test_writing_needs_a_list_of_messages() -> None:
    with pytest.raises(ValidationError):
        to_openai_chat(UserMessage.text("one"))  # type: ignore[arg-type]


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.sampled_from(["user", "assistant", "tool", "text"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["role", "content", "type", "text", "tool_calls", "id", "function", "name", "choices", "message"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(payload=_JSON, pass_through=st.booleans())
def test_any_json_reads_or_raises_validation_error(payload: Any, pass_through: bool) -> None:
    """Nothing but ValidationError escapes, and every rule id is the format's."""
    for read in (from_openai_chat, from_openai_chat_response):
        found: list[Any] = []
        try:
            read(payload, pass_through_unknown=pass_through)
        except ValidationError as exc:
            found.extend(exc.violations)
        assert all(v.rule_id.startswith("openai_chat.") for v in found)
