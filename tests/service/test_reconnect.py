"""Clients that survive a server restart: a ToolRunner reconnects and answers the next call, a resumed
subscription loses and repeats nothing, idempotent calls are retried by gRPC itself; the CLI's errors."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest
from conftest import RunnerThread, ServerThread

import agentmsg as am
from agentmsg.cli import main
from agentmsg.errors import StoreError
from agentmsg.service import AsyncClient, Client, Logged, ToolRunner
from agentmsg.service.localpg import wait_until
from agentmsg.service.stores import Appended, MemoryStore


def text(i: int) -> am.UserMessage:
    return am.UserMessage.text(f"m{i}", id=f"m{i}", timestamp=1_700_000_000 + i)


def restart(server: ServerThread, make_server: Callable[..., ServerThread], gap: float = 0.3) -> ServerThread:
    """Stop the server and start another on the same port and database after ``gap`` seconds."""
    port, db = server.port, server.config.db
    server.stop(grace=0)
    time.sleep(gap)
    return make_server(port=port, db=db)


def test_a_runner_reconnects_after_a_server_restart_and_answers_the_next_call(
    make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread]
) -> None:
    server = make_server()
    runner = ToolRunner(server.target, name="sturdy", max_backoff=0.5)

    @runner.tool
    def double(x: int) -> int:
        return 2 * x

    thread = start_runner(runner)
    with Client(server.target, timeout=10) as client:
        assert client.call_tool(am.ToolCallContent("c1", "double", {"x": 2})).text == "4"
    first_id = runner.runner_id
    server = restart(server, make_server)
    with Client(server.target, timeout=10) as client:
        # No step from anyone: the runner finds the new server and registers its tool again.
        assert wait_until(lambda: [t.tool.name for t in client.list_tools()] == ["double"], 15)
        assert client.call_tool(am.ToolCallContent("c2", "double", {"x": 21})).text == "42"
    assert runner.runner_id != first_id
    assert not thread.done.done()


def test_a_runner_without_reconnect_stops_with_its_server(
    make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread]
) -> None:
    server = make_server()
    runner = ToolRunner(server.target, reconnect=False)
    runner.tool(lambda: "x", name="once")
    thread = start_runner(runner)
    server.stop(grace=0)
    # It ends by itself (a runner that retried would still be running: a TimeoutError here), with the lost
    # connection as its error: the stopping server cancels the stream (UNAVAILABLE), and nothing else broke.
    error = thread.done.exception(30)
    assert isinstance(error, am.UnavailableError), repr(error)


@pytest.mark.parametrize("live_events", [False, True])
def test_a_resumed_subscription_across_a_restart_loses_and_repeats_nothing(
    make_server: Callable[..., ServerThread], live_events: bool
) -> None:
    server = make_server()
    target = server.target
    got: list[int] = []
    failure: list[BaseException] = []

    def follow() -> None:
        with Client(target, timeout=10) as client:
            try:
                for item in client.subscribe("s", live_events=live_events, resume=True, timeout=60):
                    if isinstance(item, Logged):
                        got.append(item.offset)
                        if item.offset == 30:
                            return
            except BaseException as exc:
                failure.append(exc)

    follower = threading.Thread(target=follow)
    follower.start()
    with Client(target, timeout=10) as client:
        for i in range(15):
            client.append("s", text(i))
    assert wait_until(lambda: len(got) == 15, 60)
    server = restart(server, make_server)
    with Client(server.target, timeout=10) as client:
        for i in range(15, 30):
            client.append("s", text(i))
    follower.join(30)
    assert not follower.is_alive()
    assert not failure, failure
    assert got == list(range(1, 31))


def test_an_async_resumed_subscription_across_a_restart(make_server: Callable[..., ServerThread]) -> None:
    server = make_server()
    holder = {"server": server}
    with Client(server.target, timeout=10) as client:
        client.append_many("a", [text(i) for i in range(5)])

    async def scenario() -> list[int]:
        got: list[int] = []
        async with AsyncClient(server.target, timeout=10) as client:
            async for item in client.subscribe("a", resume=True, timeout=60):
                assert isinstance(item, Logged)
                got.append(item.offset)
                if item.offset == 5:
                    holder["server"] = await asyncio.to_thread(restart, holder["server"], make_server)
                    async with AsyncClient(server.target, timeout=10) as writer:
                        await writer.append("a", text(5))
                if item.offset == 6:
                    return got
        return got

    assert asyncio.run(scenario()) == [1, 2, 3, 4, 5, 6]


class FlakyStore(MemoryStore):
    """A store whose first ``failures`` appends fail as a lost database does (UNAVAILABLE on the wire)."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.attempts = 0

    async def _append(self, session_id: str, encoded: list[tuple[str, bytes]], now_us: int) -> list[Appended]:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise StoreError("the database is unreachable (a test blip)")
        return await super()._append(session_id, encoded, now_us)


def test_idempotent_calls_are_retried_by_the_clients_retry_policy(make_server: Callable[..., ServerThread]) -> None:
    store = FlakyStore(failures=2)
    server = make_server(store=store)
    with Client(server.target, timeout=10) as client:
        assert client.append("r", text(0)) == 1  # two UNAVAILABLE answers, retried by gRPC, then success
        assert store.attempts == 3
        store.failures = 10
        with pytest.raises(am.StoreError):  # the policy's attempts run out: the last error is raised
            client.append("r", text(1))
        assert store.attempts == 3 + 4
    with Client(server.target, timeout=10, options=[("grpc.enable_retries", 0)]) as once:
        store.attempts, store.failures = 0, 1
        with pytest.raises(am.StoreError):
            once.append("r", text(2))
        assert store.attempts == 1

    async def asynchronous() -> int:
        store.attempts, store.failures = 0, 1
        async with AsyncClient(server.target, timeout=10) as client:
            return await client.append("r", text(3))

    assert asyncio.run(asynchronous()) == 2
    assert store.attempts == 2


def test_the_cli_reports_a_busy_port_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "agentmsg", "serve", "--memory", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert f"127.0.0.1:{port}" in done.stderr
    assert "in use" in done.stderr


def test_the_cli_reports_an_unreachable_server_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tail", "s", "--target", "127.0.0.1:1", "--timeout", "20"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("agentmsg: cannot reach the server at 127.0.0.1:1")


def test_the_cli_reports_an_unknown_session(server: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tail", "nosuch", "--target", server.target]) == 2
    assert capsys.readouterr().err == "agentmsg: no session 'nosuch' (it has no messages)\n"
    assert main(["tail", "nosuch", "--tree", "--target", server.target]) == 2
    assert "no session 'nosuch'" in capsys.readouterr().err


def test_a_runner_started_in_the_background_serves_until_stopped(server: ServerThread) -> None:
    runner = ToolRunner(server.target, name="background")
    runner.tool(lambda text: text.upper(), name="upper")
    runner.start()  # returns once the tool is registered
    with Client(server.target, timeout=10) as client:
        assert client.call_tool(am.ToolCallContent("c1", "upper", {"text": "hi"})).text == "HI"
        runner.stop()
        assert wait_until(lambda: client.list_tools() == [], 10)
    taken = ToolRunner(server.target, name="first")
    taken.tool(lambda: "a", name="same")
    taken.start()
    second = ToolRunner(server.target, name="second")
    second.tool(lambda: "b", name="same")
    with pytest.raises(am.ConflictError, match="already served"):
        second.start()  # a refused registration is raised by start(), not retried
    taken.stop()
