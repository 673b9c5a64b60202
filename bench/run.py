"""Codec benchmark: the agentmsg wrappers against raw protobuf, ProtoJSON, json, orjson and the peer libraries.

Every cell of a table is one (payload, contender, operation) measured in this
run with ``time.perf_counter_ns``: the loop count is calibrated so one repeat
takes about ``--time`` seconds, the repeat is run ``--repeats`` times, and the
median per-operation time is reported with the min-max over the repeats and
the ratio against raw generated protobuf (same payload, same operation, same
run). ``gc.collect()`` runs before every cell; nothing is disabled.

Contenders: the wrapper API, raw generated protobuf (the anchor), ProtoJSON,
plain dicts with ``json`` and ``orjson``, pydantic-ai's ``ModelMessagesTypeAdapter``
(``dump_json`` / ``validate_json`` of the same conversation as pydantic-ai
``ModelMessage`` objects, built by ``bench/peers.py``) and LangChain's
``messages_to_dict`` / ``messages_from_dict`` with ``json.dumps`` / ``json.loads``
(on the messages ``agentmsg.providers.langchain.to_langchain`` makes). The peers
need ``pip install -e '.[bench]'`` (``make bench`` does it); without them they
are left out, and said so.

Payload groups: ``small`` (one short user message), ``assistant`` (one
assistant message: thinking with a signature, two tool calls, usage),
``conversation`` (100 mixed messages) and ``image`` (one 1 MiB image).

Operations:

- ``encode``: object -> bytes/str;
- ``decode``: bytes/str -> object (lazy for the wrappers and upb);
- ``decode+walk``: decode, then visit every message and every top-level content
  block and read one field of each (the block's payload: text, image bytes,
  thinking text, tool-call arguments, tool-result id), so lazy decoding is not
  unfairly cheap.

Scenario groups live in a small registry (:data:`GROUPS`); add one with the
``@register_group`` decorator. ``--only GROUP`` runs a subset, ``--quick``
gives a short run, ``--json PATH`` writes every number.

Run: ``make bench`` or ``.venv/bin/python bench/run.py [--quick] [--only GROUP] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import base64
import gc
import io
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import orjson
from google.protobuf import __version__ as protobuf_version
from google.protobuf.internal import api_implementation
from PIL import Image

import agentmsg
from agentmsg import (
    AssistantMessage,
    Conversation,
    ImageContent,
    Provenance,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    Usage,
    UsageCost,
    UserMessage,
)
from agentmsg.v1 import message_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers

OPS = ("encode", "decode", "decode+walk")
BASELINE = "raw protobuf"
WRAPPER = "wrapper API"
PYDANTIC_AI = "pydantic-ai"
PYDANTIC_AI_UNCHECKED = "pydantic-ai (unchecked)"
LANGCHAIN = "LangChain"
TARGET_RATIO = 2.0  # wrapper within 2x of raw protobuf
PEER_SPEEDUP = 10.0  # wrapper at least 10x faster than each peer library on the conversation

# --------------------------------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class Contender:
    """One way of encoding and decoding a payload; each callable does one operation."""

    name: str
    encode: Callable[[], object]
    decode: Callable[[], object]
    walk: Callable[[], object]  # decode, then walk
    size: int  # bytes of the encoded form (UTF-8 for text)
    note: str = ""

    def op(self, name: str) -> Callable[[], object]:
        return {"encode": self.encode, "decode": self.decode, "decode+walk": self.walk}[name]


@dataclass(frozen=True)
class Target:
    """A goal checked at the end: ``contender`` time / ``against`` time <= ``max_ratio`` on ``op``.

    ``against`` is the payload's baseline when empty. A speed-up goal ("10x faster
    than X") is ``max_ratio=0.1`` against X.
    """

    contender: str
    op: str
    max_ratio: float
    against: str = ""
    extra: bool = False  # a like-for-like check beyond the issue's targets (reported, profiled, marked as such)


@dataclass
class Payload:
    """One input with its contenders; ratios are taken against the ``baseline`` contender."""

    name: str
    description: str
    contenders: list[Contender]
    baseline: str = BASELINE
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    conv: Conversation | None = None  # the payload itself, for the probes of a missed target


@dataclass(frozen=True)
class Group:
    name: str
    description: str
    build: Callable[[], list[Payload]]


GROUPS: dict[str, Group] = {}


def register_group(name: str, description: str) -> Callable[[Callable[[], list[Payload]]], Callable[[], list[Payload]]]:
    """Register a function building a group's payloads (called only when the group runs)."""

    def decorate(build: Callable[[], list[Payload]]) -> Callable[[], list[Payload]]:
        if name in GROUPS:
            raise ValueError(f"benchmark group {name!r} registered twice")
        GROUPS[name] = Group(name, description, build)
        return build

    return decorate


# --------------------------------------------------------------------------------------------------------------------
# Timing


@dataclass
class Cell:
    payload: str
    contender: str
    op: str
    loops: int
    samples_ns: list[float]  # per-operation time of each repeat

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    @property
    def min_ns(self) -> float:
        return min(self.samples_ns)

    @property
    def max_ns(self) -> float:
        return max(self.samples_ns)


def _run_loops(fn: Callable[[], object], loops: int) -> int:
    timer = time.perf_counter_ns
    start = timer()
    for _ in range(loops):
        fn()
    return timer() - start


def measure(fn: Callable[[], object], *, target_s: float, repeats: int, max_loops: int) -> tuple[int, list[float]]:
    """Calibrate a loop count so one repeat takes about ``target_s``, then time ``repeats`` repeats."""
    target_ns = target_s * 1e9
    loops = 1
    elapsed = _run_loops(fn, loops)  # also the warm-up
    # Grow until a probe lasts a tenth of the target, then scale the loop count from the probe.
    while elapsed < target_ns / 10 and loops < max_loops:
        loops = min(max_loops, loops * 10 if elapsed < target_ns / 100 else loops * 2)
        elapsed = _run_loops(fn, loops)
    loops = max(1, min(max_loops, round(loops * target_ns / max(elapsed, 1))))
    samples = [_run_loops(fn, loops) / loops for _ in range(repeats)]
    return loops, samples


# --------------------------------------------------------------------------------------------------------------------
# Payload builders (fixed ids, timestamps and random seeds: every run encodes the same bytes)

WORDS = ("the", "a", "file", "test", "function", "module", "error", "value", "path", "line", "result", "tool")
WORDS += ("call", "agent", "message", "read", "edit")
T0 = 1_750_000_000.0  # 2025-06-15T15:06:40Z
RAW_WALK_FIELD = {"text": "text", "image": "data", "thinking": "text", "tool_call": "arguments", "tool_result": "id"}
WRAPPER_WALK_ATTR: dict[type, str] = {
    TextContent: "content",
    ImageContent: "data",
    ThinkingContent: "content",
    ToolCallContent: "arguments",
    ToolResultContent: "id",
}


def png_noise(side: int, seed: int) -> bytes:
    """A real PNG of ``side`` x ``side`` RGB noise (noise does not compress: size ~ 3 * side**2)."""
    rng = random.Random(seed)
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def png_of_size(size: int, seed: int) -> bytes:
    """Exactly ``size`` bytes: a small real PNG (valid header and IEND) followed by seeded random padding."""
    head = png_noise(16, seed)
    return head + random.Random(seed).randbytes(size - len(head))


def _usage(i: int) -> Usage:
    return Usage(
        input_tokens=1200 + 37 * i,
        output_tokens=180 + i,
        cache_read_tokens=9000 + 11 * i,
        cache_write_tokens=0,
        reasoning_tokens=64,
        total_tokens=10_444 + 49 * i,
        cost=UsageCost(input=0.0036, output=0.0027, cache_read=0.0027, cache_write=0.0, total=0.009),
    )


def _provenance(i: int) -> Provenance:
    return Provenance(
        provider="anthropic", api="anthropic-messages", model="claude-sonnet-4-5", response_id=f"msg_01bench{i:06d}"
    )


def build_mixed_conversation(n_messages: int = 100) -> Conversation:
    """System prompt, then cycles of: user text, user text + 2 KB PNG, assistant thinking + 2 tool calls,
    tool message with 2 results, assistant final text (usage, stop reason, provenance)."""
    rng = random.Random(42)
    image = png_noise(26, seed=7)

    def sentence(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    def meta(i: int) -> dict[str, Any]:
        return {"id": f"msg-{i:03d}", "timestamp": T0 + i * 1.5}

    messages: list[agentmsg.BaseMessage] = [
        SystemMessage.text("You are a careful coding agent. " + " ".join(sentence(12) for _ in range(8)), **meta(0))
    ]
    turn = 0
    while len(messages) < n_messages:
        i = len(messages)
        kind = (i - 1) % 5
        if kind == 0:
            turn += 1
            messages.append(UserMessage.text(" ".join(sentence(14) for _ in range(3)), **meta(i)))
        elif kind == 1:
            blocks = [TextContent("What is wrong in this screenshot? " + sentence(10)), ImageContent(image)]
            messages.append(UserMessage(blocks, **meta(i)))
        elif kind == 2:
            thinking = ThinkingContent(
                " ".join(sentence(16) for _ in range(5)), signature="EqQBCkYIBxgCKkA" + "x" * 180
            )
            calls = [
                ToolCallContent(
                    f"toolu_{turn:03d}_a", "read_file", {"path": f"src/pkg/module_{turn}.py", "offset": 0, "limit": 400}
                ),
                ToolCallContent(
                    f"toolu_{turn:03d}_b",
                    "grep",
                    {"pattern": r"def \w+\(", "path": "src/pkg", "flags": ["-n", "-r"], "context": 2},
                ),
            ]
            messages.append(
                AssistantMessage(
                    [thinking, *calls],
                    usage=_usage(i),
                    stop_reason=StopReason.TOOL_CALLS,
                    stop_reason_raw="tool_use",
                    provenance=_provenance(i),
                    **meta(i),
                )
            )
        elif kind == 3:
            results = [
                ToolResultContent(f"toolu_{turn:03d}_a", "\n".join(sentence(12) for _ in range(12)), name="read_file"),
                ToolResultContent(f"toolu_{turn:03d}_b", "\n".join(sentence(6) for _ in range(6)), name="grep"),
            ]
            messages.append(ToolMessage.from_results(results, **meta(i)))
        else:
            messages.append(
                AssistantMessage(
                    [TextContent(" ".join(sentence(14) for _ in range(4)))],
                    usage=_usage(i),
                    stop_reason=StopReason.STOP,
                    stop_reason_raw="end_turn",
                    provenance=_provenance(i),
                    **meta(i),
                )
            )
    return Conversation(messages)


def build_small_conversation() -> Conversation:
    """One short user message (text only, with id and timestamp)."""
    text = "Why does test_parse_config fail on Windows? The traceback points at a path separator in loader.py."
    return Conversation([UserMessage.text(text, id="msg-small", timestamp=T0)])


def build_assistant_conversation() -> Conversation:
    """One assistant message: thinking with a signature, two tool calls, usage, stop reason, provenance.

    It is message 3 of :func:`build_mixed_conversation` (the same bytes).
    """
    return Conversation([build_mixed_conversation(4)[3]])


def build_image_conversation(size: int = 1 << 20) -> Conversation:
    """One user message: a line of text and one image of exactly ``size`` bytes."""
    data = png_of_size(size, seed=3)
    assert len(data) == size
    message = UserMessage(
        [TextContent("Describe this image."), ImageContent(data, media_type="image/png")], id="msg-img", timestamp=T0
    )
    return Conversation([message])


# --------------------------------------------------------------------------------------------------------------------
# Plain-dict form (for json / orjson)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _content_dict(pb: Any) -> dict[str, Any]:
    kind = pb.WhichOneof("kind")
    arm = getattr(pb, kind)
    if kind == "text":
        return {"type": "text", "text": arm.text}
    if kind == "image":
        return {"type": "image", "data": _b64(arm.data), "mimeType": arm.media_type}
    if kind == "thinking":
        return {"type": "thinking", "thinking": arm.text, "thinkingSignature": arm.signature}
    if kind == "tool_call":
        return {"type": "toolCall", "id": arm.id, "name": arm.name, "arguments": json.loads(arm.arguments)}
    if kind == "tool_result":
        return {
            "type": "toolResult",
            "toolCallId": arm.id,
            "toolName": arm.name,
            "content": [_content_dict(block) for block in arm.content],
            "isError": arm.is_error,
        }
    raise ValueError(f"the bench dict form has no {kind!r} blocks")


def bench_dicts(conv: Conversation) -> list[dict[str, Any]]:
    """A plain-dict form of ``conv`` built here (camelCase, base64 bytes, epoch-ms timestamps)."""
    out: list[dict[str, Any]] = []
    for pb in conv.pb.messages:
        role = pb.WhichOneof("role")
        body = getattr(pb, role)
        item: dict[str, Any] = {
            "role": role,
            "id": pb.id,
            "timestamp": pb.timestamp.ToMilliseconds(),
            "content": [_content_dict(block) for block in body.content],
        }
        if role == "assistant":
            usage = body.usage
            item["usage"] = {
                "input": usage.input_tokens,
                "output": usage.output_tokens,
                "cacheRead": usage.cache_read_tokens,
                "cacheWrite": usage.cache_write_tokens,
                "reasoning": usage.reasoning_tokens,
                "totalTokens": usage.total_tokens,
                "cost": {
                    "input": usage.cost.input,
                    "output": usage.cost.output,
                    "cacheRead": usage.cost.cache_read,
                    "cacheWrite": usage.cost.cache_write,
                    "total": usage.cost.total,
                },
            }
            item["stopReason"] = message_pb2.StopReason.Name(body.stop_reason).removeprefix("STOP_REASON_").lower()
            item["provider"] = body.provenance.provider
            item["api"] = body.provenance.api
            item["model"] = body.provenance.model
            item["responseId"] = body.provenance.response_id
        out.append(item)
    return out


def plain_dicts(conv: Conversation) -> tuple[list[dict[str, Any]], str, str]:
    """``conv.to_dicts()`` when it works and is JSON-ready, else :func:`bench_dicts`.

    Returns the dicts, the key of each message's block list, and where the dicts came from.
    """
    try:
        dicts = conv.to_dicts()
        json.dumps(dicts)
        orjson.dumps(dicts)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:90]
        return bench_dicts(conv), "content", f"built by bench/run.py (Conversation.to_dicts() unavailable: {reason})"
    return dicts, "contents", "agentmsg Conversation.to_dicts() (seed-1 dict form)"


# --------------------------------------------------------------------------------------------------------------------
# Walks: visit every message and top-level content block, reading one field of each


# Each walk returns (messages, blocks, total length of the fields read): the counts are checked to agree.


def walk_wrapper(conv: Conversation) -> tuple[int, int, int]:
    messages = blocks = n = 0
    for message in conv:
        messages += 1
        n += len(message.id)
        for block in message.contents:
            blocks += 1
            n += len(getattr(block, WRAPPER_WALK_ATTR[type(block)]))
    return messages, blocks, n


def walk_raw(conv_pb: message_pb2.Conversation) -> tuple[int, int, int]:
    messages = blocks = n = 0
    for message in conv_pb.messages:
        messages += 1
        n += len(message.id)
        for block in getattr(message, message.WhichOneof("role")).content:
            blocks += 1
            kind = block.WhichOneof("kind")
            n += len(getattr(getattr(block, kind), RAW_WALK_FIELD[kind]))
    return messages, blocks, n


def walk_dicts(items: list[dict[str, Any]], key: str) -> tuple[int, int, int]:
    """``key``: the list of blocks (``contents`` in the seed-1 form, ``content`` in the bench form)."""
    messages = blocks = n = 0
    for message in items:
        messages += 1
        n += len(message["role"])
        for block in message.get(key) or ():
            blocks += 1
            n += len(block["type"])
    return messages, blocks, n


# --------------------------------------------------------------------------------------------------------------------
# Contenders


def codec_contenders(conv: Conversation) -> tuple[list[Contender], str]:
    """The contenders on one conversation; checks that each one round-trips before timing."""
    raw_pb = conv.pb
    as_bytes = conv.to_bytes()
    raw_bytes = raw_pb.SerializeToString()
    as_json = conv.to_json()
    dicts, key, dict_source = plain_dicts(conv)
    json_text = json.dumps(dicts, separators=(",", ":"))
    orjson_bytes = orjson.dumps(dicts)

    # Round-trip checks (once, untimed): every contender decodes what it encoded.
    assert Conversation.from_bytes(as_bytes) == conv
    assert message_pb2.Conversation.FromString(raw_bytes) == raw_pb
    assert Conversation.from_json(as_json) == conv
    assert json.loads(json_text) == dicts
    assert orjson.loads(orjson_bytes) == dicts
    walked = walk_raw(raw_pb)
    assert walk_wrapper(conv) == walked, (walk_wrapper(conv), walked)
    assert walk_dicts(dicts, key)[:2] == walked[:2], (walk_dicts(dicts, key), walked)

    from_bytes, from_json, from_string = (
        Conversation.from_bytes,
        Conversation.from_json,
        message_pb2.Conversation.FromString,
    )
    dumps, loads, odumps, oloads = json.dumps, json.loads, orjson.dumps, orjson.loads
    compact = (",", ":")
    contenders = [
        Contender(
            WRAPPER,
            conv.to_bytes,
            lambda: from_bytes(as_bytes),
            lambda: walk_wrapper(from_bytes(as_bytes)),
            len(as_bytes),
            "Conversation.to_bytes() (deterministic=True) / Conversation.from_bytes(); walk: iteration + .contents",
        ),
        Contender(
            BASELINE,
            raw_pb.SerializeToString,
            lambda: from_string(raw_bytes),
            lambda: walk_raw(from_string(raw_bytes)),
            len(raw_bytes),
            "message_pb2.Conversation: SerializeToString() / FromString(); walk: WhichOneof + repeated fields",
        ),
        Contender(
            "ProtoJSON (wrapper)",
            conv.to_json,
            lambda: from_json(as_json),
            lambda: walk_wrapper(from_json(as_json)),
            len(as_json.encode()),
            "Conversation.to_json() / Conversation.from_json() (google.protobuf.json_format)",
        ),
        Contender(
            "json (stdlib) dicts",
            lambda: dumps(dicts, separators=compact),
            lambda: loads(json_text),
            lambda: walk_dicts(loads(json_text), key),
            len(json_text.encode()),
            "json.dumps(separators=(',', ':')) / json.loads on plain dicts",
        ),
        Contender(
            "orjson dicts",
            lambda: odumps(dicts),
            lambda: oloads(orjson_bytes),
            lambda: walk_dicts(oloads(orjson_bytes), key),
            len(orjson_bytes),
            f"orjson {orjson.__version__} dumps / loads on the same dicts",
        ),
    ]
    if not peers.missing():
        contenders += peer_contenders(conv, walked)
    return contenders, dict_source


def peer_contenders(conv: Conversation, walked: tuple[int, int, int]) -> list[Contender]:
    """pydantic-ai and LangChain on the same conversation (round-trips checked once, untimed)."""
    pa_messages = peers.pydantic_ai_messages(conv)
    pa_dump, pa_load = peers.pydantic_ai_codec()
    pa_bytes = pa_dump(pa_messages)
    # pydantic-ai reads images back as BinaryImage (a BinaryContent subclass) with a computed identifier,
    # so the objects differ from the ones built; the re-encoded bytes must be identical.
    assert pa_dump(pa_load(pa_bytes)) == pa_bytes
    assert peers.walk_pydantic_ai(pa_load(pa_bytes))[0] == walked[0]
    pa_gaps = "; ".join(peers.pydantic_ai_gaps(conv))

    lc_messages, lc_losses = peers.langchain_messages(conv)
    lc_dump, lc_load = peers.langchain_codec()
    lc_text = lc_dump(lc_messages)
    assert lc_load(lc_text) == lc_messages
    split = len(lc_messages) - len(conv)
    lc_note = f"; {split} more LangChain messages (one ToolMessage per tool result)" if split else ""
    lc_loss = f"; to_langchain reported {len(lc_losses)} loss(es): {lc_losses[0]}" if lc_losses else ""

    walk_pa, walk_lc = peers.walk_pydantic_ai, peers.walk_langchain
    return [
        Contender(
            PYDANTIC_AI,
            lambda: pa_dump(pa_messages),
            lambda: pa_load(pa_bytes),
            lambda: walk_pa(pa_load(pa_bytes)),
            len(pa_bytes),
            f"pydantic-ai-slim {peers.version('pydantic-ai-slim')}: ModelMessagesTypeAdapter.dump_json / "
            "validate_json of the same messages as list[ModelMessage] (eager: decode builds every object); "
            "signatures exact (ThinkingPart.signature); not exact: " + pa_gaps,
        ),
        Contender(
            LANGCHAIN,
            lambda: lc_dump(lc_messages),
            lambda: lc_load(lc_text),
            lambda: walk_lc(lc_load(lc_text)),
            len(lc_text.encode()),
            f"langchain-core {peers.version('langchain-core')}: json.dumps(messages_to_dict(m)) / "
            "messages_from_dict(json.loads(s)) on to_langchain's messages (eager; signatures and the rest "
            "of the agentmsg fields ride in response_metadata/extras)" + lc_note + lc_loss,
        ),
    ]


def codec_targets(contenders: list[Contender], *, peer_targets: bool = False) -> list[Target]:
    """The wrapper within 2x of raw protobuf on every op; with ``peer_targets``, 10x faster than each peer
    library on encode and decode (the issue's targets) and, as a like-for-like check, on decode+walk: the
    wrapper's decode is lazy while the peers' decode builds every object, so decode alone flatters it."""
    targets = [Target(WRAPPER, op, TARGET_RATIO) for op in OPS]
    names = {c.name for c in contenders}
    if peer_targets:
        targets += [
            Target(WRAPPER, op, 1 / PEER_SPEEDUP, peer, extra=op == "decode+walk")
            for peer in (PYDANTIC_AI, LANGCHAIN)
            if peer in names
            for op in OPS
        ]
    return targets


def peer_notes() -> list[str]:
    gone = peers.missing()
    return [f"peer libraries not installed ({', '.join(gone)}): pip install -e '.[bench]'"] if gone else []


@register_group("small", "one short user message (text only)")
def small_group() -> list[Payload]:
    conv = build_small_conversation()
    contenders, dict_source = codec_contenders(conv)
    return [
        Payload(
            "small-user",
            f"1 user message, {len(conv[0].text_content())} characters of text, id and timestamp",
            contenders,
            targets=codec_targets(contenders),
            notes=[f"dict form: {dict_source}", *peer_notes()],
            conv=conv,
        )
    ]


@register_group("assistant", "one assistant message: thinking (signed), two tool calls, usage")
def assistant_group() -> list[Payload]:
    conv = build_assistant_conversation()
    contenders, dict_source = codec_contenders(conv)
    return [
        Payload(
            "assistant-tools",
            "1 assistant message: thinking with a signature, 2 tool calls, usage with cost, stop reason, provenance",
            contenders,
            targets=codec_targets(contenders),
            notes=[f"dict form: {dict_source}", *peer_notes()],
            conv=conv,
        )
    ]


@register_group("conversation", "100-message mixed conversation (text, 2 KB PNGs, thinking, tool calls and results)")
def conversation_group() -> list[Payload]:
    conv = build_mixed_conversation(100)
    contenders, dict_source = codec_contenders(conv)
    counts: dict[str, int] = {}
    blocks = 0
    for message in conv:
        role = message.role.value if message.role else "unknown"
        counts[role] = counts.get(role, 0) + 1
        blocks += len(message.contents)
    roles = ", ".join(f"{n} {role}" for role, n in counts.items())
    return [
        Payload(
            "conversation-100",
            f"{len(conv)} messages ({roles}), {blocks} top-level blocks",
            contenders,
            targets=codec_targets(contenders, peer_targets=True),
            notes=[f"dict form: {dict_source}", *peer_notes()],
            conv=conv,
        )
    ]


@register_group("image", "one user message with text and a 1 MiB image (inline bytes)")
def image_group() -> list[Payload]:
    conv = build_image_conversation(1 << 20)
    contenders, dict_source = codec_contenders(conv)
    return [
        Payload(
            "image-1MiB",
            "1 user message: text + ImageContent of exactly 1 MiB (PNG header, random padding, media_type given)",
            contenders,
            targets=codec_targets(contenders),
            notes=[f"dict form: {dict_source}", *peer_notes()],
        )
    ]


# --------------------------------------------------------------------------------------------------------------------
# Hot paths: one operation each, the wrapper against the same generated message built or read raw (and the peers)

BUILD_TEXT = ("Please look at the failing test in tests/test_parser.py and tell me why it fails. " * 8)[:500]
BUILD_ARGS = {"path": "tests/test_parser.py", "start_line": 1, "end_line": 120}
BUILD_RATIO = 3.0  # building: the wrapper within 3x of raw protobuf (fresh id and time on both sides)
DECODE_ONE_RATIO = 1.5  # decoding one message and reading its role and first block: within 1.5x of raw


@dataclass(frozen=True)
class HotCase:
    """One operation measured for several contenders; ``targets`` are (contender, against, max_ratio)."""

    name: str
    description: str
    contenders: dict[str, Callable[[], object]]
    notes: dict[str, str]
    targets: list[tuple[str, str, float]]


def _raw_stamp(pb: message_pb2.Message) -> message_pb2.Message:
    pb.timestamp.FromMicroseconds(time.time_ns() // 1000)
    return pb


def hot_cases() -> list[HotCase]:
    """Building a user text message and an assistant text + tool-call message; decoding one message."""
    from agentmsg.v1 import content_pb2

    text_pb, call_pb = content_pb2.TextContent, content_pb2.ToolCallContent
    content, message = content_pb2.Content, message_pb2.Message
    user_body, assistant_body = message_pb2.UserMessage, message_pb2.AssistantMessage
    uuid4 = __import__("uuid").uuid4
    dumps = json.dumps

    def raw_user() -> object:
        body = user_body(content=[content(text=text_pb(text=BUILD_TEXT))])
        return _raw_stamp(message(id=str(uuid4()), user=body))

    def wrapper_user() -> object:
        return UserMessage.text(BUILD_TEXT)

    def raw_assistant() -> object:
        arguments = dumps(BUILD_ARGS, ensure_ascii=False, separators=(",", ":"))
        body = assistant_body(
            content=[
                content(text=text_pb(text="Let me read the test.")),
                content(tool_call=call_pb(id="call_1", name="read_file", arguments=arguments)),
            ]
        )
        return _raw_stamp(message(id=str(uuid4()), assistant=body))

    def wrapper_assistant() -> object:
        return AssistantMessage(
            [TextContent("Let me read the test."), ToolCallContent("call_1", "read_file", BUILD_ARGS)]
        )

    assert wrapper_user().pb.user == raw_user().user  # type: ignore[attr-defined]
    assert wrapper_assistant().pb.assistant == raw_assistant().assistant  # type: ignore[attr-defined]

    user = {WRAPPER: wrapper_user, BASELINE: raw_user}
    assistant = {WRAPPER: wrapper_assistant, BASELINE: raw_assistant}
    user_notes = {
        WRAPPER: "UserMessage.text(text): type checks, uuid4, now, the contract's rules (compiled checker)",
        BASELINE: "message_pb2.Message(id=str(uuid4()), user=UserMessage(content=[Content(text=...)])) "
        "+ timestamp.FromMicroseconds(now)",
    }
    assistant_notes = {
        WRAPPER: "AssistantMessage([TextContent(...), ToolCallContent(id, name, args_dict)])",
        BASELINE: "message_pb2.Message(id=str(uuid4()), assistant=AssistantMessage(content=[text, tool_call "
        "with arguments=json.dumps(args)])) + timestamp.FromMicroseconds(now)",
    }
    targets_user = [(WRAPPER, BASELINE, BUILD_RATIO)]
    targets_assistant = [(WRAPPER, BASELINE, BUILD_RATIO)]
    if not peers.missing():
        from langchain_core.messages import AIMessage, HumanMessage
        from pydantic_ai.messages import (
            ModelMessagesTypeAdapter,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            UserPromptPart,
        )

        adapter = ModelMessagesTypeAdapter.validate_python
        user_dict = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": BUILD_TEXT}]}
        assistant_dict = {
            "kind": "response",
            "parts": [
                {"part_kind": "text", "content": "Let me read the test."},
                {"part_kind": "tool-call", "tool_name": "read_file", "args": BUILD_ARGS, "tool_call_id": "call_1"},
            ],
        }
        user[PYDANTIC_AI] = lambda: adapter([user_dict])
        user[PYDANTIC_AI_UNCHECKED] = lambda: ModelRequest(parts=[UserPromptPart(content=BUILD_TEXT)])
        user[LANGCHAIN] = lambda: HumanMessage(content=BUILD_TEXT, id=str(uuid4()))
        assistant[PYDANTIC_AI] = lambda: adapter([assistant_dict])
        assistant[PYDANTIC_AI_UNCHECKED] = lambda: ModelResponse(
            parts=[
                TextPart(content="Let me read the test."),
                ToolCallPart(tool_name="read_file", args=BUILD_ARGS, tool_call_id="call_1"),
            ]
        )
        assistant[LANGCHAIN] = lambda: AIMessage(
            content="Let me read the test.",
            tool_calls=[{"name": "read_file", "args": BUILD_ARGS, "id": "call_1"}],
            id=str(uuid4()),
        )
        checked = (
            "ModelMessagesTypeAdapter.validate_python([...]) of the message as a dict: pydantic-ai's checked "
            "construction, the counterpart of a constructor that refuses wrong messages (no id; it stamps the time)"
        )
        unchecked = "the dataclasses called directly: nothing is checked (shown for reference, no target)"
        user_notes[PYDANTIC_AI] = checked
        user_notes[PYDANTIC_AI_UNCHECKED] = "ModelRequest(parts=[UserPromptPart(content=text)]): " + unchecked
        user_notes[LANGCHAIN] = "HumanMessage(content=text, id=str(uuid4())) (pydantic model: fields are checked)"
        assistant_notes[PYDANTIC_AI] = checked
        assistant_notes[PYDANTIC_AI_UNCHECKED] = "ModelResponse(parts=[TextPart, ToolCallPart]): " + unchecked
        assistant_notes[LANGCHAIN] = "AIMessage(content=..., tool_calls=[{name, args, id}], id=str(uuid4()))"
        targets_user.append((WRAPPER, PYDANTIC_AI, 1.0))
        targets_assistant.append((WRAPPER, PYDANTIC_AI, 1.0))

    data = wrapper_assistant().to_bytes()  # type: ignore[attr-defined]
    from_string, from_bytes = message_pb2.Message.FromString, agentmsg.BaseMessage.from_bytes

    def raw_decode_one() -> object:
        pb = from_string(data)
        role = pb.WhichOneof("role")
        block = getattr(pb, role).content[0]
        text = block.text.text if block.WhichOneof("kind") == "text" else None
        return role, text

    def wrapper_decode_one() -> object:
        decoded = from_bytes(data)
        block = decoded.contents[0]
        return decoded.role, block.content if isinstance(block, TextContent) else None

    assert raw_decode_one() == ("assistant", "Let me read the test.")
    assert wrapper_decode_one() == (agentmsg.Role.ASSISTANT, "Let me read the test.")
    return [
        HotCase(
            "build-user",
            f"build one user message with {len(BUILD_TEXT)} characters of text (fresh uuid4 id and current time)",
            user,
            user_notes,
            targets_user,
        ),
        HotCase(
            "build-assistant",
            "build one assistant message: a text block and a tool call with 3 arguments (fresh id and time)",
            assistant,
            assistant_notes,
            targets_assistant,
        ),
        HotCase(
            "decode-one",
            f"decode one assistant message ({len(data)} bytes, 2 blocks), read its role and its first block's text",
            {WRAPPER: wrapper_decode_one, BASELINE: raw_decode_one},
            {
                WRAPPER: "BaseMessage.from_bytes(data); message.role; message.contents[0].content",
                BASELINE: "Message.FromString(data); WhichOneof('role'); getattr(pb, role).content[0]; "
                "WhichOneof('kind'); .text.text",
            },
            [(WRAPPER, BASELINE, DECODE_ONE_RATIO)],
        ),
    ]


def run_hot(args: argparse.Namespace) -> dict[str, Any]:
    """Measure every hot case, each contender as the codec cells are (calibrated loops, median of repeats)."""
    cases: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    print(f"\n== hot paths: one operation, median [min{DASH}max], ratio vs {BASELINE}")
    for case in hot_cases():
        print(f"\n  {case.name}: {case.description}")
        results: dict[str, dict[str, Any]] = {}
        for name, fn in case.contenders.items():
            gc.collect()
            loops, samples = measure(fn, target_s=args.time, repeats=args.repeats, max_loops=args.max_loops)
            cell = Cell(case.name, name, "op", loops, samples)
            results[name] = {
                "contender": name,
                "median_ns": cell.median_ns,
                "min_ns": cell.min_ns,
                "max_ns": cell.max_ns,
                "loops": loops,
                "samples_ns": samples,
                "note": case.notes.get(name, ""),
            }
        base = results[BASELINE]["median_ns"]
        for row in results.values():
            row["ratio_vs_baseline"] = row["median_ns"] / base
            print(
                f"    {row['contender']:<24} {fmt_time(row['median_ns']):>9} "
                f"[{fmt_range(row['min_ns'], row['max_ns']):>11}] {fmt_ratio(row['ratio_vs_baseline']):>7}"
                f"   {row['note']}"
            )
        for contender, against, max_ratio in case.targets:
            ratio = results[contender]["median_ns"] / results[against]["median_ns"]
            if max_ratio == 1.0:
                text = f"{contender} {case.name} {1 / ratio:.1f}{TIMES} as fast as {against} (target > 1{TIMES})"
                passed = ratio < 1.0
            else:
                text = f"{contender} {case.name} {fmt_ratio(ratio)} {against} (limit {max_ratio:g}{TIMES})"
                passed = ratio <= max_ratio
            targets.append(
                {
                    "payload": case.name,
                    "contender": contender,
                    "against": against,
                    "op": case.name,
                    "ratio": ratio,
                    "max_ratio": max_ratio,
                    "pass": passed,
                    "extra": False,
                    "text": text,
                }
            )
        cases.append({"name": case.name, "description": case.description, "results": list(results.values())})
    print()
    for t in targets:
        print(f"  {'PASS' if t['pass'] else 'MISS'}  {t['text']}")
    return {"cases": cases, "targets": targets}


# --------------------------------------------------------------------------------------------------------------------
# Reporting


def machine_info() -> dict[str, Any]:
    cpu = platform.processor()
    cpuinfo: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            cpuinfo.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    cpu = cpuinfo.get("model name", cpu)
    if "cpu family" in cpuinfo:
        cpu += f" (family {cpuinfo['cpu family']}, model {cpuinfo.get('model', '?')})"
    if "hypervisor" in cpuinfo.get("flags", "").split():
        cpu += ", virtual machine"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
                break
    except (OSError, ValueError):
        pass
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu or "unknown",
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "memory": memory,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "protobuf": protobuf_version,
        "protobuf_backend": api_implementation.Type(),
        "grpcio": grpc.__version__,
        "agentmsg": agentmsg.__version__,
        "orjson": orjson.__version__,
        "pillow": Image.__version__,
        "load_average": os.getloadavg(),
        "pydantic-ai-slim": peers.version("pydantic-ai-slim"),
        "pydantic": peers.version("pydantic"),
        "langchain-core": peers.version("langchain-core"),
    }


TIMES = "\u00d7"  # the multiplication sign of "1.08x raw"
DASH = "\u2013"  # the en dash of "min-max"


def _sig3(x: float) -> str:
    """Three significant digits without exponent: 1.23, 12.3, 123, 1234."""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _unit(ns: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return scale, unit
    return 1.0, "ns"


def fmt_time(ns: float) -> str:
    scale, unit = _unit(ns)
    return f"{_sig3(ns / scale)} {unit}"


def fmt_range(lo: float, hi: float) -> str:
    """``lo-hi`` in the unit of the median's cell, without the unit."""
    scale, _ = _unit(hi)
    return f"{_sig3(lo / scale)}{DASH}{_sig3(hi / scale)}"


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:.2f}{TIMES}" if ratio < 100 else f"{ratio:.0f}{TIMES}"


def fmt_size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.2f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} B"


CELL_WIDTH = 33


def fmt_cell(cell: Cell, base: Cell | None) -> str:
    ratio = fmt_ratio(cell.median_ns / base.median_ns) if base else "-"
    text = f"{fmt_time(cell.median_ns):>9} [{fmt_range(cell.min_ns, cell.max_ns):>11}] {ratio:>7}"
    return f"{text:<{CELL_WIDTH}}"


def print_table(payload: Payload, cells: dict[tuple[str, str], Cell]) -> None:
    name_w = max(len(c.name) for c in payload.contenders)
    lead = f"{'contender':<{name_w}}  {'size':>10}  "
    header = lead + "  ".join(f"{op:<{CELL_WIDTH}}" for op in OPS)
    sub = " " * len(lead) + "  ".join(f"{f'   median [min{DASH}max]  vs raw':<{CELL_WIDTH}}" for _ in OPS)
    rows = []
    for contender in payload.contenders:
        parts = [fmt_cell(cells[contender.name, op], cells.get((payload.baseline, op))) for op in OPS]
        rows.append(f"{contender.name:<{name_w}}  {fmt_size(contender.size):>10}  " + "  ".join(parts))
    width = max(len(line.rstrip()) for line in (header, sub, *rows))
    print(header.rstrip())
    print(sub.rstrip())
    print("-" * width)
    for row in rows:
        print(row.rstrip())
    for contender in payload.contenders:
        print(f"  {contender.name}: {contender.note}")
    for note in payload.notes:
        print(f"  {note}")


# --------------------------------------------------------------------------------------------------------------------
# Main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 repeats of ~0.05 s per cell (a smoke run)")
    parser.add_argument(
        "--only",
        action="append",
        metavar="GROUP",
        help=f"run only this group (repeatable, or comma-separated); groups: {', '.join(GROUPS)}",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every result as JSON to PATH")
    parser.add_argument("--repeats", type=int, help="repeats per cell (default 7; 3 with --quick)")
    parser.add_argument("--time", type=float, help="seconds per repeat (default 0.2; 0.05 with --quick)")
    parser.add_argument("--max-loops", type=int, default=200_000, help="cap on the calibrated loop count")
    parser.add_argument("--list", action="store_true", help="list the groups and exit")
    parser.add_argument("--no-profile", action="store_true", help="do not profile missed targets")
    parser.add_argument("--no-hot", action="store_true", help="skip the hot-path cases (building, decoding one)")
    parser.add_argument("--hot-only", action="store_true", help="run only the hot-path cases")
    args = parser.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 7)
    args.time = args.time or (0.05 if args.quick else 0.2)
    selected: list[str] = []
    for item in args.only or []:
        selected.extend(name.strip() for name in item.split(",") if name.strip())
    unknown = [name for name in selected if name not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    args.groups = [] if args.hot_only else selected or list(GROUPS)
    return args


def run_payload(payload: Payload, args: argparse.Namespace) -> dict[tuple[str, str], Cell]:
    cells: dict[tuple[str, str], Cell] = {}
    for op in OPS:
        for contender in payload.contenders:
            gc.collect()
            loops, samples = measure(
                contender.op(op), target_s=args.time, repeats=args.repeats, max_loops=args.max_loops
            )
            cells[contender.name, op] = Cell(payload.name, contender.name, op, loops, samples)
    return cells


def check_targets(payload: Payload, cells: dict[tuple[str, str], Cell]) -> list[dict[str, Any]]:
    out = []
    for target in payload.targets:
        against = target.against or payload.baseline
        ratio = cells[target.contender, target.op].median_ns / cells[against, target.op].median_ns
        out.append(
            {
                "payload": payload.name,
                "contender": target.contender,
                "against": against,
                "op": target.op,
                "ratio": ratio,
                "max_ratio": target.max_ratio,
                "pass": ratio <= target.max_ratio,
                "extra": target.extra,
                "text": target_text(target.contender, against, target.op, ratio, target.max_ratio)
                + (" [like-for-like check]" if target.extra else ""),
            }
        )
    return out


def target_text(contender: str, against: str, op: str, ratio: float, max_ratio: float) -> str:
    """``wrapper API encode 1.02x raw protobuf (limit 2x)`` or ``... 52x faster than LangChain (target >= 10x)``."""
    if max_ratio < 1:
        return f"{contender} {op} {1 / ratio:.1f}{TIMES} faster than {against} (target \u2265 {1 / max_ratio:g}{TIMES})"
    return f"{contender} {op} {fmt_ratio(ratio)} {against} (limit {max_ratio:g}{TIMES})"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for group in GROUPS.values():
            print(f"{group.name:<16} {group.description}")
        return 0

    started = time.perf_counter()
    info = machine_info()
    print("agentmsg codec benchmark")
    print(f"  platform   {info['platform']} ({info['machine']}), {info['cpu']}")
    print(f"  CPUs       {info['cpu_count']} ({info['cpu_usable']} usable by this process)")
    print(f"  Python     {info['python']}")
    print(f"  protobuf   {info['protobuf']}, backend {info['protobuf_backend']}")
    print(f"  agentmsg   {info['agentmsg']}   orjson {info['orjson']}   Pillow {info['pillow']}")
    print(
        f"  peers      pydantic-ai-slim {info['pydantic-ai-slim']} (pydantic {info['pydantic']})   "
        f"langchain-core {info['langchain-core']}"
    )
    print(
        f"  method     perf_counter_ns; loops calibrated to ~{args.time:g} s per repeat (cap {args.max_loops}), "
        f"{args.repeats} repeats, median per op [min{DASH}max]; gc.collect() before each cell; ratios vs {BASELINE}"
    )

    report: dict[str, Any] = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "settings": {"repeats": args.repeats, "time_s": args.time, "max_loops": args.max_loops, "quick": args.quick},
        "payloads": [],
        "targets": [],
    }
    targets: list[dict[str, Any]] = []
    built: dict[str, tuple[Payload, dict[tuple[str, str], Cell]]] = {}
    for group_name in args.groups:
        group = GROUPS[group_name]
        for payload in group.build():
            print(f"\n== {group.name} / {payload.name}: {payload.description}")
            cells = run_payload(payload, args)
            built[payload.name] = (payload, cells)
            print_table(payload, cells)
            payload_targets = check_targets(payload, cells)
            targets.extend(payload_targets)
            report["payloads"].append(
                {
                    "group": group.name,
                    "name": payload.name,
                    "description": payload.description,
                    "baseline": payload.baseline,
                    "notes": payload.notes,
                    "contenders": [{"name": c.name, "size": c.size, "note": c.note} for c in payload.contenders],
                    "results": [
                        {
                            "contender": cell.contender,
                            "op": cell.op,
                            "median_ns": cell.median_ns,
                            "min_ns": cell.min_ns,
                            "max_ns": cell.max_ns,
                            "loops": cell.loops,
                            "samples_ns": cell.samples_ns,
                            "ratio_vs_baseline": cell.median_ns / cells[payload.baseline, cell.op].median_ns,
                        }
                        for cell in cells.values()
                    ],
                }
            )
    report["targets"] = targets
    report["command"] = " ".join([Path(sys.executable).name, *sys.argv])
    print_targets(targets)
    if not args.no_hot:
        report["hot"] = run_hot(args)
    report["overheads"] = wrapper_overheads(built)
    if report["overheads"]:
        print(f"\n== {WRAPPER} minus {BASELINE}, per op (median; a constant is a per-call cost)")
        for row in report["overheads"]:
            cells_text = "  ".join(f"{op} {fmt_signed(row[op])}" for op in OPS)
            print(f"  {row['payload']:<18} {cells_text}")
    missed = [t for t in targets if not t["pass"]]
    report["profiles"] = []
    if missed and not args.no_profile:
        print(f"\n== profiles of the {len(missed)} missed target(s) (cProfile; own time per op)")
        report["profiles"] = profile_misses(missed, built, quick=args.quick)
    total = time.perf_counter() - started
    report["total_s"] = total
    report["load_average_end"] = os.getloadavg()
    print(f"\ntotal {total:.1f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json}")
    return 0


def fmt_signed(ns: float) -> str:
    return ("+" if ns >= 0 else "-") + fmt_time(abs(ns))


def wrapper_overheads(built: dict[str, tuple[Payload, dict[tuple[str, str], Cell]]]) -> list[dict[str, Any]]:
    """Wrapper minus raw protobuf (ns per op) on every payload: a fixed cost shows as a constant."""
    rows = []
    for name, (payload, cells) in built.items():
        if (WRAPPER, "encode") not in cells:
            continue
        row: dict[str, Any] = {"payload": name}
        for op in OPS:
            row[op] = cells[WRAPPER, op].median_ns - cells[payload.baseline, op].median_ns
        rows.append(row)
    return rows


def profile_misses(
    missed: list[dict[str, Any]], built: dict[str, tuple[Payload, dict[tuple[str, str], Cell]]], *, quick: bool
) -> list[dict[str, Any]]:
    """cProfile the contender's op and its anchor's op of every missed target, side by side."""
    from profiling import format_profile, profile_calls

    out = []
    budget_ns = (0.1 if quick else 0.4) * 1e9  # unprofiled time per profiled workload
    for target in missed:
        payload, cells = built[target["payload"]]
        by_name = {c.name: c for c in payload.contenders}
        entry: dict[str, Any] = {"target": target, "profiles": {}}
        print(f"\n  MISS {target['payload']}: {target['text']}")
        for name in (target["contender"], target["against"]):
            median = cells[name, target["op"]].median_ns
            calls = max(20, min(100_000, int(budget_ns / max(median, 1.0))))
            profile = profile_calls(by_name[name].op(target["op"]), calls)
            profile["median_ns_unprofiled"] = median
            entry["profiles"][name] = profile
            title = f"{name} {target['op']} ({fmt_time(median)} unprofiled, {calls} calls profiled)"
            for line in format_profile(title, profile, unit=target["op"], rows=8):
                print(f"    {line}")
        if payload.conv is not None and target["against"] == BASELINE and target["op"] in ("encode", "decode"):
            entry["probes"] = run_probes(payload.conv, target["op"], quick=quick)
            print(f"    the steps, timed separately (median of {3 if quick else 7} repeats):")
            for probe in entry["probes"]:
                print(f"      {fmt_time(probe['median_ns']):>9}  {probe['name']}")
        out.append(entry)
    return out


def run_probes(conv: Conversation, op: str, *, quick: bool) -> list[dict[str, Any]]:
    """The pieces of the wrapper's encode or decode next to the raw call, each timed alone."""
    pb = conv.pb
    data = conv.to_bytes()
    cls, raw = Conversation, message_pb2.Conversation
    probes: list[tuple[str, Callable[[], object]]]
    if op == "encode":
        probes = [
            ("raw: pb.SerializeToString()", lambda: pb.SerializeToString()),  # noqa: PLW0108 - a lambda like the others
            ("pb.SerializeToString(deterministic=False)", lambda: pb.SerializeToString(deterministic=False)),
            ("pb.SerializeToString(deterministic=True)", lambda: pb.SerializeToString(deterministic=True)),
            ("pb.SerializeToString(True) (positional: deterministic, upb)", lambda: pb.SerializeToString(True)),
            ("wrapper: Conversation.to_bytes()", lambda: conv.to_bytes()),  # noqa: PLW0108
        ]
    else:

        def sketch() -> object:  # what from_bytes could do for bytes input without validation
            obj = object.__new__(cls)
            obj._pb = raw.FromString(data)
            return obj

        probes = [
            ("raw: Conversation_pb2.FromString(data)", lambda: raw.FromString(data)),
            ("raw.__new__ + ParseFromString(bytes(data))", lambda: raw().ParseFromString(bytes(data))),
            ("Conversation.from_proto(pb) (type check + _wrap)", lambda: cls.from_proto(pb)),
            ("Conversation._wrap(pb)", lambda: cls._wrap(pb)),
            ("sketch: object.__new__(Conversation) + FromString(data)", sketch),
            ("wrapper: Conversation.from_bytes(data)", lambda: cls.from_bytes(data)),
        ]
    out = []
    for name, fn in probes:
        _, samples = measure(fn, target_s=0.02 if quick else 0.05, repeats=3 if quick else 7, max_loops=200_000)
        out.append({"name": name, "median_ns": statistics.median(samples)})
    return out


def print_targets(targets: Iterable[dict[str, Any]]) -> None:
    print(
        f"\n== targets: {WRAPPER} within {TARGET_RATIO:g}{TIMES} of {BASELINE}; on the conversation "
        f"\u2265 {PEER_SPEEDUP:g}{TIMES} faster than {PYDANTIC_AI} and {LANGCHAIN} (median vs median, same run)"
    )
    for t in targets:
        verdict = "PASS" if t["pass"] else "MISS"
        print(f"  {verdict}  {t['payload']:<18} {t['text']}")


if __name__ == "__main__":
    sys.exit(main())
