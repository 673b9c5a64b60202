"""The store error wrappers: every failure of the database underneath is a ``StoreError`` (UNAVAILABLE on the
wire) saying what could not be done, never a driver exception leaking out (issue 34)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ServerThread, fresh_database

import agentmsg as am
from agentmsg.service import Client, ServerConfig, create_server
from agentmsg.service.localpg import LocalPostgres
from agentmsg.service.stores.postgres import PostgresStore
from agentmsg.service.stores.sqlite import SQLiteStore

# --- SQLite ---------------------------------------------------------------------------------------------------------


def test_a_store_file_that_cannot_be_opened_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(am.StoreError, match="cannot open the store"):
        SQLiteStore(tmp_path)  # a directory
    with pytest.raises(am.StoreError, match="cannot open the store"):
        asyncio.run(create_server(ServerConfig(db=str(tmp_path))))


def _damage(path: Path, table: str) -> None:
    """Another process renames a table away under the running server: a damaged database."""
    with sqlite3.connect(path) as db:
        db.execute(f"ALTER TABLE {table} RENAME TO {table}_gone")


@pytest.fixture
def damaged(make_server: Callable[..., ServerThread], tmp_path: Path) -> tuple[ServerThread, Path]:
    path = tmp_path / "store.db"
    server = make_server(db=str(path))
    with Client(server.target, timeout=10) as client:
        client.append_many("s", [am.UserMessage.text("a", id="a1"), am.UserMessage.text("b", id="b1")])
    return server, path


def test_reads_of_a_damaged_sqlite_store_are_store_errors(damaged: tuple[ServerThread, Path]) -> None:
    server, path = damaged
    _damage(path, "messages")
    with Client(server.target, timeout=10) as client:
        with pytest.raises(am.StoreError, match=r"the store could not read .*no such table: messages"):
            list(client.history("s"))  # read
        with pytest.raises(am.StoreError, match=r"the store could not read .*no such table: messages"):
            client.build_context("s", leaf="a1")  # entry
        with pytest.raises(am.StoreError, match=r"no such table: messages"):
            client.append("s", am.UserMessage.text("c", id="c1", parent_id="a1"))  # known_ids
        assert [s.session_id for s in client.sessions()] == ["s"]  # the sessions table is whole


def test_the_session_table_of_a_damaged_sqlite_store_gives_store_errors(damaged: tuple[ServerThread, Path]) -> None:
    server, path = damaged
    _damage(path, "sessions")
    with Client(server.target, timeout=10) as client:
        with pytest.raises(am.StoreError, match=r"no such table: sessions"):
            client.sessions()  # sessions
        with pytest.raises(am.StoreError, match=r"no such table: sessions"):
            client.build_context("s")  # last_offset
        assert [m.offset for m in client.history("s")] == [1, 2]  # the messages table is whole


# --- PostgreSQL -----------------------------------------------------------------------------------------------------


def test_a_postgres_store_refuses_settings_it_cannot_work_with() -> None:
    url = "postgresql://nobody@127.0.0.1:1/none"
    with pytest.raises(am.StoreError, match="at least 2 connections"):
        PostgresStore(url, pool_size=1)
    with pytest.raises(am.StoreError, match="must be positive"):
        PostgresStore(url, statement_timeout=0)


def test_postgres_failures_are_store_errors_saying_what_failed(postgres: LocalPostgres) -> None:
    async def scenario() -> None:
        store = PostgresStore(fresh_database(postgres), pool_size=2, statement_timeout=0.2)
        with pytest.raises(am.StoreError, match="not started"):
            async with store.connection("read"):
                pass
        await store.start()
        try:
            with pytest.raises(am.StoreError, match=r"could not sleep: the statement timed out"):
                async with store.connection("sleep") as conn:
                    await conn.execute("SELECT pg_sleep(5)")
            with pytest.raises(am.StoreError, match=r"could not look: UndefinedTable: .*no_such_table"):
                async with store.connection("look") as conn:
                    await conn.execute("SELECT * FROM no_such_table")
            assert await store.last_offset("s") == 0  # the store serves on
        finally:
            await store.close()
        with pytest.raises(am.StoreError, match="not started"):
            await store.last_offset("s")

    asyncio.run(scenario())
