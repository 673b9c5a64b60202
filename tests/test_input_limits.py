"""Hostile sizes stay bounded: values nested 100,000 deep, 100,000 blocks, 50 MB strings.

Each case runs a decoder under a hang bound (``fuzzing.time_bound``: 60 s of CPU
time, 180 s under soak; the slowest case takes about 3 s of CPU traced, and CPU
time does not grow when other processes load the machine) and measures the Python heap with
``tracemalloc``: the peak must stay under the stated bound (a small multiple of
the input). The answer is a value or an AgentMsgError, as for any bad input.
``AGENTMSG_SOAK=1`` raises the block counts to 100,000 for every decoder
(the default run does 100,000 for binary protobuf, 10,000 for the JSON forms)
and the 50 MB string through every decoder (the default: five of them).
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fuzzing import SOAK, Hang, nested, nested_message_bytes, time_bound

import agentmsg as am
from agentmsg import dict_form
from agentmsg.providers import (
    adaline,
    anthropic,
    anthropic_stream,
    gemini,
    gemini_stream,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from agentmsg.sessions import Session
from agentmsg.streaming import StreamEvent, fold

MiB = 1 << 20
LEVELS = 100_000
BLOCKS = 100_000 if SOAK else 10_000
GIANT = 50 * MiB
BOUND = 180.0 if SOAK else 60.0  # CPU seconds: the hang bound (100,000 blocks of pure-Python ProtoJSON: ~10 s traced)


def test_the_hang_bound_trips_on_a_call_that_spins_and_not_on_one_that_waits() -> None:
    def spin() -> None:
        while True:
            pass

    with pytest.raises(Hang, match="CPU time"), time_bound(0.2):
        spin()
    with time_bound(0.2):
        time.sleep(0.5)  # waiting uses no CPU: only spinning counts


def measure(call: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``call`` under the hang bound: (its value or AgentMsgError, the traced heap peak in bytes)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        with time_bound(BOUND):
            try:
                result: Any = call()
            except am.AgentMsgError as exc:
                result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def report(name: str, peak: int, result: Any) -> None:
    kind = type(result).__name__
    print(f"\n[limits] {name}: peak {peak / MiB:.1f} MiB -> {kind}", file=sys.stderr)


# --- nesting ---------------------------------------------------------------------------------

DEEP_TEXT = "[" * LEVELS + "]" * LEVELS
DEEP_OBJECT_TEXT = '{"a":' * LEVELS + "1" + "}" * LEVELS


def _sse(data: str, event: str | None = None) -> list[str]:
    return [*([f"event: {event}\n"] if event else []), f"data: {data}\n", "\n"]


TEXT_CASES: dict[str, Callable[[], Any]] = {
    "BaseMessage.from_json": lambda: am.BaseMessage.from_json(DEEP_OBJECT_TEXT),
    "Conversation.from_json": lambda: am.Conversation.from_json('{"messages": ' + DEEP_TEXT + "}"),
    "StreamEvent.from_json": lambda: StreamEvent.from_json(DEEP_OBJECT_TEXT),
    "adaline.from_adaline_json": lambda: adaline.from_adaline_json(DEEP_TEXT),
    "Session.import_jsonl": lambda: Session.import_jsonl(DEEP_TEXT),
    "openai_chat_stream SSE": lambda: fold(openai_chat_stream.stream_events_from_sse(_sse(DEEP_TEXT))),
    "openai_responses_stream SSE": lambda: fold(openai_responses_stream.stream_events_from_sse(_sse(DEEP_TEXT))),
    "anthropic_stream SSE": lambda: fold(anthropic_stream.stream_events_from_sse(_sse(DEEP_TEXT, "message_start"))),
    "gemini_stream SSE": lambda: fold(gemini_stream.stream_events_from_sse(_sse(DEEP_TEXT))),
    "tool call arguments": lambda: am.ToolCallContent("c", "f", arguments=DEEP_OBJECT_TEXT).args,
    "openai_chat arguments": lambda: openai_chat.from_openai_chat(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": DEEP_OBJECT_TEXT}}
                ],
            }
        ],
        allow_invalid_arguments=True,
    ),
    "anthropic_stream input_json_delta": lambda: fold(
        anthropic_stream.stream_events(
            [
                {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": DEEP_OBJECT_TEXT},
                },
                {"type": "content_block_stop", "index": 0},
                {"type": "message_stop"},
            ]
        )
    ),
}


@pytest.mark.parametrize("name", list(TEXT_CASES))
def test_text_nested_100k_levels(name: str) -> None:
    result, peak = measure(TEXT_CASES[name])
    report(f"{LEVELS} levels, {name}", peak, result)
    if isinstance(result, am.ToolCallContent | list | am.AssistantMessage):
        pass  # the argument text is kept verbatim: not parsed, never recursed into
    else:
        assert isinstance(result, am.AgentMsgError)
    assert peak < 64 * MiB


def _deep_payloads() -> Iterator[tuple[str, Callable[[], Any]]]:
    deep = nested(LEVELS)
    yield "openai_chat content", lambda: openai_chat.from_openai_chat([{"role": "user", "content": deep}])
    yield (
        "anthropic tool_use input",
        lambda: anthropic.from_anthropic(
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": deep}]}
                ]
            }
        ),
    )
    yield (
        "gemini functionCall args",
        lambda: gemini.from_gemini(
            {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": deep}}]}]}
        ),
    )
    yield (
        "gemini functionResponse",
        lambda: gemini.from_gemini(
            {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": deep}}]}]}
        ),
    )
    yield "openai_responses item", lambda: openai_responses.from_openai_responses({"input": [deep]})
    yield (
        "seed-1 tool call metadata",
        lambda: dict_form.messages_from_dicts(
            [{"role": "assistant", "contents": [{"type": "tool_call", "id": "c", "name": "f", "metadata": deep}]}]
        ),
    )
    yield (
        "seed-1 custom details",
        lambda: dict_form.messages_from_dicts(
            [{"role": "custom", "custom_type": "x", "contents": [], "details": deep}]
        ),
    )
    yield (
        "adaline metadata",
        lambda: adaline.from_adaline(
            [{"role": "user", "content": [{"modality": "text", "value": "x", "metadata": deep}]}]
        ),
    )
    yield "ProtoJSON dict", lambda: am.BaseMessage.from_json({"id": "x", "user": deep})


@pytest.mark.parametrize(("name", "call"), list(_deep_payloads()), ids=[name for name, _ in _deep_payloads()])
def test_decoded_values_nested_100k_levels(name: str, call: Callable[[], Any]) -> None:
    result, peak = measure(call)
    report(f"{LEVELS} levels, {name}", peak, result)
    assert isinstance(result, am.AgentMsgError | list | am.BaseMessage)
    assert peak < 64 * MiB


def test_protobuf_nested_100k_levels() -> None:
    data = nested_message_bytes(LEVELS)
    shallow = am.BaseMessage.from_bytes(nested_message_bytes(3))  # the encoding is right when shallow
    assert isinstance(shallow, am.CustomMessage)
    result, peak = measure(lambda: am.BaseMessage.from_bytes(data, validate=True))
    report(f"{LEVELS} levels, protobuf bytes ({len(data) / MiB:.1f} MiB)", peak, result)
    assert isinstance(result, am.DecodeError)  # protobuf's recursion limit (100) refuses it
    assert peak < 64 * MiB


# --- many blocks -----------------------------------------------------------------------------


def test_100k_blocks_in_binary_protobuf() -> None:
    message = am.UserMessage([am.TextContent(f"b{i}") for i in range(100_000)], id="u", timestamp=1)
    data = message.to_bytes()
    result, peak = measure(lambda: am.BaseMessage.from_bytes(data, validate=True))
    report(f"100000 blocks, protobuf ({len(data) / MiB:.1f} MiB)", peak, result)
    assert result == message
    assert peak < 64 * MiB


def _many_blocks() -> Iterator[tuple[str, Callable[[], Any]]]:
    n = BLOCKS
    texts = [f"b{i}" for i in range(n)]
    message = am.UserMessage([am.TextContent(t) for t in texts], id="u", timestamp=1)
    protojson = message.to_json()
    yield "ProtoJSON", lambda: am.BaseMessage.from_json(protojson, validate=True)
    parts = [{"type": "text", "text": t} for t in texts]
    yield "openai_chat", lambda: openai_chat.from_openai_chat([{"role": "user", "content": parts}])
    yield "anthropic", lambda: anthropic.from_anthropic({"messages": [{"role": "user", "content": parts}]})
    yield "gemini", lambda: gemini.from_gemini({"contents": [{"role": "user", "parts": [{"text": t} for t in texts]}]})
    yield (
        "openai_responses",
        lambda: openai_responses.from_openai_responses(
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": t} for t in texts]}]}
        ),
    )
    yield (
        "seed-1",
        lambda: dict_form.messages_from_dicts(
            [{"role": "user", "contents": [{"type": "text", "content": t} for t in texts]}]
        ),
    )
    yield (
        "adaline",
        lambda: adaline.from_adaline([{"role": "user", "content": [{"modality": "text", "value": t} for t in texts]}]),
    )
    yield (
        "anthropic_stream",
        lambda: fold(
            anthropic_stream.stream_events(
                [
                    {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
                    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    *(
                        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
                        for t in texts
                    ),
                    {"type": "content_block_stop", "index": 0},
                    {"type": "message_stop"},
                ]
            )
        ),
    )


@pytest.mark.parametrize(("name", "call"), list(_many_blocks()), ids=[name for name, _ in _many_blocks()])
def test_many_blocks(name: str, call: Callable[[], Any]) -> None:
    result, peak = measure(call)
    report(f"{BLOCKS} blocks, {name}", peak, result)
    assert not isinstance(result, am.AgentMsgError), result
    assert peak < (256 if SOAK else 64) * MiB


# --- giant strings ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def giant() -> str:
    return "x" * GIANT


def _giant_cases(text: str) -> Iterator[tuple[str, Callable[[], Any]]]:
    message = am.UserMessage.text(text, id="u", timestamp=1)
    data = message.to_bytes()
    yield "protobuf", lambda: am.BaseMessage.from_bytes(data, validate=True)
    yield "openai_chat", lambda: openai_chat.from_openai_chat([{"role": "user", "content": text}])
    yield "anthropic", lambda: anthropic.from_anthropic({"messages": [{"role": "user", "content": text}]})
    yield "gemini", lambda: gemini.from_gemini({"contents": [{"role": "user", "parts": [{"text": text}]}]})
    yield (
        "seed-1",
        lambda: dict_form.messages_from_dicts([{"role": "user", "contents": [{"type": "text", "content": text}]}]),
    )
    yield "adaline", lambda: adaline.from_adaline([{"role": "user", "content": [{"modality": "text", "value": text}]}])
    yield "tool call arguments", lambda: am.ToolCallContent("c", "f", arguments=text).arguments_error
    yield (
        "openai_chat_stream",
        lambda: fold(
            openai_chat_stream.stream_events(
                [
                    {
                        "object": "chat.completion.chunk",
                        "id": "x",
                        "choices": [
                            {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                    }
                ]
            )
        ),
    )


GIANT_NAMES = ["protobuf", "openai_chat", "tool call arguments", "openai_chat_stream"]
if SOAK:
    GIANT_NAMES += ["anthropic", "gemini", "seed-1", "adaline"]


@pytest.mark.parametrize("name", GIANT_NAMES)
def test_a_50_mb_string(giant: str, name: str) -> None:
    call = dict(_giant_cases(giant))[name]
    result, peak = measure(call)
    report(f"50 MiB string, {name}", peak, result)
    assert not isinstance(result, am.AgentMsgError), result
    # The string is copied into the message (once into protobuf's arena): at most 3x the input, never more.
    assert peak < 3 * GIANT + 16 * MiB


def test_a_50_mb_protojson_text(giant: str) -> None:
    text = json.dumps(
        {"id": "u", "timestamp": "2026-01-01T00:00:00Z", "user": {"content": [{"text": {"text": giant}}]}}
    )
    result, peak = measure(lambda: am.BaseMessage.from_json(text, validate=True))
    report("50 MiB string, ProtoJSON text", peak, result)
    assert isinstance(result, am.UserMessage)
    assert peak < 3 * GIANT + 16 * MiB
