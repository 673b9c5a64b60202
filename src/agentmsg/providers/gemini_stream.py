"""Gemini ``streamGenerateContent`` chunks as agentmsg stream events (``agentmsg.providers.gemini_stream``).

The Gemini API (``generativelanguage.googleapis.com``, provider ``google``, API
``google-generative-ai``) streams a response as a sequence of
``GenerateContentResponse`` objects: a JSON array without ``?alt=sse``, one SSE
``data:`` line each with it. :class:`GeminiStreamParser` turns each decoded
object into :class:`~agentmsg.streaming.StreamEvent`\\ s that obey the fold's
rules (``agentmsg.streaming``); :func:`stream_events` takes decoded objects
(e.g. the JSON array) and :func:`stream_events_from_sse` raw SSE text.

The folded message is the one :func:`agentmsg.providers.gemini.from_gemini_response`
reads from the same response unstreamed (one block per part there): the stop
reasons, usage, tool-call ids, placeholder signatures and provider blocks
follow that converter's rules, and its ``finishReason`` mapping and id
function are reused. The differences are listed at the end.

What each chunk field becomes:

=====================================  =======================================================
Gemini (camelCase JSON)                agentmsg
=====================================  =======================================================
first chunk                            ``message_start``: id from ``message_id=``, else the
                                       ``responseId``, else a UUID4; provenance ``google`` /
                                       ``google-generative-ai`` / ``modelVersion`` (else
                                       ``model=``) / ``responseId``
``candidates[0].content.parts[]``      blocks, by the rule below
``text`` part                          text block; ``text_delta``
``text`` part with ``thought: true``   thinking block; ``thinking_delta``
``thoughtSignature`` on any part       ``signature_delta`` on the block the part belongs to
``functionCall`` part                  a whole tool-call block at once: ``block_start`` (id,
                                       name, ``index`` = position among the message's calls),
                                       one ``arguments`` delta holding ``args`` as compact
                                       JSON, ``block_stop``
``functionCall`` in pieces (Vertex     one tool-call block when the call is complete: the
AI ``partialArgs``, ``willContinue``)  ``args`` built from the pieces (below)
``executableCode``,                    a whole hosted call or result block, as
``codeExecutionResult``, ``toolCall``, ``from_gemini_response`` reads the part (the part
``toolResponse`` part                  verbatim as its ``original``)
any other part                         a ``ProviderContent`` block holding the whole part
                                       verbatim (see below)
``groundingMetadata``,                 at the end (:meth:`close`), from their last value:
``urlContextMetadata``,                citations and logprobs on the answer text blocks, then
``logprobsResult``                     the hosted search / URL-context blocks, as
                                       ``from_gemini_response`` reads them
``promptFeedback``, fields with no     at the end: the ``promptFeedback`` and
typed place (``avgLogprobs``,          ``responseMetadata`` provider blocks (the converter's
``*TokensDetails``, ``createTime``...) rules, from the last value of each field)
``finishReason``, ``finishMessage``    remembered; they end the message at :meth:`close`
``promptFeedback.blockReason``         the prompt was blocked: ``message_stop`` with
                                       ``CONTENT_FILTER`` and the block reason, at :meth:`close`
``usageMetadata``                      ``usage`` (running totals; sent when the counts change)
an ``{"error": {...}}`` chunk          ``error``: its ``message`` verbatim, code = its
                                       ``status`` (else its numeric ``code``); the stream ends
=====================================  =======================================================

**Blocks.** Gemini numbers no blocks, so this parser does. Consecutive text
parts of the same kind (text, or thought text) go to one block, as the
response's parts would if it were not streamed; a part of the other kind, a
``functionCall`` or any other part closes it and starts the next block. Two
more details keep signatures whole: a text part with empty text and no
signature adds nothing and changes no block, and a part carrying a
``thoughtSignature`` starts a new block of its kind when the open block
already has a signature (signatures are never joined). A part with no data
field but a signature (``{"thoughtSignature": ...}``) is an empty text part of
its kind. The converter's placeholder signatures
(:data:`~agentmsg.providers.gemini.PLACEHOLDER_SIGNATURES`) are not read as
signatures. Blocks are numbered 0, 1, 2... in the order they start.

**Provider blocks.** A part agentmsg cannot hold as text, a call or a hosted
tool block is kept whole, signature and flags included, as
``ProviderContent("google", <type>, <compact JSON of the part>)``: the type is
the part's data field (``inlineData``, ``fileData``, ``functionResponse``, or a
field this version does not know). So is a part that carries what agentmsg has
no place for: ``videoMetadata``, ``partMetadata``, ``mediaResolution``, a field
this version does not know, or ``thought: true`` on anything but text.

**Answer text stays open.** Gemini sends grounding supports and logprobs for
the answer text in the last chunks, and the fold takes citation and logprob
deltas only on open blocks, so an answer text block (not thinking) is stopped
at the end of the stream, after them, rather than when the next part starts.

**Streamed function-call arguments** (Vertex AI
``streamFunctionCallArguments``). A ``functionCall`` with a ``name`` and
``willContinue: true`` starts a call; the ``functionCall`` parts after it hold
``partialArgs`` pieces (``jsonPath`` such as ``$.a.b[0]``, and one of
``stringValue``, ``numberValue``, ``boolValue``, ``nullValue``), until one
without ``willContinue`` (often ``{}``) ends it. Each piece sets the value at
its path; a ``stringValue`` after a piece of the same path that had
``willContinue`` is appended. The call is sent whole when it ends (or when
another part or the end of the stream comes first).

**Tool-call ids.** A ``functionCall`` has an ``id`` only sometimes; when it is
missing the call gets the converter's generated id,
:func:`~agentmsg.providers.gemini.generated_call_id` of the ``responseId``
known so far, the call's block index and its name: deterministic, unique
within the message, the id ``from_gemini_response`` gives the call, and one
``to_gemini`` leaves out again when the message is replayed. ``args`` absent
or ``null`` is ``{}``. ``args`` that is not an object (the API promises a
``Struct``) is written as its own JSON text and so kept verbatim; the fold
lists it in ``issues`` as arguments that are not a JSON object.

**Stop reasons** (the converter's mapping). ``finishReason`` ``STOP`` is
``TOOL_CALLS`` when the message has a function call, else ``STOP``;
``MAX_TOKENS`` is ``LENGTH``; ``SAFETY``, ``RECITATION``, ``LANGUAGE``,
``BLOCKLIST``, ``PROHIBITED_CONTENT``, ``SPII``, ``IMAGE_SAFETY``,
``IMAGE_PROHIBITED_CONTENT`` and ``IMAGE_RECITATION`` are ``CONTENT_FILTER``;
``MALFORMED_FUNCTION_CALL``, ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS``,
``OTHER`` (an unknown reason: the answer may be incomplete), ``IMAGE_OTHER``
and ``NO_IMAGE`` are ``ERROR``; ``FINISH_REASON_UNSPECIFIED`` and reasons this
version does not know give no normalised reason. The raw string is always
kept verbatim in ``stop_reason_raw``. Vertex AI's integer enum encoding
(``"finishReason": 1``, ``"blockReason": 1``) reads as the names, as the
converter reads it (``1`` is ``STOP``). The message ends with ``message_stop``,
except: an ``ERROR`` reason with a ``finishMessage`` ends with an ``error``
event holding the message (code = the reason), which is how the message gets
its ``error`` text; and a message with no block at all that would stop with
``STOP`` or no normalised reason (Gemini's empty answer) ends with an
``error`` ("the Gemini response had no content"), since the contract holds no
empty answer that claims a normal stop.

**End of stream.** Gemini sends no end event: :meth:`GeminiStreamParser.close`
ends the message, stopping the open block and sending ``message_stop`` (or the
``error`` above) for the last ``finishReason`` seen. When no ``finishReason``
(and no prompt block) ever arrived, the stream was cut short: ``close`` sends an
``error`` saying so and leaves the open block open, so the fold keeps it as far
as it got and lists it in ``issues``.

**Usage** (``usage.proto``): ``promptTokenCount`` includes
``cachedContentTokenCount``, so ``input_tokens`` = prompt - cached and
``cache_read_tokens`` = cached; ``output_tokens`` = ``candidatesTokenCount`` +
``thoughtsTokenCount``; ``reasoning_tokens`` = ``thoughtsTokenCount``;
``total_tokens`` = ``totalTokenCount`` as reported. Only the counts a chunk
reports are set (an omitted count is not known, not zero), and a chunk without
``usageMetadata`` or with no counts in it (Vertex AI's ``{"trafficType": ...}``)
sends no ``usage`` event, so a stream that never reports usage gives a message
whose usage is None. ``toolUsePromptTokenCount`` (tool-use prompts such as
search results) is counted apart by Gemini and is not added to any count
(``totalTokenCount`` is kept as reported); it and the ``*TokensDetails`` lists
of the last ``usageMetadata`` go to the ``responseMetadata`` block.

**Skipped**: ``content.role`` and the candidate ``index``.

**Rejected** with :class:`~agentmsg.streaming.StreamProtocolError` naming the
chunk number (from 0) and the field: a chunk that is not an object; a field of
the wrong JSON type (enums must be strings, counts non-negative integers); a
string that is not valid UTF-8 (a lone surrogate) or a number JSON cannot
hold; a part holding two data fields; a ``functionCall`` without a ``name``;
a streamed-argument piece whose ``jsonPath`` is not a path or does not fit the
arguments so far, or that holds no value or two; a candidate other than
candidate 0 (the parser folds one candidate: request ``candidateCount`` 1);
``cachedContentTokenCount`` above ``promptTokenCount``; SSE data that is not
JSON; and any chunk after the stream ended (after an ``error`` chunk, or after
:meth:`~GeminiStreamParser.close`).

**Where the unstreamed converter differs.** A ``finishMessage`` with a reason
other than ``ERROR`` is lost here (``message_stop`` has no field for it);
``from_gemini_response`` keeps it as ``error``. An empty answer stopping with
``STOP`` ends in the ``error`` above; ``from_gemini_response`` cannot build it.
A ``usageMetadata`` with no counts gives no usage here and an empty ``Usage``
there. Parts it refuses (two data fields, ``args`` that is not an object)
are errors or kept verbatim here, and empty text parts give no block here.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from agentmsg.content import Content, ProviderContent, TextContent, ThinkingContent, ToolCallContent
from agentmsg.errors import ValidationError
from agentmsg.messages import Provenance, StopReason
from agentmsg.providers import _gemini_extras as extras
from agentmsg.providers._common import json_type
from agentmsg.providers.gemini import API, PLACEHOLDER_SIGNATURES, PROVIDER, _finish_stop, generated_call_id
from agentmsg.streaming import StreamEvent, StreamProtocolError, iter_sse
from agentmsg.usage import Usage

__all__ = ["API", "PROVIDER", "GeminiStreamParser", "stream_events", "stream_events_from_sse"]

# Part fields that describe the part rather than hold its data; all but the first two are
# fields agentmsg has no place for, which make the part a provider block.
_PART_METADATA = frozenset({"thought", "thoughtSignature", "mediaResolution", "videoMetadata", "partMetadata"})
# The data fields of Part (the `data` oneof in content.proto).
_PART_DATA = frozenset(
    {
        "text",
        "inlineData",
        "functionCall",
        "functionResponse",
        "fileData",
        "executableCode",
        "codeExecutionResult",
    }
)
_USAGE_COUNTS = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "totalTokenCount",
    "toolUsePromptTokenCount",
)


def _fail(where: str, what: str) -> StreamProtocolError:
    return StreamProtocolError(f"Gemini stream {where}: {what}")


def _get(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    """``obj[key]`` when present and not null, checked to be ``kind``; None otherwise."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _fail(f"{where}.{key}", f"expected {what}, got {json_type(value)}")
    if isinstance(value, str):
        _utf8(value, f"{where}.{key}")
    return value


def _utf8(text: str, where: str) -> None:
    """Protobuf strings are UTF-8: JSON can still decode to a lone surrogate (``"\\ud800"``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(where, f"not encodable as UTF-8: {exc.reason} at {exc.start}") from None


def _compact(value: Any, where: str) -> str:
    """Compact JSON text (``json.dumps`` with ``ensure_ascii=False``) of a value read from the stream."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:  # e.g. NaN or infinity, which Python's json reads
        raise _fail(where, f"not JSON-serialisable: {exc}") from None
    _utf8(text, where)
    return text


def _count(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    value = _get(obj, key, int, where, "a non-negative integer")
    if value is not None and value < 0:
        raise _fail(f"{where}.{key}", f"expected a non-negative integer, got {value}")
    return value  # type: ignore[no-any-return]


def _usage(metadata: Mapping[str, Any], where: str) -> Usage | None:
    """``usageMetadata`` normalised per usage.proto; None when it reports no count."""
    counts = {key: _count(metadata, key, where) for key in _USAGE_COUNTS}
    prompt, cached = counts["promptTokenCount"], counts["cachedContentTokenCount"]
    candidates, thoughts = counts["candidatesTokenCount"], counts["thoughtsTokenCount"]
    input_tokens = prompt
    if prompt is not None and cached is not None:
        if cached > prompt:
            raise _fail(
                f"{where}.cachedContentTokenCount",
                f"{cached} cached tokens exceed the prompt's {prompt} (promptTokenCount includes them)",
            )
        input_tokens = prompt - cached
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    total = counts["totalTokenCount"]
    if input_tokens is None and output is None and cached is None and total is None:
        return None
    try:
        return Usage(
            input_tokens=input_tokens,
            output_tokens=output,
            cache_read_tokens=cached,
            reasoning_tokens=thoughts,
            total_tokens=total,
        )
    except ValidationError as exc:  # a count beyond int64
        raise _fail(where, str(exc)) from None


_JSON_PATH = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_PIECE_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")


class _StreamedCall:
    """A function call whose ``args`` arrive as ``partialArgs`` pieces (Vertex AI ``streamFunctionCallArguments``).

    Each piece sets the value at its ``jsonPath`` (``$.a.b[0]``); a
    ``stringValue`` after a piece of the same path that said ``willContinue``
    is appended to it.
    """

    def __init__(self, name: str, call_id: str | None, signature: str) -> None:
        self.name, self.call_id, self.signature = name, call_id, signature
        self.args: dict[str, Any] = {}
        self._continued: set[str] = set()

    def add(self, piece: Any, where: str) -> None:
        if not isinstance(piece, Mapping):
            raise _fail(where, f"expected an object, got {json_type(piece)}")
        path = _get(piece, "jsonPath", str, where, "a string")
        steps: list[str | int] = []
        if path and path.startswith("$"):
            found = list(_JSON_PATH.finditer(path, 1))
            if "".join(m.group(0) for m in found) == path[1:]:
                steps = [int(m.group(2)) if m.group(2) else m.group(1) for m in found]
        if not steps:
            raise _fail(f"{where}.jsonPath", f"expected a JSON path such as $.a[0].b, got {path!r}")
        given = [key for key in _PIECE_VALUES if key in piece]
        if len(given) != 1:
            raise _fail(where, f"a piece holds one of {', '.join(_PIECE_VALUES)}")
        value = None if given[0] == "nullValue" else piece[given[0]]
        target: Any = self.args
        for step, following in itertools.pairwise(steps):
            target = self._child(target, step, [] if isinstance(following, int) else {}, where)
        last = steps[-1]
        if isinstance(last, int) != isinstance(target, list):
            raise _fail(f"{where}.jsonPath", f"{path!r} does not fit the arguments so far")
        if isinstance(last, int):
            target.extend([None] * (last + 1 - len(target)))
        if path in self._continued and isinstance(value, str) and isinstance(target[last], str):
            target[last] += value
        else:
            target[last] = value
        if _get(piece, "willContinue", bool, where, "a boolean"):
            self._continued.add(path)
        else:
            self._continued.discard(path)

    @staticmethod
    def _child(target: Any, step: str | int, fresh: Any, where: str) -> Any:
        if isinstance(step, int) and isinstance(target, list):
            target.extend([None] * (step + 1 - len(target)))
            if target[step] is None:
                target[step] = fresh
        elif isinstance(step, str) and isinstance(target, dict):
            target.setdefault(step, fresh)
        else:
            raise _fail(f"{where}.jsonPath", "the path does not fit the arguments so far")
        if not isinstance(target[step], (dict, list)):
            raise _fail(f"{where}.jsonPath", "the path goes through a value that is not an object or array")
        return target[step]


class GeminiStreamParser:
    """Turns Gemini ``GenerateContentResponse`` chunks into stream events (rules in the module docstring).

    ``feed`` one decoded chunk at a time, then ``close`` at the end of input.
    ``message_id`` names the message (default: the ``responseId``, else a
    UUID4); ``model`` is the provenance model when the chunks carry no
    ``modelVersion``.
    """

    def __init__(self, *, message_id: str | None = None, model: str = "") -> None:
        if message_id is not None and (not isinstance(message_id, str) or not message_id):
            raise ValidationError.single("message_id", "type", "message_id must be a non-empty string")
        if not isinstance(model, str):
            raise ValidationError.single("model", "type", f"expected str, got {type(model).__name__}")
        self._message_id = message_id
        self._model = model
        self._chunks = 0
        self._started = False
        self._ended = False
        self._response_id = ""
        self._response_id_sent = False
        self._next_index = 0
        self._open: int | None = None  # the open text or thinking block
        self._open_thinking = False
        self._open_signed = False
        self._tool_calls = 0
        self._finish: str | None = None
        self._finish_message = ""
        self._blocked: str | None = None
        self._usage: Usage | None = None
        self._streaming: _StreamedCall | None = None  # a function call whose arguments arrive in pieces
        # The text of each answer-text block (citations and logprobs go there at the end), and the
        # text blocks left open for them.
        self._texts: dict[int, str] = {}
        self._deferred: list[int] = []
        # The last value of every response and candidate field (as a response holds them).
        self._response_fields: dict[str, Any] = {}
        self._candidate_fields: dict[str, Any] = {}

    @property
    def ended(self) -> bool:
        """True once the stream ended (an ``error`` chunk, or :meth:`close`)."""
        return self._ended

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """Apply one decoded ``GenerateContentResponse``; returns the events it gives."""
        number = self._chunks
        self._chunks += 1
        where = f"chunk {number}"
        if self._ended:
            raise _fail(where, "a chunk after the stream ended")
        if not isinstance(event, Mapping):
            raise _fail(where, f"expected a JSON object, got {json_type(event)}")
        out: list[StreamEvent] = []
        response_id = _get(event, "responseId", str, where, "a string")
        model = _get(event, "modelVersion", str, where, "a string")
        if not self._started:
            out.append(self._start(response_id or "", model or ""))
        elif response_id and not self._response_id:
            self._response_id = response_id
        if "error" in event and event["error"] is not None:
            out.extend(self._error(event["error"], f"{where}.error"))
            return out
        candidates = _get(event, "candidates", list, where, "an array")
        for key, value in event.items():
            if key != "candidates" and value is not None:
                self._response_fields[key] = value
        for i, candidate in enumerate(candidates or ()):
            out.extend(self._candidate(candidate, i, f"{where}.candidates[{i}]"))
        feedback = _get(event, "promptFeedback", Mapping, where, "an object")
        if feedback is not None:
            reason = extras.enum_name(feedback.get("blockReason"), extras.BLOCK_REASON_NAMES)
            reason = _get({"blockReason": reason}, "blockReason", str, f"{where}.promptFeedback", "a string")
            if reason and reason not in ("BLOCK_REASON_UNSPECIFIED", "BLOCKED_REASON_UNSPECIFIED"):
                self._blocked = reason
        metadata = _get(event, "usageMetadata", Mapping, where, "an object")
        if metadata is not None:
            usage = _usage(metadata, f"{where}.usageMetadata")
            if usage is not None and usage != self._usage:
                self._usage = usage
                out.append(StreamEvent.usage_update(usage))
        return out

    def close(self) -> list[StreamEvent]:
        """End of input: finish the message (``message_stop``, or ``error`` when it was cut short)."""
        if self._ended:
            return []
        out: list[StreamEvent] = []
        if not self._started:
            out.append(self._start("", ""))
        self._ended = True
        response_id = "" if self._response_id_sent else self._response_id
        out.extend(self._finish_streamed())
        if self._blocked is not None:
            out.extend(self._stop_open())
            out.extend(self._tail())
            out.append(StreamEvent.message_stop(StopReason.CONTENT_FILTER, self._blocked, response_id))
        elif self._finish is not None:
            out.extend(self._stop_open())
            out.extend(self._tail())
            reason = _finish_stop(self._finish, self._tool_calls > 0)
            if reason is StopReason.ERROR and self._finish_message:
                out.append(StreamEvent.error(self._finish_message, code=self._finish))
            elif reason in (StopReason.STOP, None) and self._next_index == 0:
                # The contract holds no empty answer that claims a normal stop: it is a failure.
                text = f"the Gemini response had no content (finishReason {self._finish})"
                out.append(StreamEvent.error(text, code=self._finish))
            else:
                out.append(StreamEvent.message_stop(reason, self._finish, response_id))
        else:
            what = "no chunk arrived" if self._chunks == 0 else "no chunk had a finishReason"
            out.extend(self._stop_deferred())  # text blocks another part followed were complete
            out.append(StreamEvent.error(f"the Gemini stream was cut short: {what}"))
        return out

    def _stop_deferred(self) -> list[StreamEvent]:
        out = [StreamEvent.block_stop(index) for index in self._deferred]
        self._deferred = []
        return out

    # --- the end: candidate metadata ---------------------------------------------

    def _tail(self) -> list[StreamEvent]:
        """Citations and logprobs on the text blocks, then the metadata blocks (as ``from_gemini_response``)."""
        out: list[StreamEvent] = []
        candidate = self._candidate_fields
        tail: list[Content] = []
        try:
            grounding = candidate.get(extras.GROUNDING)
            if isinstance(grounding, Mapping) and grounding:
                cited = extras.grounding_citations(grounding, self._texts.get)
                for index in sorted(cited):
                    out.extend(StreamEvent.citation_delta(index, c) for c in cited[index])
                tail.extend(extras.grounding_blocks(grounding))
            url_context = candidate.get(extras.URL_CONTEXT)
            if isinstance(url_context, Mapping) and url_context:
                tail.extend(extras.url_context_blocks(url_context))
            logprobs = candidate.get(extras.LOGPROBS)
            placed = False
            if isinstance(logprobs, Mapping) and logprobs:
                tokens = extras.logprobs_from_result(logprobs)
                if tokens is not None and self._texts:
                    out.append(StreamEvent.logprobs_delta(min(self._texts), tokens))
                    placed = True
            feedback = self._response_fields.get(extras.PROMPT_FEEDBACK)
            if isinstance(feedback, Mapping) and feedback:
                tail.append(extras.provider_block(extras.PROMPT_FEEDBACK, feedback))
            candidate_seen = candidate if self._candidate_fields or self._next_index else None
            metadata = extras.response_metadata(self._response_fields, candidate_seen, logprobs_placed=placed)
            if metadata:
                tail.append(extras.provider_block(extras.RESPONSE_METADATA, metadata))
        except ValidationError as exc:
            raise _fail("candidate metadata", str(exc)) from None
        out.extend(self._stop_deferred())
        for block in tail:
            index = self._new_block()
            out.append(StreamEvent.block_start(index, block))
            out.append(StreamEvent.block_stop(index))
        return out

    # --- chunk parts ------------------------------------------------------------

    def _start(self, response_id: str, model: str) -> StreamEvent:
        self._started = True
        self._response_id = response_id
        self._response_id_sent = bool(response_id)
        provenance = Provenance(PROVIDER, API, model or self._model, response_id)
        return StreamEvent.message_start(self._message_id or response_id or None, provenance=provenance)

    def _error(self, error: Any, where: str) -> list[StreamEvent]:
        if not isinstance(error, Mapping):
            raise _fail(where, f"expected an object, got {json_type(error)}")
        message = _get(error, "message", str, where, "a string")
        code = _get(error, "code", int, where, "an integer")
        status = _get(error, "status", str, where, "a string")
        self._ended = True
        label = status or (str(code) if code is not None else "")
        text = message or f"the Gemini API reported an error{f' ({label})' if label else ''}"
        return [*self._stop_deferred(), StreamEvent.error(text, code=label)]

    def _candidate(self, candidate: Any, position: int, where: str) -> list[StreamEvent]:
        if not isinstance(candidate, Mapping):
            raise _fail(where, f"expected an object, got {json_type(candidate)}")
        index = _get(candidate, "index", int, where, "an integer")
        if index is None:
            index = position
        if index != 0:
            raise _fail(where, f"candidate {index}: the parser folds one candidate (request candidateCount 1)")
        out: list[StreamEvent] = []
        for key, value in candidate.items():
            if key != "content" and value is not None:
                self._candidate_fields[key] = value
        content = _get(candidate, "content", Mapping, where, "an object")
        if content is not None:
            parts = _get(content, "parts", list, f"{where}.content", "an array")
            for j, part in enumerate(parts or ()):
                out.extend(self._part(part, f"{where}.content.parts[{j}]"))
        finish = extras.enum_name(candidate.get("finishReason"), extras.FINISH_REASON_NAMES)
        finish = _get({"finishReason": finish}, "finishReason", str, where, "a string")
        if finish:
            self._finish = finish
            self._finish_message = _get(candidate, "finishMessage", str, where, "a string") or ""
        return out

    def _part(self, part: Any, where: str) -> list[StreamEvent]:
        if not isinstance(part, Mapping):
            raise _fail(where, f"expected an object, got {json_type(part)}")
        signature = _get(part, "thoughtSignature", str, where, "a string") or ""
        if signature in PLACEHOLDER_SIGNATURES:
            signature = ""
        if set(part) <= {"functionCall", "thoughtSignature"}:
            streamed = self._streamed_call(part.get("functionCall"), signature, f"{where}.functionCall")
            if streamed is not None:
                return streamed
        out = self._finish_streamed()  # another part ends a streamed call that never said it was done
        return out + self._whole_part(part, signature, where)

    def _whole_part(self, part: Mapping[str, Any], signature: str, where: str) -> list[StreamEvent]:
        thought = bool(_get(part, "thought", bool, where, "a boolean"))
        present = [key for key, value in part.items() if value is not None]
        data = [key for key in present if key not in _PART_METADATA]
        known = [key for key in data if key in _PART_DATA]
        if len(known) > 1:
            raise _fail(where, f"a part holds one data field, got {' and '.join(known)}")
        kind = (known or data or ["text"])[0]  # a part with no data field is empty text
        unplaced = len(data) > 1 or any(key in _PART_METADATA - {"thought", "thoughtSignature"} for key in present)
        if kind in extras.HOSTED_PARTS and not unplaced and not thought:
            return self._hosted(kind, part, signature, where)
        if kind not in ("text", "functionCall") or unplaced or (thought and kind != "text"):
            return self._provider(part, kind, where)
        if kind == "functionCall":
            return self._function_call(part["functionCall"], signature, f"{where}.functionCall")
        text = _get(part, "text", str, where, "a string") or ""
        return self._text(text, thought, signature)

    def _new_block(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index

    def _stop_open(self) -> list[StreamEvent]:
        if self._open is None:
            return []
        index, self._open = self._open, None
        if index in self._texts:  # answer text stays open for the citations and logprobs of the last chunks
            self._deferred.append(index)
            return []
        return [StreamEvent.block_stop(index)]

    def _text(self, text: str, thinking: bool, signature: str) -> list[StreamEvent]:
        if not text and not signature:
            return []
        out: list[StreamEvent] = []
        index = self._open
        if index is None or self._open_thinking != thinking or (signature and self._open_signed):
            out.extend(self._stop_open())
            index = self._new_block()
            out.append(StreamEvent.block_start(index, ThinkingContent() if thinking else TextContent()))
            self._open, self._open_thinking, self._open_signed = index, thinking, False
            if not thinking:
                self._texts[index] = ""
        if text and not thinking:
            self._texts[index] += text
        if text:
            out.append(StreamEvent.thinking_delta(index, text) if thinking else StreamEvent.text_delta(index, text))
        if signature:
            out.append(StreamEvent.signature_delta(index, signature))
            self._open_signed = True
        return out

    def _function_call(self, call: Any, signature: str, where: str) -> list[StreamEvent]:
        if not isinstance(call, Mapping):
            raise _fail(where, f"expected an object, got {json_type(call)}")
        name = _get(call, "name", str, where, "a string")
        if not name:
            raise _fail(f"{where}.name", "a function call needs a name")
        call_id = _get(call, "id", str, where, "a string")
        args = call.get("args")
        # args that is not the object the API promises is kept as its JSON text, which the fold reports.
        arguments = "{}" if args is None else _compact(args, f"{where}.args")
        return self._emit_call(name, call_id, arguments, signature)

    def _streamed_call(self, call: Any, signature: str, where: str) -> list[StreamEvent] | None:
        """A piece of a function call streamed in parts (Vertex AI), or None when ``call`` is a whole call.

        The first piece has the ``name`` and ``willContinue: true``; the
        pieces after it hold ``partialArgs`` until one without
        ``willContinue``, which ends the call: it is then sent whole.
        """
        if not isinstance(call, Mapping):
            return None
        more = _get(call, "willContinue", bool, where, "a boolean")
        if self._streaming is None:
            if not more:
                return None
            name = _get(call, "name", str, where, "a string")
            if not name:
                raise _fail(f"{where}.name", "a function call needs a name")
            self._streaming = _StreamedCall(name, _get(call, "id", str, where, "a string"), signature)
        elif signature:
            self._streaming.signature += signature
        pieces = _get(call, "partialArgs", list, where, "an array")
        for k, piece in enumerate(pieces or ()):
            self._streaming.add(piece, f"{where}.partialArgs[{k}]")
        if more:
            return []
        return self._finish_streamed()

    def _finish_streamed(self) -> list[StreamEvent]:
        if self._streaming is None:
            return []
        done, self._streaming = self._streaming, None
        return self._emit_call(done.name, done.call_id, _compact(done.args, "partialArgs"), done.signature)

    def _emit_call(self, name: str, call_id: str | None, arguments: str, signature: str) -> list[StreamEvent]:
        out = self._stop_open()
        index = self._new_block()
        call_id = call_id or generated_call_id(self._response_id, index, name)
        opening = ToolCallContent(call_id, name, arguments="", index=self._tool_calls)
        self._tool_calls += 1
        out.append(StreamEvent.block_start(index, opening))
        out.append(StreamEvent.arguments_delta(index, arguments))
        if signature:
            out.append(StreamEvent.signature_delta(index, signature))
        out.append(StreamEvent.block_stop(index))
        return out

    def _hosted(self, kind: str, part: Mapping[str, Any], signature: str, where: str) -> list[StreamEvent]:
        try:
            block = extras.hosted_part(kind, part, signature)
        except ValidationError as exc:
            raise _fail(where, str(exc)) from None
        out = self._stop_open()
        index = self._new_block()
        out.append(StreamEvent.block_start(index, block))
        out.append(StreamEvent.block_stop(index))
        return out

    def _provider(self, part: Mapping[str, Any], block_type: str, where: str) -> list[StreamEvent]:
        block = ProviderContent(PROVIDER, block_type, _compact(part, where))
        out = self._stop_open()
        index = self._new_block()
        out.append(StreamEvent.block_start(index, block))
        out.append(StreamEvent.block_stop(index))
        return out


def stream_events(
    events: Iterable[Mapping[str, Any]], *, message_id: str | None = None, model: str = ""
) -> Iterator[StreamEvent]:
    """The events for a whole stream of decoded ``GenerateContentResponse`` chunks (e.g. the JSON array)."""
    parser = GeminiStreamParser(message_id=message_id, model=model)
    for event in events:
        yield from parser.feed(event)
    yield from parser.close()


def stream_events_from_sse(
    lines: Iterable[str | bytes], *, message_id: str | None = None, model: str = ""
) -> Iterator[StreamEvent]:
    """The events for raw ``?alt=sse`` text: each SSE event's data is one chunk (Gemini names no events)."""
    parser = GeminiStreamParser(message_id=message_id, model=model)
    for number, sse in enumerate(iter_sse(lines)):
        try:
            chunk = json.loads(sse.data)
        except (ValueError, RecursionError) as exc:
            raise StreamProtocolError(f"Gemini stream SSE event {number}: data is not JSON: {exc}") from None
        yield from parser.feed(chunk)
    yield from parser.close()
