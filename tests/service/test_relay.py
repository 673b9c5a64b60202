"""The cluster's live relay, in process: two nodes' ``Cluster`` parts over one PostgreSQL.

How events travel (batched ``NOTIFY`` payloads, a spill table for large ones),
what a node does with lines it cannot read, and how a publisher is paced when
the relay falls behind. The same paths through real server processes are in
``test_cluster.py``.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from conftest import fresh_database

from agentmsg.service import cluster as cluster_module
from agentmsg.service.cluster import PAYLOAD_LIMIT, Cluster
from agentmsg.service.handlers.tools import ToolHandler
from agentmsg.service.live import LiveHub
from agentmsg.service.localpg import LocalPostgres
from agentmsg.service.stores.postgres import LIVE_CHANNEL, PostgresStore
from agentmsg.v1 import session_service_pb2, stream_pb2


@pytest.fixture
def url(postgres: LocalPostgres) -> str:
    return fresh_database(postgres)


def event(n: int, size: int) -> session_service_pb2.LiveEvent:
    """Live event ``n``: a text delta of ``size`` characters that starts with its number."""
    text = f"{n}:".ljust(size, "x")
    delta = stream_pb2.BlockDelta(text=stream_pb2.TextDelta(text=text))
    return session_service_pb2.LiveEvent(stream_id="st", event=stream_pb2.StreamEvent(block_delta=delta))


def number(live: session_service_pb2.LiveEvent) -> int:
    return int(live.event.block_delta.text.text.split(":", 1)[0])


@asynccontextmanager
async def node(url: str) -> AsyncIterator[tuple[Cluster, LiveHub]]:
    store = PostgresStore(url, pool_size=4, health_interval=0.2)
    await store.start()
    hub = LiveHub()
    cluster = Cluster(store, "127.0.0.1:1")  # no tool calls cross in these tests: the address is never dialled
    await cluster.start(hub, ToolHandler())
    try:
        yield cluster, hub
    finally:
        await cluster.stop()
        await store.close()


async def collect(hub: LiveHub, session_id: str, count: int, ready: asyncio.Event) -> list[int]:
    got: list[int] = []
    with hub.subscribe(session_id) as queue:
        ready.set()
        async with asyncio.timeout(30):
            while len(got) < count:
                got.append(number(await queue.get()))
    return got


def run(body: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(body())


def test_events_cross_in_order_batched_with_large_ones_spilled(url: str) -> None:
    # Small deltas, a few that only just fit a notification alone (base64 grows them by a third), and some
    # far over it (spilled), interleaved.
    near = (PAYLOAD_LIMIT - 200) * 3 // 4
    sizes = [20 if n % 50 else (near if n % 100 else 30_000) for n in range(1, 1001)]

    async def body() -> None:
        async with node(url) as (a, _), node(url) as (b, hub_b):
            payloads: list[str] = []
            b.store.on_channel(LIVE_CHANNEL, payloads.append)
            ready = asyncio.Event()
            receiver = asyncio.ensure_future(collect(hub_b, "s", len(sizes), ready))
            await ready.wait()
            for n, size in enumerate(sizes, 1):
                a.relay("s", event(n, size))
            await a.flush()
            assert await receiver == list(range(1, len(sizes) + 1))
            ours = [p for p in payloads if p.startswith(a.node_id)]
            assert all(len(p.encode()) < 8000 for p in ours)
            # Many events per notification: far fewer notifications than events.
            assert len(ours) < len(sizes) / 5, len(ours)
            spilled = sum(p.count(" s:") for p in ours)
            assert spilled == sizes.count(30_000)

    run(body)


def test_a_node_skips_lines_it_cannot_read_and_delivers_the_rest(url: str) -> None:
    async def body() -> None:
        async with node(url) as (_, hub_a), node(url) as (b, _):
            ready = asyncio.Event()
            receiver = asyncio.ensure_future(collect(hub_a, "s", 3, ready))
            await ready.wait()
            good = [f"s b:{base64.b64encode(event(n, 5).SerializeToString()).decode()}" for n in (1, 2, 3)]
            bad = ["", "no-kind-here", "s x:what", "s b:not base64!", "s b:" + "AAAA" * 3, "s s:not-a-number"]
            await b.store.notify(LIVE_CHANNEL, "\n".join(["another-node", good[0], *bad[:3], good[1], *bad[3:]]))
            await b.store.notify(LIVE_CHANNEL, "garbage without lines")
            await b.store.notify(LIVE_CHANNEL, "\n".join(["another-node", good[2]]))
            assert await receiver == [1, 2, 3]

    run(body)


def test_a_publisher_ahead_of_the_relay_waits_for_it(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_module, "OUTBOX_LIMIT", 10)

    async def body() -> None:
        async with node(url) as (a, _):
            for n in range(1, 40):
                a.relay("s", event(n, 20))
            assert a._outbox.qsize() >= 10  # nothing has gone out yet: the sender has not run
            await a.pace()
            assert a._outbox.qsize() == 0
            a.relay("s", event(40, 20))
            await a.pace()  # under the limit: no wait at all, so the sender has not run and the event still waits
            assert a._outbox.qsize() == 1

    run(body)
