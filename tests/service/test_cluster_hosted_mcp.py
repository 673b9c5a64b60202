"""An MCP server one node hosts (``mcp_servers``) serves the whole cluster: listed and called from another node,
with the caller's deadline (the MCP server hears the cancel), and its names taken for every node."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ServerThread, fresh_database

import agentmsg as am
from agentmsg.service import AsyncClient, ToolRunner
from agentmsg.service.localpg import LocalPostgres

FAST = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "fast_server.py"


def test_a_hosted_mcp_tool_is_called_from_another_node(
    postgres: LocalPostgres, make_server: Callable[..., ServerThread], tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    log = tmp_path / "log"
    url = fresh_database(postgres)
    far = make_server(db=url, mcp_servers={"fast": ["env", f"MCP_TEST_LOG={log}", sys.executable, str(FAST)]})
    near = make_server(db=url)

    async def main() -> None:
        async with AsyncClient(near.target, timeout=20) as client:
            listed = {t.tool.name: t for t in await client.list_tools()}
            assert listed["fast.add"].runner_name == "mcp:fast"
            assert listed["fast.add"].tool.kind is am.ToolKind.MCP
            added = await client.call_tool(am.ToolCallContent("c1", "fast.add", {"a": 40, "b": 2}))
            assert (added.text, added.is_error) == ("42", False)
            with pytest.raises(am.DeadlineExceededError):
                await client.call_tool(
                    am.ToolCallContent("c2", "fast.slow", {"seconds": 60, "tag": "far"}), timeout=1.5
                )
            for _ in range(300):  # the forwarded call's deadline reached the MCP server on the far node
                if "cancelled far" in (log.read_text() if log.exists() else ""):
                    break
                await asyncio.sleep(0.05)
            assert "cancelled far" in log.read_text()

    asyncio.run(main())
    runner = ToolRunner(near.target, name="rival")
    runner.tool(lambda a, b: a - b, name="fast.add")
    with pytest.raises(am.ConflictError, match=r"fast\.add"):  # the name is taken for the whole cluster
        asyncio.run(asyncio.wait_for(runner.serve(), 30))
    assert far.running.mcp["fast"].registered.is_set()
