"""Streaming: ``agentmsg.v1.StreamEvent`` and the one fold that turns events into a message.

The fold (:class:`StreamAccumulator`) follows these rules, and
:class:`AssistantMessageChunk` ``+`` applies the same merge:

1. **Order.** A stream is ``message_start``, then block events, ``usage``
   anywhere, and one ``message_stop`` or ``error`` last. An event before
   ``message_start`` or after the end is a :class:`StreamProtocolError`.
2. **Blocks by index.** ``block_start(i)`` opens block *i* with its initial
   content; ``block_delta(i)`` appends to it; ``block_stop(i)`` closes it. The
   finished message holds the blocks in index order (gaps in the numbering are
   allowed). A delta for a block never started, already stopped, or of the
   wrong kind (thinking text into a text block, arguments into anything but a
   tool call) is an error naming the block.
3. **Appending.** Text, thinking text, signatures and tool-call argument
   fragments are concatenated in arrival order. A signature delta may go to a
   text, thinking, tool-call or hosted-tool-call block and attaches to that
   block. An argument fragment may go to a tool call (its ``arguments``) or a
   hosted tool call (its ``input``). Citation and logprob deltas go to text
   blocks and are appended, in arrival order, after the citations and tokens
   the block started with. Hosted tool results and provider blocks arrive
   whole in their ``block_start`` and take no delta.
4. **Tool-call arguments** (and hosted tool call input) are parsed when their
   block stops. Text that is not a JSON object is kept verbatim on the call
   and listed in :attr:`issues` (and ``ToolCallContent.arguments_error`` says
   why); it is never replaced.
5. **Usage.** Each count in a ``usage`` event replaces the one held so far
   (providers send running totals); counts it leaves unset keep their value.
   Cost amounts merge the same way.
6. **Duplicates.** Numbered events (``sequence``) at or below the last one
   applied are ignored; a number past a gap is an error. Unnumbered events are
   applied as they come, except exact repeats of a ``message_start``,
   ``block_start``, ``block_stop`` or ``message_stop`` already applied, which
   are ignored (a relay that resends them does no harm).
7. **Finishing.** :meth:`StreamAccumulator.finish` needs the stream to have
   ended. After ``message_stop``, a block with no ``block_stop`` is an
   :class:`IncompleteStreamError` that names it. After ``error``, open blocks
   are kept as far as they got (the message records the error), and listed
   in :attr:`issues`. The finished message must meet the contract: a stream
   that stops normally (stop, tool calls, or no reason) with no block at all
   raises :class:`~agentmsg.ValidationError` (rule
   ``assistant.content.required``); parsers of providers that send such
   answers add an empty text block or end with an ``error``.
8. **The end names the rest.** ``message_stop`` gives the stop reason, raw
   reason and stop sequence; its ``response_id`` and ``model``, when set,
   replace the provenance's (a model set there finished the message in place
   of the one ``message_start`` named); its ``provider_extra`` is the
   message's.
"""

from __future__ import annotations

import codecs
import json
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

from agentmsg._wrapper import ProtoWrapper
from agentmsg.content import (
    Citation,
    ContentBase,
    ProviderContent,
    TokenLogprob,
    check_int32,
    check_utf8,
    parse_json_object,
)
from agentmsg.errors import AgentMsgError, ValidationError
from agentmsg.messages import AssistantMessage, Provenance, StopReason, _set_timestamp, _stop_to_pb
from agentmsg.usage import Usage
from agentmsg.v1 import content_pb2, message_pb2, stream_pb2, usage_pb2

__all__ = [
    "AssistantMessageChunk",
    "IncompleteStreamError",
    "SSEEvent",
    "StreamAccumulator",
    "StreamEvent",
    "StreamProtocolError",
    "events_from_message",
    "fold",
    "iter_sse",
    "iter_sse_chunks",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BLOCK_KINDS = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_call", "provider", "hosted_tool_call", "hosted_tool_result"}
)
# Which delta kinds each block kind takes.
_DELTAS = {
    "text": frozenset({"text", "signature", "citation", "logprobs"}),
    "thinking": frozenset({"thinking", "signature"}),
    "tool_call": frozenset({"tool_call", "signature"}),
    "hosted_tool_call": frozenset({"tool_call", "signature"}),
    "redacted_thinking": frozenset(),
    "provider": frozenset(),
    "hosted_tool_result": frozenset(),
}


class StreamProtocolError(AgentMsgError, ValueError):
    """An event that breaks the stream's rules (out of order, wrong kind, a gap)."""


class IncompleteStreamError(AgentMsgError, ValueError):
    """The stream was finished before it ended, or with a block still open."""

    def __init__(self, message: str, open_blocks: list[int]) -> None:
        self.open_blocks = tuple(open_blocks)
        super().__init__(message)


class StreamEvent(ProtoWrapper[stream_pb2.StreamEvent]):
    """One event of a stream (``agentmsg.v1.StreamEvent``). Build with the classmethods."""

    __slots__ = ()
    _PB = stream_pb2.StreamEvent

    @property
    def kind(self) -> str | None:
        """The ``event`` oneof arm: ``message_start``, ``block_delta``...; None when unknown."""
        return self._pb.WhichOneof("event")

    @property
    def sequence(self) -> int | None:
        """The event's number, when the producer numbers them."""
        return self._pb.sequence if self._pb.HasField("sequence") else None

    @classmethod
    def message_start(
        cls,
        message_id: str | None = None,
        *,
        provenance: Provenance | None = None,
        timestamp: datetime | float | None = None,
    ) -> StreamEvent:
        """The first event; ``message_id`` defaults to a new UUID4, ``timestamp`` (datetime or epoch seconds) to now."""
        if message_id is not None:
            _text(message_id, "message_id")
        start = stream_pb2.MessageStart(message_id=message_id or str(uuid.uuid4()))
        _set_timestamp(start.timestamp, timestamp)
        if provenance is not None:
            start.provenance.CopyFrom(provenance.pb)
        return cls._wrap(stream_pb2.StreamEvent(message_start=start))

    @classmethod
    def block_start(cls, index: int, content: ContentBase) -> StreamEvent:
        """Open block ``index`` with its initial content."""
        _index(index)
        return cls._wrap(stream_pb2.StreamEvent(block_start=stream_pb2.BlockStart(index=index, content=content.pb)))

    @classmethod
    def text_delta(cls, index: int, text: str) -> StreamEvent:
        """Append text to text block ``index``."""
        _index(index)
        _text(text, "text")
        return cls._wrap(
            stream_pb2.StreamEvent(block_delta=stream_pb2.BlockDelta(index=index, text=stream_pb2.TextDelta(text=text)))
        )

    @classmethod
    def thinking_delta(cls, index: int, text: str) -> StreamEvent:
        """Append reasoning text to thinking block ``index``."""
        _index(index)
        _text(text, "text")
        delta = stream_pb2.BlockDelta(index=index, thinking=stream_pb2.ThinkingDelta(text=text))
        return cls._wrap(stream_pb2.StreamEvent(block_delta=delta))

    @classmethod
    def signature_delta(cls, index: int, signature: str) -> StreamEvent:
        """Append signature text to block ``index``."""
        _index(index)
        _text(signature, "signature")
        delta = stream_pb2.BlockDelta(index=index, signature=stream_pb2.SignatureDelta(signature=signature))
        return cls._wrap(stream_pb2.StreamEvent(block_delta=delta))

    @classmethod
    def arguments_delta(cls, index: int, arguments: str) -> StreamEvent:
        """Append a fragment of tool call ``index``'s argument text."""
        _index(index)
        _text(arguments, "arguments")
        delta = stream_pb2.BlockDelta(index=index, tool_call=stream_pb2.ToolCallDelta(arguments=arguments))
        return cls._wrap(stream_pb2.StreamEvent(block_delta=delta))

    @classmethod
    def citation_delta(cls, index: int, citation: Citation) -> StreamEvent:
        """Add a citation to text block ``index``."""
        _index(index)
        if not isinstance(citation, Citation):
            raise ValidationError.single("citation", "type", f"expected Citation, got {type(citation).__name__}")
        delta = stream_pb2.BlockDelta(index=index, citation=stream_pb2.CitationDelta(citation=citation.pb))
        return cls._wrap(stream_pb2.StreamEvent(block_delta=delta))

    @classmethod
    def logprobs_delta(cls, index: int, logprobs: Iterable[TokenLogprob]) -> StreamEvent:
        """Append token log probabilities to text block ``index``."""
        _index(index)
        items = list(logprobs)
        for i, item in enumerate(items):
            if not isinstance(item, TokenLogprob):
                raise ValidationError.single(
                    f"logprobs[{i}]", "type", f"expected TokenLogprob, got {type(item).__name__}"
                )
        delta = stream_pb2.BlockDelta(
            index=index, logprobs=stream_pb2.LogprobsDelta(logprobs=[item.pb for item in items])
        )
        return cls._wrap(stream_pb2.StreamEvent(block_delta=delta))

    @classmethod
    def block_stop(cls, index: int) -> StreamEvent:
        """Close block ``index``."""
        _index(index)
        return cls._wrap(stream_pb2.StreamEvent(block_stop=stream_pb2.BlockStop(index=index)))

    @classmethod
    def usage_update(cls, usage: Usage) -> StreamEvent:
        """Report token counts so far."""
        return cls._wrap(stream_pb2.StreamEvent(usage=stream_pb2.UsageUpdate(usage=usage.pb)))

    @classmethod
    def message_stop(
        cls,
        stop_reason: StopReason | str | None = None,
        stop_reason_raw: str = "",
        response_id: str = "",
        *,
        stop_sequence: str = "",
        provider_extra: ProviderContent | None = None,
        model: str = "",
    ) -> StreamEvent:
        """The last event of a complete message.

        ``provider_extra`` becomes the message's (the response keys no field
        holds, gathered by the parser); ``model`` renames the provenance's model
        when another model finished the message (Anthropic ``fallback``).
        """
        _text(stop_reason_raw, "stop_reason_raw")
        _text(response_id, "response_id")
        _text(stop_sequence, "stop_sequence")
        _text(model, "model")
        if provider_extra is not None and not isinstance(provider_extra, ProviderContent):
            raise ValidationError.single(
                "provider_extra", "type", f"expected ProviderContent, got {type(provider_extra).__name__}"
            )
        stop = stream_pb2.MessageStop(
            stop_reason=_stop_to_pb(stop_reason),
            stop_reason_raw=stop_reason_raw,
            response_id=response_id,
            stop_sequence=stop_sequence,
            model=model,
        )
        if provider_extra is not None:
            stop.provider_extra.CopyFrom(provider_extra.pb.provider)
        return cls._wrap(stream_pb2.StreamEvent(message_stop=stop))

    @classmethod
    def error(cls, message: str, *, code: str = "", aborted: bool = False) -> StreamEvent:
        """The last event of a failed message."""
        _text(message, "message")
        _text(code, "code")
        reason = message_pb2.STOP_REASON_ABORT if aborted else message_pb2.STOP_REASON_ERROR
        return cls._wrap(
            stream_pb2.StreamEvent(error=stream_pb2.StreamError(message=message, stop_reason=reason, code=code))
        )

    def with_sequence(self, sequence: int) -> StreamEvent:
        """A copy numbered ``sequence``."""
        copy = self.copy()
        copy.pb.sequence = sequence
        return copy

    def __repr__(self) -> str:
        return f"StreamEvent({self.kind}, {self._pb.ListFields()[-1][1] if self._pb.ListFields() else ''!s:.80})"


def _text(value: Any, field: str) -> None:
    """Event text must be a str protobuf can hold (UTF-8): a ValidationError otherwise."""
    if not isinstance(value, str):
        raise ValidationError.single(field, "type", f"expected str, got {type(value).__name__}")
    check_utf8(value, field)


def _index(index: Any) -> None:
    if not isinstance(index, int) or isinstance(index, bool):
        raise ValidationError.single("index", "type", f"expected int, got {type(index).__name__}")
    check_int32(index, "index")


class _Block:
    """A block being built: its initial content plus appended fragments."""

    __slots__ = ("citations", "content", "kind", "logprobs", "open", "parts", "signature")

    def __init__(self, content: content_pb2.Content) -> None:
        self.content = content
        self.kind: str = content.WhichOneof("kind") or ""
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.citations: list[content_pb2.Citation] = []
        self.logprobs: list[content_pb2.TokenLogprob] = []
        self.open = True

    def append(self, delta_kind: str, text: str) -> None:
        if delta_kind == "signature":
            self.signature.append(text)
        else:
            self.parts.append(text)

    def merge(self, other: _Block, index: int) -> None:
        """Add ``other``'s fragments after this block's (the chunk ``+`` rule)."""
        if other.kind != self.kind:
            raise StreamProtocolError(f"block {index}: cannot merge a {other.kind} block into a {self.kind} block")
        if self.kind == "tool_call":
            mine, theirs = self.content.tool_call, other.content.tool_call
            if theirs.id and mine.id and theirs.id != mine.id:
                raise StreamProtocolError(f"block {index}: tool call ids differ ({mine.id!r}, {theirs.id!r})")
            if not mine.id:
                mine.id = theirs.id
            if not mine.name:
                mine.name = theirs.name
            mine.arguments += theirs.arguments
        elif self.kind == "hosted_tool_call":
            mine_h, theirs_h = self.content.hosted_tool_call, other.content.hosted_tool_call
            if theirs_h.id and mine_h.id and theirs_h.id != mine_h.id:
                raise StreamProtocolError(
                    f"block {index}: hosted tool call ids differ ({mine_h.id!r}, {theirs_h.id!r})"
                )
            if not mine_h.id:
                mine_h.id = theirs_h.id
            if not mine_h.name:
                mine_h.name = theirs_h.name
            mine_h.input += theirs_h.input
        elif self.kind == "text":
            self.content.text.text += other.content.text.text
            self.citations.extend(other.content.text.citations)
            self.logprobs.extend(other.content.text.logprobs)
        elif self.kind == "thinking":
            self.content.thinking.text += other.content.thinking.text
        self.parts.extend(other.parts)
        self.signature.extend(other.signature)
        self.citations.extend(other.citations)
        self.logprobs.extend(other.logprobs)
        self.open = self.open and other.open

    def build(self) -> content_pb2.Content:
        """The finished block."""
        content = content_pb2.Content()
        content.CopyFrom(self.content)
        joined = "".join(self.parts)
        signature = "".join(self.signature)
        if self.kind == "text":
            content.text.text += joined
            content.text.signature += signature
            content.text.citations.extend(self.citations)
            content.text.logprobs.extend(self.logprobs)
        elif self.kind == "thinking":
            content.thinking.text += joined
            content.thinking.signature += signature
        elif self.kind == "tool_call":
            content.tool_call.arguments += joined
            content.tool_call.signature += signature
        elif self.kind == "hosted_tool_call":
            content.hosted_tool_call.input += joined
            content.hosted_tool_call.signature += signature
        return content

    def describe(self, index: int) -> str:
        if self.kind == "tool_call":
            return f"block {index} (tool call {self.content.tool_call.name!r}, id {self.content.tool_call.id!r})"
        if self.kind == "hosted_tool_call":
            call = self.content.hosted_tool_call
            return f"block {index} (hosted tool call {call.name!r}, id {call.id!r})"
        return f"block {index} ({self.kind})"


def _merge_usage(target: usage_pb2.Usage, update: usage_pb2.Usage) -> None:
    # MergeFrom sets exactly the fields present in `update`: the replace-what-is-reported rule.
    target.MergeFrom(update)


class StreamAccumulator:
    """Folds stream events into an :class:`~agentmsg.AssistantMessage` (rules in the module docstring).

    ``add`` takes :class:`StreamEvent` wrappers or generated ``StreamEvent``
    messages. :attr:`issues` lists what the fold kept but flags (invalid
    argument JSON, blocks left open by an error).
    """

    def __init__(self) -> None:
        self._start: stream_pb2.MessageStart | None = None
        self._blocks: dict[int, _Block] = {}
        self._usage: usage_pb2.Usage | None = None
        self._end: stream_pb2.StreamEvent | None = None
        self._last_sequence: int | None = None
        self.issues: list[str] = []
        self.duplicates = 0

    @property
    def started(self) -> bool:
        """True once ``message_start`` was applied."""
        return self._start is not None

    @property
    def done(self) -> bool:
        """True once ``message_stop`` or ``error`` was applied."""
        return self._end is not None

    @property
    def blocks(self) -> int:
        """Content blocks started so far."""
        return len(self._blocks)

    @property
    def message_id(self) -> str | None:
        """The id from ``message_start``."""
        return self._start.message_id if self._start is not None else None

    @property
    def last_sequence(self) -> int | None:
        """The number of the last numbered event applied (None while none was)."""
        return self._last_sequence

    def add(self, event: StreamEvent | stream_pb2.StreamEvent) -> None:
        """Apply one event."""
        pb = event.pb if isinstance(event, StreamEvent) else event
        if pb.HasField("sequence"):
            sequence = pb.sequence
            last = self._last_sequence
            if last is not None and sequence <= last:
                self.duplicates += 1
                return
            expected = 0 if last is None else last + 1
            if sequence != expected:
                raise StreamProtocolError(
                    f"event {sequence} arrived after {last}: events {expected}..{sequence - 1} are missing"
                )
            self._last_sequence = sequence
        kind = pb.WhichOneof("event")
        if kind == "block_delta":
            self._delta(pb.block_delta)
        elif kind == "block_start":
            self._block_start(pb.block_start)
        elif kind == "block_stop":
            self._block_stop(pb.block_stop.index)
        elif kind == "message_start":
            self._message_start(pb.message_start)
        elif kind == "usage":
            self._require_open("usage")
            if self._usage is None:
                self._usage = usage_pb2.Usage()
            _merge_usage(self._usage, pb.usage.usage)
        elif kind in ("message_stop", "error"):
            if self._end is not None and self._end == pb:
                self.duplicates += 1
                return
            self._require_open(kind)
            self._end = pb
        else:
            raise StreamProtocolError(f"unknown stream event {kind!r}")

    def extend(self, events: Iterable[StreamEvent | stream_pb2.StreamEvent]) -> Self:
        """Apply events in order; returns self."""
        for event in events:
            self.add(event)
        return self

    def _require_open(self, what: str) -> None:
        if self._start is None:
            raise StreamProtocolError(f"{what} before message_start")
        if self._end is not None:
            raise StreamProtocolError(f"{what} after the stream ended ({self._end.WhichOneof('event')})")

    def _message_start(self, start: stream_pb2.MessageStart) -> None:
        if self._start is not None:
            if self._start == start:
                self.duplicates += 1
                return
            raise StreamProtocolError("a second message_start in one stream")
        self._start = start

    def _block_start(self, start: stream_pb2.BlockStart) -> None:
        self._require_open(f"block_start for block {start.index}")
        index = start.index
        existing = self._blocks.get(index)
        if existing is not None:
            fresh = not (existing.parts or existing.signature or existing.citations or existing.logprobs)
            if existing.content == start.content and fresh:
                self.duplicates += 1
                return
            raise StreamProtocolError(f"block {index} started twice")
        kind = start.content.WhichOneof("kind")
        if kind not in _BLOCK_KINDS:
            raise StreamProtocolError(f"block {index}: an assistant message cannot carry {kind or 'unset'} content")
        content = content_pb2.Content()
        content.CopyFrom(start.content)
        self._blocks[index] = _Block(content)

    def _delta(self, delta: stream_pb2.BlockDelta) -> None:
        block = self._blocks.get(delta.index)
        if block is None:
            self._require_open("block_delta")
            raise StreamProtocolError(f"delta for block {delta.index} before its block_start")
        if not block.open:
            raise StreamProtocolError(f"delta for {block.describe(delta.index)} after its block_stop")
        if self._end is not None:
            raise StreamProtocolError(f"delta for block {delta.index} after the stream ended")
        delta_kind = delta.WhichOneof("delta") or ""
        if delta_kind not in _DELTAS[block.kind]:
            raise StreamProtocolError(f"a {delta_kind or 'unset'} delta cannot go to {block.describe(delta.index)}")
        if delta_kind == "text":
            block.parts.append(delta.text.text)
        elif delta_kind == "thinking":
            block.parts.append(delta.thinking.text)
        elif delta_kind == "tool_call":
            block.parts.append(delta.tool_call.arguments)
        elif delta_kind == "citation":
            block.citations.append(delta.citation.citation)
        elif delta_kind == "logprobs":
            block.logprobs.extend(delta.logprobs.logprobs)
        else:
            block.signature.append(delta.signature.signature)

    def _block_stop(self, index: int) -> None:
        block = self._blocks.get(index)
        if block is None:
            self._require_open("block_stop")
            raise StreamProtocolError(f"block_stop for block {index}, which never started")
        if not block.open:
            self.duplicates += 1
            return
        self._require_open(f"block_stop for block {index}")
        block.open = False
        if block.kind == "tool_call":
            arguments = block.content.tool_call.arguments + "".join(block.parts)
            _, error = parse_json_object(arguments)
            if error is not None:
                self.issues.append(f"{block.describe(index)}: arguments kept verbatim, not a JSON object: {error}")
        elif block.kind == "hosted_tool_call":
            _, error = parse_json_object(block.content.hosted_tool_call.input + "".join(block.parts))
            if error is not None:
                self.issues.append(f"{block.describe(index)}: input kept verbatim, not a JSON object: {error}")

    def finish(self) -> AssistantMessage:
        """The finished message (rules 7): raises :class:`IncompleteStreamError` when it is not."""
        if self._start is None:
            raise IncompleteStreamError("the stream never started (no message_start)", [])
        if self._end is None:
            open_blocks = [i for i, b in sorted(self._blocks.items()) if b.open]
            raise IncompleteStreamError("the stream has not ended (no message_stop or error)", open_blocks)
        open_blocks = [i for i, b in sorted(self._blocks.items()) if b.open]
        failed = self._end.WhichOneof("event") == "error"
        if open_blocks and not failed:
            names = ", ".join(self._blocks[i].describe(i) for i in open_blocks)
            raise IncompleteStreamError(f"the message stopped with {names} still open (no block_stop)", open_blocks)
        for i in open_blocks:
            self.issues.append(f"{self._blocks[i].describe(i)} was cut short by the error and kept as far as it got")
        return self._build()

    def snapshot(self) -> AssistantMessage:
        """The message so far, open blocks included, unvalidated (for live display)."""
        return self._build(validate=False)

    def replay(self, *, chunk_size: int | None = None) -> list[StreamEvent]:
        """Unnumbered events that rebuild this fold's state so far (a live viewer's catch-up).

        ``message_start`` as applied; each block in the order it started: its ``block_start`` as applied, one
        delta per fragment kind carrying everything appended so far (text, thinking text or argument text;
        the signature; each citation; the log probabilities), and its ``block_stop`` once stopped; the usage
        so far; the ``message_stop`` or ``error`` once ended. A new fold given these events, then the events
        that follow (unnumbered, or renumbered after them), finishes as this one does. Text is cut into
        deltas of ``chunk_size`` characters (and log probabilities into as many tokens) when given.
        """
        if chunk_size is not None and chunk_size < 1:
            raise ValidationError.single("chunk_size", "gte", "chunk_size must be at least 1")
        if self._start is None:
            return []
        events = [stream_pb2.StreamEvent(message_start=self._start)]
        for index, block in self._blocks.items():
            events.append(stream_pb2.StreamEvent(block_start=stream_pb2.BlockStart(index=index, content=block.content)))
            deltas: list[stream_pb2.BlockDelta] = []
            if block.parts:
                # An empty fragment still counts (a block that took one is no longer fresh): at least one delta.
                for piece in _split("".join(block.parts), chunk_size) or [""]:
                    delta = stream_pb2.BlockDelta(index=index)
                    if block.kind == "text":
                        delta.text.text = piece
                    elif block.kind == "thinking":
                        delta.thinking.text = piece
                    else:
                        delta.tool_call.arguments = piece
                    deltas.append(delta)
            if block.signature:
                signature = stream_pb2.SignatureDelta(signature="".join(block.signature))
                deltas.append(stream_pb2.BlockDelta(index=index, signature=signature))
            deltas += [
                stream_pb2.BlockDelta(index=index, citation=stream_pb2.CitationDelta(citation=citation))
                for citation in block.citations
            ]
            step = chunk_size or max(len(block.logprobs), 1)
            deltas += [
                stream_pb2.BlockDelta(
                    index=index, logprobs=stream_pb2.LogprobsDelta(logprobs=block.logprobs[i : i + step])
                )
                for i in range(0, len(block.logprobs), step)
            ]
            events.extend(stream_pb2.StreamEvent(block_delta=delta) for delta in deltas)
            if not block.open:
                events.append(stream_pb2.StreamEvent(block_stop=stream_pb2.BlockStop(index=index)))
        if self._usage is not None:
            events.append(stream_pb2.StreamEvent(usage=stream_pb2.UsageUpdate(usage=self._usage)))
        if self._end is not None:
            end = stream_pb2.StreamEvent()
            end.CopyFrom(self._end)
            end.ClearField("sequence")
            events.append(end)
        return [StreamEvent._wrap(event) for event in events]

    def _build(self, *, validate: bool = True) -> AssistantMessage:
        start = self._start
        pb = message_pb2.Message(id=start.message_id if start is not None else str(uuid.uuid4()))
        body = pb.assistant
        if start is not None:
            if start.HasField("timestamp"):
                pb.timestamp.CopyFrom(start.timestamp)
            if start.HasField("provenance"):
                body.provenance.CopyFrom(start.provenance)
        if not pb.HasField("timestamp"):
            pb.timestamp.FromMicroseconds(time.time_ns() // 1000)
        body.content.extend(block.build() for _, block in sorted(self._blocks.items()))
        if self._usage is not None:
            body.usage.CopyFrom(self._usage)
        end = self._end
        if end is not None and end.WhichOneof("event") == "message_stop":
            body.stop_reason = end.message_stop.stop_reason
            body.stop_reason_raw = end.message_stop.stop_reason_raw
            body.stop_sequence = end.message_stop.stop_sequence
            if end.message_stop.response_id:
                body.provenance.response_id = end.message_stop.response_id
            if end.message_stop.model:
                body.provenance.model = end.message_stop.model
            if end.message_stop.HasField("provider_extra"):
                body.provider_extra.CopyFrom(end.message_stop.provider_extra)
        elif end is not None:
            body.stop_reason = end.error.stop_reason or message_pb2.STOP_REASON_ERROR
            body.stop_reason_raw = end.error.code
            body.error = end.error.message
        return AssistantMessage.from_proto(pb, validate=validate)


def fold(events: Iterable[StreamEvent | stream_pb2.StreamEvent]) -> AssistantMessage:
    """Fold a whole stream into its message (see :class:`StreamAccumulator`)."""
    return StreamAccumulator().extend(events).finish()


class AssistantMessageChunk:
    """A piece of an assistant message, addable like LangChain's ``AIMessageChunk``.

    ``chunk_a + chunk_b`` merges by block index with the fold's rules: text,
    reasoning, signatures and argument fragments concatenate (left then
    right), a tool call's id and name come from whichever side has them, usage
    counts the right side reports replace the left's, and the right side's
    stop reason wins when it has one. :meth:`to_message` finishes the sum.
    """

    __slots__ = ("_blocks", "_end", "_start", "_usage")

    def __init__(self) -> None:
        self._start: stream_pb2.MessageStart | None = None
        self._blocks: dict[int, _Block] = {}
        self._usage: usage_pb2.Usage | None = None
        self._end: stream_pb2.StreamEvent | None = None

    @classmethod
    def from_event(cls, event: StreamEvent | stream_pb2.StreamEvent) -> AssistantMessageChunk:
        """The chunk one event stands for."""
        pb = event.pb if isinstance(event, StreamEvent) else event
        chunk = cls()
        kind = pb.WhichOneof("event")
        if kind == "message_start":
            chunk._start = pb.message_start
        elif kind == "block_start":
            if pb.block_start.content.WhichOneof("kind") not in _BLOCK_KINDS:
                raise StreamProtocolError(f"block {pb.block_start.index}: not assistant content")
            content = content_pb2.Content()
            content.CopyFrom(pb.block_start.content)
            chunk._blocks[pb.block_start.index] = _Block(content)
        elif kind == "block_delta":
            delta = pb.block_delta
            delta_kind = delta.WhichOneof("delta") or ""
            block = _Block(_empty_block(delta))
            if delta_kind == "text":
                block.parts.append(delta.text.text)
            elif delta_kind == "thinking":
                block.parts.append(delta.thinking.text)
            elif delta_kind == "tool_call":
                block.kind = ""  # arguments fit a tool call or a hosted tool call: the kind comes from the other side
                block.parts.append(delta.tool_call.arguments)
            elif delta_kind in ("citation", "logprobs"):
                pass  # _empty_block put them on the text block
            else:
                block.kind = ""  # a signature fits any signed block: its kind comes from the other side
                block.signature.append(delta.signature.signature)
            chunk._blocks[delta.index] = block
        elif kind == "block_stop":
            pass
        elif kind == "usage":
            chunk._usage = usage_pb2.Usage()
            chunk._usage.CopyFrom(pb.usage.usage)
        elif kind in ("message_stop", "error"):
            chunk._end = pb
        else:
            raise StreamProtocolError(f"unknown stream event {kind!r}")
        return chunk

    @classmethod
    def from_message(cls, message: AssistantMessage) -> AssistantMessageChunk:
        """A chunk holding a whole message."""
        return sum((cls.from_event(e) for e in events_from_message(message)), cls())

    def __add__(self, other: AssistantMessageChunk) -> AssistantMessageChunk:
        if not isinstance(other, AssistantMessageChunk):
            return NotImplemented
        out = AssistantMessageChunk()
        out._start = self._start or other._start
        for source in (self, other):
            for index, block in source._blocks.items():
                mine = out._blocks.get(index)
                if mine is None:
                    copy = _Block(_copy(block.content))
                    copy.kind, copy.parts, copy.signature = block.kind, list(block.parts), list(block.signature)
                    copy.citations, copy.logprobs = list(block.citations), list(block.logprobs)
                    out._blocks[index] = copy
                elif not block.kind:  # a bare signature or argument fragment
                    _check_fragments(mine.kind, block.parts, index)
                    mine.parts.extend(block.parts)
                    mine.signature.extend(block.signature)
                elif not mine.kind:
                    _check_fragments(block.kind, mine.parts, index)
                    signature, parts = mine.signature, mine.parts
                    mine.content, mine.kind = _copy(block.content), block.kind
                    mine.parts, mine.signature = parts + block.parts, signature + block.signature
                else:
                    mine.merge(block, index)
        if self._usage is not None or other._usage is not None:
            out._usage = usage_pb2.Usage()
            for usage in (self._usage, other._usage):
                if usage is not None:
                    _merge_usage(out._usage, usage)
        out._end = other._end if other._end is not None else self._end
        return out

    def __radd__(self, other: Any) -> AssistantMessageChunk:
        if other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @property
    def text(self) -> str:
        """The text so far."""
        return "".join(
            block.content.text.text + "".join(block.parts)
            for _, block in sorted(self._blocks.items())
            if block.kind == "text"
        )

    def to_message(self) -> AssistantMessage:
        """The message this chunk adds up to (validated; tool arguments kept verbatim)."""
        accumulator = StreamAccumulator()
        accumulator._start = self._start or stream_pb2.MessageStart(message_id=str(uuid.uuid4()))
        for index, block in self._blocks.items():
            content = block.content
            if not block.kind:
                if not block.parts:
                    raise StreamProtocolError(f"block {index}: a signature with no block to attach to")
                # argument fragments with no start: a tool call, as before v1.1
                content = content_pb2.Content(tool_call=content_pb2.ToolCallContent())
            finished = _Block(content)
            finished.parts, finished.signature, finished.open = block.parts, block.signature, False
            finished.citations, finished.logprobs = block.citations, block.logprobs
            accumulator._blocks[index] = finished
        accumulator._usage = self._usage
        accumulator._end = self._end or stream_pb2.StreamEvent(message_stop=stream_pb2.MessageStop())
        return accumulator._build()


def _empty_block(delta: stream_pb2.BlockDelta) -> content_pb2.Content:
    delta_kind = delta.WhichOneof("delta") or ""
    index = delta.index
    if delta_kind == "text":
        return content_pb2.Content(text=content_pb2.TextContent())
    if delta_kind == "thinking":
        return content_pb2.Content(thinking=content_pb2.ThinkingContent())
    if delta_kind in ("tool_call", "signature"):
        return content_pb2.Content()
    if delta_kind == "citation":
        return content_pb2.Content(text=content_pb2.TextContent(citations=[delta.citation.citation]))
    if delta_kind == "logprobs":
        return content_pb2.Content(text=content_pb2.TextContent(logprobs=delta.logprobs.logprobs))
    raise StreamProtocolError(f"block {index}: unknown delta {delta_kind!r}")


def _check_fragments(kind: str, parts: list[str], index: int) -> None:
    """Argument fragments (a chunk of unknown kind) merge only into a tool call or a hosted tool call."""
    if parts and kind and kind not in ("tool_call", "hosted_tool_call"):
        raise StreamProtocolError(f"block {index}: cannot merge tool-call arguments into a {kind} block")


def _copy(content: content_pb2.Content) -> content_pb2.Content:
    copy = content_pb2.Content()
    copy.CopyFrom(content)
    return copy


def events_from_message(message: AssistantMessage, *, chunk_size: int | None = None) -> list[StreamEvent]:
    """Replay a finished message as the events that build it (for relaying to a live viewer).

    Text, reasoning and arguments are sent in pieces of ``chunk_size``
    characters (whole when None). ``fold(events_from_message(m)) == m``.
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("message", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    if chunk_size is not None and chunk_size < 1:
        raise ValidationError.single("chunk_size", "gte", "chunk_size must be at least 1")
    pb = message.pb
    body = pb.assistant
    start = stream_pb2.MessageStart(message_id=pb.id, timestamp=pb.timestamp)
    if body.HasField("provenance"):
        start.provenance.CopyFrom(body.provenance)
    events = [StreamEvent._wrap(stream_pb2.StreamEvent(message_start=start))]
    for index, content in enumerate(body.content):
        kind = content.WhichOneof("kind")
        opening = content_pb2.Content()
        opening.CopyFrom(content)
        pieces: list[stream_pb2.BlockDelta] = []
        if kind == "text":
            opening.text.text, opening.text.signature = "", ""
            del opening.text.citations[:]
            del opening.text.logprobs[:]
            pieces += [
                stream_pb2.BlockDelta(index=index, text=stream_pb2.TextDelta(text=t))
                for t in _split(content.text.text, chunk_size)
            ]
            if content.text.logprobs:
                logprobs = stream_pb2.LogprobsDelta(logprobs=content.text.logprobs)
                pieces.append(stream_pb2.BlockDelta(index=index, logprobs=logprobs))
            pieces += [
                stream_pb2.BlockDelta(index=index, citation=stream_pb2.CitationDelta(citation=citation))
                for citation in content.text.citations
            ]
            signature = content.text.signature
        elif kind == "thinking":
            opening.thinking.text, opening.thinking.signature = "", ""
            pieces += [
                stream_pb2.BlockDelta(index=index, thinking=stream_pb2.ThinkingDelta(text=t))
                for t in _split(content.thinking.text, chunk_size)
            ]
            signature = content.thinking.signature
        elif kind == "tool_call":
            opening.tool_call.arguments, opening.tool_call.signature = "", ""
            pieces += [
                stream_pb2.BlockDelta(index=index, tool_call=stream_pb2.ToolCallDelta(arguments=t))
                for t in _split(content.tool_call.arguments, chunk_size)
            ]
            signature = content.tool_call.signature
        elif kind == "hosted_tool_call":
            opening.hosted_tool_call.input, opening.hosted_tool_call.signature = "", ""
            pieces += [
                stream_pb2.BlockDelta(index=index, tool_call=stream_pb2.ToolCallDelta(arguments=t))
                for t in _split(content.hosted_tool_call.input, chunk_size)
            ]
            signature = content.hosted_tool_call.signature
        else:
            signature = ""
        if signature:
            pieces.append(stream_pb2.BlockDelta(index=index, signature=stream_pb2.SignatureDelta(signature=signature)))
        events.append(
            StreamEvent._wrap(stream_pb2.StreamEvent(block_start=stream_pb2.BlockStart(index=index, content=opening)))
        )
        events.extend(StreamEvent._wrap(stream_pb2.StreamEvent(block_delta=piece)) for piece in pieces)
        events.append(StreamEvent._wrap(stream_pb2.StreamEvent(block_stop=stream_pb2.BlockStop(index=index))))
    if body.HasField("usage"):
        events.append(StreamEvent._wrap(stream_pb2.StreamEvent(usage=stream_pb2.UsageUpdate(usage=body.usage))))
    if body.error:
        error = stream_pb2.StreamError(message=body.error, stop_reason=body.stop_reason, code=body.stop_reason_raw)
        events.append(StreamEvent._wrap(stream_pb2.StreamEvent(error=error)))
    else:
        stop = stream_pb2.MessageStop(
            stop_reason=body.stop_reason, stop_reason_raw=body.stop_reason_raw, stop_sequence=body.stop_sequence
        )
        if body.HasField("provider_extra"):
            stop.provider_extra.CopyFrom(body.provider_extra)
        events.append(StreamEvent._wrap(stream_pb2.StreamEvent(message_stop=stop)))
    return events


def _split(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    if size is None:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One server-sent event: its ``event`` name (``"message"`` by default), ``data`` and ``id``."""

    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        """``data`` parsed as JSON."""
        return json.loads(self.data)


def iter_sse(lines: Iterable[str | bytes]) -> Iterator[SSEEvent]:
    """Parse server-sent-event lines (the WHATWG event-stream format).

    Each item is one line (its ending optional, as ``iter_lines()`` gives
    them) or several whole lines. ``data:`` lines accumulate (joined with
    newlines), a blank line dispatches the event, lines starting with ``:``
    are comments, a leading byte-order mark is ignored, and a final event with
    no blank line after it is dispatched too. For raw chunks as an HTTP client
    reads them (lines cut anywhere) use :func:`iter_sse_chunks`.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()

    def split() -> Iterator[str]:
        for item in lines:
            text = decoder.decode(item) if isinstance(item, bytes) else item
            parts = _LINE_BREAK.split(text)
            if len(parts) > 1 and parts[-1] == "":
                parts.pop()  # the item ended with its line ending
            yield from parts

    return _events(split())


def iter_sse_chunks(chunks: Iterable[str | bytes]) -> Iterator[SSEEvent]:
    """Parse server-sent events from arbitrary chunks (lines and UTF-8 cut anywhere)."""
    decoder = codecs.getincrementaldecoder("utf-8")()

    def split() -> Iterator[str]:
        buffer = ""
        for chunk in chunks:
            buffer += decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
            # A chunk may end with "\r" whose "\n" is in the next chunk: keep it back.
            cut = len(buffer) - 1 if buffer.endswith("\r") else len(buffer)
            *complete, rest = _LINE_BREAK.split(buffer[:cut])
            buffer = rest + buffer[cut:]
            yield from complete
        buffer += decoder.decode(b"", final=True)
        if buffer.rstrip("\r"):
            yield buffer.rstrip("\r")

    return _events(split())


def _events(lines: Iterator[str]) -> Iterator[SSEEvent]:
    event, event_id = "", None
    data: list[str] = []
    first = True
    for raw in lines:
        line = raw.removeprefix("\ufeff") if first else raw
        first = False
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data), event_id)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            event_id = value
    if data:
        yield SSEEvent(event or "message", "\n".join(data), event_id)
