"""One contract, three stores: memory, SQLite and PostgreSQL behave the same.

Every test runs against each store. Where the store can be shared by several
server nodes (PostgreSQL), "several appenders" are several store instances on
one database, each with its own pool and change feed: nodes, as far as the
store can tell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_database

from agentmsg.errors import ConflictError, StoreError, ValidationError
from agentmsg.service.stores import MemoryStore, SQLiteStore, Store
from agentmsg.service.stores.postgres import LIVE_CHANNEL, PostgresStore
from agentmsg.v1 import message_pb2

KINDS = ["memory", "sqlite", "postgres"]


def message(message_id: str, text: str = "hi", parent_id: str = "") -> message_pb2.Message:
    pb = message_pb2.Message(id=message_id, parent_id=parent_id)
    pb.timestamp.FromSeconds(1_700_000_000)
    pb.user.content.add().text.text = text
    return pb


class Factory:
    """Stores of one kind over the same data: every ``make()`` is another "node" where the kind can share."""

    def __init__(self, kind: str, directory: Path, url: str) -> None:
        self.kind = kind
        self.directory = directory
        self.url = url
        self.memory = MemoryStore()
        self.opened: list[Store] = []

    async def make(self) -> Store:
        if self.kind == "memory":
            store: Store = self.memory
        elif self.kind == "sqlite":
            store = SQLiteStore(self.directory / "agentmsg.db")
        else:
            store = PostgresStore(self.url, pool_size=4, health_interval=0.2)
        await store.start()
        self.opened.append(store)
        return store

    async def close(self) -> None:
        seen: set[int] = set()
        while self.opened:
            store = self.opened.pop()
            if id(store) not in seen:
                seen.add(id(store))
                await store.close()


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Factory]:
    url = fresh_database(request.getfixturevalue("postgres")) if kind == "postgres" else ""
    factory = Factory(kind, tmp_path, url)
    yield factory
    assert not factory.opened, "each test closes its stores (through `run`)"


def run(factory: Factory, count: int, body: Callable[..., Awaitable[Any]]) -> Any:
    """Open ``count`` stores (nodes), run ``body(*stores)``, close them."""

    async def main() -> Any:
        try:
            stores = [await factory.make() for _ in range(count)]
            return await body(*stores)
        finally:
            await factory.close()

    return asyncio.run(main())


def test_offsets_are_dense_and_reads_page(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        appended = await store.append("s", [message(f"m{i}") for i in range(5)])
        assert [(a.offset, a.duplicate) for a in appended] == [(i, False) for i in range(1, 6)]
        (single,) = await store.append("s", [message("m5")])
        assert single.offset == 6
        assert [offset for offset, _ in await store.read("s", 0, 100)] == [1, 2, 3, 4, 5, 6]
        assert [offset for offset, _ in await store.read("s", 2, 2)] == [3, 4]
        assert await store.read("s", 6, 10) == []
        assert await store.last_offset("s") == 6
        assert await store.last_offset("nobody") == 0
        # The bytes read are the bytes appended (deterministic encoding).
        (_, body_bytes) = (await store.read("s", 5, 1))[0]
        assert message_pb2.Message.FromString(body_bytes) == message("m5")
        # Sessions are separate logs.
        (other,) = await store.append("t", [message("m0")])
        assert other.offset == 1

    run(make_store, 1, body)


def test_retry_is_idempotent_and_a_reused_id_conflicts(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        await store.append("s", [message("a"), message("b")])
        retried = await store.append("s", [message("b"), message("c")])
        assert [(a.offset, a.duplicate) for a in retried] == [(2, True), (3, False)]
        with pytest.raises(ConflictError, match="'b' is already at offset 2"):
            await store.append("s", [message("d"), message("b", text="other")])
        # Atomic: nothing of the refused batch was written.
        assert await store.last_offset("s") == 3
        assert await store.known_ids("s", {"d"}) == set()
        # A duplicate inside one batch is the same message twice.
        twice = await store.append("s", [message("e"), message("e")])
        assert [(a.offset, a.duplicate) for a in twice] == [(4, False), (4, True)]

    run(make_store, 1, body)


def test_parents_are_checked_through_the_index(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        await store.append("s", [message("root"), message("a", parent_id="root")])
        # A parent earlier in the same batch is fine.
        ok = await store.append("s", [message("b", parent_id="a"), message("c", parent_id="b")])
        assert [a.offset for a in ok] == [3, 4]
        with pytest.raises(ValidationError) as info:
            await store.append(
                "s", [message("d", parent_id="nope"), message("e", parent_id="e"), message("f", parent_id="d")]
            )
        assert [(v.field, v.rule_id) for v in info.value.violations] == [
            ("messages[0].parent_id", "session.parent"),
            ("messages[1].parent_id", "session.parent"),
        ]
        assert "'nope' is not in the session" in str(info.value)
        assert "'e' names itself" in str(info.value)
        assert await store.last_offset("s") == 4  # nothing written
        # Another session's entries are not parents here.
        await store.append("t", [message("x")])
        with pytest.raises(ValidationError):
            await store.append("s", [message("g", parent_id="x")])

    run(make_store, 1, body)


def test_lookups(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        await store.append("s", [message(f"m{i}") for i in range(10)])
        found = await store.entry("s", "m3")
        assert found is not None
        assert found[0] == 4
        assert message_pb2.Message.FromString(found[1]).id == "m3"
        assert await store.entry("s", "zz") is None
        assert await store.entry("other", "m3") is None
        assert await store.known_ids("s", {"m0", "m9", "zz"}) == {"m0", "m9"}
        assert [offset for offset, _ in await store.before("s", 6, 3)] == [3, 4, 5]
        assert [offset for offset, _ in await store.before("s", 2, 5)] == [1]

    run(make_store, 1, body)


def test_sessions_list_by_id_with_prefix_and_cursor(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        for session_id in ["team-a/1", "team-a/2", "team-b/1", "solo"]:
            await store.append(session_id, [message("m")])
        await store.append("team-a/2", [message("n")])
        listed = await store.sessions("", 10)
        assert [r.session_id for r in listed] == ["solo", "team-a/1", "team-a/2", "team-b/1"]
        assert {r.session_id: r.last_offset for r in listed}["team-a/2"] == 2
        assert all(r.created_us <= r.updated_us for r in listed)
        assert [r.session_id for r in await store.sessions("", 10, prefix="team-a/")] == ["team-a/1", "team-a/2"]
        assert [r.session_id for r in await store.sessions("team-a/1", 10, prefix="team-")] == ["team-a/2", "team-b/1"]
        assert [r.session_id for r in await store.sessions("", 2)] == ["solo", "team-a/1"]

    run(make_store, 1, body)


def test_concurrent_appenders_on_every_node_get_dense_offsets(make_store: Factory, kind: str) -> None:
    nodes = 3 if kind == "postgres" else 1
    per_writer, writers = 15, 6

    async def body(*stores: Store) -> None:
        async def writer(w: int) -> list[int]:
            store = stores[w % len(stores)]
            offsets = []
            for i in range(per_writer):
                batch = [message(f"w{w}-{i}")] if i % 3 else [message(f"w{w}-{i}"), message(f"w{w}-{i}b")]
                offsets.extend(a.offset for a in await store.append("s", batch))
            return offsets

        results = await asyncio.gather(*(writer(w) for w in range(writers)))
        every = sorted(offset for offsets in results for offset in offsets)
        total = writers * (per_writer + 5)  # every third append is a batch of two
        assert every == list(range(1, total + 1))
        for offsets in results:
            assert offsets == sorted(offsets)  # each writer's appends land in its order
        rows = await stores[-1].read("s", 0, total + 10)
        assert [offset for offset, _ in rows] == list(range(1, total + 1))
        assert len({message_pb2.Message.FromString(b).id for _, b in rows}) == total

    run(make_store, nodes, body)


def test_an_append_wakes_waiters_on_every_node(make_store: Factory, kind: str) -> None:
    nodes = 2 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        watcher, writer = stores[0], stores[-1]
        changed = watcher.changed("s")
        await writer.append("s", [message("m1")])
        await asyncio.wait_for(changed.wait(), 10)
        assert [offset for offset, _ in await watcher.read("s", 0, 10)] == [1]
        # A duplicate is no change: nobody is woken (every notification committed before caught_up() has arrived).
        quiet = watcher.changed("s")
        await writer.append("s", [message("m1")])
        await watcher.caught_up()
        assert not quiet.is_set()

    run(make_store, nodes, body)


def test_caught_up_means_the_change_notifications_of_what_was_read_have_arrived(make_store: Factory, kind: str) -> None:
    # A live subscriber relies on it: the events relayed ahead of a message reach the node before the
    # message's own notification, so once that has arrived the events have too.
    nodes = 2 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        watcher, writer = stores[0], stores[-1]
        for n in range(1, 31):
            changed = watcher.changed("s")
            await writer.append("s", [message(f"m{n}")])
            assert [offset for offset, _ in await watcher.read("s", n - 1, 10)] == [n]
            await watcher.caught_up()
            assert changed.is_set(), n

    run(make_store, nodes, body)


def test_exclusive_holds_serialise_across_nodes(make_store: Factory, kind: str) -> None:
    nodes = 2 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        inside: list[int] = []
        overlaps = 0

        async def hold(n: int) -> None:
            nonlocal overlaps
            async with stores[n % len(stores)].exclusive("s"):
                inside.append(n)
                if len(inside) > 1:
                    overlaps += 1
                await asyncio.sleep(0.02)
                inside.remove(n)

        await asyncio.gather(*(hold(n) for n in range(6)))
        assert overlaps == 0
        # Other sessions are not held up by it.
        async with stores[0].exclusive("s"):
            await asyncio.wait_for(_enter(stores[-1], "t"), 5)

    run(make_store, nodes, body)


async def _enter(store: Store, session_id: str) -> None:
    async with store.exclusive(session_id):
        pass


def test_a_delete_removes_the_whole_session_and_frees_its_ids(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        await store.append("s", [message(f"m{i}", parent_id=f"m{i - 1}" if i else "") for i in range(10)])
        await store.append("t", [message("m0"), message("m1")])
        assert await store.delete("s") == 10
        assert await store.read("s", 0, 100) == []
        assert await store.last_offset("s") == 0
        assert await store.entry("s", "m3") is None
        assert await store.known_ids("s", {"m0", "m9"}) == set()
        assert [r.session_id for r in await store.sessions("", 10)] == ["t"]
        # Idempotent: a session that is gone (or never was) deletes to nothing.
        assert await store.delete("s") == 0
        assert await store.delete("never") == 0
        # Other sessions are untouched, ids included.
        assert [offset for offset, _ in await store.read("t", 0, 10)] == [1, 2]
        assert await store.known_ids("t", {"m0", "m1"}) == {"m0", "m1"}
        # The id starts a new session at offset 1; the deleted ids are free (other content is no conflict)...
        (again,) = await store.append("s", [message("m3", text="new content")])
        assert (again.offset, again.duplicate) == (1, False)
        # ...and the deleted entries are no parents any more.
        with pytest.raises(ValidationError, match="'m5' is not in the session"):
            await store.append("s", [message("x", parent_id="m5")])
        assert [r.last_offset for r in await store.sessions("", 10)] == [1, 2]

    run(make_store, 1, body)


def test_a_delete_wakes_waiters_and_delete_listeners_on_every_node(make_store: Factory, kind: str) -> None:
    nodes = 2 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        watcher, writer = stores[0], stores[-1]
        seen: list[str] = []
        watcher.on_delete(seen.append)
        by_writer: list[str] = []
        if writer is not watcher:
            writer.on_delete(by_writer.append)
        await writer.append("s", [message("m1")])
        # The append's own notification must have reached the watcher first: arriving late, under load, it would
        # wake ``changed`` before the delete's did (seen once as ``seen == []``).
        await watcher.caught_up()
        changed = watcher.changed("s")
        assert await writer.delete("s") == 1
        await asyncio.wait_for(changed.wait(), 10)
        assert seen == ["s"]
        # A delete of nothing tells nobody; a node's own delete is reported to it once (not again by the feed).
        assert await writer.delete("s") == 0
        await writer.append("marker", [message("m")])
        await writer.caught_up()
        await watcher.caught_up()
        assert seen == ["s"]
        if writer is not watcher:
            assert by_writer == ["s"]

    run(make_store, nodes, body)


def test_a_delete_racing_appends_leaves_a_whole_log(make_store: Factory, kind: str) -> None:
    # Whichever node deletes while another appends, the session is always a dense log 1..n: never part of
    # the old log, never a gap; after the last delete, appends start again at offset 1.
    nodes = 2 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        appender, deleter = stores[0], stores[-1]
        deleted = 0

        async def append() -> None:
            for i in range(60):
                await appender.append("s", [message(f"m{i}"), message(f"m{i}b")])

        async def delete() -> None:
            nonlocal deleted
            for _ in range(10):
                deleted += await deleter.delete("s")
                await asyncio.sleep(0.005)

        await asyncio.gather(append(), delete())
        rows = await appender.read("s", 0, 1000)
        assert [offset for offset, _ in rows] == list(range(1, len(rows) + 1))
        assert await deleter.last_offset("s") == len(rows)
        assert deleted + len(rows) == 120  # every message appended was deleted or is still there, once
        assert deleted % 2 == 0  # batches are whole: deleted with their batch, never half

    run(make_store, nodes, body)


DAY_US = 86_400_000_000
NOW_US = 1_800_000_000_000_000


def test_the_retention_sweep_deletes_idle_sessions_oldest_first_and_bounded(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        await store.append("old-1", [message("a")], now_us=NOW_US - 10 * DAY_US)
        await store.append("old-2", [message("a")], now_us=NOW_US - 9 * DAY_US)
        await store.append("old-2", [message("b")], now_us=NOW_US - 8 * DAY_US)
        await store.append("renewed", [message("a")], now_us=NOW_US - 10 * DAY_US)
        await store.append("renewed", [message("b")], now_us=NOW_US - 1 * DAY_US)  # its last append is recent
        await store.append("fresh", [message("a")], now_us=NOW_US)
        listed = {r.session_id: r for r in await store.sessions("", 10)}
        assert (listed["renewed"].created_us, listed["renewed"].updated_us) == (
            NOW_US - 10 * DAY_US,
            NOW_US - 1 * DAY_US,
        )
        cutoff = NOW_US - 5 * DAY_US
        assert await store.sweep(cutoff, 1) == ["old-1"]  # bounded: one a sweep, the idlest first
        assert await store.sweep(cutoff, 10) == ["old-2"]
        assert await store.sweep(cutoff, 10) == []
        assert sorted(r.session_id for r in await store.sessions("", 10)) == ["fresh", "renewed"]
        assert await store.last_offset("old-2") == 0
        assert await store.read("old-1", 0, 10) == []

    run(make_store, 1, body)


def test_the_retention_sweep_on_every_node_deletes_each_session_once(make_store: Factory, kind: str) -> None:
    nodes = 3 if kind == "postgres" else 1

    async def body(*stores: Store) -> None:
        for n in range(30):
            await stores[0].append(f"s{n:02}", [message("a"), message("b")], now_us=NOW_US - DAY_US - n)
        await stores[0].append("kept", [message("a")], now_us=NOW_US)
        swept = await asyncio.gather(*(store.sweep(NOW_US, 100) for store in stores for _ in range(2)))
        every = [session_id for ids in swept for session_id in ids]
        assert sorted(every) == [f"s{n:02}" for n in range(30)]  # each one deleted by exactly one sweeper
        assert [r.session_id for r in await stores[-1].sessions("", 100)] == ["kept"]

    run(make_store, nodes, body)


@pytest.mark.parametrize("kind", ["postgres"])
def test_postgres_schema_is_versioned_and_a_newer_one_is_refused(make_store: Factory) -> None:
    async def body(store: Store) -> None:
        assert isinstance(store, PostgresStore)
        async with store.connection("read") as conn:
            versions = await (await conn.execute("SELECT version FROM agentmsg_schema")).fetchall()
            assert [v for (v,) in versions] == [1, 2, 3, 4]
            # Started again on a migrated database: nothing to do.
            again = PostgresStore(store.url, pool_size=2)
            await again.start()
            await again.close()
            await conn.execute("INSERT INTO agentmsg_schema VALUES (99, 0)")
        newer = PostgresStore(store.url, pool_size=2)
        with pytest.raises(StoreError, match="schema version 99, newer than this release"):
            await newer.start()
        await newer.close()

    run(make_store, 1, body)


@pytest.mark.parametrize("kind", ["postgres"])
def test_postgres_caught_up_waits_for_notifications_still_queued_ahead(make_store: Factory) -> None:
    # The cluster case: a burst of live-event notifications goes out just before an append. The append is
    # readable at once, but the burst may still be on its way to the watcher's change feed.
    async def body(watcher: Store, writer: Store) -> None:
        assert isinstance(watcher, PostgresStore)
        assert isinstance(writer, PostgresStore)
        received: list[str] = []
        watcher.on_channel(LIVE_CHANNEL, received.append)
        payload = "x" * 7_000
        for n in range(1, 6):
            received.clear()
            async with writer.connection("send a burst") as conn:  # one commit: the whole burst at once
                await conn.execute(
                    "SELECT pg_notify(%s, %s || g) FROM generate_series(1, 300) AS g", (LIVE_CHANNEL, payload)
                )
            await writer.append("s", [message(f"m{n}")])
            assert [offset for offset, _ in await watcher.read("s", n - 1, 10)] == [n]
            await watcher.caught_up()
            assert len(received) == 300, n

    run(make_store, 2, body)


def test_postgres_unreachable_is_a_store_error() -> None:
    async def body() -> None:
        store = PostgresStore("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1)
        with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at postgresql://postgres@127\.0\.0\.1:1"):
            await store.start()
        await store.close()
        with pytest.raises(StoreError, match="at least 2 connections"):
            PostgresStore("postgresql://x@y/z", pool_size=1)

    asyncio.run(body())
