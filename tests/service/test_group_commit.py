"""Group commit in the SQLite and PostgreSQL stores: appends that arrive together are committed together.

What must not change: each append is acknowledged only once durable, offsets stay dense and in order, a
retried message is a duplicate, a reused id with other content a conflict, and a refused append fails
alone (the others of its batch commit). ``together`` makes the batch deterministic: SQLite's writer is held
(its lock) until every append is queued; PostgreSQL's writer task starts after all of them are queued
in the same turn of the event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_database
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.cli import main
from agentmsg.errors import ConflictError, StoreFullError, ValidationError
from agentmsg.service import AsyncClient, Client
from agentmsg.service.stores import Appended, PostgresStore, SQLiteStore, Store
from agentmsg.v1 import message_pb2

KINDS = ["sqlite", "postgres"]


def message(message_id: str, text: str = "hi", parent_id: str = "") -> message_pb2.Message:
    pb = message_pb2.Message(id=message_id, parent_id=parent_id)
    pb.timestamp.FromSeconds(1_700_000_000)
    pb.user.content.add().text.text = text
    return pb


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def location(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "postgres":
        return fresh_database(request.getfixturevalue("postgres"))
    return str(tmp_path / "agentmsg.db")


def open_store(location: str, group_wait: float | None = None) -> Store:
    if location.startswith("postgresql://"):
        if group_wait is None:
            return PostgresStore(location, pool_size=4, health_interval=0.2)
        return PostgresStore(location, pool_size=4, health_interval=0.2, group_wait=group_wait)
    # `together` holds SQLite's writer at its lock while the batch queues; a writer waiting for the last batch's
    # writers would take some of them before it (the wait has its own test).
    return SQLiteStore(location, group_wait=0 if group_wait is None else group_wait)


def with_store(location: str, body: Any, nodes: int = 1) -> Any:
    async def main() -> Any:
        stores = [open_store(location) for _ in range(nodes)]
        try:
            for store in stores:
                await store.start()
            return await body(*stores)
        finally:
            for store in stores:
                await store.close()

    return asyncio.run(main())


async def together(store: Store, calls: list[Awaitable[list[Appended]]]) -> list[list[Appended] | BaseException]:
    """Run the appends so that the store's writer takes them as one batch; their outcomes, in order."""
    before = store.commits
    if isinstance(store, SQLiteStore):
        store._lock.acquire()  # the writer takes the first append, then waits here while the others queue
        try:
            tasks = [asyncio.ensure_future(call) for call in calls]
            for _ in range(1000):
                await asyncio.sleep(0.005)
                if store._queue.qsize() == len(calls) - 1:
                    break
            else:  # pragma: no cover - reported
                pytest.fail(f"the appends did not queue: {store._queue.qsize()} of {len(calls) - 1}")
        finally:
            store._lock.release()
    else:
        tasks = [asyncio.ensure_future(call) for call in calls]
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert store.commits - before <= 1, "one batch, at most one commit"
    return list(outcomes)


def test_appends_that_arrive_together_are_committed_together(location: str) -> None:
    """48 appends (16 sessions, 3 each, one session 3 more) queued together: one commit acknowledges them all,
    and each session's offsets are dense, in the order its appends were queued."""

    async def body(store: Store) -> None:
        calls = []
        order: dict[str, list[str]] = {}
        for round_ in range(3):
            for s in range(16):
                session = f"s{s}"
                ids = [f"{session}-{round_}-{k}" for k in range(1 + (s == 0) * 1)]
                order.setdefault(session, []).extend(ids)
                calls.append(store.append(session, [message(i) for i in ids]))
        before = (store.commits, store.committed_appends)
        outcomes = await together(store, calls)
        assert not [o for o in outcomes if isinstance(o, BaseException)]
        assert (store.commits - before[0], store.committed_appends - before[1]) == (1, 48)
        for session, ids in order.items():
            rows = await store.read(session, 0, 100)
            assert [offset for offset, _ in rows] == list(range(1, len(ids) + 1))
            assert [message_pb2.Message.FromString(bytes(b)).id for _, b in rows] == ids
        # Each call's own offsets came back, in order.
        first = outcomes[0]
        assert not isinstance(first, BaseException)
        assert [(a.offset, a.duplicate) for a in first] == [(1, False), (2, False)]

    with_store(location, body)


def test_a_batch_of_more_rows_than_one_statement_takes_commits_whole_with_dense_offsets(location: str) -> None:
    """150 calls queued together, two messages each, to 37 sessions (SQLite writes such a batch in several
    statements, none over 256 rows: 300 rows and 37 sessions are neither one statement's worth nor a power of
    two), one of them a retry of an earlier call: one commit, every session's offsets dense and in queue order."""

    async def body(store: Store) -> None:
        await store.append("g0", [message("g0-before")])
        calls = []
        order: dict[str, list[str]] = {"g0": ["g0-before"]}
        for k in range(149):
            session = f"g{k % 37}"
            ids = [f"{session}-{k}-{j}" for j in range(2)]
            order.setdefault(session, []).extend(ids)
            calls.append(store.append(session, [message(i) for i in ids]))
        calls.append(store.append("g0", [message("g0-before")]))  # a retry: a duplicate, not a new row
        before = (store.commits, store.committed_appends)
        outcomes = await together(store, calls)
        assert not [o for o in outcomes if isinstance(o, BaseException)]
        assert (store.commits - before[0], store.committed_appends - before[1]) == (1, 150)
        assert outcomes[-1] == [Appended(1, True)]
        assert outcomes[0] == [Appended(2, False), Appended(3, False)]
        for session, ids in order.items():
            rows = await store.read(session, 0, 100)
            assert [offset for offset, _ in rows] == list(range(1, len(ids) + 1)), session
            assert [message_pb2.Message.FromString(bytes(b)).id for _, b in rows] == ids
            assert await store.last_offset(session) == len(ids)
        assert len(await store.sessions("", 100)) == 37

    with_store(location, body)


def test_a_refused_append_fails_alone_and_retries_inside_a_batch_are_duplicates(location: str) -> None:
    """One batch holding a conflict, a bad parent, an idempotent retry, a message twice, and two appends of one
    id with different content: each refused append fails with its own error, the rest commit, offsets dense."""

    async def body(store: Store) -> None:
        await store.append("s", [message("a")])
        outcomes = await together(
            store,
            [
                store.append("s", [message("b")]),
                store.append("s", [message("z"), message("a", text="other")]),  # conflict: nothing of it kept
                store.append("s", [message("c", parent_id="nope")]),  # a parent not in the session
                store.append("s", [message("a")]),  # a retry of a committed append
                store.append("s", [message("d", parent_id="b")]),  # a parent committed earlier in the batch
                store.append("s", [message("f")]),
                store.append("s", [message("f")]),  # a retry inside the batch
                store.append("s", [message("g", text="one")]),
                store.append("s", [message("g", text="two")]),  # the same id, other content: the first wins
                store.append("new", [message("x"), message("x", text="other")]),  # refused: no session left
            ],
        )
        flat = [o if isinstance(o, BaseException) else [(a.offset, a.duplicate) for a in o] for o in outcomes]
        assert flat[0] == [(2, False)]
        assert isinstance(flat[1], ConflictError)
        assert "'a' is already at offset 1" in str(flat[1])
        assert isinstance(flat[2], ValidationError)
        assert [(v.field, v.rule_id) for v in flat[2].violations] == [("messages[0].parent_id", "session.parent")]
        assert flat[3] == [(1, True)]
        assert flat[4] == [(3, False)]
        assert flat[5] == [(4, False)]
        assert flat[6] == [(4, True)]
        assert flat[7] == [(5, False)]
        assert isinstance(flat[8], ConflictError)
        assert "'g' is already at offset 5" in str(flat[8])
        assert isinstance(flat[9], ConflictError)
        rows = await store.read("s", 0, 100)
        assert [offset for offset, _ in rows] == [1, 2, 3, 4, 5]
        assert [message_pb2.Message.FromString(bytes(b)).id for _, b in rows] == ["a", "b", "d", "f", "g"]
        assert message_pb2.Message.FromString(bytes(rows[4][1])) == message("g", text="one")
        assert await store.known_ids("s", {"z", "c"}) == set()
        assert await store.last_offset("new") == 0
        assert [r.session_id for r in await store.sessions("", 10)] == ["s"]

    with_store(location, body)


def test_a_batch_of_calls_to_one_new_session_writes_its_session_once_and_keeps_each_outcome(location: str) -> None:
    """One batch of calls to a session that does not exist yet, the first refused: the session starts with the
    first call that wrote, its last append time is the last call that wrote (not a later retry of only
    duplicates), and its last offset counts every message written; another session's refused-only run leaves no
    session behind."""

    async def body(store: Store) -> None:
        outcomes = await together(
            store,
            [
                store.append("n", [message("x"), message("x", text="other")], now_us=1_000),  # refused
                store.append("n", [message("a")], now_us=2_000),
                store.append("n", [message("b"), message("c")], now_us=3_000),
                store.append("n", [message("a")], now_us=4_000),  # only a duplicate: not an append to the log
                store.append("o", [message("y", parent_id="nope")], now_us=5_000),  # refused: no session
            ],
        )
        flat = [o if isinstance(o, BaseException) else [(a.offset, a.duplicate) for a in o] for o in outcomes]
        assert isinstance(flat[0], ConflictError)
        assert flat[1:4] == [[(1, False)], [(2, False), (3, False)], [(1, True)]]
        assert isinstance(flat[4], ValidationError)
        assert await store.last_offset("n") == 3
        ((record),) = await store.sessions("", 10)
        assert (record.session_id, record.last_offset, record.updated_us) == ("n", 3, 3_000)
        assert record.created_us in (2_000, 3_000)  # the batch's time: the first (PostgreSQL) or last write
        assert await store.last_offset("o") == 0

    with_store(location, body)


def test_concurrent_conflicting_appends_of_one_id_have_exactly_one_winner(location: str, kind: str) -> None:
    """32 appends of one id, each with other content, at once (on two nodes where the store is shared): one is
    stored, the 31 others are conflicts naming its offset, and the stored bytes are the winner's."""

    async def body(*stores: Store) -> None:
        await stores[0].append("s", [message("before")])
        calls = [stores[i % len(stores)].append("s", [message("x", text=f"take {i}")]) for i in range(32)]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        won = [i for i, o in enumerate(outcomes) if not isinstance(o, BaseException)]
        assert len(won) == 1, outcomes
        winner = outcomes[won[0]]
        assert not isinstance(winner, BaseException)
        assert [(a.offset, a.duplicate) for a in winner] == [(2, False)]
        lost = [o for o in outcomes if isinstance(o, BaseException)]
        assert all(isinstance(o, ConflictError) and "'x' is already at offset 2" in str(o) for o in lost), lost
        entry = await stores[0].entry("s", "x")
        assert entry is not None
        assert message_pb2.Message.FromString(bytes(entry[1])) == message("x", text=f"take {won[0]}")
        assert await stores[0].last_offset("s") == 2

    with_store(location, body, nodes=2 if kind == "postgres" else 1)


def test_postgres_a_batch_that_fails_as_a_whole_is_answered_one_append_at_a_time_and_the_writer_goes_on(
    postgres: Any,
) -> None:
    """A session's row held by another transaction: the batch's statement waits on it until the statement timeout,
    and the batch fails as a whole. Each of its appends is then tried on its own: those to free sessions commit,
    the one to the held session fails alone (timed out). The writer goes on: once the row is free the held
    session takes appends again, and the next batch is one commit."""
    import psycopg

    url = fresh_database(postgres)

    async def body() -> None:
        store = PostgresStore(url, pool_size=4, statement_timeout=0.5)
        await store.start()
        try:
            for session in ("a", "held", "b"):
                await store.append(session, [message(f"{session}-0")])
            async with await psycopg.AsyncConnection.connect(url) as holder:
                await holder.execute("SELECT 1 FROM agentmsg_sessions WHERE session_id = 'held' FOR UPDATE")
                calls = [store.append(s, [message(f"{s}-1")]) for s in ("a", "held", "b")]
                outcomes = await asyncio.gather(*calls, return_exceptions=True)
                await holder.rollback()
            a, held, b = outcomes
            assert (a, b) == ([Appended(2, False)], [Appended(2, False)]), outcomes
            assert isinstance(held, am.StoreError), outcomes
            assert "timed out" in str(held)
            assert await store.last_offset("held") == 1
            assert await store.append("held", [message("held-1")]) == [Appended(2, False)]
            before = store.commits
            again = await asyncio.gather(*(store.append(s, [message(f"{s}-2")]) for s in ("a", "held", "b")))
            assert again == [[Appended(3, False)]] * 3
            assert store.commits - before == 1
        finally:
            await store.close()

    asyncio.run(body())


def test_writers_that_append_together_are_waited_for_and_a_lone_writer_never_is(location: str) -> None:
    """Eight writers appending in turn, each coming back at its own moment (0 to 35 ms after its answer): the writer
    waits for them (``group_wait``), so every round is one commit. Without the wait, the first writers back are
    committed before the others. A lone writer's appends are never held back (once the eight are no longer
    awaited, at most ``group_wait`` after their last round)."""
    rounds = 6

    async def writers(store: Store, tag: str) -> int:
        async def writer(i: int) -> None:
            for r in range(rounds):
                await store.append(f"{tag}{i}", [message(f"{tag}{i}-{r}")])
                await asyncio.sleep(i * 0.005)

        before = store.commits
        await asyncio.gather(*(writer(i) for i in range(8)))
        return store.commits - before

    async def body() -> None:
        waiting = open_store(location, group_wait=0.5)
        await waiting.start()
        try:
            assert await writers(waiting, "w") == rounds
            await asyncio.sleep(0.6)  # the writer stops waiting for the eight (they are gone) after group_wait
            lone = [await asyncio.wait_for(waiting.append("lone", [message(f"lone-{r}")]), 0.4) for r in range(3)]
            assert lone == [[Appended(r + 1, False)] for r in range(3)]
        finally:
            await waiting.close()
        eager = open_store(location, group_wait=0)
        await eager.start()
        try:
            assert await writers(eager, "e") > rounds
        finally:
            await eager.close()

    asyncio.run(body())


def test_a_group_wait_out_of_bounds_is_refused_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    for wait in (-0.001, 1.5):
        with pytest.raises(am.StoreError, match="group_wait must be between 0 and 1 second"):
            PostgresStore("postgresql://nobody@127.0.0.1:1/none", group_wait=wait)
        with pytest.raises(am.StoreError, match="group_wait must be between 0 and 1 second"):
            SQLiteStore(":memory:", group_wait=wait)
    for flag in ("-1", "1001"):
        with pytest.raises(SystemExit) as exited:
            main(["serve", "--store", "postgresql://nobody@127.0.0.1:1/none", "--group-wait-ms", flag])
        assert exited.value.code == 2
        assert f"--group-wait-ms takes 0 to 1000 milliseconds, got {flag}" in capsys.readouterr().err


def test_sqlite_an_append_the_disk_refuses_fails_alone_in_its_batch(tmp_path: Path) -> None:
    """A full database (``max_page_count``) refuses the big append of a batch: that append fails with
    StoreFullError; SQLite may roll the whole transaction back, and the small appends around it commit anyway."""

    async def body(store: Store) -> None:
        assert isinstance(store, SQLiteStore)
        await store.append("s", [message("first")])
        with store._lock:
            (pages,) = store._db.execute("PRAGMA page_count").fetchone()
            store._db.execute(f"PRAGMA max_page_count={pages + 2}")
        outcomes = await together(
            store,
            [
                store.append("s", [message("small-1")]),
                store.append("s", [message("big", text="y" * 400_000)]),
                store.append("s", [message("small-2")]),
            ],
        )
        assert isinstance(outcomes[1], StoreFullError)
        assert [[(a.offset, a.duplicate) for a in o] for o in (outcomes[0], outcomes[2])] == [  # type: ignore[union-attr]
            [(2, False)],
            [(3, False)],
        ]
        rows = await store.read("s", 0, 10)
        assert [message_pb2.Message.FromString(bytes(b)).id for _, b in rows] == ["first", "small-1", "small-2"]

    with_store(str(tmp_path / "full.db"), body)


# --- SIGKILL during a group commit ----------------------------------------------------------------------

_READY = re.compile(r"agentmsg serving on 127\.0\.0\.1:(\d+)")

# `agentmsg serve` whose SQLite writer SIGKILLs its own process as it begins the COMMIT of a batch of at least
# MIN_BATCH appends (every append of the batch written in the open transaction, none committed), once
# AFTER_COMMITS batches have committed.
_KILLED_MID_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    from agentmsg.service.stores import sqlite as backend

    AFTER_COMMITS = int(os.environ["AFTER_COMMITS"])
    MIN_BATCH = int(os.environ["MIN_BATCH"])

    def dying(original):
        def commit_or_die(self, batch):
            def trace(sql):
                if sql == "COMMIT" and len(batch) >= MIN_BATCH and self.commits >= AFTER_COMMITS:
                    print(f"killing myself at the COMMIT of {len(batch)} appends", flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)

            self._db.set_trace_callback(trace)
            return original(self, batch)

        return commit_or_die

    # Both ways the writer commits a batch: planned (a few statements), or append by append (savepoints).
    backend.SQLiteStore._commit_planned = dying(backend.SQLiteStore._commit_planned)
    backend.SQLiteStore._commit_batch = dying(backend.SQLiteStore._commit_batch)
    from agentmsg.cli import main
    sys.exit(main(["serve", "--host", "127.0.0.1", "--port", "0", "--db", sys.argv[1]]))
    """
)


@pytest.fixture
def processes() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for process in started:
        if isinstance(process, ServerProcess):
            process.kill()
        else:
            if process.poll() is None:
                process.kill()
            process.wait(10)
            process.stdout.close()


def _burst(target: str, clients: int, acked: dict[str, int], sent: dict[str, list[str]]) -> None:
    """``clients`` async clients appending 3-message batches (half to one shared session, half each to its own)
    until the server goes away, filling ``acked`` (the acknowledged offset by message id) and ``sent`` (every
    batch sent, by key)."""

    async def client_loop(number: int) -> None:
        session = "shared" if number % 2 else f"own-{number}"
        async with AsyncClient(target, timeout=10) as client:
            for batch in range(1000):  # bounded: the server goes away long before
                messages = [
                    am.UserMessage.text(f"{session} {number} {batch} {i}", id=f"c{number}-b{batch}-{i}")
                    for i in range(3)
                ]
                sent[f"{number}/{batch}"] = [m.id for m in messages]
                try:
                    offsets = await client.append_many(session, messages)
                except (am.UnavailableError, am.DeadlineExceededError, am.CancelledError):
                    return
                acked.update({m.id: offset for m, offset in zip(messages, offsets, strict=True)})

    async def main() -> None:
        await asyncio.gather(*(client_loop(n) for n in range(clients)))

    asyncio.run(main())


def _check_after_restart(target: str, acked: dict[str, int], sent: dict[str, list[str]]) -> int:
    """Every acknowledged message at its offset, every log dense, every batch whole or absent; how many sent
    batches are absent (never committed)."""
    with Client(target, timeout=10) as client:
        logs = {s.session_id: list(client.history(s.session_id, page_size=1000)) for s in client.sessions()}
    stored = {item.message.id: item.offset for log in logs.values() for item in log}
    for session, log in logs.items():
        assert [item.offset for item in log] == list(range(1, len(log) + 1)), session
    lost = [message_id for message_id in acked if stored.get(message_id) != acked[message_id]]
    assert not lost, f"acknowledged appends lost or moved: {lost[:5]}"
    absent = 0
    for key, ids in sent.items():
        present = [i in stored for i in ids]
        assert all(present) or not any(present), f"batch {key} is partly stored: {present}"
        absent += not any(present)
    return absent


def test_sigkill_at_the_commit_of_a_group_loses_no_acknowledged_append_and_no_batch_is_partial(
    tmp_path: Path, processes: list[Any]
) -> None:
    """The server kills itself as the writer begins the COMMIT of a batch of >= 4 appends; after a restart on
    the same file every acknowledged append is at its offset, no batch is partly stored, and the appends of
    the killed group (at least 4 append calls) are absent, none of them acknowledged."""
    db = tmp_path / "killed.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "AFTER_COMMITS": "20", "MIN_BATCH": "4"}
    env.pop("AGENTMSG_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_COMMIT, str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    processes.append(proc)
    assert proc.stdout is not None
    target = ""
    for line in proc.stdout:
        match = _READY.search(line)
        if match:
            target = f"127.0.0.1:{match.group(1)}"
            break
    assert target, "the server did not start"
    acked: dict[str, int] = {}
    sent: dict[str, list[str]] = {}
    _burst(target, 16, acked, sent)
    assert proc.wait(30) == -9
    assert "killing myself at the COMMIT" in proc.stdout.read()
    assert len(acked) >= 20 * 3
    restarted = ServerProcess("--db", str(db))
    processes.append(restarted)
    assert _check_after_restart(restarted.target, acked, sent) >= 4


def test_sigkill_of_a_postgres_node_during_group_commits_loses_no_acknowledged_append(
    postgres: Any, processes: list[Any]
) -> None:
    """16 clients append through a PostgreSQL node (group commits in flight all along) until it is SIGKILLed;
    a new node on the same database finds every acknowledged append at its offset and no batch partial."""
    url = fresh_database(postgres)
    server = ServerProcess("--store", url)
    processes.append(server)
    acked: dict[str, int] = {}
    sent: dict[str, list[str]] = {}
    burst = threading.Thread(target=_burst, args=(server.target, 16, acked, sent))
    burst.start()
    for _ in range(6000):  # until some 600 messages are acknowledged (bounded: 60 s)
        if len(acked) >= 600 or not burst.is_alive():
            break
        threading.Event().wait(0.01)
    server.kill()
    burst.join(60)
    assert len(acked) >= 600
    restarted = ServerProcess("--store", url)
    processes.append(restarted)
    _check_after_restart(restarted.target, acked, sent)
