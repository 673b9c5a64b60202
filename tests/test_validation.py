"""The contract's rules (protovalidate, from the proto) as the Python API enforces them."""

from __future__ import annotations

import pytest
from samples import every_content, every_role

import agentmsg as am
from agentmsg.v1 import content_pb2, message_pb2

BLOCKS = {block.type: block for block in every_content()}
KINDS = sorted(BLOCKS)

# DESIGN.md principle 3, plus the session-only roles.
ALLOWED = {
    "system": {"text", "provider"},
    "user": {"text", "image", "audio", "document", "tool_result", "approval", "provider"},
    "assistant": {
        "text",
        "thinking",
        "redacted_thinking",
        "tool_call",
        "hosted_tool_call",
        "hosted_tool_result",
        "provider",
    },
    "tool": {"tool_result"},
    "custom": {"text", "image", "audio", "document"},
}
BUILD = {
    "system": am.SystemMessage,
    "user": am.UserMessage,
    "assistant": am.AssistantMessage,
    "tool": am.ToolMessage,
    "custom": lambda blocks: am.CustomMessage("k", blocks),
}


@pytest.mark.parametrize("role", sorted(ALLOWED))
@pytest.mark.parametrize("kind", KINDS)
def test_per_role_content_rules(role: str, kind: str) -> None:
    block = BLOCKS[kind]
    if kind in ALLOWED[role]:
        message = BUILD[role]([block])
        assert message.contents == (block,)
    else:
        with pytest.raises(am.ValidationError) as info:
            BUILD[role]([block])
        (violation,) = info.value.violations
        assert violation.rule_id == f"{role}.content.kind"
        assert violation.field == f"{role}.content[0]"
        assert "may carry only" in violation.message


@pytest.mark.parametrize("kind", KINDS)
def test_tool_result_content_rules(kind: str) -> None:
    block = BLOCKS[kind]
    if kind in {"text", "image", "audio", "document", "provider"}:
        assert am.ToolResultContent("c", [block]).blocks == (block,)  # type: ignore[list-item]
    else:
        with pytest.raises(am.ValidationError) as info:
            am.ToolResultContent("c", [block])  # type: ignore[list-item]
        assert info.value.violations[0].rule_id == "tool_result.content.kind"


@pytest.mark.parametrize(
    "build", [lambda: am.SystemMessage([]), lambda: am.UserMessage([]), lambda: am.ToolMessage([])]
)
def test_at_least_one_content_item(build: object) -> None:
    with pytest.raises(am.ValidationError) as info:
        build()  # type: ignore[operator]
    assert info.value.violations[0].rule_id == "repeated.min_items"


def test_assistant_may_be_empty_only_when_it_records_why() -> None:
    with pytest.raises(am.ValidationError) as info:
        am.AssistantMessage([])
    assert info.value.violations[0].rule_id == "assistant.content.required"
    with pytest.raises(am.ValidationError):
        am.AssistantMessage([], stop_reason="stop")
    for reason in ("length", "content_filter", "abort", "error"):
        assert am.AssistantMessage([], stop_reason=reason).contents == ()
    assert am.AssistantMessage([], error="upstream 500").error == "upstream 500"


def test_every_violation_is_listed_with_path_rule_and_message() -> None:
    pb = message_pb2.Message(
        id="",
        user=message_pb2.UserMessage(
            content=[
                content_pb2.Content(image=content_pb2.ImageContent(data=b"x")),
                content_pb2.Content(tool_call=content_pb2.ToolCallContent(id="c", name="n", index=-1)),
                content_pb2.Content(),
            ]
        ),
    )
    found = {(v.field, v.rule_id) for v in am.violations(pb)}
    assert found == {
        ("id", "string.min_len"),
        ("timestamp", "required"),
        ("user.content[0].image", "image.media_type_for_data"),
        ("user.content[1]", "user.content.kind"),
        ("user.content[1].tool_call.index", "int32.gte"),
        ("user.content[2]", "user.content.kind"),
        ("user.content[2].kind", "required"),
    }
    with pytest.raises(am.ValidationError) as info:
        am.validate(pb)
    assert isinstance(info.value, ValueError)
    assert len(info.value.violations) == len(found)
    assert "user.content[0].image: an inline image needs a media_type [image.media_type_for_data]" in str(info.value)


def test_message_without_role_is_invalid() -> None:
    pb = message_pb2.Message(id="x")
    pb.timestamp.FromSeconds(0)
    assert [(v.field, v.rule_id) for v in am.violations(pb)] == [("role", "required")]


@pytest.mark.parametrize(
    ("build", "field", "rule"),
    [
        (lambda: am.ToolCallContent("", "f"), "tool_call.id", "string.min_len"),
        (lambda: am.ToolCallContent("c", ""), "tool_call.name", "string.min_len"),
        (lambda: am.ToolCallContent("c", "f", index=-1), "tool_call.index", "int32.gte"),
        (lambda: am.ToolResultContent("", "x"), "tool_result.id", "string.min_len"),
        (lambda: am.ToolResultContent("c", "x", index=-2), "tool_result.index", "int32.gte"),
        (lambda: am.RedactedThinkingContent(""), "redacted_thinking.data", "string.min_len"),
        (lambda: am.ImageContent.from_file_id(""), "image.file_id", "string.min_len"),
        (
            lambda: am.ImageContent.from_url("https://x.test/a", media_type="image"),
            "image.media_type",
            "string.pattern",
        ),
        (
            lambda: am.ImageContent.from_url("https://x.test/a", media_type="video/mp4"),
            "image.media_type",
            "string.pattern",
        ),
        (
            lambda: am.AudioContent.from_url("https://x.test/a", media_type="image/png"),
            "audio.media_type",
            "string.pattern",
        ),
        (
            lambda: am.DocumentContent.from_url("https://x.test/a", media_type="pdf"),
            "document.media_type",
            "string.pattern",
        ),
        (lambda: am.CustomMessage(""), "custom.custom_type", "string.min_len"),
        (lambda: am.BranchSummaryMessage(""), "branch_summary.summary", "string.min_len"),
        (lambda: am.CompactionSummaryMessage("s", -1), "compaction_summary.tokens_before", "int64.gte"),
        (lambda: am.UserMessage.text("x", id=""), "id", "string.min_len"),
        (lambda: am.ToolDefinition(""), "name", "string.min_len"),
    ],
)
def test_field_rules(build: object, field: str, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        build()  # type: ignore[operator]
    assert (info.value.violations[0].field, info.value.violations[0].rule_id) == (field, rule)


@pytest.mark.parametrize(
    "media_type", ["image/png", "IMAGE/PNG", "image/svg+xml", "image/jpeg; q=0.9", 'image/x; name="a b"']
)
def test_well_formed_media_types_pass(media_type: str) -> None:
    assert am.ImageContent.from_url("https://x.test/a", media_type=media_type).media_type == media_type


@pytest.mark.parametrize("media_type", ["image/", "/png", "image/png/x", "image png", "image/p\u00e9g", "image/png;"])
def test_malformed_media_types_fail(media_type: str) -> None:
    with pytest.raises(am.ValidationError):
        am.ImageContent.from_url("https://x.test/a", media_type=media_type)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: am.TextContent(5), "content"),
        (lambda: am.TextContent("x", signature=b"s"), "signature"),
        (lambda: am.ThinkingContent(None), "content"),
        (lambda: am.ToolCallContent(1, "f"), "id"),
        (lambda: am.ToolCallContent("c", "f", index="0"), "index"),
        (lambda: am.ToolCallContent("c", "f", index=True), "index"),
        (lambda: am.ToolResultContent("c", 42), "content"),
        (lambda: am.ToolResultContent("c", ["text"]), "content[0]"),
        (lambda: am.ToolResultContent("c", "x", is_error="no"), "is_error"),
        (lambda: am.UserMessage("hi"), "contents"),
        (lambda: am.UserMessage([am.TextContent("a"), "b"]), "contents[1]"),
        (lambda: am.UserMessage([am.TextContent("a")], id=7), "id"),
        (lambda: am.AssistantMessage([], usage={"input_tokens": 1}), "usage"),
        (lambda: am.AssistantMessage([], stop_reason="finished"), "stop_reason"),
        (lambda: am.AssistantMessage(provenance="anthropic", error="x"), "provenance"),
        (lambda: am.CustomMessage("k", details=object()), "details"),
        (lambda: am.CustomMessage("k", details={1: "a"}), "details"),
        (lambda: am.ToolCallContent("c", "f", {"a": object()}), "args"),
        (lambda: am.ToolCallContent("c", "f", metadata=[1]), "metadata"),
        (lambda: am.ToolCallContent("c", "f", kind="delete"), "kind"),
        (lambda: am.Provenance(provider=1), "provider"),
    ],
)
def test_wrong_types_raise_validation_errors_naming_the_field(build: object, field: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        build()  # type: ignore[operator]
    assert info.value.violations[0].field == field


def test_validate_accepts_wrappers_pbs_and_lists() -> None:
    messages = every_role()
    am.validate(messages)
    am.validate(messages[0])
    am.validate(messages[0].pb)
    am.validate(am.Conversation(messages))
    bad = message_pb2.Message(id="x", system=message_pb2.SystemMessage())
    bad.timestamp.FromSeconds(1)
    wrapped = am.BaseMessage.from_proto(bad)  # wrapping does not validate...
    with pytest.raises(am.ValidationError):
        am.BaseMessage.from_proto(bad, validate=True)  # ...unless asked
    assert [v.field for v in am.violations([messages[0], wrapped])] == ["[1].system.content"]
    with pytest.raises(TypeError):
        am.validate("not a message")


def test_decoding_validates_on_request() -> None:
    bad = message_pb2.Message(id="", system=message_pb2.SystemMessage(content=[content_pb2.Content()]))
    raw = bad.SerializeToString()
    assert am.BaseMessage.from_bytes(raw).id == ""
    with pytest.raises(am.ValidationError) as info:
        am.BaseMessage.from_bytes(raw, validate=True)
    assert {v.rule_id for v in info.value.violations} >= {"string.min_len", "required"}
    with pytest.raises(am.ValidationError):
        am.BaseMessage.from_json('{"id": "", "system": {}}', validate=True)


def test_errors_share_one_vocabulary() -> None:
    for error in (am.ValidationError, am.DecodeError, am.MediaError, am.ToolArgumentsError):
        assert issubclass(error, am.AgentMsgError)
        assert issubclass(error, ValueError)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: am.TextContent("\ud800"), "content"),
        (lambda: am.UserMessage.text("ok", id="\udfff"), "id"),
        (lambda: am.ToolCallContent("c", "f", arguments="\ud800"), "arguments"),
        (lambda: am.ToolCallContent("c", "f", {"a": "\ud800"}), "args"),
        (lambda: am.ToolResultContent("c", "x", metadata={"\ud800": 1}), "metadata"),
        (lambda: am.CustomMessage("k", details=["\ud800"]), "details[0]"),
    ],
)
def test_strings_that_are_not_utf8_are_refused_clearly(build: object, field: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        build()  # type: ignore[operator]
    assert (info.value.violations[0].field, info.value.violations[0].rule_id) == (field, "string.utf8")


def test_from_json_takes_any_mapping() -> None:
    from types import MappingProxyType

    message = am.UserMessage.text("hi", id="u", timestamp=1)
    assert am.BaseMessage.from_json(MappingProxyType(message.to_json_dict())) == message
