"""Load on loopback: many publishers and subscribers at once, slow subscribers, a flood of live events.

- 50 publishers and 50 subscribers (asyncio clients) on 5 sessions of a server in a subprocess:
  every subscriber gets every message of its session exactly once, in log order, and each
  publisher's messages in the order it sent them.
- A subscriber that reads nothing while 20,000 messages (40 MB) are appended does not grow the
  server's memory: the log is read on demand, as gRPC flow control lets the stream advance.
- Live events are bounded per subscriber (``LIVE_QUEUE``, drop-oldest): a subscriber that does not
  read loses the oldest deltas, never the logged message.

``AGENTMSG_SOAK=1`` runs ten times the messages.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ServerThread
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Live, Logged
from agentmsg.service.live import LIVE_QUEUE, LiveHub
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
            started.set()
            async for item in stream:
                if isinstance(item, Live):
                    live_events += 1
                    continue
                logged.append(item)
                if len(logged) == expected_per_session:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
        return session, logged, live_events

    async def run() -> tuple[list[list[tuple[str, int]]], list[tuple[str, list[Logged], int]], float]:
        flags = [asyncio.Event() for _ in range(SUBSCRIBERS)]
        subscribers = [asyncio.ensure_future(subscriber(n, flags[n])) for n in range(SUBSCRIBERS)]
        await asyncio.wait_for(asyncio.gather(*(flag.wait() for flag in flags)), 30)
        began = time.monotonic()
        sent = await asyncio.wait_for(asyncio.gather(*(publisher(n) for n in range(PUBLISHERS))), 120)
        received = await asyncio.wait_for(asyncio.gather(*subscribers), 120)
        return sent, received, time.monotonic() - began

    sent, received, elapsed = asyncio.run(run())

    offsets_of: dict[str, dict[str, int]] = defaultdict(dict)
    for number, messages in enumerate(sent):
        session = f"load-{number % SESSIONS}"
        offsets = [offset for _, offset in messages]
        assert offsets == sorted(offsets), f"publisher {number}'s messages are out of order"
        offsets_of[session].update(messages)
    with Client(target, timeout=30) as client:
        history = {f"load-{s}": list(client.history(f"load-{s}", page_size=1000)) for s in range(SESSIONS)}
    live_total = 0
    for session, logged, live_events in received:
        live_total += live_events
        assert [item.offset for item in logged] == list(range(1, expected_per_session + 1))  # once each, in order
        assert [item.message for item in logged] == [item.message for item in history[session]]
        assert {item.message.id: item.offset for item in logged} == offsets_of[session]
    total = PUBLISHERS * PER_PUBLISHER
    delivered = sum(len(logged) for _, logged, _ in received)
    assert delivered == total * SUBSCRIBERS // SESSIONS
    assert live_total > 0  # the live relay reached the live subscribers
    print(
        f"\n[load] {PUBLISHERS} publishers x {PER_PUBLISHER} messages = {total} messages "
        f"({STREAMERS * PER_PUBLISHER} relayed live) on {SESSIONS} sessions, {SUBSCRIBERS} subscribers: "
        f"{delivered} deliveries + {live_total} live events in {elapsed:.2f} s "
        f"({total / elapsed:.0f} appends/s, durable SQLite): 0 lost, 0 duplicated, 0 out of order"
    )


def test_a_subscriber_that_reads_nothing_cannot_grow_the_servers_memory(subprocess_server: ServerProcess) -> None:
    count = 200_000 if SOAK else 20_000
    size = 2048
    pad = "x" * size
    with Client(subprocess_server.target, timeout=60) as reader, Client(subprocess_server.target, timeout=60) as writer:
        writer.append("slow", am.UserMessage.text("first", id="first"))
        stream = reader.subscribe("slow")
        assert isinstance(next(stream), Logged)  # subscribed; from now on it reads nothing
        start = subprocess_server.rss_kib()
        peak = middle = start
        for batch in range(count // 500):
            writer.append_many("slow", [am.UserMessage.text(pad, id=f"m{batch}-{i}") for i in range(500)])
            peak = max(peak, subprocess_server.rss_kib())
            if batch == count // 1000 - 1:
                middle = peak  # half the backlog is waiting
        growth_mib = (peak - start) / 1024
        second_half_mib = (peak - middle) / 1024
        appended_mib = count * size / (1 << 20)
        # Now it reads: everything is there, in order (flow control paused the stream, nothing was dropped).
        offsets = [1]
        for item in stream:
            offsets.append(item.offset)  # type: ignore[union-attr]
            if len(offsets) == count + 1:
                break
        stream.close()
    assert offsets == list(range(1, count + 2))
    # The log is read on demand: the server holds a batch or so per subscriber, not the backlog.
    # It grows once (page cache, transport buffers), not with the backlog: the second half adds next to nothing.
    assert growth_mib < 24, f"the server grew {growth_mib:.1f} MiB while {appended_mib:.0f} MiB waited"
    assert second_half_mib < 8, f"the second {appended_mib / 2:.0f} MiB of backlog grew it {second_half_mib:.1f} MiB"
    print(
        f"\n[load] stalled subscriber: {count} messages ({appended_mib:.0f} MiB) appended behind it; server RSS "
        f"{start / 1024:.0f} MiB -> peak {peak / 1024:.0f} MiB (+{growth_mib:.1f} MiB, "
        f"+{second_half_mib:.1f} MiB over the second half); all then read in order"
    )


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
        deadline = time.monotonic() + 5
        while "flood" not in hub._subscribers and time.monotonic() < deadline:
            time.sleep(0.01)
        done = threading.Event()
        published: list[int] = []

        def publish() -> None:
            offset, _ = writer.publish_stream("flood", events)
            published.append(offset)
            done.set()

        threading.Thread(target=publish).start()
        assert done.wait(30)  # the publisher is never held up by the slow viewer
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
