"""The MCP stdio connection on uvloop's event loop (what ``agentmsg serve`` runs on by default, as do
``uvicorn[standard]`` and many applications).

uvloop's pipe transports do not derive from asyncio's transport classes: the connection must not depend on them. A
server hosting an MCP server and a runner in front of one, each on a uvloop loop, answer a call and stop cleanly.
A connection that fails after its server started leaves no process behind (on uvloop one left running held the
loop's close for ever, so a failing test hung instead of failing).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import warnings
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar

import pytest
from mcphelpers import fast, serving, until

import agentmsg as am
from agentmsg.mcp import McpRunner, _stdio
from agentmsg.mcp._tools import McpServerStartError, McpTools
from agentmsg.service import AsyncClient, ServerConfig, create_server

uvloop = pytest.importorskip("uvloop", reason="uvloop is a dependency of agentmsg on CPython off Windows")

PROC = Path("/proc")
if not (PROC / str(os.getpid()) / "stat").exists():
    pytest.skip("these tests find the processes a test left running in /proc (Linux)", allow_module_level=True)

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "uvloop": uvloop.new_event_loop,
    "asyncio": asyncio.SelectorEventLoop,
}


def _running_children() -> set[int]:
    """This process's children that are still running (an exited, unreaped one is not)."""
    found = set()
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue  # it ended while we looked
        state, parent = fields[0], int(fields[1])
        if parent == os.getpid() and state not in ("Z", "X"):
            found.add(int(entry.name))
    return found


def _on_loop(main: Coroutine[Any, Any, None], new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    """Run ``main`` on a new loop, bounded: a failure ends the test, and never waits on what it left running.

    A child process ``main`` started and left running is killed before the loop closes (uvloop's close would wait
    for it for ever), and the test fails naming it.
    """
    before = _running_children()
    loop = new_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(main, 60))
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0.1))
        left = sorted(_running_children() - before)
        for pid in left:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    continue
                break
        if left:  # their transports, never closed, are finalised now, while their loop is open
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                gc.collect()
                loop.run_until_complete(asyncio.sleep(0.1))
        loop.close()
    assert not left, f"process(es) {left} started by the test were left running"


def _on_uvloop(main: Coroutine[Any, Any, None]) -> None:
    _on_loop(main, uvloop.new_event_loop)


def test_a_hosted_mcp_server_answers_on_uvloop(tmp_path: Path) -> None:
    spec = fast(tmp_path / "log")

    async def main() -> None:
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        running = await create_server(ServerConfig(db=None, mcp_servers={"fs": [spec.command, *spec.args]}))
        try:
            async with AsyncClient(f"127.0.0.1:{running.port}", timeout=30) as client:
                await until(running.mcp["fs"].registered.is_set, "the hosted server's tools")
                result = await client.call_tool(am.ToolCallContent("c1", "fs.add", {"a": 2, "b": 40}))
                assert not result.is_error
                assert "42" in result.text
                # Timed on the monotonic clock, not uvloop's loop.time() (whole milliseconds, so 0.0 or 1.0 here).
                latencies = [result.metadata["agentmsg.run"]["latency_ms"]]
                for i in range(4):
                    again = await client.call_tool(am.ToolCallContent(f"c{i}", "fs.add", {"a": i, "b": 1}))
                    latencies.append(again.metadata["agentmsg.run"]["latency_ms"])
                assert any(ms != round(ms) for ms in latencies), latencies
        finally:
            await running.stop(0)

    _on_uvloop(main())


def test_a_runner_in_front_of_an_mcp_server_answers_on_uvloop(tmp_path: Path) -> None:
    spec = fast(tmp_path / "log")

    async def main() -> None:
        running = await create_server(ServerConfig(db=None))
        target = f"127.0.0.1:{running.port}"
        try:
            runner = McpRunner(target, spec, prefix="fs.", restart_delay=0.1)
            async with serving(runner), AsyncClient(target, timeout=30) as client:
                await until(runner.registered.is_set, "the runner's registration")
                result = await client.call_tool(am.ToolCallContent("c1", "fs.add", {"a": 1, "b": 2}))
                assert not result.is_error
                assert "3" in result.text
        finally:
            await running.stop(0)

    _on_uvloop(main())


class _StartsThenFails(_stdio.StdioConnection):
    """A connection that fails once its server process runs (as an unexpected transport would): the failure this
    test injects between the spawn and the connection."""

    started: ClassVar[list[int]] = []

    def __init__(self, transport: asyncio.SubprocessTransport, *args: Any) -> None:
        self.started.append(transport.get_pid())
        raise RuntimeError("injected: the connection could not be made")


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_connection_that_fails_after_its_server_started_leaves_nothing_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    _StartsThenFails.started = []
    monkeypatch.setattr(_stdio, "StdioConnection", _StartsThenFails)
    tools = McpTools(fast(tmp_path / "log"), name="fs", restart_delay=0.01, start_attempts=2)

    async def main() -> None:
        supervisor = asyncio.ensure_future(tools.supervise())
        try:
            with pytest.raises(McpServerStartError, match="injected: the connection could not be made"):
                await asyncio.wait_for(asyncio.shield(supervisor), 30)
        finally:
            await tools.stop_supervising(supervisor)  # ended already: returns at once
        assert len(_StartsThenFails.started) == 2  # both attempts started a server
        # Each server was stopped when its connection failed: waited for here, with the loop running to reap it.
        await until(lambda: not _running_children() & set(_StartsThenFails.started), "the servers to be stopped")

    _on_loop(main(), LOOPS[loop])


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_stdio_server_runs_in_a_process_group_of_its_own_in_our_session(loop: str, tmp_path: Path) -> None:
    """Its own group: the stop's SIGTERM and SIGKILL go to the group, and a Ctrl-C at our terminal does not reach it.
    Our session, not a new one: with autogroup scheduling a new session is a scheduling group of its own, and a
    server woken by every request preempted ours at each write (about a tenth of the calls per second, 16 callers)."""
    spec = fast(tmp_path / "log")

    async def main() -> None:
        conn = await _stdio.open_stdio(spec, errlog=None, on_tools_changed=None)
        try:
            pid = conn._transport.get_pid()
            assert os.getpgid(pid) == pid
            assert os.getsid(pid) == os.getsid(0)
        finally:
            await conn.close()

    _on_loop(main(), LOOPS[loop])
