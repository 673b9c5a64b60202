"""Write the stream-fold vectors in tests/vectors/fold/: events in; the message, the issues, or the error out.

    .venv/bin/python scripts/make_fold_vectors.py [--check]

Each case below is a stream of ``agentmsg.v1.StreamEvent`` (ProtoJSON) and what the fold must give, written by hand
from the fold's documented rules (src/agentmsg/streaming.py, sdk/typescript/src/streaming.ts), never computed by a
fold: either the finished message (ProtoJSON) with the issues it flags (``{"block": i, "kind": "arguments"}`` for
argument text that is not a JSON object, ``"input"`` for such hosted tool call input, ``"cut_short"`` for a block an
error left open) and how many repeated
events it ignored, or the error: its class (``StreamProtocolError``, ``IncompleteStreamError`` with the open
blocks, ``ValidationError`` with the violations), and where it is raised (the index of the event, or ``"finish"``).

Both languages run every vector: tests/test_fold_vectors.py (Python) and sdk/typescript/test/fold.test.ts (Node).
``--check`` fails when the files differ from the cases (tests/test_fold_vectors.py runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors" / "fold"
TS = "2026-01-02T03:04:05Z"

Json = dict[str, Any]


# --- events, as ProtoJSON ---------------------------------------------------


def start(message_id: str = "m1", provenance: Json | None = None, timestamp: str = TS) -> Json:
    body: Json = {"messageId": message_id, "timestamp": timestamp}
    if provenance is not None:
        body["provenance"] = provenance
    return {"messageStart": body}


def block(index: int, content: Json) -> Json:
    return {"blockStart": {"index": index, "content": content}} if index else {"blockStart": {"content": content}}


def _delta(index: int, arm: str, body: Json) -> Json:
    delta: Json = {arm: body}
    if index:
        delta["index"] = index
    return {"blockDelta": delta}


def text(index: int, value: str) -> Json:
    return _delta(index, "text", {"text": value})


def think(index: int, value: str) -> Json:
    return _delta(index, "thinking", {"text": value})


def sig(index: int, value: str) -> Json:
    return _delta(index, "signature", {"signature": value})


def args(index: int, value: str) -> Json:
    return _delta(index, "toolCall", {"arguments": value})


def cite(index: int, citation: Json) -> Json:
    return _delta(index, "citation", {"citation": citation})


def logprobs(index: int, *tokens: Json) -> Json:
    return _delta(index, "logprobs", {"logprobs": list(tokens)})


def stop_block(index: int) -> Json:
    return {"blockStop": {"index": index}} if index else {"blockStop": {}}


def usage(**counts: Any) -> Json:
    return {"usage": {"usage": counts}}


def stop(reason: str | None = "STOP_REASON_STOP", raw: str = "", response_id: str = "", sequence: str = "") -> Json:
    body: Json = {}
    if reason is not None:
        body["stopReason"] = reason
    if raw:
        body["stopReasonRaw"] = raw
    if response_id:
        body["responseId"] = response_id
    if sequence:
        body["stopSequence"] = sequence
    return {"messageStop": body}


def error(message: str, code: str = "", reason: str = "STOP_REASON_ERROR") -> Json:
    body: Json = {"message": message, "stopReason": reason}
    if code:
        body["code"] = code
    return {"error": body}


def seq(n: int, event: Json) -> Json:
    return {"sequence": str(n), **event}


# --- expected messages, as ProtoJSON ----------------------------------------


def assistant(content: list[Json], message_id: str = "m1", **body: Any) -> Json:
    inner: Json = {}
    if content:
        inner["content"] = content
    inner.update(body)
    return {"id": message_id, "timestamp": TS, "assistant": inner}


def ok(message: Json, issues: list[Json] | None = None, duplicates: int = 0) -> Json:
    return {"message": message, "issues": issues or [], "duplicates": duplicates}


def fails(error_class: str, at: int | str, **details: Any) -> Json:
    return {"error": error_class, "at": at, **details}


TOOL = {"toolCall": {"id": "call_1", "name": "get_weather"}}
SEARCH = {"hostedToolCall": {"id": "srvtoolu_1", "name": "web_search", "kind": "HOSTED_TOOL_KIND_WEB_SEARCH"}}
WEB = {"web": {"url": "https://example.com/paris", "title": "Paris weather"}}
CITE_1 = {"startIndex": 0, "endIndex": 5, "citedText": "Rainy", **WEB}
CITE_2 = {"citedText": "14°C", "search_result": {"search_result_index": 0, "source": "https://example.com/paris"}}
CITE_2_JSON = {"citedText": "14°C", "searchResult": {"searchResultIndex": 0, "source": "https://example.com/paris"}}

CASES: dict[str, tuple[str, list[Json], Json]] = {
    "text_in_pieces": (
        "rule 3: text deltas concatenate in arrival order; rule 7: message_stop sets the stop reason",
        [start(), block(0, {"text": {}}), text(0, "Hel"), text(0, "lo"), stop_block(0), stop()],
        ok(assistant([{"text": {"text": "Hello"}}], stopReason="STOP_REASON_STOP")),
    ),
    "initial_text_then_deltas": (
        "rule 2: block_start opens the block with its initial content; deltas append after it",
        [start(), block(0, {"text": {"text": "Hi"}}), text(0, ", there"), stop_block(0), stop()],
        ok(assistant([{"text": {"text": "Hi, there"}}], stopReason="STOP_REASON_STOP")),
    ),
    "thinking_signed_then_text": (
        "rule 3: thinking text and signature fragments concatenate separately; blocks in index order",
        [
            start(),
            block(0, {"thinking": {}}),
            think(0, "Let me "),
            sig(0, "c2ln"),
            think(0, "think."),
            sig(0, "LXBhcnQ="),
            stop_block(0),
            block(1, {"text": {}}),
            text(1, "Done."),
            stop_block(1),
            stop(),
        ],
        ok(
            assistant(
                [{"thinking": {"text": "Let me think.", "signature": "c2lnLXBhcnQ="}}, {"text": {"text": "Done."}}],
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "tool_call_arguments_in_fragments": (
        "rules 3 and 4: argument fragments concatenate; a JSON object is no issue; response_id goes to provenance",
        [
            start(provenance={"provider": "openai", "model": "gpt-x"}),
            block(0, {"toolCall": {"id": "call_1", "name": "get_weather", "kind": "TOOL_KIND_WEB"}}),
            args(0, '{"city": '),
            args(0, '"Paris", "days": 3}'),
            stop_block(0),
            stop("STOP_REASON_TOOL_CALLS", raw="tool_calls", response_id="resp_9"),
        ],
        ok(
            assistant(
                [
                    {
                        "toolCall": {
                            "id": "call_1",
                            "name": "get_weather",
                            "kind": "TOOL_KIND_WEB",
                            "arguments": '{"city": "Paris", "days": 3}',
                        }
                    }
                ],
                stopReason="STOP_REASON_TOOL_CALLS",
                stopReasonRaw="tool_calls",
                provenance={"provider": "openai", "model": "gpt-x", "responseId": "resp_9"},
            )
        ),
    ),
    "tool_call_initial_arguments_and_signature": (
        "rules 3 and 4: arguments in block_start come first; a signature delta attaches to a tool call (Gemini)",
        [
            start(),
            block(0, {"toolCall": {"id": "call_1", "name": "get_weather", "arguments": '{"city"'}}),
            args(0, ': "Oslo"}'),
            sig(0, "Z2VtaW5p"),
            stop_block(0),
            stop("STOP_REASON_TOOL_CALLS"),
        ],
        ok(
            assistant(
                [
                    {
                        "toolCall": {
                            "id": "call_1",
                            "name": "get_weather",
                            "arguments": '{"city": "Oslo"}',
                            "signature": "Z2VtaW5p",
                        }
                    }
                ],
                stopReason="STOP_REASON_TOOL_CALLS",
            )
        ),
    ),
    "tool_call_invalid_json_kept": (
        "rule 4: argument text that is not JSON is kept verbatim and listed as an issue",
        [start(), block(0, TOOL), args(0, '{"city": "Par'), stop_block(0), stop("STOP_REASON_TOOL_CALLS")],
        ok(
            assistant(
                [{"toolCall": {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Par'}}],
                stopReason="STOP_REASON_TOOL_CALLS",
            ),
            issues=[{"block": 0, "kind": "arguments"}],
        ),
    ),
    "tool_call_array_arguments_kept": (
        "rule 4: JSON that is not an object is kept verbatim and listed as an issue",
        [start(), block(0, TOOL), args(0, "[1, 2]"), stop_block(0), stop("STOP_REASON_TOOL_CALLS")],
        ok(
            assistant(
                [{"toolCall": {"id": "call_1", "name": "get_weather", "arguments": "[1, 2]"}}],
                stopReason="STOP_REASON_TOOL_CALLS",
            ),
            issues=[{"block": 0, "kind": "arguments"}],
        ),
    ),
    "tool_call_no_arguments": (
        "rule 4: empty argument text stands for no arguments (no issue)",
        [start(), block(0, TOOL), stop_block(0), stop("STOP_REASON_TOOL_CALLS")],
        ok(
            assistant([{"toolCall": {"id": "call_1", "name": "get_weather"}}], stopReason="STOP_REASON_TOOL_CALLS"),
        ),
    ),
    "blocks_out_of_order_with_a_gap": (
        "rule 2: blocks are kept in index order whatever order they came in; gaps in the numbering are allowed",
        [
            start(),
            block(2, {"text": {}}),
            block(0, {"thinking": {"text": "first"}}),
            text(2, "second"),
            stop_block(2),
            stop_block(0),
            stop(),
        ],
        ok(assistant([{"thinking": {"text": "first"}}, {"text": {"text": "second"}}], stopReason="STOP_REASON_STOP")),
    ),
    "redacted_and_provider_blocks_verbatim": (
        "rule 2: blocks that take no deltas are kept as they started",
        [
            start(),
            block(0, {"redactedThinking": {"data": "ZW5jcnlwdGVk"}}),
            stop_block(0),
            block(1, {"provider": {"provider": "anthropic", "type": "server_tool_use", "json": "{}"}}),
            stop_block(1),
            stop(),
        ],
        ok(
            assistant(
                [
                    {"redactedThinking": {"data": "ZW5jcnlwdGVk"}},
                    {"provider": {"provider": "anthropic", "type": "server_tool_use", "json": "{}"}},
                ],
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "usage_running_totals": (
        "rule 5: each count a usage event sets replaces the one held; counts and amounts it leaves unset keep theirs",
        [
            start(),
            usage(inputTokens="10"),
            block(0, {"text": {"text": "ok"}}),
            usage(outputTokens="1", cost={"total": 0.5}),
            stop_block(0),
            usage(inputTokens="12", outputTokens="5", cost={"input": 0.25}),
            usage(cacheReadTokens="0"),
            stop(),
        ],
        ok(
            assistant(
                [{"text": {"text": "ok"}}],
                usage={
                    "inputTokens": "12",
                    "outputTokens": "5",
                    "cacheReadTokens": "0",
                    "cost": {"input": 0.25, "total": 0.5},
                },
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "text_with_citations_and_logprobs": (
        "rule 3: citation and logprob deltas go to a text block, after the ones it started with, in arrival order",
        [
            start(),
            block(
                0, {"text": {"text": "Rainy", "citations": [CITE_1], "logprobs": [{"token": "Rainy", "logprob": -0.5}]}}
            ),
            text(0, ", 14°C."),
            logprobs(0, {"token": ",", "logprob": -0.01}, {"token": " 14°C.", "logprob": -1.25, "tokenId": 42}),
            cite(0, CITE_2),
            stop_block(0),
            stop(),
        ],
        ok(
            assistant(
                [
                    {
                        "text": {
                            "text": "Rainy, 14°C.",
                            "citations": [CITE_1, CITE_2_JSON],
                            "logprobs": [
                                {"token": "Rainy", "logprob": -0.5},
                                {"token": ",", "logprob": -0.01},
                                {"token": " 14°C.", "logprob": -1.25, "tokenId": 42},
                            ],
                        }
                    }
                ],
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "hosted_tool_call_input_in_fragments_and_its_result": (
        "rules 3 and 4: argument fragments build a hosted tool call's input, a signature attaches to it; "
        "a hosted tool result arrives whole",
        [
            start(),
            block(0, SEARCH),
            args(0, '{"query": '),
            args(0, '"Paris weather"}'),
            sig(0, "c2lnbg=="),
            stop_block(0),
            block(
                1,
                {
                    "hostedToolResult": {
                        "callId": "srvtoolu_1",
                        "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                        "searchResults": {"results": [{"url": "https://example.com/paris", "title": "Paris"}]},
                    }
                },
            ),
            stop_block(1),
            block(2, {"text": {}}),
            text(2, "Rain."),
            stop_block(2),
            stop(),
        ],
        ok(
            assistant(
                [
                    {
                        "hostedToolCall": {
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                            "input": '{"query": "Paris weather"}',
                            "signature": "c2lnbg==",
                        }
                    },
                    {
                        "hostedToolResult": {
                            "callId": "srvtoolu_1",
                            "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                            "searchResults": {"results": [{"url": "https://example.com/paris", "title": "Paris"}]},
                        }
                    },
                    {"text": {"text": "Rain."}},
                ],
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "hosted_tool_call_invalid_input_kept": (
        "rule 4: hosted tool call input that is not a JSON object is kept verbatim and listed as an issue",
        [start(), block(0, SEARCH), args(0, "Paris weather"), stop_block(0), stop()],
        ok(
            assistant(
                [
                    {
                        "hostedToolCall": {
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                            "input": "Paris weather",
                        }
                    }
                ],
                stopReason="STOP_REASON_STOP",
            ),
            issues=[{"block": 0, "kind": "input"}],
        ),
    ),
    "stop_sequence": (
        "rule 7: message_stop's stop sequence is the message's",
        [start(), block(0, {"text": {"text": "1, 2, 3"}}), stop_block(0), stop(raw="stop_sequence", sequence="4")],
        ok(
            assistant(
                [{"text": {"text": "1, 2, 3"}}],
                stopReason="STOP_REASON_STOP",
                stopReasonRaw="stop_sequence",
                stopSequence="4",
            )
        ),
    ),
    "message_stop_model_and_provider_extra": (
        "rule 8: message_stop's model renames the provenance's; its provider_extra is the message's",
        [
            start(provenance={"provider": "anthropic", "api": "anthropic-messages", "model": "claude-fable-5"}),
            block(0, {"text": {"text": "ok"}}),
            stop_block(0),
            {
                "messageStop": {
                    "stopReason": "STOP_REASON_STOP",
                    "stopReasonRaw": "end_turn",
                    "model": "claude-opus-4-8",
                    "providerExtra": {
                        "provider": "anthropic",
                        "type": "message",
                        "json": '{"type":"message","container":{"id":"container_1"}}',
                    },
                }
            },
        ],
        ok(
            assistant(
                [{"text": {"text": "ok"}}],
                stopReason="STOP_REASON_STOP",
                stopReasonRaw="end_turn",
                provenance={"provider": "anthropic", "api": "anthropic-messages", "model": "claude-opus-4-8"},
                providerExtra={
                    "provider": "anthropic",
                    "type": "message",
                    "json": '{"type":"message","container":{"id":"container_1"}}',
                },
            )
        ),
    ),
    "usage_details_running_totals": (
        "rule 5: cache-write details replace like counts; hosted tool requests replace tool by tool",
        [
            start(),
            usage(cacheWriteTokens="100", cacheWrite5mTokens="100", hostedToolRequests={"web_search": "1"}),
            block(0, {"text": {"text": "ok"}}),
            stop_block(0),
            usage(hostedToolRequests={"web_search": "2", "code_execution": "1"}),
            usage(cacheWrite1hTokens="0", hostedToolRequests={"code_execution": "3"}),
            stop(),
        ],
        ok(
            assistant(
                [{"text": {"text": "ok"}}],
                usage={
                    "cacheWriteTokens": "100",
                    "cacheWrite5mTokens": "100",
                    "cacheWrite1hTokens": "0",
                    "hostedToolRequests": {"web_search": "2", "code_execution": "3"},
                },
                stopReason="STOP_REASON_STOP",
            )
        ),
    ),
    "unnumbered_repeats_ignored": (
        "rule 6: exact repeats of message_start, block_start (before a delta), block_stop and message_stop are ignored",
        [
            start(),
            start(),
            block(0, {"text": {}}),
            block(0, {"text": {}}),
            text(0, "once"),
            stop_block(0),
            stop_block(0),
            stop(),
            stop(),
        ],
        ok(assistant([{"text": {"text": "once"}}], stopReason="STOP_REASON_STOP"), duplicates=4),
    ),
    "numbered_repeats_ignored": (
        "rule 6: numbered events at or below the last one applied are ignored, deltas too",
        [
            seq(0, start()),
            seq(1, block(0, {"text": {}})),
            seq(2, text(0, "a")),
            seq(2, text(0, "a")),
            seq(1, block(0, {"text": {}})),
            seq(3, text(0, "b")),
            seq(4, stop_block(0)),
            seq(5, stop()),
        ],
        ok(assistant([{"text": {"text": "ab"}}], stopReason="STOP_REASON_STOP"), duplicates=2),
    ),
    "numbered_gap": (
        "rule 6: a number past a gap is an error",
        [seq(0, start()), seq(1, block(0, {"text": {}})), seq(3, text(0, "lost one"))],
        fails("StreamProtocolError", 2),
    ),
    "numbered_not_from_zero": (
        "rule 6: numbering starts at 0",
        [seq(1, start())],
        fails("StreamProtocolError", 0),
    ),
    "block_before_message_start": (
        "rule 1: an event before message_start is an error",
        [block(0, {"text": {}})],
        fails("StreamProtocolError", 0),
    ),
    "usage_before_message_start": (
        "rule 1: usage before message_start is an error",
        [usage(inputTokens="1")],
        fails("StreamProtocolError", 0),
    ),
    "usage_after_message_stop": (
        "rule 1: an event after the end is an error",
        [start(), block(0, {"text": {"text": "x"}}), stop_block(0), stop(), usage(outputTokens="1")],
        fails("StreamProtocolError", 4),
    ),
    "a_different_second_stop": (
        "rules 1 and 6: a message_stop that is not an exact repeat is an event after the end",
        [start(), block(0, {"text": {"text": "x"}}), stop_block(0), stop(), stop("STOP_REASON_LENGTH")],
        fails("StreamProtocolError", 4),
    ),
    "a_different_second_message_start": (
        "rule 1: a second, different message_start is an error",
        [start(), start("m2")],
        fails("StreamProtocolError", 1),
    ),
    "delta_for_a_block_never_started": (
        "rule 2: a delta for a block never started is an error",
        [start(), text(3, "orphan")],
        fails("StreamProtocolError", 1),
    ),
    "delta_after_block_stop": (
        "rule 2: a delta for a stopped block is an error",
        [start(), block(0, {"text": {}}), stop_block(0), text(0, "late")],
        fails("StreamProtocolError", 3),
    ),
    "delta_of_the_wrong_kind": (
        "rule 2: thinking text into a text block is an error",
        [start(), block(0, {"text": {}}), think(0, "wrong")],
        fails("StreamProtocolError", 2),
    ),
    "arguments_into_a_text_block": (
        "rule 2: arguments go to tool calls only",
        [start(), block(0, {"text": {}}), args(0, "{}")],
        fails("StreamProtocolError", 2),
    ),
    "signature_into_redacted_thinking": (
        "rules 2 and 3: a signature goes to text, thinking or tool-call blocks only",
        [start(), block(0, {"redactedThinking": {"data": "eA=="}}), sig(0, "eA==")],
        fails("StreamProtocolError", 2),
    ),
    "citation_into_a_thinking_block": (
        "rules 2 and 3: citations go to text blocks only",
        [start(), block(0, {"thinking": {}}), cite(0, CITE_1)],
        fails("StreamProtocolError", 2),
    ),
    "logprobs_into_a_tool_call": (
        "rules 2 and 3: logprobs go to text blocks only",
        [start(), block(0, TOOL), logprobs(0, {"token": "x", "logprob": -1})],
        fails("StreamProtocolError", 2),
    ),
    "delta_into_a_hosted_tool_result": (
        "rule 3: a hosted tool result arrives whole and takes no delta",
        [start(), block(0, {"hostedToolResult": {"callId": "srvtoolu_1"}}), args(0, "{}")],
        fails("StreamProtocolError", 2),
    ),
    "block_start_repeated_after_a_citation": (
        "rule 6: a repeated block_start is ignored only before the block received deltas, citations included",
        [start(), block(0, {"text": {}}), cite(0, CITE_1), block(0, {"text": {}})],
        fails("StreamProtocolError", 3),
    ),
    "block_started_twice": (
        "rule 2: a second, different block_start for an index is an error",
        [start(), block(0, {"text": {}}), block(0, {"thinking": {}})],
        fails("StreamProtocolError", 2),
    ),
    "block_start_repeated_after_deltas": (
        "rule 6: a repeated block_start is ignored only before the block received deltas",
        [start(), block(0, {"text": {}}), text(0, "a"), block(0, {"text": {}})],
        fails("StreamProtocolError", 3),
    ),
    "user_content_in_an_assistant_stream": (
        "rule 2: a block must be assistant content (an image is not)",
        [start(), block(0, {"image": {"url": "https://example.com/a.png"}})],
        fails("StreamProtocolError", 1),
    ),
    "block_stop_never_started": (
        "rule 2: block_stop for a block never started is an error",
        [start(), stop_block(1)],
        fails("StreamProtocolError", 1),
    ),
    "open_block_stopped_after_the_end": (
        "rules 1 and 7: block_stop for an open block after message_stop is an event after the end",
        [start(), block(0, {"text": {"text": "x"}}), stop(), stop_block(0)],
        fails("StreamProtocolError", 3),
    ),
    "repeated_block_stop_after_the_end": (
        "rule 6: a repeated block_stop is ignored even after the end",
        [start(), block(0, {"text": {"text": "x"}}), stop_block(0), stop(), stop_block(0)],
        ok(assistant([{"text": {"text": "x"}}], stopReason="STOP_REASON_STOP"), duplicates=1),
    ),
    "stop_with_a_block_open": (
        "rule 7: after message_stop, a block with no block_stop is an IncompleteStreamError naming it",
        [start(), block(0, {"text": {"text": "a"}}), stop_block(0), block(1, TOOL), args(1, "{}"), stop()],
        fails("IncompleteStreamError", "finish", open_blocks=[1]),
    ),
    "error_with_a_block_open": (
        "rule 7: after error, open blocks are kept as far as they got and listed; the message records the error",
        [
            start(),
            block(0, {"text": {}}),
            text(0, "Partial an"),
            block(1, TOOL),
            args(1, '{"ci'),
            error("upstream closed the connection", code="overloaded"),
        ],
        ok(
            assistant(
                [
                    {"text": {"text": "Partial an"}},
                    {"toolCall": {"id": "call_1", "name": "get_weather", "arguments": '{"ci'}},
                ],
                stopReason="STOP_REASON_ERROR",
                stopReasonRaw="overloaded",
                error="upstream closed the connection",
            ),
            issues=[{"block": 0, "kind": "cut_short"}, {"block": 1, "kind": "cut_short"}],
        ),
    ),
    "aborted_with_no_block": (
        "rule 7: an error event with no block gives a valid message recording the abort",
        [start(), error("the user pressed stop", reason="STOP_REASON_ABORT")],
        ok(assistant([], stopReason="STOP_REASON_ABORT", error="the user pressed stop")),
    ),
    "not_ended": (
        "rule 7: finishing a stream with no message_stop or error is an IncompleteStreamError",
        [start(), block(0, {"text": {}}), text(0, "still going")],
        fails("IncompleteStreamError", "finish", open_blocks=[0]),
    ),
    "never_started": (
        "rule 7: finishing an empty stream is an IncompleteStreamError",
        [],
        fails("IncompleteStreamError", "finish", open_blocks=[]),
    ),
    "stop_with_no_block": (
        "rule 7: a normal stop with no block breaks the contract (assistant.content.required)",
        [start(), stop()],
        fails(
            "ValidationError", "finish", violations=[{"field": "assistant", "rule_id": "assistant.content.required"}]
        ),
    ),
    "length_stop_with_no_block": (
        "rule 7: a length stop may carry no block",
        [start(), usage(outputTokens="4096"), stop("STOP_REASON_LENGTH")],
        ok(assistant([], usage={"outputTokens": "4096"}, stopReason="STOP_REASON_LENGTH")),
    ),
    "tool_call_without_a_name": (
        "rule 7: the finished message must meet the contract (a tool call needs a name)",
        [start(), block(0, {"toolCall": {"id": "call_1"}}), stop_block(0), stop("STOP_REASON_TOOL_CALLS")],
        fails(
            "ValidationError",
            "finish",
            violations=[{"field": "assistant.content[0].tool_call.name", "rule_id": "string.min_len"}],
        ),
    ),
}


def vectors() -> dict[str, str]:
    """Each vector's file name and text."""
    out = {}
    for name, (description, events, expect) in CASES.items():
        vector = {"name": name, "description": description, "events": events, "expect": expect}
        out[f"{name}.json"] = json.dumps(vector, indent=2, ensure_ascii=False) + "\n"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the files differ from the cases")
    options = parser.parse_args()
    wanted = vectors()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in OUT.glob("*.json")}
    if options.check:
        stale = sorted(set(wanted) ^ set(on_disk) | {n for n in wanted if on_disk.get(n) != wanted[n]})
        if stale:
            print(f"fold vectors differ from scripts/make_fold_vectors.py: {', '.join(stale)}", file=sys.stderr)
            return 1
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name in set(on_disk) - set(wanted):
        (OUT / name).unlink()
    for name, text in wanted.items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(wanted)} fold vectors to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
