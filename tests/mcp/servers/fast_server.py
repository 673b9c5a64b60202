"""An MCP server written with the SDK's MCPServer (FastMCP before mcp 2), run by the tests over stdio
(or streamable HTTP with ``--http PORT``).

``MCP_TEST_LOG`` names a file where a ``slow`` or ``hold`` call writes ``started <tag>`` and, cancelled,
``cancelled <tag>``. A ``hold`` call waits until the file ``MCP_TEST_RELEASE`` names exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("fast")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
async def slow(seconds: float, tag: str) -> str:
    """Sleep, then say done (its start and its cancellation are written to MCP_TEST_LOG)."""
    log = Path(os.environ.get("MCP_TEST_LOG", os.devnull))
    with log.open("a") as out:
        out.write(f"started {tag}\n")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        with log.open("a") as out:
            out.write(f"cancelled {tag}\n")
        raise
    return f"done {tag}"


@app.tool()
async def hold(tag: str) -> str:
    """Wait until the file MCP_TEST_RELEASE names exists (10 minutes at most), then say done."""
    log = Path(os.environ.get("MCP_TEST_LOG", os.devnull))
    release = Path(os.environ["MCP_TEST_RELEASE"])
    with log.open("a") as out:
        out.write(f"started {tag}\n")
    try:
        for _ in range(60_000):
            if release.exists():
                break
            await anyio.sleep(0.01)
    except anyio.get_cancelled_exc_class():
        with log.open("a") as out:
            out.write(f"cancelled {tag}\n")
        raise
    return f"done {tag}"


@app.tool()
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ValueError(reason)


@app.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` and tell the client that the tools changed."""

    def grown() -> str:
        return f"{name} is here"

    app.add_tool(grown, name=name, description="A tool added at run time.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
