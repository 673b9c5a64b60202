"""Human approval across languages: a Python engine's call of a tool that requires approval waits; a TypeScript
client (sdk/typescript/interop/approver.ts, ``Client.decide``) approves it and the tool runs, or denies it and the
engine gets the denial; a TypeScript decision on a call the session does not hold is refused with its violation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from tstools import LoopThread, PythonServer, built_sdk, run_ts

import agentmsg as am
from agentmsg.service import Client, ServerConfig, ToolRunner

SESSION = "ts-approval"


@pytest.fixture(scope="module")
def node() -> str:
    return built_sdk()


@pytest.fixture
def server() -> Iterator[PythonServer]:
    running = PythonServer(ServerConfig(db=None))
    try:
        yield running
    finally:
        running.close()


class Runner:
    """A Python runner whose ``wire_money`` requires approval; the amounts it ran with."""

    def __init__(self, target: str) -> None:
        self.runs: list[int] = []
        self.runner = ToolRunner(target, name="bank")

        @self.runner.tool(requires_approval=True)
        def wire_money(amount: int) -> str:
            """Send money."""
            self.runs.append(amount)
            return f"sent {amount}"

        self.loop = LoopThread()
        self.served: Future[None] = asyncio.run_coroutine_threadsafe(self.runner.serve(), self.loop.loop)
        self.loop.run(asyncio.wait_for(self.runner.registered.wait(), 10))

    def close(self) -> None:
        self.served.cancel()
        self.loop.close()


def test_a_typescript_client_approves_and_denies_a_python_engines_calls(node: str, server: PythonServer) -> None:
    runner = Runner(server.target)
    try:
        with Client(server.target, timeout=10) as engine, ThreadPoolExecutor(1) as pool:
            approved = am.ToolCallContent("call_a", "wire_money", {"amount": 5})
            denied = am.ToolCallContent("call_b", "wire_money", {"amount": 500})
            engine.append(SESSION, am.UserMessage.text("pay the bills"))
            engine.append(SESSION, am.AssistantMessage([approved, denied], stop_reason="tool_calls"))
            waiting = pool.submit(engine.call_tool, approved, timeout=60, session_id=SESSION)
            assert run_ts(node, "approver", server.target, SESSION, "call_a", "approve")["offset"] == 3
            result = waiting.result(60)
            assert (result.text, result.is_error) == ("sent 5", False)
            assert run_ts(node, "approver", server.target, SESSION, "call_b", "deny", "too much")["offset"] == 4
            refusal = engine.call_tool(denied, timeout=60, session_id=SESSION)
            assert refusal.is_error
            assert refusal.text == "The tool call was denied by ts-reviewer: too much"
            refused = run_ts(node, "approver", server.target, SESSION, "call_ghost", "approve")
            assert refused["error"] == "ValidationError"
            assert refused["fields"] == [["message.user.content[0].approval.call_id", "session.approval.call"]]
            # The log holds the TypeScript decisions as the contract's approval blocks.
            decisions = [
                block
                for message in engine.build_context(SESSION)
                for block in message.contents
                if isinstance(block, am.ToolApprovalContent)
            ]
            assert [(d.call_id, d.approved, d.decided_by) for d in decisions] == [
                ("call_a", True, "ts-reviewer"),
                ("call_b", False, "ts-reviewer"),
            ]
            assert all(d.decided_at is not None for d in decisions)
    finally:
        runner.close()
    assert runner.runs == [5]
