"""Parent checks and tree operations read what they need through the store's indexes, never the session.

A store that counts the rows it reads stands behind a real server: a session
of a few thousand entries, then appends with parent ids, a branch, a
compaction and context builds, each allowed only the rows its answer needs.
The same tree operations then run over PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import ServerThread, fresh_database

import agentmsg as am
from agentmsg.service import Client
from agentmsg.service.localpg import LocalPostgres
from agentmsg.service.stores import MemoryStore

ENTRIES = 3000


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


def user(entry_id: str, **fields: object) -> am.UserMessage:
    return am.UserMessage.text(entry_id, id=entry_id, timestamp=1, **fields)  # type: ignore[arg-type]


def test_tree_operations_read_only_their_path(make_server: Callable[..., ServerThread]) -> None:
    store = CountingStore()
    server = make_server(store=store)
    with Client(server.target, timeout=20) as client:
        for start in range(0, ENTRIES, 500):
            client.append_many("big", [user(f"e{i}") for i in range(start, start + 500)])

        def reads(action: Callable[[], object]) -> int:
            before = store.rows
            action()
            return store.rows - before

        # An append naming a parent: one index lookup, no log rows.
        assert reads(lambda: client.append("big", user("fork", parent_id="e10"))) == 0
        # A branch: the branch point (by id) and the last entry.
        assert reads(lambda: client.branch("big", "e20", "went elsewhere", entry_id="b1")) <= 2
        # The context of a short branch reads its path (21 entries and a page around them), not 3,000.
        path_reads = reads(lambda: client.build_context("big", leaf="b1"))
        assert path_reads <= 40
        assert [m.id for m in client.build_context("big", leaf="fork")][-2:] == ["e10", "fork"]
        # A compaction keeping the last few entries walks back only that far.
        client.append("big", user("tail1"))
        client.append("big", user("tail2"))
        assert reads(lambda: client.compact("big", "summary", first_kept_entry_id="tail1", entry_id="k1")) <= 260
        assert [m.id for m in client.build_context("big")] == ["k1", "tail1", "tail2"]


@pytest.fixture
def pg_server(make_server: Callable[..., ServerThread], postgres: LocalPostgres) -> ServerThread:
    return make_server(db=fresh_database(postgres), pool_size=4)


def test_tree_operations_over_postgres(pg_server: ServerThread) -> None:
    with Client(pg_server.target, timeout=20) as client:
        client.append_many("tree", [user("u1"), am.AssistantMessage.text("a1", id="a1", stop_reason="stop")])
        client.append("tree", user("u2"))
        branched = client.branch("tree", "a1", "left u2", entry_id="b1")
        assert (branched.offset, branched.message.parent_id) == (4, "a1")
        client.append("tree", user("u3"))
        assert [m.id for m in client.build_context("tree")] == ["u1", "a1", "b1", "u3"]
        assert [m.id for m in client.build_context("tree", leaf="u2")] == ["u1", "a1", "u2"]
        with pytest.raises(am.ValidationError) as info:
            client.compact("tree", "s", first_kept_entry_id="u2")
        assert info.value.violations[0].rule_id == "session.first_kept_on_path"
        client.compact("tree", "s", first_kept_entry_id="u3", entry_id="k1")
        assert [m.id for m in client.build_context("tree")] == ["k1", "u3"]
        with pytest.raises(am.NotFoundError):
            client.build_context("tree", leaf="ghost")
        with pytest.raises(am.ValidationError) as parent:
            client.append("tree", user("u9", parent_id="ghost"))
        assert parent.value.violations[0].field == "messages[0].parent_id"
