"""What the ConvertService tests compare with: a fixture conversation, each format's Python writer and reader called as
an application calls them, and the JSON text ToProviderResponse.json is documented to hold."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import messages_to_dict
from ui.conversation import conversation

import agentmsg as am
from agentmsg.dict_form import messages_from_dicts, messages_to_dicts
from agentmsg.providers import adaline, anthropic, gemini, langchain, openai_chat, openai_responses
from agentmsg.providers._common import ConversionReport, Loss
from agentmsg.ui import ag_ui, ai_sdk
from agentmsg.v1 import convert_service_pb2

C = convert_service_pb2


def dumps(payload: Any) -> str:
    """The settings ToProviderResponse.json is documented to be written with."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def fixture() -> list[am.AgentMessage]:
    """The ui tests' conversation plus a turn whose tool-call id no provider's pattern takes (ids get rewritten)."""
    odd = am.AssistantMessage(
        [am.ToolCallContent("call.odd/1 é", "get_weather", arguments='{"city":"Rome"}')],
        stop_reason=am.StopReason.TOOL_CALLS,
        id="a3",
        timestamp=1_790_000_010.0,
    )
    result = am.ToolMessage(
        [am.ToolResultContent("call.odd/1 é", "25°C", name="get_weather")], id="t3", timestamp=1_790_000_011.0
    )
    return [*conversation(), odd, result]


def _langchain(messages: Sequence[am.AgentMessage], **options: Any) -> Any:
    return messages_to_dict(langchain.to_langchain(messages, **options))


# Each format's Python writer, called as an application calls it.
WRITERS: dict[str, Callable[..., Any]] = {
    "openai-chat": openai_chat.to_openai_chat,
    "openai-responses": openai_responses.to_openai_responses,
    "anthropic": anthropic.to_anthropic,
    "gemini": gemini.to_gemini,
    "adaline": adaline.to_adaline,
    "seed1": lambda messages, strict, report: messages_to_dicts(messages),
    "langchain": _langchain,
    "ag-ui": ag_ui.to_ag_ui,
    "ai-sdk": ai_sdk.to_ui_messages,
}
RESPONSE_WRITERS: dict[str, Callable[..., Any]] = {
    "openai-chat": openai_chat.to_openai_chat_response,
    "openai-responses": openai_responses.to_openai_responses_response,
    "anthropic": anthropic.to_anthropic_response,
    "gemini": gemini.to_gemini_response,
}
READERS: dict[str, Callable[[Any], list[am.AgentMessage]]] = {
    "openai-chat": openai_chat.from_openai_chat,
    "openai-responses": openai_responses.from_openai_responses,
    "anthropic": anthropic.from_anthropic,
    "gemini": gemini.from_gemini,
    "adaline": adaline.from_adaline,
    "seed1": messages_from_dicts,
    "langchain": langchain.from_langchain,
    "ag-ui": ag_ui.from_ag_ui,
    "ai-sdk": ai_sdk.from_ui_messages,
}
FORMAT = {name: C.ConversionFormat.Value("CONVERSION_FORMAT_" + name.upper().replace("-", "_")) for name in WRITERS}


def expected(name: str, messages: Sequence[am.AgentMessage], *, response: bool = False) -> tuple[str, ConversionReport]:
    report = ConversionReport()
    if response:
        payload = RESPONSE_WRITERS[name](messages[0], strict=False, report=report)
    else:
        payload = WRITERS[name](messages, strict=False, report=report)
    return dumps(payload), report


def losses(response: Any) -> list[Loss]:
    return [Loss(x.path, x.what, x.reason) for x in response.losses]


def to_provider(name: str, messages: Sequence[am.AgentMessage], **fields: Any) -> Any:
    request = C.ToProviderRequest(format=FORMAT[name], **fields)
    request.input.messages.SetInParent()
    request.input.messages.messages.extend(m.pb for m in messages)
    return request


def anonymous(messages: Sequence[Any]) -> list[Any]:
    """Messages with the ids and timestamps a reader makes up (for payloads without them) cleared."""
    out = []
    for message in messages:
        pb = message.pb if isinstance(message, am.BaseMessage) else message
        copy = type(pb)()
        copy.CopyFrom(pb)
        copy.ClearField("id")
        copy.ClearField("timestamp")
        out.append(copy)
    return out
