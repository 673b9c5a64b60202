"""The embedded default store: one SQLite file, zero setup.

Durability policy: WAL journal with ``synchronous=FULL``; appends are group
committed: one writer thread takes every append queued while the last commit
ran and commits them as one transaction (one fsync of the WAL), each in its own
savepoint, and only then answers each of them. An append that fails (a
conflict, a bad parent, a write the disk refuses) is rolled back to its
savepoint and fails alone; the others of its batch commit. A delete is one
transaction too: a crash mid-delete leaves the session whole. An acknowledged
append survives a process crash and a power loss; a crash mid-commit leaves
none of that batch. A write the disk refuses raises :class:`~agentmsg.StoreError` (a
read-only file or directory, an I/O error: UNAVAILABLE on the wire) or its
subclass :class:`~agentmsg.errors.StoreFullError` (a full disk or database:
RESOURCE_EXHAUSTED), rolls back, and leaves the store serving reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentmsg.errors import ConflictError, StoreError, StoreFullError, ValidationError
from agentmsg.service.stores.base import (
    DEFAULT_GROUP_WAIT,
    Appended,
    Body,
    SessionRecord,
    Store,
    _check_parents_in,
    _encoded,
    _group_wait,
    _now_us,
    _plan,
)
from agentmsg.v1 import message_pb2

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")

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

    Appends go to one writer thread, which group-commits them (the event loop hands a batch over once, and is
    woken once when it is durable); reads and deletes run in worker threads. The event loop never blocks on the
    disk; one lock orders the connection's users (SQLite serialises writers anyway).
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL", group_wait: float = DEFAULT_GROUP_WAIT) -> None:
        super().__init__()
        self.path = str(path)
        self.synchronous = synchronous
        self.group_wait = _group_wait(group_wait)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {self.path!r}: {exc}") from None
        self._closed = False
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._writer = threading.Thread(
            target=self._writer_main, name=f"agentmsg-sqlite-writer:{self.path}", daemon=True
        )
        self._writer.start()

    async def append(
        self,
        session_id: str,
        messages: Sequence[message_pb2.Message],
        received: Sequence[Body | None] = (),
        *,
        now_us: int | None = None,
    ) -> list[Appended]:
        """As :meth:`Store.append`; the parent check runs in the writer, inside the append's transaction."""
        encoded = _encoded(messages, received)
        parents = [m.parent_id for m in messages]
        result = await self._write(session_id, encoded, parents, _now_us() if now_us is None else now_us)
        if any(not a.duplicate for a in result):
            self._notify(session_id)
        return result

    async def _append(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]:
        return await self._write(session_id, encoded, [""] * len(encoded), now_us)

    def _write(
        self, session_id: str, encoded: list[tuple[str, Body]], parents: list[str], now_us: int
    ) -> asyncio.Future[list[Appended]]:
        """Queue the append for the writer thread; the future resolves once its batch is committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Appended]] = loop.create_future()
        if self._closed:
            future.set_exception(StoreError("the store is closed"))
            return future
        self._queue.put(_Write(session_id, encoded, parents, now_us, future, loop))
        return future

    # -- the writer: one thread, group commit

    def _writer_main(self) -> None:
        """Take what is queued, commit it as one transaction, hand the outcomes back; until ``close``.

        After a batch, the next one waits (outside the lock: reads go on) for that batch's writers: until as many
        appends are queued as it had plus those that queued while it committed, for at most ``group_wait`` from
        its end. A lone writer (a batch of one, nothing queued meanwhile) is never held back.
        """
        expected, until = 0, 0.0
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = _Batch([first])
            stop = expected > 1 and batch.gather(self._queue, expected, until)
            with self._lock:
                # Appends queued while the last batch committed (or while waiting for the lock) join this one.
                stop = stop or batch.gather(self._queue)
                try:
                    if not self._commit_planned(batch):
                        self._commit_batch(batch)
                except BaseException as exc:  # a defect: each append of the batch fails with it, the writer goes on
                    for write in batch:
                        if write.result is None and write.error is None:
                            write.error = exc
            # Counted before the outcomes go back: the batch's callers, and those who queued while it committed.
            expected, until = len(batch) + self._queue.qsize(), time.monotonic() + self.group_wait
            _deliver(batch)
            if stop:
                return

    def _commit_planned(self, batch: list[_Write]) -> bool:
        """The batch in a few statements: look up every session and id it names at once, decide each append's
        fate in Python (a refused append is left out: it fails alone), insert the rest in a few statements, commit.

        False (everything rolled back, no outcome set) when a statement fails in a batch of several appends: the
        batch is then run append by append (:meth:`_commit_batch`), so the failure falls on the append that causes
        it. A batch of one append fails with the error at once.
        """
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            sessions = sorted({w.session_id for w in batch})
            last: dict[str, int] = {}
            # Each statement steps once (one row, one GIL hand-back for the writer thread), not once per row.
            for names in _padded(sessions):
                marks = ",".join("?" * len(names))
                (found,) = db.execute(
                    f"SELECT json_group_object(session_id, last_offset) FROM sessions WHERE session_id IN ({marks})",  # noqa: S608 - placeholders only
                    names,
                ).fetchone()
                last.update(json.loads(found))
            pairs = sorted(
                {(w.session_id, i) for w in batch for i, _ in w.encoded}
                | {(w.session_id, p) for w in batch for p in w.parents if p}
            )
            held: dict[str, dict[str, int]] = {}  # session -> message id -> offset, of what is named
            for chunk in _padded(pairs):
                values = ",".join("(?, ?)" for _ in chunk)
                rows = db.execute(
                    f"SELECT m.session_id, m.message_id, m.offset FROM (VALUES {values}) AS w CROSS JOIN messages AS m "  # noqa: S608 - placeholders only
                    "ON m.session_id = w.column1 AND m.message_id = w.column2",
                    [x for pair in chunk for x in pair],
                ).fetchall()
                for session_id, message_id, offset in rows:
                    held.setdefault(session_id, {})[message_id] = offset
            inserts: list[tuple[str, int, str, Body]] = []
            touched: dict[str, int] = {}  # session -> the time of its last append in the batch
            staged: dict[tuple[str, int], Body] = {}  # (session, offset) -> body, written by this batch
            for write in batch:
                session_id = write.session_id
                ids = held.setdefault(session_id, {})
                try:
                    if any(write.parents):  # (copies the ids so far: only when parents are named)
                        _check_parents_in(
                            [(i, parent) for (i, _), parent in zip(write.encoded, write.parents, strict=True)],
                            set(ids),
                        )

                    def body_at(index: int, session_id: str = session_id) -> Body:
                        body = staged.get((session_id, index + 1))
                        if body is not None:
                            return body
                        found = db.execute(
                            "SELECT body FROM messages WHERE session_id = ? AND offset = ?", (session_id, index + 1)
                        ).fetchone()
                        return bytes(found[0])

                    current = last.get(session_id, 0)
                    result, bodies, new_ids = _plan(body_at, ids, write.encoded, current)
                except (ConflictError, ValidationError) as exc:
                    write.error = exc
                    continue
                write.result = result
                if bodies:
                    # new_ids lists the new messages as bodies does: in order, at current + 1, current + 2...
                    for (message_id, offset), body in zip(new_ids.items(), bodies, strict=True):
                        inserts.append((session_id, offset, message_id, body))
                        staged[(session_id, offset)] = body
                        ids[message_id] = offset
                    last[session_id] = current + len(bodies)
                    touched[session_id] = write.now_us
            # OR ROLLBACK: a statement that fails takes the whole transaction with it (as the handler below does
            # anyway), so SQLite keeps no statement journal for these multi-row writes (a copy of every page they
            # change, spilled to a temporary file past 64 KiB: it tripled the insert's cost).
            for piece in _pieces(inserts):
                db.execute(
                    "INSERT OR ROLLBACK INTO messages (session_id, offset, message_id, body) VALUES "  # noqa: S608 - placeholders only
                    + ",".join("(?, ?, ?, ?)" for _ in piece),
                    [x for row in piece for x in row],
                )
            sessions_rows = [(s, last[s], now, now) for s, now in touched.items()]
            for upserts in _pieces(sessions_rows):
                db.execute(
                    "INSERT OR ROLLBACK INTO sessions (session_id, last_offset, created_us, updated_us) VALUES "  # noqa: S608 - placeholders only
                    + ",".join("(?, ?, ?, ?)" for _ in upserts)
                    + " ON CONFLICT(session_id) DO UPDATE SET last_offset = excluded.last_offset, "
                    "updated_us = excluded.updated_us",
                    [x for row in upserts for x in row],
                )
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            for write in batch:
                write.result = write.error = None
            if len(batch) == 1:  # the failure is this append's own: no need to run it again
                batch[0].error = _store_error(exc, "the store could not write", self.path)
                return True
            return False
        if inserts:
            self.commits += 1
            self.committed_appends += sum(1 for w in batch if w.error is None)
        return True

    def _commit_batch(self, batch: list[_Write]) -> None:
        """One transaction for the batch, one savepoint per append: an append that fails is rolled back to its
        savepoint and fails alone. If SQLite rolls the whole transaction back (a full disk can), the appends that
        had succeeded are run again in a new transaction, without the one that failed."""
        db = self._db
        pending = batch
        while pending:
            done: list[tuple[_Write, list[Appended]]] = []
            restart = False
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                for write in pending:
                    write.error = _store_error(exc, "the store could not write", self.path)
                return
            for write in pending:
                try:
                    db.execute("SAVEPOINT append")
                    result = self._append_in(db, write)
                except BaseException as exc:  # handed to the append's caller
                    write.error = _write_error(exc, self.path)
                    if not db.in_transaction:  # SQLite rolled the whole transaction back: retry the rest
                        pending = [w for w in pending if w is not write and w.error is None]
                        restart = True
                        break
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK TO append")
                        db.execute("RELEASE append")
                else:
                    db.execute("RELEASE append")
                    done.append((write, result))
            if restart:
                continue
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                for write, _ in done:
                    write.error = _store_error(exc, "the store could not write", self.path)
                return
            for write, result in done:
                write.result = result
            if any(not a.duplicate for _, result in done for a in result):
                self.commits += 1
                self.committed_appends += len(done)
            return

    def _append_in(self, db: sqlite3.Connection, write: _Write) -> list[Appended]:
        """The append's statements, in the writer's open transaction."""
        session_id, encoded = write.session_id, write.encoded
        wanted = {p for p in write.parents if p} - {message_id for message_id, _ in encoded}
        _check_parents_in(
            [(message_id, parent) for (message_id, _), parent in zip(encoded, write.parents, strict=True)],
            self._ids_in(db, session_id, sorted(wanted)),
        )
        row = db.execute("SELECT last_offset FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        last = row[0] if row else 0
        ids: dict[str, int] = {}
        wanted_ids = list({message_id for message_id, _ in encoded})
        for start in range(0, len(wanted_ids), 500):
            chunk = wanted_ids[start : start + 500]
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
                (session_id, last + len(staged), write.now_us, write.now_us),
            )
        return result

    @staticmethod
    def _ids_in(db: sqlite3.Connection, session_id: str, wanted: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT message_id FROM messages WHERE session_id = ? AND message_id IN ({marks})",  # noqa: S608 - placeholders only
                (session_id, *chunk),
            ).fetchall()
            found.update(row[0] for row in rows)
        return found

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
        """Commit what is queued, stop the writer, close the database."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            await asyncio.to_thread(self._writer.join)
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


_BATCH_MAX_CALLS = 256  # appends per group commit
_BATCH_MAX_BYTES = 16 << 20  # bytes of messages per group commit (a batch is one transaction in memory)
_PIECE_MAX = 256  # rows (or looked-up keys) one statement of a planned batch takes at most (4 values a row)


def _pieces(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    """``items`` in consecutive pieces whose lengths are powers of two (37: 32, 4, 1), none over ``_PIECE_MAX``.

    A planned batch's statements are written for their number of rows, so their text varies with the batch: cut
    this way, a few dozen texts serve every batch and stay in the connection's statement cache (128), where one
    statement per size would not (each new size compiled again: ~5 us an append, measured with batches of 1 to 64).
    """
    start, left = 0, len(items)
    while left:
        size = min(_PIECE_MAX, 1 << (left.bit_length() - 1))
        yield items[start : start + size]
        start += size
        left -= size


def _padded(keys: Sequence[_T]) -> Iterator[Sequence[_T]]:
    """``keys`` to look up, in pieces of ``_PIECE_MAX`` with the last one padded to a power of two by repeating its
    last key (37: one lookup of 64): one statement from the cache for most batches (a repeated key finds the same
    row again, which changes nothing), where :func:`_pieces` would step three."""
    for start in range(0, len(keys), _PIECE_MAX):
        piece = list(keys[start : start + _PIECE_MAX])
        piece += piece[-1:] * ((1 << (len(piece) - 1).bit_length()) - len(piece))
        yield piece


@dataclass(slots=True, eq=False)
class _Write:
    """An append queued for the writer thread, and its outcome once the batch is committed."""

    session_id: str
    encoded: list[tuple[str, Body]]
    parents: list[str]
    now_us: int
    future: asyncio.Future[list[Appended]]
    loop: asyncio.AbstractEventLoop
    result: list[Appended] | None = None
    error: BaseException | None = None


class _Batch(list[_Write]):
    """The writer's next batch: appends taken off the queue, up to the batch's bounds."""

    def __init__(self, writes: list[_Write]) -> None:
        super().__init__(writes)
        self.size = sum(len(b) for write in writes for _, b in write.encoded)

    def gather(self, source: queue.SimpleQueue[_Write | None], want: int = 0, until: float = 0.0) -> bool:
        """Take what is queued now; with ``want``, then wait for more until ``want`` are taken or ``until``
        (:func:`time.monotonic`) passes. True when it took the queue's end (the store is closing)."""
        while len(self) < _BATCH_MAX_CALLS and self.size < _BATCH_MAX_BYTES:
            try:
                more = source.get_nowait()
            except queue.Empty:
                left = until - time.monotonic()
                if len(self) >= want or left <= 0:
                    return False
                try:
                    more = source.get(timeout=left)
                except queue.Empty:
                    return False
            if more is None:
                return True
            self.append(more)
            self.size += sum(len(b) for _, b in more.encoded)
        return False


def _deliver(batch: list[_Write]) -> None:
    """Hand a committed batch's outcomes to the event loops that wait for them: one wake-up per loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Write]] = {}
    for write in batch:
        by_loop.setdefault(write.loop, []).append(write)
    for loop, writes in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(_resolve, writes)


def _resolve(writes: list[_Write]) -> None:
    for write in writes:
        if write.future.done():  # the caller was cancelled; the append stands (as a retry will find)
            continue
        if write.error is not None:
            write.future.set_exception(write.error)
        else:
            assert write.result is not None
            write.future.set_result(write.result)


def _write_error(exc: BaseException, path: str) -> BaseException:
    """What an append that failed in the writer raises to its caller."""
    if isinstance(exc, sqlite3.Error):
        return _store_error(exc, "the store could not write", path)
    return exc
