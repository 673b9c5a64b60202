"""agentmsg <-> AG-UI 1.0: messages both ways with their losses, checked by AG-UI's own models, and the events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agui_check import check_event, check_message, fold_events, without_metadata
from conversation import ANTHROPIC, PNG, approval_turn, conversation

from agentmsg import (
    AssistantMessage,
    BranchSummaryMessage,
    CustomMessage,
    DocumentContent,
    ImageContent,
    RedactedThinkingContent,
    SystemMessage,
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
from agentmsg.ui.ag_ui import (
    ACTIVITY_CONTENT,
    APPROVAL_REASON,
    AGUIEventStream,
    approval_interrupts,
    decisions_from_resume,
    from_ag_ui,
    message_events,
    messages_snapshot,
    run_error,
    run_finished,
    run_started,
    to_ag_ui,
)


def _report(messages: list[Any]) -> tuple[list[dict[str, Any]], ConversionReport]:
    report = ConversionReport()
    return to_ag_ui(messages, report=report), report


def test_the_conversation_round_trips_but_for_the_citation_it_reports() -> None:
    original = conversation()
    out, report = _report(original)
    for item in out:
        check_message(item)
    assert [(loss.path, loss.what) for loss in report.losses] == [("[4].contents[2].citations", "1 citation(s)")]
    back = from_ag_ui(out)
    assert back[:4] == original[:4]
    cited = original[4]
    assert isinstance(cited, AssistantMessage)
    text = cited.contents[2]
    assert isinstance(text, TextContent)
    uncited = AssistantMessage(
        [*cited.contents[:2], TextContent(text.content)],
        usage=cited.usage,
        stop_reason=cited.stop_reason,
        stop_reason_raw=cited.stop_reason_raw,
        provenance=cited.provenance,
        id=cited.id,
        timestamp=cited.timestamp,
    )
    assert back[4] == uncited


def test_the_shape_is_the_protocols() -> None:
    out, _ = _report(conversation())
    assert [(m["id"], m["role"]) for m in out] == [
        ("sys", "system"),
        ("u1", "user"),
        ("a1.0", "reasoning"),
        ("a1", "assistant"),
        ("t1", "tool"),
        ("t1.1", "tool"),
        ("a2.0", "activity"),
        ("a2.1", "activity"),
        ("a2", "assistant"),
    ]
    reasoning, assistant = out[2], out[3]
    assert reasoning["content"] == "Two cities: two calls at once."
    assert reasoning["encryptedValue"] == "sig-abc"
    # arguments verbatim, spacing and all: an exact match
    assert [c["function"]["arguments"] for c in assistant["toolCalls"]] == [
        '{"city": "Paris"}',
        '{"city":"Oslo","units":"metric"}',
    ]
    assert assistant["metadata"]["agentmsg"]["provenance"]["provider"] == "anthropic"
    assert out[5]["error"] == "station offline"
    assert out[1]["content"][1]["source"] == {
        "type": "data",
        "value": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg+M/A8B8ABQACAeKw4dYAAAAASUVORK5CYII=",
        "mimeType": "image/png",
    }
    assert out[6]["activityType"] == ACTIVITY_CONTENT
    assert out[6]["content"]["type"] == "hosted_tool_call"


def test_signed_reasoning_crosses_only_with_provenance() -> None:
    blocks = [
        ThinkingContent("hmm", "sig"),
        RedactedThinkingContent("opaque"),
        ToolCallContent("c1", "f", {}, signature="tsig"),
    ]
    unvouched = AssistantMessage(blocks, id="a", timestamp=1.0)
    out, report = _report([unvouched])
    assert all("encryptedValue" not in m for m in out)
    assert "encryptedValue" not in out[-1]["toolCalls"][0]
    assert [loss.what for loss in report.losses] == ["thinking signature", "redacted thinking", "tool-call signature"]
    assert from_ag_ui(out) == [
        AssistantMessage([ThinkingContent("hmm"), ToolCallContent("c1", "f", {})], id="a", timestamp=1.0)
    ]

    vouched = AssistantMessage(blocks, provenance=ANTHROPIC, id="a", timestamp=1.0)
    out, report = _report([vouched])
    assert not report
    assert [m.get("encryptedValue") for m in out[:2]] == ["sig", "opaque"]
    assert out[2]["toolCalls"][0]["encryptedValue"] == "tsig"
    for item in out:
        check_message(item)
    assert from_ag_ui(out) == [vouched]


def test_what_ag_ui_cannot_hold_is_reported_and_strict_refuses_it() -> None:
    message = AssistantMessage(
        [TextContent("a"), ToolCallContent("c1", "f", {"x": 1}), TextContent("b")], id="m", timestamp=2.0
    )
    out, report = _report([message])
    assert out[0]["content"] == "ab"
    assert {loss.what for loss in report.losses} == {"block order", "the boundaries of 2 text blocks"}
    with pytest.raises(ConversionError, match="AG-UI messages cannot hold 2 item"):
        to_ag_ui([message], strict=True)
    with pytest.warns(UserWarning, match="2 item"):
        to_ag_ui([message])
    doc = UserMessage([DocumentContent(b"%PDF-1", media_type="application/pdf", title="T")], id="u", timestamp=3.0)
    _, report = _report([doc])
    assert [(loss.path, loss.what) for loss in report.losses] == [("[0].contents[0].title", "document title")]


def test_tool_results_metadata_terminate_and_a_users_results_come_back() -> None:
    call = AssistantMessage([ToolCallContent("c1", "lookup", {"q": 1})], id="a", timestamp=1.0)
    results = ToolMessage(
        [ToolResultContent("c1", [TextContent("see"), ImageContent(PNG)], metadata={"rows": 3}, terminate=True)],
        id="t",
        timestamp=2.0,
    )
    user = UserMessage(
        [TextContent("and this one"), ToolResultContent("c1", "late", name="other")], id="u", timestamp=3.0
    )
    out, report = _report([call, results, user])
    assert not report
    for item in out:
        check_message(item)
    assert out[1]["content"][1]["type"] == "image"
    assert out[3]["role"] == "tool"
    assert out[3]["metadata"]["agentmsg"] == {"name": "other", "of": "u"}
    assert from_ag_ui(out) == [call, results, user]


def test_session_messages_travel_as_activity() -> None:
    custom = CustomMessage("note", [TextContent("remember")], {"k": [1, 2]}, id="c", timestamp=5.0)
    summary = BranchSummaryMessage("we went left", "x1", id="b", timestamp=6.0)
    out, report = _report([custom, summary])
    assert not report
    assert [m["activityType"] for m in out] == ["agentmsg.session", "agentmsg.session"]
    for item in out:
        check_message(item)
    assert from_ag_ui(out) == [custom, summary]


def test_foreign_messages_read_in_the_protocols_sense() -> None:
    payload = {
        "threadId": "t",
        "messages": [
            {"id": "d", "role": "developer", "content": "be brief", "metadata": {"app": 1}},
            {
                "id": "u",
                "role": "user",
                "content": [
                    {
                        "type": "video",
                        "source": {"type": "url", "value": "https://x.test/v.mp4", "mimeType": "video/mp4"},
                    }
                ],
            },
            {"id": "r", "role": "reasoning", "content": "thinking", "encryptedValue": "e"},
            {
                "id": "a",
                "role": "assistant",
                "content": "hi",
                "toolCalls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"id": "t", "role": "tool", "toolCallId": "c", "content": "done"},
            {"id": "x", "role": "activity", "activityType": "plan", "content": {"steps": ["a"]}},
        ],
    }
    report = ConversionReport()
    back = from_ag_ui(payload, report=report)
    assert {loss.what for loss in report.losses} == {"developer role", "metadata key 'app'", "video part"}
    system, user, assistant, tool, custom = back
    assert isinstance(system, SystemMessage)
    assert system.text_content() == "be brief"
    assert isinstance(user.contents[0], DocumentContent)
    assert user.contents[0].url == "https://x.test/v.mp4"
    assert isinstance(assistant, AssistantMessage)
    assert assistant.contents == (ThinkingContent("thinking", "e"), TextContent("hi"), ToolCallContent("c", "f", {}))
    assert isinstance(tool, ToolMessage)
    assert tool.results()[0].name == "f"
    assert isinstance(custom, CustomMessage)
    assert (custom.custom_type, custom.details) == ("plan", {"steps": ["a"]})


def test_reasoning_with_no_assistant_after_it_is_its_own_message() -> None:
    back = from_ag_ui(
        [{"id": "r", "role": "reasoning", "content": "alone"}, {"id": "u", "role": "user", "content": "hi"}]
    )
    assert [type(m).__name__ for m in back] == ["AssistantMessage", "UserMessage"]
    assert (back[0].id, back[0].contents) == ("r", (ThinkingContent("alone"),))


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([{"id": "u", "role": "user", "content": 5}], "[0].content"),
        ([{"id": "u", "role": "robot", "content": "x"}], "[0].role"),
        ([{"role": "user", "content": "x"}], "[0].id"),
        ([{"id": "a", "role": "assistant", "toolCalls": [{"id": "c"}]}], "[0].toolCalls[0]"),
        (
            [{"id": "u", "role": "user", "content": [{"type": "image", "source": {"type": "ftp", "value": "x"}}]}],
            "[0].content[0].source.type",
        ),
        (
            [
                {
                    "id": "u",
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "url", "value": "not a url"}}],
                }
            ],
            "[0].content[0].source",
        ),
        (
            [
                {
                    "id": "t",
                    "role": "tool",
                    "toolCallId": "c",
                    "content": "x",
                    "metadata": {"agentmsg": {"of": "nobody"}},
                }
            ],
            "[0].metadata.agentmsg.of",
        ),
        ("not a list", ""),
    ],
)
def test_bad_input_is_refused_naming_the_field(payload: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        from_ag_ui(payload)
    assert any(v.field.startswith(path) for v in caught.value.violations), caught.value.violations


# --- events --------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [None, 3])
def test_the_events_of_a_turn_build_the_snapshots_messages(chunk_size: int | None) -> None:
    turn = conversation()[2:]
    events: list[dict[str, Any]] = []
    report = ConversionReport()
    for message in turn:
        events += message_events(message, chunk_size=chunk_size, report=report)
    for event in events:
        check_event(event)
    assert [(loss.path, loss.what) for loss in report.losses] == [("[2].citation", "citation")]
    snapshot = to_ag_ui(turn, report=ConversionReport())
    # the client builds the same messages; the order differs only where events come as they are made
    assert sorted(fold_events(events), key=lambda m: m["id"]) == sorted(
        without_metadata(snapshot), key=lambda m: m["id"]
    )
    kinds = [e["type"] for k, e in enumerate(events) if k == 0 or e["type"] != events[k - 1]["type"]]
    assert kinds[:8] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
    ]


def test_a_live_stream_without_provenance_keeps_its_signature_back() -> None:
    stream = AGUIEventStream()
    events = []
    for event in [
        StreamEvent.message_start("m"),
        StreamEvent.block_start(0, ThinkingContent("")),
        StreamEvent.thinking_delta(0, "why"),
        StreamEvent.signature_delta(0, "sig"),
        StreamEvent.block_stop(0),
        StreamEvent.message_stop("stop"),
    ]:
        events += stream.feed(event)
    assert [e["type"] for e in events] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    assert [loss.what for loss in stream.losses] == ["thinking signature"]


def test_run_events_and_the_snapshot_validate() -> None:
    messages = conversation()
    finished = run_finished("th", "r1", messages=messages)
    assert finished["usage"][0] == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "inputTokens": 130,
        "outputTokens": 40,
        "cachedInputTokens": 10,
    }
    snapshot = messages_snapshot(messages, report=ConversionReport())
    for event in (run_started("th", "r1", parent_run_id="r0"), snapshot, finished, run_error("boom", code="E")):
        check_event(event)
    assert from_ag_ui(snapshot)[:4] == messages[:4]
    assert json.loads(json.dumps(snapshot)) == snapshot


def test_approval_interrupts_a_run_and_a_resume_gives_the_decisions() -> None:
    question, call, decisions, results, waiting = approval_turn()
    # before any decision, the run ends on an interrupt a call
    finished = run_finished("th", "r1", messages=[question, call])
    check_event(finished)
    assert finished["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {"id": "call_rm", "reason": APPROVAL_REASON, "toolCallId": "call_rm"},
            {"id": "call_deploy", "reason": APPROVAL_REASON, "toolCallId": "call_deploy"},
        ],
    }
    # a decision or a result ends the wait: only the later call still waits
    assert approval_interrupts([call, decisions, results, waiting]) == [
        {"id": "call_tag", "reason": APPROVAL_REASON, "toolCallId": "call_tag"}
    ]
    assert run_finished("th", "r2", messages=[call, decisions, results])["outcome"] == {"type": "success"}
    resume = [
        {"interruptId": "call_rm", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "call_deploy", "status": "resolved", "payload": {"approved": False, "reason": "not today"}},
        {"interruptId": "call_tag", "status": "cancelled"},
    ]
    assert decisions_from_resume(resume, decided_by="ann") == [
        ToolApprovalContent.approve("call_rm", decided_by="ann"),
        ToolApprovalContent.deny("call_deploy", "not today", decided_by="ann"),
    ]


def test_a_malformed_resume_entry_is_refused_by_its_path() -> None:
    bad = [
        {"interruptId": "c", "status": "resolved", "payload": {"approved": "yes"}},
        {"interruptId": "", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "d", "status": "done"},
    ]
    with pytest.raises(ValidationError) as info:
        decisions_from_resume(bad)
    assert {v.field for v in info.value.violations} == {
        "resume[0].payload.approved",
        "resume[1].interruptId",
        "resume[2].status",
    }


def test_approval_in_ag_ui_messages() -> None:
    question, call, decisions, results, _ = approval_turn()
    report = ConversionReport()
    out = to_ag_ui([question, call, decisions, results], report=report)
    for message in out:
        check_message(message)
    # the call's requires_approval rides in its agentmsg metadata; the decision has no message to live in
    assert [loss.what for loss in report.losses] == ["approval block", "approval block"]
    back = from_ag_ui(out)
    assert back[1] == call
