"""HTTP benchmark: the same server over gRPC, Connect binary and Connect JSON, side by side, on 127.0.0.1.

One ``agentmsg serve --memory --http 0`` process serves all three; the clients run in this process, one
transport after another: grpcio's own async stub for gRPC, connectrpc's async client (its binary and its
JSON codec) for Connect. Measured:

- ``AppendMessage`` latency p50/p99, one caller, a short text message;
- ``Subscribe`` delivery: messages per second to one subscriber reading a prefilled session from offset 0.

Targets (printed PASS/MISS): Connect binary append p50 <= 1.5x gRPC's, Connect JSON <= 2x.
A2A's HTTP+JSON binding (a2a-sdk) is not compared here.

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
from pathlib import Path
from typing import Any

import grpc
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec

import agentmsg as am
from agentmsg.v1 import session_service_pb2 as sessions
from agentmsg.v1 import session_service_pb2_grpc
from agentmsg.v1.session_service_connect import SessionServiceClient

TRANSPORTS = ("grpc", "connect-proto", "connect-json")
TARGETS = {"connect-proto": 1.5, "connect-json": 2.0}  # append p50 at most this many times gRPC's


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


async def measure(grpc_target: str, http_port: int, appends: int, prefill: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    filler = Caller("grpc", grpc_target, http_port)
    for start in range(0, prefill, 500):
        batch = [message(i) for i in range(start, min(start + 500, prefill))]
        await filler.stub.AppendMessages(sessions.AppendMessagesRequest(session_id="read", messages=batch), timeout=60)
    await filler.close()
    for name in TRANSPORTS:
        caller = Caller(name, grpc_target, http_port)
        try:
            session = f"append-{name}"

            async def append(i: int, caller: Caller = caller, session: str = session) -> None:
                await caller.append(sessions.AppendMessageRequest(session_id=session, message=message(i)))

            samples = await timed(append, appends, warmup=min(100, appends // 5))
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
            quantiles = statistics.quantiles(samples, n=100)
            results[name] = {
                "append_p50_us": statistics.median(samples) * 1e6,
                "append_p99_us": quantiles[98] * 1e6,
                "subscribe_msgs_per_s": seen / seconds,
            }
        finally:
            await caller.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    appends, prefill = (300, 5_000) if args.quick else (2_000, 50_000)
    began = time.perf_counter()
    load_start = os.getloadavg()
    process, grpc_target, http_port = start_server()
    try:
        figures = asyncio.run(measure(grpc_target, http_port, appends, prefill))
    finally:
        process.terminate()
        process.wait(30)
    base = figures["grpc"]["append_p50_us"]
    targets = []
    for name, limit in TARGETS.items():
        ratio = figures[name]["append_p50_us"] / base
        figures[name]["append_ratio"] = ratio
        targets.append(
            {"text": f"{name} append p50 <= {limit}x gRPC's: {ratio:.2f}x", "pass": ratio <= limit, "ratio": ratio}
        )
    print(f"{'transport':<14} {'append p50':>11} {'append p99':>11} {'Subscribe':>14}")
    for name in TRANSPORTS:
        row = figures[name]
        print(
            f"{name:<14} {row['append_p50_us']:>9.0f}us {row['append_p99_us']:>9.0f}us "
            f"{row['subscribe_msgs_per_s']:>10,.0f} msg/s"
        )
    for target in targets:
        print(f"{'PASS' if target['pass'] else 'MISS'}  {target['text']}")
    print("A2A HTTP+JSON (a2a-sdk): not compared in this run")
    results = {
        "command": "bench/connect_http.py" + (" --quick" if args.quick else ""),
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "appends": appends,
        "prefill": prefill,
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
