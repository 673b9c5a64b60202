"""A2A benchmark: agentmsg's A2A converter vs a2a-sdk's own serialisation of the same messages.

The conversation is the codec benchmark's mixed one (100 messages: text, 2 KB PNGs, thinking with signatures,
tool calls and results, usage). ``to_a2a`` turns it into a2a-sdk ``Message`` objects through the agentmsg
extension (and, for comparison, plain A2A with a ``ConversionReport``); ``from_a2a`` reads them back exactly. The
anchors are what a2a-sdk itself does with those same ``Message`` objects on the wire: the binary encoding (the
gRPC binding) and ProtoJSON (the JSON-RPC and HTTP+JSON bindings), both ways. The ratio column says how many
times the anchor's time a converter takes: the price of the extension over sending A2A messages at all.

Run: ``make bench`` or ``.venv/bin/python bench/a2a_conversion.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from a2a.types import Message
from google.protobuf import json_format
from run import build_mixed_conversation, fmt_time, measure

from agentmsg.frameworks.a2a import from_a2a, to_a2a
from agentmsg.providers._common import ConversionReport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter repeats")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args(argv)
    target_s, repeats = (0.1, 5) if args.quick else (0.3, 9)

    conversation = list(build_mixed_conversation(100))
    extended = to_a2a(conversation)
    binary = [m.SerializeToString() for m in extended]
    protojson = [json_format.MessageToJson(m) for m in extended]
    assert from_a2a(extended) == conversation, "the benchmark's conversation does not round-trip"

    def plain() -> object:
        return to_a2a(conversation, extension=False, report=ConversionReport())

    cases: list[tuple[str, str, Any]] = [
        ("a2a-sdk: encode (binary)", "", lambda: [m.SerializeToString() for m in extended]),
        ("a2a-sdk: encode (ProtoJSON)", "", lambda: [json_format.MessageToJson(m) for m in extended]),
        ("a2a-sdk: decode (binary)", "", lambda: [Message.FromString(b) for b in binary]),
        ("a2a-sdk: decode (ProtoJSON)", "", lambda: [json_format.Parse(t, Message()) for t in protojson]),
        ("agentmsg: to_a2a (extension)", "a2a-sdk: encode (ProtoJSON)", lambda: to_a2a(conversation)),
        ("agentmsg: to_a2a (plain, losses reported)", "a2a-sdk: encode (ProtoJSON)", plain),
        ("agentmsg: from_a2a (extension)", "a2a-sdk: decode (ProtoJSON)", lambda: from_a2a(extended)),
    ]
    results: list[dict[str, Any]] = []
    by_name: dict[str, float] = {}
    for name, anchor, fn in cases:
        gc.collect()
        loops, samples = measure(fn, target_s=target_s, repeats=repeats, max_loops=10_000)
        median = statistics.median(samples)
        by_name[name] = median
        row: dict[str, Any] = {"name": name, "loops": loops, "median_ns": median, "min_ns": min(samples)}
        row["max_ns"] = max(samples)
        if anchor:
            row["anchor"] = anchor
            row["ratio_vs_anchor"] = median / by_name[anchor]
        results.append(row)
        ratio = f"  {row['ratio_vs_anchor']:.2f}x {anchor}" if anchor else ""
        print(f"{name:<44} {fmt_time(median):>10}{ratio}")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "payload": "the mixed conversation, 100 messages",
            "messages": len(conversation),
            "protojson_bytes": sum(len(t.encode()) for t in protojson),
            "binary_bytes": sum(len(b) for b in binary),
            "cases": results,
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
