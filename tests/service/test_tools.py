"""Tool runners and tool calls through a real server: round trip, deadline, cancellation, disconnect."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable

import pytest
from conftest import RunnerThread, ServerThread

import agentmsg as am
from agentmsg import formats
from agentmsg.formats import ConversionReport
from agentmsg.service import RUN_METADATA_KEY, AsyncClient, Client, ToolRunner, schema_for


def test_a_tool_call_round_trip(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    runner = ToolRunner(server.target, name="math")

    @runner.tool(kind="execute")
    def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        return a + b

    @runner.tool
    async def describe(item: str, tags: list[str] | None = None) -> list[am.ContentBase]:
        return [am.TextContent(f"{item}: {', '.join(tags or [])}")]

    @runner.tool(name="fail")
    def broken() -> str:
        raise RuntimeError("disk on fire")

    start_runner(runner)
    tools = {t.tool.name: t for t in client.list_tools()}
    assert sorted(tools) == ["add", "describe", "fail"]
    assert tools["add"].runner_name == "math"
    assert tools["add"].tool.kind is am.ToolKind.EXECUTE
    assert tools["add"].tool.description == "Add two integers."
    assert tools["add"].tool.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    result = client.call_tool(am.ToolCallContent("call_1", "add", {"a": 40}))
    assert (result.id, result.name, result.text, result.is_error) == ("call_1", "add", "42", False)
    described = client.call_tool(am.ToolCallContent("call_2", "describe", {"item": "cat", "tags": ["a", "b"]}))
    assert described.text == "cat: a, b"
    failed = client.call_tool(am.ToolCallContent("call_3", "fail"))
    assert failed.is_error
    assert "RuntimeError: disk on fire" in failed.text
    bad_args = client.call_tool(am.ToolCallContent("call_4", "add", arguments='{"a": '))
    assert bad_args.is_error
    assert "invalid arguments" in bad_args.text
    wrong_args = client.call_tool(am.ToolCallContent("call_5", "add", {"c": 1}))
    assert wrong_args.is_error
    assert "TypeError" in wrong_args.text


def test_a_result_records_its_runner_and_latency_beside_the_runners_metadata(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    runner = ToolRunner(server.target, name="clock")

    @runner.tool
    def noted(note: str) -> am.ToolResultContent:
        return am.ToolResultContent("ignored", note, metadata={"by": "runner", "agentmsg": 1})

    runner.tool(lambda: "ok", name="plain")
    start_runner(runner)
    registered = {t.tool.name: t for t in client.list_tools()}["noted"]
    result = client.call_tool(am.ToolCallContent("c1", "noted", {"note": "hi"}))
    run = result.metadata[RUN_METADATA_KEY]
    assert (run["runner"], run["runner_id"]) == ("clock", registered.runner_id)
    assert isinstance(run["latency_ms"], float)
    assert run["latency_ms"] >= 0
    assert (result.metadata["by"], result.metadata["agentmsg"]) == ("runner", 1)  # the runner's own keys kept
    assert set(client.call_tool(am.ToolCallContent("c2", "plain")).metadata) == {RUN_METADATA_KEY}
    # Never sent to a model: a provider request made from the result has no trace of it.
    request = formats.write("openai-chat", [am.ToolMessage.from_result(result)], report=ConversionReport())
    assert "latency_ms" not in json.dumps(request)


def test_unknown_tools_and_taken_names(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    with pytest.raises(am.NotFoundError, match="no runner serves the tool 'ghost'"):
        client.call_tool(am.ToolCallContent("c", "ghost"))
    first = ToolRunner(server.target, name="one")
    first.tool(lambda: "x", name="shared")
    start_runner(first)
    second = ToolRunner(server.target, name="two")
    second.tool(lambda: "y", name="shared")
    with pytest.raises(am.ConflictError, match="already served: shared"):
        asyncio.run(second.serve())


def test_the_deadline_reaches_the_runner(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    cancelled = threading.Event()
    runner = ToolRunner(server.target)

    @runner.tool
    async def slow(seconds: float) -> str:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "finished"

    start_runner(runner)
    with pytest.raises(am.DeadlineExceededError):
        client.call_tool(am.ToolCallContent("c1", "slow", {"seconds": 600}), timeout=0.5)
    # Only the deadline ends a 600 s sleep within the wait: the runner's task was cancelled, not finished.
    assert cancelled.wait(60), "the runner's task was not cancelled"
    assert client.call_tool(am.ToolCallContent("c2", "slow", {"seconds": 0})).text == "finished"


def test_a_cancelled_call_cancels_the_runner_task(
    server: ServerThread, start_runner: Callable[..., RunnerThread]
) -> None:
    cancelled = threading.Event()
    started = threading.Event()
    runner = ToolRunner(server.target)

    @runner.tool
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    start_runner(runner)

    async def call_then_cancel() -> None:
        async with AsyncClient(server.target) as client:
            task = asyncio.ensure_future(client.call_tool(am.ToolCallContent("c1", "wait_forever")))
            assert await asyncio.to_thread(started.wait, 60)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(call_then_cancel())
    assert cancelled.wait(60)


def test_a_runner_that_leaves_mid_call_gives_an_error_result(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    started = threading.Event()
    runner = ToolRunner(server.target, name="flaky")

    @runner.tool
    async def hang() -> str:
        started.set()
        await asyncio.sleep(600)
        return "never"

    thread = start_runner(runner)
    outcome: list[am.ToolResultContent | am.AgentMsgError] = []

    def call() -> None:
        try:
            outcome.append(client.call_tool(am.ToolCallContent("c", "hang"), timeout=60))
        except am.AgentMsgError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert started.wait(60)
    thread.stop()  # the runner process goes away
    caller.join(90)
    # The answer is the disconnection (an error result), not the call's deadline (DeadlineExceededError).
    (result,) = outcome
    assert isinstance(result, am.ToolResultContent), result
    assert result.is_error
    assert "tool runner 'flaky' disconnected" in result.text
    assert client.list_tools() == []


def test_schema_for_reads_annotations() -> None:
    def f(
        name: str,
        count: int,
        ratio: float,
        flag: bool,
        items: list[int],
        extra: dict[str, int],
        maybe: str | None = None,
    ) -> None: ...

    schema = schema_for(f)
    assert schema["required"] == ["name", "count", "ratio", "flag", "items", "extra"]
    assert schema["properties"]["items"] == {"type": "array", "items": {"type": "integer"}}
    assert schema["properties"]["maybe"] == {"type": "string"}
    assert schema["properties"]["extra"] == {"type": "object"}


def test_a_runner_needs_tools_and_unique_names() -> None:
    runner = ToolRunner("127.0.0.1:1")
    with pytest.raises(am.ValidationError, match="at least one tool"):
        asyncio.run(runner.serve())
    runner.tool(lambda: 1, name="x")
    with pytest.raises(am.ValidationError, match="registered twice"):
        runner.tool(lambda: 2, name="x")
