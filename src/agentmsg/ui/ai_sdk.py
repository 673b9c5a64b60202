"""agentmsg messages as Vercel AI SDK v7 ``UIMessage`` dicts and UI message stream chunks, and back.

Plain dicts in the AI SDK's JSON form (``ai`` 7's ``UIMessage``, ``UIMessageChunk``); nothing
is imported. **One UIMessage holds a whole assistant turn**: an assistant message, the tool
message answering its calls, the next assistant message... become one UIMessage whose
steps begin with ``step-start``, each tool result merged into its call's tool part.

Writing (:func:`to_ui_messages`):

==================================  ======================================================
agentmsg                            UIMessage part
==================================  ======================================================
text (+ citations)                  ``text{text, citations?}``, then a ``source-url`` part a
                                    cited web page, a ``source-document`` part any other
                                    cited source (the whole citation in its source's
                                    ``providerMetadata.agentmsg`` when the source's fields
                                    do not hold it)
thinking, redacted thinking         ``reasoning{text, providerMetadata?}``: the signature
                                    under the producer's key, where the AI SDK's provider
                                    reads it: Anthropic ``signature`` / ``redactedData``,
                                    OpenAI Responses ``reasoningEncryptedContent``, Google
                                    ``thoughtSignature``
tool call + its result              ``tool-<name>``: ``input-available``, then
                                    ``output-available{output}`` or
                                    ``output-error{errorText}``
a call with ``requires_approval``    ``approval-requested{approval: {id: the call id}}``
a user message of decisions on      on each call's part: ``approval-responded{approval:
the calls just made (approval       {id, approved, reason?}}``, then with its result
blocks only)                        ``output-available`` / ``output-error`` (the approval
                                    kept) or, denied, ``output-denied``
hosted tool call + result           the same with ``providerExecuted: true``; an image it
                                    made also as a ``file`` part
image, audio, document (user)       ``file{mediaType, url}`` (bytes as a data URL)
a provider block                    ``data-agentmsg{data: the block's dict form}``
custom, branch / compaction         an assistant UIMessage with one
summary                             ``data-agentmsg-session{data: the message's dict form}``
==================================  ======================================================

``input`` is the parsed arguments; when the model's text is not the compact JSON of them
(spacing, key order, invalid JSON), the text rides in ``callProviderMetadata.agentmsg.arguments``.
A call's kind, index, server name, metadata and a Google signature ride in
``callProviderMetadata``; a result's metadata, ``terminate`` and index, and a hosted result's
whole form, in ``resultProviderMetadata.agentmsg``. Each agentmsg message's envelope (id, role,
timestamp, provenance, usage, stop reason, error, parent id, and for a tool message the order
of its results, for a message of decisions their order) is an entry of
``metadata.agentmsg.messages``.
A decision's ``decided_by``, ``decided_at`` and ``original`` ride in the part's
``callProviderMetadata.agentmsg.approval``; ``output-denied`` has no output, so a denial result is
read back as the decision's :meth:`~agentmsg.ToolApprovalContent.denial_text` (other words, a
result's metadata, ``is_error`` false, in ``callProviderMetadata.agentmsg.result``); a call that did
not ask for the decision it got says so (``requires_approval: false`` there).

Reported as losses: the AI SDK's places that do not exist: a user message's tool results; a
tool message whose calls are not in the turn before it; a text block's logprobs and a
signature other than Google's; image detail, a document's title and context, a media block by
provider file id; a tool result's non-text blocks (the output is its text) and the split of
several text blocks; signatures and redacted reasoning of a message with no provenance or
with a producer the AI SDK has no reader for (:mod:`agentmsg.ui._common`); a block order the
steps cannot give back; a decision that is not alone in a user message right after the step of
its call (the AI SDK keeps decisions on the call's part, read back in that place).

Reading (:func:`from_ui_messages`) takes any v7 UIMessage: tool parts in every state and
``dynamic-tool``. A part's ``approval`` makes its call ``requires_approval``; an answered one
(``approval-responded``, ``output-denied``, an output with its approval) gives the decision as a
user message right after the step's assistant message. Reported: ``input-streaming`` (read as the
input so far), an approval id other than the call's and the approval's other fields,
``source-*`` parts that no text cites, ``file`` parts in an assistant message, ``custom``,
``reasoning-file``, ``steering-message`` and other applications' ``data-*`` parts.

Stream (:class:`UIMessageStream`, :func:`ui_message_chunks`): the UI message stream chunks of
the same turn (``start``, ``start-step``, ``text-*``, ``reasoning-*``, ``tool-input-*``,
``tool-approval-request`` / ``-response``, ``tool-output-*`` with ``tool-output-denied``,
``source-url``, ``finish-step``, ``finish``), which ``readUIMessageStream`` folds to
:func:`to_ui_messages`'s UIMessage.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentmsg.content import (
    AudioContent,
    Citation,
    Content,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
    content_from_dict,
    content_to_dict,
)
from agentmsg.errors import ValidationError
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Provenance,
    StopReason,
    SystemMessage,
    ToolMessage,
    UserMessage,
    message_from_dict,
    message_to_dict,
)
from agentmsg.providers._common import split_media
from agentmsg.streaming import StreamAccumulator, StreamEvent, events_from_message
from agentmsg.ui._common import (
    AGENTMSG_KEY,
    ConversionReport,
    Loss,
    PayloadErrors,
    Reporter,
    agentmsg_meta,
    check_messages,
    data_url,
    envelope,
    json_type,
    media_from_url,
)

__all__ = [
    "DATA_BLOCK",
    "DATA_SESSION",
    "UIMessageStream",
    "finish_reason",
    "from_ui_messages",
    "output_chunk",
    "to_ui_messages",
    "ui_message_chunks",
]

TARGET: Final = "AI SDK UIMessages"
DATA_BLOCK: Final = "data-agentmsg"
"""The data part holding an agentmsg block the AI SDK has no part for."""
DATA_SESSION: Final = "data-agentmsg-session"
"""The data part holding a session-only agentmsg message."""

# (provider, api) -> the providerMetadata key the AI SDK's provider reads, and its field names
# for a thinking signature and for redacted reasoning ("" where it has none)
SIGNATURE_KEYS: Final[dict[tuple[str, str], tuple[str, str, str]]] = {
    ("anthropic", "anthropic-messages"): ("anthropic", "signature", "redactedData"),
    ("openai", "openai-responses"): ("openai", "reasoningEncryptedContent", ""),
    ("google", "google-generative-ai"): ("google", "thoughtSignature", ""),
}

# the states of a tool part whose result may still come
_WAITING: Final = frozenset({"input-available", "approval-requested", "approval-responded"})
# the fields of a decision the part's ``approval`` has no place for: in ``callProviderMetadata.agentmsg.approval``
_DECISION_EXTRA: Final = ("decided_by", "decided_at", "original")

_FINISH: Final[dict[StopReason, str]] = {
    StopReason.STOP: "stop",
    StopReason.LENGTH: "length",
    StopReason.TOOL_CALLS: "tool-calls",
    StopReason.CONTENT_FILTER: "content-filter",
    StopReason.ERROR: "error",
    StopReason.ABORT: "interrupted",
}


def finish_reason(reason: StopReason | None) -> str:
    """The AI SDK ``FinishReason`` of a stop reason (``other`` when it has none of its own)."""
    return _FINISH.get(reason, "other") if reason is not None else "other"


def _signature_key(provenance: Provenance | None) -> tuple[str, str, str] | None:
    if provenance is None:
        return None
    return SIGNATURE_KEYS.get((provenance.provider, provenance.api))


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _call_input(block: ToolCallContent) -> tuple[Any, dict[str, Any]]:
    """The part's ``input`` and the ``agentmsg`` call metadata needed to give the text back."""
    entry: dict[str, Any] = {}
    if block.arguments_error is not None:
        entry["arguments"] = block.arguments
        return block.arguments, entry
    args = block.args
    if _compact(args) != block.arguments:
        entry["arguments"] = block.arguments
    return args, entry


def _source_id(message_id: str, block: int, citation: int) -> str:
    return f"{message_id}.{block}.{citation}"


class _Writer:
    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    def citations(self, block: TextContent, message_id: str, k: int) -> list[dict[str, Any]]:
        """AI SDK citations: a web page as a ``url`` source, any other kind as a ``document`` source; what the
        source has no field for (another kind's location, confidence, the provider's own citation) rides whole in
        the source's ``providerMetadata.agentmsg.citation``."""
        out: list[dict[str, Any]] = []
        for j, citation in enumerate(block.citations):
            sid = _source_id(message_id, k, j)
            source: dict[str, Any]
            if citation.source_kind == "web":
                source = {"type": "source", "sourceType": "url", "id": sid, "url": citation.url}
                if citation.title:
                    source["title"] = citation.title
                exact = citation.confidence is None and citation.result_index is None and citation.original is None
            else:
                title = citation.title or citation.filename or citation.source or citation.file_id or "document"
                source = {"type": "source", "sourceType": "document", "id": sid}
                source |= {"mediaType": "application/octet-stream", "title": title}
                if citation.filename:
                    source["filename"] = citation.filename
                exact = False
            if not exact:
                whole = content_to_dict(TextContent("", citations=[citation]))["citations"][0]
                source["providerMetadata"] = {AGENTMSG_KEY: {"citation": whole}}
            item: dict[str, Any] = {"source": source}
            if citation.cited_text:
                item["citedText"] = citation.cited_text
            if citation.start_index is not None:
                item["startIndex"] = citation.start_index
            if citation.end_index is not None:
                item["endIndex"] = citation.end_index
            out.append(item)
        return out

    def text(self, block: TextContent, message: AssistantMessage, k: int, path: str) -> list[dict[str, Any]]:
        part: dict[str, Any] = {"type": "text", "text": block.content, "state": "done"}
        citations = self.citations(block, message.id, k)
        if citations:
            part["citations"] = citations
        if block.logprobs:
            self.loss(f"{path}.logprobs", "logprobs", "an AI SDK text part has no logprobs")
        if block.signature:
            key = _signature_key(message.provenance)
            if key is not None and key[0] == "google":
                part["providerMetadata"] = {"google": {"thoughtSignature": block.signature}}
            else:
                self.loss(
                    f"{path}.signature", "text signature", "only Google signs text, under providerMetadata.google"
                )
        sources = []
        for item in citations:
            source = item["source"]
            if source["sourceType"] == "url":
                part_source = {"type": "source-url", "sourceId": source["id"], "url": source["url"]}
                keys: tuple[str, ...] = ("title",)
            else:
                part_source = {"type": "source-document", "sourceId": source["id"], "mediaType": source["mediaType"]}
                keys = ("title", "filename")
            part_source |= {key: source[key] for key in keys if key in source}
            sources.append(part_source)
        return [part, *sources]

    def reasoning(
        self, block: ThinkingContent | RedactedThinkingContent, provenance: Provenance | None, part_id: str, path: str
    ) -> list[dict[str, Any]]:
        key = _signature_key(provenance)
        if isinstance(block, RedactedThinkingContent):
            if key is None or not key[2]:
                self.loss(path, "redacted thinking", _why_not(provenance))
                return []
            metadata = {key[0]: {key[2]: block.data}}
            return [{"type": "reasoning", "id": part_id, "text": "", "state": "done", "providerMetadata": metadata}]
        part: dict[str, Any] = {"type": "reasoning", "id": part_id, "text": block.content, "state": "done"}
        if block.signature and key is not None:
            part["providerMetadata"] = {key[0]: {key[1]: block.signature}}
        elif block.signature:
            self.loss(f"{path}.signature", "thinking signature", _why_not(provenance))
        return [part]

    def call(
        self, block: ToolCallContent | HostedToolCallContent, provenance: Provenance | None, path: str
    ) -> dict[str, Any]:
        part: dict[str, Any] = {"type": f"tool-{block.name}", "toolCallId": block.id, "state": "input-available"}
        entry: dict[str, Any] = {}
        if isinstance(block, HostedToolCallContent):
            part["providerExecuted"] = True
            value = block.input_value if block.input_error is None else block.input
            part["input"] = value
            entry["hosted"] = content_to_dict(block)
        else:
            part["input"], entry = _call_input(block)
            if block.kind is not None:
                entry["kind"] = block.kind.value
            for field, default in (("index", 0), ("server_name", ""), ("metadata", {})):
                if getattr(block, field) != default:
                    entry[field] = getattr(block, field)
            if block.provider_extra is not None:
                self.loss(f"{path}.provider_extra", "provider extra", "an AI SDK tool part has no place for it")
            if block.requires_approval:
                part["state"], part["approval"] = "approval-requested", {"id": block.id}
        metadata: dict[str, Any] = {}
        if entry:
            metadata[AGENTMSG_KEY] = entry
        if isinstance(block, ToolCallContent) and block.signature:
            key = _signature_key(provenance)
            if key is not None and key[0] == "google":
                metadata["google"] = {"thoughtSignature": block.signature}
            else:
                self.loss(f"{path}.signature", "tool-call signature", "only Google signs calls, under google")
        if metadata:
            part["callProviderMetadata"] = metadata
        return part

    def output(self, part: dict[str, Any], block: ToolResultContent, path: str) -> None:
        texts = [b for b in block.blocks if isinstance(b, TextContent)]
        for k, other in enumerate(block.blocks):
            if not isinstance(other, TextContent):
                self.loss(f"{path}.content[{k}]", f"{other.type} block", "a tool part's output here is the result text")
        if len(texts) > 1:
            self.loss(f"{path}.content", f"the boundaries of {len(texts)} text blocks", "the output is one string")
        text = "".join(b.content for b in texts)
        if block.is_error:
            part["state"], part["errorText"] = "output-error", text
        else:
            part["state"], part["output"] = "output-available", text
        entry: dict[str, Any] = {}
        for field, default in (("metadata", {}), ("terminate", False), ("terminate_message", ""), ("index", 0)):
            if getattr(block, field) != default:
                entry[field] = getattr(block, field)
        if block.name and block.name != part["type"][5:]:
            entry["name"] = block.name
        if entry:
            part["resultProviderMetadata"] = {AGENTMSG_KEY: entry}

    def hosted_output(self, part: dict[str, Any], block: HostedToolResultContent) -> None:
        if block.is_error:
            part["state"] = "output-error"
            part["errorText"] = block.error_message or block.error_code or block.text or "error"
        else:
            part["state"] = "output-available"
            if block.search_results:
                part["output"] = [{"url": r.url, "title": r.title} for r in block.search_results]
            else:
                part["output"] = block.text
        part["resultProviderMetadata"] = {AGENTMSG_KEY: {"hosted": content_to_dict(block)}}


def _hosted_files(block: HostedToolResultContent) -> list[dict[str, Any]]:
    """``file`` parts showing the images a hosted tool made (image generation), beside its tool part."""
    out: list[dict[str, Any]] = []
    for item in block.blocks:
        if isinstance(item, ImageContent):
            for piece in item.split() if item.count > 1 else [item]:
                url = data_url(piece.media_type, piece.data) if piece.data is not None else piece.url
                if url:
                    out.append({"type": "file", "mediaType": piece.media_type or "image/png", "url": url})
    return out


def _why_not(provenance: Provenance | None) -> str:
    if provenance is None:
        return "the message has no provenance"
    return f"the AI SDK has no reader for {provenance.provider} ({provenance.api}) reasoning"


def _entry(message: BaseMessage, **extra: Any) -> dict[str, Any]:
    role = message.role.value if message.role else "unknown"
    return {"id": message.id, "role": role} | envelope(message) | extra


class _Turn:
    """One assistant UIMessage being built from assistant and tool messages."""

    def __init__(self, message: AssistantMessage) -> None:
        self.out: dict[str, Any] = {"id": message.id, "role": "assistant", "parts": []}
        self.entries: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}  # tool-call id -> its part, in this turn
        self.last_was_tool = False
        self.decided = False  # the step's decisions (a user message of approval blocks) are on its parts
        self.step: set[str] = set()  # the ids of the calls of the turn's last step


def to_ui_messages(
    messages: Iterable[BaseMessage], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Messages as AI SDK v7 UIMessages (see the module docstring); what they cannot hold is reported."""
    reporter = Reporter(TARGET, report, strict=strict)
    writer = _Writer(reporter)
    out: list[dict[str, Any]] = []
    turn: _Turn | None = None
    for path, message in check_messages(messages):
        if isinstance(message, AssistantMessage):
            if turn is None or not turn.last_was_tool:
                turn = _Turn(message)
                out.append(turn.out)
            _assistant(writer, turn, message, path)
            continue
        if isinstance(message, ToolMessage) and turn is not None:
            _tool(writer, turn, message, path)
            continue
        if _decisions(turn, message):
            continue
        turn = None
        match message:
            case SystemMessage() | UserMessage():
                out.append(_plain(writer, message, path))
            case ToolMessage():
                writer.loss(path, "tool message", "AI SDK tool results live in the part of a call in the turn before")
            case CustomMessage() | BranchSummaryMessage() | CompactionSummaryMessage():
                body = message_to_dict(message)
                out.append(
                    {
                        "id": message.id,
                        "role": "assistant",
                        "parts": [{"type": DATA_SESSION, "id": message.id, "data": body}],
                    }
                )
            case _:
                writer.loss(path, type(message).__name__, "not a message the AI SDK can hold")
    for item in out:
        entries = item.pop("_entries", None)
        if entries:
            item["metadata"] = {AGENTMSG_KEY: {"messages": entries}}
    reporter.finish()
    return out


def _plain(writer: _Writer, message: SystemMessage | UserMessage, path: str) -> dict[str, Any]:
    role = "system" if isinstance(message, SystemMessage) else "user"
    parts: list[dict[str, Any]] = []
    for k, block in enumerate(message.contents):
        where = f"{path}.contents[{k}]"
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.content})
            for field in ("citations", "logprobs", "signature"):
                if getattr(block, field):
                    writer.loss(f"{where}.{field}", field, f"a {role} text part has no {field}")
        elif isinstance(block, (ImageContent, AudioContent, DocumentContent)):
            parts += _files(writer, block, where)
        else:
            writer.loss(where, f"{block.type} block", f"an AI SDK {role} message has no place for it")
    out = {"id": message.id, "role": role, "parts": parts}
    out["_entries"] = [_entry(message)]
    return out


def _files(writer: _Writer, block: ImageContent | AudioContent | DocumentContent, path: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for where, piece in split_media(block, path, writer.reporter):
        if piece.data is not None:
            url = data_url(piece.media_type, piece.data)
        elif piece.url is not None:
            url = piece.url
        else:
            writer.loss(where, "media by provider file id", "a file part here is a URL")
            continue
        part: dict[str, Any] = {"type": "file", "mediaType": piece.media_type or "application/octet-stream", "url": url}
        if isinstance(piece, ImageContent) and piece.detail is not None:
            writer.loss(f"{where}.detail", "image detail", "a file part has no detail")
        if isinstance(piece, DocumentContent):
            if piece.filename:
                part["filename"] = piece.filename
            for field in ("title", "context"):
                if getattr(piece, field):
                    writer.loss(f"{where}.{field}", f"document {field}", f"a file part has no {field}")
        if not piece.media_type:
            writer.loss(f"{where}.media_type", "unknown media type", "a file part needs one: application/octet-stream")
        out.append(part)
    return out


def _assistant(writer: _Writer, turn: _Turn, message: AssistantMessage, path: str) -> None:
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    calls: dict[str, dict[str, Any]] = {}
    merged: dict[str, int] = {}  # hosted call id -> the index of the result merged into its part
    for k, block in enumerate(message.contents):
        where = f"{path}.contents[{k}]"
        match block:
            case TextContent():
                parts += writer.text(block, message, k, where)
            case ThinkingContent() | RedactedThinkingContent():
                parts += writer.reasoning(block, message.provenance, f"{message.id}.{k}", where)
            case ToolCallContent() | HostedToolCallContent():
                part = writer.call(block, message.provenance, where)
                calls[block.id] = part
                turn.calls[block.id] = part
                parts.append(part)
            case HostedToolResultContent():
                call = calls.get(block.call_id)
                if call is None or not call.get("providerExecuted") or block.call_id in merged:
                    parts.append({"type": DATA_BLOCK, "data": content_to_dict(block)})
                else:
                    writer.hosted_output(call, block)
                    parts += _hosted_files(block)
                    merged[block.call_id] = k
            case _:
                parts.append({"type": DATA_BLOCK, "data": content_to_dict(block)})
    # reading gives a hosted result right after its call: compare that order with the original
    rebuilt: list[int] = []
    for k, block in enumerate(message.contents):
        if k in merged.values():
            continue
        rebuilt.append(k)
        if isinstance(block, HostedToolCallContent) and block.id in merged:
            rebuilt.append(merged[block.id])
    if rebuilt != list(range(len(message.contents))):
        writer.loss(f"{path}.contents", "block order", "a hosted tool's result is read back right after its call")
    turn.out["parts"] += parts
    turn.entries.append(_entry(message))
    turn.out["_entries"] = turn.entries
    turn.last_was_tool = False
    turn.decided = False
    turn.step = set(calls)


def _tool(writer: _Writer, turn: _Turn, message: ToolMessage, path: str) -> None:
    order: list[str] = []
    for k, block in enumerate(message.contents):
        where = f"{path}.contents[{k}]"
        assert isinstance(block, ToolResultContent)
        part = turn.calls.get(block.id)
        if part is None or part["state"] not in _WAITING or part.get("providerExecuted"):
            writer.loss(where, f"result of {block.id!r}", "its call is not in this turn (or already answered)")
            continue
        if part["state"] == "approval-requested":
            # answered with no decision before it: a part with an output and no decision says only that it was asked
            part.pop("approval")
            _call_meta(part)["requires_approval"] = True
        writer.output(part, block, where)
        if part.get("approval", {}).get("approved") is False:
            _denied(part, block)
        order.append(block.id)
    turn.entries.append(_entry(message, results=order))
    turn.last_was_tool = True
    turn.decided = False


def _call_meta(part: dict[str, Any]) -> dict[str, Any]:
    """The part's ``callProviderMetadata.agentmsg`` entry, made when missing."""
    metadata: dict[str, Any] = part.setdefault("callProviderMetadata", {})
    entry: dict[str, Any] = metadata.setdefault(AGENTMSG_KEY, {})
    return entry


def _denied(part: dict[str, Any], block: ToolResultContent) -> None:
    """A denied call's result as ``output-denied``: the state has no output, so what the denial text (rebuilt from
    the decision when reading) does not give back rides in ``callProviderMetadata.agentmsg.result``."""
    text = part.pop("errorText", None) if part["state"] == "output-error" else part.pop("output", None)
    entry = dict(part.pop("resultProviderMetadata", {}).get(AGENTMSG_KEY, {}))
    if text != _decision_of(part).denial_text():
        entry["content"] = text
    if not block.is_error:
        entry["is_error"] = False
    if entry:
        _call_meta(part)["result"] = entry
    part["state"] = "output-denied"


def _decision_of(part: Mapping[str, Any]) -> ToolApprovalContent:
    """The decision block a tool part's ``approval`` (and its ``agentmsg`` metadata) holds."""
    approval = part["approval"]
    data: dict[str, Any] = {
        "type": "approval",
        "call_id": part["toolCallId"],
        "decision": "approved" if approval.get("approved") else "denied",
    }
    if isinstance(approval.get("reason"), str) and approval["reason"]:
        data["reason"] = approval["reason"]
    extra = agentmsg_meta(part.get("callProviderMetadata")).get("approval")
    if isinstance(extra, Mapping):
        data |= {k: v for k, v in extra.items() if k in _DECISION_EXTRA}
    block = content_from_dict(data)
    assert isinstance(block, ToolApprovalContent)
    return block


def _decisions(turn: _Turn | None, message: BaseMessage) -> bool:
    """Put a user message of decisions on calls of the step just written on their tool parts; False when it is not
    one (its blocks then go the usual way).

    The AI SDK records a decision on the call's part (``approval-responded``, then ``output-denied`` or the output
    with the approval kept); reading gives it back as a user message right after the step's assistant message, so
    only a message in that place, holding decisions alone, each on an undecided call, maps exactly.
    """
    if turn is None or turn.last_was_tool or turn.decided or not isinstance(message, UserMessage):
        return False
    blocks = [b for b in message.contents if isinstance(b, ToolApprovalContent)]
    if not blocks or len(blocks) != len(message.contents) or any(b.decision is None for b in blocks):
        return False
    ids = [b.call_id for b in blocks]
    parts = [turn.calls.get(call_id) if call_id in turn.step else None for call_id in ids]
    if len(set(ids)) != len(ids) or any(
        p is None or p["state"] not in ("input-available", "approval-requested") or p.get("providerExecuted")
        for p in parts
    ):
        return False
    for block, part in zip(blocks, parts, strict=True):
        assert part is not None
        if "approval" not in part:
            _call_meta(part)["requires_approval"] = False
        part["state"] = "approval-responded"
        part["approval"] = {"id": block.call_id, "approved": block.approved}
        if block.reason:
            part["approval"]["reason"] = block.reason
        extra = {k: v for k, v in content_to_dict(block).items() if k in _DECISION_EXTRA}
        if extra:
            _call_meta(part)["approval"] = extra
    turn.entries.append(_entry(message, approvals=ids))
    turn.out["_entries"] = turn.entries
    turn.decided = True
    return True


# --- reading -------------------------------------------------------------------------------

_READ: Final = "agentmsg (from AI SDK UIMessages)"


class _Reader:
    def __init__(self, reporter: Reporter) -> None:
        self.errors = PayloadErrors(_READ)
        self.reporter = reporter
        self.out: list[tuple[str, dict[str, Any]]] = []

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    def string(self, item: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str:
        value = item.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            self.errors.add(f"{path}.{key}", "type", f"expected a string, got {json_type(value)}")
            return ""
        return value

    def message(self, item: Any, path: str) -> None:
        if not isinstance(item, Mapping):
            self.errors.add(path, "type", f"expected a UIMessage object, got {json_type(item)}")
            return
        message_id = self.string(item, "id", path)
        role = item.get("role")
        parts = item.get("parts")
        if not isinstance(parts, list):
            self.errors.add(f"{path}.parts", "type", f"expected an array, got {json_type(parts)}")
            return
        entries = agentmsg_meta(item.get("metadata")).get("messages")
        entries = [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
        metadata = item.get("metadata")
        if isinstance(metadata, Mapping):
            for key in metadata:
                if key != AGENTMSG_KEY:
                    self.loss(f"{path}.metadata.{key}", f"metadata key {key!r}", "agentmsg keeps only its own")
        if len(parts) == 1 and isinstance(parts[0], Mapping) and parts[0].get("type") == DATA_SESSION:
            data = parts[0].get("data")
            if isinstance(data, Mapping):
                self.out.append((path, dict(data)))
                return
        if role in ("system", "user"):
            data = dict(entries[0]) if entries else {}
            data |= {"id": message_id, "role": role, "contents": self.plain(parts, path)}
            self.out.append((path, data))
        elif role == "assistant":
            self.turn(message_id, parts, entries, path)
        else:
            self.errors.add(f"{path}.role", "enum", f"expected system, user or assistant, got {role!r}")

    def plain(self, parts: list[Any], path: str) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for j, part in enumerate(parts):
            where = f"{path}.parts[{j}]"
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text":
                blocks.append({"type": "text", "content": self.string(part, "text", where)})
            elif kind == "file":
                block = self.file(part, where)
                if block is not None:
                    blocks.append(block)
            elif kind == "step-start":
                continue
            else:
                self.loss(where, f"{kind!r} part", "a user or system message holds text and files here")
        return blocks

    def file(self, part: Mapping[str, Any], path: str) -> dict[str, Any] | None:
        media_type = self.string(part, "mediaType", path)
        url = self.string(part, "url", path)
        filename = self.string(part, "filename", path, required=False)
        kind = (
            "image" if media_type.startswith("image/") else "audio" if media_type.startswith("audio/") else "document"
        )
        if filename and kind != "document":
            self.loss(f"{path}.filename", "file name", f"an agentmsg {kind} has no file name")
        if part.get("providerReference") is not None:
            self.loss(f"{path}.providerReference", "provider reference", "read from the URL")
        with self.errors.building(path):
            return content_to_dict(media_from_url(kind, url, media_type, filename=filename))
        return None

    def turn(self, message_id: str, parts: list[Any], entries: list[Mapping[str, Any]], path: str) -> None:
        steps: list[list[tuple[str, Mapping[str, Any]]]] = [[]]
        for j, part in enumerate(parts):
            where = f"{path}.parts[{j}]"
            if not isinstance(part, Mapping):
                self.errors.add(where, "type", f"expected a part object, got {json_type(part)}")
                continue
            if part.get("type") == "step-start":
                if steps[-1]:
                    steps.append([])
                continue
            steps[-1].append((where, part))
        steps = [step for step in steps if step] or [[]]
        assistant_entries = [e for e in entries if e.get("role") == "assistant"]
        tool_entries = {i: e for i, e in enumerate(entries) if e.get("role") == "tool"}
        by_step_tool: dict[int, Mapping[str, Any]] = {}
        by_step_user: dict[int, Mapping[str, Any]] = {}
        n = -1
        for entry in entries:
            if entry.get("role") == "assistant":
                n += 1
            elif entry.get("role") == "tool" and n >= 0:
                by_step_tool[n] = entry
            elif entry.get("role") == "user" and n >= 0:
                by_step_user[n] = entry
        del tool_entries
        for n, step in enumerate(steps):
            entry = dict(assistant_entries[n]) if n < len(assistant_entries) else {}
            entry.setdefault("id", message_id if n == 0 else f"{message_id}.{n}")
            blocks, results, decisions = self.step(step)
            self.out.append((path, entry | {"role": "assistant", "contents": blocks}))
            if decisions:
                # the decisions on the step's calls: a user message after its assistant message (agentmsg's place)
                user = dict(by_step_user.get(n, {}))
                _in_order(decisions, user.pop("approvals", None), "call_id")
                user.setdefault("id", f"{entry['id']}.approvals")
                self.out.append((path, user | {"role": "user", "contents": decisions}))
            if results:
                tool = dict(by_step_tool.get(n, {}))
                _in_order(results, tool.pop("results", None), "id")
                tool.setdefault("id", f"{entry['id']}.results")
                self.out.append((path, tool | {"role": "tool", "contents": results}))

    def step(
        self, step: list[tuple[str, Mapping[str, Any]]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        blocks: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        decisions: list[dict[str, Any]] = []
        cited: set[str] = set()
        shown: set[str] = set()  # the URLs of the file parts that show a hosted tool's images
        for where, part in step:
            kind = part.get("type")
            if not isinstance(kind, str):
                self.errors.add(f"{where}.type", "type", f"expected a string, got {json_type(kind)}")
                continue
            if kind == "text":
                block: dict[str, Any] = {"type": "text", "content": self.string(part, "text", where)}
                citations = self.citations(part.get("citations"), f"{where}.citations", cited)
                if citations:
                    block["citations"] = citations
                signature = _provider_value(part.get("providerMetadata"), "google", "thoughtSignature")
                if signature:
                    block["signature"] = signature
                blocks.append(block)
            elif kind == "reasoning":
                blocks.append(self.reasoning(part, where))
            elif kind.startswith("tool-") or kind == "dynamic-tool":
                self.tool(part, kind, where, blocks, results, decisions)
                hosted = _agentmsg(part.get("resultProviderMetadata")).get("hosted")
                if isinstance(hosted, Mapping):
                    with self.errors.building(f"{where}.resultProviderMetadata.agentmsg.hosted"):
                        made = content_from_dict(hosted)
                        if isinstance(made, HostedToolResultContent):
                            shown |= {file["url"] for file in _hosted_files(made)}
            elif kind == "file" and part.get("url") in shown:
                continue
            elif kind in ("source-url", "source-document"):
                if part.get("sourceId") not in cited:
                    self.loss(where, f"{kind} part", "agentmsg keeps sources as citations of the text that cites them")
            elif kind == DATA_BLOCK and isinstance(part.get("data"), Mapping):
                blocks.append(dict(part["data"]))
            else:
                self.loss(where, f"{kind!r} part", "an agentmsg assistant message has no such block")
        return blocks, results, decisions

    def citations(self, value: Any, path: str, cited: set[str]) -> list[dict[str, Any]]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.errors.add(path, "type", f"expected an array, got {json_type(value)}")
            return []
        out: list[dict[str, Any]] = []
        for j, item in enumerate(value):
            where = f"{path}[{j}]"
            source = item.get("source") if isinstance(item, Mapping) else None
            if not isinstance(source, Mapping):
                self.errors.add(f"{where}.source", "type", f"expected an object, got {json_type(source)}")
                continue
            cited.add(str(source.get("id")))
            whole = _agentmsg(source.get("providerMetadata")).get("citation")
            if isinstance(whole, Mapping):
                out.append(dict(whole))
                continue
            if source.get("sourceType") != "url":
                self.loss(where, "document citation", "agentmsg cites a document of the request by its index")
                continue
            kwargs: dict[str, Any] = {"cited_text": item.get("citedText", "")}
            for ours, theirs in (("start_index", "startIndex"), ("end_index", "endIndex")):
                if item.get(theirs) is not None:
                    kwargs[ours] = item[theirs]
            with self.errors.building(where):
                citation = Citation.web(str(source.get("url", "")), str(source.get("title", "")), **kwargs)
                out += content_to_dict(TextContent("", citations=[citation]))["citations"]
        return out

    def reasoning(self, part: Mapping[str, Any], path: str) -> dict[str, Any]:
        text = self.string(part, "text", path)
        metadata = part.get("providerMetadata")
        redacted = _provider_value(metadata, "anthropic", "redactedData")
        if redacted:
            return {"type": "redacted_thinking", "data": redacted}
        signature = ""
        for key, field, _ in SIGNATURE_KEYS.values():
            signature = signature or _provider_value(metadata, key, field)
        return {"type": "thinking", "content": text, "signature": signature}

    def tool(
        self,
        part: Mapping[str, Any],
        kind: str,
        path: str,
        blocks: list[dict[str, Any]],
        results: list[dict[str, Any]],
        decisions: list[dict[str, Any]],
    ) -> None:
        name = self.string(part, "toolName", path) if kind == "dynamic-tool" else kind[5:]
        call_id = self.string(part, "toolCallId", path)
        state = part.get("state")
        call_meta = _agentmsg(part.get("callProviderMetadata"))
        result_meta = _agentmsg(part.get("resultProviderMetadata"))
        approval = self.approval(part, call_id, path)
        if state == "input-streaming":
            self.loss(f"{path}.state", "streaming input", "read as the input so far")
        elif part.get("preliminary"):
            self.loss(f"{path}.preliminary", "preliminary output", "read as the result")
        if part.get("providerExecuted"):
            hosted = call_meta.get("hosted")
            if isinstance(hosted, Mapping):
                blocks.append(dict(hosted))
            else:
                value = part.get("input")
                blocks.append(
                    {
                        "type": "hosted_tool_call",
                        "id": call_id,
                        "name": name,
                        "input": _compact(value) if value is not None else "",
                    }
                )
            hosted_result = result_meta.get("hosted")
            if isinstance(hosted_result, Mapping):
                blocks.append(dict(hosted_result))
            elif state in ("output-available", "output-error"):
                error = state == "output-error"
                shown = part.get("errorText") if error else part.get("output")
                body = shown if isinstance(shown, str) else _compact(shown)
                blocks.append(
                    {
                        "type": "hosted_tool_result",
                        "call_id": call_id,
                        "name": name,
                        "is_error": error,
                        "content": [{"type": "text", "content": body}] if body else [],
                    }
                )
            return
        arguments = call_meta.get("arguments")
        if not isinstance(arguments, str):
            raw = part.get("rawInput") if state in ("input-streaming", "output-error") else None
            value = part.get("input")
            arguments = raw if isinstance(raw, str) else _compact(value if value is not None else {})
        block: dict[str, Any] = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
        block |= {k: call_meta[k] for k in ("kind", "index", "server_name", "metadata") if k in call_meta}
        if call_meta.get("requires_approval", approval is not None) is True:
            block["requires_approval"] = True
        signature = _provider_value(part.get("callProviderMetadata"), "google", "thoughtSignature")
        if signature:
            block["signature"] = signature
        blocks.append(block)
        decision: ToolApprovalContent | None = None
        if approval is not None and isinstance(approval.get("approved"), bool):
            with self.errors.building(f"{path}.approval"):
                decision = _decision_of(part)
                decisions.append(content_to_dict(decision))
        if state not in ("output-available", "output-error", "output-denied"):
            return
        is_error = state != "output-available"
        if state == "output-denied":
            denied = call_meta.get("result")
            result_meta = denied if isinstance(denied, Mapping) else {}
            text: Any = result_meta.get("content")
            if text is None:
                text = decision.denial_text() if decision is not None else "The tool call was denied"
            is_error = result_meta.get("is_error", True) is not False
        else:
            text = part.get("errorText") if state == "output-error" else part.get("output")
        result: dict[str, Any] = {
            "type": "tool_result",
            "id": call_id,
            "name": result_meta.get("name", name),
            "is_error": is_error,
            "content": text if isinstance(text, str) else _compact(text),
        }
        result |= {
            k: result_meta[k] for k in ("metadata", "terminate", "terminate_message", "index") if k in result_meta
        }
        results.append(result)

    def approval(self, part: Mapping[str, Any], call_id: str, path: str) -> Mapping[str, Any] | None:
        """The part's ``approval`` (None when it has none); what agentmsg's decision has no field for is reported."""
        approval = part.get("approval")
        if approval is None:
            return None
        if not isinstance(approval, Mapping):
            self.errors.add(f"{path}.approval", "type", f"expected an object, got {json_type(approval)}")
            return None
        if approval.get("id") != call_id:
            self.loss(f"{path}.approval.id", "the approval id", "agentmsg names a decision by its call's id")
        for key in approval:
            if key not in ("id", "approved", "reason"):
                self.loss(f"{path}.approval.{key}", f"approval {key}", "agentmsg's decision has no such field")
        if part.get("state") in ("approval-responded", "output-denied") and not isinstance(
            approval.get("approved"), bool
        ):
            self.errors.add(f"{path}.approval.approved", "type", "expected a boolean")
        return approval


def _in_order(blocks: list[dict[str, Any]], order: Any, key: str) -> None:
    """Sort blocks by the call ids of a message's recorded order (when the envelope has one)."""
    if isinstance(order, list):
        rank = {call_id: i for i, call_id in enumerate(order)}
        blocks.sort(key=lambda b: rank.get(b[key], len(rank)))


def _agentmsg(metadata: Any) -> Mapping[str, Any]:
    return agentmsg_meta(metadata)


def _provider_value(metadata: Any, key: str, field: str) -> str:
    if isinstance(metadata, Mapping):
        entry = metadata.get(key)
        if isinstance(entry, Mapping) and isinstance(entry.get(field), str):
            return str(entry[field])
    return ""


def from_ui_messages(
    messages: Iterable[Mapping[str, Any]] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[AgentMessage]:
    """AI SDK UIMessages (a list, or a chat request body with ``messages``) as agentmsg messages.

    An assistant UIMessage becomes one assistant message a step, each followed by a tool
    message with the results its tool parts hold. Raises :class:`~agentmsg.ValidationError`
    naming every problem by its path; what agentmsg keeps no trace of is reported.
    """
    if isinstance(messages, Mapping):
        messages = messages.get("messages")  # type: ignore[assignment]
        if not isinstance(messages, list):
            raise ValidationError.single("messages", "type", f"expected an array, got {json_type(messages)}")
    if isinstance(messages, (str, bytes)):
        raise ValidationError.single("", "type", "expected an array of UIMessages")
    reporter = Reporter(_READ, report, strict=False)
    reader = _Reader(reporter)
    for i, item in enumerate(messages):
        reader.message(item, f"[{i}]")
    reader.errors.raise_if_any()
    out: list[AgentMessage] = []
    for path, data in reader.out:
        if data.get("role") in ("system", "user", "assistant") and not data.get("contents"):
            data["contents"] = [{"type": "text", "content": ""}]  # an empty message, as agentmsg holds one
        with reader.errors.building(path):
            out.append(message_from_dict(data))
    reader.errors.raise_if_any()
    reporter.finish()
    return out


# --- the UI message stream -----------------------------------------------------------------


class UIMessageStream:
    """agentmsg stream events of one assistant message being generated, as UI message stream chunks.

    :meth:`feed` returns the chunks (dicts) for each event: ``start-step`` at the message's
    start, ``text-*``, ``reasoning-*``, ``tool-input-*`` for its blocks (ids
    ``<message id>.<block index>`` for text and reasoning), ``source-url`` after a cited text,
    ``finish-step`` at its end, ``error`` for a failed one. The parts they fold to are
    :func:`to_ui_messages`'s; what the chunks cannot carry is in :attr:`losses`.
    """

    def __init__(self) -> None:
        self._acc = StreamAccumulator()
        self._id = ""
        self._provenance: Provenance | None = None
        self._kinds: dict[int, str] = {}
        self.losses: list[Loss] = []
        self._calls: dict[str, dict[str, Any]] = {}

    def feed(self, event: StreamEvent) -> list[dict[str, Any]]:
        """The chunks for one agentmsg stream event."""
        self._acc.add(event)
        pb = event.pb
        kind = event.kind
        if kind == "message_start":
            self._id = pb.message_start.message_id
            if pb.message_start.HasField("provenance"):
                self._provenance = Provenance.from_proto(pb.message_start.provenance)
            return [{"type": "start-step"}]
        if kind == "block_start":
            index = pb.block_start.index
            arm = pb.block_start.content.WhichOneof("kind") or ""
            self._kinds[index] = arm
            rid = f"{self._id}.{index}"
            if arm == "text":
                return [{"type": "text-start", "id": rid}]
            if arm in ("thinking", "redacted_thinking"):
                return [{"type": "reasoning-start", "id": rid}]
            if arm in ("tool_call", "hosted_tool_call"):
                block = self._acc.snapshot().contents[index]
                assert isinstance(block, (ToolCallContent, HostedToolCallContent))
                chunk: dict[str, Any] = {"type": "tool-input-start", "toolCallId": block.id, "toolName": block.name}
                if arm == "hosted_tool_call":
                    chunk["providerExecuted"] = True
                return [chunk]
            return []
        if kind == "block_delta":
            return self._delta(pb.block_delta)
        if kind == "block_stop":
            return self._stop(pb.block_stop.index)
        if kind == "message_stop":
            return [{"type": "finish-step"}]
        if kind == "error":
            return [{"type": "error", "errorText": pb.error.message}]
        return []

    def _delta(self, delta: Any) -> list[dict[str, Any]]:
        index, arm = delta.index, delta.WhichOneof("delta")
        rid = f"{self._id}.{index}"
        if arm == "text" and delta.text.text:
            return [{"type": "text-delta", "id": rid, "delta": delta.text.text}]
        if arm == "thinking" and delta.thinking.text:
            return [{"type": "reasoning-delta", "id": rid, "delta": delta.thinking.text}]
        if arm == "tool_call" and delta.tool_call.arguments:
            block = self._acc.snapshot().contents[index]
            assert isinstance(block, (ToolCallContent, HostedToolCallContent))
            return [{"type": "tool-input-delta", "toolCallId": block.id, "inputTextDelta": delta.tool_call.arguments}]
        return []

    def _stop(self, index: int) -> list[dict[str, Any]]:
        message = self._acc.snapshot()
        block: Content = message.contents[index]
        rid = f"{self._id}.{index}"
        report = ConversionReport()
        writer = _Writer(Reporter(TARGET, report, strict=False))
        where = f"contents[{index}]"
        out: list[dict[str, Any]] = []
        if isinstance(block, TextContent):
            parts = writer.text(block, message, index, where)
            end: dict[str, Any] = {"type": "text-end", "id": rid}
            if "citations" in parts[0]:
                end["citations"] = parts[0]["citations"]
            if "providerMetadata" in parts[0]:
                end["providerMetadata"] = parts[0]["providerMetadata"]
            out = [end, *parts[1:]]
        elif isinstance(block, (ThinkingContent, RedactedThinkingContent)):
            parts = writer.reasoning(block, self._provenance, rid, where)
            end = {"type": "reasoning-end", "id": rid}
            if parts and "providerMetadata" in parts[0]:
                end["providerMetadata"] = parts[0]["providerMetadata"]
            out = [end]
        elif isinstance(block, (ToolCallContent, HostedToolCallContent)):
            part = writer.call(block, self._provenance, where)
            self._calls[block.id] = part
            chunk: dict[str, Any] = {"type": "tool-input-available", "toolCallId": block.id, "toolName": block.name}
            chunk["input"] = part["input"]
            if isinstance(block, HostedToolCallContent):
                chunk["providerExecuted"] = True
            if "callProviderMetadata" in part:
                chunk["providerMetadata"] = part["callProviderMetadata"]
            out = [chunk]
            if part["state"] == "approval-requested":
                out.append(_approval_request(part))
        elif isinstance(block, HostedToolResultContent) and block.call_id in self._calls:
            part = dict(self._calls[block.call_id])
            writer.hosted_output(part, block)
            out = [output_chunk(part)]
            out += _hosted_files(block)
        else:
            out = [{"type": DATA_BLOCK, "data": content_to_dict(block)}]
        self.losses += report.losses
        return out


def _approval_request(part: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "tool-approval-request", "approvalId": part["toolCallId"], "toolCallId": part["toolCallId"]}


def _approval_response(part: Mapping[str, Any]) -> dict[str, Any]:
    approval = part["approval"]
    chunk: dict[str, Any] = {"type": "tool-approval-response", "approvalId": approval["id"]}
    chunk["approved"] = approval["approved"]
    if "reason" in approval:
        chunk["reason"] = approval["reason"]
    if "callProviderMetadata" in part:
        chunk["providerMetadata"] = part["callProviderMetadata"]
    return chunk


def output_chunk(part: Mapping[str, Any]) -> dict[str, Any]:
    """The UI message stream chunk that gives a tool part's outcome (``tool-output-available``, ``-error`` or
    ``-denied``), as the stream and the agent-UI endpoint send it when a tool's result is logged."""
    if part["state"] == "output-denied":
        return {"type": "tool-output-denied", "toolCallId": part["toolCallId"]}
    if part["state"] == "output-error":
        chunk: dict[str, Any] = {
            "type": "tool-output-error",
            "toolCallId": part["toolCallId"],
            "errorText": part["errorText"],
        }
    else:
        chunk = {"type": "tool-output-available", "toolCallId": part["toolCallId"], "output": part["output"]}
    if part.get("providerExecuted"):
        chunk["providerExecuted"] = True
    if "resultProviderMetadata" in part:
        chunk["providerMetadata"] = part["resultProviderMetadata"]
    return chunk


def ui_message_chunks(
    messages: Iterable[BaseMessage], *, chunk_size: int | None = None, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """One assistant turn (assistant and tool messages, as :func:`to_ui_messages` groups them) as a UI message stream.

    ``start{messageId}``, each assistant message through :class:`UIMessageStream` (text in
    pieces of ``chunk_size`` characters, whole when None), each tool result as
    ``tool-output-available`` / ``tool-output-error``, then ``finish{finishReason,
    messageMetadata}`` with the same ``metadata`` as the UIMessage. The SSE framing
    (``data: <json>``, ``data: [DONE]``) is the endpoint's.
    """
    items = [m for _, m in check_messages(messages)]
    reporter = Reporter("AI SDK UI message stream", report, strict=False)
    turns = to_ui_messages(items, report=ConversionReport())
    if len(turns) != 1 or turns[0]["role"] != "assistant":
        raise ValidationError.single("messages", "turn", "expected the messages of one assistant turn")
    turn = turns[0]
    out: list[dict[str, Any]] = [{"type": "start", "messageId": turn["id"]}]
    parts = {p["toolCallId"]: p for p in turn["parts"] if "toolCallId" in p}
    last: AssistantMessage | None = None
    for message in items:
        if isinstance(message, AssistantMessage):
            stream = UIMessageStream()
            for event in events_from_message(message, chunk_size=chunk_size):
                for chunk in stream.feed(event):
                    part = parts.get(chunk.get("toolCallId", ""), {})
                    if chunk["type"] == "tool-approval-request" and "approval" not in part:
                        continue  # answered with no decision: the turn's part has no approval
                    if chunk["type"] == "tool-input-available" and "callProviderMetadata" in part:
                        chunk["providerMetadata"] = part["callProviderMetadata"]  # with what the turn added
                    out.append(chunk)
            reporter.report.losses += stream.losses
            last = message
        elif isinstance(message, UserMessage):
            # the decisions on the turn's calls (to_ui_messages put them on the parts, or it would not be one turn)
            for block in message.contents:
                assert isinstance(block, ToolApprovalContent)
                part = parts[block.call_id]
                if agentmsg_meta(part.get("callProviderMetadata")).get("requires_approval") is False:
                    out.append(_approval_request(part))  # a call that did not ask: the response needs a request
                out.append(_approval_response(part))
        elif isinstance(message, ToolMessage):
            for block in message.contents:
                part = parts.get(getattr(block, "id", ""))
                if part is not None and part["state"] in ("output-available", "output-error", "output-denied"):
                    out.append(output_chunk(part))
    finish: dict[str, Any] = {"type": "finish", "finishReason": finish_reason(last.stop_reason if last else None)}
    if "metadata" in turn:
        finish["messageMetadata"] = turn["metadata"]
    out.append(finish)
    reporter.finish()
    return out
