"""Conversion benchmark: agentmsg's provider converters vs LangChain's, on the same 100-message conversation.

The conversation is the codec benchmark's mixed one (text, 2 KB PNGs,
thinking, tool calls and results). LangChain gets the same messages as
``langchain_core`` objects (made by ``agentmsg.providers.langchain``), and
``convert_to_openai_messages`` is timed on them; agentmsg's ``to_openai_chat``,
``to_anthropic`` and ``to_gemini`` are timed on the wrappers. Each converter
gets a ``ConversionReport`` so losses (thinking has no place in OpenAI Chat)
are collected, not warned about.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.messages import convert_to_openai_messages
from run import build_mixed_conversation, measure

from agentmsg.providers import anthropic, gemini, langchain, openai_chat
from agentmsg.providers._common import ConversionReport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter time")
    args = parser.parse_args(argv)
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
    for name, fn in cases:
        gc.collect()
        _, samples = measure(fn, target_s=target, repeats=repeats, max_loops=10_000)
        medians[name] = statistics.median(samples)
        base = medians[cases[0][0]]
        print(
            f"  {name:<40} {medians[name] / 1e3:8.1f} us [{min(samples) / 1e3:.1f}-{max(samples) / 1e3:.1f}]"
            f"  {base / medians[name]:6.2f}x LangChain's speed"
        )
    ratio = medians[cases[0][0]] / medians["agentmsg to_openai_chat"]
    print(f"  target: to_openai_chat >= 10x faster than LangChain: {ratio:.1f}x  {'PASS' if ratio >= 10 else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
