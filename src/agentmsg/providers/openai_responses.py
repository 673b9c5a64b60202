"""The OpenAI Responses API (``POST /v1/responses``), both directions, plus its response object.

Field names and shapes follow the Python SDK's types (``openai`` 3.52.0,
``openai.types.responses``: ``ResponseInputParam`` and its members
``EasyInputMessageParam``, ``Message``, ``ResponseInputTextParam``,
``ResponseInputImageParam``, ``ResponseInputFileParam``,
``ResponseFunctionToolCallParam``, ``FunctionCallOutput``,
``ResponseFunctionCallOutputItemListParam``, ``ResponseReasoningItemParam``;
and for responses ``Response``, ``ResponseOutputItem``,
``ResponseOutputMessage``, ``ResponseOutputText``, ``ResponseOutputRefusal``,
``ResponseReasoningItem``, ``ResponseFunctionToolCall``, ``ResponseUsage``,
``ResponseError``) and the platform guides (conversation state, function
calling, reasoning, images and vision, file inputs). No SDK is imported here:
payloads are plain dicts and lists, exactly as the HTTP API takes and gives them.

A request payload is ``{"input": [items]}``, plus ``"instructions"`` when asked
for (see below); the caller adds ``model``, ``tools``, ``store``, ``include``...

Mapping (agentmsg <-> format):

==============================  ===================================================================
agentmsg                        OpenAI Responses
==============================  ===================================================================
SystemMessage                   a ``message`` item, role ``system`` (or ``developer``:
                                ``system_role=``), content ``input_text`` parts; or, with
                                ``instructions=True``, the leading system messages as the
                                top-level ``instructions`` string
UserMessage                     a ``message`` item, role ``user``, content a list of parts; its
                                tool results become ``function_call_output`` items in place
                                (splitting the message item around them)
ToolMessage                     one ``function_call_output`` item per result
AssistantMessage                consecutive items: ``reasoning``, ``message`` (role
                                ``assistant``), ``function_call``, hosted tool items, other
                                items kept verbatim
TextContent                     user/system: ``input_text`` {text}; assistant: one ``message``
                                item ``{"type": "message", "role": "assistant", "content":
                                text}`` per block (in responses: ``output_text`` {text,
                                annotations, logprobs?} in an output message item), or the
                                parts of the item its envelope names (see Item envelopes)
Citation (on text)              ``output_text`` ``annotations``: ``url_citation`` ->
                                ``Citation.web`` (url, title, start/end index);
                                ``file_citation`` / ``file_path`` -> ``Citation.file`` (file id,
                                filename, ``index`` as a one-point span);
                                ``container_file_citation`` -> ``Citation.file`` with the
                                container id; other kinds -> ``Citation(original=...)``; every
                                citation keeps the annotation as its ``original``
TokenLogprob (on text)          ``output_text`` ``logprobs``: token, logprob, ``bytes`` (a list
                                of byte values), ``top_logprobs``
HostedToolCallContent +         ``web_search_call``, ``file_search_call``,
HostedToolResultContent         ``code_interpreter_call``, ``image_generation_call``,
                                ``mcp_call``, ``mcp_approval_request`` (see Hosted tools)
ProviderContent (item envelope) the ``id``, ``status``, ``phase``, ``namespace``, ``caller``...
                                of a ``message``, ``reasoning`` or ``function_call`` item (see
                                Item envelopes)
ImageContent                    ``input_image`` {image_url: URL or ``data:`` URL | file_id, detail}
DocumentContent                 ``input_file`` {file_data: ``data:`` URL | file_url | file_id,
                                filename?}
ThinkingContent                 a ``reasoning`` item: text <-> one ``summary_text`` part,
                                signature <-> ``encrypted_content`` (see Reasoning)
RedactedThinkingContent         a ``reasoning`` item with an empty ``summary`` and only
                                ``encrypted_content``
ToolCallContent                 ``function_call`` {call_id, name, arguments}; arguments verbatim
                                (``requires_approval`` is never sent to a model)
ToolApprovalContent             ``mcp_approval_response`` {approval_request_id, approve, reason?}
                                in a user message, the item kept as its ``original`` (written
                                back verbatim); a decision made by hand is written only for an
                                ``mcp_approval_request`` written before it (who decided and
                                when reported); a decision on an application's function call
                                has no item and is reported (its outcome reaches the model as
                                the call's output)
ToolResultContent               ``function_call_output`` {call_id, output, name?}; output is a
                                string for one non-empty text block (``""`` for none), else a
                                list of ``input_text`` / ``input_image`` / ``input_file`` parts
ProviderContent (openai)        verbatim: in a user message a part whose type does not end in
                                ``_output`` (and is not an approval or ``item_reference``),
                                else a whole item: every item type not
                                read into typed blocks (``mcp_list_tools``,
                                ``tool_search_call`` / ``_output``, ``compaction``,
                                ``custom_tool_call``, ``shell_call``, ``program``, newer
                                ones...), read by default; an item with a ``role`` of
                                ``system`` / ``developer`` (``additional_tools``) in a system
                                message, one of the client's (``*_output``, approvals,
                                references, role ``user``) in a user message, others in the
                                assistant's turn
Usage (response)                ``usage``: input_tokens minus ``input_tokens_details``
                                ``cached_tokens`` and ``cache_write_tokens`` -> input_tokens;
                                cached_tokens -> cache_read_tokens; cache_write_tokens ->
                                cache_write_tokens; output_tokens (reasoning included) ->
                                output_tokens; ``output_tokens_details.reasoning_tokens`` ->
                                reasoning_tokens; total_tokens -> total_tokens
StopReason (response)           ``status`` completed -> TOOL_CALLS when the output has a
                                ``function_call``, CONTENT_FILTER when it has a refusal, else
                                STOP; incomplete with ``incomplete_details.reason``
                                max_output_tokens -> LENGTH, content_filter -> CONTENT_FILTER,
                                other reasons -> unspecified; failed -> ERROR (``error`` is
                                ``"<code>: <message>"``); cancelled -> ABORT; in_progress and
                                queued -> unspecified (a background response: its empty
                                ``output`` reads as one empty text block, and a lone empty
                                text block is written as ``output: []``). ``stop_reason_raw``
                                is the incomplete reason when there is one, else the status
Provenance (response)           ("openai", "openai-responses", ``model``, ``id``); the message
                                timestamp is ``created_at``
==============================  ===================================================================

Structure. Reading, consecutive assistant-side items (assistant ``message``,
``reasoning``, ``function_call`` and passed-through call items) form one
:class:`~agentmsg.AssistantMessage`, consecutive ``function_call_output``
items one :class:`~agentmsg.ToolMessage`, and every user, system or
developer ``message`` item one message; ``input`` given as a string is one
user message, ``instructions`` a system message before the rest. So
``from_openai_responses(to_openai_responses(m)) == m`` holds (message ids and
timestamps aside: request items carry none) for conversations that answer
tool calls with tool messages, except for what the item structure cannot give
back: two assistant (or two tool) messages in a row read back as one, a user
message holding tool results reads back split around them (the results as a
tool message), ``developer`` reads back as a system message, and with
``instructions=True`` the leading system messages read back as one.

Choices where the two models differ:

- Item envelopes (where item ids live). An output item carries data that is
  the API's own bookkeeping rather than message content: its ``id``
  (``msg_...``, ``rs_...``, ``fc_...``), ``status``, the message ``phase``
  (``commentary`` / ``final_answer``), the function call's ``namespace`` and
  ``caller``, a reasoning item's ``content`` (``reasoning_text`` parts), and
  any key a newer API adds. The typed blocks have no field for them, and the
  next request needs them back exactly (stored items are referred to by id;
  ``phase`` steers the model). So a ``message``, ``reasoning`` or
  ``function_call`` item that carries any key besides the typed ones reads
  as its *envelope* followed by its typed blocks: a ProviderContent (format
  ``openai-responses``, type the item type) holding the item with the typed
  values emptied (text, summary text, ``encrypted_content``, annotations and
  logprobs, call id, name and arguments become ``""`` / ``[]``; the keys stay,
  in their order, so the writer knows where each value goes back). Writing to
  this API, an envelope and the blocks after it (as many as it has parts,
  summary parts, or one call) give the item back exactly, with the blocks'
  current values: text edited since reading goes back edited, under the
  item's id. When the blocks after an envelope no longer fit it (a block
  removed or replaced), the item is written from the blocks alone and the
  envelope is reported. An envelope with no typed block after it (a
  reasoning item that only names a stored item by its id) is the whole item,
  written as it is. Other writers report envelopes like any block of another
  format: an item id means nothing to another provider. This keeps the typed
  blocks what they are for every other format and application (the
  envelope costs one small block per item) instead of hiding text inside an
  opaque item, and it needs no contract field that only this API would use.
  Text blocks with no envelope (built by agentmsg or read from another
  format) are written in the SDK's ``EasyInputMessageParam`` form (string
  content), one item per block; in a response, output items of no envelope
  get made-up ids by position (``msg_0``, ``rs_1``, ``fc_2``) and status
  ``completed``.
- Hosted tools. A hosted tool item holds call and outcome in one object: it
  reads as a HostedToolCallContent whose ``original`` is the whole item,
  followed, when the item has an outcome, by a HostedToolResultContent with
  the same id and the typed outcome and no original (the convention in
  ``content.proto``). Call input, as JSON object text: ``web_search_call``
  its ``action`` without ``sources``; ``file_search_call`` ``{"queries"}``;
  ``code_interpreter_call`` ``{"code"}``; ``image_generation_call`` ``{}``;
  ``mcp_call`` / ``mcp_approval_request`` the ``arguments`` text verbatim
  (``server`` = ``server_label``). Outcome: web search ``sources`` as
  search results and the query as ``queries``; file search ``results``
  (filename -> title, text -> snippet, file id, score); code interpreter
  ``logs`` as stdout and ``image`` outputs as files by URL; the generated
  image (``result``, base64) as an ImageContent; the MCP ``output`` as text,
  its ``error`` as ``error_code`` / ``error_message``. A completed item with
  no outcome field still gets a result (its status). Statuses map to
  HostedToolStatus (searching, interpreting, generating, calling ->
  in_progress); an ``mcp_approval_request`` is a call alone, awaiting
  approval. Writing to this API, a call with an ``openai-responses``
  original is written as that item and the result after it with the same id
  is skipped; hosted calls and results of other formats have no item here
  and are reported.
- Citations read from other formats are projected: a web citation becomes
  a ``url_citation`` (its span, or the whole block), a file citation a
  ``file_citation`` (``container_file_citation`` with a container id);
  what the annotation cannot hold (cited text, confidence, a result index,
  the other format's original) is reported, and document and search-result
  citations are reported. Annotations and logprobs exist only in the output
  message form, so in a request they go back only inside an envelope's
  item; on a text block without one they are reported.
- Unknown items are read by default (``pass_through_unknown=True`` is the
  default; ``False`` refuses them, as before issue 16).
- Reasoning. One ``reasoning`` item reads as one ThinkingContent per
  ``summary_text`` part, the item's ``encrypted_content`` on the last of them
  (the others have an empty signature); an item with no summary part but
  ``encrypted_content`` reads as RedactedThinkingContent. Writing groups
  blocks of no envelope back: consecutive thinking blocks up to and
  including one with a signature form one item, written without an ``id``
  as OpenAI's own Codex client writes them for stateless (``store: false``)
  replay, where ``encrypted_content`` carries the reasoning. The SDK's
  ``ResponseReasoningItemParam`` marks ``id`` required; the API takes the
  item without it. So reasoning built elsewhere replays only with its
  encrypted content: ask for it with
  ``include=["reasoning.encrypted_content"]``. Reasoning is sent only when
  :func:`~agentmsg.providers._common.may_replay` allows it (provenance
  openai / openai-responses, and the ``model`` given); thinking that may not
  be replayed, or has no signature (and no envelope), is left out and
  reported (the format has no place for reasoning text on its own). An
  assistant turn read from a request that holds reasoning gets
  ``Provenance("openai", "openai-responses")`` with no model (reasoning
  items are this API's own), so it may be sent back to any OpenAI model;
  other assistant turns read from a request have no provenance.
- Refusals: an assistant message item holding a ``refusal`` part is kept
  whole, verbatim, as ProviderContent (type ``message``) -- always, since
  agentmsg has no refusal block -- and in a response makes the stop reason
  CONTENT_FILTER.
- Image ``detail`` is required by the SDK type (the API's default is
  ``auto``): an unstated detail is written ``"auto"``, and ``"auto"`` reads
  back as unstated. ImageDetail.AUTO is therefore reported (it reads back as
  None), and MEDIUM, which the format lacks, is written ``"auto"`` and
  reported. The format's ``original`` detail has no agentmsg value: reading
  it is an error (``unsupported``), or, in a user message with
  ``pass_through_unknown=True``, the part is kept as ProviderContent.
- Media bytes are written as base64 ``data:`` URLs (``image_url``,
  ``file_data``) with the media type verbatim; reading decodes them (bare
  base64 ``file_data`` is accepted too, its media type sniffed or guessed from
  the filename). A URL or file id carries no media type: reading guesses it
  from the URL path (as ``ImageContent.from_url`` does) or leaves it empty
  for a file id; a media type that would not come back is reported.
- The API requires a ``filename`` on inline files: a document with bytes and
  no filename is sent as ``document`` plus the extension of its media type
  (``document.pdf``), and reported.
- Tool-call ids are rewritten to ``^[a-zA-Z0-9_-]+$`` (at most 64
  characters) by :class:`~agentmsg.providers._common.ToolIdMap`, the same
  way in ``function_call.call_id`` and ``function_call_output.call_id``;
  ``from_openai_responses(..., id_map=report.id_map)`` restores them.
  Response payloads keep ids as they are.
- A tool call's ``index`` is its position among its message's tool calls; a
  tool result's ``index`` is the index of the call it answers (0 when that
  call is not in the payload). Other values are reported when written.
- Arguments are kept verbatim both ways. Reading a request, arguments that
  are not JSON are an error (``json``), so writing reports them; reading a
  response they are kept (a response cut short can end inside a call).
- Not carried and not reported, because no request carries them and they are
  not meant for a model: message ids and timestamps; an assistant message's
  usage, stop reason, error and provenance (the response functions carry
  them); tool-result ``metadata`` / ``terminate`` / ``terminate_message`` and
  tool-call ``metadata``.
- Reading ignores what agentmsg has no place for and no real payload carries
  as message data: ``function_call_output`` ``id`` / ``status`` / ``caller``,
  file ``detail``, and the request and response fields that are settings or
  echoes of them (``model``, ``tools``, sampling parameters, ``store``...).
- An empty ``instructions`` string is no instruction: it reads as no message
  (so it is not written back as an empty system item).
- A user message whose only block is an empty text is written with the
  string content ``""`` (the form such a message is read from).

Reported as lost by :func:`to_openai_responses` (each with its input path,
e.g. ``[3].contents[1]``): audio (the Responses input has no audio part);
text signatures; message ``name``; thinking and redacted thinking that may
not be replayed or have no signature; image detail ``auto`` (reads back
unstated) and ``medium``; a media type that does not come back (URL and file
id sources); document ``title``; a missing filename on inline documents (a
made-up one is sent); tool-call ``kind``, ``signature``, ``server_name`` and
an ``index`` that is not the call's position, and argument text that is not
JSON (it is sent as it is; reading it back is refused); tool-result
``is_error`` (the
format has no error flag) and an ``index`` that is not the answered call's;
the block boundaries of system messages joined into ``instructions``;
ProviderContent of another provider; content and messages of a kind this
version does not know. :func:`to_openai_responses_response` reports the same
for the assistant's content (thinking is kept there without a foreign
signature), and: usage ``cost``; a count agentmsg does not know (the
response's usage needs every count: it is written as 0, the total as
input plus output); a stop reason or raw string the response cannot express;
an error on a response that did not fail, or without a known error code;
provenance other than openai / openai-responses; another provider's response
keys (``AssistantMessage.provider_extra``, e.g. Anthropic's ``container``).
Both writers also report
hosted tool calls and results of other formats, citations they cannot
project or project with a part missing, token logprobs on text of no
envelope in a request, and an item envelope whose blocks no longer fit it.

Reading raises :class:`~agentmsg.ValidationError` listing every problem,
each with its JSON path in the payload (``input[2].content[0].image_url``)
and a rule id prefixed ``openai_responses.``: ``type`` (wrong JSON type),
``required`` (missing field), ``enum`` (a value outside an enumeration),
``min_len`` (an empty id or name), ``unknown_type`` (an item or part type
not read here, with ``pass_through_unknown=False``), ``unsupported`` (something
agentmsg cannot hold), ``one_of`` (several sources for one part), ``url``,
``base64``, ``json`` (argument text that is not JSON), ``min_items``,
``usage`` (counts that contradict each other). Errors raised by agentmsg's
own constructors keep their rule ids (``media``, ``string.utf8``, ...).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeVar
from urllib.parse import unquote_to_bytes

from agentmsg import _media
from agentmsg.content import (
    AudioContent,
    Citation,
    CodeExecutionFile,
    CodeExecutionOutput,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    HostedToolStatus,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    SearchResult,
    TextContent,
    ThinkingContent,
    TokenLogprob,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
    dump_arguments,
    parse_json_object,
)
from agentmsg.errors import ValidationError, preview
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
    report_response_extras,
    restore_id,
    split_media,
)
from agentmsg.usage import Usage

__all__ = [
    "API",
    "PROVIDER",
    "from_openai_responses",
    "from_openai_responses_response",
    "to_openai_responses",
    "to_openai_responses_response",
]

T = TypeVar("T")

PROVIDER: Final = "openai"
API: Final = "openai-responses"
# ProviderContent blocks are tagged with the API, not the provider: Chat and Responses blocks differ.
BLOCK_FORMAT: Final = API

_TARGET: Final = "OpenAI Responses"
_RULE: Final = "openai_responses"

_STATUSES: Final = ("completed", "failed", "in_progress", "cancelled", "queued", "incomplete")
_INCOMPLETE_REASONS: Final = ("max_output_tokens", "max_messages", "content_filter", "steered")
_ERROR_CODES: Final = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "invalid_prompt",
        "data_residency_mismatch",
        "bio_policy",
        "misalignment_policy_violation",
        "vector_store_timeout",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_large",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "image_file_too_large",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "image_file_not_found",
    }
)
_IMAGE_DETAILS: Final = ("low", "high", "auto", "original")
_FILE_DETAILS: Final = ("auto", "low", "high")
_ROLES: Final = ("user", "system", "developer", "assistant")
_USER_PARTS: Final = ("input_text", "input_image", "input_file")
_USER_SIDE_ITEMS: Final = frozenset({"mcp_approval_response", "item_reference"})
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DATA_URL: Final = re.compile(r"^(?i:data):(?P<mime>[^,]*?)(?P<b64>;(?i:base64))?,(?P<data>.*)$", re.DOTALL)
_ERROR_TEXT: Final = re.compile(r"^(?P<code>[a-z][a-z0-9_]*): (?P<message>.*)$", re.DOTALL)
# A private table (built-in types only): the module-level mimetypes functions read /etc/mime.types.
_TYPES: Final = mimetypes.MimeTypes()
_EXTENSIONS: Final = {"application/pdf": ".pdf", "text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv"}


def _at(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top)."""
    return f"{path}.{key}" if path else key


def _user_side_item(item_type: str) -> bool:
    """Is a passed-through item the client's (an ``*_output``, an approval, a reference) rather than the model's?"""
    return item_type.endswith("_output") or item_type in _USER_SIDE_ITEMS


def _data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _made_up_filename(media_type: str) -> str:
    base = media_type.split(";", 1)[0].strip().lower()
    extension = _EXTENSIONS.get(base) or _TYPES.guess_extension(base, strict=False) or ""
    return f"document{extension}"


# --------------------------------------------------------------------------- items: envelopes, hosted tools

# The keys of the item types agentmsg reads into typed blocks; any other key is kept in the item's envelope.
_TYPED_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "message": frozenset({"type", "role", "content"}),
    "reasoning": frozenset({"type", "summary", "encrypted_content"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
}
_TEXT_PART_KEYS: Final = frozenset({"type", "text", "annotations", "logprobs"})
_TEXT_PARTS: Final = ("output_text", "input_text")
# Hosted tool items: (tool name, kind). MCP items name their tool themselves.
_HOSTED: Final[Mapping[str, tuple[str, HostedToolKind]]] = {
    "web_search_call": ("web_search", HostedToolKind.WEB_SEARCH),
    "file_search_call": ("file_search", HostedToolKind.FILE_SEARCH),
    "code_interpreter_call": ("code_interpreter", HostedToolKind.CODE_EXECUTION),
    "image_generation_call": ("image_generation", HostedToolKind.IMAGE_GENERATION),
    "mcp_call": ("", HostedToolKind.MCP),
    "mcp_approval_request": ("", HostedToolKind.MCP),
}
_HOSTED_STATUS: Final[Mapping[str, HostedToolStatus]] = {
    "in_progress": HostedToolStatus.IN_PROGRESS,
    "searching": HostedToolStatus.IN_PROGRESS,
    "interpreting": HostedToolStatus.IN_PROGRESS,
    "generating": HostedToolStatus.IN_PROGRESS,
    "calling": HostedToolStatus.IN_PROGRESS,
    "completed": HostedToolStatus.COMPLETED,
    "incomplete": HostedToolStatus.INCOMPLETE,
    "failed": HostedToolStatus.FAILED,
}
_DONE_STATUSES: Final = frozenset({"completed", "incomplete", "failed"})


def _emptied(item: Mapping[str, Any], key: str, value: Any) -> Any:
    """An item value with what agentmsg types emptied (the key stays, to say where the typed value goes)."""
    kind = item.get("type", "message")
    if kind == "function_call" and key in ("call_id", "name", "arguments"):
        return ""
    if kind == "reasoning":
        if key == "encrypted_content" and isinstance(value, str) and value:
            return ""
        if key == "summary" and isinstance(value, list):
            return [
                {k: ("" if k == "text" else v) for k, v in part.items()} if isinstance(part, Mapping) else part
                for part in value
            ]
        return value
    if kind == "message" and key == "content":
        if isinstance(value, str):
            return ""
        if not isinstance(value, list):
            return value
        return [
            {
                k: ("" if k == "text" else [] if k in ("annotations", "logprobs") and isinstance(v, list) else v)
                for k, v in part.items()
            }
            if isinstance(part, Mapping)
            else part
            for part in value
        ]
    return value


def item_envelope(item: Mapping[str, Any], *, always: bool = False) -> ProviderContent | None:
    """The envelope of a ``message``, ``reasoning`` or ``function_call`` item, or None when it needs none.

    The envelope is the item with the values agentmsg types (text, summary
    text, encrypted content, annotations, logprobs, call id, name and
    arguments) emptied: it keeps ``id``, ``status``, ``phase``,
    ``namespace``, ``caller`` and every other key verbatim, in their order.
    An item that has none of those needs no envelope (unless ``always``).
    The item must be well formed (the reader checks it first).
    """
    kind = item.get("type", "message")
    typed = _TYPED_KEYS[kind]
    needed = always or any(key not in typed for key in item)
    if not needed:
        if kind == "message" and isinstance(item.get("content"), list):
            needed = any(
                not isinstance(part, Mapping) or any(key not in _TEXT_PART_KEYS for key in part)
                for part in item["content"]
            )
        elif kind == "reasoning" and isinstance(item.get("summary"), list):
            needed = any(
                not isinstance(part, Mapping) or any(key not in ("type", "text") for key in part)
                for part in item["summary"]
            )
    if not needed:
        return None
    envelope = {key: _emptied(item, key, value) for key, value in item.items()}
    return ProviderContent(BLOCK_FORMAT, str(kind), dump_arguments(envelope, "item"))


def envelope_slots(
    block: ProviderContent, data: Mapping[str, Any] | None = None
) -> tuple[type[ContentBase], int] | None:
    """The typed blocks that follow an envelope (their kind and count); None for an item kept whole.

    ``data`` is the block's JSON already parsed, when the caller has it.
    """
    kind = block.block_type
    if kind not in _TYPED_KEYS:
        return None
    if data is None:
        data = block.block()
    if kind == "function_call":
        return (ToolCallContent, 1) if data.get("call_id") == "" else None
    if kind == "reasoning":
        summary = data.get("summary")
        if isinstance(summary, list) and summary:
            return ThinkingContent, len(summary)
        return (RedactedThinkingContent, 1) if data.get("encrypted_content") == "" else (ThinkingContent, 0)
    content = data.get("content")
    if isinstance(content, str):
        return (TextContent, 1) if content == "" else None
    if isinstance(content, list) and all(
        isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS and part.get("text") == "" for part in content
    ):
        return TextContent, len(content)
    return None


def _hosted_status(item: Mapping[str, Any]) -> tuple[HostedToolStatus | None, str]:
    raw = item.get("status")
    if not isinstance(raw, str):
        return None, ""
    return _HOSTED_STATUS.get(raw), raw


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def hosted_blocks(item: Mapping[str, Any]) -> list[ContentBase]:
    """A hosted tool item as a call (``original`` = the whole item) and, when it has an outcome, its result.

    Raises :class:`~agentmsg.ValidationError` when a typed field does not
    fit; the readers then keep the item whole as ProviderContent.
    """
    kind_name = str(item["type"])
    tool, kind = _HOSTED[kind_name]
    raw_id = item.get("id")
    call_id = raw_id if isinstance(raw_id, str) else ""
    status, raw = _hosted_status(item)
    original = ProviderContent.from_block(BLOCK_FORMAT, item)
    done = raw in _DONE_STATUSES
    failed = raw == "failed"
    result: HostedToolResultContent | None = None
    call_input: str | dict[str, Any]
    server = ""
    if kind_name == "web_search_call":
        found_action = item.get("action")
        action: Mapping[str, Any] = found_action if isinstance(found_action, Mapping) else {}
        call_input = {k: v for k, v in action.items() if k != "sources"}
        queries = _strings(action.get("queries")) or _strings([action.get("query")])
        sources = action.get("sources")
        if isinstance(sources, list) or done:
            results = None
            if isinstance(sources, list):
                results = [
                    SearchResult(url=str(s.get("url") or ""), title=str(s.get("title") or ""))
                    for s in sources
                    if isinstance(s, Mapping)
                ]
            result = HostedToolResultContent(
                call_id,
                name=tool,
                kind=kind,
                search_results=results,
                queries=queries,
                is_error=failed,
                status=status,
                status_raw=raw,
            )
    elif kind_name == "file_search_call":
        queries = _strings(item.get("queries"))
        call_input = {"queries": queries}
        found = item.get("results")
        if isinstance(found, list) or done:
            results = [
                SearchResult(
                    title=str(r.get("filename") or ""),
                    snippet=str(r.get("text") or ""),
                    file_id=str(r.get("file_id") or ""),
                    score=r.get("score") if isinstance(r.get("score"), (int, float)) else None,
                )
                for r in found or ()
                if isinstance(r, Mapping)
            ]
            result = HostedToolResultContent(
                call_id,
                name=tool,
                kind=kind,
                search_results=results if isinstance(found, list) else None,
                queries=queries,
                is_error=failed,
                status=status,
                status_raw=raw,
            )
    elif kind_name == "code_interpreter_call":
        code = item.get("code")
        call_input = {"code": code} if isinstance(code, str) else {}
        outputs = item.get("outputs")
        if isinstance(outputs, list) or done:
            logs = "".join(
                str(o.get("logs") or "") for o in outputs or () if isinstance(o, Mapping) and o.get("type") == "logs"
            )
            files = [
                CodeExecutionFile(url=str(o.get("url") or ""))
                for o in outputs or ()
                if isinstance(o, Mapping) and o.get("type") == "image"
            ]
            result = HostedToolResultContent(
                call_id,
                name=tool,
                kind=kind,
                code_execution=CodeExecutionOutput(logs, files=files),
                is_error=failed,
                status=status,
                status_raw=raw,
            )
    elif kind_name == "image_generation_call":
        call_input = {}
        image = item.get("result")
        if isinstance(image, str) or done:
            content: list[ContentBase] = []
            if isinstance(image, str) and image:
                fmt = item.get("output_format") if isinstance(item.get("output_format"), str) else "png"
                content.append(ImageContent(_media.decode_base64(image, "result"), media_type=f"image/{fmt}"))
            result = HostedToolResultContent(
                call_id, content, name=tool, kind=kind, is_error=failed, status=status, status_raw=raw
            )
    else:  # mcp_call, mcp_approval_request
        tool = str(item.get("name") or "")
        server = str(item.get("server_label") or "")
        arguments = item.get("arguments")
        call_input = arguments if isinstance(arguments, str) else {}
        if kind_name == "mcp_approval_request":
            status, raw = HostedToolStatus.AWAITING_APPROVAL, ""
        else:
            output, error = item.get("output"), item.get("error")
            if output is not None or error is not None or done:
                code = message = None
                if isinstance(error, Mapping):
                    code = str(error.get("code") or error.get("type") or "") or None
                    message = str(error.get("message") or "") or None
                elif error is not None:
                    message = str(error)
                result = HostedToolResultContent(
                    call_id,
                    output if isinstance(output, str) and output else (),
                    name=tool,
                    kind=kind,
                    is_error=failed or error is not None,
                    error_code=code,
                    error_message=message,
                    status=status,
                    status_raw=raw,
                )
    call = HostedToolCallContent(
        call_id, tool, call_input, kind=kind, server=server, status=status, status_raw=raw, original=original
    )
    return [call] if result is None else [call, result]


def read_annotation(annotation: Mapping[str, Any]) -> Citation:
    """An ``output_text`` annotation as a Citation (``original`` = the annotation, verbatim)."""
    original = ProviderContent.from_block(BLOCK_FORMAT, annotation)
    kind = annotation.get("type")

    def index(key: str) -> int | None:
        value = annotation.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    def text(key: str) -> str:
        value = annotation.get(key)
        return value if isinstance(value, str) else ""

    try:
        if kind == "url_citation":
            return Citation.web(
                text("url"),
                text("title"),
                start_index=index("start_index"),
                end_index=index("end_index"),
                original=original,
            )
        if kind in ("file_citation", "file_path"):
            at = index("index")
            return Citation.file(
                text("file_id"), filename=text("filename"), start_index=at, end_index=at, original=original
            )
        if kind == "container_file_citation":
            return Citation.file(
                text("file_id"),
                filename=text("filename"),
                container_id=text("container_id"),
                start_index=index("start_index"),
                end_index=index("end_index"),
                original=original,
            )
    except ValidationError:
        pass  # a source that does not fit the typed fields: kept by its original alone
    return Citation(original=original)


def read_logprob(value: Any, path: str) -> TokenLogprob:
    """One ``logprobs`` entry (``token``, ``logprob``, ``bytes``, ``top_logprobs``) as a TokenLogprob."""
    if not isinstance(value, Mapping):
        raise ValidationError.single(path, f"{_RULE}.type", f"expected an object, got {json_type(value)}")
    token, logprob, raw = value.get("token"), value.get("logprob"), value.get("bytes")
    if not isinstance(token, str):
        raise ValidationError.single(_at(path, "token"), f"{_RULE}.type", "expected a string")
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        raise ValidationError.single(_at(path, "logprob"), f"{_RULE}.type", "expected a number")
    data: bytes | None = None
    if raw is not None:
        if not isinstance(raw, list) or not all(isinstance(b, int) and 0 <= b < 256 for b in raw):
            raise ValidationError.single(_at(path, "bytes"), f"{_RULE}.type", "expected a list of byte values")
        data = bytes(raw)
    top = value.get("top_logprobs")
    alternatives = [read_logprob(t, f"{path}.top_logprobs[{k}]") for k, t in enumerate(top or ())]
    return TokenLogprob(token, float(logprob), bytes=data, top_logprobs=alternatives)


def write_logprob(logprob: TokenLogprob, *, top: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"token": logprob.token, "logprob": logprob.logprob}
    out["bytes"] = list(logprob.bytes) if logprob.bytes is not None else None
    if top:
        out["top_logprobs"] = [write_logprob(t, top=False) for t in logprob.top_logprobs]
    return out


# --------------------------------------------------------------------------- agentmsg -> format


class _Writer:
    """Writes items for one conversion and records what cannot go."""

    def __init__(self, reporter: Reporter, ids: ToolIdMap | None, model: str | None, *, response: bool) -> None:
        self.reporter = reporter
        self.ids = ids
        self.model = model
        self.response = response
        self.call_index: dict[str, int] = {}
        # The ids of the MCP approval requests written so far: a decision on one of them is an item here.
        self.approval_requests: set[str] = set()

    def loss(self, path: str, what: str, reason: str) -> None:
        self.reporter.loss(path, what, reason)

    def call_id(self, call_id: str) -> str:
        return self.ids(call_id) if self.ids is not None else call_id

    # ----------------------------------------------------------------- parts

    def text_part(self, block: TextContent, path: str) -> dict[str, Any]:
        self.text_signature(block, path)
        return {"type": "input_text", "text": block.content}

    def text_signature(self, block: TextContent, path: str) -> None:
        if block.signature:
            self.loss(_at(path, "signature"), "text signature", "the format has no signature on text")

    def detail(self, detail: ImageDetail | None, path: str) -> str:
        if detail is ImageDetail.LOW or detail is ImageDetail.HIGH:
            return detail.value
        if detail is ImageDetail.AUTO:
            self.loss(
                _at(path, "detail"),
                "image detail 'auto'",
                "'auto' is the format's default and is written for an unstated detail too: it reads back as unstated",
            )
        elif detail is ImageDetail.MEDIUM:
            self.loss(
                _at(path, "detail"),
                "image detail 'medium'",
                "the format's details are low, high, auto and original; 'auto' was sent",
            )
        return "auto"

    def image_part(self, block: ImageContent, path: str) -> dict[str, Any]:
        part: dict[str, Any] = {"type": "input_image"}
        if block.data is not None:
            part["image_url"] = _data_url(block.media_type, block.data)
        elif block.url is not None:
            part["image_url"] = block.url
            guess = _media.guess_from_path(block.url, "image/")
            if block.media_type != guess:
                self.loss(
                    _at(path, "media_type"),
                    f"image media type {block.media_type!r}",
                    f"an image URL carries no media type; it reads back as {guess!r}, guessed from the URL path",
                )
        else:
            part["file_id"] = block.file_id
            if block.media_type:
                self.loss(
                    _at(path, "media_type"),
                    f"image media type {block.media_type!r}",
                    "an image file id carries no media type; it reads back empty",
                )
        part["detail"] = self.detail(block.detail, path)
        return part

    def file_part(self, block: DocumentContent, path: str) -> dict[str, Any]:
        part: dict[str, Any] = {"type": "input_file"}
        filename = block.filename
        if block.data is not None:
            part["file_data"] = _data_url(block.media_type, block.data)
            if not filename:
                filename = _made_up_filename(block.media_type)
                self.loss(
                    _at(path, "filename"),
                    "missing filename",
                    f"the API requires a filename on inline files; {filename!r} was sent and reads back",
                )
        elif block.url is not None:
            part["file_url"] = block.url
            guess = _media.guess_from_path(block.url, "")
            if block.media_type != guess:
                self.loss(
                    _at(path, "media_type"),
                    f"document media type {block.media_type!r}",
                    f"a file URL carries no media type; it reads back as {guess!r}, guessed from the URL path",
                )
        else:
            part["file_id"] = block.file_id
            if block.media_type:
                self.loss(
                    _at(path, "media_type"),
                    f"document media type {block.media_type!r}",
                    "a file id carries no media type; it reads back empty",
                )
        if filename:
            part["filename"] = filename
        if block.title:
            self.loss(_at(path, "title"), "document title", "input_file has no title")
        if block.context:
            self.loss(_at(path, "context"), "document context", "input_file has no context text")
        return part

    def media_part(self, block: ContentBase, path: str) -> dict[str, Any] | None:
        """A text, image or document part (the same shapes in messages and tool outputs); None after a loss."""
        match block:
            case TextContent():
                return self.text_part(block, path)
            case ImageContent():
                return self.image_part(block, path)
            case DocumentContent():
                return self.file_part(block, path)
            case AudioContent():
                self.loss(path, "audio", "the Responses input has no audio part (input_text, input_image, input_file)")
            case _:
                self.loss(path, f"{block.type or 'unknown'} content", "not a content kind this part can hold")
        return None

    def provider_block(self, block: ProviderContent, path: str) -> dict[str, Any] | None:
        if block.provider != BLOCK_FORMAT:
            self.loss(
                path,
                f"{block.provider} {block.block_type} block",
                f"a block of {block.provider}'s format goes back only to {block.provider}",
            )
            return None
        return block.block()

    # ----------------------------------------------------------------- messages

    def message_name(self, message: BaseMessage, path: str) -> None:
        if message.name:
            self.loss(_at(path, "name"), "message name", "the format's items have no participant name")

    def system_items(self, message: SystemMessage, path: str, role: str) -> list[dict[str, Any]]:
        self.message_name(message, path)
        parts: list[dict[str, Any]] = []
        items: list[dict[str, Any]] = []
        for j, block in enumerate(message.contents):
            where = f"{path}.contents[{j}]"
            if isinstance(block, TextContent):
                parts.append(self.text_part(block, where))
            elif isinstance(block, ProviderContent):
                data = self.provider_block(block, where)  # a system-side item (additional_tools), verbatim
                if data is not None:
                    if parts:
                        items.append({"type": "message", "role": role, "content": list(parts)})
                        parts.clear()
                    items.append(data)
            else:
                self.loss(where, f"{block.type or 'unknown'} content", "a system message holds text only")
        if parts:
            items.append({"type": "message", "role": role, "content": parts})
        return items

    def user_items(self, message: UserMessage, path: str) -> list[dict[str, Any]]:
        self.message_name(message, path)
        items: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []

        def flush() -> None:
            if parts:
                # A lone empty text goes as the empty string content it is read from (the API's shorthand).
                lone_empty = len(parts) == 1 and parts[0] == {"type": "input_text", "text": ""}
                items.append({"type": "message", "role": "user", "content": "" if lone_empty else list(parts)})
                parts.clear()

        for j, block in enumerate(message.contents):
            where = f"{path}.contents[{j}]"
            if isinstance(block, ToolResultContent):
                flush()
                items.append(self.tool_output(block, where))
            elif isinstance(block, ToolApprovalContent):
                item = self.approval_item(block, where)
                if item is not None:
                    flush()
                    items.append(item)
            elif isinstance(block, ProviderContent):
                data = self.provider_block(block, where)
                if data is None:
                    continue
                if _user_side_item(block.block_type):
                    flush()
                    items.append(data)
                else:
                    parts.append(data)
            else:
                for piece_path, piece in split_media(block, where, self.reporter):
                    part = self.media_part(piece, piece_path)
                    if part is not None:
                        parts.append(part)
        flush()
        return items

    def approval_item(self, block: ToolApprovalContent, path: str) -> dict[str, Any] | None:
        """An ``mcp_approval_response`` item for a decision on an MCP approval request; None (reported) otherwise."""
        original = block.original
        if (
            original is not None
            and original.provider == BLOCK_FORMAT
            and original.block_type == "mcp_approval_response"
        ):
            return original.block()
        if block.call_id not in self.approval_requests:
            self.loss(
                path,
                "tool approval",
                "the Responses API takes decisions only on its MCP approval requests (mcp_approval_request); "
                "a decision on an application's tool call reaches the model through the call's output",
            )
            return None
        item: dict[str, Any] = {
            "type": "mcp_approval_response",
            "approval_request_id": block.call_id,
            "approve": block.approved,
        }
        if block.reason:
            item["reason"] = block.reason
        for key, value in (("decided_by", block.decided_by), ("decided_at", block.decided_at)):
            if value:
                self.loss(_at(path, key), f"approval {key}", "an mcp_approval_response has no place for it")
        return item

    def tool_items(self, message: ToolMessage, path: str) -> list[dict[str, Any]]:
        self.message_name(message, path)
        items: list[dict[str, Any]] = []
        for j, block in enumerate(message.contents):
            where = f"{path}.contents[{j}]"
            if isinstance(block, ToolResultContent):
                items.append(self.tool_output(block, where))
            else:
                self.loss(where, f"{block.type or 'unknown'} content", "a tool message holds tool results only")
        return items

    def tool_output(self, block: ToolResultContent, path: str) -> dict[str, Any]:
        content = block.blocks
        output: str | list[dict[str, Any]]
        if not content:
            output = ""
        elif len(content) == 1 and isinstance(content[0], TextContent) and content[0].content:
            self.text_signature(content[0], f"{path}.content[0]")
            output = content[0].content
        else:
            output = []
            for k, inner in enumerate(content):
                for piece_path, piece in split_media(inner, f"{path}.content[{k}]", self.reporter):
                    part = self.media_part(piece, piece_path)
                    if part is not None:
                        output.append(part)
        item: dict[str, Any] = {"type": "function_call_output", "call_id": self.call_id(block.id), "output": output}
        if block.name:
            item["name"] = block.name
        if block.is_error:
            self.loss(
                _at(path, "is_error"),
                "tool error flag",
                "function_call_output has no error flag; the output is sent as it is",
            )
        expected = self.call_index.get(block.id, 0)
        if block.index != expected:
            self.loss(
                _at(path, "index"),
                f"tool result index {block.index}",
                f"the index is read back from the answered call ({expected})",
            )
        return item

    def assistant_items(self, message: AssistantMessage, path: str) -> list[dict[str, Any]]:
        self.message_name(message, path)
        replay = may_replay(message.provenance, PROVIDER, API, self.model)
        items: list[dict[str, Any]] = []
        pending: list[tuple[str, ThinkingContent]] = []
        position = 0
        blocks = message.contents
        j = 0
        while j < len(blocks):
            block = blocks[j]
            where = f"{path}.contents[{j}]" if path else f"contents[{j}]"
            j += 1
            if isinstance(block, ThinkingContent):
                pending.append((where, block))
                if block.signature:
                    self.reasoning(items, pending, replay, message)
                    pending = []
                continue
            if pending:
                self.reasoning(items, pending, replay, message)
                pending = []
            match block:
                case ProviderContent() if block.provider == BLOCK_FORMAT and block.block_type in _TYPED_KEYS:
                    data = block.block()
                    slots = envelope_slots(block, data)
                    if slots is None or slots[1] == 0:
                        items.append(data)
                        continue
                    kind, count = slots
                    group = blocks[j : j + count]
                    if len(group) != count or not all(isinstance(b, kind) for b in group):
                        self.loss(
                            where,
                            f"{block.block_type} item envelope",
                            "the blocks after it are not its item's: the item is written from the blocks alone, "
                            "without its id, status and other item fields",
                        )
                        continue
                    paths = [f"{path}.contents[{k}]" if path else f"contents[{k}]" for k in range(j, j + count)]
                    j += count
                    item = self.enveloped_item(
                        block.block_type, data, group, paths, message, replay, position, len(items)
                    )
                    if block.block_type == "function_call":
                        position += 1
                    if item is not None:
                        items.append(item)
                case TextContent():
                    self.text_signature(block, where)
                    items.append(self.assistant_text(block, where, len(items)))
                case RedactedThinkingContent():
                    if replay:
                        items.append(self.reasoning_item([], block.data, len(items)))
                    else:
                        self.loss(where, "redacted thinking", self.replay_reason(message))
                case ToolCallContent():
                    items.append(self.function_call(block, where, position, len(items)))
                    position += 1
                case HostedToolCallContent():
                    original = block.original
                    if original is not None and original.provider == BLOCK_FORMAT:
                        if original.block_type == "mcp_approval_request" and block.id:
                            self.approval_requests.add(block.id)
                        items.append(original.block())
                        follower = blocks[j] if j < len(blocks) else None
                        if (
                            isinstance(follower, HostedToolResultContent)
                            and follower.original is None
                            and follower.call_id == block.id
                        ):
                            j += 1  # the typed outcome of the same item (the call's original holds it)
                    else:
                        source = original.provider if original is not None else "another format"
                        self.loss(
                            where,
                            f"hosted tool call {block.name!r}",
                            f"a tool the provider ran ({source}) cannot be sent as an OpenAI Responses item",
                        )
                case HostedToolResultContent():
                    self.loss(
                        where,
                        "hosted tool result",
                        "a hosted tool's outcome goes back only inside its own OpenAI Responses call item",
                    )
                case ProviderContent():
                    kept = self.provider_block(block, where)
                    if kept is not None:
                        items.append(kept)
                case _:
                    self.loss(where, f"{block.type or 'unknown'} content", "an assistant message cannot hold it here")
        if pending:
            self.reasoning(items, pending, replay, message)
        return items

    def enveloped_item(
        self,
        kind: str,
        item: dict[str, Any],
        group: Sequence[ContentBase],
        paths: Sequence[str],
        message: AssistantMessage,
        replay: bool,
        position: int,
        item_position: int,
    ) -> dict[str, Any] | None:
        """An item from its envelope (``item``, parsed) and the typed blocks that follow it."""
        if kind == "message":
            texts = [b for b in group if isinstance(b, TextContent)]
            content = item.get("content")
            if isinstance(content, str):
                block, where = texts[0], paths[0]
                self.text_signature(block, where)
                self.no_annotations(block, where, "a message item with string content has no annotations")
                item["content"] = block.content
                return item
            parts = []
            for part, block, where in zip(content or (), texts, paths, strict=True):
                self.text_signature(block, where)
                filled = dict(part)
                filled["text"] = block.content
                if block.citations or "annotations" in part:
                    filled["annotations"] = self.annotations(block, where)
                if block.logprobs or "logprobs" in part:
                    filled["logprobs"] = [write_logprob(token) for token in block.logprobs]
                parts.append(filled)
            item["content"] = parts
            return item
        if kind == "function_call":
            call = group[0]
            assert isinstance(call, ToolCallContent)
            typed = self.function_call(call, paths[0], position, item_position, made_up=False)
            return {key: typed.get(key, value) for key, value in item.items()}
        thinking = [b for b in group if isinstance(b, ThinkingContent)]
        redacted = [b for b in group if isinstance(b, RedactedThinkingContent)]
        if not replay:
            if not self.response:
                reason = self.replay_reason(message) + "; the format has no place for reasoning text on its own"
                for where in paths:
                    self.loss(where, "thinking" if thinking else "redacted thinking", reason)
                return None
            if redacted:
                self.loss(paths[0], "redacted thinking", self.replay_reason(message))
                return None
        if redacted:
            item["encrypted_content"] = redacted[0].data
            return item
        for k, unsigned in enumerate(thinking[:-1]):
            if unsigned.signature:
                self.loss(
                    _at(paths[k], "signature"),
                    "thinking signature",
                    "a reasoning item has one encrypted_content, on its last summary part",
                )
        item["summary"] = [
            {**part, "text": block.content} for part, block in zip(item["summary"], thinking, strict=True)
        ]
        signature = thinking[-1].signature
        if signature and self.response and not replay:
            self.loss(
                _at(paths[-1], "signature"),
                "thinking signature",
                "the reasoning's encrypted_content goes back only to the provider, API and model that produced it",
            )
            signature = ""
        if signature:
            item["encrypted_content"] = signature
        elif item.get("encrypted_content") == "":
            del item["encrypted_content"]
        return item

    def no_annotations(self, block: TextContent, path: str, reason: str) -> None:
        if block.citations:
            self.loss(_at(path, "citations"), "citations", reason)
        if block.logprobs:
            self.loss(_at(path, "logprobs"), "token logprobs", reason)

    def annotations(self, block: TextContent, path: str) -> list[dict[str, Any]]:
        """A text block's citations as ``output_text`` annotations (projected when they are another format's)."""
        out: list[dict[str, Any]] = []
        for k, citation in enumerate(block.citations):
            where = f"{path}.citations[{k}]"
            original = citation.original
            if original is not None and original.provider == BLOCK_FORMAT:
                out.append(original.block())
                continue
            start = citation.start_index if citation.start_index is not None else 0
            end = citation.end_index if citation.end_index is not None else len(block.content)
            kind = citation.source_kind
            if kind == "web":
                out.append(
                    {
                        "type": "url_citation",
                        "url": citation.url,
                        "title": citation.title,
                        "start_index": start,
                        "end_index": end,
                    }
                )
            elif kind == "file" and citation.container_id:
                out.append(
                    {
                        "type": "container_file_citation",
                        "container_id": citation.container_id,
                        "file_id": citation.file_id,
                        "filename": citation.filename,
                        "start_index": start,
                        "end_index": end,
                    }
                )
            elif kind == "file":
                out.append(
                    {
                        "type": "file_citation",
                        "file_id": citation.file_id,
                        "filename": citation.filename,
                        "index": start,
                    }
                )
            else:
                self.loss(
                    where,
                    f"{kind or (original.provider if original is not None else 'unknown')} citation",
                    "an output_text annotation cites a URL or a file",
                )
                continue
            kept = {"web": ("url", "title", "span"), "file": ("file", "span")}[kind]
            lost = [
                name
                for name, present in (
                    ("cited text", bool(citation.cited_text)),
                    ("confidence", citation.confidence is not None),
                    ("result index", kind == "web" and citation.result_index is not None),
                    (
                        "the end of the span",
                        kind == "file"
                        and not citation.container_id
                        and citation.end_index not in (None, citation.start_index),
                    ),
                    (f"the {original.provider if original is not None else ''} original", original is not None),
                )
                if present
            ]
            if lost:
                self.loss(
                    where,
                    ", ".join(lost),
                    f"the annotation keeps the {' and '.join(kept)} of a {kind} citation only",
                )
        return out

    def replay_reason(self, message: AssistantMessage) -> str:
        prov = message.provenance
        source = f"{prov.provider}/{prov.api}/{prov.model or '?'}" if prov is not None else "no provenance"
        target = f"{PROVIDER}/{API}" + (f"/{self.model}" if self.model else "")
        return f"reasoning goes back only to the provider, API and model that produced it ({source}, not {target})"

    def reasoning(
        self,
        items: list[dict[str, Any]],
        group: Sequence[tuple[str, ThinkingContent]],
        replay: bool,
        message: AssistantMessage,
    ) -> None:
        """One reasoning item from a run of thinking blocks (the last may carry the signature)."""
        last_path, last = group[-1]
        signature = last.signature
        texts = [block.content for _, block in group]
        if self.response:
            if signature and not replay:
                self.loss(
                    _at(last_path, "signature"),
                    "thinking signature",
                    "the reasoning's encrypted_content goes back only to the provider, API and model that produced it",
                )
                signature = ""
            items.append(self.reasoning_item(texts, signature, len(items)))
            return
        if not replay or not signature:
            reason = (
                "it has no signature: reasoning goes back only as an item with its encrypted_content "
                "(request include=['reasoning.encrypted_content']), and agentmsg keeps no reasoning item id"
                if replay
                else self.replay_reason(message) + "; the format has no place for reasoning text on its own"
            )
            for where, _ in group:
                self.loss(where, "thinking", reason)
            return
        items.append(self.reasoning_item(texts, signature, len(items)))

    def reasoning_item(self, texts: Sequence[str], encrypted: str, position: int) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "reasoning"}
        if self.response:
            item["id"] = f"rs_{position}"
        item["summary"] = [{"type": "summary_text", "text": text} for text in texts]
        if encrypted:
            item["encrypted_content"] = encrypted
        return item

    def assistant_text(self, block: TextContent, path: str, position: int) -> dict[str, Any]:
        """A text block of no envelope: an easy-input message item (request) or an output message (response)."""
        if not self.response:
            # Annotations go only in the output-message form, which needs the item's id and status (the
            # envelope of a text read from this API); an easy-input assistant message has text alone.
            self.no_annotations(
                block, path, "an assistant message item without its id (read from this API) holds text only"
            )
            return {"type": "message", "role": "assistant", "content": block.content}
        part = {"type": "output_text", "text": block.content, "annotations": self.annotations(block, path)}
        if block.logprobs:
            part["logprobs"] = [write_logprob(token) for token in block.logprobs]
        return {
            "type": "message",
            "id": f"msg_{position}",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }

    def function_call(
        self, block: ToolCallContent, path: str, position: int, item_position: int, *, made_up: bool = True
    ) -> dict[str, Any]:
        if block.kind is not None:
            self.loss(_at(path, "kind"), f"tool kind {block.kind.value!r}", "function_call has no tool kind")
        if block.signature:
            self.loss(_at(path, "signature"), "tool call signature", "function_call has no signature")
        if block.server_name:
            self.loss(_at(path, "server_name"), "tool server name", "function_call has no server name")
        if block.index != position:
            self.loss(
                _at(path, "index"),
                f"tool call index {block.index}",
                f"the index is read back as the call's position among the message's calls ({position})",
            )
        error = None if self.response else parse_json_object(block.arguments)[1]
        if error is not None and error.startswith("invalid JSON"):
            self.loss(
                _at(path, "arguments"),
                "tool arguments that are not JSON",
                "function_call.arguments holds JSON text: the text is sent as it is, and reading it back is refused",
            )
        self.call_index.setdefault(block.id, position)
        item: dict[str, Any] = {"type": "function_call"}
        if self.response and made_up:
            item["id"] = f"fc_{item_position}"
        item.update(call_id=self.call_id(block.id), name=block.name, arguments=block.arguments)
        if self.response and made_up:
            item["status"] = "completed"
        return item


def to_openai_responses(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
    instructions: bool = False,
    system_role: Literal["system", "developer"] = "system",
) -> dict[str, Any]:
    """Messages as a Responses request payload: ``{"input": [...]}`` (plus ``"instructions"``).

    ``instructions=True`` puts the leading system messages into the
    top-level ``instructions`` string (text blocks joined with ``""``,
    messages with a blank line) instead of ``system_role`` message items.
    ``model`` is the model the request is for: reasoning produced by another
    model is not sent back. What the format cannot hold is reported
    (``report=``), raised (``strict=True``) or warned about.
    """
    if system_role not in ("system", "developer"):
        raise ValidationError.single("system_role", "enum", f"{system_role!r} is not one of: system, developer")
    reporter = Reporter(_TARGET, report, strict=strict)
    writer = _Writer(reporter, ToolIdMap(max_length=64, report=reporter.report), model, response=False)
    items: list[dict[str, Any]] = []
    instruction_texts: list[str] = []
    joined: list[str] = []
    leading = True
    for path, message, _projected in llm_messages(messages, session_messages):
        if isinstance(message, SystemMessage):
            if instructions and leading:
                writer.message_name(message, path)
                texts = []
                for j, block in enumerate(message.contents):
                    where = f"{path}.contents[{j}]"
                    if isinstance(block, TextContent):
                        writer.text_signature(block, where)
                        texts.append(block.content)
                        joined.append(where)
                    else:
                        writer.loss(where, f"{block.type or 'unknown'} content", "a system message holds text only")
                instruction_texts.append("".join(texts))
            else:
                items.extend(writer.system_items(message, path, system_role))
            continue
        leading = False
        if isinstance(message, UserMessage):
            items.extend(writer.user_items(message, path))
        elif isinstance(message, AssistantMessage):
            items.extend(writer.assistant_items(message, path))
        elif isinstance(message, ToolMessage):
            items.extend(writer.tool_items(message, path))
        else:
            writer.loss(path, "message of an unknown role", "this agentmsg version does not know the role")
    payload: dict[str, Any] = {}
    if instructions and instruction_texts:
        payload["instructions"] = "\n\n".join(instruction_texts)
        for where in joined[1:]:
            writer.loss(
                where,
                "text block boundary",
                "instructions is one string: the leading system messages' text blocks are joined "
                "(blocks with '', messages with a blank line) and read back as one block",
            )
    payload["input"] = items
    reporter.finish()
    return payload


def to_openai_responses_response(
    message: AssistantMessage,
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """An assistant message as a Responses ``Response`` object (the fields the message can fill).

    Written: ``id`` (the provenance's response id, else ``resp_`` plus the
    message id), ``object``, ``created_at`` (the message timestamp), ``model``
    (the provenance's model), ``status`` with ``incomplete_details`` or
    ``error``, ``output`` and ``usage``. The request-echo fields the SDK's
    ``Response`` also requires (``parallel_tool_calls``, ``tool_choice``,
    ``tools``...) are not the message's to say and are left out. Items read
    from this API go back from their envelopes, ids and statuses included;
    output items of no envelope get made-up ids by position (``msg_0``,
    ``rs_1``, ``fc_2``). A lone empty text block is written as ``output:
    []``. ``model`` is the model the response stands for: reasoning
    signatures of another model are not written.
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    reporter = Reporter(f"{_TARGET} response", report, strict=strict)
    writer = _Writer(reporter, None, model, response=True)
    contents = message.contents
    if len(contents) == 1 and isinstance(contents[0], TextContent) and contents[0] == TextContent(""):
        output: list[dict[str, Any]] = []  # no answer yet (a queued or in-progress response): read as one empty text
    else:
        output = writer.assistant_items(message, "")
    provenance = message.provenance
    if provenance is None:
        reporter.loss("provenance", "no provenance", "a response always names its producer: it reads back as openai")
    elif (provenance.provider, provenance.api) != (PROVIDER, API):
        reporter.loss(
            "provenance",
            f"provenance {provenance.provider}/{provenance.api}",
            f"the response reads back as {PROVIDER}/{API}",
        )
    report_response_extras(message, reporter, "a Responses response")
    response_id = provenance.response_id if provenance is not None and provenance.response_id else ""
    if not response_id:
        response_id = f"resp_{message.id}"
        if provenance is not None:
            reporter.loss("provenance.response_id", "empty response id", f"a response needs an id; {response_id!r}")
    timestamp = message.pb.timestamp
    created: int | float = timestamp.seconds if not timestamp.nanos else timestamp.seconds + timestamp.nanos / 1e9
    data: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "model": provenance.model if provenance is not None else (model or ""),
    }
    status, reason = _write_status(message, reporter)
    data["status"] = status
    if reason is not None:
        data["incomplete_details"] = {"reason": reason}
    error = _write_error(message, status, reporter)
    if error is not None:
        data["error"] = error
    data["output"] = output
    has_calls = any(item.get("type") == "function_call" for item in output)
    has_refusal = any(_is_refusal_message(item) for item in output)
    normal = _stop_reason(status, reason, has_calls, has_refusal)
    if normal != message.stop_reason:
        shown = message.stop_reason.value if message.stop_reason is not None else "unspecified"
        back = normal.value if normal is not None else "unspecified"
        reporter.loss("stop_reason", f"stop reason {shown}", f"the response's status reads back as {back}")
    if message.usage is not None:
        data["usage"] = _write_usage(message.usage, reporter)
    reporter.finish()
    return data


def _write_status(message: AssistantMessage, reporter: Reporter) -> tuple[str, str | None]:
    raw = message.stop_reason_raw
    if raw in _STATUSES:
        return raw, None
    if raw in _INCOMPLETE_REASONS:
        return "incomplete", raw
    stop = message.stop_reason
    if stop is StopReason.LENGTH:
        status, reason = "incomplete", "max_output_tokens"
    elif stop is StopReason.CONTENT_FILTER:
        status, reason = "incomplete", "content_filter"
    elif stop is StopReason.ABORT:
        status, reason = "cancelled", None
    elif stop is StopReason.ERROR or (stop is None and message.error):
        status, reason = "failed", None
    else:
        status, reason = "completed", None
    if raw:
        reporter.loss(
            "stop_reason_raw",
            f"stop reason {raw!r}",
            f"not a response status or incomplete reason; the status is derived from the normalised stop reason "
            f"({reason or status})",
        )
    return status, reason


def _write_error(message: AssistantMessage, status: str, reporter: Reporter) -> dict[str, Any] | None:
    if status != "failed":
        if message.error:
            reporter.loss("error", "error text", f"only a failed response carries an error (this one is {status})")
        return None
    if not message.error:
        return None
    match = _ERROR_TEXT.match(message.error)
    if match is not None and match.group("code") in _ERROR_CODES:
        return {"code": match.group("code"), "message": match.group("message")}
    reporter.loss(
        "error",
        "error without an error code",
        "a response error needs one of the API's codes: it is written as server_error and reads back with it",
    )
    return {"code": "server_error", "message": message.error}


def _write_usage(usage: Usage, reporter: Reporter) -> dict[str, Any]:
    def known(value: int | None, name: str, written: int) -> int:
        if value is None:
            reporter.loss(
                f"usage.{name}",
                f"unknown {name}",
                f"the response's usage needs every count: {written} was written and reads back as known",
            )
            return written
        return value

    fresh = known(usage.known("input_tokens"), "input_tokens", 0)
    cached = known(usage.known("cache_read_tokens"), "cache_read_tokens", 0)
    written = known(usage.known("cache_write_tokens"), "cache_write_tokens", 0)
    output = known(usage.known("output_tokens"), "output_tokens", 0)
    reasoning = known(usage.known("reasoning_tokens"), "reasoning_tokens", 0)
    prompt = fresh + cached + written
    total = known(usage.known("total_tokens"), "total_tokens", prompt + output)
    if "cost" in usage.reported:
        reporter.loss("usage.cost", "usage cost", "the response's usage has no cost")
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": total,
    }


def _is_refusal_message(item: Any) -> bool:
    if not isinstance(item, Mapping) or item.get("type", "message") != "message":
        return False
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") == "refusal" for part in content
    )


def _stop_reason(status: str | None, reason: str | None, has_calls: bool, has_refusal: bool) -> StopReason | None:
    """The normalised stop reason of a response's status (and incomplete reason)."""
    if status == "completed":
        if has_calls:
            return StopReason.TOOL_CALLS
        return StopReason.CONTENT_FILTER if has_refusal else StopReason.STOP
    if status == "incomplete":
        return {"max_output_tokens": StopReason.LENGTH, "content_filter": StopReason.CONTENT_FILTER}.get(reason or "")
    return {"failed": StopReason.ERROR, "cancelled": StopReason.ABORT}.get(status or "")


# --------------------------------------------------------------------------- format -> agentmsg


class _Reader:
    """Reads one payload, recording every problem with its JSON path."""

    def __init__(self, what: str, id_map: Mapping[str, str] | None, pass_through: bool, *, response: bool) -> None:
        self.errors = PayloadErrors(what)
        self.id_map = id_map
        self.pass_through = pass_through
        self.response = response
        self.call_index: dict[str, int] = {}

    def add(self, path: str, rule: str, message: str) -> None:
        self.errors.add(path, f"{_RULE}.{rule}", message)

    def count(self) -> int:
        return len(self.errors.found)

    def build(self, path: str, factory: Callable[[], T]) -> T | None:
        with self.errors.building(path):
            return factory()
        return None

    # ----------------------------------------------------------------- fields

    def obj(self, value: Any, path: str, what: str = "an object") -> Mapping[str, Any] | None:
        if not isinstance(value, Mapping):
            self.add(path, "type", f"expected {what}, got {json_type(value)}")
            return None
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, *, min_len: int = 0) -> str | None:
        """A required string field."""
        where = _at(path, key)
        if key not in obj:
            self.add(where, "required", f"required string {key!r} is missing")
            return None
        value = obj[key]
        if not isinstance(value, str):
            self.add(where, "type", f"expected a string, got {json_type(value)}")
            return None
        if len(value) < min_len:
            self.add(where, "min_len", f"{key!r} must not be empty")
            return None
        return value

    def optional_string(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        """An optional string field: absent or null gives None."""
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(_at(path, key), "type", f"expected a string or null, got {json_type(value)}")
            return None
        return value

    def enum(self, obj: Mapping[str, Any], key: str, path: str, allowed: Sequence[str]) -> str | None:
        value = self.optional_string(obj, key, path)
        if value is not None and value not in allowed:
            self.add(_at(path, key), "enum", f"{value!r} is not one of: {', '.join(allowed)}")
            return None
        return value

    def array(self, obj: Mapping[str, Any], key: str, path: str) -> list[Any] | None:
        where = _at(path, key)
        if key not in obj:
            self.add(where, "required", f"required array {key!r} is missing")
            return None
        value = obj[key]
        if not isinstance(value, list):
            self.add(where, "type", f"expected an array, got {json_type(value)}")
            return None
        return value

    def item_type(self, item: Mapping[str, Any], path: str) -> str | None:
        """The item's ``type``; a message may leave it out (the SDK's EasyInputMessageParam)."""
        if "type" not in item or item["type"] is None:
            if "role" in item:
                return "message"
            self.add(_at(path, "type"), "required", "required string 'type' is missing")
            return None
        value = item["type"]
        if not isinstance(value, str):
            self.add(_at(path, "type"), "type", f"expected a string, got {json_type(value)}")
            return None
        return value

    def text(self, text: str, path: str) -> TextContent | None:
        return self.build(path, lambda: TextContent(text))

    def pass_block(self, block: Mapping[str, Any], path: str) -> ProviderContent | None:
        return self.build(path, lambda: ProviderContent.from_block(BLOCK_FORMAT, block))

    def approval(self, item: Mapping[str, Any], path: str) -> ToolApprovalContent | None:
        """An ``mcp_approval_response`` item: the decision, the item kept as its original."""
        request = self.string(item, "approval_request_id", path, min_len=1)
        approve = item.get("approve")
        if not isinstance(approve, bool):
            self.add(_at(path, "approve"), "type", f"expected a boolean, got {json_type(approve)}")
            return None
        reason = self.optional_string(item, "reason", path)
        if request is None:
            return None
        return self.build(
            path,
            lambda: ToolApprovalContent(
                request,
                "approved" if approve else "denied",
                reason or "",
                original=ProviderContent.from_block(BLOCK_FORMAT, item),
            ),
        )

    # ----------------------------------------------------------------- parts

    def part(self, part: Any, path: str, allowed: Sequence[str], holder: str) -> ContentBase | None:
        """One content part of a user or system message or of a tool output."""
        data = self.obj(part, path)
        if data is None:
            return None
        kind = self.item_type(data, path)
        if kind is None:
            return None
        if kind not in allowed:
            if holder == "user" and self.pass_through:
                return self.pass_block(data, path)
            known = ", ".join(allowed)
            if kind in _USER_PARTS:
                self.add(_at(path, "type"), "unsupported", f"a {holder} cannot hold {kind} in agentmsg (only {known})")
            else:
                tail = " (pass_through_unknown=True keeps it)" if holder == "user" else ""
                self.add(_at(path, "type"), "unknown_type", f"unknown part type {kind!r} here; known: {known}{tail}")
            return None
        if kind == "input_text":
            text = self.string(data, "text", path)
            return None if text is None else self.build(path, lambda: TextContent(text))
        if kind == "input_image":
            return self.image(data, path, holder)
        return self.file(data, path)

    def image(self, data: Mapping[str, Any], path: str, holder: str) -> ContentBase | None:
        before = self.count()
        detail_text = self.enum(data, "detail", path, _IMAGE_DETAILS)
        url = self.optional_string(data, "image_url", path)
        file_id = self.optional_string(data, "file_id", path)
        if self.count() > before:
            return None
        if detail_text == "original":
            if holder == "user" and self.pass_through:
                return self.pass_block(data, path)
            self.add(_at(path, "detail"), "unsupported", "agentmsg has no image detail 'original'")
            return None
        detail = None if detail_text in (None, "auto") else ImageDetail(detail_text)
        if url is not None and file_id is not None:
            self.add(path, "one_of", "an input_image has image_url or file_id, not both")
            return None
        if file_id is not None:
            if not file_id:
                self.add(_at(path, "file_id"), "min_len", "'file_id' must not be empty")
                return None
            return self.build(path, lambda: ImageContent.from_file_id(file_id, detail=detail))
        if url is None:
            self.add(path, "required", "an input_image needs image_url or file_id")
            return None
        where = _at(path, "image_url")
        if url[:5].lower() == "data:":
            decoded = self.data_url(url, where)
            if decoded is None:
                return None
            declared, raw = decoded
            media_type = declared if declared.lower().startswith("image/") else None
            return self.build(where, lambda: ImageContent(raw, media_type=media_type, detail=detail))
        if not _URL.match(url):
            self.add(where, "url", f"not an absolute URL or a data: URL: {url[:80]!r}")
            return None
        return self.build(where, lambda: ImageContent.from_url(url, detail=detail))

    def file(self, data: Mapping[str, Any], path: str) -> ContentBase | None:
        before = self.count()
        self.enum(data, "detail", path, _FILE_DETAILS)
        file_data = self.optional_string(data, "file_data", path)
        file_id = self.optional_string(data, "file_id", path)
        file_url = self.optional_string(data, "file_url", path)
        filename = self.optional_string(data, "filename", path) or ""
        if self.count() > before:
            return None
        sources = [
            name
            for name, value in (("file_data", file_data), ("file_id", file_id), ("file_url", file_url))
            if value is not None
        ]
        if len(sources) > 1:
            self.add(
                path, "one_of", f"an input_file has one of file_data, file_id, file_url, not {' and '.join(sources)}"
            )
            return None
        if file_id is not None:
            if not file_id:
                self.add(_at(path, "file_id"), "min_len", "'file_id' must not be empty")
                return None
            return self.build(path, lambda: DocumentContent.from_file_id(file_id, filename=filename))
        if file_url is not None:
            where = _at(path, "file_url")
            if not _URL.match(file_url):
                self.add(where, "url", f"not an absolute URL: {file_url[:80]!r}")
                return None
            return self.build(where, lambda: DocumentContent.from_url(file_url, filename=filename))
        if file_data is None:
            self.add(path, "required", "an input_file needs file_data, file_id or file_url")
            return None
        where = _at(path, "file_data")
        if file_data[:5].lower() == "data:":
            decoded = self.data_url(file_data, where)
            if decoded is None:
                return None
            declared, raw = decoded
            media_type: str | None = declared or None
        else:
            try:
                raw = _media.decode_base64(file_data, "file_data")
            except ValueError as exc:
                self.add(where, "base64", str(exc))
                return None
            media_type = None
        if media_type is None and not raw.startswith(b"%PDF-"):
            media_type = _media.guess_from_path(filename, "") or None
        return self.build(where, lambda: DocumentContent(raw, media_type=media_type, filename=filename))

    def data_url(self, url: str, path: str) -> tuple[str, bytes] | None:
        """(media type as written, bytes) of a ``data:`` URL."""
        match = _DATA_URL.match(url)
        if match is None:
            self.add(path, "url", "a malformed data: URL (no comma)")
            return None
        payload = match.group("data")
        if match.group("b64"):
            try:
                raw = base64.b64decode(re.sub(r"\s+", "", payload), validate=True)
            except (binascii.Error, ValueError) as exc:
                self.add(path, "base64", f"invalid base64 in the data: URL: {exc}")
                return None
        else:
            raw = unquote_to_bytes(payload)
        if not raw:
            self.add(path, "url", "the data: URL holds no data")
            return None
        return match.group("mime"), raw

    # ----------------------------------------------------------------- items

    def message_content(self, item: Mapping[str, Any], path: str, role: str) -> list[ContentBase] | None:
        """The blocks of a user, system or developer message item."""
        where = _at(path, "content")
        if "content" not in item:
            self.add(where, "required", "required field 'content' is missing")
            return None
        content = item["content"]
        if isinstance(content, str):
            text = self.text(content, where)
            return None if text is None else [text]
        if not isinstance(content, list):
            self.add(where, "type", f"expected a string or an array, got {json_type(content)}")
            return None
        if not content:
            self.add(where, "min_items", f"a {role} message needs at least one part in agentmsg")
            return None
        allowed = _USER_PARTS if role == "user" else ("input_text",)
        holder = "user" if role == "user" else "system message"
        before = self.count()
        blocks = [self.part(part, f"{where}[{k}]", allowed, holder) for k, part in enumerate(content)]
        if self.count() > before:
            return None
        return [block for block in blocks if block is not None]

    def assistant_message(self, item: Mapping[str, Any], path: str) -> list[ContentBase] | None:
        """An assistant message item: its envelope (when it needs one) and text blocks; or the item kept whole.

        The whole item is kept (as ProviderContent) when it holds a refusal or a
        part type not read here.
        """
        where = _at(path, "content")
        if "content" not in item:
            self.add(where, "required", "required field 'content' is missing")
            return None
        content = item["content"]
        if isinstance(content, str):
            whole = self.text(content, where)
            return None if whole is None else self.enveloped(item, path, [whole])
        if not isinstance(content, list):
            self.add(where, "type", f"expected a string or an array, got {json_type(content)}")
            return None
        before = self.count()
        texts: list[TextContent | None] = []
        keep_whole = False
        for k, part in enumerate(content):
            part_path = f"{where}[{k}]"
            data = self.obj(part, part_path)
            if data is None:
                continue
            kind = self.item_type(data, part_path)
            if kind in _TEXT_PARTS:
                texts.append(self.output_text(data, part_path))
            elif kind == "refusal":
                if self.string(data, "refusal", part_path) is not None:
                    keep_whole = True
            elif kind is not None:
                if self.pass_through:
                    keep_whole = True
                else:
                    self.add(
                        _at(part_path, "type"),
                        "unknown_type",
                        f"unknown assistant part type {kind!r}; known: output_text, refusal "
                        "(pass_through_unknown=True keeps the whole item)",
                    )
        if self.count() > before:
            return None
        if keep_whole:
            block = self.pass_block(item, path)
            return None if block is None else [block]
        return self.enveloped(item, path, [text for text in texts if text is not None])

    def output_text(self, data: Mapping[str, Any], path: str) -> TextContent | None:
        """An ``output_text`` part: text, annotations as citations, logprobs."""
        text = self.string(data, "text", path)
        citations: list[Citation] = []
        annotations = data.get("annotations")
        if annotations is not None and not isinstance(annotations, list):
            self.add(_at(path, "annotations"), "type", f"expected an array, got {json_type(annotations)}")
        for k, annotation in enumerate(annotations or ()):
            found = self.obj(annotation, f"{_at(path, 'annotations')}[{k}]")
            if found is not None:
                citation = self.build(
                    f"{_at(path, 'annotations')}[{k}]",
                    lambda found=found: read_annotation(found),  # type: ignore[misc]
                )
                if citation is not None:
                    citations.append(citation)
        logprobs: list[TokenLogprob] = []
        entries = data.get("logprobs")
        if entries is not None and not isinstance(entries, list):
            self.add(_at(path, "logprobs"), "type", f"expected an array, got {json_type(entries)}")
        for k, entry in enumerate(entries or ()):
            token = self.build(
                f"{_at(path, 'logprobs')}[{k}]",
                lambda entry=entry: read_logprob(entry, ""),  # type: ignore[misc]
            )
            if token is not None:
                logprobs.append(token)
        if text is None:
            return None
        return self.build(path, lambda: TextContent(text, citations=citations, logprobs=logprobs))

    def enveloped(
        self, item: Mapping[str, Any], path: str, blocks: list[ContentBase], *, always: bool = False
    ) -> list[ContentBase] | None:
        """The item's envelope (when it needs one) before its typed blocks."""
        envelope = self.build(path, lambda: item_envelope(item, always=always))
        if envelope is None:
            return blocks
        return [envelope, *blocks]

    def hosted(self, item: Mapping[str, Any], path: str) -> list[ContentBase] | None:
        """A hosted tool item as a call and its result; kept whole when a typed field does not fit."""
        try:
            return hosted_blocks(item)
        except (ValidationError, ValueError):
            block = self.pass_block(item, path)
            return None if block is None else [block]

    def output_item(self, item: Mapping[str, Any], path: str, kind: str, position: int) -> list[ContentBase] | None:
        """The blocks of an assistant-side item (message, function_call, reasoning, hosted or other)."""
        if kind == "message":
            return self.assistant_message(item, path)
        if kind == "function_call":
            call = self.function_call(item, path, position)
            return None if call is None else self.enveloped(item, path, [call])
        if kind == "reasoning":
            return self.reasoning(item, path)
        if kind in _HOSTED:
            return self.hosted(item, path)
        if self.pass_through:
            block = self.pass_block(item, path)
            return None if block is None else [block]
        return None

    def function_call(self, item: Mapping[str, Any], path: str, position: int) -> ToolCallContent | None:
        before = self.count()
        call_id = self.string(item, "call_id", path, min_len=1)
        name = self.string(item, "name", path, min_len=1)
        arguments = self.string(item, "arguments", path)
        if arguments is not None and not self.response:
            _, error = parse_json_object(arguments)
            if error is not None and error.startswith("invalid JSON"):
                self.add(_at(path, "arguments"), "json", f"the arguments are not JSON: {error}")
        if call_id is None or name is None or arguments is None or self.count() > before:
            return None
        original = restore_id(call_id, self.id_map)
        self.call_index.setdefault(original, position)
        return self.build(path, lambda: ToolCallContent(original, name, arguments=arguments, index=position))

    def function_output(self, item: Mapping[str, Any], path: str) -> ToolResultContent | None:
        before = self.count()
        call_id = self.string(item, "call_id", path, min_len=1)
        name = self.optional_string(item, "name", path) or ""
        where = _at(path, "output")
        blocks: list[Any] = []
        if "output" not in item:
            self.add(where, "required", "required field 'output' is missing")
        else:
            output = item["output"]
            if isinstance(output, str):
                text = self.text(output, where) if output else None
                blocks = [] if text is None else [text]
            elif isinstance(output, list):
                for k, part in enumerate(output):
                    block = self.part(part, f"{where}[{k}]", _USER_PARTS, "tool output")
                    if block is not None:
                        blocks.append(block)
            else:
                self.add(where, "type", f"expected a string or an array, got {json_type(output)}")
        if call_id is None or self.count() > before:
            return None
        original = restore_id(call_id, self.id_map)
        index = self.call_index.get(original, 0)
        return self.build(path, lambda: ToolResultContent(original, blocks, name=name, index=index))

    def reasoning(self, item: Mapping[str, Any], path: str) -> list[ContentBase] | None:
        before = self.count()
        summary = self.array(item, "summary", path)
        encrypted = self.optional_string(item, "encrypted_content", path) or ""
        texts: list[str] = []
        for k, part in enumerate(summary or []):
            part_path = f"{_at(path, 'summary')}[{k}]"
            data = self.obj(part, part_path)
            if data is None:
                continue
            kind = self.string(data, "type", part_path)
            if kind is not None and kind != "summary_text":
                self.add(_at(part_path, "type"), "enum", f"{kind!r} is not summary_text")
            text = self.string(data, "text", part_path)
            if text is not None:
                texts.append(text)
        if summary is None or self.count() > before:
            return None
        if not texts and not encrypted:
            # It only names a stored item by its id (or holds reasoning text alone): kept whole.
            return self.enveloped(item, path, [], always=True)
        if not texts:
            redacted = self.build(path, lambda: RedactedThinkingContent(encrypted))
            return None if redacted is None else self.enveloped(item, path, [redacted])
        blocks: list[ContentBase] = []
        for k, text in enumerate(texts):
            with self.errors.building(f"{_at(path, 'summary')}[{k}]"):
                blocks.append(ThinkingContent(text, encrypted if k == len(texts) - 1 else ""))
        return self.enveloped(item, path, blocks)


def from_openai_responses(
    payload: Mapping[str, Any] | Sequence[Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
) -> list[AgentMessage]:
    """A Responses request payload (``{"input": ..., "instructions"?: ...}``, or the input list) as messages.

    Every problem raises one :class:`~agentmsg.ValidationError` naming each
    JSON path. ``id_map`` (a report's ``id_map``) restores rewritten call
    ids. Items and user parts of types not read here are kept verbatim as
    :class:`~agentmsg.ProviderContent` (items the client sends, ``*_output``,
    ``item_reference`` and role ``user``, in a user message; role ``system`` / ``developer`` in a system message; the
    others in the assistant's); ``pass_through_unknown=False`` refuses them
    instead. Message ids are new UUIDs and timestamps the time of reading.
    """
    reader = _Reader("OpenAI Responses payload", id_map, pass_through_unknown, response=False)
    out: list[AgentMessage] = []
    base = ""
    raw_items: Any = None
    if isinstance(payload, Mapping):
        base = "input"
        instructions = payload.get("instructions")
        if instructions is not None:
            if isinstance(instructions, str):
                # An empty instructions string is no instruction: it reads as no message (and so writes back absent).
                system = (
                    reader.build("instructions", lambda: SystemMessage.text(instructions)) if instructions else None
                )
                if system is not None:
                    out.append(system)
            else:
                reader.add("instructions", "type", f"expected a string or null, got {json_type(instructions)}")
        if "input" not in payload:
            reader.add("input", "required", "required field 'input' is missing")
            reader.errors.raise_if_any()
        raw_items = payload["input"]
        if isinstance(raw_items, str):
            user = reader.build("input", lambda: UserMessage.text(raw_items))
            reader.errors.raise_if_any()
            assert user is not None
            return [*out, user]
    elif isinstance(payload, (list, tuple)):
        raw_items = payload
    else:
        reader.add("", "type", f"expected a request object or an input array, got {json_type(payload)}")
        reader.errors.raise_if_any()
    if not isinstance(raw_items, (list, tuple)):
        reader.add(base, "type", f"expected a string or an array, got {json_type(raw_items)}")
        reader.errors.raise_if_any()
    out.extend(_read_items(reader, raw_items, base))
    reader.errors.raise_if_any()
    return out


def _read_items(reader: _Reader, raw_items: Sequence[Any], base: str) -> list[AgentMessage]:
    """The messages of an input list: items grouped as the module docstring says."""
    out: list[AgentMessage] = []
    assistant: list[ContentBase] = []
    results: list[ToolResultContent] = []
    position = 0
    group_path = base

    def flush() -> None:
        nonlocal position
        if assistant:
            # Reasoning items are this API's own: a turn holding them may send them back to any OpenAI model.
            reasoned = any(isinstance(block, (ThinkingContent, RedactedThinkingContent)) for block in assistant)
            provenance = Provenance(PROVIDER, API) if reasoned else None
            message = reader.build(
                group_path,
                lambda: AssistantMessage(list(assistant), provenance=provenance),  # type: ignore[arg-type]
            )
            if message is not None:
                out.append(message)
            assistant.clear()
        if results:
            tool = reader.build(group_path, lambda: ToolMessage(list(results)))
            if tool is not None:
                out.append(tool)
            results.clear()
        position = 0

    for i, raw in enumerate(raw_items):
        path = f"{base}[{i}]"
        item = reader.obj(raw, path, "an item object")
        if item is None:
            continue
        kind = reader.item_type(item, path)
        if kind is None:
            continue
        side = (
            "assistant" if kind in ("function_call", "reasoning") else "tool" if kind == "function_call_output" else ""
        )
        role = None
        if kind == "message":
            role = reader.string(item, "role", path)
            if role is not None and role not in _ROLES:
                reader.add(_at(path, "role"), "enum", f"{role!r} is not one of: {', '.join(_ROLES)}")
                role = None
            if role == "assistant":
                side = "assistant"
        elif side == "":
            item_role = item.get("role")
            if kind not in _HOSTED and item_role in ("system", "developer", "user"):
                side = "system" if item_role in ("system", "developer") else "user"
            else:
                side = "user" if _user_side_item(kind) else "assistant"
        if (side != "assistant" and assistant) or (side != "tool" and results):
            flush()
        if not assistant and not results:
            group_path = path
        if kind == "message":
            if role is None:
                continue
            if role == "assistant":
                blocks = reader.assistant_message(item, path)
                assistant.extend(blocks or [])
                continue
            content = reader.message_content(item, path, role)
            if content is None:
                continue
            if role == "user":
                user = reader.build(path, lambda content=content: UserMessage(content))  # type: ignore[misc]
                if user is not None:
                    out.append(user)
            else:
                system = reader.build(path, lambda content=content: SystemMessage(content))  # type: ignore[misc]
                if system is not None:
                    out.append(system)
        elif kind == "function_call_output":
            result = reader.function_output(item, path)
            if result is not None:
                results.append(result)
        elif kind == "mcp_approval_response":
            approval = reader.approval(item, path)
            if approval is not None:
                user = reader.build(path, lambda approval=approval: UserMessage([approval]))  # type: ignore[misc]
                if user is not None:
                    out.append(user)
        elif side == "assistant":
            if kind == "function_call":
                call_position = position
                position += 1
            else:
                call_position = 0
            found = reader.output_item(item, path, kind, call_position)
            if found is None and not reader.pass_through and kind not in ("function_call", "reasoning"):
                reader.add(
                    _at(path, "type"),
                    "unknown_type",
                    f"an item of type {kind!r} is not read here (message, function_call, function_call_output, "
                    "reasoning, hosted tool items); pass_through_unknown=True keeps it verbatim",
                )
            assistant.extend(found or [])
        elif reader.pass_through:
            block = reader.pass_block(item, path)
            if block is None:
                continue
            if side == "user":
                user = reader.build(path, lambda block=block: UserMessage([block]))  # type: ignore[misc]
                if user is not None:
                    out.append(user)
            else:
                system = reader.build(path, lambda block=block: SystemMessage([block]))  # type: ignore[misc]
                if system is not None:
                    out.append(system)
        else:
            reader.add(
                _at(path, "type"),
                "unknown_type",
                f"an item of type {kind!r} is not read here (message, function_call, function_call_output, "
                "reasoning, hosted tool items); pass_through_unknown=True keeps it verbatim",
            )
    flush()
    return out


def from_openai_responses_response(
    response: Mapping[str, Any],
    *,
    pass_through_unknown: bool = True,
) -> AssistantMessage:
    """A Responses ``Response`` object (as a dict) as an assistant message.

    Output items become content as :func:`from_openai_responses` reads them
    (argument text is kept even when it is not JSON); ``status`` and
    ``incomplete_details`` give the stop reason, ``usage`` the normalised
    usage, ``model`` and ``id`` the provenance, ``created_at`` the timestamp.
    Hosted tool items read as hosted calls and results, and output items of
    other types are kept as ProviderContent (``pass_through_unknown=False``
    refuses them, ``unknown_type``). An empty ``output`` (a queued or
    in-progress background response) reads as one empty text block.
    """
    reader = _Reader("OpenAI Responses response", None, pass_through_unknown, response=True)
    data = reader.obj(response, "", "a response object")
    if data is None:
        reader.errors.raise_if_any()
        raise AssertionError("unreachable")
    response_id = reader.optional_string(data, "id", "") or ""
    model = reader.optional_string(data, "model", "") or ""
    status = reader.enum(data, "status", "", _STATUSES)
    reason: str | None = None
    incomplete = data.get("incomplete_details")
    if incomplete is not None:
        details = reader.obj(incomplete, "incomplete_details")
        if details is not None:
            reason = reader.optional_string(details, "reason", "incomplete_details")
    error_text = ""
    if data.get("error") is not None:
        error = reader.obj(data["error"], "error")
        if error is not None:
            code = reader.optional_string(error, "code", "error") or ""
            text = reader.optional_string(error, "message", "error") or ""
            error_text = f"{code}: {text}" if code and text else (text or code)
    created = data.get("created_at")
    timestamp: float | None = None
    if created is not None:
        if isinstance(created, bool) or not isinstance(created, (int, float)):
            reader.add("created_at", "type", f"expected a number, got {json_type(created)}")
        else:
            timestamp = created
    usage = _read_usage(reader, data.get("usage"))
    blocks: list[ContentBase] = []
    has_calls = False
    has_refusal = False
    output = reader.array(data, "output", "")
    for i, raw in enumerate(output or []):
        path = f"output[{i}]"
        item = reader.obj(raw, path, "an item object")
        if item is None:
            continue
        kind = reader.item_type(item, path)
        if kind is None:
            continue
        if kind == "message":
            role = reader.string(item, "role", path)
            if role is not None and role != "assistant":
                reader.add(_at(path, "role"), "enum", f"an output message's role is assistant, not {role!r}")
                continue
            has_refusal = has_refusal or _is_refusal_message(item)
        has_calls = has_calls or kind == "function_call"
        found = reader.output_item(item, path, kind, sum(isinstance(b, ToolCallContent) for b in blocks))
        if found is None and not reader.pass_through and kind not in _TYPED_KEYS:
            reader.add(
                _at(path, "type"),
                "unknown_type",
                f"an output item of type {kind!r} is not read here (message, function_call, reasoning, hosted "
                "tool items); pass_through_unknown=True keeps it verbatim",
            )
        blocks.extend(found or [])
    reader.errors.raise_if_any()
    stop = _stop_reason(status, reason, has_calls, has_refusal)
    raw_reason = reason if status == "incomplete" and reason else (status or "")
    if output is not None and not blocks and not error_text and stop in (None, StopReason.STOP, StopReason.TOOL_CALLS):
        # agentmsg needs a block in an answer that did not stop early or fail (a queued or in-progress
        # background response has none yet): one empty text block, which the writer gives back as [].
        blocks.append(TextContent(""))
    message = reader.build(
        "",
        lambda: AssistantMessage(
            blocks,  # type: ignore[arg-type]
            usage=usage,
            stop_reason=stop,
            stop_reason_raw=raw_reason,
            error=error_text,
            provenance=Provenance(PROVIDER, API, model, response_id),
            id=str(uuid.uuid4()),
            timestamp=timestamp if timestamp is not None else datetime.now(UTC),
        ),
    )
    reader.errors.raise_if_any()
    assert message is not None
    return message


def _read_usage(reader: _Reader, value: Any) -> Usage | None:
    """The normalised usage (input_tokens without the cached and cache-written tokens)."""
    if value is None:
        return None
    usage = reader.obj(value, "usage")
    if usage is None:
        return None
    before = reader.count()

    def count(obj: Mapping[str, Any], key: str, path: str) -> int | None:
        number = obj.get(key)
        if number is None:
            return None
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            reader.add(_at(path, key), "type", f"expected a non-negative integer, got {preview(number)}")
            return None
        return number

    def details(key: str) -> Mapping[str, Any]:
        inner = usage.get(key)
        if inner is None:
            return {}
        return reader.obj(inner, _at("usage", key)) or {}

    prompt = count(usage, "input_tokens", "usage")
    cached = count(details("input_tokens_details"), "cached_tokens", "usage.input_tokens_details")
    written = count(details("input_tokens_details"), "cache_write_tokens", "usage.input_tokens_details")
    output = count(usage, "output_tokens", "usage")
    reasoning = count(details("output_tokens_details"), "reasoning_tokens", "usage.output_tokens_details")
    total = count(usage, "total_tokens", "usage")
    fresh = None if prompt is None else prompt - (cached or 0) - (written or 0)
    if fresh is not None and fresh < 0:
        reader.add(
            "usage.input_tokens",
            "usage",
            f"input_tokens ({prompt}) is less than the cached and cache-written tokens it includes",
        )
    if reader.count() > before:
        return None
    return reader.build(
        "usage",
        lambda: Usage(
            input_tokens=fresh,
            output_tokens=output,
            cache_read_tokens=cached,
            cache_write_tokens=written,
            reasoning_tokens=reasoning,
            total_tokens=total,
        ),
    )
