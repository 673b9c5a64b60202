"""Group commit benchmark: concurrent durable appends, agentmsg against a bare group-committing gRPC server.

The floor is built here, in this file: a bare ``grpc.aio`` server answering the same ``AppendMessage`` RPC
(same request bytes, same client) with nothing but a group commit behind it — one writer that takes every
append queued while its last commit ran, inserts the rows in one transaction and answers them all once it
is durable (SQLite: WAL, ``synchronous=FULL``, a writer thread; PostgreSQL: one connection,
``synchronous_commit=on``, one ``INSERT ... SELECT FROM unnest`` per batch). It checks nothing: no
idempotency, no conflicts, no parents, no validation. agentmsg runs as ``agentmsg serve`` (through
``bench/counted_server.py``, which reports the store's commit counters).

Measured in one run, side by side, interleaved rounds (floor, agentmsg, floor, agentmsg...), the ratio taken
per round and its median printed: appends per second at 1, 16 and 64 concurrent clients (each its own
channel, spread over client processes), to distinct sessions and to one shared session, on SQLite and on
PostgreSQL (``LocalPostgres``, fsync on), and the commits per append each side made (each commit one flush
of the log: SQLite's WAL fsync, PostgreSQL's WAL flush; a flush another commit already covered is skipped by
PostgreSQL, so there commits are an upper bound), the server process's CPU time per append and, on PostgreSQL,
the database's (all of the cluster's processes: the backends, the WAL writer; on this two-core machine the
database's CPU is taken from the same cores as the server's).

Both servers run on the same event loop (``--loop``, default ``auto``: uvloop when installed, as ``agentmsg serve``
runs by default): the floor is what a user could build, on the loop our server has, so the ratio compares the code,
not the loop. Each server names its loop in its serving line; the run prints both.

Targets (printed PASS/MISS): agentmsg >= 0.8x the floor at 64 clients; no drop from 16 to 64 clients
(>= 0.95x, this machine's round-to-round noise).

Run: ``make bench`` or ``.venv/bin/python bench/group_commit.py [--quick] [--loop auto|asyncio|uvloop] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import multiprocessing as mp
import os
import queue
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

import agentmsg as am
from agentmsg._eventloop import LOOPS, loop_name
from agentmsg._eventloop import run as run_on
from agentmsg._grpcsetup import tcp_endpoints
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

BENCH = Path(__file__).resolve().parent
APPEND_METHOD = "/agentmsg.v1.SessionService/AppendMessage"
STATS_METHOD = "/bench.Floor/Stats"
MIN_OF_FLOOR = 0.8
NO_DROP = 0.95
CLIENTS = (1, 16, 64)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MODES = ("distinct", "shared")


# --- the floor: a bare group-committing gRPC server -----------------------------------------------------


class _SQLiteFloor:
    """A writer thread: one transaction and one fsync per batch of queued appends."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS floor (session_id TEXT NOT NULL, offset INTEGER NOT NULL, "
            "message_id TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (session_id, offset)) WITHOUT ROWID"
        )
        # Restarted on its file, it goes on after what is there.
        self.last: dict[str, int] = dict(self.db.execute("SELECT session_id, max(offset) FROM floor GROUP BY 1"))
        self.commits = self.appends = 0
        self.queue: queue.SimpleQueue[tuple[str, str, bytes, asyncio.Future[int]]] = queue.SimpleQueue()
        self.loop = asyncio.get_running_loop()
        threading.Thread(target=self._writer, daemon=True).start()

    def append(self, session_id: str, message_id: str, body: bytes) -> asyncio.Future[int]:
        future: asyncio.Future[int] = self.loop.create_future()
        self.queue.put((session_id, message_id, body, future))
        return future

    def _writer(self) -> None:
        while True:
            batch = [self.queue.get()]
            with contextlib.suppress(queue.Empty):
                while len(batch) < 256:
                    batch.append(self.queue.get_nowait())
            rows, offsets = [], []
            for session_id, message_id, body, _ in batch:
                offset = self.last.get(session_id, 0) + 1
                self.last[session_id] = offset
                rows.append((session_id, offset, message_id, body))
                offsets.append(offset)
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT INTO floor VALUES (?, ?, ?, ?)", rows)
            self.db.execute("COMMIT")
            self.commits += 1
            self.appends += len(batch)
            self.loop.call_soon_threadsafe(_resolve, [b[3] for b in batch], offsets)


class _PostgresFloor:
    """A writer task on one connection: one statement (one transaction, one WAL flush) per batch."""

    def __init__(self, conn: Any, last: dict[str, int]) -> None:
        self.conn = conn
        self.last = last
        self.commits = self.appends = 0
        self.queued: collections.deque[tuple[str, str, bytes, asyncio.Future[int]]] = collections.deque()
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._writer())

    @classmethod
    async def open(cls, url: str) -> _PostgresFloor:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, options="-c synchronous_commit=on")
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS floor (session_id text NOT NULL, seq bigint NOT NULL, "
            "message_id text NOT NULL, body bytea NOT NULL, PRIMARY KEY (session_id, seq))"
        )
        cur = await conn.execute("SELECT session_id, max(seq) FROM floor GROUP BY 1")
        return cls(conn, {str(s): int(n) for s, n in await cur.fetchall()})

    def append(self, session_id: str, message_id: str, body: bytes) -> asyncio.Future[int]:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.queued.append((session_id, message_id, body, future))
        self.wake.set()
        return future

    async def _writer(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.queued:
                batch = [self.queued.popleft() for _ in range(min(256, len(self.queued)))]
                offsets = []
                for session_id, _, _, _ in batch:
                    offset = self.last.get(session_id, 0) + 1
                    self.last[session_id] = offset
                    offsets.append(offset)
                await self.conn.execute(
                    "INSERT INTO floor SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bytea[])",
                    ([b[0] for b in batch], offsets, [b[1] for b in batch], [b[2] for b in batch]),
                )
                self.commits += 1
                self.appends += len(batch)
                _resolve([b[3] for b in batch], offsets)


def _resolve(futures: list[asyncio.Future[int]], offsets: list[int]) -> None:
    for future, offset in zip(futures, offsets, strict=True):
        if not future.done():
            future.set_result(offset)


async def _floor_serve(kind: str, location: str) -> None:
    floor: _SQLiteFloor | _PostgresFloor = (
        _SQLiteFloor(location) if kind == "sqlite" else await _PostgresFloor.open(location)
    )

    async def append(raw: bytes, context: Any) -> bytes:
        request = session_service_pb2.AppendMessageRequest.FromString(raw)
        body = request.message.SerializeToString(deterministic=True)
        offset = await floor.append(request.session_id, request.message.id, body)
        return session_service_pb2.AppendMessageResponse(offset=offset).SerializeToString()

    async def stats(raw: bytes, context: Any) -> bytes:
        return json.dumps({"commits": floor.commits, "appends": floor.appends}).encode()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "agentmsg.v1.SessionService", {"AppendMessage": grpc.unary_unary_rpc_method_handler(append)}
            ),
            grpc.method_handlers_generic_handler("bench.Floor", {"Stats": grpc.unary_unary_rpc_method_handler(stats)}),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"floor serving on 127.0.0.1:{port} ({loop_name()})", flush=True)
    await server.wait_for_termination()


# --- servers in their own processes ---------------------------------------------------------------------


@dataclass
class Server:
    name: str
    target: str
    process: subprocess.Popen[str]
    counts_file: Path | None = None  # agentmsg: where counted_server.py writes its counters
    loop: str = ""  # the event loop it runs on, from its serving line ("... (..., uvloop)")

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system, all threads)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def counters(self) -> tuple[int, int]:
        """(commits, appends) so far."""
        if self.counts_file is None:
            with grpc.insecure_channel(self.target) as channel:
                raw = channel.unary_unary(STATS_METHOD)(b"", timeout=10)
            counts = json.loads(raw)
        else:
            with contextlib.suppress(FileNotFoundError):
                self.counts_file.unlink()
            os.kill(self.process.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 10
            while not self.counts_file.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            counts = json.loads(self.counts_file.read_text())
        return int(counts["commits"]), int(counts["appends"])


@contextmanager
def started(name: str, command: list[str], counts_file: Path | None = None) -> Iterator[Server]:
    # The floor starts gRPC as `agentmsg serve` does (its TCP endpoints, agentmsg._grpcsetup): the same gRPC on both
    # sides of the ratio. This process (the clients) keeps gRPC's defaults.
    env = {**os.environ, **tcp_endpoints()}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "serving on" not in line:
        process.kill()
        raise RuntimeError(f"{name} did not start: {line!r}")
    # Whatever the server prints later is read, so that a full pipe never stalls it.
    threading.Thread(target=process.stdout.read, daemon=True).start()
    try:
        loop = line.rstrip().removesuffix(")").rsplit("(", 1)[-1].rsplit(", ", 1)[-1]
        yield Server(name, line.split("serving on ", 1)[1].split()[0], process, counts_file, loop)
    finally:
        process.terminate()
        process.wait(30)


def database_cpu_seconds(pg: Any) -> float:
    """The CPU time of the PostgreSQL cluster so far: the postmaster's own and its children's, exited ones included
    (the postmaster reaps its backends, so their time is in its ``cutime``/``cstime``)."""
    postmaster = int((Path(pg.data_dir) / "postmaster.pid").read_text().split()[0])
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(entry.name) == postmaster:
            total += sum(int(f) for f in fields[11:15])
        elif int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def floor_server(kind: str, location: str, loop: str) -> Any:
    return started("floor", [sys.executable, __file__, "--floor", kind, location, "--loop", loop])


def agentmsg_server(kind: str, location: str, directory: Path, loop: str) -> Any:
    counts = directory / f"counts-{kind}.json"
    store = ["--db", location] if kind == "sqlite" else ["--store", location]
    serve = ["serve", "--port", "0", "--loop", loop, *store]
    command = [sys.executable, str(BENCH / "counted_server.py"), str(counts), *serve]
    return started("agentmsg", command, counts)


# --- clients in worker processes ------------------------------------------------------------------------


def _client_worker(commands: Any, results: Any) -> None:
    """Run append workloads on command: (target, sessions, prefix, seconds, go) -> appends done, latencies."""
    while True:
        command = commands.get()
        if command is None:
            return
        target, sessions, prefix, seconds = command
        try:
            results.put(asyncio.run(_appends(target, sessions, prefix, seconds)))
        except Exception as exc:  # reported by the parent, which would otherwise wait for a result
            results.put(exc)


async def _appends(target: str, sessions: list[str], prefix: str, seconds: float) -> tuple[int, list[float]]:
    template = am.UserMessage.text("a durable append " + "lorem ipsum " * 8, id="x", timestamp=1_750_000_000).pb
    latencies: list[float] = []
    done = 0
    # Everyone starts together: connect first, then run until the shared deadline.
    channels = [grpc.aio.insecure_channel(target) for _ in sessions]
    try:
        for channel in channels:
            await channel.channel_ready()
        deadline = time.perf_counter() + seconds

        async def one(index: int, session: str) -> None:
            nonlocal done
            stub = session_service_pb2_grpc.SessionServiceStub(channels[index])
            message = session_service_pb2.AppendMessageRequest(session_id=session)
            message.message.CopyFrom(template)
            i = 0
            while time.perf_counter() < deadline:
                message.message.id = f"{prefix}-{index}-{i}"
                i += 1
                start = time.perf_counter()
                await stub.AppendMessage(message, timeout=30)
                latencies.append(time.perf_counter() - start)
                done += 1

        await asyncio.gather(*(one(i, s) for i, s in enumerate(sessions)))
    finally:
        for channel in channels:
            await channel.close()
    return done, latencies


class Clients:
    """Client processes kept for the whole run; a workload's clients are spread over them."""

    def __init__(self, processes: int) -> None:
        context = mp.get_context("spawn")
        self.commands = [context.Queue() for _ in range(processes)]
        self.results = context.Queue()
        self.workers = [
            context.Process(target=_client_worker, args=(commands, self.results), daemon=True)
            for commands in self.commands
        ]
        for worker in self.workers:
            worker.start()

    def run(self, target: str, sessions: list[str], seconds: float) -> tuple[float, float]:
        """Appends per second and the p50 latency (ms) of ``len(sessions)`` clients, one per session entry."""
        used = min(len(sessions), len(self.commands))
        prefix = uuid.uuid4().hex[:12]
        for w in range(used):
            self.commands[w].put((target, sessions[w::used], f"{prefix}{w}", seconds))
        done, latencies = 0, []
        for _ in range(used):
            result = self.results.get(timeout=seconds + 120)
            if isinstance(result, Exception):
                raise RuntimeError(f"a client process failed: {result!r}")
            count, times = result
            done += count
            latencies.extend(times)
        return done / seconds, statistics.median(latencies) * 1e3

    def close(self) -> None:
        for commands in self.commands:
            commands.put(None)
        for worker in self.workers:
            worker.join(10)


# --- the run --------------------------------------------------------------------------------------------


def measure(
    clients: Clients, servers: list[Server], quick: bool, modes: tuple[str, ...], database: Any = None
) -> dict[str, Any]:
    """The cells of one store; ``database`` gives the database's CPU seconds so far (PostgreSQL), or is None."""
    rounds, seconds = (1, 1.0) if quick else (3, 2.0)
    cells: dict[str, Any] = {}
    for mode in modes:
        for count in CLIENTS:
            key = f"{mode}/{count}"
            per: dict[str, list[float]] = {s.name: [] for s in servers}
            p50: dict[str, list[float]] = {s.name: [] for s in servers}
            flushes: dict[str, list[float]] = {s.name: [] for s in servers}
            cpu: dict[str, list[float]] = {s.name: [] for s in servers}
            db_cpu: dict[str, list[float]] = {s.name: [] for s in servers}
            for round_ in range(rounds):
                for server in servers if round_ % 2 == 0 else reversed(servers):
                    tag = uuid.uuid4().hex[:8]
                    sessions = [f"{tag}-{i}" for i in range(count)] if mode == "distinct" else [tag] * count
                    commits0, appends0 = server.counters()
                    cpu0 = server.cpu_seconds()
                    db0 = database() if database else 0.0
                    rate, latency = clients.run(server.target, sessions, seconds)
                    appended = max(1.0, rate * seconds)
                    cpu[server.name].append((server.cpu_seconds() - cpu0) / appended * 1e6)
                    if database:
                        db_cpu[server.name].append((database() - db0) / appended * 1e6)
                    commits1, appends1 = server.counters()
                    per[server.name].append(rate)
                    p50[server.name].append(latency)
                    flushes[server.name].append((commits1 - commits0) / max(1, appends1 - appends0))
            ratios = [a / f for a, f in zip(per["agentmsg"], per["floor"], strict=True)]
            cells[key] = {
                "floor_per_s": statistics.median(per["floor"]),
                "agentmsg_per_s": statistics.median(per["agentmsg"]),
                "ratio": statistics.median(ratios),
                "floor_p50_ms": statistics.median(p50["floor"]),
                "agentmsg_p50_ms": statistics.median(p50["agentmsg"]),
                "floor_commits_per_append": statistics.median(flushes["floor"]),
                "agentmsg_commits_per_append": statistics.median(flushes["agentmsg"]),
                "floor_cpu_us": statistics.median(cpu["floor"]),
                "agentmsg_cpu_us": statistics.median(cpu["agentmsg"]),
            }
            c = cells[key]
            db_text = ""
            if database:
                c["floor_db_cpu_us"] = statistics.median(db_cpu["floor"])
                c["agentmsg_db_cpu_us"] = statistics.median(db_cpu["agentmsg"])
                db_text = f"  database CPU/append {c['floor_db_cpu_us']:.0f} / {c['agentmsg_db_cpu_us']:.0f} us"
            print(
                f"  {mode:8} {count:3} clients: floor {c['floor_per_s']:8.0f}/s  agentmsg {c['agentmsg_per_s']:8.0f}/s"
                f"  ratio {c['ratio']:.2f}x  p50 {c['floor_p50_ms']:.2f} / {c['agentmsg_p50_ms']:.2f} ms"
                f"  commits/append {c['floor_commits_per_append']:.2f} / {c['agentmsg_commits_per_append']:.2f}"
                f"  server CPU/append {c['floor_cpu_us']:.0f} / {c['agentmsg_cpu_us']:.0f} us{db_text}",
                flush=True,
            )
    return cells


def targets(store: str, cells: dict[str, Any], modes: tuple[str, ...]) -> list[dict[str, Any]]:
    found = []
    for mode in modes:
        top, mid = cells[f"{mode}/64"], cells[f"{mode}/16"]
        ok = top["ratio"] >= MIN_OF_FLOOR
        found.append(
            {
                "name": f"{store} {mode} sessions, 64 clients",
                "text": f"{store}, {mode} sessions, 64 clients: agentmsg {top['ratio']:.2f}x the bare "
                f"group-committing server (target >= {MIN_OF_FLOOR}x)",
                "pass": ok,
            }
        )
        growth = top["agentmsg_per_s"] / mid["agentmsg_per_s"]
        found.append(
            {
                "name": f"{store} {mode} sessions, 16 -> 64 clients",
                "text": f"{store}, {mode} sessions: agentmsg at 64 clients {growth:.2f}x its 16 clients "
                f"(target: no drop, >= {NO_DROP}x)",
                "pass": growth >= NO_DROP,
            }
        )
    for target in found:
        print(f"  {'PASS' if target['pass'] else 'MISS'}  {target['text']}")
    return found


def run(
    quick: bool, stores: tuple[str, ...] = ("sqlite", "postgres"), modes: tuple[str, ...] = MODES, loop: str = "auto"
) -> dict[str, Any]:
    from agentmsg.service.localpg import LocalPostgres

    results: dict[str, Any] = {
        "benchmark": "group_commit",
        "quick": quick,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loop": loop,
        "stores": {},
        "targets": [],
    }
    clients = Clients(2)
    try:
        with ExitStack() as stack:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentmsg-gc-")))
            pg = stack.enter_context(LocalPostgres.temporary()) if "postgres" in stores else None
            for kind in stores:
                if kind == "sqlite":
                    floor_at, agentmsg_at = str(directory / "floor.db"), str(directory / "agentmsg.db")
                else:
                    floor_at, agentmsg_at = _database(pg, "floor"), _database(pg, "agentmsg")
                print(f"\n{kind}: appends/s, floor vs agentmsg (median of interleaved rounds)", flush=True)
                with (
                    floor_server(kind, floor_at, loop) as floor,
                    agentmsg_server(kind, agentmsg_at, directory, loop) as server,
                ):
                    print(f"  event loops: floor {floor.loop}, agentmsg {server.loop}", flush=True)
                    results.setdefault("loops", {})[kind] = {"floor": floor.loop, "agentmsg": server.loop}
                    database = (lambda: database_cpu_seconds(pg)) if kind == "postgres" else None
                    cells = measure(clients, [floor, server], quick, modes, database)
                results["stores"][kind] = cells
                results["targets"].extend(targets(kind, cells, modes))
    finally:
        clients.close()
    return results


def _database(pg: Any, name: str) -> str:
    import psycopg

    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a fixed identifier
    return pg.dsn.rsplit("/", 1)[0] + f"/{name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round per cell")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--store", choices=("sqlite", "postgres"), action="append", help="only this store (repeatable)")
    parser.add_argument("--mode", choices=MODES, action="append", help="only these sessions (repeatable)")
    parser.add_argument("--loop", choices=LOOPS, default="auto", help="the event loop of both servers (default auto)")
    parser.add_argument("--floor", nargs=2, metavar=("KIND", "LOCATION"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor:
        run_on(_floor_serve(*args.floor), args.loop)
        return 0
    results = run(args.quick, tuple(args.store or ("sqlite", "postgres")), tuple(args.mode or MODES), args.loop)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
