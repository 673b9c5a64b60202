"""agentmsg messages as OpenTelemetry GenAI message JSON (``gen_ai.input.messages`` / ``gen_ai.output.messages``).

The GenAI semantic conventions record a model call's messages as JSON: each
message has a ``role`` and ``parts``; a part has a ``type``: ``text``,
``tool_call`` (``id``, ``name``, ``arguments``), ``tool_call_response`` (``id``,
``response``), ``reasoning``, ``blob`` (base64 ``content``), ``uri``, ``file``
(each with ``modality`` and ``mime_type``), ``server_tool_call`` and
``server_tool_call_response``; an output message also has a ``finish_reason``.

:func:`to_otel_messages` writes that shape from agentmsg messages, for users who
instrument their own model calls (the agentmsg service uses it when content
capture is turned on). It is a one-way, lossy view for telemetry: signatures,
citations, logprobs and app-only tool-result metadata are left out, redacted
reasoning becomes a ``redacted_reasoning`` part without its opaque data, a
person's decision on a tool call a ``tool_approval`` part (``id``, ``decision``,
``reason``, ``decided_by``), and a provider block kept verbatim becomes a
``provider`` part.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any

from agentmsg.content import (
    AudioContent,
    Content,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
    UnknownContent,
)
from agentmsg.messages import AgentMessage, AssistantMessage, BaseMessage, StopReason

__all__ = ["to_otel_messages", "to_otel_parts"]

# The conventions' finish reasons; agentmsg's `abort` has none and is written as it is.
_FINISH = {
    StopReason.STOP: "stop",
    StopReason.LENGTH: "length",
    StopReason.TOOL_CALLS: "tool_call",
    StopReason.CONTENT_FILTER: "content_filter",
    StopReason.ERROR: "error",
    StopReason.ABORT: "abort",
}


def _media(block: ImageContent | AudioContent | DocumentContent, modality: str) -> list[dict[str, Any]]:
    pieces: list[ImageContent | AudioContent | DocumentContent] = (
        list(block.split()) if isinstance(block, ImageContent | AudioContent) else [block]
    )
    parts: list[dict[str, Any]] = []
    for piece in pieces:
        mime = piece.media_type or None
        if piece.data is not None:
            encoded = base64.b64encode(piece.data).decode("ascii")
            parts.append({"type": "blob", "modality": modality, "mime_type": mime, "content": encoded})
        elif piece.url is not None:
            parts.append({"type": "uri", "modality": modality, "mime_type": mime, "uri": piece.url})
        elif piece.file_id is not None:
            parts.append({"type": "file", "modality": modality, "mime_type": mime, "file_id": piece.file_id})
    return parts


def _arguments(text: str) -> Any:
    """A tool call's arguments as JSON when they parse, else the model's text as it came."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def _result_response(result: ToolResultContent) -> Any:
    blocks = result.blocks
    if all(isinstance(b, TextContent) for b in blocks):
        return result.text
    return to_otel_parts(blocks)


def to_otel_parts(blocks: Iterable[Content]) -> list[dict[str, Any]]:
    """Content blocks as the conventions' message parts (see the module docstring)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        match block:
            case TextContent():
                parts.append({"type": "text", "content": block.content})
            case ThinkingContent():
                parts.append({"type": "reasoning", "content": block.content})
            case RedactedThinkingContent():
                parts.append({"type": "redacted_reasoning"})
            case ToolCallContent():
                parts.append(
                    {"type": "tool_call", "id": block.id, "name": block.name, "arguments": _arguments(block.arguments)}
                )
            case ToolResultContent():
                parts.append({"type": "tool_call_response", "id": block.id, "response": _result_response(block)})
            case ImageContent():
                parts += _media(block, "image")
            case AudioContent():
                parts += _media(block, "audio")
            case DocumentContent():
                parts += _media(block, "document")
            case HostedToolCallContent():
                kind = block.kind.value if block.kind is not None else block.name
                call = {"type": kind, "arguments": _arguments(block.input)}
                parts.append({"type": "server_tool_call", "id": block.id, "name": block.name, "server_tool_call": call})
            case HostedToolResultContent():
                kind = block.kind.value if block.kind is not None else block.name
                response: dict[str, Any] = {"type": kind, "is_error": block.is_error}
                parts.append(
                    {"type": "server_tool_call_response", "id": block.call_id, "server_tool_call_response": response}
                )
            case ProviderContent():
                parts.append({"type": "provider", "provider": block.provider, "block": block.block})
            case ToolApprovalContent():
                decision = block.decision.value if block.decision is not None else "unknown"
                approval = {"type": "tool_approval", "id": block.call_id, "decision": decision}
                approval.update({k: v for k, v in (("reason", block.reason), ("decided_by", block.decided_by)) if v})
                parts.append(approval)
            case UnknownContent():
                parts.append({"type": "unknown"})
    return parts


def _role(message: BaseMessage) -> str:
    role = message.role
    return role.value if role is not None else "unknown"


def to_otel_messages(messages: AgentMessage | Iterable[AgentMessage]) -> list[dict[str, Any]]:
    """Messages in the GenAI conventions' message JSON shape (a list, ready for ``json.dumps``).

    Each message becomes ``{"role", "parts"}`` (plus ``"name"`` when it has one);
    an assistant message with a stop reason also gets ``"finish_reason"``, which
    makes it an output message (``gen_ai.output.messages``). Session-only
    messages (summaries, custom entries) keep their own role and carry their text.
    """
    items = [messages] if isinstance(messages, BaseMessage) else list(messages)
    out: list[dict[str, Any]] = []
    for message in items:
        if not isinstance(message, BaseMessage):
            raise TypeError(f"to_otel_messages takes agentmsg messages, got {type(message).__name__}")
        parts = to_otel_parts(message.contents)
        if not parts and message.text_content():
            parts = [{"type": "text", "content": message.text_content()}]
        entry: dict[str, Any] = {"role": _role(message), "parts": parts}
        if message.name:
            entry["name"] = message.name
        if isinstance(message, AssistantMessage) and message.stop_reason is not None:
            entry["finish_reason"] = _FINISH[message.stop_reason]
        out.append(entry)
    return out
