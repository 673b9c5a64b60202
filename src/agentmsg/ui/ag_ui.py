"""agentmsg messages as AG-UI 1.0 messages and events, and AG-UI messages back.

Plain dicts in AG-UI's wire form (camelCase keys, as ``ag_ui.core`` models dump them
``by_alias``); no AG-UI package is imported. The 1.0 message union is discriminated on
``role``: ``developer``, ``system``, ``user``, ``assistant``, ``tool``, ``reasoning``,
``activity``.

Writing (:func:`to_ag_ui`), one agentmsg message gives one or more AG-UI messages:

=====================================  ==================================================
agentmsg                               AG-UI
=====================================  ==================================================
SystemMessage                          ``system{content}`` (its text blocks joined)
UserMessage text, image, audio,        ``user{content: str | parts}``: ``text``, ``image``,
document                               ``audio``, ``document`` with a ``data``, ``url`` or
                                       ``file`` source
a user message's tool results          ``tool`` messages after it
AssistantMessage thinking              ``reasoning{content, encryptedValue?: signature}``
redacted thinking                      ``reasoning{content: "", encryptedValue: data}``
hosted tool call / result, a           ``activity{activityType: "agentmsg.content",
provider block                         content: the block's dict form}``
text and tool calls                    one ``assistant{content, toolCalls}``; arguments
                                       verbatim, a call's signature in its
                                       ``encryptedValue``
ToolMessage                            one ``tool{toolCallId, content, error?}`` a result
custom, branch / compaction summary    ``activity{activityType: "agentmsg.session",
                                       content: the message's dict form}``
=====================================  ==================================================

Reasoning and activity messages come before the assistant message they belong to; each
message made from a block of another carries ``metadata.agentmsg.of`` (the agentmsg
message id) so reading puts it back. The agentmsg message's envelope (timestamp,
provenance, usage, stop reason, error, parent id) rides in ``metadata.agentmsg`` of its
main AG-UI message; a tool call's kind, index, server name and metadata in the tool call's
``metadata.agentmsg``; a tool result's name (when it is not its call's), metadata and
``terminate`` in its message's.

Reported as losses: the boundaries of several text blocks of one message (AG-UI text is one
string: they are joined), text citations, logprobs and signatures, image detail, a
document's title, filename and context, a block order other than reasoning and activity
first, then text, then tool calls (a user message: its tool results last), a tool call's
``provider_extra``, a content part AG-UI has no type for; signatures and redacted
reasoning of a message with no provenance (see :mod:`agentmsg.ui._common`).

Reading (:func:`from_ag_ui`): ``developer`` reads as a system message (reported);
reasoning and activity messages with no ``of`` belong to the next assistant message (a
standalone assistant message when none follows); another application's activity message
becomes a :class:`~agentmsg.CustomMessage` of ``custom_type`` its ``activityType`` with its
``content`` as details; a ``video`` part becomes a document; metadata keys other than
``agentmsg`` are reported.

Events (:func:`message_events`, :class:`AGUIEventStream`, :func:`run_started`,
:func:`run_finished`, :func:`run_error`, :func:`messages_snapshot`): the live side.

Approval. AG-UI's messages have no place for a decision: its place is the run. A run whose calls
await a person (``requires_approval``, no decision or result after them) finishes with an
``interrupt`` outcome, one ``Interrupt{id: call id, reason: "tool_approval", toolCallId}`` a call
(:func:`approval_interrupts`, :func:`run_finished`); the next run's ``RunAgentInput.resume``
answers them (``status: "resolved"``, ``payload: {approved, reason?}``), which
:func:`decisions_from_resume` reads as approval blocks. In :func:`to_ag_ui` a call's
``requires_approval`` rides in its ``metadata.agentmsg``; an approval block is reported.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentmsg.content import (
    AudioContent,
    Content,
    DocumentContent,
    ImageContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
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
    check_messages,
    envelope,
    json_type,
    media_from_url,
)
from agentmsg.usage import Usage

__all__ = [
    "ACTIVITY_CONTENT",
    "ACTIVITY_SESSION",
    "APPROVAL_REASON",
    "AGUIEventStream",
    "approval_interrupts",
    "decisions_from_resume",
    "from_ag_ui",
    "message_events",
    "messages_snapshot",
    "run_error",
    "run_finished",
    "run_started",
    "to_ag_ui",
    "token_usage",
]

TARGET: Final = "AG-UI messages"
ACTIVITY_CONTENT: Final = "agentmsg.content"
"""``activityType`` of an activity message holding one agentmsg block AG-UI has no place for."""
ACTIVITY_SESSION: Final = "agentmsg.session"
"""``activityType`` of an activity message holding a session-only agentmsg message."""

_MEDIA_PART = {ImageContent: "image", AudioContent: "audio", DocumentContent: "document"}


def _derived_id(message_id: str, index: int) -> str:
    return f"{message_id}.{index}"


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {AGENTMSG_KEY: dict(entry)}


# --- writing -------------------------------------------------------------------------------


def _source(block: ImageContent | AudioContent | DocumentContent) -> dict[str, Any]:
    if block.data is not None:
        out: dict[str, Any] = {"type": "data", "value": base64.b64encode(block.data).decode("ascii")}
        out["mimeType"] = block.media_type or "application/octet-stream"
        return out
    if block.url is not None:
        out = {"type": "url", "value": block.url}
    else:
        out = {"type": "file", "value": block.file_id or ""}
    if block.media_type:
        out["mimeType"] = block.media_type
    return out


class _Writer:
    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.call_names: dict[str, str] = {}

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    def text_extras(self, block: TextContent, path: str) -> None:
        if block.citations:
            self.loss(f"{path}.citations", f"{len(block.citations)} citation(s)", "AG-UI text has no citations")
        if block.logprobs:
            self.loss(f"{path}.logprobs", "logprobs", "AG-UI text has no logprobs")
        if block.signature:
            self.loss(f"{path}.signature", "text signature", "AG-UI text has no signature")

    def joined(self, blocks: list[tuple[str, TextContent]], path: str) -> str:
        for where, block in blocks:
            self.text_extras(block, where)
        if len(blocks) > 1:
            self.loss(path, f"the boundaries of {len(blocks)} text blocks", "AG-UI text is one string: joined")
        return "".join(block.content for _, block in blocks)

    def part(self, block: Content, path: str) -> list[dict[str, Any]]:
        if isinstance(block, TextContent):
            self.text_extras(block, path)
            return [{"type": "text", "text": block.content}]
        if isinstance(block, (ImageContent, AudioContent, DocumentContent)):
            out = []
            for where, piece in split_media(block, path, self.reporter):
                if isinstance(piece, ImageContent) and piece.detail is not None:
                    self.loss(f"{where}.detail", f"image detail {piece.detail.value!r}", "AG-UI images have no detail")
                part: dict[str, Any] = {"type": _MEDIA_PART[type(piece)], "source": _source(piece)}
                if isinstance(piece, DocumentContent):
                    for key in ("title", "context", "filename"):
                        if getattr(piece, key):
                            self.loss(f"{where}.{key}", f"document {key}", f"an AG-UI document part has no {key}")
                out.append(part)
            return out
        if isinstance(block, ToolApprovalContent):
            # AG-UI's messages hold no decision: it answers a run's interrupt, in the next run's input
            self.loss(path, "approval block", "AG-UI sends a decision as a resume entry (decisions_from_resume)")
            return []
        self.loss(path, f"{block.type} block", "an AG-UI content part is text, image, audio, video or document")
        return []

    def content(self, blocks: Iterable[Content], path: str) -> str | list[dict[str, Any]]:
        items = list(blocks)
        if len(items) == 1 and isinstance(items[0], TextContent) and items[0].content:
            self.text_extras(items[0], f"{path}[0]")
            return items[0].content
        parts: list[dict[str, Any]] = []
        for k, block in enumerate(items):
            parts += self.part(block, f"{path}[{k}]")
        return parts

    def message(self, path: str, message: BaseMessage) -> list[dict[str, Any]]:
        match message:
            case SystemMessage():
                texts = [(f"{path}.contents[{k}]", b) for k, b in enumerate(message.contents)]
                out = {"id": message.id, "role": "system", "content": self.joined(texts, path)}  # type: ignore[arg-type]
                return [self.finish(out, message)]
            case UserMessage():
                return self.user(path, message)
            case AssistantMessage():
                return self.assistant(path, message)
            case ToolMessage():
                return self.results(path, message, list(enumerate(message.contents)), main=True)  # type: ignore[arg-type]
            case CustomMessage() | BranchSummaryMessage() | CompactionSummaryMessage():
                body = message_to_dict(message)
                body.pop("id")
                return [{"id": message.id, "role": "activity", "activityType": ACTIVITY_SESSION, "content": body}]
        self.loss(path, f"{type(message).__name__}", "not a message AG-UI can hold")
        return []

    def finish(self, out: dict[str, Any], message: BaseMessage, **extra: Any) -> dict[str, Any]:
        if message.name:
            out["name"] = message.name
        entry = envelope(message, skip=("name",)) | extra
        out["metadata"] = _meta(entry)
        return out

    def user(self, path: str, message: UserMessage) -> list[dict[str, Any]]:
        blocks = list(enumerate(message.contents))
        results = [(k, b) for k, b in blocks if isinstance(b, ToolResultContent)]
        others = [b for _, b in blocks if not isinstance(b, ToolResultContent)]
        if results and any(not isinstance(b, ToolResultContent) for _, b in blocks[results[0][0] :]):
            self.loss(f"{path}.contents", "block order", "a user message's tool results go after its other blocks")
        out = {"id": message.id, "role": "user", "content": self.content(others, f"{path}.contents")}
        return [self.finish(out, message), *self.results(path, message, results, main=False)]

    def result_entry(self, block: ToolResultContent) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if block.name != self.call_names.get(block.id, ""):
            entry["name"] = block.name  # reading takes the call's name otherwise
        if block.metadata:
            entry["metadata"] = block.metadata
        if block.terminate:
            entry["terminate"] = True
        if block.terminate_message:
            entry["terminate_message"] = block.terminate_message
        if block.index:
            entry["index"] = block.index
        return entry

    def results(
        self, path: str, message: BaseMessage, results: list[tuple[int, ToolResultContent]], *, main: bool
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for j, (k, block) in enumerate(results):
            where = f"{path}.contents[{k}]"
            own = main and j == 0
            tool: dict[str, Any] = {
                "id": message.id if own else _derived_id(message.id, k),
                "role": "tool",
                "toolCallId": block.id,
                "content": self.content(block.blocks, f"{where}.content"),
            }
            if block.is_error:
                tool["error"] = block.text or "error"
            entry = self.result_entry(block)
            if own:
                entry["message"] = envelope(message)
            else:
                entry["of"] = message.id
            tool["metadata"] = _meta(entry)
            out.append(tool)
        return out

    def assistant(self, path: str, message: AssistantMessage) -> list[dict[str, Any]]:
        vouched = message.provenance is not None
        before: list[dict[str, Any]] = []
        texts: list[tuple[str, TextContent]] = []
        calls: list[dict[str, Any]] = []
        order: list[int] = []  # 0: before the assistant message, 1: text, 2: tool call
        for k, block in enumerate(message.contents):
            where = f"{path}.contents[{k}]"
            of = {"of": message.id}
            match block:
                case ThinkingContent():
                    item: dict[str, Any] = {"id": _derived_id(message.id, k), "role": "reasoning"}
                    item["content"] = block.content
                    if block.signature and vouched:
                        item["encryptedValue"] = block.signature
                    elif block.signature:
                        self.loss(f"{where}.signature", "thinking signature", "the message has no provenance")
                    item["metadata"] = _meta(of)
                    before.append(item)
                    order.append(0)
                case RedactedThinkingContent():
                    if not vouched:
                        self.loss(where, "redacted thinking", "the message has no provenance")
                        continue
                    item = {"id": _derived_id(message.id, k), "role": "reasoning", "content": ""}
                    item["encryptedValue"] = block.data
                    item["metadata"] = _meta(of | {"redacted": True})
                    before.append(item)
                    order.append(0)
                case TextContent():
                    texts.append((where, block))
                    order.append(1)
                case ToolCallContent():
                    calls.append(self.call(block, where, vouched, len(calls)))
                    order.append(2)
                case _:
                    activity: dict[str, Any] = {"id": _derived_id(message.id, k), "role": "activity"}
                    activity |= {"activityType": ACTIVITY_CONTENT, "content": content_to_dict(block)}
                    activity["metadata"] = _meta(of)
                    before.append(activity)
                    order.append(0)
        if order != sorted(order):
            self.loss(
                f"{path}.contents", "block order", "AG-UI puts reasoning and activity first, then text, then calls"
            )
        out: dict[str, Any] = {"id": message.id, "role": "assistant"}
        if texts:
            out["content"] = self.joined(texts, f"{path}.contents")
        if calls:
            out["toolCalls"] = calls
        return [*before, self.finish(out, message)]

    def call(self, block: ToolCallContent, path: str, vouched: bool, position: int) -> dict[str, Any]:
        self.call_names[block.id] = block.name
        out: dict[str, Any] = {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": block.arguments},
        }
        if block.signature and vouched:
            out["encryptedValue"] = block.signature
        elif block.signature:
            self.loss(f"{path}.signature", "tool-call signature", "the message has no provenance")
        if block.provider_extra is not None:
            self.loss(f"{path}.provider_extra", "provider extra", "an AG-UI tool call has no place for it")
        entry: dict[str, Any] = {}
        if block.kind is not None:
            entry["kind"] = block.kind.value
        if block.index:
            entry["index"] = block.index
        if block.server_name:
            entry["server_name"] = block.server_name
        if block.metadata:
            entry["metadata"] = block.metadata
        if block.requires_approval:
            entry["requires_approval"] = True
        if entry:
            out["metadata"] = _meta(entry)
        return out


def to_ag_ui(
    messages: Iterable[BaseMessage], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Messages as AG-UI 1.0 messages (plain dicts in the wire form; see the module docstring).

    What AG-UI cannot hold is reported: in ``report``, as a
    :class:`~agentmsg.ui.ConversionError` with ``strict=True``, or as one
    :class:`~agentmsg.ui.ConversionWarning`.
    """
    reporter = Reporter(TARGET, report, strict=strict)
    writer = _Writer(reporter)
    out: list[dict[str, Any]] = []
    for path, message in check_messages(messages):
        out += writer.message(path, message)
    reporter.finish()
    return out


# --- reading -------------------------------------------------------------------------------


class _Reader:
    def __init__(self, reporter: Reporter) -> None:
        self.errors = PayloadErrors(TARGET)
        self.reporter = reporter
        self.out: list[dict[str, Any]] = []  # message dicts (seed-1 form), in order
        self.by_id: dict[str, dict[str, Any]] = {}
        self.waiting: dict[str, list[dict[str, Any]]] = {}  # blocks whose main message is to come
        self.loose: list[tuple[str, dict[str, Any]]] = []  # reasoning/activity for the next assistant message
        self.call_names: dict[str, str] = {}
        self.paths: list[str] = []

    def string(self, item: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str:
        value = item.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            self.errors.add(f"{path}.{key}", "type", f"expected a string, got {json_type(value)}")
            return ""
        return value

    def metadata(self, item: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        metadata = item.get("metadata")
        if metadata is None:
            return {}
        if not isinstance(metadata, Mapping):
            self.errors.add(f"{path}.metadata", "type", f"expected an object, got {json_type(metadata)}")
            return {}
        for key in metadata:
            if key != AGENTMSG_KEY:
                self.reporter.loss(f"{path}.metadata.{key}", f"metadata key {key!r}", "agentmsg keeps only its own")
        entry = metadata.get(AGENTMSG_KEY, {})
        if not isinstance(entry, Mapping):
            self.errors.add(f"{path}.metadata.{AGENTMSG_KEY}", "type", f"expected an object, got {json_type(entry)}")
            return {}
        return entry

    def media(self, part: Mapping[str, Any], kind: str, path: str) -> dict[str, Any] | None:
        source = part.get("source")
        if not isinstance(source, Mapping):
            self.errors.add(f"{path}.source", "type", f"expected an object, got {json_type(source)}")
            return None
        arm, value = source.get("type"), source.get("value")
        mime = source.get("mimeType", source.get("mime_type")) or ""
        if not isinstance(value, str) or not isinstance(mime, str):
            self.errors.add(f"{path}.source.value", "type", "expected a string value and mimeType")
            return None
        if kind == "video":
            kind = "document"
        with self.errors.building(f"{path}.source"):
            if arm == "data":
                url = f"data:{mime or 'application/octet-stream'};base64,{value}"
                return content_to_dict(media_from_url(kind, url, mime))
            if arm == "url":
                return content_to_dict(media_from_url(kind, value, mime))
            if arm == "file":
                block: Content
                if kind == "image":
                    block = ImageContent.from_file_id(value, media_type=mime)
                elif kind == "audio":
                    block = AudioContent.from_file_id(value, media_type=mime)
                else:
                    block = DocumentContent.from_file_id(value, media_type=mime)
                return content_to_dict(block)
            self.errors.add(f"{path}.source.type", "enum", f"expected data, url or file, got {arm!r}")
        return None

    def content(self, value: Any, path: str, *, empty_text: bool = False) -> list[dict[str, Any]]:
        """Blocks of a ``str | ContentPart[]`` content; ``""`` is one empty text block with ``empty_text``."""
        if isinstance(value, str):
            return [{"type": "text", "content": value}] if value or empty_text else []
        if not isinstance(value, list):
            self.errors.add(path, "type", f"expected a string or an array of parts, got {json_type(value)}")
            return []
        blocks: list[dict[str, Any]] = []
        for j, part in enumerate(value):
            where = f"{path}[{j}]"
            if not isinstance(part, Mapping):
                self.errors.add(where, "type", f"expected an object, got {json_type(part)}")
                continue
            kind = part.get("type")
            if kind == "text":
                blocks.append({"type": "text", "content": self.string(part, "text", where)})
            elif kind in ("image", "audio", "video", "document"):
                if kind == "video":
                    self.reporter.loss(where, "video part", "agentmsg has no video: read as a document")
                block = self.media(part, kind, where)
                if block is not None:
                    blocks.append(block)
            else:
                self.errors.add(f"{where}.type", "enum", f"unknown content part type {kind!r}")
        return blocks

    def add(self, path: str, data: dict[str, Any]) -> None:
        self.out.append(data)
        self.paths.append(path)
        self.by_id[data["id"]] = data
        data["contents"] = self.waiting.pop(data["id"], []) + list(data.get("contents", []))

    def attach(self, of: Any, block: dict[str, Any], path: str, *, before: bool) -> bool:
        """Put a block made from ``of``'s message there; False when ``of`` is not a string."""
        if not isinstance(of, str):
            return False
        target = self.by_id.get(of)
        if target is not None:
            target.setdefault("contents", []).append(block)
        elif before:
            self.waiting.setdefault(of, []).append(block)
        else:
            self.errors.add(f"{path}.metadata.agentmsg.of", "reference", f"no earlier message has id {of!r}")
        return True

    def flush_loose(self) -> None:
        if not self.loose:
            return
        path, first = self.loose[0]
        data = {"role": "assistant", "id": first["__id"], "contents": [b for _, b in self.loose]}
        for _, block in self.loose:
            block.pop("__id", None)
        self.add(path, data)
        self.loose = []

    def message(self, item: Any, path: str) -> None:
        if not isinstance(item, Mapping):
            self.errors.add(path, "type", f"expected a message object, got {json_type(item)}")
            return
        role = item.get("role")
        message_id = self.string(item, "id", path)
        entry = self.metadata(item, path)
        of = entry.get("of")
        if role != "assistant" and role not in ("reasoning", "activity"):
            self.flush_loose()
        if role in ("system", "developer", "user", "assistant"):
            data: dict[str, Any] = {k: v for k, v in entry.items() if k != "of"}
            data |= {"role": "system" if role == "developer" else role, "id": message_id}
            name = self.string(item, "name", path, required=False)
            if name:
                data["name"] = name
            if role == "developer":
                self.reporter.loss(f"{path}.role", "developer role", "agentmsg has one system role")
            if role == "assistant":
                data["contents"] = [b for _, b in self.loose]
                for block in data["contents"]:
                    block.pop("__id", None)
                self.loose = []
                data["contents"] += self.assistant_blocks(item, path, ours=bool(entry))
            else:
                data["contents"] = self.content(item.get("content"), f"{path}.content", empty_text=True)
            self.add(path, data)
        elif role == "tool":
            block = self.result(item, entry, path)
            if not self.attach(of, block, path, before=False):
                message = entry.get("message", {})
                data = dict(message) if isinstance(message, Mapping) else {}
                data |= {"role": "tool", "id": message_id, "contents": [block]}
                self.add(path, data)
        elif role == "reasoning":
            content = self.string(item, "content", path)
            signature = self.string(item, "encryptedValue", path, required=False)
            if entry.get("redacted") is True:
                block = {"type": "redacted_thinking", "data": signature}
            else:
                block = {"type": "thinking", "content": content, "signature": signature}
            self.loose_or_attach(of, block, message_id, path)
        elif role == "activity":
            self.activity(item, message_id, of, path)
        else:
            self.errors.add(f"{path}.role", "enum", f"unknown role {role!r}")

    def loose_or_attach(self, of: Any, block: dict[str, Any], message_id: str, path: str) -> None:
        if not self.attach(of, block, path, before=True):
            block["__id"] = message_id
            self.loose.append((path, block))

    def activity(self, item: Mapping[str, Any], message_id: str, of: Any, path: str) -> None:
        kind = self.string(item, "activityType", path)
        content = item.get("content")
        if not isinstance(content, Mapping):
            self.errors.add(f"{path}.content", "type", f"expected an object, got {json_type(content)}")
            return
        if kind == ACTIVITY_CONTENT:
            self.loose_or_attach(of, dict(content), message_id, path)
        elif kind == ACTIVITY_SESSION:
            self.flush_loose()
            self.add(path, dict(content) | {"id": message_id, "contents": list(content.get("contents", []))})
        else:
            self.flush_loose()
            self.add(path, {"role": "custom", "id": message_id, "custom_type": kind, "details": dict(content)})

    def assistant_blocks(self, item: Mapping[str, Any], path: str, *, ours: bool) -> list[dict[str, Any]]:
        """Text and tool calls; ``content: ""`` is an empty text block when agentmsg wrote the message or
        the message holds nothing else (other producers send ``""`` beside tool calls for no text)."""
        blocks: list[dict[str, Any]] = []
        text = item.get("content")
        calls_present = bool(item.get("toolCalls", item.get("tool_calls")))
        if text is not None and not isinstance(text, str):
            self.errors.add(f"{path}.content", "type", f"expected a string, got {json_type(text)}")
        elif text or (text == "" and (ours or not calls_present)):
            blocks.append({"type": "text", "content": text})
        calls = item.get("toolCalls", item.get("tool_calls")) or []
        if not isinstance(calls, list):
            self.errors.add(f"{path}.toolCalls", "type", f"expected an array, got {json_type(calls)}")
            return blocks
        for j, call in enumerate(calls):
            where = f"{path}.toolCalls[{j}]"
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
                self.errors.add(where, "type", "expected a tool call object with a function")
                continue
            function = call["function"]
            block: dict[str, Any] = {
                "type": "tool_call",
                "id": self.string(call, "id", where),
                "name": self.string(function, "name", f"{where}.function"),
                "arguments": self.string(function, "arguments", f"{where}.function"),
            }
            signature = self.string(call, "encryptedValue", where, required=False)
            if signature:
                block["signature"] = signature
            block |= dict(self.metadata(call, where))
            self.call_names[block["id"]] = block["name"]
            blocks.append(block)
        return blocks

    def result(self, item: Mapping[str, Any], entry: Mapping[str, Any], path: str) -> dict[str, Any]:
        call_id = self.string(item, "toolCallId", path)
        blocks = self.content(item.get("content"), f"{path}.content")
        error = item.get("error")
        if error is not None and not isinstance(error, str):
            self.errors.add(f"{path}.error", "type", f"expected a string, got {json_type(error)}")
        block: dict[str, Any] = {"type": "tool_result", "id": call_id, "is_error": error is not None}
        if len(blocks) == 1 and blocks[0]["type"] == "text":
            block["content"] = blocks[0]["content"]
        else:
            block["content"] = blocks
        name = entry.get("name", self.call_names.get(call_id, ""))
        if name:
            block["name"] = name
        block |= {k: entry[k] for k in ("metadata", "terminate", "terminate_message", "index") if k in entry}
        return block


def from_ag_ui(
    payload: Iterable[Mapping[str, Any]] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[AgentMessage]:
    """AG-UI 1.0 messages (a list, or a ``RunAgentInput`` / ``MESSAGES_SNAPSHOT`` with ``messages``) as agentmsg.

    Raises :class:`~agentmsg.ValidationError` naming every problem by its path;
    nothing is returned unless the whole payload converts. What agentmsg keeps no
    trace of (the developer role, other applications' metadata keys, a video part
    read as a document) is reported as for writing.
    """
    if isinstance(payload, Mapping):
        payload = payload.get("messages", None)
        if not isinstance(payload, list):
            raise ValidationError.single("messages", "type", f"expected an array, got {json_type(payload)}")
    if isinstance(payload, (str, bytes)):
        raise ValidationError.single("", "type", "expected an array of AG-UI messages")
    reporter = Reporter("agentmsg (from AG-UI)", report, strict=False)
    reader = _Reader(reporter)
    for i, item in enumerate(payload):
        reader.message(item, f"[{i}]")
    reader.flush_loose()
    for of in reader.waiting:
        reader.errors.add("", "reference", f"reasoning or activity of message {of!r}, which never comes")
    reader.errors.raise_if_any()
    out: list[AgentMessage] = []
    for path, data in zip(reader.paths, reader.out, strict=True):
        if data.get("role") in ("system", "user", "assistant") and not data.get("contents"):
            data["contents"] = [{"type": "text", "content": ""}]  # an empty message, as agentmsg holds one
        with reader.errors.building(path):
            out.append(message_from_dict(data))
    reader.errors.raise_if_any()
    reporter.finish()
    return out


# --- events --------------------------------------------------------------------------------


def run_started(thread_id: str, run_id: str, *, parent_run_id: str = "") -> dict[str, Any]:
    """``RUN_STARTED``."""
    out: dict[str, Any] = {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    if parent_run_id:
        out["parentRunId"] = parent_run_id
    return out


def token_usage(usage: Usage, *, provider: str = "", model: str = "") -> dict[str, Any]:
    """AG-UI ``TokenUsage`` of an agentmsg usage: input counts cached reads and writes, as AG-UI's totals do."""
    out: dict[str, Any] = {}
    if provider:
        out["provider"] = provider
    if model:
        out["model"] = model
    reported = usage.reported
    if reported & {"input_tokens", "cache_read_tokens", "cache_write_tokens"}:
        out["inputTokens"] = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    for ours, theirs in (
        ("output_tokens", "outputTokens"),
        ("total_tokens", "totalTokens"),
        ("reasoning_tokens", "reasoningTokens"),
        ("cache_read_tokens", "cachedInputTokens"),
        ("cache_write_tokens", "cacheWriteInputTokens"),
    ):
        if ours in reported:
            out[theirs] = getattr(usage, ours)
    return out


APPROVAL_REASON: Final = "tool_approval"
"""The ``reason`` of the interrupt a tool call awaiting a person's decision ends a run with."""


def approval_interrupts(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    """AG-UI ``Interrupt`` objects for the calls still awaiting a decision.

    A call awaits one when it says so (``requires_approval``) and no approval block or result on it comes after it;
    the interrupt's ``id`` and ``toolCallId`` are the call's id, its ``reason`` :data:`APPROVAL_REASON`.
    """
    pending: dict[str, ToolCallContent] = {}
    for message in messages:
        for block in message.contents:
            if isinstance(block, ToolCallContent):
                pending.pop(block.id, None)
                if block.requires_approval:
                    pending[block.id] = block
            elif isinstance(block, ToolApprovalContent):
                pending.pop(block.call_id, None)
            elif isinstance(block, ToolResultContent):
                pending.pop(block.id, None)
    return [{"id": call.id, "reason": APPROVAL_REASON, "toolCallId": call.id} for call in pending.values()]


def decisions_from_resume(resume: Iterable[Mapping[str, Any]], *, decided_by: str = "") -> list[ToolApprovalContent]:
    """The decisions a ``RunAgentInput.resume`` gives on :func:`approval_interrupts`' interrupts.

    An entry answers one by its ``interruptId`` (the call's id); ``status: "resolved"`` with ``payload: {approved:
    bool, reason?: str}`` is a decision (append them to the session in a user message), ``"cancelled"`` leaves the
    call waiting and gives none. A malformed entry is a :class:`~agentmsg.ValidationError` naming its path.
    """
    errors = PayloadErrors("agentmsg (from an AG-UI resume)")
    out: list[ToolApprovalContent] = []
    for i, entry in enumerate(resume):
        path = f"resume[{i}]"
        if not isinstance(entry, Mapping):
            errors.add(path, "type", f"expected an object, got {json_type(entry)}")
            continue
        call_id, status, payload = entry.get("interruptId"), entry.get("status"), entry.get("payload")
        if not isinstance(call_id, str) or not call_id:
            errors.add(f"{path}.interruptId", "string.min_len", "expected the id of the interrupted call")
        if status == "cancelled":
            continue
        if status != "resolved":
            errors.add(f"{path}.status", "enum", f"expected resolved or cancelled, got {status!r}")
            continue
        approved = payload.get("approved") if isinstance(payload, Mapping) else None
        reason = payload.get("reason", "") if isinstance(payload, Mapping) else ""
        if not isinstance(approved, bool):
            errors.add(f"{path}.payload.approved", "type", f"expected a boolean, got {json_type(approved)}")
        if not isinstance(reason, str):
            errors.add(f"{path}.payload.reason", "type", f"expected a string, got {json_type(reason)}")
        if isinstance(call_id, str) and call_id and isinstance(approved, bool) and isinstance(reason, str):
            decide = ToolApprovalContent.approve if approved else ToolApprovalContent.deny
            out.append(decide(call_id, reason, decided_by=decided_by))
    errors.raise_if_any()
    return out


def run_finished(thread_id: str, run_id: str, *, messages: Iterable[BaseMessage] = ()) -> dict[str, Any]:
    """``RUN_FINISHED`` with the usage of the run's assistant messages: an ``interrupt`` outcome when calls of the
    run await a person's decision (:func:`approval_interrupts`), a ``success`` outcome otherwise."""
    messages = list(messages)
    usage = [
        token_usage(m.usage, provider=m.provenance.provider if m.provenance else "", model=_model(m))
        for m in messages
        if isinstance(m, AssistantMessage) and m.usage is not None
    ]
    out: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}
    interrupts = approval_interrupts(messages)
    out["outcome"] = {"type": "interrupt", "interrupts": interrupts} if interrupts else {"type": "success"}
    if usage:
        out["usage"] = usage
    return out


def _model(message: AssistantMessage) -> str:
    return message.provenance.model if message.provenance else ""


def run_error(message: str, *, code: str = "") -> dict[str, Any]:
    """``RUN_ERROR``."""
    out: dict[str, Any] = {"type": "RUN_ERROR", "message": message}
    if code:
        out["code"] = code
    return out


def messages_snapshot(
    messages: Iterable[BaseMessage], *, strict: bool = False, report: ConversionReport | None = None
) -> dict[str, Any]:
    """``MESSAGES_SNAPSHOT`` of :func:`to_ag_ui` (the hydration event)."""
    return {"type": "MESSAGES_SNAPSHOT", "messages": to_ag_ui(messages, strict=strict, report=report)}


class AGUIEventStream:
    """agentmsg stream events of one message being generated, as AG-UI events.

    Feed each :class:`~agentmsg.streaming.StreamEvent` to :meth:`feed`; it returns the AG-UI
    events (dicts) it makes. Ids agree with :func:`to_ag_ui`: the text and tool calls belong
    to the assistant message (the agentmsg message id), each thinking block is the reasoning
    message ``<id>.<block index>``. Text opens at the first text block and closes when the
    message ends, so one AG-UI assistant message holds all the text, as in the snapshot.
    Signatures are sent (``REASONING_ENCRYPTED_VALUE``) only when the message has provenance;
    other things AG-UI events cannot carry (citations, logprobs, hosted tools' deltas, sent
    whole as an ``ACTIVITY_SNAPSHOT`` when their block ends) are in :attr:`losses`.
    """

    def __init__(self) -> None:
        self._acc = StreamAccumulator()
        self._id = ""
        self._vouched = False
        self._text_open = False
        self._kinds: dict[int, str] = {}
        self._signatures: dict[int, str] = {}
        self.losses: list[Loss] = []

    def feed(self, event: StreamEvent) -> list[dict[str, Any]]:
        """The AG-UI events for one agentmsg stream event (after checking it with the fold's rules)."""
        self._acc.add(event)
        pb = event.pb
        kind = event.kind
        out: list[dict[str, Any]] = []
        if kind == "message_start":
            self._id = pb.message_start.message_id
            self._vouched = pb.message_start.HasField("provenance")
        elif kind == "block_start":
            out += self._start(pb.block_start.index, pb.block_start.content.WhichOneof("kind") or "")
        elif kind == "block_delta":
            out += self._delta(pb.block_delta)
        elif kind == "block_stop":
            out += self._stop(pb.block_stop.index)
        elif kind in ("message_stop", "error") and self._text_open:
            out.append({"type": "TEXT_MESSAGE_END", "messageId": self._id})
            self._text_open = False
        return out

    def _start(self, index: int, kind: str) -> list[dict[str, Any]]:
        self._kinds[index] = kind
        rid = _derived_id(self._id, index)
        if kind == "text":
            if self._text_open:
                return []
            self._text_open = True
            return [{"type": "TEXT_MESSAGE_START", "messageId": self._id, "role": "assistant"}]
        if kind in ("thinking", "redacted_thinking"):
            if kind == "redacted_thinking" and not self._vouched:
                self.losses.append(Loss(f"[{index}]", "redacted thinking", "the message has no provenance"))
                return []
            return [
                {"type": "REASONING_START", "messageId": rid},
                {"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"},
            ]
        if kind == "tool_call":
            call = self._acc.snapshot().contents[index]
            assert isinstance(call, ToolCallContent)
            return [
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": call.id,
                    "toolCallName": call.name,
                    "parentMessageId": self._id,
                }
            ]
        return []

    def _delta(self, delta: Any) -> list[dict[str, Any]]:
        index, arm = delta.index, delta.WhichOneof("delta")
        kind = self._kinds.get(index, "")
        piece = getattr(delta, arm).text if arm in ("text", "thinking") else ""
        if arm in ("text", "thinking") and not piece:
            return []  # AG-UI content events carry a non-empty delta
        if arm == "text":
            return [{"type": "TEXT_MESSAGE_CONTENT", "messageId": self._id, "delta": delta.text.text}]
        if arm == "thinking":
            return [
                {
                    "type": "REASONING_MESSAGE_CONTENT",
                    "messageId": _derived_id(self._id, index),
                    "delta": delta.thinking.text,
                }
            ]
        if arm == "tool_call" and kind == "tool_call" and delta.tool_call.arguments:
            call = self._acc.snapshot().contents[index]
            assert isinstance(call, ToolCallContent)
            return [{"type": "TOOL_CALL_ARGS", "toolCallId": call.id, "delta": delta.tool_call.arguments}]
        if arm == "signature":
            self._signatures[index] = self._signatures.get(index, "") + delta.signature.signature
        elif arm in ("citation", "logprobs"):
            self.losses.append(Loss(f"[{index}].{arm}", arm, "AG-UI text events have no place for it"))
        return []

    def _stop(self, index: int) -> list[dict[str, Any]]:
        kind = self._kinds.get(index, "")
        block = self._acc.snapshot().contents[index]
        rid = _derived_id(self._id, index)
        out: list[dict[str, Any]] = []
        signature = self._signatures.get(index, "")
        if kind == "thinking" or (kind == "redacted_thinking" and self._vouched):
            out.append({"type": "REASONING_MESSAGE_END", "messageId": rid})
            value = block.data if isinstance(block, RedactedThinkingContent) else signature
            if value and self._vouched:
                out.append(
                    {
                        "type": "REASONING_ENCRYPTED_VALUE",
                        "subtype": "message",
                        "entityId": rid,
                        "encryptedValue": value,
                    }
                )
            elif value:
                self.losses.append(Loss(f"[{index}].signature", "thinking signature", "the message has no provenance"))
            out.append({"type": "REASONING_END", "messageId": rid})
        elif kind == "tool_call":
            assert isinstance(block, ToolCallContent)
            out.append({"type": "TOOL_CALL_END", "toolCallId": block.id})
            if signature and self._vouched:
                out.append(
                    {
                        "type": "REASONING_ENCRYPTED_VALUE",
                        "subtype": "tool-call",
                        "entityId": block.id,
                        "encryptedValue": signature,
                    }
                )
            elif signature:
                self.losses.append(Loss(f"[{index}].signature", "tool-call signature", "the message has no provenance"))
        elif kind == "text" and signature:
            self.losses.append(Loss(f"[{index}].signature", "text signature", "AG-UI text has no signature"))
        elif kind not in ("text", "redacted_thinking"):
            out.append(
                {
                    "type": "ACTIVITY_SNAPSHOT",
                    "messageId": rid,
                    "activityType": ACTIVITY_CONTENT,
                    "content": content_to_dict(block),
                    "replace": True,
                }
            )
        return out


def message_events(
    message: BaseMessage, *, chunk_size: int | None = None, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """A finished message as the AG-UI events that show it being made.

    An assistant message goes through :class:`AGUIEventStream` (text in pieces of
    ``chunk_size`` characters, whole when None); each result of a tool message is a
    ``TOOL_CALL_RESULT``; a user or system message's text is a ``TEXT_MESSAGE_*`` triple
    (its other blocks reach a client only in a ``MESSAGES_SNAPSHOT``: reported).
    """
    reporter = Reporter("AG-UI events", report, strict=False)
    out: list[dict[str, Any]] = []
    if isinstance(message, AssistantMessage):
        stream = AGUIEventStream()
        for event in events_from_message(message, chunk_size=chunk_size):
            out += stream.feed(event)
        reporter.report.losses += stream.losses
    elif isinstance(message, ToolMessage):
        tool = _Writer(reporter).results("", message, list(enumerate(message.contents)), main=True)  # type: ignore[arg-type]
        for item in tool:
            out.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": item["id"],
                    "toolCallId": item["toolCallId"],
                    "content": item["content"],
                    "role": "tool",
                }
            )
    elif isinstance(message, (UserMessage, SystemMessage)):
        role = "user" if isinstance(message, UserMessage) else "system"
        out.append({"type": "TEXT_MESSAGE_START", "messageId": message.id, "role": role})
        for k, block in enumerate(message.contents):
            if isinstance(block, TextContent):
                out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": message.id, "delta": block.content})
            else:
                reporter.loss(f"contents[{k}]", f"{block.type} block", "text events carry text only")
        out.append({"type": "TEXT_MESSAGE_END", "messageId": message.id})
    else:
        reporter.loss("", type(message).__name__, "only a MESSAGES_SNAPSHOT carries it")
    reporter.finish()
    return [event for event in out if not (event["type"] == "TEXT_MESSAGE_CONTENT" and not event["delta"])]
