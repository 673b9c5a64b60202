"""`agentmsg mcp runner` and `agentmsg mcp serve` as processes, the SDK's client on stdio, and list_changed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcphelpers import SERVERS, agentmsg_server, everything, fast, require_everything, run, serving, until

import agentmsg as am
from agentmsg.mcp import McpRunner, create_mcp_server, serve_http
from agentmsg.providers.mcp import structured_content
from agentmsg.service import AsyncClient


@asynccontextmanager
async def process(*args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    child = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        yield child
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.terminate()
        await child.wait()
        assert child.stdout is not None
        await child.stdout.read()


def test_processes_over_stdio() -> None:
    """An MCP client runs `agentmsg mcp serve`; `agentmsg mcp runner` runs an MCP server; list_changed reaches it."""
    require_everything()

    async def main() -> None:
        changed = asyncio.Event()

        async def on_message(message: IncomingMessage) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                changed.set()

        async with agentmsg_server() as target:
            runner_cli = ["-m", "agentmsg", "mcp", "runner", "--target", target, "--prefix", "fast."]
            async with process(*runner_cli, "--", sys.executable, str(SERVERS / "fast_server.py")):
                serve = StdioServerParameters(
                    command=sys.executable, args=["-m", "agentmsg", "mcp", "serve", "--target", target, "--poll", "0.1"]
                )
                async with Client(serve, mode="legacy", message_handler=on_message) as mcp:
                    assert mcp.server_capabilities.tools is not None
                    assert mcp.server_capabilities.tools.list_changed is True
                    for _ in range(600):
                        names = {t.name for t in (await mcp.list_tools()).tools}
                        if "fast.add" in names:
                            break
                        await asyncio.sleep(0.05)
                    assert {"fast.add", "fast.slow", "fast.fail", "fast.grow"} <= names
                    added = await mcp.call_tool("fast.add", {"a": 20, "b": 22})
                    assert added.structured_content == {"result": 42}
                    async with serving(McpRunner(target, everything(), prefix="ev.")) as runner:
                        await until(runner.registered.is_set, "the second runner")
                        # Each notification says "list again"; the one after the second runner came shows its tools.
                        for _ in range(10):
                            await asyncio.wait_for(changed.wait(), 30)
                            changed.clear()
                            names = {t.name for t in (await mcp.list_tools()).tools}
                            if "ev.echo" in names:
                                break
                        assert "ev.echo" in names

    run(main)


def test_modern_client_hears_list_changed_on_its_listen_stream() -> None:
    """At the 2026-07-28 protocol, list_changed reaches a client through subscriptions/listen (HTTP)."""
    require_everything()

    async def main() -> None:
        async with agentmsg_server() as target, AsyncClient(target) as client:
            bridge = create_mcp_server(client, poll_interval=0.1)
            web = asyncio.ensure_future(serve_http(bridge, 0))
            await until(lambda: bridge.http_port is not None, "the MCP endpoint")
            async with Client(f"http://127.0.0.1:{bridge.http_port}/mcp") as mcp:
                assert mcp.protocol_version == "2026-07-28"
                assert (await mcp.list_tools()).tools == []
                async with (
                    mcp.listen(tools_list_changed=True) as subscription,
                    serving(McpRunner(target, everything())) as runner,
                ):
                    await until(runner.registered.is_set, "the runner")
                    event = await asyncio.wait_for(anext(aiter(subscription)), 30)
                    assert type(event).__name__ == "ToolsListChanged"
                    echo = await mcp.call_tool("echo", {"message": "modern"})
                    assert echo.content[0].text == "Echo: modern"  # type: ignore[union-attr]
            web.cancel()
            await asyncio.gather(web, return_exceptions=True)

    run(main)


def test_runner_over_streamable_http(tmp_path: Path) -> None:
    """`agentmsg mcp runner --url`: an MCP server reached over streamable HTTP, cancellation included."""

    async def main() -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        log = tmp_path / "cancelled.log"
        env = {**os.environ, "MCP_TEST_LOG": str(log)}
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SERVERS / "fast_server.py"),
            "--http",
            str(port),
            env=env,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            async with (
                agentmsg_server() as target,
                AsyncClient(target) as client,
                serving(McpRunner(target, f"http://127.0.0.1:{port}/mcp", restart_delay=0.1)) as runner,
            ):
                await until(runner.registered.is_set, "registration over HTTP")
                added = await client.call_tool(am.ToolCallContent("c1", "add", {"a": 1, "b": 2}))
                assert structured_content(added) == {"result": 3}
                with pytest.raises(am.DeadlineExceededError):
                    await client.call_tool(am.ToolCallContent("c2", "slow", {"seconds": 60, "tag": "http"}), timeout=3)
                await until(lambda: "cancelled http" in (log.read_text() if log.exists() else ""), "the cancel")
        finally:
            server.terminate()
            await server.wait()

    run(main)


def test_runner_refused_when_its_tool_names_are_taken() -> None:
    """Two runners serving the same names: the second is refused with a clear error (use --prefix)."""
    require_everything()

    async def main() -> None:
        async with agentmsg_server() as target, serving(McpRunner(target, everything())) as first:
            await until(first.registered.is_set, "the first runner")
            second = McpRunner(target, everything())
            with pytest.raises(am.ConflictError, match="echo"):
                await asyncio.wait_for(second.serve(), 30)

    run(main)


def test_tokens(tmp_path: Path) -> None:
    """The runner and the bridge speak to a server that wants a token with theirs; without one, a clear refusal."""

    async def main() -> None:
        async with agentmsg_server(tokens=["s3cret"]) as target:
            with pytest.raises(am.UnauthenticatedError):
                await asyncio.wait_for(McpRunner(target, fast(tmp_path / "log")).serve(), 30)
            async with (
                serving(McpRunner(target, fast(tmp_path / "log"), token="s3cret")) as runner,
                AsyncClient(target, token="s3cret") as client,
            ):
                await until(runner.registered.is_set, "registration with a token")
                bridge = create_mcp_server(client)
                async with Client(bridge) as mcp:  # in-process: the SDK's client straight to the bridge object
                    added = await mcp.call_tool("add", {"a": 2, "b": 2})
                    assert added.structured_content == {"result": 4}
            async with AsyncClient(target) as anonymous, Client(create_mcp_server(anonymous)) as mcp:
                with pytest.raises(MCPError, match="ListTools failed"):
                    await mcp.list_tools()

    run(main)


def test_cli_needs_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    from agentmsg.cli import build_parser, main

    assert main(["mcp", "runner", "--target", "127.0.0.1:1"]) == 2
    assert "give the MCP server as -- COMMAND" in capsys.readouterr().err
    assert main(["mcp", "runner", "--url", "http://x/mcp", "--", "cmd"]) == 2
    assert "give the MCP server as -- COMMAND" in capsys.readouterr().err
    args = build_parser().parse_args(["mcp", "runner", "--prefix", "p.", "--", "npx", "-y", "pkg", "--", "--flag"])
    assert (args.server_command, args.prefix) == (["--", "npx", "-y", "pkg", "--", "--flag"], "p.")


def test_the_readme_runner_command_runs_as_written() -> None:
    """docs/mcp.md's `agentmsg mcp runner ... -- npx -y ...` line, its target swapped for a test server's: npx finds
    the package `make deps` installed, the runner registers its tools, SIGTERM stops it with status 0."""
    require_everything()
    readme = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("agentmsg mcp runner --target 127.0.0.1:50051"))
    words = line.split()
    assert words[words.index("--") + 1 : words.index("--") + 3] == ["npx", "-y"]  # -y: npx asks nothing on the pipe

    async def main() -> None:
        async with agentmsg_server() as target, AsyncClient(target) as client:
            argv = ["-m", "agentmsg", *words[1:]]
            argv[argv.index("127.0.0.1:50051")] = target
            async with process(*argv) as child:
                for _ in range(600):
                    names = {t.tool.name for t in await client.list_tools()}
                    if "everything.echo" in names:
                        break
                    assert child.returncode is None, "the runner exited"
                    await asyncio.sleep(0.1)
                echoed = await client.call_tool(am.ToolCallContent("c1", "everything.echo", {"message": "as written"}))
                assert echoed.text == "Echo: as written"
                child.terminate()
                assert await child.wait() == 0

    run(main)


def test_a_runner_whose_command_cannot_run_exits_2_saying_why() -> None:
    async def main() -> None:
        async with agentmsg_server() as target:
            argv = ["-m", "agentmsg", "mcp", "runner", "--target", target, "--", "agentmsg-no-such-mcp-server"]
            async with process(*argv) as child:
                assert await asyncio.wait_for(child.wait(), 60) == 2
                assert child.stdout is not None
                out = (await child.stdout.read()).decode()
        last = out.strip().splitlines()[-1]
        assert last.startswith("agentmsg: MCP server agentmsg-no-such-mcp-server did not start")
        assert last.endswith("(the command cannot run)")

    run(main)
