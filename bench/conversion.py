"""Conversion benchmark: agentmsg's provider converters vs LangChain's, on the same 100-message conversation.

The conversation is the codec benchmark's mixed one (text, 2 KB PNGs,
thinking, tool calls and results). LangChain gets the same messages as
``langchain_core`` objects (made by ``agentmsg.providers.langchain``), and
``convert_to_openai_messages`` is timed on them; agentmsg's ``to_openai_chat``,
``to_anthropic`` and ``to_gemini`` are timed on the wrappers. Each converter
gets a ``ConversionReport`` so losses (thinking has no place in OpenAI Chat)
are collected, not warned about.

Target (printed PASS/MISS): ``to_openai_chat`` at least 10x faster than
LangChain's ``convert_to_openai_messages``. ``--json PATH`` writes every
number (``bench/report.py`` folds it into ``bench/results.md``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.messages import convert_to_openai_messages
from profiling import format_profile, profile_calls
from run import build_mixed_conversation, measure

from agentmsg.providers import anthropic, gemini, langchain, openai_chat
from agentmsg.providers._common import ConversionReport

SPEEDUP = 10.0  # to_openai_chat at least this many times faster than LangChain's convert_to_openai_messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter time")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    parser.add_argument("--no-profile", action="store_true", help="do not profile a missed target")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load = os.getloadavg()
    repeats, target = (3, 0.05) if args.quick else (7, 0.2)
    conversation = list(build_mixed_conversation(100))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lc_messages = langchain.to_langchain(conversation, report=ConversionReport())
    cases: list[tuple[str, Callable[[], object]]] = [
        ("LangChain convert_to_openai_messages", lambda: convert_to_openai_messages(lc_messages)),
        ("agentmsg to_openai_chat", lambda: openai_chat.to_openai_chat(conversation, report=ConversionReport())),
        ("agentmsg to_anthropic", lambda: anthropic.to_anthropic(conversation, report=ConversionReport())),
        ("agentmsg to_gemini", lambda: gemini.to_gemini(conversation, report=ConversionReport())),
    ]
    print("agentmsg conversion benchmark: 100-message mixed conversation (median of repeats [min-max])")
    medians: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    for name, fn in cases:
        gc.collect()
        _, samples = measure(fn, target_s=target, repeats=repeats, max_loops=10_000)
        medians[name] = statistics.median(samples)
        base = medians[cases[0][0]]
        rows.append(
            {
                "name": name,
                "median_ns": medians[name],
                "min_ns": min(samples),
                "max_ns": max(samples),
                "samples_ns": samples,
                "speedup_vs_langchain": base / medians[name],
            }
        )
        print(
            f"  {name:<40} {medians[name] / 1e3:8.1f} us [{min(samples) / 1e3:.1f}-{max(samples) / 1e3:.1f}]"
            f"  {base / medians[name]:6.2f}x LangChain's speed"
        )
    ratio = medians[cases[0][0]] / medians["agentmsg to_openai_chat"]
    passed = ratio >= SPEEDUP
    print(
        f"  target: to_openai_chat >= {SPEEDUP:g}x faster than LangChain: {ratio:.1f}x  {'PASS' if passed else 'MISS'}"
    )
    report: dict[str, Any] = {
        "payload": f"{len(conversation)}-message mixed conversation (bench/run.py build_mixed_conversation)",
        "langchain_messages": len(lc_messages),
        "cases": rows,
        "targets": [
            {
                "name": "to_openai_chat",
                "text": f"to_openai_chat {ratio:.1f}\u00d7 faster than LangChain's convert_to_openai_messages "
                f"(target \u2265 {SPEEDUP:g}\u00d7)",
                "speedup": ratio,
                "limit": SPEEDUP,
                "pass": passed,
            }
        ],
        "profiles": {},
    }
    if not passed and not args.no_profile:
        fns = dict(cases)
        for name in ("agentmsg to_openai_chat", cases[0][0]):
            profile = profile_calls(fns[name], 20 if args.quick else 100)
            report["profiles"][name] = profile
            for line in format_profile(f"{name} (cProfile)", profile, unit="conversion"):
                print(f"    {line}")
    if args.json:
        report["created"] = datetime.now(UTC).isoformat(timespec="seconds")
        report["command"] = " ".join([Path(sys.executable).name, *sys.argv])
        report["quick"] = args.quick
        report["total_s"] = time.perf_counter() - started
        report["load_average"] = load
        report["load_average_end"] = os.getloadavg()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
