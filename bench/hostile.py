"""How long one heavy request holds up everyone else: small appends answered while a big request is served.

A server (``agentmsg serve``, SQLite in a temporary directory) runs in a subprocess. A probe appends one small
message after another on its own channel and records each round trip; meanwhile a big request (800 kB or 8 MB,
several shapes: many messages, many blocks, one large block; legal, over a limit, invalid) is sent on another
channel. Reported per shape: the big request's time and status, and the slowest probe append while it was in
flight, beside the probe's median when the server is idle. The probe's worst round trip is the delay one
request causes every other client.

``--src DIR`` runs the server from another source tree (``--src ../main/src``: the figures before a change).
``--loop`` then runs the shapes again with the server in this process, on an event loop in its own thread, with a
task on that loop that wakes every millisecond: it reports the loop's longest stall during each big request (the
share of the delay that is the server's own event loop, rather than the store's single writer or the transfer;
the bench's client shares the process, so these figures include its turns at the GIL). ``make bench`` runs it
with ``--loop`` and ``bench/report.py`` puts the figures in ``bench/results.md``.
Not part of ``make test``; the tests (``tests/service/test_hostile_requests.py``) assert the behaviour.
Server and client share this machine's cores: on a loaded machine the figures move (compare before and after
in one sitting).
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
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import grpc

import agentmsg as am
from agentmsg.service import ServerConfig, create_server
from agentmsg.v1 import message_pb2, session_service_pb2

APPEND = "/agentmsg.v1.SessionService/AppendMessage"
APPEND_MANY = "/agentmsg.v1.SessionService/AppendMessages"
_READY = re.compile(r"agentmsg serving on 127\.0\.0\.1:(\d+)")


def _message(blocks: int, size: int, index: int = 0) -> message_pb2.Message:
    return am.AssistantMessage([am.TextContent("x" * size) for _ in range(blocks)], id=f"m{index}").pb


def _one(session: str, message: message_pb2.Message) -> bytes:
    return session_service_pb2.AppendMessageRequest(session_id=session, message=message).SerializeToString()


def _many(session: str, messages: list[message_pb2.Message]) -> bytes:
    return session_service_pb2.AppendMessagesRequest(session_id=session, messages=messages).SerializeToString()


def _invalid(blocks: int, size: int) -> message_pb2.Message:
    message = _message(blocks, size)
    message.assistant.content[-1].text.citations.add()  # a citation without its required fields
    return message


SHAPES: dict[str, Callable[[], tuple[str, bytes]]] = {
    "800 kB: 8,000 blocks in one message (over --max-blocks)": lambda: (APPEND, _one("big1", _message(8000, 90))),
    "800 kB: 1,024 blocks in one message (at the limit)": lambda: (APPEND, _one("big2", _message(1024, 770))),
    "800 kB: 1,000 messages of one block": lambda: (
        APPEND_MANY,
        _many("big3", [_message(1, 770, i) for i in range(1000)]),
    ),
    "800 kB: 1,024 blocks, one invalid (protovalidate's pass)": lambda: (APPEND, _one("big4", _invalid(1024, 770))),
    "8 MB: one 8 MB text block": lambda: (APPEND, _one("big5", _message(1, 8 << 20))),
    "8 MB: 1,024 blocks of 8 kB in one message": lambda: (APPEND, _one("big6", _message(1024, 8000))),
    "8 MB: 1,000 messages of 8 kB": lambda: (
        APPEND_MANY,
        _many("big7", [_message(1, 8000, i) for i in range(1000)]),
    ),
    "8 MB: 80,000 blocks in one message (over --max-blocks)": lambda: (APPEND, _one("big8", _message(80000, 90))),
}


class LoopServer:
    """``create_server`` on a loop in a thread, with a probe task measuring how late that loop wakes."""

    def __init__(self, directory: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        config = ServerConfig(db=str(Path(directory) / "bench.db"))
        self.running = asyncio.run_coroutine_threadsafe(create_server(config), self.loop).result(30)
        self.target = f"127.0.0.1:{self.running.port}"
        self.worst = 0.0
        asyncio.run_coroutine_threadsafe(self._probe(), self.loop)

    async def _probe(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, time.perf_counter() - before - 0.001)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.running.stop(0), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Server:
    def __init__(self, src: str | None, directory: str) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if src:
            env["PYTHONPATH"] = str(Path(src).resolve())
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmsg",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--grace",
                "0",
                "--db",
                str(Path(directory) / "bench.db"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            found = _READY.search(line)
            if found:
                self.target = f"127.0.0.1:{found.group(1)}"
                return
        raise RuntimeError("the server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


async def _probe(channel: grpc.aio.Channel, stop: asyncio.Event, rounds: list[tuple[float, float]]) -> None:
    append = channel.unary_unary(APPEND)
    n = 0
    while not stop.is_set():
        n += 1
        body = _one("probe", am.UserMessage.text("ping", id=f"p{n}-{time.monotonic_ns()}").pb)
        start = time.perf_counter()
        await append(body, timeout=120)
        rounds.append((start, time.perf_counter() - start))


async def _measure(target: str, method: str, body: bytes, idle: float) -> dict[str, object]:
    options = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
    async with (
        grpc.aio.insecure_channel(target, options=options) as probe,
        grpc.aio.insecure_channel(target, options=options) as heavy,
    ):
        rounds: list[tuple[float, float]] = []
        stop = asyncio.Event()
        task = asyncio.create_task(_probe(probe, stop, rounds))
        await asyncio.sleep(idle)
        before = [d for _, d in rounds]
        start = time.perf_counter()
        try:
            await heavy.unary_unary(method)(body, timeout=300)
            code = "OK"
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
        end = time.perf_counter()
        await asyncio.sleep(0.05)
        stop.set()
        await task
    during = [d for t, d in rounds if t + d >= start and t <= end]
    return {
        "bytes": len(body),
        "status": code,
        "request_s": end - start,
        "probe_idle_median_ms": statistics.median(before) * 1000 if before else None,
        "probe_worst_during_ms": max(during) * 1000 if during else None,
        "probe_answered_during": len(during),
    }


def _pass(server: Server | LoopServer, args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """Every shape against ``server``, one after another."""
    results: dict[str, dict[str, object]] = {}
    for name, build in SHAPES.items():
        if (args.quick and "80,000" in name) or (args.only and args.only not in name):
            continue
        method, body = build()
        if isinstance(server, LoopServer):
            time.sleep(0.2)
            server.worst = 0.0
        results[name] = found = asyncio.run(_measure(server.target, method, body, idle=0.5))
        stall = ""
        if isinstance(server, LoopServer):
            found["loop_worst_stall_ms"] = server.worst * 1000
            stall = f"; the server loop's longest stall {server.worst * 1000:.1f} ms"
        print(
            f"  {name}: {found['status']} in {found['request_s']:.3f} s; small appends meanwhile: "
            f"{found['probe_answered_during']}, the slowest {found['probe_worst_during_ms'] or 0:.1f} ms "
            f"(idle median {found['probe_idle_median_ms'] or 0:.2f} ms){stall}",
            flush=True,
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", help="run the server from this source tree (PYTHONPATH)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="skip the 80,000-block shape")
    parser.add_argument("--only", help="run only the shapes whose name contains this")
    parser.add_argument("--loop", action="store_true", help="also: the server in this process, its loop's stalls")
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as directory:
        print("server process:", flush=True)
        process = Server(args.src, directory)
        try:
            results["process"] = _pass(process, args)
        finally:
            process.stop()
    if args.loop:
        with tempfile.TemporaryDirectory() as directory:
            print("server in this process, its loop probed:", flush=True)
            in_process = LoopServer(directory)
            try:
                results["in_process"] = _pass(in_process, args)
            finally:
                in_process.stop()
    if args.json:
        results.update(
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            command=" ".join([Path(sys.executable).name, *sys.argv]),
            quick=args.quick,
            total_s=time.perf_counter() - started,
            load_average=load,
            load_average_end=os.getloadavg(),
        )
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
