"""Streaming benchmark: stream events folded into messages per second (`make bench` runs it after run.py).

Two streams, each folded by the one accumulator (``agentmsg.streaming``):

- a long text answer: 1 text block built from 20,000 deltas of ~5 characters;
- a tool-call-heavy answer: 50 parallel tool calls, each built from 40 argument fragments.

Also the work live catch-up adds to a node's hub for every event it delivers (``InFlight.observe``: the
stream folded for late subscribers, its size counted).

Events are prepared once (generated ``StreamEvent`` messages, as a relay or a
parser hands them over); the timed operation is folding the whole stream.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import measure

import agentmsg as am
from agentmsg.service.catchup import InFlight
from agentmsg.streaming import StreamAccumulator, StreamEvent, events_from_message
from agentmsg.v1 import session_service_pb2, stream_pb2


def long_text_stream(deltas: int = 20_000) -> list[stream_pb2.StreamEvent]:
    events = [StreamEvent.message_start("m-text").pb, StreamEvent.block_start(0, am.TextContent()).pb]
    events += [StreamEvent.text_delta(0, f"w{i % 997:03d} ").pb for i in range(deltas)]
    events += [StreamEvent.block_stop(0).pb, StreamEvent.message_stop("stop").pb]
    return events


def tool_call_stream(calls: int = 50, fragments: int = 40) -> list[stream_pb2.StreamEvent]:
    events = [StreamEvent.message_start("m-tools").pb]
    events += [
        StreamEvent.block_start(i, am.ToolCallContent(f"call_{i}", "search", arguments="")).pb for i in range(calls)
    ]
    for f in range(fragments):
        for i in range(calls):
            piece = '{"q": "' if f == 0 else ('"}' if f == fragments - 1 else f"x{f}")
            events.append(StreamEvent.arguments_delta(i, piece).pb)
    events += [StreamEvent.block_stop(i).pb for i in range(calls)]
    events.append(StreamEvent.message_stop("tool_calls").pb)
    return events


def fold_pbs(events: list[stream_pb2.StreamEvent]) -> am.AssistantMessage:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.add(event)
    return accumulator.finish()


def observe_all(lives: list[session_service_pb2.LiveEvent]) -> None:
    flight = InFlight()
    for live in lives:
        flight.observe("s", live)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter time")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load = os.getloadavg()
    repeats, target = (3, 0.05) if args.quick else (7, 0.2)
    text = long_text_stream()
    tools = tool_call_stream()
    replay = events_from_message(fold_pbs(tools), chunk_size=8)
    lives = [session_service_pb2.LiveEvent(stream_id="x", event=event) for event in text]
    cases: list[tuple[str, int, Callable[[], object]]] = [
        ("long text (20,000 deltas)", len(text), lambda: fold_pbs(text)),
        ("50 tool calls x 40 fragments", len(tools), lambda: fold_pbs(tools)),
        ("replay of the tool-call message, 8-char pieces", len(replay), lambda: fold_pbs([e.pb for e in replay])),
        ("hub catch-up state, long text (InFlight.observe)", len(text), lambda: observe_all(lives)),
    ]
    print("agentmsg streaming benchmark: events folded per second (median of repeats [min-max])")
    rows: list[dict[str, Any]] = []
    for name, count, fn in cases:
        gc.collect()
        _, samples = measure(fn, target_s=target, repeats=repeats, max_loops=10_000)
        rates = sorted(count / (ns / 1e9) for ns in samples)
        rows.append(
            {
                "name": name,
                "events": count,
                "median_events_per_s": statistics.median(rates),
                "min_events_per_s": rates[0],
                "max_events_per_s": rates[-1],
                "median_ms_per_stream": statistics.median(samples) / 1e6,
            }
        )
        print(
            f"  {name:<48} {count:>7} events  {statistics.median(rates) / 1e6:6.2f} M events/s "
            f"[{rates[0] / 1e6:.2f}-{rates[-1] / 1e6:.2f}]  {statistics.median(samples) / 1e6:7.2f} ms per stream"
        )
    if args.json:
        report = {
            "cases": rows,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "quick": args.quick,
            "total_s": time.perf_counter() - started,
            "load_average": load,
            "load_average_end": os.getloadavg(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
