"""Ending an MCP server's supervisor (a runner cancelled or drained, a hosted server stopped) leaves nothing behind.

After each round: no child process of this test is left (stopped and reaped), and collecting garbage warns of no
unclosed transport or running subprocess. The hard moment is a stop that arrives while the connection is already
closing (the server exited or hung up and the SDK is shutting it down): a ``Task.cancel()`` landing there cut the
SDK's shutdown short. ``odd_server.py --hang-up-at-start`` holds that moment open for a second and says when it began.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from mcphelpers import SERVERS, agentmsg_server, run, until

import agentmsg as am
from agentmsg.mcp import McpRunner, MCPServerSpec, McpServerStartError, stdio_server
from agentmsg.service import AsyncClient, ServerConfig, create_server

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lists child processes from /proc")

ODD = str(SERVERS / "odd_server.py")


def _children() -> set[int]:
    """This process's child processes, zombies included (a child not reaped yet is still listed)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == me:
                found.add(int(entry))
    return found


@contextmanager
def nothing_left_behind() -> Iterator[None]:
    """The block's MCP servers are stopped and reaped when it ends, and their transports closed."""
    before = _children()
    yield
    assert _children() - before == set(), "an MCP server process is still running or not reaped"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def _shutting_down(log: Path) -> bool:
    """The server's stdin was closed: the SDK's shutdown of it is under way (for a second)."""
    return log.exists() and "stdin closed" in log.read_text()


def _hanging_up(log: Path) -> MCPServerSpec:
    return stdio_server(sys.executable, [ODD, "--hang-up-at-start"], env={"MCP_TEST_LOG": str(log)})


async def _stop(runner: McpRunner, task: asyncio.Task[None], how: str) -> None:
    """End ``runner.serve()`` as a caller would: cancel the task (``serving``, Ctrl-C without signal handling) or
    drain it."""
    if how == "drain":
        await runner.drain(0)
    else:
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize("how", ["cancel", "drain"])
def test_a_runner_stopped_while_the_connection_closes_waits_for_the_shutdown(how: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with agentmsg_server() as target:
            for turn in range(3):
                log = tmp_path / f"log{turn}"
                with nothing_left_behind():
                    runner = McpRunner(target, _hanging_up(log), restart_delay=5, start_attempts=100)
                    task = asyncio.ensure_future(runner.serve())
                    await until(partial(_shutting_down, log), "the SDK's shutdown of the server")
                    await _stop(runner, task, how)
                    # The shutdown ran to its end: the start failed and was said so, it was not cut short.
                    assert runner.last_error is not None
                    assert "did not start" in runner.last_error

    run(main)


def test_a_hosted_server_stopped_while_its_connection_closes_waits_for_the_shutdown(tmp_path: Path) -> None:
    """The hosted server is up; it hangs up mid-call, and the agentmsg server stops during the SDK's shutdown."""

    async def main() -> None:
        for turn in range(2):
            log = tmp_path / f"log{turn}"
            with nothing_left_behind():
                argv = ["env", f"MCP_TEST_LOG={log}", sys.executable, ODD]
                running = await create_server(ServerConfig(db=None, mcp_servers={"odd": argv}))
                try:
                    async with AsyncClient(f"127.0.0.1:{running.port}") as client:
                        call = am.ToolCallContent("c1", "odd.exit", {"hang_up": True})
                        gone = await client.call_tool(call)
                        assert gone.is_error
                        assert "went away" in gone.text
                    await until(partial(_shutting_down, log), "the SDK's shutdown of the server")
                finally:
                    await running.stop(0)

    run(main)


@pytest.mark.parametrize("server", ["exits-at-start", "connects"])
def test_a_runner_stopped_at_any_moment_leaves_nothing_behind(server: str) -> None:
    """Stops spread over the spawn, the handshake, tools/list, the connected session and the restart delays."""
    args = [ODD, "--exit-at-start"] if server == "exits-at-start" else [ODD]

    async def main() -> None:
        async with agentmsg_server() as target:
            for turn in range(12):
                with nothing_left_behind():
                    runner = McpRunner(
                        target,
                        stdio_server(sys.executable, args),
                        restart_delay=0.01,
                        max_restart_delay=0.02,
                        start_attempts=10_000,
                    )
                    task = asyncio.ensure_future(runner.serve())
                    for _ in range(turn):  # 0 to 11 pauses of 20 ms: a different moment each round
                        await asyncio.sleep(0.02)
                    # Odd rounds drain (serve() has begun by then, after a pause); even ones cancel.
                    await _stop(runner, task, "drain" if turn % 2 else "cancel")
                    assert task.done()
                    if not task.cancelled():
                        assert task.exception() is None or isinstance(task.exception(), McpServerStartError)

    run(main)
