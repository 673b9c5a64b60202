"""Encoded ``SubscribeResponse`` batches, framed once and shared by every subscriber reading the same range.

A subscriber reads the log in batches (``after`` an offset, up to ``limit`` rows) and sends each batch as one
``SubscribeResponse`` encoded straight from the stored bytes. Ten subscribers of one session read the same
batches, so framing each one per subscriber (the varints and the join, ~1 µs per message) was most of the
server's work in a fan-out. :class:`FrameCache` keeps the encoded batch under its range: the log is append-only
and an offset never changes its message, so the rows after ``after`` are the same for every reader, and a
batch that came back full (``limit`` rows) is served again without even reading the store.

Bounded by bytes (least recently used out first); one cache per server node.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["FrameCache", "encode_logged"]


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


def encode_logged(rows: list[tuple[int, bytes]]) -> bytes:
    """A ``SubscribeResponse`` holding ``rows`` as ``LoggedMessage``s, encoded directly from the stored bytes.

    ``LoggedMessage`` is field 1 ``offset`` (varint, tag 0x08) and field 2
    ``message`` (bytes, tag 0x12); each is field 1 of the response (tag 0x0a).
    """
    parts: list[bytes] = []
    for offset, body in rows:
        logged = b"\x08" + _varint(offset) + b"\x12" + _varint(len(body))
        parts += (b"\x0a", _varint(len(logged) + len(body)), logged, body)
    return b"".join(parts)


class FrameCache:
    """Encoded batches by ``(session, after, limit)``, shared by the subscribers of a node."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self._size = 0
        # (session, after, limit) -> (rows in the batch, offset of its last row, the encoded response)
        self._batches: OrderedDict[tuple[str, int, int], tuple[int, int, bytes]] = OrderedDict()
        self.encoded = 0  # batches framed (a miss)
        self.shared = 0  # batches served from the cache (a hit)

    def full(self, session_id: str, after: int, limit: int) -> tuple[bytes, int] | None:
        """The encoded batch of ``limit`` rows after ``after`` and its last offset, when one was framed."""
        key = (session_id, after, limit)
        entry = self._batches.get(key)
        if entry is None or entry[0] != limit:
            return None
        self._batches.move_to_end(key)
        self.shared += 1
        return entry[2], entry[1]

    def encode(self, session_id: str, after: int, limit: int, rows: list[tuple[int, bytes]]) -> bytes:
        """``rows`` (the store's answer to ``read(session_id, after, limit)``) as one encoded response."""
        key = (session_id, after, limit)
        entry = self._batches.get(key)
        if entry is not None and entry[0] == len(rows):
            # The same count after the same offset of an append-only log: the same rows.
            self._batches.move_to_end(key)
            self.shared += 1
            return entry[2]
        encoded = encode_logged(rows)
        self.encoded += 1
        if len(encoded) > self.max_bytes // 4:
            return encoded  # too big to be worth keeping
        if entry is not None:
            self._size -= len(entry[2])
        self._batches[key] = (len(rows), rows[-1][0] if rows else after, encoded)
        self._batches.move_to_end(key)
        self._size += len(encoded)
        while self._size > self.max_bytes:
            _, (_, _, dropped) = self._batches.popitem(last=False)
            self._size -= len(dropped)
        return encoded

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._size
