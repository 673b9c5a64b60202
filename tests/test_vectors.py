"""The golden vectors (tests/vectors/, scripts/make_vectors.py) decode, re-encode and validate as committed.

The same vectors are checked in Node by tests/interop/test_node_vectors.py: both languages must agree on
the bytes, the JSON and the verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pool, json_format, message_factory

import agentmsg as am
from agentmsg.streaming import StreamEvent
from agentmsg.v1 import content_pb2, message_pb2, stream_pb2

VECTORS = Path(__file__).parent / "vectors"
MANIFEST: list[dict[str, Any]] = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]


def message_class(type_name: str) -> Any:
    return message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(type_name))


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_a_vector_round_trips_and_validates_as_committed(entry: dict[str, Any]) -> None:
    cls = message_class(entry["type"])
    data = (VECTORS / entry["binary"]).read_bytes()

    decoded = cls.FromString(data)
    assert decoded.SerializeToString(deterministic=True) == data
    if entry["json"] is None:  # a value ProtoJSON cannot print (an out-of-range timestamp): binary only
        with pytest.raises(json_format.Error):
            json_format.MessageToDict(decoded)
    else:
        text = (VECTORS / entry["json"]).read_text(encoding="utf-8")
        assert json_format.MessageToDict(decoded) == json.loads(text)
        parsed = json_format.Parse(text, cls())
        assert parsed == decoded
        assert parsed.SerializeToString(deterministic=True) == data

    expected = sorted((v["field"], v["rule_id"]) for v in entry["violations"])
    assert sorted((v.field, v.rule_id) for v in am.violations(decoded)) == expected


@pytest.mark.parametrize("entry", [e for e in MANIFEST if not e["violations"]], ids=lambda e: e["name"])
def test_a_valid_vector_reads_into_the_wrappers(entry: dict[str, Any]) -> None:
    data = (VECTORS / entry["binary"]).read_bytes()
    wrapped: am.ProtoWrapper[Any]
    if entry["type"] == "agentmsg.v1.Content":
        wrapped = am.content_from_proto(content_pb2.Content.FromString(data))
        assert not isinstance(wrapped, am.UnknownContent)
    elif entry["type"] == "agentmsg.v1.Message":
        wrapped = am.message_from_proto(message_pb2.Message.FromString(data))
        assert not isinstance(wrapped, am.UnknownMessage)
    elif entry["type"] == "agentmsg.v1.Conversation":
        wrapped = am.Conversation.from_bytes(data, validate=True)
    elif entry["type"] == "agentmsg.v1.Usage":
        wrapped = am.Usage.from_bytes(data, validate=True)
    elif entry["type"] == "agentmsg.v1.ToolDefinition":
        wrapped = am.ToolDefinition.from_bytes(data, validate=True)
    else:
        assert entry["type"] == "agentmsg.v1.StreamEvent"
        wrapped = StreamEvent.from_bytes(data, validate=True)
    assert wrapped.to_bytes() == data


def test_every_kind_of_message_has_a_valid_vector() -> None:
    valid = [e for e in MANIFEST if not e["violations"]]
    decoded = [message_class(e["type"]).FromString((VECTORS / e["binary"]).read_bytes()) for e in valid]

    def arms(pb_type: Any, oneof: str) -> set[str]:
        return {f.name for f in pb_type.DESCRIPTOR.oneofs_by_name[oneof].fields}

    def seen(pb_type: Any, oneof: str) -> set[str | None]:
        return {pb.WhichOneof(oneof) for pb in decoded if isinstance(pb, pb_type)}

    assert seen(content_pb2.Content, "kind") == arms(content_pb2.Content, "kind")
    assert seen(message_pb2.Message, "role") == arms(message_pb2.Message, "role")
    assert seen(stream_pb2.StreamEvent, "event") == arms(stream_pb2.StreamEvent, "event")
    deltas = {pb.block_delta.WhichOneof("delta") for pb in decoded if isinstance(pb, stream_pb2.StreamEvent)}
    assert deltas - {None} == arms(stream_pb2.BlockDelta, "delta")
    types = {e["type"] for e in valid}
    assert {"agentmsg.v1.Usage", "agentmsg.v1.ToolDefinition", "agentmsg.v1.Conversation"} <= types


def test_the_manifest_lists_every_file() -> None:
    listed = {name for entry in MANIFEST for name in (entry["binary"], entry["json"]) if name is not None}
    on_disk = {p.name for p in VECTORS.iterdir() if p.suffix in {".binpb", ".json"} and p.name != "manifest.json"}
    assert listed == on_disk
    assert len({entry["name"] for entry in MANIFEST}) == len(MANIFEST)
