"""MCP servers the agentmsg server hosts itself (``ServerConfig.mcp_servers``, ``agentmsg serve --mcp``).

Each behaviour test runs twice: once with the MCP server hosted by the agentmsg server, once behind the standalone
``McpRunner``, so the two are shown to behave alike (deadlines, cancellation, errors, a crashing server, scopes).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcphelpers import SERVERS, everything, fast, require_everything, run, serving, until

import agentmsg as am
from agentmsg.mcp import McpRunner, McpServerStartError, stdio_server
from agentmsg.mcp._session import MCPServerSpec
from agentmsg.mcp._tools import McpTools
from agentmsg.service import RUN_METADATA_KEY, AsyncClient, ServerConfig, create_server
from agentmsg.service.access import parse_token

MODES = ["hosted", "runner"]


def _argv(spec: MCPServerSpec) -> list[str]:
    """A stdio server as the argv ``mcp_servers`` takes (its environment passed through ``env``)."""
    assert not isinstance(spec, str)
    env = [f"{key}={value}" for key, value in (spec.env or {}).items()]
    return (["env", *env] if env else []) + [spec.command, *spec.args]


@asynccontextmanager
async def served(mode: str, name: str, spec: MCPServerSpec, **config: Any) -> AsyncIterator[tuple[str, McpTools]]:
    """An agentmsg server whose tools ``NAME.*`` come from the MCP server ``spec``: hosted by the server itself, or
    behind a standalone runner (with the prefix the hosted server gets). Gives the target and the MCP side."""
    if mode == "hosted":
        running = await create_server(ServerConfig(db=None, mcp_servers={name: _argv(spec)}, **config))
        try:
            yield f"127.0.0.1:{running.port}", running.mcp[name]
        finally:
            await running.stop(0)
        return
    running = await create_server(ServerConfig(db=None, **config))
    token = next(iter(config.get("tokens", [])), None)
    try:
        target = f"127.0.0.1:{running.port}"
        runner = McpRunner(target, spec, prefix=f"{name}.", restart_delay=0.1, token=token)
        async with serving(runner):
            await until(runner.registered.is_set, "the runner's registration")
            yield target, runner
    finally:
        await running.stop(0)


def _log(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_hosted_tools_are_listed_and_answer_as_the_runner_does() -> None:
    """ListTools shows the hosted tools (NAME.TOOL, kind MCP, runner mcp:NAME); every content kind of the reference
    server comes back as the runner gives it."""
    require_everything()
    calls = [
        ("echo", {"message": "hello"}),
        ("get-tiny-image", {}),
        ("get-structured-content", {"location": "Chicago"}),
        ("get-resource-links", {"count": 3}),
        ("get-annotated-message", {"messageType": "success", "includeImage": True}),
        ("get-sum", {"a": 2, "b": 40}),
    ]

    async def answers(mode: str) -> tuple[dict[str, am.ToolDefinition], list[bytes]]:
        async with served(mode, "ev", everything()) as (target, _), AsyncClient(target) as client:
            listed = await client.list_tools()
            if mode == "hosted":
                assert {t.runner_name for t in listed} == {"mcp:ev"}
            tools = {t.tool.name: t.tool for t in listed}
            got = []
            for i, (name, args) in enumerate(calls):
                result = await client.call_tool(am.ToolCallContent(f"c{i}", "ev." + name, args))
                # The result as the runner gave it: without the run CallTool records (its runner and latency differ).
                pb = type(result.pb)()
                pb.CopyFrom(result.pb)
                assert result.metadata[RUN_METADATA_KEY]["runner"].startswith("mcp:")
                del pb.tool_result.metadata.fields[RUN_METADATA_KEY]
                got.append(pb.SerializeToString(deterministic=True))
            return tools, got

    async def main() -> None:
        hosted_tools, hosted = await answers("hosted")
        runner_tools, runner = await answers("runner")
        assert "ev.echo" in hosted_tools
        assert hosted_tools["ev.echo"].kind is am.ToolKind.MCP
        assert {n: t.pb for n, t in hosted_tools.items()} == {n: t.pb for n, t in runner_tools.items()}
        assert hosted == runner

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_deadline_cancels_the_mcp_request(mode: str, tmp_path: Path) -> None:
    """A call past its deadline: the caller gets DEADLINE_EXCEEDED, the MCP server hears notifications/cancelled."""
    log = tmp_path / "log"

    async def main() -> None:
        async with served(mode, "fast", fast(log)) as (target, _), AsyncClient(target) as client:
            with pytest.raises(am.DeadlineExceededError):
                await client.call_tool(
                    am.ToolCallContent("d1", "fast.slow", {"seconds": 60, "tag": "deadline"}), timeout=1.0
                )
            await until(lambda: "cancelled deadline" in _log(log), "the MCP server to hear the cancel")
            added = await client.call_tool(am.ToolCallContent("d2", "fast.add", {"a": 1, "b": 2}))
            assert added.text == "3"

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_a_caller_that_cancels_cancels_the_mcp_request(mode: str, tmp_path: Path) -> None:
    log = tmp_path / "log"

    async def main() -> None:
        async with served(mode, "fast", fast(log)) as (target, _), AsyncClient(target) as client:
            call = asyncio.ensure_future(
                client.call_tool(am.ToolCallContent("k1", "fast.slow", {"seconds": 60, "tag": "by-caller"}))
            )
            await until(lambda: "started by-caller" in _log(log), "the call to start")
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            await until(lambda: "cancelled by-caller" in _log(log), "the MCP server to hear the cancel")

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_a_result_read_in_many_pieces_arrives_whole(mode: str) -> None:
    """A 3 MiB answer (non-ASCII: characters split between the pipe's reads) and a call after it."""
    require_everything()
    message = "é€𝄞" * 350_000

    async def main() -> None:
        async with served(mode, "ev", everything()) as (target, _), AsyncClient(target) as client:
            big = await client.call_tool(am.ToolCallContent("b1", "ev.echo", {"message": message}))
            assert (big.is_error, big.text) == (False, f"Echo: {message}")
            small = await client.call_tool(am.ToolCallContent("b2", "ev.echo", {"message": "after"}))
            assert small.text == "Echo: after"

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_errors_and_a_crashing_server(mode: str) -> None:
    """An is_error result, a malformed result, a bad tool left out, a server that dies mid-call (the call gets an
    error result, never a hang; the server is restarted and serves again)."""
    spec = stdio_server(sys.executable, [str(SERVERS / "odd_server.py")])

    async def main() -> None:
        async with served(mode, "odd", spec) as (target, mcp), AsyncClient(target) as client:
            names = sorted(t.tool.name for t in await client.list_tools())
            assert names == ["odd.ask", "odd.exit", "odd.good", "odd.malformed"]
            assert "not JSON" in mcp.problems["bad-schema"]
            bad = await client.call_tool(am.ToolCallContent("e1", "odd.malformed", {}))
            assert bad.is_error
            assert "malformed" in bad.text
            assert "content[0].data" in bad.text
            unknown = await client.call_tool(am.ToolCallContent("e2", "odd.good", arguments="{not json"))
            assert unknown.is_error
            assert "invalid arguments" in unknown.text
            # A line that is not JSON is skipped; the server's ping is answered, a request for roots refused.
            asked = await client.call_tool(am.ToolCallContent("e5", "odd.ask", {}))
            assert not asked.is_error
            ping, roots = json.loads(asked.text)
            assert ping == {"jsonrpc": "2.0", "id": "s1", "result": {}}
            assert (roots["id"], roots["error"]["code"]) == ("s2", -32601)
            died = await client.call_tool(am.ToolCallContent("e3", "odd.exit", {}))
            assert died.is_error
            assert "went away" in died.text
            await until(lambda: mcp.restarts >= 1 and mcp.connected.is_set(), "the restart")
            again = await client.call_tool(am.ToolCallContent("e4", "odd.good", {}))
            assert (again.is_error, again.text) == (False, "ok")
            # A server that stops reading its stdin (its stdout still open) went away too: no call waits for it.
            deaf = await client.call_tool(am.ToolCallContent("e6", "odd.exit", {"close_stdin": True}))
            assert deaf.is_error
            assert "went away" in deaf.text
            await until(lambda: mcp.restarts >= 2 and mcp.connected.is_set(), "the second restart")
            last = await client.call_tool(am.ToolCallContent("e7", "odd.good", {}))
            assert (last.is_error, last.text) == (False, "ok")

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_tool_errors_are_error_results(mode: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with served(mode, "fast", fast(tmp_path / "log")) as (target, _), AsyncClient(target) as client:
            failed = await client.call_tool(am.ToolCallContent("f1", "fast.fail", {"reason": "boom"}))
            assert failed.is_error
            assert failed.text == "Error executing tool fail"  # what the MCP server said

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_a_token_without_tools_call_is_refused(mode: str, tmp_path: Path) -> None:
    grants = dict(parse_token(spec) for spec in ("caller=tools:call", "reader=s-*"))
    tokens = ["admin"]

    async def main() -> None:
        async with served(mode, "fast", fast(tmp_path / "log"), grants=grants, tokens=tokens) as (target, _):
            async with AsyncClient(target, token="reader") as reader:
                with pytest.raises(am.PermissionDeniedError):
                    await reader.call_tool(am.ToolCallContent("s1", "fast.add", {"a": 1, "b": 1}))
            async with AsyncClient(target, token="caller") as caller:
                added = await caller.call_tool(am.ToolCallContent("s2", "fast.add", {"a": 1, "b": 1}))
                assert added.text == "2"

    run(main)


def test_list_changed_re_registers_the_hosted_tools(tmp_path: Path) -> None:
    async def main() -> None:
        async with served("hosted", "fast", fast(tmp_path / "log")) as (target, mcp), AsyncClient(target) as client:
            first = mcp.runner_id  # type: ignore[attr-defined]
            grown = await client.call_tool(am.ToolCallContent("g1", "fast.grow", {"name": "sprout"}))
            assert grown.text == "added sprout"
            await until(lambda: mcp.runner_id not in (None, first), "re-registration")  # type: ignore[attr-defined]
            assert "fast.sprout" in {t.tool.name for t in await client.list_tools()}
            sprout = await client.call_tool(am.ToolCallContent("g2", "fast.sprout", {}))
            assert sprout.text == "sprout is here"

    run(main)


def test_a_hosted_name_taken_by_a_runner_is_refused(tmp_path: Path) -> None:
    """A runner that registers a name a hosted server serves is refused, as two runners would be."""

    async def main() -> None:
        async with served("hosted", "fast", fast(tmp_path / "log")) as (target, _):
            runner = McpRunner(target, fast(tmp_path / "log"), prefix="fast.")
            with pytest.raises(am.ConflictError, match=r"fast\.add"):
                await asyncio.wait_for(runner.serve(), 30)

    run(main)


@pytest.mark.parametrize(
    ("servers", "field", "says"),
    [
        ({"a b": ["x"]}, "mcp_servers['a b']", "letters, digits"),
        ({"": ["x"]}, "mcp_servers['']", "letters, digits"),
        ({"ok": []}, "mcp_servers['ok']", "give a command"),
        ({"ok": "  "}, "mcp_servers['ok']", "give a command"),
        ({"ok": "run 'unclosed"}, "mcp_servers['ok']", "cannot split"),
    ],
)
def test_bad_mcp_servers_are_refused_before_anything_opens(
    servers: dict[str, Any], field: str, says: str, tmp_path: Path
) -> None:
    db = tmp_path / "never.db"

    async def main() -> None:
        with pytest.raises(am.ValidationError) as info:
            await create_server(ServerConfig(db=str(db), mcp_servers=servers))
        assert info.value.violations[0].field == field
        assert says in str(info.value)

    run(main)
    assert not db.exists()


def test_a_hosted_command_that_cannot_run_stops_the_server_from_starting() -> None:
    async def main() -> None:
        with pytest.raises(McpServerStartError) as info:
            await create_server(ServerConfig(db=None, mcp_servers={"nope": "agentmsg-no-such-mcp-server --x"}))
        assert "hosted MCP server 'mcp:nope'" in str(info.value)
        assert "(the command cannot run)" in str(info.value)

    run(main)


def test_cli_serve_mcp_hosts_the_server(tmp_path: Path) -> None:
    """``agentmsg serve --mcp NAME=COMMAND``: the tools are served as NAME.TOOL and say so at start."""
    from serverproc import ServerProcess

    command = f"{sys.executable} {SERVERS / 'fast_server.py'}"
    server = ServerProcess("--memory", "--mcp", f"fast={command}")
    said = f"agentmsg hosting MCP server fast ({command}): 5 tool(s) as fast.*"
    try:

        async def main() -> None:
            await until(lambda: any(said in line for line in server.output), "the hosting line")
            async with AsyncClient(server.target) as client:
                added = await client.call_tool(am.ToolCallContent("c1", "fast.add", {"a": 20, "b": 22}))
                assert json.loads(added.text) == 42

        run(main)
    finally:
        assert server.stop()


@pytest.mark.parametrize("entry", ["fast", "=cmd", "fast="])
def test_cli_refuses_a_malformed_mcp_entry(entry: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agentmsg.cli import main

    assert main(["serve", "--memory", "--port", "0", "--mcp", entry]) == 2
    assert "--mcp: expected NAME=COMMAND or NAME=URL" in capsys.readouterr().err


def test_without_the_mcp_extra_mcp_fails_with_a_clear_message() -> None:
    """Without the mcp SDK, ``--mcp`` (and ``mcp_servers``) are refused saying which extra to install."""
    script = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"  # as if the mcp extra were not installed
        "sys.modules['mcp_types'] = None\n"
        "from agentmsg.cli import main\n"
        "sys.exit(main(['serve', '--memory', '--port', '0', '--mcp', 'x=some-server']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "needs the mcp extra (pip install 'agentmsg[mcp]')" in done.stderr
    assert "agentmsg serving on" not in done.stdout


def test_a_hosted_server_over_streamable_http(tmp_path: Path) -> None:
    """``NAME=URL``: reached over streamable HTTP. One not up yet does not hold the server's start; its tools are
    served once it answers, and a deadline reaches it as a cancel."""

    async def main() -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        log = tmp_path / "log"
        url = f"http://127.0.0.1:{port}/mcp"
        running = await create_server(ServerConfig(db=None, mcp_servers={"web": url}))
        server = None
        try:
            hosted = running.mcp["web"]
            assert not hosted.registered.is_set()  # nothing listens there yet: the server started anyway
            assert hosted.last_error is not None
            assert url in hosted.last_error
            env = {**os.environ, "MCP_TEST_LOG": str(log)}
            server = await asyncio.create_subprocess_exec(
                sys.executable,
                str(SERVERS / "fast_server.py"),
                "--http",
                str(port),
                env=env,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await until(hosted.registered.is_set, "the tools once the MCP server answers")
            async with AsyncClient(f"127.0.0.1:{running.port}") as client:
                added = await client.call_tool(am.ToolCallContent("h1", "web.add", {"a": 1, "b": 2}))
                assert added.text == "3"
                with pytest.raises(am.DeadlineExceededError):
                    await client.call_tool(
                        am.ToolCallContent("h2", "web.slow", {"seconds": 60, "tag": "http"}), timeout=2
                    )
                await until(lambda: "cancelled http" in _log(log), "the cancel over HTTP")
        finally:
            await running.stop(0)
            if server is not None:
                server.terminate()
                await server.wait()

    run(main)


def test_cli_serve_exits_2_when_a_hosted_command_cannot_run() -> None:
    command = [sys.executable, "-m", "agentmsg", "serve", "--memory", "--port", "0"]
    done = subprocess.run(
        [*command, "--mcp", "nope=agentmsg-no-such-mcp-server --x"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "hosted MCP server 'mcp:nope'" in done.stderr
    assert "(the command cannot run)" in done.stderr
    assert "agentmsg serving on" not in done.stdout
