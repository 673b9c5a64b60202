"""The MCP stdio connection on uvloop's event loop (what ``uvicorn[standard]`` and many applications run).

uvloop's pipe transports do not derive from asyncio's transport classes: the connection must not depend on them. A
server hosting an MCP server and a runner in front of one, each on a uvloop loop, answer a call and stop cleanly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from mcphelpers import fast, serving, until

import agentmsg as am
from agentmsg.mcp import McpRunner
from agentmsg.service import AsyncClient, ServerConfig, create_server

uvloop = pytest.importorskip("uvloop", reason="uvloop is in the dev extra: make deps installs it")


def _on_uvloop(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on a uvloop loop, bounded: a failure ends the test, never waits on a thread it left running."""
    loop = uvloop.new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(main, 60))
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0.1))
        loop.close()


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
