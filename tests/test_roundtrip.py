"""Every content kind and role survives every form: bytes, ProtoJSON, seed-1 dicts."""

from __future__ import annotations

import json

import pytest
from samples import every_content, every_role

import agentmsg as am
from agentmsg import dict_form

ROLES = every_role()
CONTENTS = every_content()


@pytest.mark.parametrize("message", ROLES, ids=lambda m: m.id)
def test_message_bytes_round_trip(message: am.AgentMessage) -> None:
    back = am.BaseMessage.from_bytes(message.to_bytes(), validate=True)
    assert back == message
    assert type(back) is type(message)
    assert back.to_bytes() == message.to_bytes()


@pytest.mark.parametrize("message", ROLES, ids=lambda m: m.id)
def test_message_protojson_round_trip(message: am.AgentMessage) -> None:
    text = message.to_json()
    assert am.BaseMessage.from_json(text) == message
    assert am.BaseMessage.from_json(json.loads(text)) == message
    # ProtoJSON is lowerCamelCase with the role arm as the key.
    assert message.role is not None
    camel = "".join(p if i == 0 else p.title() for i, p in enumerate(message.role.value.split("_")))
    assert camel in json.loads(text)


@pytest.mark.parametrize("message", ROLES, ids=lambda m: m.id)
def test_message_seed_dict_round_trip(message: am.AgentMessage) -> None:
    data = message.to_dict()
    assert data["role"] == message.role
    assert data["id"] == message.id
    through_json = json.loads(json.dumps(data))
    assert am.BaseMessage.from_dict(through_json) == message


@pytest.mark.parametrize("block", CONTENTS, ids=lambda c: f"{c.type}")
def test_content_round_trips(block: am.Content) -> None:
    assert am.ContentBase.from_bytes(block.to_bytes()) == block
    assert am.ContentBase.from_json(block.to_json()) == block
    assert dict_form.content_from_dict(json.loads(json.dumps(block.to_dict()))) == block


def test_conversation_round_trips_every_form() -> None:
    conversation = am.Conversation(ROLES)
    assert len(conversation) == len(ROLES)
    assert am.Conversation.from_bytes(conversation.to_bytes()) == conversation
    assert am.Conversation.from_json(conversation.to_json()) == conversation
    assert am.Conversation.from_dicts(json.loads(json.dumps(conversation.to_dicts()))) == conversation
    assert [m.id for m in conversation] == [m.id for m in ROLES]
    assert conversation[2] == ROLES[2]
    assert [m.id for m in conversation[1:3]] == ["u1", "a1"]


def test_bytes_are_deterministic() -> None:
    # Struct-valued metadata is a map: deterministic encoding makes equal values equal bytes.
    a = am.ToolResultContent("c", "x", metadata={"b": 1, "a": 2, "c": {"z": 1, "y": 2}})
    b = am.ToolResultContent("c", "x", metadata={"c": {"y": 2, "z": 1}, "a": 2, "b": 1})
    assert a == b
    assert a.to_bytes() == b.to_bytes()


def test_binary_media_is_raw_bytes_on_the_wire() -> None:
    # No base64 inside protobuf: the image bytes appear verbatim in the encoding.
    png = every_content()[1]
    assert isinstance(png, am.ImageContent)
    assert png.data is not None
    assert png.data in png.to_bytes()
    assert len(png.to_bytes()) < len(png.data) + 32


def test_wrapper_is_a_view_of_the_generated_message() -> None:
    message = ROLES[1]
    pb = message.to_proto()
    assert pb is message.pb
    assert pb.WhichOneof("role") == "user"
    assert am.BaseMessage.from_proto(pb).pb is pb  # no copy
    copy = message.copy()
    assert copy == message
    assert copy.pb is not pb
