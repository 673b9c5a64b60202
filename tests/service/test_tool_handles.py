"""Tool calls identified per caller: the runner gets a handle per call, the model's call id goes through
unchanged, error results carry the call's name and index, and a deadline reaches the runner as one."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from conftest import RunnerThread, ServerThread

import agentmsg as am
from agentmsg.service import AsyncClient, Client, ToolRunner
from agentmsg.service.access import Scope
from agentmsg.v1 import content_pb2, tool_pb2, tool_service_pb2, tool_service_pb2_grpc

GRANTS = {
    "acme": Scope.parse("acme:*,tools:call"),
    "globex": Scope.parse("globex:*,tools:call"),
    "runner": Scope.parse("tools:serve"),
}


def test_two_tenants_with_the_same_call_id_both_get_their_answer(
    make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread]
) -> None:
    server = make_server(grants=GRANTS)
    runner = ToolRunner(server.target, name="shared", token="runner")
    both_arrived = threading.Barrier(2, timeout=10)
    seen_ids: list[str] = []

    @runner.tool
    def whoami(tenant: str) -> str:
        both_arrived.wait()  # the two calls are in flight at once
        return f"answer for {tenant}"

    @runner.tool(name="record_id")
    def record(call_id: str) -> str:
        seen_ids.append(call_id)
        return "ok"

    start_runner(runner)
    results: dict[str, am.ToolResultContent | BaseException] = {}

    def call(tenant: str) -> None:
        with Client(server.target, token=tenant, timeout=20) as client:
            try:
                results[tenant] = client.call_tool(am.ToolCallContent("call_1", "whoami", {"tenant": tenant}))
            except BaseException as exc:
                results[tenant] = exc

    callers = [threading.Thread(target=call, args=(tenant,)) for tenant in ("acme", "globex")]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(60)
    for tenant in ("acme", "globex"):
        result = results[tenant]
        assert isinstance(result, am.ToolResultContent), result
        assert result.id == "call_1"  # the model's id comes back unchanged
        assert not result.is_error
        assert result.text == f"answer for {tenant}"  # each its own answer: nothing of the other's


def test_the_runner_sees_the_models_call_id_unchanged(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    runner = ToolRunner(server.target)
    seen: list[tuple[str, int]] = []

    @runner.tool
    def probe() -> str:
        return "ok"

    original = runner.call

    async def spy(call: am.ToolCallContent) -> am.ToolResultContent:
        seen.append((call.id, call.index))
        return await original(call)

    runner.call = spy  # type: ignore[method-assign]
    start_runner(runner)
    result = client.call_tool(am.ToolCallContent("toolu_01A", "probe", {}, index=2))
    assert seen == [("toolu_01A", 2)]
    assert (result.id, result.text) == ("toolu_01A", "ok")


def test_an_error_result_after_a_runner_disconnect_carries_name_and_index(
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
            outcome.append(client.call_tool(am.ToolCallContent("call_7", "hang", {}, index=3), timeout=60))
        except am.AgentMsgError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert started.wait(60)
    thread.stop()
    caller.join(90)
    (result,) = outcome  # the disconnection, as an error result: not the call's deadline
    assert isinstance(result, am.ToolResultContent), result
    assert result.is_error
    assert (result.id, result.name, result.index) == ("call_7", "hang", 3)
    assert "disconnected" in result.text


async def _raw_runner(target: str, answer_without_handle: bool) -> AsyncIterator[tool_service_pb2.ServeToolsResponse]:
    """A runner at the gRPC level, to see exactly what the service sends it."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
        tool = tool_pb2.ToolDefinition(name="raw", description="d", parameters='{"type":"object"}')
        await stream.write(
            tool_service_pb2.ServeToolsRequest(register=tool_service_pb2.RegisterTools(runner_name="raw", tools=[tool]))
        )
        while (read := await stream.read()) is not grpc.aio.EOF:
            response: tool_service_pb2.ServeToolsResponse = read  # type: ignore[assignment]
            if response.WhichOneof("kind") == "run" and response.run.call.id.startswith("answer"):
                result = content_pb2.ToolResultContent(id=response.run.call.id, name="raw")
                result.content.add().text.text = "answered"
                handle = "" if answer_without_handle else response.run.handle
                outcome = tool_service_pb2.ToolCallOutcome(call_id=response.run.call.id, result=result, handle=handle)
                await stream.write(tool_service_pb2.ServeToolsRequest(outcome=outcome))
            yield response
        stream.cancel()


@pytest.mark.parametrize("attempt", range(3))
def test_a_deadline_reaches_the_runner_as_deadline_exceeded(server: ServerThread, attempt: int) -> None:
    async def scenario() -> tool_service_pb2.CancelToolCall:
        responses = _raw_runner(server.target, answer_without_handle=False)
        assert (await anext(responses)).WhichOneof("kind") == "registered"
        async with AsyncClient(server.target) as client:
            # A deadline long enough to reach the runner on a loaded machine; the runner never answers.
            call = asyncio.ensure_future(client.call_tool(am.ToolCallContent("slow_1", "raw", {}), timeout=2))
            run = await asyncio.wait_for(anext(responses), 60)
            assert run.run.call.id == "slow_1"
            assert run.run.handle
            cancel = await asyncio.wait_for(anext(responses), 60)
            with pytest.raises(am.DeadlineExceededError):
                await call
        await responses.aclose()
        assert cancel.cancel.handle == run.run.handle
        return cancel.cancel

    cancel = asyncio.run(scenario())
    assert (cancel.call_id, cancel.reason) == ("slow_1", "deadline_exceeded")


def test_a_runner_older_than_handles_is_matched_by_call_id(server: ServerThread) -> None:
    async def scenario() -> am.ToolResultContent:
        responses = _raw_runner(server.target, answer_without_handle=True)
        await anext(responses)
        async with AsyncClient(server.target) as client:
            call = asyncio.ensure_future(client.call_tool(am.ToolCallContent("answer_1", "raw", {}), timeout=10))
            await anext(responses)
            result = await asyncio.wait_for(call, 10)
        await responses.aclose()
        return result

    result = asyncio.run(scenario())
    assert (result.id, result.text, result.is_error) == ("answer_1", "answered", False)
