"""The message store behind the session service: one interface, two stores.

:class:`Store` is what the service needs: append messages to a session's log
(offsets 1, 2, 3...; idempotent on message id), read the log after an offset,
list sessions, and wait for a session to grow. :class:`MemoryStore` keeps
everything in the process; :class:`SQLiteStore` is the embedded default (one
file, zero setup). A distributed store implements the same five methods (its
``wait`` would listen to the store's change feed instead of the in-process
notifier below) so several server nodes can share it.

Durability policy of :class:`SQLiteStore`: WAL journal with
``synchronous=FULL``, one transaction per append call, committed before the
call returns. An acknowledged append survives a process crash and a power
loss; a crash mid-append leaves none of that batch. A write the disk refuses
raises :class:`~agentmsg.StoreError` (a read-only file or directory, an I/O
error: UNAVAILABLE on the wire) or its subclass
:class:`~agentmsg.errors.StoreFullError` (a full disk or database:
RESOURCE_EXHAUSTED), rolls back, and leaves the store serving reads.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentmsg.errors import ConflictError, StoreError, StoreFullError
from agentmsg.v1 import message_pb2

__all__ = ["Appended", "MemoryStore", "SQLiteStore", "SessionRecord", "Store", "open_store"]


@dataclass(frozen=True, slots=True)
class Appended:
    """Where an appended message landed; ``duplicate`` when the session already held its id."""

    offset: int
    duplicate: bool


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A session's id, last offset, and first/last append times (microseconds since the epoch)."""

    session_id: str
    last_offset: int
    created_us: int
    updated_us: int


def _encode(message: message_pb2.Message) -> bytes:
    # Deterministic: a retried append of the same message gives the same bytes.
    return message.SerializeToString(deterministic=True)


class Store(abc.ABC):
    """What the session service stores messages in."""

    def __init__(self) -> None:
        self._waiters: dict[str, asyncio.Event] = {}

    async def append(self, session_id: str, messages: Sequence[message_pb2.Message]) -> list[Appended]:
        """Append in order, atomically; a message whose id the session holds is a duplicate.

        The same id with different content raises :class:`~agentmsg.ConflictError`
        and nothing of the batch is written.
        """
        encoded = [(m.id, _encode(m)) for m in messages]
        result = await self._append(session_id, encoded, time.time_ns() // 1000)
        if any(not a.duplicate for a in result):
            self._notify(session_id)
        return result

    @abc.abstractmethod
    async def _append(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]: ...

    @abc.abstractmethod
    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` (offset, encoded message) pairs after ``after``, in order."""

    @abc.abstractmethod
    async def last_offset(self, session_id: str) -> int:
        """The session's last offset (0 for an unknown session)."""

    @abc.abstractmethod
    async def sessions(self, after: str, limit: int, *, prefix: str = "") -> list[SessionRecord]:
        """Up to ``limit`` sessions with ids after ``after`` (and starting with ``prefix``), ordered by id."""

    async def close(self) -> None:  # noqa: B027 - an optional hook
        """Release the store's resources."""

    def _event(self, session_id: str) -> asyncio.Event:
        event = self._waiters.get(session_id)
        if event is None:
            event = self._waiters[session_id] = asyncio.Event()
        return event

    def _notify(self, session_id: str) -> None:
        event = self._waiters.pop(session_id, None)
        if event is not None:
            event.set()

    def changed(self, session_id: str) -> asyncio.Event:
        """An event set at the next append to the session (get it before reading, then wait)."""
        return self._event(session_id)

    def forget(self, session_id: str) -> None:
        """Drop the session's pending change event: the last one waiting for it has gone."""
        event = self._waiters.get(session_id)
        if event is not None and not event.is_set():
            del self._waiters[session_id]


class MemoryStore(Store):
    """Everything in this process: fast, and gone when it exits."""

    def __init__(self) -> None:
        super().__init__()
        self._logs: dict[str, list[bytes]] = {}
        self._ids: dict[str, dict[str, int]] = {}
        self._times: dict[str, tuple[int, int]] = {}

    async def _append(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]:
        log = self._logs.get(session_id, [])
        ids = self._ids.get(session_id, {})
        result, staged, staged_ids = _plan(log.__getitem__, ids, encoded, len(log))
        if staged:
            self._logs.setdefault(session_id, log).extend(staged)
            self._ids.setdefault(session_id, ids).update(staged_ids)
            created = self._times.get(session_id, (now_us, now_us))[0]
            self._times[session_id] = (created, now_us)
        return result

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        log = self._logs.get(session_id, [])
        return [(after + 1 + i, body) for i, body in enumerate(log[after : after + limit])]

    async def last_offset(self, session_id: str) -> int:
        return len(self._logs.get(session_id, ()))

    async def sessions(self, after: str, limit: int, *, prefix: str = "") -> list[SessionRecord]:
        ids = sorted(s for s in self._logs if s > after and s.startswith(prefix))[:limit]
        return [SessionRecord(s, len(self._logs[s]), *self._times[s]) for s in ids]


def _plan(
    body_at: object, ids: dict[str, int], encoded: list[tuple[str, bytes]], last: int
) -> tuple[list[Appended], list[bytes], dict[str, int]]:
    """Decide each message's fate: new offset, duplicate, or a conflict that rejects the batch."""
    result: list[Appended] = []
    staged: list[bytes] = []
    staged_ids: dict[str, int] = {}
    for message_id, body in encoded:
        offset = ids.get(message_id) or staged_ids.get(message_id)
        if offset is not None:
            held = staged[offset - last - 1] if offset > last else body_at(offset - 1)  # type: ignore[operator]
            if held != body:
                raise ConflictError(f"message id {message_id!r} is already at offset {offset} with different content")
            result.append(Appended(offset, True))
            continue
        staged.append(body)
        offset = last + len(staged)
        staged_ids[message_id] = offset
        result.append(Appended(offset, False))
    return result, staged, staged_ids


_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    last_offset INTEGER NOT NULL,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    offset INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, offset)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS messages_by_id ON messages (session_id, message_id);
"""


class SQLiteStore(Store):
    """The embedded default: one SQLite file (WAL, ``synchronous=FULL``; see the module docstring).

    Calls run in worker threads so the event loop never blocks on the disk;
    one lock orders them (SQLite serialises writers anyway).
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        super().__init__()
        self.path = str(path)
        self.synchronous = synchronous
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {self.path!r}: {exc}") from None

    async def _append(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]:
        return await asyncio.to_thread(self._append_sync, session_id, encoded, now_us)

    def _append_sync(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]:
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                row = db.execute("SELECT last_offset FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
                last = row[0] if row else 0
                wanted = list({message_id for message_id, _ in encoded})
                ids: dict[str, int] = {}
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    ids.update(
                        db.execute(
                            f"SELECT message_id, offset FROM messages WHERE session_id = ? AND message_id IN ({marks})",  # noqa: S608 - placeholders only
                            (session_id, *chunk),
                        ).fetchall()
                    )

                def body_at(index: int) -> bytes:
                    found = db.execute(
                        "SELECT body FROM messages WHERE session_id = ? AND offset = ?", (session_id, index + 1)
                    ).fetchone()
                    return bytes(found[0])

                result, staged, staged_ids = _plan(body_at, ids, encoded, last)
                if staged:
                    by_offset = {offset: message_id for message_id, offset in staged_ids.items()}
                    db.executemany(
                        "INSERT INTO messages (session_id, offset, message_id, body) VALUES (?, ?, ?, ?)",
                        [(session_id, last + 1 + i, by_offset[last + 1 + i], body) for i, body in enumerate(staged)],
                    )
                    db.execute(
                        "INSERT INTO sessions (session_id, last_offset, created_us, updated_us) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(session_id) DO UPDATE SET last_offset = excluded.last_offset, "
                        "updated_us = excluded.updated_us",
                        (session_id, last + len(staged), now_us, now_us),
                    )
                db.execute("COMMIT")
                return result
            except BaseException as exc:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
                        db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _store_error(exc, f"the store could not write to {self.path!r}") from None
                raise

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        return await asyncio.to_thread(self._read_sync, session_id, after, limit)

    def _read_sync(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT offset, body FROM messages WHERE session_id = ? AND offset > ? ORDER BY offset LIMIT ?",
                    (session_id, after, limit),
                ).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, f"the store could not read {self.path!r}") from None
        return [(offset, bytes(body)) for offset, body in rows]

    async def last_offset(self, session_id: str) -> int:
        return await asyncio.to_thread(self._last_offset_sync, session_id)

    def _last_offset_sync(self, session_id: str) -> int:
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT last_offset FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
            except sqlite3.Error as exc:
                raise _store_error(exc, f"the store could not read {self.path!r}") from None
        return int(row[0]) if row else 0

    async def sessions(self, after: str, limit: int, *, prefix: str = "") -> list[SessionRecord]:
        return await asyncio.to_thread(self._sessions_sync, after, limit, prefix)

    def _sessions_sync(self, after: str, limit: int, prefix: str) -> list[SessionRecord]:
        # Ids are ASCII (the contract's pattern): those starting with `prefix` are the range [prefix, end).
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT session_id, last_offset, created_us, updated_us FROM sessions "
                    "WHERE session_id > ? AND session_id >= ? AND session_id < ? ORDER BY session_id LIMIT ?",
                    (after, prefix, end, limit),
                ).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, f"the store could not read {self.path!r}") from None
        return [SessionRecord(*row) for row in rows]

    async def close(self) -> None:
        with self._lock:
            self._db.close()


def _store_error(exc: sqlite3.Error, what: str) -> StoreError:
    """The agentmsg error for an SQLite failure: full (SQLITE_FULL) is StoreFullError, anything else StoreError."""
    code = getattr(exc, "sqlite_errorcode", None)
    name = getattr(exc, "sqlite_errorname", "") or type(exc).__name__
    if code == sqlite3.SQLITE_FULL:
        return StoreFullError(f"{what}: the disk or database is full ({name}: {exc})")
    if code is not None and code & 0xFF == sqlite3.SQLITE_READONLY:
        return StoreError(f"{what}: the database is read-only ({name}: {exc}); reads still work")
    return StoreError(f"{what}: {name}: {exc}")


def open_store(db: str | None) -> Store:
    """``None`` or ``":memory:"`` gives a :class:`MemoryStore`; anything else a :class:`SQLiteStore` at that path."""
    if db is None or db == ":memory:":
        return MemoryStore()
    return SQLiteStore(db)
