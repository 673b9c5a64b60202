"""``make run-mcp``: the demo engine calling the MCP reference server's tools through agentmsg.

``python -m agentmsg.mcp.demo`` starts an agentmsg server (in-memory store), then
``agentmsg mcp runner --prefix everything. -- mcp-server-everything stdio`` in
its own process: the reference MCP server (``@modelcontextprotocol/server-everything``
from npm, installed by ``make deps``) behind the runner. A scripted engine
(no model, no network) then runs one agent turn: the user's question, an
assistant message calling four of the server's tools (a sum, an image,
structured content, resource links), each call made through the agentmsg
service with a deadline, the results appended to the session as one tool
message, and a slow call cut off by its deadline (the reference server is sent
``notifications/cancelled``). Set ``AGENTMSG_MCP_SERVER`` to run another
server's command line instead (its tools differ: the engine then lists them).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import agentmsg as am
from agentmsg._logtext import quiet_grpc_core
from agentmsg.providers.mcp import structured_content
from agentmsg.service import AsyncClient, ServerConfig, create_server

SESSION = "mcp-demo"
PREFIX = "everything."
PROVENANCE = am.Provenance("scripted", "agentmsg-demo", "scripted-model-1")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get-sum", {"a": 19, "b": 23}),
    ("get-tiny-image", {}),
    ("get-structured-content", {"location": "Chicago"}),
    ("get-resource-links", {"count": 2}),
]


def _server_command() -> list[str]:
    custom = os.environ.get("AGENTMSG_MCP_SERVER")
    if custom:
        return shlex.split(custom)
    binary = Path("node_modules/.bin/mcp-server-everything")
    if not binary.exists():
        raise SystemExit("node_modules/.bin/mcp-server-everything is missing: run make deps (npm install)")
    return [str(binary), "stdio"]


def _describe(block: am.Content) -> str:
    match block:
        case am.TextContent():
            return f"text {block.content[:60]!r}"
        case am.ImageContent():
            return f"image {block.media_type}, {len(block.data or b'')} bytes"
        case am.DocumentContent() if block.url:
            return f"resource link {block.url} ({block.filename})"
        case am.DocumentContent():
            return f"resource {block.filename} ({block.media_type}, {len(block.data or b'')} bytes)"
        case _:
            return type(block).__name__


async def engine(target: str) -> None:
    """One scripted agent turn calling MCP tools through the service."""
    async with AsyncClient(target, timeout=20) as client:
        for _ in range(600):
            tools = await client.list_tools()
            if tools:
                break
            await asyncio.sleep(0.05)
        else:
            raise SystemExit("engine: no tools were registered in 30 s (see the runner's output above)")
        print(f"engine: {len(tools)} tools registered by {tools[0].runner_name}", flush=True)
        for registered in tools[:4]:
            tool = registered.tool
            print(f"engine:   {tool.name} ({tool.title or '-'}, read-only: {tool.read_only_hint})", flush=True)
        names = {t.tool.name for t in tools}
        calls = [
            am.ToolCallContent(f"call_{i}", PREFIX + name, args, kind="mcp", index=i)
            for i, (name, args) in enumerate(CALLS)
            if PREFIX + name in names
        ]
        question = am.UserMessage.text("Add 19 and 23, show me the logo, Chicago's weather and two resources.")
        asking = am.AssistantMessage(calls, stop_reason=am.StopReason.TOOL_CALLS, provenance=PROVENANCE)
        offsets = await client.append_many(SESSION, [question, asking])
        print(f"engine: the question and {len(calls)} tool calls appended at offsets {offsets}", flush=True)
        results = await asyncio.gather(*(client.call_tool(call, timeout=10) for call in calls))
        for call, result in zip(calls, results, strict=True):
            print(f"engine: {call.name} -> {'error' if result.is_error else 'ok'}", flush=True)
            for block in result.blocks:
                print(f"engine:     {_describe(block)}", flush=True)
            if structured_content(result) is not None:
                print(f"engine:     structured: {structured_content(result)}", flush=True)
        offset = await client.append(SESSION, am.ToolMessage.from_results(list(results)))
        print(f"engine: the results appended as one tool message at offset {offset}", flush=True)
        slow = am.ToolCallContent(
            "call_slow", PREFIX + "trigger-long-running-operation", {"duration": 30, "steps": 3}, kind="mcp"
        )
        if slow.name in names:
            try:
                await client.call_tool(slow, timeout=1.5)
            except am.DeadlineExceededError:
                print("engine: the 30-second operation hit its 1.5 s deadline; the MCP server was told", flush=True)
        history = [logged async for logged in client.history(SESSION)]
        print(f"engine: session {SESSION!r} holds {len(history)} messages", flush=True)


def _pump(stream: object) -> threading.Thread:
    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            print(f"[runner] {line.rstrip()}", flush=True)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


async def main() -> None:
    """Server, runner process, engine; everything stops at the end."""
    running = await create_server(ServerConfig(db=None))
    target = f"127.0.0.1:{running.port}"
    print(f"agentmsg server on {target}", flush=True)
    command = [sys.executable, "-m", "agentmsg", "mcp", "runner", "--target", target, "--prefix", PREFIX, "--"]
    runner = subprocess.Popen(  # noqa: S603 - our own interpreter and the configured MCP server
        [*command, *_server_command()],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    pump = _pump(runner.stdout)
    try:
        await asyncio.wait_for(engine(target), 60)
    finally:
        runner.terminate()
        await asyncio.to_thread(runner.wait, 10)
        pump.join(5)
        await running.stop(1)
    print("done", flush=True)


if __name__ == "__main__":
    quiet_grpc_core()  # and the processes it starts inherit it
    asyncio.run(main())
