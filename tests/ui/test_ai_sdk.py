"""agentmsg <-> AI SDK v7 UIMessages: one turn a UIMessage, tool parts in every state, signatures, losses."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from conversation import ANTHROPIC, PNG, approval_turn, conversation, image_turn

from agentmsg import (
    AssistantMessage,
    Citation,
    CompactionSummaryMessage,
    DocumentContent,
    ImageContent,
    Provenance,
    RedactedThinkingContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    UserMessage,
    ValidationError,
)
from agentmsg.streaming import StreamEvent
from agentmsg.ui import ConversionError, ConversionReport
from agentmsg.ui.ai_sdk import UIMessageStream, finish_reason, from_ui_messages, to_ui_messages, ui_message_chunks

OPENAI = Provenance("openai", "openai-responses", "gpt-5", "resp_1")
GOOGLE = Provenance("google", "google-generative-ai", "gemini-3-pro", "r1")


def _report(messages: list[Any]) -> tuple[list[dict[str, Any]], ConversionReport]:
    report = ConversionReport()
    return to_ui_messages(messages, report=report), report


def test_the_conversation_round_trips_exactly() -> None:
    original = conversation()
    out, report = _report(original)
    assert not report
    assert [(m["id"], m["role"]) for m in out] == [("sys", "system"), ("u1", "user"), ("a1", "assistant")]
    assert from_ui_messages(out) == original


def test_one_turn_is_one_uimessage_with_steps_and_merged_results() -> None:
    out, _ = _report(conversation())
    turn = out[2]
    kinds = [p["type"] for p in turn["parts"]]
    assert kinds == [
        "step-start",
        "reasoning",
        "text",
        "tool-get_weather",
        "tool-get_weather",
        "step-start",
        "tool-web_search",
        "text",
        "source-url",
    ]
    paris, oslo, search = turn["parts"][3], turn["parts"][4], turn["parts"][6]
    assert (paris["state"], paris["input"], paris["output"]) == ("output-available", {"city": "Paris"}, "18°C, cloudy")
    # the model's own spacing is not the compact JSON of the input: the text rides along
    assert paris["callProviderMetadata"] == {"agentmsg": {"arguments": '{"city": "Paris"}'}}
    assert (oslo["state"], oslo["errorText"]) == ("output-error", "station offline")
    assert search["providerExecuted"] is True
    assert search["output"] == [{"url": "https://met.no/oslo", "title": "Oslo forecast"}]
    assert turn["parts"][1]["providerMetadata"] == {"anthropic": {"signature": "sig-abc"}}
    citation = turn["parts"][7]["citations"][0]
    assert citation["source"]["url"] == "https://met.no/oslo"
    assert citation["citedText"] == "5°C, rain"
    assert turn["parts"][8] == {
        "type": "source-url",
        "sourceId": citation["source"]["id"],
        "url": "https://met.no/oslo",
        "title": "Oslo forecast",
    }
    assert [e["id"] for e in turn["metadata"]["agentmsg"]["messages"]] == ["a1", "t1", "a2"]
    assert out[1]["parts"][1] == {
        "type": "file",
        "mediaType": "image/png",
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
    }


@pytest.mark.parametrize(
    ("provenance", "expected"),
    [
        (ANTHROPIC, {"anthropic": {"signature": "s"}}),
        (OPENAI, {"openai": {"reasoningEncryptedContent": "s"}}),
        (GOOGLE, {"google": {"thoughtSignature": "s"}}),
    ],
)
def test_signatures_go_where_the_ai_sdk_provider_reads_them(provenance: Provenance, expected: dict[str, Any]) -> None:
    message = AssistantMessage(
        [ThinkingContent("t", "s"), TextContent("x")], provenance=provenance, id="a", timestamp=1.0
    )
    out, report = _report([message])
    assert not report
    assert out[0]["parts"][1]["providerMetadata"] == expected
    assert from_ui_messages(out) == [message]


def test_signed_reasoning_does_not_cross_without_a_producer_the_ai_sdk_reads() -> None:
    blocks = [ThinkingContent("t", "s"), RedactedThinkingContent("r"), ToolCallContent("c", "f", {}, signature="g")]
    for provenance, why in [
        (None, "the message has no provenance"),
        (
            Provenance("openai", "openai-chat-completions"),
            "the AI SDK has no reader for openai (openai-chat-completions) reasoning",
        ),
    ]:
        out, report = _report([AssistantMessage(blocks, provenance=provenance, id="a", timestamp=1.0)])
        assert [(loss.what, loss.reason) for loss in report.losses[:2]] == [
            ("thinking signature", why),
            ("redacted thinking", why),
        ]
        assert report.losses[2].what == "tool-call signature"
        assert all("providerMetadata" not in p for p in out[0]["parts"])
    anthropic = AssistantMessage(blocks[:2], provenance=ANTHROPIC, id="a", timestamp=1.0)
    out, report = _report([anthropic])
    assert not report
    assert out[0]["parts"][2]["providerMetadata"] == {"anthropic": {"redactedData": "r"}}
    assert from_ui_messages(out) == [anthropic]
    google = AssistantMessage([blocks[2], TextContent("y", signature="ts")], provenance=GOOGLE, id="a", timestamp=1.0)
    out, report = _report([google])
    assert not report
    assert from_ui_messages(out) == [google]


def test_what_the_ai_sdk_cannot_hold_is_reported() -> None:
    messages = [
        UserMessage(
            [TextContent("q"), ImageContent.from_file_id("file-1"), ToolResultContent("c0", "x")], id="u", timestamp=1.0
        ),
        ToolMessage([ToolResultContent("nobody", "orphan")], id="t0", timestamp=2.0),
        AssistantMessage([ToolCallContent("c", "f", {})], id="a", timestamp=3.0),
        ToolMessage(
            [ToolResultContent("c", [TextContent("a"), TextContent("b"), ImageContent(PNG)])], id="t", timestamp=4.0
        ),
    ]
    out, report = _report(messages)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].contents[1]", "media by provider file id"),
        ("[0].contents[2]", "tool_result block"),
        ("[1]", "tool message"),
        ("[3].contents[0].content[2]", "image block"),
        ("[3].contents[0].content", "the boundaries of 2 text blocks"),
    ]
    assert out[-1]["parts"][1]["output"] == "ab"
    with pytest.raises(ConversionError):
        to_ui_messages(messages, strict=True)


def test_every_citation_kind_comes_back_with_a_source_part() -> None:
    text = TextContent(
        "As cited.",
        citations=[
            Citation.web("https://a.test", "A", cited_text="x", start_index=0, end_index=2),
            Citation.web("https://b.test", confidence=0.5),
            Citation.document(1, title="Report", pages=(2, 3), cited_text="y"),
            Citation.file("file-9", filename="data.csv"),
        ],
    )
    message = AssistantMessage([text], id="a", timestamp=1.0)
    out, report = _report([message])
    assert not report
    parts = out[0]["parts"]
    assert [p["type"] for p in parts] == [
        "step-start",
        "text",
        "source-url",
        "source-url",
        "source-document",
        "source-document",
    ]
    assert parts[4] == {
        "type": "source-document",
        "sourceId": "a.0.2",
        "mediaType": "application/octet-stream",
        "title": "Report",
    }
    assert parts[5]["filename"] == "data.csv"
    assert "providerMetadata" not in parts[1]["citations"][0]["source"]
    assert from_ui_messages(out) == [message]


def test_a_generated_image_is_shown_as_a_file_part_and_comes_back() -> None:
    message = image_turn()
    out, report = _report([message])
    assert not report
    parts = out[0]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "tool-image_generation", "file", "text"]
    assert parts[2] == {
        "type": "file",
        "mediaType": "image/png",
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
    }
    assert from_ui_messages(out) == [message]
    chunks = ui_message_chunks([message])
    assert [c["type"] for c in chunks if c["type"] in ("tool-output-available", "file")] == [
        "tool-output-available",
        "file",
    ]


def test_documents_and_session_messages() -> None:
    doc = UserMessage(
        [DocumentContent(b"%PDF-1", media_type="application/pdf", filename="a.pdf")], id="u", timestamp=1.0
    )
    summary = CompactionSummaryMessage("so far", tokens_before=900, id="c", timestamp=2.0)
    out, report = _report([doc, summary])
    assert not report
    assert out[0]["parts"][0]["filename"] == "a.pdf"
    assert out[1]["parts"][0]["type"] == "data-agentmsg-session"
    assert from_ui_messages(out) == [doc, summary]


def _tool_part(state: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool-search", "toolCallId": "c", "state": state, "input": {"q": "x"}} | extra


@pytest.mark.parametrize(
    ("part", "result", "lost"),
    [
        (_tool_part("input-streaming", rawInput='{"q": "x'), None, "streaming input"),
        (_tool_part("input-available"), None, None),
        (_tool_part("approval-requested", approval={"id": "c"}), None, None),
        (_tool_part("approval-requested", approval={"id": "ap", "isAutomatic": True}), None, "the approval id"),
        (_tool_part("approval-responded", approval={"id": "c", "approved": True}), None, None),
        (_tool_part("output-available", output={"hits": 2}), ToolResultContent("c", '{"hits":2}', name="search"), None),
        (
            _tool_part("output-error", errorText="boom"),
            ToolResultContent("c", "boom", is_error=True, name="search"),
            None,
        ),
        (
            _tool_part("output-denied", approval={"id": "c", "approved": False, "reason": "no"}),
            ToolResultContent("c", "The tool call was denied: no", is_error=True, name="search"),
            None,
        ),
        (
            {
                "type": "dynamic-tool",
                "toolName": "search",
                "toolCallId": "c",
                "state": "output-available",
                "input": {"q": "x"},
                "output": "ok",
            },
            ToolResultContent("c", "ok", name="search"),
            None,
        ),
    ],
)
def test_tool_parts_read_in_every_state(
    part: dict[str, Any], result: ToolResultContent | None, lost: str | None
) -> None:
    report = ConversionReport()
    back = from_ui_messages([{"id": "m", "role": "assistant", "parts": [{"type": "step-start"}, part]}], report=report)
    call = back[0].contents[0]
    assert isinstance(call, ToolCallContent)
    assert (call.id, call.name) == ("c", "search")
    assert call.arguments == ('{"q": "x' if part["state"] == "input-streaming" else '{"q":"x"}')
    assert [loss.what for loss in report.losses][:1] == ([lost] if lost else [])
    assert call.requires_approval == ("approval" in part)
    decided = "approved" in part.get("approval", {})
    if decided:
        # the decision on the part comes back as agentmsg places it: a user message after the call
        assert isinstance(back[1], UserMessage)
        (decision,) = back[1].contents
        assert isinstance(decision, ToolApprovalContent)
        assert (decision.call_id, decision.approved) == ("c", part["approval"]["approved"])
        assert decision.reason == part["approval"].get("reason", "")
    if result is None:
        assert len(back) == 1 + decided
    else:
        assert isinstance(back[1 + decided], ToolMessage)
        assert back[1 + decided].contents == (result,)


def test_approvals_map_to_the_tool_part_states_and_back_exactly() -> None:
    original = approval_turn()
    out, report = _report(original)
    assert not report
    assert [m["role"] for m in out] == ["user", "assistant"]
    parts = {p["toolCallId"]: p for p in out[1]["parts"] if "toolCallId" in p}
    assert parts["call_rm"]["state"] == "output-available"
    assert parts["call_rm"]["approval"] == {"id": "call_rm", "approved": True}
    denied = parts["call_deploy"]
    assert denied["state"] == "output-denied"
    assert denied["approval"] == {"id": "call_deploy", "approved": False, "reason": "not on a Friday"}
    # who and when: in the part's agentmsg metadata; the denial text is rebuilt from them, not stored
    assert denied["callProviderMetadata"]["agentmsg"] == {
        "index": 1,
        "approval": {"decided_by": "ann", "decided_at": "2026-11-27T10:00:00Z"},
        "result": {"index": 1},
    }
    assert "output" not in denied
    assert "errorText" not in denied
    assert parts["call_ls"]["state"] == "output-available"
    assert "approval" not in parts["call_ls"]
    assert parts["call_tag"]["state"] == "approval-requested"
    assert parts["call_tag"]["approval"] == {"id": "call_tag"}
    assert from_ui_messages(out) == original


def test_decisions_without_results_and_unusual_shapes_round_trip() -> None:
    question, call, decisions, _, _ = approval_turn()
    # decided, not yet run: approval-responded
    out, report = _report([question, call, decisions])
    assert not report
    states = [p["state"] for p in out[1]["parts"] if "toolCallId" in p]
    assert states == ["approval-responded", "approval-responded", "input-available"]
    assert from_ui_messages(out) == [question, call, decisions]
    # a decision on a call that did not ask, a denial result in words of its own, a requested call answered with no
    # decision: all come back
    odd = [
        AssistantMessage(
            [
                ToolCallContent("x", "shell", arguments="{}"),
                ToolCallContent("y", "shell", arguments="{}", requires_approval=True, index=1),
            ],
            id="o1",
            timestamp=1.0,
        ),
        UserMessage([ToolApprovalContent.deny("x")], id="o2", timestamp=2.0),
        ToolMessage(
            [ToolResultContent("x", "nope", name="shell"), ToolResultContent("y", "ran", name="shell", index=1)],
            id="o3",
            timestamp=3.0,
        ),
    ]
    out, report = _report(odd)
    assert not report
    x, y = (p for p in out[0]["parts"] if "toolCallId" in p)
    assert x["state"] == "output-denied"
    assert x["callProviderMetadata"]["agentmsg"] == {
        "requires_approval": False,
        "result": {"content": "nope", "is_error": False},
    }
    assert y["state"] == "output-available"
    assert "approval" not in y
    assert from_ui_messages(out) == odd


def test_decisions_the_parts_cannot_hold_are_reported() -> None:
    question, call, _, results, _ = approval_turn()
    # after the results (not right after the calls), or beside other blocks: the user message as before, reported
    late = UserMessage([ToolApprovalContent.approve("call_rm")], id="late", timestamp=9.0)
    mixed = UserMessage([TextContent("ok"), ToolApprovalContent.approve("call_rm")], id="mixed", timestamp=9.0)
    # on a call of an earlier step of the turn, still waiting: reading would put the decision right after that step
    first = AssistantMessage(
        [ToolCallContent("x", "shell", arguments="{}", requires_approval=True), ToolCallContent("y", "ls", index=1)],
        id="s1",
        timestamp=5.0,
    )
    answered = ToolMessage([ToolResultContent("y", "ok", name="ls", index=1)], id="s2", timestamp=6.0)
    second = AssistantMessage([TextContent("x waits")], id="s3", timestamp=7.0)
    earlier = UserMessage([ToolApprovalContent.approve("x")], id="s4", timestamp=8.0)
    for messages in (
        [question, call, results, late],
        [question, call, mixed],
        [question, first, answered, second, earlier],
    ):
        _, report = _report(messages)
        assert [loss.what for loss in report.losses] == ["approval block"]


def test_foreign_parts_are_reported() -> None:
    message = {
        "id": "m",
        "role": "assistant",
        "metadata": {"createdAt": 1},
        "parts": [
            {"type": "text", "text": "hi", "state": "done"},
            {"type": "source-url", "sourceId": "s", "url": "https://a.test"},
            {"type": "data-weather", "data": {"t": 1}},
            {"type": "file", "mediaType": "image/png", "url": "https://a.test/x.png"},
            {"type": "step-start"},
            {"type": "text", "text": "more"},
        ],
    }
    report = ConversionReport()
    back = from_ui_messages({"messages": [message]}, report=report)
    assert {loss.what for loss in report.losses} == {
        "metadata key 'createdAt'",
        "source-url part",
        "'data-weather' part",
        "'file' part",
    }
    assert [(m.id, m.text_content()) for m in back] == [("m", "hi"), ("m.1", "more")]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([{"id": "m", "role": "robot", "parts": []}], "[0].role"),
        ([{"id": "m", "role": "user"}], "[0].parts"),
        ([{"id": "m", "role": "user", "parts": [{"type": "text", "text": 3}]}], "[0].parts[0].text"),
        (
            [{"id": "m", "role": "user", "parts": [{"type": "file", "mediaType": "image/png", "url": "nope"}]}],
            "[0].parts[0]",
        ),
        ({"messages": "x"}, "messages"),
    ],
)
def test_bad_input_is_refused_naming_the_field(payload: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        from_ui_messages(payload)
    assert any(v.field.startswith(path) for v in caught.value.violations), caught.value.violations


def test_the_stream_of_a_turn() -> None:
    turn = conversation()[2:]
    chunks = ui_message_chunks(turn, chunk_size=4)
    kinds = [c["type"] for k, c in enumerate(chunks) if k == 0 or c["type"] != chunks[k - 1]["type"]]
    assert kinds == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "finish-step",
        "tool-output-available",
        "tool-output-error",
        "start-step",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "text-start",
        "text-delta",
        "text-end",
        "source-url",
        "finish-step",
        "finish",
    ]
    assert chunks[-1]["finishReason"] == "stop"
    assert "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta") == "Two cities: two calls at once."
    with pytest.raises(ValidationError, match="one assistant turn"):
        ui_message_chunks(conversation())


def test_a_failed_live_message_ends_in_an_error_chunk() -> None:
    stream = UIMessageStream()
    chunks = []
    for event in [
        StreamEvent.message_start("m"),
        StreamEvent.block_start(0, TextContent("")),
        StreamEvent.text_delta(0, "par"),
        StreamEvent.error("overloaded"),
    ]:
        chunks += stream.feed(event)
    assert chunks == [
        {"type": "start-step"},
        {"type": "text-start", "id": "m.0"},
        {"type": "text-delta", "id": "m.0", "delta": "par"},
        {"type": "error", "errorText": "overloaded"},
    ]


def test_finish_reasons() -> None:
    assert [finish_reason(r) for r in (StopReason.STOP, StopReason.TOOL_CALLS, StopReason.LENGTH, None)] == [
        "stop",
        "tool-calls",
        "length",
        "other",
    ]
