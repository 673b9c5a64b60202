"""OpenAI Responses streaming (``agentmsg.providers.openai_responses_stream``): recorded streams, SSE, errors.

Recorded streams live in ``tests/golden/openai_responses_stream/``: ``*.json``
hold ``{"_source": ..., "events": [event, ...]}`` and ``*.sse`` raw SSE text
whose leading ``:`` comment lines name their source. Every event is checked
with the ``openai`` SDK's ``ResponseStreamEvent`` union, so the fixtures are
real shapes; each names the documentation sections it follows.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic
import pytest
from openai.types.responses import ResponseStreamEvent

from agentmsg import (
    AssistantMessage,
    Citation,
    Provenance,
    ProviderContent,
    RedactedThinkingContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    Usage,
)
from agentmsg.providers.openai_responses import envelope_slots, from_openai_responses_response, hosted_blocks
from agentmsg.providers.openai_responses_stream import (
    API,
    PROVIDER,
    OpenAIResponsesStreamParser,
    stream_events,
    stream_events_from_sse,
)
from agentmsg.streaming import StreamAccumulator, StreamEvent, StreamProtocolError, fold, iter_sse

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "openai_responses_stream"
SPEC_COMMIT = "f85dbe223d40e1a31cba812ab2d755c7e98a92a3"


@functools.cache
def _adapter() -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(ResponseStreamEvent)


def validated(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events, each checked with the SDK's ResponseStreamEvent union."""
    for event in events:
        _adapter().validate_python(event)
    return events


def load(name: str) -> list[dict[str, Any]]:
    """A recorded stream's events, its ``_source`` checked and every event validated by the SDK."""
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
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    return validated(events)


def folded(events: Iterable[StreamEvent]) -> tuple[AssistantMessage, list[str]]:
    accumulator = StreamAccumulator().extend(events)
    return accumulator.finish(), accumulator.issues


def expected(message: AssistantMessage, contents: list[Any], **fields: Any) -> AssistantMessage:
    """The expected message, with the folded message's id and timestamp."""
    return AssistantMessage(contents, id=message.id, timestamp=message.timestamp, **fields)


def typed(message: AssistantMessage) -> AssistantMessage:
    """The message without its item envelopes (the ids, statuses and phases of its items)."""
    kept = [
        block
        for block in message.contents
        if not (isinstance(block, ProviderContent) and (envelope_slots(block) or (None, 0))[1] > 0)
    ]
    pb = type(message.pb)()
    pb.CopyFrom(message.pb)
    del pb.assistant.content[:]
    pb.assistant.content.extend(block.pb for block in kept)
    return AssistantMessage.from_proto(pb, validate=False)


def provenance(model: str, response_id: str) -> Provenance:
    return Provenance(PROVIDER, API, model, response_id)


def _usage(inp: int, cached: int, out: int, reasoning: int) -> Usage:
    return Usage(
        input_tokens=inp - cached,
        output_tokens=out,
        cache_read_tokens=cached,
        cache_write_tokens=0,
        reasoning_tokens=reasoning,
        total_tokens=inp + out,
    )


# --- the recorded streams -----------------------------------------------------

ENCRYPTED = "gAAAAABoBr_KbEN8p0UuCQuZt5lFZ3EJ0aQ2yWm7s1dVtnR4kB8x_lq9Zc3MfE2hS6yT0uJvW1oXiA4rG7pL5eN9bD3cK8="
CUT_SHORT = "the stream ended before response.completed, response.incomplete or response.failed: it was cut short"
CUT_ISSUE = "block 1 (text) was cut short by the error and kept as far as it got"


def _text(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Hi there! How can I assist you today?")],
        usage=_usage(2085, 1920, 11, 0),
        stop_reason=StopReason.STOP,
        stop_reason_raw="completed",
        provenance=provenance("gpt-5.4", "resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654"),
    )


def _parallel(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [
            ToolCallContent("call_1234xyz", "get_weather", arguments='{"location":"Paris, France"}'),
            ToolCallContent("call_5678xyz", "get_weather", arguments='{"location":"Bogotá, Colombia"}', index=1),
        ],
        usage=_usage(120, 0, 41, 0),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="completed",
        provenance=provenance("gpt-4.1-2025-04-14", "resp_1234xyz"),
    )


def _reasoning(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [
            ThinkingContent('**Responding to a greeting**\n\nThe user just said "Hello!", so I will greet them back.'),
            ThinkingContent("**Offering help**\n\nI'll ask how I can assist.", ENCRYPTED),
            TextContent("Hello! How can I assist you today?"),
        ],
        usage=_usage(8, 0, 214, 192),
        stop_reason=StopReason.STOP,
        stop_reason_raw="completed",
        provenance=provenance("o4-mini-2025-04-16", "resp_6806bfc9d53c8191b0b0ad4e5eb65cd2"),
    )


def _invalid_arguments(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [ToolCallContent("call_68a1c0ffee04", "search_docs", arguments='{"query": "streaming tool calls')],
        usage=_usage(57, 0, 16, 0),
        stop_reason=StopReason.LENGTH,
        stop_reason_raw="max_output_tokens",
        provenance=provenance("gpt-4.1-2025-04-14", "resp_68a1c0ffee0000000000000000000004"),
    )


def _no_usage(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("In a shimmering forest under a sky full of stars.")],
        stop_reason=StopReason.STOP,
        stop_reason_raw="completed",
        provenance=provenance("gpt-4o-mini-2024-07-18", "resp_68a1c0ffee0000000000000000000005"),
    )


def _refusal(message: AssistantMessage) -> AssistantMessage:
    item = {
        "id": "msg_68a1c0ffee06",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I'm sorry, I cannot assist with that request."}],
    }
    return expected(
        message,
        [ProviderContent.from_block("openai-responses", item)],
        usage=_usage(45, 0, 10, 0),
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="completed",
        provenance=provenance("gpt-4o-2024-08-06", "resp_68a1c0ffee0000000000000000000006"),
    )


def _content_filter(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Here is the first part of the story")],
        usage=_usage(30, 0, 9, 0),
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="content_filter",
        provenance=provenance("gpt-4o-2024-08-06", "resp_68a1c0ffee0000000000000000000007"),
    )


def _cut_short(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("The first three primes are 2, 3")],
        stop_reason=StopReason.ERROR,
        error=CUT_SHORT,
        provenance=provenance("gpt-4o-mini-2024-07-18", "resp_68a1c0ffee0000000000000000000008"),
    )


def _failed(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("In a shimmering")],
        stop_reason=StopReason.ERROR,
        stop_reason_raw="failed",  # as the converter reads the failed response object
        error="server_error: The model failed to generate a response.",
        provenance=provenance("gpt-4o-mini-2024-07-18", "resp_123"),
    )


def _error(message: AssistantMessage) -> AssistantMessage:
    return expected(
        message,
        [TextContent("Partial")],
        stop_reason=StopReason.ERROR,
        stop_reason_raw="ERR_SOMETHING",
        error="Something went wrong",
        provenance=provenance("gpt-4o-mini-2024-07-18", "resp_68a1c0ffee0000000000000000000010"),
    )


def _web_search(message: AssistantMessage) -> AssistantMessage:
    search = {
        "id": "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "positive news today"},
    }
    annotation = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": 21,
        "url": "https://example.com/kitten",
        "title": "Kitten rescued",
    }
    citation = Citation.web(
        annotation["url"],
        annotation["title"],
        start_index=0,
        end_index=21,
        original=ProviderContent.from_block("openai-responses", annotation),
    )
    return expected(
        message,
        [*hosted_blocks(search), TextContent("A kitten was rescued.", citations=[citation])],
        usage=_usage(328, 0, 356, 0),
        stop_reason=StopReason.STOP,
        stop_reason_raw="completed",
        provenance=provenance("gpt-4.1-2025-04-14", "resp_68a1c0ffee0000000000000000000011"),
    )


CASES: dict[str, tuple[Callable[[AssistantMessage], AssistantMessage], list[str], int]] = {
    "text.json": (_text, [], 1741290958),
    "parallel_tool_calls.json": (_parallel, [], 1746000000),
    "reasoning.json": (_reasoning, [], 1745272777),
    "invalid_arguments.json": (
        _invalid_arguments,
        [
            "block 1 (tool call 'search_docs', id 'call_68a1c0ffee04'): arguments kept verbatim, not a JSON object: "
            "invalid JSON: Unterminated string starting at: line 1 column 11 (char 10)"
        ],
        1746000100,
    ),
    "no_usage.json": (_no_usage, [], 1740855869),
    "refusal.json": (_refusal, [], 1746000200),
    "content_filter.json": (_content_filter, [], 1746000300),
    "cut_short.json": (_cut_short, [CUT_ISSUE], 1746000400),
    "failed.json": (_failed, [CUT_ISSUE], 1740855869),
    "error.json": (_error, [CUT_ISSUE], 1746000500),
    "web_search.json": (_web_search, [], 1746000600),
}


def test_every_fixture_is_tested() -> None:
    assert {path.name for path in GOLDEN.iterdir()} == {*CASES, "text.sse"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_stream_folds_to_the_expected_message(name: str) -> None:
    build, issues, created = CASES[name]
    message, found = folded(stream_events(load(name)))
    assert typed(message) == build(message)
    assert found == issues
    assert message.datetime == datetime.fromtimestamp(created, UTC)  # the response's created_at
    assert message.id == message.provenance.response_id  # type: ignore[union-attr]


@pytest.mark.parametrize("name", sorted(CASES))
def test_message_id_option(name: str) -> None:
    message, _ = folded(stream_events(load(name), message_id="m-1"))
    assert message.id == "m-1"
    assert message.provenance.response_id.startswith("resp_")  # type: ignore[union-attr]


COMPLETE = sorted(name for name in CASES if load(name)[-1]["type"] in ("response.completed", "response.incomplete"))


@pytest.mark.parametrize("name", COMPLETE)
def test_same_message_as_the_final_response(name: str) -> None:
    """The non-streaming converter reads the same message from the terminal event's response object."""
    events = load(name)
    unstreamed = from_openai_responses_response(events[-1]["response"], pass_through_unknown=True)
    streamed, _ = folded(stream_events(events, message_id=unstreamed.id))
    assert streamed == unstreamed


def test_no_usage_leaves_usage_unknown() -> None:
    assert fold(stream_events(load("no_usage.json"))).usage is None


def test_reasoning_signature_comes_from_the_final_response() -> None:
    """The encrypted content is the final object's (OpenAI encrypts anew at response.completed): sent at the end."""
    events = load("reasoning.json")
    final = copy.deepcopy(events[-1])
    final["response"]["output"][0]["encrypted_content"] = "final-encryption"
    produced = list(stream_events([*events[:-1], final]))
    kinds = [
        (event.kind, event.pb.block_delta.WhichOneof("delta") if event.kind == "block_delta" else None)
        for event in produced
    ]
    signature = kinds.index(("block_delta", "signature"))
    assert produced[signature].pb.block_delta.signature.signature == "final-encryption"
    assert kinds[signature + 1 :].count(("message_stop", None)) == 1
    assert fold(produced).contents[2] == ThinkingContent(
        "**Offering help**\n\nI'll ask how I can assist.", "final-encryption"
    )


def test_block_indexes_follow_the_output_order() -> None:
    """Each item keeps block indexes from its output_item.added: blocks sent whole at the end land in place."""
    events = list(stream_events(load("web_search.json")))
    starts = [
        (event.pb.block_start.index, event.pb.block_start.content.WhichOneof("kind"))
        for event in events
        if event.kind == "block_start"
    ]
    assert starts == [(3, "text"), (0, "hosted_tool_call"), (1, "hosted_tool_result"), (2, "provider")]
    assert [block.type for block in fold(events).contents] == [
        "hosted_tool_call",
        "hosted_tool_result",
        "provider",
        "text",
    ]


# --- SSE ---------------------------------------------------------------------


def test_sse_text_gives_the_same_message_as_decoded_events() -> None:
    text = (GOLDEN / "text.sse").read_text(encoding="utf-8")
    assert text.startswith(": ")
    lines = text.splitlines(keepends=True)
    sse = list(iter_sse(lines))
    assert [json.loads(event.data) for event in sse] == load("text.json")
    assert all(event.event == json.loads(event.data)["type"] for event in sse)
    from_sse, _ = folded(stream_events_from_sse(lines, message_id="m-1"))
    from_json, _ = folded(stream_events(load("text.json"), message_id="m-1"))
    assert from_sse == from_json
    as_bytes, _ = folded(stream_events_from_sse([line.encode() for line in lines], message_id="m-1"))
    assert as_bytes == from_json


def _sse(events: list[dict[str, Any]], *, names: bool = True) -> list[str]:
    lines: list[str] = []
    for event in events:
        if names:
            lines.append(f"event: {event['type']}\n")
        lines += [f"data: {json.dumps(event)}\n", "\n"]
    return lines


def test_sse_without_event_names() -> None:
    message = fold(stream_events_from_sse(_sse(load("text.json"), names=False)))
    assert message.text_content() == "Hi there! How can I assist you today?"


def test_sse_error_event() -> None:
    lines = [
        *_sse(load("text.json")[:4]),
        "event: error\n",
        'data: {"code": "server_error", "message": "Boom"}\n',
        "\n",
    ]
    message = fold(stream_events_from_sse(lines))
    assert (message.error, message.stop_reason_raw) == ("Boom", "server_error")
    message = fold(stream_events_from_sse([*_sse(load("text.json")[:4]), "event: error\n", "data: gone\n", "\n"]))
    assert message.error == "gone"


def test_sse_stops_after_the_terminal_event_and_at_done() -> None:
    lines = [*_sse(load("text.json")), "data: not read\n", "\n"]
    assert fold(stream_events_from_sse(lines)).stop_reason is StopReason.STOP
    lines = [*_sse(load("text.json")[:-1]), "data: [DONE]\n", "\n", "data: not read\n", "\n"]
    assert fold(stream_events_from_sse(lines)).error == CUT_SHORT


def test_sse_malformed() -> None:
    events = load("text.json")
    with pytest.raises(StreamProtocolError, match=r"SSE event 1: data is not JSON"):
        list(stream_events_from_sse([*_sse(events[:1]), "data: {oops\n", "\n"]))
    mismatch = [*_sse(events[:1]), "event: response.completed\n", f"data: {json.dumps(events[1])}\n", "\n"]
    with pytest.raises(StreamProtocolError, match=r"SSE event 1: named 'response.completed' but its data is of type"):
        list(stream_events_from_sse(mismatch))


# --- the parser, piece by piece ---------------------------------------------


class Stream:
    """Builds a numbered event stream (validated by the SDK when taken)."""

    def __init__(self, response_id: str = "resp_1", model: str = "gpt-5") -> None:
        self.response_id = response_id
        self.model = model
        self.events: list[dict[str, Any]] = []
        self.add("response.created", response=self.response("in_progress", []))

    def response(self, status: str, output: list[Any], **extra: Any) -> dict[str, Any]:
        body = {
            "id": self.response_id,
            "object": "response",
            "created_at": 1750000000,
            "status": status,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": None,
        }
        body.update(extra)
        return body

    def add(self, kind: str, **fields: Any) -> Stream:
        self.events.append({"type": kind, **fields, "sequence_number": len(self.events)})
        return self

    def take(self) -> list[dict[str, Any]]:
        return validated(self.events)

    def completed(self, output: list[Any], **extra: Any) -> Stream:
        return self.add("response.completed", response=self.response("completed", output, **extra))

    def reasoning(
        self, index: int, summaries: list[str], encrypted: str | None, *, stream: bool = True
    ) -> dict[str, Any]:
        rid = f"rs_{index}"
        self.add("response.output_item.added", output_index=index, item={"id": rid, "type": "reasoning", "summary": []})
        if stream:
            for k, text in enumerate(summaries):
                part = {"type": "summary_text", "text": ""}
                self.add(
                    "response.reasoning_summary_part.added", item_id=rid, output_index=index, summary_index=k, part=part
                )
                self.add(
                    "response.reasoning_summary_text.delta",
                    item_id=rid,
                    output_index=index,
                    summary_index=k,
                    delta=text,
                )
        item: dict[str, Any] = {
            "id": rid,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t} for t in summaries],
        }
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        self.add("response.output_item.done", output_index=index, item=item)
        return item

    def message(self, index: int, parts: list[str], *, done: bool = True) -> dict[str, Any]:
        mid = f"msg_{index}"
        self.add("response.output_item.added", output_index=index, item=_message(mid, "in_progress", []))
        for k, text in enumerate(parts):
            part = {"type": "output_text", "text": "", "annotations": []}
            self.add("response.content_part.added", item_id=mid, output_index=index, content_index=k, part=part)
            self.add(
                "response.output_text.delta", item_id=mid, output_index=index, content_index=k, delta=text, logprobs=[]
            )
            if done:
                full = {"type": "output_text", "text": text, "annotations": []}
                self.add("response.content_part.done", item_id=mid, output_index=index, content_index=k, part=full)
        item = _message(mid, "completed", [{"type": "output_text", "text": t, "annotations": []} for t in parts])
        if done:
            self.add("response.output_item.done", output_index=index, item=item)
        return item

    def call(self, index: int, call_id: str, name: str, pieces: list[str]) -> dict[str, Any]:
        fid = f"fc_{index}"
        added = {"type": "function_call", "id": fid, "call_id": call_id, "name": name, "arguments": ""}
        self.add("response.output_item.added", output_index=index, item=added)
        for piece in pieces:
            self.add("response.function_call_arguments.delta", item_id=fid, output_index=index, delta=piece)
        item = {**added, "arguments": "".join(pieces), "status": "completed"}
        self.add("response.output_item.done", output_index=index, item=item)
        return item


def _message(mid: str, status: str, content: list[Any]) -> dict[str, Any]:
    return {"id": mid, "type": "message", "status": status, "role": "assistant", "content": content}


def test_feed_and_close_match_stream_events() -> None:
    events = load("reasoning.json")
    parser = OpenAIResponsesStreamParser(message_id="m-1")
    out = [event for item in events for event in parser.feed(item)]
    assert parser.ended
    assert parser.close() == []
    assert parser.events_seen == len(events)
    assert fold(out) == fold(stream_events(events, message_id="m-1"))


def test_reasoning_without_summary_is_redacted_and_without_anything_kept_whole() -> None:
    stream = Stream()
    first = stream.reasoning(0, [], "enc-1")
    second = stream.reasoning(1, [], None)
    text = stream.message(2, ["Done."])
    events = stream.completed([first, second, text]).take()
    message = fold(stream_events(events, message_id="x"))
    assert typed(message) == expected(
        message,
        [
            RedactedThinkingContent("enc-1"),
            ProviderContent.from_block("openai-responses", second),
            TextContent("Done."),
        ],
        stop_reason=StopReason.STOP,
        stop_reason_raw="completed",
        provenance=provenance("gpt-5", "resp_1"),
    )
    assert message == _converted(events, "x")


def _converted(events: list[dict[str, Any]], message_id: str) -> AssistantMessage:
    """The converter's reading of the final response, with the given id."""
    unstreamed = from_openai_responses_response(events[-1]["response"], pass_through_unknown=True)
    pb = unstreamed.pb
    pb.id = message_id
    return AssistantMessage.from_proto(pb)


def test_summary_parts_not_streamed_come_from_the_done_item() -> None:
    stream = Stream()
    item = stream.reasoning(0, ["First.", "Second."], "enc", stream=False)
    events = stream.completed([item]).take()
    message = fold(stream_events(events, message_id="x"))
    assert typed(message).contents == (ThinkingContent("First."), ThinkingContent("Second.", "enc"))
    assert message == _converted(events, "x")


def test_done_text_completes_lost_tail_deltas() -> None:
    stream = Stream()
    stream.add("response.output_item.added", output_index=0, item=_message("msg_0", "in_progress", []))
    part = {"type": "output_text", "text": "", "annotations": []}
    stream.add("response.content_part.added", item_id="msg_0", output_index=0, content_index=0, part=part)
    stream.add("response.output_text.delta", item_id="msg_0", output_index=0, content_index=0, delta="Hel", logprobs=[])
    stream.add("response.output_text.done", item_id="msg_0", output_index=0, content_index=0, text="Hello", logprobs=[])
    stream.add(
        "response.output_item.done", output_index=0, item=_message("msg_0", "completed", [{**part, "text": "Hello"}])
    )
    message = fold(stream_events(stream.completed([]).take()))
    assert message.text_content() == "Hello"


def test_function_call_arguments_from_the_done_events() -> None:
    stream = Stream()
    added = {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "f", "arguments": ""}
    stream.add("response.output_item.added", output_index=0, item=added)
    stream.add("response.function_call_arguments.done", item_id="fc_0", output_index=0, arguments='{"a": 1}')
    stream.add("response.output_item.done", output_index=0, item={**added, "arguments": '{"a": 1}'})
    message = fold(stream_events(stream.completed([]).take()))
    assert message.tool_calls()[0].args == {"a": 1}
    assert message.stop_reason is StopReason.TOOL_CALLS


def test_open_items_are_finished_by_the_terminal_event() -> None:
    stream = Stream()
    stream.message(0, ["Half"], done=False)
    wsid = "ws_1"
    added = {"id": wsid, "type": "web_search_call", "status": "in_progress", "action": {"type": "search", "query": "q"}}
    stream.add("response.output_item.added", output_index=1, item=added)
    final = {**added, "status": "completed"}
    events = stream.add(
        "response.incomplete",
        response=stream.response(
            "incomplete",
            [_message("msg_0", "incomplete", [{"type": "output_text", "text": "Half", "annotations": []}]), final],
            incomplete_details={"reason": "max_output_tokens"},
        ),
    ).take()
    parser = OpenAIResponsesStreamParser()
    produced = [event for raw in events for event in parser.feed(raw)]
    message, issues = folded(produced)
    assert issues == []
    assert typed(message).contents == (TextContent("Half"), *hosted_blocks(final))
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.LENGTH, "max_output_tokens")
    # Bug 4 of issue 16: the items that never got output_item.done are reported, and the blocks keep the output
    # order (the message's envelope and text first, the search after) although the search was sent at the end.
    assert parser.unfinished_items == [(0, "message", "msg_0"), (1, "web_search_call", "ws_1")]
    assert [block.type for block in message.contents] == ["provider", "text", "hosted_tool_call", "hosted_tool_result"]
    assert message == _converted(events, message.id)


def test_skipped_events_make_nothing() -> None:
    stream = Stream()
    stream.add("response.in_progress", response=stream.response("in_progress", []))
    stream.add("response.web_search_call.searching", item_id="ws_1", output_index=0)
    stream.add("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0, delta="raw")
    parser = OpenAIResponsesStreamParser()
    produced = [parser.feed(event) for event in stream.take()]
    assert [len(events) for events in produced] == [1, 0, 0, 0]


def test_failed_after_error_is_read_as_the_converter_reads_it_and_error_before_created() -> None:
    stream = Stream()
    stream.add("error", code="server_error", message="Boom", param=None)
    events = stream.add(
        "response.failed", response=stream.response("failed", [], error={"code": "server_error", "message": "Boom"})
    ).take()
    message = fold(stream_events(events))
    assert (message.error, message.stop_reason_raw) == ("server_error: Boom", "failed")
    assert message == _converted(events, message.id)
    # An error event with nothing after it ends the stream with that error.
    message = fold(stream_events(events[:-1]))
    assert (message.error, message.stop_reason_raw) == ("Boom", "server_error")
    message = fold(stream_events([{"type": "error", "error": {"type": "invalid_request_error", "message": "Bad"}}]))
    assert (message.error, message.stop_reason_raw, message.contents) == ("Bad", "invalid_request_error", ())
    assert len(message.id) == 36  # a UUID4: no response id came


def test_failed_with_usage_and_no_error_object() -> None:
    stream = Stream()
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 4},
        "output_tokens": 2,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12,
    }
    events = stream.add("response.failed", response=stream.response("failed", [], usage=usage)).take()
    message = fold(stream_events(events))
    assert message.error == "the response failed"
    assert message.usage == Usage(
        input_tokens=6, output_tokens=2, cache_read_tokens=0, cache_write_tokens=4, reasoning_tokens=0, total_tokens=12
    )


def test_options() -> None:
    stream = Stream()
    stream.events[0]["response"]["model"] = ""
    stream.message(0, ["Hi"])
    events = stream.completed([]).take()
    message = fold(stream_events(events, model="fallback", provider="azure", api="azure-responses"))
    assert message.provenance == Provenance("azure", "azure-responses", "fallback", "resp_1")
    assert message.datetime == datetime.fromtimestamp(1750000000, UTC)


def test_empty_stream_is_cut_short() -> None:
    events = list(stream_events([]))
    assert [event.kind for event in events] == ["message_start", "error"]
    assert fold(events).error == CUT_SHORT


# --- malformed input ----------------------------------------------------------


def _broken(
    edit: Callable[[list[dict[str, Any]]], Any],
    build: Callable[[Stream], Any] | None = None,
    *,
    renumber: bool = True,
) -> list[Any]:
    """A valid stream (a one-part message by default), then broken by ``edit`` (renumbered unless told not to)."""
    stream = Stream()
    if build is not None:
        build(stream)
    else:
        stream.message(0, ["Hello"])
    stream.completed([])
    events = copy.deepcopy(stream.take())
    edit(events)
    if renumber:
        for number, event in enumerate(events):
            event["sequence_number"] = number
    return events


def _set(index: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def edit(events: list[dict[str, Any]]) -> None:
        events[index][key] = value

    return edit


def _drop(index: int) -> Callable[[list[dict[str, Any]]], None]:
    return lambda events: events.pop(index)


MALFORMED: list[tuple[str, list[Any], str]] = [
    ("not an object", [[1]], r"event 0: an event must be a JSON object, got an array"),
    ("no type", [{"sequence_number": 0}], r"event 0: event.type must be a string, got null"),
    ("audio", _broken(_set(1, "type", "response.audio.delta")), r"audio output is not supported"),
    (
        "before created",
        _broken(_drop(0)),
        r"event 0 \(response.output_item.added\): the stream must begin with response.created",
    ),
    (
        "sequence goes back",
        _broken(_set(2, "sequence_number", 1), renumber=False),
        r"event 2 .*sequence_number 1 does not follow 1",
    ),
    (
        "sequence not an integer",
        _broken(_set(2, "sequence_number", "3"), renumber=False),
        r"sequence_number must be a non-negative integer",
    ),
    ("delta before part", _broken(_drop(2)), r"event 2 \(response.output_text.delta\): content part 0 was never added"),
    ("delta for unknown item", _broken(_set(3, "output_index", 7)), r"event 3 .*output item 7 was never added"),
    ("item id mismatch", _broken(_set(3, "item_id", "msg_other")), r"item_id 'msg_other' does not match output item 0"),
    ("delta not a string", _broken(_set(3, "delta", 5)), r"event 3 .*event.delta must be a string, got a number"),
    ("added twice", _broken(lambda e: e.insert(2, copy.deepcopy(e[1]))), r"output item 0 was added twice"),
    (
        "done contradicts deltas",
        _broken(lambda e: e[4]["part"].update(text="Goodbye")),
        r"event 4 \(response.content_part.done\): the final text \(7 characters\) contradicts the 5 characters",
    ),
    (
        "delta after part done",
        _broken(lambda e: e.insert(5, copy.deepcopy(e[3]))),
        r"event 5 \(response.output_text.delta\): content part 0 is already done",
    ),
    (
        "response id changes",
        _broken(lambda e: e[-1]["response"].update(id="resp_2")),
        r"response.id changed from 'resp_1' to 'resp_2'",
    ),
    (
        "event after the end",
        _broken(lambda e: e.append(copy.deepcopy(e[1]))),
        r"event 7 .*an event after the stream ended \(response.completed\)",
    ),
    (
        "function call without call_id",
        _broken(lambda e: e[1]["item"].pop("call_id"), lambda s: s.call(0, "call_1", "f", ["{}"])),
        r"event 1 .*item.call_id must be a string, got null",
    ),
    (
        "arguments delta for a message",
        _broken(lambda e: e[3].update(type="response.function_call_arguments.delta")),
        r"output item 0 is a 'message' item, not function_call",
    ),
    (
        "item done as another type",
        _broken(lambda e: e[-2]["item"].update(type="reasoning")),
        r"output item 0 was added as 'message', done as 'reasoning'",
    ),
    (
        "negative usage",
        _broken(lambda e: e[-1]["response"].update(usage={"input_tokens": -3, "output_tokens": 1})),
        r"event 6 \(response.completed\): invalid OpenAI Responses stream usage: usage.input_tokens",
    ),
    (
        "summary delta for unknown part",
        _broken(lambda e: e[3].update(summary_index=4), lambda s: s.reasoning(0, ["x"], "enc")),
        r"summary part 4 was never added",
    ),
]


@pytest.mark.parametrize(("events", "match"), [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_malformed_events_raise(events: list[Any], match: str) -> None:
    with pytest.raises(StreamProtocolError, match=match):
        list(stream_events(events))


# --- real traffic (issue 16) -------------------------------------------------


def test_stream_and_converter_agree_on_unknown_items_by_default() -> None:
    """Bug 5 of issue 16: the parser kept unknown items while the converter refused them; both keep them now."""
    stream = Stream()
    item = {"id": "ctc_1", "type": "custom_tool_call", "status": "completed", "call_id": "c", "name": "p", "input": "x"}
    stream.add("response.output_item.added", output_index=0, item={**item, "status": "in_progress", "input": ""})
    stream.add("response.custom_tool_call_input.delta", item_id="ctc_1", output_index=0, delta="x")
    stream.add("response.output_item.done", output_index=0, item=item)
    events = stream.completed([item]).take()
    message = fold(stream_events(events))
    assert message.contents == (ProviderContent.from_block("openai-responses", item),)
    unstreamed = from_openai_responses_response(events[-1]["response"])  # default options, as the parser's
    unstreamed.pb.id = message.id
    assert message == unstreamed


def test_unknown_event_types_are_skipped_and_listed() -> None:
    stream = Stream()
    stream.add("response.apply_patch_call_operation_diff.delta", item_id="ap_1", output_index=0, delta="+x")
    text = stream.message(0, ["Done."])
    events = stream.completed([text]).events  # not validated: the SDK does not know the skipped event either
    parser = OpenAIResponsesStreamParser()
    produced = [out for event in events for out in parser.feed(event)]
    assert parser.skipped_events == ["response.apply_patch_call_operation_diff.delta"]
    assert typed(fold(produced)).contents == (TextContent("Done."),)


def test_final_object_wins_for_encrypted_content_and_logprobs() -> None:
    """OpenAI encrypts reasoning and compaction anew and rounds logprobs in response.completed: the fold takes those."""
    stream = Stream()
    reasoning = stream.reasoning(0, ["Think."], "enc-streamed")
    compaction = {"id": "cmp_1", "type": "compaction", "encrypted_content": "cmp-streamed"}
    stream.add("response.output_item.added", output_index=1, item=compaction)
    stream.add("response.output_item.done", output_index=1, item=compaction)
    mid = "msg_2"
    stream.add("response.output_item.added", output_index=2, item=_message(mid, "in_progress", []))
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    stream.add("response.content_part.added", item_id=mid, output_index=2, content_index=0, part=part)
    streamed = [{"token": "Hi", "logprob": -1.9e-07, "bytes": [72, 105], "top_logprobs": []}]
    stream.add(
        "response.output_text.delta", item_id=mid, output_index=2, content_index=0, delta="Hi", logprobs=streamed
    )
    stream.add("response.content_part.done", item_id=mid, output_index=2, content_index=0, part={**part, "text": "Hi"})
    final_part = {**part, "text": "Hi", "logprobs": [{**streamed[0], "logprob": -0.0}]}
    text = _message(mid, "completed", [final_part])
    stream.add("response.output_item.done", output_index=2, item=text)
    final = [
        {**reasoning, "encrypted_content": "enc-final"},
        {**compaction, "encrypted_content": "cmp-final"},
        text,
    ]
    events = stream.completed(final).take()
    message = fold(stream_events(events, message_id="x"))
    assert message == _converted(events, "x")
    thinking, kept, answer = typed(message).contents
    assert thinking == ThinkingContent("Think.", "enc-final")
    assert kept == ProviderContent.from_block("openai-responses", final[1])
    assert [t.logprob for t in answer.logprobs] == [-0.0]  # type: ignore[union-attr]


def test_items_cut_short_stay_open_in_place_and_are_listed() -> None:
    stream = Stream()
    stream.reasoning(0, ["Plan."], "enc")
    stream.message(1, ["Half"], done=False)
    parser = OpenAIResponsesStreamParser()
    produced = [out for event in stream.take() for out in parser.feed(event)]
    produced += parser.close()
    message, issues = folded(produced)
    assert parser.unfinished_items == [(1, "message", "msg_1")]
    assert message.error == CUT_SHORT
    # The done reasoning item is whole (its envelope, its signed thinking); the cut text stays open, after it.
    assert [block.type for block in message.contents] == ["provider", "thinking", "text"]
    assert typed(message).contents == (ThinkingContent("Plan.", "enc"), TextContent("Half"))
    assert issues == ["block 4 (text) was cut short by the error and kept as far as it got"]
