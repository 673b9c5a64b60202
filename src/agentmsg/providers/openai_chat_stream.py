"""OpenAI Chat Completions streaming (``POST /v1/chat/completions`` with ``stream: true``) to agentmsg stream events.

The API streams ``chat.completion.chunk`` objects as server-sent events and
ends with ``data: [DONE]``. :class:`OpenAIChatStreamParser` turns each decoded
chunk into :class:`~agentmsg.streaming.StreamEvent` values that fold (with
:func:`agentmsg.streaming.fold`) into an :class:`~agentmsg.AssistantMessage`.
Shapes follow the API reference (the chat completion chunk object,
``stream_options``) and the SDK's ``ChatCompletionChunk`` type; no SDK is
imported.

The folded message is the one
:func:`agentmsg.providers.openai_chat.from_openai_chat_response` reads from
the same completion unstreamed (the chunks accumulated, as the SDK's stream
helper does): the same blocks, usage, stop reason and provenance, as the
finish-reason and usage mappings are that module's own.

Mapping (chunk -> agentmsg):

=====================================  ==============================================================
Chat Completions chunk                 agentmsg stream events
=====================================  ==============================================================
first chunk                            ``message_start``: id = ``message_id`` or the chunk ``id``;
                                       timestamp = ``created``; provenance ("openai",
                                       "openai-chat-completions", ``model``, ``id``)
``delta.content`` (a string)           one text block for the whole message, opened at the first
                                       string (``""`` included: the converter reads ``content: ""``
                                       as an empty text block; ``null`` opens nothing); every
                                       fragment is appended to it
``delta.refusal`` (a string)           a second text block holding the refusal text; a message that
                                       refused stops with ``StopReason.CONTENT_FILTER`` (the raw
                                       ``finish_reason``, usually ``"stop"``, is kept verbatim)
``delta.tool_calls[i]``                one tool-call block per distinct ``index`` i. Its first delta
                                       must carry ``id`` and ``function.name`` (the block opens with
                                       them; ``ToolCallContent.index`` = i); ``function.arguments``
                                       fragments are appended verbatim
``finish_reason``                      stops every open block (in block order) and records the stop
                                       reason: stop -> STOP, length -> LENGTH, tool_calls and
                                       function_call -> TOOL_CALLS, content_filter -> CONTENT_FILTER,
                                       anything else -> unspecified (None); the string is kept in
                                       ``stop_reason_raw``
``choices[i].logprobs``                ``logprobs_delta`` on the text block (``content``) or the
                                       refusal block (``refusal``)
``delta.annotations``                  URL citations: ``citation_delta`` on the text block; other
                                       annotations: a ``message.annotations`` provider block at
                                       the finish (as the converter keeps them)
``delta.audio``                        merged (``data`` and ``transcript`` appended, other fields
                                       replaced, as the SDK merges them): a ``message.audio``
                                       provider block at the finish
``usage`` (not null, any chunk)        ``usage`` (see below); the details agentmsg has no field
                                       for, from the last usage, as a ``response.usage`` provider
                                       block at the end
``prompt_filter_results`` (Azure)      kept, as the converter keeps it: a
                                       ``response.prompt_filter_results`` provider block at the end
                                       (``prompt_annotations`` likewise). Azure opens a stream with a
                                       chunk holding only these (``object``, ``id`` and ``model``
                                       ``""``, ``created`` 0, no choices): it starts nothing, the
                                       message starts with the first real chunk
``choices[i].content_filter_results``  (Azure) the last non-empty one the stream sent: a
                                       ``response.content_filter_results`` provider block at the end
                                       (the verdict in force when the stream ended: a stream Azure's
                                       filter cut carries the category that fired on its
                                       ``content_filter`` finish). The openai SDK's accumulation keeps
                                       the first chunk's instead (usually ``{}``)
``{"error": {...}}`` payload           ``error`` (message; code = ``error.code`` or ``error.type``)
end of input (:meth:`close`)           ``message_stop`` after a ``finish_reason``; otherwise an
                                       ``error`` saying the stream was cut short
=====================================  ==============================================================

Block indexes are given in first-seen order: the text block, the refusal block
and each tool call take the next index when their first fragment arrives.
OpenAI sends content before tool calls, and content or a refusal, not both,
so this is the converter's order too (it puts a refusal after the text).

Usage (``stream_options: {"include_usage": true}``; the counts come on the last
chunk, whose ``choices`` is empty), as the converter reads it:
``input_tokens`` = ``prompt_tokens`` minus
``prompt_tokens_details.cached_tokens`` and ``cache_write_tokens``;
``cache_read_tokens`` = ``cached_tokens``; ``cache_write_tokens`` =
``cache_write_tokens``; ``output_tokens`` = ``completion_tokens`` (reasoning
included, as OpenAI counts it); ``reasoning_tokens`` =
``completion_tokens_details.reasoning_tokens``; ``total_tokens`` as reported.
A detail the chunk leaves out stays unknown (None). A stream without a usage
chunk gives a message whose usage is None: unknown, not zero.

The protocol ends implicitly: the message is complete once its choice has a
``finish_reason``, and ``message_stop`` is sent by :meth:`close` (which
:func:`stream_events` and :func:`stream_events_from_sse` call at the end of
input, or at ``[DONE]``), so the usage chunk that follows the finish can still
be counted. A stream that ends before a ``finish_reason`` ends with an
``error`` event (the fold keeps the blocks as far as they got and lists them
in its ``issues``).

Only one choice is folded: ``choice`` (default 0); chunks' entries for other
choices (``n`` > 1) are ignored. Skipped as harmless: ``delta.role``,
``obfuscation``, ``system_fingerprint``, ``service_tier`` and
``moderation`` (and unknown keys). Rejected with
:class:`~agentmsg.streaming.StreamProtocolError`, naming the event number
(from 0): chunks of the wrong shape or types, an ``object`` other than
``chat.completion.chunk`` (but Azure's opening prompt-filter chunk), a chunk ``id`` that changes mid-stream, a tool
call's first delta without ``id`` or ``function.name``, content after the
choice's ``finish_reason``, chunks after an error, token logprobs for a
content or refusal that never came, and the deprecated ``delta.function_call``
(it has no call id). Chat Completions has no signed reasoning, so no thinking
blocks are produced.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from agentmsg.content import ContentBase, ProviderContent, TextContent, ToolCallContent
from agentmsg.errors import ValidationError
from agentmsg.messages import Provenance, StopReason
from agentmsg.providers._common import json_type
from agentmsg.providers.openai_chat import (
    _FINISH_TO_STOP,
    BLOCK_FORMAT,
    CONTENT_FILTER_BLOCK,
    CONTENT_FILTER_KEY,
    FIELD_PREFIX,
    PROMPT_FILTER_KEYS,
    RESPONSE_PREFIX,
    USAGE_BLOCK,
    _citations_in,
    _nothing,
    _Reader,
    _sorted_json,
    _tokens_in,
    _usage_extras,
    _usage_in,
)
from agentmsg.streaming import StreamEvent, StreamProtocolError, iter_sse
from agentmsg.usage import Usage

__all__ = [
    "API",
    "PROVIDER",
    "OpenAIChatStreamParser",
    "stream_events",
    "stream_events_from_sse",
]

PROVIDER: Final = "openai"
API: Final = "openai-chat-completions"


class _Where:
    """Names the event being read in error messages."""

    __slots__ = ("number",)

    def __init__(self, number: int) -> None:
        self.number = number

    def error(self, message: str) -> StreamProtocolError:
        return StreamProtocolError(f"event {self.number}: {message}")

    def get(
        self, obj: Mapping[str, Any], key: str, types: type | tuple[type, ...], path: str, *, required: bool
    ) -> Any:
        """``obj[key]`` checked against ``types`` (None or absent allowed unless ``required``)."""
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(f"{path}.{key} is missing")
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
            names = " or ".join(_JSON_NAMES.get(t, t.__name__) for t in _as_tuple(types))
            raise self.error(f"{path}.{key} must be {names}, got {json_type(value, article=True)}")
        return value


_JSON_NAMES: Final[Mapping[type, str]] = {
    str: "a string",
    int: "an integer",
    list: "an array",
    Mapping: "an object",
    dict: "an object",
    bool: "a boolean",
}


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _usage(value: Mapping[str, Any], where: _Where) -> Usage | None:
    """A chunk's ``usage``, read by the non-streaming converter (so both agree); its errors name the event."""
    reader = _Reader("OpenAI Chat Completions chunk usage", id_map=None, pass_through=False, loose_args=True)
    usage = _usage_in(value, "chunk.usage", reader)
    try:
        reader.errors.raise_if_any()
    except ValidationError as exc:
        raise where.error(str(exc)) from None
    return usage


class OpenAIChatStreamParser:
    """Turns decoded ``chat.completion.chunk`` objects into agentmsg stream events, one chunk at a time.

    ``feed(chunk)`` returns the events the chunk makes (possibly none);
    ``close()`` ends the stream (``message_stop``, or an ``error`` when it was
    cut short) and is idempotent. See the module docstring for the mapping.

    Options: ``message_id`` (default: the chunks' ``id``, or a UUID4 when the
    stream fails before any chunk), ``model`` (used when the chunks do not
    name one), ``provider`` and ``api`` (the provenance constants, for
    OpenAI-compatible servers), ``choice`` (which choice to fold).
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        model: str = "",
        provider: str = PROVIDER,
        api: str = API,
        choice: int = 0,
    ) -> None:
        self._message_id = message_id
        self._model = model
        self._provider = provider
        self._api = api
        self._choice = choice
        self._events = 0
        self._started = False
        self._ended = False
        self._response_id: str | None = None
        self._next_block = 0
        self._text_block: int | None = None
        self._refusal_block: int | None = None
        self._tool_blocks: dict[int, int] = {}  # tool_calls index -> block index
        self._tool_ids: dict[int, tuple[str, str]] = {}  # tool_calls index -> (id, name)
        self._open: list[int] = []  # open block indexes, in opening order
        self._finish_reason: str | None = None
        self._usage_details: dict[str, Any] = {}  # the last usage's details agentmsg has no field for
        self._audio: dict[str, Any] | None = None  # delta.audio pieces merged (strings appended)
        self._annotations: list[Any] = []  # annotations that are not URL citations: kept whole
        self._prompt_filters: dict[str, Any] = {}  # Azure: prompt-filter results, by key
        self._content_filters: Any = None  # Azure: the choice's content-filter results, the last non-empty ones

    @property
    def events_seen(self) -> int:
        """How many provider events were fed."""
        return self._events

    @property
    def ended(self) -> bool:
        """True once ``message_stop`` or ``error`` was produced."""
        return self._ended

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """The agentmsg events one decoded chunk (or ``{"error": ...}`` payload) makes."""
        where = _Where(self._events)
        self._events += 1
        if not isinstance(event, Mapping):
            raise where.error(f"a chunk must be a JSON object, got {json_type(event, article=True)}")
        if self._ended:
            raise where.error("a chunk after the stream ended")
        if event.get("error") is not None and event.get("object") is None:
            return self._error_payload(event, where)
        obj = where.get(event, "object", str, "chunk", required=True)
        choices = where.get(event, "choices", list, "chunk", required=True)
        for key in PROMPT_FILTER_KEYS:  # Azure OpenAI
            value = event.get(key)
            if not _nothing(value):
                self._prompt_filters[key] = value
        if obj == "" and not choices and not self._started:
            # Azure OpenAI opens its streams with a prompt-filter chunk: object, id and model empty,
            # created 0, no choices. It starts nothing: the message starts with the first real chunk.
            if not any(key in event for key in PROMPT_FILTER_KEYS):
                raise where.error("chunk.object must be 'chat.completion.chunk', got ''")
            return []
        if obj != "chat.completion.chunk":
            raise where.error(f"chunk.object must be 'chat.completion.chunk', got {obj!r}")
        chunk_id = where.get(event, "id", str, "chunk", required=True)
        model = where.get(event, "model", str, "chunk", required=False)
        created = where.get(event, "created", (int, float), "chunk", required=False)
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start(chunk_id, model, created))
        elif chunk_id != self._response_id:
            raise where.error(f"chunk.id changed from {self._response_id!r} to {chunk_id!r}")
        for i, choice in enumerate(choices):
            if not isinstance(choice, Mapping):
                raise where.error(f"chunk.choices[{i}] must be an object, got {json_type(choice, article=True)}")
            index = where.get(choice, "index", int, f"chunk.choices[{i}]", required=True)
            if index == self._choice:
                self._choice_events(choice, f"chunk.choices[{i}]", where, out)
        usage = where.get(event, "usage", Mapping, "chunk", required=False)
        if usage is not None:
            normalised = _usage(usage, where)
            if normalised is not None:
                out.append(StreamEvent.usage_update(normalised))
            self._usage_details = _usage_extras(usage)
        return out

    def close(self) -> list[StreamEvent]:
        """End of input: ``message_stop`` after a finish, else an ``error`` (the stream was cut short)."""
        if self._ended:
            return []
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start(None, None, None))
        self._ended = True
        if self._finish_reason is None:
            out.append(
                StreamEvent.error(
                    "the stream ended before the model finished (no finish_reason): it was cut short",
                )
            )
            return out
        if self._usage_details:
            self._whole_block(self._kept(USAGE_BLOCK, self._usage_details), out)
        for key in PROMPT_FILTER_KEYS:
            if key in self._prompt_filters:
                self._whole_block(self._kept(RESPONSE_PREFIX + key, {key: self._prompt_filters[key]}), out)
        if not _nothing(self._content_filters):
            self._whole_block(self._kept(CONTENT_FILTER_BLOCK, {CONTENT_FILTER_KEY: self._content_filters}), out)
        refused = self._refusal_block is not None
        reason = StopReason.CONTENT_FILTER if refused else _FINISH_TO_STOP.get(self._finish_reason)
        out.append(StreamEvent.message_stop(reason, self._finish_reason))
        return out

    def _whole_block(self, block: ContentBase, out: list[StreamEvent]) -> None:
        """A block that arrives whole (a kept field or response data): started and stopped at once."""
        index = self._next_block
        self._next_block += 1
        out.append(StreamEvent.block_start(index, block))
        out.append(StreamEvent.block_stop(index))

    # --- pieces -------------------------------------------------------------

    def _start(self, chunk_id: str | None, model: str | None, created: float | None) -> StreamEvent:
        self._started = True
        self._response_id = chunk_id
        try:
            timestamp = datetime.fromtimestamp(created, UTC) if created is not None else None
        except (OverflowError, OSError, ValueError):
            raise StreamProtocolError(f"chunk.created {created!r} is not a representable time") from None
        provenance = Provenance(self._provider, self._api, model or self._model, chunk_id or "")
        message_id = self._message_id or chunk_id or str(uuid.uuid4())
        return StreamEvent.message_start(message_id, provenance=provenance, timestamp=timestamp)

    def _error_payload(self, event: Mapping[str, Any], where: _Where) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start(None, None, None))
        out.append(_error_event(event.get("error"), where))
        self._ended = True
        return out

    def _open_block(self, content: TextContent | ToolCallContent, out: list[StreamEvent]) -> int:
        index = self._next_block
        self._next_block += 1
        self._open.append(index)
        out.append(StreamEvent.block_start(index, content))
        return index

    def _choice_events(self, choice: Mapping[str, Any], path: str, where: _Where, out: list[StreamEvent]) -> None:
        delta = where.get(choice, "delta", Mapping, path, required=False) or {}
        finish_reason = where.get(choice, "finish_reason", str, path, required=False)
        path = f"{path}.delta"
        content = where.get(delta, "content", str, path, required=False)
        refusal = where.get(delta, "refusal", str, path, required=False)
        tool_calls = where.get(delta, "tool_calls", list, path, required=False)
        where.get(delta, "role", str, path, required=False)
        audio = where.get(delta, "audio", Mapping, path, required=False)
        annotations = where.get(delta, "annotations", list, path, required=False)
        logprobs = where.get(choice, "logprobs", Mapping, path[: -len(".delta")], required=False)
        if not _nothing(choice.get(CONTENT_FILTER_KEY)):  # Azure OpenAI: the last results a chunk carried
            self._content_filters = choice[CONTENT_FILTER_KEY]
        if delta.get("function_call") is not None:
            raise where.error(f"{path}.function_call: the deprecated function_call delta is not supported (use tools)")
        if self._finish_reason is not None:
            if content or refusal or tool_calls or audio or annotations or finish_reason is not None:
                raise where.error(f"{path}: content after the choice finished ({self._finish_reason!r})")
            return  # an empty delta after the finish adds nothing
        if content is not None:
            if self._text_block is None:
                self._text_block = self._open_block(TextContent(), out)
            if content:
                out.append(StreamEvent.text_delta(self._text_block, content))
        if refusal is not None:
            if self._refusal_block is None:
                self._refusal_block = self._open_block(TextContent(), out)
            if refusal:
                out.append(StreamEvent.text_delta(self._refusal_block, refusal))
        if annotations:
            self._annotations_delta(annotations, f"{path}.annotations", where, out)
        if logprobs is not None:
            self._logprobs(logprobs, f"{path[: -len('.delta')]}.logprobs", where, out)
        if audio is not None:
            self._audio_delta(audio, f"{path}.audio", where)
        for i, call in enumerate(tool_calls or ()):
            self._tool_call(call, f"{path}.tool_calls[{i}]", where, out)
        if finish_reason is not None:
            self._finish_reason = finish_reason
            out.extend(StreamEvent.block_stop(index) for index in sorted(self._open))
            self._open.clear()
            self._finish_fields(out)

    def _annotations_delta(self, annotations: list[Any], path: str, where: _Where, out: list[StreamEvent]) -> None:
        """URL citations go on the text block (as the converter reads them); other annotations are kept whole."""
        citations = _citations_in(annotations) if not self._annotations else None
        if citations is None:
            self._annotations.extend(annotations)
            return
        if self._text_block is None:
            self._text_block = self._open_block(TextContent(), out)
        out.extend(StreamEvent.citation_delta(self._text_block, citation) for citation in citations)

    def _logprobs(self, logprobs: Mapping[str, Any], path: str, where: _Where, out: list[StreamEvent]) -> None:
        for key, block in (("content", self._text_block), ("refusal", self._refusal_block)):
            entries = where.get(logprobs, key, list, path, required=False)
            if not entries:
                continue
            tokens = _tokens_in(entries)
            if tokens is None:
                raise where.error(f"{path}.{key}: expected token logprobs ({{token, logprob, bytes, top_logprobs}})")
            if block is None:
                raise where.error(f"{path}.{key}: token logprobs for {key} that never came")
            out.append(StreamEvent.logprobs_delta(block, tokens))

    def _audio_delta(self, audio: Mapping[str, Any], path: str, where: _Where) -> None:
        """Audio output pieces: ``data`` and ``transcript`` appended, other fields replaced (as the SDK merges them)."""
        merged = self._audio if self._audio is not None else {}
        for key, value in audio.items():
            if key in ("data", "transcript") and isinstance(value, str) and isinstance(merged.get(key), str):
                merged[key] += value
            elif value is not None:
                merged[key] = value
        self._audio = merged

    def _finish_fields(self, out: list[StreamEvent]) -> None:
        """The assistant fields the converter keeps whole (``audio``, annotations that are not URL citations)."""
        for name, value in (("audio", self._audio), ("annotations", self._annotations)):
            if value:
                self._whole_block(self._kept(FIELD_PREFIX + name, {name: value}), out)

    @staticmethod
    def _kept(block_type: str, value: Mapping[str, Any]) -> ProviderContent:
        try:
            return ProviderContent(BLOCK_FORMAT, block_type, _sorted_json(value))
        except ValidationError as exc:
            raise StreamProtocolError(f"{block_type}: {exc}") from None

    def _tool_call(self, call: Any, path: str, where: _Where, out: list[StreamEvent]) -> None:
        if not isinstance(call, Mapping):
            raise where.error(f"{path} must be an object, got {json_type(call, article=True)}")
        index = where.get(call, "index", int, path, required=True)
        if index < 0:
            raise where.error(f"{path}.index must not be negative, got {index}")
        call_id = where.get(call, "id", str, path, required=False)
        kind = where.get(call, "type", str, path, required=False)
        if kind is not None and kind != "function":
            raise where.error(f"{path}.type must be 'function', got {kind!r}")
        function = where.get(call, "function", Mapping, path, required=False) or {}
        name = where.get(function, "name", str, f"{path}.function", required=False)
        arguments = where.get(function, "arguments", str, f"{path}.function", required=False)
        block = self._tool_blocks.get(index)
        if block is None:
            if not call_id or not name:
                raise where.error(
                    f"{path}: the first delta of tool call {index} must carry its id and function.name"
                    f" (got id {call_id!r}, name {name!r})"
                )
            block = self._open_block(ToolCallContent(call_id, name, arguments="", index=index), out)
            self._tool_blocks[index] = block
            self._tool_ids[index] = (call_id, name)
        else:
            known_id, known_name = self._tool_ids[index]
            if (call_id and call_id != known_id) or (name and name != known_name):
                raise where.error(
                    f"{path}: tool call {index} was {known_name!r} (id {known_id!r}),"
                    f" this delta says {name!r} (id {call_id!r})"
                )
        if arguments:
            out.append(StreamEvent.arguments_delta(block, arguments))


def _error_event(error: Any, where: _Where) -> StreamEvent:
    """An agentmsg ``error`` for an OpenAI error object (``{"message", "type", "code", "param"}``)."""
    if isinstance(error, Mapping):
        message = error.get("message")
        code = error.get("code") or error.get("type")
        return StreamEvent.error(
            message if isinstance(message, str) and message else "the provider reported an error",
            code=code if isinstance(code, str) else "",
        )
    if isinstance(error, str) and error:
        return StreamEvent.error(error)
    raise where.error(f"error must be an object or a string, got {json_type(error, article=True)}")


def stream_events(events: Iterable[Mapping[str, Any]], **options: Any) -> Iterator[StreamEvent]:
    """The agentmsg events for decoded chunks (options as :class:`OpenAIChatStreamParser`)."""
    parser = OpenAIChatStreamParser(**options)
    for event in events:
        yield from parser.feed(event)
    yield from parser.close()


def stream_events_from_sse(lines: Iterable[str | bytes], **options: Any) -> Iterator[StreamEvent]:
    """The agentmsg events for raw SSE text (lines of the HTTP body).

    ``data: [DONE]`` ends the stream (nothing after it is read); an SSE
    ``error`` event, or a data payload ``{"error": {...}}``, becomes an agentmsg
    ``error``; data that is not JSON is a
    :class:`~agentmsg.streaming.StreamProtocolError` naming the SSE event (from 0).
    """
    parser = OpenAIChatStreamParser(**options)
    for number, sse in enumerate(iter_sse(lines)):
        if sse.data.strip() == "[DONE]":
            break
        try:
            data = json.loads(sse.data)
        except (ValueError, RecursionError) as exc:
            if sse.event == "error":
                yield from parser.feed({"error": sse.data})
                break
            raise StreamProtocolError(f"SSE event {number}: data is not JSON ({exc}): {sse.data[:80]!r}") from None
        if sse.event == "error" and isinstance(data, Mapping) and data.get("error") is None:
            data = {"error": data}
        yield from parser.feed(data)
        if parser.ended:
            break
    yield from parser.close()
