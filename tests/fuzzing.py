"""Fuzz targets shared by the hypothesis tests (tests/test_fuzz_decoders.py) and the atheris harness (fuzz/).

A *target* is a decoder of untrusted input: protobuf bytes, ProtoJSON, the
seed-1 dicts, seed-2 (Adaline) JSON, every provider ``from_x`` /
``from_x_response``, and every stream parser's ``stream_events`` /
``stream_events_from_sse`` (folded, as a consumer would), MCP ``tools/call``
results and tool definitions in every format. :func:`run` calls one
on one input and lets only :class:`agentmsg.AgentMsgError` through: anything
else a decoder raises (``TypeError``, ``KeyError``, ``RecursionError``...) is a
bug, and so is a "value" that breaks the contract's rules.

Seeds are the golden payloads under ``tests/golden/<format>/``;
:func:`mutate` changes them the way a broken or hostile peer would: keys
dropped, values of the wrong type, values swapped between places, items
duplicated or removed, strings replaced by odd ones.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agentmsg as am
from agentmsg import dict_form
from agentmsg.providers import (
    adaline,
    anthropic,
    anthropic_stream,
    gemini,
    gemini_stream,
    mcp,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from agentmsg.providers import tools as tool_formats
from agentmsg.providers._common import ConversionReport
from agentmsg.sessions import Session
from agentmsg.streaming import StreamEvent, fold

GOLDEN = Path(__file__).resolve().parent / "golden"
# AGENTMSG_SOAK=1: the long variants (more examples, bigger inputs); `make soak` sets it.
SOAK = os.environ.get("AGENTMSG_SOAK", "") not in ("", "0")


def nested(levels: int, kind: str = "object") -> Any:
    """A JSON value ``levels`` deep, built without recursion."""
    value: Any = 1
    for _ in range(levels):
        value = {"a": value} if kind == "object" else [value]
    return value


# Values a hostile peer puts where something else belongs.
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    -(2**63) - 1,
    1.5,
    -0.0,
    1e308,
    "",
    " ",
    "\x00",
    "\ud800",  # a lone surrogate: not encodable as UTF-8
    "file:/etc/passwd",
    "file:///etc/passwd",
    "http://127.0.0.1:9/x.png",
    "data:image/png;base64,AAAA",
    "data:,",
    "data:;base64,!!!",
    "not base64 ~~",
    "a" * 300,
    "é" * 10,
    "{",
    "null",
    "[]",
    "{}",
    '{"a": 1}',
    [],
    [None],
    [{}],
    {},
    {"type": "text"},
    {"type": None},
    {"type": 5},
    {"role": "user"},
    {"text": {}},
    nested(40),  # past protobuf's 100-level limit once in a Struct, well within Python's recursion limit
    nested(60, "array"),
]


@dataclass(frozen=True)
class Target:
    """One decoder: its name, what it reads, the call, and golden seeds.

    ``kind`` is ``"json"`` (any JSON value), ``"events"`` (a list of JSON values: a stream's decoded events),
    ``"text"`` (a str), ``"bytes"`` or ``"lines"`` (a list of str: SSE lines).
    """

    name: str
    kind: str
    call: Callable[[Any], Any]
    seeds: tuple[Any, ...] = ()


def _seeds(folder: str, key: str | None = None, *, whole: bool = False) -> tuple[Any, ...]:
    """The payloads of ``tests/golden/<folder>/*.json`` (the value under ``key``, or the document minus _source)."""
    found = []
    for path in sorted((GOLDEN / folder).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if whole:
            doc.pop("_source", None)
            found.append(doc)
            continue
        for name in [key] if key else ("payload", "messages", "response", "input", "events", "chunks"):
            if name in doc:
                found.append(doc[name])
                break
    return tuple(found)


def _sse_seeds(folder: str) -> tuple[Any, ...]:
    return tuple(path.read_text(encoding="utf-8").splitlines(True) for path in sorted((GOLDEN / folder).glob("*.sse")))


def _messages(value: Any) -> list[am.AgentMessage]:
    if isinstance(value, am.BaseMessage):
        return [value]  # type: ignore[list-item]
    return list(value)


def _protojson(cls: Any) -> Callable[[Any], Any]:
    """``cls.from_json`` of a decoded value: a dict as it is, anything else as JSON text."""

    def call(value: Any) -> Any:
        if isinstance(value, dict):
            return cls.from_json(value, validate=True)
        try:
            text = json.dumps(value)
        except (ValueError, RecursionError):
            text = "{"
        return cls.from_json(text, validate=True)

    return call


def _fold(events: Iterator[StreamEvent]) -> am.AssistantMessage:
    """What a consumer does with a parser's events: collect them (the parser runs to the end), then fold."""
    return fold(list(events))


def _responses_payload(value: Any) -> Any:
    return openai_responses.from_openai_responses(value)


def _responses_golden() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    requests, responses = [], []
    for path in sorted((GOLDEN / "openai_responses").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc.pop("_source", None)
        (responses if "output" in doc else requests).append(doc)
    return tuple(requests), tuple(responses)


def _split(folder: str, response_key: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    requests, responses = [], []
    for path in sorted((GOLDEN / folder).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if "response" in doc:
            responses.append(doc["response"])
        elif path.name.startswith("response"):
            responses.append(doc["payload"])
        else:
            requests.append(doc.get("payload", doc.get("messages")))
    return tuple(requests), tuple(responses)


def _seed1() -> tuple[Any, ...]:
    return _seeds("seed1", "messages")


def _protojson_seeds() -> tuple[Any, ...]:
    from samples import every_role

    return tuple(json.loads(m.to_json()) for m in every_role())


def _binary_seeds(kind: str) -> tuple[bytes, ...]:
    from samples import every_content, every_role

    if kind == "message":
        return tuple(m.to_bytes() for m in every_role())
    if kind == "content":
        return tuple(c.to_bytes() for c in every_content())
    if kind == "conversation":
        return (am.Conversation(every_role()).to_bytes(),)
    from agentmsg.streaming import events_from_message

    return tuple(
        e.to_bytes() for m in every_role() if isinstance(m, am.AssistantMessage) for e in events_from_message(m)
    )


def _append_seeds() -> tuple[bytes, ...]:
    """``AppendMessageRequest`` encodings as a client sends them: every role, and one over the size at which the
    server keeps the received bytes (with an image payload it parses cut short)."""
    from samples import every_role

    from agentmsg.service.frames import append_request

    image = am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(70_000), media_type="image/png")
    large = am.UserMessage([am.TextContent("a large one"), image], id="large")
    return tuple(append_request("s", m.to_bytes()) for m in [*every_role(), large])


def _wire_reader(data: bytes) -> None:
    """The service's hand-written wire reader (``agentmsg.service.frames``, used by AppendMessage's deserializer)
    on request bytes from a peer: it never raises, and what it says agrees with protobuf's own parser."""
    from google.protobuf.message import DecodeError as PbDecodeError

    from agentmsg.service import frames
    from agentmsg.service.grpc.sessions import _receive_append
    from agentmsg.v1 import message_pb2, session_service_pb2

    request_type = session_service_pb2.AppendMessageRequest
    try:
        parsed: Any = request_type.FromString(data)
    except PbDecodeError:
        parsed = None
    canonical = frames.is_canonical(data, request_type.DESCRIPTOR)
    if canonical and parsed is not None:
        assert parsed.SerializeToString(deterministic=True) == data, "is_canonical said yes to another encoding"
    if frames.is_canonical(data, message_pb2.Message.DESCRIPTOR):  # the bytes read as a message, too
        with contextlib.suppress(PbDecodeError):
            as_message = message_pb2.Message.FromString(data)
            assert as_message.SerializeToString(deterministic=True) == data, "is_canonical said yes to another encoding"
    span = frames.field_span(data, 2)
    if span is not None:
        assert 0 <= span[0] <= span[1] <= len(data)
        if parsed is not None:
            assert message_pb2.Message.FromString(data[span[0] : span[1]]) == parsed.message
    blind = frames.blind_encoding(data, request_type.DESCRIPTOR)
    assert blind is None or len(blind) < len(data)
    try:
        received = _receive_append(data)
    except PbDecodeError as exc:  # the server answers INVALID_ARGUMENT with the parser's message
        refused = str(exc)
    else:
        refused = ""
    assert (parsed is None) == bool(refused), f"the reader and protobuf disagree: {refused or 'it took it'}"
    if refused:
        raise am.DecodeError(refused)
    if isinstance(received, frames.ReceivedAppend):
        assert message_pb2.Message.FromString(bytes(received.encoding)) == parsed.message
        assert received.request.session_id == parsed.session_id
    else:
        assert received == parsed


def targets() -> list[Target]:
    """Every decoder of untrusted input, with its golden seeds."""
    chat_requests, chat_responses = _split("openai_chat", "response")
    anthropic_requests, anthropic_responses = _split("anthropic", "response")
    gemini_requests, gemini_responses = _split("gemini", "payload")
    responses_requests, responses_responses = _responses_golden()
    protojson = _protojson_seeds()
    return [
        # binary protobuf
        Target(
            "BaseMessage.from_bytes",
            "bytes",
            lambda b: am.BaseMessage.from_bytes(b, validate=True),
            _binary_seeds("message"),
        ),
        Target(
            "BaseMessage.from_bytes(lazy)",
            "bytes",
            lambda b: am.violations(am.BaseMessage.from_bytes(b)),
            _binary_seeds("message"),
        ),
        Target(
            "ContentBase.from_bytes",
            "bytes",
            lambda b: am.ContentBase.from_bytes(b, validate=True),
            _binary_seeds("content"),
        ),
        Target(
            "Conversation.from_bytes",
            "bytes",
            lambda b: am.Conversation.from_bytes(b, validate=True),
            _binary_seeds("conversation"),
        ),
        Target(
            "StreamEvent.from_bytes",
            "bytes",
            lambda b: StreamEvent.from_bytes(b, validate=True),
            _binary_seeds("event"),
        ),
        Target(
            "fold(StreamEvent.from_bytes)",
            "bytes",
            lambda b: fold([StreamEvent.from_bytes(b)]),
            _binary_seeds("event"),
        ),
        Target("service.frames (AppendMessage wire reader)", "bytes", _wire_reader, _append_seeds()),
        # ProtoJSON (a decoded dict as the service's JSON gateway would pass it, or JSON text)
        Target("BaseMessage.from_json", "json", _protojson(am.BaseMessage), protojson),
        Target("ContentBase.from_json", "json", _protojson(am.ContentBase)),
        Target("Conversation.from_json", "json", _protojson(am.Conversation), ({"messages": list(protojson)},)),
        Target("StreamEvent.from_json", "json", _protojson(StreamEvent)),
        Target("BaseMessage.from_json(text)", "text", lambda t: am.BaseMessage.from_json(t, validate=True)),
        # seed 1 and seed 2
        Target("dict_form.messages_from_dicts", "json", dict_form.messages_from_dicts, _seed1()),
        Target("adaline.from_adaline", "json", adaline.from_adaline, _seeds("adaline", "messages")),
        Target("adaline.from_adaline_json", "text", adaline.from_adaline_json),
        Target("Session.import_jsonl", "text", Session.import_jsonl),
        # providers: requests
        Target("openai_chat.from_openai_chat", "json", openai_chat.from_openai_chat, chat_requests),
        Target(
            "openai_chat.from_openai_chat(pass)",
            "json",
            lambda v: openai_chat.from_openai_chat(v, pass_through_unknown=True, allow_invalid_arguments=True),
            chat_requests,
        ),
        Target("openai_responses.from_openai_responses", "json", _responses_payload, responses_requests),
        Target(
            "openai_responses.from_openai_responses(pass)",
            "json",
            lambda v: openai_responses.from_openai_responses(v, pass_through_unknown=True),
            responses_requests,
        ),
        Target("anthropic.from_anthropic", "json", anthropic.from_anthropic, anthropic_requests),
        Target(
            "anthropic.from_anthropic(pass)",
            "json",
            lambda v: anthropic.from_anthropic(v, pass_through_unknown=True),
            anthropic_requests,
        ),
        Target("gemini.from_gemini", "json", gemini.from_gemini, gemini_requests),
        Target(
            "gemini.from_gemini(pass)",
            "json",
            lambda v: gemini.from_gemini(v, pass_through_unknown=True),
            gemini_requests,
        ),
        # providers: responses
        Target("openai_chat.from_openai_chat_response", "json", openai_chat.from_openai_chat_response, chat_responses),
        Target(
            "openai_chat.from_openai_chat_response(pass)",
            "json",
            lambda v: openai_chat.from_openai_chat_response(v, pass_through_unknown=True),
            chat_responses,
        ),
        Target(
            "openai_responses.from_openai_responses_response",
            "json",
            openai_responses.from_openai_responses_response,
            responses_responses,
        ),
        Target(
            "openai_responses.from_openai_responses_response(pass)",
            "json",
            lambda v: openai_responses.from_openai_responses_response(v, pass_through_unknown=True),
            responses_responses,
        ),
        Target("anthropic.from_anthropic_response", "json", anthropic.from_anthropic_response, anthropic_responses),
        Target(
            "anthropic.from_anthropic_response(pass)",
            "json",
            lambda v: anthropic.from_anthropic_response(v, pass_through_unknown=True),
            anthropic_responses,
        ),
        Target("gemini.from_gemini_response", "json", gemini.from_gemini_response, gemini_responses),
        Target(
            "gemini.from_gemini_response(pass)",
            "json",
            lambda v: gemini.from_gemini_response(v, pass_through_unknown=True),
            gemini_responses,
        ),
        # stream parsers over decoded events (folded, as a consumer does)
        Target(
            "openai_chat_stream.stream_events",
            "events",
            lambda v: _fold(openai_chat_stream.stream_events(v)),
            _seeds("openai_chat_stream", "events"),
        ),
        Target(
            "openai_responses_stream.stream_events",
            "events",
            lambda v: _fold(openai_responses_stream.stream_events(v)),
            _seeds("openai_responses_stream", "events"),
        ),
        Target(
            "anthropic_stream.stream_events",
            "events",
            lambda v: _fold(anthropic_stream.stream_events(v)),
            _seeds("anthropic_stream", "events"),
        ),
        Target(
            "anthropic_stream.stream_events(pass)",
            "events",
            lambda v: _fold(anthropic_stream.stream_events(v, pass_through_unknown=True, strict=True)),
            _seeds("anthropic_stream", "events"),
        ),
        Target(
            "gemini_stream.stream_events",
            "events",
            lambda v: _fold(gemini_stream.stream_events(v)),
            _seeds("gemini_stream", "chunks"),
        ),
        # stream parsers over raw SSE lines
        Target(
            "openai_chat_stream.stream_events_from_sse",
            "lines",
            lambda v: _fold(openai_chat_stream.stream_events_from_sse(v)),
            _sse_seeds("openai_chat_stream"),
        ),
        Target(
            "openai_responses_stream.stream_events_from_sse",
            "lines",
            lambda v: _fold(openai_responses_stream.stream_events_from_sse(v)),
            _sse_seeds("openai_responses_stream"),
        ),
        Target(
            "anthropic_stream.stream_events_from_sse",
            "lines",
            lambda v: _fold(anthropic_stream.stream_events_from_sse(v)),
            _sse_seeds("anthropic_stream"),
        ),
        Target(
            "gemini_stream.stream_events_from_sse",
            "lines",
            lambda v: _fold(gemini_stream.stream_events_from_sse(v)),
            _sse_seeds("gemini_stream"),
        ),
        *_tool_targets(),
    ]


def _mcp_result(value: Any) -> am.ToolResultContent:
    """An MCP result read, then written back for MCP (what a runner and then a bridge do with it)."""
    result = mcp.from_mcp_result(value, "call-1")
    mcp.to_mcp_result(result, report=ConversionReport())
    return result


def _tool_targets() -> list[Target]:
    """MCP results and tool definitions in every format: each read, then written back in its format."""
    recorded = json.loads((GOLDEN / "mcp" / "everything_tools_call.json").read_text())
    listed = json.loads((GOLDEN / "mcp" / "everything_tools_list.json").read_text())
    definitions = tool_formats.from_tools("mcp", listed, report=ConversionReport())
    found = [Target("mcp.from_mcp_result", "json", _mcp_result, tuple(r["result"] for r in recorded))]
    for fmt in tool_formats.TOOL_FORMATS:

        def call(value: Any, fmt: tool_formats.ToolFormat = fmt) -> list[am.ToolDefinition]:
            read = tool_formats.from_tools(fmt, value, report=ConversionReport())
            tool_formats.to_tools(fmt, read, report=ConversionReport())
            return read

        seeds = (tool_formats.to_tools(fmt, definitions, report=ConversionReport()),)
        found.append(Target(f"tools.from_tools({fmt})", "json", call, seeds))
    return found


def check_value(value: Any) -> None:
    """A decoded value must be usable: valid against the contract, and it re-encodes."""
    if value is None:
        return
    if isinstance(value, list):
        for item in value:
            check_value(item)
        return
    if isinstance(value, am.Conversation):
        for message in value:
            check_value(message)
        return
    if isinstance(value, (am.BaseMessage, am.ContentBase)):
        value.to_bytes()
        found = am.violations(value)
        assert not found, f"a decoder returned an invalid {type(value).__name__}: {found}"
        return
    if isinstance(value, StreamEvent):
        value.to_bytes()
    if isinstance(value, am.ToolDefinition):
        value.to_bytes()
        found = am.violations(value)
        assert not found, f"a decoder returned an invalid ToolDefinition: {found}"


def run(target: Target, data: Any) -> Any:
    """Call the target on ``data``: a value (checked) or an AgentMsgError; anything else propagates."""
    try:
        value = target.call(data)
    except am.AgentMsgError as exc:
        str(exc)  # the message itself must not fail
        return exc
    check_value(value)
    return value


# --- mutation ------------------------------------------------------------------------------


def paths(value: Any, prefix: tuple[Any, ...] = (), *, max_depth: int = 64) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value (the root included), depth first, down to ``max_depth`` levels."""
    stack: list[tuple[tuple[Any, ...], Any]] = [(prefix, value)]
    while stack:
        path, item = stack.pop()
        yield path
        if len(path) >= max_depth:
            continue
        if isinstance(item, dict):
            stack.extend((((*path, key), child) for key, child in reversed(list(item.items()))))
        elif isinstance(item, list):
            stack.extend((((*path, i), child) for i, child in reversed(list(enumerate(item)))))


def get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _parent(root: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    return get(root, path[:-1]), path[-1]


OPS = ("drop", "retype", "swap", "duplicate", "odd", "empty", "wrap", "stringify", "deep")
DEEP = 5_000  # levels of the "deep" mutation: past Python's recursion limit, cheap to build


def mutate_once(root: Any, path: tuple[Any, ...], op: str, other: tuple[Any, ...], odd: Any) -> Any:
    """Apply one mutation at ``path`` (``other`` is a second path for swaps; ``odd`` a replacement value)."""
    if not path:  # the root itself
        if op in ("retype", "odd"):
            return copy.deepcopy(odd)
        if op == "wrap":
            return [root]
        if op == "deep":
            return nested(DEEP, "object" if isinstance(root, dict) else "array")
        if op == "empty":
            return type(root)() if isinstance(root, (dict, list, str)) else None
        return root
    parent, key = _parent(root, path)
    current = parent[key]
    if op == "drop":
        del parent[key]
    elif op in ("retype", "odd"):
        parent[key] = copy.deepcopy(odd)
    elif op == "swap" and other and other != path and not _prefix(path, other) and not _prefix(other, path):
        other_parent, other_key = _parent(root, other)
        parent[key], other_parent[other_key] = other_parent[other_key], parent[key]
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(current))
    elif op == "empty":
        parent[key] = type(current)() if isinstance(current, (dict, list, str)) else None
    elif op == "wrap":
        parent[key] = [current]
    elif op == "stringify":
        parent[key] = json.dumps(current)
    elif op == "deep":
        parent[key] = nested(DEEP, "object" if isinstance(current, dict) else "array")
    return root


def _prefix(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) <= len(b) and b[: len(a)] == a


def mutate(seed: Any, choices: Iterator[tuple[int, str, int, Any]]) -> Any:
    """Apply a sequence of (path index, op, other path index, odd value) mutations to a copy of ``seed``."""
    root = copy.deepcopy(seed)
    for path_index, op, other_index, odd in choices:
        found = list(paths(root))
        if not found:
            break
        path = found[path_index % len(found)]
        other = found[other_index % len(found)]
        try:
            root = mutate_once(root, path, op, other, odd)
        except (KeyError, IndexError, TypeError):
            continue  # a path an earlier mutation made stale
        except RecursionError:
            continue  # copying or stringifying a value an earlier "deep" mutation planted
    return root


def mutate_bytes(seed: bytes, choices: Iterator[tuple[int, int, int]]) -> bytes:
    """Apply (op, position, value) byte mutations: flip a byte, cut the tail, insert, or duplicate a span."""
    data = bytearray(seed)
    for op, position, value in choices:
        at = position % (len(data) + 1)
        if op == 0 and data and at < len(data):
            data[at] = value & 0xFF
        elif op == 1:
            del data[at:]
        elif op == 2:
            data[at:at] = bytes([value & 0xFF])
        elif op == 3:
            data[at:at] = data[at : at + (value % 16) + 1]
        else:
            data[at:at] = b"\xff\xff\xff\xff\x0f"  # a varint as long as a length can be
    return bytes(data)


ODD_LINES = [
    "data: {",
    "data: [DONE]",
    "data: null",
    "data: []",
    'data: {"type": 5}',
    'data: "\\ud800"',
    "event: error",
    "event: ping",
    "event: message_stop",
    "id: 1",
    "retry: x",
    ": comment",
    "",
    "data:" + "[" * DEEP + "]" * DEEP,
]


def mutate_lines(seed: list[str], choices: Iterator[tuple[int, int, str]]) -> list[str]:
    """Apply (op, position, line) mutations to SSE lines: drop, duplicate, replace or insert a line."""
    lines = list(seed)
    for op, position, line in choices:
        at = position % (len(lines) + 1)
        if op == 0 and at < len(lines):
            del lines[at]
        elif op == 1 and at < len(lines):
            lines.insert(at, lines[at])
        elif op == 2 and at < len(lines):
            lines[at] = line + "\n"
        else:
            lines.insert(at, line + "\n")
    return lines


def json_keys() -> list[str]:
    """Every key in the golden payloads: random JSON built from them reaches past the first type check."""
    found: set[str] = set()
    for target in targets():
        for seed in target.seeds:
            if isinstance(seed, (dict, list)):
                for path in paths(seed):
                    if path and isinstance(path[-1], str):
                        found.add(path[-1])
    return sorted(found)


class Hang(BaseException):
    """Raised in the main thread when a decoder runs past its CPU-time bound."""


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` once the block has used ``seconds`` of this process's CPU time (main thread only;
    elsewhere no bound).

    CPU time, not wall time: a loaded machine (other processes on the cores) does not move it, so it trips only
    on a decoder that spins (a hang, or work out of all proportion to its input), never on a slow machine.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def nested_message_bytes(levels: int) -> bytes:
    """A Message whose custom ``details`` Value nests ``levels`` list values (built in linear time)."""
    # Value.list_value = 6 (ListValue); ListValue.values = 1 (Value). Each level: 0x32 len (0x0a len ...).
    core = b"\x08\x00"  # Value.null_value (field 1) = NULL_VALUE
    sizes = [len(core)]
    prefixes: list[bytes] = []
    for _ in range(levels):
        inner = sizes[-1]
        value_in_list = b"\x0a" + varint(inner)
        list_value = b"\x32" + varint(inner + len(value_in_list))
        prefixes.append(list_value + value_in_list)
        sizes.append(inner + len(value_in_list) + len(list_value))
    details = b"".join(reversed(prefixes)) + core
    custom = b"\x0a\x01x" + b"\x1a" + varint(len(details)) + details  # custom_type = "x", details = 3
    return b"\x0a\x01m" + b"\x3a" + varint(len(custom)) + custom  # id = "m" (1), custom = 7


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
