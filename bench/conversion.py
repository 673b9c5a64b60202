"""Conversion benchmark: agentmsg's provider converters vs LangChain's, on the same 100-message conversation.

The conversation is the codec benchmark's mixed one (text, 2 KB PNGs,
thinking, tool calls and results). LangChain gets the same messages as
``langchain_core`` objects (made by ``agentmsg.providers.langchain``), and
``convert_to_openai_messages`` is timed on them; agentmsg's ``to_openai_chat``,
``to_anthropic`` and ``to_gemini`` are timed on the wrappers. Each converter
gets a ``ConversionReport`` so losses (thinking has no place in OpenAI Chat)
are collected, not warned about.

Target (printed PASS/MISS): ``to_openai_chat`` at least 10x faster than
LangChain's ``convert_to_openai_messages``.

Hosted tools and citations (issue 16): the same conversation with every
final assistant answer (20 of the 100 messages) carrying a hosted web-search
call, its result (three search results) and two web citations on the
answer's text, built from the neutral model (no provider ``original``
blocks), so it measures whatever each converter does with them: write them,
or report a loss. For each format (OpenAI Chat, OpenAI Responses, Anthropic,
Gemini, LangChain, the seed-2 Adaline form) the plain and the hosted
conversation are converted in back-to-back pairs (the same loop count each,
15 pairs with ``--quick``, 35 without) and the ratio is the median of the
per-pair ratios; target: the hosted conversation within 1.2x of the plain
one's time.

``--json PATH`` writes every number (``bench/report.py`` folds it into
``bench/results.md``).
"""

from __future__ import annotations

import argparse
import functools
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
from run import _run_loops, build_mixed_conversation, measure

from agentmsg import (
    AssistantMessage,
    BaseMessage,
    Citation,
    HostedToolCallContent,
    HostedToolResultContent,
    SearchResult,
    TextContent,
)
from agentmsg.providers import adaline, anthropic, gemini, langchain, openai_chat, openai_responses
from agentmsg.providers._common import ConversionReport

SPEEDUP = 10.0  # to_openai_chat at least this many times faster than LangChain's convert_to_openai_messages
HOSTED_LIMIT = 1.2  # the hosted-tools conversation at most this many times the plain one's conversion time

# Each format's converter; a ConversionReport collects the losses (rather than a warning per call).
FORMATS: list[tuple[str, Callable[[list[BaseMessage], ConversionReport], object]]] = [
    ("openai_chat", lambda m, r: openai_chat.to_openai_chat(m, report=r)),
    ("openai_responses", lambda m, r: openai_responses.to_openai_responses(m, report=r)),
    ("anthropic", lambda m, r: anthropic.to_anthropic(m, report=r)),
    ("gemini", lambda m, r: gemini.to_gemini(m, report=r)),
    ("langchain", lambda m, r: langchain.to_langchain(m, report=r)),
    ("adaline", lambda m, r: adaline.to_adaline(m, report=r)),
]


def with_hosted_tools(conversation: list[BaseMessage]) -> list[BaseMessage]:
    """The conversation with every text-only assistant answer grown by a hosted web search and citations.

    Same message count, same ids and texts: the answer becomes [hosted call, hosted result, cited text].
    """
    out: list[BaseMessage] = []
    for n, message in enumerate(conversation):
        blocks = message.contents
        if not (isinstance(message, AssistantMessage) and len(blocks) == 1 and isinstance(blocks[0], TextContent)):
            out.append(message)
            continue
        text = blocks[0].content
        call_id = f"srvtoolu_{n:03d}"
        urls = [f"https://docs.example.test/{n}/{k}" for k in range(3)]
        call = HostedToolCallContent(call_id, "web_search", {"query": text[:40]}, kind="web_search")
        result = HostedToolResultContent(
            call_id,
            kind="web_search",
            search_results=[SearchResult(url, f"Result {k}", text[k * 20 : k * 20 + 60]) for k, url in enumerate(urls)],
        )
        cited = TextContent(
            text,
            citations=[
                Citation.web(urls[0], "Result 0", cited_text=text[:30], start_index=0, end_index=30),
                Citation.web(urls[1], "Result 1", cited_text=text[30:60], start_index=30, end_index=60),
            ],
        )
        out.append(
            AssistantMessage(
                [call, result, cited],
                id=message.id,
                timestamp=message.timestamp,
                usage=message.usage,
                stop_reason=message.stop_reason,
                stop_reason_raw=message.stop_reason_raw,
                provenance=message.provenance,
            )
        )
    return out


def measure_pair(
    plain: Callable[[], object], hosted: Callable[[], object], *, target_s: float, pairs: int
) -> tuple[list[float], list[float]]:
    """Per-call times of the two, the same loop count each, alternating in ``pairs`` back-to-back pairs.

    On a shared machine the load changes from one second to the next; timing the two side by side, a
    few milliseconds apart, and taking the median of the per-pair ratios keeps that drift out of the ratio.
    """
    loops, _ = measure(plain, target_s=target_s, repeats=1, max_loops=10_000)
    _run_loops(hosted, loops)  # warm-up
    plain_ns: list[float] = []
    hosted_ns: list[float] = []
    for _ in range(pairs):
        plain_ns.append(_run_loops(plain, loops) / loops)
        hosted_ns.append(_run_loops(hosted, loops) / loops)
    return plain_ns, hosted_ns


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
    targets: list[dict[str, Any]] = [
        {
            "name": "to_openai_chat",
            "text": f"to_openai_chat {ratio:.1f}\u00d7 faster than LangChain's convert_to_openai_messages "
            f"(target \u2265 {SPEEDUP:g}\u00d7)",
            "speedup": ratio,
            "limit": SPEEDUP,
            "pass": passed,
        }
    ]
    hosted_conversation = with_hosted_tools(conversation)
    grown = sum(a is not b for a, b in zip(conversation, hosted_conversation, strict=True))
    print(
        f"hosted tools and citations: the same conversation, {grown} answers with a hosted web search "
        "(call, 3 results) and 2 citations; plain vs hosted in back-to-back pairs, median of the pair ratios"
    )
    hosted_rows: list[dict[str, Any]] = []
    missed: list[tuple[str, Callable[[], object]]] = []
    for fmt, convert in FORMATS:
        gc.collect()
        plain, hosted = functools.partial(convert, conversation), functools.partial(convert, hosted_conversation)
        plain_ns, hosted_ns = measure_pair(
            lambda: plain(ConversionReport()),  # noqa: B023 - called within this iteration only
            lambda: hosted(ConversionReport()),  # noqa: B023
            target_s=target / 5,
            pairs=repeats * 5,
        )
        plain_median, hosted_median = statistics.median(plain_ns), statistics.median(hosted_ns)
        slowdown = statistics.median(h / p for p, h in zip(plain_ns, hosted_ns, strict=True))
        ok = slowdown <= HOSTED_LIMIT
        losses = ConversionReport()
        hosted(losses)  # what this format reports for the hosted conversation (a loss per block it cannot carry)
        hosted_rows.append(
            {
                "format": fmt,
                "plain_median_ns": plain_median,
                "hosted_median_ns": hosted_median,
                "plain_samples_ns": plain_ns,
                "hosted_samples_ns": hosted_ns,
                "ratio": slowdown,
                "hosted_losses": len(losses.losses),
            }
        )
        print(
            f"  {fmt:<18} plain {plain_median / 1e3:8.1f} us  hosted {hosted_median / 1e3:8.1f} us  "
            f"{slowdown:5.2f}x  (losses reported: {len(losses.losses)})  {'PASS' if ok else 'MISS'}"
        )
        targets.append(
            {
                "name": f"hosted_{fmt}",
                "text": f"{fmt}: the conversation with hosted tools and citations converts in {slowdown:.2f}\u00d7 "
                f"the plain one's time (target \u2264 {HOSTED_LIMIT:g}\u00d7)",
                "ratio": slowdown,
                "limit": HOSTED_LIMIT,
                "pass": ok,
            }
        )
        if not ok:
            missed.append((f"{fmt} hosted conversation", functools.partial(hosted, ConversionReport())))
    report: dict[str, Any] = {
        "payload": f"{len(conversation)}-message mixed conversation (bench/run.py build_mixed_conversation)",
        "langchain_messages": len(lc_messages),
        "cases": rows,
        "hosted": {"grown_messages": grown, "limit": HOSTED_LIMIT, "formats": hosted_rows},
        "targets": targets,
        "profiles": {},
    }
    if not args.no_profile:
        fns = dict(cases)
        to_profile: list[tuple[str, Callable[[], object]]] = []
        if not passed:
            to_profile += [(name, fns[name]) for name in ("agentmsg to_openai_chat", cases[0][0])]
        to_profile += missed
        for name, fn in to_profile:
            profile = profile_calls(fn, 20 if args.quick else 100)
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
