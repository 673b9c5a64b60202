"""How many subscribers one server node holds, and what they cost: the figures behind docs/reliability.md's
"Many subscribers".

``python bench/subscribers.py [--count N] [--json PATH]`` starts ``agentmsg serve --memory`` twice in a subprocess
and, from one client process on 127.0.0.1 (all streams multiplexed on one channel, as one HTTP/2 connection):

- with the default budgets, opens subscriptions until one is refused: the ceiling and the budget it names;
- with ``--max-streams 0``, opens ``N`` subscriptions (default 8,000) to one session, each confirmed by receiving
  the session's first message; then the server's resident memory per open stream, and the time one more append
  takes to reach every subscriber.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service import ServerProcess, agentmsg_server

import agentmsg as am
from agentmsg.service import AsyncClient, Client
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def open_until_refused(target: str, limit: int) -> tuple[int, str]:
    """Subscribe on one channel until a call is refused (or ``limit`` are open): how many were open, and why."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        calls = []
        try:
            for _ in range(limit):
                call = stub.Subscribe(session_service_pb2.SubscribeRequest(session_id="many"))
                calls.append(call)
                first = await call.read()  # the session's first message: this stream is open
                assert first is not grpc.aio.EOF
            return len(calls), "none"
        except grpc.aio.AioRpcError as exc:
            return len(calls) - 1, f"{exc.code().name}: {exc.details()}"
        finally:
            for call in calls:
                call.cancel()


async def fan_out(server: ServerProcess, count: int) -> dict[str, Any]:
    """``count`` subscribers of one session: memory per stream, and one append's time to reach them all."""
    before = rss_kib(server.pid)
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        calls = []
        try:
            for _ in range(count):
                call = stub.Subscribe(session_service_pb2.SubscribeRequest(session_id="many"))
                calls.append(call)
                first = await call.read()  # the session's first message: this stream is open
                assert first is not grpc.aio.EOF
            during = rss_kib(server.pid)
            start = time.perf_counter()
            async with AsyncClient(server.target, timeout=60) as client:
                await client.append("many", am.UserMessage.text("to everyone", id="second", timestamp=2))
            await asyncio.wait_for(asyncio.gather(*(call.read() for call in calls)), 120)
            reached = time.perf_counter() - start
        finally:
            for call in calls:
                call.cancel()
    return {
        "subscribers": len(calls),
        "rss_before_kib": before,
        "rss_open_kib": during,
        "kib_per_stream": (during - before) / max(len(calls), 1),
        "append_to_all_s": reached,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=8000, help="subscribers opened past the default budgets")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with agentmsg_server("--memory") as server:
        with Client(server.target) as client:
            client.append("many", am.UserMessage.text("first", id="first", timestamp=1))
        opened, why = asyncio.run(open_until_refused(server.target, 5000))
        results["default"] = {"open": opened, "refused": why}
        print(f"default budgets: {opened:,} subscriptions open, the next refused ({why})")
    with agentmsg_server("--memory", "--max-streams", "0") as server:
        with Client(server.target) as client:
            client.append("many", am.UserMessage.text("first", id="first", timestamp=1))
        found = asyncio.run(fan_out(server, args.count))
        results["unbudgeted"] = found
        print(
            f"--max-streams 0: {found['subscribers']:,} subscribers of one session on one channel; server RSS "
            f"{found['rss_before_kib'] / 1024:,.0f} -> {found['rss_open_kib'] / 1024:,.0f} MiB "
            f"({found['kib_per_stream']:.1f} KiB per open stream); one append reached all of them in "
            f"{found['append_to_all_s'] * 1000:,.0f} ms"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
