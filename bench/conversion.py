"""Conversion benchmark: agentmsg's provider converters vs LangChain's, on the same 100-message conversation.

The conversation is the codec benchmark's mixed one (text, 2 KB PNGs,
thinking, tool calls and results). LangChain gets the same messages as
``langchain_core`` objects (made by ``agentmsg.providers.langchain``), and
``convert_to_openai_messages`` is timed on them; agentmsg's ``to_openai_chat``,
``to_anthropic`` and ``to_gemini`` are timed on the wrappers. Each converter
gets a ``ConversionReport`` so losses (thinking has no place in OpenAI Chat)
are collected, not warned about.

Targets (printed PASS/MISS): ``to_openai_chat`` at least 10x faster than
LangChain's ``convert_to_openai_messages``; and, for each agentmsg converter,
the same conversation with contract v1.1 content (:func:`with_hosted_tools`:
the agent searches the web with the provider's hosted tool instead of one of
its client tools, and its answers cite the pages) converts within 1.2x of the
plain conversation's time, measured side by side in this run. ``--json PATH`` writes every number
(``bench/report.py`` folds it into ``bench/results.md``).
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

from agentmsg import AssistantMessage, BaseMessage, TextContent, ToolCallContent, ToolMessage
from agentmsg.providers import anthropic, gemini, langchain, openai_chat
from agentmsg.providers._common import ConversionReport

SPEEDUP = 10.0  # to_openai_chat at least this many times faster than LangChain's convert_to_openai_messages
HOSTED_LIMIT = 1.2  # a conversation with hosted tools and citations converts within this factor of the plain one


def with_hosted_tools(conversation: list[BaseMessage]) -> list[BaseMessage]:
    """The same conversation, its agent searching the web with the provider's hosted tool.

    In each tool turn the second client tool call (``grep``) becomes a hosted web search, call and
    result in the assistant message as Anthropic returns them (3 pages with encrypted content), so
    its client tool result leaves the tool message; each final answer cites two of the pages. The
    message count stays 100 and the block count the same: what changes is the kind of content.
    """
    out: list[BaseMessage] = []
    pages: list[dict[str, Any]] = []
    for n, message in enumerate(conversation):
        blocks = list(message.contents)
        if isinstance(message, AssistantMessage) and len(blocks) == 3 and isinstance(blocks[2], ToolCallContent):
            call_id = f"srvtoolu_bench{n:04d}"
            use = {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"query": f"topic {n}"}}
            pages = [
                {
                    "type": "web_search_result",
                    "url": f"https://example.com/{n}/{k}",
                    "title": f"Page {k} about topic {n}",
                    "encrypted_content": "Eq" + "x" * 400,
                    "page_age": "May 1, 2025",
                }
                for k in range(3)
            ]
            found = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": pages}
            blocks[2:] = [anthropic.read_block(use), anthropic.read_block(found)]
            out.append(_like(message, blocks))
        elif isinstance(message, ToolMessage) and len(blocks) == 2:
            out.append(ToolMessage(blocks[:1], id=message.id, timestamp=message.timestamp))
        elif isinstance(message, AssistantMessage) and len(blocks) == 1 and isinstance(blocks[0], TextContent):
            citations = [
                anthropic.read_citation(
                    {
                        "type": "web_search_result_location",
                        "url": page["url"],
                        "title": page["title"],
                        "encrypted_index": "Eo8B" + "y" * 40,
                        "cited_text": "A sentence from the page that supports the answer.",
                    }
                )
                for page in pages[:2]
            ]
            out.append(_like(message, [TextContent(blocks[0].content, citations=citations)]))
        else:
            out.append(message)
    return out


def _like(message: AssistantMessage, blocks: list[Any]) -> AssistantMessage:
    return AssistantMessage(
        blocks,
        usage=message.usage,
        stop_reason=message.stop_reason,
        stop_reason_raw=message.stop_reason_raw,
        provenance=message.provenance,
        id=message.id,
        timestamp=message.timestamp,
    )


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
    hosted = with_hosted_tools(conversation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lc_messages = langchain.to_langchain(conversation, report=ConversionReport())
    cases: list[tuple[str, Callable[[], object]]] = [
        ("LangChain convert_to_openai_messages", lambda: convert_to_openai_messages(lc_messages)),
        ("agentmsg to_openai_chat", lambda: openai_chat.to_openai_chat(conversation, report=ConversionReport())),
        ("agentmsg to_anthropic", lambda: anthropic.to_anthropic(conversation, report=ConversionReport())),
        ("agentmsg to_gemini", lambda: gemini.to_gemini(conversation, report=ConversionReport())),
        (
            "agentmsg to_openai_chat, hosted tools + citations",
            lambda: openai_chat.to_openai_chat(hosted, report=ConversionReport()),
        ),
        (
            "agentmsg to_anthropic, hosted tools + citations",
            lambda: anthropic.to_anthropic(hosted, report=ConversionReport()),
        ),
        ("agentmsg to_gemini, hosted tools + citations", lambda: gemini.to_gemini(hosted, report=ConversionReport())),
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
    for converter in ("to_openai_chat", "to_anthropic", "to_gemini"):
        slower = medians[f"agentmsg {converter}, hosted tools + citations"] / medians[f"agentmsg {converter}"]
        ok = slower <= HOSTED_LIMIT
        print(
            f"  target: {converter} with hosted tools + citations <= {HOSTED_LIMIT:g}x the plain conversation: "
            f"{slower:.2f}x  {'PASS' if ok else 'MISS'}"
        )
        targets.append(
            {
                "name": f"{converter}_hosted",
                "text": f"{converter}: the conversation with hosted tools and citations takes {slower:.2f}\u00d7 "
                f"the plain one's time (target \u2264 {HOSTED_LIMIT:g}\u00d7)",
                "speedup": slower,
                "limit": HOSTED_LIMIT,
                "pass": ok,
            }
        )
    report: dict[str, Any] = {
        "payload": f"{len(conversation)}-message mixed conversation (bench/run.py build_mixed_conversation); "
        "the hosted-tools variant has a hosted web search (3 results) in place of one client tool call a turn "
        "and 2 citations on each final answer",
        "langchain_messages": len(lc_messages),
        "cases": rows,
        "targets": targets,
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
