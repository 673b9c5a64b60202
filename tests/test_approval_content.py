"""The approval arm and the requires_approval flag: construction, the contract's rules, every form round-trips."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentmsg import (
    AssistantMessage,
    ToolApprovalContent,
    ToolApprovalDecision,
    ToolCallContent,
    ToolMessage,
    UserMessage,
    ValidationError,
    content_from_proto,
    message_from_proto,
    validate,
)
from agentmsg.dict_form import content_from_dict, content_to_dict, message_from_dict, message_to_dict
from agentmsg.v1 import content_pb2, message_pb2

WHEN = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)


def test_a_decision_holds_every_field_and_round_trips() -> None:
    block = ToolApprovalContent.deny("call_1", "too broad", decided_by="ann@example.com", decided_at=WHEN)
    assert (block.call_id, block.decision, block.reason, block.decided_by) == (
        "call_1",
        ToolApprovalDecision.DENIED,
        "too broad",
        "ann@example.com",
    )
    assert block.decided_at == WHEN
    assert not block.approved
    message = UserMessage([block])
    for again in (
        UserMessage.from_bytes(message.to_bytes()),
        UserMessage.from_json(message.to_json()),
        message_from_dict(message_to_dict(message)),
    ):
        assert again.to_bytes() == message.to_bytes()
    assert content_to_dict(block) == {
        "type": "approval",
        "call_id": "call_1",
        "decision": "denied",
        "reason": "too broad",
        "decided_by": "ann@example.com",
        "decided_at": "2026-03-04T05:06:07.890Z",
    }
    assert content_from_dict(content_to_dict(block)).to_bytes() == block.to_bytes()
    match block:
        case ToolApprovalContent(call_id, decision, reason):
            assert (call_id, decision, reason) == ("call_1", "denied", "too broad")


def test_approve_with_nothing_but_the_call() -> None:
    block = ToolApprovalContent.approve("c")
    assert block.approved
    assert block.decided_at is None
    assert block.original is None
    assert content_to_dict(block) == {"type": "approval", "call_id": "c", "decision": "approved"}


def test_denial_result_names_who_and_why() -> None:
    result = ToolApprovalContent.deny("c", "no", decided_by="bob").denial_result("rm")
    assert (result.id, result.name, result.is_error, result.text) == (
        "c",
        "rm",
        True,
        "The tool call was denied by bob: no",
    )
    assert ToolApprovalContent.deny("c").denial_text() == "The tool call was denied"
    ToolMessage([result])  # a tool message takes it


def test_the_contract_refuses_bad_decisions() -> None:
    with pytest.raises(ValidationError) as caught:
        ToolApprovalContent("", "approved")
    assert caught.value.violations[0].field == "approval.call_id"
    with pytest.raises(ValidationError) as caught:
        ToolApprovalContent("c", "maybe")
    assert caught.value.violations[0].field == "decision"
    unset = message_pb2.Message(id="m")
    unset.timestamp.FromSeconds(1)
    unset.user.content.add().approval.CopyFrom(content_pb2.ToolApprovalContent(call_id="c"))
    with pytest.raises(ValidationError) as caught:
        validate(unset)
    assert caught.value.violations[0].field == "user.content[0].approval.decision"
    assert caught.value.violations[0].rule_id == "enum.not_in"
    with pytest.raises(ValidationError) as caught:
        AssistantMessage([ToolApprovalContent.approve("c")])
    assert caught.value.violations[0].rule_id == "assistant.content.kind"
    with pytest.raises(ValidationError):
        ToolMessage([ToolApprovalContent.approve("c")])  # type: ignore[list-item]


def test_a_newer_peers_decision_is_kept_and_not_read_as_one() -> None:
    pb = content_pb2.Content(approval=content_pb2.ToolApprovalContent(call_id="c", decision=7))
    block = content_from_proto(pb)
    assert isinstance(block, ToolApprovalContent)
    assert block.decision is None
    assert not block.approved
    assert block.to_bytes() == pb.SerializeToString()


def test_requires_approval_on_a_tool_call() -> None:
    call = ToolCallContent("c", "rm", {"path": "x"}, requires_approval=True)
    assert call.requires_approval
    assert content_to_dict(call)["requires_approval"] is True
    assert content_from_dict(content_to_dict(call)).to_bytes() == call.to_bytes()
    assert "requires_approval" not in content_to_dict(ToolCallContent("c", "rm"))
    with pytest.raises(ValidationError):
        ToolCallContent("c", "rm", requires_approval="yes")  # type: ignore[arg-type]
    message = AssistantMessage([call])
    assert message_from_proto(message.pb).contents[0].requires_approval  # type: ignore[union-attr]
