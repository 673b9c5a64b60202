"""A stored entry's head: what a walk of the session tree reads of it, parsed without its body.

A walk from a leaf needs, of each entry, its ``id``, its ``parent_id`` and which arm of ``Message.role`` it holds;
the body of that arm (the content blocks) only for the few session-only entries the context rules read. A full
parse of ``agentmsg.v1.Message`` builds every content block of every entry; :data:`Head` is a message declared at
import from the real ``Message`` descriptor (the same field numbers, names and oneof) with each role arm as
``bytes``, so upb reads the envelope and copies each body as it is. An arm added to the contract is in the
descriptor, so in the head with no change here; an arm this version's contract lacks (a newer peer's) is an unknown
field to both, whose ``WhichOneof`` is None.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from agentmsg.v1 import message_pb2

__all__ = ["Head", "first_kept_id"]


def _head_class() -> Any:
    message = message_pb2.Message.DESCRIPTOR
    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="agentmsg/service/heads.proto", package="agentmsg.service.heads", syntax="proto3"
    )
    head = file.message_type.add(name="Head")
    for name in ("id", "parent_id"):
        declared = message.fields_by_name[name]
        assert declared.type == declared.TYPE_STRING
        head.field.add(name=name, number=declared.number, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    head.oneof_decl.add(name="role")
    for arm in message.oneofs_by_name["role"].fields:
        head.field.add(
            name=arm.name, number=arm.number, type=field.TYPE_BYTES, label=field.LABEL_OPTIONAL, oneof_index=0
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("agentmsg.service.heads.Head"))


Head: Any = _head_class()
"""``agentmsg.v1.Message`` read as its head: ``id``, ``parent_id`` and the ``role`` oneof with each arm as bytes
(``Head.FromString(stored)``)."""

_compaction = message_pb2.CompactionSummaryMessage.FromString


def first_kept_id(head: Any) -> str:
    """A compaction's ``first_kept_id``, from its head (its arm's bytes parsed as ``CompactionSummaryMessage``)."""
    return str(_compaction(head.compaction_summary).first_kept_id)
