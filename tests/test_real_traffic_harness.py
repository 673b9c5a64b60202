"""The real-traffic harness's own rules: what it treats as equal, and what it catches.

``tests/test_real_traffic.py`` is only as good as its comparison, so its
normalisation and its loss coverage are pinned here on small payloads.
"""

from __future__ import annotations

from typing import Any

from test_real_traffic import (
    _MISSING,
    Difference,
    _gemini_accumulate,
    check_usage_and_stop,
    differences,
    normalise_request,
    normalise_response,
    request_differences,
    sdk_accumulation,
    uncovered_request,
    uncovered_response,
)

from agentmsg.providers import anthropic
from agentmsg.providers._common import Loss


def test_differences_name_every_path() -> None:
    recorded = {"a": [1, {"b": "x"}], "c": 1}
    written = {"a": [1, {"b": "y"}, 3], "c": 1.0, "d": True}
    assert [str(d.path) for d in differences(recorded, written)] == ["a[1].b", "a[2]", "d"]
    assert differences(1, True) == [Difference("", 1, True)]  # a boolean is no number


def test_spellings_the_formats_define_are_equal() -> None:
    chat = {"model": "m", "messages": [{"role": "developer", "content": "hi"}]}
    assert normalise_request("openai_chat", chat) == {
        "messages": [{"role": "system", "content": [{"type": "text", "text": "hi"}]}]
    }
    responses = {"instructions": "be brief", "input": "hi", "store": False}
    assert normalise_request("openai_responses", responses) == {
        "input": [
            {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "be brief"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ]
    }
    claude = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "a", "cache_control": {"type": "ephemeral"}},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r", "is_error": False}],
            },
        ],
    }
    assert normalise_request("anthropic", claude) == {
        "system": [{"type": "text", "text": "s"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "r"}]},
                ],
            }
        ],
    }
    gemini = {"contents": [{"parts": [{"inline_data": {"mime_type": "image/png", "data": "_-8"}}]}]}
    assert normalise_request("gemini", gemini) == {
        "contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "/+8="}}]}]
    }


def test_free_form_json_keeps_its_keys() -> None:
    body = {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"a_b": 1}}}]}]}
    assert normalise_request("gemini", body)["contents"][0]["parts"][0]["functionResponse"]["response"] == {"a_b": 1}


def test_responses_ignore_metadata_but_not_data() -> None:
    recorded = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hi", "citations": [{"type": "web_search_result_location"}]}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 0, "service_tier": "standard"},
    }
    metadata_only = {**recorded, "usage": {"input_tokens": 1, "output_tokens": 2}, "container": None}
    assert differences(normalise_response("anthropic", recorded), normalise_response("anthropic", metadata_only)) == []
    dropped = {**recorded, "content": [{"type": "text", "text": "hi"}]}
    assert [
        d.path for d in differences(normalise_response("anthropic", recorded), normalise_response("anthropic", dropped))
    ] == ["content[0].citations"]


def test_a_silent_drop_is_caught_and_a_reported_one_is_not() -> None:
    diff = [Difference("content[0].citations", [{"type": "x"}], _MISSING)]
    assert uncovered_response("anthropic", diff, [], []) == diff
    assert uncovered_response("anthropic", diff, [], [Loss("contents[0]", "citations", "no place")]) == []
    # a loss in another area does not cover it
    assert uncovered_response("anthropic", diff, [], [Loss("usage.cost", "cost", "no place")]) == diff


def test_a_request_loss_covers_only_its_own_message() -> None:
    payload: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ]
    }
    first = Difference("messages[0].content[0].text", "a", "A")
    last = Difference("messages[2].content[0].text", "c", "C")
    losses = [Loss("[0].contents[0]", "text", "why")]
    assert uncovered_request("openai_chat", payload, [first, last], [], losses) == [last]
    # a whole turn next to the message's own is its fallout (a merge); a changed value there is not
    merged = Difference("messages[1]", {"role": "assistant"}, _MISSING)
    assert uncovered_request("openai_chat", payload, [merged], [], losses) == []


def test_a_dropped_turn_is_one_difference() -> None:
    recorded = {
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "system", "content": "s"},
            {"role": "user", "content": "c"},
        ]
    }
    written = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "c"}]}
    diffs = request_differences(
        "openai_chat", normalise_request("openai_chat", recorded), normalise_request("openai_chat", written)
    )
    assert [d.path for d in diffs] == ["messages[1]"]


def test_usage_and_stop_reason_are_checked_against_the_json() -> None:
    body = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "model": "m",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 5},
    }
    message = anthropic.from_anthropic_response(body)
    assert check_usage_and_stop("anthropic", body, message) == []
    wrong = {**body, "usage": {**body["usage"], "output_tokens": 7}, "stop_reason": "max_tokens"}
    assert check_usage_and_stop("anthropic", wrong, message) == [
        "stop_reason_raw 'end_turn', the JSON says 'max_tokens'",
        "usage.output_tokens is 2, the JSON says 7",
    ]


def test_the_sdk_accumulations() -> None:
    chat = (
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{"role":"assistant","content":"he"},"finish_reason":null}]}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{"content":"llo"},"finish_reason":"stop"}]}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
        '"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":null}\n\n'
        "data: [DONE]\n\n"
    )
    final = sdk_accumulation("openai_chat", chat)
    assert final is not None
    assert final["choices"][0]["message"]["content"] == "hello"
    assert final["usage"]["total_tokens"] == 3  # kept although the last chunk says null
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "m1",
                "type": "message",
                "role": "assistant",
                "model": "x",
                "content": [],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    final = sdk_accumulation("anthropic", events)
    assert final is not None
    assert final["content"] == [{"type": "text", "text": "hi"}]
    assert final["usage"]["output_tokens"] == 4


def test_gemini_chunks_merge_text_of_one_kind() -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "a", "thought": True}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "b", "thought": True, "thoughtSignature": "c2ln"}]}}
            ]
        },
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "c"}]}}]},
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}],
            "usageMetadata": {"totalTokenCount": 3},
        },
    ]
    assert _gemini_accumulate(chunks) == {
        "usageMetadata": {"totalTokenCount": 3},
        "candidates": [
            {
                "finishReason": "STOP",
                "content": {
                    "role": "model",
                    "parts": [{"text": "ab", "thought": True, "thoughtSignature": "c2ln"}, {"text": "c"}],
                },
            }
        ],
    }


def test_gemini_accumulation_assembles_streamed_function_call_arguments() -> None:
    def call(body: dict[str, Any], **part: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": body, **part}]}}]}

    chunks = [
        call({"name": "cook", "willContinue": True}, thoughtSignature="c2ln"),
        call(
            {
                "partialArgs": [{"jsonPath": "$.steps[0]", "stringValue": "Pre", "willContinue": True}],
                "willContinue": True,
            }
        ),
        call({"partialArgs": [{"jsonPath": "$.steps[0]", "stringValue": "heat"}], "willContinue": True}),
        call({"partialArgs": [{"jsonPath": "$.dish.serves", "numberValue": 4}], "willContinue": True}),
        call({}),
        call({"name": "serve", "args": {}}),
    ]
    parts = _gemini_accumulate(chunks)["candidates"][0]["content"]["parts"]
    assert parts == [
        {
            "functionCall": {"name": "cook", "args": {"steps": ["Preheat"], "dish": {"serves": 4}}},
            "thoughtSignature": "c2ln",
        },
        {"functionCall": {"name": "serve", "args": {}}},
    ]
