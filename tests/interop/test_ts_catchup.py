"""Live catch-up for the TypeScript client: a TypeScript subscriber that joins while a Python publisher streams a
message folds (with the TypeScript fold) exactly the message a Python subscriber present from the start folds.

Joins are placed by events: the publisher yields its next event only once the early subscriber has received the
ones before, and the TypeScript subscriber has printed that it read offset 1 (it registered before reading).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from tstools import PythonServer, TsProcess, built_sdk

import agentmsg as am
from agentmsg.service import AsyncClient, Live, ServerConfig
from agentmsg.streaming import StreamAccumulator, StreamEvent
from agentmsg.v1 import message_pb2

E = StreamEvent


@pytest.fixture(scope="module")
def node() -> str:
    return built_sdk()


@pytest.fixture
def server(node: str) -> Iterator[PythonServer]:
    running = PythonServer(ServerConfig(db=None))
    try:
        yield running
    finally:
        running.close()


def generation() -> list[StreamEvent]:
    """Thinking with a signature, text, two tool calls streaming side by side; numbered, with resends."""
    events = [
        E.message_start("ts-late", provenance=am.Provenance("p", "api", "m", "r"), timestamp=1_700_000_000),
        E.block_start(0, am.ThinkingContent("")),
        E.thinking_delta(0, "Weather and "),
        E.thinking_delta(0, "time, in parallel."),
        E.signature_delta(0, "c2lnbmF0dXJl"),
        E.block_stop(0),
        E.block_start(1, am.TextContent("")),
        E.text_delta(1, "One "),
        E.text_delta(1, "moment."),
        E.block_stop(1),
        E.block_start(2, am.ToolCallContent("call_w", "weather", arguments="")),
        E.block_start(3, am.ToolCallContent("call_t", "time", arguments="")),
        E.arguments_delta(2, '{"city": '),
        E.arguments_delta(3, '{"tz": '),
        E.arguments_delta(2, '"Paris"}'),
        E.arguments_delta(3, '"Europe/Paris"}'),
        E.block_stop(2),
        E.block_stop(3),
        E.usage_update(am.Usage(30, 12)),
        E.message_stop("tool_calls", "tool_use"),
    ]
    numbered = [event.with_sequence(n) for n, event in enumerate(events)]
    return [*numbered[:9], *numbered[7:9], *numbered[9:]]  # two deltas resent


# Before the first delta, mid-block, between blocks, mid parallel tool calls, after the end.
JOINS = (2, 3, 6, 14, 22)


def test_a_typescript_subscriber_joining_mid_generation_folds_the_same_message(node: str, server: PythonServer) -> None:
    events = generation()
    assert len(events) == JOINS[-1]
    session = "ts-catch-up"

    async def scenario() -> tuple[am.AssistantMessage, list[StreamEvent], list[dict[str, Any]]]:
        late: list[TsProcess] = []
        early: list[StreamEvent] = []
        counts = [asyncio.Event() for _ in range(len(events) + 1)]
        counts[0].set()
        joined = asyncio.Event()
        async with AsyncClient(server.target, timeout=60) as client, asyncio.timeout(120):
            await client.append(session, am.UserMessage.text("weather and time?", id="question"))

            async def watch() -> None:
                async for item in client.subscribe(session, live_events=True):
                    if isinstance(item, Live):
                        early.append(item.event)
                        counts[len(early)].set()
                    elif item.offset == 1:
                        joined.set()
                    else:
                        return

            watcher = asyncio.ensure_future(watch())
            await joined.wait()

            async def join_before(index: int) -> None:
                if index in JOINS:
                    await counts[index].wait()  # the server holds events[:index]
                    late.append(TsProcess(node, "late_subscriber", server.target, session))
                    await asyncio.to_thread(late[-1].wait_for, "joined", 30)

            async def produce() -> AsyncIterator[StreamEvent]:
                for index, event in enumerate(events):
                    await join_before(index)
                    yield event

            try:
                _, message = await client.publish_stream(session, produce())
                await join_before(len(events))
                reports = [await asyncio.to_thread(ts.wait_for, "logged", 30) for ts in late]
                for ts in late:
                    assert ts.finish() == 0
            finally:
                for ts in late:
                    if ts.process.poll() is None:
                        ts.stop()
            await watcher
        return message, early, reports

    message, early, reports = asyncio.run(scenario())
    assert StreamAccumulator().extend(early).finish() == message
    assert len(reports) == len(JOINS)
    for at, report in zip(JOINS, reports, strict=True):
        assert json_format.ParseDict(report["logged"], message_pb2.Message()) == message.pb, at
        if at == len(events):
            assert report["folded"] is None  # nothing in flight: the log has it
            assert report["live"] == 0
            continue
        assert json_format.ParseDict(report["folded"], message_pb2.Message()) == message.pb, at
        numbers = report["sequences"]
        assert report["live"] == len(numbers) <= len(events), at
        # Renumbered from 0 with no gap; the publisher's resends after the join are below the last number.
        fresh = [n for i, n in enumerate(numbers) if n > max(numbers[:i], default=-1)]
        assert fresh == list(range(len(fresh))), at
        assert (len(fresh) < len(numbers)) == (at < 9), at  # it got the resends only if it joined before them
