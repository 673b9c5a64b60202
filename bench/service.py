"""Service benchmark: the agentmsg server against a bare gRPC echo and raw TCP, on 127.0.0.1.

Every server runs in its own process; clients run in this process or in
worker processes. Measured in one run, side by side:

- append latency, p50/p99, at 1 and 16 concurrent clients, next to a bare gRPC
  echo of the same request bytes (a unary method that returns its input);
- subscribe delivery: messages per second per subscriber, decoded into
  wrappers, for 1 and 10 concurrent subscribers (each its own process), with
  the CPU time the server and each subscriber spent per delivered message;
- a 1 MiB image message appended, as a fraction of a raw TCP loopback transfer
  of the same bytes (send 1 MiB, read a 1-byte ack), next to a bare gRPC
  unary call of the same request bytes to a no-op handler;
- append throughput of the SQLite store (WAL, ``synchronous`` as the store's
  default says: FULL, every acknowledged append is on disk) against the
  in-memory store.

Targets (printed PASS/MISS): append p50 <= 2x the bare echo; >= 200k
messages/s delivered to every subscriber; the image append >= 50% of raw TCP.
Fan-out and large media (issue 18): with 10 subscribers of one session the
slowest gets >= 0.25x the single subscriber's rate of the same run, and the
server spends <= 0.5 us of CPU per delivered message; the image append reaches
>= 70% of the bare gRPC call carrying the same request bytes.
A missed target is profiled (``--no-profile`` skips it): the server under
cProfile (``bench/profiled_server.py``), the subscriber client under cProfile,
the server's per-request steps timed in-process, and CPU accounting.

Run: ``make bench`` or ``.venv/bin/python bench/service.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import inspect
import json
import multiprocessing as mp
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmsg._grpcsetup import tcp_endpoints

# gRPC started here (the clients, the bare floors, the processes this starts) as `agentmsg serve` starts it (its TCP
# endpoints, agentmsg._grpcsetup): the same gRPC on both sides of every ratio. Set before gRPC loads, which reads it.
os.environ.update(tcp_endpoints())

import grpc

import agentmsg as am
from agentmsg import _validation
from agentmsg.service import AsyncClient, Client, Logged
from agentmsg.service.rpc import HTTP2_MAX_FRAME
from agentmsg.service.stores import SQLiteStore
from agentmsg.v1 import session_service_pb2

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from profiling import format_profile, profile_file  # noqa: E402 - bench/ is on the path just above

ECHO_METHOD = "/bench.Echo/Echo"
APPEND_MAX_RATIO = 2.0
SUBSCRIBE_MIN_RATE = 200_000
IMAGE_MIN_FRACTION = 0.5
FANOUT_MIN_SHARE = 0.25  # the slowest of 10 subscribers vs the single subscriber of the same run
FANOUT_MAX_SERVER_US = 0.5  # server CPU per delivered message with 10 subscribers
IMAGE_MIN_OF_BARE = 0.7  # the 1 MiB image append vs a bare gRPC call of the same request bytes
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# A diagnostic for the image append: glibc serves every >= 128 KiB malloc with a fresh mmap (and page
# faults on first touch) until its dynamic threshold adapts; this raises the threshold from the start.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728"


# --- servers in their own processes --------------------------------------------------------


@dataclass
class ServerProcess:
    target: str
    pid: int
    profile: Path | None = None  # where profiled_server.py writes its profile

    @contextmanager
    def profiling(self) -> Iterator[None]:
        """Profile the server (started with ``profile=``) for the duration of the block; the file is written."""
        assert self.profile is not None
        os.kill(self.pid, signal.SIGUSR1)
        time.sleep(0.05)  # the handler runs when the loop wakes up
        try:
            yield
        finally:
            os.kill(self.pid, signal.SIGUSR2)
            deadline = time.monotonic() + 30
            while not self.profile.exists() and time.monotonic() < deadline:
                time.sleep(0.02)

    def counters(self) -> tuple[float, float, int]:
        """User and system CPU seconds (in clock ticks: 10 ms steps) and minor page faults so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS, int(fields[7])

    def cpu_seconds(self) -> float:
        """CPU time of the server's threads so far, to the nanosecond (``/proc/PID/task/*/schedstat``)."""
        total = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError):
                total += int((task / "schedstat").read_text().split()[0])
        return total / 1e9

    @contextmanager
    def usage(self, calls: int) -> Iterator[dict[str, float]]:
        """Per-call server usage over the block, filled in on exit: ``cpu_ms`` (precise), ``user_ms`` and
        ``sys_ms`` (from 10 ms clock ticks: coarse over short blocks), ``minflt`` (minor page faults)."""
        out: dict[str, float] = {}
        user0, sys0, flt0 = self.counters()
        cpu0 = self.cpu_seconds()
        try:
            yield out
        finally:
            cpu1 = self.cpu_seconds()
            user1, sys1, flt1 = self.counters()
            out.update(
                cpu_ms=(cpu1 - cpu0) / calls * 1e3,
                user_ms=(user1 - user0) / calls * 1e3,
                sys_ms=(sys1 - sys0) / calls * 1e3,
                minflt=(flt1 - flt0) / calls,
            )


@contextmanager
def agentmsg_server(
    *args: str, profile: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    """``agentmsg serve --port 0 ...`` in a subprocess (under cProfile when ``profile`` is given)."""
    serve = ["serve", "--port", "0", "--max-unary", "4096", *args]
    command = (
        [sys.executable, str(BENCH / "profiled_server.py"), str(profile), *serve]
        if profile
        else [sys.executable, "-m", "agentmsg", *serve]
    )
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **env} if env else None,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "serving on" not in line:
        process.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    try:
        yield ServerProcess(line.split("serving on ", 1)[1].split()[0], process.pid, profile)
    finally:
        process.terminate()
        process.wait(30)


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
def echo_server() -> Iterator[ServerProcess]:
    """A bare grpc.aio server with one unary method returning its input bytes (and a no-op ``Sink``)."""
    parent, child = mp.Pipe()
    process = mp.Process(target=_echo_main, args=(child,), daemon=True)
    process.start()
    port = parent.recv()
    assert process.pid is not None
    try:
        yield ServerProcess(f"127.0.0.1:{port}", process.pid)
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


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _subscriber_main(target: str, session: str, total: int, out: Any, go: Any, profile: str | None = None) -> None:
    profiler = cProfile.Profile() if profile else None
    with Client(target, timeout=None) as client:
        out.send("ready")
        go.wait()  # every subscriber starts together, after its process has started and imported
        cpu0 = _cpu_self()
        if profiler:
            profiler.enable()
        start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
        received = 0
        blocks = 0
        for item in client.subscribe(session, max_batch=2000):
            assert isinstance(item, Logged)
            blocks += len(item.message.contents)  # decoded into wrappers, blocks included
            received += 1
            if received == total:
                break
        end = time.perf_counter()
        cpu = _cpu_self() - cpu0
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile)
    out.send((received, blocks, start, end, cpu))


@dataclass
class SubscribeRun:
    rates: list[float]  # messages/s each subscriber received
    client_cpu_us: float  # mean CPU microseconds a subscriber spent per message received
    server_cpu_us: float  # server CPU microseconds per message delivered (all subscribers)
    wall_s: float  # first start to last end


def subscribe_run(
    server: ServerProcess, session: str, total: int, subscribers: int, profile: Path | None = None
) -> SubscribeRun:
    """``subscribers`` processes each read ``total`` messages; rates and CPU per delivered message."""
    pipes = []
    processes = []
    go = mp.Event()
    for index in range(subscribers):
        parent, child = mp.Pipe()
        path = str(profile) if profile and index == 0 else None
        process = mp.Process(
            target=_subscriber_main, args=(server.target, session, total, child, go, path), daemon=True
        )
        process.start()
        pipes.append(parent)
        processes.append(process)
    for parent in pipes:
        assert parent.recv() == "ready"
    server_cpu0 = server.cpu_seconds()
    go.set()
    rates = []
    cpus = []
    starts, ends = [], []
    for parent, process in zip(pipes, processes, strict=True):
        received, _, start, end, cpu = parent.recv()
        process.join(30)
        rates.append(received / (end - start))
        cpus.append(cpu / received)
        starts.append(start)
        ends.append(end)
    server_cpu = server.cpu_seconds() - server_cpu0
    wall = max(ends) - min(starts)
    return SubscribeRun(rates, statistics.mean(cpus) * 1e6, server_cpu / (total * subscribers) * 1e6, wall)


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


def filesystem_of(path: str) -> str:
    """The filesystem type holding ``path`` (from /proc/mounts), e.g. ``ext4`` or ``tmpfs``."""
    best, kind = "", "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and path.startswith(parts[1]) and len(parts[1]) >= len(best):
                best, kind = parts[1], parts[2]
    return kind


# --- the run --------------------------------------------------------------------------------


def _row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<52} {value:>26}  {note}".rstrip())


def _target(results: dict[str, Any], name: str, text: str, passed: bool, **values: float) -> str:
    results["targets"].append({"name": name, "text": text, "pass": passed, **values})
    return "PASS" if passed else "MISS"


def run(quick: bool, profile: bool) -> dict[str, Any]:
    results: dict[str, Any] = {"targets": [], "profiles": {}, "cores": len(os.sched_getaffinity(0))}
    count = 200 if quick else 1000
    print("agentmsg service benchmark (server and clients in separate processes on 127.0.0.1)")
    print("\n== append latency vs a bare gRPC echo of the same request bytes")
    with echo_server() as echo, agentmsg_server("--memory") as memory:
        for clients in (1, 16):
            per = max(20, count // clients)
            with echo.usage(per * clients) as echo_usage:
                echo_p50, echo_p99 = percentiles(echo_latency(echo.target, clients, per))
            with memory.usage(per * clients) as app_usage:
                app_p50, app_p99 = percentiles(append_latency(memory.target, clients, per))
            ratio = app_p50 / echo_p50
            results[f"append_c{clients}"] = {
                "clients": clients,
                "calls": per * clients,
                "p50": app_p50,
                "p99": app_p99,
                "echo_p50": echo_p50,
                "echo_p99": echo_p99,
                "ratio": ratio,
                "server_cpu_ms_per_call": app_usage["cpu_ms"],
                "echo_cpu_ms_per_call": echo_usage["cpu_ms"],
            }
            _row(f"{clients:>2} client(s): bare echo p50 / p99", f"{echo_p50 * 1e3:.3f} / {echo_p99 * 1e3:.3f} ms")
            verdict = _target(
                results,
                f"append_c{clients}",
                f"append p50 at {clients} client(s) {ratio:.2f}\u00d7 the bare echo (limit {APPEND_MAX_RATIO:g}\u00d7)",
                ratio <= APPEND_MAX_RATIO,
                ratio=ratio,
                limit=APPEND_MAX_RATIO,
            )
            _row(
                f"{clients:>2} client(s): append (memory store) p50 / p99",
                f"{app_p50 * 1e3:.3f} / {app_p99 * 1e3:.3f} ms",
                f"p50 {ratio:.2f}x echo  {verdict} (target <= {APPEND_MAX_RATIO:g}x)",
            )

    print("\n== subscribe delivery, decoded into wrappers (memory store)")
    total = 20_000 if quick else 100_000
    missed_subscribe = False
    with agentmsg_server("--memory") as memory:
        fill(memory.target, total)
        for subscribers in (1, 10):
            sub = subscribe_run(memory, "sub", total, subscribers)
            worst = min(sub.rates)
            results[f"subscribe_{subscribers}"] = {
                "subscribers": subscribers,
                "messages_each": total,
                "rates": sub.rates,
                "median_rate": statistics.median(sub.rates),
                "min_rate": worst,
                "aggregate_rate": total * subscribers / sub.wall_s,
                "client_cpu_us_per_msg": sub.client_cpu_us,
                "server_cpu_us_per_msg": sub.server_cpu_us,
            }
            verdict = _target(
                results,
                f"subscribe_{subscribers}",
                f"{subscribers} subscriber(s): slowest {worst:,.0f} msg/s "
                f"(target \u2265 {SUBSCRIBE_MIN_RATE:,}/s each)",
                worst >= SUBSCRIBE_MIN_RATE,
                rate=worst,
                limit=SUBSCRIBE_MIN_RATE,
            )
            missed_subscribe |= verdict == "MISS"
            _row(
                f"{subscribers:>2} subscriber(s), {total:,} messages each",
                f"{statistics.median(sub.rates):,.0f} msg/s per sub",
                f"slowest {worst:,.0f}/s  {verdict} (target >= 200k/s)",
            )
            _row(
                "    CPU per delivered message: subscriber / server",
                f"{sub.client_cpu_us:.2f} / {sub.server_cpu_us:.2f} µs",
                f"{total * subscribers / sub.wall_s:,.0f} msg/s delivered in all",
            )

    single = results["subscribe_1"]["min_rate"]
    fan = results["subscribe_10"]
    share = fan["min_rate"] / single
    verdict = _target(
        results,
        "fanout_share",
        f"10 subscribers: slowest {share:.2f}\u00d7 the single subscriber's rate "
        f"(target \u2265 {FANOUT_MIN_SHARE:g}\u00d7)",
        share >= FANOUT_MIN_SHARE,
        share=share,
        limit=FANOUT_MIN_SHARE,
    )
    _row("10 subscribers: slowest vs 1 subscriber", f"{share:.2f}x", f"{verdict} (target >= {FANOUT_MIN_SHARE:g}x)")
    server_us = fan["server_cpu_us_per_msg"]
    verdict = _target(
        results,
        "fanout_server_cpu",
        f"10 subscribers: server CPU {server_us:.2f} \u00b5s per delivered message "
        f"(target \u2264 {FANOUT_MAX_SERVER_US:g} \u00b5s)",
        server_us <= FANOUT_MAX_SERVER_US,
        us=server_us,
        limit=FANOUT_MAX_SERVER_US,
    )
    _row("10 subscribers: server CPU per delivered message", f"{server_us:.2f} µs", f"{verdict} (target <= 0.5 µs)")

    print("\n== 1 MiB image message vs raw TCP loopback")
    size = 1 << 20
    images = 20 if quick else 50
    rounds = 5 if quick else 9
    # Loopback rates swing by half from one second to the next on a shared machine: each round measures
    # TCP, the bare gRPC call and the append back to back (the order turned every other round), and the
    # ratios are the medians of the rounds' ratios (paired), the rates the medians of the rounds' rates.
    tcps, bares, rates = [], [], []
    with ExitStack() as stack:
        echo = stack.enter_context(echo_server())
        memory = stack.enter_context(agentmsg_server("--memory"))
        bare_usage = stack.enter_context(echo.usage((images + 1) * rounds))
        usage = stack.enter_context(memory.usage((images + 1) * rounds))
        order = [
            lambda: tcps.append(tcp_rate(size, images * 2)),
            lambda: bares.append(sink_rate(echo.target, size, images)),
            lambda: rates.append(image_rate(memory.target, size, images)),
        ]
        for index in range(rounds):
            for measure in order if index % 2 == 0 else reversed(order):
                measure()
    tcp, bare, rate = statistics.median(tcps), statistics.median(bares), statistics.median(rates)
    of_tcp = statistics.median(r / t for r, t in zip(rates, tcps, strict=True))
    of_bare = statistics.median(r / b for r, b in zip(rates, bares, strict=True))
    bare_of_tcp = statistics.median(b / t for b, t in zip(bares, tcps, strict=True))
    server_cpu_ms = usage["cpu_ms"]
    results["image"] = {
        "size": size,
        "appends": images,
        "rounds": rounds,
        "agentmsg_Bps": rate,
        "tcp_Bps": tcp,
        "bare_grpc_Bps": bare,
        "fraction_of_tcp": of_tcp,
        "bare_fraction_of_tcp": bare_of_tcp,
        "fraction_of_bare": of_bare,
        "rounds_Bps": {"tcp": tcps, "bare_grpc": bares, "agentmsg": rates},
        "server_cpu_ms_per_append": server_cpu_ms,
        "server_usage_per_append": usage,
        "bare_server_usage_per_call": bare_usage,
    }
    _row("raw TCP loopback (1 MiB + 1-byte ack)", f"{tcp / 2**20:,.0f} MiB/s")
    _row(
        "bare gRPC unary, same request bytes, no-op handler",
        f"{bare / 2**20:,.0f} MiB/s",
        f"{bare_of_tcp:.0%} of raw TCP (paired)",
    )
    verdict = _target(
        results,
        "image",
        f"1 MiB image append {of_tcp:.0%} of raw TCP (target \u2265 {IMAGE_MIN_FRACTION:.0%}); "
        f"bare gRPC of the same bytes: {bare_of_tcp:.0%}; median of {rounds} paired rounds",
        of_tcp >= IMAGE_MIN_FRACTION,
        fraction=of_tcp,
        limit=IMAGE_MIN_FRACTION,
    )
    _row(
        "append of a 1 MiB image message (validated, stored)",
        f"{rate / 2**20:,.0f} MiB/s",
        f"{of_tcp:.0%} of raw TCP, {of_bare:.0%} of bare gRPC  {verdict} (target >= 50% of TCP)",
    )
    verdict = _target(
        results,
        "image_vs_bare",
        f"1 MiB image append {of_bare:.0%} of a bare gRPC call of the same request bytes, median of "
        f"{rounds} paired rounds (target \u2265 {IMAGE_MIN_OF_BARE:.0%})",
        of_bare >= IMAGE_MIN_OF_BARE,
        fraction=of_bare,
        limit=IMAGE_MIN_OF_BARE,
    )
    _row("1 MiB image append vs bare gRPC (paired)", f"{of_bare:.0%}", f"{verdict} (target >= 70%)")
    _row(
        "    server per call: CPU (user + sys), page faults",
        f"{usage['cpu_ms']:.2f} ({usage['user_ms']:.2f} + {usage['sys_ms']:.2f}) ms, {usage['minflt']:.0f}",
        f"bare gRPC server: {bare_usage['cpu_ms']:.2f} ({bare_usage['user_ms']:.2f} + {bare_usage['sys_ms']:.2f}) ms, "
        f"{bare_usage['minflt']:.0f} faults",
    )

    synchronous = inspect.signature(SQLiteStore).parameters["synchronous"].default
    with tempfile.TemporaryDirectory() as tmp:
        fs = filesystem_of(str(Path(tmp).resolve()))
        durability = f"WAL, synchronous={synchronous} (the SQLiteStore default), file on {fs}"
        print(f"\n== store: durable SQLite ({durability}) vs in-memory")
        results["store_durability"] = durability
        singles = 200 if quick else 1000
        for label, args in (("memory", ("--memory",)), ("SQLite", ("--db", f"{tmp}/bench.db"))):
            with agentmsg_server(*args) as server:
                one = single_append_throughput(server.target, singles)
                batched = append_throughput(server.target, 100, singles // 20)
            results[f"store_{label}"] = {"single": one, "batch100": batched}
            _row(f"{label}: AppendMessage, one message per call", f"{one:,.0f} msg/s")
            _row(f"{label}: AppendMessages, 100 per call", f"{batched:,.0f} msg/s")

    if profile:
        missed = {t["name"] for t in results["targets"] if not t["pass"]}
        if missed:
            print(f"\n== profiles of the missed target(s): {', '.join(sorted(missed))}")
        if any(name.startswith("append_") for name in missed):
            results["profiles"]["append"] = profile_append(quick)
        if missed_subscribe:
            results["profiles"]["subscribe"] = profile_subscribe(quick)
        if "image" in missed:
            results["profiles"]["image"] = profile_image(quick, bare, tcp)
    return results


def fill(target: str, total: int) -> None:
    with Client(target, timeout=120) as client:
        for start in range(0, total, 1000):
            client.append_many("sub", [text_message(i) for i in range(start, start + 1000)])


# --- profiles of missed targets -------------------------------------------------------------


def _print_profile(title: str, profile: dict[str, Any], unit: str) -> None:
    for line in format_profile(title, profile, unit=unit, rows=10):
        print(f"    {line}")


def profile_append(quick: bool) -> dict[str, Any]:
    """The server under cProfile while one client appends."""
    count = 200 if quick else 1000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "server.prof"
        with agentmsg_server("--memory", profile=path) as server:
            append_latency(server.target, 1, 50)  # warm-up
            with server.profiling():
                append_latency(server.target, 1, count)
        server_profile = profile_file(path, count)
    _print_profile("server, AppendMessage", server_profile, "append")
    return {"server": server_profile}


def profile_subscribe(quick: bool) -> dict[str, Any]:
    """10 subscribers again, the server and the first subscriber under cProfile."""
    total = 10_000 if quick else 30_000
    subscribers = 10
    with tempfile.TemporaryDirectory() as tmp:
        server_path, client_path = Path(tmp) / "server.prof", Path(tmp) / "client.prof"
        with agentmsg_server("--memory", profile=server_path) as server:
            fill(server.target, total)
            subscribe_run(server, "sub", 1000, 1)  # warm-up
            with server.profiling():
                sub = subscribe_run(server, "sub", total, subscribers, profile=client_path)
        server_profile = profile_file(server_path, total * subscribers)
        client_profile = profile_file(client_path, total)
    cores = len(os.sched_getaffinity(0))
    out = {
        "subscribers": subscribers,
        "messages_each": total,
        "cores": cores,
        "profiled_rates": sub.rates,
        "server": server_profile,
        "client": client_profile,
    }
    print(
        f"\n  subscribe, {subscribers} subscribers x {total:,} messages, server and subscriber 1 under cProfile "
        f"(slowest {min(sub.rates):,.0f} msg/s while profiled)"
    )
    _print_profile("server (all subscribers' streams)", server_profile, "delivered message")
    _print_profile("subscriber 1 (client.subscribe + wrappers)", client_profile, "received message")
    return out


def _step_time(fn: Any, calls: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def profile_image(quick: bool, bare: float, tcp: float) -> dict[str, Any]:
    """The server under cProfile during image appends; the handler's steps timed here; a malloc diagnostic."""
    size = 1 << 20
    images = 20 if quick else 60
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "server.prof"
        with agentmsg_server("--memory", profile=path) as server:
            image_rate(server.target, size, 5)  # warm-up
            with server.profiling():
                image_rate(server.target, size, images)
        server_profile = profile_file(path, images + 1)
    print(f"\n  1 MiB image append, server under cProfile ({images + 1} appends)")
    _print_profile("server", server_profile, "append")

    # What the AppendMessage handler does to the request bytes, step by step, in this process.
    request = session_service_pb2.AppendMessageRequest(session_id="img", message=image_message(size).pb)
    wire = request.SerializeToString()
    parse = session_service_pb2.AppendMessageRequest.FromString
    calls = 20 if quick else 100
    small = session_service_pb2.AppendMessageRequest(session_id="img", message=image_message(1024).pb)
    steps = {
        "parse the request (upb)": _step_time(lambda: parse(wire), calls),
        "validate (protovalidate)": _step_time(lambda: _validation.violations_of(request), calls),
        "validate the same request with a 1 KiB image": _step_time(lambda: _validation.violations_of(small), calls),
        "encode for the store (deterministic)": _step_time(
            lambda: request.message.SerializeToString(deterministic=True), calls
        ),
        "client: build + encode the request": _step_time(
            lambda: session_service_pb2.AppendMessageRequest(
                session_id="img", message=request.message
            ).SerializeToString(),
            calls,
        ),
    }
    print("\n  the handler's steps on one 1 MiB request, timed in this process (warm caches)")
    for name, seconds in steps.items():
        _row(f"    {name}", f"{seconds * 1e6:,.0f} µs")

    # The same append with glibc's mmap threshold raised in the server: no fresh mmap per large buffer.
    with agentmsg_server("--memory", env={"GLIBC_TUNABLES": MALLOC_TUNABLES}) as server:
        with server.usage(images + 1) as tuned_usage:
            tuned = image_rate(server.target, size, images)
        tuned_cpu_ms = tuned_usage["cpu_ms"]
    _row(
        "    append, server with GLIBC_TUNABLES mmap_threshold=32 MiB",
        f"{tuned / 2**20:,.0f} MiB/s",
        f"{tuned / tcp:.0%} of raw TCP, {tuned / bare:.0%} of bare gRPC; server CPU {tuned_cpu_ms:.2f} ms/append",
    )
    validate_in_server = sum(
        row["own_us_per_op"] for row in server_profile["top"] if "collect_violations" in row["function"]
    )
    _row("    validate, in the server (cProfile, per append)", f"{validate_in_server:,.0f} µs")
    return {
        "server": server_profile,
        "validate_in_server_us": validate_in_server,
        "steps_us": {name: seconds * 1e6 for name, seconds in steps.items()},
        "bare_ms_per_call": size / bare * 1e3,
        "tcp_ms_per_call": size / tcp * 1e3,
        "malloc_tuned": {
            "tunables": MALLOC_TUNABLES,
            "Bps": tuned,
            "fraction_of_tcp": tuned / tcp,
            "fraction_of_bare": tuned / bare,
            "server_cpu_ms_per_append": tuned_cpu_ms,
            "server_usage_per_append": tuned_usage,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller counts")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    parser.add_argument("--no-profile", action="store_true", help="do not profile missed targets")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load = os.getloadavg()
    results = run(args.quick, not args.no_profile)
    total = time.perf_counter() - started
    print(f"\ntotal {total:.1f} s")
    if args.json:
        results["created"] = datetime.now(UTC).isoformat(timespec="seconds")
        results["command"] = " ".join([Path(sys.executable).name, *sys.argv])
        results["quick"] = args.quick
        results["total_s"] = total
        results["load_average"] = load
        results["load_average_end"] = os.getloadavg()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    mp.set_start_method("spawn")
    raise SystemExit(main())
