"""A ToolRunner process stops gracefully on SIGTERM: no new call, the calls in flight finished or answered
cancelled after the grace, its spans exported, never a hang for the engine.

The runner, the server and the collector are separate: the runner is a real Python process (``serve(
handle_signals=True)``, what ``ToolRunner.run()`` does) sent a real signal; the server is ``agentmsg serve``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from otlp_collector import collecting, otlp_environment
from runnerproc import WAIT, RunnerProcess, call_tool, served, until
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import ToolRunner

RUNNER = textwrap.dedent(
    """
    import asyncio, pathlib, sys, time
    from agentmsg.service import ToolRunner

    target, name, grace, release = sys.argv[1], sys.argv[2], float(sys.argv[3]), pathlib.Path(sys.argv[4])
    runner = ToolRunner(target, name=name, grace=grace, max_backoff=0.5)

    @runner.tool
    def hold(tag: str) -> str:
        "Say it started, wait until the release file exists (ten minutes at most), then answer."
        print("started", tag, flush=True)
        for _ in range(60_000):
            if release.exists():
                break
            time.sleep(0.01)
        return f"{tag} done by {name}"

    async def main():
        serving = asyncio.ensure_future(runner.serve(handle_signals=True))
        registered = asyncio.ensure_future(runner.registered.wait())
        await asyncio.wait([serving, registered], return_when=asyncio.FIRST_COMPLETED)
        print("registered", flush=True)
        await serving
        print("exited", flush=True)

    asyncio.run(main())
    """
)


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


def start_runner(
    target: str, name: str, grace: float, release: Path, env: dict[str, str] | None = None
) -> RunnerProcess:
    runner = RunnerProcess([sys.executable, "-c", RUNNER, target, name, str(grace), str(release)], env=env)
    runner.expect("registered")
    return runner


def test_sigterm_mid_call_finishes_the_call_and_new_calls_go_elsewhere(server: ServerProcess, tmp_path: Path) -> None:
    release = tmp_path / "release"
    first = start_runner(server.target, "first", 600, release)
    second: RunnerProcess | None = None
    try:
        with ThreadPoolExecutor(2) as pool:
            held = pool.submit(call_tool, server.target, "c1", "hold", {"tag": "one"})
            first.expect("started one")
            first.signal(signal.SIGTERM)
            # The draining runner's tool is off at once: a call now is answered NOT_FOUND, not given to it.
            until(lambda: "hold" not in served(server.target), "the draining runner's tool to be taken off")
            with pytest.raises(am.NotFoundError, match="no runner serves the tool 'hold'"):
                call_tool(server.target, "c2", "hold", {"tag": "two"})
            # A replacement registers the same name while the first still runs its call, and takes the new calls.
            second = start_runner(server.target, "second", 600, release)
            moved = pool.submit(call_tool, server.target, "c3", "hold", {"tag": "three"})
            second.expect("started three")
            release.touch()
            finished = held.result(WAIT)
            assert (finished.text, finished.is_error) == ("one done by first", False)
            assert moved.result(WAIT).text == "three done by second"
        assert first.wait() == 0, first.errors
        assert first.lines == ["registered", "started one", "exited"]  # no call after SIGTERM reached it
        assert "draining" in "".join(first.errors)  # it said why it stopped
    finally:
        for runner in (first, second):
            if runner is not None:
                runner.kill()


@pytest.mark.parametrize(("grace", "signals"), [(0.2, 1), (600, 2)], ids=["grace-ran-out", "second-signal"])
def test_a_call_that_outlives_the_grace_is_answered_cancelled(
    server: ServerProcess, tmp_path: Path, grace: float, signals: int
) -> None:
    runner = start_runner(server.target, "stuck", grace, tmp_path / "never")
    try:
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(call_tool, server.target, "c1", "hold", {"tag": "stuck"})
            runner.expect("started stuck")
            runner.signal(signal.SIGTERM)
            if signals == 2:  # once the first is taken, a second signal ends the grace at once
                until(lambda: "hold" not in served(server.target), "the first signal to be taken")
                runner.signal(signal.SIGTERM)
            result = held.result(WAIT)
        assert result.is_error
        assert result.text.startswith("cancelled: the tool runner 'stuck' stopped")
        # Its sync tool is still waiting on its thread: the runner exits all the same.
        assert runner.wait() == 0, runner.errors
        assert runner.lines[-1] == "exited"
    finally:
        runner.kill()


def test_the_runner_spans_reach_the_collector_when_sigterm_comes_within_the_batch_delay(
    server: ServerProcess, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    release.touch()
    with collecting() as (receiver, port):
        env = otlp_environment(port, "draining-runner")
        env["OTEL_BSP_SCHEDULE_DELAY"] = "600000"  # ten minutes: only a flush sends the span before the wait ends
        runner = start_runner(server.target, "traced", 600, release, env=env)
        try:
            assert call_tool(server.target, "c1", "hold", {"tag": "traced"}).text == "traced done by traced"
            runner.signal(signal.SIGTERM)
            spans = receiver.wait_for(
                lambda spans: any(s.service == "draining-runner" and s.name == "execute_tool hold" for s in spans)
            )
            assert runner.wait() == 0, runner.errors
        finally:
            runner.kill()
    (span,) = [s for s in spans if s.name == "execute_tool hold"]
    assert span.attributes["gen_ai.tool.call.id"] == "c1"


def test_sigterm_while_the_server_is_gone_ends_the_runner(tmp_path: Path) -> None:
    """A runner reconnecting to a server that went away stops on SIGTERM all the same (nothing to drain)."""
    server = ServerProcess("--memory")
    runner = start_runner(server.target, "orphan", 600, tmp_path / "never")
    try:
        server.kill()
        until(
            lambda: any("lost the server" in line or "closed the connection" in line for line in runner.errors),
            "the runner to notice the server is gone",
        )
        runner.signal(signal.SIGTERM)
        assert runner.wait() == 0, runner.errors
        assert runner.lines[-1] == "exited"
    finally:
        runner.kill()


def test_stop_drains_a_runner_started_in_a_thread(server: ServerProcess) -> None:
    """The library's own stop: ``stop()`` of a runner from ``start()`` lets its call finish."""
    started, release = threading.Event(), threading.Event()
    runner = ToolRunner(server.target, name="threaded")

    @runner.tool
    def hold() -> str:
        started.set()
        release.wait(WAIT)
        return "held"

    runner.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            held = pool.submit(call_tool, server.target, "c1", "hold", {})
            assert started.wait(WAIT)
            stopping = pool.submit(runner.stop)
            until(lambda: "hold" not in served(server.target), "the draining runner's tool to be taken off")
            assert not held.done()
            release.set()
            assert held.result(WAIT).text == "held"
            stopping.result(WAIT)
    finally:
        release.set()
        runner.stop(0)


def test_grace_is_checked_and_ten_seconds_by_default() -> None:
    with pytest.raises(am.ValidationError, match="grace"):
        ToolRunner("127.0.0.1:1", grace=-1)
    runner = ToolRunner("127.0.0.1:1")
    assert runner.grace == 10.0
    with pytest.raises(am.ValidationError, match="grace"):
        runner.stop(float("nan"))
    with pytest.raises(am.ValidationError, match="grace"):
        asyncio.run(runner.drain(-1))
    asyncio.run(runner.drain())  # not serving: nothing to drain
