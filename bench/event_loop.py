"""The server's event loop, side by side: hosted MCP ``CallTool`` p50 with ``agentmsg serve --loop uvloop`` and
``--loop asyncio`` running at once, called by one client in alternating rounds.

Both servers host their own copy of the reference MCP server (``--mcp ev=mcp-server-everything stdio``) and run
on this machine at the same time, so both see the same load; the rounds alternate which goes first. Each round is
``CALLS`` sequential ``ev.echo`` calls (the first ``WARMUP`` not counted); the figure is the median of the rounds'
p50s, and the ratio the median of the per-round ratios (uvloop over asyncio: below 1, uvloop is faster). The
``bench/mcp_bridge.py`` runs compare each loop with its floors; this one compares the loops with each other.

Run: ``.venv/bin/python bench/event_loop.py [--rounds N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import agentmsg as am
from agentmsg.service import AsyncClient

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
LOOPS = ("uvloop", "asyncio")
CALLS = 400
WARMUP = 20


def start(loop: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "agentmsg", "serve", "--port", "0", "--memory", "--loop", loop]
    process = subprocess.Popen(
        [*command, "--mcp", f"ev={EVERYTHING} stdio"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "serving on" not in line or not line.rstrip().endswith(f"{loop})"):
        process.kill()
        raise RuntimeError(f"the server on {loop} did not start: {line!r}")
    return process, line.split("serving on ", 1)[1].split()[0]


async def round_p50(client: AsyncClient) -> float:
    times = []
    for i in range(CALLS):
        started = time.perf_counter()
        result = await client.call_tool(am.ToolCallContent(f"c{i}", "ev.echo", {"message": f"m{i}"}), timeout=60)
        times.append(time.perf_counter() - started)
        if result.is_error or f"m{i}" not in result.text:
            raise RuntimeError(f"unexpected answer: {result.text!r}")
    return statistics.median(times[WARMUP:]) * 1000


async def measure(targets: dict[str, str], rounds: int) -> dict[str, Any]:
    p50: dict[str, list[float]] = {loop: [] for loop in LOOPS}
    async with AsyncClient(targets["uvloop"]) as fast, AsyncClient(targets["asyncio"]) as plain:
        clients = {"uvloop": fast, "asyncio": plain}
        for client in clients.values():
            for _ in range(600):
                if any(tool.tool.name == "ev.echo" for tool in await client.list_tools()):
                    break
                await asyncio.sleep(0.05)
            else:
                raise RuntimeError("the hosted MCP server's tools never came")
        for number in range(rounds):
            for loop in LOOPS if number % 2 == 0 else reversed(LOOPS):
                p50[loop].append(await round_p50(clients[loop]))
            print(f"  round {number + 1}: uvloop {p50['uvloop'][-1]:.3f} ms, asyncio {p50['asyncio'][-1]:.3f} ms")
    ratios = [fast / plain for fast, plain in zip(p50["uvloop"], p50["asyncio"], strict=True)]
    return {
        "p50_ms": {loop: statistics.median(values) for loop, values in p50.items()},
        "rounds_p50_ms": p50,
        "ratio": statistics.median(ratios),
        "uvloop_faster_rounds": sum(ratio < 1 for ratio in ratios),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="alternated rounds (default 8)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    if not EVERYTHING.exists():
        raise SystemExit(f"{EVERYTHING} is missing: run make deps")
    load = os.getloadavg()
    servers = {loop: start(loop) for loop in LOOPS}
    try:
        results = asyncio.run(measure({loop: target for loop, (_, target) in servers.items()}, args.rounds))
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(30)
    results["load_average"], results["load_average_end"] = list(load), list(os.getloadavg())
    p50 = results["p50_ms"]
    print(
        f"hosted MCP CallTool p50, {args.rounds} rounds of {CALLS} calls: uvloop {p50['uvloop']:.3f} ms, asyncio "
        f"{p50['asyncio']:.3f} ms; uvloop / asyncio {results['ratio']:.2f}x (uvloop faster in "
        f"{results['uvloop_faster_rounds']} of {args.rounds} rounds); load {load[0]:.1f} -> "
        f"{results['load_average_end'][0]:.1f}"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
