"""The embedded default store: one SQLite file, zero setup.

Durability policy: WAL journal with ``synchronous=FULL``, one transaction per
append call, committed before the call returns. A delete is one transaction
too: a crash mid-delete leaves the session whole. An acknowledged append
survives a process crash and a power loss; a crash mid-append leaves none of
that batch. A write the disk refuses raises :class:`~agentmsg.StoreError` (a
read-only file or directory, an I/O error: UNAVAILABLE on the wire) or its
subclass :class:`~agentmsg.errors.StoreFullError` (a full disk or database:
RESOURCE_EXHAUSTED), rolls back, and leaves the store serving reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from pathlib import Path

from agentmsg.errors import StoreError, StoreFullError
from agentmsg.service.stores.base import Appended, Body, SessionRecord, Store, _plan

__all__ = ["SQLiteStore"]

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
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (updated_us);
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

    async def _append(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]:
        return await asyncio.to_thread(self._append_sync, session_id, encoded, now_us)

    def _append_sync(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]:
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

                def body_at(index: int) -> Body:
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
                    raise _store_error(exc, "the store could not write", self.path) from None
                raise

    async def _delete(self, session_id: str) -> int:
        return await asyncio.to_thread(self._delete_sync, session_id, None)

    async def _sweep(self, idle_before_us: int, limit: int) -> list[str]:
        candidates = await asyncio.to_thread(self._idle_sync, idle_before_us, limit)
        # One transaction per session, each re-checking the cut-off: an append since the query keeps it.
        return [s for s in candidates if await asyncio.to_thread(self._delete_sync, s, idle_before_us)]

    def _idle_sync(self, idle_before_us: int, limit: int) -> list[str]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT session_id FROM sessions WHERE updated_us < ? ORDER BY updated_us LIMIT ?",
                    (idle_before_us, limit),
                ).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, "the store could not read", self.path) from None
        return [str(row[0]) for row in rows]

    def _delete_sync(self, session_id: str, idle_before_us: int | None) -> int:
        """Delete the session in one transaction (only if idle since ``idle_before_us``, when given)."""
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                row = db.execute(
                    "SELECT last_offset, updated_us FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
                if row is None or (idle_before_us is not None and row[1] >= idle_before_us):
                    db.execute("COMMIT")
                    return 0
                db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                db.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
                db.execute("COMMIT")
                return int(row[0])
            except BaseException as exc:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _store_error(exc, "the store could not delete", self.path) from None
                raise

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Body]]:
        return await asyncio.to_thread(self._read_sync, session_id, after, limit)

    def _read_sync(self, session_id: str, after: int, limit: int) -> list[tuple[int, Body]]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT offset, body FROM messages WHERE session_id = ? AND offset > ? ORDER BY offset LIMIT ?",
                    (session_id, after, limit),
                ).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, "the store could not read", self.path) from None
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
                raise _store_error(exc, "the store could not read", self.path) from None
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
                raise _store_error(exc, "the store could not read", self.path) from None
        return found

    async def entry(self, session_id: str, message_id: str) -> tuple[int, Body] | None:
        return await asyncio.to_thread(self._entry_sync, session_id, message_id)

    def _entry_sync(self, session_id: str, message_id: str) -> tuple[int, Body] | None:
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT offset, body FROM messages WHERE session_id = ? AND message_id = ?",
                    (session_id, message_id),
                ).fetchone()
            except sqlite3.Error as exc:
                raise _store_error(exc, "the store could not read", self.path) from None
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
                raise _store_error(exc, "the store could not read", self.path) from None
        return [SessionRecord(*row) for row in rows]

    async def close(self) -> None:
        with self._lock:
            self._db.close()


def _store_error(exc: sqlite3.Error, what: str, path: str) -> StoreError:
    """The agentmsg error for an SQLite failure: full (SQLITE_FULL) is StoreFullError, anything else StoreError.

    Its message goes to clients, so it names no file: the database's path is a note (``__notes__``), which
    the server logs where it sends the error.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    name = getattr(exc, "sqlite_errorname", "") or type(exc).__name__
    error: StoreError
    if code == sqlite3.SQLITE_FULL:
        error = StoreFullError(f"{what}: the disk or database is full ({name}: {exc})")
    elif code is not None and code & 0xFF == sqlite3.SQLITE_READONLY:
        error = StoreError(f"{what}: the database is read-only ({name}: {exc}); reads still work")
    else:
        error = StoreError(f"{what}: {name}: {exc}")
    error.add_note(f"SQLite database {path}")
    return error
