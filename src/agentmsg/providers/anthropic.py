"""The Anthropic Messages API (``POST /v1/messages``), both directions, plus its response object.

Field names and shapes follow the Python SDK's request and response types
(``anthropic`` 2.11.0: ``MessageParam``, ``TextBlockParam``,
``ImageBlockParam``, ``DocumentBlockParam``, ``ThinkingBlockParam``,
``RedactedThinkingBlockParam``, ``ToolUseBlockParam``,
``ToolResultBlockParam``, ``Message``, ``Usage``, ``StopReason``) and the
platform documentation (Messages API reference; vision, PDF support,
extended thinking, tool use guides). No SDK is imported here: payloads are
plain dicts and lists, exactly as the HTTP API takes and gives them.

Mapping (agentmsg <-> format):

==============================  ===================================================================
agentmsg                        Anthropic Messages
==============================  ===================================================================
SystemMessage                   top-level ``system``: a list of ``text`` blocks (``system_as=
                                "blocks"``, the default) or one string (``system_as="string"``)
UserMessage                     a ``user`` turn
ToolMessage                     a ``user`` turn of ``tool_result`` blocks
AssistantMessage                an ``assistant`` turn
TextContent                     ``text`` {text}
ImageContent                    ``image`` {source: ``base64`` {media_type, data} | ``url`` {url} |
                                ``file`` {file_id}}
DocumentContent                 ``document`` {source, title?, context?}; source ``base64`` (PDF bytes),
                                ``text`` (text/plain data, a string), ``url`` (a PDF by URL) or
                                ``file`` {file_id}
ThinkingContent                 ``thinking`` {thinking, signature}
RedactedThinkingContent         ``redacted_thinking`` {data}
ToolCallContent                 ``tool_use`` {id, name, input}; ``input`` is the parsed arguments;
                                its other keys (``caller`` of programmatic tool calling) in
                                ``provider_extra``, written back as they were
ToolResultContent               ``tool_result`` {tool_use_id, content?, is_error?}; content is a
                                string when the result is one text block, else a list of
                                ``text`` / ``image`` / ``document`` blocks; left out when empty
ProviderContent (anthropic)     the block itself, verbatim; every block of a type this module does not
                                type is read so (``container_upload``, ``search_result``,
                                ``tool_reference`` in a ``tool_result``, ``tool_addition`` in a system
                                entry, a document with a ``content`` source...), in any role
HostedToolCallContent           ``server_tool_use`` {id, name, input} (kind from the name: web_search,
                                web_fetch, code_execution / bash_code_execution /
                                text_editor_code_execution, tool_search_tool_regex / _bm25, else
                                OTHER) and ``mcp_tool_use`` {id, name, server_name, input} (kind MCP,
                                ``server``); ``original`` is the block
HostedToolResultContent         ``*_tool_result`` {tool_use_id, content} with ``original`` the block:
                                ``web_search_tool_result`` -> search results (url, title, page_age,
                                encrypted_content); ``web_fetch_tool_result`` -> web fetch (url,
                                retrieved_at) and its document as DocumentContent;
                                ``code_execution_tool_result`` / ``bash_code_execution_tool_result``
                                -> code execution (stdout, stderr, return_code, output file ids,
                                encrypted_stdout); ``text_editor_code_execution_tool_result`` -> a
                                view's text as content; ``tool_search_tool_result`` -> its
                                ``tool_reference`` blocks as provider content; ``mcp_tool_result`` ->
                                text content and is_error; any ``*_error`` content -> is_error,
                                error_code, error_message
Citation (on TextContent)       text ``citations``: ``char_location`` / ``page_location`` /
                                ``content_block_location`` -> document (chars / pages / blocks),
                                ``web_search_result_location`` -> web, ``search_result_location`` ->
                                search result, another type -> its original alone; each keeps the
                                citation object as ``original``
Usage (response)                ``usage``: input_tokens, output_tokens,
                                cache_read_input_tokens -> cache_read_tokens,
                                cache_creation_input_tokens -> cache_write_tokens,
                                cache_creation.ephemeral_5m_input_tokens / ephemeral_1h_input_tokens
                                -> cache_write_5m_tokens / cache_write_1h_tokens,
                                server_tool_use.<tool>_requests -> hosted_tool_requests[<tool>],
                                output_tokens_details.thinking_tokens -> reasoning_tokens
stop_sequence (response)        ``stop_sequence`` (null: ``""``)
StopReason (response)           ``stop_reason``: end_turn, stop_sequence -> STOP; max_tokens,
                                model_context_window_exceeded -> LENGTH; tool_use -> TOOL_CALLS;
                                refusal -> CONTENT_FILTER; pause_turn and unknown values ->
                                unspecified (None); the string itself is ``stop_reason_raw``
Provenance (response)           ("anthropic", "anthropic-messages", ``model``, ``id``)
provider_extra (response)       every other key of the response object, verbatim, shaped as the
                                response (``container``, ``stop_details``, ``context_management``,
                                ``usage.iterations``, ``usage.fallback_credit``, keys this version
                                does not know): ``{"type": "message", ...}``, see "Response keys"
==============================  ===================================================================

Structure. The API takes alternating ``user`` / ``assistant`` turns and the
system prompt apart from them, so :func:`to_anthropic`

- hoists every system message of text, in order, into ``system``, wherever
  it stands in the conversation; a system message after the first turn is
  moved to the top and its place is reported as a ``Loss`` (the API's
  ``role: "system"`` entries inside ``messages``, "mid-conversation system
  messages", serve one model only). A system message holding other blocks
  (a ``tool_addition``, read from such an entry) can only be such an entry:
  it is written there, in place. With ``system_as="string"`` each message's
  text blocks are joined with ``""`` and the messages with ``"\\n\\n"``.
  ``system`` is left out when there is no system text;
- writes tool messages as ``user`` turns and merges consecutive messages of
  the same role into one turn (a tool message followed by a user message is
  one user turn, the ``tool_result`` blocks first, as the API wants them).

Reading, :func:`from_anthropic` turns the leading ``tool_result`` blocks of a
user turn into a :class:`~agentmsg.ToolMessage` and the rest of the turn into
a :class:`~agentmsg.UserMessage` (which keeps any later ``tool_result``
blocks), so ``from_anthropic(to_anthropic(m)) == m`` holds (ids and
timestamps aside) for conversations that answer tool calls with tool
messages. What the turn structure cannot give back: the split between
consecutive messages of one role (they read back as one message; two tool
messages in a row read back as one), the position of a later system message,
and a user message that starts with tool results (it reads back as a tool
message followed by a user message). A ``system`` list reads back as one
system message; a ``role: "system"`` entry inside ``messages`` (the SDK's
``SystemMessageParam``) is read as a system message in place. An empty system
prompt (``""`` or ``[]``) reads as no message. An assistant turn read from a
request has no provenance, except that a turn holding ``thinking`` or
``redacted_thinking`` (which only this API makes) gets
``Provenance("anthropic", "anthropic-messages")`` with no model, so its
reasoning may be sent back to any Anthropic model.

Other choices:

- Tool-call arguments: ``input`` is an object, so the argument text is parsed
  on the way out and serialised on the way in with :func:`input_json`
  (``json.dumps(input, ensure_ascii=False)``: Python's default separators
  ``", "`` and ``": "``, key order kept). Why that spelling: the stream gives
  the model's argument text itself (``input_json_delta`` fragments, which
  the stream parser keeps verbatim, as every parser does), and Anthropic
  spells it that way (``{"location": "San Francisco, CA", "unit": "celsius"}``
  in the streaming documentation), so the response reader and the stream
  fold give the same text for the same call; compact JSON would make them
  disagree on every call with an argument. Text written otherwise (no
  spaces, escapes, ``1e5``) does not come back byte for byte. The same holds
  for hosted tool ``input``. Arguments that are not a JSON object (or hold
  NaN or Infinity) are sent as ``{}`` and reported.
- Tool-call ids are rewritten to the pattern ``^[a-zA-Z0-9_-]+$`` (at most 64
  characters) by :class:`~agentmsg.providers._common.ToolIdMap`, the same way
  in ``tool_use.id`` and ``tool_result.tool_use_id``; the report's ``id_map``
  restores them (``from_anthropic(..., id_map=report.id_map)``).
- A tool call's ``index`` is its position among the message's tool calls.
  A tool result's ``name`` and ``index`` are those of the ``tool_use`` with
  its id earlier in the payload (``""`` and 0 when there is none), as the
  contract defines them (the answered call's name and position). Values
  that do not follow these rules are reported when written.
- Thinking: the API takes only signed thinking blocks it produced itself. A
  thinking block is sent with its signature when the message may replay
  (:func:`~agentmsg.providers._common.may_replay`: provenance
  anthropic / anthropic-messages, and the ``model`` given, if any) and has a
  signature; otherwise it is left out and reported (it is not sent unsigned,
  nor turned into text). Redacted thinking likewise.
- Media: an image URL's media type is not in the format; reading, it is
  guessed from the URL path as :meth:`~agentmsg.ImageContent.from_url` does.
  A document ``url`` source is a PDF: reading gives ``application/pdf``. A
  ``file`` source carries no media type: reading gives ``""``.
  A ``text/*`` document other than ``text/plain`` is sent as ``text/plain``
  (its media type reported).
- The API refuses empty text blocks: empty text is left out and reported, and
  a message left with no block at all is left out (an empty message is
  reported as such).
- Not carried and not reported, because no request format carries them and
  they are not meant for a model: message ids and timestamps; an assistant
  message's usage, stop reason, error and provenance (the response functions
  carry them) and its ``provider_extra``; tool-result ``metadata`` / ``terminate`` /
  ``terminate_message`` and tool-call ``metadata``.
- Responses: agentmsg needs a block in an assistant message that stopped
  normally, so a response with ``content: []`` (``end_turn`` after a tool
  result happens) reads as one empty text block, and
  :func:`to_anthropic_response` writes a lone empty text block as ``[]``.
- Hosted tools and citations go back exactly as read (``original``); those
  read from another format (no Anthropic original) cannot be sent to this API:
  a hosted tool block is reported, a typed document or search-result citation
  is projected to ``char_location`` / ``page_location`` /
  ``content_block_location`` / ``search_result_location``, and web and file
  citations (no ``encrypted_index``), a citation's span and confidence, and
  token logprobs are reported.
- Response keys. What the typed fields do not hold of a response object is
  kept in ``AssistantMessage.provider_extra``: one JSON object shaped like the
  response (top-level keys sorted, values verbatim, nulls left out), e.g.
  ``{"type": "message", "container": {"id": ..., "expires_at": ...},
  "stop_details": {"type": "refusal", "category": "cyber", ...}, "usage":
  {"iterations": [...]}}``; :func:`to_anthropic_response` merges it back
  (objects key by key, so ``usage.iterations`` joins the typed counts) and the
  response goes back exactly. Why there and not in typed fields: the code
  execution ``container`` (to send back as the next request's ``container``
  to reuse its files), a refusal's ``stop_details``, the per-step usage of
  compaction, advisor and fallback (``iterations``) and the
  ``context_management`` edits applied are this API's own, with no counterpart
  in another format; a field each would have one producer, while one verbatim
  block keeps every such key, those of later API versions too, as the
  provider's tool-call keys are kept (``ToolCallContent.provider_extra``).
  Not provenance: provenance says who made the message, these say what the
  API reported around it. Another format's response writer has no place for
  them. ``to_anthropic`` (a request) does not carry them, like provenance.
- Reading ignores fields agentmsg has no place for and that are request
  settings or routing and billing rather than message data: ``cache_control``,
  document ``citations`` (the request's citations switch), tool-use
  ``toolset_name``, and the usage fields ``service_tier``, ``inference_geo``,
  ``speed``.

Reported as lost by :func:`to_anthropic` (each with its input path, e.g.
``[3].contents[1]``): audio; images other than JPEG, PNG, GIF and WEBP
bytes; image ``detail``; a media type the format does not give back (on
image URLs and file sources, with parameters, or rewritten: ``image/jpg``,
``text/markdown`` sent as ``text/plain``); inline documents other than PDF
and UTF-8 ``text/*``; documents by URL that are not PDFs; a document
``filename``; text and tool-call signatures (Gemini); tool-call
``kind`` and ``server_name``; an ``index`` or tool-result ``name`` the rules
above do not give back; thinking and redacted thinking that may not replay;
arguments that are not a JSON object; empty text; empty messages; a message
``name``; provider blocks, hosted tool blocks and citations of another
provider (see above); token logprobs; the place of a system message after the
first turn; content and messages of kinds unknown to this version. :func:`to_anthropic_response` also reports token
counts it had to write as 0, ``total_tokens``, ``cost``, an ``error``, a stop
reason the format has no value for, a provenance of another provider, and
response keys (``provider_extra``) of another provider.

Reading errors are :class:`~agentmsg.ValidationError` naming the JSON path
(``messages[2].content[0].source.media_type``), every problem at once; rule
ids: ``anthropic.type``, ``anthropic.required``, ``anthropic.enum`` (role,
source type, media type), ``anthropic.unknown_type`` (a block type this
module does not know, only with ``pass_through_unknown=False``; by default
such a block is kept as a ProviderContent),
``anthropic.unsupported`` (a block agentmsg cannot hold in that role),
``anthropic.min_items`` (an empty content list), ``anthropic.base64``,
``anthropic.json``; values the agentmsg contract refuses keep the contract's
rule id (``string.min_len``, ``media``...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

from agentmsg import _media
from agentmsg.content import (
    AudioContent,
    Citation,
    CodeExecutionOutput,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    ImageContent,
    ProviderContent,
    RedactedThinkingContent,
    SearchResult,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
    WebFetchOutput,
    check_utf8,
)
from agentmsg.errors import MediaError, ValidationError
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
    ToolIdMap,
    json_type,
    llm_messages,
    may_replay,
    restore_id,
    split_media,
)
from agentmsg.usage import Usage

__all__ = [
    "API",
    "PROVIDER",
    "from_anthropic",
    "from_anthropic_response",
    "input_json",
    "read_block",
    "read_citation",
    "read_usage",
    "to_anthropic",
    "to_anthropic_response",
    "tool_use_extra",
]

PROVIDER: Final = "anthropic"
API: Final = "anthropic-messages"

SystemAs = Literal["blocks", "string"]
T = TypeVar("T")

_TARGET: Final = "Anthropic Messages"
IMAGE_MEDIA_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")
_IMAGE_ALIASES: Final[Mapping[str, str]] = {"image/jpg": "image/jpeg"}
_PDF: Final = "application/pdf"
_TEXT: Final = "text/plain"

STOP_REASONS: Final[Mapping[str, StopReason | None]] = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_CALLS,
    "refusal": StopReason.CONTENT_FILTER,
    "pause_turn": None,  # the turn is unfinished: send the response back as-is to continue
}
_STOP_OUT: Final[Mapping[StopReason, str]] = {
    StopReason.STOP: "end_turn",
    StopReason.LENGTH: "max_tokens",
    StopReason.TOOL_CALLS: "tool_use",
    StopReason.CONTENT_FILTER: "refusal",
}
# Stop reasons that let an assistant message have no content (see message.proto).
_MAY_BE_EMPTY: Final = (StopReason.LENGTH, StopReason.CONTENT_FILTER, StopReason.ABORT, StopReason.ERROR)

# Hosted (server) tools: the tool names of server_tool_use, and the result block types, by kind.
SERVER_TOOL_KINDS: Final[Mapping[str, HostedToolKind]] = {
    "web_search": HostedToolKind.WEB_SEARCH,
    "web_fetch": HostedToolKind.WEB_FETCH,
    "code_execution": HostedToolKind.CODE_EXECUTION,
    "bash_code_execution": HostedToolKind.CODE_EXECUTION,
    "text_editor_code_execution": HostedToolKind.CODE_EXECUTION,
    "tool_search_tool_regex": HostedToolKind.TOOL_SEARCH,
    "tool_search_tool_bm25": HostedToolKind.TOOL_SEARCH,
}
HOSTED_CALL_BLOCKS: Final = frozenset({"server_tool_use", "mcp_tool_use"})
HOSTED_RESULT_BLOCKS: Final[Mapping[str, HostedToolKind]] = {
    "web_search_tool_result": HostedToolKind.WEB_SEARCH,
    "web_fetch_tool_result": HostedToolKind.WEB_FETCH,
    "code_execution_tool_result": HostedToolKind.CODE_EXECUTION,
    "bash_code_execution_tool_result": HostedToolKind.CODE_EXECUTION,
    "text_editor_code_execution_tool_result": HostedToolKind.CODE_EXECUTION,
    "tool_search_tool_result": HostedToolKind.TOOL_SEARCH,
    "mcp_tool_result": HostedToolKind.MCP,
}
_CODE_RESULTS: Final = frozenset(
    {"code_execution_result", "bash_code_execution_result", "encrypted_code_execution_result"}
)
# usage.server_tool_use counters: "<tool>_requests" -> Usage.hosted_tool_requests["<tool>"].
_REQUESTS_SUFFIX: Final = "_requests"


def input_json(value: Mapping[str, Any], field: str = "input") -> str:
    """A ``tool_use`` / ``server_tool_use`` ``input`` object as argument text (``json.dumps``, default separators).

    Both readers give this text for the same call (see the module docstring, "Tool-call arguments").
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError.single(field, "json", f"not JSON-serialisable: {exc}") from None
    check_utf8(text, field)
    return text


_TOOL_USE_KEYS: Final = frozenset({"type", "id", "name", "input"})


def tool_use_extra(block: Mapping[str, Any]) -> ProviderContent | None:
    """A ``tool_use`` block's keys beyond id, name and input (``caller``), with its type; None when none."""
    extra = {key: value for key, value in block.items() if key not in _TOOL_USE_KEYS}
    if not extra:
        return None
    return ProviderContent.from_block(PROVIDER, {"type": block.get("type", "tool_use"), **extra})


# What the typed fields of a response hold, by key (a nested table: the keys of that object held; _COUNTS:
# the integer ``*_requests`` counts), plus usage keys that are routing and billing, not message data.
_COUNTS: Final = "counts"
USAGE_HELD: Final[Mapping[str, Any]] = {
    "input_tokens": None,
    "output_tokens": None,
    "cache_read_input_tokens": None,
    "cache_creation_input_tokens": None,
    "cache_creation": {"ephemeral_5m_input_tokens": None, "ephemeral_1h_input_tokens": None},
    "server_tool_use": _COUNTS,
    "output_tokens_details": {"thinking_tokens": None},
    "service_tier": None,
    "inference_geo": None,
    "speed": None,
}
RESPONSE_HELD: Final[Mapping[str, Any]] = {
    "id": None,
    "type": None,
    "role": None,
    "model": None,
    "content": None,
    "stop_reason": None,
    "stop_sequence": None,
    "usage": USAGE_HELD,
}


def extra_keys(obj: Mapping[str, Any], held: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a response object (or part of one) that ``held`` does not name, verbatim; nulls left out."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if value is None:
            continue  # null is absent, as everywhere in this module
        if key not in held:
            out[key] = value
            continue
        rule = held[key]  # None: the key is held whole
        if isinstance(rule, Mapping) and isinstance(value, Mapping):
            inner = extra_keys(value, rule)
            if inner:
                out[key] = inner
        elif rule == _COUNTS and isinstance(value, Mapping):
            inner = {
                k: v
                for k, v in value.items()
                if v is not None and not (k.endswith(_REQUESTS_SUFFIX) and type(v) is int)
            }
            if inner:
                out[key] = inner
    return out


def response_extra(keys: Mapping[str, Any]) -> ProviderContent | None:
    """The response keys no field holds as ``AssistantMessage.provider_extra`` (``type`` ``message``); None if none.

    The keys are put in sorted order (their values stay as they came): a stream gives them over several
    events, in another order than the response object, and both readers must give the same block.
    """
    if not keys:
        return None
    return ProviderContent.from_block(PROVIDER, {"type": "message", **{key: keys[key] for key in sorted(keys)}})


def merge_extra(into: dict[str, Any], keys: Mapping[str, Any]) -> None:
    """Merge response keys into a response object: objects key by key, anything else replaced."""
    for key, value in keys.items():
        here = into.get(key)
        if isinstance(here, dict) and isinstance(value, Mapping):
            merge_extra(here, value)
        else:
            into[key] = value


def _own_original(holder: Any) -> dict[str, Any] | None:
    """The ``original`` of a generated message when it is an Anthropic object (parsed), else None.

    Read straight from the generated message: the writer's hot path for hosted blocks and citations.
    """
    if not holder.HasField("original"):
        return None
    original = holder.original
    if original.provider != PROVIDER:
        return None
    value = json.loads(original.json)
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _base_type(media_type: str) -> str:
    """``image/PNG; x=y`` -> ``image/png``."""
    return media_type.split(";", 1)[0].strip().lower()


def _parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Argument text as a JSON object: (value, None) or (None, why not). Blank text is ``{}``."""
    if text.strip() == "":
        return {}, None

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        value = json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"a JSON {json_type(value)} is not an object"
    return value, None


# --------------------------------------------------------------------------- agentmsg -> format


class _Writer:
    """Turns agentmsg blocks into format blocks, reporting what it leaves out."""

    def __init__(self, reporter: Reporter, ids: ToolIdMap, model: str | None, *, response: bool = False) -> None:
        self.reporter = reporter
        self.ids = ids
        self.model = model
        self.response = response
        self.calls: dict[str, tuple[str, int]] = {}  # original call id -> (name, position): what reading gives
        # The reporter's own method, bound once: a loss is recorded on the conversion's hot path.
        self.loss = reporter.loss

    # -- one message's blocks

    def blocks(self, message: BaseMessage, path: str) -> list[dict[str, Any]]:
        replay = isinstance(message, AssistantMessage) and may_replay(message.provenance, PROVIDER, API, self.model)
        out: list[dict[str, Any]] = []
        calls = 0
        for j, block in enumerate(message.contents):
            where = f"{path}.contents[{j}]" if path else f"contents[{j}]"
            item: dict[str, Any] | None
            if isinstance(block, ToolCallContent):
                item = self.tool_call(block, where, calls)
                calls += 1
            elif isinstance(block, ToolResultContent):
                item = self.tool_result(block, where)
            elif isinstance(block, ThinkingContent):
                item = self.thinking(block, where, replay)
            elif isinstance(block, RedactedThinkingContent):
                item = self.redacted(block, where, replay)
            elif isinstance(block, (HostedToolCallContent, HostedToolResultContent)):
                item = self.hosted(block, where)
            else:
                out.extend(
                    converted
                    for piece_path, piece in split_media(block, where, self.reporter)
                    if (converted := self.media_or_text(piece, piece_path)) is not None
                )
                continue
            if item is not None:
                out.append(item)
        return out

    def media_or_text(self, block: ContentBase, path: str) -> dict[str, Any] | None:
        """Text, image, document, provider and unknown blocks (also inside tool results)."""
        if isinstance(block, TextContent):
            return self.text(block, path)
        if isinstance(block, ImageContent):
            return self.image(block, path)
        if isinstance(block, DocumentContent):
            return self.document(block, path)
        if isinstance(block, AudioContent):
            self.loss(path, "audio", "the Messages API takes no audio")
            return None
        if isinstance(block, ProviderContent):
            if block.provider == PROVIDER:
                return block.block()
            self.loss(path, f"{block.provider} block {block.block_type!r}", "it goes back only to its own provider")
            return None
        if isinstance(block, ToolApprovalContent):
            self.loss(
                path,
                "tool approval",
                "the Messages API has no approval block; a denial reaches the model as the call's error tool_result",
            )
            return None
        self.loss(path, "content of a kind this agentmsg version does not know", "nothing to write it as")
        return None

    def text(self, block: TextContent, path: str) -> dict[str, Any] | None:
        if block.signature:
            self.loss(f"{path}.signature", "text signature", "text blocks carry no signature in this format")
        if not block.content and not self.response:
            self.loss(path, "empty text block", "the API refuses empty text blocks")
            return None
        item: dict[str, Any] = {"type": "text", "text": block.content}
        arm = block.pb.text
        if arm.citations:
            citations = [
                written
                for k, citation in enumerate(block.citations)
                if (written := self.citation(citation, f"{path}.citations[{k}]")) is not None
            ]
            if citations:
                item["citations"] = citations
        if arm.logprobs:
            self.loss(f"{path}.logprobs", "token logprobs", "the format has no logprobs")
        return item

    def citation(self, citation: Citation, path: str) -> dict[str, Any] | None:
        """A citation: its Anthropic original as is; a typed document or search-result citation projected."""
        own = _own_original(citation.pb)
        if own is not None:
            return own
        source_kind = citation.source_kind
        # Only the kinds the format can hold need their location (web and file citations go straight to a loss).
        where = citation.location if source_kind in ("document", "search_result") else None
        out: dict[str, Any] | None = None
        if source_kind == "document" and where is not None:
            kind, first, last = {
                "chars": ("char_location", "start_char_index", "end_char_index"),
                "pages": ("page_location", "start_page_number", "end_page_number"),
                "blocks": ("content_block_location", "start_block_index", "end_block_index"),
            }[where[0]]
            out = {
                "type": kind,
                "cited_text": citation.cited_text,
                "document_index": citation.document_index,
                "document_title": citation.title or None,
                first: where[1],
                last: where[2],
            }
            if citation.file_id:
                self.loss(f"{path}.file_id", "the cited document's file id", "a request citation has no file id")
        elif source_kind == "search_result" and where is not None and citation.search_result_index is not None:
            out = {
                "type": "search_result_location",
                "cited_text": citation.cited_text,
                "search_result_index": citation.search_result_index,
                "source": citation.source,
                "title": citation.title or None,
                "start_block_index": where[1],
                "end_block_index": where[2],
            }
        if out is None:
            why = (
                "a web citation needs the encrypted_index only Anthropic's own citation has"
                if source_kind == "web"
                else "the format has no citation of this kind (or it lacks the location the format requires)"
            )
            self.loss(path, f"{source_kind or 'provider'} citation", why)
            return None
        if citation.start_index is not None or citation.end_index is not None:
            self.loss(f"{path}.start_index", "the cited span", "the format's citations cover the whole text block")
        if citation.confidence is not None:
            self.loss(f"{path}.confidence", "citation confidence", "the format has no citation confidence")
        return out

    def hosted(self, block: HostedToolCallContent | HostedToolResultContent, path: str) -> dict[str, Any] | None:
        """A hosted tool block goes back as the Anthropic block it was read from, and only as that."""
        holder = getattr(block.pb, block.type or "")
        own = _own_original(holder)
        if own is not None:
            return own
        # The generated message is read directly (no wrapper copies): this is the loss path of every
        # hosted block from another provider, on the conversion hot path.
        what = "hosted tool call" if isinstance(block, HostedToolCallContent) else "hosted tool result"
        why = (
            f"it ran at {holder.original.provider} and goes back only there"
            if holder.HasField("original")
            else "the format takes a server tool block only as Anthropic returned it (it has no Anthropic original)"
        )
        self.loss(path, f"{what} {holder.name or block.kind or ''}".rstrip(), why)
        return None

    def image(self, block: ImageContent, path: str) -> dict[str, Any] | None:
        if block.detail is not None:
            self.loss(f"{path}.detail", f"image detail {block.detail.value!r}", "the format has no image detail")
        source: dict[str, Any]
        if block.data is not None:
            media_type = _IMAGE_ALIASES.get(_base_type(block.media_type), _base_type(block.media_type))
            if media_type not in IMAGE_MEDIA_TYPES:
                self.loss(path, f"image ({block.media_type})", "the format takes JPEG, PNG, GIF and WEBP images only")
                return None
            if media_type != block.media_type:
                self.loss(f"{path}.media_type", f"media type {block.media_type!r}", f"written as {media_type!r}")
            source = {"type": "base64", "media_type": media_type, "data": _media.encode_base64(block.data)}
        elif block.url is not None:
            if block.media_type != _media.guess_from_path(block.url, "image/"):
                self.loss(
                    f"{path}.media_type",
                    f"media type {block.media_type!r}",
                    "a URL image has no media type in the format (reading guesses it from the URL path)",
                )
            source = {"type": "url", "url": block.url}
        else:
            source = {"type": "file", "file_id": block.file_id}
            self._file_media_type(block.media_type, path)
        return {"type": "image", "source": source}

    def _file_media_type(self, media_type: str, path: str) -> None:
        if media_type:
            self.loss(f"{path}.media_type", f"media type {media_type!r}", "a file source has no media type")

    def document(self, block: DocumentContent, path: str) -> dict[str, Any] | None:
        base = _base_type(block.media_type)
        source: dict[str, Any]
        if block.data is not None:
            if base == _PDF:
                source = {"type": "base64", "media_type": _PDF, "data": _media.encode_base64(block.data)}
            elif base.startswith("text/"):
                try:
                    text = block.data.decode("utf-8")
                except UnicodeDecodeError:
                    self.loss(path, f"document ({block.media_type})", "a text document must be UTF-8 text")
                    return None
                source = {"type": "text", "media_type": _TEXT, "data": text}
            else:
                self.loss(path, f"document ({block.media_type})", "the format takes PDF and plain-text documents only")
                return None
            if source["media_type"] != block.media_type:
                self.loss(
                    f"{path}.media_type", f"media type {block.media_type!r}", f"written as {source['media_type']!r}"
                )
        elif block.url is not None:
            if block.media_type and base != _PDF:
                self.loss(path, f"document by URL ({block.media_type})", "the format's URL documents are PDFs")
                return None
            if block.media_type not in ("", _PDF):
                self.loss(f"{path}.media_type", f"media type {block.media_type!r}", f"written as {_PDF!r}")
            source = {"type": "url", "url": block.url}
        else:
            source = {"type": "file", "file_id": block.file_id}
            self._file_media_type(block.media_type, path)
        if block.filename:
            self.loss(f"{path}.filename", f"file name {block.filename!r}", "the format has no document file name")
        item: dict[str, Any] = {"type": "document", "source": source}
        if block.title:
            item["title"] = block.title
        if block.context:
            item["context"] = block.context
        return item

    def thinking(self, block: ThinkingContent, path: str, replay: bool) -> dict[str, Any] | None:
        if replay and block.signature:
            return {"type": "thinking", "thinking": block.content, "signature": block.signature}
        why = (
            "the block has no signature, and the API takes only signed thinking"
            if replay
            else "its signature may not be replayed here (provenance or model differs), "
            "and the API takes only signed thinking"
        )
        self.loss(path, "thinking", why)
        return None

    def redacted(self, block: RedactedThinkingContent, path: str, replay: bool) -> dict[str, Any] | None:
        if replay:
            return {"type": "redacted_thinking", "data": block.data}
        self.loss(path, "redacted thinking", "it may be sent back only to the provider, API and model that made it")
        return None

    def tool_call(self, block: ToolCallContent, path: str, position: int) -> dict[str, Any]:
        self.calls.setdefault(block.id, (block.name, position))
        value, error = _parse_arguments(block.arguments)
        if value is None:
            self.loss(f"{path}.arguments", "tool-call arguments", f"not a JSON object ({error}); {{}} sent instead")
            value = {}
        if block.kind is not None:
            self.loss(f"{path}.kind", f"tool kind {block.kind.value!r}", "the format has no tool kind")
        if block.signature:
            self.loss(f"{path}.signature", "tool-call signature", "tool_use blocks carry no signature")
        if block.server_name:
            self.loss(f"{path}.server_name", f"server name {block.server_name!r}", "tool_use has no server name")
        if block.index != position:
            self.loss(f"{path}.index", f"index {block.index}", f"the format numbers calls by position ({position})")
        item: dict[str, Any] = {"type": "tool_use", "id": self.ids(block.id), "name": block.name, "input": value}
        extra = block.provider_extra
        if extra is not None and extra.provider == PROVIDER:
            item.update((key, v) for key, v in extra.block().items() if key not in _TOOL_USE_KEYS)
        elif extra is not None:
            self.loss(
                f"{path}.provider_extra", f"{extra.provider} tool-call fields", "they go back only to their provider"
            )
        return item

    def tool_result(self, block: ToolResultContent, path: str) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.ids(block.id)}
        content: list[dict[str, Any]] = []
        for k, inner in enumerate(block.blocks):
            for piece_path, piece in split_media(inner, f"{path}.content[{k}]", self.reporter):
                converted = self.media_or_text(piece, piece_path)
                if converted is not None:
                    content.append(converted)
        if len(content) == 1 and content[0]["type"] == "text":
            item["content"] = content[0]["text"]
        elif content:
            item["content"] = content
        if block.is_error:
            item["is_error"] = True
        name, position = self.calls.get(block.id, ("", 0))
        if block.name and block.name != name:
            self.loss(
                f"{path}.name",
                f"tool name {block.name!r}",
                "tool_result has no name; reading takes the name of the earlier tool_use with its id",
            )
        if block.index != position:
            self.loss(
                f"{path}.index",
                f"index {block.index}",
                f"tool_result has no index; reading takes the position of the answered tool_use ({position})",
            )
        return item


def to_anthropic(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
    system_as: SystemAs = "blocks",
) -> dict[str, Any]:
    """Messages as the ``system`` and ``messages`` parameters of a Messages API request.

    Returns ``{"system": ..., "messages": [...]}`` (``system`` left out when
    there is no system text); add ``model``, ``max_tokens`` and the rest
    yourself. ``model`` names the target model for the replay rule of
    thinking signatures. What the format cannot hold is reported (see the
    module docstring): into ``report``, as a
    :class:`~agentmsg.providers._common.ConversionError` with ``strict=True``,
    or as one warning.
    """
    if system_as not in ("blocks", "string"):
        raise ValidationError.single("system_as", "enum", f"{system_as!r} is not one of: blocks, string")
    reporter = Reporter(_TARGET, report, strict=strict)
    writer = _Writer(reporter, ToolIdMap(report=reporter.report), model)
    system: list[list[dict[str, Any]]] = []
    turns: list[dict[str, Any]] = []
    for path, message, _projected in llm_messages(messages, session_messages):
        if isinstance(message, SystemMessage):
            role = "system"
        elif isinstance(message, (UserMessage, ToolMessage)):
            role = "user"
        elif isinstance(message, AssistantMessage):
            role = "assistant"
        else:
            reporter.loss(path, "message of a role this agentmsg version does not know", "nothing to write it as")
            continue
        if message.name:
            reporter.loss(f"{path}.name", f"participant name {message.name!r}", "the format has no message name")
        blocks = writer.blocks(message, path)
        if role == "system" and any(block.get("type") != "text" for block in blocks):
            # Blocks other than text (tool_addition) exist only in a system entry of `messages`: write it there.
            turns.append({"role": "system", "content": blocks})
            continue
        if role == "system":
            if blocks and turns:
                reporter.loss(
                    path,
                    "the system message's place in the conversation",
                    "the format's system prompt is the top-level `system`: the message is moved before every turn",
                )
            if blocks:
                system.append(blocks)
            continue
        if not blocks:
            if not message.contents:
                reporter.loss(path, f"empty {role} message", "the API refuses messages with no content")
            continue
        if turns and turns[-1]["role"] == role and role != "system":
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    reporter.finish()
    payload: dict[str, Any] = {}
    if system:
        if system_as == "string":
            payload["system"] = "\n\n".join("".join(block["text"] for block in blocks) for blocks in system)
        else:
            payload["system"] = [block for blocks in system for block in blocks]
    payload["messages"] = turns
    return payload


def to_anthropic_response(
    message: AssistantMessage,
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """An assistant message as a Messages API response object (``{"type": "message", ...}``).

    ``id`` and ``model`` come from the provenance (``model`` fills in a missing
    model name and names the target of the replay rule). The API's required
    ``usage.input_tokens`` / ``output_tokens`` are written as 0 when unknown,
    and reported. A message whose only block is an empty text is written with
    ``content: []`` (the inverse of :func:`from_anthropic_response`).
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    reporter = Reporter(_TARGET, report, strict=strict)
    writer = _Writer(reporter, ToolIdMap(report=reporter.report), model, response=True)
    provenance = message.provenance
    if message.name:
        reporter.loss("name", f"participant name {message.name!r}", "the format has no message name")
    if provenance is not None and (provenance.provider, provenance.api) != (PROVIDER, API):
        reporter.loss(
            "provenance",
            f"provenance {provenance.provider}/{provenance.api}",
            "an Anthropic response reads back as anthropic/anthropic-messages",
        )
    contents = message.contents
    if len(contents) == 1 and contents[0] == TextContent(""):
        blocks: list[dict[str, Any]] = []  # what from_anthropic_response reads an empty response as
    else:
        blocks = writer.blocks(message, "")
    stop_reason: str | None
    if message.stop_reason_raw in STOP_REASONS:
        stop_reason = message.stop_reason_raw
    else:
        stop_reason = _STOP_OUT.get(message.stop_reason) if message.stop_reason is not None else None
        if message.stop_reason_raw:
            reporter.loss("stop_reason_raw", f"stop reason {message.stop_reason_raw!r}", "not a value of this format")
        elif message.stop_reason is not None and stop_reason is None:
            reporter.loss("stop_reason", f"stop reason {message.stop_reason.value!r}", "the format has no such value")
    if message.error:
        reporter.loss("error", "error text", "the response object has no error field")
    usage = _usage_out(message.usage, reporter)
    out: dict[str, Any] = {
        "id": provenance.response_id if provenance is not None else "",
        "type": "message",
        "role": "assistant",
        "model": (provenance.model if provenance is not None else "") or model or "",
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": message.stop_sequence or None,
        "usage": usage,
    }
    extra = message.provider_extra
    if extra is not None and (extra.provider, extra.block_type) == (PROVIDER, "message"):
        merge_extra(out, {key: value for key, value in extra.block().items() if key != "type"})
    elif extra is not None:
        reporter.loss(
            "provider_extra",
            f"{extra.provider} response keys ({extra.block_type})",
            "they go back only to their own format",
        )
    reporter.finish()
    return out


def _usage_out(usage: Usage | None, reporter: Reporter) -> dict[str, Any]:
    if usage is None:
        reporter.loss("usage", "unknown usage", "the format requires token counts; 0 written")
        return {"input_tokens": 0, "output_tokens": 0}
    out: dict[str, Any] = {}
    for ours, theirs in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens")):
        value = usage.known(ours)
        if value is None:
            reporter.loss(f"usage.{ours}", f"unknown {ours}", "the format requires it; 0 written")
        out[theirs] = value or 0
    if "cache_write_tokens" in usage.reported:
        out["cache_creation_input_tokens"] = usage.cache_write_tokens
    if "cache_read_tokens" in usage.reported:
        out["cache_read_input_tokens"] = usage.cache_read_tokens
    if "reasoning_tokens" in usage.reported:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    cache = {
        theirs: usage.known(ours)
        for ours, theirs in (
            ("cache_write_5m_tokens", "ephemeral_5m_input_tokens"),
            ("cache_write_1h_tokens", "ephemeral_1h_input_tokens"),
        )
        if ours in usage.reported
    }
    if cache:
        out["cache_creation"] = cache
    if usage.hosted_tool_requests:
        out["server_tool_use"] = {
            f"{key}{_REQUESTS_SUFFIX}": count for key, count in usage.hosted_tool_requests.items()
        }
    if "total_tokens" in usage.reported:
        reporter.loss("usage.total_tokens", "total_tokens", "the format reports no total")
    if "cost" in usage.reported:
        reporter.loss("usage.cost", "cost", "the format reports no cost")
    return out


# --------------------------------------------------------------------------- format -> agentmsg


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Reader:
    """Reads format blocks into agentmsg blocks, recording every problem with its JSON path."""

    def __init__(self, errors: PayloadErrors, id_map: Mapping[str, str] | None, pass_through: bool) -> None:
        self.errors = errors
        self.id_map = id_map
        self.pass_through = pass_through
        self.calls: dict[str, tuple[str, int]] = {}  # restored call id -> (tool name, position in its message)

    def add(self, path: str, rule: str, message: str) -> None:
        self.errors.add(path, f"anthropic.{rule}", message)

    # -- field readers

    def field(self, obj: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...], what: str) -> Any:
        """A required field of a JSON type (None, recorded, when missing or mistyped)."""
        where = _at(path, key)
        if key not in obj:
            self.add(where, "required", f"{key!r} is required")
            return None
        return self.check(obj[key], where, kind, what)

    def optional(self, obj: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...], what: str) -> Any:
        """An optional field (absent or null: None)."""
        if obj.get(key) is None:
            return None
        return self.check(obj[key], _at(path, key), kind, what)

    def check(self, value: Any, path: str, kind: type | tuple[type, ...], what: str) -> Any:
        is_bool = isinstance(value, bool)
        wants_bool = kind is bool or (isinstance(kind, tuple) and bool in kind)
        if not isinstance(value, kind) or (is_bool and not wants_bool):
            self.add(path, "type", f"expected {what}, got {json_type(value)}")
            return None
        return value

    def build(self, path: str, make: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """Call an agentmsg constructor; its errors are recorded at ``path``."""
        with self.errors.building(path):
            return make(*args, **kwargs)
        return None

    def base64(self, source: Mapping[str, Any], path: str, what: str) -> bytes | None:
        text = self.field(source, "data", path, str, "a base64 string")
        if text is None:
            return None
        try:
            return _media.decode_base64(text, what)
        except MediaError as exc:
            self.add(_at(path, "data"), "base64", str(exc))
            return None

    # -- content lists

    def content(self, value: Any, path: str, role: str) -> list[ContentBase] | None:
        """A message's ``content``: a string (one text block) or a list of blocks."""
        if isinstance(value, str):
            text = self.build(path, TextContent, value)
            return [text] if text is not None else None
        if not isinstance(value, list):
            self.add(path, "type", f"expected a string or an array of content blocks, got {json_type(value)}")
            return None
        if not value:
            self.add(path, "min_items", "an empty content list: agentmsg messages need at least one block")
            return None
        blocks: list[ContentBase] = []
        calls = 0
        ok = True
        for j, item in enumerate(value):
            block = self.block(item, f"{path}[{j}]", role, calls)
            if block is None:
                ok = False
                continue
            blocks.append(block)
            calls += isinstance(block, ToolCallContent)
        return blocks if ok else None

    def block(self, item: Any, path: str, role: str, index: int) -> ContentBase | None:
        if not isinstance(item, Mapping):
            self.add(path, "type", f"expected a content block (an object), got {json_type(item)}")
            return None
        kind = self.field(item, "type", path, str, "a string")
        if kind is None:
            return None
        allowed = _ROLE_BLOCKS[role]
        if kind in _KNOWN_BLOCKS and kind not in allowed:
            self.add(
                _at(path, "type"),
                "unsupported",
                f"a {kind!r} block in a {role} turn: agentmsg's {role} role cannot hold it",
            )
            return None
        if kind == "text":
            text = self.field(item, "text", path, str, "a string")
            citations = self.citations(item.get("citations"), _at(path, "citations"))
            if text is None or citations is None:
                return None
            return self.build(path, TextContent, text, citations=citations)
        if kind == "image":
            return self.image(item, path)
        if kind == "document":
            return self.document(item, path, role)
        if role == "assistant" and kind in HOSTED_CALL_BLOCKS:
            return self.hosted_call(item, path, kind)
        if role == "assistant" and kind in HOSTED_RESULT_BLOCKS:
            return self.hosted_result(item, path, kind)
        if kind == "thinking":
            thinking = self.field(item, "thinking", path, str, "a string")
            signature = self.field(item, "signature", path, str, "a string")
            if thinking is None or signature is None:
                return None
            return self.build(path, ThinkingContent, thinking, signature)
        if kind == "redacted_thinking":
            data = self.field(item, "data", path, str, "a string")
            return None if data is None else self.build(path, RedactedThinkingContent, data)
        if kind == "tool_use":
            return self.tool_use(item, path, index)
        if kind == "tool_result":
            return self.tool_result(item, path)
        return self.unknown(item, path, role, f"a block of type {kind!r}")

    def unknown(self, item: Mapping[str, Any], path: str, role: str, what: str) -> ContentBase | None:
        # Every role a provider block may sit in (system, user, assistant, tool result content) keeps it.
        if self.pass_through:
            return self.build(path, ProviderContent.from_block, PROVIDER, item)
        rule = "unknown_type" if _str(item.get("type")) not in _KNOWN_BLOCKS else "unsupported"
        self.add(
            _at(path, "type"),
            rule,
            f"{what} has no agentmsg kind here (pass_through_unknown=False refuses it; the default keeps it "
            "as a provider block)",
        )
        return None

    # -- citations

    def citations(self, value: Any, path: str) -> list[Citation] | None:
        """A text block's ``citations`` (absent or null: none)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(path, "type", f"expected an array of citations, got {json_type(value)}")
            return None
        out: list[Citation] = []
        ok = True
        for k, item in enumerate(value):
            where = f"{path}[{k}]"
            if not isinstance(item, Mapping):
                self.add(where, "type", f"expected a citation (an object), got {json_type(item)}")
                ok = False
                continue
            citation = self.build(where, _citation, item)
            if citation is None:
                ok = False
            else:
                out.append(citation)
        return out if ok else None

    # -- hosted (server) tools

    def hosted_call(self, item: Mapping[str, Any], path: str, kind: str) -> ContentBase | None:
        """``server_tool_use`` / ``mcp_tool_use``: typed fields, and the block verbatim as ``original``."""
        call_id = self.field(item, "id", path, str, "a string")
        name = self.field(item, "name", path, str, "a string")
        value = self.field(item, "input", path, Mapping, "an object")
        server = self.optional(item, "server_name", path, str, "a string") or ""
        arguments: str | None = None
        if value is not None:
            try:
                arguments = input_json(value)
            except ValidationError as exc:
                self.add(_at(path, "input"), "json", exc.violations[0].message)
        if call_id is None or name is None or arguments is None:
            return None
        hosted = HostedToolKind.MCP if kind == "mcp_tool_use" else SERVER_TOOL_KINDS.get(name, HostedToolKind.OTHER)
        original = self.build(path, ProviderContent.from_block, PROVIDER, item)
        if original is None:
            return None
        return self.build(
            path, HostedToolCallContent, call_id, name, arguments, kind=hosted, server=server, original=original
        )

    def hosted_result(self, item: Mapping[str, Any], path: str, kind: str) -> ContentBase | None:
        """A ``*_tool_result`` block: the typed outcome where its shape is known, and the block verbatim."""
        original = self.build(path, ProviderContent.from_block, PROVIDER, item)
        if original is None:
            return None
        call_id = self.optional(item, "tool_use_id", path, str, "a string") or ""
        return self.build(path, _hosted_result, call_id, kind, item.get("content"), item, original)

    # -- media

    def image(self, item: Mapping[str, Any], path: str) -> ContentBase | None:
        where = _at(path, "source")
        source = self.field(item, "source", path, Mapping, "an object")
        if source is None:
            return None
        kind = self.field(source, "type", where, str, "a string")
        if kind == "base64":
            media_type = self.field(source, "media_type", where, str, "a string")
            if media_type is not None and media_type not in IMAGE_MEDIA_TYPES:
                self.add(
                    _at(where, "media_type"), "enum", f"{media_type!r} is not one of: {', '.join(IMAGE_MEDIA_TYPES)}"
                )
                media_type = None
            data = self.base64(source, where, "image")
            if media_type is None or data is None:
                return None
            return self.build(where, ImageContent, data, media_type=media_type)
        if kind == "url":
            url = self.field(source, "url", where, str, "a string")
            return None if url is None else self.build(where, ImageContent.from_url, url)
        if kind == "file":
            file_id = self.field(source, "file_id", where, str, "a string")
            return None if file_id is None else self.build(where, ImageContent.from_file_id, file_id)
        if kind is not None:
            self.add(_at(where, "type"), "enum", f"{kind!r} is not one of: base64, url, file")
        return None

    def document(self, item: Mapping[str, Any], path: str, role: str) -> ContentBase | None:
        block = self.document_source(item, path, role)
        context = self.optional(item, "context", path, str, "a string")
        if context and isinstance(block, DocumentContent):
            return block.with_context(context)
        return block

    def document_source(self, item: Mapping[str, Any], path: str, role: str) -> ContentBase | None:
        where = _at(path, "source")
        source = self.field(item, "source", path, Mapping, "an object")
        title = self.optional(item, "title", path, str, "a string")
        if source is None:
            return None
        title = title or ""
        kind = self.field(source, "type", where, str, "a string")
        if kind in ("base64", "text"):
            expected = _PDF if kind == "base64" else _TEXT
            media_type = self.field(source, "media_type", where, str, "a string")
            if media_type is not None and media_type != expected:
                self.add(_at(where, "media_type"), "enum", f"a {kind} document source takes {expected!r}")
                media_type = None
            if kind == "base64":
                data = self.base64(source, where, "document")
                if media_type is None or data is None:
                    return None
                return self.build(where, DocumentContent, data, media_type=_PDF, title=title)
            text = self.field(source, "data", where, str, "a string")
            if media_type is None or text is None:
                return None
            return self.build(where, DocumentContent.from_text, text, title=title)
        if kind == "url":
            url = self.field(source, "url", where, str, "a string")
            if url is None:
                return None
            return self.build(where, DocumentContent.from_url, url, media_type=_PDF, title=title)
        if kind == "file":
            file_id = self.field(source, "file_id", where, str, "a string")
            if file_id is None:
                return None
            return self.build(where, DocumentContent.from_file_id, file_id, title=title)
        if kind == "content":
            return self.unknown(item, path, role, "a document with a content source")
        if kind is not None:
            self.add(_at(where, "type"), "enum", f"{kind!r} is not one of: base64, text, content, url, file")
        return None

    # -- tools

    def tool_use(self, item: Mapping[str, Any], path: str, index: int) -> ContentBase | None:
        call_id = self.field(item, "id", path, str, "a string")
        name = self.field(item, "name", path, str, "a string")
        value = self.field(item, "input", path, Mapping, "an object")
        arguments: str | None = None
        if value is not None:
            try:
                arguments = input_json(value)
            except ValidationError as exc:
                self.add(_at(path, "input"), "json", exc.violations[0].message)
        if call_id is None or name is None or arguments is None:
            return None
        original = restore_id(call_id, self.id_map)
        self.calls.setdefault(original, (name, index))
        extra = self.build(path, tool_use_extra, item)
        return self.build(path, ToolCallContent, original, name, arguments=arguments, index=index, provider_extra=extra)

    def tool_result(self, item: Mapping[str, Any], path: str) -> ContentBase | None:
        call_id = self.field(item, "tool_use_id", path, str, "a string")
        is_error = self.optional(item, "is_error", path, bool, "a boolean")
        raw = item.get("content")
        where = _at(path, "content")
        content: list[ContentBase] | None = []
        if isinstance(raw, str):
            content = [TextContent(raw)] if raw else []
        elif isinstance(raw, list):
            for k, inner in enumerate(raw):
                block = self.result_block(inner, f"{where}[{k}]")
                if block is None:
                    content = None
                elif content is not None:
                    content.append(block)
        elif raw is not None:
            self.add(where, "type", f"expected a string or an array of content blocks, got {json_type(raw)}")
            content = None
        if call_id is None or content is None:
            return None
        original = restore_id(call_id, self.id_map)
        name, index = self.calls.get(original, ("", 0))
        return self.build(path, ToolResultContent, original, content, is_error=bool(is_error), name=name, index=index)

    def result_block(self, item: Any, path: str) -> ContentBase | None:
        if not isinstance(item, Mapping):
            self.add(path, "type", f"expected a content block (an object), got {json_type(item)}")
            return None
        kind = self.field(item, "type", path, str, "a string")
        if kind == "text":
            text = self.field(item, "text", path, str, "a string")
            return None if text is None else self.build(path, TextContent, text)
        if kind == "image":
            return self.image(item, path)
        if kind == "document":
            return self.document(item, path, "tool_result")
        if kind is not None:
            # tool_reference (tool search), search_result and whatever comes next: kept verbatim.
            return self.unknown(item, path, "tool_result", f"a {kind!r} block in a tool result")
        return None

    # -- messages

    def system(self, value: Any, path: str) -> SystemMessage | None:
        """The top-level ``system`` (or a system entry's content): a string or a list of blocks.

        Text blocks, and blocks of other types kept verbatim (``tool_addition`` in a system entry).
        """
        if isinstance(value, str):
            return self.build(path, SystemMessage.text, value) if value else None
        if not isinstance(value, list):
            self.add(path, "type", f"expected a string or an array of text blocks, got {json_type(value)}")
            return None
        blocks: list[TextContent | ProviderContent] = []
        ok = True
        for j, item in enumerate(value):
            block = self.block(item, f"{path}[{j}]", "system", 0)
            if isinstance(block, (TextContent, ProviderContent)):
                blocks.append(block)
            else:
                ok = False
        if not ok or not blocks:
            return None
        return self.build(path, SystemMessage, blocks)

    def message(self, data: Any, path: str) -> list[AgentMessage]:
        if not isinstance(data, Mapping):
            self.add(path, "type", f"expected a message (an object), got {json_type(data)}")
            return []
        role = self.field(data, "role", path, str, "a string")
        if role is not None and role not in ("user", "assistant", "system"):
            self.add(_at(path, "role"), "enum", f"{role!r} is not one of: user, assistant, system")
            role = None
        if "content" not in data:
            self.add(_at(path, "content"), "required", "'content' is required")
            return []
        if role is None:
            return []
        where = _at(path, "content")
        if role == "system":
            if isinstance(data["content"], list) and not data["content"]:
                self.add(where, "min_items", "an empty content list: agentmsg messages need at least one block")
                return []
            message = self.system(data["content"], where)
            return [message] if message is not None else []
        blocks = self.content(data["content"], where, role)
        if blocks is None:
            return []
        if role == "assistant":
            # Only this API makes signed reasoning: such a turn may replay it here (to any model).
            signed = any(isinstance(block, (ThinkingContent, RedactedThinkingContent)) for block in blocks)
            reply = self.build(path, AssistantMessage, blocks, provenance=Provenance(PROVIDER, API) if signed else None)
            return [reply] if reply is not None else []
        lead = 0
        while lead < len(blocks) and isinstance(blocks[lead], ToolResultContent):
            lead += 1
        out: list[AgentMessage] = []
        if lead:
            results = self.build(path, ToolMessage, blocks[:lead])
            out.extend([results] if results is not None else [])
        if lead < len(blocks):
            rest = self.build(path, UserMessage, blocks[lead:])
            out.extend([rest] if rest is not None else [])
        return out


_KNOWN_BLOCKS: Final = frozenset(
    {"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}
)  # the hosted tool blocks are read in assistant turns; elsewhere they are kept verbatim


def _citation(item: Mapping[str, Any]) -> Citation:
    """One Anthropic citation: typed by its ``type``, and kept verbatim as ``original``.

    A citation whose type this version does not know, or whose fields are not
    the documented ones, is kept as its original alone (with its ``cited_text``).
    """
    original = ProviderContent.from_block(PROVIDER, item)
    kind = _str(item.get("type"))
    cited = _str(item.get("cited_text"))
    title = _str(item.get("document_title") or item.get("title"))
    if kind == "web_search_result_location" and isinstance(item.get("url"), str):
        return Citation.web(item["url"], title, cited_text=cited, original=original)
    ranges = {
        "char_location": ("chars", "start_char_index", "end_char_index"),
        "page_location": ("pages", "start_page_number", "end_page_number"),
        "content_block_location": ("blocks", "start_block_index", "end_block_index"),
    }
    if kind in ranges and _int(item.get("document_index")) is not None:
        unit, start, end = ranges[kind]
        first, last = _int(item.get(start)), _int(item.get(end))
        where = (first, last) if first is not None and last is not None else None
        return Citation.document(
            item["document_index"],
            title=title,
            file_id=_str(item.get("file_id")),
            chars=where if unit == "chars" else None,
            pages=where if unit == "pages" else None,
            blocks=where if unit == "blocks" else None,
            cited_text=cited,
            original=original,
        )
    if kind == "search_result_location" and isinstance(item.get("source"), str):
        first, last = _int(item.get("start_block_index")), _int(item.get("end_block_index"))
        return Citation.search_result(
            item["source"],
            title=title,
            search_result_index=_int(item.get("search_result_index")),
            blocks=(first, last) if first is not None and last is not None else None,
            cited_text=cited,
            original=original,
        )
    return Citation(cited_text=cited, original=original)


def _quiet_document(value: Any) -> DocumentContent | None:
    """A document block inside a hosted result, when it reads cleanly (the result's original keeps it anyway)."""
    if not isinstance(value, Mapping) or value.get("type") != "document":
        return None
    reader = _Reader(PayloadErrors(""), None, pass_through=False)
    block = reader.document(value, "", "tool_result")
    return block if isinstance(block, DocumentContent) and not reader.errors.found else None


def _hosted_result(
    call_id: str, kind: str, content: Any, item: Mapping[str, Any], original: ProviderContent
) -> HostedToolResultContent:
    """The typed outcome of a hosted tool result block (see the module docstring's table)."""
    options: dict[str, Any] = {}
    blocks: list[ContentBase] = []
    if kind == "mcp_tool_result":
        options["is_error"] = item.get("is_error") is True
        if isinstance(content, str):
            blocks = [TextContent(content)] if content else []
        elif isinstance(content, list):
            for inner in content:
                if isinstance(inner, Mapping) and inner.get("type") == "text" and isinstance(inner.get("text"), str):
                    blocks.append(TextContent(inner["text"]))
                elif isinstance(inner, Mapping):
                    blocks.append(ProviderContent.from_block(PROVIDER, inner))
    elif kind == "web_search_tool_result" and isinstance(content, list):
        options["search_results"] = [
            SearchResult(
                _str(hit.get("url")),
                _str(hit.get("title")),
                page_age=_str(hit.get("page_age")),
                encrypted_content=_str(hit.get("encrypted_content")),
            )
            for hit in content
            if isinstance(hit, Mapping)
        ]
    elif isinstance(content, Mapping):
        inner_kind = _str(content.get("type"))
        if inner_kind.endswith("_error"):
            options["error_code"] = _str(content.get("error_code"))
            options["error_message"] = _str(content.get("error_message"))
        elif inner_kind in _CODE_RESULTS:
            files = [
                _str(out.get("file_id"))
                for out in _list(content.get("content"))
                if isinstance(out, Mapping) and isinstance(out.get("file_id"), str)
            ]
            options["code_execution"] = CodeExecutionOutput(
                _str(content.get("stdout")),
                _str(content.get("stderr")),
                _int(content.get("return_code")),
                files=files,
                encrypted_stdout=_str(content.get("encrypted_stdout")),
            )
        elif inner_kind == "web_fetch_result":
            options["web_fetch"] = WebFetchOutput(_str(content.get("url")), _str(content.get("retrieved_at")))
            document = _quiet_document(content.get("content"))
            blocks = [document] if document is not None else []
        elif inner_kind == "text_editor_code_execution_view_result" and isinstance(content.get("content"), str):
            blocks = [TextContent(content["content"])] if content["content"] else []
        elif inner_kind == "tool_search_tool_search_result":
            blocks = [
                ProviderContent.from_block(PROVIDER, ref)
                for ref in _list(content.get("tool_references"))
                if isinstance(ref, Mapping)
            ]
    return HostedToolResultContent(call_id, blocks, kind=HOSTED_RESULT_BLOCKS[kind], original=original, **options)


def read_block(item: Mapping[str, Any], *, tool_call_index: int = 0, pass_through_unknown: bool = True) -> ContentBase:
    """One block of an assistant turn, as :func:`from_anthropic_response` reads it (for the stream parser).

    Raises :class:`~agentmsg.ValidationError` naming what is wrong.
    """
    errors = PayloadErrors("Anthropic content block")
    block = _Reader(errors, None, pass_through_unknown).block(item, "", "assistant", tool_call_index)
    errors.raise_if_any()
    assert block is not None
    return block


def read_citation(item: Mapping[str, Any]) -> Citation:
    """One citation object (``citations_delta.citation``), as the readers read text ``citations``."""
    if not isinstance(item, Mapping):
        raise ValidationError.single("citation", "type", f"expected an object, got {json_type(item)}")
    return _citation(item)


def read_usage(value: Any) -> Usage | None:
    """An Anthropic ``usage`` object as :class:`~agentmsg.Usage` (None when it reports nothing)."""
    errors = PayloadErrors("Anthropic usage")
    usage = _usage_in(_Reader(errors, None, pass_through=True), value)
    errors.raise_if_any()
    return usage if usage is not None and usage.reported else None


_ROLE_BLOCKS: Final[Mapping[str, frozenset[str]]] = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image", "document", "tool_result"}),
    "assistant": frozenset({"text", "thinking", "redacted_thinking", "tool_use"}),
}


def from_anthropic(
    payload: Mapping[str, Any] | Sequence[Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
) -> list[AgentMessage]:
    """Read a request's ``{"system": ..., "messages": [...]}`` (or just the ``messages`` list).

    The system prompt becomes a :class:`~agentmsg.SystemMessage` first (an
    empty one is skipped). A user turn's leading ``tool_result`` blocks
    become a :class:`~agentmsg.ToolMessage`, the rest a
    :class:`~agentmsg.UserMessage`. Messages get new ids and the current time.
    ``id_map`` (a report's ``id_map``) restores rewritten tool-call ids. A
    block of a type agentmsg has no kind for is kept as a
    :class:`~agentmsg.ProviderContent` (``pass_through_unknown=False``
    refuses it instead). Every problem is reported at once in one
    :class:`~agentmsg.ValidationError`.
    """
    errors = PayloadErrors("Anthropic Messages payload")
    reader = _Reader(errors, id_map, pass_through_unknown)
    out: list[AgentMessage] = []
    prefix = ""
    turns: Any
    if isinstance(payload, Mapping):
        prefix = "messages"
        if "system" in payload:
            system = reader.system(payload["system"], "system")
            if system is not None:
                out.append(system)
        if "messages" not in payload:
            reader.add("messages", "required", "'messages' is required")
            turns = []
        else:
            turns = payload["messages"]
    else:
        turns = payload
    if not isinstance(turns, list):
        reader.add(prefix, "type", f"expected an array of messages, got {json_type(turns)}")
        turns = []
    for i, data in enumerate(turns):
        out.extend(reader.message(data, f"{prefix}[{i}]"))
    errors.raise_if_any()
    return out


def from_anthropic_response(
    response: Mapping[str, Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
) -> AssistantMessage:
    """Read a Messages API response object (``{"type": "message", "content": [...], ...}``).

    Usage is normalised per usage.proto (Anthropic's ``input_tokens`` already
    excludes cached tokens); a count the response does not give stays None.
    ``stop_reason`` is mapped (see the module docstring) and kept verbatim in
    ``stop_reason_raw``. A response with no content and a stop reason that
    needs some (``end_turn`` after a tool result, for instance) gets one
    empty text block, as an agentmsg assistant message needs a block.
    """
    errors = PayloadErrors("Anthropic Messages response")
    reader = _Reader(errors, id_map, pass_through_unknown)
    if not isinstance(response, Mapping):
        reader.add("", "type", f"expected a response object, got {json_type(response)}")
        errors.raise_if_any()
    kind = reader.optional(response, "type", "", str, "a string")
    if kind is not None and kind != "message":
        reader.add("type", "enum", f"{kind!r} is not 'message'")
    role = reader.optional(response, "role", "", str, "a string")
    if role is not None and role != "assistant":
        reader.add("role", "enum", f"{role!r} is not 'assistant'")
    response_id = reader.optional(response, "id", "", str, "a string") or ""
    model = reader.optional(response, "model", "", str, "a string") or ""
    raw = reader.optional(response, "stop_reason", "", str, "a string") or ""
    stop_sequence = reader.optional(response, "stop_sequence", "", str, "a string") or ""
    stop = STOP_REASONS.get(raw)
    content = reader.field(response, "content", "", list, "an array of content blocks")
    blocks: list[ContentBase] | None = None
    if content is not None:
        blocks = reader.content(content, "content", "assistant") if content else []
    usage = _usage_in(reader, response.get("usage"))
    errors.raise_if_any()
    assert blocks is not None
    extra = response_extra(extra_keys(response, RESPONSE_HELD))
    if not blocks and stop not in _MAY_BE_EMPTY:
        blocks = [TextContent("")]
    made = reader.build(
        "",
        AssistantMessage,
        blocks,
        usage=usage,
        stop_reason=stop,
        stop_reason_raw=raw,
        stop_sequence=stop_sequence,
        provenance=Provenance(PROVIDER, API, model, response_id),
        provider_extra=extra,
    )
    errors.raise_if_any()
    assert made is not None
    return made


def _usage_in(reader: _Reader, value: Any) -> Usage | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        reader.add("usage", "type", f"expected an object, got {json_type(value)}")
        return None
    counts: dict[str, int | None] = {}
    for theirs, ours in (
        ("input_tokens", "input_tokens"),
        ("output_tokens", "output_tokens"),
        ("cache_read_input_tokens", "cache_read_tokens"),
        ("cache_creation_input_tokens", "cache_write_tokens"),
    ):
        counts[ours] = reader.optional(value, theirs, "usage", int, "an integer")
    details = reader.optional(value, "output_tokens_details", "usage", Mapping, "an object")
    if details is not None:
        counts["reasoning_tokens"] = reader.optional(
            details, "thinking_tokens", "usage.output_tokens_details", int, "an integer"
        )
    cache = reader.optional(value, "cache_creation", "usage", Mapping, "an object")
    if cache is not None:
        for theirs, ours in (
            ("ephemeral_5m_input_tokens", "cache_write_5m_tokens"),
            ("ephemeral_1h_input_tokens", "cache_write_1h_tokens"),
        ):
            counts[ours] = reader.optional(cache, theirs, "usage.cache_creation", int, "an integer")
    server = reader.optional(value, "server_tool_use", "usage", Mapping, "an object")
    requests: dict[str, int] = {}
    if server is not None:
        for key in server:
            if not key.endswith(_REQUESTS_SUFFIX):
                continue  # not a request count: kept verbatim in provider_extra
            count = reader.optional(server, key, "usage.server_tool_use", int, "an integer")
            if count is not None:
                requests[key.removesuffix(_REQUESTS_SUFFIX)] = count
    return reader.build("usage", Usage, **counts, hosted_tool_requests=requests)
