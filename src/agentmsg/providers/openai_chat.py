"""OpenAI Chat Completions: request ``messages`` and ``ChatCompletion`` responses, both directions.

The format is the one the ``openai`` Python SDK types describe
(``openai.types.chat``: ``ChatCompletionMessageParam`` and its six role
types, ``ChatCompletionContentPartParam``, ``ChatCompletionMessageToolCallUnionParam``,
``ChatCompletion``, ``ChatCompletionMessage``, ``CompletionUsage``; read in
``openai`` 3.52.0) and the API guides they link to (function calling, vision,
audio, PDF files, structured-output refusals, prompt caching).

Mapping (agentmsg <-> format):

=================================  ==============================================================
agentmsg                           format
=================================  ==============================================================
SystemMessage                      ``system`` (or ``developer``: ``system_role=``); reading takes
                                   both
UserMessage                        ``user``; its tool results become ``tool`` messages, in order,
                                   between the user messages its other blocks form
AssistantMessage                   ``assistant`` {content, refusal, tool_calls}
ToolMessage                        one ``tool`` message per result; reading merges consecutive
                                   ``tool`` / ``function`` messages into one ToolMessage
                                   (``merge_tool_messages=False``: one ToolMessage each)
``name`` (message)                 ``name`` (system, developer, user, assistant)
TextContent                        content string (a lone text block) or ``text`` parts
ImageContent (data / url)          ``image_url`` {url: base64 data URL / the URL, detail}
AudioContent (WAV or MP3 data)     ``input_audio`` {data: base64, format: wav | mp3}
DocumentContent (data / file_id)   ``file`` {file: {file_data: base64 data URL, filename} /
                                   {file_id, filename?}}
ToolCallContent                    ``tool_calls[]`` {id, type: function, function: {name,
                                   arguments}}; arguments verbatim, ids verbatim (the API takes
                                   any string)
ToolResultContent (text)           ``tool`` {tool_call_id, content: string or text parts}
TextContent.citations              (responses) ``message.annotations`` of type ``url_citation``
                                   on the content text block (web citations: URL, title,
                                   ``start_index`` / ``end_index``; the annotation verbatim as
                                   the citation's ``original``)
TextContent.logprobs               (responses) ``choices[0].logprobs``: ``content`` tokens on
                                   the content text block, ``refusal`` tokens on the refusal
                                   block (token, logprob, ``bytes``, ``top_logprobs``)
ProviderContent (``openai``)       the block verbatim: a content part (type = the part's type),
                                   a ``tool_calls`` entry (type ``tool_calls.<type>``, e.g. a
                                   custom tool call), a message field (type ``message.audio``,
                                   ``message.annotations`` when one is not a URL citation: the
                                   block is ``{"<field>": value}``) or response data (type
                                   ``response.usage``: the usage details agentmsg has no field
                                   for, such as ``audio_tokens`` and ``text_tokens``;
                                   ``response.logprobs``: logprobs that do not fit the text;
                                   Azure OpenAI's ``response.prompt_filter_results`` (or
                                   ``response.prompt_annotations``) and the choice's
                                   ``response.content_filter_results``)
AssistantMessage usage / stop      ``ChatCompletion`` (responses only): ``usage``,
reason / provenance / timestamp    ``choices[0].finish_reason``, ``model`` and ``id``,
                                   ``created``
=================================  ==============================================================

Choices where the two models differ:

- Refusals. ``refusal`` (the message field, or ``refusal`` content parts) is
  read as a text block placed after the other text, and the message gets
  ``StopReason.CONTENT_FILTER`` (with the response's own ``finish_reason``,
  usually ``stop``, kept in ``stop_reason_raw``). Writing, an assistant message
  whose stop reason is CONTENT_FILTER and whose raw stop reason is not
  ``content_filter`` (a refusal, not a filtered completion) sends its last text
  block as ``refusal``; an Anthropic ``refusal`` stop goes out the same way.
  (So a response holding a refusal *and* ending with ``content_filter``, which
  the API does not document, would write its refusal back as content.)
- Azure OpenAI. A response's ``prompt_filter_results`` (``prompt_annotations``
  in older API versions) and its choice's ``content_filter_results`` are kept
  whole as ``response.*`` blocks (after the usage block) and written back
  where they came from; empty ones (``{}``) equal absent ones. A choice
  Azure's content filter stopped before any output has ``finish_reason``
  ``content_filter`` and no ``message``: it reads as an assistant message
  holding only those blocks (stop reason CONTENT_FILTER), and a message with
  no text, refusal or tool call and that finish reason is written back
  without ``message`` (so a recorded ``"message": {"content": null}`` of that
  kind comes back without it). Without filter results it is an assistant
  message with no content (the contract allows one for a CONTENT_FILTER stop).
  A choice without ``message`` and any other finish reason is refused.
- Tool-result ``name`` and ``index`` are not in a ``tool`` message; reading
  takes them from the call the result answers (its function name and its
  position in ``tool_calls``), or ``""`` and 0 when no earlier call has the id.
  A tool call's ``index`` is its position in ``tool_calls``.
- Media. Inline bytes are written as base64 ``data:`` URLs; reading, the
  media type declared in a data URL is kept (else sniffed from the bytes). A
  URL image's media type is not carried: reading guesses it from the URL path
  as :meth:`agentmsg.ImageContent.from_url` does. Audio formats are ``wav`` ↔
  ``audio/wav`` and ``mp3`` ↔ ``audio/mpeg``. The API needs a ``filename`` with
  ``file_data``: an inline document without one is sent as ``document`` plus
  the extension of its media type (``document.pdf``) and comes back with that
  name. Null for an optional field reads as absent.
- Legacy ``function_call`` / ``function`` messages are read (never written):
  the call gets the id ``function_call_<i>`` (``i`` its message's index; 0 in a
  response), and the next ``function`` message answers it (or gets
  ``function_call_<j>``, its own index, when no call is waiting).
- Request messages carry no response data: an assistant message's usage,
  stop reason, error, provenance, and every message's id and timestamp are not
  part of a request and are not reported; reading gives new ids and the
  current time. :func:`to_openai_chat_response` carries the response data.
- Tool-call arguments that are not a JSON object are refused when reading a
  request (rule ``openai_chat.json``) unless ``allow_invalid_arguments=True``;
  a response's arguments are always kept verbatim (a truncated response
  legitimately holds broken JSON, and agentmsg keeps such text).
- Responses: ``prompt_tokens`` includes cached tokens and cache writes;
  ``input_tokens`` is ``prompt_tokens - cached_tokens - cache_write_tokens``
  (an unreported detail counts 0 there and stays unknown itself);
  ``completion_tokens`` already includes ``reasoning_tokens``. The other
  details (``audio_tokens``, ``text_tokens``, ``image_tokens``, prediction
  tokens...) go to a ``response.usage`` block when not 0 (a count of 0 is the
  same as an absent one); the response writer merges them back. ``created``
  becomes the message timestamp (whole seconds when written back).
- Citations. Writing a response, the content is the text blocks joined, so a
  citation's span moves by the text before its block; a citation read from
  Chat goes back as its annotation; a web citation of another format becomes
  a ``url_citation`` (the whole block when it has no span); other kinds
  (documents, files, search results) and citations of a refusal are reported.
  Token ids (Gemini) have no place in Chat logprobs and are reported.
- Response data (``response.*`` blocks, logprobs, citations) is not model
  input: :func:`to_openai_chat` leaves the ``response.*`` blocks out without a
  report and reports citations and logprobs (a request has no slot for them).

Reported as lost by :func:`to_openai_chat` (a :class:`ConversionReport` entry,
a :class:`ConversionWarning`, or :class:`ConversionError` with ``strict=True``):
thinking (its text too) and redacted thinking; signatures on text and tool
calls; tool-call ``kind``, ``server_name`` and an ``index`` that is not the
call's position; anything but text in a tool result (images, audio,
documents), the result's ``is_error`` flag, a ``name`` other than its call's
and an ``index`` other than its call's position; audio that is not inline WAV
or MP3 (URL, file id, other formats) and audio media-type aliases
(``audio/x-wav`` comes back as ``audio/wav``); images by file id, the detail
``medium``, a URL image's media type when the URL path does not give it back,
images held as a ``data:`` URL (they come back as bytes); documents by URL,
document titles, a file-id document's media type; media-type parameters; the
block order where the format has another (text or provider parts after a
tool call or a kept message field, parts after the refusal text); assistant
fields a request has no slot for (``annotations``), citations and token
logprobs; hosted tool calls and results; decisions on tool calls
(``approval`` blocks: the denial result that follows reaches the model); the
``name`` of a tool message, and of a user message holding only tool results; provider blocks of
other providers and blocks of a kind this version does not know; messages of
an unknown role. Session-only messages are projected to user text
(``session_messages="project"``) or refused. ``metadata`` / ``terminate`` /
``terminate_message`` of tool results and tool-call ``metadata`` and
``requires_approval`` are application data: never sent, never reported. A ``ProviderContent`` goes back
verbatim when its provider is ``openai``: the provider string does not tell
OpenAI's APIs apart, so a Responses API block would be sent too.

Reported as lost by :func:`to_openai_chat_response`, besides the block losses
above: text block boundaries (a response's content is one string), content
parts other than text, the message ``name`` and ``error``, the usage cost, a
provenance of another provider or API (its model and response id are still
written), a stop reason with no ``finish_reason`` (abort, error, unspecified:
``stop`` is written), and unknown counts that ``CompletionUsage`` requires
(written as 0, or as the sum for the total). ``created`` keeps whole seconds.

Reading (:func:`from_openai_chat`, :func:`from_openai_chat_response`) checks
shapes and reports every problem at once in one
:class:`~agentmsg.ValidationError` whose fields are JSON paths into the
payload (``messages[2].content[0].image_url.url``) and whose rule ids start
with ``openai_chat.``: ``type``, ``required``, ``role``, ``enum``,
``min_len``, ``min_items``, ``json``, ``range`` (``created``), ``exclusive``
(both ``file_data`` and ``file_id``), ``unknown_type`` (a part or tool call of a type agentmsg does
not know), ``unsupported`` (something agentmsg cannot hold: the detail
``original``, custom tool calls, assistant audio, annotations, non-text parts
in system and tool messages), ``usage``, ``media``, and ``openai_chat.<rule>``
for a rule of the agentmsg contract (``openai_chat.string.uri``). By default
(``pass_through_unknown=True``) an ``unknown_type`` or ``unsupported`` item of
a user or assistant message is kept as :class:`~agentmsg.ProviderContent`
instead; ``pass_through_unknown=False`` refuses it (non-text parts of system
and tool messages are refused either way: those agentmsg roles cannot hold
provider blocks). Not read, as request settings or response metadata rather
than message data: ``prompt_cache_breakpoint`` on parts, usage details that
are 0, ``system_fingerprint``, ``service_tier``, ``moderation`` and choices
other than the one read.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from agentmsg import _media
from agentmsg.content import (
    AudioContent,
    Citation,
    ContentBase,
    DocumentContent,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    TokenLogprob,
    ToolCallContent,
    ToolResultContent,
    dump_arguments,
    parse_json_object,
)
from agentmsg.errors import MediaError, ValidationError, Violation
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
    json_type,
    llm_messages,
    report_response_extras,
    restore_id,
    split_media,
)
from agentmsg.usage import Usage

__all__ = [
    "API",
    "PROVIDER",
    "from_openai_chat",
    "from_openai_chat_response",
    "to_openai_chat",
    "to_openai_chat_response",
]

PROVIDER: Final = "openai"
API: Final = "openai-chat-completions"
# ProviderContent blocks are tagged with the API, not the provider: Chat and Responses blocks differ.
BLOCK_FORMAT: Final = API
TARGET: Final = "OpenAI Chat Completions"
RULE: Final = "openai_chat"

TOOL_CALL_PREFIX: Final = "tool_calls."
"""ProviderContent type prefix of a ``tool_calls`` entry kept verbatim (``tool_calls.custom``)."""
FIELD_PREFIX: Final = "message."
"""ProviderContent type prefix of an assistant message field kept verbatim (``message.audio``)."""

RESPONSE_PREFIX: Final = "response."
"""ProviderContent type prefix of response data kept verbatim (``response.usage``: usage details agentmsg has no
field for; ``response.logprobs``: a choice's ``logprobs`` that do not fit the text blocks). Not model input:
request writers leave them out without a report; the response writer puts them back."""
USAGE_BLOCK: Final = RESPONSE_PREFIX + "usage"
LOGPROBS_BLOCK: Final = RESPONSE_PREFIX + "logprobs"
PROMPT_FILTER_KEYS: Final = ("prompt_filter_results", "prompt_annotations")
"""Azure OpenAI's prompt-filter results on a ``ChatCompletion`` (and its first stream chunk):
``prompt_filter_results``, and ``prompt_annotations`` in older API versions. Each is kept whole as a
``response.<key>`` block (``{"<key>": value}``) and written back at the top of the response."""
CONTENT_FILTER_KEY: Final = "content_filter_results"
"""Azure OpenAI's content-filter results on a choice: kept whole as a ``response.content_filter_results``
block (``{"content_filter_results": value}``) and written back on the choice."""
CONTENT_FILTER_BLOCK: Final = RESPONSE_PREFIX + CONTENT_FILTER_KEY
CITATION_TYPE: Final = "url_citation"

FINISH_REASONS: Final = ("stop", "length", "tool_calls", "content_filter", "function_call")
_FINISH_TO_STOP: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_CALLS,
    "content_filter": StopReason.CONTENT_FILTER,
    "function_call": StopReason.TOOL_CALLS,
}
_STOP_TO_FINISH: Final[Mapping[StopReason, str]] = {
    StopReason.STOP: "stop",
    StopReason.LENGTH: "length",
    StopReason.TOOL_CALLS: "tool_calls",
    StopReason.CONTENT_FILTER: "content_filter",
}
_DETAIL_OUT: Final[Mapping[ImageDetail, str]] = {
    ImageDetail.LOW: "low",
    ImageDetail.HIGH: "high",
    ImageDetail.AUTO: "auto",
}
_DETAIL_IN: Final[Mapping[str, ImageDetail]] = {value: detail for detail, value in _DETAIL_OUT.items()}
_AUDIO_FORMATS: Final[Mapping[str, str]] = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_ALIASES: Final[Mapping[str, str]] = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/mpeg3": "mp3",
    "audio/x-mp3": "mp3",
}
_USER_PARTS: Final = ("text", "image_url", "input_audio", "file")
_ASSISTANT_PARTS: Final = ("text", "refusal")
_TOOL_CALL_TYPES: Final = ("function", "custom")
_ROLES: Final = ("developer", "system", "user", "assistant", "tool", "function")
# The range of google.protobuf.Timestamp (0001-01-01 to 9999-12-31), in Unix seconds.
_MIN_SECONDS: Final = -62_135_596_800
_MAX_SECONDS: Final = 253_402_300_799
# Built-in tables only (no /etc/mime.types), so file names do not depend on the machine.
_MIME: Final = mimetypes.MimeTypes()


# --- logprobs, annotations and usage details (responses) ------------------------------

_TYPED_DETAILS: Final[Mapping[str, tuple[str, ...]]] = {
    "prompt_tokens_details": ("cached_tokens", "cache_write_tokens"),
    "completion_tokens_details": ("reasoning_tokens",),
}
_USAGE_COUNTS: Final = ("prompt_tokens", "completion_tokens", "total_tokens")


def _nothing(value: Any) -> bool:
    """A value that equals absence: null, a zero count, an empty list or object."""
    return value is None or (type(value) is int and value == 0) or value in ([], {})


def _usage_extras(usage: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a ``usage`` object agentmsg has no field for (``audio_tokens``, ``text_tokens``...).

    Zero counts are left out: a count of 0 is the same as an absent one.
    """
    out: dict[str, Any] = {}
    for key, value in usage.items():
        if key in _USAGE_COUNTS:
            continue
        if key in _TYPED_DETAILS and isinstance(value, Mapping):
            rest = {k: v for k, v in value.items() if k not in _TYPED_DETAILS[key] and not _nothing(v)}
            if rest:
                out[key] = rest
        elif not _nothing(value):
            out[key] = value
    return out


def _token_in(entry: Mapping[str, Any], top: bool) -> TokenLogprob:
    raw = entry.get("bytes")
    tops = entry.get("top_logprobs") if top else None
    return TokenLogprob(
        entry["token"],
        entry["logprob"],
        bytes=bytes(raw) if isinstance(raw, list) else None,
        top_logprobs=[_token_in(t, False) for t in tops or ()],
    )


def _token_out(token: TokenLogprob, top: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "token": token.token,
        "logprob": token.logprob,
        "bytes": list(token.bytes) if token.bytes is not None else None,
    }
    if top:
        out["top_logprobs"] = [_token_out(t, False) for t in token.top_logprobs]
    return out


def _pruned(value: Any) -> Any:
    if isinstance(value, Mapping):
        items = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v is not None and v not in ([], {})}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _tokens_in(entries: Any) -> list[TokenLogprob] | None:
    """``logprobs.content`` (or ``.refusal``) as tokens; None when they would not be written back exactly."""
    if not isinstance(entries, list):
        return None
    try:
        tokens = [_token_in(entry, True) for entry in entries]
        if _pruned([_token_out(t, True) for t in tokens]) != _pruned(entries):
            return None
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
        return None
    return tokens


def _citations_in(annotations: Any) -> list[Citation] | None:
    """``url_citation`` annotations as citations; None when one is of another kind or would not come back."""
    if not isinstance(annotations, list):
        return None
    citations: list[Citation] = []
    for annotation in annotations:
        if not isinstance(annotation, Mapping) or annotation.get("type") != CITATION_TYPE:
            return None
        body = annotation.get(CITATION_TYPE)
        if not isinstance(body, Mapping) or not isinstance(body.get("url"), str):
            return None
        start, end, title = body.get("start_index"), body.get("end_index"), body.get("title")
        try:
            citations.append(
                Citation.web(
                    body["url"],
                    title if isinstance(title, str) else "",
                    start_index=start if type(start) is int else None,
                    end_index=end if type(end) is int else None,
                    original=ProviderContent(BLOCK_FORMAT, CITATION_TYPE, _sorted_json(annotation)),
                )
            )
        except ValidationError:
            return None
    return citations


def _sorted_json(value: Mapping[str, Any]) -> str:
    """Compact JSON with sorted keys: kept response objects read the same whether the API or the SDK's
    stream accumulation (which orders keys its own way) wrote them."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError.single("", "json", f"not JSON-serialisable: {exc}") from None


def _annotation_out(citation: Citation, shift: int, length: int) -> dict[str, Any] | None:
    """A citation as a ``url_citation`` annotation of the joined content (``shift``: where its block starts)."""
    original = citation.original
    if original is not None and original.provider == BLOCK_FORMAT and original.block_type == CITATION_TYPE:
        annotation = original.block()
        body = annotation.get(CITATION_TYPE)
        if shift and isinstance(body, dict):
            for key in ("start_index", "end_index"):
                if type(body.get(key)) is int:
                    body[key] += shift
        return annotation
    if citation.source_kind != "web":
        return None
    start = citation.start_index if citation.start_index is not None else 0
    end = citation.end_index if citation.end_index is not None else length
    body = {"end_index": end + shift, "start_index": start + shift, "title": citation.title, "url": citation.url}
    return {"type": CITATION_TYPE, CITATION_TYPE: body}


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _base_type(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def _data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{_media.encode_base64(data)}"


def _default_filename(media_type: str) -> str:
    return "document" + (_MIME.guess_extension(media_type, strict=False) or "")


def _is_refusal(message: AssistantMessage) -> bool:
    """A refusal (sent as ``refusal``), as opposed to a completion cut by the content filter."""
    return message.stop_reason is StopReason.CONTENT_FILTER and message.stop_reason_raw != "content_filter"


def _collapse(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A lone text part as a string (the common form), else the parts."""
    if len(parts) == 1 and parts[0].get("type") == "text" and set(parts[0]) == {"type", "text"}:
        return str(parts[0]["text"])
    return parts


# --------------------------------------------------------------------------- agentmsg -> format


@dataclass
class _Assistant:
    """An assistant message cut into the format's slots, with the input path of each piece."""

    parts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # content parts (text, provider)
    calls: list[dict[str, Any]] = field(default_factory=list)
    fields: list[tuple[str, ProviderContent]] = field(default_factory=list)
    refusal: str | None = None
    response: list[ProviderContent] = field(default_factory=list)  # response data kept verbatim


class _Writer:
    """One conversion's state: the losses, and the calls seen so far (for tool-result names and indexes)."""

    def __init__(self, reporter: Reporter, *, for_response: bool = False) -> None:
        self.reporter = reporter
        self.for_response = for_response
        self.calls: dict[str, tuple[str, int]] = {}

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    # -- messages

    def message(self, path: str, message: AgentMessage, system_role: str) -> list[dict[str, Any]]:
        match message:
            case SystemMessage():
                return [self.system(path, message, system_role)]
            case UserMessage():
                return self.user(path, message)
            case AssistantMessage():
                return [self.assistant(path, message)]
            case ToolMessage():
                if message.name:
                    self.loss(_at(path, "name"), "name", "a tool message has no name")
                out = []
                for k, block in enumerate(message.contents):
                    block_path = f"{path}.contents[{k}]"
                    if isinstance(block, ToolResultContent):
                        out.append(self.tool_result(block_path, block))
                    else:
                        self.unknown(block_path, block)
                return out
            case _:
                self.loss(path, "message of an unknown role", "this version cannot read it")
                return []

    def system(self, path: str, message: SystemMessage, role: str) -> dict[str, Any]:
        parts = []
        for k, block in enumerate(message.contents):
            block_path = f"{path}.contents[{k}]"
            if isinstance(block, TextContent):
                parts.append(self.text(block_path, block))
            else:
                self.unknown(block_path, block)
        out: dict[str, Any] = {"role": role, "content": _collapse(parts) if parts else ""}
        if message.name:
            out["name"] = message.name
        return out

    def user(self, path: str, message: UserMessage) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        wrote_user = False

        def flush() -> None:
            nonlocal parts, wrote_user
            if parts:
                item: dict[str, Any] = {"role": "user", "content": _collapse(parts)}
                if message.name:
                    item["name"] = message.name
                out.append(item)
                parts = []
                wrote_user = True

        for k, block in enumerate(message.contents):
            block_path = f"{path}.contents[{k}]"
            if isinstance(block, ToolResultContent):
                flush()
                out.append(self.tool_result(block_path, block))
                continue
            for piece_path, piece in split_media(block, block_path, self.reporter):
                part = self.user_part(piece_path, piece)
                if part is not None:
                    parts.append(part)
        flush()
        if message.name and not wrote_user:
            self.loss(_at(path, "name"), "name", "the message holds only tool results, and a tool message has no name")
        return out

    def assistant(self, path: str, message: AssistantMessage) -> dict[str, Any]:
        cut = self.cut_assistant(path, message)
        out: dict[str, Any] = {"role": "assistant"}
        parts = [part for _, part in cut.parts]
        if parts:
            out["content"] = _collapse(parts)
        elif not cut.calls and cut.refusal is None and not cut.fields:
            out["content"] = ""
        if cut.refusal is not None:
            out["refusal"] = cut.refusal
        if cut.calls:
            out["tool_calls"] = cut.calls
        for field_path, block in cut.fields:
            self.request_field(field_path, block, out)
        if message.name:
            out["name"] = message.name
        return out

    def cut_assistant(self, path: str, message: AssistantMessage) -> _Assistant:
        """Sort an assistant message's blocks into content parts, tool calls and fields; report the rest."""
        cut = _Assistant()
        text_at: list[int] = []  # indexes into cut.parts of the text parts
        rank = 0  # the format's order: content parts, then fields, then tool calls
        for k, block in enumerate(message.contents):
            block_path = f"{path}.contents[{k}]" if path else f"contents[{k}]"
            match block:
                case TextContent():
                    self.order(block_path, rank, 0)
                    text_at.append(len(cut.parts))
                    cut.parts.append((block_path, self.text(block_path, block)))
                case ThinkingContent():
                    signed = " and its signature" if block.signature else ""
                    self.loss(
                        block_path, "thinking", f"Chat Completions takes no reasoning back: its text{signed} dropped"
                    )
                case RedactedThinkingContent():
                    self.loss(block_path, "redacted thinking", "Chat Completions takes no reasoning back")
                case ToolCallContent():
                    rank = 2
                    cut.calls.append(self.tool_call(block_path, block, len(cut.calls)))
                case ProviderContent() if block.provider == BLOCK_FORMAT and block.block_type.startswith(
                    TOOL_CALL_PREFIX
                ):
                    rank = 2
                    cut.calls.append(block.block())
                case ProviderContent() if block.provider == BLOCK_FORMAT and block.block_type.startswith(
                    RESPONSE_PREFIX
                ):
                    cut.response.append(block)  # not model input: a request leaves it out
                case ProviderContent() if block.provider == BLOCK_FORMAT and block.block_type.startswith(FIELD_PREFIX):
                    self.order(block_path, rank, 1)
                    rank = max(rank, 1)
                    cut.fields.append((block_path, block))
                case ProviderContent() if block.provider == BLOCK_FORMAT:
                    self.order(block_path, rank, 0)
                    cut.parts.append((block_path, block.block()))
                case _:
                    self.unknown(block_path, block)
        if _is_refusal(message) and text_at:
            last = text_at[-1]
            _, part = cut.parts.pop(last)
            cut.refusal = str(part["text"])
            if last < len(cut.parts):
                self.loss(
                    cut.parts[last][0],
                    "block order",
                    "the refusal (the last text block) is read back after every content part",
                )
        for position, call in enumerate(cut.calls):
            kind = call.get("type")
            body = call.get(kind) if isinstance(kind, str) else None
            name = body.get("name") if isinstance(body, Mapping) else None
            if isinstance(call.get("id"), str):
                self.calls[call["id"]] = (name if isinstance(name, str) else "", position)
        return cut

    def order(self, path: str, rank: int, own: int) -> None:
        if own < rank:
            where = "after a tool call" if rank == 2 else "after an assistant message field"
            self.loss(
                path, "block order", f"the block comes {where}; the format puts content first and reads it back so"
            )

    def request_field(self, path: str, block: ProviderContent, out: dict[str, Any]) -> None:
        """A kept assistant field: ``audio`` goes back by id (as requests take it); others have no request slot."""
        name = block.block_type[len(FIELD_PREFIX) :]
        value = block.block().get(name)
        if name == "audio" and isinstance(value, Mapping) and isinstance(value.get("id"), str):
            # A request refers to earlier audio by id; its data and transcript stay with OpenAI.
            out["audio"] = {"id": value["id"]}
            return
        self.loss(path, f"assistant field {name!r}", "a request's assistant message has no such field")

    # -- blocks

    def text(self, path: str, block: TextContent) -> dict[str, Any]:
        arm = block.pb.text  # read the fields once: this is the hot path of every conversion
        if arm.signature:
            self.loss(path, "text signature", "Chat Completions has no place for signatures")
        if not self.for_response:
            if arm.citations:
                self.loss(path + ".citations", "citations", "a request's messages have no annotations")
            if arm.logprobs:
                self.loss(path + ".logprobs", "token logprobs", "a request's messages have no logprobs")
        return {"type": "text", "text": arm.text}

    def unknown(self, path: str, block: ContentBase) -> None:
        if isinstance(block, ProviderContent):
            self.loss(
                path,
                f"{block.provider} block {block.block_type!r}",
                "a provider block goes back only to its provider's format, in a role that has its slot",
            )
        else:
            self.loss(path, f"{block.type or 'unknown'} content", "the format has no place for it here")

    def user_part(self, path: str, block: ContentBase) -> dict[str, Any] | None:
        match block:
            case TextContent():
                return self.text(path, block)
            case ImageContent():
                return self.image(path, block)
            case AudioContent():
                return self.audio(path, block)
            case DocumentContent():
                return self.document(path, block)
            case ProviderContent() if block.provider == BLOCK_FORMAT and not block.block_type.startswith(
                (TOOL_CALL_PREFIX, FIELD_PREFIX)
            ):
                return block.block()
            case _:
                self.unknown(path, block)
                return None

    def image(self, path: str, block: ImageContent) -> dict[str, Any] | None:
        if block.file_id is not None:
            self.loss(path, "image by file id", "image_url takes a URL or a base64 data URL only")
            return None
        if block.data is not None:
            base = _base_type(block.media_type)
            if base != block.media_type:
                self.loss(path, f"media type {block.media_type!r}", f"the data URL carries {base!r}")
            url = _data_url(base, block.data)
        else:
            url = block.url or ""
            if url[:5].lower() == "data:":
                self.loss(path, "image held as a data: URL", "it is read back as inline bytes")
            elif block.media_type != _media.guess_from_path(url, "image/"):
                self.loss(
                    path,
                    f"image media type {block.media_type!r}",
                    "a URL image carries none; reading guesses it from the URL path",
                )
        image_url: dict[str, Any] = {"url": url}
        if block.detail is ImageDetail.MEDIUM:
            self.loss(path, "image detail 'medium'", "Chat Completions knows low, high and auto")
        elif block.detail is not None:
            image_url["detail"] = _DETAIL_OUT[block.detail]
        return {"type": "image_url", "image_url": image_url}

    def audio(self, path: str, block: AudioContent) -> dict[str, Any] | None:
        if block.data is None:
            self.loss(path, "audio by URL or file id", "input_audio takes base64 data only")
            return None
        fmt = _AUDIO_ALIASES.get(_base_type(block.media_type))
        if fmt is None:
            self.loss(path, f"audio ({block.media_type})", "input_audio takes WAV and MP3 only")
            return None
        if block.media_type != _AUDIO_FORMATS[fmt]:
            self.loss(
                path,
                f"media type {block.media_type!r}",
                f"sent as format {fmt!r}, read back as {_AUDIO_FORMATS[fmt]!r}",
            )
        return {"type": "input_audio", "input_audio": {"data": _media.encode_base64(block.data), "format": fmt}}

    def document(self, path: str, block: DocumentContent) -> dict[str, Any] | None:
        if block.url is not None:
            self.loss(path, "document by URL", "the file part takes base64 data or a file id")
            return None
        file: dict[str, Any] = {}
        if block.data is not None:
            base = _base_type(block.media_type)
            if base != block.media_type:
                self.loss(path, f"media type {block.media_type!r}", f"the data URL carries {base!r}")
            file["filename"] = block.filename or _default_filename(base)
            file["file_data"] = _data_url(base, block.data)
        else:
            file["file_id"] = block.file_id
            if block.filename:
                file["filename"] = block.filename
            if block.media_type:
                self.loss(path, f"media type {block.media_type!r}", "a file part by id carries no media type")
        if block.title:
            self.loss(path, "document title", "the file part has no title")
        if block.context:
            self.loss(path, "document context", "the file part has no context text")
        return {"type": "file", "file": file}

    def tool_call(self, path: str, block: ToolCallContent, position: int) -> dict[str, Any]:
        if block.kind is not None:
            self.loss(path, f"tool kind {block.kind.value!r}", "a tool call has no kind")
        if block.server_name:
            self.loss(path, "server name", "a tool call has no server name")
        if block.signature:
            self.loss(path, "tool-call signature", "Chat Completions has no place for signatures")
        if block.index != position:
            self.loss(path, f"index {block.index}", f"a call's index is its position in tool_calls ({position})")
        return {"id": block.id, "type": "function", "function": {"name": block.name, "arguments": block.arguments}}

    def tool_result(self, path: str, block: ToolResultContent) -> dict[str, Any]:
        texts = []
        for j, inner in enumerate(block.blocks):
            inner_path = f"{path}.content[{j}]"
            if isinstance(inner, TextContent):
                texts.append(self.text(inner_path, inner))
            else:
                self.loss(inner_path, f"{inner.type or 'unknown'} in a tool result", "a tool message carries text only")
        content: str | list[dict[str, Any]] = ""
        if len(texts) == 1 and texts[0]["text"]:
            content = str(texts[0]["text"])
        elif texts:
            content = texts
        if block.is_error:
            self.loss(path, "error flag", "a tool message has no error flag; the text is sent as it is")
        name, index = self.calls.get(block.id, ("", 0))
        if block.name and block.name != name:
            self.loss(path, f"name {block.name!r}", "a tool message has no name; reading takes the name of its call")
        if block.index != index:
            self.loss(path, f"index {block.index}", f"reading takes the position of its call ({index})")
        return {"role": "tool", "tool_call_id": block.id, "content": content}


def to_openai_chat(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
    system_role: Literal["system", "developer"] = "system",
) -> list[dict[str, Any]]:
    """Messages as a Chat Completions ``messages`` list (plain, JSON-ready dicts).

    ``system_role="developer"`` writes system messages with the ``developer``
    role (o1 models and newer). What the format cannot hold is reported (see
    the module docstring): in ``report``, as a :class:`ConversionError` with
    ``strict=True``, or as one :class:`ConversionWarning`. ``model`` is
    accepted for the common converter signature: nothing in this format is
    replayed (it has no signatures).
    """
    if system_role not in ("system", "developer"):
        raise ValidationError.single("system_role", "enum", f"{system_role!r} is not one of: system, developer")
    del model  # no signatures or encrypted reasoning to replay in this format
    reporter = Reporter(TARGET, report, strict=strict)
    writer = _Writer(reporter)
    out: list[dict[str, Any]] = []
    for path, message, _projected in llm_messages(messages, session_messages):
        out.extend(writer.message(path, message, system_role))
    reporter.finish()
    return out


def _usage_out(usage: Usage, reporter: Reporter) -> dict[str, Any]:
    """``CompletionUsage`` for our counts; an unknown required count is written as 0 and reported."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    if "input_tokens" not in usage.reported:
        reporter.loss("usage.input_tokens", "unknown input token count", "prompt_tokens is required; 0 counted")
    completion = usage.known("output_tokens")
    if completion is None:
        reporter.loss("usage.output_tokens", "unknown output token count", "completion_tokens is required; 0 written")
        completion = 0
    total = usage.known("total_tokens")
    if total is None:
        total = prompt + completion
        reporter.loss("usage.total_tokens", "unknown total", f"total_tokens is required; the sum {total} written")
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
    prompt_details: dict[str, Any] = {}
    if "cache_read_tokens" in usage.reported:
        prompt_details["cached_tokens"] = usage.cache_read_tokens
    if "cache_write_tokens" in usage.reported:
        prompt_details["cache_write_tokens"] = usage.cache_write_tokens
    if prompt_details:
        out["prompt_tokens_details"] = prompt_details
    if "reasoning_tokens" in usage.reported:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    if "cost" in usage.reported:
        reporter.loss("usage.cost", "cost", "CompletionUsage has no cost")
    return out


def _finish_out(message: AssistantMessage, reporter: Reporter) -> str:
    raw, reason = message.stop_reason_raw, message.stop_reason
    if _is_refusal(message):
        # A refusal ends like a normal turn.
        return raw if raw in FINISH_REASONS and raw != "content_filter" else "stop"
    if reason is not None and raw in FINISH_REASONS and _FINISH_TO_STOP[raw] is reason:
        return raw
    if reason is not None and reason in _STOP_TO_FINISH:
        return _STOP_TO_FINISH[reason]
    what = f"stop reason {reason.value!r}" if reason is not None else "unspecified stop reason"
    reporter.loss("stop_reason", what, "finish_reason is one of " + ", ".join(FINISH_REASONS) + "; 'stop' written")
    return "stop"


def _text_extras(message: AssistantMessage, reporter: Reporter) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The ``annotations`` and ``logprobs`` of a response from its text blocks' citations and tokens.

    The content is the text blocks joined (the refusal, the last text block
    of a refusal, apart), so a citation's span moves by the text before its
    block; citations of a kind ``url_citation`` cannot hold are reported.
    """
    texts = [(k, block) for k, block in enumerate(message.contents) if isinstance(block, TextContent)]
    refusal = texts.pop() if _is_refusal(message) and texts else None
    annotations: list[dict[str, Any]] = []
    content_tokens: list[dict[str, Any]] = []
    shift = 0
    for k, block in texts:
        for j, citation in enumerate(block.citations):
            annotation = _annotation_out(citation, shift, len(block.content))
            if annotation is None:
                reporter.loss(
                    f"contents[{k}].citations[{j}]",
                    f"{citation.source_kind or 'provider'} citation",
                    "only URL citations",
                )
            else:
                annotations.append(annotation)
        content_tokens += [_token_out(token, True) for token in block.logprobs]
        _token_ids(block, f"contents[{k}]", reporter)
        shift += len(block.content)
    # ChoiceLogprobs has both fields (null when none)
    logprobs: dict[str, Any] = {"content": content_tokens or None, "refusal": None}
    if refusal is not None:
        k, block = refusal
        if block.citations:
            reporter.loss(f"contents[{k}].citations", "citations of a refusal", "a refusal has no annotations")
        if block.logprobs:
            logprobs["refusal"] = [_token_out(token, True) for token in block.logprobs]
            _token_ids(block, f"contents[{k}]", reporter)
    return annotations, (logprobs if any(logprobs.values()) else None)


def _token_ids(block: TextContent, path: str, reporter: Reporter) -> None:
    if any(t.token_id is not None or any(u.token_id is not None for u in t.top_logprobs) for t in block.logprobs):
        reporter.loss(path + ".logprobs", "token ids", "Chat Completions logprobs have no token ids")


def to_openai_chat_response(
    message: AssistantMessage,
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """An assistant message as a ``ChatCompletion`` dict with one choice.

    ``id`` and ``model`` come from the provenance (``chatcmpl-<message id>``
    and ``model`` when it has none), ``created`` from the timestamp (whole
    seconds), ``finish_reason`` from the raw stop reason when it is a Chat
    Completions value that agrees with the normalised one, else from the
    normalised one. A response's content is one string: several text blocks
    are joined (reported). Losses are reported as in :func:`to_openai_chat`.
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    reporter = Reporter(f"{TARGET} response", report, strict=strict)
    writer = _Writer(reporter, for_response=True)
    cut = writer.cut_assistant("", message)
    texts: list[str] = []
    for part_path, part in cut.parts:
        if part.get("type") == "text" and set(part) == {"type", "text"}:
            if texts:
                reporter.loss(part_path, "text block boundary", "a response's content is one string: blocks joined")
            texts.append(str(part["text"]))
        else:
            reporter.loss(part_path, f"content part {part.get('type')!r}", "a response's content is one string")
    body: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts else None,
        "refusal": cut.refusal,
    }
    if cut.calls:
        body["tool_calls"] = cut.calls
    for field_path, block in cut.fields:
        name = block.block_type[len(FIELD_PREFIX) :]
        value = block.block().get(name)
        if name in ("audio", "annotations") and value is not None:
            body[name] = value
        else:
            reporter.loss(field_path, f"assistant field {name!r}", "a ChatCompletionMessage has no such field")
    annotations, logprobs = _text_extras(message, reporter)
    if annotations:
        body["annotations"] = [*(body.get("annotations") or []), *annotations]
    kept = {block.block_type: block.block() for block in cut.response}
    if logprobs is None and LOGPROBS_BLOCK in kept:
        logprobs = kept[LOGPROBS_BLOCK].get("logprobs")
    if message.name:
        reporter.loss("name", "name", "a ChatCompletionMessage has no name")
    if message.error:
        reporter.loss("error", "error", "a ChatCompletion has no error text")
    provenance = message.provenance
    if provenance is not None and (provenance.provider, provenance.api) != (PROVIDER, API):
        reporter.loss(
            "provenance",
            f"provenance {provenance.provider}/{provenance.api}",
            "a ChatCompletion comes from openai/openai-chat-completions; model and response id are kept",
        )
    finish = _finish_out(message, reporter)
    choice: dict[str, Any] = {"index": 0, "message": body, "finish_reason": finish, "logprobs": logprobs}
    if CONTENT_FILTER_BLOCK in kept:
        choice[CONTENT_FILTER_KEY] = kept[CONTENT_FILTER_BLOCK].get(CONTENT_FILTER_KEY)
    if finish == "content_filter" and not any(v is not None for k, v in body.items() if k != "role"):
        del choice["message"]  # Azure: a choice its content filter stopped before any output has no message
    out: dict[str, Any] = {
        "id": (provenance.response_id if provenance is not None else "") or f"chatcmpl-{message.id}",
        "object": "chat.completion",
        "created": message.pb.timestamp.seconds,
        "model": (provenance.model if provenance is not None else "") or model or "",
        "choices": [choice],
    }
    for key in PROMPT_FILTER_KEYS:
        if RESPONSE_PREFIX + key in kept:
            out[key] = kept[RESPONSE_PREFIX + key].get(key)
    usage = message.usage
    if usage is not None:
        out["usage"] = _usage_out(usage, reporter)
        for key, value in (kept.get(USAGE_BLOCK) or {}).items():
            if isinstance(value, Mapping) and isinstance(out["usage"].get(key), dict):
                out["usage"][key].update(value)
            else:
                out["usage"][key] = value
    report_response_extras(message, reporter, "a ChatCompletion")
    reporter.finish()
    return out


# --------------------------------------------------------------------------- format -> agentmsg


class _Reader:
    """Reads a payload, collecting every problem with its JSON path."""

    def __init__(self, what: str, *, id_map: Mapping[str, str] | None, pass_through: bool, loose_args: bool) -> None:
        self.errors = PayloadErrors(what)
        self.id_map = id_map
        self.pass_through = pass_through
        self.loose_args = loose_args
        self.calls: dict[str, tuple[str, int]] = {}
        self.legacy: tuple[str, str] | None = None  # (id, name) of a function_call waiting for its result

    # -- recording

    def add(self, path: str, rule: str, message: str) -> None:
        self.errors.add(path, f"{RULE}.{rule}", message)

    def count(self) -> int:
        return len(self.errors.found)

    @contextmanager
    def building(self, path: str) -> Iterator[None]:
        """Record an agentmsg error raised while building at ``path``, its rule id prefixed with ``openai_chat.``."""
        start = self.count()
        try:
            with self.errors.building(path):
                yield
        finally:
            found = self.errors.found
            for k in range(start, len(found)):
                if not found[k].rule_id.startswith(f"{RULE}."):
                    found[k] = Violation(found[k].field, f"{RULE}.{found[k].rule_id}", found[k].message)

    # -- typed fields (None: absent, null or wrong; a wrong or missing required value is recorded)

    def field(self, obj: Mapping[str, Any], key: str, path: str, kind: type, what: str, *, required: bool) -> Any:
        where = _at(path, key)
        if key not in obj or obj[key] is None:
            if required:
                self.add(where, "required", f"required field {key!r} is missing" + (" (null)" if key in obj else ""))
            return None
        value = obj[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.add(where, "type", f"expected {what}, got {json_type(value)}")
            return None
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str | None:
        value: str | None = self.field(obj, key, path, str, "a string", required=required)
        return value

    def obj(self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> Mapping[str, Any] | None:
        value: Mapping[str, Any] | None = self.field(obj, key, path, Mapping, "an object", required=required)
        return value

    def array(self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> list[Any] | None:
        value: list[Any] | None = self.field(obj, key, path, list, "an array", required=required)
        return value

    def count_field(self, obj: Mapping[str, Any], key: str, path: str) -> int | None:
        value: int | None = self.field(obj, key, path, int, "an integer", required=False)
        if value is not None and value < 0:
            self.add(_at(path, key), "usage", f"a token count cannot be negative ({value})")
            return None
        return value

    def part_type(self, part: Any, path: str) -> str | None:
        if not isinstance(part, Mapping):
            self.add(path, "type", f"expected a content part object, got {json_type(part)}")
            return None
        return self.string(part, "type", path)

    def keep(
        self, path: str, provider_type: str, value: Mapping[str, Any], *, sort: bool = False
    ) -> ContentBase | None:
        """A verbatim ProviderContent for something agentmsg has no kind for (``sort``: keys sorted)."""
        with self.building(path):
            text = dump_arguments(value, "block")  # checks the value
            return ProviderContent(BLOCK_FORMAT, provider_type, _sorted_json(value) if sort else text)
        return None

    def refuse(self, path: str, rule: str, message: str) -> None:
        hint = "; pass pass_through_unknown=True to keep it verbatim" if rule in ("unknown_type", "unsupported") else ""
        self.add(path, rule, message + hint)

    # -- text

    def text(self, value: str, path: str) -> TextContent | None:
        try:
            return TextContent(value)
        except ValidationError as exc:  # a lone surrogate: not UTF-8
            for violation in exc.violations:
                self.add(path, violation.rule_id, violation.message)
            return None

    def text_part(self, part: Mapping[str, Any], path: str, key: str = "text") -> TextContent | None:
        value = self.string(part, key, path)
        return self.text(value, _at(path, key)) if value is not None else None

    def texts(self, value: Any, path: str, role: str) -> list[TextContent] | None:
        """A string or a list of text parts (system, developer and tool messages)."""
        if isinstance(value, str):
            block = self.text(value, path)
            return [block] if block is not None else None
        if not isinstance(value, list):
            self.add(path, "type", f"expected a string or an array of text parts, got {json_type(value)}")
            return None
        start = self.count()
        blocks = []
        for j, part in enumerate(value):
            part_path = f"{path}[{j}]"
            kind = self.part_type(part, part_path)
            if kind == "text":
                block = self.text_part(part, part_path)
                if block is not None:
                    blocks.append(block)
            elif kind is not None:
                self.add(_at(part_path, "type"), "unsupported", f"a {role} message takes text parts only, not {kind!r}")
        return blocks if self.count() == start else None

    # -- user parts

    def user_part(self, part: Any, path: str) -> ContentBase | None:
        kind = self.part_type(part, path)
        if kind is None:
            return None
        if kind == "text":
            return self.text_part(part, path)
        if kind == "image_url":
            return self.image(part, path)
        if kind == "input_audio":
            return self.audio(part, path)
        if kind == "file":
            return self.document(part, path)
        if self.pass_through:
            return self.keep(path, kind, part)
        self.refuse(
            _at(path, "type"),
            "unknown_type",
            f"unknown user content part type {kind!r}; known: {', '.join(_USER_PARTS)}",
        )
        return None

    def image(self, part: Mapping[str, Any], path: str) -> ContentBase | None:
        start = self.count()
        image_url = self.obj(part, "image_url", path)
        if image_url is None:
            return None
        inner = _at(path, "image_url")
        url = self.string(image_url, "url", inner)
        detail: ImageDetail | None = None
        raw = self.string(image_url, "detail", inner, required=False)
        if raw == "original":
            if self.pass_through:
                return self.keep(path, "image_url", part)
            self.refuse(_at(inner, "detail"), "unsupported", "agentmsg has no image detail 'original'")
        elif raw is not None:
            if raw not in _DETAIL_IN:
                self.add(_at(inner, "detail"), "enum", f"{raw!r} is not one of: auto, low, high, original")
            else:
                detail = _DETAIL_IN[raw]
        if url is None or self.count() > start:
            return None
        url_path = _at(inner, "url")
        if url[:5].lower() == "data:":
            try:
                declared, data = _media.parse_data_url(url, "image")
            except MediaError as exc:
                self.add(url_path, "media", str(exc))
                return None
            with self.building(url_path):
                return ImageContent(data, media_type=declared if declared.startswith("image/") else None, detail=detail)
            return None
        with self.building(inner):
            return ImageContent.from_url(url, detail=detail)
        return None

    def audio(self, part: Mapping[str, Any], path: str) -> ContentBase | None:
        start = self.count()
        audio = self.obj(part, "input_audio", path)
        if audio is None:
            return None
        inner = _at(path, "input_audio")
        data = self.string(audio, "data", inner)
        fmt = self.string(audio, "format", inner)
        if fmt is not None and fmt not in _AUDIO_FORMATS:
            self.add(_at(inner, "format"), "enum", f"{fmt!r} is not one of: wav, mp3")
        if data is None or fmt is None or self.count() > start:
            return None
        with self.building(_at(inner, "data")):
            return AudioContent(_media.decode_base64(data, "audio"), media_type=_AUDIO_FORMATS[fmt])
        return None

    def document(self, part: Mapping[str, Any], path: str) -> ContentBase | None:
        start = self.count()
        file = self.obj(part, "file", path)
        if file is None:
            return None
        inner = _at(path, "file")
        file_data = self.string(file, "file_data", inner, required=False)
        file_id = self.string(file, "file_id", inner, required=False)
        filename = self.string(file, "filename", inner, required=False) or ""
        if file_data is not None and file_id is not None:
            self.add(inner, "exclusive", "give file_data or file_id, not both: agentmsg keeps one source")
        elif file_data is None and file_id is None and self.count() == start:
            self.add(_at(inner, "file_data"), "required", "a file part needs file_data or file_id")
        if self.count() > start:
            return None
        if file_id is not None:
            if not file_id:
                self.add(_at(inner, "file_id"), "min_len", "the file id is empty")
                return None
            with self.building(inner):
                return DocumentContent.from_file_id(file_id, filename=filename)
            return None
        assert file_data is not None
        data_path = _at(inner, "file_data")
        with self.building(data_path):
            if file_data[:5].lower() == "data:":
                declared, data = _media.parse_data_url(file_data, "document")
                return DocumentContent(data, media_type=declared or None, filename=filename)
            return DocumentContent(_media.decode_base64(file_data, "document"), filename=filename)
        return None

    # -- assistant

    def assistant_blocks(
        self, message: Mapping[str, Any], path: str, legacy_id: str, logprobs: Any = None
    ) -> tuple[list[ContentBase], bool]:
        """The blocks of an assistant message (request or response) and whether it holds a refusal.

        ``logprobs`` (a response choice's) go on the content and refusal text blocks.
        """
        blocks: list[ContentBase] = []
        refusals: list[str] = []
        content = message.get("content")
        content_path = _at(path, "content")
        content_at: int | None = None  # the text block the content string became
        refusal_at: int | None = None
        if isinstance(content, str):
            block = self.text(content, content_path)
            if block is not None:
                content_at = len(blocks)
                blocks.append(block)
        elif isinstance(content, list):
            for j, part in enumerate(content):
                part_path = f"{content_path}[{j}]"
                kind = self.part_type(part, part_path)
                if kind == "text":
                    block = self.text_part(part, part_path)
                    if block is not None:
                        blocks.append(block)
                elif kind == "refusal":
                    refusal = self.string(part, "refusal", part_path)
                    if refusal is not None:
                        refusals.append(refusal)
                elif kind is not None:
                    if self.pass_through:
                        kept = self.keep(part_path, kind, part)
                        if kept is not None:
                            blocks.append(kept)
                    else:
                        self.refuse(
                            _at(part_path, "type"),
                            "unknown_type",
                            f"unknown assistant content part type {kind!r}; known: {', '.join(_ASSISTANT_PARTS)}",
                        )
        elif content is not None:
            self.add(content_path, "type", f"expected a string, an array of parts or null, got {json_type(content)}")
        refusal = self.string(message, "refusal", path, required=False)
        if refusal is not None:
            refusals.append(refusal)
        if refusals:
            refusal_block = self.text("".join(refusals), _at(path, "refusal"))
            if refusal_block is not None:
                refusal_at = len(blocks)
                blocks.append(refusal_block)
        for name in ("audio", "annotations"):
            value = message.get(name)
            if value is None or value == []:
                continue
            citations = _citations_in(value) if name == "annotations" and content_at is not None else None
            if citations is not None and content_at is not None:
                text = blocks[content_at]
                assert isinstance(text, TextContent)
                blocks[content_at] = TextContent(text.content, citations=citations)
                continue
            if self.pass_through:
                kept = self.keep(_at(path, name), FIELD_PREFIX + name, {name: value}, sort=True)
                if kept is not None:
                    blocks.append(kept)
            else:
                self.refuse(_at(path, name), "unsupported", f"agentmsg has no assistant {name}")
        function_call = self.obj(message, "function_call", path, required=False)
        if function_call is not None:
            call = self.tool_call_body(function_call, _at(path, "function_call"), legacy_id, 0)
            if call is not None:
                blocks.append(call)
                self.legacy = (legacy_id, call.name)
        tool_calls = self.array(message, "tool_calls", path, required=False)
        for position, item in enumerate(tool_calls or ()):
            call_path = f"{_at(path, 'tool_calls')}[{position}]"
            call_block = self.tool_call(item, call_path, position)
            if call_block is not None:
                blocks.append(call_block)
        if isinstance(logprobs, Mapping) and not all(_nothing(v) for v in logprobs.values()):
            self.logprobs(logprobs, blocks, {"content": content_at, "refusal": refusal_at}, path)
        return blocks, bool(refusals)

    def logprobs(
        self, logprobs: Mapping[str, Any], blocks: list[ContentBase], places: Mapping[str, int | None], path: str
    ) -> None:
        """A choice's ``logprobs`` as the tokens of its text blocks, or kept whole when they do not fit them."""
        placed: dict[int, list[TokenLogprob]] = {}
        for key, value in logprobs.items():
            if _nothing(value):
                continue
            where = places.get(key)
            tokens = _tokens_in(value) if where is not None else None
            if tokens is None or where is None:
                break
            placed[where] = tokens
        else:
            for where, tokens in placed.items():
                text = blocks[where]
                assert isinstance(text, TextContent)
                blocks[where] = TextContent(text.content, citations=text.citations, logprobs=tokens)
            return
        kept = self.keep(_at(path, "logprobs"), LOGPROBS_BLOCK, {"logprobs": logprobs}, sort=True)
        if kept is not None:
            blocks.append(kept)

    def tool_call(self, item: Any, path: str, position: int) -> ContentBase | None:
        if not isinstance(item, Mapping):
            self.add(path, "type", f"expected a tool call object, got {json_type(item)}")
            return None
        kind = self.string(item, "type", path)
        if kind is None:
            return None
        if kind != "function":
            if self.pass_through:
                kept = self.keep(path, TOOL_CALL_PREFIX + kind, item)
                call_id, body = item.get("id"), item.get(kind)
                name = body.get("name") if isinstance(body, Mapping) else None
                if isinstance(call_id, str):
                    self.calls[restore_id(call_id, self.id_map)] = (name if isinstance(name, str) else "", position)
                return kept
            rule = "unsupported" if kind in _TOOL_CALL_TYPES else "unknown_type"
            self.refuse(_at(path, "type"), rule, f"agentmsg has no {kind!r} tool call (known: function)")
            return None
        call_id = self.string(item, "id", path)
        if call_id is not None and not call_id:
            self.add(_at(path, "id"), "min_len", "the tool call id is empty")
            call_id = None
        function = self.obj(item, "function", path)
        if function is None:
            return None
        restored = restore_id(call_id, self.id_map) if call_id is not None else ""
        call = self.tool_call_body(function, _at(path, "function"), restored, position)
        if call is None or call_id is None:
            return None
        self.calls[call.id] = (call.name, position)
        return call

    def tool_call_body(
        self, function: Mapping[str, Any], path: str, call_id: str, position: int
    ) -> ToolCallContent | None:
        start = self.count()
        name = self.string(function, "name", path)
        if name is not None and not name:
            self.add(_at(path, "name"), "min_len", "the function name is empty")
        arguments = self.string(function, "arguments", path)
        if arguments is not None and not self.loose_args:
            _, reason = parse_json_object(arguments)
            if reason is not None:
                self.add(
                    _at(path, "arguments"),
                    "json",
                    f"the arguments are not a JSON object ({reason}); pass allow_invalid_arguments=True to keep them",
                )
        if name is None or arguments is None or not call_id or self.count() > start:
            return None
        call: ToolCallContent | None = None
        with self.building(path):
            call = ToolCallContent(call_id, name, arguments=arguments, index=position)
        return call

    # -- messages

    def tool_result(self, message: Mapping[str, Any], path: str) -> ToolResultContent | None:
        start = self.count()
        call_id = self.string(message, "tool_call_id", path)
        if call_id is not None and not call_id:
            self.add(_at(path, "tool_call_id"), "min_len", "the tool call id is empty")
        if "content" not in message:
            self.add(_at(path, "content"), "required", "required field 'content' is missing")
            return None
        texts = self.texts(message["content"], _at(path, "content"), "tool")
        if call_id is None or texts is None or self.count() > start:
            return None
        restored = restore_id(call_id, self.id_map)
        name, index = self.calls.get(restored, ("", 0))
        content: str | list[TextContent] = "" if message["content"] == "" else texts
        with self.building(path):
            return ToolResultContent(restored, content, name=name, index=index)
        return None

    def function_result(self, message: Mapping[str, Any], path: str, index: int) -> ToolResultContent | None:
        start = self.count()
        name = self.string(message, "name", path)
        if "content" not in message:
            self.add(_at(path, "content"), "required", "required field 'content' is missing (it may be null)")
        content = self.string(message, "content", path, required=False) or ""
        if name is None or self.count() > start:
            return None
        waiting = self.legacy is not None and self.legacy[1] == name
        call_id = self.legacy[0] if self.legacy is not None and waiting else f"function_call_{index}"
        self.legacy = None
        with self.building(path):
            return ToolResultContent(call_id, content, name=name)
        return None

    def name(self, message: Mapping[str, Any], path: str) -> str:
        return self.string(message, "name", path, required=False) or ""

    def read_message(self, message: Any, path: str, index: int) -> tuple[str, BaseMessage | None]:
        """(role, the agentmsg message); tool results come back as a ToolResultContent wrapped later."""
        if not isinstance(message, Mapping):
            self.add(path, "type", f"expected a message object, got {json_type(message)}")
            return "", None
        role = self.string(message, "role", path)
        if role is None:
            return "", None
        if role not in _ROLES:
            self.add(_at(path, "role"), "role", f"unknown role {role!r}; known: {', '.join(_ROLES)}")
            return role, None
        start = self.count()
        name = self.name(message, path) if role in ("developer", "system", "user", "assistant") else ""
        if role in ("developer", "system"):
            blocks = self.required_content(message, path, lambda value, where: self.texts(value, where, role))
            if blocks is None or self.count() > start:
                return role, None
            with self.building(path):
                return role, SystemMessage(blocks, name=name)  # type: ignore[arg-type]
            return role, None
        if role == "user":
            blocks = self.required_content(message, path, self.user_content)
            if blocks is None or self.count() > start:
                return role, None
            with self.building(path):
                return role, UserMessage(blocks, name=name)  # type: ignore[arg-type]
            return role, None
        if role == "assistant":
            if self.count() > start:
                return role, None
            return role, self.assistant(message, path, f"function_call_{index}", name=name)
        return role, None

    def required_content(
        self, message: Mapping[str, Any], path: str, read: Callable[[Any, str], Sequence[ContentBase] | None]
    ) -> list[ContentBase] | None:
        where = _at(path, "content")
        if message.get("content") is None:
            self.add(
                where, "required", "required field 'content' is missing" + (" (null)" if "content" in message else "")
            )
            return None
        blocks = read(message["content"], where)
        if blocks is None:
            return None
        if not blocks:
            self.add(where, "min_items", "agentmsg needs at least one content block (the array is empty)")
            return None
        return list(blocks)

    def user_content(self, value: Any, path: str) -> list[ContentBase] | None:
        if isinstance(value, str):
            block = self.text(value, path)
            return [block] if block is not None else None
        if not isinstance(value, list):
            self.add(path, "type", f"expected a string or an array of content parts, got {json_type(value)}")
            return None
        start = self.count()
        blocks = [self.user_part(part, f"{path}[{j}]") for j, part in enumerate(value)]
        if self.count() > start:
            return None
        return [block for block in blocks if block is not None]

    def assistant(
        self,
        message: Mapping[str, Any],
        path: str,
        legacy_id: str,
        *,
        name: str = "",
        finish: str | None = None,
        logprobs: Any = None,
        tail: Sequence[ContentBase] = (),
        **extra: Any,
    ) -> AssistantMessage | None:
        """An assistant message; ``finish`` (a response's finish_reason) and ``extra`` only for responses."""
        start = self.count()
        blocks, refused = self.assistant_blocks(message, path, legacy_id, logprobs)
        blocks += tail
        if self.count() > start:
            return None
        if refused:
            extra["stop_reason"] = StopReason.CONTENT_FILTER
        elif finish is not None:
            extra["stop_reason"] = _FINISH_TO_STOP.get(finish)
        if finish is not None:
            extra["stop_reason_raw"] = finish
        result: AssistantMessage | None = None
        with self.building(path):
            result = AssistantMessage(blocks, name=name, **extra)  # type: ignore[arg-type]
        found = self.errors.found
        for k in range(start, len(found)):
            if found[k].rule_id == f"{RULE}.assistant.content.required":
                reason = f"; the finish reason {finish!r} does not allow an empty response" if finish else ""
                found[k] = Violation(
                    _at(path, "content"),
                    f"{RULE}.required",
                    f"an assistant message needs content, a refusal or tool calls{reason}",
                )
        return result


def _messages_of(payload: Any) -> Any:
    if isinstance(payload, Mapping) and "messages" in payload:
        return payload["messages"]
    return payload


def from_openai_chat(
    payload: Iterable[Mapping[str, Any]] | Mapping[str, Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
    merge_tool_messages: bool = True,
    allow_invalid_arguments: bool = False,
) -> list[AgentMessage]:
    """Chat Completions request messages as agentmsg messages.

    ``payload`` is the ``messages`` list, or a whole request body (a mapping
    with ``messages``; its other keys are ignored); error paths start with
    ``messages`` either way. ``system`` and ``developer`` become
    SystemMessage; consecutive ``tool`` (and legacy ``function``) messages
    become one ToolMessage unless ``merge_tool_messages=False``. Tool-call ids
    are restored through ``id_map``. Raises :class:`~agentmsg.ValidationError`
    listing every problem (see the module docstring); nothing is returned
    unless the whole payload converts.
    """
    reader = _Reader(
        "OpenAI Chat Completions messages",
        id_map=id_map,
        pass_through=pass_through_unknown,
        loose_args=allow_invalid_arguments,
    )
    items = _messages_of(payload)
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        reader.add("messages", "type", f"expected an array of messages, got {json_type(items)}")
        reader.errors.raise_if_any()
    out: list[AgentMessage] = []
    results: list[ToolResultContent] = []

    def flush() -> None:
        if not results:
            return
        if merge_tool_messages:
            out.append(ToolMessage(list(results)))
        else:
            out.extend(ToolMessage([result]) for result in results)
        results.clear()

    for i, message in enumerate(items):
        path = f"messages[{i}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "tool":
            result = reader.tool_result(message, path)
        elif role == "function":
            result = reader.function_result(message, path, i)
        else:
            flush()
            _, converted = reader.read_message(message, path, i)
            if converted is not None:
                out.append(converted)  # type: ignore[arg-type]
            continue
        if result is not None:
            results.append(result)
    flush()
    reader.errors.raise_if_any()
    return out


def _usage_in(usage: Mapping[str, Any], path: str, reader: _Reader) -> Usage | None:
    start = reader.count()
    prompt = reader.count_field(usage, "prompt_tokens", path)
    completion = reader.count_field(usage, "completion_tokens", path)
    total = reader.count_field(usage, "total_tokens", path)
    cached = write = reasoning = None
    prompt_details = reader.obj(usage, "prompt_tokens_details", path, required=False)
    if prompt_details is not None:
        details_path = _at(path, "prompt_tokens_details")
        cached = reader.count_field(prompt_details, "cached_tokens", details_path)
        write = reader.count_field(prompt_details, "cache_write_tokens", details_path)
    completion_details = reader.obj(usage, "completion_tokens_details", path, required=False)
    if completion_details is not None:
        reasoning = reader.count_field(completion_details, "reasoning_tokens", _at(path, "completion_tokens_details"))
    input_tokens = None
    if prompt is not None:
        input_tokens = prompt - (cached or 0) - (write or 0)
        if input_tokens < 0:
            reader.add(
                _at(path, "prompt_tokens"),
                "usage",
                f"cached_tokens + cache_write_tokens ({(cached or 0) + (write or 0)}) exceed prompt_tokens ({prompt})",
            )
    if reader.count() > start:
        return None
    with reader.building(path):
        return Usage(
            input_tokens=input_tokens,
            output_tokens=completion,
            cache_read_tokens=cached,
            cache_write_tokens=write,
            reasoning_tokens=reasoning,
            total_tokens=total,
        )
    return None


def from_openai_chat_response(
    response: Mapping[str, Any],
    *,
    choice: int = 0,
    pass_through_unknown: bool = True,
) -> AssistantMessage:
    """A ``ChatCompletion`` (one of its choices, the first by default) as an AssistantMessage.

    Content, refusal (see the module docstring) and tool calls become blocks
    (arguments verbatim, even when not JSON); ``finish_reason`` gives the stop
    reason (``stop`` STOP, ``length`` LENGTH, ``tool_calls`` and
    ``function_call`` TOOL_CALLS, ``content_filter`` CONTENT_FILTER, anything
    else unspecified) and is kept verbatim as ``stop_reason_raw``; ``usage`` is
    normalised per usage.proto; ``model`` and ``id`` go to the provenance,
    ``created`` to the timestamp. URL-citation ``annotations`` and the
    choice's ``logprobs`` go on the text blocks; assistant ``audio``, other
    annotations and usage details agentmsg has no field for are kept as
    provider blocks (``pass_through_unknown=False`` refuses the first two).
    """
    reader = _Reader("OpenAI ChatCompletion", id_map=None, pass_through=pass_through_unknown, loose_args=True)
    if not isinstance(response, Mapping):
        reader.add("", "type", f"expected a ChatCompletion object, got {json_type(response)}")
        reader.errors.raise_if_any()
    obj = reader.string(response, "object", "", required=False)
    if obj is not None and obj != "chat.completion":
        reader.add("object", "enum", f"expected 'chat.completion', got {obj!r}")
    response_id = reader.string(response, "id", "", required=False) or ""
    model = reader.string(response, "model", "", required=False) or ""
    created = reader.field(response, "created", "", int, "an integer", required=False)
    choices = reader.array(response, "choices", "")
    extra: dict[str, Any] = {}
    if created is not None and not _MIN_SECONDS <= created <= _MAX_SECONDS:
        reader.add("created", "range", f"{created} is not a Unix time between the years 1 and 9999")
    elif created is not None:
        extra["timestamp"] = created
    usage = reader.obj(response, "usage", "", required=False)
    tail: list[ContentBase] = []
    if usage is not None:
        extra["usage"] = _usage_in(usage, "usage", reader)
        details = _usage_extras(usage)
        kept = reader.keep("usage", USAGE_BLOCK, details, sort=True) if details else None
        if kept is not None:
            tail.append(kept)
    for key in PROMPT_FILTER_KEYS:  # Azure OpenAI
        if not _nothing(response.get(key)):
            kept = reader.keep(key, RESPONSE_PREFIX + key, {key: response[key]}, sort=True)
            if kept is not None:
                tail.append(kept)
    result: AssistantMessage | None = None
    if choices is not None:
        path = f"choices[{choice}]"
        if not 0 <= choice < len(choices):
            reader.add("choices", "min_items", f"no choice {choice}: the response has {len(choices)}")
        elif not isinstance(choices[choice], Mapping):
            reader.add(path, "type", f"expected a choice object, got {json_type(choices[choice])}")
        else:
            picked = choices[choice]
            finish = reader.string(picked, "finish_reason", path, required=False)
            filters = picked.get(CONTENT_FILTER_KEY)
            if not _nothing(filters):  # Azure OpenAI
                kept = reader.keep(
                    _at(path, CONTENT_FILTER_KEY), CONTENT_FILTER_BLOCK, {CONTENT_FILTER_KEY: filters}, sort=True
                )
                if kept is not None:
                    tail.append(kept)
            # Azure: a choice its content filter stopped before any output has no message
            filtered = finish == "content_filter" and picked.get("message") is None
            message = {} if filtered else reader.obj(picked, "message", path)
            if message is not None:
                message_path = _at(path, "message")
                role = reader.string(message, "role", message_path, required=False)
                if role is not None and role != "assistant":
                    reader.add(_at(message_path, "role"), "role", f"expected 'assistant', got {role!r}")
                try:
                    extra["provenance"] = Provenance(PROVIDER, API, model, response_id)
                except ValidationError as exc:  # a lone surrogate in model or id
                    for violation in exc.violations:
                        reader.add(violation.field, violation.rule_id, violation.message)
                if reader.count() == 0:
                    result = reader.assistant(
                        message,
                        message_path,
                        "function_call_0",
                        finish=finish or "",
                        logprobs=picked.get("logprobs"),
                        tail=tail,
                        **extra,
                    )
    reader.errors.raise_if_any()
    assert result is not None
    return result
