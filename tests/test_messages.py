"""Message classes: seed-1 names and behaviours, defaults, helpers, dispatch."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from samples import every_role, png_bytes

import agentmsg as am
from agentmsg.v1 import content_pb2, message_pb2


def test_ids_default_to_uuid4_and_timestamps_to_now() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    first = am.UserMessage.text("hi")
    second = am.UserMessage.text("hi")
    assert uuid.UUID(first.id).version == 4
    assert first.id != second.id
    assert before <= first.datetime <= datetime.now(UTC) + timedelta(seconds=1)
    assert first.datetime.tzinfo is UTC


def test_timestamp_accepts_datetime_and_epoch_seconds() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert am.SystemMessage.text("x", timestamp=when).datetime == when
    assert am.SystemMessage.text("x", timestamp=when.timestamp()).datetime == when
    with pytest.raises(am.ValidationError) as info:
        am.SystemMessage.text("x", timestamp="yesterday")  # type: ignore[arg-type]
    assert info.value.violations[0].field == "timestamp"


@pytest.mark.parametrize(
    ("message", "role"),
    [
        (am.SystemMessage.text("s"), am.Role.SYSTEM),
        (am.UserMessage.text("u"), am.Role.USER),
        (am.AssistantMessage.text("a"), am.Role.ASSISTANT),
        (am.ToolMessage.from_result(am.ToolResultContent("c", "r")), am.Role.TOOL),
        (am.CustomMessage("k"), am.Role.CUSTOM),
        (am.BranchSummaryMessage("b", "e1"), am.Role.BRANCH_SUMMARY),
        (am.CompactionSummaryMessage("c", 10), am.Role.COMPACTION_SUMMARY),
    ],
)
def test_role_is_the_oneof_arm(message: am.BaseMessage, role: am.Role) -> None:
    assert message.role is role
    assert message.pb.WhichOneof("role") == role.value
    assert role == role.value  # a str enum with the seed's values


def test_seed_factories() -> None:
    assert am.SystemMessage.text("be brief").text_content() == "be brief"
    user = am.UserMessage.with_images("what?", ["https://example.test/a.png", png_bytes()], detail="low")
    kinds = [type(c) for c in user.contents]
    assert kinds == [am.TextContent, am.ImageContent, am.ImageContent]
    image = user.contents[1]
    assert isinstance(image, am.ImageContent)
    assert image.detail is am.ImageDetail.LOW
    audio = am.UserMessage.with_audio("listen", [b"OggS" + bytes(10)])
    assert isinstance(audio.contents[1], am.AudioContent)
    assert audio.contents[1].media_type == "audio/ogg"
    results = [am.ToolResultContent("a", "1"), am.ToolResultContent("b", "2")]
    assert am.ToolMessage.from_results(results).results() == results
    assert am.ToolMessage.from_result(results[0]).contents == (results[0],)


def test_assistant_helpers_follow_the_seed() -> None:
    message = am.AssistantMessage(
        [
            am.ThinkingContent("t1", "s1"),
            am.TextContent("Hello "),
            am.ToolCallContent("c1", "f", {"x": 1}),
            am.TextContent("world"),
            am.ThinkingContent("t2"),
        ]
    )
    assert message.text_content() == "Hello world"
    assert [c.id for c in message.tool_calls()] == ["c1"]
    assert [t.content for t in message.thinking()] == ["t1", "t2"]
    assert message.usage is None
    assert message.stop_reason is None
    assert message.provenance is None
    assert message.error == ""


def test_assistant_fields() -> None:
    message = every_role()[2]
    assert isinstance(message, am.AssistantMessage)
    assert message.stop_reason is am.StopReason.TOOL_CALLS
    assert message.stop_reason_raw == "tool_use"
    assert message.usage is not None
    assert message.usage.input_tokens == 100
    assert message.usage.cache_read_tokens == 0  # known zero...
    assert message.usage.cost is not None
    assert message.usage.cost.known("cache_read") is None  # ...is not unknown
    assert message.usage.cost.total == pytest.approx(0.003)
    assert message.provenance is not None
    assert (message.provenance.provider, message.provenance.model) == ("anthropic", "claude-x")


def test_usage_distinguishes_unknown_from_zero() -> None:
    unknown = am.Usage()
    zero = am.Usage(0, 0, 0, 0, 0, 0, am.UsageCost(0, 0, 0, 0, 0))
    assert unknown != zero
    # Read as the seed reads it, an unknown count is 0; presence says whether it was reported.
    assert (unknown.input_tokens, unknown.known("input_tokens"), unknown.reported) == (0, None, frozenset())
    assert (zero.input_tokens, zero.known("input_tokens")) == (0, 0)
    assert zero.reported == {*am.usage.TOKEN_FIELDS[:6], "cost"}  # the TTL split was not given
    assert am.Usage.from_bytes(unknown.to_bytes()).known("output_tokens") is None
    assert am.Usage.from_bytes(zero.to_bytes()).known("output_tokens") == 0
    # The seed's cost is always there: an unknown cost reads 0.0 and is not reported.
    assert (unknown.cost.total, "cost" in unknown.reported, unknown.cost.reported) == (0.0, False, frozenset())
    assert zero.cost.known("total") == 0.0
    with pytest.raises(am.ValidationError, match="not a token count"):
        unknown.known("tokens")
    big = am.Usage(input_tokens=2**40)
    assert am.Usage.from_bytes(big.to_bytes()).input_tokens == 2**40


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"input_tokens": -1}, "input_tokens", "int64.gte"),
        ({"output_tokens": 1.5}, "output_tokens", "type"),
        ({"total_tokens": True}, "total_tokens", "type"),
        ({"reasoning_tokens": 2**63}, "reasoning_tokens", "int64"),
        ({"cost": {"total": 1}}, "cost", "type"),
    ],
)
def test_usage_rejects_bad_values(kwargs: dict[str, object], field: str, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        am.Usage(**kwargs)  # type: ignore[arg-type]
    assert (info.value.violations[0].field, info.value.violations[0].rule_id) == (field, rule)


def test_usage_cost_rejects_negative_and_nan() -> None:
    with pytest.raises(am.ValidationError, match="total"):
        am.UsageCost(total=-0.1)
    with pytest.raises(am.ValidationError, match="input"):
        am.UsageCost(input=float("nan"))


def test_session_messages() -> None:
    custom = am.CustomMessage("note", [am.TextContent("n")], details=[1, "two", None])
    assert custom.custom_type == "note"
    assert custom.details == [1, "two", None]
    assert am.CustomMessage("note").details is None
    assert am.CustomMessage("note", details=0).details == 0
    branch = am.BranchSummaryMessage("left", "e9")
    assert (branch.summary, branch.from_id, branch.contents) == ("left", "e9", ())
    assert branch.text_content() == "left"
    compaction = am.CompactionSummaryMessage("short")
    assert compaction.tokens_before is None
    assert am.CompactionSummaryMessage("short", 0).tokens_before == 0


def test_from_proto_dispatches_by_role_and_checks_the_class() -> None:
    pb = every_role()[0].pb
    assert isinstance(am.BaseMessage.from_proto(pb), am.SystemMessage)
    assert isinstance(am.message_from_proto(pb), am.SystemMessage)
    assert isinstance(am.SystemMessage.from_bytes(pb.SerializeToString()), am.SystemMessage)
    with pytest.raises(am.DecodeError, match="expected UserMessage, got SystemMessage"):
        am.UserMessage.from_bytes(pb.SerializeToString())
    with pytest.raises(TypeError):
        am.BaseMessage.from_proto(content_pb2.Content())  # type: ignore[arg-type]


def test_contents_are_immutable_views() -> None:
    message = am.UserMessage([am.TextContent("hi"), am.TextContent("there")])
    contents = message.contents
    assert isinstance(contents, Sequence)
    assert isinstance(contents, am.Blocks)
    with pytest.raises(AttributeError):
        contents.append(am.TextContent("x"))  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        contents[0] = am.TextContent("x")  # type: ignore[index]
    # A tuple in every way a reader sees: equality, slices, concatenation, unpacking, match, repr.
    assert contents == (am.TextContent("hi"), am.TextContent("there"))
    assert contents != [am.TextContent("hi"), am.TextContent("there")]
    assert contents[1:] == (am.TextContent("there"),)
    assert isinstance(contents[1:], tuple)
    assert contents[-1] == am.TextContent("there")
    assert len(contents) == 2
    bang = (am.TextContent("!"),)
    assert contents + bang == (am.TextContent("hi"), am.TextContent("there"), am.TextContent("!"))
    assert bang + contents == (am.TextContent("!"), am.TextContent("hi"), am.TextContent("there"))
    first, second = contents
    assert (first.content, second.content) == ("hi", "there")
    assert contents.index(am.TextContent("there")) == 1
    assert am.TextContent("hi") in contents
    match contents:
        case [am.TextContent("hi"), am.TextContent(rest)]:
            assert rest == "there"
        case _:
            pytest.fail("a sequence pattern matches the blocks")
    assert repr(contents) == repr(tuple(contents))
    assert not am.BranchSummaryMessage("s").contents
    assert am.BranchSummaryMessage("s").contents == ()
    with pytest.raises(IndexError):
        contents[2]
    with pytest.raises(TypeError):
        hash(contents)


def test_match_on_the_closed_unions() -> None:
    def describe(message: am.AgentMessage) -> str:
        match message:
            case am.AssistantMessage():
                parts = []
                for block in message.contents:
                    match block:
                        case am.TextContent(text):
                            parts.append(f"text:{text}")
                        case am.ToolCallContent(call_id, name, arguments):
                            parts.append(f"call:{call_id}:{name}:{arguments}")
                        case am.ThinkingContent(thought, signature):
                            parts.append(f"thinking:{thought}:{signature}")
                        case _:
                            parts.append(block.type or "unknown")
                return ",".join(parts)
            case am.SystemMessage() | am.UserMessage():
                return message.text_content()
            case _:
                return type(message).__name__

    assert describe(every_role()[0]) == "You are terse."
    assert describe(every_role()[2]).startswith(
        "thinking:It is a picture.:sig-1,redacted_thinking,text:Checking.,call:"
    )
    assert describe(every_role()[7]) == "BranchSummaryMessage"


def test_unknown_role_and_arm_from_a_newer_peer_are_kept() -> None:
    # A newer peer's message: role arm 99 and a content arm 99 unknown to this version.
    newer = message_pb2.Message(id="n1")
    newer.timestamp.FromSeconds(1)
    raw = newer.SerializeToString() + b"\x9a\x06\x02\x08\x01"  # field 99, length 2, payload
    message = am.BaseMessage.from_bytes(raw)
    assert isinstance(message, am.UnknownMessage)
    assert message.role is None
    assert message.to_bytes() == raw
    block_raw = b"\x9a\x06\x00"
    block = am.ContentBase.from_bytes(block_raw)
    assert isinstance(block, am.UnknownContent)
    assert block.type is None
    assert block.to_bytes() == block_raw
    # Kept inside a known message too.
    user = am.UserMessage.text("hi", id="u", timestamp=1)
    user.pb.user.content.add().MergeFromString(block_raw)
    decoded = am.UserMessage.from_bytes(user.to_bytes())
    assert isinstance(decoded.contents[1], am.UnknownContent)
    assert decoded.to_bytes() == user.to_bytes()


def test_conversation_is_a_sequence() -> None:
    conversation = am.Conversation()
    assert len(conversation) == 0
    conversation.append(am.UserMessage.text("a"))
    conversation.extend([am.AssistantMessage.text("b")])
    assert [m.text_content() for m in conversation] == ["a", "b"]
    assert conversation[-1].role is am.Role.ASSISTANT
    with pytest.raises(am.ValidationError, match="messages\\[2\\]"):
        conversation.append("c")  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError):
        conversation.extend(am.UserMessage.text("x"))  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        conversation[5]
