"""The stream fold: each written rule, the chunk sum, replay, and SSE parsing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg as am
from agentmsg.streaming import (
    AssistantMessageChunk,
    IncompleteStreamError,
    StreamAccumulator,
    StreamEvent,
    StreamProtocolError,
    events_from_message,
    fold,
    iter_sse,
)

E = StreamEvent
PROV = am.Provenance("anthropic", "anthropic-messages", "claude-x", "")


def start(message_id: str = "m1") -> StreamEvent:
    return E.message_start(message_id, provenance=PROV, timestamp=am.UserMessage.text("x", timestamp=7).timestamp)


def test_a_stream_folds_into_its_message() -> None:
    events = [
        start(),
        E.block_start(0, am.ThinkingContent()),
        E.thinking_delta(0, "Let me "),
        E.thinking_delta(0, "think."),
        E.signature_delta(0, "EqQB"),
        E.signature_delta(0, "Cg=="),
        E.block_stop(0),
        E.block_start(1, am.TextContent()),
        E.text_delta(1, "Hel"),
        E.text_delta(1, "lo"),
        E.block_stop(1),
        E.usage_update(am.Usage(input_tokens=10)),
        E.usage_update(am.Usage(output_tokens=3)),
        E.usage_update(am.Usage(output_tokens=7)),
        E.message_stop("stop", "end_turn", response_id="msg_9"),
    ]
    message = fold(events)
    assert message.id == "m1"
    assert message.timestamp == 7
    assert message.contents == (am.ThinkingContent("Let me think.", "EqQBCg=="), am.TextContent("Hello"))
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 7)  # running totals replace
    assert message.usage.known("cache_read_tokens") is None  # never reported: unknown
    assert (message.stop_reason, message.stop_reason_raw) == (am.StopReason.STOP, "end_turn")
    assert message.provenance is not None
    assert (message.provenance.model, message.provenance.response_id) == ("claude-x", "msg_9")


def test_parallel_tool_calls_interleave_by_index() -> None:
    events = [
        start(),
        E.block_start(0, am.ToolCallContent("call_a", "weather", arguments="")),
        E.block_start(1, am.ToolCallContent("call_b", "time", arguments="")),
        E.arguments_delta(1, '{"tz": '),
        E.arguments_delta(0, '{"city": '),
        E.arguments_delta(0, '"Paris"}'),
        E.arguments_delta(1, '"CET"}'),
        E.block_stop(1),
        E.block_stop(0),
        E.message_stop("tool_calls"),
    ]
    message = fold(events)
    calls = message.tool_calls()
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_a", "weather", '{"city": "Paris"}'),
        ("call_b", "time", '{"tz": "CET"}'),
    ]
    assert calls[0].args == {"city": "Paris"}


def test_invalid_argument_json_is_kept_and_reported() -> None:
    accumulator = StreamAccumulator().extend(
        [
            start(),
            E.block_start(0, am.ToolCallContent("call_a", "search", arguments="")),
            E.arguments_delta(0, '{"q": "cats", '),
            E.block_stop(0),
            E.message_stop("tool_calls"),
        ]
    )
    message = accumulator.finish()
    (call,) = message.tool_calls()
    assert call.arguments == '{"q": "cats", '
    assert call.arguments_error is not None
    assert len(accumulator.issues) == 1
    assert "block 0 (tool call 'search', id 'call_a')" in accumulator.issues[0]


def test_signature_attaches_to_text_and_tool_calls_too() -> None:
    message = fold(
        [
            start(),
            E.block_start(0, am.TextContent()),
            E.text_delta(0, "hi"),
            E.signature_delta(0, "g1"),
            E.block_stop(0),
            E.block_start(1, am.ToolCallContent("c", "f", arguments="")),
            E.signature_delta(1, "g2"),
            E.block_stop(1),
            E.message_stop("tool_calls"),
        ]
    )
    assert message.contents[0] == am.TextContent("hi", signature="g1")
    assert message.tool_calls()[0].signature == "g2"
    assert message.tool_calls()[0].args == {}


def test_blocks_are_ordered_by_index_and_gaps_are_allowed() -> None:
    message = fold(
        [
            start(),
            E.block_start(2, am.TextContent()),
            E.text_delta(2, "second"),
            E.block_start(0, am.TextContent()),
            E.text_delta(0, "first"),
            E.block_stop(0),
            E.block_stop(2),
            E.message_stop("stop"),
        ]
    )
    assert [c.content for c in message.contents] == ["first", "second"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("events", "needle"),
    [
        ([E.block_start(0, am.TextContent())], "before message_start"),
        ([start(), E.text_delta(0, "x")], "delta for block 0 before its block_start"),
        ([start(), E.block_start(0, am.TextContent()), E.block_stop(0), E.text_delta(0, "x")], "after its block_stop"),
        (
            [start(), E.block_start(0, am.TextContent()), E.thinking_delta(0, "x")],
            "thinking delta cannot go to block 0",
        ),
        ([start(), E.block_start(0, am.ThinkingContent()), E.arguments_delta(0, "x")], "tool_call delta"),
        ([start(), E.block_start(0, am.RedactedThinkingContent("r")), E.signature_delta(0, "s")], "signature delta"),
        ([start(), E.block_start(0, am.TextContent("a")), E.block_start(0, am.TextContent("b"))], "started twice"),
        ([start(), E.block_start(0, am.ImageContent.from_url("https://x.test/a.png"))], "cannot carry image"),
        ([start(), E.message_stop("stop"), E.block_start(0, am.TextContent())], "after the stream ended"),
        ([start(), E.message_stop("stop"), E.usage_update(am.Usage(input_tokens=1))], "after the stream ended"),
        ([start(), E.block_stop(3)], "never started"),
        ([start("a"), start("b")], "second message_start"),
    ],
)
def test_protocol_errors_say_what_and_which_block(events: list[StreamEvent], needle: str) -> None:
    with pytest.raises(StreamProtocolError, match=needle):
        StreamAccumulator().extend(events)


def test_an_open_block_at_message_stop_is_an_error_naming_it() -> None:
    accumulator = StreamAccumulator().extend(
        [
            start(),
            E.block_start(0, am.TextContent()),
            E.block_stop(0),
            E.block_start(1, am.ToolCallContent("call_z", "lookup", arguments="")),
            E.arguments_delta(1, '{"a"'),
            E.message_stop("tool_calls"),
        ]
    )
    with pytest.raises(IncompleteStreamError, match="block 1 \\(tool call 'lookup', id 'call_z'\\)") as info:
        accumulator.finish()
    assert info.value.open_blocks == (1,)


def test_a_stream_that_never_ended_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError, match="not ended"):
        StreamAccumulator().extend([start(), E.block_start(0, am.TextContent())]).finish()
    with pytest.raises(IncompleteStreamError, match="never started"):
        StreamAccumulator().finish()


def test_an_error_keeps_what_was_generated() -> None:
    accumulator = StreamAccumulator().extend(
        [
            start(),
            E.block_start(0, am.TextContent()),
            E.text_delta(0, "partial ans"),
            E.error("upstream overloaded", code="overloaded_error"),
        ]
    )
    message = accumulator.finish()
    assert message.text_content() == "partial ans"
    assert (message.stop_reason, message.error, message.stop_reason_raw) == (
        am.StopReason.ERROR,
        "upstream overloaded",
        "overloaded_error",
    )
    assert "cut short" in accumulator.issues[0]
    aborted = fold([start(), E.error("user pressed stop", aborted=True)])
    assert aborted.stop_reason is am.StopReason.ABORT
    assert aborted.contents == ()


def test_numbered_duplicates_are_ignored_and_gaps_are_errors() -> None:
    events = [
        e.with_sequence(i)
        for i, e in enumerate([start(), E.block_start(0, am.TextContent()), E.text_delta(0, "a"), E.text_delta(0, "b")])
    ]
    accumulator = StreamAccumulator()
    accumulator.extend([events[0], events[1], events[2], events[2], events[1], events[3]])
    assert accumulator.duplicates == 2
    accumulator.extend([E.block_stop(0).with_sequence(4), E.message_stop("stop").with_sequence(5)])
    assert accumulator.finish().text_content() == "ab"
    with pytest.raises(StreamProtocolError, match=r"events 2\.\.2 are missing"):
        StreamAccumulator().extend([events[0], events[1], events[3]])


def test_unnumbered_repeats_of_structural_events_are_ignored() -> None:
    first = start()
    block = E.block_start(0, am.TextContent())
    stop = E.message_stop("stop")
    accumulator = StreamAccumulator().extend(
        [first, first, block, block, E.text_delta(0, "x"), E.block_stop(0), E.block_stop(0), stop, stop]
    )
    assert accumulator.duplicates == 4
    assert accumulator.finish().text_content() == "x"


def test_snapshot_shows_the_message_so_far() -> None:
    accumulator = StreamAccumulator().extend([start(), E.block_start(0, am.TextContent()), E.text_delta(0, "so far")])
    assert accumulator.snapshot().text_content() == "so far"
    assert accumulator.started
    assert not accumulator.done


def test_chunks_add_like_langchain() -> None:
    parts = [
        AssistantMessageChunk.from_event(e)
        for e in [
            start(),
            E.block_start(0, am.ToolCallContent("call_1", "f", arguments="")),
            E.arguments_delta(0, '{"a":'),
            E.arguments_delta(0, " 1}"),
            E.block_start(1, am.TextContent()),
            E.text_delta(1, "done"),
            E.usage_update(am.Usage(input_tokens=5, output_tokens=1)),
            E.usage_update(am.Usage(output_tokens=9)),
            E.message_stop("tool_calls"),
        ]
    ]
    total = sum(parts, AssistantMessageChunk())
    assert total.text == "done"
    message = total.to_message()
    assert message.tool_calls()[0].args == {"a": 1}
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (5, 9)
    assert message.stop_reason is am.StopReason.TOOL_CALLS
    # Grouping does not matter.
    left = (parts[0] + parts[1]) + (parts[2] + parts[3])
    right = parts[0] + (parts[1] + (parts[2] + parts[3]))
    assert left.to_message().tool_calls() == right.to_message().tool_calls()
    # A signature chunk that arrives before its block's text still lands on it.
    signed = AssistantMessageChunk.from_event(E.signature_delta(0, "sig")) + AssistantMessageChunk.from_event(
        E.thinking_delta(0, "t")
    )
    assert signed.to_message().thinking()[0] == am.ThinkingContent("t", "sig")
    with pytest.raises(StreamProtocolError, match="ids differ"):
        AssistantMessageChunk.from_event(
            E.block_start(0, am.ToolCallContent("a", "f"))
        ) + AssistantMessageChunk.from_event(E.block_start(0, am.ToolCallContent("b", "f")))
    with pytest.raises(StreamProtocolError, match="cannot merge"):
        AssistantMessageChunk.from_event(E.text_delta(0, "x")) + AssistantMessageChunk.from_event(
            E.thinking_delta(0, "y")
        )


def test_replay_round_trips_and_chunks() -> None:
    message = am.AssistantMessage(
        [
            am.ThinkingContent("abcdefg", "sig"),
            am.RedactedThinkingContent("zzz"),
            am.TextContent("hello", signature="t"),
            am.ToolCallContent("c", "f", {"x": [1, 2]}),
            am.ProviderContent.from_block("anthropic", {"type": "server_tool_use", "id": "s"}),
        ],
        usage=am.Usage(1, 2, 3),
        stop_reason="tool_calls",
        stop_reason_raw="tool_use",
        provenance=PROV,
        id="r1",
        timestamp=9,
    )
    events = events_from_message(message, chunk_size=2)
    assert fold(events) == message
    assert sum(1 for e in events if e.kind == "block_delta") > 8
    assert AssistantMessageChunk.from_message(message).to_message() == message
    failed = am.AssistantMessage([am.TextContent("part")], error="boom", stop_reason="error", id="f", timestamp=1)
    assert fold(events_from_message(failed)) == failed
    with pytest.raises(am.ValidationError):
        events_from_message(am.UserMessage.text("no"))  # type: ignore[arg-type]


def live_stream() -> list[StreamEvent]:
    """Thinking with a signature, text with a citation and logprobs, two tool calls streaming side by side."""
    cite = am.Citation(cited_text="Paris is in France", original=am.ProviderContent.from_block("x", {"k": 1}))
    return [
        start(),
        E.block_start(0, am.ThinkingContent("")),
        E.thinking_delta(0, "Let me "),
        E.thinking_delta(0, "think."),
        E.signature_delta(0, "c2lnbmF0"),
        E.signature_delta(0, "dXJl"),
        E.block_stop(0),
        E.block_start(1, am.TextContent("")),
        E.text_delta(1, "Paris"),
        E.logprobs_delta(1, [am.TokenLogprob("Paris", -0.1)]),
        E.citation_delta(1, cite),
        E.text_delta(1, ", then"),
        E.logprobs_delta(1, [am.TokenLogprob(",", -0.2), am.TokenLogprob(" then", -0.3)]),
        E.block_stop(1),
        E.block_start(2, am.ToolCallContent("call_1", "weather", arguments="")),
        E.block_start(3, am.ToolCallContent("call_2", "time", arguments="")),
        E.arguments_delta(2, '{"city": '),
        E.arguments_delta(3, '{"tz": "Europe/'),
        E.arguments_delta(2, '"Paris"}'),
        E.usage_update(am.Usage(10, 3)),
        E.arguments_delta(3, 'Paris"}'),
        E.block_stop(3),
        E.block_stop(2),
        E.usage_update(am.Usage(output_tokens=40)),
        E.message_stop("tool_calls", "tool_use"),
    ]


@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_a_replay_of_the_fold_so_far_then_the_rest_folds_the_same_message(chunk: int | None) -> None:
    events = live_stream()
    message = fold(events)
    for cut in range(len(events) + 1):
        so_far = StreamAccumulator().extend(events[:cut])
        replayed = so_far.replay(chunk_size=chunk)
        assert all(e.sequence is None for e in replayed)
        late = StreamAccumulator().extend(replayed).extend(events[cut:])
        assert late.finish() == message, cut
        if cut < len(events):
            assert len(replayed) <= cut or chunk is not None  # one delta per fragment kind, when not cut up
    whole = StreamAccumulator().extend(events)
    assert fold(whole.replay()) == message  # an ended fold replays its end too


def test_a_replay_keeps_a_block_that_took_an_empty_fragment_not_fresh() -> None:
    events = [start(), E.block_start(0, am.TextContent("")), E.text_delta(0, "")]
    replayed = StreamAccumulator().extend(events).replay()
    assert [e.kind for e in replayed] == ["message_start", "block_start", "block_delta"]
    late = StreamAccumulator().extend(replayed)
    with pytest.raises(StreamProtocolError, match="started twice"):  # as the first fold would refuse it
        late.add(events[1])


def test_a_replay_of_nothing_is_nothing_and_chunk_size_is_checked() -> None:
    assert StreamAccumulator().replay() == []
    with pytest.raises(am.ValidationError, match="chunk_size"):
        StreamAccumulator().extend([start()]).replay(chunk_size=0)
    numbered = StreamAccumulator().extend(
        [start().with_sequence(0), E.block_start(0, am.TextContent()).with_sequence(1)]
    )
    assert numbered.last_sequence == 1
    assert [e.sequence for e in numbered.replay()] == [None, None]


def test_events_have_bytes_and_json_forms() -> None:
    event = E.arguments_delta(3, '{"a"').with_sequence(12)
    assert StreamEvent.from_bytes(event.to_bytes()) == event
    assert StreamEvent.from_json(event.to_json()) == event
    assert (event.kind, event.sequence) == ("block_delta", 12)
    assert E.text_delta(0, "x").sequence is None


texts = st.text(max_size=30)
blocks = st.one_of(
    st.builds(am.TextContent, texts, signature=st.sampled_from(["", "s"])),
    st.builds(am.ThinkingContent, texts, st.sampled_from(["", "sig=="])),
    st.builds(am.RedactedThinkingContent, st.text(min_size=1, max_size=10)),
    st.builds(
        lambda i, a, s: am.ToolCallContent(i, "tool", arguments=a, signature=s),
        st.text("abc123", min_size=1, max_size=8),
        texts,
        st.sampled_from(["", "g"]),
    ),
)
messages = st.builds(
    lambda contents, usage, reason, chunk: (
        am.AssistantMessage(contents, usage=usage, stop_reason=reason, id="p", timestamp=3),
        chunk,
    ),
    st.lists(blocks, min_size=1, max_size=5),
    st.none() | st.builds(am.Usage, st.none() | st.integers(0, 10**9), st.none() | st.integers(0, 10**9)),
    st.sampled_from([None, *am.StopReason]),
    st.none() | st.integers(1, 7),
)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_any_message_to_events_and_back_is_the_same(case: tuple[am.AssistantMessage, int | None]) -> None:
    message, chunk = case
    events = events_from_message(message, chunk_size=chunk)
    assert fold(events) == message
    assert fold(StreamEvent.from_bytes(e.to_bytes()) for e in events) == message
    assert sum((AssistantMessageChunk.from_event(e) for e in events), AssistantMessageChunk()).to_message() == message


@settings(max_examples=100, deadline=None)
@given(messages, st.integers(0, 1000))
def test_any_stream_cut_anywhere_replays_to_the_same_message(
    case: tuple[am.AssistantMessage, int | None], where: int
) -> None:
    message, chunk = case
    events = events_from_message(message, chunk_size=chunk)
    cut = where % (len(events) + 1)
    replayed = StreamAccumulator().extend(events[:cut]).replay(chunk_size=chunk)
    assert StreamAccumulator().extend(replayed).extend(events[cut:]).finish() == message


def test_sse_parsing() -> None:
    text = (
        ": keep-alive comment\n"
        "event: content_block_delta\n"
        'data: {"a":\n'
        "data: 1}\n"
        "id: 7\n"
        "\n"
        "data: [DONE]\r\n"
        "\r\n"
        "event: ping\n"
        "data: {}"
    )
    events = list(iter_sse(text.splitlines(keepends=True)))
    assert [(e.event, e.data, e.id) for e in events] == [
        ("content_block_delta", '{"a":\n1}', "7"),
        ("message", "[DONE]", "7"),
        ("ping", "{}", "7"),
    ]
    assert events[0].json() == {"a": 1}
    assert list(iter_sse([b"data: x\n", b"\n"])) == [iter_sse(["data: x", ""]).__next__()]


def test_sse_from_lines_without_endings_and_from_raw_chunks() -> None:
    from agentmsg.streaming import iter_sse_chunks

    text = 'event: ping\ndata: {"type":"ping"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    expected = [("ping", '{"type":"ping"}'), ("message_stop", '{"type":"message_stop"}')]
    assert [(e.event, e.data) for e in iter_sse(text.splitlines())] == expected  # endings stripped
    assert [(e.event, e.data) for e in iter_sse([text])] == expected  # one item, several lines
    raw = ("\ufeff" + text.replace("\n", "\r\n") + "data: é€").encode()
    for size in (1, 2, 3, 7, len(raw)):
        pieces = [raw[i : i + size] for i in range(0, len(raw), size)]
        events = [(e.event, e.data) for e in iter_sse_chunks(pieces)]
        assert events == [*expected, ("message", "é€")], size
