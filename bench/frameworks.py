"""Framework benchmark: agentmsg's pydantic-ai and OpenAI Agents converters against the frameworks' own serialisers.

The history is what a pydantic-ai agent with one tool keeps after 25 turns (100 ``ModelMessage`` objects: the
user's question, a response with signed thinking and a tool call, the tool's return, the answer; usage on each
response), built with fixed timestamps. The same conversation as the OpenAI Agents SDK's input items is
``to_openai_agents`` of it (the thinking, signed by Anthropic, is left out there, as the replay rule says).

Timed, each on the same history (median of ``--repeats`` repeats, loop count calibrated to ``--time`` seconds):

- pydantic-ai's own ``ModelMessagesTypeAdapter.dump_json`` and ``validate_json`` (what a pydantic-ai app stores and
  loads), against ``from_pydantic_ai`` (objects -> agentmsg), ``to_pydantic_ai`` (agentmsg -> objects), and the
  whole store path through agentmsg: ``from_pydantic_ai`` then ``Conversation.to_bytes``, and
  ``Conversation.from_bytes`` then ``to_pydantic_ai``;
- the SDK's own store form (its SQLite session keeps ``json.dumps`` of each item and reads ``json.loads``) against
  ``from_openai_agents`` and ``to_openai_agents``.

No target: the figures say what the exact, loss-reporting conversion costs next to a plain dump. ``--json PATH``
writes every number (``bench/report.py`` folds it into ``bench/results.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage
from run import measure

from agentmsg import Conversation
from agentmsg.frameworks.openai_agents import from_openai_agents, to_openai_agents
from agentmsg.frameworks.pydantic_ai import from_pydantic_ai, to_pydantic_ai
from agentmsg.providers._common import ConversionReport

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TURNS = 25


def history() -> list[ModelMessage]:
    """25 agent turns: 100 messages, as a pydantic-ai agent with one tool keeps them."""
    out: list[ModelMessage] = []
    for turn in range(TURNS):
        at = T0 + timedelta(minutes=turn)
        first: list[Any] = (
            [SystemPromptPart("You answer weather questions briefly.", timestamp=at)] if turn == 0 else []
        )
        question = f"What is the weather in city number {turn}, and should I take an umbrella tomorrow morning?"
        out.append(
            ModelRequest(
                parts=[*first, UserPromptPart(question, timestamp=at)],
                timestamp=at,
                instructions="Be brief.",
                run_id=f"run-{turn}",
                conversation_id="conv-1",
            )
        )
        call = f"toolu_{turn:04d}"
        out.append(
            ModelResponse(
                parts=[
                    ThinkingPart("The user asks for weather; call the tool. " * 4, signature="EqQB" + "x" * 200),
                    ToolCallPart("get_weather", f'{{"city": "city {turn}", "days": 2}}', tool_call_id=call),
                ],
                usage=RequestUsage(input_tokens=1200 + turn, output_tokens=80, cache_read_tokens=1000),
                model_name="claude-sonnet-4-5",
                timestamp=at + timedelta(seconds=1),
                provider_name="anthropic",
                provider_response_id=f"msg_{turn:04d}a",
                finish_reason="tool_call",
                run_id=f"run-{turn}",
                conversation_id="conv-1",
            )
        )
        out.append(
            ModelRequest(
                parts=[ToolReturnPart("get_weather", {"forecast": ["rain", "sun"], "mm": 3}, tool_call_id=call)],
                timestamp=at + timedelta(seconds=2),
                instructions="Be brief.",
                run_id=f"run-{turn}",
                conversation_id="conv-1",
            )
        )
        out.append(
            ModelResponse(
                parts=[TextPart("Rain tomorrow morning, then sun: take an umbrella.")],
                usage=RequestUsage(input_tokens=1300 + turn, output_tokens=20, cache_read_tokens=1100),
                model_name="claude-sonnet-4-5",
                timestamp=at + timedelta(seconds=3),
                provider_name="anthropic",
                provider_response_id=f"msg_{turn:04d}b",
                finish_reason="stop",
                run_id=f"run-{turn}",
                conversation_id="conv-1",
            )
        )
    return out


def cell(name: str, fn: Callable[[], object], args: argparse.Namespace) -> dict[str, Any]:
    loops, samples = measure(fn, target_s=args.time, repeats=args.repeats, max_loops=100_000)
    row = {
        "name": name,
        "loops": loops,
        "median_ns": statistics.median(samples),
        "min_ns": min(samples),
        "max_ns": max(samples),
    }
    print(f"  {name:<58} {row['median_ns'] / 1e6:9.3f} ms  [{row['min_ns'] / 1e6:.3f}-{row['max_ns'] / 1e6:.3f}]")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (smoke figures)")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args(argv)
    args.time, args.repeats = (0.05, 3) if args.quick else (0.4, 7)
    started, load_start = time.monotonic(), os.getloadavg()

    pai = history()
    dumped = ModelMessagesTypeAdapter.dump_json(pai)
    messages = from_pydantic_ai(pai)
    stored = Conversation(messages).to_bytes()
    again = ModelMessagesTypeAdapter.dump_json(to_pydantic_ai(messages))
    if again != dumped:  # exact, before timing it
        at = next(i for i in range(min(len(again), len(dumped))) if again[i] != dumped[i])
        raise SystemExit(
            f"the round trip is not exact at byte {at}: {dumped[at - 120 : at + 40]!r} / {again[at - 120 : at + 40]!r}"
        )
    report = ConversionReport()
    items = to_openai_agents(messages, report=report)
    item_rows = [json.dumps(item) for item in items]

    print(f"pydantic-ai history: {len(pai)} messages, {len(dumped)} bytes as JSON, {len(stored)} as agentmsg protobuf")
    pydantic_cases = [
        cell("pydantic-ai ModelMessagesTypeAdapter.dump_json", lambda: ModelMessagesTypeAdapter.dump_json(pai), args),
        cell(
            "pydantic-ai ModelMessagesTypeAdapter.validate_json",
            lambda: ModelMessagesTypeAdapter.validate_json(dumped),
            args,
        ),
        cell("agentmsg from_pydantic_ai (objects -> agentmsg)", lambda: from_pydantic_ai(pai), args),
        cell("agentmsg to_pydantic_ai (agentmsg -> objects)", lambda: to_pydantic_ai(messages), args),
        cell(
            "store: from_pydantic_ai + Conversation.to_bytes",
            lambda: Conversation(from_pydantic_ai(pai)).to_bytes(),
            args,
        ),
        cell(
            "load: Conversation.from_bytes + to_pydantic_ai",
            lambda: to_pydantic_ai(list(Conversation.from_bytes(stored))),
            args,
        ),
    ]
    print(f"OpenAI Agents items: {len(items)} items ({len(report.losses)} losses reported writing them)")
    agents_cases = [
        cell("SDK store form: json.dumps of each item", lambda: [json.dumps(item) for item in items], args),
        cell("SDK load form: json.loads of each row", lambda: [json.loads(row) for row in item_rows], args),
        cell("agentmsg from_openai_agents (items -> agentmsg)", lambda: from_openai_agents(items), args),
        cell(
            "agentmsg to_openai_agents (agentmsg -> items)",
            lambda: to_openai_agents(messages, report=ConversionReport()),
            args,
        ),
    ]
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
                    "quick": args.quick,
                    "command": "bench/frameworks.py" + (" --quick" if args.quick else ""),
                    "total_s": time.monotonic() - started,
                    "load_average": load_start,
                    "load_average_end": os.getloadavg(),
                    "payload": f"{len(pai)}-message pydantic-ai agent history ({TURNS} tool turns, signed thinking)",
                    "json_bytes": len(dumped),
                    "protobuf_bytes": len(stored),
                    "agents_items": len(items),
                    "agents_losses": len(report.losses),
                    "pydantic_ai": pydantic_cases,
                    "openai_agents": agents_cases,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
