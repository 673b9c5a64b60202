"""Hostile clients: what a refused 4 MB append costs the server, and what the others see meanwhile.

``python bench/refusals.py [--rounds 20] [--quick] [--json FILE]`` starts ``agentmsg serve --memory`` with tokens in a
subprocess and measures, from a client on loopback:

- an unauthenticated ~4 MB ``AppendMessage`` (150,000 text blocks) refused: UNAUTHENTICATED, round trip;
- the same request with a token of another tenant: PERMISSION_DENIED, round trip;
- the same request accepted (the decoding and storing the refusals skip), for comparison;
- health checks and another tenant's small appends run back to back in a second thread while the
  unauthenticated refusals go on: their slowest round trip.

The tests (``tests/service/test_hostile_clients.py``) assert the behaviour (nothing of a refused request is
decoded; the others are answered); the durations live here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import Client
from agentmsg.service.frames import append_request

APPEND = "/agentmsg.v1.SessionService/AppendMessage"


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def big_request(session: str) -> bytes:
    message = am.UserMessage([am.TextContent("x" * 20) for _ in range(150_000)], id="big", timestamp=1)
    return append_request(session, message.to_bytes())


def timed(call: grpc.UnaryUnaryMultiCallable, request: bytes, token: str | None) -> tuple[float, str]:
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    start = time.perf_counter()
    try:
        call(request, timeout=120, metadata=metadata)
        code = "OK"
    except grpc.RpcError as exc:
        code = exc.code().name  # type: ignore[attr-defined]
    return time.perf_counter() - start, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="5 rounds (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.rounds = min(args.rounds, 5)
    request = big_request("acme:big")
    # The accepted append is measured too, so the block limits must let its 150,000 blocks through.
    server = ServerProcess(
        "--memory",
        "--max-message-mb",
        "64",
        "--max-blocks",
        "200000",
        "--max-request-blocks",
        "200000",
        "--token",
        "acme=acme:*",
        "--token",
        "globex=globex:*",
    )
    try:
        options = [("grpc.max_send_message_length", 64 << 20)]
        with grpc.insecure_channel(server.target, options=options) as channel:
            append = channel.unary_unary(APPEND)
            timed(append, request, None)  # warm the connection
            figures: dict[str, object] = {"request_bytes": len(request)}
            for name, token in (("unauthenticated", None), ("other_tenant", "globex")):
                runs = [timed(append, request, token) for _ in range(args.rounds)]
                assert {code for _, code in runs} == {"UNAUTHENTICATED" if token is None else "PERMISSION_DENIED"}
                seconds = [s for s, _ in runs]
                figures[name] = {"median_ms": ms(statistics.median(seconds)), "max_ms": ms(max(seconds))}
            accepted, code = timed(append, request, "acme")
            assert code == "OK", code
            figures["accepted_ms"] = ms(accepted)

            slowest = {"health": 0.0, "append": 0.0}
            done = threading.Event()

            def others() -> None:
                with (
                    grpc.insecure_channel(server.target) as probe,
                    Client(server.target, token="globex", timeout=30) as globex,
                ):
                    health = health_pb2_grpc.HealthStub(probe)
                    i = 0
                    while not done.is_set():
                        start = time.perf_counter()
                        health.Check(health_pb2.HealthCheckRequest(), timeout=30)
                        slowest["health"] = max(slowest["health"], time.perf_counter() - start)
                        start = time.perf_counter()
                        globex.append("globex:s", am.UserMessage.text(f"m{i}", id=f"m{i}"))
                        slowest["append"] = max(slowest["append"], time.perf_counter() - start)
                        i += 1

            worker = threading.Thread(target=others)
            worker.start()
            for _ in range(args.rounds):
                timed(append, request, None)
            done.set()
            worker.join(60)
            figures["during_refusals_slowest_ms"] = {key: ms(value) for key, value in slowest.items()}
    finally:
        server.stop()
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
