"""The store interface: what the session service needs from wherever messages are kept.

Append messages to a session's log (offsets 1, 2, 3...; idempotent on message
id; parent ids checked against the session through an index), read the log
after an offset, look an entry up by id, list sessions, wait for a session to
grow, hold a session exclusively for a tree operation, and delete a session (by
id, or each session idle longer than a retention period). Each backend is one
module of this package; ``tests/service/test_store_contract.py`` runs one suite
against all of them.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from agentmsg.errors import ConflictError, StoreError, ValidationError, Violation
from agentmsg.v1 import message_pb2

__all__ = ["DEFAULT_GROUP_WAIT", "Appended", "Body", "SessionRecord", "Store"]

Body: TypeAlias = bytes | memoryview
"""A message's encoding as a store holds it: bytes, or a view of the request it arrived in (no copy)."""


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


DEFAULT_GROUP_WAIT = 0.001
"""Seconds a store's writer waits, after a group commit, for the writers of that batch (the stores' ``group_wait``)."""


def _group_wait(seconds: float) -> float:
    """``group_wait``, checked: 0 (never wait) to 1 second."""
    if not 0 <= seconds <= 1:
        raise StoreError(f"group_wait must be between 0 and 1 second, not {seconds!r}")
    return seconds


def _now_us() -> int:
    return time.time_ns() // 1000


def _encode(message: message_pb2.Message) -> bytes:
    # Deterministic: a retried append of the same message gives the same bytes.
    return message.SerializeToString(deterministic=True)


def _encoded(messages: Sequence[message_pb2.Message], received: Sequence[Body | None]) -> list[tuple[str, Body]]:
    """Each message's id and encoding: the received one when given, else the deterministic encoding."""
    if not received:
        return [(m.id, _encode(m)) for m in messages]
    return [(m.id, _encode(m) if given is None else given) for m, given in zip(messages, received, strict=True)]


class Store(abc.ABC):
    """What the session service stores messages in."""

    def __init__(self) -> None:
        self._waiters: dict[str, asyncio.Event] = {}
        # Who follows each session on this node (subscribers, approval waiters): the last to leave drops the
        # session's pending change event, which only an append would release otherwise.
        self._watching: dict[str, int] = {}
        # Per-session holds for tree operations in this process: [lock, users] while someone holds or waits.
        self._holds: dict[str, list[Any]] = {}
        self._health_listeners: list[Callable[[bool], None]] = []
        self._delete_listeners: list[Callable[[str], None]] = []
        self.healthy = True
        # Group commit's counters (SQLite, PostgreSQL): transactions appends committed (each one flush of the
        # log to disk) and the append calls they acknowledged. Read by /metrics and the benchmarks.
        self.commits = 0
        self.committed_appends = 0

    async def start(self) -> None:  # noqa: B027 - an optional hook
        """Connect (for stores with a server); called once before the first use."""

    async def append(
        self,
        session_id: str,
        messages: Sequence[message_pb2.Message],
        received: Sequence[Body | None] = (),
        *,
        now_us: int | None = None,
    ) -> list[Appended]:
        """Append in order, atomically; a message whose id the session holds is a duplicate.

        The same id with different content raises :class:`~agentmsg.ConflictError`
        and nothing of the batch is written. A non-empty ``parent_id`` must name
        an entry of the session or an earlier message of the batch, and not the
        message itself: otherwise :class:`~agentmsg.ValidationError`
        (``messages[i].parent_id``, rule ``session.parent``) and nothing is
        written. Parents are looked up through the store's id index, never by
        reading the session (entries are removed only with their whole session).

        ``received[i]``, when given, is the encoding message ``i`` arrived in, already checked to be the one
        :func:`_encode` would give (see :func:`agentmsg.service.frames.is_canonical`): it is kept as it is.

        ``now_us`` is the append's time (microseconds since the epoch; default: now), recorded as the
        session's last append: the retention sweep (:meth:`sweep`) reads it.
        """
        await self._check_parents(session_id, messages)
        encoded = _encoded(messages, received)
        result = await self._append(session_id, encoded, _now_us() if now_us is None else now_us)
        if any(not a.duplicate for a in result):
            self._notify(session_id)
        return result

    async def _check_parents(self, session_id: str, messages: Sequence[message_pb2.Message]) -> None:
        wanted = {m.parent_id for m in messages if m.parent_id} - {m.id for m in messages}
        known = await self.known_ids(session_id, wanted) if wanted else set()
        _check_parents_in([(m.id, m.parent_id) for m in messages], known)

    @abc.abstractmethod
    async def _append(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]: ...

    @abc.abstractmethod
    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        """Which of ``message_ids`` the session holds (an index lookup)."""

    @abc.abstractmethod
    async def entry(self, session_id: str, message_id: str) -> tuple[int, Body] | None:
        """The (offset, encoded message) of the session's entry with this id, or None (an index lookup)."""

    async def before(self, session_id: str, offset: int, limit: int) -> list[tuple[int, Body]]:
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

    async def delete(self, session_id: str) -> int:
        """Delete the session and all its messages in one transaction; how many messages it held (0: none).

        Whole or gone: a crash mid-delete leaves the session as it was. Deleting a session that does not
        exist does nothing and returns 0. The id is then free: a later append starts a new session at
        offset 1, and the deleted messages' ids are no longer held (appending one again is not a duplicate).
        Waiters of the session are woken and :meth:`on_delete` listeners called.
        """
        removed = await self._delete(session_id)
        if removed:
            self._deleted(session_id)
        return removed

    async def sweep(self, idle_before_us: int, limit: int) -> list[str]:
        """Delete up to ``limit`` sessions whose last append was before ``idle_before_us``; their ids.

        Each session goes in its own transaction (whole or gone), and only if its last append is still before
        the cut-off then: one appended to meanwhile stays. Several sweepers over one database (cluster nodes)
        may run at once: a session is deleted by one of them, the others find it gone.
        """
        deleted = await self._sweep(idle_before_us, limit)
        for session_id in deleted:
            self._deleted(session_id)
        return deleted

    @abc.abstractmethod
    async def _delete(self, session_id: str) -> int: ...

    @abc.abstractmethod
    async def _sweep(self, idle_before_us: int, limit: int) -> list[str]: ...

    def on_delete(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` whenever a session is deleted (here, or by another node sharing the store)."""
        self._delete_listeners.append(listener)

    def _deleted(self, session_id: str) -> None:
        for listener in self._delete_listeners:
            listener(session_id)
        self._notify(session_id)  # its waiters wake (after the listeners, which mark its subscriptions deleted)

    @abc.abstractmethod
    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Body]]:
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

    @contextlib.contextmanager
    def watching(self, session_id: str) -> Iterator[None]:
        """Follow the session (wait on :meth:`changed`) for the block's duration.

        The change event is shared by everyone following the session on this node; when the last of them leaves,
        however it ends (deadline, cancellation, an answer found), the pending event is dropped at once rather than
        kept until the session's next append.
        """
        self._watching[session_id] = self._watching.get(session_id, 0) + 1
        try:
            yield
        finally:
            left = self._watching.pop(session_id) - 1
            if left:
                self._watching[session_id] = left
            else:
                self.forget(session_id)


# --- the append plan shared by the backends that plan in Python (memory, SQLite) ---


def _plan(
    body_at: object, ids: dict[str, int], encoded: list[tuple[str, Body]], last: int
) -> tuple[list[Appended], list[Body], dict[str, int]]:
    """Decide each message's fate: new offset, duplicate, or a conflict that rejects the batch."""
    result: list[Appended] = []
    staged: list[Body] = []
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


def _check_parents_in(messages: Sequence[tuple[str, str]], known: set[str]) -> None:
    """Raise the append's ValidationError when a (message id, parent id) names itself or an id not ``known``.

    ``known`` holds the session's ids among the parents; the batch's own ids are added in order (a parent may
    be an earlier message of the batch).
    """
    found = []
    for i, (message_id, parent) in enumerate(messages):
        if parent and (parent == message_id or parent not in known):
            problem = "names itself" if parent == message_id else "is not in the session"
            found.append(Violation(f"messages[{i}].parent_id", "session.parent", f"{parent!r} {problem}"))
        known.add(message_id)
    if found:
        raise ValidationError(found, "append")
