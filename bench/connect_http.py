"""HTTP benchmark: one server over gRPC, Connect binary and Connect JSON, beside A2A's HTTP+JSON, on 127.0.0.1.

One ``agentmsg serve --memory --http 0`` process serves the three agentmsg transports; the A2A peer is a2a-sdk's
own HTTP+JSON (REST) binding in another process (``bench/a2a_peer.py rest``: its ``DefaultRequestHandler`` and
REST routes under uvicorn, an agent executor answering every ``SendMessage`` with one fixed message). The clients
run in this process: grpcio's own async stub for gRPC, connectrpc's async client (its binary and its JSON codec)
for Connect, a2a-sdk's own client over its HTTP+JSON transport for A2A. Measured:

- ``AppendMessage`` latency p50/p99, one caller, a short text message, beside A2A's comparable round trip: a
  ``SendMessage`` of the same text answered by the agent's message. Interleaved rounds (each round every caller in
  turn, the order rotated from round to round); each ratio is the median of the per-round ratios of p50s;
- ``Subscribe`` delivery: messages per second to one subscriber reading a prefilled session from offset 0 (one
  transport after another; A2A has no log to read).

Targets (printed PASS/MISS): Connect binary append p50 <= 1.5x gRPC's, Connect JSON <= 2x; both faster than
A2A HTTP+JSON's send (p50 ratio < 1).

Connect JSON's Subscribe rate is bounded by ProtoJSON in Python on both sides: the server's
``google.protobuf.json_format`` encoding (most of the server's time under cProfile) and the client's parse.

Run: ``make bench`` or ``.venv/bin/python bench/connect_http.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import grpc
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec

import agentmsg as am
from agentmsg.v1 import session_service_pb2 as sessions
from agentmsg.v1 import session_service_pb2_grpc
from agentmsg.v1.session_service_connect import SessionServiceClient

sys.path.insert(0, str(Path(__file__).resolve().parent))

from a2a.types import SendMessageRequest
from a2a_peer import ANSWER, Peer, a2a_client, cpu_seconds, question

TRANSPORTS = ("grpc", "connect-proto", "connect-json")
TARGETS = {"connect-proto": 1.5, "connect-json": 2.0}  # append p50 at most this many times gRPC's
A2A = "a2a-http-json"  # a2a-sdk's HTTP+JSON binding: Connect's appends must be faster than its send


def start_server() -> tuple[subprocess.Popen[str], str, int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmsg", "serve", "--memory", "--port", "0", "--http", "0", "--grace", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    grpc_target, http_port = "", 0
    for _ in range(20):
        line = process.stdout.readline()
        if found := re.search(r"serving on (127\.0\.0\.1:\d+)", line):
            grpc_target = found.group(1)
        if found := re.search(r"gRPC-Web on http://127\.0\.0\.1:(\d+)", line):
            http_port = int(found.group(1))
            return process, grpc_target, http_port
    process.kill()
    raise SystemExit("the server did not start")


def message(i: int) -> Any:
    return am.UserMessage.text(f"message {i}: what is the weather in Lisbon tomorrow?").pb


class Caller:
    """AppendMessage and Subscribe over one transport."""

    def __init__(self, name: str, grpc_target: str, http_port: int) -> None:
        self.name = name
        if name == "grpc":
            options = [("grpc.max_receive_message_length", 64 << 20)]
            self.channel = grpc.aio.insecure_channel(grpc_target, options)
            self.stub: Any = session_service_pb2_grpc.SessionServiceStub(self.channel)
        else:
            codec = google_protobuf_binary_codec() if name == "connect-proto" else google_protobuf_json_codec()
            self.client = SessionServiceClient(f"http://127.0.0.1:{http_port}", codec=codec, send_compression=None)

    async def append(self, request: Any) -> Any:
        if self.name == "grpc":
            return await self.stub.AppendMessage(request, timeout=30)
        return await self.client.append_message(request, timeout_ms=30_000)

    def subscribe(self, request: Any) -> Any:
        if self.name == "grpc":
            return self.stub.Subscribe(request, timeout=600)
        return self.client.subscribe(request, timeout_ms=600_000)

    async def close(self) -> None:
        if self.name == "grpc":
            await self.channel.close()
        else:
            await self.client.close()


async def timed(call: Callable[[int], Awaitable[Any]], count: int, warmup: int) -> list[float]:
    for i in range(warmup):
        await call(-1 - i)
    samples = []
    for i in range(count):
        start = time.perf_counter()
        await call(i)
        samples.append(time.perf_counter() - start)
    return samples


async def send_a2a(client: Any, i: int) -> None:
    replies = [event async for event in client.send_message(SendMessageRequest(message=question(i)))]
    if len(replies) != 1 or replies[0].message.parts[0].text != ANSWER:
        raise SystemExit(f"the A2A peer answered {replies!r}")


async def interleaved(
    calls: dict[str, Callable[[int], Awaitable[Any]]],
    servers: dict[str, int],
    rounds: int,
    per_round: int,
    warmup: int,
) -> tuple[dict[str, list[float]], list[dict[str, float]], dict[str, float]]:
    """Every caller ``per_round`` calls a round, in turn, the order rotated each round.

    All samples, the per-round p50s, and each caller's server process's CPU seconds (``servers``: its pid) while it ran.
    """
    names = list(calls)
    for name in names:
        await timed(calls[name], 0, warmup)
    samples: dict[str, list[float]] = {name: [] for name in names}
    medians: list[dict[str, float]] = []
    cpu = dict.fromkeys(names, 0.0)
    counter = 0
    for round_ in range(rounds):
        shift = round_ % len(names)
        p50s = {}
        for name in names[shift:] + names[:shift]:
            call = calls[name]

            async def numbered(i: int, call: Callable[[int], Awaitable[Any]] = call, base: int = counter) -> None:
                await call(base + i)

            before = cpu_seconds(servers[name])
            taken = await timed(numbered, per_round, warmup=0)
            cpu[name] += cpu_seconds(servers[name]) - before
            counter += per_round
            samples[name] += taken
            p50s[name] = statistics.median(taken)
        medians.append(p50s)
    return samples, medians, cpu


async def measure(
    grpc_target: str, http_port: int, peer_url: str, servers: dict[str, int], rounds: int, per_round: int, prefill: int
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    filler = Caller("grpc", grpc_target, http_port)
    for start in range(0, prefill, 500):
        batch = [message(i) for i in range(start, min(start + 500, prefill))]
        await filler.stub.AppendMessages(sessions.AppendMessagesRequest(session_id="read", messages=batch), timeout=60)
    await filler.close()
    callers = {name: Caller(name, grpc_target, http_port) for name in TRANSPORTS}
    peer = await a2a_client("rest", peer_url)
    try:
        calls: dict[str, Callable[[int], Awaitable[Any]]] = {}
        for name, caller in callers.items():

            async def append(i: int, caller: Caller = caller, session: str = f"append-{name}") -> None:
                await caller.append(sessions.AppendMessageRequest(session_id=session, message=message(i)))

            calls[name] = append

        async def send(i: int) -> None:
            await send_a2a(peer, i)

        calls[A2A] = send
        samples, medians, cpu = await interleaved(calls, servers, rounds, per_round, warmup=min(100, per_round))
    finally:
        await peer.close()
        for caller in callers.values():
            await caller.close()
    for name, taken in samples.items():
        quantiles = statistics.quantiles(taken, n=100)
        results[name] = {
            "append_p50_us": statistics.median(taken) * 1e6,
            "append_p99_us": quantiles[98] * 1e6,
            "server_cpu_us": cpu[name] / len(taken) * 1e6,
        }
    for name in TARGETS:
        results[name]["append_ratio"] = statistics.median(m[name] / m["grpc"] for m in medians)
        results[name]["a2a_ratio"] = statistics.median(m[name] / m[A2A] for m in medians)
    results[A2A]["round_p50s_us"] = [m[A2A] * 1e6 for m in medians]
    for name in TRANSPORTS:
        caller = Caller(name, grpc_target, http_port)
        try:
            start = time.perf_counter()
            seen = 0
            stream = caller.subscribe(sessions.SubscribeRequest(session_id="read", max_batch=256))
            async for reply in stream:
                seen += len(reply.messages)
                if seen >= prefill:
                    break
            seconds = time.perf_counter() - start
            if name == "grpc":
                stream.cancel()
            else:
                await stream.aclose()
            results[name]["subscribe_msgs_per_s"] = seen / seconds
        finally:
            await caller.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    rounds, per_round, prefill = (3, 100, 5_000) if args.quick else (10, 200, 50_000)
    began = time.perf_counter()
    load_start = os.getloadavg()
    process, grpc_target, http_port = start_server()
    try:
        with Peer("rest") as peer:
            servers = {**dict.fromkeys(TRANSPORTS, process.pid), A2A: peer.process.pid}
            figures = asyncio.run(measure(grpc_target, http_port, peer.url, servers, rounds, per_round, prefill))
    finally:
        process.terminate()
        process.wait(30)
    targets = []
    for name, limit in TARGETS.items():
        ratio = figures[name]["append_ratio"]
        targets.append(
            {"text": f"{name} append p50 <= {limit}x gRPC's: {ratio:.2f}x", "pass": ratio <= limit, "ratio": ratio}
        )
    for name in TARGETS:
        ratio = figures[name]["a2a_ratio"]
        targets.append(
            {
                "text": f"{name} append p50 faster than A2A HTTP+JSON's send p50 (< 1x): {ratio:.2f}x",
                "pass": ratio < 1.0,
                "ratio": ratio,
            }
        )
    print(f"{rounds} interleaved rounds of {per_round} calls per caller; ratios are medians of per-round ratios")
    print(
        f"{'transport':<14} {'append p50':>11} {'append p99':>11} {'vs gRPC':>8} {'vs A2A':>7} {'server CPU':>11} "
        f"{'Subscribe':>14}"
    )
    for name in TRANSPORTS:
        row = figures[name]
        vs_grpc = f"{row['append_ratio']:.2f}x" if "append_ratio" in row else "1.00x"
        vs_a2a = f"{row['a2a_ratio']:.2f}x" if "a2a_ratio" in row else "-"
        print(
            f"{name:<14} {row['append_p50_us']:>9.0f}us {row['append_p99_us']:>9.0f}us {vs_grpc:>8} {vs_a2a:>7} "
            f"{row['server_cpu_us']:>9.0f}us {row['subscribe_msgs_per_s']:>10,.0f} msg/s"
        )
    row = figures[A2A]
    print(
        f"{A2A:<14} {row['append_p50_us']:>9.0f}us {row['append_p99_us']:>9.0f}us {'':>8} {'':>7} "
        f"{row['server_cpu_us']:>9.0f}us  (SendMessage, a2a-sdk {version('a2a-sdk')})"
    )
    for target in targets:
        print(f"{'PASS' if target['pass'] else 'MISS'}  {target['text']}")
    results = {
        "command": "bench/connect_http.py" + (" --quick" if args.quick else ""),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "appends": rounds * per_round,
        "rounds": rounds,
        "per_round": per_round,
        "prefill": prefill,
        "a2a_sdk": version("a2a-sdk"),
        "transports": figures,
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
