"""DeleteSession and retention through real servers: subscribers, publishers, scopes, the CLI, SIGKILL mid-delete.

The store-level semantics (whole or gone, idempotent, ids freed, the sweep) are in the store contract suite, on
all three stores; here they are seen from clients, on one node and across a cluster.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import ServerThread, fresh_database
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.cli import main
from agentmsg.service import AsyncClient, Client, Live, Logged, ServerConfig, create_server
from agentmsg.service.access import Scope
from agentmsg.service.localpg import LocalPostgres, wait_until
from agentmsg.service.server import RETENTION_BATCH
from agentmsg.service.stores import PostgresStore, SQLiteStore
from agentmsg.streaming import StreamEvent, events_from_message

DAY = 86_400.0


def text(i: int, session: str = "s", pad: int = 0) -> am.UserMessage:
    return am.UserMessage.text(f"{session}-{i} " + "x" * pad, id=f"{session}-{i}", timestamp=1_700_000_000 + i)


class Following:
    """A subscription read in a thread: what it received, and how it ended."""

    def __init__(self, client: Client, session: str, **options: Any) -> None:
        self.items: queue.Queue[Logged | Live] = queue.Queue()
        self.error: BaseException | None = None
        self.ended = threading.Event()

        def follow() -> None:
            try:
                for item in client.subscribe(session, timeout=30, **options):
                    self.items.put(item)
            except BaseException as exc:
                self.error = exc
            finally:
                self.ended.set()

        self._thread = threading.Thread(target=follow, daemon=True)
        self._thread.start()

    def take(self, count: int) -> list[Logged | Live]:
        return [self.items.get(timeout=10) for _ in range(count)]

    def outcome(self) -> BaseException | None:
        assert self.ended.wait(15), "the subscription did not end"
        return self.error


def test_delete_removes_the_session_and_is_idempotent(client: Client) -> None:
    assert client.append_many("s", [text(i) for i in range(3)]) == [1, 2, 3]
    client.append("t", text(0, "t"))
    assert client.delete_session("s") == 3
    with pytest.raises(am.NotFoundError, match="no session 's'"):
        list(client.history("s"))
    assert [info.session_id for info in client.sessions()] == ["t"]
    # A repeated delete (or one of a session that never was) succeeds and deletes nothing.
    assert client.delete_session("s") == 0
    assert client.delete_session("never") == 0
    assert [item.offset for item in client.history("t")] == [1]
    with pytest.raises(am.ValidationError) as info:
        client.delete_session("not a session id!")
    assert info.value.violations[0].field == "session_id"


def test_a_deleted_sessions_id_and_message_ids_start_a_new_session(client: Client) -> None:
    first = [text(i) for i in range(3)]
    client.append_many("s", first)
    assert client.delete_session("s") == 3
    # The same id, the same message ids: a new session from offset 1, nothing a duplicate of the deleted log.
    assert client.append("s", first[2]) == 1
    assert client.append("s", first[0]) == 2
    assert [(item.offset, item.message.id) for item in client.history("s")] == [(1, "s-2"), (2, "s-0")]
    # The deleted entries are no parents in the new session.
    orphan = am.UserMessage.text("reply", parent_id="s-1")
    with pytest.raises(am.ValidationError, match="'s-1' is not in the session"):
        client.append("s", orphan)


def test_the_async_client_deletes(server: ServerThread) -> None:
    async def body() -> None:
        async with AsyncClient(server.target, timeout=10) as client:
            await client.append_many("a", [text(i, "a") for i in range(4)])
            assert await client.delete_session("a") == 4
            assert await client.delete_session("a") == 0
            with pytest.raises(am.NotFoundError):
                [item async for item in client.history("a")]

    server.run(body(), 20)


def test_subscribers_of_a_deleted_session_end_not_found(client: Client, server: ServerThread) -> None:
    client.append_many("s", [text(i) for i in range(3)])
    plain = Following(client, "s")
    live = Following(client, "s", live_events=True)
    assert [item.offset for item in plain.take(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert [item.offset for item in live.take(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert client.delete_session("s") == 3
    for following in (plain, live):
        assert isinstance(following.outcome(), am.NotFoundError), following.error
        assert "was deleted" in str(following.error)
    # A subscriber resuming after an offset of the deleted session is told at once, not left waiting.
    with pytest.raises(am.NotFoundError, match="has no offset 2"):
        next(iter(client.subscribe("s", after=2, timeout=10)))
    # A new session by that id is followed from its start as any other.
    fresh = Following(client, "s")
    client.append("s", text(9))
    assert [item.offset for item in fresh.take(1)] == [1]  # type: ignore[union-attr]
    assert client.delete_session("s") == 1
    assert isinstance(fresh.outcome(), am.NotFoundError)
    # Nothing is left behind for the deleted session on the server.
    assert wait_until(lambda: not server.running.store._watching, 5)
    assert server.running.frames.full("s", 0, 256) is None


def test_a_subscriber_never_takes_a_new_session_by_the_same_id_for_the_deleted_one(client: Client) -> None:
    client.append_many("s", [text(i) for i in range(3)])
    caught_up = Following(client, "s", after=3)  # has received nothing, waits for offset 4
    behind = Following(client, "s", max_batch=1)
    assert [item.offset for item in behind.take(1)] == [1]  # type: ignore[union-attr]
    assert client.delete_session("s") == 3
    # Re-created at once, longer than either cursor: neither subscription may read it as the old session's.
    client.append_many("s", [text(i, "new") for i in range(6)])
    assert isinstance(caught_up.outcome(), am.NotFoundError)
    assert isinstance(behind.outcome(), am.NotFoundError)
    assert caught_up.items.empty()
    got = [behind.items.get_nowait() for _ in range(behind.items.qsize())]
    assert all(item.message.id.startswith("s-") for item in got)  # type: ignore[union-attr]


def test_a_publisher_streaming_into_a_deleted_session_gets_not_found(client: Client) -> None:
    client.append("s", text(0))
    watcher = Following(client, "s", live_events=True)
    assert [item.offset for item in watcher.take(1)] == [1]  # type: ignore[union-attr]
    go_on = threading.Event()

    answer = events_from_message(am.AssistantMessage.text("half of an answer, then the rest"), chunk_size=8)

    def events() -> Iterator[StreamEvent]:
        yield from answer[:3]
        go_on.wait(10)
        yield from answer[3:]

    published: dict[str, Any] = {}

    def publish() -> None:
        try:
            published["result"] = client.publish_stream("s", events())
        except am.AgentMsgError as exc:
            published["error"] = exc

    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    assert all(isinstance(item, Live) for item in watcher.take(3))  # the stream is being relayed
    assert client.delete_session("s") == 1
    go_on.set()
    publisher.join(15)
    assert isinstance(published.get("error"), am.NotFoundError), published
    assert "was deleted while this stream was published" in str(published["error"])
    with pytest.raises(am.NotFoundError):  # its message was not appended
        list(client.history("s"))
    # A publisher that starts afterwards starts a new session.
    offset, message = client.publish_stream("s", events_from_message(am.AssistantMessage.text("again")))
    assert offset == 1
    assert message.text_content() == "again"


def test_a_token_deletes_only_the_sessions_in_its_scope(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(tokens=["admin"], grants={"acme-token": Scope.parse("acme:*")})
    with (
        Client(server.target, token="admin", timeout=10) as admin,
        Client(server.target, token="acme-token", timeout=10) as acme,
    ):
        admin.append("globex:1", text(0, "g"))
        acme.append("acme:1", text(0, "a"))
        with pytest.raises(am.PermissionDeniedError):
            acme.delete_session("globex:1")
        with pytest.raises(am.PermissionDeniedError):  # the same answer whether the session exists or not
            acme.delete_session("globex:none")
        assert [item.offset for item in admin.history("globex:1")] == [1]  # untouched
        assert acme.delete_session("acme:1") == 1
    with Client(server.target, timeout=10) as anonymous, pytest.raises(am.UnauthenticatedError):
        anonymous.delete_session("acme:1")


# --- retention ------------------------------------------------------------------------------------------


def _backdated(store: Any, session: str, days_ago: float, count: int = 1) -> Any:
    """Append ``count`` messages to ``session`` through the store, as if ``days_ago`` days ago."""
    when = int((time.time() - days_ago * DAY) * 1_000_000)
    return store.append(session, [text(i, session).pb for i in range(count)], now_us=when)


def test_retention_sweeps_sessions_idle_longer_than_retain_days(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(retain_days=7)
    store = server.running.store
    server.run(_backdated(store, "old", 30, 3))
    server.run(_backdated(store, "recent", 2))
    with Client(server.target, timeout=10) as client:
        follower = Following(client, "old")
        assert [item.offset for item in follower.take(3)] == [1, 2, 3]  # type: ignore[union-attr]
        assert server.run(server.running.sweep()) == ["old"]
        assert isinstance(follower.outcome(), am.NotFoundError)
        with pytest.raises(am.NotFoundError):
            list(client.history("old"))
        assert [item.offset for item in client.history("recent")] == [1]
        # The clock is the sweep's argument: ten days on, "recent" is idle for twelve.
        assert server.run(server.running.sweep(now=time.time() + 10 * DAY)) == ["recent"]
        assert client.sessions() == []


def test_a_sweep_deletes_at_most_a_batch(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=":memory:", retain_days=1)
    store = server.running.store
    for n in range(RETENTION_BATCH + 5):
        server.run(_backdated(store, f"s{n:03}", 2))
    assert len(server.run(server.running.sweep())) == RETENTION_BATCH
    assert len(server.run(server.running.sweep())) == 5


def test_retain_days_sweeps_in_the_background_from_the_start(tmp_path: Path) -> None:
    # Sessions written long ago (backdated through the store), then a server started with --retain-days.
    path = tmp_path / "agentmsg.db"

    async def prepare() -> None:
        store = SQLiteStore(path)
        await _backdated(store, "stale", 40, 2)
        await _backdated(store, "live", 1)
        await store.close()

    asyncio.run(prepare())
    server = ServerProcess("--db", str(path), "--retain-days", "30")
    try:
        with Client(server.target, timeout=10) as client:
            assert wait_until(lambda: [s.session_id for s in client.sessions()] == ["live"], 15)
        # The log line is read from the server's stderr by another thread: polled, not read once.
        assert wait_until(lambda: any("retention: deleted 1 session(s)" in line for line in server.errors), 15)
    finally:
        assert server.stop()


def test_retain_days_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--memory", "--retain-days", "0"])
    assert exited.value.code == 2
    assert "--retain-days takes a positive number of days, got 0" in capsys.readouterr().err
    with pytest.raises(am.ValidationError, match="retain_days"):
        asyncio.run(create_server(ServerConfig(db=":memory:", retain_days=-1)))


# --- the CLI --------------------------------------------------------------------------------------------


def test_cli_delete(server: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    target = ["--target", server.target]
    assert main(["send", "chat", "--text", "hello", *target]) == 0
    assert main(["send", "chat", "--text", "again", *target]) == 0
    capsys.readouterr()
    assert main(["delete", "chat", *target]) == 0
    assert capsys.readouterr().out == "deleted chat (2 messages)\n"
    assert main(["delete", "chat", *target]) == 0
    assert capsys.readouterr().out == "no session 'chat': nothing deleted\n"
    assert main(["tail", "chat", *target]) == 2
    assert "no session 'chat'" in capsys.readouterr().err


# --- SIGKILL mid-delete ---------------------------------------------------------------------------------

_READY = re.compile(r"agentmsg serving on 127\.0\.0\.1:(\d+)")

# `agentmsg serve` whose SQLite store SIGKILLs its own process partway through a delete's transaction
# (SQLite's progress handler: after STEPS x 1000 virtual-machine instructions of the delete's statements).
_KILLED_MID_DELETE = textwrap.dedent(
    """
    import os, signal, sys
    from agentmsg.service.stores import sqlite as backend

    STEPS = int(os.environ["KILL_AFTER_STEPS"])
    original = backend.SQLiteStore._delete_sync

    def delete_then_die(self, session_id, idle_before_us):
        steps = 0

        def tick():
            nonlocal steps
            steps += 1
            if steps >= STEPS:
                print("killing myself mid-delete", flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            return 0

        self._db.set_progress_handler(tick, 1000)
        return original(self, session_id, idle_before_us)

    backend.SQLiteStore._delete_sync = delete_then_die
    from agentmsg.cli import main
    sys.exit(main(["serve", "--host", "127.0.0.1", "--port", "0", "--db", sys.argv[1]]))
    """
)


def _spawn_dying_server(path: Path, steps: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "KILL_AFTER_STEPS": str(steps)}
    env.pop("AGENTMSG_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_DELETE, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        match = _READY.search(line)
        if match:
            return proc, f"127.0.0.1:{match.group(1)}"
    proc.kill()
    raise RuntimeError("the server did not start")


def _whole(client: Client, session: str, count: int) -> bool:
    logged = list(client.history(session, page_size=1000))
    assert [item.offset for item in logged] == list(range(1, len(logged) + 1))
    return [item.message.id for item in logged] == [f"{session}-{i}" for i in range(count)]


def test_sqlite_server_killed_mid_delete_keeps_the_session_whole(tmp_path: Path) -> None:
    path = tmp_path / "agentmsg.db"
    count = 5000
    proc, target = _spawn_dying_server(path, steps=20)
    try:
        with Client(target, timeout=30) as client:
            for start in range(0, count, 1000):
                client.append_many("big", [text(i, "big", pad=200) for i in range(start, start + 1000)])
            with pytest.raises(am.UnavailableError):  # the server died under the call
                client.delete_session("big")
        assert proc.wait(10) == -signal.SIGKILL
        assert proc.stdout is not None
        assert "killing myself mid-delete" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    server = ServerProcess("--db", str(path))
    try:
        with Client(server.target, timeout=30) as client:
            assert _whole(client, "big", count)  # whole: the delete's transaction never committed
            assert client.delete_session("big") == count  # and a delete that completes removes it all
            with pytest.raises(am.NotFoundError):
                list(client.history("big"))
    finally:
        assert server.stop()


def test_postgres_node_killed_mid_delete_keeps_the_session_whole(postgres: LocalPostgres) -> None:
    # The delete is held mid-transaction deterministically: the test locks one of the session's message rows,
    # so the node's DELETE of the messages waits on it (the session's row already deleted, uncommitted). The
    # node is killed there; the database rolls the orphaned transaction back.
    url = fresh_database(postgres)
    count = 3000
    node = ServerProcess("--store", url, "--pool-size", "4")
    outcome: dict[str, BaseException] = {}
    try:
        with Client(node.target, timeout=30) as client:
            for start in range(0, count, 1000):
                client.append_many("big", [text(i, "big", pad=100) for i in range(start, start + 1000)])
        with psycopg.connect(url) as blocker:
            blocker.execute("SELECT 1 FROM agentmsg_messages WHERE session_id = 'big' AND seq = %s FOR UPDATE", (2000,))

            def delete() -> None:
                try:
                    with Client(node.target, timeout=30) as client:
                        client.delete_session("big")
                except am.AgentMsgError as exc:
                    outcome["error"] = exc

            deleting = threading.Thread(target=delete, daemon=True)
            deleting.start()
            with psycopg.connect(url, autocommit=True) as watcher:

                def waiting() -> bool:
                    row = watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND query LIKE 'DELETE FROM agentmsg_messages%'"
                    ).fetchone()
                    return bool(row and row[0])

                assert wait_until(waiting, 15), "the delete did not reach the locked row"
                node.kill()
                blocker.rollback()
                deleting.join(15)
                assert isinstance(outcome.get("error"), am.UnavailableError), outcome

                def orphan_gone() -> bool:
                    row = watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'DELETE FROM agentmsg_%' "
                        "AND state <> 'idle'"
                    ).fetchone()
                    return bool(row and not row[0])

                assert wait_until(orphan_gone, 15)
    finally:
        node.kill()
    again = ServerProcess("--store", url, "--pool-size", "4")
    try:
        with Client(again.target, timeout=30) as client:
            assert _whole(client, "big", count)
            assert client.delete_session("big") == count
            with pytest.raises(am.NotFoundError):
                list(client.history("big"))
    finally:
        assert again.stop()


# --- the cluster ----------------------------------------------------------------------------------------


def test_a_delete_on_one_node_ends_subscribers_and_reads_on_the_others(cluster_nodes: list[ServerProcess]) -> None:
    a, b, c = cluster_nodes
    with (
        Client(a.target, timeout=10) as on_a,
        Client(b.target, timeout=10) as on_b,
        Client(c.target, timeout=10) as on_c,
    ):
        on_a.append_many("s", [text(i) for i in range(4)])
        followers = [Following(on_b, "s"), Following(on_c, "s", live_events=True)]
        for follower in followers:
            assert [item.offset for item in follower.take(4)] == [1, 2, 3, 4]  # type: ignore[union-attr]
        assert on_a.delete_session("s") == 4
        # Re-created at once on A, past both cursors: B and C hear of the delete first (commit order).
        on_a.append_many("s", [text(i, "new") for i in range(8)])
        for follower in followers:
            assert isinstance(follower.outcome(), am.NotFoundError), follower.error
            assert follower.items.empty()  # nothing of the new session was taken for the old one
        assert on_a.delete_session("s") == 8
        for client in (on_a, on_b, on_c):
            with pytest.raises(am.NotFoundError):
                list(client.history("s"))
        assert on_c.delete_session("s") == 0  # every node agrees it is gone
        # A new session by that id, appended on another node, starts at 1 and is seen everywhere.
        assert on_b.append("s", text(7)) == 1
        assert [item.message.id for item in on_c.history("s")] == ["s-7"]


def test_retention_on_a_cluster_deletes_each_idle_session_once(postgres: LocalPostgres) -> None:
    url = fresh_database(postgres)

    async def prepare() -> None:
        store = PostgresStore(url, pool_size=2)
        await store.start()
        for n in range(20):
            await _backdated(store, f"old-{n}", 10, 2)
        await _backdated(store, "kept", 1)
        await store.close()

    asyncio.run(prepare())
    nodes = [ServerProcess("--store", url, "--pool-size", "4", "--retain-days", "5") for _ in range(2)]
    try:
        with Client(nodes[1].target, timeout=10) as client:
            assert wait_until(lambda: [s.session_id for s in client.sessions()] == ["kept"], 20)

        def deleted() -> int:
            found = [re.search(r"retention: deleted (\d+) session", line) for n in nodes for line in n.errors]
            return sum(int(match.group(1)) for match in found if match)

        # Between them, each idle session deleted once (a node that finds one gone does not count it).
        assert wait_until(lambda: deleted() == 20, 10), deleted()
    finally:
        lingered = [node.target for node in nodes if not node.stop()]
        assert not lingered
