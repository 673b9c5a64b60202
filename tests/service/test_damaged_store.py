"""A session tree broken in the store itself (a damaged or older database, written around the append checks):
the service's path reads report it with the errors :class:`agentmsg.sessions.Session` gives for the same tree."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ServerThread

import agentmsg as am
from agentmsg.service import Client
from agentmsg.service.stores.sqlite import SQLiteStore
from agentmsg.sessions import Session


def _damaged(path: Path, session_id: str, entries: list[am.UserMessage]) -> None:
    """Write entries straight into a store file, as a damaged or older database holds them."""
    store = SQLiteStore(path)
    store._db.close()  # the schema is made; the rows go in by hand
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO messages (session_id, offset, message_id, body) VALUES (?, ?, ?, ?)",
            [(session_id, i + 1, m.id, m.to_bytes()) for i, m in enumerate(entries)],
        )
        db.execute("INSERT INTO sessions VALUES (?, ?, 0, 0)", (session_id, len(entries)))


def _tree(entries: list[am.UserMessage]) -> Session:
    session = Session()
    session._entries = list(entries)
    session._index = {m.id: i for i, m in enumerate(entries)}
    return session


def test_appends_refuse_what_would_break_the_tree(client: Client) -> None:
    """The breaks below cannot be made through the service: an unknown or self-naming parent is refused."""
    with pytest.raises(am.ValidationError, match="not in the session") as unknown:
        client.append("s", am.UserMessage.text("x", id="a", parent_id="ghost"))
    assert [(v.field, v.rule_id) for v in unknown.value.violations] == [("messages[0].parent_id", "session.parent")]
    with pytest.raises(am.ValidationError, match="names itself"):
        client.append("s", am.UserMessage.text("x", id="a", parent_id="a"))
    with pytest.raises(am.NotFoundError):  # nothing was stored
        list(client.history("s"))


def test_a_parent_missing_from_the_store_is_not_found_naming_both_entries(
    tmp_path: Path, make_server: Callable[..., ServerThread]
) -> None:
    entries = [
        am.UserMessage.text("root", id="r"),
        am.UserMessage.text("orphan", id="o", parent_id="gone"),
        am.UserMessage.text("leaf", id="l"),
    ]
    _damaged(tmp_path / "damaged.db", "s", entries)
    server = make_server(db=str(tmp_path / "damaged.db"))
    with Client(server.target, timeout=10) as client:
        with pytest.raises(am.NotFoundError, match="entry 'o' follows 'gone', which is not in the session"):
            client.build_context("s")
        with pytest.raises(am.NotFoundError, match="'o' follows 'gone'"):
            client.compact("s", "summary", first_kept_entry_id="r")
        assert [m.id for m in client.build_context("s", leaf="r")] == ["r"]  # the path above the break reads
    with pytest.raises(am.NotFoundError, match="entry 'o' follows 'gone', which is not in the session"):
        _tree(entries).path("l")  # the same tree in memory: the same error


def test_parents_that_form_a_cycle_are_refused_naming_the_entry(
    tmp_path: Path, make_server: Callable[..., ServerThread]
) -> None:
    entries = [am.UserMessage.text("a", id="a", parent_id="b"), am.UserMessage.text("b", id="b", parent_id="a")]
    _damaged(tmp_path / "cycle.db", "s", entries)
    server = make_server(db=str(tmp_path / "cycle.db"))
    with Client(server.target, timeout=10) as client:
        with pytest.raises(am.ValidationError, match="the parents of 'b' form a cycle") as served:
            client.build_context("s")
        assert [(v.field, v.rule_id) for v in served.value.violations] == [("parent_id", "session.cycle")]
        with pytest.raises(am.ValidationError, match="form a cycle"):
            client.compact("s", "summary", first_kept_entry_id="nowhere")  # the walk for a kept entry meets it too
    with pytest.raises(am.ValidationError, match="the parents of 'b' form a cycle") as local:
        _tree(entries).path("b")
    assert [(v.field, v.rule_id) for v in local.value.violations] == [("parent_id", "session.cycle")]
