"""``BuildContext`` reads only the context: from the leaf back to the latest compaction's first kept entry.

The served context equals the naive whole-path reference (``trees.reference``) and ``Session.build_context`` on
generated trees, in the memory and SQLite stores, with the walk's pages made tiny so that generated trees cross page
edges; on a hand-made tricky tree the server (``BuildContext`` and the session input of ``ConvertService``) and
``Session.build_context`` agree for every leaf, and on an entry of a role this version does not know; a store that
counts the rows it hands out shows that the rows read follow the context, not the path before it; a break in a stored
tree before the kept entries is not read at all.
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
from agentmsg.sessions import Session
from agentmsg.v1 import message_pb2

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
    local = Session(entries)
    for entry in entries:
        served = tree_client.build_context(session, leaf=entry.id)
        assert served == reference(entries, entry.id), entry.id
        assert served == local.build_context(entry.id), entry.id
    assert tree_client.build_context(session) == reference(entries, entries[-1].id) == local.build_context()


def note(entry_id: str, to_model: bool, **fields: object) -> am.CustomMessage:
    return am.CustomMessage("note", [am.TextContent(entry_id)], to_model=to_model, id=entry_id, timestamp=1, **fields)  # type: ignore[arg-type]


def compaction(entry_id: str, first_kept_id: str, **fields: object) -> am.CompactionSummaryMessage:
    return am.CompactionSummaryMessage(
        f"summary {entry_id}", 10, first_kept_id=first_kept_id, id=entry_id, timestamp=1, **fields
    )  # type: ignore[arg-type]


def branch(entry_id: str, parent_id: str, left: str) -> am.BranchSummaryMessage:
    return am.BranchSummaryMessage(f"left {left}", left, id=entry_id, parent_id=parent_id, timestamp=1)


TRICKY = [
    user("u0"),
    am.AssistantMessage.text("a0", id="a0", timestamp=1),
    note("n0", False),
    note("n1", True),
    user("side1", parent_id="u0"),  # a branch off u0
    user("side2"),
    branch("bs1", "n1", "side2"),  # back to n1, leaving the side branch
    user("u1"),
    compaction("c1", "u0"),  # keeps an entry on its path
    user("u2"),
    compaction("c2", "side1"),  # keeps an entry on another branch: the context starts after it
    user("u3"),
    note("n2", True),
    compaction("c3", "ghost"),  # keeps an entry the session lacks
    user("u4"),
    branch("br2", "u2", "u4"),  # back to u2, above c1 and below c2 and c3
    user("u5"),
    compaction("c4", "n1"),  # keeps from before an older compaction (c1), which is projected among the kept
    user("u6"),
    note("n3", False),
    am.AssistantMessage.text("a6", id="a6", timestamp=1),
]


def test_the_server_and_the_session_agree_on_a_tricky_tree(tree_client: Client) -> None:
    """Several compactions (keeping an entry on the path, on another branch, missing, before an older compaction),
    custom entries given to the model or not, branch summaries: for every leaf, ``BuildContext`` and the session
    input of ``ConvertService`` give what ``Session.build_context`` gives."""
    session = f"tricky-{next(_sessions)}"
    tree_client.append_many(session, TRICKY)
    local = Session(TRICKY)
    for entry in TRICKY:
        expected = local.build_context(entry.id)
        assert tree_client.build_context(session, leaf=entry.id) == expected, entry.id
        assert tree_client.build_context(session, leaf=entry.id) == reference(TRICKY, entry.id), entry.id
        served = tree_client.convert_to("openai-chat", session_id=session, leaf=entry.id)
        assert served == tree_client.convert_to("openai-chat", expected), entry.id
    context = tree_client.build_context(session)
    assert context == local.build_context()
    # The last compaction first, then from n1 (n1 to the model, the older c1 and bs1 projected), the branch summary,
    # and what follows c4 but the custom entry kept from the model.
    assert [m.id for m in context] == ["c4", "n1", "bs1", "u1", "c1", "u2", "br2", "u5", "u6", "a6"]
    assert all(isinstance(m, (am.UserMessage, am.AssistantMessage)) for m in context)
    assert [m.id for m in tree_client.build_context(session, leaf="u4")] == ["c3", "u4"]
    assert [m.id for m in tree_client.build_context(session, leaf="u3")] == ["c2", "u3"]
    assert [m.id for m in tree_client.build_context(session, leaf="c1")] == ["c1", "u0", "a0", "n1", "bs1", "u1"]


def unknown_role(entry_id: str) -> bytes:
    """An entry of a role arm this version's contract lacks (field 15), as a newer peer's store might hold."""
    pb = message_pb2.Message(id=entry_id)
    pb.timestamp.seconds = 1
    return pb.SerializeToString() + bytes([15 << 3 | 2, 2, 0x0A, 0])


def test_an_entry_of_an_unknown_role_is_left_out_by_both(
    tmp_path: Path, make_server: Callable[..., ServerThread]
) -> None:
    """A stored entry whose role arm this version does not know: the server's walk passes it (it has an id and a
    place in the tree) and leaves it out of the context, as ``Session.build_context`` leaves out an UnknownMessage."""
    rows = [user("u0").to_bytes(), unknown_role("x"), user("u1").to_bytes(), compaction("c", "x").to_bytes()]
    rows.append(user("u2").to_bytes())
    path = tmp_path / "newer.db"
    SQLiteStore(path)._db.close()  # the schema is made; the rows go in by hand
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO messages (session_id, offset, message_id, body) VALUES (?, ?, ?, ?)",
            [("s", i + 1, am.BaseMessage.from_bytes(body).id, body) for i, body in enumerate(rows)],
        )
        db.execute("INSERT INTO sessions VALUES (?, ?, 0, 0)", ("s", len(rows)))
    local = Session([am.BaseMessage.from_bytes(body) for body in rows])
    assert isinstance(local.path()[1], am.UnknownMessage)
    server = make_server(db=str(path))
    with Client(server.target, timeout=10) as client:
        for leaf in ("u0", "x", "u1", "c", "u2"):
            assert client.build_context("s", leaf=leaf) == local.build_context(leaf), leaf
        assert [m.id for m in client.build_context("s")] == ["c", "u1", "u2"]


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
