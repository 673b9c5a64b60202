"""Anthropic Messages streaming (``"stream": true``): provider stream events in, agentmsg stream events out.

The event shapes follow the platform documentation ("Streaming Messages":
event types, content block delta types, the full HTTP stream examples) and
the Python SDK's stream types (``anthropic`` 2.11.0:
``RawMessageStreamEvent`` and the ``Raw*Event`` classes, ``ErrorResponse``).
No SDK is imported: events are plain dicts, as ``json.loads`` gives them.

:class:`AnthropicStreamParser` takes one decoded event at a time and returns
the :class:`~agentmsg.streaming.StreamEvent` list it stands for;
:func:`stream_events` runs it over decoded events and
:func:`stream_events_from_sse` over raw ``text/event-stream`` lines. The
output obeys the fold's rules (:mod:`agentmsg.streaming`), so
``fold(stream_events(events))`` is the finished
:class:`~agentmsg.AssistantMessage`.

Mapping (Anthropic -> agentmsg):

=====================================  ==============================================================
Anthropic event                        agentmsg events
=====================================  ==============================================================
``message_start``                      ``message_start`` (id: ``message_id`` if given, else the
                                       response ``id``, else a UUID4; provenance ``anthropic`` /
                                       ``anthropic-messages`` / ``model`` / ``id``), then ``usage``
                                       when ``message.usage`` reports a count
``content_block_start``                ``block_start`` at the same index: ``text`` -> TextContent
                                       (with the citations it starts with), ``thinking`` ->
                                       ThinkingContent, ``redacted_thinking`` ->
                                       RedactedThinkingContent (whole), ``tool_use`` ->
                                       ToolCallContent (id and name as given, no arguments yet);
                                       every other type is held back to its stop (below)
``content_block_delta``                ``text_delta`` -> text, ``thinking_delta`` -> thinking,
                                       ``signature_delta`` -> signature (thinking blocks),
                                       ``input_json_delta`` -> arguments (``partial_json`` verbatim),
                                       ``citations_delta`` -> citation (read as the converter
                                       reads text ``citations``)
``content_block_stop``                 ``block_stop``
``message_delta``                      ``usage`` (counts are cumulative: each replaces the last);
                                       the stop reason and stop sequence are kept for
                                       ``message_stop``
``message_stop``                       ``message_stop`` (stop reason mapped, raw string verbatim,
                                       ``stop_sequence``)
``error``                              ``error`` (the error ``type``, e.g. ``overloaded_error``, is
                                       the code; its ``message`` the message)
``ping``                               nothing
=====================================  ==============================================================

Stop reasons, usage, citations and every block other than text, thinking
and tool use are read by the converter's own code
(:mod:`agentmsg.providers.anthropic`), so the fold and
``from_anthropic_response`` give the same message: ``end_turn`` / ``stop_sequence`` ->
STOP, ``max_tokens`` / ``model_context_window_exceeded`` -> LENGTH,
``tool_use`` -> TOOL_CALLS, ``refusal`` -> CONTENT_FILTER, ``pause_turn`` and
values this version does not know -> unspecified (None; the turn is paused,
neither finished nor failed: send the message back as-is to continue, which
``stop_reason_raw == "pause_turn"`` tells). Usage: ``input_tokens`` (already
without cached tokens), ``output_tokens``, ``cache_read_input_tokens`` ->
``cache_read_tokens``, ``cache_creation_input_tokens`` ->
``cache_write_tokens``, ``cache_creation`` by TTL, ``server_tool_use``
request counts -> ``hosted_tool_requests``,
``output_tokens_details.thinking_tokens`` -> ``reasoning_tokens``; a count
never reported stays None, and a stream that reports none leaves the
message's usage None.

Choices:

- A ``tool_use`` block's arguments are the ``input_json_delta`` fragments,
  concatenated verbatim (text that is not JSON is kept and the fold lists it
  in ``issues``). A block that gets no fragment at all (a tool without
  parameters) takes its ``content_block_start`` ``input`` as
  :func:`~agentmsg.providers.anthropic.input_json` writes it (``"{}"``), as
  the converter reads ``input``. A tool call's ``index`` is its position
  among the message's tool calls, as in the converter.
- Every other block type (``server_tool_use``, ``mcp_tool_use``, the
  ``*_tool_result`` blocks, ``container_upload`` and types this version does
  not know) is held back until its ``content_block_stop``, its
  ``input_json_delta`` fragments parsed into its ``input`` (they must make a
  JSON object), and then read whole by the converter
  (:func:`~agentmsg.providers.anthropic.read_block`) and sent as
  ``block_start`` + ``block_stop``: a hosted tool call or result (with the
  block as ``original``), or a :class:`~agentmsg.ProviderContent`. A hosted
  call keeps the fragments verbatim as its ``input`` text. Why held back:
  ``original`` must be the whole block, as the response gives it, for the
  fold to equal ``from_anthropic_response`` and to go back exactly; a
  server tool's input is a short query. ``pass_through_unknown=False``
  refuses a block of an unknown type
  (:class:`~agentmsg.streaming.StreamProtocolError`) instead of keeping it.
- A message that stops with no block at all and a stop reason that needs
  content (``end_turn``, ``pause_turn``...) gets one empty text block, as the
  converter's ``from_anthropic_response`` does (the contract requires a
  block).
- The response keys no field holds are gathered as the converter keeps them
  (``AssistantMessage.provider_extra``, see its module docstring) and given in
  ``message_stop``: those of ``message_start``'s message, ``message_delta``'s
  ``delta`` (``container``, ``stop_details``) and ``usage`` (``iterations``,
  ``fallback_credit``), and the event's own (``context_management``); a later
  value replaces an earlier one, usage key by key, as the SDK's accumulation
  merges them. ``stop_details`` is also kept on the parser
  (:attr:`AnthropicStreamParser.stop_details`).
- A ``message_start`` whose message already holds blocks (programmatic tool
  calling answers a call of the code with a message holding the next call)
  gives each as a block started and stopped at its position, and its
  ``stop_reason`` / ``stop_sequence`` count as a ``message_delta``'s would.
- A ``fallback`` block (the request moved to another model mid-way) names the
  model that finished the message: ``message_stop`` carries it
  (``MessageStop.model``), so the fold's provenance names it as the response
  object's ``model`` does. The block itself is kept as a provider block.

SSE input (:func:`stream_events_from_sse`) may be lines with their ends,
lines without them (``str.splitlines()``, httpx's ``iter_lines()``), or
arbitrary chunks of the body.

Skipped, with a note in :attr:`AnthropicStreamParser.skipped` (``strict=True``
rejects them instead): event types this version does not know (Anthropic's
versioning policy says new event types may appear and should be handled
gracefully). ``ping`` is skipped silently, anywhere in the stream.

Rejected with :class:`~agentmsg.streaming.StreamProtocolError`, which names
the event's number (from 0, counting every event given, pings included) and
type: an event that is not an object or has no string ``type``; fields of
the wrong JSON type; a second ``message_start``, or an event other than
``ping`` / ``error`` before the first; a block started twice; a delta or stop
for a block never started or already stopped; a delta of an unknown type or
of the wrong kind for its block; a ``message_stop`` with a block still open;
any event after ``message_stop`` or ``error``; non-JSON SSE data; an SSE
event name that contradicts the data's ``type``.

Ending: ``message_stop`` ends the stream. An ``error`` event ends it as a
failure: an agentmsg ``error`` (preceded by a ``message_start`` when none came
yet); open blocks stay as far as they got (the fold keeps them and lists
them in ``issues``). :meth:`AnthropicStreamParser.close` at the end of input
emits an ``error`` ("cut short") when the stream had not ended, so the fold
records the failure instead of waiting; a held-back provider block still open
then is left out and noted in ``skipped``.
"""

from __future__ import annotations

import codecs
import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agentmsg.content import (
    ContentBase,
    HostedToolCallContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
)
from agentmsg.errors import AgentMsgError
from agentmsg.messages import Provenance, StopReason
from agentmsg.providers._common import json_type
from agentmsg.providers.anthropic import (
    API,
    HOSTED_CALL_BLOCKS,
    HOSTED_RESULT_BLOCKS,
    PROVIDER,
    RESPONSE_HELD,
    STOP_REASONS,
    USAGE_HELD,
    extra_keys,
    input_json,
    read_block,
    read_citation,
    read_usage,
    response_extra,
    tool_use_extra,
)
from agentmsg.streaming import StreamEvent, StreamProtocolError, iter_sse
from agentmsg.usage import Usage

__all__ = ["AnthropicStreamParser", "stream_events", "stream_events_from_sse"]

# Stop reasons that let a message end with no block (the contract's rule for LENGTH and CONTENT_FILTER).
_MAY_BE_EMPTY: Final = (StopReason.LENGTH, StopReason.CONTENT_FILTER)
# Block types the converter reads into typed content; any other type is kept whole as a provider block.
_READ_WHOLE: Final = HOSTED_CALL_BLOCKS | frozenset(HOSTED_RESULT_BLOCKS)
_KNOWN_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)


@dataclass
class _Open:
    """An Anthropic content block between its start and its stop."""

    kind: str  # the Anthropic block type
    start: Mapping[str, Any]  # the content_block of content_block_start
    whole: bool = False  # held back, read whole (as the converter reads it) at its stop
    fragments: list[str] = field(default_factory=list)  # input_json_delta text seen
    appended: dict[str, str] = field(default_factory=dict)  # held back: other deltas' text, by field


class AnthropicStreamParser:
    """Turns Anthropic Messages stream events into agentmsg stream events (see the module docstring).

    ``feed`` takes one decoded event (``{"type": "content_block_delta", ...}``)
    and returns the agentmsg events it stands for (often none or one);
    ``close`` ends the input. Options: ``message_id`` (default: the response
    id from ``message_start``, else a UUID4); ``provider`` / ``api`` for the
    provenance (default ``anthropic`` / ``anthropic-messages``; the same wire
    format is served elsewhere); ``model`` when ``message_start`` names none;
    ``pass_through_unknown`` (default True) keeps unknown block types as provider blocks;
    ``strict`` rejects what is otherwise skipped with a note.
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        provider: str = PROVIDER,
        api: str = API,
        model: str = "",
        pass_through_unknown: bool = True,
        strict: bool = False,
    ) -> None:
        self.message_id = message_id
        self.provider = provider
        self.api = api
        self.model = model
        self.pass_through_unknown = pass_through_unknown
        self.strict = strict
        #: What was skipped or left out, one line each, naming the event.
        self.skipped: list[str] = []
        #: ``message_delta``'s ``stop_sequence`` (which custom stop sequence fired), when one did; it is
        #: also the finished message's ``stop_sequence``.
        self.stop_sequence: str | None = None
        #: ``message_delta``'s ``stop_details`` (e.g. a refusal's category), verbatim.
        self.stop_details: dict[str, Any] | None = None
        self._count = 0
        self._extra: dict[str, Any] = {}  # the response keys no field holds, gathered over the stream
        self._start_model = ""
        self._final_model = ""  # the model a ``fallback`` block moved the request to
        self._started = False
        self._ended = False
        self._stop_raw = ""
        self._open: dict[int, _Open] = {}
        self._seen: set[int] = set()
        self._emitted_blocks = 0
        self._tool_calls = 0

    @property
    def ended(self) -> bool:
        """True once ``message_stop`` or ``error`` was handled (or ``close`` cut the stream)."""
        return self._ended

    # -- input

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """Handle one provider event; the agentmsg events it gives, in order."""
        number = self._count
        self._count += 1
        if not isinstance(event, Mapping):
            raise StreamProtocolError(f"Anthropic stream event {number}: expected an object, got {json_type(event)}")
        kind = event.get("type")
        if not isinstance(kind, str):
            raise StreamProtocolError(
                f"Anthropic stream event {number}: 'type' must be a string, got {json_type(kind)}"
            )
        return _Event(self, number, kind, event).handle()

    def close(self) -> list[StreamEvent]:
        """End of input: an ``error`` event when the stream had not ended, else nothing."""
        if self._ended:
            return []
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start_event(None, None))
            reason = "the stream was cut short: it ended before message_start"
        else:
            reason = "the stream was cut short: it ended before message_stop"
        out.extend(self._fail(reason, "", f"the end of input (after {self._count} events)"))
        return out

    # -- shared steps

    def _start_event(self, response_id: str | None, model: str | None) -> StreamEvent:
        self._started = True
        message_id = self.message_id or response_id or str(uuid.uuid4())
        provenance = Provenance(self.provider, self.api, model or self.model, response_id or "")
        return StreamEvent.message_start(message_id, provenance=provenance)

    def _gather(self, keys: Mapping[str, Any]) -> None:
        """Response keys no field holds: a later value replaces an earlier one, usage key by key (the SDK's merge)."""
        for key, value in keys.items():
            if key == "usage" and isinstance(value, Mapping):
                self._extra.setdefault("usage", {}).update(value)
            else:
                self._extra[key] = value

    def _fail(self, message: str, code: str, where: str) -> list[StreamEvent]:
        self._ended = True
        for index, block in sorted(self._open.items()):
            if block.whole:
                self.skipped.append(f"{where}: block {index} ({block.kind}) was still open and is left out")
        return [StreamEvent.error(message or "stream error", code=code)]


class _Event:
    """One provider event being handled: its number and type name every error."""

    __slots__ = ("event", "kind", "number", "parser")

    def __init__(self, parser: AnthropicStreamParser, number: int, kind: str, event: Mapping[str, Any]) -> None:
        self.parser = parser
        self.number = number
        self.kind = kind
        self.event = event

    def error(self, what: str) -> StreamProtocolError:
        return StreamProtocolError(f"Anthropic stream event {self.number} ({self.kind}): {what}")

    def note(self, what: str) -> None:
        if self.parser.strict:
            raise self.error(f"{what} (strict=True)")
        self.parser.skipped.append(f"event {self.number} ({self.kind}): {what}")

    # -- field readers

    def get(self, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str, *, required: bool) -> Any:
        """A field of ``obj``: None when absent or null (an error when required), checked otherwise."""
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(f"{key!r} is required")
            return None
        wants_bool = kind is bool or (isinstance(kind, tuple) and bool in kind)
        if not isinstance(value, kind) or (isinstance(value, bool) and not wants_bool):
            raise self.error(f"{key!r} must be {what}, got {json_type(value)}")
        return value

    def index(self, obj: Mapping[str, Any]) -> int:
        index: int = self.get(obj, "index", int, "an integer", required=True)
        if index < 0:
            raise self.error(f"'index' must not be negative, got {index}")
        return index

    def make(self, build: Any, *args: Any, **kwargs: Any) -> Any:
        """Call an agentmsg constructor; a value the contract refuses is a protocol error here."""
        try:
            return build(*args, **kwargs)
        except AgentMsgError as exc:
            raise self.error(str(exc)) from None

    # -- dispatch

    def handle(self) -> list[StreamEvent]:
        parser = self.parser
        if self.kind == "ping":
            return []
        if parser._ended:
            raise self.error("the stream already ended")
        if self.kind == "error":
            return self.failed()
        if self.kind not in _KNOWN_EVENTS:
            self.note("an event type this version does not know, skipped")
            return []
        if self.kind == "message_start":
            return self.message_start()
        if not parser._started:
            raise self.error("arrived before message_start")
        handler = {
            "content_block_start": self.block_start,
            "content_block_delta": self.block_delta,
            "content_block_stop": self.block_stop,
            "message_delta": self.message_delta,
            "message_stop": self.message_stop,
        }[self.kind]
        return handler()

    # -- message events

    def message_start(self) -> list[StreamEvent]:
        if self.parser._started:
            raise self.error("a second message_start in one stream")
        message = self.get(self.event, "message", Mapping, "an object", required=True)
        response_id = self.get(message, "id", str, "a string", required=False)
        model = self.get(message, "model", str, "a string", required=False)
        content = self.get(message, "content", list, "an array", required=False) or []
        usage = self.usage(message.get("usage"), "message.usage")
        parser = self.parser
        parser._start_model = model or ""
        reason = self.get(message, "stop_reason", str, "a string", required=False)
        if reason is not None:
            parser._stop_raw = reason
        sequence = self.get(message, "stop_sequence", str, "a string", required=False)
        if sequence is not None:
            parser.stop_sequence = sequence
        parser._gather(extra_keys(message, RESPONSE_HELD))
        out = [self.make(parser._start_event, response_id, model)]
        if usage is not None:
            out.append(StreamEvent.usage_update(usage))
        # A message_start may carry whole blocks (programmatic tool calling answers a tool call of the
        # code with a message that holds the next call and nothing else): each is the block started
        # and stopped at its position, as the SDK's accumulation takes them.
        for index, block in enumerate(content):
            out += _Event(parser, self.number, "content_block_start", {"index": index, "content_block": block}).handle()
            out += _Event(parser, self.number, "content_block_stop", {"index": index}).handle()
        return out

    def message_delta(self) -> list[StreamEvent]:
        parser = self.parser
        delta = self.get(self.event, "delta", Mapping, "an object", required=True)
        reason = self.get(delta, "stop_reason", str, "a string", required=False)
        if reason is not None:
            parser._stop_raw = reason
        sequence = self.get(delta, "stop_sequence", str, "a string", required=False)
        if sequence is not None:
            parser.stop_sequence = sequence
        details = self.get(delta, "stop_details", Mapping, "an object", required=False)
        if details is not None:
            parser.stop_details = dict(details)
        usage = self.usage(self.event.get("usage"), "usage")
        # container, stop_details (delta); iterations (usage); context_management (the event)
        parser._gather(extra_keys(delta, {"stop_reason": None, "stop_sequence": None}))
        if isinstance(self.event.get("usage"), Mapping):
            parser._gather({"usage": extra_keys(self.event["usage"], USAGE_HELD)})
        parser._gather(extra_keys(self.event, {"type": None, "delta": None, "usage": None}))
        return [StreamEvent.usage_update(usage)] if usage is not None else []

    def message_stop(self) -> list[StreamEvent]:
        parser = self.parser
        if parser._open:
            names = ", ".join(f"block {i} ({b.kind})" for i, b in sorted(parser._open.items()))
            raise self.error(f"the message stopped with {names} still open (no content_block_stop)")
        raw = parser._stop_raw
        reason = STOP_REASONS.get(raw)
        out: list[StreamEvent] = []
        if parser._emitted_blocks == 0 and reason not in _MAY_BE_EMPTY:
            # The contract needs a block here; the converter reads such a response the same way.
            out += [StreamEvent.block_start(0, TextContent("")), StreamEvent.block_stop(0)]
        parser._ended = True
        extra = {key: value for key, value in parser._extra.items() if value != {}}
        moved = parser._final_model if parser._final_model != parser._start_model else ""
        out.append(
            StreamEvent.message_stop(
                reason,
                raw,
                stop_sequence=parser.stop_sequence or "",
                provider_extra=self.make(response_extra, extra),
                model=moved,
            )
        )
        return out

    def failed(self) -> list[StreamEvent]:
        parser = self.parser
        error = self.get(self.event, "error", Mapping, "an object", required=False) or {}
        code = self.get(error, "type", str, "a string", required=False) or ""
        message = self.get(error, "message", str, "a string", required=False) or code or "stream error"
        out = [] if parser._started else [parser._start_event(None, None)]
        return out + parser._fail(message, code, f"event {self.number} (error)")

    def usage(self, value: Any, path: str) -> Usage | None:
        """Anthropic usage -> agentmsg Usage, read by the converter; None when nothing is reported."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(f"{path!r} must be an object, got {json_type(value)}")
        usage: Usage | None = self.make(read_usage, value)
        return usage

    # -- block events

    def block_start(self) -> list[StreamEvent]:
        parser = self.parser
        index = self.index(self.event)
        if index in parser._seen:
            raise self.error(f"block {index} started twice")
        block = self.get(self.event, "content_block", Mapping, "an object", required=True)
        kind = self.get(block, "type", str, "a string", required=True)
        content: ContentBase
        if kind == "text":
            citations = self.get(block, "citations", list, "an array", required=False) or []
            content = self.make(
                TextContent,
                self.get(block, "text", str, "a string", required=False) or "",
                citations=[self.make(read_citation, citation) for citation in citations],
            )
        elif kind == "thinking":
            thinking = self.get(block, "thinking", str, "a string", required=False) or ""
            signature = self.get(block, "signature", str, "a string", required=False) or ""
            content = self.make(ThinkingContent, thinking, signature)
        elif kind == "redacted_thinking":
            content = self.make(RedactedThinkingContent, self.get(block, "data", str, "a string", required=True))
        elif kind == "tool_use":
            call_id = self.get(block, "id", str, "a string", required=True)
            name = self.get(block, "name", str, "a string", required=True)
            self.get(block, "input", Mapping, "an object", required=False)
            content = self.make(
                ToolCallContent,
                call_id,
                name,
                arguments="",
                index=parser._tool_calls,
                provider_extra=self.make(tool_use_extra, block),
            )
            parser._tool_calls += 1
        elif kind in _READ_WHOLE or parser.pass_through_unknown:
            parser._seen.add(index)
            parser._open[index] = _Open(kind, block, whole=True)
            return []  # read whole at its content_block_stop
        else:
            raise self.error(
                f"block {index} of type {kind!r} has no agentmsg kind "
                "(pass_through_unknown=False refuses it; the default keeps it as a provider block)"
            )
        parser._seen.add(index)
        parser._open[index] = _Open(kind, block)
        parser._emitted_blocks += 1
        return [StreamEvent.block_start(index, content)]

    def open_block(self, index: int) -> _Open:
        block = self.parser._open.get(index)
        if block is None:
            if index in self.parser._seen:
                raise self.error(f"block {index} already stopped")
            raise self.error(f"block {index} was never started")
        return block

    def block_delta(self) -> list[StreamEvent]:
        index = self.index(self.event)
        block = self.open_block(index)
        delta = self.get(self.event, "delta", Mapping, "an object", required=True)
        kind = self.get(delta, "type", str, "a string", required=True)
        wants = {
            "text_delta": ("text", "text"),
            "thinking_delta": ("thinking", "thinking"),
            "signature_delta": ("thinking", "signature"),
            "input_json_delta": ("tool_use", "partial_json"),
            "citations_delta": ("text", "citation"),
        }.get(kind)
        if wants is None and block.whole:
            return self.appended_delta(index, block, delta, kind)
        if wants is None:
            raise self.error(f"block {index}: unknown delta type {kind!r}")
        block_kind, key = wants
        if kind == "input_json_delta" and block.whole:
            block_kind = block.kind
        if block.kind != block_kind:
            raise self.error(f"block {index}: a {kind} cannot go to a {block.kind} block")
        if kind == "citations_delta":
            citation = self.get(delta, key, Mapping, "an object", required=True)
            return [StreamEvent.citation_delta(index, self.make(read_citation, citation))]
        text: str = self.get(delta, key, str, "a string", required=True)
        if kind == "text_delta":
            return [StreamEvent.text_delta(index, text)]
        if kind == "thinking_delta":
            return [StreamEvent.thinking_delta(index, text)]
        if kind == "signature_delta":
            return [StreamEvent.signature_delta(index, text)]
        block.fragments.append(text)
        if block.whole or not text:
            return []
        return [StreamEvent.arguments_delta(index, text)]

    def appended_delta(self, index: int, block: _Open, delta: Mapping[str, Any], kind: str) -> list[StreamEvent]:
        """A delta this version does not know, to a held-back block: its text fields are appended to the block's.

        Every delta type Anthropic has appends text to the field it names (``text_delta`` to ``text``,
        ``compaction_delta`` to ``content``); a new one to a block read whole is taken the same way.
        """
        for key, value in delta.items():
            if key == "type":
                continue
            if not isinstance(value, str):
                raise self.error(f"block {index}: a {kind} whose {key!r} is not text cannot be appended to the block")
            block.appended[key] = block.appended.get(key, "") + value
        return []

    def block_stop(self) -> list[StreamEvent]:
        parser = self.parser
        index = self.index(self.event)
        block = self.open_block(index)
        del parser._open[index]
        out: list[StreamEvent] = []
        if block.whole:
            whole = dict(block.start)
            text = "".join(block.fragments)
            if text:
                try:
                    value = json.loads(text)
                except (ValueError, RecursionError) as exc:
                    raise self.error(f"block {index} ({block.kind}): its input is not JSON: {exc}") from None
                if not isinstance(value, dict):
                    raise self.error(f"block {index} ({block.kind}): its input is a JSON {json_type(value)}")
                whole["input"] = value
            for key, appended in block.appended.items():
                start = whole.get(key)
                if start is not None and not isinstance(start, str):
                    raise self.error(f"block {index} ({block.kind}): text appended to its {key!r}, which is not text")
                whole[key] = (start or "") + appended
            target = whole.get("to") if block.kind == "fallback" else None
            if isinstance(target, Mapping) and isinstance(target.get("model"), str):
                parser._final_model = target["model"]  # the response names the model it fell back to
            # The block as the response holds it, read as the converter reads it (the same typed block and
            # original); a hosted call keeps its streamed input text verbatim, as tool calls do.
            content = self.make(read_block, whole, pass_through_unknown=parser.pass_through_unknown)
            if text and isinstance(content, HostedToolCallContent):
                content.pb.hosted_tool_call.input = text
            parser._emitted_blocks += 1
            out.append(StreamEvent.block_start(index, content))
        elif block.kind == "tool_use" and not "".join(block.fragments):
            start_input = block.start.get("input")
            arguments = self.make(input_json, start_input if isinstance(start_input, Mapping) else {})
            out.append(StreamEvent.arguments_delta(index, arguments))
        out.append(StreamEvent.block_stop(index))
        return out


def stream_events(
    events: Iterable[Mapping[str, Any]],
    *,
    message_id: str | None = None,
    provider: str = PROVIDER,
    api: str = API,
    model: str = "",
    pass_through_unknown: bool = True,
    strict: bool = False,
) -> Iterator[StreamEvent]:
    """The agentmsg events for decoded Anthropic stream events (options as :class:`AnthropicStreamParser`)."""
    parser = AnthropicStreamParser(
        message_id=message_id,
        provider=provider,
        api=api,
        model=model,
        pass_through_unknown=pass_through_unknown,
        strict=strict,
    )
    for event in events:
        yield from parser.feed(event)
    yield from parser.close()


def stream_events_from_sse(
    lines: Iterable[str | bytes],
    *,
    message_id: str | None = None,
    provider: str = PROVIDER,
    api: str = API,
    model: str = "",
    pass_through_unknown: bool = True,
    strict: bool = False,
) -> Iterator[StreamEvent]:
    """The agentmsg events for raw ``text/event-stream`` lines (options as :class:`AnthropicStreamParser`).

    ``lines`` may be lines with or without their ends (``splitlines()``,
    ``iter_lines()``), or arbitrary chunks of the stream (``str`` or UTF-8
    ``bytes``, as an HTTP client reads them): they are cut into lines first.
    Each SSE event's data is one JSON event. The SSE event name must agree
    with the data's ``type`` (an unnamed event takes its ``type`` from the
    data); a ``ping`` is skipped whatever its data; an ``error`` event ends
    the stream as an agentmsg ``error`` whatever its data (data that is not a
    JSON error object gives the message: the data text).
    """
    parser = AnthropicStreamParser(
        message_id=message_id,
        provider=provider,
        api=api,
        model=model,
        pass_through_unknown=pass_through_unknown,
        strict=strict,
    )
    for sse in iter_sse(_lines(lines)):
        number = parser._count
        if sse.event == "ping":
            yield from parser.feed({"type": "ping"})
            continue
        try:
            data = json.loads(sse.data)
        except (ValueError, RecursionError) as exc:
            if sse.event == "error":
                data = None
            else:
                raise StreamProtocolError(
                    f"Anthropic stream event {number} ({sse.event}): data is not JSON: {exc}"
                ) from None
        if sse.event == "error":
            # Whatever its data, an SSE error event ends the stream as an error (the SDK raises on it).
            if isinstance(data, Mapping) and data.get("type", "error") == "error":
                yield from parser.feed({**data, "type": "error"})
            else:
                yield from parser.feed({"type": "error", "error": {"message": sse.data.strip() or "stream error"}})
            continue
        if isinstance(data, Mapping) and sse.event != "message" and data.get("type") != sse.event:
            raise StreamProtocolError(
                f"Anthropic stream event {number} ({sse.event}): the data's type {data.get('type')!r} "
                f"is not the event's name {sse.event!r}"
            )
        yield from parser.feed(data)
    yield from parser.close()


_LINE_END: Final = re.compile(r"\r\n|\r|\n")
_FIELD_START: Final = ("event:", "data:", "id:", "retry:")


def _lines(chunks: Iterable[str | bytes]) -> Iterator[str]:
    """Lines (ends kept) from lines with or without their ends, or from arbitrary chunks.

    Lines without their ends (``str.splitlines()``, httpx's ``iter_lines()``) hold no line break
    at all, and a blank line comes as ``""``; chunks hold line breaks. So the input is taken as
    lines without ends until an item holds a line break. Before that, an item with no line break
    is a whole line when the next one starts an SSE field or is blank (a chunk cut inside the
    first line is followed by the rest of that line instead); after it, items are chunks, cut
    into lines at their line breaks (SSE line ends only, UTF-8 decoded across chunks).
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = ""  # text not yet yielded
    chunked = False  # an item held a line break: the input is chunks (or lines with their ends)
    bare = False  # items are lines without ends
    try:
        for chunk in chunks:
            text = decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
            if not chunked and _LINE_END.search(text) is None:
                if bare:
                    yield text + "\n"
                    continue
                if pending and (text == "" or text.startswith(_FIELD_START)):
                    bare = True  # the pending item was a whole line, and so is this one
                    yield pending + "\n"
                    yield text + "\n"
                    pending = ""
                    continue
                if pending or text:
                    pending += text
                    continue
            if bare:
                raise StreamProtocolError("the Anthropic event stream mixes lines without ends with chunks")
            chunked = True
            pending += text
            start = 0
            for match in _LINE_END.finditer(pending):
                if match.group() == "\r" and match.end() == len(pending):
                    break  # a "\r\n" may be cut between two chunks
                yield pending[start : match.end()]
                start = match.end()
            pending = pending[start:]
        pending += decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise StreamProtocolError(f"the Anthropic event stream is not UTF-8: {exc}") from None
    if pending:
        yield pending
