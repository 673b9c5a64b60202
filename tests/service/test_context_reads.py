"""``BuildContext`` reads only the context: from the leaf back to the latest compaction's first kept entry.

The served context equals the naive whole-path reference (``trees.reference``) on generated trees, in the memory
and SQLite stores, with the walk's pages made tiny so that generated trees cross page edges; a store that counts
the rows it hands out shows that the rows read follow the context, not the path before it; a break in a stored tree
before the kept entries is not read at all.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ServerThread
from hypothesis import HealthCheck, given, settings
from trees import reference, session_trees

import agentmsg as am
from agentmsg.service import Client
from agentmsg.service.handlers import sessions as session_handler
from agentmsg.service.stores import MemoryStore
from agentmsg.service.stores.sqlite import SQLiteStore

_sessions = itertools.count()


def user(entry_id: str, **fields: object) -> am.UserMessage:
    return am.UserMessage.text(entry_id, id=entry_id, timestamp=1, **fields)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite"])
def tree_client(
    request: pytest.FixtureRequest, make_server: Callable[..., ServerThread], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Client]:
    # Pages of 2 growing to 4 rows: a generated tree of a few dozen entries crosses page edges and clamps.
    monkeypatch.setattr(session_handler, "WALK_PAGE", 2)
    monkeypatch.setattr(session_handler, "WALK_PAGE_MAX", 4)
    server = make_server(db=":memory:") if request.param == "memory" else make_server()
    with Client(server.target, timeout=20) as client:
        yield client


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=session_trees(max_entries=30))
def test_served_contexts_equal_the_whole_path_reference(tree_client: Client, entries: list[am.AgentMessage]) -> None:
    session = f"gen-{next(_sessions)}"
    tree_client.append_many(session, entries)
    for entry in entries:
        assert tree_client.build_context(session, leaf=entry.id) == reference(entries, entry.id), entry.id
    assert tree_client.build_context(session) == reference(entries, entries[-1].id)


class CountingStore(MemoryStore):
    """A memory store that counts the log rows it hands out."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = 0

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        rows = await super().read(session_id, after, limit)
        self.rows += len(rows)
        return rows

    async def entry(self, session_id: str, message_id: str) -> tuple[int, bytes] | None:
        found = await super().entry(session_id, message_id)
        self.rows += found is not None
        return found


def compacted(client: Client, session: str, before: int) -> None:
    """``before`` entries (a branch and an older compaction among them), then a compaction keeping 40 entries and
    60 entries after it (a branch among them)."""
    for start in range(0, before, 500):
        client.append_many(session, [user(f"p{i}") for i in range(start, min(start + 500, before))])
    client.branch(session, f"p{before - 30}", "went back", entry_id="old-branch")
    client.compact(session, "older", first_kept_entry_id=f"p{before - 40}", entry_id="old-compaction")
    client.append_many(session, [user(f"k{i}") for i in range(40)])
    client.compact(session, "latest", first_kept_entry_id="k0", entry_id="latest")
    client.append_many(session, [user(f"t{i}") for i in range(30)])
    client.branch(session, "t19", "went back ten", entry_id="tail-branch")
    client.append_many(session, [user(f"t{i}") for i in range(30, 60)])


def test_the_rows_read_follow_the_context_not_the_path_before_it(make_server: Callable[..., ServerThread]) -> None:
    store = CountingStore()
    server = make_server(store=store)
    with Client(server.target, timeout=20) as client:
        compacted(client, "short", 300)
        compacted(client, "long", 3000)
        reads = {}
        contexts = {}
        for session in ("short", "long"):
            before = store.rows
            contexts[session] = [m.id for m in client.build_context(session)]
            reads[session] = store.rows - before
        expected = ["latest", *(f"k{i}" for i in range(40)), *(f"t{i}" for i in range(20))]
        expected += ["tail-branch", *(f"t{i}" for i in range(30, 60))]
        assert contexts["short"] == contexts["long"] == expected
        # The leaf, the path back to the kept entry, the kept entry's look-up, and what the page that held the
        # compaction read below it before the walk knew where the context starts: ten times the path before it
        # reads nothing more.
        assert reads["short"] == reads["long"]
        assert reads["long"] <= len(expected) + session_handler.WALK_PAGE + 3


def test_a_break_before_the_kept_entries_is_not_read(tmp_path: Path, make_server: Callable[..., ServerThread]) -> None:
    """A stored tree broken before the latest compaction's kept entries (a cycle, as a damaged or older database may
    hold): BuildContext reads past it; the path to the root, which a compaction's own check walks, still meets it."""
    entries = [
        user("a", parent_id="b"),
        user("b", parent_id="a"),
        user("k", parent_id="a"),
        user("x"),
        am.CompactionSummaryMessage("summary", 10, first_kept_id="k", id="c", timestamp=1),
        user("t"),
    ]
    path = tmp_path / "damaged.db"
    SQLiteStore(path)._db.close()  # the schema is made; the rows go in by hand
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO messages (session_id, offset, message_id, body) VALUES (?, ?, ?, ?)",
            [("s", i + 1, m.id, m.to_bytes()) for i, m in enumerate(entries)],
        )
        db.execute("INSERT INTO sessions VALUES (?, ?, 0, 0)", ("s", len(entries)))
    server = make_server(db=str(path))
    with Client(server.target, timeout=10) as client:
        assert [m.id for m in client.build_context("s")] == ["c", "k", "x", "t"]
        with pytest.raises(am.ValidationError, match="form a cycle"):
            client.compact("s", "again", first_kept_entry_id="nowhere")
