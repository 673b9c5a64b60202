"""What the MCP tests share: an agentmsg server in the test's loop, runners as tasks, the MCP servers they run."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
from gates import skip_or_fail
from mcp import StdioServerParameters

from agentmsg.mcp import McpRunner, stdio_server
from agentmsg.service import ServerConfig, create_server

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
SERVERS = Path(__file__).resolve().parent / "servers"  # the MCP servers the tests run over stdio
WAIT = 30.0


def dump(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """A result as on the wire, without what each hop stamps on it (server info, result type)."""
    wire = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    wire.pop("_meta", None)
    wire.pop("resultType", None)
    return wire


@asynccontextmanager
async def agentmsg_server(**config: Any) -> AsyncIterator[str]:
    running = await create_server(ServerConfig(db=None, **config))
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        await running.stop(0)


@asynccontextmanager
async def serving(runner: McpRunner) -> AsyncIterator[McpRunner]:
    task = asyncio.ensure_future(runner.serve())
    try:
        yield runner
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def until(check: Callable[[], bool], what: str) -> None:
    for _ in range(int(WAIT / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), 120))


def require_everything() -> None:
    """Skip the test (fail it under CI) when the reference MCP server from npm is not installed."""
    if not EVERYTHING.exists():
        skip_or_fail(f"{EVERYTHING.relative_to(ROOT)} is missing: node_modules is not installed (make deps)")


def everything() -> StdioServerParameters:
    """The reference MCP server over stdio; a test that uses it calls :func:`require_everything` first."""
    return stdio_server(str(EVERYTHING), ["stdio"])


def fast(log: Path) -> StdioServerParameters:
    return stdio_server(sys.executable, [str(SERVERS / "fast_server.py")], env={"MCP_TEST_LOG": str(log)})
