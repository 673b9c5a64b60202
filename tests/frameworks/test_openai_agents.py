"""The Agents SDK's items both ways, and its Session over the agentmsg service, across two processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Runner, SQLiteSession
from agents.memory import Session as SDKSession
from agents_script import ScriptedModel, make_agent, turn
from hypothesis import given, settings
from hypothesis import strategies as st
from serverproc import ServerProcess

from agentmsg import AssistantMessage, CustomMessage, ThinkingContent, ToolCallContent, ValidationError
from agentmsg.frameworks.openai_agents import POP_MARKER, AgentmsgSession, from_openai_agents, to_openai_agents
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.anthropic import to_anthropic
from agentmsg.service import AsyncClient, Client

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


async def sdk_items(question: str) -> list[Any]:
    """The items the SDK's own SQLite session holds after one scripted turn."""
    session = SQLiteSession("reference")
    await Runner.run(make_agent(ScriptedModel("ref")), question, session=session)
    return await session.get_items()


def test_the_sdks_items_round_trip() -> None:
    items = asyncio.run(sdk_items("Weather?"))
    assert [i.get("type", "message") for i in items] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "message",
    ]
    messages = from_openai_agents(items)
    assistant = messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert [type(b).__name__ for b in assistant.contents if not b.__class__.__name__.startswith("Provider")] == [
        "ThinkingContent",
        "ToolCallContent",
    ]
    call = next(b for b in assistant.contents if isinstance(b, ToolCallContent))
    assert call.arguments == '{"city": "Paris"}'
    report = ConversionReport()
    assert to_openai_agents(messages, report=report) == items
    assert report.losses == []


def test_run_items_and_models_are_read() -> None:
    model = ScriptedModel("x")
    result = asyncio.run(Runner.run(make_agent(model), "Weather?"))
    from_run_items = from_openai_agents(result.new_items)
    from_inputs = from_openai_agents(result.to_input_list()[1:])
    assert to_openai_agents(from_run_items) == to_openai_agents(from_inputs)
    with pytest.raises(ValidationError, match=r"\[0\]"):
        from_openai_agents([object()])
    with pytest.raises(ValidationError, match="list of items"):
        from_openai_agents({"type": "message"})  # type: ignore[arg-type]


def test_session_continues_in_another_process(tmp_path: Path) -> None:
    session_id = "agents-two-processes"
    db = str(tmp_path / "agents.db")
    server = ServerProcess("--db", db)
    try:
        final, seen_here = asyncio.run(turn(server.target, session_id, "Weather in Paris?", "p1"))
    finally:
        server.stop()
    assert final == "p1: sunny"
    # the service log is the SDK's own items, converted: what its SQLite session holds for the same turn
    reference = asyncio.run(sdk_items("Weather in Paris?"))
    server = ServerProcess("--db", db)  # a restarted server on the same store
    try:
        with Client(server.target) as client:
            first_turn = to_openai_agents(client.build_context(session_id))
        assert len(first_turn) == len(reference) == 5
        assert first_turn[0] == {"content": "Weather in Paris?", "role": "user"}
        assert [renamed(i) for i in first_turn] == [renamed(i, "ref") for i in reference]
        continue_elsewhere(server, session_id, first_turn)
        check_both_turns(server, session_id)
    finally:
        server.stop()
    assert seen_here[0] == [{"content": "Weather in Paris?", "role": "user"}]


def renamed(item: dict[str, Any], tag: str = "p1") -> dict[str, Any]:
    """The item with the scripted model's tag taken out of its ids (the two runs tag their ids apart)."""
    text = json.dumps(item).replace(f"_{tag}_", "_").replace(f"-{tag}-", "-").replace(f'"{tag}: ', '"')
    return json.loads(text)  # type: ignore[no-any-return]


def continue_elsewhere(server: ServerProcess, session_id: str, first_turn: list[Any]) -> None:

    done = subprocess.run(  # the second process: its own client, its own Runner, the same session
        [sys.executable, str(HERE / "agents_script.py"), server.target, session_id, "And tomorrow?", "p2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    there = json.loads(done.stdout.strip().splitlines()[-1])
    assert there["final"] == "p2: sunny"
    # the other process's model was given the whole first turn, as this process's session holds it
    assert there["seen"][0][: len(first_turn)] == first_turn
    assert there["seen"][0][len(first_turn)] == {"content": "And tomorrow?", "role": "user"}


def check_both_turns(server: ServerProcess, session_id: str) -> None:
    async def after() -> tuple[list[Any], list[Any]]:
        async with AsyncClient(server.target) as client:
            session = AgentmsgSession(session_id, client)
            return await session.get_items(), await session.get_items(limit=2)

    everything, last_two = asyncio.run(after())
    assert len(everything) == 10
    assert everything[-1]["content"][0]["text"] == "p2: sunny"
    assert last_two == everything[-2:]


def test_pop_and_clear(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with AsyncClient(server.target) as client:
            session = AgentmsgSession("agents-pop", client)
            assert isinstance(session, SDKSession)
            assert await session.pop_item() is None
            items = await sdk_items("Weather?")
            await session.add_items(items)
            assert await session.get_items() == items
            assert await session.pop_item() == items[-1]  # the whole last message: a marker entry
            assert await session.get_items() == items[:-1]
            assert await session.pop_item() == items[-2]  # a tool result
            assert await session.pop_item() == items[-3]  # the call, out of reasoning + call
            assert await session.get_items() == items[:2]
            log = [logged.message async for logged in client.history("agents-pop")]
            assert any(isinstance(m, CustomMessage) and m.custom_type == POP_MARKER for m in log)
            await session.add_items(items[2:])
            assert await session.get_items() == items
            await session.clear_session()
            assert await session.get_items() == []
            await session.add_items(items[:1])
            assert await session.pop_item() == items[0]
            assert await session.get_items() == []

    asyncio.run(scenario())


def test_session_reads_as_anthropic_with_the_replay_rule(server: ServerProcess) -> None:
    asyncio.run(turn(server.target, "agents-anthropic", "Weather?", "a"))
    with Client(server.target) as client:
        context = client.build_context("agents-anthropic")
    report = ConversionReport()
    payload = to_anthropic(context, report=report)
    uses = [b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]]
    calls = [b["id"] for b in uses if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in uses if b["type"] == "tool_result"]
    assert calls == results == ["call_a_1"]
    assert not any(b["type"] == "thinking" and b.get("signature") for b in uses)
    # OpenAI's encrypted reasoning is not Anthropic's to replay: reported, not sent
    assert any("signature" in loss.what or "reasoning" in loss.what for loss in report.losses), report.summary()
    thinking = [b for m in context if isinstance(m, AssistantMessage) for b in m.contents]
    assert any(isinstance(b, ThinkingContent) and b.signature == "enc-a-1" for b in thinking)


# --- generated item lists --------------------------------------------------------------------

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=10)
call_ids = st.text("abcdef0123456789", min_size=1, max_size=6).map(lambda s: f"call_{s}")


@st.composite
def agents_turns(draw: Any) -> list[dict[str, Any]]:
    """One turn as the SDK keeps it: the question, maybe reasoning and calls with their outputs, the answer."""
    n = draw(st.integers(0, 10_000))
    items: list[dict[str, Any]] = [{"content": draw(words), "role": "user"}]
    if draw(st.booleans()):
        items.append(
            {
                "id": f"rs_{n}",
                "summary": [{"text": draw(words), "type": "summary_text"}],
                "type": "reasoning",
                "encrypted_content": draw(words),
            }
        )
    ids = draw(st.lists(call_ids, unique=True, max_size=3))
    for k, call in enumerate(ids):
        arguments = json.dumps(draw(st.dictionaries(st.sampled_from("xyz"), st.integers() | words, max_size=2)))
        items.append(
            {
                "arguments": arguments,
                "call_id": call,
                "name": "tool",
                "type": "function_call",
                "id": f"fc_{n}_{k}",
                "status": "completed",
            }
        )
    for call in ids:
        items.append({"call_id": call, "output": draw(words), "type": "function_call_output"})
    text = {"annotations": [], "text": draw(words), "type": "output_text"}
    items.append({"id": f"msg_{n}", "content": [text], "role": "assistant", "status": "completed", "type": "message"})
    return items


@settings(max_examples=60, deadline=None)
@given(st.lists(agents_turns(), min_size=1, max_size=3))
def test_generated_item_lists_round_trip(turns: list[list[dict[str, Any]]]) -> None:
    items = [item for one in turns for item in one]
    report = ConversionReport()
    assert to_openai_agents(from_openai_agents(items), report=report) == items
    assert report.losses == []


def test_a_run_interrupted_for_approval_is_read() -> None:
    """A tool that needs approval interrupts the run with a ToolApprovalItem, which is never an input item: reading
    the run's items takes it as the mark on its call (requires_approval), not as an error."""
    from agents import Agent, function_tool

    @function_tool(needs_approval=True)
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    agent = Agent(name="weather", instructions="Answer briefly.", model=ScriptedModel("a"), tools=[get_weather])
    result = asyncio.run(Runner.run(agent, "Weather?"))
    assert [type(item).__name__ for item in result.interruptions] == ["ToolApprovalItem"]
    calls = [b for m in from_openai_agents(result.new_items) for b in m.contents if isinstance(b, ToolCallContent)]
    assert [(c.name, c.requires_approval) for c in calls] == [("get_weather", True)]
    # the approval item alone gives its call (after the item's envelope, as the Responses reader keeps it)
    (alone,) = from_openai_agents(result.interruptions)
    assert [b for b in alone.contents if isinstance(b, ToolCallContent)] == calls
