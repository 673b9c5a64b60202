"""TypeScript SDK vs the Python library, side by side in one run (`make bench` runs it; never part of test).

The same inputs go to both: the two streams of bench/streaming.py (a long text answer of 20,000 deltas, 50 tool
calls of 40 argument fragments each) folded into their message, and the 100-message mixed conversation of
bench/run.py decoded with validation, encoded to binary and to ProtoJSON text. Python times ``agentmsg``
(StreamAccumulator, protovalidate, json_format); Node times ``@agentmsg/sdk`` (sdk/typescript/bench/fold.ts,
compiled by ``make ts-build``): protobuf-es, protovalidate-es and the SDK's fold. Each figure is the median time
of one operation over calibrated repeats; the ratio is Python's time over Node's (above 1: Node is faster).

    .venv/bin/python bench/typescript.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from google.protobuf import json_format
from google.protobuf.internal import encoder
from run import build_mixed_conversation, measure
from streaming import fold_pbs, long_text_stream, tool_call_stream

import agentmsg as am
from agentmsg.v1 import message_pb2, stream_pb2

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "sdk" / "typescript" / "dist" / "bench" / "fold.js"


def write_delimited(path: Path, events: list[stream_pb2.StreamEvent]) -> None:
    """Events as varint-length-delimited binary (what protobuf-es's sizeDelimitedDecodeStream reads)."""
    with path.open("wb") as out:
        for event in events:
            data = event.SerializeToString()
            out.write(encoder._VarintBytes(len(data)))
            out.write(data)


def python_cases(
    streams: dict[str, list[stream_pb2.StreamEvent]], data: bytes
) -> list[tuple[str, Callable[[], object]]]:
    conversation = message_pb2.Conversation.FromString(data)

    def decode_and_validate() -> object:
        decoded = message_pb2.Conversation.FromString(data)
        am.validate(decoded)
        return decoded

    cases: list[tuple[str, Callable[[], object]]] = [
        (f"fold {name}", lambda events=events: fold_pbs(events)) for name, events in streams.items()
    ]
    cases += [
        ("decode + validate", decode_and_validate),
        ("encode binary", conversation.SerializeToString),
        ("encode ProtoJSON text", lambda: json_format.MessageToJson(conversation, indent=None)),
    ]
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter time")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    args = parser.parse_args(argv)
    node = shutil.which("node")
    if node is None or not PROGRAM.is_file():
        print("node or the compiled SDK (make ts-build) is missing: the TypeScript benchmark did not run")
        return 1
    started = time.perf_counter()
    load = os.getloadavg()
    repeats, target = (3, 0.05) if args.quick else (7, 0.2)
    streams = {"text-20000-deltas.bin": long_text_stream(), "tool-calls-50x40.bin": tool_call_stream()}
    data = build_mixed_conversation().pb.SerializeToString()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, events in streams.items():
            write_delimited(Path(tmp) / name, events)
            files.append(str(Path(tmp) / name))
        vector = Path(tmp) / "conversation.binpb"
        vector.write_bytes(data)
        done = subprocess.run(
            [node, str(PROGRAM), *files, "--vector", str(vector), *(["--quick"] if args.quick else [])],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
    node_report = json.loads(done.stdout)
    print(f"agentmsg TypeScript SDK (Node {node_report['node']}) vs Python: median time per operation")
    print(f"  (the 100-message mixed conversation is {len(data):,} bytes)")
    rows: list[dict[str, Any]] = []
    for name, fn in python_cases(streams, data):
        _, samples = measure(fn, target_s=target, repeats=repeats, max_loops=100_000)
        python_ns = statistics.median(samples)
        node_ns = node_report["results"][name]["ns"]
        rows.append({"name": name, "python_ns": python_ns, "node_ns": node_ns, "python_over_node": python_ns / node_ns})
        print(
            f"  {name:<32} Python {python_ns / 1e6:9.3f} ms   Node {node_ns / 1e6:9.3f} ms   "
            f"Python/Node {python_ns / node_ns:6.2f}x"
        )
    if args.json:
        report = {
            "cases": rows,
            "node": node_report["node"],
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
