"""Three server processes over one PostgreSQL: one log, live events and tool calls across nodes.

Each node is ``python -m agentmsg serve --store postgresql://...`` on its own
port; clients and runners talk to whichever node they like. Every test bounds
its loops in count and time and uses 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable

import pytest
from conftest import RunnerThread
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Live, Logged, ToolRunner
from agentmsg.service.localpg import wait_until
from agentmsg.streaming import events_from_message

SESSIONS = 4
PUBLISHERS = 20
PER_PUBLISHER = 10


@pytest.fixture
def nodes(cluster_nodes: list[ServerProcess]) -> list[ServerProcess]:
    return cluster_nodes


def test_every_message_reaches_every_node_once_and_in_order(nodes: list[ServerProcess]) -> None:
    expected = {f"s{k}": PUBLISHERS // SESSIONS * PER_PUBLISHER for k in range(SESSIONS)}
    with Client(nodes[0].target, timeout=30) as client:
        for session_id in expected:  # offset 1 of each session: what tells a subscriber it is following
            client.append(session_id, am.UserMessage.text("ready", id=f"ready-{session_id}"))

    async def subscriber(node: ServerProcess, session_id: str, following: asyncio.Event) -> list[tuple[int, str]]:
        got: list[tuple[int, str]] = []
        async with AsyncClient(node.target, timeout=60) as client:
            async with asyncio.timeout(120):
                async for item in client.subscribe(session_id):
                    assert isinstance(item, Logged)
                    if item.offset == 1:
                        following.set()  # it has read the log: what is appended from now on reaches it live
                        continue
                    got.append((item.offset, item.message.id))
                    if len(got) == expected[session_id]:
                        return got
        return got

    async def publisher(p: int) -> None:
        node = nodes[p % len(nodes)]
        async with AsyncClient(node.target, timeout=30) as client:
            for i in range(PER_PUBLISHER):
                message = am.UserMessage.text(f"{p}:{i}", id=f"p{p}-{i}")
                if i % 4 == 3:
                    await client.append_many(f"s{p % SESSIONS}", [message])
                else:
                    await client.append(f"s{p % SESSIONS}", message)

    async def main() -> dict[tuple[int, str], list[tuple[int, str]]]:
        following = {(n, s): asyncio.Event() for n in range(len(nodes)) for s in expected}
        watchers = {
            (n, s): asyncio.ensure_future(subscriber(node, s, following[n, s]))
            for n, node in enumerate(nodes)
            for s in expected
        }
        async with asyncio.timeout(60):  # every subscriber follows before the first append
            await asyncio.gather(*(event.wait() for event in following.values()))
        await asyncio.gather(*(publisher(p) for p in range(PUBLISHERS)))
        return {key: await task for key, task in watchers.items()}

    seen = asyncio.run(main())
    for (n, session_id), got in seen.items():
        count = expected[session_id]
        assert [offset for offset, _ in got] == list(range(2, count + 2)), (n, session_id)
        assert len({message_id for _, message_id in got}) == count
        # Each publisher's messages are in the log in the order it sent them.
        for p in range(session_index(session_id), PUBLISHERS, SESSIONS):
            mine = [int(mid.split("-")[1]) for _, mid in got if mid.startswith(f"p{p}-")]
            assert mine == list(range(PER_PUBLISHER))
    # Every node saw the very same log.
    for session_id in expected:
        logs = {tuple(seen[(n, session_id)]) for n in range(len(nodes))}
        assert len(logs) == 1


def session_index(session_id: str) -> int:
    return int(session_id[1:])


def test_live_events_published_on_one_node_reach_subscribers_on_the_others(nodes: list[ServerProcess]) -> None:
    message = am.AssistantMessage.text("Hello across nodes, " * 40 + "done.", stop_reason="stop", id="a1")
    events = events_from_message(message, chunk_size=7)
    big = am.AssistantMessage.text("x" * 20_000, stop_reason="stop", id="a2")  # events too large to NOTIFY inline

    with Client(nodes[0].target, timeout=30) as client:  # offset 1: what tells a watcher it is following
        client.append("live", am.UserMessage.text("ready", id="ready"))

    async def watch(node: ServerProcess, ids: set[str], following: asyncio.Event) -> list[str]:
        seen: list[str] = []
        async with AsyncClient(node.target, timeout=60) as client, asyncio.timeout(120):
            async for item in client.subscribe("live", live_events=True):
                if isinstance(item, Live):
                    seen.append(f"live:{item.event.kind}")
                elif item.offset == 1:
                    # Its live feed was registered before it read the log: every event published from now on
                    # reaches it.
                    following.set()
                else:
                    seen.append(f"logged:{item.message.id}")
                    ids.discard(item.message.id)
                    if not ids:
                        return seen
        return seen

    async def main() -> tuple[list[str], list[str]]:
        following = [asyncio.Event(), asyncio.Event()]
        on_two = asyncio.ensure_future(watch(nodes[1], {"a1", "a2"}, following[0]))
        on_three = asyncio.ensure_future(watch(nodes[2], {"a1", "a2"}, following[1]))
        async with asyncio.timeout(60):
            await asyncio.gather(*(event.wait() for event in following))
        async with AsyncClient(nodes[0].target, timeout=30) as client:
            assert (await client.publish_stream("live", events))[0] == 2
            (offset, _) = await client.publish_stream("live", events_from_message(big, chunk_size=10_000))
            assert offset == 3
        return await on_two, await on_three

    first_stream = [f"live:{event.kind}" for event in events]
    big_events = events_from_message(big, chunk_size=10_000)
    second_stream = [f"live:{event.kind}" for event in big_events]
    assert len(second_stream) == 6  # start, block start, two deltas (spilled), block stop, stop
    for seen in asyncio.run(main()):
        # Every event of the first stream crossed over, in order, before the message it builds.
        assert seen[: len(first_stream)] == first_stream, seen[:5]
        first_logged = seen.index("logged:a1")
        # The second stream's first events may overtake the first message: a subscriber is woken for a
        # logged message and reads it from the store, while live events are handed over as they come.
        between = seen[len(first_stream) : first_logged]
        assert all(item.startswith("live:") for item in between), between
        assert between[:1] in ([], ["live:message_start"]), between
        # The second stream mixes inline and spilled events: all of them, in order, before its message.
        second = [item for item in seen[len(first_stream) :] if item != "logged:a1"]
        assert second == [*second_stream, "logged:a2"]


def test_a_runner_on_node_one_answers_calls_made_through_node_three(
    nodes: list[ServerProcess], start_runner: Callable[..., RunnerThread]
) -> None:
    cancelled = threading.Event()
    started = threading.Event()
    runner = ToolRunner(nodes[0].target, name="far")

    @runner.tool(kind="read")
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    @runner.tool
    async def slow(seconds: float) -> str:
        started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "finished"

    thread = start_runner(runner)
    with Client(nodes[2].target, timeout=20) as third, Client(nodes[1].target, timeout=20) as second:
        assert wait_until(lambda: len(second.list_tools()) == 2, 30)
        listed = {t.tool.name: t for t in second.list_tools()}
        assert (listed["shout"].runner_name, listed["shout"].tool.kind) == ("far", am.ToolKind.READ)
        result = third.call_tool(am.ToolCallContent("c1", "shout", {"text": "hi"}))
        assert (result.id, result.text, result.is_error) == ("c1", "HI", False)
        # The caller's deadline travels with the forwarded call and cancels the runner's task (only that ends
        # a 600 s sleep within the wait).
        with pytest.raises(am.DeadlineExceededError):
            third.call_tool(am.ToolCallContent("c2", "slow", {"seconds": 600}), timeout=0.7)
        assert cancelled.wait(60)
        # A caller that gives up cancels the call on the runner's node.
        cancelled.clear()
        started.clear()

        async def call_then_cancel() -> None:
            async with AsyncClient(nodes[2].target) as client:
                task = asyncio.ensure_future(client.call_tool(am.ToolCallContent("c3", "slow", {"seconds": 600})))
                assert await asyncio.to_thread(started.wait, 60)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(call_then_cancel())
        assert cancelled.wait(60)
        # The runner leaves mid-call: the caller on node three gets an error result, and the tools are gone.
        started.clear()
        outcome: list[am.ToolResultContent | am.AgentMsgError] = []

        def call() -> None:
            try:
                outcome.append(third.call_tool(am.ToolCallContent("c4", "slow", {"seconds": 600}), timeout=60))
            except am.AgentMsgError as exc:
                outcome.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        assert started.wait(60)
        thread.stop()
        caller.join(90)
        (left,) = outcome  # the disconnection, as an error result: not the call's deadline
        assert isinstance(left, am.ToolResultContent), left
        assert left.is_error
        assert "tool runner 'far' disconnected" in left.text
        assert wait_until(lambda: second.list_tools() == [], 30)
        with pytest.raises(am.NotFoundError):
            third.call_tool(am.ToolCallContent("c5", "shout", {"text": "x"}))


def test_a_tool_name_is_served_once_in_the_cluster(
    nodes: list[ServerProcess], start_runner: Callable[..., RunnerThread]
) -> None:
    first = ToolRunner(nodes[0].target, name="one")
    first.tool(lambda: "x", name="shared")
    start_runner(first)
    second = ToolRunner(nodes[1].target, name="two")
    second.tool(lambda: "y", name="shared")
    with pytest.raises(am.ConflictError, match="already served by another node: shared"):
        asyncio.run(second.serve())


def test_tree_operations_on_one_session_from_two_nodes_are_serialised(nodes: list[ServerProcess]) -> None:
    """Each branch reads the leaf and appends after it: held by the engine, no two read the same leaf."""
    with Client(nodes[0].target) as client:
        client.append_many("tree", [am.UserMessage.text("root", id="root")])

    async def branches(node: ServerProcess, tag: str) -> None:
        async with AsyncClient(node.target, timeout=30) as client:
            for i in range(8):
                await client.branch("tree", "root", f"{tag}{i}", entry_id=f"{tag}{i}")

    async def main() -> None:
        await asyncio.gather(branches(nodes[0], "a"), branches(nodes[1], "b"), branches(nodes[2], "c"))

    asyncio.run(main())
    with Client(nodes[2].target) as client:
        logged = list(client.history("tree"))
    assert [item.offset for item in logged] == list(range(1, 26))
    for before, item in itertools.pairwise(logged):
        assert isinstance(item.message, am.BranchSummaryMessage)
        # The leaf each branch left is the entry just before it: nobody else appended in between.
        assert item.message.from_id == before.message.id


def test_a_draining_runner_gives_its_tools_up_to_the_cluster_at_once(
    nodes: list[ServerProcess], start_runner: Callable[..., RunnerThread]
) -> None:
    """A runner on node one stops mid-call: no node forwards it a new call, a replacement on node two may register
    the name at once and takes the new calls, and the call in flight (made through node three) still finishes."""
    started, release = threading.Event(), threading.Event()
    leaving = ToolRunner(nodes[0].target, name="leaving")

    @leaving.tool(name="job")
    def job_before() -> str:
        started.set()
        release.wait(30)
        return "finished by leaving"

    leaving.start()
    try:
        with Client(nodes[2].target, timeout=30) as third, Client(nodes[1].target, timeout=30) as second:
            assert wait_until(lambda: [t.tool.name for t in second.list_tools()] == ["job"], 10)
            outcome: list[am.ToolResultContent] = []
            caller = threading.Thread(target=lambda: outcome.append(third.call_tool(am.ToolCallContent("c1", "job"))))
            caller.start()
            assert started.wait(10)
            stopping = threading.Thread(target=leaving.stop)
            stopping.start()
            assert wait_until(lambda: second.list_tools() == [] and third.list_tools() == [], 10)
            with pytest.raises(am.NotFoundError):
                third.call_tool(am.ToolCallContent("c2", "job"))
            replacement = ToolRunner(nodes[1].target, name="replacement")
            replacement.tool(lambda: "finished by replacement", name="job")
            start_runner(replacement)  # registers while the first runner still runs its call
            assert third.call_tool(am.ToolCallContent("c3", "job")).text == "finished by replacement"
            release.set()
            caller.join(30)
            stopping.join(30)
            assert [result.text for result in outcome] == ["finished by leaving"]
            assert not stopping.is_alive()
    finally:
        release.set()
        leaving.stop(0)
