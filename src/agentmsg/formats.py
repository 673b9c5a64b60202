"""Every conversation format by name: read one into agentmsg messages, write messages as one.

The names are ``agentmsg convert``'s (``--from`` / ``--to``) and the ``ConvertService``'s: the CLI and the
service call these two functions, so a conversion through the server gives what the CLI and the Python
converters give. Each name dispatches to its format's module (:mod:`agentmsg.providers`, :mod:`agentmsg.ui`,
:mod:`agentmsg.dict_form`); what a format cannot hold goes into the :class:`ConversionReport` passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmsg.dict_form import messages_from_dicts, messages_to_dicts
from agentmsg.errors import ValidationError
from agentmsg.messages import AgentMessage, AssistantMessage, Conversation
from agentmsg.providers import adaline, anthropic, gemini, openai_chat, openai_responses
from agentmsg.providers._common import ConversionReport
from agentmsg.ui import ag_ui, ai_sdk
from agentmsg.v1 import convert_service_pb2

__all__ = ["FORMATS", "ID_MAP_FORMATS", "RESPONSE_FORMATS", "WIRE_FORMATS", "dumps", "read", "wire_format", "write"]

FORMATS = (
    "agentmsg",
    "seed1",
    "adaline",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "langchain",
    "ag-ui",
    "ai-sdk",
)
# The formats with a response object besides a request's messages (``response=True``).
RESPONSE_FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")
# The formats whose writers rewrite tool-call ids, and whose readers take the map back.
ID_MAP_FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini", "langchain")
# Readers with provider blocks agentmsg has no type for, which take ``pass_through_unknown``.
_PASS_THROUGH = ("openai-chat", "openai-responses", "anthropic", "gemini", "langchain")


# Each format's name -> its ``agentmsg.v1.ConversionFormat`` value (CONVERSION_FORMAT_OPENAI_CHAT: openai-chat):
# the formats the ConvertService serves (every one but agentmsg's own ProtoJSON, which any client reads itself).
WIRE_FORMATS: dict[str, convert_service_pb2.ConversionFormat.ValueType] = {
    value.name.removeprefix("CONVERSION_FORMAT_").lower().replace("_", "-"): convert_service_pb2.ConversionFormat.Value(
        value.name
    )
    for value in convert_service_pb2.ConversionFormat.DESCRIPTOR.values
    if value.number
}


def wire_format(name: str) -> convert_service_pb2.ConversionFormat.ValueType:
    """The ``ConversionFormat`` value of a format's name; ValidationError naming ``format`` for any other name."""
    value = WIRE_FORMATS.get(name)
    if value is None:
        raise ValidationError.single("format", "format", f"{name!r} is not one of: {', '.join(WIRE_FORMATS)}")
    return value


def dumps(payload: Any) -> str:
    """A converted payload as compact JSON text: the converter's key order and numbers, non-ASCII as it is."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _known(name: str, response: bool) -> None:
    if name not in FORMATS:
        raise ValidationError.single("format", "format", f"{name!r} is not one of: {', '.join(FORMATS)}")
    if response and name not in RESPONSE_FORMATS:
        raise ValidationError.single(
            "response", "format.response", f"{name} has no response object (only {', '.join(RESPONSE_FORMATS)})"
        )


def _is_container(data: Any) -> bool:
    """A JSON array or object (every format's payload is one; a reader is never handed a scalar)."""
    return isinstance(data, list | dict)


def langchain_messages() -> Any:
    """``langchain_core.messages``, or a ValidationError naming ``format`` and the extra that brings it (the
    service answers INVALID_ARGUMENT: this installation cannot convert the format asked for)."""
    try:
        from langchain_core import messages
    except ImportError as exc:
        raise ValidationError.single(
            "format", "format.extra", f"{exc} (the langchain format needs: pip install 'agentmsg[langchain]')"
        ) from None
    return messages


def read(
    name: str,
    data: Any,
    *,
    response: bool = False,
    pass_through_unknown: bool | None = None,
    id_map: Mapping[str, str] | None = None,
    report: ConversionReport | None = None,
) -> list[AgentMessage]:
    """``data`` (parsed JSON) in format ``name`` as agentmsg messages.

    ``response``: ``data`` is the provider's response object (one assistant message). ``pass_through_unknown``:
    None for each reader's default; formats with nothing unknown to keep ignore it. ``id_map``: tool-call ids a
    writer rewrote, restored (only the formats of :data:`ID_MAP_FORMATS` rewrite them). ``report``: the losses
    of the readers that report them (AG-UI, the AI SDK).
    """
    _known(name, response)
    if not _is_container(data):
        kind = "null" if data is None else type(data).__name__
        raise ValidationError.single("", "type", f"expected a JSON array or object, got {kind}")
    if id_map and (name not in ID_MAP_FORMATS or (response and name in ("openai-chat", "openai-responses"))):
        raise ValidationError.single("id_map", "format.id_map", f"the {name} reader rewrites no tool-call ids")
    options: dict[str, Any] = {}
    if pass_through_unknown is not None and name in _PASS_THROUGH:
        options["pass_through_unknown"] = pass_through_unknown
    if id_map:
        options["id_map"] = dict(id_map)
    if response:
        readers: dict[str, Callable[..., AssistantMessage]] = {
            "openai-chat": openai_chat.from_openai_chat_response,
            "openai-responses": openai_responses.from_openai_responses_response,
            "anthropic": anthropic.from_anthropic_response,
            "gemini": gemini.from_gemini_response,
        }
        return [readers[name](data, **options)]
    if name == "agentmsg":
        return list(Conversation.from_json(data))
    if name == "seed1":
        return messages_from_dicts(data)
    if name == "adaline":
        return adaline.from_adaline(data)
    if name == "ag-ui":
        return ag_ui.from_ag_ui(data, report=report)
    if name == "ai-sdk":
        return ai_sdk.from_ui_messages(data, report=report)
    if name == "langchain":
        langchain_messages()  # the extra's absence said plainly
        from agentmsg.providers import langchain

        return langchain.from_langchain(data, **options)  # its dicts, each checked (messages_from_dict trusts them)
    request_readers: dict[str, Callable[..., list[AgentMessage]]] = {
        "openai-chat": openai_chat.from_openai_chat,
        "openai-responses": openai_responses.from_openai_responses,
        "anthropic": anthropic.from_anthropic,
        "gemini": gemini.from_gemini,
    }
    return request_readers[name](data, **options)


def write(
    name: str,
    messages: Sequence[AgentMessage],
    *,
    response: bool = False,
    strict: bool = False,
    report: ConversionReport,
) -> Any:
    """``messages`` in format ``name`` (plain, JSON-ready data), what it cannot hold in ``report``.

    ``response``: the provider's response object for one assistant message. ``strict``: a
    :class:`~agentmsg.providers.ConversionError` instead of any loss.
    """
    _known(name, response)
    options: dict[str, Any] = {"strict": strict, "report": report}
    if response:
        if len(messages) != 1 or not isinstance(messages[0], AssistantMessage):
            kinds = ", ".join(type(m).__name__ for m in messages[:3]) or "none"
            raise ValidationError.single(
                "", "format.response", f"a response holds one assistant message; got {len(messages)} ({kinds})"
            )
        writers: dict[str, Callable[..., Any]] = {
            "openai-chat": openai_chat.to_openai_chat_response,
            "openai-responses": openai_responses.to_openai_responses_response,
            "anthropic": anthropic.to_anthropic_response,
            "gemini": gemini.to_gemini_response,
        }
        return writers[name](messages[0], **options)
    if name == "agentmsg":
        return Conversation(list(messages)).to_json_dict()
    if name == "seed1":
        return messages_to_dicts(messages)
    if name == "adaline":
        return adaline.to_adaline(messages, **options)
    if name == "ag-ui":
        return ag_ui.to_ag_ui(messages, **options)
    if name == "ai-sdk":
        return ai_sdk.to_ui_messages(messages, **options)
    if name == "langchain":
        messages_to_dict = langchain_messages().messages_to_dict
        from agentmsg.providers import langchain

        return messages_to_dict(langchain.to_langchain(messages, **options))
    request_writers: dict[str, Callable[..., Any]] = {
        "openai-chat": openai_chat.to_openai_chat,
        "openai-responses": openai_responses.to_openai_responses,
        "anthropic": anthropic.to_anthropic,
        "gemini": gemini.to_gemini,
    }
    return request_writers[name](messages, **options)
