"""Service benchmark: the agentmsg server against a bare gRPC echo and raw TCP, on 127.0.0.1.

Every server runs in its own process; clients run in this process or in
worker processes. Measured in one run, side by side:

- append latency, p50/p99, at 1 and 16 concurrent clients, next to a bare gRPC
  echo of the same request bytes (a unary method that returns its input);
- subscribe delivery: messages per second per subscriber, decoded into
  wrappers, for 1 and 10 concurrent subscribers (each its own process);
- a 1 MiB image message appended, as a fraction of a raw TCP loopback transfer
  of the same bytes (send 1 MiB, read a 1-byte ack);
- append throughput of the SQLite store (WAL, synchronous=FULL: every
  acknowledged append is on disk) against the in-memory store.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Logged
from agentmsg.service.server import HTTP2_MAX_FRAME
from agentmsg.v1 import session_service_pb2

ECHO_METHOD = "/bench.Echo/Echo"


# --- servers in their own processes --------------------------------------------------------


@contextmanager
def agentmsg_server(*args: str) -> Iterator[str]:
    """``agentmsg serve --port 0 ...`` in a subprocess; yields its target."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmsg", "serve", "--port", "0", "--max-concurrent-rpcs", "1024", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "serving on" not in line:
        process.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    try:
        yield line.split("serving on ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(15)


def _echo_main(port_out: Any) -> None:
    async def main() -> None:
        async def echo(request: bytes, context: Any) -> bytes:
            return request

        async def sink(request: bytes, context: Any) -> bytes:
            return b""

        handler = grpc.method_handlers_generic_handler(
            "bench.Echo",
            {"Echo": grpc.unary_unary_rpc_method_handler(echo), "Sink": grpc.unary_unary_rpc_method_handler(sink)},
        )
        server = grpc.aio.server(
            options=[("grpc.max_receive_message_length", 64 << 20), ("grpc.http2.max_frame_size", HTTP2_MAX_FRAME)]
        )
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        port_out.send(port)
        await server.wait_for_termination()

    asyncio.run(main())


@contextmanager
def echo_server() -> Iterator[str]:
    """A bare grpc.aio server with one unary method returning its input bytes."""
    parent, child = mp.Pipe()
    process = mp.Process(target=_echo_main, args=(child,), daemon=True)
    process.start()
    port = parent.recv()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.join(5)


def _tcp_sink_main(port_out: Any) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port_out.send(listener.getsockname()[1])
        connection, _ = listener.accept()
        with connection:
            while True:
                header = connection.recv(8, socket.MSG_WAITALL)
                if len(header) < 8:
                    return
                remaining = int.from_bytes(header, "big")
                while remaining:
                    chunk = connection.recv(min(remaining, 1 << 20))
                    if not chunk:
                        return
                    remaining -= len(chunk)
                connection.sendall(b"k")


# --- measurements ---------------------------------------------------------------------------


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def text_message(i: int) -> am.UserMessage:
    return am.UserMessage.text(f"message {i}: " + "lorem ipsum " * 8, id=f"m-{i}", timestamp=1_750_000_000 + i)


def append_latency(target: str, clients: int, count: int) -> list[float]:
    """Seconds per append for ``clients`` concurrent async clients, ``count`` appends each."""

    async def one(index: int) -> list[float]:
        async with AsyncClient(target) as client:
            times = []
            for i in range(count):
                message = text_message(index * 1_000_000 + i)
                start = time.perf_counter()
                await client.append(f"lat-{index}", message)
                times.append(time.perf_counter() - start)
            return times

    async def main() -> list[float]:
        results = await asyncio.gather(*(one(i) for i in range(clients)))
        return [t for r in results for t in r]

    return asyncio.run(main())


def echo_latency(target: str, clients: int, count: int) -> list[float]:
    """The same, for the bare echo with the same request bytes."""
    payload = session_service_pb2.AppendMessageRequest(
        session_id="lat-0", message=text_message(0).pb
    ).SerializeToString()

    async def one() -> list[float]:
        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.unary_unary(ECHO_METHOD)
            times = []
            for _ in range(count):
                start = time.perf_counter()
                await call(payload)
                times.append(time.perf_counter() - start)
            return times

    async def main() -> list[float]:
        results = await asyncio.gather(*(one() for _ in range(clients)))
        return [t for r in results for t in r]

    return asyncio.run(main())


def _subscriber_main(target: str, session: str, total: int, out: Any) -> None:
    with Client(target, timeout=None) as client:
        start = time.perf_counter()
        received = 0
        blocks = 0
        for item in client.subscribe(session, max_batch=2000):
            assert isinstance(item, Logged)
            blocks += len(item.message.contents)  # decoded into wrappers, blocks included
            received += 1
            if received == total:
                break
        elapsed = time.perf_counter() - start
    out.send((received, blocks, elapsed))


def subscribe_rates(target: str, session: str, total: int, subscribers: int) -> list[float]:
    """Messages per second each subscriber received (each in its own process)."""
    pipes = []
    processes = []
    for _ in range(subscribers):
        parent, child = mp.Pipe()
        process = mp.Process(target=_subscriber_main, args=(target, session, total, child), daemon=True)
        process.start()
        pipes.append(parent)
        processes.append(process)
    rates = []
    for parent, process in zip(pipes, processes, strict=True):
        received, _, elapsed = parent.recv()
        process.join(30)
        rates.append(received / elapsed)
    return rates


def image_message(size: int) -> am.UserMessage:
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)
    return am.UserMessage([am.TextContent("look"), am.ImageContent(data, media_type="image/png")], timestamp=1)


def image_rate(target: str, size: int, count: int) -> float:
    """Bytes per second appending ``count`` image messages of ``size`` bytes (each a new id)."""
    messages = [image_message(size) for _ in range(count)]
    with Client(target, timeout=60) as client:
        client.append("img-warm", messages[0])
        start = time.perf_counter()
        for message in messages:
            client.append("img", message)
        return size * count / (time.perf_counter() - start)


def sink_rate(target: str, size: int, count: int) -> float:
    """Bytes per second sending the same append request bytes to a bare gRPC method that does nothing."""
    payload = session_service_pb2.AppendMessageRequest(
        session_id="img", message=image_message(size).pb
    ).SerializeToString()
    options = [("grpc.max_send_message_length", 64 << 20), ("grpc.http2.max_frame_size", HTTP2_MAX_FRAME)]
    with grpc.insecure_channel(target, options=options) as channel:
        call = channel.unary_unary("/bench.Echo/Sink")
        call(payload)
        start = time.perf_counter()
        for _ in range(count):
            call(payload)
        return size * count / (time.perf_counter() - start)


def tcp_rate(size: int, count: int) -> float:
    """Bytes per second through a raw loopback TCP socket (send, wait for a 1-byte ack)."""
    parent, child = mp.Pipe()
    process = mp.Process(target=_tcp_sink_main, args=(child,), daemon=True)
    process.start()
    port = parent.recv()
    payload = os.urandom(size)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        header = size.to_bytes(8, "big")
        sock.sendall(header + payload)
        sock.recv(1)
        start = time.perf_counter()
        for _ in range(count):
            sock.sendall(header + payload)
            sock.recv(1)
        elapsed = time.perf_counter() - start
    process.join(5)
    return size * count / elapsed


def append_throughput(target: str, batch: int, batches: int) -> float:
    """Messages per second with ``AppendMessages`` batches from one client."""
    with Client(target, timeout=60) as client:
        start = time.perf_counter()
        for b in range(batches):
            client.append_many("tp", [text_message(b * batch + i) for i in range(batch)])
        return batch * batches / (time.perf_counter() - start)


def single_append_throughput(target: str, count: int) -> float:
    """Messages per second with one ``AppendMessage`` per message (each durably committed)."""
    with Client(target, timeout=60) as client:
        messages = [text_message(i) for i in range(count)]
        start = time.perf_counter()
        for message in messages:
            client.append("tp1", message)
        return count / (time.perf_counter() - start)


# --- the run --------------------------------------------------------------------------------


def _row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<52} {value:>26}  {note}")


def run(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    count = 200 if quick else 1000
    print("agentmsg service benchmark (server and clients in separate processes on 127.0.0.1)")
    print("\n== append latency vs a bare gRPC echo of the same request bytes")
    with echo_server() as echo, agentmsg_server("--memory") as memory:
        for clients in (1, 16):
            per = max(20, count // clients)
            echo_p50, echo_p99 = percentiles(echo_latency(echo, clients, per))
            app_p50, app_p99 = percentiles(append_latency(memory, clients, per))
            results[f"append_c{clients}"] = {"p50": app_p50, "p99": app_p99, "echo_p50": echo_p50, "echo_p99": echo_p99}
            _row(f"{clients:>2} client(s): bare echo p50 / p99", f"{echo_p50 * 1e3:.3f} / {echo_p99 * 1e3:.3f} ms")
            ratio = app_p50 / echo_p50
            _row(
                f"{clients:>2} client(s): append (memory store) p50 / p99",
                f"{app_p50 * 1e3:.3f} / {app_p99 * 1e3:.3f} ms",
                f"p50 {ratio:.2f}x echo  {'PASS' if ratio <= 2 else 'MISS'} (target <= 2x)",
            )
            results[f"append_c{clients}"]["ratio"] = ratio

    print("\n== subscribe delivery, decoded into wrappers (memory store)")
    total = 20_000 if quick else 100_000
    with agentmsg_server("--memory") as memory:
        with Client(memory, timeout=120) as client:
            for start in range(0, total, 1000):
                client.append_many("sub", [text_message(i) for i in range(start, start + 1000)])
        for subscribers in (1, 10):
            rates = subscribe_rates(memory, "sub", total, subscribers)
            worst = min(rates)
            results[f"subscribe_{subscribers}"] = rates
            _row(
                f"{subscribers:>2} subscriber(s), {total:,} messages each",
                f"{statistics.median(rates):,.0f} msg/s per sub",
                f"slowest {worst:,.0f}/s  {'PASS' if worst >= 200_000 else 'MISS'} (target >= 200k/s)",
            )

    print("\n== 1 MiB image message vs raw TCP loopback")
    size = 1 << 20
    images = 20 if quick else 60
    tcp = tcp_rate(size, images * 2)
    with echo_server() as echo:
        bare = sink_rate(echo, size, images)
    with agentmsg_server("--memory") as memory:
        rate = image_rate(memory, size, images)
    results["image"] = {"agentmsg_Bps": rate, "tcp_Bps": tcp, "bare_grpc_Bps": bare}
    _row("raw TCP loopback (1 MiB + 1-byte ack)", f"{tcp / 2**20:,.0f} MiB/s")
    _row(
        "bare gRPC unary, same request bytes, no-op handler",
        f"{bare / 2**20:,.0f} MiB/s",
        f"{bare / tcp:.0%} of raw TCP",
    )
    _row(
        "append of a 1 MiB image message (validated, stored)",
        f"{rate / 2**20:,.0f} MiB/s",
        f"{rate / tcp:.0%} of raw TCP, {rate / bare:.0%} of bare gRPC  "
        f"{'PASS' if rate / tcp >= 0.5 else 'MISS'} (target >= 50% of TCP)",
    )

    print("\n== store: durable SQLite (WAL, synchronous=FULL) vs in-memory")
    with tempfile.TemporaryDirectory() as tmp:
        singles = 200 if quick else 1000
        for label, args in (("memory", ("--memory",)), ("SQLite", ("--db", f"{tmp}/bench.db"))):
            with agentmsg_server(*args) as target:
                one = single_append_throughput(target, singles)
                batched = append_throughput(target, 100, singles // 20)
            results[f"store_{label}"] = {"single": one, "batch100": batched}
            _row(f"{label}: AppendMessage, one message per call", f"{one:,.0f} msg/s")
            _row(f"{label}: AppendMessages, 100 per call", f"{batched:,.0f} msg/s")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller counts")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    run(args.quick)
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    mp.set_start_method("spawn")
    raise SystemExit(main())
