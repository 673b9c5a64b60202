"""cProfile helpers for the benchmarks: profiles of missed targets, as plain data for the results file.

A profile here is the top functions by own time (``tottime``), each given per
operation of the profiled workload (per encode, per delivered message, per
1 MiB append...), so two profiles (the contender's and its anchor's) can be
read side by side. cProfile adds a fixed cost per Python call: absolute
times in a profile are inflated, the split between functions is what counts.

``profiled_server.py`` runs the agentmsg server under cProfile for the
service profiles.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _where(filename: str, line: int, name: str) -> str:
    """``module.py:123(function)`` with the path shortened to the package (or ``<built-in ...>``)."""
    if filename == "~":
        return name
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/src/", "/bench/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            if marker == "/lib/python3":
                path = "stdlib/" + path.split("/", 1)[1]
            break
    else:
        path = Path(path).name
    return f"{path}:{line}({name})"


def summarize(stats: pstats.Stats, per: int, top: int = 12) -> dict[str, Any]:
    """The ``top`` functions by own time, with times in microseconds per ``per`` operations."""
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = []
    total = 0.0
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in raw.items():
        if "_lsprof.Profiler" in name:
            continue
        total += tottime
        rows.append(
            {
                "function": _where(filename, line, name),
                "calls_per_op": ncalls / per,
                "own_us_per_op": tottime / per * 1e6,
                "cum_us_per_op": cumtime / per * 1e6,
            }
        )
    rows.sort(key=lambda r: r["own_us_per_op"], reverse=True)
    return {"ops": per, "total_us_per_op": total / per * 1e6, "top": rows[:top]}


def profile_calls(fn: Callable[[], object], calls: int, top: int = 12) -> dict[str, Any]:
    """cProfile ``calls`` calls of ``fn`` (after one unprofiled warm-up call)."""
    fn()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    return summarize(pstats.Stats(profiler), calls, top)


def profile_file(path: str | Path, per: int, top: int = 12) -> dict[str, Any]:
    """A profile written by ``cProfile`` (``dump_stats``), per ``per`` operations."""
    return summarize(pstats.Stats(str(path)), per, top)


def format_profile(title: str, profile: dict[str, Any], unit: str = "op", rows: int = 10) -> list[str]:
    """Text lines: the title, then one line per function (own and cumulative time per operation)."""
    lines = [f"{title}: {profile['total_us_per_op']:.2f} µs of profiled Python time per {unit}"]
    lines.append(f"    {'own µs':>9} {'cum µs':>9} {'calls':>7}  function (per {unit})")
    for row in profile["top"][:rows]:
        lines.append(
            f"    {row['own_us_per_op']:9.3f} {row['cum_us_per_op']:9.3f} {row['calls_per_op']:7.2f}  {row['function']}"
        )
    return lines
