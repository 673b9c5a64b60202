"""OpenAI Responses streaming (``POST /v1/responses`` with ``stream: true``) to agentmsg stream events.

The API streams typed server-sent events (``response.created``,
``response.output_item.added``, ``response.output_text.delta``, ...), each with
a ``sequence_number``, and ends with ``response.completed``,
``response.incomplete``, ``response.failed`` or ``error``.
:class:`OpenAIResponsesStreamParser` turns each decoded event into
:class:`~agentmsg.streaming.StreamEvent` values that fold (with
:func:`agentmsg.streaming.fold`) into an :class:`~agentmsg.AssistantMessage`.
Shapes follow the API reference (Responses streaming events, the response
object) and the SDK's ``ResponseStreamEvent`` union; no SDK is imported.

The folded message is the one :func:`agentmsg.providers.openai_responses.from_openai_responses_response`
reads from the stream's final response object, with the same (default)
options: the same blocks, item envelopes, hosted tool blocks, citations,
logprobs, usage, stop reason and provenance; the item readings, the
stop-reason and usage mappings are that module's own functions. A failed
response folds as the converter reads it too (error ``"<code>: <message>"``,
raw stop reason ``failed``).

The final object wins. OpenAI's final object is what the API stores and
what the next request refers to, and it is not always what the stream's
``output_item.done`` events said: reasoning and compaction items are
encrypted anew, a ``program`` item gets its ``fingerprint``, and logprobs
are rounded (the deltas' ``-1.9e-07`` is ``-0.0`` in the final object). So
what an item sends whole, it sends at the terminal event, from the final
object's item (found by id, else by position; the ``output_item.done`` item
when the final object has none): item envelopes, hosted tool blocks, items
kept verbatim, a reasoning item's encrypted content (its thinking blocks
stay open until then) and a text part's logprobs when its deltas carried
logprobs (the block stays open until then). Text, reasoning summaries and
function-call arguments stream live, as they come.

Mapping (event -> agentmsg):

============================================  =======================================================
Responses event                               agentmsg stream events
============================================  =======================================================
``response.created`` (or ``.queued`` /        ``message_start``: id = ``message_id`` or
``.in_progress``, whichever comes first)      ``response.id``; timestamp = ``created_at``; provenance
                                              ("openai", "openai-responses", ``model``, ``id``)
``output_item.added``                         block indexes kept for what the item sends whole at the
                                              end (its envelope or the item; a hosted result); for a
                                              ``function_call``, its tool-call block (id =
                                              ``call_id``, ``name``, ``index`` = position among calls)
``reasoning_summary_part.added``              a thinking block per summary part, its text from
                                              ``reasoning_summary_text.delta``
``function_call_arguments.delta``             argument fragments, verbatim
``content_part.added`` ``output_text``        a text block per content part
``output_text.delta``                         text fragments
``content_part.done``                         the part's ``annotations`` as citations, then
                                              ``block_stop`` (at the end instead when the deltas
                                              carried logprobs)
``output_item.done``                          ``function_call``: ``block_stop``; reasoning: summary
                                              parts the events did not stream
``response.completed`` / ``.incomplete``      every item settled from the final object (see above):
                                              envelopes, hosted tool calls and results, items kept
                                              verbatim (refusal messages, ``mcp_list_tools``,
                                              ``compaction``...), signatures, redacted reasoning,
                                              logprobs, open blocks stopped; ``usage``;
                                              ``message_stop``: TOOL_CALLS when the output has a
                                              ``function_call``, else CONTENT_FILTER after a
                                              refusal, else STOP; raw ``"completed"`` (incomplete:
                                              ``incomplete_details.reason``, max_output_tokens ->
                                              LENGTH, content_filter -> CONTENT_FILTER, others
                                              unspecified). A response with no output (a queued
                                              background response) gets one empty text block
``response.failed``                           items settled; ``usage`` when reported; ``error``
                                              ``"<code>: <message>"`` with code ``failed``
``error``                                     held: a ``response.failed`` after it ends the stream;
                                              without one, the end of input ends it with this
                                              ``error`` (message; code = ``code``, else the nested
                                              ``error.code`` or ``error.type``)
end of input before a terminal event          ``error`` saying the stream was cut short
============================================  =======================================================

Block indexes. Every item keeps its indexes from its ``output_item.added``
(its envelope or whole block first, then a hosted result), and its parts
are numbered as they are added. OpenAI streams items one after another in
``output_index`` order, so the folded blocks follow ``response.output`` even
though what an item sends whole comes at the end (the fold orders blocks by
index). Items that never got ``output_item.done`` are finished from the
final object (or, without one, kept as far as they got: their open blocks
stay open and the fold lists them in its issues) and are listed in
:attr:`OpenAIResponsesStreamParser.unfinished_items`; items of the final
object the stream never added come last. The numbering depends only on the
order of the events, never on timing.

Usage, by the converter's reading: ``input_tokens`` = ``input_tokens`` minus
``input_tokens_details.cached_tokens`` and ``cache_write_tokens``;
``cache_read_tokens`` = ``cached_tokens``; ``cache_write_tokens`` =
``cache_write_tokens``; ``output_tokens`` as reported (reasoning included);
``reasoning_tokens`` = ``output_tokens_details.reasoning_tokens``;
``total_tokens`` as reported. Details left out stay unknown; ``usage: null``
leaves the message's usage None (unknown, not zero).

``*.done`` events (``output_text.done``, ``refusal.done``,
``function_call_arguments.done``, ``content_part.done``, the reasoning
summary ``done`` events, and the items at ``output_item.done`` and in the
final object) carry the whole text: when it extends what the deltas gave,
the rest is sent as one more delta; when it contradicts them, that is a
:class:`~agentmsg.streaming.StreamProtocolError` (a delta was lost).

Skipped: ``response.in_progress`` and ``response.queued`` after the start;
``response.output_text.annotation.added`` (the part's annotations come whole
at ``content_part.done``); reasoning text of open-weight models
(``reasoning_text`` content parts and events: the final reasoning item keeps
it, in its envelope); the progress events of hosted and custom tools, whose
item arrives whole; and event types this version does not know (a newer
tool's progress, such as ``response.apply_patch_call_operation_diff.delta``),
listed in :attr:`OpenAIResponsesStreamParser.skipped_events`. Rejected with
:class:`~agentmsg.streaming.StreamProtocolError`, naming the event number
(from 0) and type: events of the wrong shape or types, an event before
``response.created``, deltas for an item or part never added or already
done, an ``output_index``, ``content_index`` or ``summary_index`` added
twice, a ``sequence_number`` that does not increase, a response id that
changes, events after the end (after an ``error``, only
``response.failed``), and ``response.audio.*`` events (agentmsg has no audio
output block).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeGuard

from agentmsg.content import (
    ContentBase,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
)
from agentmsg.errors import ValidationError, preview
from agentmsg.messages import Provenance, StopReason
from agentmsg.providers._common import json_type
from agentmsg.providers.openai_responses import (
    _HOSTED,
    _TEXT_PARTS,
    _read_usage,
    _Reader,
    _stop_reason,
    hosted_blocks,
    item_envelope,
    read_annotation,
    read_logprob,
)
from agentmsg.streaming import StreamEvent, StreamProtocolError, iter_sse
from agentmsg.usage import Usage

__all__ = [
    "API",
    "PROVIDER",
    "OpenAIResponsesStreamParser",
    "stream_events",
    "stream_events_from_sse",
]

PROVIDER: Final = "openai"
API: Final = "openai-responses"
# ProviderContent blocks are tagged with the API, not the provider: Chat and Responses blocks differ.
BLOCK_FORMAT: Final = API

_LIFECYCLE: Final = frozenset({"response.created", "response.queued", "response.in_progress"})
_SKIPPED: Final = frozenset(
    {
        "response.output_text.annotation.added",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.code_interpreter_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.compaction.compacting",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.file_search_call.completed",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.image_generation_call.completed",
        "response.image_generation_call.generating",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.partial_image",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_call.in_progress",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.mcp_list_tools.in_progress",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
        "response.web_search_call.completed",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
    }
)
_AUDIO: Final = frozenset(
    {
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
    }
)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class _Where:
    """Reads fields of the event being parsed; errors name the event number and type."""

    __slots__ = ("kind", "number")

    def __init__(self, number: int, kind: str = "") -> None:
        self.number = number
        self.kind = kind

    def error(self, message: str) -> StreamProtocolError:
        named = f" ({self.kind})" if self.kind else ""
        return StreamProtocolError(f"event {self.number}{named}: {message}")

    def string(self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str | None:
        value = obj.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str):
            raise self.error(f"{path}.{key} must be a string, got {json_type(value, article=True)}")
        return value

    def text(self, obj: Mapping[str, Any], key: str, path: str) -> str:
        value = self.string(obj, key, path)
        assert value is not None
        return value

    def index(self, obj: Mapping[str, Any], key: str, path: str) -> int:
        value = obj.get(key)
        if not _is_int(value) or value < 0:
            raise self.error(f"{path}.{key} must be a non-negative integer, got {preview(value)}")
        return int(value)

    def mapping(
        self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True
    ) -> Mapping[str, Any] | None:
        value = obj.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, Mapping):
            raise self.error(f"{path}.{key} must be an object, got {json_type(value, article=True)}")
        return value

    def obj(self, obj: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        value = self.mapping(obj, key, path)
        assert value is not None
        return value


def _usage(value: Any, where: _Where) -> Usage | None:
    """The response's usage, read by the converter (so both agree); its errors name the event."""
    reader = _Reader("OpenAI Responses stream usage", None, False, response=True)
    usage = _read_usage(reader, value)
    try:
        reader.errors.raise_if_any()
    except ValidationError as exc:
        raise where.error(str(exc)) from None
    return usage


class _Text:
    """One streamed text (a message part, a summary part, a call's arguments) as far as it got."""

    __slots__ = ("block", "cited", "fragments", "kind", "logprobs", "open")

    def __init__(self, block: int | None, kind: str) -> None:
        self.block = block  # None for a refusal part, which streams into no block
        self.kind = kind  # output_text | refusal | summary | arguments
        self.fragments: list[str] = []
        self.open = True
        self.cited = 0  # annotations sent as citations
        self.logprobs = False  # the deltas carried logprobs: they come from the final object, at the end

    @property
    def value(self) -> str:
        return "".join(self.fragments)


class _Item:
    """An output item being streamed."""

    __slots__ = ("block", "done", "first", "item_id", "open", "parts", "settled", "slots", "type")

    def __init__(self, item_type: str, item_id: str | None, first: Mapping[str, Any]) -> None:
        self.type = item_type
        self.item_id = item_id
        self.first = first  # the item as added
        self.done: Mapping[str, Any] | None = None  # the item as output_item.done gave it
        self.block: int | None = None  # a function call's block
        self.parts: dict[tuple[str, int], _Text] = {}  # ("content" | "summary" | "arguments", index) -> text
        self.slots: list[int] = []  # block indexes kept for the blocks sent whole at the end (envelope first)
        self.open = True  # no output_item.done yet
        self.settled = False

    @property
    def kind(self) -> str:
        return self.type if self.type in ("message", "reasoning", "function_call") else "other"

    @property
    def refusal(self) -> bool:
        return any(text.kind == "refusal" for text in self.parts.values())


class OpenAIResponsesStreamParser:
    """Turns decoded Responses stream events into agentmsg stream events, one event at a time.

    ``feed(event)`` returns the events one provider event makes (possibly
    none); ``close()`` ends the input: it returns an ``error`` when no terminal
    event came (the stream was cut short) and nothing otherwise; it is
    idempotent. See the module docstring for the mapping.

    Options: ``message_id`` (default: the response id, or a UUID4 when the
    stream fails before ``response.created``), ``model`` (used when the
    response does not name one), ``provider`` and ``api`` (the provenance
    constants, for compatible servers).

    After the stream: :attr:`unfinished_items` lists ``(output_index, type,
    id)`` of the items that never got ``output_item.done``;
    :attr:`skipped_events` the event types this version does not know.
    """

    def __init__(
        self, *, message_id: str | None = None, model: str = "", provider: str = PROVIDER, api: str = API
    ) -> None:
        self._message_id = message_id
        self._model = model
        self._provider = provider
        self._api = api
        self._events = 0
        self._started = False
        self._ended: str | None = None  # the provider event type that ended the stream
        self._response_id: str | None = None
        self._last_sequence: int | None = None
        self._next_block = 0
        self._calls = 0
        self._items: dict[int, _Item] = {}
        self.unfinished_items: list[tuple[int, str, str]] = []  # (output_index, type, id) never done
        self.skipped_events: list[str] = []  # event types this version does not know
        self._pending_error: StreamEvent | None = None  # an error event, held for the response.failed that follows

    @property
    def events_seen(self) -> int:
        """How many provider events were fed."""
        return self._events

    @property
    def ended(self) -> bool:
        """True once ``message_stop`` or ``error`` was produced."""
        return self._ended is not None

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """The agentmsg events one decoded Responses stream event makes."""
        where = _Where(self._events)
        self._events += 1
        if not isinstance(event, Mapping):
            raise where.error(f"an event must be a JSON object, got {json_type(event, article=True)}")
        kind = where.text(event, "type", "event")
        where.kind = kind
        self._check_sequence(event, where)
        if self._ended is not None:
            raise where.error(f"an event after the stream ended ({self._ended})")
        if self._pending_error is not None and kind != "response.failed":
            raise where.error("an event after the stream's error event (only response.failed may follow it)")
        if kind == "error":
            return self._error(event, where)
        if kind in _LIFECYCLE:
            return self._lifecycle(event, where)
        if kind in _AUDIO:
            raise where.error("audio output is not supported (agentmsg has no audio output block)")
        handler = _HANDLERS.get(kind)
        if handler is None and kind not in _SKIPPED:
            # An event type this version does not know (a newer tool's progress, such as
            # response.apply_patch_call_operation_diff.delta): its item arrives whole at the end.
            self.skipped_events.append(kind)
        if not self._started:
            raise where.error("the stream must begin with response.created")
        out: list[StreamEvent] = []
        if handler is not None:
            handler(self, event, where, out)
        return out

    def close(self) -> list[StreamEvent]:
        """End of input: an ``error`` when no terminal event came, else nothing."""
        if self._ended is not None:
            return []
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start(None))
        self._settle_items(None, _Where(self._events, "end of input"), out)
        if self._pending_error is not None:
            out.append(self._pending_error)
            self._ended = "error"
            return out
        self._ended = "close"
        out.append(
            StreamEvent.error(
                "the stream ended before response.completed, response.incomplete or response.failed: it was cut short"
            )
        )
        return out

    # --- lifecycle ----------------------------------------------------------

    def _check_sequence(self, event: Mapping[str, Any], where: _Where) -> None:
        sequence = event.get("sequence_number")
        if sequence is None:
            return
        if not _is_int(sequence) or sequence < 0:
            raise where.error(f"sequence_number must be a non-negative integer, got {preview(sequence)}")
        if self._last_sequence is not None and sequence <= self._last_sequence:
            raise where.error(f"sequence_number {sequence} does not follow {self._last_sequence}")
        self._last_sequence = sequence

    def _start(self, response: Mapping[str, Any] | None) -> StreamEvent:
        self._started = True
        response_id = model = None
        timestamp = None
        if response is not None:
            response_id = response.get("id")
            model = response.get("model")
            created = response.get("created_at")
            if isinstance(created, (int, float)) and not isinstance(created, bool):
                try:
                    timestamp = datetime.fromtimestamp(created, UTC)
                except (OverflowError, OSError, ValueError):
                    raise StreamProtocolError(f"response.created_at {created!r} is not a representable time") from None
        self._response_id = response_id
        provenance = Provenance(self._provider, self._api, model or self._model, response_id or "")
        message_id = self._message_id or response_id or str(uuid.uuid4())
        return StreamEvent.message_start(message_id, provenance=provenance, timestamp=timestamp)

    def _response(self, event: Mapping[str, Any], where: _Where) -> Mapping[str, Any]:
        """The event's ``response`` object, its id checked against the stream's."""
        response = where.obj(event, "response", "event")
        response_id = where.text(response, "id", "response")
        where.string(response, "model", "response", required=False)
        if self._started and self._response_id is not None and response_id != self._response_id:
            raise where.error(f"response.id changed from {self._response_id!r} to {response_id!r}")
        return response

    def _lifecycle(self, event: Mapping[str, Any], where: _Where) -> list[StreamEvent]:
        response = self._response(event, where)
        return [] if self._started else [self._start(response)]

    def _error(self, event: Mapping[str, Any], where: _Where) -> list[StreamEvent]:
        nested = event.get("error")
        source: Mapping[str, Any] = nested if isinstance(nested, Mapping) else event
        message = source.get("message")
        code = source.get("code") or (source.get("type") if source is nested else None)
        out = [] if self._started else [self._start(None)]
        if self._pending_error is not None:
            raise where.error("a second error event")
        # Held: the response.failed that follows names the failure as the converter reads it; without one,
        # close() ends the stream with this error.
        self._pending_error = StreamEvent.error(
            message if isinstance(message, str) and message else "the provider reported an error",
            code=code if isinstance(code, str) else "",
        )
        return out

    def _terminal(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        response = self._response(event, where)
        kind = where.kind
        usage = _usage(response.get("usage"), where)
        final = response.get("output")
        self._settle_items(final if isinstance(final, list) else None, where, out)
        if kind == "response.failed":
            if usage is not None:
                out.append(StreamEvent.usage_update(usage))
            # As the converter reads a failed response: error "<code>: <message>", raw stop reason "failed".
            error = where.mapping(response, "error", "response", required=False) or {}
            message = error.get("message") if isinstance(error.get("message"), str) else ""
            code = error.get("code") if isinstance(error.get("code"), str) else ""
            text = f"{code}: {message}" if code and message else (message or code)
            out.append(StreamEvent.error(text or "the response failed", code="failed"))
            self._ended = kind
            return
        if usage is not None:
            out.append(StreamEvent.usage_update(usage))
        status = where.string(response, "status", "response", required=False)
        status = status or ("incomplete" if kind == "response.incomplete" else "completed")
        details = where.mapping(response, "incomplete_details", "response", required=False) or {}
        reason = where.string(details, "reason", "response.incomplete_details", required=False)
        has_calls = any(item.type == "function_call" for item in self._items.values())
        has_refusal = any(item.refusal for item in self._items.values())
        stop = _stop_reason(status, reason, has_calls, has_refusal)
        if self._next_block == 0 and stop in (None, StopReason.STOP, StopReason.TOOL_CALLS):
            # No output (a background response still queued): one empty text block, as the converter reads it.
            out.append(StreamEvent.block_start(self._new_block(), TextContent()))
            out.append(StreamEvent.block_stop(self._next_block - 1))
        raw = reason if status == "incomplete" and reason else status
        out.append(StreamEvent.message_stop(stop, raw, response_id=self._response_id or ""))
        self._ended = kind

    def _settle_items(self, final: list[Any] | None, where: _Where, out: list[StreamEvent]) -> None:
        """At the end: every item as the final response object gives it (else as far as the stream got).

        The final object is the one the API stores and the next request refers
        to: its items win over those of ``output_item.done`` (reasoning and
        compaction items are encrypted anew, a ``program`` item gets its
        ``fingerprint``). Items never done are listed in ``unfinished_items``;
        items of the final object the stream never added are read last.
        """
        finals = final or []
        by_id = {
            candidate["id"]: position
            for position, candidate in enumerate(finals)
            if isinstance(candidate, Mapping) and isinstance(candidate.get("id"), str)
        }
        used: set[int] = set()
        for output_index, item in sorted(self._items.items()):
            if item.settled:
                continue
            # The final item with the same id (else at the same position, when it has none).
            position = by_id.get(item.item_id) if item.item_id is not None else output_index
            candidate = finals[position] if position is not None and position < len(finals) else None
            body: Mapping[str, Any] | None = None
            if isinstance(candidate, Mapping) and candidate.get("type") == item.type:
                body = candidate
                used.add(position)  # type: ignore[arg-type]
            if item.done is None:
                self.unfinished_items.append((output_index, item.type, item.item_id or ""))
            self._settle_item(item, body or item.done or item.first, where, out, cut=body is None and item.done is None)
        for position, candidate in enumerate(finals):
            if position in used or not isinstance(candidate, Mapping):
                continue
            item_type = candidate.get("type")
            if not isinstance(item_type, str):
                raise where.error(f"response.output[{position}].type must be a string")
            item_id = candidate.get("id") if isinstance(candidate.get("id"), str) else None
            output_index = max(self._items, default=-1) + 1
            item = self._items[output_index] = _Item(item_type, item_id, candidate)
            self._reserve(item)
            if item_type == "function_call":
                self._call_block(item, candidate, where, out)
            self._settle_item(item, candidate, where, out)

    def _reserve(self, item: _Item) -> None:
        """Block indexes for what an item sends whole at the end: its envelope (or the item), a hosted result."""
        item.slots.append(self._new_block())
        if item.type in _HOSTED or item.type == "reasoning":
            item.slots.append(self._new_block())

    def _send(self, index: int, block: ContentBase) -> list[StreamEvent]:
        return [StreamEvent.block_start(index, block), StreamEvent.block_stop(index)]

    def _settle_item(
        self, item: _Item, body: Mapping[str, Any], where: _Where, out: list[StreamEvent], *, cut: bool = False
    ) -> None:
        """Send what an item still owes, from ``body`` (the item as final), and stop its blocks.

        ``cut``: the stream ended (error, cut short) before the item was done:
        its open blocks stay open, so the fold keeps them as far as they got
        and lists them in its issues.
        """
        item.settled = True
        item.open = False
        try:
            if cut and item.type in ("message", "reasoning"):
                pass  # what the item got to is in its open blocks; its envelope (the item as done) never came
            elif item.type == "message":
                self._settle_message(item, body, where, out)
            elif item.type == "function_call":
                arguments = where.string(body, "arguments", "item", required=False)
                text = item.parts[("arguments", 0)]
                if arguments is not None and text.open and not cut:
                    self._settle(text, arguments, where, out)
                envelope = item_envelope(body) if body.get("call_id") else None
                if envelope is not None:
                    out.extend(self._send(item.slots[0], envelope))
            elif item.type == "reasoning":
                self._settle_reasoning(item, body, where, out)
            elif item.type in _HOSTED:
                try:
                    blocks = hosted_blocks(body)
                except (ValidationError, ValueError):
                    blocks = [ProviderContent.from_block(BLOCK_FORMAT, body)]
                for index, block in zip(item.slots, blocks, strict=False):
                    out.extend(self._send(index, block))
            else:
                out.extend(self._send(item.slots[0], ProviderContent.from_block(BLOCK_FORMAT, body)))
        except ValidationError as exc:
            raise where.error(f"output item {item.item_id or item.type!r} cannot be kept: {exc}") from None
        if cut:
            return
        stops = sorted({text.block for text in item.parts.values() if text.open and text.block is not None})
        for text in item.parts.values():
            text.open = False
        out.extend(StreamEvent.block_stop(block) for block in stops)

    def _settle_message(self, item: _Item, body: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        content = body.get("content")
        parts = content if isinstance(content, list) else []
        whole = item.refusal or not all(isinstance(p, Mapping) and p.get("type") in _TEXT_PARTS for p in parts)
        if whole:
            out.extend(self._send(item.slots[0], ProviderContent.from_block(BLOCK_FORMAT, body)))
            return
        envelope = item_envelope(body)
        if envelope is not None:
            out.extend(self._send(item.slots[0], envelope))
        for k, part in enumerate(parts):
            text = item.parts.get(("content", k))
            if text is None:  # a part the events did not stream
                text = item.parts[("content", k)] = _Text(self._new_block(), "output_text")
                assert text.block is not None
                out.append(StreamEvent.block_start(text.block, TextContent()))
            final = part.get("text")
            if isinstance(final, str) and text.open:
                self._settle(text, final, where, out)
            if text.open:
                self._cite(text, part, where, out)
                self._logprobs(text, part, where, out)

    def _cite(self, text: _Text, part: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        """Citations for the annotations of a text part not sent yet."""
        annotations = part.get("annotations")
        if not isinstance(annotations, list) or text.block is None:
            return
        for annotation in annotations[text.cited :]:
            if not isinstance(annotation, Mapping):
                raise where.error(f"an annotation must be an object, got {json_type(annotation, article=True)}")
            out.append(StreamEvent.citation_delta(text.block, read_annotation(annotation)))
        text.cited = max(text.cited, len(annotations))

    def _logprobs(self, text: _Text, part: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        entries = part.get("logprobs")
        if not isinstance(entries, list) or not entries or text.block is None:
            return
        try:
            tokens = [read_logprob(entry, f"logprobs[{k}]") for k, entry in enumerate(entries)]
        except ValidationError as exc:
            raise where.error(f"the part's logprobs cannot be read: {exc}") from None
        out.append(StreamEvent.logprobs_delta(text.block, tokens))

    def _settle_reasoning(self, item: _Item, body: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        """A reasoning item at the end: summary parts streamed or not, then its encrypted content."""
        self._summaries(item, body, where, out)
        signature = where.string(body, "encrypted_content", "item", required=False) or ""
        last = max((key for key in item.parts if key[0] == "summary"), default=None)
        if last is not None and signature:
            signed = item.parts[last]
            assert signed.block is not None
            out.append(StreamEvent.signature_delta(signed.block, signature))
        elif last is None and signature:
            out.extend(self._send(item.slots[1], RedactedThinkingContent(signature)))
        envelope = item_envelope(body, always=last is None and not signature)
        if envelope is not None:
            out.extend(self._send(item.slots[0], envelope))

    def _summaries(self, item: _Item, body: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        """Check the summary parts of a reasoning item as given whole; send those the events did not stream."""
        summary = body.get("summary")
        if summary is not None and not isinstance(summary, list):
            raise where.error(f"item.summary must be an array, got {json_type(summary, article=True)}")
        for k, part in enumerate(summary or ()):
            if not isinstance(part, Mapping):
                raise where.error(f"item.summary[{k}] must be an object, got {json_type(part, article=True)}")
            final = where.text(part, "text", f"item.summary[{k}]")
            text = item.parts.get(("summary", k))
            if text is None:  # a part the events did not stream
                block = self._new_block()
                text = item.parts[("summary", k)] = _Text(block, "summary")
                out.append(StreamEvent.block_start(block, ThinkingContent()))
            if text.open:
                self._settle(text, final, where, out)

    # --- output items -------------------------------------------------------

    def _new_block(self) -> int:
        index = self._next_block
        self._next_block += 1
        return index

    def _item(self, event: Mapping[str, Any], where: _Where, *kinds: str) -> tuple[int, _Item]:
        """The open item the event names (by ``output_index``), checked against ``item_id`` and kind."""
        output_index = where.index(event, "output_index", "event")
        item = self._items.get(output_index)
        if item is None:
            raise where.error(f"output item {output_index} was never added")
        if not item.open:
            raise where.error(f"output item {output_index} is already done")
        item_id = where.string(event, "item_id", "event", required=False)
        if item_id is not None and item.item_id is not None and item_id != item.item_id:
            raise where.error(f"item_id {item_id!r} does not match output item {output_index} ({item.item_id!r})")
        if kinds and item.kind not in kinds:
            raise where.error(f"output item {output_index} is a {item.type!r} item, not {' or '.join(kinds)}")
        return output_index, item

    def _item_added(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        output_index = where.index(event, "output_index", "event")
        body = where.obj(event, "item", "event")
        item_type = where.text(body, "type", "item")
        item_id = where.string(body, "id", "item", required=False)
        if output_index in self._items:
            raise where.error(f"output item {output_index} was added twice")
        item = self._items[output_index] = _Item(item_type, item_id, body)
        self._reserve(item)
        if item_type == "function_call":
            self._call_block(item, body, where, out)

    def _call_block(self, item: _Item, body: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        """A function call's block, begun as the item is added."""
        call_id = where.text(body, "call_id", "item")
        name = where.text(body, "name", "item")
        arguments = where.string(body, "arguments", "item", required=False) or ""
        if not call_id or not name:
            raise where.error(f"a function_call item needs a call_id and a name (got {call_id!r}, {name!r})")
        item.block = self._new_block()
        text = item.parts[("arguments", 0)] = _Text(item.block, "arguments")
        out.append(StreamEvent.block_start(item.block, ToolCallContent(call_id, name, arguments="", index=self._calls)))
        self._calls += 1
        if arguments:
            text.fragments.append(arguments)
            out.append(StreamEvent.arguments_delta(item.block, arguments))

    def _item_done(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        output_index, item = self._item(event, where)
        body = where.obj(event, "item", "event")
        item_type = where.text(body, "type", "item")
        if item_type != item.type:
            raise where.error(f"output item {output_index} was added as {item.type!r}, done as {item_type!r}")
        item.open = False
        item.done = body
        if item.type == "function_call":
            text = item.parts[("arguments", 0)]
            arguments = where.string(body, "arguments", "item", required=False)
            if arguments is not None:
                self._settle(text, arguments, where, out)
            text.open = False
            assert item.block is not None
            out.append(StreamEvent.block_stop(item.block))
        elif item.type == "reasoning":
            self._summaries(item, body, where, out)  # the blocks stop at the end, with the final encrypted content
        elif item.type == "message":
            content = body.get("content")
            for k, part in enumerate(content if isinstance(content, list) else ()):
                streamed = item.parts.get(("content", k))
                if streamed is None or not streamed.open or streamed.block is None or not isinstance(part, Mapping):
                    continue
                final = part.get("text")
                if isinstance(final, str):
                    self._settle(streamed, final, where, out)
                self._cite(streamed, part, where, out)
                if not streamed.logprobs:
                    streamed.open = False
                    out.append(StreamEvent.block_stop(streamed.block))

    # --- message parts ------------------------------------------------------

    def _part_added(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        output_index, item = self._item(event, where, "message", "reasoning")
        content_index = where.index(event, "content_index", "event")
        part = where.obj(event, "part", "event")
        part_type = where.text(part, "type", "part")
        if item.kind == "reasoning":
            if part_type != "reasoning_text":
                raise where.error(f"a reasoning item cannot hold a {part_type!r} part")
            return  # reasoning text is skipped (see the module docstring)
        key = ("content", content_index)
        if key in item.parts:
            raise where.error(f"content part {content_index} of output item {output_index} was added twice")
        if part_type not in ("output_text", "refusal"):
            raise where.error(f"unknown message content part type {part_type!r}")
        initial = where.text(part, "text" if part_type == "output_text" else "refusal", "part")
        if part_type == "refusal":
            text = item.parts[key] = _Text(None, part_type)
        else:
            block = self._new_block()
            text = item.parts[key] = _Text(block, part_type)
            out.append(StreamEvent.block_start(block, TextContent()))
        self._append(text, initial, out)

    def _part_done(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "message", "reasoning")
        content_index = where.index(event, "content_index", "event")
        part = where.obj(event, "part", "event")
        part_type = where.text(part, "type", "part")
        if item.kind == "reasoning":
            return
        text = self._part(item, ("content", content_index), where)
        if part_type != text.kind:
            raise where.error(f"content part {content_index} was added as {text.kind!r}, done as {part_type!r}")
        self._settle(text, where.text(part, "refusal" if part_type == "refusal" else "text", "part"), where, out)
        if text.block is None:
            text.open = False
            return
        self._cite(text, part, where, out)
        if not text.logprobs:  # logprobs come from the final object (the stream's own differ): the block stops then
            text.open = False
            out.append(StreamEvent.block_stop(text.block))

    def _part(self, item: _Item, key: tuple[str, int], where: _Where) -> _Text:
        text = item.parts.get(key)
        what = "summary part" if key[0] == "summary" else "content part"
        if text is None:
            raise where.error(f"{what} {key[1]} was never added")
        if not text.open:
            raise where.error(f"{what} {key[1]} is already done")
        return text

    def _text_delta(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "message")
        text = self._part(item, ("content", where.index(event, "content_index", "event")), where)
        expected = "refusal" if where.kind == "response.refusal.delta" else "output_text"
        if text.kind != expected:
            raise where.error(f"a {where.kind} event for a {text.kind!r} part")
        if event.get("logprobs"):
            text.logprobs = True
        self._append(text, where.text(event, "delta", "event"), out)

    def _text_done(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "message")
        text = self._part(item, ("content", where.index(event, "content_index", "event")), where)
        expected, field = ("refusal", "refusal") if where.kind == "response.refusal.done" else ("output_text", "text")
        if text.kind != expected:
            raise where.error(f"a {where.kind} event for a {text.kind!r} part")
        if event.get("logprobs"):
            text.logprobs = True
        self._settle(text, where.text(event, field, "event"), where, out)

    # --- reasoning ----------------------------------------------------------

    def _summary_added(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        output_index, item = self._item(event, where, "reasoning")
        summary_index = where.index(event, "summary_index", "event")
        part = where.obj(event, "part", "event")
        key = ("summary", summary_index)
        if key in item.parts:
            raise where.error(f"summary part {summary_index} of output item {output_index} was added twice")
        block = self._new_block()
        text = item.parts[key] = _Text(block, "summary")
        out.append(StreamEvent.block_start(block, ThinkingContent()))
        self._append(text, where.text(part, "text", "part"), out)

    def _summary_delta(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "reasoning")
        text = self._part(item, ("summary", where.index(event, "summary_index", "event")), where)
        self._append(text, where.text(event, "delta", "event"), out)

    def _summary_done(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "reasoning")
        text = self._part(item, ("summary", where.index(event, "summary_index", "event")), where)
        if where.kind == "response.reasoning_summary_part.done":
            final = where.text(where.obj(event, "part", "event"), "text", "part")
        else:
            final = where.text(event, "text", "event")
        self._settle(text, final, where, out)

    # --- function calls -----------------------------------------------------

    def _arguments_delta(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "function_call")
        self._append(item.parts[("arguments", 0)], where.text(event, "delta", "event"), out)

    def _arguments_done(self, event: Mapping[str, Any], where: _Where, out: list[StreamEvent]) -> None:
        _, item = self._item(event, where, "function_call")
        self._settle(item.parts[("arguments", 0)], where.text(event, "arguments", "event"), where, out)

    # --- shared -------------------------------------------------------------

    @staticmethod
    def _append(text: _Text, fragment: str, out: list[StreamEvent]) -> None:
        """Add a fragment to a text and send it to the text's block."""
        if not fragment:
            return
        text.fragments.append(fragment)
        if text.block is None:
            return
        if text.kind == "arguments":
            out.append(StreamEvent.arguments_delta(text.block, fragment))
        elif text.kind == "summary":
            out.append(StreamEvent.thinking_delta(text.block, fragment))
        else:
            out.append(StreamEvent.text_delta(text.block, fragment))

    def _settle(self, text: _Text, final: str, where: _Where, out: list[StreamEvent]) -> None:
        """Check a ``done`` event's full text against the deltas; send what the deltas left out."""
        so_far = text.value
        if final == so_far:
            return
        if not final.startswith(so_far):
            raise where.error(
                f"the final text ({len(final)} characters) contradicts the {len(so_far)} characters streamed"
                " before it: a delta was lost or reordered"
            )
        self._append(text, final[len(so_far) :], out)


_Handler = Callable[[OpenAIResponsesStreamParser, Mapping[str, Any], _Where, list[StreamEvent]], None]
_HANDLERS: Final[Mapping[str, _Handler]] = {
    "response.output_item.added": OpenAIResponsesStreamParser._item_added,
    "response.output_item.done": OpenAIResponsesStreamParser._item_done,
    "response.content_part.added": OpenAIResponsesStreamParser._part_added,
    "response.content_part.done": OpenAIResponsesStreamParser._part_done,
    "response.output_text.delta": OpenAIResponsesStreamParser._text_delta,
    "response.output_text.done": OpenAIResponsesStreamParser._text_done,
    "response.refusal.delta": OpenAIResponsesStreamParser._text_delta,
    "response.refusal.done": OpenAIResponsesStreamParser._text_done,
    "response.function_call_arguments.delta": OpenAIResponsesStreamParser._arguments_delta,
    "response.function_call_arguments.done": OpenAIResponsesStreamParser._arguments_done,
    "response.reasoning_summary_part.added": OpenAIResponsesStreamParser._summary_added,
    "response.reasoning_summary_part.done": OpenAIResponsesStreamParser._summary_done,
    "response.reasoning_summary_text.delta": OpenAIResponsesStreamParser._summary_delta,
    "response.reasoning_summary_text.done": OpenAIResponsesStreamParser._summary_done,
    "response.completed": OpenAIResponsesStreamParser._terminal,
    "response.incomplete": OpenAIResponsesStreamParser._terminal,
    "response.failed": OpenAIResponsesStreamParser._terminal,
}


def stream_events(events: Iterable[Mapping[str, Any]], **options: Any) -> Iterator[StreamEvent]:
    """The agentmsg events for decoded Responses stream events (options as :class:`OpenAIResponsesStreamParser`)."""
    parser = OpenAIResponsesStreamParser(**options)
    for event in events:
        yield from parser.feed(event)
    yield from parser.close()


def stream_events_from_sse(lines: Iterable[str | bytes], **options: Any) -> Iterator[StreamEvent]:
    """The agentmsg events for raw SSE text (lines of the HTTP body).

    Each SSE event's ``data`` is one JSON event; its ``event:`` name, when
    given, must match the data's ``type``. Reading stops after the terminal
    event (or at a ``data: [DONE]`` line, which Responses does not send but
    relays may). An SSE ``error`` event becomes an agentmsg ``error``; data
    that is not JSON is a :class:`~agentmsg.streaming.StreamProtocolError`
    naming the SSE event (from 0).
    """
    parser = OpenAIResponsesStreamParser(**options)
    for number, sse in enumerate(iter_sse(lines)):
        if sse.data.strip() == "[DONE]":
            break
        try:
            data = json.loads(sse.data)
        except (ValueError, RecursionError) as exc:
            if sse.event == "error":
                yield from parser.feed({"type": "error", "message": sse.data})
                break
            raise StreamProtocolError(f"SSE event {number}: data is not JSON ({exc}): {sse.data[:80]!r}") from None
        if isinstance(data, Mapping):
            if sse.event == "error" and data.get("type") != "error":
                data = {"type": "error", **data}
            elif sse.event != "message" and data.get("type") != sse.event:
                raise StreamProtocolError(
                    f"SSE event {number}: named {sse.event!r} but its data is of type {data.get('type')!r}"
                )
        yield from parser.feed(data)
        if parser.ended:
            break
    yield from parser.close()
