"""Anthropic Messages streaming (``agentmsg.providers.anthropic_stream``): recorded streams, SSE, errors.

Recorded streams live in ``tests/golden/anthropic_stream/``: ``*.sse`` files are
raw ``text/event-stream`` text (their leading SSE comment lines name the
documentation section they follow), ``*.json`` files are
``{"_source": ..., "events": [...]}`` with the decoded events. Each is folded
into the message it stands for, written out in full here; every event is
checked against the ``anthropic`` SDK's own stream types.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from anthropic.types.shared.error_response import ErrorResponse
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from agentmsg import (
    AssistantMessage,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    Provenance,
    ProviderContent,
    RedactedThinkingContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    Usage,
    ValidationError,
)
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.anthropic import from_anthropic_response, read_block, to_anthropic_response
from agentmsg.providers.anthropic_stream import AnthropicStreamParser, stream_events, stream_events_from_sse
from agentmsg.streaming import StreamAccumulator, StreamEvent, StreamProtocolError, events_from_message, fold, iter_sse

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "anthropic_stream"
DOCS = "https://platform.claude.com/docs/"
MODEL = "claude-sonnet-4-5-20250929"
SDK_EVENT = TypeAdapter(RawMessageStreamEvent)


def prov(response_id: str) -> Provenance:
    return Provenance("anthropic", "anthropic-messages", MODEL, response_id)


# -- loading fixtures


def sse_text(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def sse_events(name: str) -> list[dict[str, Any]]:
    """The decoded data of every SSE event of a ``.sse`` fixture."""
    return [event.json() for event in iter_sse(sse_text(name).splitlines(keepends=True))]


def json_events(name: str) -> list[dict[str, Any]]:
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    assert DOCS in doc.pop("_source")
    events = doc.pop("events")
    assert doc == {}, f"unexpected top-level keys in {name}: {sorted(doc)}"
    return events  # type: ignore[no-any-return]


def events_of(name: str) -> list[dict[str, Any]]:
    return sse_events(name) if name.endswith(".sse") else json_events(name)


def fold_fixture(name: str, **options: Any) -> tuple[AssistantMessage, StreamAccumulator]:
    """Fold a fixture (SSE text for ``.sse``, decoded events for ``.json``); the message and its accumulator."""
    if name.endswith(".sse"):
        events = list(stream_events_from_sse(sse_text(name).splitlines(keepends=True), **options))
    else:
        events = list(stream_events(json_events(name), **options))
    accumulator = StreamAccumulator().extend(events)
    return accumulator.finish(), accumulator


def expected(folded: AssistantMessage, contents: list[Any], **fields: Any) -> AssistantMessage:
    """The expected message, with the folded message's id and timestamp (the stream's own)."""
    return AssistantMessage(contents, id=folded.id, timestamp=folded.timestamp, **fields)


FIXTURES = sorted(path.name for path in GOLDEN.iterdir() if path.suffix in (".sse", ".json"))


# -- the fixtures are real: sources named, every event valid for the SDK

# thinking.sse is the documentation's own example, which leaves out what the SDK's types require:
# these are exactly its deviations (event number -> the field added back for the check).
SDK_DEVIATIONS: dict[str, dict[int, tuple[tuple[str, ...], Any]]] = {
    "thinking.sse": {
        0: (("message", "usage"), {"input_tokens": 0, "output_tokens": 0}),
        1: (("content_block", "signature"), ""),
        13: (("usage",), {"output_tokens": 0}),
    }
}


def with_field(event: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(event))
    target = copy
    for key in path[:-1]:
        target = target[key]
    assert path[-1] not in target
    target[path[-1]] = value
    return copy  # type: ignore[no-any-return]


def test_every_fixture_is_found() -> None:
    assert FIXTURES == [
        "cut_off.json",
        "error.sse",
        "hosted_tools.json",
        "invalid_json.json",
        "parallel_tool_use.json",
        "refusal.sse",
        "text.json",
        "text.sse",
        "thinking.sse",
        "thinking_redacted.json",
        "tool_use.json",
        "tool_use.sse",
        "web_search.json",
    ]


@pytest.mark.parametrize("name", [n for n in FIXTURES if n.endswith(".sse")])
def test_sse_fixtures_name_their_documentation(name: str) -> None:
    comments = [line for line in sse_text(name).splitlines() if line.startswith(":")]
    assert any(DOCS in line for line in comments)


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_event_is_valid_for_the_sdk(name: str) -> None:
    deviations = SDK_DEVIATIONS.get(name, {})
    for number, event in enumerate(events_of(name)):
        if event["type"] == "ping":
            assert event == {"type": "ping"}  # the SDK has no type for it: it skips pings
        elif event["type"] == "error":
            ErrorResponse.model_validate(event)
        elif number in deviations:
            with pytest.raises(PydanticValidationError):
                SDK_EVENT.validate_python(event)
            SDK_EVENT.validate_python(with_field(event, *deviations[number]))
        else:
            SDK_EVENT.validate_python(event)


@pytest.mark.parametrize("name", ["text", "tool_use"])
def test_sse_text_and_decoded_events_give_the_same_message(name: str) -> None:
    assert sse_events(f"{name}.sse") == json_events(f"{name}.json")
    from_sse, _ = fold_fixture(f"{name}.sse", message_id="m")
    from_json, _ = fold_fixture(f"{name}.json", message_id="m")
    assert from_json == expected(from_json, list(from_sse.contents), **fields_of(from_sse))
    assert from_sse.id == from_json.id == "m"


def fields_of(message: AssistantMessage) -> dict[str, Any]:
    return {
        "usage": message.usage,
        "stop_reason": message.stop_reason,
        "stop_reason_raw": message.stop_reason_raw,
        "stop_sequence": message.stop_sequence,
        "error": message.error,
        "provenance": message.provenance,
        "provider_extra": message.provider_extra,
    }


@pytest.mark.parametrize("name", [n for n in FIXTURES if n.endswith(".sse")])
def test_bytes_lines_and_decoded_events_agree(name: str) -> None:
    raw = [line.encode("utf-8") for line in sse_text(name).splitlines(keepends=True)]
    options: dict[str, Any] = {"message_id": "m"}
    from_bytes = fold(stream_events_from_sse(raw, **options))
    from_events = fold(stream_events(sse_events(name), **options))
    assert from_events == expected(from_events, list(from_bytes.contents), **fields_of(from_bytes))


# -- each recorded stream folds into its message


def test_plain_text_answer() -> None:
    message, accumulator = fold_fixture("text.sse")
    assert message == expected(
        message,
        [TextContent("Hello!")],
        usage=Usage(input_tokens=25, output_tokens=15),  # message_delta's cumulative count replaces message_start's
        stop_reason=StopReason.STOP,
        stop_reason_raw="end_turn",
        provenance=prov("msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY"),
    )
    assert message.id == "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY"  # the default message id is the response id
    assert accumulator.issues == []


def test_text_then_a_tool_call() -> None:
    message, accumulator = fold_fixture("tool_use.sse", message_id="m-tool")
    assert message == expected(
        message,
        [
            TextContent("Okay, let's check the weather for San Francisco, CA:"),
            ToolCallContent(
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "get_weather",
                arguments='{"location": "San Francisco, CA", "unit": "fahrenheit"}',  # fragments, verbatim
                index=0,
            ),
        ],
        usage=Usage(input_tokens=472, output_tokens=89),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="tool_use",
        provenance=prov("msg_014p7gG3wDgGV9EUtLvnow3U"),
    )
    assert message.id == "m-tool"
    assert message.tool_calls()[0].args == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert accumulator.issues == []


def test_parallel_tool_calls_with_cache_usage() -> None:
    message, accumulator = fold_fixture("parallel_tool_use.json")
    assert message == expected(
        message,
        [
            TextContent("I'll look up the weather and the time in Paris at once."),
            ToolCallContent(
                "toolu_01Wq7a1JbR5cYk2Tn8Hd3LsM", "get_weather", arguments='{"location": "Paris, France"}', index=0
            ),
            ToolCallContent(
                "toolu_01Hx4e9MdV2pQs6Rb1Zk8TnY", "get_time", arguments='{"timezone": "Europe/Paris"}', index=1
            ),
            # no fragment at all: the start's input {}, as compact JSON (as the converter writes input)
            ToolCallContent("toolu_01Cn2v5GfA8wLj3Ks9Pe6DqR", "get_location", arguments="{}", index=2),
        ],
        usage=Usage(input_tokens=21, output_tokens=132, cache_read_tokens=1842, cache_write_tokens=188),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="tool_use",
        provenance=prov("msg_01Ptl8Vq2yhXb6LzKc4WfN3D"),
    )
    assert accumulator.issues == []


THINKING_TEXT = (
    "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n"
    "3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231"
)


def test_thinking_with_signature_and_no_usage() -> None:
    message, accumulator = fold_fixture("thinking.sse")
    assert message == expected(
        message,
        [
            ThinkingContent(THINKING_TEXT, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."),
            TextContent("27 * 453 = 12,231"),
        ],
        stop_reason=StopReason.STOP,
        stop_reason_raw="end_turn",
        provenance=prov("msg_01..."),
    )
    assert message.usage is None  # never reported: unknown, not zero
    assert accumulator.issues == []


def test_thinking_redacted_thinking_and_reasoning_tokens() -> None:
    message, _ = fold_fixture("thinking_redacted.json", message_id="m-think")
    assert message == expected(
        message,
        [
            ThinkingContent(
                "The user asks for 17 squared. 17 * 17 = 289.", "EuYBCkQYAiJAq9sT2m7vFh0wLr3Xc8BjN5pKe1YgUz4oQd6Wa=="
            ),
            RedactedThinkingContent(
                "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4URj"
            ),
            TextContent("17 squared is 289."),
        ],
        usage=Usage(input_tokens=46, output_tokens=97, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=71),
        stop_reason=StopReason.STOP,
        stop_reason_raw="end_turn",
        provenance=prov("msg_01Th5kWv9QmBz3Ld7Xc2RnYe"),
    )


def test_arguments_that_end_in_invalid_json_are_kept_and_reported() -> None:
    message, accumulator = fold_fixture("invalid_json.json")
    arguments = '{"filename": "poem.txt", "lines_of_text": ["Roses are red", "Violets are'
    assert message == expected(
        message,
        [ToolCallContent("toolu_01Mk3s8ZxQ4vNb7Wd2Ja5GtE", "make_file", arguments=arguments, index=0)],
        usage=Usage(input_tokens=310, output_tokens=40),
        stop_reason=StopReason.LENGTH,
        stop_reason_raw="max_tokens",
        provenance=prov("msg_01Fg6dNw3kTz8Yp2Hs5VqLcR"),
    )
    assert message.tool_calls()[0].arguments_error is not None
    assert len(accumulator.issues) == 1
    assert "block 0 (tool call 'make_file', id 'toolu_01Mk3s8ZxQ4vNb7Wd2Ja5GtE')" in accumulator.issues[0]
    assert "not a JSON object" in accumulator.issues[0]


def test_a_streaming_refusal_is_a_content_filter_stop() -> None:
    events: list[StreamEvent] = []
    parser = AnthropicStreamParser()
    for event in sse_events("refusal.sse"):
        events += parser.feed(event)
    events += parser.close()
    message = fold(events)
    assert message == expected(
        message,
        [TextContent("Hello..")],
        usage=Usage(input_tokens=18, output_tokens=6),  # usage is still reported for a refusal
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="refusal",
        provenance=prov("msg_01RfSl7qk2WcDdy8N3Vb4aZe"),
        # the refusal's details, which no field holds, verbatim for the response writer
        provider_extra=ProviderContent.from_block(
            "anthropic", {"type": "message", "stop_details": {"type": "refusal", "category": None, "explanation": None}}
        ),
    )
    assert parser.stop_details == {"type": "refusal", "category": None, "explanation": None}
    assert parser.stop_sequence is None
    assert parser.skipped == []


def test_a_stream_cut_off_before_its_end_records_an_error() -> None:
    message, accumulator = fold_fixture("cut_off.json")
    assert message == expected(
        message,
        [
            TextContent("Checking the weather."),
            ToolCallContent(
                "toolu_01Vb9q2LmX7cRk4Tz8Nw1HsF", "get_weather", arguments='{"location": "San Fra', index=0
            ),
        ],
        usage=Usage(input_tokens=472, output_tokens=2),
        stop_reason=StopReason.ERROR,
        error="the stream was cut short: it ended before message_stop",
        provenance=prov("msg_01Ct4rHk8pZw2Nv6Jq3LsXdB"),
    )
    assert message.stop_reason_raw == ""  # the provider gave no error type
    assert accumulator.issues == [
        "block 1 (tool call 'get_weather', id 'toolu_01Vb9q2LmX7cRk4Tz8Nw1HsF') was cut short by the error "
        "and kept as far as it got"
    ]


def test_an_error_event_ends_the_stream_with_its_type_as_code() -> None:
    message, accumulator = fold_fixture("error.sse")
    assert message == expected(
        message,
        [TextContent("The first three primes are 2,")],
        usage=Usage(input_tokens=25, output_tokens=1),
        stop_reason=StopReason.ERROR,
        stop_reason_raw="overloaded_error",
        error="Overloaded",
        provenance=prov("msg_01Kp3nQyq1Zr2wWm8TfC5hXe"),
    )
    assert len(accumulator.issues) == 1
    assert "block 0 (text) was cut short" in accumulator.issues[0]


WEB_SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
    "content": [
        {
            "type": "web_search_result",
            "title": "Weather in New York City in May 2025 (New York) - detailed Weather Forecast for a month",
            "url": "https://world-weather.info/forecast/usa/new_york/may-2025/",
            "encrypted_content": "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k...",
            "page_age": None,
        }
    ],
}
SERVER_TOOL_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
    "name": "web_search",
    "input": {"query": "weather NYC today"},  # parsed from its input_json_delta fragments
}


def test_server_tool_blocks_fold_as_hosted_tool_blocks_by_default() -> None:
    message, accumulator = fold_fixture("web_search.json")
    assert message == expected(
        message,
        [
            TextContent("I'll check the current weather in New York City for you."),
            read_block(SERVER_TOOL_USE),
            read_block(WEB_SEARCH_RESULT),
            TextContent("Here's the current weather information for New York City."),
        ],
        usage=Usage(
            input_tokens=10682,
            output_tokens=510,
            cache_read_tokens=0,
            cache_write_tokens=0,
            hosted_tool_requests={"web_search": 1, "web_fetch": 0},
        ),
        stop_reason=StopReason.STOP,
        stop_reason_raw="end_turn",
        provenance=prov("msg_01G..."),
    )
    call, result = message.hosted_tool_calls()[0], message.hosted_tool_results()[0]
    assert (call.kind, call.input) == (HostedToolKind.WEB_SEARCH, '{"query": "weather NYC today"}')  # verbatim
    assert result.search_results[0].url == "https://world-weather.info/forecast/usa/new_york/may-2025/"
    assert accumulator.issues == []


def test_unknown_blocks_are_kept_whole_by_default_and_refused_on_request() -> None:
    upload = {"type": "container_upload", "file_id": "file_011"}
    events = [
        start_event(),
        {"type": "content_block_start", "index": 0, "content_block": upload},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    assert fold(stream_events(events)).contents == (ProviderContent.from_block("anthropic", upload),)
    with pytest.raises(
        StreamProtocolError, match=r"event 1 \(content_block_start\): block 0 of type 'container_upload'"
    ):
        list(stream_events(events, pass_through_unknown=False))


# -- the stream and the converter agree


def same_message(message: AssistantMessage, like: AssistantMessage) -> AssistantMessage:
    """``message`` with ``like``'s id and timestamp."""
    return expected(like, list(message.contents), **fields_of(message))


def final_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming response the events add up to (texts joined, tool input parsed), built by hand."""
    response: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    fragments: dict[int, str] = {}
    for event in events:
        kind = event["type"]
        if kind == "message_start":
            response = json.loads(json.dumps(event["message"]))
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] += delta["signature"]
            elif delta["type"] == "input_json_delta":
                fragments[event["index"]] = fragments.get(event["index"], "") + delta["partial_json"]
            elif delta["type"] == "citations_delta":
                block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif kind == "message_delta":
            response.update(event["delta"])
            response["usage"].update(event["usage"])
    for index, text in fragments.items():
        if text:
            blocks[index]["input"] = json.loads(text)
    response["content"] = [blocks[i] for i in sorted(blocks)]
    return response


COMPLETE = [
    "hosted_tools.json",
    "parallel_tool_use.json",
    "refusal.sse",
    "text.json",
    "text.sse",
    "thinking_redacted.json",
    "tool_use.json",
    "tool_use.sse",
    "web_search.json",
]


@pytest.mark.parametrize("name", COMPLETE)
def test_the_fold_agrees_with_the_converter_on_the_whole_response(name: str) -> None:
    # Issue 16, bug 5: both readers spell tool input alike (the stream's fragments verbatim, the response's
    # object as json.dumps writes it, which is how the stream spells it), so the messages are equal.
    events = events_of(name)
    folded = fold(stream_events(events))
    converted = from_anthropic_response(final_message(events))
    assert same_message(converted, folded) == folded
    assert folded.stop_sequence == (final_message(events).get("stop_sequence") or "")


def canonical(message: AssistantMessage) -> AssistantMessage:
    """The message with every verbatim provider object's JSON text re-dumped with sorted keys.

    The SDK's accumulated message orders keys by its model fields; the stream's blocks come in the
    API's order. Both are the same objects: compare them as objects.
    """
    copy = message.copy()

    def walk(pb: Any) -> None:
        for field, value in pb.ListFields():
            if field.message_type is None or field.message_type.GetOptions().map_entry:
                continue
            for item in value if field.is_repeated else [value]:
                if item.DESCRIPTOR.full_name == "agentmsg.v1.ProviderContent":
                    item.json = json.dumps(json.loads(item.json), sort_keys=True)
                else:
                    walk(item)

    walk(copy.pb)
    return copy


@pytest.mark.parametrize("name", [n for n in COMPLETE if n not in SDK_DEVIATIONS])
def test_the_fold_equals_the_sdks_own_accumulation(name: str) -> None:
    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in events_of(name):
        if event["type"] != "ping":
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)  # type: ignore[arg-type]
    assert snapshot is not None
    folded = fold(stream_events(events_of(name)))
    from_sdk = from_anthropic_response(snapshot.to_dict())
    assert canonical(same_message(from_sdk, folded)) == canonical(folded)


def test_hosted_tool_blocks_citations_and_usage_details_stream_and_go_back_exactly() -> None:
    events = events_of("hosted_tools.json")
    message = fold(stream_events(events))
    kinds = [type(block).__name__ for block in message.contents]
    assert kinds == [
        "HostedToolCallContent",
        "HostedToolResultContent",
        "TextContent",
        *["HostedToolCallContent", "HostedToolResultContent"] * 4,
        "ProviderContent",
    ]
    fetch, fetched, text = message.contents[:3]
    assert isinstance(fetch, HostedToolCallContent)
    assert (fetch.kind, fetch.input) == (HostedToolKind.WEB_FETCH, '{"url": "https://example.com/article"}')
    assert isinstance(fetched, HostedToolResultContent)
    assert fetched.web_fetch is not None
    assert fetched.web_fetch.retrieved_at == "2025-08-25T10:30:00Z"
    (document,) = fetched.blocks
    assert isinstance(document, DocumentContent)
    assert (document.text(), document.title) == ("The tide comes in twice a day.", "Tides")
    assert isinstance(text, TextContent)
    assert text.content == "Twice a day."
    assert [c.location for c in text.citations] == [("chars", 0, 30)]
    bash = message.hosted_tool_results()[1]
    assert bash.code_execution is not None
    assert (bash.code_execution.stdout, bash.code_execution.return_code) == ("chart.png\n", 0)
    assert [f.file_id for f in bash.code_execution.files] == ["file_011Chart"]
    view, search, failed = message.hosted_tool_results()[2:]
    assert view.text == "high tide 06:10\nlow tide 12:25\n"
    assert [block.block()["tool_name"] for block in search.blocks] == ["get_weather"]  # type: ignore[union-attr]
    assert (failed.is_error, failed.error_code) == (True, "unavailable")
    assert message.stop_sequence == "###"
    assert message.usage == Usage(
        input_tokens=3120,
        output_tokens=212,
        cache_read_tokens=0,
        cache_write_tokens=1500,
        cache_write_5m_tokens=1000,
        cache_write_1h_tokens=500,
        hosted_tool_requests={"web_search": 0, "web_fetch": 1},
    )
    report = ConversionReport()
    written = to_anthropic_response(message, report=report)
    assert not report
    final = final_message(events)
    assert written == {**final, "type": "message", "role": "assistant"}


@pytest.mark.parametrize("name", [n for n in FIXTURES if n.endswith(".sse")])
def test_sse_lines_without_their_ends_are_read_as_lines(name: str) -> None:
    # Issue 16, bug 1: str.splitlines() and httpx's iter_lines() give lines without their ends.
    with_ends = fold(stream_events_from_sse(sse_text(name).splitlines(keepends=True), message_id="m"))
    bare = fold(stream_events_from_sse(sse_text(name).splitlines(), message_id="m"))
    as_bytes = fold(stream_events_from_sse([line.encode() for line in sse_text(name).splitlines()], message_id="m"))
    assert bare == same_message(with_ends, bare)
    assert as_bytes == same_message(with_ends, as_bytes)
    assert not bare.error or bare.error == with_ends.error


def test_a_message_with_no_block_gets_an_empty_text_block_as_the_converter_gives() -> None:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_e", "model": MODEL, "content": [], "usage": {}}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    folded = fold(stream_events(events))
    assert folded.contents == (TextContent(""),)
    converted = from_anthropic_response(
        {
            "id": "msg_e",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": "end_turn",
        }
    )
    assert folded.contents == converted.contents
    # A length stop may be empty: no block is made up.
    events[1] = {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 1}}
    assert fold(stream_events(events)).contents == ()


# -- stop reasons, ids, options


def text_stream(stop: dict[str, Any], *, response_id: str | None = "msg_x") -> list[dict[str, Any]]:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "model": MODEL, "content": []}
    if response_id is not None:
        message["id"] = response_id
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", StopReason.STOP),
        ("stop_sequence", StopReason.STOP),
        ("max_tokens", StopReason.LENGTH),
        ("model_context_window_exceeded", StopReason.LENGTH),
        ("tool_use", StopReason.TOOL_CALLS),
        ("refusal", StopReason.CONTENT_FILTER),
        ("pause_turn", None),  # paused, neither finished nor failed: send it back to continue (the converter's rule)
        ("a_future_reason", None),
    ],
)
def test_stop_reasons_are_mapped_and_kept_verbatim(raw: str, reason: StopReason | None) -> None:
    message = fold(stream_events(text_stream({"stop_reason": raw, "stop_sequence": None})))
    assert (message.stop_reason, message.stop_reason_raw) == (reason, raw)


def test_the_stop_sequence_is_kept_on_the_parser() -> None:
    parser = AnthropicStreamParser()
    for event in text_stream({"stop_reason": "stop_sequence", "stop_sequence": "\n\nHuman:"}):
        parser.feed(event)
    assert parser.stop_sequence == "\n\nHuman:"
    assert parser.ended
    assert parser.close() == []


def test_message_ids_and_provenance_options() -> None:
    assert fold(stream_events(text_stream({"stop_reason": "end_turn"}))).id == "msg_x"
    assert fold(stream_events(text_stream({"stop_reason": "end_turn"}), message_id="mine")).id == "mine"
    no_id = fold(stream_events(text_stream({"stop_reason": "end_turn"}, response_id=None)))
    assert len(no_id.id) == 36  # a UUID4
    assert no_id.provenance == Provenance("anthropic", "anthropic-messages", MODEL, "")
    other = fold(stream_events(text_stream({"stop_reason": "end_turn"}), provider="bedrock", api="bedrock-invoke"))
    assert other.provenance == Provenance("bedrock", "bedrock-invoke", MODEL, "msg_x")
    events = text_stream({"stop_reason": "end_turn"})
    del events[0]["message"]["model"]
    assert fold(stream_events(events, model="fallback-model")).provenance.model == "fallback-model"  # type: ignore[union-attr]


def test_a_tool_start_input_is_used_only_when_no_fragment_comes() -> None:
    start = {"type": "message_start", "message": {"id": "msg_t", "model": MODEL, "content": []}}
    tool = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}
    whole = fold(
        stream_events(
            [
                start,
                {"type": "content_block_start", "index": 0, "content_block": tool},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
                {"type": "message_stop"},
            ]
        )
    )
    assert whole.tool_calls()[0].arguments == '{"a": 1}'  # as from_anthropic_response spells it


def test_an_error_before_message_start_still_gives_a_message() -> None:
    message = fold(stream_events([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]))
    assert message.contents == ()
    assert (message.stop_reason, message.stop_reason_raw, message.error) == (
        StopReason.ERROR,
        "overloaded_error",
        "Overloaded",
    )


def test_an_empty_stream_is_an_error_not_a_hang() -> None:
    message = fold(stream_events([]))
    assert message.error == "the stream was cut short: it ended before message_start"
    assert message.stop_reason is StopReason.ERROR


def test_citations_are_carried_and_pings_and_unknown_events_skipped_with_notes() -> None:
    events = text_stream({"stop_reason": "end_turn"})
    citation = {
        "type": "char_location",
        "cited_text": "hi",
        "document_index": 0,
        "document_title": None,
        "start_char_index": 0,
        "end_char_index": 2,
    }
    events[2:2] = [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": citation}},
        {"type": "ping"},
        {"type": "content_block_hint", "index": 0},
    ]
    SDK_EVENT.validate_python(events[2])
    events.insert(0, {"type": "ping"})
    parser = AnthropicStreamParser()
    out = [e for event in events for e in parser.feed(event)] + parser.close()
    got = fold(out)
    (text,) = got.contents
    assert isinstance(text, TextContent)
    (cited,) = text.citations
    assert (cited.source_kind, cited.document_index, cited.location, cited.cited_text) == (
        "document",
        0,
        ("chars", 0, 2),
        "hi",
    )
    assert cited.original is not None
    assert cited.original.block() == citation
    plain = fold(stream_events(text_stream({"stop_reason": "end_turn"})))
    assert text.content == plain.text_content()
    assert parser.skipped == ["event 5 (content_block_hint): an event type this version does not know, skipped"]
    with pytest.raises(StreamProtocolError, match=r"event 5 \(content_block_hint\).*strict=True"):
        list(stream_events(events, strict=True))


def test_a_provider_block_still_open_at_an_error_is_left_out_and_noted() -> None:
    events = [*json_events("web_search.json")[:10], {"type": "error", "error": {"type": "api_error", "message": "x"}}]
    parser = AnthropicStreamParser(pass_through_unknown=True)
    out = [e for event in events for e in parser.feed(event)]
    message = fold(out)
    assert [type(c) for c in message.contents] == [TextContent]
    assert parser.skipped == ["event 10 (error): block 1 (server_tool_use) was still open and is left out"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_argument_fragments_may_be_cut_anywhere(cuts: list[int]) -> None:
    events = json_events("tool_use.json")
    text = "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta" and e["index"] == 1)
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    kept = [e for e in events if not (e["type"] == "content_block_delta" and e["index"] == 1)]
    at = next(i for i, e in enumerate(kept) if e["type"] == "content_block_stop" and e["index"] == 1)
    recut = [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
        for p in pieces
    ]
    message = fold(stream_events(kept[:at] + recut + kept[at:], message_id="m"))
    assert message.tool_calls()[0].arguments == text


# -- malformed input


def start_event() -> dict[str, Any]:
    return {"type": "message_start", "message": {"id": "msg_1", "model": MODEL, "content": []}}


def text_block(index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


TEXT = {"type": "text_delta", "text": "x"}
STOP0 = {"type": "content_block_stop", "index": 0}


@pytest.mark.parametrize(
    ("events", "needle"),
    [
        ([42], r"event 0: expected an object, got number"),
        ([{}], r"event 0: 'type' must be a string, got null"),
        ([text_block()], r"event 0 \(content_block_start\): arrived before message_start"),
        ([start_event(), start_event()], r"event 1 \(message_start\): a second message_start"),
        ([{"type": "message_start"}], r"'message' is required"),
        ([start_event(), delta(3, TEXT)], r"event 1 \(content_block_delta\): block 3 was never started"),
        ([start_event(), text_block(), STOP0, delta(0, TEXT)], r"event 3 .*block 0 already stopped"),
        ([start_event(), text_block(), STOP0, STOP0], r"event 3 \(content_block_stop\): block 0 already stopped"),
        ([start_event(), text_block(), STOP0, text_block()], r"block 0 started twice"),
        ([start_event(), text_block(), text_block()], r"block 0 started twice"),
        ([start_event(), {**text_block(), "index": "0"}], r"'index' must be an integer, got string"),
        ([start_event(), {**text_block(), "index": True}], r"'index' must be an integer, got boolean"),
        ([start_event(), {**text_block(), "index": -1}], r"'index' must not be negative"),
        ([start_event(), {"type": "content_block_start", "index": 0}], r"'content_block' is required"),
        ([start_event(), text_block(), delta(0, {"type": "text_delta", "text": 5})], r"'text' must be a string"),
        ([start_event(), text_block(), delta(0, {"type": "text_delta"})], r"'text' is required"),
        (
            [start_event(), text_block(), delta(0, {"type": "thinking_delta", "thinking": "x"})],
            r"block 0: a thinking_delta cannot go to a text block",
        ),
        (
            [start_event(), text_block(), delta(0, {"type": "input_json_delta", "partial_json": "{"})],
            r"a input_json_delta cannot go to a text block",
        ),
        (
            [start_event(), text_block(), delta(0, {"type": "signature_delta", "signature": "s"})],
            r"a signature_delta cannot go to a text block",
        ),
        ([start_event(), text_block(), delta(0, {"type": "sparkle_delta"})], r"unknown delta type 'sparkle_delta'"),
        ([start_event(), text_block(), delta(0, "x")], r"'delta' must be an object, got string"),  # type: ignore[arg-type]
        (
            [
                start_event(),
                {"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use"}},
                {"type": "content_block_stop", "index": 0},
            ],
            r"event 2 \(content_block_stop\): .*id: 'id' is required",
        ),
        (
            [start_event(), {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}}],
            r"'id' is required",
        ),
        (
            [
                start_event(),
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "", "name": "f", "input": {}},
                },
            ],
            r"event 1 \(content_block_start\): .*id",
        ),
        (
            [
                start_event(),
                {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking"}},
            ],
            r"'data' is required",
        ),
        ([start_event(), text_block(), {"type": "message_stop"}], r"block 0 \(text\) still open"),
        ([start_event(), {"type": "message_stop"}, {"type": "message_stop"}], r"event 2 .*already ended"),
        ([start_event(), {"type": "error", "error": {}}, text_block()], r"event 2 .*already ended"),
        ([{**start_event(), "message": {"usage": "lots"}}], r"'message.usage' must be an object, got string"),
        ([{**start_event(), "message": {"usage": {"input_tokens": -1}}}], r"event 0 \(message_start\): .*input_tokens"),
        ([{**start_event(), "message": {"usage": {"input_tokens": 1.5}}}], r"input_tokens: expected an integer"),
        ([start_event(), {"type": "message_delta", "delta": {"stop_reason": 7}}], r"'stop_reason' must be a string"),
        ([start_event(), {"type": "message_delta"}], r"'delta' is required"),
        ([start_event(), {"type": "error", "error": "bad"}], r"'error' must be an object, got string"),
    ],
)
def test_malformed_events_name_the_event_and_the_fault(events: list[Any], needle: str) -> None:
    with pytest.raises(StreamProtocolError, match=needle):
        list(stream_events(events))


def test_a_provider_block_whose_input_is_not_json_is_refused() -> None:
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    events = [
        start_event(),
        {"type": "content_block_start", "index": 0, "content_block": server},
        delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x'}),
        STOP0,
    ]
    with pytest.raises(StreamProtocolError, match=r"event 3 .*block 0 \(server_tool_use\): its input is not JSON"):
        list(stream_events(events, pass_through_unknown=True))
    events[2] = delta(0, {"type": "input_json_delta", "partial_json": "[1]"})
    with pytest.raises(StreamProtocolError, match=r"its input is a JSON array"):
        list(stream_events(events, pass_through_unknown=True))
    events[2] = delta(0, TEXT)
    with pytest.raises(StreamProtocolError, match=r"a text_delta cannot go to a server_tool_use block"):
        list(stream_events(events, pass_through_unknown=True))


def sse(*blocks: str) -> list[str]:
    return "\n\n".join(blocks).splitlines(keepends=True)


START_SSE = "event: message_start\ndata: " + json.dumps(start_event())


def test_sse_data_that_is_not_json_is_refused() -> None:
    with pytest.raises(StreamProtocolError, match=r"event 1 \(content_block_start\): data is not JSON"):
        list(stream_events_from_sse(sse(START_SSE, "event: content_block_start\ndata: {oops")))


def test_an_sse_event_name_must_match_the_data_type() -> None:
    lying = "event: content_block_stop\ndata: " + json.dumps(text_block())
    with pytest.raises(
        StreamProtocolError, match=r"event 1 \(content_block_stop\): the data's type 'content_block_start'"
    ):
        list(stream_events_from_sse(sse(START_SSE, lying)))
    # An unnamed event takes its type from the data.
    unnamed = sse(*("data: " + json.dumps(event) for event in text_stream({"stop_reason": "end_turn"})))
    assert fold(stream_events_from_sse(unnamed)).text_content() == "hi"


def test_an_sse_error_event_whose_data_is_not_json_still_ends_the_stream() -> None:
    message = fold(stream_events_from_sse(sse(START_SSE, "event: error\ndata: upstream connect error")))
    assert (message.stop_reason, message.error, message.stop_reason_raw) == (
        StopReason.ERROR,
        "upstream connect error",
        "",
    )
    untyped = '{"error": {"type": "api_error", "message": "Internal server error"}}'
    message = fold(stream_events_from_sse(sse(START_SSE, "event: error\ndata: " + untyped)))
    assert (message.error, message.stop_reason_raw) == ("Internal server error", "api_error")
    message = fold(stream_events_from_sse(sse(START_SSE, 'event: error\ndata: "gateway timeout"')))
    assert (message.error, message.stop_reason_raw) == ('"gateway timeout"', "")
    # A ping's data is never read.
    pinged = fold(
        stream_events_from_sse(
            sse("event: ping\ndata: -", START_SSE, 'event: message_stop\ndata: {"type": "message_stop"}')
        )
    )
    assert pinged.contents == (TextContent(""),)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["tool_use.sse", "thinking.sse", "error.sse"]), st.lists(st.integers(min_value=0), max_size=30))
def test_sse_may_come_in_arbitrary_chunks(name: str, cuts: list[int]) -> None:
    raw = sse_text(name).replace("\n", "\r\n").encode("utf-8") + "é…".encode()  # CRLF ends; a split character
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    chunks = [raw[a:b] for a, b in itertools.pairwise(points)]
    by_lines = fold(stream_events_from_sse(sse_text(name).splitlines(keepends=True), message_id="m"))
    by_chunks = fold(stream_events_from_sse(chunks, message_id="m"))
    assert by_chunks == same_message(by_lines, by_chunks)


def test_sse_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(StreamProtocolError, match="not UTF-8"):
        list(stream_events_from_sse([b"event: ping\n", b"data: \xff\n", b"\n"]))


def test_a_tool_calls_caller_streams_into_provider_extra_as_the_converter_reads_it() -> None:
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_01Code"}
    start = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}, "caller": caller}
    events = [
        {**start_event(), "message": {**start_event()["message"], "usage": {"input_tokens": 9, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": start},
        delta(0, {"type": "input_json_delta", "partial_json": '{"a": 1}'}),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    for event in events[1:4]:
        SDK_EVENT.validate_python(event)  # caller is a field of the SDK's ToolUseBlock
    folded = fold(stream_events(events))
    converted = from_anthropic_response(final_message(events))
    assert same_message(converted, folded) == folded
    (call,) = folded.tool_calls()
    assert call.provider_extra is not None
    assert call.provider_extra.block() == {"type": "tool_use", "caller": caller}


def test_a_delta_type_this_version_does_not_know_appends_to_a_block_read_whole() -> None:
    # Beta compaction blocks stream their summary as compaction_delta {content}; a block of an unknown
    # type is read whole, and a new delta's text fields are appended to the block's.
    events = [
        start_event(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": None}},
        delta(0, {"type": "compaction_delta", "content": "The user "}),
        delta(0, {"type": "compaction_delta", "content": "said hello."}),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    (block,) = fold(stream_events(events)).contents
    assert block == ProviderContent.from_block("anthropic", {"type": "compaction", "content": "The user said hello."})
    bad = [*events[:2], delta(0, {"type": "compaction_delta", "content": 3})]
    with pytest.raises(StreamProtocolError, match="compaction_delta whose 'content' is not text"):
        list(stream_events(bad))
    with pytest.raises(StreamProtocolError, match="unknown delta type 'compaction_delta'"):
        list(stream_events([start_event(), text_block(), delta(0, {"type": "compaction_delta", "content": "x"})]))


# -- response keys no field holds, a message_start holding blocks, a fallback to another model
# (event shapes as recorded in the Vercel AI SDK's anthropic fixtures: anthropic-programmatic-tool-calling,
# anthropic-compaction, anthropic-clear-tool-uses, anthropic-fallback)

CONTAINER = {"id": "container_011CWHPPTDTn1XufeRB9uHeH", "expires_at": "2025-12-20T05:33:35.789626Z"}
ITERATIONS = [
    {"input_tokens": 60385, "output_tokens": 522, "type": "compaction"},
    {"input_tokens": 612, "output_tokens": 2819, "type": "message"},
]


def test_message_delta_keys_no_field_holds_fold_as_the_response_reads_them() -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 5, "output_tokens": 1,
                                                        "service_tier": "standard"}}},
        text_block(),
        delta(0, {"type": "text_delta", "text": "Done."}),
        STOP0,
        {"type": "message_delta",
         "delta": {"stop_reason": "end_turn", "stop_sequence": None, "stop_details": None, "container": CONTAINER},
         "usage": {"input_tokens": 612, "output_tokens": 2819, "iterations": ITERATIONS},
         "context_management": {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2}]}},
        {"type": "message_stop"},
    ]  # fmt: skip
    message = fold(stream_events(events))
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "Done."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "container": CONTAINER,
        "context_management": events[4]["context_management"],
        "usage": {"input_tokens": 612, "output_tokens": 2819, "iterations": ITERATIONS},
    }
    assert message == expected(message, list(message.contents), **fields_of(from_anthropic_response(response)))
    extra = message.provider_extra
    assert extra is not None
    assert extra.block() == {
        "type": "message",
        "container": CONTAINER,
        "usage": {"iterations": ITERATIONS},
        "context_management": events[4]["context_management"],
    }
    written = to_anthropic_response(message)
    assert written["container"] == CONTAINER
    assert written["usage"]["iterations"] == ITERATIONS


def test_a_message_start_holding_a_whole_tool_call_folds_to_it() -> None:
    # programmatic tool calling: the code's next tool call comes as a message_start that holds it, then stop
    call = {
        "type": "tool_use",
        "id": "toolu_015dGLMbwBKv1ZRQr6KdJzeH",
        "name": "rollDie",
        "input": {"player": "player2"},
        "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK"},
    }
    message_body = {
        "model": MODEL,
        "id": "msg_01KSVw3xmXbMNJPNMt46BC5W",
        "type": "message",
        "role": "assistant",
        "content": [call],
        "container": CONTAINER,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0, "server_tool_use": {"web_search_requests": 0}},
    }
    message = fold(stream_events([{"type": "message_start", "message": message_body}, {"type": "message_stop"}]))
    reference = from_anthropic_response(message_body)
    assert message == expected(message, list(reference.contents), **fields_of(reference))
    assert message.stop_reason == StopReason.TOOL_CALLS
    assert message.tool_calls()[0].args == {"player": "player2"}
    assert to_anthropic_response(message)["content"] == [call]


def test_a_fallback_block_renames_the_model_of_the_finished_message() -> None:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-fable-5",
            "content": [],
            "usage": {"input_tokens": 408, "output_tokens": 1},
        },
    }
    fallback = {"type": "fallback", "from": {"model": "claude-fable-5"}, "to": {"model": "claude-opus-4-8"}}
    events = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": fallback},
        STOP0,
        text_block(1),
        delta(1, {"type": "text_delta", "text": "Gutenberg."}),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 264}},
        {"type": "message_stop"},
    ]  # fmt: skip
    message = fold(stream_events(events))
    assert message.provenance == Provenance("anthropic", "anthropic-messages", "claude-opus-4-8", "msg_1")
    assert message.contents[0] == ProviderContent.from_block("anthropic", fallback)
    # no fallback: the model stays the one message_start named
    plain = fold(stream_events([start, *events[3:]]))
    assert plain.provenance is not None
    assert plain.provenance.model == "claude-fable-5"


def test_message_stop_carries_provider_extra_and_model_through_the_fold_and_back() -> None:
    extra = ProviderContent.from_block("anthropic", {"type": "message", "container": CONTAINER})
    with pytest.raises(ValidationError, match="provider_extra"):
        StreamEvent.message_stop("stop", provider_extra={"type": "message"})  # type: ignore[arg-type]
    events = [
        StreamEvent.message_start("m", provenance=prov("msg_1")),
        StreamEvent.block_start(0, TextContent("hi")),
        StreamEvent.block_stop(0),
        StreamEvent.message_stop("stop", "end_turn", provider_extra=extra, model="claude-opus-4-8"),
    ]
    message = fold(events)
    assert message.provider_extra == extra
    assert message.provenance is not None
    assert message.provenance.model == "claude-opus-4-8"
    assert fold(events_from_message(message)) == message
