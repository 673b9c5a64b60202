"""The TypeScript ToolRunner stops gracefully on SIGTERM (``serve({ handleSignals: true })``): no new call, the call
in flight finished (or answered cancelled after ``graceMs``), its tracer provider flushed before it exits.

The runner is sdk/typescript/interop/draining_runner.ts under node, its spans batched with a ten-minute delay and
printed as they are exported; the server is ``agentmsg serve``; the engine is the Python client.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from runnerproc import WAIT, call_tool, served, until
from serverproc import ServerProcess
from tstools import TsProcess, built_sdk

import agentmsg as am


@pytest.fixture(scope="module")
def node() -> str:
    return built_sdk()


@pytest.fixture
def server(node: str) -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


def lines_until_exit(runner: TsProcess) -> list[dict[str, Any]]:
    """What the runner prints from now until it reports its exit."""
    printed = []
    while True:
        line = runner.next(WAIT)
        printed.append(line)
        if "exited" in line:
            return printed


def test_sigterm_mid_call_finishes_the_call_and_flushes_the_spans(
    node: str, server: ServerProcess, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    runner = TsProcess(node, "draining_runner", server.target, "ts-first", "600000", str(release))
    try:
        runner.wait_for("registered", WAIT)
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(call_tool, server.target, "c1", "ts_hold", {"tag": "one"})
            assert runner.wait_for("started", WAIT) == {"started": "one"}
            runner.process.send_signal(signal.SIGTERM)
            until(lambda: "ts_hold" not in served(server.target), "the draining runner's tool to be taken off")
            with pytest.raises(am.NotFoundError, match="no runner serves the tool 'ts_hold'"):
                call_tool(server.target, "c2", "ts_hold", {"tag": "two"})
            release.touch()
            finished = held.result(WAIT)
        assert (finished.text, finished.is_error) == ("one done by ts-first", False)
        printed = lines_until_exit(runner)
        assert runner.finish(WAIT) == 0
    finally:
        runner.stop()
    assert not [line for line in printed if "started" in line]  # no call after SIGTERM reached it
    # Exported at the stop, ten minutes before its batch was due.
    (span,) = [line["span"] for line in printed if "span" in line]
    assert (span["name"], span["attributes"]["gen_ai.tool.call.id"]) == ("execute_tool ts_hold", "c1")


def test_a_call_that_outlives_the_grace_is_answered_cancelled(node: str, server: ServerProcess, tmp_path: Path) -> None:
    runner = TsProcess(node, "draining_runner", server.target, "ts-stuck", "200", str(tmp_path / "never"))
    try:
        runner.wait_for("registered", WAIT)
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(call_tool, server.target, "c1", "ts_hold", {"tag": "stuck"})
            runner.wait_for("started", WAIT)
            runner.process.send_signal(signal.SIGTERM)
            result = held.result(WAIT)
        assert result.is_error
        assert result.text.startswith("cancelled: the tool runner 'ts-stuck' stopped")
        printed = lines_until_exit(runner)
        assert runner.finish(WAIT) == 0
    finally:
        runner.stop()
    (span,) = [line["span"] for line in printed if "span" in line]
    assert (span["name"], span["status"]) == ("execute_tool ts_hold", 2)  # SpanStatusCode.ERROR: the cancelled result
