"""A pydantic-ai history read back as an OpenAI Agents session and as an Anthropic request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from serverproc import ServerProcess
from test_pydantic_ai import Scripted, make_agent, run

from agentmsg.frameworks.openai_agents import AgentmsgSession
from agentmsg.frameworks.pydantic_ai import AgentHistory
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.anthropic import to_anthropic
from agentmsg.service import AsyncClient, Client


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


def test_a_pydantic_ai_history_as_agents_items_and_anthropic(server: ServerProcess) -> None:
    agent = make_agent(Scripted())
    first = run(agent, "Weather in Paris?")
    second = run(agent, "And Lyon?", message_history=first.all_messages())
    with Client(server.target) as client:
        AgentHistory(client, "cross").save(second.all_messages())
        context = client.build_context("cross")

    # as an OpenAI Agents session: the calls keep their results, Anthropic's signatures are not OpenAI's to replay
    async def items() -> tuple[list[Any], ConversionReport]:
        async with AsyncClient(server.target) as client:
            session = AgentmsgSession("cross", client, model="gpt-5")
            return await session.get_items(), session.report

    agents_items, agents_report = asyncio.run(items())
    calls = [i["call_id"] for i in agents_items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in agents_items if i.get("type") == "function_call_output"]
    assert calls == outputs == ["call_1", "call_3"]
    positions = {i.get("call_id"): n for n, i in enumerate(agents_items) if i.get("type") == "function_call"}
    for n, item in enumerate(agents_items):
        if item.get("type") == "function_call_output":
            assert positions[item["call_id"]] < n
    assert not any(i.get("encrypted_content") for i in agents_items)
    # one loss per signed thinking block (the Responses format has no place for reasoning text alone), and the
    # pydantic-ai request stash, which is no model's input
    reasoning = [loss for loss in agents_report.losses if loss.what == "thinking"]
    assert len(reasoning) == 2, agents_report.summary()
    assert all("reasoning goes back only to the provider" in loss.reason for loss in reasoning)
    others = [loss for loss in agents_report.losses if loss.what != "thinking"]
    assert all(loss.what == "pydantic-ai model_request block" for loss in others), agents_report.summary()

    # as an Anthropic request: the same pairing, and the signatures go back to the provider that made them
    report = ConversionReport()
    payload = to_anthropic(context, report=report)
    blocks = [b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["call_1", "call_3"]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["call_1", "call_3"]
    assert [b["signature"] for b in blocks if b["type"] == "thinking"] == ["sig-1", "sig-3"]
    assert not [loss for loss in report.losses if "thinking" in loss.what or "signature" in loss.what]

    # and for another Anthropic model, the replay rule drops them, reported
    other = ConversionReport()
    payload = to_anthropic(context, report=other, model="claude-opus-4-5")
    blocks = [b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert not [b for b in blocks if b["type"] == "thinking" and b.get("signature")]
    assert len([loss for loss in other.losses if "signature" in loss.what or "thinking" in loss.what]) == 2, (
        other.summary()
    )
