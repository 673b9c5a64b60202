"""OpenAI Chat Completions streaming (``agentmsg.providers.openai_chat_stream``): recorded streams, SSE, errors.

Recorded streams live in ``tests/golden/openai_chat_stream/``: ``*.json`` hold
``{"_source": ..., "events": [chunk, ...]}`` and ``*.sse`` raw SSE text whose
leading ``:`` comment lines name their source. Every chunk is checked with the
``openai`` SDK's ``ChatCompletionChunk`` model, so the fixtures are real
shapes; each names the documentation sections it follows.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from agentmsg import (
    AssistantMessage,
    Provenance,
    ProviderContent,
    StopReason,
    TextContent,
    ToolCallContent,
    Usage,
)
from agentmsg.providers.openai_chat import from_openai_chat_response
from agentmsg.providers.openai_chat_stream import (
    API,
    PROVIDER,
    OpenAIChatStreamParser,
    stream_events,
    stream_events_from_sse,
)
from agentmsg.streaming import StreamAccumulator, StreamEvent, StreamProtocolError, fold, iter_sse

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "openai_chat_stream"
SPEC_COMMIT = "f85dbe223d40e1a31cba812ab2d755c7e98a92a3"
CREATED = datetime.fromtimestamp(1694268190, UTC)


def load(name: str) -> list[dict[str, Any]]:
    """A recorded stream's chunks, its ``_source`` checked and every chunk validated by the SDK."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["docs"], name
    assert all(doc_ref.startswith("https://platform.openai.com/docs/") for doc_ref in source["docs"])
    assert source["spec"]["repo"] == "openai/openai-openapi"
    assert source["spec"]["commit"] == SPEC_COMMIT
    assert source["spec"]["schemas"]
    assert source["note"]
    events = doc.pop("events")
    assert doc == {}, f"unexpected top-level keys in {name}: {sorted(doc)}"
    return validated(events)


def validated(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks, each checked with the SDK's ChatCompletionChunk (error payloads are not chunks)."""
    for event in events:
        if "error" not in event:
            ChatCompletionChunk.model_validate(event)
    return events


def sse_lines(name: str) -> list[str]:
    text = (GOLDEN / name).read_text(encoding="utf-8")
    assert text.startswith(": "), f"{name} must name its source in leading comment lines"
    return text.splitlines(keepends=True)


def folded(events: Iterable[StreamEvent]) -> tuple[AssistantMessage, list[str]]:
    accumulator = StreamAccumulator().extend(events)
    return accumulator.finish(), accumulator.issues


def expected(message: AssistantMessage, contents: list[Any], **fields: Any) -> AssistantMessage:
    """The expected message, with the folded message's id and timestamp."""
    return AssistantMessage(contents, id=message.id, timestamp=message.timestamp, **fields)


def provenance(model: str, response_id: str) -> Provenance:
    return Provenance(PROVIDER, API, model, response_id)


# --- the recorded streams -----------------------------------------------------


def test_every_fixture_is_tested() -> None:
    names = {path.name for path in GOLDEN.iterdir()}
    assert names == {*CASES, "text.sse", "error.sse"}


def _text(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Hello! How can I help you today?")],
        usage=Usage(
            input_tokens=1117 - 1024,
            output_tokens=212,
            cache_read_tokens=1024,
            reasoning_tokens=192,
            total_tokens=1329,
        ),
        stop_reason=StopReason.STOP,
        stop_reason_raw="stop",
        provenance=provenance("o4-mini-2025-04-16", "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"),
    )


def _parallel(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [
            ToolCallContent("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", arguments='{"location": "Paris, France"}'),
            ToolCallContent(
                "call_6FT3jtNyp1F7qwmM8FRFd0Tq", "get_weather", arguments='{"location": "Bogotá, Colombia"}', index=1
            ),
        ],
        usage=Usage(input_tokens=82, output_tokens=52, cache_read_tokens=0, reasoning_tokens=0, total_tokens=134),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="tool_calls",
        provenance=provenance("gpt-4.1-2025-04-14", "chatcmpl-BzQx2Oa5yR7mRk0Xo6GQnQ1pF3Lw8"),
    )


def _invalid_arguments(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [ToolCallContent("call_q1X9sLk2M3n4B5v6C7x8Z9a0", "search_docs", arguments='{"query": "streaming tool calls')],
        stop_reason=StopReason.LENGTH,
        stop_reason_raw="length",
        provenance=provenance("gpt-4.1-2025-04-14", "chatcmpl-C0aTr8Lq2n3v5XyZ1mB7dK4hE9sWq"),
    )


def _no_usage(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Hello there.")],
        stop_reason=StopReason.STOP,
        stop_reason_raw="stop",
        provenance=provenance("gpt-4o-mini", "chatcmpl-123"),
    )


def _refusal(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("I'm sorry, I cannot assist with that request.")],
        usage=Usage(input_tokens=45, output_tokens=10, total_tokens=55),
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="stop",
        provenance=provenance("gpt-4o-2024-08-06", "chatcmpl-C1rEfU5aLmQ0pT7vY2kN8xJ3wZ6bD"),
    )


def _content_filter(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Here is the first part of the story")],
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="content_filter",
        provenance=provenance("gpt-4o-2024-08-06", "chatcmpl-C2kFw9hTq1Zr4Lm6Ns8Vb0Xc3Yd5E"),
    )


def _cut_short(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("The first three primes are 2, 3")],
        stop_reason=StopReason.ERROR,
        error="the stream ended before the model finished (no finish_reason): it was cut short",
        provenance=provenance("gpt-4o-mini", "chatcmpl-123"),
    )


CASES: dict[str, tuple[Callable[[AssistantMessage], AssistantMessage], list[str]]] = {
    "text.json": (_text, []),
    "parallel_tool_calls.json": (_parallel, []),
    "invalid_arguments.json": (
        _invalid_arguments,
        [
            "block 0 (tool call 'search_docs', id 'call_q1X9sLk2M3n4B5v6C7x8Z9a0'): arguments kept verbatim, "
            "not a JSON object: invalid JSON: Unterminated string starting at: line 1 column 11 (char 10)"
        ],
    ),
    "no_usage.json": (_no_usage, []),
    "refusal.json": (_refusal, []),
    "content_filter.json": (_content_filter, []),
    "cut_short.json": (_cut_short, ["block 0 (text) was cut short by the error and kept as far as it got"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_stream_folds_to_the_expected_message(name: str) -> None:
    build, issues = CASES[name]
    message, found = folded(stream_events(load(name)))
    assert message == build(message)
    assert found == issues
    assert message.datetime == CREATED  # the chunks' `created`
    assert message.id == message.provenance.response_id  # type: ignore[union-attr]


def test_no_usage_chunk_leaves_usage_unknown() -> None:
    message, _ = folded(stream_events(load("no_usage.json")))
    assert message.usage is None


def test_invalid_arguments_are_kept_verbatim() -> None:
    message, _ = folded(stream_events(load("invalid_arguments.json")))
    (call,) = message.tool_calls()
    assert call.arguments == '{"query": "streaming tool calls'
    assert call.arguments_error is not None


@pytest.mark.parametrize("name", sorted(CASES))
def test_message_id_option(name: str) -> None:
    message, _ = folded(stream_events(load(name), message_id="m-1"))
    assert message.id == "m-1"
    assert message.provenance.response_id.startswith("chatcmpl-")  # type: ignore[union-attr]


def _unstreamed(chunks: list[dict[str, Any]]) -> AssistantMessage:
    """The SDK's own accumulation of the chunks (its stream helper), read by the non-streaming converter."""
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    snapshot = state.current_completion_snapshot.model_dump(mode="json", exclude_none=True)
    snapshot["object"] = "chat.completion"  # the snapshot keeps the chunks' object name
    return from_openai_chat_response(snapshot)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"cut_short.json"}))
def test_same_message_as_the_unstreamed_completion(name: str) -> None:
    chunks = load(name)
    unstreamed = _unstreamed(chunks)
    streamed, _ = folded(stream_events(chunks, message_id=unstreamed.id))
    assert streamed == unstreamed


def test_empty_content_is_an_empty_text_block() -> None:
    """``content: ""`` opens the text block (as the converter reads it); ``null`` opens nothing."""
    chunks = [
        _chunk({"role": "assistant", "content": "", "refusal": None}),
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
                ]
            }
        ),
        _chunk(finish="tool_calls"),
    ]
    unstreamed = _unstreamed(chunks)
    message = fold(stream_events(chunks, message_id=unstreamed.id))
    assert message == unstreamed
    assert message.contents == (TextContent(""), ToolCallContent("call_1", "f", arguments=""))
    empty = [_chunk({"role": "assistant", "content": ""}), _chunk(finish="stop")]
    assert fold(stream_events(empty)).contents == (TextContent(""),)


def test_block_events_in_order() -> None:
    """Blocks start before their deltas and stop before usage and message_stop; tool calls open with id and name."""
    events = list(stream_events(load("parallel_tool_calls.json")))
    starts = [event.pb.block_start for event in events if event.kind == "block_start"]
    assert [(s.index, s.content.tool_call.id, s.content.tool_call.name) for s in starts] == [
        (0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather"),
        (1, "call_6FT3jtNyp1F7qwmM8FRFd0Tq", "get_weather"),
    ]
    stops = [i for i, event in enumerate(events) if event.kind == "block_stop"]
    usage = next(i for i, event in enumerate(events) if event.kind == "usage")
    assert max(stops) < usage < len(events) - 1


# --- SSE ---------------------------------------------------------------------


def test_sse_text_gives_the_same_message_as_decoded_chunks() -> None:
    lines = sse_lines("text.sse")
    data = [event.data for event in iter_sse(lines)]
    assert data[-1] == "[DONE]"
    assert [json.loads(item) for item in data[:-1]] == load("text.json")
    from_sse, _ = folded(stream_events_from_sse(lines, message_id="m-1"))
    from_json, _ = folded(stream_events(load("text.json"), message_id="m-1"))
    assert from_sse == from_json
    as_bytes, _ = folded(stream_events_from_sse([line.encode() for line in lines], message_id="m-1"))
    assert as_bytes == from_json


def test_sse_error_payload_ends_the_stream() -> None:
    lines = sse_lines("error.sse")
    validated([json.loads(event.data) for event in iter_sse(lines)])
    message, issues = folded(stream_events_from_sse(lines))
    assert message == expected(
        message,
        [TextContent("Partial answer")],
        stop_reason=StopReason.ERROR,
        stop_reason_raw="server_error",
        error="The server had an error while processing your request. Sorry about that!",
        provenance=provenance("gpt-4o-mini", "chatcmpl-123"),
    )
    assert issues == ["block 0 (text) was cut short by the error and kept as far as it got"]


def test_sse_error_event_name() -> None:
    chunk = _chunk({"content": "Hi"})
    lines = [
        f"data: {json.dumps(chunk)}\n",
        "\n",
        "event: error\n",
        'data: {"message": "Overloaded", "type": "server_error", "code": "overloaded"}\n',
        "\n",
    ]
    message, _ = folded(stream_events_from_sse(lines))
    assert (message.error, message.stop_reason_raw, message.stop_reason) == ("Overloaded", "overloaded", "error")
    text_error = ["event: error\n", "data: upstream went away\n", "\n"]
    message, _ = folded(stream_events_from_sse(text_error))
    assert message.error == "upstream went away"
    assert message.contents == ()


def test_sse_stops_reading_at_done() -> None:
    lines = [*sse_lines("text.sse"), "\n", "data: this is never parsed\n", "\n"]
    message, _ = folded(stream_events_from_sse(lines, message_id="m-1"))
    assert message.text_content() == "Hello! How can I help you today?"


def test_sse_without_done_still_completes_after_finish() -> None:
    lines = [line for line in sse_lines("text.sse") if "[DONE]" not in line]
    message, _ = folded(stream_events_from_sse(lines))
    assert message.stop_reason is StopReason.STOP


def test_sse_non_json_data_names_the_event() -> None:
    lines = [*sse_lines("text.sse")[:7], "data: {not json\n", "\n"]
    with pytest.raises(StreamProtocolError, match=r"SSE event 2: data is not JSON"):
        list(stream_events_from_sse(lines))


# --- the parser, piece by piece ---------------------------------------------


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    chunk.update(fields)
    return validated([chunk])[0]


def _token(text: str, logprob: float) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": []}


def _scored(delta: dict[str, Any], logprobs: dict[str, Any]) -> dict[str, Any]:
    chunk = copy.deepcopy(_chunk(delta))
    chunk["choices"][0]["logprobs"] = logprobs
    return validated([chunk])[0]


def test_logprobs_citations_audio_and_usage_details_fold_as_the_completion_reads() -> None:
    citation = {
        "type": "url_citation",
        "url_citation": {"start_index": 0, "end_index": 5, "title": "Ex", "url": "https://example.test/"},
    }
    chunks = [
        _scored({"role": "assistant", "content": "Hello"}, {"content": [_token("Hello", -0.5)]}),
        _scored({"content": " you", "annotations": [citation]}, {"content": [_token(" you", -1.25)]}),
        _chunk({"audio": {"id": "audio_1", "data": "AAA", "transcript": "Hel"}}),
        _chunk({"audio": {"data": "BBB", "transcript": "lo", "expires_at": 1700003600}}),
        _chunk(finish="stop"),
        {
            **_chunk(),
            "choices": [],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 4,
                "total_tokens": 14,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 3},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 2, "text_tokens": 2},
            },
        },
    ]
    unstreamed = _unstreamed(chunks)
    message, issues = folded(stream_events(chunks, message_id=unstreamed.id))
    assert message == unstreamed
    assert issues == []
    text, audio, details = message.contents
    assert isinstance(text, TextContent)
    assert [(t.token, t.logprob) for t in text.logprobs] == [("Hello", -0.5), (" you", -1.25)]
    assert [c.url for c in text.citations] == ["https://example.test/"]
    assert isinstance(audio, ProviderContent)
    assert audio.block() == {
        "audio": {"id": "audio_1", "data": "AAABBB", "transcript": "Hello", "expires_at": 1700003600}
    }
    assert isinstance(details, ProviderContent)
    assert details.block() == {
        "prompt_tokens_details": {"audio_tokens": 3},
        "completion_tokens_details": {"audio_tokens": 2, "text_tokens": 2},
    }


def test_feed_and_close_match_stream_events() -> None:
    chunks = load("parallel_tool_calls.json")
    parser = OpenAIChatStreamParser(message_id="m-1")
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    assert not parser.ended
    events += parser.close()
    assert parser.ended
    assert parser.close() == []
    assert parser.events_seen == len(chunks)
    assert fold(events) == fold(stream_events(chunks, message_id="m-1"))


def test_interleaved_tool_calls_and_text() -> None:
    chunks = [
        _chunk({"role": "assistant", "content": "Checking both."}),
        _chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "f"}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "g"}}]}),
        _chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"y":'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"arguments": " 2}"}}]}),
        _chunk(finish="tool_calls"),
    ]
    message, issues = folded(stream_events(chunks, message_id="m-1"))
    assert issues == []
    assert message == expected(
        message,
        [
            TextContent("Checking both."),
            ToolCallContent("call_a", "f", arguments='{"x": 1}'),
            ToolCallContent("call_b", "g", arguments='{"y": 2}', index=1),
        ],
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="tool_calls",
        provenance=provenance("gpt-4.1", "chatcmpl-1"),
    )


def test_other_choices_are_ignored() -> None:
    first = _chunk({"content": "A"})
    first["choices"].append({"index": 1, "delta": {"content": "B"}, "finish_reason": None})
    last = _chunk(finish="stop")
    last["choices"].append({"index": 1, "delta": {}, "finish_reason": "length"})
    validated([first, last])
    assert fold(stream_events([first, last])).text_content() == "A"
    second = fold(stream_events([first, last], choice=1))
    assert (second.text_content(), second.stop_reason) == ("B", StopReason.LENGTH)


def test_empty_delta_after_the_finish_adds_nothing() -> None:
    chunks = [_chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]})]
    chunks += [_chunk(finish="tool_calls"), _chunk({"content": "", "refusal": None})]
    message = fold(stream_events(chunks))
    assert message.contents == (ToolCallContent("c", "f", arguments="{}"),)


def test_unknown_finish_reason_is_kept_raw() -> None:
    message = fold(stream_events([_chunk({"content": "x"}), {**_chunk(), "choices": [_finish("paused")]}]))
    assert (message.stop_reason, message.stop_reason_raw) == (None, "paused")


def _finish(reason: str) -> dict[str, Any]:
    return {"index": 0, "delta": {}, "finish_reason": reason}


def test_usage_details_left_out_stay_unknown() -> None:
    chunks = [
        _chunk({"content": "x"}, "stop"),
        _chunk(choices=[], usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
    ]
    usage = fold(stream_events(chunks)).usage
    assert usage == Usage(input_tokens=10, output_tokens=3, total_tokens=13)
    written = _chunk(
        choices=[],
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 3,
            "total_tokens": 103,
            "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
        },
    )
    usage = fold(stream_events([chunks[0], written])).usage
    assert usage == Usage(
        input_tokens=10, output_tokens=3, cache_read_tokens=60, cache_write_tokens=30, total_tokens=103
    )


def test_options_and_defaults() -> None:
    chunk = _chunk({"content": "x"}, "stop")
    del chunk["model"]
    start = next(iter(stream_events([chunk], model="fallback-model", provider="azure", api="azure-chat")))
    assert start.kind == "message_start"
    message = fold(stream_events([chunk], model="fallback-model", provider="azure", api="azure-chat"))
    assert message.provenance == Provenance("azure", "azure-chat", "fallback-model", "chatcmpl-1")
    assert message.id == "chatcmpl-1"
    assert message.datetime == datetime.fromtimestamp(1700000000, UTC)


def test_empty_stream_is_cut_short() -> None:
    events = list(stream_events([]))
    assert [event.kind for event in events] == ["message_start", "error"]
    message = fold(events)
    assert message.stop_reason is StopReason.ERROR
    assert len(message.id) == 36  # a UUID4


def test_error_payload_before_any_chunk() -> None:
    message = fold(stream_events([{"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}]))
    assert (message.error, message.stop_reason_raw) == ("Rate limit reached", "rate_limit_exceeded")


# --- malformed input ----------------------------------------------------------


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    chunk = copy.deepcopy(_chunk({"content": "x"}))
    target: Any = chunk
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return chunk


def _tool(**fields: Any) -> dict[str, Any]:
    return _chunk({"tool_calls": [{"index": 0, **fields}]})


MALFORMED: list[tuple[str, list[Any], str]] = [
    ("not an object", [["chunk"]], r"event 0: a chunk must be a JSON object, got an array"),
    ("wrong object", [_with(["object"], "chat.completion")], r"event 0: chunk.object must be 'chat.completion.chunk'"),
    ("missing id", [{k: v for k, v in _chunk().items() if k != "id"}], r"event 0: chunk.id is missing"),
    ("choices not a list", [_with(["choices"], {})], r"event 0: chunk.choices must be an array, got an object"),
    ("choice not an object", [_with(["choices"], [3])], r"event 0: chunk.choices\[0\] must be an object"),
    ("content not a string", [_with(["choices", 0, "delta", "content"], 5)], r"delta.content must be a string"),
    ("bool index", [_with(["choices", 0, "index"], True)], r"chunk.choices\[0\].index must be an integer"),
    ("id changes", [_chunk({"content": "a"}), _chunk({"content": "b"}, id="chatcmpl-2")], r"event 1: chunk.id changed"),
    (
        "tool call without id",
        [_tool(function={"name": "f", "arguments": "{}"})],
        r"event 0: .*the first delta of tool call 0 must carry its id and function.name",
    ),
    ("tool call without name", [_tool(id="call_1")], r"must carry its id and function.name"),
    (
        "tool call renamed",
        [_tool(id="call_1", function={"name": "f"}), _tool(id="call_2", function={"name": "f"})],
        r"event 1: .*tool call 0 was 'f' \(id 'call_1'\)",
    ),
    (
        "tool call type",
        [_with(["choices", 0, "delta", "tool_calls"], [{"index": 0, "id": "c", "type": "custom"}])],
        r"tool_calls\[0\].type must be 'function', got 'custom'",
    ),
    ("negative tool index", [_chunk({"tool_calls": [{"index": -1, "id": "c"}]})], r"index must not be negative"),
    ("content after finish", [_chunk(finish="stop"), _chunk({"content": "more"})], r"event 1: .*after the choice"),
    (
        "logprobs without content",
        [
            _with(
                ["choices", 0, "logprobs"],
                {"refusal": [{"token": "x", "logprob": 0.0, "bytes": None, "top_logprobs": []}]},
            )
        ],
        r"logprobs.refusal: token logprobs for refusal that never came",
    ),
    (
        "function_call",
        [_with(["choices", 0, "delta", "function_call"], {"name": "f"})],
        r"deprecated function_call delta is not supported",
    ),
    (
        "negative usage",
        [_chunk(usage={"prompt_tokens": -1, "completion_tokens": 0, "total_tokens": 0})],
        r"event 0: .*token count cannot be negative",
    ),
    (
        "cached over prompt",
        [
            _chunk(
                usage={
                    "prompt_tokens": 5,
                    "completion_tokens": 0,
                    "total_tokens": 5,
                    "prompt_tokens_details": {"cached_tokens": 9},
                }
            )
        ],
        r"event 0: .*exceed prompt_tokens",
    ),
    ("chunk after error", [{"error": {"message": "boom"}}, _chunk()], r"event 1: a chunk after the stream ended"),
    ("error not an object", [{"error": 5}], r"event 0: error must be an object or a string"),
]


@pytest.mark.parametrize(("events", "match"), [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_malformed_chunks_raise(events: list[Any], match: str) -> None:
    with pytest.raises(StreamProtocolError, match=match):
        list(stream_events(events))
