"""Encoded ``SubscribeResponse`` batches, framed once and shared by every subscriber reading the same range.

A subscriber reads the log in batches (``after`` an offset, up to ``limit`` rows) and sends each batch as one
``SubscribeResponse`` encoded straight from the stored bytes. Ten subscribers of one session read the same
batches, so framing each one per subscriber (the varints and the join, ~1 µs per message) was most of the
server's work in a fan-out. :class:`FrameCache` keeps the encoded batch under its range: the log is append-only
and an offset never changes its message, so the rows after ``after`` are the same for every reader, and a
batch that came back full (``limit`` rows) is served again without even reading the store.

Bounded by the bytes it really holds (least recently used out first): each entry is counted with its key,
its tuples and the bytes objects' headers, not only the reply bytes (a batch of one small message is about
70 bytes of reply in 560 bytes of objects: counting the replies alone let the cache hold eight times its cap).
One cache per server node.
"""

from __future__ import annotations

import struct
import sys
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from agentmsg._validation import _leads_to_bytes, swappable
from agentmsg.service.rpc import fit
from agentmsg.v1 import session_service_pb2

__all__ = [
    "APPEND_MESSAGE",
    "CANONICAL_FIELDS",
    "FrameCache",
    "ReceivedAppend",
    "append_request",
    "blind_encoding",
    "encode_logged",
    "field_span",
    "is_canonical",
]

APPEND_MESSAGE = "/agentmsg.v1.SessionService/AppendMessage"
DEFAULT_REPLY_CACHE_BYTES = 64 << 20
# What an entry of the cache costs besides the objects it holds: its slot in the dict's tables (with their
# spare room) and its link in the order. Measured with tracemalloc over 100,000 entries (about 150 bytes), with
# room to spare; tests/service/test_frames.py checks the total against tracemalloc.
_ENTRY_SLOT = 200


def _retained(key: tuple[str, int, int], entry: tuple[int, int, tuple[bytes, ...], int]) -> int:
    """The bytes one cache entry keeps alive: key, value and their parts, each counted by sys.getsizeof."""
    size = sys.getsizeof
    return (
        _ENTRY_SLOT
        + size(key)
        + size(key[0])
        + size(key[1])
        + size(key[2])
        + size(entry)
        + size(entry[0])
        + size(entry[1])
        + size(entry[2])
        + sum(size(reply) for reply in entry[2])
        + size(entry[3])
    )


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes([i]) for i in range(0x80)]


def encode_logged(rows: Sequence[tuple[int, bytes | memoryview]]) -> bytes:
    """A ``SubscribeResponse`` holding ``rows`` as ``LoggedMessage``s, encoded directly from the stored bytes.

    ``LoggedMessage`` is field 1 ``offset`` (varint, tag 0x08) and field 2
    ``message`` (bytes, tag 0x12); each is field 1 of the response (tag 0x0a).
    """
    parts: list[bytes | memoryview] = []
    for offset, body in rows:
        logged = b"\x08" + _varint(offset) + b"\x12" + _varint(len(body))
        parts += (b"\x0a", _varint(len(logged) + len(body)), logged, body)
    return b"".join(parts)


class ReceivedAppend:
    """An ``AppendMessageRequest`` with the encoding its message arrived in, when that is the canonical one.

    What the server's AppendMessage deserializer gives for a large message (``service.grpc.sessions``); here, below
    the service, so that the telemetry wrapping the handler reads it too.
    """

    __slots__ = ("encoding", "request")

    def __init__(self, request: session_service_pb2.AppendMessageRequest, encoding: memoryview) -> None:
        self.request = request
        self.encoding = encoding


def append_request(session_id: str, message: bytes) -> bytes:
    """An ``AppendMessageRequest`` encoded around the message's own encoding (the client's side).

    ``session_id`` is field 1 (tag 0x0a) and ``message`` field 2 (tag 0x12), in field order: the bytes are
    the request's deterministic encoding. Building the request object first would copy the whole message
    (a megabyte for a 1 MiB image) into it before encoding it again.
    """
    head = session_id.encode()
    return b"".join((b"\x0a", _varint(len(head)), head, b"\x12", _varint(len(message)), message))


class FrameCache:
    """Encoded replies by ``(session, after, limit)``, shared by the subscribers of a node.

    A batch larger than one reply may carry (``budget`` bytes of messages) is framed as several replies, each
    with at least one message (:func:`agentmsg.service.rpc.fit`).
    """

    def __init__(self, budget: int, max_bytes: int = DEFAULT_REPLY_CACHE_BYTES) -> None:
        self.budget = budget
        self.max_bytes = max_bytes
        self._size = 0
        # (session, after, limit) -> (rows in the batch, offset of its last row, the encoded replies, the bytes the
        # entry keeps alive)
        self._batches: OrderedDict[tuple[str, int, int], tuple[int, int, tuple[bytes, ...], int]] = OrderedDict()
        self.encoded = 0  # batches framed (a miss)
        self.shared = 0  # batches served from the cache (a hit)

    def full(self, session_id: str, after: int, limit: int) -> tuple[tuple[bytes, ...], int] | None:
        """The encoded replies of the ``limit`` rows after ``after`` and their last offset, when framed before."""
        key = (session_id, after, limit)
        entry = self._batches.get(key)
        if entry is None or entry[0] != limit:
            return None
        self._batches.move_to_end(key)
        self.shared += 1
        return entry[2], entry[1]

    def encode(
        self, session_id: str, after: int, limit: int, rows: Sequence[tuple[int, bytes | memoryview]]
    ) -> tuple[bytes, ...]:
        """``rows`` (the store's answer to ``read(session_id, after, limit)``) as encoded replies."""
        key = (session_id, after, limit)
        entry = self._batches.get(key)
        if entry is not None and entry[0] == len(rows):
            # The same count after the same offset of an append-only log: the same rows.
            self._batches.move_to_end(key)
            self.shared += 1
            return entry[2]
        replies: list[bytes] = []
        rest = list(rows)
        while rest:
            count = fit([len(body) for _, body in rest], self.budget)
            replies.append(encode_logged(rest[:count]))
            rest = rest[count:]
        encoded = tuple(replies)
        self.encoded += 1
        if sum(len(reply) for reply in encoded) > self.max_bytes // 4:
            return encoded  # too big to be worth keeping
        if entry is not None:
            self._size -= entry[3]
        kept = (len(rows), rows[-1][0] if rows else after, encoded, 0)
        size = _retained(key, kept)
        self._batches[key] = (kept[0], kept[1], encoded, size)
        self._batches.move_to_end(key)
        self._size += size
        while self._size > self.max_bytes:
            _, dropped = self._batches.popitem(last=False)
            self._size -= dropped[3]
        return encoded

    @property
    def size(self) -> int:
        """Bytes held: the replies and every object the cache keeps for them."""
        return self._size

    def forget(self, session_id: str | None = None) -> None:
        """Drop the batches of a deleted session (None: of every session): its id may start a new log."""
        for key in [key for key in self._batches if session_id is None or key[0] == session_id]:
            self._size -= self._batches.pop(key)[3]


# --- the received encoding, kept when it is already the canonical one -----------------------------------------

_F = FieldDescriptor
_VARINT_TYPES = frozenset(
    {_F.TYPE_INT32, _F.TYPE_INT64, _F.TYPE_UINT32, _F.TYPE_UINT64, _F.TYPE_SINT32, _F.TYPE_SINT64}
    | {_F.TYPE_BOOL, _F.TYPE_ENUM}
)
_FIXED64_TYPES = frozenset({_F.TYPE_FIXED64, _F.TYPE_SFIXED64, _F.TYPE_DOUBLE})
_FIXED32_TYPES = frozenset({_F.TYPE_FIXED32, _F.TYPE_SFIXED32, _F.TYPE_FLOAT})
_NO_VALUE = -1


def _varint_at(data: Any, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it; (_NO_VALUE, _) when it is not minimally encoded."""
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if byte == 0 and shift:
                return _NO_VALUE, pos  # a trailing zero byte: not the shortest form
            return result, pos
        shift += 7
        if shift > 63:
            return _NO_VALUE, pos


def _scalar_ok(fd: Any, value: int) -> bool:
    kind = fd.type
    if kind in (_F.TYPE_INT32, _F.TYPE_ENUM):
        return value < 2**31 or 2**64 - 2**31 <= value < 2**64  # negative: sign-extended to ten bytes
    if kind in (_F.TYPE_UINT32, _F.TYPE_SINT32):
        return value < 2**32
    if kind == _F.TYPE_BOOL:
        return value <= 1
    return value < 2**64


# The most fields :func:`is_canonical` walks before it answers False. The walk is Python, a few microseconds a
# field; keeping the received encoding saves a copy of the message's bytes, which pays for a few large payloads
# (an image), not for thousands of small blocks (8,000 blocks took 150 ms to walk; encoding them, 0.3 ms).
CANONICAL_FIELDS = 512


def is_canonical(data: Any, desc: Any, max_fields: int = CANONICAL_FIELDS) -> bool:
    """Whether ``data`` (a message of type ``desc``) is byte for byte what the deterministic encoder writes.

    Checked on the wire, without decoding payloads: fields in ascending number order, each singular field
    once, packed repeated scalars, shortest varints, no default value written for a field without presence,
    no unknown field, no map (deterministic map order is the encoder's business). Anything else answers
    False and the caller encodes the parsed message itself, so a False is never wrong, only slower; so does
    an encoding of more than ``max_fields`` fields (nested ones counted), which is cheaper to encode again.
    """
    try:
        return _canonical(memoryview(data), desc, [max_fields])
    except IndexError:
        return False


def _canonical(data: memoryview, desc: Any, room: list[int]) -> bool:
    by_number = desc.fields_by_number
    pos, end, last = 0, len(data), 0
    while pos < end:
        room[0] -= 1
        if room[0] < 0:
            return False
        key, pos = _varint_at(data, pos)
        if key == _NO_VALUE:
            return False
        number, wire = key >> 3, key & 7
        fd = by_number.get(number)
        if fd is None or number < last:
            return False
        repeated = fd.is_repeated
        kind = fd.type
        if number == last and not (repeated and kind in (_F.TYPE_MESSAGE, _F.TYPE_STRING, _F.TYPE_BYTES)):
            return False  # a singular field twice, or a packed field split
        last = number
        implicit = not fd.has_presence and not repeated
        if wire == 2:
            length, pos = _varint_at(data, pos)
            if length == _NO_VALUE or pos + length > end:
                return False
            if kind == _F.TYPE_MESSAGE:
                if fd.message_type.GetOptions().map_entry:
                    return False
                if not _canonical(data[pos : pos + length], fd.message_type, room):
                    return False
            elif kind in (_F.TYPE_STRING, _F.TYPE_BYTES):
                if implicit and length == 0:
                    return False
            elif repeated and length and _packed_ok(data[pos : pos + length], fd):
                pass
            else:
                return False
            pos += length
        elif repeated:
            return False  # proto3 writes repeated scalars packed
        elif wire == 0:
            if kind not in _VARINT_TYPES:
                return False
            value, pos = _varint_at(data, pos)
            if value == _NO_VALUE or not _scalar_ok(fd, value) or (implicit and value == 0):
                return False
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if kind not in (_FIXED64_TYPES if wire == 1 else _FIXED32_TYPES) or pos + size > end:
                return False
            raw = data[pos : pos + size]
            if implicit and not _nonzero(raw, kind):
                return False
            pos += size
        else:
            return False
    return pos == end


def field_span(data: bytes, number: int) -> tuple[int, int] | None:
    """Where the one length-delimited field ``number`` of a message's top level sits in ``data``: (start, end).

    None when it is absent, appears more than once (the fields then merge) or ``data`` is not well formed.
    """
    span: tuple[int, int] | None = None
    pos, end = 0, len(data)
    try:
        while pos < end:
            key, pos = _varint_at(data, pos)
            wire = key & 7
            if key == _NO_VALUE:
                return None
            if wire == 2:
                length, pos = _varint_at(data, pos)
                if length == _NO_VALUE or pos + length > end:
                    return None
                if key >> 3 == number:
                    if span is not None:
                        return None
                    span = (pos, pos + length)
                pos += length
            elif wire == 0:
                _, pos = _varint_at(data, pos)
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return None
    except IndexError:
        return None
    return span if pos == end else None


def _nonzero(raw: memoryview, kind: int) -> bool:
    if kind == _F.TYPE_DOUBLE:
        return bool(struct.unpack("<d", raw)[0] != 0.0)
    if kind == _F.TYPE_FLOAT:
        return bool(struct.unpack("<f", raw)[0] != 0.0)
    return any(raw)


def _packed_ok(region: memoryview, fd: Any) -> bool:
    kind = fd.type
    if kind in _VARINT_TYPES:
        pos = 0
        while pos < len(region):
            value, pos = _varint_at(region, pos)
            if value == _NO_VALUE or not _scalar_ok(fd, value):
                return False
        return True
    if kind in _FIXED64_TYPES:
        return len(region) % 8 == 0
    if kind in _FIXED32_TYPES:
        return len(region) % 4 == 0
    return False


def blind_encoding(data: bytes, desc: Any, limit: int = 4096) -> bytes | None:
    """``data`` (a well-formed message of type ``desc``) with every media payload over ``limit`` bytes cut to
    one byte, the lengths around it rewritten; None when there is none.

    The server parses this instead of the request: parsing copies every byte it keeps (a megabyte and its
    page faults for a 1 MiB image), and the parsed request is only validated (no rule reads the bytes:
    presence is what they ask, and a one-byte payload has it) and its ids read, while the store keeps the
    encoding the request arrived in.
    """
    try:
        pieces, changed = _blind(memoryview(data), desc, limit)
    except IndexError:
        return None
    return b"".join(pieces) if changed else None


_HOLDS_MEDIA: dict[str, bool] = {}


def _holds_media(desc: Any) -> bool:
    found = _HOLDS_MEDIA.get(desc.full_name)
    if found is None:
        found = _HOLDS_MEDIA[desc.full_name] = _leads_to_bytes(desc, frozenset())
    return found


def _blind(data: memoryview, desc: Any, limit: int) -> tuple[list[bytes | memoryview], bool]:
    pieces: list[bytes | memoryview] = []
    changed = False
    pos, end, copied = 0, len(data), 0
    by_number = desc.fields_by_number
    while pos < end:
        key, pos = _varint_at(data, pos)
        wire = key & 7
        if key == _NO_VALUE:
            raise IndexError
        if wire == 0:
            _, pos = _varint_at(data, pos)
            continue
        if wire in (1, 5):
            pos += 8 if wire == 1 else 4
            continue
        if wire != 2:
            raise IndexError
        length, start = _varint_at(data, pos)
        stop = start + length
        if length == _NO_VALUE or stop > end:
            raise IndexError
        fd = by_number.get(key >> 3)
        if fd is not None and swappable(fd):
            if length > limit:
                pieces += (data[copied:pos], b"\x01\x00")
                copied, changed = stop, True
        elif fd is not None and fd.type == _F.TYPE_MESSAGE and _holds_media(fd.message_type):
            inner, inner_changed = _blind(data[start:stop], fd.message_type, limit)
            if inner_changed:
                body = b"".join(inner)
                pieces += (data[copied:pos], _varint(len(body)), body)
                copied, changed = stop, True
        pos = stop
    if pos != end:
        raise IndexError
    pieces.append(data[copied:end])
    return pieces, changed
