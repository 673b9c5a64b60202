"""Real recorded provider traffic, read and written back with default options.

The corpus (``tests/corpus/``, sources in ``tests/corpus/manifest.json``) holds
request bodies, response bodies and streams recorded from the providers' own
APIs by public projects (HTTP cassettes, SDK fixtures). Every case is one test:

- ``request``: the format's request reader takes the body (a refusal fails the
  test: the provider accepted it), the request writer writes the messages
  back, and the two bodies must be equal after :ref:`normalisation` below;
  every remaining difference must be covered by a reported ``Loss``.
- ``response``: likewise with the response reader and writer; then usage and
  stop reason of the message are checked against the raw JSON, by the rules
  the module docs state (``_expected_usage``).
- ``stream``: the stream is parsed (lines with and without their line ends:
  both are what clients hand over) and folded; the fold must finish without an
  error and equal the fold of the other line form; it is compared with the
  provider's own accumulation of the same stream (``openai``'s
  ``ChatCompletionStreamState``, with two gaps of it on Azure OpenAI streams filled
  from the chunks: the id, model and created of the first chunk that has them, where
  the state takes the blanks of Azure's opening prompt-filter chunk, and the choice's
  last non-empty ``content_filter_results``, where the state keeps its first chunk's;
  an Azure recording of several calls is one stream per prompt-filter chunk;
  ``anthropic``'s (beta) ``accumulate_event``, the Responses stream's
  ``response.completed`` object, and for Gemini, which has
  no SDK accumulation in the dev extra, the chunk merge of
  ``_gemini_accumulate``): first as messages (the fold equals the response
  reader's reading of that accumulation, message id and timestamp aside),
  then as JSON (the response writer's output for the fold equals the
  accumulation after normalisation, every difference covered by a ``Loss``),
  and usage and stop reason against the accumulation's raw JSON.

.. _normalisation:

Normalisation (applied to both sides of every comparison, nothing else):

1. ``null`` values, empty lists and empty objects equal an absent key.
2. Keys that are not message data are not compared: request settings (only
   the message keys of ``_REQUEST_KEYS`` are compared: ``model``, ``tools``,
   sampling parameters, ``stream`` and so on are the caller's), caching hints
   (``cache_control``, ``prompt_cache_breakpoint``), and the response
   metadata left out by ``_RESPONSE_KEYS`` and ``_IGNORED_RESPONSE_KEYS``
   (echoed request settings, billing and routing fields, moderation scores).
3. In usage objects a count of 0 equals an absent count.
4. Equivalent spellings the formats define: a string content equals one text
   part; role ``developer`` equals ``system``; consecutive turns of one role
   are one turn (Anthropic, Gemini: the APIs merge them); Anthropic's string
   ``system`` and ``tool_result`` content equal one text block and
   ``is_error: false`` equals its absence; Responses' ``instructions`` equal a
   leading system message, a string ``input`` one user message, an item
   without ``type`` a ``message`` item, ``input_text`` in an assistant message
   ``output_text``, and an assistant message item of several parts one item
   per part; Gemini's snake_case keys equal their lowerCamelCase names, bytes
   (``data``, ``thoughtSignature``) in the URL-safe base64 alphabet or unpadded
   equal the standard padded spelling (ProtoJSON reads both), a
   content without ``role`` (or ``function`` / ``tool``) a ``user`` content,
   and the ``role`` of ``systemInstruction`` is not compared; Vertex AI's integer
   ``finishReason`` / ``blockReason`` (``enum-encoding=int``) equal their names
   (``_VERTEX_FINISH``, ``_VERTEX_BLOCK``: ProtoJSON reads both).

A difference is covered by a ``Loss`` as follows. A reader's loss (when a
reader takes ``report=``) names a JSON path of the payload and covers every
difference under it. A request writer's loss names a message (``[i]...``) and
covers the differences under the payload entries that message was read from
(found by reading growing prefixes of the payload) and the system keys (where
a moved system message lands), and a whole turn or part on one side only in
the turns either side of them (a turn left out or moved lets its neighbours
merge). Request turns are aligned by content before they are compared, so a
turn left out is one difference, not a shift of every later turn. A response
writer's loss covers the differences in its area: ``usage`` the usage object, ``stop_reason``
the stop fields, ``provenance`` the id and model, ``error`` the error fields,
anything else the content.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._beta_messages import accumulate_event
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from agentmsg import AssistantMessage
from agentmsg.providers import (
    anthropic,
    anthropic_stream,
    gemini,
    gemini_stream,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from agentmsg.providers._common import ConversionReport, Loss
from agentmsg.streaming import fold, iter_sse

CORPUS = Path(__file__).parent / "corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CASES = {case["id"]: case for case in MANIFEST["cases"]}


@dataclass(frozen=True)
class Format:
    read: Callable[..., Any]
    write: Callable[..., Any]
    read_response: Callable[..., AssistantMessage]
    write_response: Callable[..., dict[str, Any]]
    stream: Any  # the stream module: stream_events / stream_events_from_sse


FORMATS = {
    "openai_chat": Format(
        openai_chat.from_openai_chat,
        openai_chat.to_openai_chat,
        openai_chat.from_openai_chat_response,
        openai_chat.to_openai_chat_response,
        openai_chat_stream,
    ),
    "openai_responses": Format(
        openai_responses.from_openai_responses,
        openai_responses.to_openai_responses,
        openai_responses.from_openai_responses_response,
        openai_responses.to_openai_responses_response,
        openai_responses_stream,
    ),
    "anthropic": Format(
        anthropic.from_anthropic,
        anthropic.to_anthropic,
        anthropic.from_anthropic_response,
        anthropic.to_anthropic_response,
        anthropic_stream,
    ),
    "gemini": Format(
        gemini.from_gemini,
        gemini.to_gemini,
        gemini.from_gemini_response,
        gemini.to_gemini_response,
        gemini_stream,
    ),
}

# The message keys of a request body (and where its list of turns is); the rest are request settings.
_REQUEST_KEYS = {
    "openai_chat": ("messages", ()),
    "openai_responses": ("input", ("instructions",)),
    "anthropic": ("messages", ("system",)),
    "gemini": ("contents", ("systemInstruction",)),
}
# The keys of a response body that are compared.
_RESPONSE_KEYS = {
    "openai_chat": ("id", "model", "created", "choices", "usage", "prompt_filter_results", "prompt_annotations"),
    "openai_responses": ("id", "model", "created_at", "status", "incomplete_details", "error", "output", "usage"),
    "anthropic": (
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "stop_details",
        "container",
        "usage",
    ),
    "gemini": ("candidates", "usageMetadata", "modelVersion", "responseId", "createTime", "promptFeedback"),
}
# Keys below the compared ones that are not message data: routing, billing, moderation scores.
_IGNORED_RESPONSE_KEYS = {
    "openai_chat": {"usage": ("service_tier",)},
    "openai_responses": {},
    "anthropic": {"usage": ("service_tier", "inference_geo")},
    "gemini": {"usageMetadata": ("trafficType", "serviceTier"), "candidates[]": ("safetyRatings", "index")},
}
_USAGE_KEYS = {"usage", "usageMetadata"}

# --------------------------------------------------------------------------- normalisation


def _prune(value: Any) -> Any:
    """Rule 1: drop nulls, empty lists and empty objects (after pruning their insides)."""
    if isinstance(value, Mapping):
        out = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v not in ([], {})}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _drop_zero_counts(value: Any) -> Any:
    """Rule 3, inside usage objects."""
    if isinstance(value, Mapping):
        return {k: _drop_zero_counts(v) for k, v in value.items() if not (type(v) is int and v == 0)}
    if isinstance(value, list):
        return [_drop_zero_counts(v) for v in value]
    return value


_CACHE_HINTS = frozenset({"cache_control", "prompt_cache_breakpoint"})


def _drop_cache_control(value: Any) -> Any:
    """Caching hints (Anthropic ``cache_control``, OpenAI ``prompt_cache_breakpoint``) are no message data."""
    if isinstance(value, Mapping):
        return {k: _drop_cache_control(v) for k, v in value.items() if k not in _CACHE_HINTS}
    if isinstance(value, list):
        return [_drop_cache_control(v) for v in value]
    return value


def _text_parts(content: Any, part_type: str) -> Any:
    if isinstance(content, str):
        return [{"type": part_type, "text": content}] if content else []
    return content


def _merge_turns(turns: list[Any], role_key: str, list_key: str) -> list[Any]:
    out: list[Any] = []
    for turn in turns:
        if (
            out
            and isinstance(turn, dict)
            and isinstance(out[-1], dict)
            and set(turn) <= {role_key, list_key}
            and set(out[-1]) <= {role_key, list_key}
            and turn.get(role_key) == out[-1].get(role_key)
            and isinstance(turn.get(list_key), list)
            and isinstance(out[-1].get(list_key), list)
        ):
            out[-1] = {**out[-1], list_key: [*out[-1][list_key], *turn[list_key]]}
        else:
            out.append(turn)
    return out


def _norm_chat_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    message = dict(message)
    if message.get("role") == "developer":
        message["role"] = "system"
    if "content" in message:
        message["content"] = _text_parts(message["content"], "text")
    return message


def _norm_responses_item(item: Any) -> list[Any]:
    if not isinstance(item, dict):
        return [item]
    item = dict(item)
    if "type" not in item and "role" in item:
        item["type"] = "message"
    if item.get("type") != "message":
        return [item]
    if item.get("role") == "developer":
        item["role"] = "system"
    assistant = item.get("role") == "assistant"
    content = _text_parts(item.get("content"), "output_text" if assistant else "input_text")
    if assistant and isinstance(content, list):
        content = [
            {**part, "type": "output_text"} if isinstance(part, dict) and part.get("type") == "input_text" else part
            for part in content
        ]
        if len(content) > 1:
            return [{**item, "content": [part]} for part in content]
    item["content"] = content
    return [item]


_URL_SAFE = str.maketrans("-_", "+/")
_GEMINI_BYTES = frozenset({"data", "thoughtSignature"})


def _gemini_camel(value: Any) -> Any:
    """Gemini's spellings: lowerCamelCase keys; bytes in the standard base64 alphabet, padded."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            name = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)
            if name in ("args", "response"):
                out[name] = item  # free-form JSON the caller wrote: its keys are data, not field names
            elif name in _GEMINI_BYTES and isinstance(item, str):
                standard = item.translate(_URL_SAFE).rstrip("=")
                out[name] = standard + "=" * (-len(standard) % 4)
            else:
                out[name] = _gemini_camel(item)
        return out
    if isinstance(value, list):
        return [_gemini_camel(v) for v in value]
    return value


def _norm_gemini_content(content: Any) -> Any:
    if isinstance(content, dict) and content.get("role") in (None, "function", "tool"):
        return {**content, "role": "user"}
    return content


def normalise_request(fmt: str, body: Mapping[str, Any]) -> dict[str, Any]:
    turns_key, extra_keys = _REQUEST_KEYS[fmt]
    body = {k: body[k] for k in (turns_key, *extra_keys) if k in body}
    body = _drop_cache_control(body)
    if fmt == "openai_chat":
        body["messages"] = [_norm_chat_message(m) for m in body.get("messages") or []]
    elif fmt == "openai_responses":
        items = body.get("input")
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        instructions = body.pop("instructions", None)
        if isinstance(instructions, str) and instructions:
            items = [{"type": "message", "role": "system", "content": instructions}, *(items or [])]
        body["input"] = [part for item in items or [] for part in _norm_responses_item(item)]
    elif fmt == "anthropic":
        if "system" in body:
            body["system"] = _text_parts(body["system"], "text")
        turns = []
        for turn in body.get("messages") or []:
            if isinstance(turn, dict):
                content = _text_parts(turn.get("content"), "text")
                if isinstance(content, list):
                    content = [_norm_anthropic_block(b) for b in content]
                turns.append({**turn, "content": content})
            else:
                turns.append(turn)
        body["messages"] = _merge_turns(turns, "role", "content")
    elif fmt == "gemini":
        body = _gemini_camel(body)
        if isinstance(body.get("systemInstruction"), dict):
            body["systemInstruction"] = {k: v for k, v in body["systemInstruction"].items() if k != "role"}
        body["contents"] = _merge_turns([_norm_gemini_content(c) for c in body.get("contents") or []], "role", "parts")
    return _prune(body)


def _norm_anthropic_block(block: Any) -> Any:
    if isinstance(block, dict) and block.get("type") == "tool_result":
        block = {**block, "content": _text_parts(block.get("content"), "text")}
        if block.get("is_error") is False:
            del block["is_error"]
    return block


# Vertex AI's integer enum encoding (``$alt=json;enum-encoding=int``): ProtoJSON reads a number and its name
# alike; the numbers of google.cloud.aiplatform.v1 content.proto that the corpus holds.
_VERTEX_FINISH = {1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY"}
_VERTEX_BLOCK = {1: "SAFETY", 2: "OTHER"}


def _vertex_enum_names(body: dict[str, Any]) -> dict[str, Any]:
    for candidate in body.get("candidates") or []:
        if isinstance(candidate, dict) and type(candidate.get("finishReason")) is int:
            candidate["finishReason"] = _VERTEX_FINISH[candidate["finishReason"]]
    feedback = body.get("promptFeedback")
    if isinstance(feedback, dict) and type(feedback.get("blockReason")) is int:
        feedback["blockReason"] = _VERTEX_BLOCK[feedback["blockReason"]]
    return body


def normalise_response(fmt: str, body: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: body[k] for k in _RESPONSE_KEYS[fmt] if k in body}
    if fmt == "gemini":
        body = _vertex_enum_names(_gemini_camel(body))
    for where, keys in _IGNORED_RESPONSE_KEYS[fmt].items():
        if where.endswith("[]"):
            body[where[:-2]] = [
                {k: v for k, v in item.items() if k not in keys} if isinstance(item, dict) else item
                for item in body.get(where[:-2]) or []
            ]
        elif isinstance(body.get(where), dict):
            body[where] = {k: v for k, v in body[where].items() if k not in keys}
    for key in _USAGE_KEYS & body.keys():
        body[key] = _drop_zero_counts(body[key])
    if fmt == "anthropic":
        body = _drop_cache_control(body)
    return _prune(body)


# --------------------------------------------------------------------------- differences and their losses


@dataclass(frozen=True)
class Difference:
    path: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return f"{self.path}: recorded {_show(self.expected)}, written {_show(self.got)}"


_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def differences(expected: Any, got: Any, path: str = "") -> list[Difference]:
    if isinstance(expected, dict) and isinstance(got, dict):
        out: list[Difference] = []
        for key in list(expected) + [k for k in got if k not in expected]:
            sub = f"{path}.{key}" if path else key
            out += differences(expected.get(key, _MISSING), got.get(key, _MISSING), sub)
        return out
    if isinstance(expected, list) and isinstance(got, list):
        out = []
        for i in range(max(len(expected), len(got))):
            out += differences(
                expected[i] if i < len(expected) else _MISSING, got[i] if i < len(got) else _MISSING, f"{path}[{i}]"
            )
        return out
    if expected is got or (type(expected) is type(got) and expected == got):
        return []
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(got, numbers) and bool not in (type(expected), type(got)):
        return [] if expected == got else [Difference(path, expected, got)]  # 1 and 1.0 are one JSON number
    return [Difference(path, expected, got)]


def request_differences(fmt: str, expected: dict[str, Any], got: dict[str, Any]) -> list[Difference]:
    """Differences of two normalised request bodies, the list of turns aligned first.

    Turns are matched by content (``difflib``), so a turn left out or added is
    one difference at its own index and does not shift every later turn;
    the turns of a changed stretch are compared pairwise, in order.
    """
    turns_key = _REQUEST_KEYS[fmt][0]
    out = differences(
        {k: v for k, v in expected.items() if k != turns_key}, {k: v for k, v in got.items() if k != turns_key}
    )
    ours, theirs = expected.get(turns_key, []), got.get(turns_key, [])
    if not (isinstance(ours, list) and isinstance(theirs, list)):
        return out + differences(ours, theirs, turns_key)
    keys = ([json.dumps(t, sort_keys=True) for t in ours], [json.dumps(t, sort_keys=True) for t in theirs])
    matcher = difflib.SequenceMatcher(a=keys[0], b=keys[1], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for k in range(paired):
            out += differences(ours[i1 + k], theirs[j1 + k], f"{turns_key}[{i1 + k}]")
        out += [Difference(f"{turns_key}[{k}]", ours[k], _MISSING) for k in range(i1 + paired, i2)]
        # a turn the writer added is named by the recorded turn it stands before
        out += [Difference(f"{turns_key}[{i2}]", _MISSING, theirs[k]) for k in range(j1 + paired, j2)]
    return out


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _message_sources(fmt: str, payload: Mapping[str, Any]) -> list[list[str]]:
    """For each message the reader gives, the paths of the normalised payload it was read from.

    Found by reading growing prefixes of the payload's turns; a turn's path is
    its index after normalisation (which merges and splits turns).
    """
    turns_key, extra_keys = _REQUEST_KEYS[fmt]
    turns = payload.get(turns_key)
    read = FORMATS[fmt].read
    if not isinstance(turns, list):
        return [[turns_key, *extra_keys] for _ in read(payload)]
    base = {k: payload[k] for k in extra_keys if k in payload}
    normalised = [len(normalise_request(fmt, {turns_key: turns[:k]}).get(turns_key, [])) for k in range(len(turns) + 1)]
    starts: list[int] = []  # raw turn index (-1: the extra keys) at which each message first appears
    count = 0
    for k in range(len(turns) + 1):
        try:
            now = len(read({**base, turns_key: turns[:k]}))
        except ValueError:  # a prefix can be invalid alone (an answer without its call): defer
            continue
        starts += [k - 1] * max(0, now - count)
        count = max(count, now)
    sources = []
    for i, start in enumerate(starts):
        if start < 0:
            sources.append(list(extra_keys))
            continue
        # up to the turn before the next message's first (or that turn itself when one turn gave both)
        end = max(start, starts[i + 1] - 1 if i + 1 < len(starts) else len(turns) - 1)
        places: set[int] = set()
        for t in range(start, end + 1):
            # a turn normalised into new entries is those; one merged into the entry before is that one
            places |= set(range(normalised[t], normalised[t + 1])) or {max(0, normalised[t] - 1)}
        first, last = min(places), max(places)
        sources.append([f"{turns_key}[{t}]" for t in range(first, last + 1)])
    return sources


_MESSAGE_INDEX = re.compile(r"^\[(\d+)\]")


def uncovered_request(
    fmt: str, payload: Mapping[str, Any], diffs: list[Difference], read_losses: list[Loss], write_losses: list[Loss]
) -> list[Difference]:
    if not diffs:
        return []
    prefixes = [loss.path for loss in read_losses]
    neighbours: list[str] = []
    if write_losses:
        turns_key, extra_keys = _REQUEST_KEYS[fmt]
        sources = _message_sources(fmt, payload)
        for loss in write_losses:
            match = _MESSAGE_INDEX.match(loss.path)
            if match is None:
                prefixes.append("")
            elif int(match.group(1)) < len(sources):
                source = sources[int(match.group(1))]
                turns = [int(t) for t in re.findall(r"\[(\d+)\]", " ".join(source))]
                prefixes += [*source, *extra_keys]
                if turns:
                    neighbours += [f"{turns_key}[{min(turns) - 1}]", f"{turns_key}[{max(turns) + 1}]"]
    return [
        d
        for d in diffs
        if not any(p == "" or _under(d.path, p) for p in prefixes)
        and not (_whole_turn_or_part(d) and any(_under(d.path, p) for p in neighbours))
    ]


def _whole_turn_or_part(d: Difference) -> bool:
    """A turn, or one part of a turn, that is on one side only (what a merge of neighbours gives)."""
    return (d.expected is _MISSING or d.got is _MISSING) and bool(re.fullmatch(r"\w+\[\d+\](\.\w+\[\d+\])?", d.path))


_AREAS = {
    # loss area -> the response keys it covers
    "openai_chat": {
        "usage": ("usage",),
        "stop_reason": ("choices[0].finish_reason",),
        "provenance": ("id", "model"),
        "error": (),
        "contents": ("choices[0].message", "choices[0].logprobs"),
    },
    "openai_responses": {
        "usage": ("usage",),
        "stop_reason": ("status", "incomplete_details"),
        "provenance": ("id", "model"),
        "error": ("error", "status"),
        "contents": ("output",),
    },
    "anthropic": {
        "usage": ("usage",),
        "stop_reason": ("stop_reason", "stop_sequence", "stop_details"),
        "provenance": ("id", "model"),
        "error": (),
        "contents": ("content", "container"),
    },
    "gemini": {
        "usage": ("usageMetadata",),
        "stop_reason": ("candidates[0].finishReason", "promptFeedback"),
        "provenance": ("modelVersion", "responseId"),
        "error": ("candidates[0].finishMessage",),
        "contents": ("candidates",),
    },
}


def _loss_area(loss: Loss) -> str:
    head = re.split(r"[.\[]", loss.path, maxsplit=1)[0]
    if head in ("usage", "provenance", "error"):
        return head
    if head.startswith("stop_reason"):
        return "stop_reason"
    return "contents"


def uncovered_response(fmt: str, diffs: list[Difference], read_losses: list[Loss], write_losses: list[Loss]) -> list:
    prefixes = [loss.path for loss in read_losses]
    for loss in write_losses:
        prefixes += _AREAS[fmt][_loss_area(loss)]
    return [d for d in diffs if not any(p == "" or _under(d.path, p) for p in prefixes)]


# --------------------------------------------------------------------------- reading with default options


def _read(function: Callable[..., Any], payload: Any) -> tuple[Any, list[Loss]]:
    """Call a reader with default options; pass a report when the reader takes one."""
    if "report" in inspect.signature(function).parameters:
        report = ConversionReport()
        return function(payload, report=report), list(report.losses)
    return function(payload), []


def _write(function: Callable[..., Any], value: Any) -> tuple[Any, list[Loss]]:
    report = ConversionReport()
    return function(value, report=report), list(report.losses)


def _message_view(message: AssistantMessage) -> dict[str, Any]:
    view = message.to_json_dict()
    view.pop("id", None)
    view.pop("timestamp", None)
    return view


def _comparable_with_sdk(fmt: str, view: Any) -> Any:
    """A message view as it can be compared with the reading of the SDK's accumulation of a stream.

    A fold keeps what the stream sent, the SDK's accumulation is a typed object:

    - the JSON text of each provider block (``ProviderContent.json``) is compared
      parsed: the SDK dumps a block's keys in its field order (Anthropic's:
      alphabetical), not the wire's, and sets to ``null`` the fields a delta leaves
      out (``compaction_delta`` without ``encrypted_content``);
    - Anthropic tool-call argument text (``toolCall.arguments``,
      ``hostedToolCall.input``) is compared parsed: the SDK keeps only the object it
      parsed from the ``input_json_delta`` fragments, so the reader can only
      re-serialise it, while the fold keeps the model's text (pretty-printed JSON
      stays so: agentmsg keeps argument text verbatim).

    Values, nesting and list order are still compared; key order, which JSON does
    not give meaning to, is not, and ``null`` equals an absent key (normalisation 1).
    Text that is not JSON is compared as text.
    """
    if isinstance(view, dict):
        out = {k: _comparable_with_sdk(fmt, v) for k, v in view.items()}
        if set(view) >= {"provider", "type", "json"}:
            out["json"] = _parsed_text(view["json"], drop_nulls=True)
        if fmt == "anthropic":
            for arm, field in (("toolCall", "arguments"), ("hostedToolCall", "input")):
                if isinstance(out.get(arm), dict) and field in out[arm]:
                    out[arm][field] = _parsed_text(out[arm][field], drop_nulls=False)
        return out
    if isinstance(view, list):
        return [_comparable_with_sdk(fmt, v) for v in view]
    return view


def _parsed_text(text: Any, *, drop_nulls: bool) -> Any:
    if isinstance(text, str):
        with contextlib.suppress(ValueError):  # not JSON: compared as text
            value = json.loads(text)
            return _drop_nulls(value) if drop_nulls else value
    return text


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


# --------------------------------------------------------------------------- usage and stop reason from raw JSON


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _sub(a: int | None, *others: int | None) -> int | None:
    return None if a is None else a - sum(o or 0 for o in others)


def _expected_usage(fmt: str, raw: Mapping[str, Any]) -> tuple[dict[str, int | None] | None, str]:
    """(usage fields by the module docs' rules, or None without usage; the raw stop reason)."""
    if fmt == "anthropic":
        u = raw.get("usage")
        stop = raw.get("stop_reason") or ""
        if not isinstance(u, dict):
            return None, stop
        details = u.get("output_tokens_details") or {}
        return {
            "input_tokens": _int(u.get("input_tokens")),
            "output_tokens": _int(u.get("output_tokens")),
            "cache_read_tokens": _int(u.get("cache_read_input_tokens")),
            "cache_write_tokens": _int(u.get("cache_creation_input_tokens")),
            "reasoning_tokens": _int(details.get("thinking_tokens")),
        }, stop
    if fmt == "openai_chat":
        choices = raw.get("choices") or [{}]
        stop = choices[0].get("finish_reason") or ""
        u = raw.get("usage")
        if not isinstance(u, dict):
            return None, stop
        pd, cd = u.get("prompt_tokens_details") or {}, u.get("completion_tokens_details") or {}
        cached, written = _int(pd.get("cached_tokens")), _int(pd.get("cache_write_tokens"))
        return {
            "input_tokens": _sub(_int(u.get("prompt_tokens")), cached, written),
            "output_tokens": _int(u.get("completion_tokens")),
            "cache_read_tokens": cached,
            "cache_write_tokens": written,
            "reasoning_tokens": _int(cd.get("reasoning_tokens")),
            "total_tokens": _int(u.get("total_tokens")),
        }, stop
    if fmt == "openai_responses":
        incomplete = raw.get("incomplete_details") or {}
        stop = incomplete.get("reason") or raw.get("status") or ""
        u = raw.get("usage")
        if not isinstance(u, dict):
            return None, stop
        idt, odt = u.get("input_tokens_details") or {}, u.get("output_tokens_details") or {}
        cached, written = _int(idt.get("cached_tokens")), _int(idt.get("cache_write_tokens"))
        return {
            "input_tokens": _sub(_int(u.get("input_tokens")), cached, written),
            "output_tokens": _int(u.get("output_tokens")),
            "cache_read_tokens": cached,
            "cache_write_tokens": written,
            "reasoning_tokens": _int(odt.get("reasoning_tokens")),
            "total_tokens": _int(u.get("total_tokens")),
        }, stop
    raw = _vertex_enum_names(_gemini_camel(raw))
    candidates = raw.get("candidates") or []
    stop = (
        (candidates[0].get("finishReason") if candidates else None)
        or (raw.get("promptFeedback") or {}).get("blockReason")
        or ""
    )
    u = raw.get("usageMetadata")
    if not isinstance(u, dict):
        return None, stop
    prompt, cached = _int(u.get("promptTokenCount")), _int(u.get("cachedContentTokenCount"))
    answer, thoughts = _int(u.get("candidatesTokenCount")), _int(u.get("thoughtsTokenCount"))
    return {
        "input_tokens": _sub(prompt, cached),
        "output_tokens": None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0),
        "cache_read_tokens": cached,
        "reasoning_tokens": thoughts,
        "total_tokens": _int(u.get("totalTokenCount")),
    }, stop


def check_usage_and_stop(fmt: str, raw: Mapping[str, Any], message: AssistantMessage) -> list[str]:
    problems = []
    expected, stop = _expected_usage(fmt, raw)
    if message.stop_reason_raw != stop:
        problems.append(f"stop_reason_raw {message.stop_reason_raw!r}, the JSON says {stop!r}")
    if expected is None:
        if message.usage is not None and message.usage.reported:
            problems.append(f"usage {sorted(message.usage.reported)} read from a payload without usage")
        return problems
    usage = message.usage
    for field, value in expected.items():
        got = usage.known(field) if usage is not None else None
        if got != value:
            problems.append(f"usage.{field} is {got}, the JSON says {value}")
    return problems


# --------------------------------------------------------------------------- the providers' own stream accumulations


def _sse_data(text: str) -> Iterator[dict[str, Any]]:
    for event in iter_sse(text.splitlines(keepends=True)):
        if event.data.strip() and event.data.strip() != "[DONE]":
            yield json.loads(event.data)


def _strip_keys(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_strip_keys(v, keys) for v in value]
    return value


def sdk_accumulation(fmt: str, stream: str | list[Any]) -> dict[str, Any] | None:
    """The provider SDK's final object for a stream (raw SSE text, or the list of its decoded events)."""
    events: list[dict[str, Any]] = list(_sse_data(stream)) if isinstance(stream, str) else stream
    if fmt == "openai_chat":
        state = ChatCompletionStreamState()
        usage = None
        for chunk in events:
            list(state.handle_chunk(ChatCompletionChunk.construct(**chunk)))
            usage = chunk.get("usage") or usage
        final = state.get_final_completion().to_dict()
        for key in ("id", "model", "created"):
            if not final.get(key):
                # the state takes these from the first chunk, which on Azure OpenAI is the prompt-filter
                # chunk (id and model "", created 0): the completion's are those of its first real chunk
                final[key] = next((chunk[key] for chunk in events if chunk.get(key)), final.get(key))
        filters = [
            choice["content_filter_results"]
            for chunk in events
            for choice in chunk.get("choices") or []
            if choice.get("index") == 0 and choice.get("content_filter_results")
        ]
        if filters and final.get("choices"):
            # Azure OpenAI: the state keeps the choice's content_filter_results of its first chunk (often {})
            # and never updates them; the completion's are the last the stream sent (the verdict in force)
            final["choices"][0]["content_filter_results"] = filters[-1]
        if usage is not None and final.get("usage") is None:
            # the state copies every chunk's usage, so a later chunk's "usage": null (the moderation
            # chunk after the usage chunk) wipes the counts: take the last counts the stream sent
            final["usage"] = usage
        for choice in final.get("choices") or []:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                call.pop("index", None)  # the chunk's merge key, which the snapshot keeps; no ChatCompletion field
        return _strip_keys(final, frozenset({"parsed", "parsed_arguments"}))
    if fmt == "anthropic":
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in events:
            if event.get("type") in ("ping", "error"):
                continue
            # the beta accumulator (``client.beta.messages.stream``): the corpus streams use beta features
            # (MCP connector, compaction, advisor, fallback) whose deltas and usage fields the GA accumulator
            # skips (mcp_tool_use input, compaction_delta, usage.iterations, context_management); no request
            # headers are recorded, so JSON input parses in its default partial mode
            snapshot = accumulate_event(
                event=event,  # type: ignore[arg-type]
                current_snapshot=snapshot,
                json_bufs=buffers,
                request_headers={},  # type: ignore[arg-type]
            )
        if snapshot is None:
            return None
        # JSON mode: the wire's values (``container.expires_at`` is a datetime in python mode); no
        # serialiser warnings: the SDK's typed unions predate some block and tool names the API sends now
        # (``advisor``), and the values are dumped as received all the same
        return _strip_keys(snapshot.to_dict(mode="json", warnings=False), frozenset({"parsed_output"}))
    if fmt == "openai_responses":
        final = None
        for event in events:
            if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                final = event["response"]
        return final
    return _gemini_accumulate(events)


def _gemini_accumulate(chunks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One response from ``streamGenerateContent`` chunks (google-genai keeps the chunks apart).

    Parts are concatenated in order, empty text deltas (``{"text": ""}``)
    left out; a text part directly after a text part of
    the same ``thought`` flag is appended to it unless both carry a
    ``thoughtSignature`` (the signature then sits on the merged part). The last
    chunk's ``finishReason``, ``usageMetadata``, ``modelVersion`` and
    ``responseId`` win; candidate metadata (grounding, citations...) of later
    chunks replaces earlier. A function call streamed in pieces (Vertex AI
    ``streamFunctionCallArguments``: a ``functionCall`` with ``name`` and
    ``willContinue: true``, then ``functionCall`` parts holding ``partialArgs``,
    until one without ``willContinue``) is one call, its ``args`` built from
    the pieces (``_gemini_partial_args``): a response holds whole calls only.
    """
    final: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    candidate: dict[str, Any] = {}
    streamed: dict[str, Any] | None = None  # the function call being streamed: its part and args pieces
    for chunk in (_gemini_camel(c) for c in chunks):
        for key in ("usageMetadata", "modelVersion", "responseId", "createTime", "promptFeedback"):
            if key in chunk:
                final[key] = chunk[key]
        for cand in (chunk.get("candidates") or [])[:1]:
            for key, value in cand.items():
                if key != "content":
                    candidate[key] = value
            content = cand.get("content") or {}
            if "role" in content:
                candidate["content_role"] = content["role"]
            for part in content.get("parts") or []:
                call = part.get("functionCall")
                if isinstance(call, dict) and (streamed is not None or call.get("willContinue")):
                    if streamed is None:  # the call's first piece: its name (and signature)
                        streamed = {"part": {**part, "functionCall": {"name": call.get("name")}}, "pieces": []}
                    streamed["pieces"] += call.get("partialArgs") or []
                    if not call.get("willContinue"):
                        done = streamed["part"]
                        args = _gemini_partial_args(streamed["pieces"])
                        if args:
                            done["functionCall"]["args"] = args
                        parts.append(done)
                        streamed = None
                    continue
                if part == {"text": ""}:
                    continue  # an empty text delta (streams end with one) adds nothing
                last = parts[-1] if parts else None
                if (
                    last is not None
                    and isinstance(part.get("text"), str)
                    and isinstance(last.get("text"), str)
                    and bool(part.get("thought")) == bool(last.get("thought"))
                    and not ("thoughtSignature" in part and "thoughtSignature" in last)
                    and set(part) <= {"text", "thought", "thoughtSignature"}
                    and set(last) <= {"text", "thought", "thoughtSignature"}
                ):
                    merged = {**last, "text": last["text"] + part["text"]}
                    if "thoughtSignature" in part:
                        merged["thoughtSignature"] = part["thoughtSignature"]
                    parts[-1] = merged
                else:
                    parts.append(dict(part))
    if streamed is not None:  # the stream ended inside a streamed call: it holds what arrived
        args = _gemini_partial_args(streamed["pieces"])
        parts.append(
            {
                **streamed["part"],
                "functionCall": {**streamed["part"]["functionCall"], **({"args": args} if args else {})},
            }
        )
    if candidate or parts:
        role = candidate.pop("content_role", "model")
        final["candidates"] = [{**candidate, "content": {"role": role, "parts": parts}}]
    return final


def _gemini_partial_args(pieces: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``args`` object of streamed ``partialArgs``: each sets the value at its ``jsonPath``
    (``$.a.b[0]``); a ``stringValue`` after a piece of the same path with ``willContinue`` is appended."""
    args: dict[str, Any] = {}
    continued: set[str] = set()
    for piece in pieces:
        path = piece["jsonPath"]
        steps: list[Any] = [
            int(index) if index else name for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:])
        ]
        value = next((piece[k] for k in ("stringValue", "numberValue", "boolValue", "nullValue") if k in piece), None)
        if "nullValue" in piece:
            value = None
        target: Any = args
        for step, following in itertools.pairwise(steps):
            fresh: Any = [] if isinstance(following, int) else {}
            if isinstance(step, int):
                target.extend([None] * (step + 1 - len(target)))
                if target[step] is None:
                    target[step] = fresh
            else:
                target.setdefault(step, fresh)
            target = target[step]
        last = steps[-1]
        if isinstance(last, int):
            target.extend([None] * (last + 1 - len(target)))
        if path in continued and isinstance(value, str):
            target[last] += value
        else:
            target[last] = value
        (continued.add if piece.get("willContinue") else continued.discard)(path)
    return args


def _merge_gemini_text(body: dict[str, Any]) -> dict[str, Any]:
    """The text merge of ``_gemini_accumulate``, applied to a written response so both sides compare alike."""
    return _gemini_accumulate([body])


# --------------------------------------------------------------------------- the test


def _case_ids() -> list[str]:
    return sorted(CASES)


def _load(case: Mapping[str, Any]) -> Any:
    text = (CORPUS / case["file"]).read_bytes().decode()  # as recorded: CRLF line ends stay (Gemini's SSE has them)
    return text if case["file"].endswith(".sse") else json.loads(text)


def _fail(case_id: str, problems: list[str]) -> None:
    shown = "\n  ".join(problems[:40])
    more = f"\n  ... and {len(problems) - 40} more" if len(problems) > 40 else ""
    pytest.fail(f"{case_id}:\n  {shown}{more}", pytrace=False)


# ids given explicitly: pytest 9 replaces an automatic id longer than 100 characters with "case_idN",
# which hides which case failed (many pydantic-ai case ids are longer).
@pytest.mark.parametrize("case_id", _case_ids(), ids=_case_ids())
def test_real_traffic(case_id: str) -> None:
    case = CASES[case_id]
    fmt, kind = case["format"], case["kind"]
    conv = FORMATS[fmt]
    body = _load(case)
    problems: list[str] = []
    if kind == "request":
        try:
            messages, read_losses = _read(conv.read, body)
        except ValueError as exc:
            _fail(case_id, [f"refused: {exc}"])
        written, write_losses = _write(conv.write, messages)
        if isinstance(written, list):  # to_openai_chat gives the messages list itself
            written = {_REQUEST_KEYS[fmt][0]: written}
        diffs = request_differences(fmt, normalise_request(fmt, body), normalise_request(fmt, written))
        problems += [f"silent: {d}" for d in uncovered_request(fmt, body, diffs, read_losses, write_losses)]
    elif kind == "response":
        try:
            message, read_losses = _read(conv.read_response, body)
        except ValueError as exc:
            _fail(case_id, [f"refused: {exc}"])
        problems += check_usage_and_stop(fmt, body, message)
        written, write_losses = _write(conv.write_response, message)
        expected, got = normalise_response(fmt, body), normalise_response(fmt, written)
        problems += [
            f"silent: {d}" for d in uncovered_response(fmt, differences(expected, got), read_losses, write_losses)
        ]
    else:
        for number, segment in enumerate(_responses(fmt, body)):
            found = _check_stream(fmt, conv, segment)
            problems += [f"response {number} of the recording: {p}" for p in found] if segment is not body else found
    if problems:
        _fail(case_id, problems)


def _fold(conv: Format, stream: str | list[Any], keepends: bool) -> AssistantMessage:
    if isinstance(stream, str):
        return fold(conv.stream.stream_events_from_sse(stream.splitlines(keepends=keepends)))
    return fold(conv.stream.stream_events(stream))


_RESPONSES_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


_STREAM_TERMINAL = {"openai_responses": _RESPONSES_TERMINAL, "anthropic": frozenset({"message_stop"})}


def _responses(fmt: str, stream: str | list[Any]) -> list[str | list[Any]]:
    """The streams of a recording: an event list recorded over several calls is one stream per response.

    One Responses stream carries one response and ends with its terminal event,
    one Anthropic stream one message, from ``message_start`` to ``message_stop``;
    some Vercel AI fixtures (multi-step runs) hold the events of several calls one
    after another in one list, each from its own ``response.created`` (sequence
    numbers restart at 0) or ``message_start`` (a new message id). Each is checked
    as the stream it was.
    """
    if fmt == "openai_chat" and isinstance(stream, list):
        return _azure_calls(stream)
    terminal = _STREAM_TERMINAL.get(fmt)
    if terminal is None or not isinstance(stream, list):
        return [stream]
    segments: list[list[Any]] = [[]]
    for event in stream:
        segments[-1].append(event)
        if isinstance(event, dict) and event.get("type") in terminal:
            segments.append([])
    segments = [segment for segment in segments if segment]
    return [stream] if len(segments) == 1 else list(segments)


def _azure_calls(stream: list[Any]) -> list[str | list[Any]]:
    """An Azure OpenAI chunk list recorded over several calls: each call opens with a prompt-filter chunk
    (``object`` ``""``, no choices, ``prompt_filter_results``), so one starts a new stream."""
    segments: list[list[Any]] = [[]]
    for chunk in stream:
        opens = isinstance(chunk, dict) and chunk.get("object") == "" and "prompt_filter_results" in chunk
        if opens and segments[-1]:
            segments.append([])
        segments[-1].append(chunk)
    return [stream] if len(segments) == 1 else list(segments)


def _check_stream(fmt: str, conv: Format, stream: str | list[Any]) -> list[str]:
    problems: list[str] = []
    try:
        message = _fold(conv, stream, keepends=True)
    except ValueError as exc:
        return [f"refused: the stream does not fold: {exc}"]
    final = sdk_accumulation(fmt, stream)
    # A Responses stream whose final object failed (status "failed") folds to that failure, as the
    # response reader reads the object (compared below); any other fold error is a problem.
    failed = fmt == "openai_responses" and isinstance(final, dict) and final.get("status") == "failed"
    if message.error and not failed:
        problems.append(f"fold error: {message.error}")
    if isinstance(stream, str):
        try:
            bare = _fold(conv, stream, keepends=False)
        except ValueError as exc:
            problems.append(f"refused: lines without their line ends do not fold: {exc}")
        else:
            if _message_view(bare) != _message_view(message):
                problems.append(
                    "lines without their line ends fold to another message: "
                    f"{_show(_message_view(bare))} instead of {_show(_message_view(message))}"
                )
    if final is None:
        return [*problems, "the stream carries no final object and the SDK accumulates nothing"]
    # 1. as messages: the fold equals the response reader's reading of the provider's accumulation
    try:
        reference, _ = _read(conv.read_response, final)
    except ValueError as exc:
        problems.append(f"refused: the SDK's accumulation is not read: {exc}")
    else:
        ours = _comparable_with_sdk(fmt, _message_view(message))
        theirs = _comparable_with_sdk(fmt, _message_view(reference))
        if ours != theirs:
            problems += [f"fold differs from the SDK accumulation: {d}" for d in differences(theirs, ours)]
    # 2. as JSON: what the fold writes back equals the accumulation, or is a reported Loss
    written, write_losses = _write(conv.write_response, message)
    expected, got = normalise_response(fmt, final), normalise_response(fmt, written)
    if fmt == "gemini":
        expected, got = _prune(_merge_gemini_text(expected)), _prune(_merge_gemini_text(got))
    problems += [f"silent: {d}" for d in uncovered_response(fmt, differences(expected, got), [], write_losses)]
    # 3. usage and stop reason against the raw final object
    problems += check_usage_and_stop(fmt, final, message)
    return problems
