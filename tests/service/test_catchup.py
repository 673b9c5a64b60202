"""Live catch-up: a subscriber that joins while a message is generated folds the same message as one there from
the start — through the gRPC service on one node and across the PostgreSQL cluster, and on the hub itself
(renumbering, resends, bounds, streams that end, break or go quiet).

Joins are placed by events, never by sleeps: the publisher yields its next event only once a subscriber present
from the start has received the ones before (so the node holds them) and the late subscriber has registered
(it has read offset 1 of the log, which it does after registering).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc
import pytest
from conftest import ServerThread
from serverproc import ServerProcess
from transports import Transport

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Live, Logged
from agentmsg.service.catchup import CatchUpBounds, InFlight
from agentmsg.service.live import LIVE_QUEUE, LiveHub
from agentmsg.service.localpg import wait_until
from agentmsg.streaming import StreamAccumulator, StreamEvent
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

E = StreamEvent
SOURCE = am.ProviderContent.from_block("anthropic", {"type": "char_location"})
PROV = am.Provenance("anthropic", "anthropic-messages", "claude-x", "msg_1")


def generation() -> list[StreamEvent]:
    """Thinking with a signature, text, then two tool calls whose argument fragments interleave, and usage."""
    return [
        E.message_start("answer", provenance=PROV, timestamp=1_700_000_000),
        E.block_start(0, am.ThinkingContent("")),
        E.thinking_delta(0, "The user wants "),
        E.thinking_delta(0, "weather and time."),
        E.signature_delta(0, "RXF1aXZhbGVudA=="),
        E.block_stop(0),
        E.block_start(1, am.TextContent("")),
        E.text_delta(1, "Checking "),
        E.text_delta(1, "both."),
        E.block_stop(1),
        E.usage_update(am.Usage(120, 9)),
        E.block_start(2, am.ToolCallContent("call_w", "weather", arguments="")),
        E.block_start(3, am.ToolCallContent("call_t", "time", arguments="")),
        E.arguments_delta(2, '{"city": '),
        E.arguments_delta(3, '{"tz": "Europe/'),
        E.arguments_delta(2, '"Paris", "unit": "C"}'),
        E.arguments_delta(3, 'Paris"}'),
        E.block_stop(3),
        E.block_stop(2),
        E.usage_update(am.Usage(output_tokens=57)),
        E.message_stop("tool_calls", "tool_use"),
    ]


def numbered_with_resends() -> list[StreamEvent]:
    """The same events numbered, with some resent (as a relay retrying would): the fold ignores the resends."""
    events = [event.with_sequence(n) for n, event in enumerate(generation())]
    out: list[StreamEvent] = []
    for n, event in enumerate(events):
        out.append(event)
        if n in (3, 8, 15):
            out += events[n - 2 : n + 1]  # the last three again
    return out


def joins(events: list[StreamEvent]) -> dict[str, int]:
    """Where late subscribers join: before the event at each index (the last: after the end)."""
    first_delta = next(i for i, e in enumerate(events) if e.kind == "block_delta")
    kinds = [e.kind for e in events]
    between = next(i for i in range(1, len(events)) if kinds[i - 1] == "block_stop" and kinds[i] == "block_start")
    parallel = next(i for i, e in enumerate(events) if e.pb.block_delta.index == 3) + 1
    return {
        "after message_start": 1,
        "before the first delta": first_delta,
        "mid-block (thinking)": first_delta + 1,
        "between blocks": between,
        "mid parallel tool calls": parallel,
        "before message_stop": len(events) - 1,
        "after the end": len(events),
    }


@dataclass
class Watcher:
    """One live subscriber: what it got; ``counts[n]`` is set once it has received n live events."""

    target: str
    expected: int = 0
    transport: str = "grpc"  # or a Connect protocol of tests/transports.py, on http_port
    http_port: int | None = None
    live: list[Live] = field(default_factory=list)
    logged: list[Logged] = field(default_factory=list)
    joined: asyncio.Event = field(default_factory=asyncio.Event)
    counts: list[asyncio.Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.counts:
            self.counts[0].set()

    async def items(self, session: str) -> AsyncIterator[Live | Logged]:
        if self.transport == "grpc":
            async with AsyncClient(self.target, timeout=60) as client:
                async for item in client.subscribe(session, live_events=True):
                    yield item
            return
        request = session_service_pb2.SubscribeRequest(session_id=session, live_events=True)
        async with Transport(self.transport, self.target, self.http_port) as over:
            async for response in over.stream("Subscribe", request, timeout=60):
                for logged in response.messages:
                    yield Logged(logged.offset, am.message_from_proto(logged.message))
                if response.HasField("live_event"):
                    live = response.live_event
                    yield Live(live.stream_id, StreamEvent._wrap(live.event))

    async def run(self, session: str, last_offset: int) -> None:
        async with contextlib.aclosing(self.items(session)) as items:
            async for item in items:
                if isinstance(item, Live):
                    self.live.append(item)
                    if len(self.live) < len(self.counts):
                        self.counts[len(self.live)].set()
                    continue
                self.logged.append(item)
                if item.offset == 1:
                    self.joined.set()  # registered with the hub (it does so before reading the log)
                if item.offset == last_offset:
                    return

    def fold(self) -> am.AssistantMessage | None:
        events = [item.event for item in self.live]
        return StreamAccumulator().extend(events).finish() if events else None


async def late_joins(
    publish_target: str,
    watch_targets: list[str],
    session: str,
    events: list[StreamEvent],
    *,
    transport: str = "grpc",
    http_port: int | None = None,
) -> tuple[am.AssistantMessage, list[Watcher], dict[str, list[Watcher]]]:
    """Publish ``events`` on one node while subscribers on ``watch_targets`` join at each of :func:`joins` (over
    ``transport``; the publisher is a gRPC client, as ``PublishStream`` is gRPC only)."""
    points = joins(events)
    over = {"transport": transport, "http_port": http_port}
    early = [Watcher(t, counts=[asyncio.Event() for _ in range(len(events) + 1)], **over) for t in watch_targets]
    late = {name: [Watcher(t, **over) for t in watch_targets] for name in points}
    tasks: list[asyncio.Task[None]] = []
    async with asyncio.timeout(120):
        async with AsyncClient(publish_target, timeout=60) as client:
            await client.append(session, am.UserMessage.text("weather and time in Paris?", id="question"))
        tasks += [asyncio.create_task(w.run(session, 2)) for w in early]
        await asyncio.gather(*(w.joined.wait() for w in early))

        async def join_before(index: int) -> None:
            for n, watch in enumerate(early):
                await watch.counts[index].wait()  # that node holds events[:index]
                for name, at in points.items():
                    if at == index:
                        tasks.append(asyncio.create_task(late[name][n].run(session, 2)))
                        await late[name][n].joined.wait()

        async def produce() -> AsyncIterator[StreamEvent]:
            for index, event in enumerate(events):
                await join_before(index)
                yield event

        async with AsyncClient(publish_target, timeout=60) as client:
            offset, message = await client.publish_stream(session, produce())
        assert offset == 2
        await join_before(len(events))
        await asyncio.gather(*tasks)
    return message, early, late


def check(message: am.AssistantMessage, early: list[Watcher], late: dict[str, list[Watcher]], total: int) -> None:
    for watch in early:
        assert len(watch.live) == total
        assert watch.fold() == message
        assert watch.logged[-1].message == message
    for name, watchers in late.items():
        for watch in watchers:
            assert watch.logged[-1].message == message, name
            if name == "after the end":
                assert watch.live == [], name  # nothing in flight: the message comes from the log
                continue
            assert watch.fold() == message, name
            assert len(watch.live) <= total, name  # the catch-up is one event per fragment kind, not a replay
            numbers = [item.event.sequence for item in watch.live if item.event.sequence is not None]
            assert len(numbers) in (0, len(watch.live)), name
            # Renumbered from 0 with no gap; the publisher's resends after the join are below the last number.
            fresh = [n for i, n in enumerate(numbers) if n > max(numbers[:i], default=-1)]
            assert fresh == list(range(len(fresh))), name


@pytest.mark.parametrize("numbered", [False, True], ids=["unnumbered", "numbered-with-resends"])
def test_a_late_subscriber_folds_the_message_an_early_one_folds(server: ServerThread, numbered: bool) -> None:
    events = numbered_with_resends() if numbered else generation()
    message, early, late = asyncio.run(late_joins(server.target, [server.target], "catch-up", events))
    kinds = [type(block) for block in message.contents]
    assert kinds == [am.ThinkingContent, am.TextContent, am.ToolCallContent, am.ToolCallContent]
    assert message.thinking()[0].signature == "RXF1aXZhbGVudA=="
    assert [call.args for call in message.tool_calls()] == [{"city": "Paris", "unit": "C"}, {"tz": "Europe/Paris"}]
    check(message, early, late, len(events))
    assert server.running.sessions.hub.in_flight.streams("catch-up") == []  # the ended stream was dropped


@pytest.mark.parametrize("transport", ["connect-proto", "connect-json", "grpc-web"])
def test_a_late_subscriber_over_connect_folds_the_message_an_early_one_folds(
    make_server: Callable[..., ServerThread], transport: str
) -> None:
    server = make_server(http_port=0)
    port = server.running.http_port
    events = numbered_with_resends()
    message, early, late = asyncio.run(
        late_joins(server.target, [server.target], "catch-up-http", events, transport=transport, http_port=port)
    )
    check(message, early, late, len(events))


def test_a_late_subscriber_on_another_node_folds_the_same_message(cluster_nodes: list[ServerProcess]) -> None:
    events = numbered_with_resends()
    targets = [node.target for node in cluster_nodes]
    message, early, late = asyncio.run(late_joins(targets[0], targets[1:], "catch-up-cluster", events))
    check(message, early, late, len(events))
    assert all(len(watchers) == 2 for watchers in late.values())  # each join point, on both other nodes


def test_a_subscriber_without_live_events_gets_no_catch_up(server: ServerThread) -> None:
    async def scenario() -> list[Logged | Live]:
        async with AsyncClient(server.target, timeout=30) as client:
            await client.append("quiet", am.UserMessage.text("hi", id="q"))
            channel = grpc.aio.insecure_channel(server.target)
            call = session_service_pb2_grpc.SessionServiceStub(channel).PublishStream()
            try:
                await call.write(
                    session_service_pb2.PublishStreamRequest(session_id="quiet", event=E.message_start().pb)
                )
                hub = server.running.sessions.hub
                async with asyncio.timeout(20):
                    while not hub.in_flight.streams("quiet"):
                        await asyncio.sleep(0.01)  # polls the state itself, bounded
                got: list[Logged | Live] = []
                async for item in client.subscribe("quiet"):
                    got.append(item)
                    break
                call.cancel()
            finally:
                await channel.close()
            return got

    got = asyncio.run(scenario())
    assert [type(item) for item in got] == [Logged]


def test_a_publisher_gone_mid_stream_is_dropped_from_the_catch_up(server: ServerThread) -> None:
    hub = server.running.sessions.hub

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            call = session_service_pb2_grpc.SessionServiceStub(channel).PublishStream()
            for event in generation()[:3]:
                await call.write(session_service_pb2.PublishStreamRequest(session_id="gone", event=event.pb))
            async with asyncio.timeout(20):
                while not hub.in_flight.streams("gone"):
                    await asyncio.sleep(0.01)
            call.cancel()

    asyncio.run(scenario())
    assert wait_until(lambda: server.run(_streams(hub, "gone")) == [], 20)


def test_a_new_session_by_a_deleted_ones_id_is_not_handed_its_streams(server: ServerThread) -> None:
    hub = server.running.sessions.hub

    async def scenario() -> tuple[list[Logged | Live], BaseException]:
        got: list[Logged | Live] = []
        async with AsyncClient(server.target, timeout=30) as client, asyncio.timeout(60):
            await client.append("reused", am.UserMessage.text("old", id="old"))
            async with grpc.aio.insecure_channel(server.target) as channel:
                call = session_service_pb2_grpc.SessionServiceStub(channel).PublishStream()
                for event in generation()[:3]:
                    await call.write(session_service_pb2.PublishStreamRequest(session_id="reused", event=event.pb))
                while not hub.in_flight.streams("reused"):
                    await asyncio.sleep(0.01)  # polls the state itself, bounded by the timeout
                await client.delete_session("reused")
                await client.append("reused", am.UserMessage.text("new", id="new"))  # offset 1 of a new session
                joined = asyncio.Event()

                async def watch() -> None:
                    async for item in client.subscribe("reused", live_events=True):
                        got.append(item)
                        if isinstance(item, Logged) and item.offset == 1:
                            joined.set()
                        if isinstance(item, Logged) and item.offset == 2:
                            return

                watcher = asyncio.ensure_future(watch())
                await joined.wait()
                # The old stream's next event finds its session deleted: the call ends, its error relayed.
                await call.write(session_service_pb2.PublishStreamRequest(event=generation()[3].pb))
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await call
                await client.append("reused", am.UserMessage.text("marker", id="marker"))
                await watcher
        return got, failed.value

    got, failed = asyncio.run(scenario())
    assert failed.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
    assert [(type(i), getattr(i, "offset", None)) for i in got] == [(Logged, 1), (Logged, 2)]  # no live event
    assert server.run(_streams(hub, "reused")) == []


async def _streams(hub: LiveHub, session: str) -> list[str]:
    return hub.in_flight.streams(session)  # read on the server's loop


# --- the hub itself ------------------------------------------------------------------------------------------------


def live(stream: str, event: StreamEvent) -> session_service_pb2.LiveEvent:
    return session_service_pb2.LiveEvent(stream_id=stream, event=event.pb)


def drain(queue: asyncio.Queue[session_service_pb2.LiveEvent]) -> list[session_service_pb2.LiveEvent]:
    return [queue.get_nowait() for _ in range(queue.qsize())]


def test_the_hub_hands_each_joiner_the_streams_so_far_then_the_rest_with_no_gap_and_no_duplicate() -> None:
    """Two streams of one session, interleaved; a joiner before every event folds both as an early one."""
    first = numbered_with_resends()
    second = [E.message_start("other", timestamp=5), *generation()[1:]]  # unnumbered
    merged = [("a", e) for e in first]
    for i, event in enumerate(second):
        merged.insert(2 * i + 1, ("b", event))
    hub = LiveHub()
    with contextlib.ExitStack() as stack:
        early = stack.enter_context(hub.subscribe("s", catch_up=True))
        joiners = []
        for stream, event in merged:
            joiners.append(stack.enter_context(hub.subscribe("s", catch_up=True)))
            hub.publish("s", live(stream, event))
        queues = [early, *joiners]
        got = [drain(q) for q in queues]
    expected = {s: StreamAccumulator().extend(e for t, e in merged if t == s).finish() for s in ("a", "b")}
    last = {s: max(i for i, (t, _) in enumerate(merged) if t == s) for s in ("a", "b")}
    for n, events in enumerate(got):  # queue n joined before merged[n - 1] was published
        for stream in ("a", "b"):
            mine = [item.event for item in events if item.stream_id == stream]
            if n > 0 and last[stream] < n - 1:
                assert mine == [], (n, stream)  # it had ended: its message is in the log
            else:
                assert StreamAccumulator().extend(mine).finish() == expected[stream], (n, stream)
    assert hub.in_flight.streams("s") == []  # both ended
    assert hub._subscribers == {}


def test_catch_up_events_do_not_count_against_the_live_queue() -> None:
    hub = LiveHub()
    hub.publish("s", live("x", E.message_start("m")))
    hub.publish("s", live("x", E.block_start(0, am.TextContent(""))))
    for i in range(LIVE_QUEUE + 10):  # each citation is a delta of its own in the catch-up too
        hub.publish("s", live("x", E.citation_delta(0, am.Citation(cited_text=f"{i}", original=SOURCE))))
    with hub.subscribe("s", catch_up=True) as queue:
        assert queue.qsize() == 2 + LIVE_QUEUE + 10
        hub.publish("s", live("x", E.block_stop(0)))
        assert queue.qsize() == 3 + LIVE_QUEUE + 10
        assert drain(queue)[-2].event.block_delta.citation.citation.cited_text == f"{LIVE_QUEUE + 9}"
    assert hub.dropped == 0


def test_a_stream_past_a_bound_is_not_followed_and_withheld_from_later_joiners() -> None:
    hub = LiveHub(CatchUpBounds(max_bytes=1000, max_events=50, max_blocks=2))
    for stream, extra in (
        ("big", E.text_delta(0, "x" * 1100)),  # past max_bytes
        ("wide", E.block_start(2, am.TextContent(""))),  # a third block: past max_blocks
    ):
        hub.publish("s", live(stream, E.message_start(stream)))
        hub.publish("s", live(stream, E.block_start(0, am.TextContent(""))))
        hub.publish("s", live(stream, E.block_start(1, am.TextContent(""))))
        hub.publish("s", live(stream, extra))
    hub.publish("s", live("many", E.message_start("many")))
    hub.publish("s", live("many", E.block_start(0, am.TextContent(""))))
    for _ in range(100):
        hub.publish("s", live("many", E.text_delta(0, ".")))  # past max_events
    with hub.subscribe("s", catch_up=True) as late, hub.subscribe("s") as plain:
        for stream in ("big", "wide", "many"):
            hub.publish("s", live(stream, E.block_stop(0)))
        assert drain(late) == []  # neither the catch-up nor the deltas of blocks it never saw start
        assert len(drain(plain)) == 3  # a subscriber that did not ask for catch-up gets events as before
    assert hub.in_flight.streams("s") == ["big", "wide", "many"]
    for stream in ("big", "wide", "many"):
        hub.publish("s", live(stream, E.error("gone")))
    assert hub.in_flight.streams("s") == []


def test_a_stream_a_node_did_not_see_whole_is_withheld_and_one_it_joined_late_is_ignored() -> None:
    hub = LiveHub()
    hub.publish("s", live("broken", E.message_start("b")))
    hub.publish("s", live("broken", E.text_delta(0, "a delta whose block_start was lost")))
    hub.publish("s", live("unseen", E.text_delta(0, "started before this node heard")))
    assert hub.in_flight.streams("s") == ["broken"]
    with hub.subscribe("s", catch_up=True) as late:
        hub.publish("s", live("broken", E.text_delta(0, "more")))
        hub.publish("s", live("broken", E.message_stop("stop")))
        assert drain(late) == []
    assert hub.in_flight.streams("s") == []


def test_a_stream_with_no_event_for_the_idle_bound_is_forgotten() -> None:
    now = [0.0]
    flight = InFlight(CatchUpBounds(idle=60), clock=lambda: now[0])
    flight.observe("s", live("quiet", E.message_start("q")))
    flight.observe("s", live("busy", E.message_start("b")))
    now[0] = 50
    flight.observe("s", live("busy", E.block_start(0, am.TextContent(""))))
    now[0] = 61
    assert [e.stream_id for e in flight.catch_up("s").events] == ["busy", "busy"]
    assert flight.streams("s") == ["busy"]
    flight.observe("s", live("quiet", E.block_start(0, am.TextContent(""))))  # its node came back: not re-taken
    assert flight.streams("s") == ["busy"]
    now[0] = 111
    assert flight.catch_up("s").events == []
    assert flight.streams("s") == []


def test_catch_up_deltas_are_cut_to_fit_a_reply() -> None:
    hub = LiveHub()
    hub.publish("s", live("x", E.message_start("m")))
    hub.publish("s", live("x", E.block_start(0, am.TextContent(""))))
    for _ in range(5):
        hub.publish("s", live("x", E.text_delta(0, "é" * 200_000)))
    with hub.subscribe("s", catch_up=True) as queue:
        deltas = [item.event.block_delta.text.text for item in drain(queue)[2:]]
    assert "".join(deltas) == "é" * 1_000_000
    assert max(len(d.encode()) for d in deltas) <= 1024 * 1024


def test_the_client_api_is_unchanged_for_a_finished_session(client: Client) -> None:
    client.append("done", am.UserMessage.text("hi", id="h"))
    items = []
    for item in client.subscribe("done", live_events=True, timeout=10):
        items.append(item)
        break
    assert [type(i) for i in items] == [Logged]
