"""`agentmsg mcp runner` stops gracefully on SIGTERM: no new call, the call in flight on the MCP server finished (or
answered cancelled after ``--grace``), its spans exported; the engine always gets an answer.

The runner is the CLI in a process of its own, running the stdio MCP server tests/mcp/servers/fast_server.py; the
server is ``agentmsg serve``; the spans go to the in-repo OTLP collector.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mcphelpers import SERVERS
from otlp_collector import collecting, otlp_environment
from runnerproc import WAIT, RunnerProcess, call_tool, served, until
from serverproc import ServerProcess

import agentmsg as am


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


def start_runner(target: str, grace: float, tmp_path: Path, env: dict[str, str]) -> RunnerProcess:
    # A stdio MCP server gets only a few of the runner's variables (the SDK's default): its own go through env(1).
    mcp_server = ["env", f"MCP_TEST_LOG={tmp_path / 'log'}", f"MCP_TEST_RELEASE={tmp_path / 'release'}"]
    mcp_server += [sys.executable, str(SERVERS / "fast_server.py")]
    command = ["-m", "agentmsg", "mcp", "runner", "--target", target, "--name", "fast-runner", "--prefix", "fast."]
    command += ["--grace", str(grace)]
    runner = RunnerProcess([sys.executable, *command, "--", *mcp_server], env=env)
    until(lambda: "fast.hold" in served(target) or runner.process.poll() is not None, "the MCP runner to register")
    assert runner.process.poll() is None, runner.errors
    return runner


def started(tmp_path: Path, tag: str) -> bool:
    log = tmp_path / "log"
    return log.exists() and f"started {tag}" in log.read_text().splitlines()


def test_sigterm_mid_call_finishes_the_call_and_exports_the_spans(server: ServerProcess, tmp_path: Path) -> None:
    with collecting() as (receiver, port):
        env = otlp_environment(port, "mcp-runner")
        env["OTEL_BSP_SCHEDULE_DELAY"] = "600000"  # ten minutes: only a flush sends the span before the wait ends
        runner = start_runner(server.target, 600, tmp_path, env)
        try:
            with ThreadPoolExecutor(1) as pool:
                held = pool.submit(call_tool, server.target, "c1", "fast.hold", {"tag": "one"})
                until(lambda: started(tmp_path, "one"), "the call to reach the MCP server")
                runner.signal(signal.SIGTERM)
                until(lambda: "fast.hold" not in served(server.target), "the draining runner's tools to be taken off")
                with pytest.raises(am.NotFoundError, match=r"no runner serves the tool 'fast\.hold'"):
                    call_tool(server.target, "c2", "fast.hold", {"tag": "two"})
                (tmp_path / "release").touch()
                finished = held.result(WAIT)
            assert not finished.is_error, finished.text
            assert "done one" in finished.text
            spans = receiver.wait_for(
                lambda spans: any(s.service == "mcp-runner" and s.name == "execute_tool fast.hold" for s in spans)
            )
            assert runner.wait() == 0, runner.errors
        finally:
            runner.kill()
    (span,) = [s for s in spans if s.name == "execute_tool fast.hold"]
    assert span.attributes["gen_ai.tool.call.id"] == "c1"
    assert "started two" not in (tmp_path / "log").read_text()
    assert "draining" in "".join(runner.errors)


def test_a_call_that_outlives_the_grace_is_answered_cancelled(server: ServerProcess, tmp_path: Path) -> None:
    runner = start_runner(server.target, 0.2, tmp_path, dict(os.environ))
    try:
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(call_tool, server.target, "c1", "fast.hold", {"tag": "stuck"})
            until(lambda: started(tmp_path, "stuck"), "the call to reach the MCP server")
            runner.signal(signal.SIGTERM)
            result = held.result(WAIT)
        assert result.is_error
        assert result.text.startswith("cancelled: the tool runner 'fast-runner' stopped")
        assert runner.wait() == 0, runner.errors
    finally:
        runner.kill()
