"""MCP both ways with real parts: the reference server (@modelcontextprotocol/server-everything, from npm) and an
SDK MCPServer behind McpRunner, the SDK's client in front of the agentmsg MCP server, an agentmsg server between."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcphelpers import SERVERS, agentmsg_server, dump, everything, fast, require_everything, run, serving, until

import agentmsg as am
from agentmsg.mcp import McpRunner, McpServerStartError, create_mcp_server, serve_http, stdio_server
from agentmsg.providers.mcp import structured_content
from agentmsg.service import AsyncClient

# The reference server's tools with every content kind, and the arguments the tests call them with.
CALLS = [
    ("echo", {"message": "hello"}),  # text
    ("get-tiny-image", {}),  # image
    ("get-structured-content", {"location": "Chicago"}),  # structuredContent
    ("get-resource-links", {"count": 3}),  # resource links
    ("get-resource-reference", {"resourceType": "Blob", "resourceId": 2}),  # embedded blob resource
    ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),  # embedded text resource
    ("get-annotated-message", {"messageType": "success", "includeImage": True}),  # annotations
    ("get-sum", {"a": 2, "b": 40}),
]


def test_whole_loop(tmp_path: Path) -> None:
    """MCP client -> agentmsg mcp serve -> agentmsg server -> agentmsg mcp runner -> MCP server, and back."""
    require_everything()

    async def main(tmp: Path) -> None:
        log = tmp / "cancelled.log"
        async with agentmsg_server() as target, AsyncClient(target) as client:
            direct = Client(everything(), mode="legacy")
            async with (
                serving(McpRunner(target, everything(), prefix="ev.")) as ev,
                serving(McpRunner(target, fast(log), prefix="fast.")) as fa,
                direct,
            ):
                await until(lambda: ev.registered.is_set() and fa.registered.is_set(), "both runners")
                bridge = create_mcp_server(client, call_timeout=3.0)
                web = asyncio.ensure_future(serve_http(bridge, 0))
                await until(lambda: bridge.http_port is not None, "the MCP endpoint")
                async with Client(f"http://127.0.0.1:{bridge.http_port}/mcp") as mcp:
                    listed = {t.name: t for t in (await mcp.list_tools()).tools}
                    straight = {t.name: t for t in (await direct.list_tools()).tools}
                    for name, tool in straight.items():  # definitions arrive as the reference server wrote them
                        through = listed["ev." + name]
                        assert through.input_schema == tool.input_schema
                        assert through.output_schema == tool.output_schema
                        assert through.title == tool.title
                        assert through.description == tool.description
                        assert through.annotations == tool.annotations
                    for name, args in CALLS:
                        expected = dump(await direct.call_tool(name, args))
                        got = dump(await mcp.call_tool("ev." + name, args))
                        if name == "get-resource-reference" and args["resourceType"] == "Text":
                            for part in (expected, got):  # this resource's text holds the time it was made
                                part["content"][1]["resource"]["text"] = part["content"][1]["resource"]["text"][:20]
                        assert got == expected, name
                    kinds = set()
                    for name, args in CALLS:
                        kinds |= {b["type"] for b in dump(await direct.call_tool(name, args))["content"]}
                    assert kinds == {"text", "image", "resource", "resource_link"}

                    # structured result from the SDK server, and an error result
                    added = await mcp.call_tool("fast.add", {"a": 2, "b": 3})
                    assert added.structured_content == {"result": 5}
                    assert not added.is_error
                    failed = await mcp.call_tool("fast.fail", {"reason": "boom"})
                    assert failed.is_error
                    assert "fail" in failed.content[0].text  # type: ignore[union-attr]

                    # a call the MCP client cancels: the MCP server behind the runner hears of it
                    call = asyncio.ensure_future(mcp.call_tool("fast.slow", {"seconds": 60, "tag": "by-client"}))
                    await until(lambda: "started by-client" in (log.read_text() if log.exists() else ""), "the call")
                    call.cancel()
                    await asyncio.gather(call, return_exceptions=True)
                    await until(lambda: "cancelled by-client" in (log.read_text() if log.exists() else ""), "cancel")

                    # a slow call hitting the bridge's deadline: an MCP error, and the call cancelled behind
                    with pytest.raises(MCPError, match=r"(?i)deadline"):
                        await mcp.call_tool("fast.slow", {"seconds": 60, "tag": "deadline"})
                    await until(lambda: "cancelled deadline" in log.read_text(), "the deadline's cancel")

                    # an unknown tool is an MCP error
                    with pytest.raises(MCPError, match="unknown tool"):
                        await mcp.call_tool("nope", {})
                web.cancel()
                await asyncio.gather(web, return_exceptions=True)

    run(lambda: main(tmp_path))


def test_runner_results_as_blocks() -> None:
    """What an engine gets through CallTool: agentmsg blocks, the structured part beside them."""
    require_everything()

    async def main() -> None:
        async with (
            agentmsg_server() as target,
            AsyncClient(target) as client,
            serving(McpRunner(target, everything())) as runner,
        ):
            await until(runner.registered.is_set, "registration")
            tools = {t.tool.name: t.tool for t in await client.list_tools()}
            assert tools["echo"].kind is am.ToolKind.MCP
            assert tools["echo"].read_only_hint is True
            image = await client.call_tool(am.ToolCallContent("c1", "get-tiny-image", {}))
            png = [b for b in image.blocks if isinstance(b, am.ImageContent)]
            assert png
            assert png[0].media_type == "image/png"
            assert png[0].data.startswith(b"\x89PNG")
            weather = await client.call_tool(
                am.ToolCallContent("c2", "get-structured-content", {"location": "Chicago"})
            )
            assert structured_content(weather) == json.loads(weather.text)
            links = await client.call_tool(am.ToolCallContent("c3", "get-resource-links", {"count": 2}))
            docs = [b for b in links.blocks if isinstance(b, am.DocumentContent)]
            assert [d.url for d in docs] == ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]
            blob = await client.call_tool(
                am.ToolCallContent("c4", "get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
            )
            doc = next(b for b in blob.blocks if isinstance(b, am.DocumentContent))
            assert doc.filename == "demo://resource/dynamic/blob/2"
            assert doc.data

    run(main)


def test_bad_input_keeps_the_other_tools() -> None:
    """A tool schema that is not JSON, a malformed result, a server that dies mid-call: clear errors, others serve."""

    async def main() -> None:
        async with agentmsg_server() as target, AsyncClient(target) as client:
            odd = stdio_server(sys.executable, [str(SERVERS / "odd_server.py")])
            async with serving(McpRunner(target, odd, restart_delay=0.1)) as runner:
                await until(runner.registered.is_set, "registration")
                assert sorted(t.tool.name for t in await client.list_tools()) == ["ask", "exit", "good", "malformed"]
                assert "inputSchema" in runner.problems["bad-schema"]
                assert "not JSON" in runner.problems["bad-schema"]
                assert "two tools by this name" in runner.problems["good"]
                bad = await client.call_tool(am.ToolCallContent("c1", "malformed", {}))
                assert bad.is_error
                assert "malformed" in bad.text
                assert "content[0].data" in bad.text
                good = await client.call_tool(am.ToolCallContent("c2", "good", {}))
                assert (good.is_error, good.text) == (False, "ok")
                died = await client.call_tool(am.ToolCallContent("c3", "exit", {}))
                assert died.is_error
                assert "went away" in died.text
                await until(lambda: runner.restarts >= 1 and runner.connected.is_set(), "the restart")
                again = await client.call_tool(am.ToolCallContent("c4", "good", {}))
                assert (again.is_error, again.text) == (False, "ok")

    run(main)


def test_server_that_exits_at_start() -> None:
    """A server that never starts: a clear error, retried with backoff, and calls get error results."""

    async def main() -> None:
        async with agentmsg_server() as target:
            broken = stdio_server(sys.executable, [str(SERVERS / "odd_server.py"), "--exit-at-start"])
            async with serving(McpRunner(target, broken, restart_delay=0.05, max_restart_delay=0.2)) as runner:
                await until(lambda: runner.restarts >= 2, "restarts")
                assert runner.last_error is not None
                assert "odd_server.py --exit-at-start" in runner.last_error
                assert "did not start" in runner.last_error
                assert "Connection closed" in runner.last_error
                assert not runner.registered.is_set()

    run(main)


def test_list_changed_re_registers(tmp_path: Path) -> None:
    """A server's notifications/tools/list_changed: the runner lists again and re-registers the new tools."""

    async def main() -> None:
        async with (
            agentmsg_server() as target,
            AsyncClient(target) as client,
            serving(McpRunner(target, fast(tmp_path / "log"), prefix="fast.")) as runner,
        ):
            await until(runner.registered.is_set, "registration")
            first = runner.runner_id
            grown = await client.call_tool(am.ToolCallContent("c1", "fast.grow", {"name": "sprout"}))
            assert grown.text == "added sprout"
            await until(lambda: runner.registered.is_set() and runner.runner_id != first, "re-registration")
            names = {t.tool.name for t in await client.list_tools()}
            assert {"fast.add", "fast.sprout"} <= names
            sprout = await client.call_tool(am.ToolCallContent("c2", "fast.sprout", {}))
            assert sprout.text == "sprout is here"

    run(main)


def test_a_server_that_never_comes_up_stops_the_runner_with_a_clear_error() -> None:
    """Not forever: after ``start_attempts`` failed starts in a row (and never up), ``serve`` raises, saying why."""

    async def main() -> None:
        async with agentmsg_server() as target:
            broken = stdio_server(sys.executable, [str(SERVERS / "odd_server.py"), "--exit-at-start"])
            runner = McpRunner(target, broken, restart_delay=0.01, max_restart_delay=0.02, start_attempts=3)
            with pytest.raises(McpServerStartError) as info:
                await runner.serve()
            assert "odd_server.py --exit-at-start did not start" in str(info.value)
            assert str(info.value).endswith("(gave up after 3 attempts in a row)")
            assert runner.restarts == 2
            assert not runner.registered.is_set()

    run(main)


def test_a_command_that_does_not_exist_stops_the_runner_at_once() -> None:
    async def main() -> None:
        async with agentmsg_server() as target:
            runner = McpRunner(target, stdio_server("agentmsg-no-such-mcp-server", ["--x"]), restart_delay=5)
            with pytest.raises(McpServerStartError) as info:
                await runner.serve()
            assert "agentmsg-no-such-mcp-server --x did not start" in str(info.value)
            assert "FileNotFoundError" in str(info.value)
            assert str(info.value).endswith("(the command cannot run)")
            assert runner.restarts == 0

    run(main)


def test_start_attempts_must_be_positive() -> None:
    with pytest.raises(am.ValidationError) as info:
        McpRunner("127.0.0.1:1", stdio_server("x"), start_attempts=0)
    assert info.value.violations[0].field == "start_attempts"
