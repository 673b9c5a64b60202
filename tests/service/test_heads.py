"""The head a path walk reads of a stored entry (``agentmsg.service.heads.Head``) says what a full parse says.

For an entry of every role, with and without a parent id, the head's id, parent id and role arm equal the parsed
message's, a compaction's first kept entry is read from its arm, and the head declares exactly ``Message``'s role
arms by name and field number; an arm this version does not know is an unknown field to both (no arm).
"""

from __future__ import annotations

import pytest

import agentmsg as am
from agentmsg.service.heads import Head, first_kept_id
from agentmsg.v1 import message_pb2

ENTRIES = [
    am.SystemMessage.text("be brief", id="s"),
    am.UserMessage.text("hi", id="u", parent_id="s"),
    am.AssistantMessage([am.TextContent("t"), am.ToolCallContent("c1", "search", {"q": 1})], id="a"),
    am.ToolMessage([am.ToolResultContent("c1", [am.TextContent("found")])], id="t", parent_id="a"),
    am.CustomMessage("note", [am.TextContent("n")], to_model=True, id="n"),
    am.BranchSummaryMessage("left", "t", id="b", parent_id="u"),
    am.CompactionSummaryMessage("summary", 120, first_kept_id="u", id="c"),
    am.CompactionSummaryMessage("summary", None, id="c0", parent_id="b"),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: entry.id)
def test_the_head_reads_what_a_full_parse_reads(entry: am.AgentMessage) -> None:
    stored = entry.to_bytes()
    head = Head.FromString(stored)
    parsed = message_pb2.Message.FromString(stored)
    assert (head.id, head.parent_id, head.WhichOneof("role")) == (
        parsed.id,
        parsed.parent_id,
        parsed.WhichOneof("role"),
    )
    if isinstance(entry, am.CompactionSummaryMessage):
        assert first_kept_id(head) == entry.first_kept_id


def test_the_head_declares_the_role_arms_of_message() -> None:
    message = message_pb2.Message.DESCRIPTOR
    declared = {arm.name: arm.number for arm in Head.DESCRIPTOR.oneofs_by_name["role"].fields}
    assert declared == {arm.name: arm.number for arm in message.oneofs_by_name["role"].fields}
    for name in ("id", "parent_id"):
        assert Head.DESCRIPTOR.fields_by_name[name].number == message.fields_by_name[name].number


def test_an_arm_this_version_lacks_is_no_arm_to_either() -> None:
    pb = message_pb2.Message(id="x", parent_id="p")
    pb.timestamp.seconds = 1
    stored = pb.SerializeToString() + bytes([15 << 3 | 2, 2, 0x0A, 0])  # field 15: a newer contract's arm
    head = Head.FromString(stored)
    assert (head.id, head.parent_id, head.WhichOneof("role")) == ("x", "p", None)
    assert message_pb2.Message.FromString(stored).WhichOneof("role") is None
