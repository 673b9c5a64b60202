"""Tool approval across the converters: the Responses MCP approval items round-trip exactly; the others report."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from agentmsg import (
    AssistantMessage,
    ToolApprovalContent,
    ToolApprovalDecision,
    ToolCallContent,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from agentmsg.providers import adaline, anthropic, gemini, openai_chat, openai_responses
from agentmsg.providers._common import ConversionReport

# The wire shapes of the openai SDK's McpApprovalRequest output item and McpApprovalResponse input item.
REQUEST: dict[str, Any] = {
    "type": "mcp_approval_request",
    "id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
    "server_label": "deepwiki",
    "name": "ask_question",
    "arguments": '{"repoName":"modelcontextprotocol/modelcontextprotocol","question":"transports?"}',
}
APPROVED: dict[str, Any] = {
    "type": "mcp_approval_response",
    "approval_request_id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
    "approve": True,
}
DENIED: dict[str, Any] = {
    "type": "mcp_approval_response",
    "id": "mcpa_1",
    "approval_request_id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
    "approve": False,
    "reason": None,
}


@pytest.mark.parametrize("response", [APPROVED, DENIED, {**DENIED, "reason": "not that repository"}])
def test_mcp_approval_items_round_trip_exactly(response: dict[str, Any]) -> None:
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ask"}]}, REQUEST, response]
    before = copy.deepcopy(items)
    messages = openai_responses.from_openai_responses(items)
    assert [m.role.value for m in messages] == ["user", "assistant", "user"]
    decision = messages[2].contents[0]
    assert isinstance(decision, ToolApprovalContent)
    assert decision.call_id == REQUEST["id"]
    assert decision.approved is response["approve"]
    assert decision.decision is (ToolApprovalDecision.APPROVED if response["approve"] else ToolApprovalDecision.DENIED)
    assert decision.reason == (response.get("reason") or "")
    report = ConversionReport()
    assert openai_responses.to_openai_responses(messages, report=report)["input"] == before
    assert report.losses == []
    # Through the contract's bytes too.
    again = [UserMessage.from_bytes(m.to_bytes()) if isinstance(m, UserMessage) else m for m in messages]
    assert openai_responses.to_openai_responses(again)["input"] == before


def test_a_decision_made_by_hand_answers_an_mcp_request() -> None:
    messages = openai_responses.from_openai_responses([REQUEST])
    when = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    decision = ToolApprovalContent.deny(REQUEST["id"], "no", decided_by="ann", decided_at=when)
    report = ConversionReport()
    items = openai_responses.to_openai_responses([*messages, UserMessage([decision])], report=report)["input"]
    assert items[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": REQUEST["id"],
        "approve": False,
        "reason": "no",
    }
    assert {loss.what for loss in report.losses} == {"approval decided_by", "approval decided_at"}


def test_mcp_approval_response_bad_input_names_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        openai_responses.from_openai_responses([{**APPROVED, "approve": "yes"}])
    assert "[0].approve" in str(caught.value)
    with pytest.raises(ValidationError) as caught:
        openai_responses.from_openai_responses([{**APPROVED, "approval_request_id": ""}])
    assert "[0].approval_request_id" in str(caught.value)


def _denied_session() -> list[Any]:
    call = ToolCallContent("call_1", "delete_file", {"path": "/etc/hosts"}, requires_approval=True)
    decision = ToolApprovalContent.deny("call_1", "not on this machine", decided_by="ann")
    return [
        UserMessage.text("tidy up"),
        AssistantMessage([call]),
        UserMessage([decision]),
        ToolMessage([decision.denial_result("delete_file")]),
    ]


DENIAL = "The tool call was denied by ann: not on this machine"


def test_other_formats_report_the_decision_and_send_the_denial_result() -> None:
    messages = _denied_session()
    report = ConversionReport()
    payload = anthropic.to_anthropic(messages, report=report)
    assert [loss.what for loss in report.losses] == ["tool approval"]
    assert report.losses[0].path == "[2].contents[0]"
    assert payload["messages"][-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": DENIAL, "is_error": True}],
    }
    report = ConversionReport()
    chat = openai_chat.to_openai_chat(messages, report=report)
    assert "[2].contents[0]" in [loss.path for loss in report.losses]
    assert chat[-1] == {"role": "tool", "tool_call_id": "call_1", "content": DENIAL}
    report = ConversionReport()
    responses = openai_responses.to_openai_responses(messages, report=report)["input"]
    assert "[2].contents[0]" in [loss.path for loss in report.losses]
    assert responses[-1]["type"] == "function_call_output"
    assert responses[-1]["output"] == DENIAL
    report = ConversionReport()
    gemini.to_gemini(messages, report=report)
    assert "[2].contents[0]" in [loss.path for loss in report.losses]


def test_adaline_keeps_the_decision_and_the_flag() -> None:
    messages = _denied_session()
    back = adaline.from_adaline(adaline.to_adaline(messages))
    call = back[1].contents[0]
    assert isinstance(call, ToolCallContent)
    assert call.requires_approval
    assert back[2].contents[0].to_dict() == messages[2].contents[0].to_dict()
    report = ConversionReport()
    adaline.to_adaline(messages, report=report, include_metadata=False)
    assert "[2].contents[0]" in [loss.path for loss in report.losses]
