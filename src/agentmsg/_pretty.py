"""Human-readable lines for messages and stream events (``agentmsg tail``)."""

from __future__ import annotations

import json

from agentmsg.content import (
    AudioContent,
    Content,
    DocumentContent,
    ImageContent,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
)
from agentmsg.errors import ValidationError
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from agentmsg.streaming import StreamEvent

WIDTH = 100


def _short(text: str, width: int = WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _media(block: ImageContent | AudioContent | DocumentContent) -> str:
    if block.data is not None:
        return f"{block.media_type}, {len(block.data):,} bytes"
    if block.url is not None:
        return f"{block.media_type or 'unknown type'} at {block.url}"
    return f"provider file {block.file_id}"


def block_line(block: Content) -> str:
    """One line for a content block: its kind, then what it says."""
    match block:
        case TextContent():
            return f"text       {_short(block.content)}"
        case ThinkingContent():
            signed = " (signed)" if block.signature else ""
            return f"thinking   {_short(block.content)}{signed}"
        case RedactedThinkingContent():
            return f"redacted   {len(block.data)} chars of encrypted reasoning"
        case ToolCallContent():
            waits = "  needs approval" if block.requires_approval else ""
            return f"tool_call  {block.name}({_short(block.arguments, 60)})  [{block.id}]{waits}"
        case ToolApprovalContent():
            verdict = block.decision.value if block.decision is not None else "unknown decision"
            by = f" by {block.decided_by}" if block.decided_by else ""
            why = f": {_short(block.reason, 50)}" if block.reason else ""
            return f"approval   {verdict}{by}{why}  [{block.call_id}]"
        case ToolResultContent():
            flag = " ERROR" if block.is_error else ""
            return f"result{flag:<5} {_short(block.text, 70)}  [{block.id}]"
        case ImageContent() | AudioContent() | DocumentContent():
            return f"{block.type:<10} {_media(block)}"
        case ProviderContent():
            return f"provider   {block.provider} {block.block_type}"
    return "unknown    (a content kind from a newer version)"


def message_lines(offset: int, message: AgentMessage) -> list[str]:
    """A header line and one line per block."""
    role = message.role.value if message.role else "unknown"
    try:
        when = message.datetime.strftime("%H:%M:%S")
    except ValidationError:  # a timestamp stored before the contract's range rule: shown, not crashed on
        when = f"(invalid time {message.pb.timestamp.seconds}s {message.pb.timestamp.nanos}ns)"
    header = f"#{offset:<4} {role:<18} {when}"
    if isinstance(message, AssistantMessage):
        if message.provenance is not None and message.provenance.model:
            header += f"  {message.provenance.model}"
        if message.stop_reason is not None:
            header += f"  stop={message.stop_reason.value}"
        if message.usage is not None and "output_tokens" in message.usage.reported:
            header += f"  out={message.usage.output_tokens}"
        if message.error:
            header += f"  error={_short(message.error, 40)}"
    lines = [header]
    if isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        lines.append(f"      summary    {_short(message.summary)}")
    if isinstance(message, CustomMessage):
        lines.append(f"      custom     {message.custom_type}  {json.dumps(message.details)[:60]}")
    lines.extend(f"      {block_line(block)}" for block in message.contents)
    return lines


def event_line(event: StreamEvent) -> str:
    """One line for a live stream event."""
    pb = event.pb
    kind = event.kind
    if kind == "block_delta":
        delta = pb.block_delta
        which = delta.WhichOneof("delta")
        piece = {
            "text": delta.text.text,
            "thinking": delta.thinking.text,
            "tool_call": delta.tool_call.arguments,
            "signature": "<signature>",
        }.get(which or "", "")
        return f"  ~ block {delta.index} +{which}: {piece!r}"
    if kind == "block_start":
        return f"  ~ block {pb.block_start.index} starts: {pb.block_start.content.WhichOneof('kind')}"
    if kind == "message_stop":
        return "  ~ message complete"
    if kind == "error":
        return f"  ~ generation failed: {pb.error.message}"
    return f"  ~ {kind}"
