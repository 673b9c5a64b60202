"""PostgresStore: the session log in PostgreSQL, shared by several server nodes.

Select it with ``agentmsg serve --store postgresql://user@host/db`` (the
``agentmsg[postgres]`` extra: psycopg 3 and its pool). The store creates and
migrates its own tables (``agentmsg_schema`` records the version; N nodes
starting at once migrate under an advisory lock, one after the other).

Semantics are those of :class:`~agentmsg.service.stores.sqlite.SQLiteStore`, and the
store contract suite proves it on all three stores:

- **Dense offsets under concurrency from any number of nodes**: an append locks
  its session's row (``SELECT ... FOR UPDATE``) for its transaction, so the
  offsets of a session are 1, 2, 3... with no gap or repeat whichever node
  appends.
- **Idempotent, atomic, durable**: a message id the session holds is a
  duplicate (same bytes) or a :class:`~agentmsg.ConflictError` (other bytes);
  a batch is one transaction; every connection runs with
  ``synchronous_commit = on``, so an acknowledged append is on the primary's
  disk (and, with synchronous replication configured in PostgreSQL, on a
  standby's).
- **Group commit**: one writer per node takes the appends queued while its
  last statement ran and commits them together, one statement
  (``agentmsg_append_many``) and one transaction, so one WAL flush answers
  them all. Each append is validated before any of it is written: a conflict
  or a bad parent refuses that append alone, the others of its batch commit.
  A batch that fails as a whole (a timeout, a lost connection) is tried again
  one append per statement, so each gets its own outcome.
- **Indexes, not scans**: parent ids are checked through the unique
  ``(session_id, message_id)`` index; entries are looked up by id or offset.
- **Change feed**: an append sends ``NOTIFY agentmsg_append`` (the session id)
  in its transaction; each node LISTENs on one dedicated connection and wakes
  its subscribers, so a subscriber on node B sees an append made through node
  A at once. When that connection is lost and comes back, every subscriber is
  woken to re-read from its cursor: nothing is missed.
- **Deletes** are one transaction: the session's row is deleted first (which
  waits for an append holding it, and makes the next append wait), then its
  messages, then ``NOTIFY agentmsg_delete`` (node id and session id), so a
  crash mid-delete leaves the session whole, and every node wakes the
  session's subscribers (which then end NOT_FOUND) when it commits.
- **Exclusive holds** for tree operations are session-level advisory locks,
  serialised by the engine across nodes.
- **Health**: a monitor pings the database; a node that loses it reports
  unhealthy (the server turns that into health ``NOT_SERVING``), its calls fail
  with :class:`~agentmsg.StoreError` (``UNAVAILABLE``), and it recovers by
  itself when the database returns.

The cluster layer (:mod:`agentmsg.service.cluster`) uses the same tables
(nodes, tool registrations, live-event spill) and the same LISTEN connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentmsg.errors import ConflictError, StoreError, StoreFullError, ValidationError, Violation
from agentmsg.service.stores import _pgarray
from agentmsg.service.stores._pgarray import ByteaArray, Int4Array, Int8Array, TextArray
from agentmsg.service.stores.base import DEFAULT_GROUP_WAIT, Appended, Body, SessionRecord, Store, _encoded, _group_wait
from agentmsg.v1 import message_pb2

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

log = logging.getLogger("agentmsg.service.stores.postgres")

APPEND_CHANNEL = "agentmsg_append"
DELETE_CHANNEL = "agentmsg_delete"
LIVE_CHANNEL = "agentmsg_live"
_MIGRATION_LOCK = 0x61676D7367  # "agmsg": one migration at a time, whichever node starts first
_HOLD_SEED = 0x7472656F  # seeds the advisory-lock key of a session's exclusive hold

# Each step runs once, in order, in one transaction; a step is never edited after a release, only added.
_MIGRATIONS: list[tuple[int, tuple[str, ...]]] = [
    (
        1,
        (
            # COLLATE "C": ids are ASCII, and listing by prefix is a range of the byte order on any database.
            """CREATE TABLE agentmsg_sessions (
                session_id text COLLATE "C" PRIMARY KEY,
                last_offset bigint NOT NULL,
                created_us bigint NOT NULL,
                updated_us bigint NOT NULL)""",
            """CREATE TABLE agentmsg_messages (
                session_id text COLLATE "C" NOT NULL,
                seq bigint NOT NULL,
                message_id text NOT NULL,
                body bytea NOT NULL,
                PRIMARY KEY (session_id, seq))""",
            "CREATE UNIQUE INDEX agentmsg_messages_by_id ON agentmsg_messages (session_id, message_id)",
            """CREATE TABLE agentmsg_nodes (
                node_id text PRIMARY KEY,
                address text NOT NULL,
                heartbeat_at timestamptz NOT NULL)""",
            """CREATE TABLE agentmsg_tools (
                name text PRIMARY KEY,
                node_id text NOT NULL,
                runner_id text NOT NULL,
                runner_name text NOT NULL,
                definition bytea NOT NULL)""",
            "CREATE INDEX agentmsg_tools_by_node ON agentmsg_tools (node_id)",
            # Live events too large for a NOTIFY payload; never needed after a crash, so not WAL-logged.
            """CREATE UNLOGGED TABLE agentmsg_live_spill (
                id bigserial PRIMARY KEY,
                created_at timestamptz NOT NULL DEFAULT now(),
                body bytea NOT NULL)""",
            # One append, whole, in one round trip (and one transaction): lock the session's row, then per
            # message in order: a held id is a duplicate (same bytes) or a conflict; a parent must be an entry
            # of the session (earlier rows of this call included) and not the message itself; else insert at
            # the next offset. The caller turns AM409 / AM422 into ConflictError / ValidationError.
            """CREATE FUNCTION agentmsg_append(
                p_session text, p_ids text[], p_parents text[], p_bodies bytea[], p_now bigint)
            RETURNS TABLE (out_seq bigint, out_duplicate boolean)
            LANGUAGE plpgsql AS $fn$
            DECLARE
                v_last bigint;
                v_next bigint;
                v_seq bigint;
                v_body bytea;
                v_bad text[] := '{}';
            BEGIN
                SELECT last_offset INTO v_last FROM agentmsg_sessions WHERE session_id = p_session FOR UPDATE;
                IF NOT FOUND THEN
                    INSERT INTO agentmsg_sessions VALUES (p_session, 0, p_now, p_now)
                        ON CONFLICT (session_id) DO NOTHING;
                    SELECT last_offset INTO v_last FROM agentmsg_sessions WHERE session_id = p_session FOR UPDATE;
                END IF;
                v_next := v_last;
                FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
                    IF p_parents[i] <> '' THEN
                        IF p_parents[i] = p_ids[i] THEN
                            v_bad := v_bad || ARRAY[(i - 1)::text, p_parents[i], 'names itself'];
                        ELSIF NOT EXISTS (SELECT 1 FROM agentmsg_messages
                                          WHERE session_id = p_session AND message_id = p_parents[i]) THEN
                            v_bad := v_bad || ARRAY[(i - 1)::text, p_parents[i], 'is not in the session'];
                        END IF;
                    END IF;
                    SELECT seq, body INTO v_seq, v_body FROM agentmsg_messages
                        WHERE session_id = p_session AND message_id = p_ids[i];
                    IF FOUND THEN
                        IF v_body <> p_bodies[i] THEN
                            RAISE EXCEPTION USING ERRCODE = 'AM409', MESSAGE = format(
                                'message id %L is already at offset %s with different content', p_ids[i], v_seq);
                        END IF;
                        out_seq := v_seq;
                        out_duplicate := true;
                    ELSE
                        v_next := v_next + 1;
                        INSERT INTO agentmsg_messages VALUES (p_session, v_next, p_ids[i], p_bodies[i]);
                        out_seq := v_next;
                        out_duplicate := false;
                    END IF;
                    RETURN NEXT;
                END LOOP;
                IF array_length(v_bad, 1) > 0 THEN
                    RAISE EXCEPTION USING ERRCODE = 'AM422', MESSAGE = 'bad parent ids',
                        DETAIL = array_to_json(v_bad)::text;
                END IF;
                IF v_next > v_last THEN
                    UPDATE agentmsg_sessions SET last_offset = v_next, updated_us = p_now
                        WHERE session_id = p_session;
                    PERFORM pg_notify('agentmsg_append', p_session);
                END IF;
            END
            $fn$""",
        ),
    ),
    (
        2,
        # The retention sweep finds the sessions idle longest through this index.
        ("CREATE INDEX agentmsg_sessions_by_update ON agentmsg_sessions (updated_us)",),
    ),
    (
        3,
        (
            # Group commit: several append calls, one statement, one transaction (one WAL flush). The calls are
            # flattened: call c appends p_counts[c] messages of the arrays, to session p_sessions[c], at time
            # p_nows[c]. Each call is validated before anything of it is written (a held id is a duplicate with
            # the same bytes or a conflict; a parent is an entry of the session or an earlier message of the
            # call, never itself): a refused call writes nothing, returns one row with its error (AM409: the
            # conflict's text; AM422: the bad parents as [index, parent, problem, ...]), and the next call goes
            # on. Callers order the calls by session (each session's calls in arrival order), so every batch
            # takes its row locks in one order and two batches never deadlock.
            """CREATE FUNCTION agentmsg_append_many(
                p_sessions text[], p_counts int[], p_nows bigint[], p_ids text[], p_parents text[], p_bodies bytea[])
            RETURNS TABLE (out_call int, out_seq bigint, out_duplicate boolean, out_error text, out_detail text)
            LANGUAGE plpgsql AS $fn$
            DECLARE
                v_first int := 1;
                v_session text;
                v_last bigint;
                v_next bigint;
                v_seq bigint;
                v_body bytea;
                v_at int;
                v_seqs bigint[];
                v_new boolean[];
                v_bad text[];
                v_conflict text;
            BEGIN
                FOR c IN 1 .. coalesce(array_length(p_sessions, 1), 0) LOOP
                    v_session := p_sessions[c];
                    SELECT last_offset INTO v_last FROM agentmsg_sessions WHERE session_id = v_session FOR UPDATE;
                    IF NOT FOUND THEN
                        INSERT INTO agentmsg_sessions VALUES (v_session, 0, p_nows[c], p_nows[c])
                            ON CONFLICT (session_id) DO NOTHING;
                        SELECT last_offset INTO v_last FROM agentmsg_sessions WHERE session_id = v_session FOR UPDATE;
                    END IF;
                    v_next := v_last;
                    v_seqs := '{}';
                    v_new := '{}';
                    v_bad := '{}';
                    v_conflict := NULL;
                    FOR i IN v_first .. v_first + p_counts[c] - 1 LOOP
                        IF p_parents[i] <> '' THEN
                            IF p_parents[i] = p_ids[i] THEN
                                v_bad := v_bad || ARRAY[(i - v_first)::text, p_parents[i], 'names itself'];
                            ELSIF array_position(p_ids[v_first:i - 1], p_parents[i]) IS NULL
                                  AND NOT EXISTS (SELECT 1 FROM agentmsg_messages
                                                  WHERE session_id = v_session AND message_id = p_parents[i]) THEN
                                v_bad := v_bad || ARRAY[(i - v_first)::text, p_parents[i], 'is not in the session'];
                            END IF;
                        END IF;
                        v_at := array_position(p_ids[v_first:i - 1], p_ids[i]);
                        IF v_at IS NOT NULL THEN
                            v_seq := v_seqs[v_at];
                            v_body := p_bodies[v_first + v_at - 1];
                        ELSE
                            SELECT seq, body INTO v_seq, v_body FROM agentmsg_messages
                                WHERE session_id = v_session AND message_id = p_ids[i];
                            IF NOT FOUND THEN
                                v_seq := NULL;
                            END IF;
                        END IF;
                        IF v_seq IS NULL THEN
                            v_next := v_next + 1;
                            v_seqs := v_seqs || v_next;
                            v_new := v_new || true;
                        ELSIF v_body <> p_bodies[i] THEN
                            v_conflict := format(
                                'message id %L is already at offset %s with different content', p_ids[i], v_seq);
                            EXIT;
                        ELSE
                            v_seqs := v_seqs || v_seq;
                            v_new := v_new || false;
                        END IF;
                    END LOOP;
                    IF v_conflict IS NOT NULL OR array_length(v_bad, 1) > 0 THEN
                        IF v_last = 0 THEN  -- the row this call made for a new session goes with it
                            DELETE FROM agentmsg_sessions WHERE session_id = v_session AND last_offset = 0;
                        END IF;
                        out_call := c;
                        out_seq := NULL;
                        out_duplicate := NULL;
                        out_error := CASE WHEN v_conflict IS NOT NULL THEN 'AM409' ELSE 'AM422' END;
                        out_detail := coalesce(v_conflict, array_to_json(v_bad)::text);
                        RETURN NEXT;
                    ELSE
                        FOR k IN 1 .. p_counts[c] LOOP
                            IF v_new[k] THEN
                                INSERT INTO agentmsg_messages
                                    VALUES (v_session, v_seqs[k], p_ids[v_first + k - 1], p_bodies[v_first + k - 1]);
                            END IF;
                            out_call := c;
                            out_seq := v_seqs[k];
                            out_duplicate := NOT v_new[k];
                            out_error := NULL;
                            out_detail := NULL;
                            RETURN NEXT;
                        END LOOP;
                        IF v_next > v_last THEN
                            UPDATE agentmsg_sessions SET last_offset = v_next, updated_us = p_nows[c]
                                WHERE session_id = v_session;
                            PERFORM pg_notify('agentmsg_append', v_session);
                        END IF;
                    END IF;
                    v_first := v_first + p_counts[c];
                END LOOP;
            END
            $fn$""",
        ),
    ),
    (
        4,
        (
            # agentmsg_append_many as in version 3 (same arguments, same rows, same checks), with each run of calls
            # to one session (callers order the calls by session) taking that session's row once: it is locked
            # and read at the run's first call, and updated (and notified) once at its end, not once per call.
            # Sixty-four appends to one session in a batch made sixty-four versions of its row before. A new
            # session's row, made at the run's first call, goes again if no call of the run wrote to it; else its
            # creation time is that of the run's first call that wrote to it, as before.
            """CREATE OR REPLACE FUNCTION agentmsg_append_many(
                p_sessions text[], p_counts int[], p_nows bigint[], p_ids text[], p_parents text[], p_bodies bytea[])
            RETURNS TABLE (out_call int, out_seq bigint, out_duplicate boolean, out_error text, out_detail text)
            LANGUAGE plpgsql AS $fn$
            DECLARE
                v_calls int := coalesce(array_length(p_sessions, 1), 0);
                v_first int := 1;
                v_session text := NULL;
                v_start bigint;
                v_last bigint;
                v_now bigint;
                v_created bigint;
                v_next bigint;
                v_seq bigint;
                v_body bytea;
                v_at int;
                v_seqs bigint[];
                v_new boolean[];
                v_bad text[];
                v_conflict text;
            BEGIN
                FOR c IN 1 .. v_calls + 1 LOOP
                    IF c > v_calls OR v_session IS DISTINCT FROM p_sessions[c] THEN
                        IF v_session IS NOT NULL THEN  -- the end of a run: its session's row, once
                            IF v_last > v_start THEN
                                -- A new session was made when its first append was written.
                                UPDATE agentmsg_sessions SET last_offset = v_last, updated_us = v_now,
                                    created_us = CASE WHEN v_start = 0 THEN v_created ELSE created_us END
                                    WHERE session_id = v_session;
                                PERFORM pg_notify('agentmsg_append', v_session);
                            ELSIF v_last = 0 THEN  -- the row the run made for a new session goes with it
                                DELETE FROM agentmsg_sessions WHERE session_id = v_session AND last_offset = 0;
                            END IF;
                        END IF;
                        EXIT WHEN c > v_calls;
                        v_session := p_sessions[c];
                        SELECT last_offset INTO v_last FROM agentmsg_sessions WHERE session_id = v_session FOR UPDATE;
                        IF NOT FOUND THEN
                            INSERT INTO agentmsg_sessions VALUES (v_session, 0, p_nows[c], p_nows[c])
                                ON CONFLICT (session_id) DO NOTHING;
                            SELECT last_offset INTO v_last FROM agentmsg_sessions
                                WHERE session_id = v_session FOR UPDATE;
                        END IF;
                        v_start := v_last;
                    END IF;
                    v_next := v_last;
                    v_seqs := '{}';
                    v_new := '{}';
                    v_bad := '{}';
                    v_conflict := NULL;
                    FOR i IN v_first .. v_first + p_counts[c] - 1 LOOP
                        IF p_parents[i] <> '' THEN
                            IF p_parents[i] = p_ids[i] THEN
                                v_bad := v_bad || ARRAY[(i - v_first)::text, p_parents[i], 'names itself'];
                            ELSIF array_position(p_ids[v_first:i - 1], p_parents[i]) IS NULL
                                  AND NOT EXISTS (SELECT 1 FROM agentmsg_messages
                                                  WHERE session_id = v_session AND message_id = p_parents[i]) THEN
                                v_bad := v_bad || ARRAY[(i - v_first)::text, p_parents[i], 'is not in the session'];
                            END IF;
                        END IF;
                        v_at := array_position(p_ids[v_first:i - 1], p_ids[i]);
                        IF v_at IS NOT NULL THEN
                            v_seq := v_seqs[v_at];
                            v_body := p_bodies[v_first + v_at - 1];
                        ELSE
                            SELECT seq, body INTO v_seq, v_body FROM agentmsg_messages
                                WHERE session_id = v_session AND message_id = p_ids[i];
                            IF NOT FOUND THEN
                                v_seq := NULL;
                            END IF;
                        END IF;
                        IF v_seq IS NULL THEN
                            v_next := v_next + 1;
                            v_seqs := v_seqs || v_next;
                            v_new := v_new || true;
                        ELSIF v_body <> p_bodies[i] THEN
                            v_conflict := format(
                                'message id %L is already at offset %s with different content', p_ids[i], v_seq);
                            EXIT;
                        ELSE
                            v_seqs := v_seqs || v_seq;
                            v_new := v_new || false;
                        END IF;
                    END LOOP;
                    IF v_conflict IS NOT NULL OR array_length(v_bad, 1) > 0 THEN
                        out_call := c;
                        out_seq := NULL;
                        out_duplicate := NULL;
                        out_error := CASE WHEN v_conflict IS NOT NULL THEN 'AM409' ELSE 'AM422' END;
                        out_detail := coalesce(v_conflict, array_to_json(v_bad)::text);
                        RETURN NEXT;
                    ELSE
                        FOR k IN 1 .. p_counts[c] LOOP
                            IF v_new[k] THEN
                                INSERT INTO agentmsg_messages
                                    VALUES (v_session, v_seqs[k], p_ids[v_first + k - 1], p_bodies[v_first + k - 1]);
                            END IF;
                            out_call := c;
                            out_seq := v_seqs[k];
                            out_duplicate := NOT v_new[k];
                            out_error := NULL;
                            out_detail := NULL;
                            RETURN NEXT;
                        END LOOP;
                        IF v_next > v_last THEN
                            IF v_last = v_start THEN
                                v_created := p_nows[c];
                            END IF;
                            v_last := v_next;
                            v_now := p_nows[c];
                        END IF;
                    END IF;
                    v_first := v_first + p_counts[c];
                END LOOP;
            END
            $fn$""",
        ),
    ),
]
SCHEMA_VERSION = _MIGRATIONS[-1][0]
"""The schema version this release creates and reads."""


def _require_driver() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise StoreError(
            "the PostgreSQL store needs psycopg 3 and psycopg-pool: pip install 'agentmsg[postgres]'"
        ) from None
    return psycopg, psycopg_pool


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    """Each pooled connection, as it opens: it sends the writer's prebuilt arrays as they are."""
    _pgarray.register(conn.adapters)


def _noted(error: StoreError, cause: BaseException) -> StoreError:
    """``error`` with the driver's message as a note (``__notes__``: logged by the server, never sent)."""
    error.add_note(f"PostgreSQL: {type(cause).__name__}: {cause}")
    return error


class PostgresStore(Store):
    """The session log in PostgreSQL (see the module docstring). ``await start()`` before use."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        statement_timeout: float = 10.0,
        connect_timeout: float = 5.0,
        health_interval: float = 0.5,
        node_id: str | None = None,
        group_wait: float = DEFAULT_GROUP_WAIT,
    ) -> None:
        super().__init__()
        if pool_size < 2:
            raise StoreError("the PostgreSQL pool needs at least 2 connections (a tree operation holds one)")
        if statement_timeout <= 0 or connect_timeout <= 0 or health_interval <= 0:
            raise StoreError("statement_timeout, connect_timeout and health_interval must be positive")
        self.url = url
        self.pool_size = pool_size
        self.statement_timeout = statement_timeout
        self.connect_timeout = connect_timeout
        self.health_interval = health_interval
        self.node_id = node_id or str(uuid.uuid4())
        self.group_wait = _group_wait(group_wait)
        self._pool: AsyncConnectionPool[Any] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        # Every channel is listened to from the first connection on; handlers may come later.
        self._channels: dict[str, list[Callable[[str], None]]] = {
            APPEND_CHANNEL: [self._on_append],
            DELETE_CHANNEL: [self._on_delete_note],
            LIVE_CHANNEL: [],
        }
        # This node's own channel for caught_up(): a token sent after a read comes back after every
        # notification committed before it (PostgreSQL delivers notifications in commit order).
        self._sync_channel = f"agentmsg_sync_{uuid.uuid4().hex[:16]}"
        self._channels[self._sync_channel] = [self._on_sync]
        self._syncs: dict[str, asyncio.Future[None]] = {}
        self._sync_tokens = itertools.count(1)
        self._reconnected: list[Callable[[], Awaitable[None]]] = []
        self._listening = False
        self._listen_ready = asyncio.Event()
        self._pinged = True
        self._notify_lock = asyncio.Lock()
        self._notifier: psycopg.AsyncConnection[Any] | None = None
        self._listener: psycopg.AsyncConnection[Any] | None = None
        self._queued: collections.deque[_Queued] = collections.deque()
        self._writer: asyncio.Task[None] | None = None
        self._gathering: tuple[int, asyncio.Future[None]] | None = None  # the writer waits for this many appends

    # -- lifecycle

    def _connect_kwargs(self) -> dict[str, Any]:
        timeout_ms = int(self.statement_timeout * 1000)
        return {
            "autocommit": True,
            "connect_timeout": max(1, round(self.connect_timeout)),
            # Durable before the reply whatever the database's default says; no statement runs forever.
            "options": f"-c synchronous_commit=on -c statement_timeout={timeout_ms}",
            "application_name": f"agentmsg:{self.node_id[:8]}",
        }

    async def start(self) -> None:
        """Open the pool, create or migrate the tables, and start the change feed and the health monitor."""
        _, psycopg_pool = _require_driver()
        pool = psycopg_pool.AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            kwargs=self._connect_kwargs(),
            open=False,
            configure=_configure,
            reconnect_timeout=3600,
            name=f"agentmsg-{self.node_id[:8]}",
        )
        try:
            await pool.open(wait=True, timeout=self.connect_timeout)
        except Exception as exc:
            await pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {_redact(self.url)}: {exc}") from None
        self._pool = pool
        await self._migrate()
        self._tasks = [
            asyncio.create_task(self._listen(), name="agentmsg-pg-listen"),
            asyncio.create_task(self._monitor(), name="agentmsg-pg-monitor"),
        ]
        try:
            # Serve only once the change feed listens: an append from another node must wake us from the start.
            await asyncio.wait_for(self._listen_ready.wait(), self.connect_timeout)
        except TimeoutError:
            await self.close()
            raise StoreError(f"cannot LISTEN on PostgreSQL at {_redact(self.url)}") from None

    async def close(self) -> None:
        if self._writer is not None:  # what is queued is committed (or fails) before the pool closes
            await asyncio.gather(self._writer, return_exceptions=True)
            self._writer = None
        # Close the LISTEN connection first: a task waiting in notifies() is not woken by a cancel (psycopg
        # waits for the server's answer to the cancel request, and a LISTEN has none to give).
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self._notifier is not None:
            with contextlib.suppress(Exception):
                await self._notifier.close()
            self._notifier = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    def pool_stats(self) -> dict[str, float]:
        """The connection pool now: connections open, the maximum, idle ones, requests waiting (for /metrics)."""
        if self._pool is None:
            return {}
        stats = self._pool.get_stats()
        return {
            "pool_size": float(stats.get("pool_size", 0)),
            "pool_max": float(stats.get("pool_max", self.pool_size)),
            "pool_available": float(stats.get("pool_available", 0)),
            "pool_waiting": float(stats.get("requests_waiting", 0)),
        }

    async def _migrate(self) -> None:
        async with self._conn("migrate the schema") as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS agentmsg_schema (version integer PRIMARY KEY, applied_us bigint NOT NULL)"
            )
            cur = await conn.execute("SELECT coalesce(max(version), 0) FROM agentmsg_schema")
            row = await cur.fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the database holds agentmsg schema version {current}, newer than this release's "
                    f"{SCHEMA_VERSION}: upgrade agentmsg on this node"
                )
            for version, statements in _MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO agentmsg_schema (version, applied_us) VALUES (%s, %s)",
                    (version, time.time_ns() // 1000),
                )
                log.info("agentmsg schema migrated to version %d", version)

    @contextlib.asynccontextmanager
    async def _conn(self, what: str, *, probe: bool = False) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection; any driver failure becomes a StoreError (and marks the store unhealthy).

        While the database is known to be away, calls fail at once (UNAVAILABLE) instead of waiting for a
        connection; only the health monitor's ``probe`` tries.
        """
        if self._pool is None:
            raise StoreError("the PostgreSQL store is not started (or is closed)")
        if not self.healthy and not probe:
            raise StoreError(f"could not {what}: PostgreSQL is unreachable (the node is NOT_SERVING until it is back)")
        with self._mapped(what):
            async with self._pool.connection(timeout=self.connect_timeout) as conn:
                yield conn

    @contextlib.contextmanager
    def _mapped(self, what: str) -> Iterator[None]:
        """Driver failures (and the pool's) as StoreErrors: a lost connection also marks the store unhealthy."""
        psycopg, psycopg_pool = _require_driver()
        try:
            yield
        except psycopg_pool.PoolTimeout:
            self._lost(f"no PostgreSQL connection within {self.connect_timeout:g} s")
            raise StoreError(f"could not {what}: PostgreSQL is unreachable") from None
        # The driver's own text (file paths, socket paths, hosts) is a note the server logs, not the message
        # clients get.
        except psycopg.errors.DiskFull as exc:
            raise _noted(StoreFullError(f"could not {what}: the database's disk is full"), exc) from None
        except psycopg.errors.QueryCanceled as exc:
            raise _noted(StoreError(f"could not {what}: the statement timed out"), exc) from None
        except psycopg.OperationalError as exc:
            self._lost(str(exc))
            raise _noted(StoreError(f"could not {what}: PostgreSQL connection failed"), exc) from None
        except psycopg.Error as exc:
            raise _noted(StoreError(f"could not {what}: {type(exc).__name__}"), exc) from None

    def _lost(self, why: str) -> None:
        if self._pinged:
            log.warning("PostgreSQL lost: %s", why)
        self._pinged = False
        self._update_health()

    def _update_health(self) -> None:
        self._set_healthy(self._pinged and self._listening)

    # -- the log

    async def append(
        self,
        session_id: str,
        messages: Sequence[message_pb2.Message],
        received: Sequence[Body | None] = (),
        *,
        now_us: int | None = None,
    ) -> list[Appended]:
        """As :meth:`Store.append`; the parent check runs inside the append's statement (group committed)."""
        encoded = _encoded(messages, received)
        now = time.time_ns() // 1000 if now_us is None else now_us
        result = await self._queue_append(session_id, encoded, [m.parent_id for m in messages], now)
        if any(not a.duplicate for a in result):
            self._notify(session_id)
        return result

    async def _append(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]:
        return await self._queue_append(session_id, encoded, [""] * len(encoded), now_us)

    def _queue_append(
        self, session_id: str, encoded: list[tuple[str, Body]], parents: list[str], now_us: int
    ) -> asyncio.Future[list[Appended]]:
        """Queue the append for the writer; the future resolves once its batch is committed."""
        future: asyncio.Future[list[Appended]] = asyncio.get_running_loop().create_future()
        self._queued.append(_Queued(session_id, encoded, parents, now_us, future))
        if self._gathering is not None and len(self._queued) >= self._gathering[0]:
            _settle(self._gathering[1])
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_queued(), name="agentmsg-pg-writer")
        return future

    async def _write_queued(self) -> None:
        """The writer: while appends are queued, commit those queued so far as one statement (group commit).

        One batch at a time per node: appends that arrive while a batch commits make up the next one. When several
        writers append together, the next batch waits for them: until as many appends are queued as the last batch
        had plus those that queued while it committed, for at most ``group_wait``. The last batch's callers, answered
        together, mostly come back together; one batch that takes them all costs one statement and one WAL flush,
        not several. A lone writer is never held back (a batch of one append, nothing queued meanwhile). The writer
        holds one connection while appends keep coming (not one from the pool per batch); after a batch that failed
        as a whole it takes another.
        """
        while self._queued:
            batch: list[_Queued] = []
            try:
                try:
                    async with self._conn("append") as conn:
                        expected = 0
                        while True:
                            if expected > 1:
                                await self._gather(min(expected, _BATCH_MAX_CALLS))
                            if not self._queued:
                                break
                            batch = self._take()
                            if not await self._commit_batch(batch, conn):
                                break
                            # Its callers, answered now, and those who queued meanwhile: the next batch's writers.
                            expected = len(batch) + len(self._queued)
                            batch = []
                except StoreError as exc:  # no connection to be had
                    await self._one_by_one(batch or self._take(), exc)
            except BaseException as exc:  # handed to every caller of the batch still waiting
                for queued in batch:
                    if not queued.future.done():
                        queued.future.set_exception(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise

    async def _gather(self, count: int) -> None:
        """Wait until ``count`` appends are queued, for at most ``group_wait`` seconds."""
        if len(self._queued) >= count or self.group_wait <= 0:
            return
        loop = asyncio.get_running_loop()
        gathered: asyncio.Future[None] = loop.create_future()
        self._gathering = (count, gathered)
        timer = loop.call_later(self.group_wait, _settle, gathered)
        try:
            await gathered
        finally:
            timer.cancel()
            self._gathering = None

    def _take(self) -> list[_Queued]:
        """The next batch: the appends queued so far, up to the batch's bounds."""
        batch: list[_Queued] = []
        size = 0
        while self._queued and len(batch) < _BATCH_MAX_CALLS and size < _BATCH_MAX_BYTES:
            queued = self._queued.popleft()
            batch.append(queued)
            size += sum(len(b) for _, b in queued.encoded)
        return batch

    async def _commit_batch(self, batch: list[_Queued], conn: psycopg.AsyncConnection[Any]) -> bool:
        """One statement for the batch; False if it failed as a whole (not a refused call: a timeout, a deadlock, a
        lost connection): then each append was tried again on its own, so that each got its own outcome."""
        # Stable: each session's appends keep their order; every batch locks its sessions' rows in one order.
        ordered = sorted(batch, key=lambda q: q.session_id)
        try:
            with self._mapped("append"):
                # The arrays go in PostgreSQL's binary format, built here (_pgarray): no per-list type discovery.
                cur = await conn.execute(
                    "SELECT out_call, out_seq, out_duplicate, out_error, out_detail "
                    "FROM agentmsg_append_many(%b, %b, %b, %b, %b, %b)",
                    (
                        TextArray.of([q.session_id for q in ordered]),
                        Int4Array.of([len(q.encoded) for q in ordered]),
                        Int8Array.of([q.now_us for q in ordered]),
                        TextArray.of([i for q in ordered for i, _ in q.encoded]),
                        TextArray.of([p for q in ordered for p in q.parents]),
                        ByteaArray.of([b for q in ordered for _, b in q.encoded]),
                    ),
                )
                rows = await cur.fetchall()
        except StoreError as exc:
            await self._one_by_one(batch, exc)
            return False
        results: list[list[Appended]] = [[] for _ in ordered]
        errors: dict[int, Exception] = {}
        for call, seq, duplicate, error, detail in rows:
            index = int(call) - 1
            if error == "AM409":
                errors[index] = ConflictError(detail or "message id conflict")
            elif error == "AM422":
                errors[index] = _parent_error(detail or "[]")
            else:
                results[index].append(Appended(int(seq), bool(duplicate)))
        committed = len(ordered) - len(errors)
        if committed:
            self.commits += 1
            self.committed_appends += committed
        for index, queued in enumerate(ordered):
            if queued.future.done():  # the caller was cancelled; the append stands (as a retry will find)
                continue
            if index in errors:
                queued.future.set_exception(errors[index])
            else:
                queued.future.set_result(results[index])
        return True

    async def _one_by_one(self, batch: list[_Queued], error: StoreError) -> None:
        """After ``error`` failed ``batch`` as a whole: an append alone has its answer; several are tried again
        one per statement."""
        if len(batch) == 1:
            if not batch[0].future.done():
                batch[0].future.set_exception(error)
            return
        await asyncio.gather(*(self._alone(q) for q in batch))

    async def _alone(self, queued: _Queued) -> None:
        """One append in its own statement (after its batch failed as a whole)."""
        try:
            result = await self._call_append(queued.session_id, queued.encoded, queued.parents, queued.now_us)
        except Exception as exc:  # the append's own outcome
            if not queued.future.done():
                queued.future.set_exception(exc)
            return
        self.commits += 1
        self.committed_appends += 1
        if not queued.future.done():
            queued.future.set_result(result)

    async def _call_append(
        self, session_id: str, encoded: list[tuple[str, Body]], parents: list[str], now_us: int
    ) -> list[Appended]:
        psycopg, _ = _require_driver()
        async with self._conn("append") as conn:
            try:
                cur = await conn.execute(
                    "SELECT out_seq, out_duplicate FROM agentmsg_append(%s, %s, %s, %s, %s)",
                    (session_id, [i for i, _ in encoded], parents, [bytes(b) for _, b in encoded], now_us),
                )
                rows = await cur.fetchall()
            except psycopg.Error as exc:
                if exc.sqlstate == "AM409":
                    raise ConflictError(exc.diag.message_primary or "message id conflict") from None
                if exc.sqlstate == "AM422":
                    raise _parent_error(exc.diag.message_detail or "[]") from None
                raise
            return [Appended(int(seq), bool(duplicate)) for seq, duplicate in rows]

    async def _delete(self, session_id: str) -> int:
        return await self._delete_one(session_id, None)

    async def _sweep(self, idle_before_us: int, limit: int) -> list[str]:
        async with self._conn("find idle sessions") as conn:
            cur = await conn.execute(
                "SELECT session_id FROM agentmsg_sessions WHERE updated_us < %s ORDER BY updated_us LIMIT %s",
                (idle_before_us, limit),
            )
            candidates = [str(row[0]) for row in await cur.fetchall()]
        # One transaction per session, each re-checking the cut-off; a node that finds one gone skips it.
        return [s for s in candidates if await self._delete_one(s, idle_before_us)]

    async def _delete_one(self, session_id: str, idle_before_us: int | None) -> int:
        """Delete the session in one transaction (only if idle since ``idle_before_us``, when given)."""
        async with self._conn("delete a session") as conn, conn.transaction():
            # The row first: it waits for an append holding it, and the next append waits for the commit.
            if idle_before_us is None:
                cur = await conn.execute(
                    "DELETE FROM agentmsg_sessions WHERE session_id = %s RETURNING last_offset", (session_id,)
                )
            else:
                cur = await conn.execute(
                    "DELETE FROM agentmsg_sessions WHERE session_id = %s AND updated_us < %s RETURNING last_offset",
                    (session_id, idle_before_us),
                )
            row = await cur.fetchone()
            if row is None:
                return 0
            await conn.execute("DELETE FROM agentmsg_messages WHERE session_id = %s", (session_id,))
            await conn.execute("SELECT pg_notify(%s, %s)", (DELETE_CHANNEL, f"{self.node_id} {session_id}"))
            return int(row[0])

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Body]]:
        async with self._conn("read") as conn:
            cur = await conn.execute(
                "SELECT seq, body FROM agentmsg_messages WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                (session_id, after, limit),
            )
            return [(int(seq), bytes(body)) for seq, body in await cur.fetchall()]

    async def last_offset(self, session_id: str) -> int:
        async with self._conn("read") as conn:
            cur = await conn.execute("SELECT last_offset FROM agentmsg_sessions WHERE session_id = %s", (session_id,))
            row = await cur.fetchone()
            return int(row[0]) if row else 0

    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        async with self._conn("read") as conn:
            cur = await conn.execute(
                "SELECT message_id FROM agentmsg_messages WHERE session_id = %s AND message_id = ANY(%s)",
                (session_id, sorted(message_ids)),
            )
            return {str(row[0]) for row in await cur.fetchall()}

    async def entry(self, session_id: str, message_id: str) -> tuple[int, Body] | None:
        async with self._conn("read") as conn:
            cur = await conn.execute(
                "SELECT seq, body FROM agentmsg_messages WHERE session_id = %s AND message_id = %s",
                (session_id, message_id),
            )
            row = await cur.fetchone()
            return None if row is None else (int(row[0]), bytes(row[1]))

    async def sessions(self, after: str, limit: int, *, prefix: str = "") -> list[SessionRecord]:
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"
        async with self._conn("list sessions") as conn:
            cur = await conn.execute(
                "SELECT session_id, last_offset, created_us, updated_us FROM agentmsg_sessions "
                "WHERE session_id > %s AND session_id >= %s AND session_id < %s ORDER BY session_id LIMIT %s",
                (after, prefix, end, limit),
            )
            return [SessionRecord(str(s), int(o), int(c), int(u)) for s, o, c, u in await cur.fetchall()]

    @contextlib.asynccontextmanager
    async def exclusive(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session across nodes: a session-level advisory lock on one pooled connection."""
        async with self._conn("hold the session") as conn:
            await conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, %s))", (session_id, _HOLD_SEED))
            try:
                yield
            finally:
                try:
                    await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, %s))", (session_id, _HOLD_SEED))
                except Exception:
                    # The lock dies with the connection: close it so the pool never hands out a held lock.
                    await conn.close()
                    raise

    # -- the change feed, shared with the cluster layer

    def on_channel(self, channel: str, callback: Callable[[str], None]) -> None:
        """Call ``callback(payload)`` for every NOTIFY on ``channel`` (from any node, this one included)."""
        if channel not in self._channels:
            raise StoreError(f"unknown channel {channel!r}: the store listens on {', '.join(self._channels)}")
        self._channels[channel].append(callback)

    def on_reconnect(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Run ``callback`` each time the change feed is (re)established."""
        self._reconnected.append(callback)

    async def notify(self, channel: str, payload: str) -> None:
        """``NOTIFY channel, payload`` in order: one connection, one at a time (so events keep their order)."""
        psycopg, _ = _require_driver()
        async with self._notify_lock:
            try:
                if self._notifier is None or self._notifier.closed:
                    self._notifier = await psycopg.AsyncConnection.connect(self.url, **self._connect_kwargs())
                await self._notifier.execute("SELECT pg_notify(%s, %s)", (channel, payload))
            except psycopg.Error as exc:
                if self._notifier is not None:
                    with contextlib.suppress(Exception):
                        await self._notifier.close()
                self._notifier = None
                raise StoreError(f"could not notify other nodes: {exc}") from None

    @contextlib.asynccontextmanager
    async def connection(self, what: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection for the cluster layer (errors mapped as for the store's own calls)."""
        async with self._conn(what) as conn:
            yield conn

    def _on_append(self, session_id: str) -> None:
        self._notify(session_id)

    def _on_delete_note(self, payload: str) -> None:
        """A session deleted by some node; this node's own deletes were handled when they committed."""
        node_id, _, session_id = payload.partition(" ")
        if node_id != self.node_id and session_id:
            self._deleted(session_id)

    def _on_sync(self, token: str) -> None:
        waiter = self._syncs.pop(token, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _release_syncs(self) -> None:
        """The change feed is gone: nobody waits for a token it will not deliver (readers re-read after it)."""
        syncs, self._syncs = self._syncs, {}
        for waiter in syncs.values():
            if not waiter.done():
                waiter.set_result(None)

    async def caught_up(self) -> None:
        """Send a token on this node's channel and wait for it to come back on the change feed."""
        if not self._listening:
            return  # no feed to catch up with; it wakes every reader when it is back
        token = str(next(self._sync_tokens))
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._syncs[token] = waiter
        try:
            async with self._conn("catch up with the change feed") as conn:
                await conn.execute("SELECT pg_notify(%s, %s)", (self._sync_channel, token))
            async with asyncio.timeout(self.statement_timeout):
                await waiter
        except TimeoutError:
            log.warning("the change feed did not return a sync token within %g s", self.statement_timeout)
        finally:
            self._syncs.pop(token, None)

    async def _listen(self) -> None:
        """LISTEN on one dedicated connection; reconnect with backoff, and wake everyone after a gap."""
        psycopg, _ = _require_driver()
        delay = 0.1
        while True:
            conn = None
            try:
                conn = self._listener = await psycopg.AsyncConnection.connect(self.url, **self._connect_kwargs())
                for channel in self._channels:
                    await conn.execute(f'LISTEN "{channel}"')
                self._listening = True
                self._listen_ready.set()
                delay = 0.1
                self._update_health()
                self._wake_all()  # appends made while nobody listened are read now
                for reconnected in self._reconnected:
                    await reconnected()
                async for note in conn.notifies():
                    for callback in self._channels.get(note.channel, ()):
                        try:
                            callback(note.payload)
                        except Exception:
                            log.exception("a NOTIFY handler for %s failed", note.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._listening:
                    log.warning("the PostgreSQL change feed was lost: %s", exc)
            finally:
                self._listening = False
                self._listener = None
                self._release_syncs()
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()
            self._update_health()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def _monitor(self) -> None:
        """Ping the database; the store is healthy while pings pass and the change feed listens."""
        while True:
            ok = False
            with contextlib.suppress(Exception):
                async with asyncio.timeout(max(1.0, self.health_interval * 2)), self._conn("ping", probe=True) as conn:
                    await conn.execute("SELECT 1")
                    ok = True
            if ok and not self._pinged:
                log.info("PostgreSQL is back")
                # Connections idle in the pool died with the old server: drop them before serving again.
                if self._pool is not None:
                    with contextlib.suppress(Exception):
                        await self._pool.check()
            self._pinged = ok
            self._update_health()
            await asyncio.sleep(self.health_interval)


_BATCH_MAX_CALLS = 256  # appends per group commit
_BATCH_MAX_BYTES = 16 << 20  # bytes of messages per group commit (one statement's parameters)


@dataclass(slots=True, eq=False)
class _Queued:
    """An append waiting for the writer."""

    session_id: str
    encoded: list[tuple[str, Body]]
    parents: list[str]
    now_us: int
    future: asyncio.Future[list[Appended]]


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _parent_error(detail: str) -> ValidationError:
    """The ValidationError for the bad parents ``agentmsg_append`` reported ([index, parent, problem, ...])."""
    flat = json.loads(detail)
    found = [
        Violation(f"messages[{flat[k]}].parent_id", "session.parent", f"{flat[k + 1]!r} {flat[k + 2]}")
        for k in range(0, len(flat) - 2, 3)
    ]
    return ValidationError(found, "append")


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}@{host}"
