"""Reading benchmark: a context built at the end of a long compacted path, and a long session read through the client.

Server and client in separate processes on 127.0.0.1, the server on its default store (SQLite, one file). Measured
in one run, side by side, in interleaved rounds (the order turned every other round); each ratio is the median of
the rounds' own ratios:

- ``BuildContext`` (``client.build_context``) of a session whose latest compaction keeps 600 entries and is followed
  by 2,000 more (with a branch among them), at the end of a path with 800 and with 8,000 entries before the first
  kept one (older compactions and branches among them), next to ``ListMessages`` (``client.history``) of a session
  holding exactly the messages of that context, read for the first time (a fresh copy each round, so its rows come
  from the store as BuildContext's do; the same read served again from the reply cache is printed beside it).
  Targets: the long path's context <= 1.3x the ``ListMessages`` read,
  and <= 1.2x the short path's (flat as the path before the compaction grows 10x).
- ``client.history`` of a 100,000-message session next to the ``Subscribe`` catch-up of the same session
  (``client.subscribe`` until the 100,000th message), both decoding every message into wrappers. Target: <= 1.2x.

Run: ``make bench`` or ``.venv/bin/python bench/reads.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import agentmsg as am
from agentmsg.service import Client

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from service import ServerProcess, agentmsg_server  # noqa: E402 - bench/ is on the path just above

CONTEXT_MAX_RATIO = 1.3  # BuildContext of the long path vs ListMessages of the same messages
CONTEXT_MAX_GROWTH = 1.2  # BuildContext with 10x the path before the compaction vs the short path
HISTORY_MAX_RATIO = 1.2  # client.history vs the Subscribe catch-up of the same session
KEPT = 600  # entries the latest compaction keeps
AFTER = 2000  # entries after it


def entry(i: int, prefix: str) -> am.AgentMessage:
    """A turn of an agent's conversation: user text, an assistant tool call, its result, an assistant answer."""
    mid = f"{prefix}{i}"
    kind = i % 4
    if kind == 0:
        return am.UserMessage.text(f"question {i}: " + "lorem ipsum " * 6, id=mid, timestamp=1_750_000_000 + i)
    if kind == 1:
        call = am.ToolCallContent(f"call-{mid}", "search", {"query": f"item {i}", "limit": 5})
        return am.AssistantMessage([am.TextContent("let me look"), call], id=mid, timestamp=1_750_000_000 + i)
    if kind == 2:
        result = am.ToolResultContent(f"call-{prefix}{i - 1}", [am.TextContent("found: " + "dolor sit " * 8)])
        return am.ToolMessage([result], id=mid, timestamp=1_750_000_000 + i)
    return am.AssistantMessage.text(f"answer {i}: " + "amet " * 10, id=mid, timestamp=1_750_000_000 + i)


def append_run(client: Client, session: str, start: int, count: int, prefix: str) -> None:
    for first in range(start, start + count, 500):
        client.append_many(session, [entry(i, prefix) for i in range(first, min(first + 500, start + count))])


def compacted_session(client: Client, session: str, before: int) -> None:
    """``before`` entries (a compaction and a branch every 1,000), then the latest compaction keeping ``KEPT``
    entries, then ``AFTER`` entries with a branch among them."""
    done = 0
    while done < before:
        step = min(1000, before - done)
        append_run(client, session, done, step, "p")
        done += step
        if step >= 200:
            client.branch(session, f"p{done - 50}", "tried another way", entry_id=f"b{done}")
            client.compact(session, f"summary up to {done}", first_kept_entry_id=f"p{done - 100}", entry_id=f"c{done}")
    append_run(client, session, 0, KEPT, "k")
    client.compact(session, "the latest summary", first_kept_entry_id="k0", entry_id="latest", tokens_before=90_000)
    append_run(client, session, 0, AFTER // 2, "t")
    client.branch(session, f"t{AFTER // 2 - 20}", "went back twenty entries", entry_id="tail-branch")
    append_run(client, session, AFTER // 2, AFTER // 2, "t")


def timed(action: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    count = action()
    return time.perf_counter() - start, count


def rounds_of(measures: dict[str, Callable[[], int]], rounds: int) -> dict[str, list[float]]:
    """Each measure once a round, the order turned every other round; seconds per round."""
    times: dict[str, list[float]] = {name: [] for name in measures}
    names = list(measures)
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            seconds, _ = timed(measures[name])
            times[name].append(seconds)
    return times


def paired(times: dict[str, list[float]], top: str, bottom: str) -> float:
    return statistics.median(a / b for a, b in zip(times[top], times[bottom], strict=True))


def _row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<58} {value:>16}  {note}".rstrip())


def _target(results: dict[str, Any], name: str, text: str, passed: bool, **values: float) -> str:
    results["targets"].append({"name": name, "text": text, "pass": passed, **values})
    return "PASS" if passed else "MISS"


def measure(server: ServerProcess, measures: dict[str, Callable[[], int]], rounds: int) -> dict[str, Any]:
    """Interleaved rounds of ``measures`` (wall seconds each), and the server's CPU seconds per call of each."""
    cpu: dict[str, float] = dict.fromkeys(measures, 0.0)

    def counted(name: str) -> Callable[[], int]:
        def call() -> int:
            before = server.cpu_seconds()
            count = measures[name]()
            cpu[name] += server.cpu_seconds() - before
            return count

        return call

    times = rounds_of({name: counted(name) for name in measures}, rounds)
    return {
        "seconds": times,
        "median_s": {name: statistics.median(values) for name, values in times.items()},
        "server_cpu_s": {name: total / rounds for name, total in cpu.items()},
    }


def context_section(server: ServerProcess, client: Client, quick: bool, results: dict[str, Any]) -> None:
    short, long = (300, 3000) if quick else (800, 8000)
    rounds = 7 if quick else 21
    print(f"\n== BuildContext at the end of a compacted path ({KEPT} kept + {AFTER} after the compaction)")
    compacted_session(client, "short", short)
    compacted_session(client, "long", long)
    context = client.build_context("long")
    same = [m.id for m in client.build_context("short")] == [m.id for m in context]
    assert same, "both sessions end in the same context"
    # ListMessages of the same messages, read for the first time (a copy per round: no page of it is in the
    # server's reply cache yet, so it reads its rows from the store as BuildContext does), and read again.
    copies = iter(range(rounds + 1))
    for copy in range(rounds + 1):
        for first in range(0, len(context), 500):
            client.append_many(f"flat-{copy}", context[first : first + 500])
    assert sum(1 for _ in client.history(f"flat-{next(copies)}")) == len(context)
    paths = {name: len(path_of(client, name)) for name in ("short", "long")}
    measured = measure(
        server,
        {
            "context_long": lambda: len(client.build_context("long")),
            "context_short": lambda: len(client.build_context("short")),
            "list": lambda: sum(1 for _ in client.history(f"flat-{next(copies)}")),
            "list_again": lambda: sum(1 for _ in client.history("flat-0")),
        },
        rounds,
    )
    vs_list = paired(measured["seconds"], "context_long", "list")
    growth = paired(measured["seconds"], "context_long", "context_short")
    results["context"] = {
        "messages": len(context),
        "path_short": paths["short"],
        "path_long": paths["long"],
        "rounds": rounds,
        **measured,
        "vs_list": vs_list,
        "growth": growth,
    }
    med, cpu = measured["median_s"], measured["server_cpu_s"]
    _row(
        f"ListMessages (client.history) of the {len(context):,} messages, first read",
        f"{med['list'] * 1e3:.1f} ms",
        f"server CPU {cpu['list'] * 1e3:.1f} ms",
    )
    _row(
        "  the same messages read again (pages from the reply cache)",
        f"{med['list_again'] * 1e3:.1f} ms",
        f"server CPU {cpu['list_again'] * 1e3:.1f} ms",
    )
    _row(
        f"BuildContext, path of {paths['short']:,} entries",
        f"{med['context_short'] * 1e3:.1f} ms",
        f"server CPU {cpu['context_short'] * 1e3:.1f} ms",
    )
    verdict = _target(
        results,
        "context_vs_list",
        f"BuildContext of {len(context):,} messages at the end of a {paths['long']:,}-entry compacted path "
        f"{vs_list:.2f}\u00d7 ListMessages of the same messages (limit {CONTEXT_MAX_RATIO:g}\u00d7)",
        vs_list <= CONTEXT_MAX_RATIO,
        ratio=vs_list,
        limit=CONTEXT_MAX_RATIO,
    )
    _row(
        f"BuildContext, path of {paths['long']:,} entries",
        f"{med['context_long'] * 1e3:.1f} ms",
        f"server CPU {cpu['context_long'] * 1e3:.1f} ms; {vs_list:.2f}x ListMessages  {verdict} "
        f"(target <= {CONTEXT_MAX_RATIO:g}x)",
    )
    verdict = _target(
        results,
        "context_growth",
        f"BuildContext with {long // short}\u00d7 the path before the first kept entry "
        f"({paths['short']:,} \u2192 {paths['long']:,} entries): {growth:.2f}\u00d7 "
        f"(limit {CONTEXT_MAX_GROWTH:g}\u00d7)",
        growth <= CONTEXT_MAX_GROWTH,
        ratio=growth,
        limit=CONTEXT_MAX_GROWTH,
    )
    _row("  long path vs short path", f"{growth:.2f}x", f"{verdict} (target <= {CONTEXT_MAX_GROWTH:g}x)")


def history_section(server: ServerProcess, client: Client, quick: bool, results: dict[str, Any]) -> None:
    total = 20_000 if quick else 100_000
    rounds = 3 if quick else 9
    print(f"\n== reading a {total:,}-message session: client.history vs the Subscribe catch-up")
    append_run(client, "long-session", 0, total, "h")

    def catch_up() -> int:
        seen = 0
        for _ in client.subscribe("long-session"):
            seen += 1
            if seen == total:
                break
        return seen

    def history() -> int:
        return sum(1 for _ in client.history("long-session"))

    assert history() == total
    assert catch_up() == total
    measured = measure(server, {"history": history, "subscribe": catch_up}, rounds)
    ratio = paired(measured["seconds"], "history", "subscribe")
    results["history"] = {"messages": total, "rounds": rounds, **measured, "ratio": ratio}
    med, cpu = measured["median_s"], measured["server_cpu_s"]
    _row(
        "Subscribe catch-up (client.subscribe)",
        f"{med['subscribe']:.3f} s",
        f"{total / med['subscribe']:,.0f} msg/s, server CPU {cpu['subscribe']:.3f} s",
    )
    verdict = _target(
        results,
        "history_vs_subscribe",
        f"client.history of {total:,} messages {ratio:.2f}\u00d7 the Subscribe catch-up "
        f"(limit {HISTORY_MAX_RATIO:g}\u00d7)",
        ratio <= HISTORY_MAX_RATIO,
        ratio=ratio,
        limit=HISTORY_MAX_RATIO,
    )
    _row(
        "ListMessages pages (client.history)",
        f"{med['history']:.3f} s",
        f"server CPU {cpu['history']:.3f} s; {ratio:.2f}x catch-up  {verdict} (target <= {HISTORY_MAX_RATIO:g}x)",
    )


def run(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {"targets": [], "cores": len(os.sched_getaffinity(0))}
    print(f"agentmsg reading benchmark (server on SQLite, {results['cores']} cores, 127.0.0.1)")
    with (
        tempfile.TemporaryDirectory() as tmp,
        agentmsg_server("--db", f"{tmp}/reads.db") as server,
        Client(server.target, timeout=300) as client,
    ):
        context_section(server, client, quick, results)
        history_section(server, client, quick, results)
    return results


def path_of(client: Client, session: str) -> list[str]:
    """The ids on the path to the session's last entry (read from the whole log here, only to report its length)."""
    entries = {logged.message.id: (logged.offset, logged.message) for logged in client.history(session)}
    by_offset = dict(entries.values())
    offset = max(by_offset)
    path = []
    while offset:
        message = by_offset[offset]
        path.append(message.id)
        offset = entries[message.parent_id][0] if message.parent_id else offset - 1
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller counts")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load = os.getloadavg()
    results = run(args.quick)
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
