"""pydantic-ai's message history (``pydantic_ai.messages.ModelMessage``), both directions.

:func:`from_pydantic_ai` reads a ``list[ModelMessage]`` (the objects, as ``result.all_messages()`` gives them, or
their JSON form, as ``ModelMessagesTypeAdapter`` dumps it) into agentmsg messages; :func:`to_pydantic_ai` writes
agentmsg messages as ``ModelMessage`` objects an ``Agent`` takes as ``message_history``. :class:`AgentHistory`
keeps an agent's history in an agentmsg session, local or on the service. Needs ``pydantic-ai-slim``
(``pip install 'agentmsg[pydantic-ai]'``); written against 2.68.

Mapping (pydantic-ai -> agentmsg; one agentmsg message per request part, one per response):

================================  ======================================================================
pydantic-ai                       agentmsg
================================  ======================================================================
``SystemPromptPart``              ``SystemMessage`` (the part's timestamp)
``UserPromptPart``                ``UserMessage``: ``str`` / ``TextContent`` -> text; ``ImageUrl``,
                                  ``AudioUrl``, ``DocumentUrl`` -> image / audio / document by URL;
                                  ``BinaryContent`` -> image / audio / document by media type (bytes);
                                  ``vendor_metadata["detail"]`` of an image -> its detail; every other
                                  item (``VideoUrl``, video bytes, ``UploadedFile``, ``CachePoint``...)
                                  kept verbatim as a ``ProviderContent`` (provider ``"pydantic-ai"``)
``ToolReturnPart``                ``ToolMessage`` with one result: ``tool_call_id``, ``tool_name``, the
                                  content (text, or the part's ``model_response_str()`` for other
                                  values), ``is_error`` for outcome failed / retried / denied,
                                  ``metadata`` (a dict)
``RetryPromptPart``               with a tool: an error result (the text the model is shown); without:
                                  user text; the part itself in the stash
``RetryFeedbackPart`` and other   user text the model is shown (``model_response()``) and the part
request parts                     verbatim as a ``ProviderContent`` (only the part when it has no text)
``ModelResponse``                 ``AssistantMessage`` (the response's timestamp)
``TextPart``                      ``TextContent``
``ThinkingPart``                  ``ThinkingContent`` (``signature``); ``id="redacted_thinking"`` ->
                                  ``RedactedThinkingContent`` (the data is the signature)
``ToolCallPart``                  ``ToolCallContent``: the argument text verbatim (a dict: its compact
                                  JSON)
``NativeToolCallPart`` /          ``HostedToolCallContent`` / ``HostedToolResultContent`` (kind from the
``NativeToolReturnPart``          tool name when agentmsg knows it)
``FilePart``, ``CompactionPart``, a ``ProviderContent`` (provider ``"pydantic-ai"``) holding the part
``SpeechPart``, others            verbatim: agentmsg's assistant message has no file arm
``RequestUsage``                  ``Usage``: input = ``input_tokens`` - cache reads - cache writes
                                  (pydantic-ai counts them in its input), output, cache read / write,
                                  1-hour cache writes, reasoning; ``cost`` -> cost total
``provider_name``,                ``Provenance`` (provider, api, model, response id): ``anthropic`` ->
``model_name``,                   anthropic / anthropic-messages, ``openai`` -> openai /
``provider_response_id``          openai-responses, ``google-gla`` / ``google-vertex`` -> google /
                                  google-generative-ai, any other name as the provider with no API
``finish_reason``                 stop reason (stop, length, tool_call, content_filter, error)
================================  ======================================================================

The stash. What agentmsg has no field for is kept where no model sees it, so ``to_pydantic_ai(from_pydantic_ai(h))``
gives ``h`` back exactly (as ``ModelMessagesTypeAdapter`` dumps it): a response's other fields (``model_id``,
``provider_details``, ``run_id``, ``conversation_id``, ``metadata``, ``state``..., each part's ``id``,
``provider_name``, ``provider_details``, ``citations``, the usage counts agentmsg has not) in the assistant message's
``provider_extra`` (provider ``"pydantic-ai"``, type ``"model_response"``); a request's own fields (``timestamp``,
``instructions``, ``run_id``, ``conversation_id``, ``metadata``, ``state``) on the request's first message, as a
``ProviderContent`` block of type ``"model_request"`` on a system or user message or under the key ``"pydantic_ai"``
of its first tool result's ``metadata`` (where the part's own ``tool_kind``, ``outcome``, ``retry`` and non-text
content go too); a system prompt's ``dynamic_ref``, ``context_id``, ``scope`` and ``metadata`` as a block of type
``"system-prompt"``. A stashed part is used only when the agentmsg block at its position is still of the same kind:
an edited history wins. The other converters report the ``"pydantic-ai"`` blocks they meet as lost (they are not
model input for any provider).

Ids. A message read from pydantic-ai gets an id derived from its content (UUID 5), so reading the same history twice
gives the same ids and :meth:`AgentHistory.save` of messages already saved is a no-op. The other way, the agentmsg
fields pydantic-ai has no place for (message ids, the provenance API, ``error``, the raw stop reason, a stop reason it
has no value for) go in the message's ``metadata["agentmsg"]``, which pydantic-ai keeps and never sends to a model,
and come back from there.

Approval. pydantic-ai's decisions (``ToolApproved`` / ``ToolDenied`` in ``DeferredToolResults``) are a run's input,
not history: an agentmsg approval block is reported as lost (a user message of decisions alone adds no request), and
what the history keeps of a denial is the denied call's ``ToolReturnPart`` with ``outcome="denied"``, written for the
result of a call an earlier block denied. A call's ``requires_approval`` (pydantic-ai's is on the tool definition)
rides in the response's ``metadata["agentmsg"]`` and comes back, as does a call's ``index`` (a ``ToolCallPart`` has
none); a tool result reads back with its call's index.

Reported as lost by :func:`to_pydantic_ai` (in the :class:`~agentmsg.providers._common.ConversionReport`): text
signatures, citations and logprobs of messages not read from pydantic-ai, tool-call signatures, kinds, server names
and metadata, ``terminate`` of tool results and an ``index`` other than their call's, the typed bodies of hosted
tool results (their text is kept), image detail other than in ``vendor_metadata``, document file names and titles,
media by file id, provider blocks of other providers, message names and parent ids, the stop sequence, and usage
pydantic-ai cannot tell apart (an unknown input or output count, written as 0; a reported 0 of cache or reasoning
tokens, which reads back as unknown; hosted-tool request counts). A tool result whose call is not in the history
and that has no name gets ``tool_name=""``, reported.

Replay. pydantic-ai is a carrier, like LangChain: the model the history goes to is picked by the agent, and
pydantic-ai's model classes send a signature back only to the provider named by the part's ``provider_name``. So
signatures and redacted thinking are kept, with the provenance's provider as ``provider_name``; the replay rule
(:func:`~agentmsg.providers._common.may_replay`) applies when the history is written for a provider by agentmsg's
own converters.

Errors: input that ``ModelMessagesTypeAdapter`` refuses is a :class:`~agentmsg.ValidationError` listing pydantic's
errors with their paths (rule ``pydantic_ai.invalid``); a value agentmsg refuses (a bad media payload) names its
path (``[2].parts[0].content[1]``).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import pydantic
import pydantic_core
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    UserContent,
)

from agentmsg.content import (
    AudioContent,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    ImageContent,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
)
from agentmsg.errors import NotFoundError, ValidationError, Violation
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    Provenance,
    StopReason,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from agentmsg.providers._common import (
    ConversionReport,
    PayloadErrors,
    Reporter,
    SessionPolicy,
    llm_messages,
    split_media,
)
from agentmsg.service.client import Client
from agentmsg.sessions import Session
from agentmsg.usage import Usage, UsageCost

__all__ = ["PROVIDER", "AgentHistory", "from_pydantic_ai", "to_pydantic_ai"]

PROVIDER: Final = "pydantic-ai"
"""The ``ProviderContent`` provider of what is kept verbatim for pydantic-ai."""
TARGET: Final = "pydantic-ai"
STASH_KEY: Final = "pydantic_ai"
"""The key of a tool result's ``metadata`` that holds what the tool return part has beyond the result."""
AGENTMSG_KEY: Final = "agentmsg"
"""The key of a pydantic-ai message's ``metadata`` that holds what the agentmsg message has beyond it."""

# pydantic-ai provider names <-> (agentmsg provenance provider, api)
_PROVIDERS: Final[dict[str, tuple[str, str]]] = {
    "anthropic": ("anthropic", "anthropic-messages"),
    "openai": ("openai", "openai-responses"),
    "google-gla": ("google", "google-generative-ai"),
    "google-vertex": ("google", "google-generative-ai"),
}
_BACK: Final[dict[str, str]] = {"anthropic": "anthropic", "openai": "openai", "google": "google-gla"}
_FINISH: Final[dict[str, StopReason]] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_call": StopReason.TOOL_CALLS,
    "content_filter": StopReason.CONTENT_FILTER,
    "error": StopReason.ERROR,
}
_FINISH_BACK: Final[dict[StopReason, str]] = {reason: name for name, reason in _FINISH.items()}
_HOSTED_KINDS: Final[dict[str, HostedToolKind]] = {kind.value: kind for kind in HostedToolKind if kind.value != "other"}
_ID_SPACE: Final = uuid.UUID("6b1f3c52-9f0e-4c1e-8a57-3d1c2f7e4a10")
_INT32_MAX: Final = 2**31 - 1  # a tool call's index is an int32
_USAGE_TYPED: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_reasoning_tokens",
)
_RESPONSE_TYPED: Final = (
    "parts",
    "usage",
    "model_name",
    "timestamp",
    "kind",
    "provider_name",
    "provider_response_id",
    "finish_reason",
)


def _pydantic_errors(exc: pydantic.ValidationError, what: str) -> ValidationError:
    found = []
    for error in exc.errors(include_url=False):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
        found.append(Violation(path, "pydantic_ai.invalid", error["msg"]))
    return ValidationError(found, what)


def _dump(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """The history in pydantic-ai's JSON form, checked by pydantic-ai itself."""
    if isinstance(messages, (str, bytes, Mapping, ModelRequest, ModelResponse)):
        raise ValidationError.single("", "type", "expected a list of pydantic-ai messages")
    items = list(messages)
    for i, item in enumerate(items):
        if not isinstance(item, (ModelRequest, ModelResponse, Mapping)):
            raise ValidationError.single(f"[{i}]", "type", f"expected a ModelMessage, got {type(item).__name__}")
    if any(isinstance(m, Mapping) for m in items):
        try:
            items = ModelMessagesTypeAdapter.validate_python(items)
        except pydantic.ValidationError as exc:
            raise _pydantic_errors(exc, "pydantic-ai history") from None
    try:
        dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python(items, mode="json")
    except pydantic_core.PydanticSerializationError as exc:
        raise ValidationError.single("", "pydantic_ai.invalid", f"not a pydantic-ai history: {exc}") from None
    return dumped


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _iso(message: BaseMessage) -> str:
    return message.datetime.isoformat().replace("+00:00", "Z")


def _set(values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries that say something (not None)."""
    return {k: v for k, v in values.items() if v is not None}


# --- pydantic-ai -> agentmsg ------------------------------------------------------------


def from_pydantic_ai(messages: Iterable[Any]) -> list[AgentMessage]:
    """A pydantic-ai history (``ModelMessage`` objects or their JSON form) as agentmsg messages.

    Nothing is lost on this side: what agentmsg has no field for is stashed (see the module docstring).
    """
    dumped = _dump(messages)
    errors = PayloadErrors("pydantic-ai history")
    out: list[AgentMessage] = []
    call_index: dict[str, int] = {}  # each call's index: a result answering it gets the same
    for i, message in enumerate(dumped):
        with errors.building(f"[{i}]"):
            if message["kind"] == "response":
                response = _read_response(message)
                call_index.update((b.id, b.index) for b in response.contents if isinstance(b, ToolCallContent))
                out.append(response)
            else:
                out.extend(_read_request(message, i, call_index))
    errors.raise_if_any()
    return out


def _derived_id(message: Mapping[str, Any], index: int) -> str:
    seed = _compact(
        [message.get("timestamp"), message.get("run_id"), index, message.get("parts", [])[index : index + 1]]
    )
    return str(uuid.uuid5(_ID_SPACE, seed))


def _response_id(response: Mapping[str, Any]) -> str:
    """The id a response read from pydantic-ai gets: from the fields that identify it, which the writer gives back."""
    when = _when(response.get("timestamp"))
    seed = _compact(
        [
            "response",
            when.timestamp() if when else None,
            response.get("run_id"),
            response.get("provider_response_id"),
            response.get("model_name"),
        ]
    )
    return str(uuid.uuid5(_ID_SPACE, seed))


def _agentmsg_stash(message: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(what agentmsg put in ``metadata["agentmsg"]``, the metadata without it)."""
    metadata: Any = message.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get(AGENTMSG_KEY), Mapping):
        return {}, metadata
    rest = {k: v for k, v in metadata.items() if k != AGENTMSG_KEY}
    return dict(metadata[AGENTMSG_KEY]), rest or None


def _read_request(message: Mapping[str, Any], at: int, call_index: Mapping[str, int]) -> list[AgentMessage]:
    ours, metadata = _agentmsg_stash(message)
    ids: list[str] = [i for i in ours.get("ids", []) if isinstance(i, str)]
    envelope = _set(
        {
            "timestamp": message.get("timestamp"),
            "instructions": message.get("instructions"),
            "run_id": message.get("run_id"),
            "conversation_id": message.get("conversation_id"),
            "metadata": metadata,
            "state": None if message.get("state", "complete") == "complete" else message["state"],
        }
    )
    if ours and not envelope.keys() - {"timestamp"}:
        # Written by to_pydantic_ai and unchanged: the request stands for agentmsg messages, whose timestamps the
        # parts hold. Anything else on it is kept (stashed) like any request's fields.
        envelope = {}
    elif ours:
        envelope["metadata"] = message["metadata"]  # with the agentmsg ids, so they come back too
    keep = not ours or bool(envelope)
    unnamed = {i for i in ours.get("unnamed", []) if isinstance(i, str)}
    out: list[AgentMessage] = []
    parts = message.get("parts", [])
    for j, part in enumerate(parts):
        own_id = ids[j] if j < len(ids) else None
        common = {"id": own_id or _derived_id(message, j), "timestamp": _when(part.get("timestamp"))}
        # Always on the first part, even when empty: it marks the request as read from pydantic-ai.
        stash = envelope if j == 0 and keep else None
        read = _read_request_part(part, common, stash, unnamed, call_index)
        if own_id and out and out[-1].id == own_id:
            # Parts of one agentmsg message (a tool message's results, a user message's text and results).
            out[-1] = _joined(out[-1], read)
        else:
            out.append(read)
    if not parts and keep:
        out.append(UserMessage([_block("model_request", envelope)], id=_derived_id(message, 0)))
    return out


def _joined(first: AgentMessage, second: AgentMessage) -> AgentMessage:
    blocks: list[Any] = [*first.contents, *second.contents]
    if isinstance(first, ToolMessage) and isinstance(second, ToolMessage):
        return ToolMessage(blocks, id=first.id, timestamp=first.datetime)
    return UserMessage(blocks, id=first.id, timestamp=first.datetime)


def _block(kind: str, value: Mapping[str, Any]) -> ProviderContent:
    return ProviderContent(PROVIDER, kind, _compact(value))


def _read_request_part(
    part: Mapping[str, Any],
    common: dict[str, Any],
    envelope: dict[str, Any] | None,
    unnamed: set[str],
    call_index: Mapping[str, int],
) -> AgentMessage:
    kind = part.get("part_kind")
    request_block = [_block("model_request", envelope)] if envelope is not None else []
    if kind == "system-prompt":
        extra = _set({k: part.get(k) for k in ("dynamic_ref", "context_id", "metadata")})
        if part.get("scope", "conversation") != "conversation":
            extra["scope"] = part["scope"]
        blocks: list[Any] = [TextContent(part["content"])]
        if extra:
            blocks.append(_block("system-prompt", extra))
        return SystemMessage([*blocks, *request_block], **common)
    if kind == "user-prompt":
        content = part["content"]
        if isinstance(content, str):
            items: list[Any] = [TextContent(content)]
        else:
            items = [_read_item(item) for item in content]
            if len(content) == 1 and isinstance(content[0], str):
                items.append(_block("user-prompt", {"list": True}))
        return UserMessage([*items, *request_block], **common)
    if kind == "tool-return" or (kind == "retry-prompt" and part.get("tool_name")):
        return ToolMessage([_read_tool_return(part, envelope, unnamed, call_index)], **common)
    # Retry prompts without a tool, retry feedback, instruction and delta parts: the text the model sees, if any,
    # and the part verbatim.
    shown = _shown_text(part)
    text = [TextContent(shown)] if shown else []
    return UserMessage([*text, _block("request-part", part), *request_block], **common)


def _shown_text(part: Mapping[str, Any]) -> str:
    """What the model is shown for a request part agentmsg has no kind for (pydantic-ai's own wording)."""
    try:
        obj = _PART_ADAPTER.validate_python(part)
    except pydantic.ValidationError:
        return ""
    shown = getattr(obj, "model_response", None)
    return str(shown()) if callable(shown) else ""


def _read_tool_return(
    part: Mapping[str, Any], envelope: dict[str, Any] | None, unnamed: set[str], call_index: Mapping[str, int]
) -> ToolResultContent:
    stash: dict[str, Any] = {}
    if envelope is not None:
        stash["request"] = envelope
    content = part.get("content")
    outcome = part.get("outcome", "success")
    if part["part_kind"] == "retry-prompt":
        stash["part"] = dict(part)
        text: str | list[Any] = _shown_text(part)
        is_error = True
    else:
        for key in ("tool_kind", "retry"):
            if part.get(key) is not None:
                stash[key] = part[key]
        if outcome not in ("success", "failed"):
            stash["outcome"] = outcome
        is_error = outcome != "success"
        if isinstance(content, str):
            text = content
        elif isinstance(content, list) and content and all(_typed_item(item) for item in content):
            text = [_read_item(item) for item in content]
        else:
            stash["content"] = content
            text = _compact(content)
    metadata = part.get("metadata")
    if metadata is not None:
        # verbatim in the stash too: agentmsg's metadata (a protobuf Struct) keeps neither key order nor int types
        stash["metadata"] = metadata
    merged = dict(metadata) if isinstance(metadata, dict) else {}
    if stash:
        merged[STASH_KEY] = _compact(stash)
    return ToolResultContent(
        part["tool_call_id"],
        text,
        is_error=is_error,
        name="" if part["tool_call_id"] in unnamed else part.get("tool_name") or "",
        metadata=merged or None,
        index=call_index.get(part["tool_call_id"], 0),
    )


def _typed_item(item: Any) -> bool:
    """A user content item agentmsg holds typed (text, image, audio, document)."""
    if isinstance(item, str):
        return True
    if not isinstance(item, Mapping):
        return False
    kind = item.get("kind")
    if kind == "text-content":
        return item.get("metadata") is None
    if kind not in ("image-url", "audio-url", "document-url", "binary"):
        return False
    if item.get("force_download") or _extra_vendor(item):
        return False
    if kind == "binary" and item.get("media_type", "").startswith("video/"):
        return False
    return kind != "document-url" or bool(item.get("media_type"))


def _extra_vendor(item: Mapping[str, Any]) -> bool:
    vendor = item.get("vendor_metadata")
    if not vendor:
        return False
    is_image = item.get("kind") == "image-url" or item.get("media_type", "").startswith("image/")
    return not (is_image and set(vendor) == {"detail"} and vendor["detail"] in ("low", "high", "auto"))


def _read_item(item: Any) -> ContentBase:
    if isinstance(item, str):
        return TextContent(item)
    if not _typed_item(item) or _identifier_given(item):
        return ProviderContent(PROVIDER, str(item.get("kind", "unknown")), _compact(item))
    kind = item["kind"]
    if kind == "text-content":
        return TextContent(item["content"])
    media_type = item.get("media_type") or None
    detail = (item.get("vendor_metadata") or {}).get("detail")
    if kind == "image-url":
        return ImageContent.from_url(item["url"], media_type=media_type, detail=detail)
    if kind == "audio-url":
        return AudioContent.from_url(item["url"], media_type=media_type)
    if kind == "document-url":
        return DocumentContent.from_url(item["url"], media_type=media_type)
    data = base64.b64decode(item["data"])
    if media_type and media_type.startswith("image/"):
        return ImageContent(data, media_type=media_type, detail=detail)
    if media_type and media_type.startswith("audio/"):
        return AudioContent(data, media_type=media_type)
    return DocumentContent(data, media_type=media_type)


def _identifier_given(item: Mapping[str, Any]) -> bool:
    """An identifier other than the one pydantic-ai derives from the item (which a typed block gives back)."""
    identifier = item.get("identifier")
    if identifier is None:
        return False
    probe = {k: v for k, v in item.items() if k != "identifier"}
    try:
        derived = _ITEM_ADAPTER.dump_python(_ITEM_ADAPTER.validate_python(probe), mode="json").get("identifier")
    except pydantic.ValidationError:
        return True
    return bool(derived != identifier)


_BYTES_AS_BASE64: Final = pydantic.ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
_ITEM_ADAPTER: Final[pydantic.TypeAdapter[Any]] = pydantic.TypeAdapter(UserContent, config=_BYTES_AS_BASE64)
_PART_ADAPTER: Final[pydantic.TypeAdapter[Any]] = pydantic.TypeAdapter(ModelRequestPart, config=_BYTES_AS_BASE64)


def _read_response(message: Mapping[str, Any]) -> AssistantMessage:
    ours, metadata = _agentmsg_stash(message)
    envelope = {k: v for k, v in message.items() if k not in _RESPONSE_TYPED and v is not None}
    if metadata is None:
        envelope.pop("metadata", None)
    else:
        envelope["metadata"] = metadata
    if envelope.get("state") == "complete":
        del envelope["state"]
    provider = message.get("provider_name") or next(
        (p["provider_name"] for p in message["parts"] if p.get("provider_name")), None
    )
    agent_provider, api = _PROVIDERS.get(provider, (provider, "")) if provider else ("", "")
    if isinstance(ours.get("api"), str):
        api = ours["api"]
    provenance = Provenance(
        agent_provider, api, message.get("model_name") or "", message.get("provider_response_id") or ""
    )
    if not any((agent_provider, api, provenance.model, provenance.response_id)):
        provenance = None  # type: ignore[assignment]
    back = _provider_back(provenance)
    if back != message.get("provider_name"):
        envelope["provider_name"] = message.get("provider_name")
    blocks: list[Any] = []
    stashed: list[dict[str, Any] | None] = []
    asking = ours.get("requires_approval")
    asking = {i for i in asking if isinstance(i, str)} if isinstance(asking, list) else set()
    placed = ours.get("tool_call_index")
    placed = (
        {k: v for k, v in placed.items() if isinstance(k, str) and type(v) is int and 0 < v <= _INT32_MAX}
        if isinstance(placed, Mapping)
        else {}
    )
    for part in message["parts"]:
        block, rest = _read_response_part(part)
        if isinstance(block, ToolCallContent) and (block.id in asking or block.id in placed):
            pb = type(block.to_proto())()
            pb.CopyFrom(block.to_proto())
            pb.tool_call.requires_approval = block.id in asking
            pb.tool_call.index = placed.get(block.id, 0)
            block = ToolCallContent.from_proto(pb)
        implied = back if _names_provider(block) else None
        if rest or block.__class__ is not ProviderContent:
            if part.get("provider_name") != implied:
                rest["provider_name"] = part.get("provider_name")
            else:
                rest.pop("provider_name", None)
        blocks.append(block)
        stashed.append(rest or None)
    usage, usage_rest = _read_usage(message.get("usage") or {})
    finish = message.get("finish_reason")
    stop = _FINISH.get(finish) if finish else None
    if isinstance(ours.get("stop_reason"), str):
        stop = StopReason(ours["stop_reason"])
    if not blocks and not ours.get("error") and stop not in (StopReason.LENGTH, StopReason.CONTENT_FILTER):
        blocks.append(TextContent(""))
        stashed.append({"$empty": True})
    stash = _set({"response": envelope or None, "usage": usage_rest or None})
    if any(stashed):
        stash["parts"] = stashed
    return AssistantMessage(
        blocks,
        usage=usage,
        stop_reason=stop,
        stop_reason_raw=str(ours.get("stop_reason_raw", "")),
        error=str(ours.get("error", "")),
        provenance=provenance,
        provider_extra=_block("model_response", stash) if stash else None,
        id=str(ours["id"]) if isinstance(ours.get("id"), str) else _response_id(message),
        timestamp=_when(message.get("timestamp")),
    )


def _names_provider(block: ContentBase) -> bool:
    """Blocks whose part gets the response's provider as ``provider_name`` (signed reasoning, hosted tools)."""
    if isinstance(block, ThinkingContent):
        return bool(block.signature)
    return isinstance(block, (RedactedThinkingContent, HostedToolCallContent, HostedToolResultContent))


def _provider_back(provenance: Provenance | None) -> str | None:
    if provenance is None or not provenance.provider:
        return None
    return _BACK.get(provenance.provider, provenance.provider)


def _drop(part: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in keys and k != "part_kind" and v is not None}


def _read_response_part(part: Mapping[str, Any]) -> tuple[ContentBase, dict[str, Any]]:
    kind = part.get("part_kind")
    if kind == "text":
        return TextContent(part["content"]), _drop(part, "content")
    if kind == "thinking":
        if part.get("id") == "redacted_thinking" and part.get("signature") and not part.get("content"):
            return RedactedThinkingContent(part["signature"]), _drop(part, "content", "signature", "id")
        return ThinkingContent(part["content"], signature=part.get("signature") or ""), _drop(
            part, "content", "signature"
        )
    if kind in ("tool-call", "builtin-tool-call"):
        args = part.get("args")
        rest = _drop(part, "args", "tool_name", "tool_call_id")
        if args is None or args == "":
            rest["$args"] = args
            text = "{}"
        elif isinstance(args, str):
            text = args
        else:
            rest["$args"] = "object"
            text = _compact(args)
        if kind == "tool-call":
            return ToolCallContent(part["tool_call_id"], part["tool_name"], arguments=text), rest
        name = part["tool_name"]
        return HostedToolCallContent(part["tool_call_id"], name, text, kind=_HOSTED_KINDS.get(name)), rest
    if kind == "builtin-tool-return":
        content = part.get("content")
        rest = _drop(part, "content", "tool_name", "tool_call_id")
        if not isinstance(content, str):
            rest["$content"] = content
            content = _compact(content)
        name = part["tool_name"]
        outcome = part.get("outcome", "success")
        return HostedToolResultContent(
            part["tool_call_id"], content, name=name, kind=_HOSTED_KINDS.get(name), is_error=outcome == "failed"
        ), rest
    return ProviderContent(PROVIDER, str(kind), _compact(part)), {}


def _read_usage(usage: Mapping[str, Any]) -> tuple[Usage | None, dict[str, Any]]:
    rest = {k: v for k, v in usage.items() if k not in _USAGE_TYPED and v not in (0, 0.0, None, {})}
    counts = {k: int(usage.get(k) or 0) for k in _USAGE_TYPED}
    cached = counts["cache_read_tokens"] + counts["cache_write_tokens"]
    if not any(counts.values()) and not rest:
        return None, {}
    if counts["input_tokens"] < cached:
        rest["input_tokens"] = counts["input_tokens"]
    cost = usage.get("cost")
    # pydantic-ai has no unknown counts: input and output are always reported, the parts of them when not 0.
    return Usage(
        input_tokens=max(counts["input_tokens"] - cached, 0),
        output_tokens=counts["output_tokens"],
        cache_read_tokens=counts["cache_read_tokens"] or None,
        cache_write_tokens=counts["cache_write_tokens"] or None,
        reasoning_tokens=counts["output_reasoning_tokens"] or None,
        cost=UsageCost(total=float(Decimal(str(cost)))) if cost is not None else None,
        cache_write_1h_tokens=counts["cache_write_1h_tokens"] or None,
    ), rest


# --- agentmsg -> pydantic-ai ------------------------------------------------------------


def to_pydantic_ai(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
) -> list[ModelMessage]:
    """Agentmsg messages as a pydantic-ai history (``ModelRequest`` / ``ModelResponse`` objects).

    Consecutive system, user and tool messages make one ``ModelRequest`` (a message holding a stashed request
    starts a new one); each assistant message is a ``ModelResponse``. What pydantic-ai cannot hold is reported
    (``report=``), raised (``strict=True``) or warned about.
    """
    reporter = Reporter(TARGET, report, strict=strict)
    writer = _Writer(reporter)
    for path, message, _projected in llm_messages(messages, session_messages):
        writer.add(path, message)
    reporter.finish()
    try:
        return ModelMessagesTypeAdapter.validate_python(writer.finish())
    except pydantic.ValidationError as exc:
        raise _pydantic_errors(exc, "pydantic-ai history written") from None


class _Writer:
    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.out: list[dict[str, Any]] = []
        self.request: dict[str, Any] | None = None
        self.ids: list[str] = []
        self.native = False  # the open request holds agentmsg messages not read from pydantic-ai
        self.unnamed: list[str] = []  # results with no tool name of their own, named from their call
        self.tool_names: dict[str, str] = {}
        self.call_index: dict[str, int] = {}  # each call's index, which reading gives the result answering it
        self.denied: set[str] = set()  # calls a decision in the history denied: their results are outcome "denied"

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    # -- requests

    def _close(self) -> None:
        if self.request is not None:
            if self.native:
                metadata = dict(self.request.get("metadata") or {})
                metadata[AGENTMSG_KEY] = {"ids": self.ids, **({"unnamed": self.unnamed} if self.unnamed else {})}
                self.request["metadata"] = metadata
            self.out.append(self.request)
        self.request, self.ids, self.native, self.unnamed = None, [], False, []

    def _open(self, envelope: Mapping[str, Any] | None, message: BaseMessage) -> dict[str, Any]:
        if envelope is not None or self.request is None:
            self._close()
            self.request = {
                "kind": "request",
                "parts": [],
                **(envelope if envelope is not None else {"timestamp": _iso(message)}),
            }
            self.native = envelope is None
        return self.request

    def add(self, path: str, message: AgentMessage) -> None:
        if message.name:
            self.loss(f"{path}.name", "the message name", "pydantic-ai messages have no name")
        if message.parent_id:
            self.loss(f"{path}.parent_id", "the parent id", "a pydantic-ai history is a list")
        if isinstance(message, AssistantMessage):
            self._close()
            self.out.append(self._response(path, message))
            return
        if isinstance(message, UserMessage) and all(isinstance(b, ToolApprovalContent) for b in message.contents):
            self._user_parts(path, message, _iso(message))  # decisions alone: no request part, no request
            return
        envelope = _envelope_of(message)
        request = self._open(envelope, message)
        part = self._request_part(path, message)
        request["parts"].extend(part)
        self.ids.extend(message.id for _ in part)

    def finish(self) -> list[dict[str, Any]]:
        self._close()
        return self.out

    def _request_part(self, path: str, message: AgentMessage) -> list[dict[str, Any]]:
        stamp = _iso(message)
        if isinstance(message, SystemMessage):
            part: dict[str, Any] = {"part_kind": "system-prompt", "content": "", "timestamp": stamp}
            texts = []
            for j, block in enumerate(message.contents):
                if isinstance(block, TextContent):
                    texts.append(block.content)
                    self._text_extras(f"{path}.contents[{j}]", block)
                elif isinstance(block, ProviderContent) and block.provider == PROVIDER:
                    if block.block_type == "system-prompt":
                        part.update(block.block())
                elif isinstance(block, ProviderContent):
                    self.loss(f"{path}.contents[{j}]", f"a {block.provider} block", "not pydantic-ai input")
            part["content"] = "".join(texts)
            return [part]
        if isinstance(message, ToolMessage):
            return [self._tool_return(f"{path}.contents[{j}]", r, stamp) for j, r in enumerate(message.results())]
        assert isinstance(message, UserMessage)
        return self._user_parts(path, message, stamp)

    def _user_parts(self, path: str, message: UserMessage, stamp: str) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        items: list[Any] = []
        as_list = False
        verbatim: dict[str, Any] | None = None

        def flush() -> None:
            nonlocal items
            if items:
                only_text = len(items) == 1 and isinstance(items[0], str) and not as_list
                parts.append(
                    {"part_kind": "user-prompt", "content": items[0] if only_text else items, "timestamp": stamp}
                )
            items = []

        for j, block in enumerate(message.contents):
            at = f"{path}.contents[{j}]"
            if isinstance(block, ToolResultContent):
                flush()
                parts.append(self._tool_return(at, block, stamp))
            elif isinstance(block, ProviderContent) and block.provider == PROVIDER:
                if block.block_type == "request-part":
                    verbatim = block.block()
                elif block.block_type == "user-prompt":
                    as_list = bool(block.block().get("list"))
                elif block.block_type != "model_request":
                    items.append(block.block())
            elif isinstance(block, TextContent):
                self._text_extras(at, block)
                items.append(block.content)
            elif isinstance(block, (ImageContent, AudioContent, DocumentContent)):
                for piece_path, piece in split_media(block, at, self.reporter):
                    item = self._media_item(piece_path, piece)
                    if item is not None:
                        items.append(item)
            elif isinstance(block, ProviderContent):
                self.loss(at, f"a {block.provider} block", "not pydantic-ai input")
            elif isinstance(block, ToolApprovalContent):
                # pydantic-ai's decisions (ToolApproved / ToolDenied) are a run's input, not history; what history
                # keeps of one is the denied call's return, outcome "denied"
                if not block.approved:
                    self.denied.add(block.call_id)
                self.loss(at, "a ToolApprovalContent", "pydantic-ai's history has no decision, only a denial's outcome")
            else:
                self.loss(at, f"a {type(block).__name__}", "a pydantic-ai user prompt has no place for it")
        if verbatim is not None:
            return [verbatim]
        flush()
        return parts

    def _text_extras(self, at: str, block: TextContent) -> None:
        if block.signature:
            self.loss(f"{at}.signature", "a text signature", "pydantic-ai's request parts have no signature")
        if block.citations:
            self.loss(f"{at}.citations", "citations", "pydantic-ai's request parts have no citations")

    def _media_item(self, at: str, block: ImageContent | AudioContent | DocumentContent) -> dict[str, Any] | None:
        kind = (
            "image" if isinstance(block, ImageContent) else "audio" if isinstance(block, AudioContent) else "document"
        )
        item: dict[str, Any]
        if block.url:
            item = {"kind": f"{kind}-url", "url": block.url}
            if block.media_type:
                item["media_type"] = block.media_type
        elif block.data is not None:
            item = {"kind": "binary", "data": base64.b64encode(block.data).decode(), "media_type": block.media_type}
        else:
            self.loss(at, f"a {kind} by file id", "pydantic-ai's UploadedFile needs the provider it was uploaded to")
            return None
        if isinstance(block, ImageContent) and block.detail is not None:
            if block.detail.value in ("low", "high", "auto"):
                item["vendor_metadata"] = {"detail": block.detail.value}
            else:
                self.loss(
                    f"{at}.detail", f"image detail {block.detail.value!r}", "pydantic-ai's models take low/high/auto"
                )
        if isinstance(block, DocumentContent) and (block.filename or block.title):
            self.loss(at, "the document's file name and title", "pydantic-ai's file items have neither")
        return item

    def _tool_return(self, at: str, result: ToolResultContent, stamp: str) -> dict[str, Any]:
        metadata = dict(result.metadata)
        stash = _tool_stash(metadata.pop(STASH_KEY, None))
        if isinstance(stash.get("part"), dict):
            return dict(stash["part"])
        name = result.name or self.tool_names.get(result.id, "")
        if name and not result.name:
            self.unnamed.append(result.id)
        if not name:
            self.loss(f"{at}.name", "the tool name", "the result's call is not in the history and it names no tool")
        if result.terminate or result.terminate_message:
            self.loss(f"{at}.terminate", "the terminate hint", "pydantic-ai's tool return has no such field")
        index = self.call_index.get(result.id, 0)
        if result.index != index:
            self.loss(
                f"{at}.index",
                f"the result's index {result.index}",
                f"pydantic-ai's ToolReturnPart has no index; reading gives its call's ({index})",
            )
        content: Any
        if "content" in stash:
            content = stash["content"]
        elif all(isinstance(b, TextContent) for b in result.blocks):
            content = result.text
        else:
            content = []
            for k, block in enumerate(result.blocks):
                if isinstance(block, TextContent):
                    content.append(block.content)
                elif isinstance(block, (ImageContent, AudioContent, DocumentContent)):
                    for piece_path, piece in split_media(block, f"{at}.content[{k}]", self.reporter):
                        item = self._media_item(piece_path, piece)
                        if item is not None:
                            content.append(item)
                else:
                    self.loss(f"{at}.content[{k}]", f"a {type(block).__name__}", "not a pydantic-ai tool return item")
        part: dict[str, Any] = {
            "part_kind": "tool-return",
            "tool_name": name,
            "content": content,
            "tool_call_id": result.id,
            "timestamp": stamp,
            "outcome": stash.get(
                "outcome", "denied" if result.id in self.denied else "failed" if result.is_error else "success"
            ),
        }
        for key in ("tool_kind", "retry"):
            if key in stash:
                part[key] = stash[key]
        held = stash.get("metadata")
        if "metadata" in stash and (not isinstance(held, dict) or held == metadata):
            part["metadata"] = held
        elif metadata:
            part["metadata"] = metadata
        return part

    # -- responses

    def _response(self, path: str, message: AssistantMessage) -> dict[str, Any]:
        stash: dict[str, Any] = {}
        extra = message.provider_extra
        if extra is not None and extra.provider == PROVIDER and extra.block_type == "model_response":
            stash = extra.block()
        elif extra is not None:
            self.loss(f"{path}.provider_extra", f"{extra.provider} response keys", "pydantic-ai has no place for them")
        provenance = message.provenance
        part_provider = _provider_back(provenance)
        parts_stash: list[Any] = stash.get("parts") or []
        parts: list[dict[str, Any]] = []
        for j, block in enumerate(message.contents):
            rest = parts_stash[j] if j < len(parts_stash) and isinstance(parts_stash[j], dict) else None
            part = self._response_part(f"{path}.contents[{j}]", block, rest, part_provider)
            if part is not None:
                parts.append(part)
        response: dict[str, Any] = {
            "kind": "response",
            "parts": parts,
            "timestamp": _iso(message),
            "model_name": provenance.model or None if provenance else None,
            "provider_name": part_provider,
            "provider_response_id": provenance.response_id or None if provenance else None,
            **(stash.get("response") or {}),
        }
        ours: dict[str, Any] = {}
        if message.id != _response_id(response):
            ours["id"] = message.id
        if (
            not stash
            and provenance is not None
            and provenance.api
            and _PROVIDERS.get(part_provider or "", ("", ""))[1] != provenance.api
        ):
            ours["api"] = provenance.api
        if message.error:
            ours["error"] = message.error
        if message.stop_reason_raw:
            ours["stop_reason_raw"] = message.stop_reason_raw
        asking = [b.id for b in message.contents if isinstance(b, ToolCallContent) and b.requires_approval]
        if asking:
            ours["requires_approval"] = asking  # a ToolCallPart has no such field
        placed = {b.id: b.index for b in message.contents if isinstance(b, ToolCallContent) and b.index}
        if placed:
            ours["tool_call_index"] = placed  # nor an index (reading gives 0 to a call not named here)
        stop = message.stop_reason
        if stop is not None:
            if stop in _FINISH_BACK:
                response["finish_reason"] = _FINISH_BACK[stop]
            else:
                ours["stop_reason"] = stop.value
        if ours:
            response["metadata"] = {**(response.get("metadata") or {}), AGENTMSG_KEY: ours}
        if message.stop_sequence:
            self.loss(f"{path}.stop_sequence", "the stop sequence", "pydantic-ai's response has no stop sequence")
        response["usage"] = self._usage(path, message.usage, stash.get("usage") or {})
        for part in parts:
            if part["part_kind"] == "tool-call":
                self.tool_names[part["tool_call_id"]] = part["tool_name"]
        self.call_index.update((b.id, b.index) for b in message.contents if isinstance(b, ToolCallContent))
        return response

    def _usage(self, path: str, usage: Usage | None, rest: Mapping[str, Any]) -> dict[str, Any]:
        if usage is None:
            return dict(rest)
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        out: dict[str, Any] = {
            "input_tokens": usage.input_tokens + cached,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "cache_write_1h_tokens": usage.cache_write_1h_tokens,
            "output_reasoning_tokens": usage.reasoning_tokens,
        }
        if "cost" in usage.reported and "cost" not in rest:
            out["cost"] = str(Decimal(repr(usage.cost.total)))
        out.update(rest)
        for key in ("cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "reasoning_tokens"):
            if key in usage.reported and not getattr(usage, key):
                self.loss(f"{path}.usage.{key}", f"a reported 0 of {key}", "pydantic-ai's 0 also means not reported")
        for key in ("input_tokens", "output_tokens"):
            if key not in usage.reported:
                self.loss(f"{path}.usage.{key}", f"unknown {key}", "pydantic-ai writes an unknown count as 0")
        if "hosted_tool_requests" in usage.reported:
            self.loss(
                f"{path}.usage.hosted_tool_requests", "hosted tool request counts", "pydantic-ai has no such counts"
            )
        return out

    def _response_part(
        self, at: str, block: ContentBase, rest: dict[str, Any] | None, provider: str | None
    ) -> dict[str, Any] | None:
        if rest is not None and rest.get("$empty"):
            return None
        part: dict[str, Any]
        if isinstance(block, TextContent):
            part = {"part_kind": "text", "content": block.content}
            if rest is None:
                if block.signature:
                    self.loss(f"{at}.signature", "a text signature", "pydantic-ai's TextPart has none")
                if block.citations:
                    self.loss(f"{at}.citations", "citations", "written only for text read from pydantic-ai")
                if block.logprobs:
                    self.loss(f"{at}.logprobs", "logprobs", "pydantic-ai's TextPart has none")
            return _merge(part, rest, "text")
        if isinstance(block, ThinkingContent):
            part = {"part_kind": "thinking", "content": block.content, "signature": block.signature or None}
            if block.signature:
                part["provider_name"] = provider
            return _merge(part, rest, "thinking")
        if isinstance(block, RedactedThinkingContent):
            part = {
                "part_kind": "thinking",
                "content": "",
                "id": "redacted_thinking",
                "signature": block.data,
                "provider_name": provider,
            }
            return _merge(part, rest, "thinking")
        if isinstance(block, ToolCallContent):
            if rest is None:
                self._call_extras(at, block)
            return _merge(
                {
                    "part_kind": "tool-call",
                    "tool_name": block.name,
                    "args": _args(block.arguments, rest),
                    "tool_call_id": block.id,
                },
                rest,
                "tool-call",
            )
        if isinstance(block, HostedToolCallContent):
            return _merge(
                {
                    "part_kind": "builtin-tool-call",
                    "tool_name": block.name,
                    "args": _args(block.input, rest),
                    "tool_call_id": block.id,
                    "provider_name": provider,
                },
                rest,
                "builtin-tool-call",
            )
        if isinstance(block, HostedToolResultContent):
            if rest is not None and "$content" in rest:
                content: Any = rest["$content"]
            else:
                content = block.text or block.body or ""
                if rest is None and (block.search_results or block.code_execution or block.web_fetch):
                    self.loss(at, "the typed result body", "pydantic-ai keeps a hosted tool's return as its content")
            part = {
                "part_kind": "builtin-tool-return",
                "tool_name": block.name,
                "content": content,
                "tool_call_id": block.call_id,
                "provider_name": provider,
            }
            if block.is_error:
                part["outcome"] = "failed"
            return _merge(part, rest, "builtin-tool-return")
        if isinstance(block, ProviderContent) and block.provider == PROVIDER:
            return block.block()
        what = f"a {block.provider} block" if isinstance(block, ProviderContent) else f"a {type(block).__name__}"
        self.loss(at, what, "pydantic-ai's response has no part for it")
        return None

    def _call_extras(self, at: str, block: ToolCallContent) -> None:
        if block.signature:
            self.loss(f"{at}.signature", "a tool-call signature", "pydantic-ai's ToolCallPart has none")
        if block.kind is not None:
            self.loss(f"{at}.kind", "the tool kind", "pydantic-ai's tool kinds are its own")
        if block.server_name:
            self.loss(f"{at}.server_name", "the server name", "pydantic-ai's ToolCallPart has none")
        if block.metadata:
            self.loss(f"{at}.metadata", "tool-call metadata", "pydantic-ai's ToolCallPart has none")


def _tool_stash(value: Any) -> dict[str, Any]:
    """The stash a tool result's metadata holds (JSON text, so key order and numbers come back as they were)."""
    if not isinstance(value, str):
        return {}
    try:
        stash = json.loads(value)
    except ValueError:
        return {}
    return stash if isinstance(stash, dict) else {}


def _merge(part: dict[str, Any], rest: Mapping[str, Any] | None, kind: str) -> dict[str, Any]:
    """The part from the typed block, with its stashed fields when the stash is of the same kind."""
    if rest is None:
        return part
    return {**part, **{k: v for k, v in rest.items() if not k.startswith("$")}, "part_kind": kind}


def _args(text: str, rest: Mapping[str, Any] | None) -> Any:
    if rest is not None and "$args" in rest:
        form = rest["$args"]
        if form == "object":
            try:
                return json.loads(text)
            except ValueError:
                return text
        return form if text == "{}" else text
    return text


def _envelope_of(message: AgentMessage) -> dict[str, Any] | None:
    """The stashed request fields a message read from pydantic-ai carries on its request's first part."""
    for block in message.contents:
        if isinstance(block, ProviderContent) and block.provider == PROVIDER and block.block_type == "model_request":
            return block.block()
        if isinstance(block, ToolResultContent):
            stash = _tool_stash(block.metadata.get(STASH_KEY))
            if isinstance(stash.get("request"), dict):
                return dict(stash["request"])
            return None
    return None


# --- an agent's history in an agentmsg session ----------------------------------------------


class AgentHistory:
    """A pydantic-ai agent's history kept in an agentmsg session.

    ``store`` is a local :class:`~agentmsg.sessions.Session` or a service
    :class:`~agentmsg.service.client.Client` (with ``session_id``). :meth:`load` gives the ``message_history`` for
    the next run (the session's context, converted), :meth:`save` appends a run's messages
    (``result.new_messages()``; messages already in the session are skipped, so saving ``all_messages()`` is
    safe too)::

        history = AgentHistory(client, "chat-1")
        result = agent.run_sync("next question", message_history=history.load())
        history.save(result.new_messages())
    """

    def __init__(self, store: Session | Client, session_id: str = "") -> None:
        if isinstance(store, Client) and not session_id:
            raise ValidationError.single("session_id", "string.min_len", "a service session needs its id")
        if not isinstance(store, (Session, Client)):
            raise ValidationError.single("store", "type", f"expected a Session or a Client, got {type(store).__name__}")
        self.store = store
        self.session_id = session_id or getattr(store, "session_id", "")
        self.report = ConversionReport()
        """What the last :meth:`load` left out (a new report each call)."""

    def messages(self) -> list[AgentMessage]:
        """The session's context as agentmsg messages."""
        if isinstance(self.store, Session):
            return list(self.store.build_context())
        try:
            return self.store.build_context(self.session_id)
        except NotFoundError:  # nothing saved yet: a new conversation
            return []

    def load(self) -> list[ModelMessage]:
        """The session's context as a pydantic-ai history; what it leaves out is in :attr:`report`."""
        self.report = ConversionReport()
        return to_pydantic_ai(self.messages(), report=self.report)

    def save(self, messages: Sequence[Any]) -> list[AgentMessage]:
        """Append a run's messages (``ModelMessage`` objects or their JSON form); the messages appended."""
        converted = from_pydantic_ai(messages)
        if isinstance(self.store, Session):
            held = self.store
            fresh = [m for m in converted if m.id not in held]
            for message in fresh:
                held.append(message)
            return fresh
        known = {m.id for m in self.messages()}
        fresh = [m for m in converted if m.id not in known]
        if fresh:
            self.store.append_many(self.session_id, fresh)
        return fresh
