"""Where a hosted MCP ``CallTool`` spends its time, per call, against the bench's bare relay (``bench/mcp_bridge.py``).

Two servers, each with its own copy of the reference MCP server over stdio: ``agentmsg serve --mcp ev=...`` (called
with ``AsyncClient.call_tool``, as ``mcp_bridge.py`` calls it) and the bare ``grpc.aio`` relay of ``mcp_bridge.py``
(raw bytes, no agentmsg on either end). Sequential calls in alternating rounds; for each side, per call (medians of
the rounds):

- p50 latency;
- CPU of this (the calling) process (``time.process_time``, all its threads);
- CPU of the server process (``/proc/PID/task/*/schedstat``: all its threads) and of its main thread (the event loop);
- event loop turns, tasks created, callbacks scheduled (``call_soon``) and timers armed (``call_at``) per call, in
  this process and in the server (counted by wrapping asyncio's loop methods in both, so both servers run on
  asyncio's loop here, not on uvloop, their default; the counting itself costs a little CPU on both sides alike).

Counts do not depend on the machine's load; CPU and latency do: check ``uptime`` first.

Run: ``.venv/bin/python bench/mcp_percall.py [--calls N] [--rounds R] [--json PATH]`` (not part of ``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import runpy
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from asyncio import base_events
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import grpc  # noqa: E402
import mcp_bridge  # noqa: E402

import agentmsg as am  # noqa: E402
from agentmsg.service import AsyncClient  # noqa: E402

COUNTS = {"turns": 0, "tasks": 0, "callbacks": 0, "timers": 0}


def count_loop() -> None:
    """Count this process's event loop turns, tasks, callbacks and timers (asyncio's own loop)."""
    wrapped = {"_run_once": "turns", "create_task": "tasks", "call_soon": "callbacks", "call_at": "timers"}
    for method, key in wrapped.items():
        original = getattr(base_events.BaseEventLoop, method)

        def counting(self: Any, *args: Any, _original: Any = original, _key: str = key, **kwargs: Any) -> Any:
            COUNTS[_key] += 1
            return _original(self, *args, **kwargs)

        setattr(base_events.BaseEventLoop, method, counting)


def role_counted(out: str, argv: list[str]) -> None:
    """Run ``argv`` (``-m module ...`` or ``script ...``), its loop counted; SIGUSR1 writes the counts to ``out``."""
    count_loop()

    def dump(*_: Any) -> None:
        Path(out).write_text(json.dumps(COUNTS))

    signal.signal(signal.SIGUSR1, dump)
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")


def cpu_ns(pid: int, main_only: bool = False) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        if main_only and task.name != str(pid):
            continue
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):  # a thread that ended meanwhile
            continue
    return total


def remote_counts(process: subprocess.Popen[Any], out: Path) -> dict[str, int]:
    out.unlink(missing_ok=True)
    os.kill(process.pid, signal.SIGUSR1)
    for _ in range(500):
        try:
            return dict(json.loads(out.read_text()))
        except (OSError, ValueError):
            time.sleep(0.01)
    raise RuntimeError(f"process {process.pid} wrote no counts")


def counted(out: Path, *argv: str, ready: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """``argv`` run in a child process that writes its event loop's counts to ``out`` (:func:`role_counted`)."""
    return mcp_bridge.start(__file__, "--role", "counted", "--out", str(out), "--", *argv, ready=ready)


async def one_round(
    call: Callable[[int], Awaitable[None]], process: subprocess.Popen[Any], out: Path, calls: int
) -> dict[str, float]:
    for i in range(20):
        await call(-1 - i)
    mine, theirs = dict(COUNTS), remote_counts(process, out)
    server, loop_thread = cpu_ns(process.pid), cpu_ns(process.pid, main_only=True)
    began_cpu = time.process_time()
    times = []
    for i in range(calls):
        began = time.perf_counter()
        await call(i)
        times.append(time.perf_counter() - began)
    client_cpu = time.process_time() - began_cpu
    server, loop_thread = cpu_ns(process.pid) - server, cpu_ns(process.pid, main_only=True) - loop_thread
    after = remote_counts(process, out)
    row = {
        "p50_us": statistics.median(times) * 1e6,
        "client_cpu_us": client_cpu / calls * 1e6,
        "server_cpu_us": server / calls / 1e3,
        "server_loop_thread_cpu_us": loop_thread / calls / 1e3,
    }
    for key, now in COUNTS.items():
        row[f"client_{key}"] = (now - mine[key]) / calls
        row[f"server_{key}"] = (after[key] - theirs[key]) / calls
    return row


async def measure(target: str, relay_target: str, server: Any, relay: Any, calls: int, rounds: int) -> dict[str, Any]:
    (server_process, server_out), (relay_process, relay_out) = server, relay
    async with AsyncClient(target, timeout=30) as client, grpc.aio.insecure_channel(relay_target) as channel:
        relayed = channel.unary_unary(mcp_bridge.RELAY_METHOD)

        async def hosted(i: int) -> None:
            result = await client.call_tool(am.ToolCallContent(f"call-{i}", "ev.echo", {"message": f"m{i}"}))
            mcp_bridge.checked(result, f"m{i}")

        async def relay(i: int) -> None:
            answer = (await relayed(f"m{i}".encode(), timeout=30)).decode()
            if f"m{i}" not in answer:
                raise RuntimeError(f"unexpected relay answer {answer!r}")

        runs: dict[str, list[dict[str, float]]] = {"hosted": [], "relay": []}
        for _ in range(rounds):
            runs["hosted"].append(await one_round(hosted, server_process, server_out, calls))
            runs["relay"].append(await one_round(relay, relay_process, relay_out, calls))
    return {side: {key: statistics.median(r[key] for r in rows) for key in rows[0]} for side, rows in runs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="sequential calls per round and side")
    parser.add_argument("--rounds", type=int, default=8, help="rounds, alternating hosted and relay")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--role", choices=["counted"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "counted":
        role_counted(args.out, args.argv)
        return 0
    if not mcp_bridge.EVERYTHING.exists():
        raise SystemExit(f"{mcp_bridge.EVERYTHING} is missing: run make deps")
    count_loop()
    tmp = Path(tempfile.mkdtemp())
    port_file = tmp / "relay-port"
    hosting = ["--mcp", f"ev={mcp_bridge.EVERYTHING} stdio"]
    # Both on asyncio's loop: the counts wrap its methods (uvloop's, the servers' default, cannot be wrapped).
    on_asyncio = ("--loop", "asyncio")
    server, line = counted(
        tmp / "server.json",
        "-m",
        "agentmsg",
        "serve",
        "--port",
        "0",
        "--memory",
        *hosting,
        *on_asyncio,
        ready="serving on",
    )
    relay, _ = counted(
        tmp / "relay.json", mcp_bridge.__file__, "--role", "relay", "--port-file", str(port_file), *on_asyncio
    )
    load = os.getloadavg()
    try:
        target = line.split("serving on ", 1)[1].split()[0]
        asyncio.run(mcp_bridge.wait_tool(target, "ev.echo"))
        for _ in range(600):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        relay_target = f"127.0.0.1:{port_file.read_text().split()[0]}"  # the port, then the loop it runs on
        results = asyncio.run(
            measure(
                target,
                relay_target,
                (server, tmp / "server.json"),
                (relay, tmp / "relay.json"),
                args.calls,
                args.rounds,
            )
        )
    finally:
        for process in (server, relay):
            process.terminate()
            process.wait(30)
    results["load_average"] = [*load, *os.getloadavg()]
    print(f"hosted CallTool vs the bare relay, {args.rounds} rounds of {args.calls} calls (load {load[0]:.2f})")
    print(f"{'per call':36s} {'hosted':>10s} {'relay':>10s}")
    for key in results["hosted"]:
        print(f"{key:36s} {results['hosted'][key]:10.2f} {results['relay'][key]:10.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
