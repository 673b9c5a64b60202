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
        with pytest.raises(am.StoreError, match=r"the store could not read: .*no such table: messages"):
            list(client.history("s"))  # read
        with pytest.raises(am.StoreError, match=r"the store could not read: .*no such table: messages"):
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
            # The driver's text stays on the server (a note it logs); the client's message names the failure.
            with pytest.raises(am.StoreError, match=r"could not look: UndefinedTable") as undefined:
                async with store.connection("look") as conn:
                    await conn.execute("SELECT * FROM no_such_table")
            assert str(undefined.value) == "could not look: UndefinedTable"
            assert any("no_such_table" in note for note in undefined.value.__notes__)
            assert await store.last_offset("s") == 0  # the store serves on
        finally:
            await store.close()
        with pytest.raises(am.StoreError, match="not started"):
            await store.last_offset("s")

    asyncio.run(scenario())


def test_a_lost_notify_connection_is_a_store_error_and_the_next_notify_reconnects(postgres: LocalPostgres) -> None:
    url = fresh_database(postgres)

    async def scenario() -> None:
        store = PostgresStore(url, pool_size=2)
        await store.start()
        try:
            await store.notify("agentmsg_test", "first")
            assert store._notifier is not None
            pid = store._notifier.info.backend_pid
            async with store.connection("end the notifier") as conn:
                await conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            with pytest.raises(am.StoreError, match="could not notify other nodes"):
                await store.notify("agentmsg_test", "second")
            await store.notify("agentmsg_test", "third")  # a new connection
            assert store._notifier is not None
            assert store._notifier.info.backend_pid != pid
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_pool_with_no_free_connection_is_a_store_error_and_the_store_comes_back(postgres: LocalPostgres) -> None:
    """Every connection held and none free within the connect timeout: the call fails UNAVAILABLE at once and the
    store counts PostgreSQL as lost until its health probe succeeds again."""
    url = fresh_database(postgres)

    async def scenario() -> None:
        store = PostgresStore(url, pool_size=2, connect_timeout=0.5, health_interval=0.05)
        await store.start()
        try:
            async with store.connection("hold one") as one, store.connection("hold two") as two:
                await one.execute("SELECT 1")
                await two.execute("SELECT 1")
                with pytest.raises(am.StoreError, match="could not read a third: PostgreSQL is unreachable"):
                    async with store.connection("read a third"):
                        pass
                assert not store.healthy  # counted as lost while no connection is free
                with pytest.raises(am.StoreError, match=r"could not read again: .* \(the node is NOT_SERVING"):
                    async with store.connection("read again"):  # refused at once while lost, no second wait
                        pass
            for _ in range(400):  # the health probe finds it again
                if store.healthy:
                    break
                await asyncio.sleep(0.05)
            assert store.healthy
            assert await store.last_offset("s") == 0
        finally:
            await store.close()

    asyncio.run(scenario())
