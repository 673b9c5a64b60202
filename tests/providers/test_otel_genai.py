"""``to_otel_messages``: agentmsg messages in the OpenTelemetry GenAI conventions' message JSON.

The expected shapes are the conventions' (``gen_ai.input.messages`` / ``gen_ai.output.messages``,
semantic-conventions ``docs/gen-ai/gen-ai-input-messages.json``): a message is ``role`` + ``parts``,
an output message adds ``finish_reason``; parts are typed ``text``, ``tool_call``,
``tool_call_response``, ``reasoning``, ``blob``, ``uri``, ``file``, ``server_tool_call``...
"""

from __future__ import annotations

import base64
import json

import pytest

import agentmsg as am
from agentmsg.providers.otel_genai import to_otel_parts

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4e10000000049454e44ae426082"
)


def test_a_conversation_with_every_role() -> None:
    call = am.ToolCallContent("call_1", "weather", {"city": "Oslo", "days": 2})
    messages = [
        am.SystemMessage.text("Be brief."),
        am.UserMessage.text("Weather in Oslo?", name="ada"),
        am.AssistantMessage(
            [am.ThinkingContent("Need the tool.", "sig"), am.TextContent("Checking."), call],
            stop_reason="tool_calls",
            provenance=am.Provenance(provider="openai", model="gpt-test"),
        ),
        am.ToolMessage.from_result(am.ToolResultContent("call_1", "rain, 4 C", name="weather")),
        am.AssistantMessage([am.TextContent("Rain, 4 C.")], stop_reason="stop"),
    ]
    assert am.to_otel_messages(messages) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}], "name": "ada"},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Need the tool."},
                {"type": "text", "content": "Checking."},
                {"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Oslo", "days": 2}},
            ],
            "finish_reason": "tool_call",
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rain, 4 C"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Rain, 4 C."}], "finish_reason": "stop"},
    ]
    json.dumps(am.to_otel_messages(messages))  # JSON-ready as it is


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("stop", "stop"), ("length", "length"), ("tool_calls", "tool_call"), ("content_filter", "content_filter"),
     ("error", "error"), ("abort", "abort")],
)  # fmt: skip
def test_finish_reasons(reason: str, expected: str) -> None:
    (message,) = am.to_otel_messages(am.AssistantMessage([am.TextContent("x")], stop_reason=reason))
    assert message["finish_reason"] == expected


def test_an_assistant_message_without_a_stop_reason_has_no_finish_reason() -> None:
    assert am.to_otel_messages(am.AssistantMessage([am.TextContent("x")])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "x"}]}
    ]


def test_media_as_blob_uri_and_file_parts() -> None:
    user = am.UserMessage(
        [
            am.TextContent("Look"),
            am.ImageContent(PNG),
            am.ImageContent("https://example.com/cat.jpg", media_type="image/jpeg"),
            am.AudioContent(b"ID3\x04\x00\x00\x00\x00\x00\x00rest", media_type="audio/mpeg"),
        ]
    )
    (message,) = am.to_otel_messages(user)
    assert message["parts"] == [
        {"type": "text", "content": "Look"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": base64.b64encode(PNG).decode()},
        {"type": "uri", "modality": "image", "mime_type": "image/jpeg", "uri": "https://example.com/cat.jpg"},
        {
            "type": "blob",
            "modality": "audio",
            "mime_type": "audio/mpeg",
            "content": base64.b64encode(b"ID3\x04\x00\x00\x00\x00\x00\x00rest").decode(),
        },
    ]


def test_tool_call_arguments_that_are_not_json_stay_text() -> None:
    call = am.ToolCallContent("c", "f", arguments='{"a": 1')
    assert to_otel_parts([call]) == [{"type": "tool_call", "id": "c", "name": "f", "arguments": '{"a": 1'}]


def test_a_multimodal_tool_result_is_a_list_of_parts() -> None:
    result = am.ToolResultContent("c", [am.TextContent("chart:"), am.ImageContent(PNG)], is_error=False)
    (part,) = to_otel_parts([result])
    assert part["type"] == "tool_call_response"
    assert part["response"][0] == {"type": "text", "content": "chart:"}
    assert part["response"][1]["type"] == "blob"


def test_redacted_reasoning_and_hosted_tools() -> None:
    parts = to_otel_parts(
        [
            am.RedactedThinkingContent("opaque-bytes"),
            am.HostedToolCallContent("srv_1", "web_search", {"query": "otel"}, kind="web_search"),
        ]
    )
    assert parts[0] == {"type": "redacted_reasoning"}  # the opaque data is not telemetry
    assert parts[1] == {
        "type": "server_tool_call",
        "id": "srv_1",
        "name": "web_search",
        "server_tool_call": {"type": "web_search", "arguments": {"query": "otel"}},
    }


def test_session_only_messages_keep_their_role_and_text() -> None:
    summary = am.BranchSummaryMessage("We tried plan A.", "m-9")
    (message,) = am.to_otel_messages([summary])
    assert message["role"] == "branch_summary"
    assert message["parts"] == [{"type": "text", "content": summary.text_content()}]


def test_bad_input_names_the_problem() -> None:
    with pytest.raises(TypeError, match="takes agentmsg messages, got dict"):
        am.to_otel_messages([{"role": "user"}])  # type: ignore[list-item]


def test_a_decision_on_a_tool_call_is_a_tool_approval_part() -> None:
    message = am.UserMessage([am.ToolApprovalContent.deny("call_1", "too broad", decided_by="ann")])
    assert am.to_otel_messages(message) == [
        {
            "role": "user",
            "parts": [
                {
                    "type": "tool_approval",
                    "id": "call_1",
                    "decision": "denied",
                    "reason": "too broad",
                    "decided_by": "ann",
                }
            ],
        }
    ]
    (approved,) = am.to_otel_messages(am.UserMessage([am.ToolApprovalContent.approve("call_2")]))
    assert approved["parts"] == [{"type": "tool_approval", "id": "call_2", "decision": "approved"}]
