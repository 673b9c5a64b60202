"""A store that refuses a write with UNAVAILABLE (``StoreError``: a read-only file, a lost PostgreSQL) is retried by
the Python and the TypeScript client alike; a full one (RESOURCE_EXHAUSTED, ``StoreFullError``) by neither. Each
attempt is counted where the store begins its write transaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tstools import PythonServer, built_sdk, run_ts

import agentmsg as am
from agentmsg.service import Client, ServerConfig
from agentmsg.service.client import RETRY_POLICY
from agentmsg.service.stores.sqlite import SQLiteStore

TS_ATTEMPTS = 3
BIG = 100_000  # characters: more than the free room in the store's last page


@pytest.fixture
def server(tmp_path: Path) -> Iterator[PythonServer]:
    running = PythonServer(ServerConfig(db=str(tmp_path / "store.db")))
    try:
        with Client(running.target, timeout=10) as client:
            client.append("refused", am.UserMessage.text("kept", id="first"))
        yield running
    finally:
        running.close()


def _refuse(server: PythonServer, full: bool) -> list[str]:
    """Make the store refuse writes (full: SQLITE_FULL, else SQLITE_READONLY); the write transactions it begins
    from now on are listed (SQLite's trace of its statements)."""
    assert server.running is not None
    store = server.running.store
    assert isinstance(store, SQLiteStore)
    begun: list[str] = []
    with store._lock:
        if full:
            (pages,) = store._db.execute("PRAGMA page_count").fetchone()
            store._db.execute(f"PRAGMA max_page_count={pages}")
        else:
            store._db.execute("PRAGMA query_only=1")
        store._db.set_trace_callback(lambda sql: begun.append(sql) if sql.startswith("BEGIN IMMEDIATE") else None)
    return begun


def _history(server: PythonServer) -> list[str]:
    with Client(server.target, timeout=10) as client:
        return [item.message.id for item in client.history("refused")]


@pytest.mark.parametrize("full", [False, True], ids=["read-only", "full"])
def test_the_python_client_retries_a_store_error_and_not_a_full_store(server: PythonServer, full: bool) -> None:
    begun = _refuse(server, full)
    expected = am.errors.StoreFullError if full else am.StoreError
    with Client(server.target, timeout=10) as client, pytest.raises(expected) as info:
        client.append("refused", am.UserMessage.text("r" * BIG, id="r1"))
    assert type(info.value) is expected
    assert len(begun) == (1 if full else RETRY_POLICY["maxAttempts"])
    assert _history(server) == ["first"]


@pytest.mark.parametrize("full", [False, True], ids=["read-only", "full"])
def test_the_typescript_client_retries_a_store_error_and_not_a_full_store(server: PythonServer, full: bool) -> None:
    node = built_sdk()
    begun = _refuse(server, full)
    report = run_ts(node, "store_retry", server.target, str(TS_ATTEMPTS), str(BIG))
    assert report["error"] == ("StoreFullError" if full else "StoreError")
    assert ("full" if full else "read-only") in report["message"]
    assert len(begun) == (1 if full else TS_ATTEMPTS)
    assert _history(server) == ["first"]
