"""Malformed bytes and JSON give agentmsg errors that name the problem."""

from __future__ import annotations

import pytest

import agentmsg as am

WRAPPERS = [am.BaseMessage, am.ContentBase, am.Conversation, am.Usage, am.ToolDefinition, am.UserMessage]


@pytest.mark.parametrize("cls", WRAPPERS)
@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xff\xff\xff",  # invalid tag/varint
        b"\x0a\x05ab",  # length past the end
        b"\x08",  # truncated varint
        b"\x0f",  # group end with no start / invalid wire type
    ],
)
def test_malformed_bytes(cls: type[am.ProtoWrapper], data: bytes) -> None:  # type: ignore[type-arg]
    with pytest.raises(am.DecodeError, match=r"not a valid agentmsg\.v1"):
        cls.from_bytes(data)


@pytest.mark.parametrize("data", ["text", 12, None, ["a"]])
def test_from_bytes_wants_bytes(data: object) -> None:
    with pytest.raises(am.DecodeError, match="expects bytes"):
        am.BaseMessage.from_bytes(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{", "ProtoJSON"),
        ('{"id": 5}', "id"),
        ('{"unknownField": 1}', "unknownField"),
        ('{"user": {"content": [{"text": {"text": 1}}]}}', "text"),
        ('{"timestamp": "yesterday"}', "timestamp"),
        ('{"user": {"content": [{"image": {"data": "not base64!"}}]}}', "data"),
        ('{"assistant": {"stopReason": "FINISHED"}}', "stopReason"),
        ("[]", "ProtoJSON"),
    ],
)
def test_malformed_protojson(text: str, needle: str) -> None:
    with pytest.raises(am.DecodeError) as info:
        am.BaseMessage.from_json(text)
    assert needle in str(info.value)


def test_empty_bytes_decode_to_an_unknown_message_that_validation_rejects() -> None:
    message = am.BaseMessage.from_bytes(b"")
    assert isinstance(message, am.UnknownMessage)
    with pytest.raises(am.ValidationError):
        am.BaseMessage.from_bytes(b"", validate=True)


def test_protojson_accepts_enum_names_and_numbers() -> None:
    by_name = am.BaseMessage.from_json(
        '{"id": "a", "timestamp": "2026-01-01T00:00:00Z", "assistant": {"stopReason": "STOP_REASON_STOP", '
        '"content": [{"text": {"text": "ok"}}]}}',
        validate=True,
    )
    assert isinstance(by_name, am.AssistantMessage)
    assert by_name.stop_reason is am.StopReason.STOP
    by_number = am.BaseMessage.from_json(by_name.to_json().replace('"STOP_REASON_STOP"', "1"))
    assert by_number == by_name
