"""The seed-1 dict form: the shape of the seed's dataclasses as plain dicts.

The seed (a Python agent framework's message layer) stored messages as
``dataclasses.asdict`` output. This module reads and writes that shape, so
histories kept in it load into agentmsg and go back out unchanged::

    {"role": "user", "id": "...", "timestamp": 1700000000.123456,
     "contents": [{"type": "text", "content": "hi"},
                  {"type": "image", "images": ["<base64>"], "media_type": "image/png"}]}

Differences from the seed, each so that nothing is lost:

- binary data (images, audio) is base64 text, so the dict is JSON;
- keys the seed lacks are added only when they carry information:
  ``media_type``, ``detail``, ``file_id`` on media; ``context`` on documents; ``signature`` on text;
  ``arguments`` (the verbatim argument text, always written), ``index``,
  ``signature``, ``server_name`` on tool calls; ``name``, ``index``,
  ``terminate_message`` on tool results; ``name`` on messages;
  ``stop_reason_raw``, ``provenance``, ``reasoning_tokens``, ``total_tokens``
  on assistant messages; ``id`` on session-only messages;
- a tool result whose content is more than one text block (or not text) has
  ``content`` as a list of content dicts instead of a string;
- contract v1.1 additions the seed has no form for: ``citations`` and
  ``logprobs`` on text (lists of the citations' and tokens' ProtoJSON with
  proto field names), ``stop_sequence`` on assistant messages, the usage
  counts ``cache_write_5m_tokens``, ``cache_write_1h_tokens`` and
  ``hosted_tool_requests``, and the ``hosted_tool_call`` and
  ``hosted_tool_result`` blocks (their fields by proto name, written when
  set; typed bodies and ``original`` as ProtoJSON with proto field names;
  ``content`` as content dicts), and a tool call's ``provider_extra`` (the
  same form);
- unknown usage counts are left out (the seed wrote 0, which agentmsg keeps
  apart from unknown);
- ``timestamp`` is epoch seconds as a float, exact to the microsecond.

An ``image`` (``audio``) dict is one block of one or more images (clips),
as in the seed. Each item is a base64 string or a URL, or, for a provider
file id (which the seed has no form for), ``{"file_id": ...}``; a block of
several items writes their media types as ``media_types`` (one per item)
instead of ``media_type``. ``"file:"`` audio paths are refused: decoded data
never reads local files (use ``AudioContent.from_file``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from agentmsg import _media, _validation
from agentmsg.content import (
    AudioContent,
    CodeExecutionOutput,
    Content,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    ProviderContent,
    RedactedThinkingContent,
    SearchResult,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolKind,
    ToolResultContent,
    UnknownContent,
    WebFetchOutput,
)
from agentmsg.errors import DecodeError, MediaError, ValidationError, Violation, preview
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Provenance,
    ProviderState,
    SystemMessage,
    ToolMessage,
    UnknownMessage,
    UserMessage,
)
from agentmsg.usage import COST_FIELDS, TOKEN_FIELDS, Usage, UsageCost
from agentmsg.v1 import content_pb2

M = TypeVar("M", ImageContent, AudioContent)

__all__ = [
    "content_from_dict",
    "content_to_dict",
    "contents_from_dict",
    "message_from_dict",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
]


# --- export -----------------------------------------------------------------


def _timestamp(message: BaseMessage) -> float:
    ts = message.pb.timestamp
    return ts.seconds + ts.nanos / 1_000_000_000


def _media_dict(block: ImageContent | AudioContent, key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": block.type}
    if block.count > 1:
        items: list[Any] = []
        for piece in block.split():
            if piece.data is not None:
                items.append(base64.b64encode(piece.data).decode("ascii"))
            else:
                items.append(piece.url if piece.url is not None else {"file_id": piece.file_id})
        out[key] = items
        types = [piece.media_type for piece in block.split()]
        if any(types):
            out["media_types"] = types
        return out
    if block.data is not None:
        out[key] = [base64.b64encode(block.data).decode("ascii")]
    elif block.url is not None:
        out[key] = [block.url]
    else:
        out[key] = []
        out["file_id"] = block.file_id
    if block.media_type:
        out["media_type"] = block.media_type
    return out


def content_to_dict(block: Content) -> dict[str, Any]:
    """One content block as its seed-1 dict."""
    match block:
        case TextContent():
            out: dict[str, Any] = {"type": "text", "content": block.content}
            if block.signature:
                out["signature"] = block.signature
            text = block.pb.text
            if text.citations:
                out["citations"] = [_pb_dict(item) for item in text.citations]
            if text.logprobs:
                out["logprobs"] = [_pb_dict(item) for item in text.logprobs]
            return out
        case HostedToolCallContent():
            call = block.pb.hosted_tool_call
            out = {"type": "hosted_tool_call", "id": call.id, "name": call.name, "input": call.input}
            if block.kind is not None:
                out["kind"] = block.kind.value
            if block.status is not None:
                out["status"] = block.status.value
            for key in ("server", "status_raw", "signature"):
                if getattr(call, key):
                    out[key] = getattr(call, key)
            if call.HasField("original"):
                out["original"] = _pb_dict(call.original)
            return out
        case HostedToolResultContent():
            result = block.pb.hosted_tool_result
            out = {"type": "hosted_tool_result", "call_id": result.call_id, "is_error": result.is_error}
            if result.name:
                out["name"] = result.name
            if block.kind is not None:
                out["kind"] = block.kind.value
            if block.status is not None:
                out["status"] = block.status.value
            if result.status_raw:
                out["status_raw"] = result.status_raw
            if result.HasField("error"):
                out["error"] = {"code": result.error.code, "message": result.error.message}
            body = result.WhichOneof("body")
            if body is not None:
                out[body] = _pb_dict(getattr(result, body))
            if result.content:
                out["content"] = [content_to_dict(part) for part in block.blocks]
            if result.HasField("original"):
                out["original"] = _pb_dict(result.original)
            return out
        case ImageContent():
            out = _media_dict(block, "images")
            if block.detail is not None:
                out["detail"] = block.detail.value
            return out
        case AudioContent():
            return _media_dict(block, "audio")
        case DocumentContent():
            out = {"type": "document"}
            if block.data is not None:
                out["data"] = base64.b64encode(block.data).decode("ascii")
            elif block.url is not None:
                out["url"] = block.url
            else:
                out["file_id"] = block.file_id
            for key in ("media_type", "filename", "title", "context"):
                if getattr(block, key):
                    out[key] = getattr(block, key)
            return out
        case ThinkingContent():
            return {"type": "thinking", "content": block.content, "signature": block.signature}
        case RedactedThinkingContent():
            return {"type": "redacted_thinking", "data": block.data}
        case ToolCallContent():
            kind = block.kind
            out = {
                "type": "tool_call",
                "id": block.id,
                "name": block.name,
                "kind": None if kind is None or kind is ToolKind.UNKNOWN else kind.value,
                "arguments": block.arguments,
                "metadata": block.metadata,
            }
            if block.arguments_error is None:
                out["args"] = block.args
            for key, default in (("index", 0), ("signature", ""), ("server_name", "")):
                if getattr(block, key) != default:
                    out[key] = getattr(block, key)
            if block.pb.tool_call.HasField("provider_extra"):
                out["provider_extra"] = _pb_dict(block.pb.tool_call.provider_extra)
            return out
        case ToolResultContent():
            parts = block.blocks
            content: str | list[dict[str, Any]]
            # The seed's plain string holds no blocks ("") or one non-empty, unsigned text block.
            if not parts or (
                len(parts) == 1 and isinstance(parts[0], TextContent) and parts[0].content and not parts[0].signature
            ):
                content = block.text
            else:
                content = [content_to_dict(part) for part in parts]
            out = {
                "type": "tool_result",
                "id": block.id,
                "content": content,
                "is_error": block.is_error,
                "metadata": block.metadata,
                "terminate": block.terminate,
            }
            for key, default in (("name", ""), ("terminate_message", ""), ("index", 0)):
                if getattr(block, key) != default:
                    out[key] = getattr(block, key)
            return out
        case ProviderContent():
            return {"type": "provider", "provider": block.provider, "block_type": block.block_type, "json": block.json}
        case UnknownContent():
            return {"type": "unknown", "proto": base64.b64encode(block.to_bytes()).decode("ascii")}
    raise ValidationError.single("type", "type", f"not a content block: {type(block).__name__}")


def _pb_dict(pb: Message) -> dict[str, Any]:
    """A nested v1.1 message (citation, token logprob, hosted tool body) as ProtoJSON with proto field names."""
    return json_format.MessageToDict(pb, preserving_proto_field_name=True)


def _usage_dict(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {key: usage.known(key) for key in TOKEN_FIELDS if key in usage.reported}
    if usage.hosted_tool_requests:
        out["hosted_tool_requests"] = usage.hosted_tool_requests
    if "cost" in usage.reported:
        cost = usage.cost
        out["cost"] = {key: cost.known(key) for key in COST_FIELDS if key in cost.reported}
    return out


def message_to_dict(message: AgentMessage) -> dict[str, Any]:
    """One message as its seed-1 dict."""
    out: dict[str, Any] = {"role": message.role.value if message.role else "unknown"}
    match message:
        case SystemMessage() | UserMessage() | ToolMessage():
            out["contents"] = [content_to_dict(block) for block in message.contents]
        case AssistantMessage():
            out["contents"] = [content_to_dict(block) for block in message.contents]
            if message.usage is not None:
                out["usage"] = _usage_dict(message.usage)
            out["stop_reason"] = message.stop_reason.value if message.stop_reason else None
            out["error"] = message.error
            if message.stop_reason_raw:
                out["stop_reason_raw"] = message.stop_reason_raw
            if message.stop_sequence:
                out["stop_sequence"] = message.stop_sequence
            if message.provenance is not None:
                p = message.provenance
                out["provenance"] = {
                    "provider": p.provider,
                    "api": p.api,
                    "model": p.model,
                    "response_id": p.response_id,
                }
        case CustomMessage():
            out["custom_type"] = message.custom_type
            out["contents"] = [content_to_dict(block) for block in message.contents]
            out["details"] = message.details
            if message.to_model:
                out["to_model"] = True
        case BranchSummaryMessage():
            out["summary"] = message.summary
            out["from_id"] = message.from_id
        case CompactionSummaryMessage():
            out["summary"] = message.summary
            out["tokens_before"] = message.tokens_before
            if message.first_kept_id:
                out["first_kept_id"] = message.first_kept_id
            state = message.provider_state
            if state is not None:
                out["provider_state"] = {
                    "provider": state.provider,
                    "api": state.api,
                    "type": state.type,
                    "data": state.data,
                }
        case UnknownMessage():
            out["proto"] = base64.b64encode(message.to_bytes()).decode("ascii")
            return out
    out["id"] = message.id
    out["timestamp"] = _timestamp(message)
    if message.name:
        out["name"] = message.name
    if message.parent_id:
        out["parent_id"] = message.parent_id
    return out


def messages_to_dicts(messages: Iterable[AgentMessage]) -> list[dict[str, Any]]:
    """Messages as seed-1 dicts."""
    return [message_to_dict(message) for message in messages]


# --- import -----------------------------------------------------------------


class _PayloadError(ValidationError):
    """A ValidationError whose paths already point into the payload."""


@contextmanager
def _at(path: str) -> Iterator[None]:
    """Re-raise errors from the constructors with ``path`` in front of their fields."""
    try:
        yield
    except _PayloadError:
        raise
    except ValidationError as exc:
        raise _PayloadError([_prefixed(path, v) for v in exc.violations], "seed-1 dict") from None
    except (MediaError, DecodeError) as exc:
        rule = "media" if isinstance(exc, MediaError) else "decode"
        raise _PayloadError([Violation(path, rule, str(exc))], "seed-1 dict") from None


# A proto path inside a message body (`user.content[0].image`) names the dict key `contents`.
_BODY_CONTENT = re.compile(r"^(system|user|assistant|tool|custom)\.content")


def _prefixed(path: str, violation: Violation) -> Violation:
    field = _BODY_CONTENT.sub("contents", violation.field)
    if not field:
        return Violation(path, violation.rule_id, violation.message)
    sep = "" if field.startswith("[") else "."
    return Violation(f"{path}{sep}{field}" if path else field, violation.rule_id, violation.message)


def _fail(path: str, rule: str, message: str) -> ValidationError:
    return _PayloadError([Violation(path, rule, message)], "seed-1 dict")


def _get(data: Mapping[str, Any], key: str, types: type | tuple[type, ...], path: str, default: Any = None) -> Any:
    value = data.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, types) or (
        isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,))
    ):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise _fail(f"{path}.{key}", "type", f"expected {names}, got {type(value).__name__}")
    return value


def _require(data: Mapping[str, Any], key: str, types: type | tuple[type, ...], path: str) -> Any:
    if key not in data or data[key] is None:
        raise _fail(f"{path}.{key}", "required", "value is required")
    return _get(data, key, types, path)


def _str_source(item: str, kind: str) -> str:
    """Reject ``file:`` paths in decoded data; everything else the constructors classify."""
    if item.startswith("file:"):
        raise MediaError(
            f"{kind} 'file:' paths are not read from decoded data; use {kind.capitalize()}Content.from_file"
        )
    return item


def contents_from_dict(data: Mapping[str, Any], path: str = "") -> list[Content]:
    """The blocks one seed-1 content dict stands for (always one: kept a list for callers that extend)."""
    if not isinstance(data, Mapping):
        raise _fail(path, "type", f"expected a content dict, got {type(data).__name__}")
    kind = data.get("type")
    with _at(path):
        if kind == "text":
            block = TextContent(_get(data, "content", str, path, ""), signature=_get(data, "signature", str, path, ""))
            arm = block.pb.text
            for i, item in enumerate(_get(data, "citations", list, path, [])):
                _parse_pb(item, arm.citations.add(), _join(path, f"citations[{i}]"))
            for i, item in enumerate(_get(data, "logprobs", list, path, [])):
                _parse_pb(item, arm.logprobs.add(), _join(path, f"logprobs[{i}]"))
            return [block]
        if kind == "hosted_tool_call":
            return [_hosted_call_from_dict(data, path)]
        if kind == "hosted_tool_result":
            return [_hosted_result_from_dict(data, path)]
        if kind == "image":
            return _images_from_dict(data, path)
        if kind == "audio":
            return _audio_from_dict(data, path)
        if kind == "document":
            return [_document_from_dict(data, path)]
        if kind == "thinking":
            return [ThinkingContent(_get(data, "content", str, path, ""), _get(data, "signature", str, path, ""))]
        if kind == "redacted_thinking":
            return [RedactedThinkingContent(_require(data, "data", str, path))]
        if kind == "tool_call":
            return [_tool_call_from_dict(data, path)]
        if kind == "tool_result":
            return [_tool_result_from_dict(data, path)]
        if kind == "provider":
            return [
                ProviderContent(
                    _require(data, "provider", str, path),
                    _require(data, "block_type", str, path),
                    _require(data, "json", str, path),
                )
            ]
        if kind == "unknown":
            raw = _media.decode_base64(_require(data, "proto", str, path), "unknown content")
            return [UnknownContent.from_bytes(raw)]
    raise _fail(f"{path}.type", "enum", f"unknown content type {preview(kind)}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _parse_pb(data: Any, target: Message, path: str) -> None:
    """Fill ``target`` from its ProtoJSON dict (proto or JSON field names) and check the contract's rules."""
    if not isinstance(data, Mapping):
        raise _fail(path, "type", f"expected a dict, got {type(data).__name__}")
    try:
        json_format.ParseDict(dict(data), target)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise _fail(path, "json", f"not a valid {target.DESCRIPTOR.name}: {exc}") from None
    with _at(path):
        _validation.check(target)


def _original_from_dict(data: Mapping[str, Any], path: str, key: str = "original") -> ProviderContent | None:
    value = data.get(key)
    if value is None:
        return None
    target = content_pb2.Content()
    _parse_pb(value, target.provider, _join(path, key))
    return ProviderContent.from_proto(target)


def _hosted_call_from_dict(data: Mapping[str, Any], path: str) -> HostedToolCallContent:
    return HostedToolCallContent(
        _get(data, "id", str, path, ""),
        _get(data, "name", str, path, ""),
        _get(data, "input", str, path, ""),
        kind=_get(data, "kind", str, path),
        server=_get(data, "server", str, path, ""),
        status=_get(data, "status", str, path),
        status_raw=_get(data, "status_raw", str, path, ""),
        signature=_get(data, "signature", str, path, ""),
        original=_original_from_dict(data, path),
    )


def _hosted_result_from_dict(data: Mapping[str, Any], path: str) -> HostedToolResultContent:
    error = _get(data, "error", Mapping, path)
    body: dict[str, Any] = {}
    search = _get(data, "search_results", Mapping, path)
    if search is not None:
        target = content_pb2.SearchResults()
        _parse_pb(search, target, _join(path, "search_results"))
        body["search_results"] = [SearchResult.from_proto(item) for item in target.results]
        body["queries"] = list(target.queries)
    code = _get(data, "code_execution", Mapping, path)
    if code is not None:
        target_code = content_pb2.CodeExecutionOutput()
        _parse_pb(code, target_code, _join(path, "code_execution"))
        body["code_execution"] = CodeExecutionOutput.from_proto(target_code)
    fetch = _get(data, "web_fetch", Mapping, path)
    if fetch is not None:
        target_fetch = content_pb2.WebFetchOutput()
        _parse_pb(fetch, target_fetch, _join(path, "web_fetch"))
        body["web_fetch"] = WebFetchOutput.from_proto(target_fetch)
    content: list[Any] = []
    for i, item in enumerate(_get(data, "content", list, path, [])):
        content.extend(contents_from_dict(item, _join(path, f"content[{i}]")))
    return HostedToolResultContent(
        _get(data, "call_id", str, path, ""),
        content,
        name=_get(data, "name", str, path, ""),
        kind=_get(data, "kind", str, path),
        is_error=_get(data, "is_error", bool, path, False),
        error_code=None if error is None else _get(error, "code", str, _join(path, "error"), ""),
        error_message=None if error is None else _get(error, "message", str, _join(path, "error"), ""),
        status=_get(data, "status", str, path),
        status_raw=_get(data, "status_raw", str, path, ""),
        original=_original_from_dict(data, path),
        **body,
    )


def content_from_dict(data: Mapping[str, Any]) -> Content:
    """One block from its seed-1 dict."""
    blocks = contents_from_dict(data)
    if len(blocks) != 1:
        raise _fail("images", "count", f"the dict holds {len(blocks)} blocks; use contents_from_dict")
    return blocks[0]


def _media_items(data: Mapping[str, Any], key: str, path: str) -> tuple[list[Any], list[str | None]]:
    """A media dict's items and each one's media type (``media_types[i]``, else ``media_type``, else sniffed)."""
    media_type = _get(data, "media_type", str, path) or None
    items = _get(data, key, list, path, [])
    if not items:
        noun = "an image" if key == "images" else "a clip"
        raise _fail(f"{path}.{key}", "required", f"the dict needs at least {noun} in {key}")
    types = _get(data, "media_types", list, path)
    if types is None:
        return items, [media_type] * len(items)
    if len(types) != len(items) or not all(isinstance(t, str) for t in types):
        raise _fail(f"{path}.media_types", "type", f"expected {len(items)} strings, one for each item of {key}")
    return items, [t or None for t in types]


def _pieces(cls: type[M], data: Mapping[str, Any], key: str, path: str) -> list[M]:
    """The items of a media dict as one-item blocks of ``cls`` (the block's own detail comes after)."""
    items, types = _media_items(data, key, path)
    noun = "image" if key == "images" else "audio"
    pieces: list[M] = []
    for i, (item, media_type) in enumerate(zip(items, types, strict=True)):
        where = f"{path}.{key}[{i}]"
        with _at(where):
            if isinstance(item, Mapping):
                pieces.append(cls.from_file_id(_require(item, "file_id", str, where), media_type=media_type or ""))
            else:
                pieces.append(cls(_str_source(item, noun) if isinstance(item, str) else item, media_type=media_type))
    return pieces


def _images_from_dict(data: Mapping[str, Any], path: str) -> list[Content]:
    detail = _get(data, "detail", str, path)
    file_id = _get(data, "file_id", str, path)
    if file_id is not None:
        media_type = _get(data, "media_type", str, path) or ""
        return [ImageContent.from_file_id(file_id, media_type=media_type, detail=detail)]
    pieces = _pieces(ImageContent, data, "images", path)
    with _at(path):
        return [ImageContent(images=pieces, detail=detail)]


def _audio_from_dict(data: Mapping[str, Any], path: str) -> list[Content]:
    file_id = _get(data, "file_id", str, path)
    if file_id is not None:
        media_type = _get(data, "media_type", str, path) or ""
        return [_file_id_block(content_pb2.AudioContent(file_id=file_id, media_type=media_type), "audio")]
    pieces = _pieces(AudioContent, data, "audio", path)
    with _at(path):
        return [AudioContent(audio=pieces)]


def _file_id_block(arm: Any, field: str) -> Content:
    from agentmsg import _validation
    from agentmsg.content import content_from_proto

    pb = content_pb2.Content(**{field: arm})
    _validation.check(pb)
    return content_from_proto(pb)


def _document_from_dict(data: Mapping[str, Any], path: str) -> DocumentContent:
    media_type = _get(data, "media_type", str, path) or None
    filename = _get(data, "filename", str, path, "")
    title = _get(data, "title", str, path, "")
    context = _get(data, "context", str, path, "")
    if "file_id" in data:
        block = DocumentContent.from_file_id(
            _require(data, "file_id", str, path), media_type=media_type or "", filename=filename, title=title
        )
    elif "url" in data:
        block = DocumentContent.from_url(
            _require(data, "url", str, path), media_type=media_type, filename=filename, title=title
        )
    else:
        with _at(f"{path}.data"):
            raw = _media.decode_base64(_require(data, "data", str, path), "document")
        block = DocumentContent(raw, media_type=media_type, filename=filename, title=title)
    return block.with_context(context) if context else block


def _tool_call_from_dict(data: Mapping[str, Any], path: str) -> ToolCallContent:
    arguments = _get(data, "arguments", str, path)
    args = None if arguments is not None else _get(data, "args", Mapping, path, {})
    return ToolCallContent(
        _require(data, "id", str, path),
        _require(data, "name", str, path),
        args,
        arguments=arguments,
        kind=_get(data, "kind", str, path),
        index=_get(data, "index", int, path, 0),
        signature=_get(data, "signature", str, path, ""),
        server_name=_get(data, "server_name", str, path, ""),
        metadata=_get(data, "metadata", Mapping, path) or None,
        provider_extra=_original_from_dict(data, path, "provider_extra"),
    )


def _tool_result_from_dict(data: Mapping[str, Any], path: str) -> ToolResultContent:
    raw = data.get("content", "")
    content: str | list[Any]
    if isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = []
        for i, item in enumerate(raw):
            content.extend(contents_from_dict(item, _join(path, f"content[{i}]")))
    else:
        raise _fail(f"{path}.content", "type", f"expected str or a list of content dicts, got {type(raw).__name__}")
    return ToolResultContent(
        _require(data, "id", str, path),
        content,
        is_error=_get(data, "is_error", bool, path, False),
        name=_get(data, "name", str, path, ""),
        metadata=_get(data, "metadata", Mapping, path) or None,
        terminate=_get(data, "terminate", bool, path, False),
        terminate_message=_get(data, "terminate_message", str, path, ""),
        index=_get(data, "index", int, path, 0),
    )


def _blocks(data: Mapping[str, Any], path: str) -> list[Any]:
    items = _get(data, "contents", list, path, [])
    blocks: list[Any] = []
    for i, item in enumerate(items):
        blocks.extend(contents_from_dict(item, f"{path}.contents[{i}]"))
    return blocks


def _timestamp_of(data: Mapping[str, Any], path: str) -> datetime | float | None:
    value = data.get("timestamp")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, datetime)):
        raise _fail(f"{path}.timestamp", "type", f"expected epoch seconds, got {type(value).__name__}")
    return value


def _usage_from_dict(data: Any, path: str) -> Usage | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise _fail(path, "type", f"expected a usage dict, got {type(data).__name__}")
    cost_data = data.get("cost")
    cost = None
    if cost_data is not None:
        if not isinstance(cost_data, Mapping):
            raise _fail(f"{path}.cost", "type", f"expected a cost dict, got {type(cost_data).__name__}")
        with _at(f"{path}.cost"):
            cost = UsageCost(**{key: cost_data.get(key) for key in COST_FIELDS})
    with _at(path):
        counts = {key: data.get(key) for key in TOKEN_FIELDS}
        return Usage(**counts, cost=cost, hosted_tool_requests=data.get("hosted_tool_requests"))


def _provider_state_from_dict(data: Mapping[str, Any] | None, path: str) -> ProviderState | None:
    if data is None:
        return None
    with _at(path):
        return ProviderState(
            _get(data, "provider", str, "", ""),
            _get(data, "data", str, "", ""),
            api=_get(data, "api", str, "", ""),
            type=_get(data, "type", str, "", ""),
        )


def _provenance_from_dict(data: Mapping[str, Any] | None, path: str) -> Provenance | None:
    if data is None:
        return None
    keys = ("provider", "api", "model", "response_id")
    with _at(path):
        return Provenance(**{key: _get(data, key, str, "", "") for key in keys})


def message_from_dict(data: Mapping[str, Any], path: str = "") -> AgentMessage:
    """One message from its seed-1 dict."""
    if not isinstance(data, Mapping):
        raise _fail(path, "type", f"expected a message dict, got {type(data).__name__}")
    role = data.get("role")
    common: dict[str, Any] = {
        "id": _get(data, "id", str, path),
        "timestamp": _timestamp_of(data, path),
        "name": _get(data, "name", str, path, ""),
        "parent_id": _get(data, "parent_id", str, path, ""),
    }
    message: AgentMessage
    with _at(path):
        if role == "system":
            message = SystemMessage(_blocks(data, path), **common)
        elif role == "user":
            message = UserMessage(_blocks(data, path), **common)
        elif role == "assistant":
            provenance = _get(data, "provenance", Mapping, path)
            message = AssistantMessage(
                _blocks(data, path),
                usage=_usage_from_dict(data.get("usage"), f"{path}.usage"),
                stop_reason=_get(data, "stop_reason", str, path),
                stop_reason_raw=_get(data, "stop_reason_raw", str, path, ""),
                stop_sequence=_get(data, "stop_sequence", str, path, ""),
                error=_get(data, "error", str, path, ""),
                provenance=_provenance_from_dict(provenance, f"{path}.provenance"),
                **common,
            )
        elif role == "tool":
            message = ToolMessage(_blocks(data, path), **common)
        elif role == "custom":
            message = CustomMessage(
                _require(data, "custom_type", str, path),
                _blocks(data, path),
                details=data.get("details"),
                to_model=_get(data, "to_model", bool, path, False),
                **common,
            )
        elif role == "branch_summary":
            message = BranchSummaryMessage(
                _require(data, "summary", str, path), _get(data, "from_id", str, path, ""), **common
            )
        elif role == "compaction_summary":
            state = _get(data, "provider_state", Mapping, path)
            message = CompactionSummaryMessage(
                _require(data, "summary", str, path),
                _get(data, "tokens_before", int, path),
                first_kept_id=_get(data, "first_kept_id", str, path, ""),
                provider_state=_provider_state_from_dict(state, f"{path}.provider_state"),
                **common,
            )
        elif role == "unknown":
            raw = _media.decode_base64(_require(data, "proto", str, path), "unknown message")
            message = BaseMessage.from_bytes(raw)  # type: ignore[assignment]
        else:
            raise _fail(f"{path}.role", "enum", f"unknown role {preview(role)}")
    return message


def messages_from_dicts(data: Iterable[Mapping[str, Any]]) -> list[AgentMessage]:
    """Messages from seed-1 dicts; errors name the path (``[3].contents[1].images[0]``)."""
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise _fail("", "type", f"expected a list of message dicts, got {type(data).__name__}")
    messages: list[AgentMessage] = []
    found: list[Violation] = []
    for i, item in enumerate(data):
        try:
            messages.append(message_from_dict(item, f"[{i}]"))
        except ValidationError as exc:
            found.extend(exc.violations)
    if found:
        raise ValidationError(found, "seed-1 dicts")
    return messages
