"""The peer libraries' message models, built from the same conversations the codec benchmark uses.

Both are benchmark-only dependencies (``pip install -e '.[bench]'``):

- pydantic-ai (``pydantic-ai-slim``): the conversation as a ``list[ModelMessage]``
  (``ModelRequest`` / ``ModelResponse`` with ``SystemPromptPart``,
  ``UserPromptPart`` (``BinaryContent`` images), ``ThinkingPart`` (signature),
  ``ToolCallPart``, ``ToolReturnPart``, ``TextPart``, ``RequestUsage``),
  serialised with ``ModelMessagesTypeAdapter.dump_json`` / ``validate_json``;
- LangChain (``langchain-core``): the messages ``agentmsg.providers.langchain.to_langchain``
  makes, serialised with ``messages_to_dict`` + ``json.dumps`` and read back
  with ``json.loads`` + ``messages_from_dict``.

:func:`pydantic_ai_messages` builds the pydantic-ai form here (agentmsg has no
pydantic-ai converter). One agentmsg message becomes one ``ModelMessage``:
system, user and tool messages a ``ModelRequest``, assistant messages a
``ModelResponse``. What pydantic-ai has no field for is listed by
:func:`pydantic_ai_gaps` and printed in the contender's note.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from importlib import metadata
from typing import Any

from agentmsg import (
    AssistantMessage,
    Conversation,
    ImageContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolMessage,
    UserMessage,
)


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def missing() -> list[str]:
    """The peer distributions that are not importable (install them with ``pip install -e '.[bench]'``)."""
    out = []
    for module, dist in (("pydantic_ai", "pydantic-ai-slim"), ("langchain_core", "langchain-core")):
        try:
            __import__(module)
        except ImportError:
            out.append(dist)
    return out


# --------------------------------------------------------------------------------------------------------------------
# pydantic-ai

FINISH_REASON = {StopReason.STOP: "stop", StopReason.LENGTH: "length", StopReason.TOOL_CALLS: "tool_call"}


def pydantic_ai_messages(conv: Conversation) -> list[Any]:
    """The conversation as pydantic-ai ``ModelMessage`` objects (one per agentmsg message)."""
    from pydantic_ai.messages import (
        BinaryContent,
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    out: list[Any] = []
    for message in conv:
        ts = message.datetime
        meta = {"id": message.id}  # pydantic-ai messages have no id: kept in ``metadata``
        if isinstance(message, SystemMessage):
            out.append(
                ModelRequest([SystemPromptPart(message.text_content(), timestamp=ts)], timestamp=ts, metadata=meta)
            )
        elif isinstance(message, UserMessage):
            items: list[Any] = []
            for block in message.contents:
                if isinstance(block, TextContent):
                    items.append(block.content)
                elif isinstance(block, ImageContent):
                    items.append(BinaryContent(block.data, media_type=block.media_type))
                else:
                    raise TypeError(f"no pydantic-ai form for {type(block).__name__} here")
            content: Any = items[0] if len(items) == 1 and isinstance(items[0], str) else items
            out.append(ModelRequest([UserPromptPart(content, timestamp=ts)], timestamp=ts, metadata=meta))
        elif isinstance(message, ToolMessage):
            parts = [ToolReturnPart(result.name, result.text, result.id, timestamp=ts) for result in message.results()]
            out.append(ModelRequest(parts, timestamp=ts, metadata=meta))
        elif isinstance(message, AssistantMessage):
            provider = message.provenance.provider if message.provenance else None
            response_parts: list[Any] = []
            for block in message.contents:
                if isinstance(block, ThinkingContent):
                    response_parts.append(
                        ThinkingPart(block.content, signature=block.signature or None, provider_name=provider)
                    )
                elif isinstance(block, ToolCallContent):
                    response_parts.append(ToolCallPart(block.name, json.loads(block.arguments), block.id))
                elif isinstance(block, TextContent):
                    response_parts.append(TextPart(block.content))
                else:
                    raise TypeError(f"no pydantic-ai form for {type(block).__name__} here")
            usage = message.usage
            request_usage = RequestUsage()
            if usage is not None:
                request_usage = RequestUsage(
                    input_tokens=usage.input_tokens or 0,
                    output_tokens=usage.output_tokens or 0,
                    cache_read_tokens=usage.cache_read_tokens or 0,
                    cache_write_tokens=usage.cache_write_tokens or 0,
                    details={"reasoning_tokens": usage.reasoning_tokens or 0},
                )
            out.append(
                ModelResponse(
                    response_parts,
                    usage=request_usage,
                    model_name=message.provenance.model if message.provenance else None,
                    timestamp=ts,
                    provider_name=provider,
                    provider_response_id=message.provenance.response_id if message.provenance else None,
                    provider_details={"finish_reason": message.stop_reason_raw} if message.stop_reason_raw else None,
                    finish_reason=FINISH_REASON.get(message.stop_reason) if message.stop_reason else None,
                    metadata=meta,
                )
            )
        else:
            raise TypeError(f"no pydantic-ai form for {type(message).__name__} here")
    return out


def pydantic_ai_gaps(conv: Conversation) -> list[str]:
    """What of ``conv`` the pydantic-ai model has no exact place for (the contender's note says so)."""
    gaps = ["message ids in ModelMessage.metadata (no id field)"]
    assistants = [m for m in conv if isinstance(m, AssistantMessage)]
    if any(m.usage is not None and "cost" in m.usage.reported for m in assistants):
        gaps.append("usage cost dropped (RequestUsage has no stored cost)")
    if any(m.usage is not None for m in assistants):
        gaps.append("total_tokens derived, reasoning tokens in usage.details")
    if any(isinstance(m, ToolMessage) for m in conv):
        gaps.append("tool results as plain text (ToolReturnPart.content)")
    if any(m.provenance is not None and m.provenance.api for m in assistants):
        gaps.append("provenance api dropped")
    # Signatures are exact: ThinkingPart.signature (with provider_name, as pydantic-ai's Anthropic model writes it).
    return gaps


def pydantic_ai_codec() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any]]:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.dump_json, ModelMessagesTypeAdapter.validate_json


def walk_pydantic_ai(messages: list[Any]) -> tuple[int, int, int]:
    """Every message and part (and every item of a list user prompt), reading one field of each."""
    from pydantic_ai.messages import BinaryContent, ThinkingPart, ToolCallPart

    count = blocks = n = 0
    for message in messages:
        count += 1
        n += len(message.kind)
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, list):
                for item in content:
                    blocks += 1
                    n += len(item.data) if isinstance(item, BinaryContent) else len(item)
                continue
            blocks += 1
            if isinstance(part, ToolCallPart):
                n += len(part.args) if part.args is not None else 0
            elif isinstance(part, ThinkingPart):
                n += len(part.content)
            else:
                n += len(content) if isinstance(content, str) else 0
    return count, blocks, n


# --------------------------------------------------------------------------------------------------------------------
# LangChain


def langchain_messages(conv: Conversation) -> tuple[list[Any], list[str]]:
    """``to_langchain(conv)`` and the losses it reported (as the note's text)."""
    from agentmsg.providers import langchain
    from agentmsg.providers._common import ConversionReport

    report = ConversionReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        messages = langchain.to_langchain(list(conv), report=report)
    return messages, [str(loss) for loss in report.losses]


def langchain_codec() -> tuple[Callable[[list[Any]], str], Callable[[str], list[Any]]]:
    from langchain_core.messages import messages_from_dict, messages_to_dict

    dumps, loads = json.dumps, json.loads

    def encode(messages: list[Any]) -> str:
        return dumps(messages_to_dict(messages), separators=(",", ":"))

    def decode(text: str) -> list[Any]:
        return messages_from_dict(loads(text))

    return encode, decode


def walk_langchain(messages: list[Any]) -> tuple[int, int, int]:
    """Every message, every block of list content (or the string content) and every tool call."""
    count = blocks = n = 0
    for message in messages:
        count += 1
        n += len(message.type)
        content = message.content
        if isinstance(content, str):
            blocks += 1 if content else 0
            n += len(content)
        else:
            for block in content:
                blocks += 1
                n += len(block) if isinstance(block, str) else len(block.get("type", ""))
        for call in getattr(message, "tool_calls", ()):
            blocks += 1
            n += len(call["name"])
    return count, blocks, n
