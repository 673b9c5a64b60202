"""The hand-written wire reader of ``agentmsg.service.frames`` on malformed and non-canonical bytes (issue 34).

``is_canonical`` must answer True only for the bytes protobuf's deterministic encoder writes (a False is allowed to
be cautious, never a True to be wrong); ``field_span`` and ``blind_encoding`` must refuse what is not well formed
rather than raise. The cases are written by hand, one per rule of the reader, over a proto3 message with every
scalar kind, packed repeated fields, a map, a nested message and a field with presence; the fuzz target in
``tests/fuzzing.py`` runs the same reader on mutated AppendMessage requests.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg.service.frames import blind_encoding, field_span, is_canonical
from agentmsg.v1 import session_service_pb2

_FD = descriptor_pb2.FieldDescriptorProto
_FIELDS = [  # name, number, type, repeated
    ("i32", 1, _FD.TYPE_INT32, False),
    ("i64", 2, _FD.TYPE_INT64, False),
    ("u32", 3, _FD.TYPE_UINT32, False),
    ("s32", 4, _FD.TYPE_SINT32, False),
    ("b", 5, _FD.TYPE_BOOL, False),
    ("e", 6, _FD.TYPE_ENUM, False),
    ("d", 7, _FD.TYPE_DOUBLE, False),
    ("f", 8, _FD.TYPE_FLOAT, False),
    ("fx32", 9, _FD.TYPE_FIXED32, False),
    ("fx64", 10, _FD.TYPE_FIXED64, False),
    ("s", 11, _FD.TYPE_STRING, False),
    ("by", 12, _FD.TYPE_BYTES, False),
    ("child", 13, _FD.TYPE_MESSAGE, False),
    ("ri32", 14, _FD.TYPE_INT32, True),
    ("rd", 15, _FD.TYPE_DOUBLE, True),
    ("rfx32", 16, _FD.TYPE_FIXED32, True),
    ("rs", 17, _FD.TYPE_STRING, True),
    ("m", 18, _FD.TYPE_MESSAGE, True),
    ("oi32", 19, _FD.TYPE_INT32, False),
    ("rchild", 20, _FD.TYPE_MESSAGE, True),
    ("rb", 21, _FD.TYPE_BOOL, True),
]


def _sample_class() -> Any:
    proto = descriptor_pb2.FileDescriptorProto(name="frames_sample.proto", package="frames_test", syntax="proto3")
    proto.enum_type.add(name="Kind").value.add(name="KIND_UNSPECIFIED", number=0)
    proto.enum_type[0].value.add(name="KIND_ONE", number=1)
    sample = proto.message_type.add(name="Sample")
    entry = sample.nested_type.add(name="MEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_FD.TYPE_STRING, label=_FD.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=_FD.TYPE_STRING, label=_FD.LABEL_OPTIONAL)
    sample.oneof_decl.add(name="_oi32")
    for name, number, kind, repeated in _FIELDS:
        field = sample.field.add(
            name=name, number=number, type=kind, label=_FD.LABEL_REPEATED if repeated else _FD.LABEL_OPTIONAL
        )
        if kind == _FD.TYPE_ENUM:
            field.type_name = ".frames_test.Kind"
        if name in ("child", "rchild"):
            field.type_name = ".frames_test.Sample"
        if name == "m":
            field.type_name = ".frames_test.Sample.MEntry"
        if name == "oi32":
            field.proto3_optional = True
            field.oneof_index = 0
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("frames_test.Sample"))


Sample = _sample_class()
DESC = Sample.DESCRIPTOR


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _ld(number: int, body: bytes) -> bytes:
    return _key(number, 2) + _varint(len(body)) + body


def _canonical_by_protobuf(data: bytes) -> bool:
    try:
        parsed = Sample.FromString(data)
    except Exception:
        return False
    return bool(parsed.SerializeToString(deterministic=True) == data)


CANONICAL = {
    "every field": Sample(
        i32=-5,
        i64=2**40,
        u32=7,
        s32=-3,
        b=True,
        e=1,
        d=1.5,
        f=2.5,
        fx32=9,
        fx64=10,
        s="x",
        by=b"\x00",
        child=Sample(i32=1),
        ri32=[1, -1, 300],
        rd=[0.0, 2.0],
        rfx32=[1, 2],
        rs=["a", ""],
        oi32=0,
        rchild=[Sample(), Sample(s="y")],
        rb=[True, False],
    ).SerializeToString(deterministic=True),
    "empty": b"",
    "presence keeps a zero": _key(19, 0) + b"\x00",
    "a negative int32 in ten bytes": _key(1, 0) + _varint(2**64 - 1),
    "a repeated string twice": _ld(17, b"a") + _ld(17, b"b"),
}

NOT_CANONICAL = {
    "a truncated key": b"\x80",
    "a truncated value": _key(1, 0) + b"\x80",
    "a key in more bytes than it needs": b"\x88\x00\x01",
    "a value in more bytes than it needs": _key(1, 0) + b"\x81\x00",
    "a varint longer than 64 bits": _key(2, 0) + b"\xff" * 10 + b"\x01",
    "fields out of order": _key(2, 0) + b"\x01" + _key(1, 0) + b"\x01",
    "a singular field twice": _key(1, 0) + b"\x01" + _key(1, 0) + b"\x02",
    "a packed field split in two": _ld(14, b"\x01") + _ld(14, b"\x02"),
    "an empty string without presence": _ld(11, b""),
    "a zero without presence": _key(1, 0) + b"\x00",
    "a bool of 2": _key(5, 0) + b"\x02",
    "an int32 past 32 bits": _key(1, 0) + _varint(2**32),
    "a uint32 past 32 bits": _key(3, 0) + _varint(2**32),
    "a fixed32 cut short": _key(9, 5) + b"\x01\x00",
    "a zero double without presence": _key(7, 1) + struct.pack("<d", 0.0),
    "a zero float without presence": _key(8, 5) + struct.pack("<f", 0.0),
    "a zero fixed64 without presence": _key(10, 1) + bytes(8),
    "a start-group wire type": _key(1, 3),
    "an invalid wire type": _key(1, 7),
    "a repeated scalar not packed": _key(14, 0) + b"\x01",
    "an empty packed field": _ld(14, b""),
    "a packed varint in more bytes than it needs": _ld(14, b"\x81\x00"),
    "a packed bool of 2": _ld(21, b"\x02"),
    "packed doubles of a wrong length": _ld(15, b"\x00" * 7),
    "packed fixed32s of a wrong length": _ld(16, b"\x00" * 5),
    "a length past the end": _key(11, 2) + _varint(5) + b"ab",
    "a length in more bytes than it needs": _key(11, 2) + b"\x81\x00" + b"a",
    "a nested message that is not canonical": _ld(13, _key(1, 0) + b"\x00"),
}

# Encodings protobuf keeps as they are (as unknown fields, or a map's one entry), that the reader still declines:
# it answers no to what it does not check (unknown fields, maps, a field under another wire type), and the server
# re-encodes them. Slower, never wrong.
CAUTIOUS = {
    "an unknown field": _key(99, 0) + b"\x01",
    "a map": _ld(18, _ld(1, b"k") + _ld(2, b"v")),
    "a varint for a double": _key(7, 0) + b"\x01",
    "a fixed64 for an int32": _key(1, 1) + b"\x01" * 8,
    "a length-delimited int32": _ld(1, b"\x01"),
}


@pytest.mark.parametrize("data", CANONICAL.values(), ids=CANONICAL.keys())
def test_what_the_deterministic_encoder_writes_is_canonical(data: bytes) -> None:
    assert _canonical_by_protobuf(data)
    assert is_canonical(data, DESC)


@pytest.mark.parametrize("data", NOT_CANONICAL.values(), ids=NOT_CANONICAL.keys())
def test_anything_else_is_not_canonical(data: bytes) -> None:
    assert not _canonical_by_protobuf(data)
    assert not is_canonical(data, DESC)


@pytest.mark.parametrize("data", CAUTIOUS.values(), ids=CAUTIOUS.keys())
def test_what_the_reader_does_not_check_is_declined(data: bytes) -> None:
    assert not is_canonical(data, DESC)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(data=st.binary(max_size=40) | st.sampled_from(list(NOT_CANONICAL.values())).map(lambda b: b + b"\x08\x01"))
def test_is_canonical_never_says_yes_to_what_protobuf_would_write_otherwise(data: bytes) -> None:
    if is_canonical(data, DESC):
        assert _canonical_by_protobuf(data)


# --- field_span and blind_encoding on bytes that are not well formed ------------------------------------------------

REQUEST = session_service_pb2.AppendMessageRequest.DESCRIPTOR
MALFORMED = {
    "a truncated key": b"\x80",
    "a key in more bytes than it needs": b"\x88\x00",
    "a length past the end": _key(2, 2) + _varint(9) + b"ab",
    "a length too long to read": _key(2, 2) + b"\xff" * 11,
    "a start-group wire type": _key(3, 3),
    "a fixed64 cut short": _key(3, 1) + b"\x00",
    "a truncated varint": _key(3, 0) + b"\x80",
}


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_field_span_and_blind_encoding_refuse_bytes_that_are_not_well_formed(data: bytes) -> None:
    assert field_span(data, 2) is None
    assert blind_encoding(data, REQUEST) is None


def test_field_span_finds_the_field_past_others_and_refuses_it_twice() -> None:
    message = _ld(1, b"m1")
    data = _ld(1, b"session") + _key(3, 0) + b"\x05" + _key(4, 1) + bytes(8) + _key(5, 5) + bytes(4) + _ld(2, message)
    start, end = field_span(data, 2)  # type: ignore[misc]
    assert data[start:end] == message
    assert field_span(data + _ld(2, message), 2) is None  # twice: the parser would merge them
    assert field_span(_ld(1, b"session"), 2) is None  # absent
