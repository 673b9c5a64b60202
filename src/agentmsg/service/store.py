"""The message store behind the session service: one interface, three stores.

:class:`Store` is what the service needs: append messages to a session's log
(offsets 1, 2, 3...; idempotent on message id; parent ids checked against the
session through an index), read the log after an offset, look an entry up by
id, list sessions, wait for a session to grow, and hold a session exclusively
for a tree operation. :class:`MemoryStore` keeps everything in the process;
:class:`SQLiteStore` is the embedded default (one file, zero setup);
:class:`~agentmsg.service.pgstore.PostgresStore` lets several server nodes
share one PostgreSQL (its change feed is LISTEN/NOTIFY, its exclusive hold an
advisory lock). ``tests/service/test_store_contract.py`` runs one suite
against all three.

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
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmsg.errors import ConflictError, StoreError, StoreFullError, ValidationError, Violation
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
        # Per-session holds for tree operations in this process: [lock, users] while someone holds or waits.
        self._holds: dict[str, list[Any]] = {}
        self._health_listeners: list[Callable[[bool], None]] = []
        self.healthy = True

    async def start(self) -> None:  # noqa: B027 - an optional hook
        """Connect (for stores with a server); called once before the first use."""

    async def append(self, session_id: str, messages: Sequence[message_pb2.Message]) -> list[Appended]:
        """Append in order, atomically; a message whose id the session holds is a duplicate.

        The same id with different content raises :class:`~agentmsg.ConflictError`
        and nothing of the batch is written. A non-empty ``parent_id`` must name
        an entry of the session or an earlier message of the batch, and not the
        message itself: otherwise :class:`~agentmsg.ValidationError`
        (``messages[i].parent_id``, rule ``session.parent``) and nothing is
        written. Parents are looked up through the store's id index, never by
        reading the session (entries are never removed, so a parent found
        stays found).
        """
        await self._check_parents(session_id, messages)
        encoded = [(m.id, _encode(m)) for m in messages]
        result = await self._append(session_id, encoded, time.time_ns() // 1000)
        if any(not a.duplicate for a in result):
            self._notify(session_id)
        return result

    async def _check_parents(self, session_id: str, messages: Sequence[message_pb2.Message]) -> None:
        wanted = {m.parent_id for m in messages if m.parent_id} - {m.id for m in messages}
        known = await self.known_ids(session_id, wanted) if wanted else set()
        found = []
        for i, message in enumerate(messages):
            parent = message.parent_id
            if parent and (parent == message.id or parent not in known):
                problem = "names itself" if parent == message.id else "is not in the session"
                found.append(Violation(f"messages[{i}].parent_id", "session.parent", f"{parent!r} {problem}"))
            known.add(message.id)
        if found:
            raise ValidationError(found, "append")

    @abc.abstractmethod
    async def _append(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]: ...

    @abc.abstractmethod
    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        """Which of ``message_ids`` the session holds (an index lookup)."""

    @abc.abstractmethod
    async def entry(self, session_id: str, message_id: str) -> tuple[int, bytes] | None:
        """The (offset, encoded message) of the session's entry with this id, or None (an index lookup)."""

    async def before(self, session_id: str, offset: int, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` entries just before ``offset``, in log order (for walking a path back)."""
        start = max(0, offset - 1 - limit)
        return await self.read(session_id, start, offset - 1 - start)

    @contextlib.asynccontextmanager
    async def exclusive(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session for a tree operation (read, then append): one holder at a time.

        This process's stores hold it with an in-process lock; a store shared by
        several nodes holds it in the engine. Plain appends do not take it.
        """
        entry = self._holds.get(session_id)
        if entry is None:
            entry = self._holds[session_id] = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if not entry[1]:
                del self._holds[session_id]

    def on_health(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(healthy)`` whenever the store loses or regains its backing server."""
        self._health_listeners.append(listener)

    def _set_healthy(self, healthy: bool) -> None:
        if healthy == self.healthy:
            return
        self.healthy = healthy
        for listener in self._health_listeners:
            listener(healthy)
        if healthy:
            self._wake_all()  # a change feed may have missed appends while the server was away

    def _wake_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        for event in waiters.values():
            event.set()

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

    async def caught_up(self) -> None:  # noqa: B027 - appends here wake waiters directly
        """Wait until this node has seen the change notifications of everything committed before the call.

        The cluster calls it for a live subscriber after a read that returned rows: the live events
        relayed ahead of those messages then have arrived too. Appends in this process wake waiters directly, so there
        is nothing to wait for unless the store is shared between processes.
        """

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

    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        ids = self._ids.get(session_id, {})
        return {message_id for message_id in message_ids if message_id in ids}

    async def entry(self, session_id: str, message_id: str) -> tuple[int, bytes] | None:
        offset = self._ids.get(session_id, {}).get(message_id)
        return None if offset is None else (offset, self._logs[session_id][offset - 1])

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

    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        return await asyncio.to_thread(self._known_ids_sync, session_id, sorted(message_ids))

    def _known_ids_sync(self, session_id: str, wanted: list[str]) -> set[str]:
        found: set[str] = set()
        with self._lock:
            try:
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT message_id FROM messages WHERE session_id = ? AND message_id IN ({marks})",  # noqa: S608 - placeholders only
                        (session_id, *chunk),
                    ).fetchall()
                    found.update(row[0] for row in rows)
            except sqlite3.Error as exc:
                raise _store_error(exc, f"the store could not read {self.path!r}") from None
        return found

    async def entry(self, session_id: str, message_id: str) -> tuple[int, bytes] | None:
        return await asyncio.to_thread(self._entry_sync, session_id, message_id)

    def _entry_sync(self, session_id: str, message_id: str) -> tuple[int, bytes] | None:
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT offset, body FROM messages WHERE session_id = ? AND message_id = ?",
                    (session_id, message_id),
                ).fetchone()
            except sqlite3.Error as exc:
                raise _store_error(exc, f"the store could not read {self.path!r}") from None
        return None if row is None else (int(row[0]), bytes(row[1]))

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


def open_store(db: str | None, **options: Any) -> Store:
    """``None`` or ``":memory:"`` gives a :class:`MemoryStore`; a ``postgresql://`` (or ``postgres://``) URL a
    :class:`~agentmsg.service.pgstore.PostgresStore` (``options``: its pool and timeout settings); anything
    else a :class:`SQLiteStore` at that path. Call ``await store.start()`` before using it."""
    if db is None or db == ":memory:":
        return MemoryStore()
    if db.startswith(("postgresql://", "postgres://")):
        from agentmsg.service.pgstore import PostgresStore

        return PostgresStore(db, **options)
    return SQLiteStore(db)
