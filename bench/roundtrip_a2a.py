"""Agent-to-agent round trip: a durable append seen by a subscriber, against A2A's gRPC binding, on 127.0.0.1.

agentmsg: ``agentmsg serve --db FILE`` (the SQLite store: WAL, ``synchronous=FULL``, every acknowledged append
on disk) in its own process; a subscriber in another process, already subscribed to the session with
agentmsg's ``AsyncClient.subscribe``; this process appends a short text message with ``AsyncClient.append``.
One round trip is from the start of the append to the moment the subscriber has the message (the subscriber
stamps it with ``CLOCK_MONOTONIC``, which every process on the machine shares, and tells this process over a
pipe before the next append starts; the telling is not timed). The appender's own wait for the
acknowledgement is printed beside it.

A2A: a2a-sdk's gRPC binding in its own process (``bench/a2a_peer.py grpc``: its ``DefaultRequestHandler`` and
``GrpcHandler``, an agent executor answering every ``SendMessage`` with one fixed message); this process sends
the same text with a2a-sdk's own client over its gRPC transport and waits for the agent's message. A2A stores
nothing.

Beside them, in the same rounds and not in the ratio, the same agentmsg round trip on a second server on the
memory store (``--memory``): what the durable commit costs.

Interleaved rounds (the sides in turn, the order reversed every other round), p50 per side per round, the
ratio taken per round and its median printed, with each server process's CPU per round trip.

Target (printed PASS/MISS): agentmsg's durable round trip p50 <= 1.2x A2A gRPC's send p50.

Run: ``make bench`` or ``.venv/bin/python bench/roundtrip_a2a.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from importlib.metadata import version
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from a2a.types import SendMessageRequest
from a2a_peer import ANSWER, Peer, a2a_client, cpu_seconds, question

import agentmsg as am
from agentmsg.service import AsyncClient, Logged

TARGET = 1.2  # agentmsg's durable round trip p50 at most this many times A2A gRPC's send p50
MEMORY = "agentmsg-memory"  # the same round trip on the memory store: what durability costs, not in the ratio


def text(i: int) -> am.UserMessage:
    return am.UserMessage.text(f"message {i}: what is the weather in Lisbon tomorrow?")


# --- the subscriber, in its own process -----------------------------------------------------------------


def _subscriber(target: str, session: str, pipe: Connection) -> None:
    asyncio.run(_subscribe(target, session, pipe))


async def _subscribe(target: str, session: str, pipe: Connection) -> None:
    async with AsyncClient(target, timeout=None) as client:
        async for item in client.subscribe(session):
            if isinstance(item, Logged):
                pipe.send((item.offset, time.monotonic_ns()))


async def received(pipe: Connection) -> tuple[int, int]:
    """The subscriber's next (offset, when it had the message), without blocking the loop."""
    if not pipe.poll():
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        loop.add_reader(pipe.fileno(), lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, 60)
        finally:
            loop.remove_reader(pipe.fileno())
    offset, stamp = pipe.recv()
    return int(offset), int(stamp)


# --- the two round trips ---------------------------------------------------------------------------------


class Agentmsg:
    """Append, then wait until the subscriber (its own process) has the message; the acknowledgements kept."""

    def __init__(self, target: str) -> None:
        self.session = f"roundtrip-{uuid.uuid4().hex[:8]}"
        spawn = mp.get_context("spawn")
        self.pipe, theirs = spawn.Pipe()
        self.subscriber = spawn.Process(target=_subscriber, args=(target, self.session, theirs), daemon=True)
        self.subscriber.start()
        self.client = AsyncClient(target)
        self.acks: list[float] = []

    async def started(self) -> None:
        """Once the subscriber has the first append (it reads the session from its start, then live), it is live."""
        first = await self.client.append(self.session, text(-1))
        deadline = time.monotonic() + 60
        while not self.pipe.poll(0.05):
            if not self.subscriber.is_alive() or time.monotonic() > deadline:
                raise SystemExit("the subscriber did not start")
        seen, _ = await received(self.pipe)
        if seen != first:
            raise SystemExit(f"the subscriber saw offset {seen} first, not {first}")

    async def __call__(self, i: int) -> float:
        start = time.monotonic_ns()
        offset = await self.client.append(self.session, text(i))
        self.acks.append((time.monotonic_ns() - start) / 1e9)
        seen, stamp = await received(self.pipe)
        if seen != offset:
            raise SystemExit(f"the subscriber saw offset {seen}, the append was given {offset}")
        return (stamp - start) / 1e9

    async def close(self) -> None:
        await self.client.close()
        self.subscriber.terminate()
        self.subscriber.join(30)


class A2A:
    """a2a-sdk's client: send, wait for the agent's message."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def __call__(self, i: int) -> float:
        start = time.monotonic_ns()
        replies = [event async for event in self.client.send_message(SendMessageRequest(message=question(i)))]
        taken = (time.monotonic_ns() - start) / 1e9
        if len(replies) != 1 or replies[0].message.parts[0].text != ANSWER:
            raise SystemExit(f"the A2A peer answered {replies!r}")
        return taken


async def measure(
    targets: dict[str, str], peer_url: str, servers: dict[str, int], rounds: int, per_round: int, warmup: int
) -> dict[str, Any]:
    """``targets``: each agentmsg side's server address; ``servers``: each side's server pid."""
    mine = {side: Agentmsg(target) for side, target in targets.items()}
    peer = await a2a_client("grpc", peer_url)
    try:
        for agentmsg in mine.values():
            await agentmsg.started()
        sides: dict[str, Callable[[int], Awaitable[float]]] = {**mine, "a2a-grpc": A2A(peer)}
        for call in sides.values():
            for i in range(warmup):
                await call(-2 - i)
        for agentmsg in mine.values():
            agentmsg.acks.clear()
        order = list(sides)
        samples: dict[str, list[float]] = {side: [] for side in order}
        cpu = dict.fromkeys(order, 0.0)
        per_round_p50: list[dict[str, float]] = []
        for round_ in range(rounds):
            p50s = {}
            for side in order if round_ % 2 == 0 else reversed(order):
                before = cpu_seconds(servers[side])
                taken = [await sides[side](round_ * per_round + i) for i in range(per_round)]
                cpu[side] += cpu_seconds(servers[side]) - before
                samples[side] += taken
                p50s[side] = statistics.median(taken)
            per_round_p50.append(p50s)
            print(
                f"  round {round_ + 1}/{rounds}: agentmsg (SQLite) {p50s['agentmsg'] * 1e3:.2f} ms, A2A gRPC "
                f"{p50s['a2a-grpc'] * 1e3:.2f} ms: {p50s['agentmsg'] / p50s['a2a-grpc']:.2f}x; agentmsg (memory) "
                f"{p50s[MEMORY] * 1e3:.2f} ms",
                flush=True,
            )
    finally:
        await peer.close()
        for agentmsg in mine.values():
            await agentmsg.close()
    figures: dict[str, Any] = {}
    for side, taken in samples.items():
        quantiles = statistics.quantiles(taken, n=100)
        figures[side] = {
            "p50_ms": statistics.median(taken) * 1e3,
            "p99_ms": quantiles[98] * 1e3,
            "server_cpu_us": cpu[side] / len(taken) * 1e6,
            "round_p50s_ms": [p[side] * 1e3 for p in per_round_p50],
        }
    for side, agentmsg in mine.items():
        figures[side]["ack_p50_ms"] = statistics.median(agentmsg.acks) * 1e3
    ratios = [p["agentmsg"] / p["a2a-grpc"] for p in per_round_p50]
    return {"sides": figures, "ratio": statistics.median(ratios), "round_ratios": ratios}


def start_agentmsg(store: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmsg", "serve", *store, "--port", "0", "--grace", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for _ in range(20):
        line = process.stdout.readline()
        if "serving on " in line:
            # Whatever the server prints later is read, so that a full pipe never stalls it.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, line.split("serving on ", 1)[1].split()[0]
    process.kill()
    raise SystemExit("the agentmsg server did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    rounds, per_round, warmup = (3, 100, 30) if args.quick else (9, 200, 100)
    began = time.perf_counter()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="agentmsg-roundtrip-") as directory:
        durable, durable_target = start_agentmsg(["--db", str(Path(directory) / "roundtrip.db")])
        memory, memory_target = start_agentmsg(["--memory"])
        try:
            with Peer("grpc") as peer:
                servers = {"agentmsg": durable.pid, MEMORY: memory.pid, "a2a-grpc": peer.process.pid}
                print(f"{rounds} interleaved rounds of {per_round} round trips a side", flush=True)
                measured = asyncio.run(
                    measure(
                        {"agentmsg": durable_target, MEMORY: memory_target},
                        peer.url,
                        servers,
                        rounds,
                        per_round,
                        warmup,
                    )
                )
        finally:
            for process in (durable, memory):
                process.terminate()
                process.wait(30)
    ratio = measured["ratio"]
    targets = [
        {
            "name": "roundtrip_vs_a2a_grpc",
            "text": f"durable round trip (append, a subscriber sees it; SQLite) p50 <= {TARGET}x A2A gRPC's send "
            f"p50: {ratio:.2f}x",
            "pass": ratio <= TARGET,
            "ratio": ratio,
        }
    ]
    a, b, m = measured["sides"]["agentmsg"], measured["sides"]["a2a-grpc"], measured["sides"][MEMORY]
    print(f"{'side':<40} {'p50':>9} {'p99':>9} {'server CPU':>11}")
    print(
        f"{'agentmsg: append -> subscriber (SQLite)':<40} {a['p50_ms']:>7.2f}ms {a['p99_ms']:>7.2f}ms "
        f"{a['server_cpu_us']:>9.0f}us  (the appender's acknowledgement p50 {a['ack_p50_ms']:.2f} ms)"
    )
    print(
        f"{'A2A gRPC: send -> agent reply':<40} {b['p50_ms']:>7.2f}ms {b['p99_ms']:>7.2f}ms "
        f"{b['server_cpu_us']:>9.0f}us  (a2a-sdk {version('a2a-sdk')})"
    )
    print(
        f"{'agentmsg: the same on the memory store':<40} {m['p50_ms']:>7.2f}ms {m['p99_ms']:>7.2f}ms "
        f"{m['server_cpu_us']:>9.0f}us  (not in the ratio: what durability costs)"
    )
    for target in targets:
        print(f"{'PASS' if target['pass'] else 'MISS'}  {target['text']}")
    results = {
        "command": "bench/roundtrip_a2a.py" + (" --quick" if args.quick else ""),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "rounds": rounds,
        "per_round": per_round,
        "a2a_sdk": version("a2a-sdk"),
        **measured,
        "targets": targets,
        "total_s": time.perf_counter() - began,
        "load_average": load_start,
        "load_average_end": os.getloadavg(),
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
