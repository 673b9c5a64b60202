"""Load on loopback: many publishers and subscribers at once, slow subscribers, a flood of live events.

- 50 publishers and 50 subscribers (asyncio clients) on 5 sessions of a server in a subprocess:
  every subscriber gets every message of its session exactly once, in log order, and each
  publisher's messages in the order it sent them.
- A subscriber that reads nothing while 10,000 messages (20 MB) are appended holds the server to a
  batch or two of reads: the log is read on demand, as gRPC flow control lets the stream advance.
- Live events are bounded per subscriber (``LIVE_QUEUE``, drop-oldest): a subscriber that does not
  read loses the oldest deltas, never the logged message.

``AGENTMSG_SOAK=1`` runs ten times the messages.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ServerThread
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Live, Logged
from agentmsg.service.live import LIVE_QUEUE, LiveHub
from agentmsg.service.localpg import wait_until
from agentmsg.streaming import StreamEvent, events_from_message, fold
from agentmsg.v1 import session_service_pb2, stream_pb2

SOAK = os.environ.get("AGENTMSG_SOAK", "") not in ("", "0")
SESSIONS = 5
PUBLISHERS = 50
SUBSCRIBERS = 50
PER_PUBLISHER = 200 if SOAK else 20
STREAMERS = 10  # of the publishers, these relay their messages live (PublishStream); the rest append


@pytest.fixture
def subprocess_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess("--db", str(tmp_path / "load.db"))
    yield server
    server.kill()


def test_50_publishers_and_50_subscribers_get_everything_exactly_once_in_order(
    subprocess_server: ServerProcess,
) -> None:
    target = subprocess_server.target
    expected_per_session = (PUBLISHERS // SESSIONS) * PER_PUBLISHER
    with Client(target, timeout=30) as client:
        for s in range(SESSIONS):  # offset 1 of each session: what tells a subscriber it is following
            client.append(f"load-{s}", am.UserMessage.text("ready", id=f"ready-{s}"))

    async def publisher(number: int) -> list[tuple[str, int]]:
        session = f"load-{number % SESSIONS}"
        sent: list[tuple[str, int]] = []
        async with AsyncClient(target, timeout=60) as client:
            for i in range(PER_PUBLISHER):
                key = f"p{number}-{i}"
                if number < STREAMERS:
                    answer = am.AssistantMessage.text(f"streamed {key}", stop_reason="stop", id=key)
                    offset, _ = await client.publish_stream(session, events_from_message(answer, chunk_size=4))
                else:
                    offset = await client.append(session, am.UserMessage.text(f"appended {key}", id=key))
                sent.append((key, offset))
        return sent

    async def subscriber(number: int, started: asyncio.Event) -> tuple[str, list[Logged], int]:
        session = f"load-{number % SESSIONS}"
        live = number % 2 == 0
        logged: list[Logged] = []
        live_events = 0
        async with AsyncClient(target, timeout=None) as client:
            stream = client.subscribe(session, live_events=live)
            async for item in stream:
                if isinstance(item, Live):
                    live_events += 1
                    continue
                if item.offset == 1:
                    started.set()  # registered for live events before it read the log: it follows now
                    continue
                logged.append(item)
                if len(logged) == expected_per_session:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
        return session, logged, live_events

    async def run() -> tuple[list[list[tuple[str, int]]], list[tuple[str, list[Logged], int]]]:
        flags = [asyncio.Event() for _ in range(SUBSCRIBERS)]
        subscribers = [asyncio.ensure_future(subscriber(n, flags[n])) for n in range(SUBSCRIBERS)]
        # Bounds on a hang, not on speed (the throughput is bench/service.py's).
        await asyncio.wait_for(asyncio.gather(*(flag.wait() for flag in flags)), 60)
        sent = await asyncio.wait_for(asyncio.gather(*(publisher(n) for n in range(PUBLISHERS))), 300)
        received = await asyncio.wait_for(asyncio.gather(*subscribers), 300)
        return sent, received

    sent, received = asyncio.run(run())

    offsets_of: dict[str, dict[str, int]] = defaultdict(dict)
    for number, messages in enumerate(sent):
        session = f"load-{number % SESSIONS}"
        offsets = [offset for _, offset in messages]
        assert offsets == sorted(offsets), f"publisher {number}'s messages are out of order"
        offsets_of[session].update(messages)
    with Client(target, timeout=30) as client:
        history = {f"load-{s}": list(client.history(f"load-{s}", page_size=1000)) for s in range(SESSIONS)}
    live_total = 0
    for number, (session, logged, live_events) in enumerate(received):
        live_total += live_events
        # Every live subscriber followed before the first publish: each got live events, the others none.
        assert (live_events > 0) == (number % 2 == 0), (number, live_events)
        assert [item.offset for item in logged] == list(range(2, expected_per_session + 2))  # once each, in order
        assert [item.message for item in logged] == [item.message for item in history[session][1:]]
        assert {item.message.id: item.offset for item in logged} == offsets_of[session]
    total = PUBLISHERS * PER_PUBLISHER
    delivered = sum(len(logged) for _, logged, _ in received)
    assert delivered == total * SUBSCRIBERS // SESSIONS
    print(
        f"\n[load] {PUBLISHERS} publishers x {PER_PUBLISHER} messages = {total} messages "
        f"({STREAMERS * PER_PUBLISHER} relayed live) on {SESSIONS} sessions, {SUBSCRIBERS} subscribers: "
        f"{delivered} deliveries + {live_total} live events: 0 lost, 0 duplicated, 0 out of order"
    )


BATCH = 256  # messages the server reads from the log per step of a subscription (SubscribeRequest.max_batch unset)


def test_a_subscriber_that_reads_nothing_holds_the_server_to_a_batch_or_two(
    make_server: Callable[..., ServerThread],
) -> None:
    """The log is read on demand: what the server reads for a stalled subscriber is what flow control lets it
    send (a batch or two), not the backlog. Counted on the server's framing of rows, not measured in RSS (which
    the allocator and page cache move)."""
    count = 100_000 if SOAK else 10_000
    server = make_server()
    frames = server.running.frames
    encode = frames.encode
    framed: list[int] = []  # rows of the session "slow" read from the log and framed for its subscriber

    def counting(session_id: str, after: int, limit: int, rows: Any) -> Any:
        if session_id == "slow":
            framed.append(len(rows))
        return encode(session_id, after, limit, rows)

    frames.encode = counting  # type: ignore[method-assign]
    pad = "x" * 2048
    # The reader's window stays at its initial size (no BDP probing): what it does not read stays unsent.
    viewer = Client(server.target, timeout=60, options=[("grpc.http2.bdp_probe", 0)])
    with viewer as reader, Client(server.target, timeout=60) as writer:
        writer.append("slow", am.UserMessage.text("first", id="first"))
        stream = reader.subscribe("slow")
        assert isinstance(next(stream), Logged)  # subscribed; from now on it reads nothing
        for batch in range(count // 500):
            writer.append_many("slow", [am.UserMessage.text(pad, id=f"m{batch}-{i}") for i in range(500)])
        stalled = sum(framed)
        # Now it reads: everything is there, in order (flow control paused the stream, nothing was dropped).
        offsets = [1]
        for item in stream:
            offsets.append(item.offset)  # type: ignore[union-attr]
            if len(offsets) == count + 1:
                break
        stream.close()
    assert offsets == list(range(1, count + 2))
    assert 1 < stalled <= 1 + 2 * BATCH, f"{stalled} of {count + 1} messages read while the subscriber stalled"
    assert sum(framed) == count + 1  # and each message was read once
    print(f"\n[load] stalled subscriber: {count} messages appended behind it; the server read {stalled} of them")


def test_the_live_queue_drops_the_oldest_when_full() -> None:
    """The policy, on the hub itself: at most LIVE_QUEUE events wait per subscriber; the newest are kept."""
    hub = LiveHub()
    total = LIVE_QUEUE * 3 + 7
    with hub.subscribe("s") as queue:
        for i in range(total):
            event = stream_pb2.StreamEvent(sequence=i)
            hub.publish("s", session_service_pb2.LiveEvent(stream_id="x", event=event))
            assert queue.qsize() <= LIVE_QUEUE
        kept = [queue.get_nowait().event.sequence for _ in range(queue.qsize())]
    assert kept == list(range(total - LIVE_QUEUE, total))
    assert hub._subscribers == {}


def test_a_live_subscriber_that_falls_behind_loses_deltas_never_the_message(server: ServerThread) -> None:
    deltas = 20_000 if SOAK else 4_000
    pad = "." * 1024  # 4 MB of deltas: more than the HTTP/2 windows between the server and the stalled viewer
    events = [StreamEvent.message_start("flood"), StreamEvent.block_start(0, am.TextContent())]
    events += [StreamEvent.text_delta(0, f"{i:05d}{pad}") for i in range(deltas)]
    events += [StreamEvent.block_stop(0), StreamEvent.message_stop("stop")]
    expected = fold(events)
    hub = server.running.sessions.hub
    # The viewer's window stays at its initial size (no BDP probing): what it does not read stays unsent.
    viewer = Client(server.target, timeout=30, options=[("grpc.http2.bdp_probe", 0)])
    with viewer as reader, Client(server.target, timeout=30) as writer:
        writer.append("flood", am.UserMessage.text("go", id="go"))
        stream = reader.subscribe("flood", live_events=True)
        assert isinstance(next(stream), Logged)  # subscribed, then it stops reading
        assert wait_until(lambda: "flood" in hub._subscribers, 60)
        done = threading.Event()
        published: list[int] = []

        def publish() -> None:
            offset, _ = writer.publish_stream("flood", events)
            published.append(offset)
            done.set()

        threading.Thread(target=publish).start()
        assert done.wait(120)  # the publisher is never held up by the slow viewer (a bound on a hang)
        (queue,) = hub._subscribers["flood"]
        assert queue.qsize() <= LIVE_QUEUE
        live: list[StreamEvent] = []
        logged: list[Logged] = []
        for item in stream:
            if isinstance(item, Live):
                live.append(item.event)
            else:
                logged.append(item)  # type: ignore[arg-type]
                break
        stream.close()
    assert published == [2]
    assert [(item.offset, item.message) for item in logged] == [(2, expected)]  # the message is whole
    texts = [e.pb.block_delta.text.text for e in live if e.kind == "block_delta"]
    numbers = [int(t[:5]) for t in texts]
    assert numbers == sorted(numbers)  # what arrives is in order, a gap where the oldest were dropped
    assert len(live) < len(events)  # some were dropped...
    assert live[-1].kind == "message_stop"  # ...the oldest: the newest, up to the end, are kept
    assert numbers[-1] == deltas - 1
    print(
        f"\n[load] live flood: {len(events)} events published past a stalled viewer; it got {len(live)} "
        f"(the oldest dropped, queue <= {LIVE_QUEUE}), and the logged message whole"
    )
