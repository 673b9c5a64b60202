"""Google Gemini ``generateContent`` (REST JSON, ``v1beta``), both directions.

The format is the REST form of ``google.ai.generativelanguage.v1beta``
(``content.proto`` and ``generative_service.proto`` in ``googleapis/googleapis``;
the Gemini API reference at ai.google.dev/api/generate-content): a request is
``{"systemInstruction": Content, "contents": [Content]}``, a ``Content`` is
``{"role": "user" | "model", "parts": [Part]}``, and a ``Part`` holds one of
``text``, ``inlineData``, ``fileData``, ``functionCall``, ``functionResponse``,
``executableCode``, ``codeExecutionResult``, ``toolCall``, ``toolResponse``
(and kinds agentmsg has no type for, kept verbatim), plus the flags
``thought`` and ``thoughtSignature``. Field names are lowerCamelCase as the REST
reference writes them; reading also takes the snake_case names the API accepts
(``inline_data``, ``mime_type``...).

Mapping (agentmsg <-> format):

====================================  =========================================================
agentmsg                              Gemini
====================================  =========================================================
SystemMessage (every one, in order)   ``systemInstruction.parts[*].text`` (omitted when none)
UserMessage / ToolMessage             ``{"role": "user"}`` content
AssistantMessage                      ``{"role": "model"}`` content
(consecutive messages of one role)    one content (parts concatenated)
TextContent(text, signature)          ``{"text", "thoughtSignature"?}``
ThinkingContent(text, signature)      ``{"text", "thought": true, "thoughtSignature"?}``
ImageContent / AudioContent /         ``inlineData`` {mimeType, data (base64)} for bytes;
DocumentContent                       ``fileData`` {mimeType?, fileUri} for URLs and file ids;
                                      the class is chosen by ``mimeType`` on reading
                                      (``image/*``, ``audio/*``, anything else a document)
ImageContent.detail low/medium/high   part ``mediaResolution.level`` ``MEDIA_RESOLUTION_LOW``...
ToolCallContent(id, name, arguments,  ``{"functionCall": {id?, name, args}, "thoughtSignature"?}``
signature)                            (``args`` is the parsed argument object)
ToolResultContent(id, name, content,  ``{"functionResponse": {id?, name, response, parts?}}``:
is_error)                             text in ``response`` (``{"output": ...}``, or
                                      ``{"error": ...}`` when ``is_error``), media bytes in
                                      ``parts[*].inlineData``
HostedToolCallContent /               ``executableCode`` / ``codeExecutionResult`` parts (code
HostedToolResultContent               execution: input ``{"language", "code"}``, stdout = the
                                      ``output``, status from ``outcome``) and ``toolCall`` /
                                      ``toolResponse`` parts (built-in tools; kind from
                                      ``toolType``), each with the whole part as ``original``
TextContent.citations + a hosted      (responses) ``groundingMetadata``: see "Grounding"
search call and result
HostedToolCallContent (web_fetch) +   (responses) ``urlContextMetadata``: a call
one result per URL                    ``url_context`` (``{"urls": [...]}``) and one result a
                                      URL (status ``urlRetrievalStatus``)
TextContent.logprobs                  (responses) ``logprobsResult`` (``chosenCandidates`` and
                                      ``topCandidates``: token, ``logProbability``,
                                      ``tokenId``) on the first answer text block
ProviderContent (provider "google")   the part, verbatim (any part kind or field agentmsg has
                                      no type for); type ``promptFeedback``: the response's
                                      ``promptFeedback``; type ``responseMetadata``: what a
                                      response carries with no typed place (below)
AssistantMessage usage / stop /       (responses) ``usageMetadata``, ``finishReason``,
error / provenance                    ``finishMessage``, ``modelVersion`` and ``responseId``
====================================  =========================================================

Grounding (responses). A candidate's ``groundingMetadata`` is a hosted search
call (name ``google_search``, kind web search, or ``file_search`` when its
chunks are ``retrievedContext``; input ``{"queries": webSearchQueries}``; its
``original`` is the whole ``groundingMetadata``) followed by a result listing
the chunks as search results (``web`` / ``maps``: URL and title;
``retrievedContext``: URI, title and text). Each ``groundingSupports`` entry
gives one :class:`~agentmsg.Citation` per chunk index on the text block of
its ``segment.partIndex`` (0 when absent): ``web`` / ``maps`` chunks as web
citations (``result_index`` = the chunk index), ``retrievedContext`` as
search-result citations, the span converted from UTF-8 byte offsets to code
points, ``confidence`` from ``confidenceScores``, the support object as the
citation's ``original``. These blocks, then URL context, then the
``promptFeedback`` and ``responseMetadata`` blocks follow the parts. Writing a
response, the call's ``original`` goes back as ``groundingMetadata`` (so the
citations read from it need nothing more); citations of any other origin are
reported (Gemini grounds through its own metadata only), and so are all
citations in a request.

Response metadata. A ``ProviderContent`` of type ``responseMetadata`` holds,
verbatim, what a response carries that agentmsg has no field for: the
``usageMetadata`` keys other than the five typed counts (per-modality
``*TokensDetails``, ``toolUsePromptTokenCount``, Vertex AI's
``trafficType``...), candidate fields (``avgLogprobs``, ``safetyRatings``,
``citationMetadata``, a ``logprobsResult`` that does not come back exactly
from tokens, a ``content`` with no parts) under ``"candidate"``, and response
fields such as Vertex AI's ``createTime``. :func:`to_gemini_response` writes
it back in place; it is not model input, so :func:`to_gemini` leaves it (and
``promptFeedback``) out without a report, and other formats report it.

Choices where the two models differ:

- Signatures (rule 3 of :mod:`agentmsg.providers._common`): ``thoughtSignature``
  is written on a part only when :func:`may_replay` accepts the message's
  provenance for provider ``"google"``, API ``"google-generative-ai"`` (and
  ``model`` when given). Otherwise the signature is reported lost; thinking
  keeps its text as a ``thought`` part. Gemini 3 models answer 400 when the
  first ``functionCall`` of a model turn comes back without a signature
  (history from another model, or calls whose signatures may not be sent):
  pass ``unsigned_call_signature`` to put a placeholder on the first
  ``functionCall`` part of each assistant message that has none. Google
  documents ``"skip_thought_signature_validator"`` and
  ``"context_engineering_is_the_way_to_go"`` for this (see
  :data:`PLACEHOLDER_SIGNATURES`); nothing is invented by default. Reading,
  those placeholder values are dropped: they sign nothing.
- Tool-call arguments are an object in the format: the argument text is
  parsed on the way out and written back with
  ``json.dumps(args, ensure_ascii=False, separators=(",", ":"))`` on the way
  in, so the text comes back re-serialised (key order is kept, spacing is
  not; empty text reads back as ``"{}"``). Text that is not a JSON object is
  reported lost and ``{}`` is sent in its place (strict mode raises).
- Function responses. ``response`` is a JSON object; the Gemini API reads its
  ``"output"`` key as the function's output and its ``"error"`` key as error
  details (``FunctionResponse.response`` in the reference). A result's text is
  written as ``{"output": text}``, or ``{"error": text}`` when ``is_error``;
  no text gives ``""``; several text blocks give a list of their texts.
  Reading, ``{"output": str}`` and ``{"error": str}`` give one text block
  (none for ``""``), a list of strings gives one block per string, and any
  other object (other keys, a non-string value, ``{}``) gives one text block
  holding the object as compact JSON (what other formats send) followed by a
  ``ProviderContent("google", "response")`` holding the object verbatim,
  ``is_error`` being true when it has an ``"error"`` key; writing such a
  result sends that object as ``response`` again, exactly (a text that is not
  the object's JSON is then reported). Media bytes of a result go to
  ``functionResponse.parts`` as ``inlineData``; any other part there
  (``fileData``, media with more fields) is read as a ``ProviderContent``
  inside the result and written back verbatim. A media block by URL or file
  id in a tool result is reported lost; the text comes back before the
  media, so a text block after a media block is reported.
- A tool result needs a ``name`` in the format; a result without one takes the
  name of the earlier tool call with its id (it reads back with that name); a
  result whose call is not in the input raises :class:`~agentmsg.ValidationError`
  (rule ``gemini.required``).
- Tool-call ids. ``functionCall.id`` is optional in the format. Reading a call
  without one gives ``"call_"`` plus 12 hex digits of the SHA-256 of
  ``"<seed>:<part index>:<name>"``, the seed being ``contents[<i>]`` for a
  request and the ``responseId`` for a response; writing, a call whose id is
  exactly that generated id is written without an id, so ids round-trip both
  ways. A ``functionResponse`` without an id answers the earliest unanswered
  call of the same name; writing leaves out the id of a result exactly when
  that rule would find it again. No id is rewritten (the format states no id
  pattern); ``id_map`` still restores ids rewritten by another converter.
- Reading a user content that holds both ``functionResponse`` parts and other
  parts splits it at each change of kind, in order: a run of function
  responses becomes a ToolMessage, a run of other parts a UserMessage
  (``[response, response, text]`` gives a ToolMessage then a UserMessage).
  Tool results in a UserMessage are written the same way and so read back as
  a ToolMessage. Roles ``"function"`` and ``"tool"`` (older examples) read as
  ``"user"``; a content without a role is a user content.
- Media sources: ``fileData.fileUri`` is a file id when it is a Gemini Files
  API URI (``https://generativelanguage.googleapis.com/...``) or has no URL
  scheme (``files/abc``), else a URL; a URL or file id the other rule would
  read as the other kind is reported. ``fileData`` without ``mimeType`` reads
  as a DocumentContent with an empty media type, so an image or audio clip by
  reference with no media type is reported (as its kind). ``video/*`` and
  other non-image, non-audio types read as DocumentContent.
- Image ``detail`` low/medium/high is the part's ``mediaResolution.level``
  (per-part media resolution, Gemini 3 models: the ai.google.dev
  media-resolution page and the google-genai SDK's ``Part.media_resolution``;
  googleapis' ``content.proto`` does not list it yet). ``auto`` has no level
  and is reported; only an explicit detail writes the field.
- ``finishReason`` (responses): ``STOP`` is STOP, or TOOL_CALLS when the
  content has a ``functionCall``; ``MAX_TOKENS`` is LENGTH; ``SAFETY``,
  ``RECITATION``, ``LANGUAGE``, ``BLOCKLIST``, ``PROHIBITED_CONTENT``,
  ``SPII``, ``IMAGE_SAFETY``, ``IMAGE_PROHIBITED_CONTENT`` and
  ``IMAGE_RECITATION`` are CONTENT_FILTER; ``MALFORMED_FUNCTION_CALL``,
  ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS``, ``OTHER``,
  ``IMAGE_OTHER`` and ``NO_IMAGE`` are ERROR; anything else (and
  ``FINISH_REASON_UNSPECIFIED``) is unspecified. The string is always kept in
  ``stop_reason_raw``.
- Vertex AI's integer enum encoding (clients that ask for
  ``$alt=json;enum-encoding=int``, as the Vertex AI SDK's REST transport does,
  get ``"finishReason": 1``): ``finishReason``, ``promptFeedback.blockReason``,
  ``codeExecutionResult.outcome`` and ``urlMetadata.urlRetrievalStatus`` sent
  as numbers read as their names, by the numbering of
  ``google.cloud.aiplatform.v1`` (``content.proto``, ``tool.proto``;
  ``_gemini_extras.FINISH_REASON_NAMES`` and its neighbours), so
  ``stop_reason_raw`` holds the name (``1`` is ``STOP``); a number this
  version does not know is kept as its digits (``"17"``, stop reason
  unspecified). Written back, a finish or block reason is its name (ProtoJSON
  readers take both spellings). The other enums Vertex AI sends as numbers
  (``safetyRatings`` category, probability and severity, per-modality token
  counts, ``trafficType``, ``executableCode.language``) sit in blocks kept
  verbatim and go back as they came. A response with no candidate and a
  ``promptFeedback.blockReason`` (a blocked prompt) reads as a CONTENT_FILTER
  message whose raw reason is the block reason and whose block is the
  ``promptFeedback`` kept verbatim; written back, that block gives a response
  without a candidate. A candidate stopped by a filter (``finishReason``
  ``SAFETY`` with no content: the answer was filtered) stays a candidate: only
  the ``promptFeedback`` block makes a blocked prompt.
- ``usageMetadata`` (responses): ``input_tokens`` is ``promptTokenCount``
  minus ``cachedContentTokenCount`` (the prompt count includes the cached
  part), ``cache_read_tokens`` is ``cachedContentTokenCount``,
  ``output_tokens`` is ``candidatesTokenCount + thoughtsTokenCount`` (our
  output includes reasoning), ``reasoning_tokens`` is ``thoughtsTokenCount``,
  ``total_tokens`` is ``totalTokenCount``. A count the response leaves out is
  None (proto3 JSON leaves zeros out, so a missing count may be zero);
  ``toolUsePromptTokenCount`` and the per-modality details go to the
  ``responseMetadata`` block.
  ``finishMessage`` is the message's ``error``; provenance is
  ``Provenance("google", "google-generative-ai", modelVersion, responseId)``.

Not carried, and not reported (not model input): message ids, timestamps,
message boundaries within one role, an assistant message's usage, stop
reason, error and provenance in requests (pass ``provenance=`` to
:func:`from_gemini` to stamp the assistant messages read), tool-call and
tool-result ``metadata``, ``terminate`` and ``terminate_message``. A message
left with no part at all writes no content.

Reported as lost when writing (``strict=True`` raises
:class:`~agentmsg.providers._common.ConversionError`): redacted thinking
(Gemini has no encrypted-reasoning part); signatures that may not be replayed
(and every signature on user and system text); message ``name``; the position
of a system message after other messages (moved to ``systemInstruction``);
image detail ``auto`` (Gemini has no such level); document ``filename`` and
``title``; tool-call ``kind`` and ``server_name``; tool-call and tool-result
``index`` values other than the position the reader gives back; tool-call
arguments that are not a JSON object; media by URL or file id in tool results;
image detail in tool results; the order of text after media in a tool result;
a tool result's single empty text block (it reads back as no block);
provider blocks of other providers; hosted tool calls and results that did
not come from Gemini; citations (in a request; in a response unless read
from Gemini's grounding) and token logprobs in a request; token bytes;
content and messages of a kind this version does not know. A signed hosted
part whose signature may not be replayed goes without it (reported).

What agentmsg has no type for is kept by default (``pass_through_unknown``,
default True), the whole part as a ProviderContent of provider ``"google"``
whose type is the part's kind (``videoMetadata`` parts as their data kind,
e.g. ``fileData``), written back verbatim: parts of kinds this version does
not know (rule ``gemini.unknown_type`` with ``pass_through_unknown=False``);
media or function responses in a model content, function calls in a user
content; ``thought`` on anything but model text; ``thoughtSignature`` on media
and function responses; ``videoMetadata``, ``partMetadata``;
``mediaResolution`` other than low/medium/high on an image; unknown keys
beside a known part kind (rule ``gemini.unsupported`` with
``pass_through_unknown=False``). Unknown keys inside a known object
(``displayName``, ``scheduling``...) and request configuration (``tools``,
``generationConfig``...) are ignored.

Reading checks the payload and reports every problem at once in one
:class:`~agentmsg.ValidationError`; violation fields are JSON paths into the
payload (``contents[1].parts[0].inlineData.data``) and rule ids start with
``gemini.``: ``type``, ``required``, ``enum``, ``oneof`` (two kinds in one part,
or a field given in both spellings), ``min_items``, ``min_len`` (an empty
function name), ``base64``, ``media`` (bytes the media checks refuse), ``gte``,
``unknown_type``, ``unsupported``, ``json``, and ``gemini.<rule>`` for a rule of
the agentmsg contract, at the path of the payload object it was built from
(``gemini.assistant.content.required`` for a STOP candidate with no content,
``gemini.string.uri``...). Nothing is returned unless the whole payload reads.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from agentmsg.content import (
    AudioContent,
    Content,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
    check_utf8,
    content_from_proto,
    detail_to_pb,
    dump_arguments,
    parse_json_object,
)
from agentmsg.errors import DecodeError, MediaError, ValidationError, preview
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
from agentmsg.providers import _gemini_extras as extras
from agentmsg.providers._common import (
    ConversionReport,
    PayloadErrors,
    Reporter,
    SessionPolicy,
    json_type,
    llm_messages,
    may_replay,
    report_response_extras,
    restore_id,
    split_media,
)
from agentmsg.providers._gemini_extras import HOSTED_PARTS
from agentmsg.usage import Usage
from agentmsg.v1 import content_pb2

__all__ = [
    "API",
    "PLACEHOLDER_SIGNATURES",
    "PROVIDER",
    "from_gemini",
    "from_gemini_response",
    "generated_call_id",
    "to_gemini",
    "to_gemini_response",
]

PROVIDER: Final = "google"
API: Final = "google-generative-ai"
TARGET: Final = "gemini"

RESPONSE_BLOCK: Final = "response"
"""The type of the provider block that keeps a ``functionResponse.response`` object of another shape verbatim."""

PLACEHOLDER_SIGNATURES: Final = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
"""Signature values Google documents for function calls no Gemini model signed; never read as signatures."""

FILES_API_PREFIX: Final = "https://generativelanguage.googleapis.com/"

T = TypeVar("T")
MediaBlock = ImageContent | AudioContent | DocumentContent

_KINDS: Final = ("text", "inlineData", "fileData", "functionCall", "functionResponse", *HOSTED_PARTS)
_META: Final = ("thought", "thoughtSignature", "mediaResolution", "videoMetadata", "partMetadata")
_ROLE_KINDS: Final[Mapping[str, frozenset[str]]] = {
    "model": frozenset({"text", "functionCall", *HOSTED_PARTS}),
    "user": frozenset({"text", "inlineData", "fileData", "functionResponse"}),
}
_ROLES: Final[Mapping[str, str]] = {"user": "user", "model": "model", "function": "user", "tool": "user"}

_DETAIL_TO_LEVEL: Final[Mapping[ImageDetail, str]] = {
    ImageDetail.LOW: "MEDIA_RESOLUTION_LOW",
    ImageDetail.MEDIUM: "MEDIA_RESOLUTION_MEDIUM",
    ImageDetail.HIGH: "MEDIA_RESOLUTION_HIGH",
}
_LEVEL_TO_DETAIL: Final = {level: detail for detail, level in _DETAIL_TO_LEVEL.items()}

_CF: Final = StopReason.CONTENT_FILTER
_ERR: Final = StopReason.ERROR
_FINISH: Final[Mapping[str, StopReason | None]] = {
    "FINISH_REASON_UNSPECIFIED": None,
    "STOP": StopReason.STOP,
    "MAX_TOKENS": StopReason.LENGTH,
    "SAFETY": _CF,
    "RECITATION": _CF,
    "LANGUAGE": _CF,
    "BLOCKLIST": _CF,
    "PROHIBITED_CONTENT": _CF,
    "SPII": _CF,
    "IMAGE_SAFETY": _CF,
    "IMAGE_PROHIBITED_CONTENT": _CF,
    "IMAGE_RECITATION": _CF,
    "MALFORMED_FUNCTION_CALL": _ERR,
    "UNEXPECTED_TOOL_CALL": _ERR,
    "TOO_MANY_TOOL_CALLS": _ERR,
    "OTHER": _ERR,
    "IMAGE_OTHER": _ERR,
    "NO_IMAGE": _ERR,
}
# What each normalised stop reason is written as when the raw string cannot be kept.
_CANONICAL_FINISH: Final[Mapping[StopReason, str]] = {
    StopReason.STOP: "STOP",
    StopReason.TOOL_CALLS: "STOP",
    StopReason.LENGTH: "MAX_TOKENS",
    StopReason.CONTENT_FILTER: "SAFETY",
    StopReason.ERROR: "OTHER",
}
_BLOCK_REASONS: Final = frozenset(
    {"BLOCK_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY"}
)
_SNAKE = re.compile(r"_([a-z0-9])")


# --- shared rules ----------------------------------------------------------------


def generated_call_id(seed: str, part_index: int, name: str) -> str:
    """The id given to a ``functionCall`` read without one (see the module docstring)."""
    # surrogatepass: a name that is not UTF-8 still gets its id; building the call then reports the name.
    digest = hashlib.sha256(f"{seed}:{part_index}:{name}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"call_{digest}"


def _is_file_uri(uri: str) -> bool:
    """Does ``fileData.fileUri`` read back as a file id (rather than a URL)?"""
    return uri.startswith(FILES_API_PREFIX) or "://" not in uri


def _finish_stop(raw: str, has_calls: bool) -> StopReason | None:
    stop = _FINISH.get(raw)
    if stop is StopReason.STOP and has_calls:
        return StopReason.TOOL_CALLS
    return stop


def _media_kind(block: MediaBlock) -> str:
    return block.type or "media"


# --- writing -----------------------------------------------------------------------


def _signature(part: dict[str, Any], signature: str, replay: bool, path: str, reporter: Reporter) -> None:
    if not signature:
        return
    if replay:
        part["thoughtSignature"] = signature
    else:
        reporter.loss(
            path + ".signature",
            "signature",
            "it may go back only to the Google model that produced it (provenance does not match)",
        )


def _media_part(block: MediaBlock, path: str, reporter: Reporter) -> dict[str, Any]:
    """The part for an image, audio clip or document of a user message."""
    kind = _media_kind(block)
    if block.data is not None:
        part: dict[str, Any] = {
            "inlineData": {"mimeType": block.media_type, "data": base64.b64encode(block.data).decode("ascii")}
        }
    else:
        uri = block.url if block.url is not None else block.file_id or ""
        file_data: dict[str, Any] = {}
        if block.media_type:
            file_data["mimeType"] = block.media_type
        file_data["fileUri"] = uri
        part = {"fileData": file_data}
        if block.url is not None and _is_file_uri(uri):
            reporter.loss(path, f"{kind} URL source", "a Gemini Files API URI reads back as a file id")
        if block.file_id is not None and not _is_file_uri(uri):
            reporter.loss(path, f"{kind} file-id source", "a file id with a URL scheme reads back as a URL")
        if not block.media_type and not isinstance(block, DocumentContent):
            reporter.loss(path, f"{kind} kind", "fileData without mimeType reads back as a document")
    if isinstance(block, ImageContent) and block.detail is not None:
        level = _DETAIL_TO_LEVEL.get(block.detail)
        if level is None:
            reporter.loss(path + ".detail", "image detail 'auto'", "Gemini has no such media resolution level")
        else:
            part["mediaResolution"] = {"level": level}
    if isinstance(block, DocumentContent):
        _document_names(block, path, reporter)
    return part


def _document_names(block: DocumentContent, path: str, reporter: Reporter) -> None:
    if block.filename:
        reporter.loss(path + ".filename", "document filename", "Gemini media parts have no file name")
    if block.title:
        reporter.loss(path + ".title", "document title", "Gemini media parts have no title")
    if block.context:
        reporter.loss(path + ".context", "document context", "Gemini media parts have no context text")


def _arguments(block: ToolCallContent, path: str, reporter: Reporter) -> dict[str, Any]:
    args, error = parse_json_object(block.arguments)
    if args is None:
        reporter.loss(
            path + ".arguments",
            "tool-call arguments",
            f"Gemini args is a JSON object and the text is not one ({error}); {{}} is sent instead",
        )
        return {}
    return args


def _derived_results(blocks: Iterable[Content]) -> set[int]:
    """Positions of the hosted results read from a grounding or URL-context call's metadata (written by the call)."""
    skipped: set[int] = set()
    after_metadata = False
    for j, block in enumerate(blocks):
        if isinstance(block, HostedToolCallContent):
            original = block.original
            after_metadata = (
                original is not None
                and original.provider == PROVIDER
                and original.block_type in (extras.GROUNDING, extras.URL_CONTEXT)
            )
        elif isinstance(block, HostedToolResultContent) and block.original is None and after_metadata:
            skipped.add(j)
        else:
            after_metadata = False
    return skipped


def _grounded(message: AssistantMessage) -> bool:
    """Does the message hold a Gemini ``groundingMetadata`` (which holds its citations)?"""
    return any(
        isinstance(block, HostedToolCallContent)
        and block.original is not None
        and block.original.provider == PROVIDER
        and block.original.block_type == extras.GROUNDING
        for block in message.contents
    )


def _text_extras(
    block: TextContent, path: str, reporter: Reporter, sink: dict[str, Any] | None, grounded: bool
) -> None:
    """Citations and logprobs of a text block: kept for the response (``sink``), or reported."""
    arm = block.pb.text  # the repeated fields themselves: no wrappers built for the (usual) empty case
    if not arm.citations and not arm.logprobs:
        return
    if block.citations:
        ours = all(
            c.original is not None and c.original.provider == PROVIDER and c.original.block_type == "groundingSupport"
            for c in block.citations
        )
        if sink is None:
            reporter.loss(path + ".citations", "citations", "a Gemini request has no place for citations")
        elif not (ours and grounded):
            reporter.loss(
                path + ".citations",
                "citations",
                "Gemini cites through its own groundingMetadata only; these did not come from one",
            )
    if block.logprobs:
        if sink is None:
            reporter.loss(path + ".logprobs", "token logprobs", "a Gemini request has no place for logprobs")
            return
        sink.setdefault(extras.LOGPROBS, []).extend(block.logprobs)
        if any(token.bytes is not None for token in block.logprobs):
            reporter.loss(path + ".logprobs", "token bytes", "Gemini logprobs have no token bytes")


def _hosted_part(
    block: HostedToolCallContent | HostedToolResultContent,
    path: str,
    reporter: Reporter,
    *,
    replay: bool,
    sink: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """The part of a hosted call or result read from Gemini; the response-level objects go to ``sink``."""
    original = block.original
    what = "hosted tool call" if isinstance(block, HostedToolCallContent) else "hosted tool result"
    if original is None or original.provider != PROVIDER:
        source = f"{original.provider} " if original is not None else ""
        reporter.loss(path, f"{source}{what}", "Gemini holds only the hosted tools it ran itself")
        return None
    value = original.block()
    if original.block_type in (extras.GROUNDING, extras.URL_CONTEXT):
        if sink is None:
            reporter.loss(path, f"Gemini {original.block_type}", "a Gemini request has no place for it")
        else:
            sink[original.block_type] = value
        return None
    part, signed = extras.strip_signature(value)
    if signed and replay:
        return value
    if signed:
        reporter.loss(
            path + ".signature",
            "signature",
            "it may go back only to the Google model that produced it (provenance does not match)",
        )
    return part


def _model_part(
    block: Content,
    path: str,
    reporter: Reporter,
    *,
    replay: bool,
    seed: str,
    part_index: int,
    call_position: int,
    sink: dict[str, Any] | None = None,
    grounded: bool = False,
) -> dict[str, Any] | None:
    """The part for one assistant block, or None when it is lost (and reported) or response-level.

    ``sink`` collects what a response writes outside the parts (grounding,
    URL context, logprobs, prompt feedback, response metadata); it is None
    when writing a request.
    """
    if isinstance(block, TextContent):
        part: dict[str, Any] = {"text": block.content}
        _signature(part, block.signature, replay, path, reporter)
        _text_extras(block, path, reporter, sink, grounded)
        return part
    if isinstance(block, (HostedToolCallContent, HostedToolResultContent)):
        return _hosted_part(block, path, reporter, replay=replay, sink=sink)
    if isinstance(block, ThinkingContent):
        part = {"text": block.content, "thought": True}
        _signature(part, block.signature, replay, path, reporter)
        return part
    if isinstance(block, RedactedThinkingContent):
        reporter.loss(path, "redacted thinking", "Gemini has no part for encrypted reasoning")
        return None
    if isinstance(block, ToolCallContent):
        call: dict[str, Any] = {}
        if block.id != generated_call_id(seed, part_index, block.name):
            call["id"] = block.id
        call["name"] = block.name
        call["args"] = _arguments(block, path, reporter)
        part = {"functionCall": call}
        _signature(part, block.signature, replay, path, reporter)
        if block.kind is not None:
            reporter.loss(path + ".kind", "tool kind", "Gemini function calls have no kind")
        if block.server_name:
            reporter.loss(path + ".server_name", "tool server name", "Gemini function calls have no server name")
        if block.index != call_position:
            reporter.loss(
                path + ".index", "tool-call index", f"the index reads back as the call's position ({call_position})"
            )
        return part
    if isinstance(block, ProviderContent):
        if block.provider == PROVIDER and block.block_type in (extras.PROMPT_FEEDBACK, extras.RESPONSE_METADATA):
            if sink is not None:  # a request carries no response metadata (not model input)
                sink[block.block_type] = block.block()
            return None
        return _provider_part(block, path, reporter)
    reporter.loss(path, f"{block.type or 'unknown'} content", "an assistant turn in Gemini cannot hold it")
    return None


def _provider_part(block: ProviderContent, path: str, reporter: Reporter) -> dict[str, Any] | None:
    if block.provider == PROVIDER:
        return block.block()
    reporter.loss(path, f"{block.provider} {block.block_type} block", "it goes back only to its own provider")
    return None


def _first_call(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((part for part in parts if "functionCall" in part), None)


def _trailing_results(parts: list[dict[str, Any]]) -> int:
    count = 0
    for part in reversed(parts):
        if "functionResponse" not in part:
            break
        count += 1
    return count


class _Writer:
    """Builds ``contents`` and ``systemInstruction`` for :func:`to_gemini`."""

    def __init__(self, reporter: Reporter, model: str | None, unsigned_call_signature: str | None) -> None:
        self.reporter = reporter
        self.model = model
        self.unsigned_call_signature = unsigned_call_signature
        self.system_parts: list[dict[str, Any]] = []
        self.contents: list[dict[str, Any]] = []
        self.seen_conversation = False
        self.call_names: dict[str, str] = {}
        # Calls not yet answered, in order: [id, name, id left out] (what the reader pairs results with).
        self.pending: list[tuple[str, str, bool]] = []

    def _target(self, role: str) -> tuple[int, list[dict[str, Any]], bool]:
        if self.contents and self.contents[-1]["role"] == role:
            return len(self.contents) - 1, self.contents[-1]["parts"], False
        return len(self.contents), [], True

    def _commit(self, role: str, parts: list[dict[str, Any]], new: bool) -> None:
        if new and parts:
            self.contents.append({"role": role, "parts": parts})

    def message(self, path: str, message: BaseMessage) -> None:
        if message.name:
            self.reporter.loss(path + ".name", "participant name", "Gemini contents have no name")
        if isinstance(message, SystemMessage):
            self.system(path, message)
            return
        if isinstance(message, AssistantMessage):
            self.assistant(path, message)
        elif isinstance(message, (UserMessage, ToolMessage)):
            self.user(path, message)
        else:
            self.reporter.loss(path, "message of an unknown role", "Gemini has no role for it")
            return
        self.seen_conversation = True

    def system(self, path: str, message: SystemMessage) -> None:
        if self.seen_conversation:
            self.reporter.loss(
                path, "system message position", "Gemini has one systemInstruction before the contents; moved there"
            )
        for j, block in enumerate(message.contents):
            bpath = f"{path}.contents[{j}]"
            if isinstance(block, TextContent):
                self.system_parts.append({"text": block.content})
                _signature({}, block.signature, False, bpath, self.reporter)
            else:  # only an unknown block can get here: the contract allows text alone
                self.reporter.loss(bpath, f"{block.type or 'unknown'} content", "systemInstruction holds text only")

    def assistant(self, path: str, message: AssistantMessage) -> None:
        replay = may_replay(message.provenance, PROVIDER, API, self.model)
        ci, parts, new = self._target("model")
        start = len(parts)
        calls = sum(1 for part in parts if "functionCall" in part)
        derived = _derived_results(message.contents)
        for j, block in enumerate(message.contents):
            if j in derived:
                continue
            part = _model_part(
                block,
                f"{path}.contents[{j}]",
                self.reporter,
                replay=replay,
                seed=f"contents[{ci}]",
                part_index=len(parts),
                call_position=calls,
            )
            if part is None:
                continue
            if isinstance(block, ToolCallContent):
                calls += 1
                call = part["functionCall"]
                self.call_names[block.id] = block.name
                self.pending.append((block.id, block.name, "id" not in call))
            parts.append(part)
        first = _first_call(parts[start:])
        if first is not None and self.unsigned_call_signature and "thoughtSignature" not in first:
            first["thoughtSignature"] = self.unsigned_call_signature
        self._commit("model", parts, new)

    def user(self, path: str, message: UserMessage | ToolMessage) -> None:
        _, parts, new = self._target("user")
        for j, block in enumerate(message.contents):
            bpath = f"{path}.contents[{j}]"
            part: dict[str, Any] | None
            if isinstance(block, TextContent):
                part = {"text": block.content}
                _signature(part, block.signature, False, bpath, self.reporter)
            elif isinstance(block, (ImageContent, AudioContent, DocumentContent)):
                pieces = split_media(block, bpath, self.reporter)
                parts.extend(_media_part(piece, where, self.reporter) for where, piece in pieces[:-1])
                part = _media_part(pieces[-1][1], pieces[-1][0], self.reporter)
            elif isinstance(block, ToolResultContent):
                part = self.result(block, bpath, _trailing_results(parts))
            elif isinstance(block, ProviderContent):
                part = _provider_part(block, bpath, self.reporter)
            else:
                self.reporter.loss(bpath, f"{block.type or 'unknown'} content", "a Gemini user turn cannot hold it")
                part = None
            if part is not None:
                parts.append(part)
        self._commit("user", parts, new)

    def result(self, block: ToolResultContent, path: str, position: int) -> dict[str, Any]:
        name = block.name or self.call_names.get(block.id, "")
        if not name:
            raise ValidationError.single(
                path + ".name",
                "gemini.required",
                f"a Gemini functionResponse needs a name; result {block.id!r} has none and answers no earlier call",
                "conversion input",
            )
        # The reader pairs a response without an id with the earliest pending call of its name: leave the
        # id out only when that is this result's call, and the call's own id was left out too.
        first = next((at for at, pending in enumerate(self.pending) if pending[1] == name), None)
        omit = first is not None and self.pending[first][0] == block.id and self.pending[first][2]
        answered = first if omit else next((at for at, p in enumerate(self.pending) if p[0] == block.id), None)
        if answered is not None:
            del self.pending[answered]
        response, media = self.result_body(block, path)
        function_response: dict[str, Any] = {}
        if not omit:
            function_response["id"] = block.id
        function_response["name"] = name
        function_response["response"] = response
        if media:
            function_response["parts"] = media
        if block.index != position:
            self.reporter.loss(
                path + ".index", "tool-result index", f"the index reads back as the result's position ({position})"
            )
        return {"functionResponse": function_response}

    def result_body(self, block: ToolResultContent, path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        texts: list[str] = []
        media: list[dict[str, Any]] = []
        verbatim: dict[str, Any] | None = None
        text_after_media = False
        pieces = [
            piece
            for k, inner in enumerate(block.blocks)
            for piece in split_media(inner, f"{path}.content[{k}]", self.reporter)
        ]
        for ipath, inner in pieces:
            if isinstance(inner, TextContent):
                texts.append(inner.content)
                text_after_media = text_after_media or bool(media)
                _signature({}, inner.signature, False, ipath, self.reporter)
            elif isinstance(inner, (ImageContent, AudioContent, DocumentContent)):
                kind = _media_kind(inner)
                if inner.data is None:
                    self.reporter.loss(
                        ipath,
                        f"{kind} by reference in a tool result",
                        "Gemini function responses carry media inline only (no fileData there)",
                    )
                    continue
                blob = {"mimeType": inner.media_type, "data": base64.b64encode(inner.data).decode("ascii")}
                media.append({"inlineData": blob})
                if isinstance(inner, ImageContent) and inner.detail is not None:
                    self.reporter.loss(
                        ipath + ".detail", "image detail in a tool result", "function response parts have no level"
                    )
                if isinstance(inner, DocumentContent):
                    _document_names(inner, ipath, self.reporter)
            elif isinstance(inner, ProviderContent) and inner.provider == PROVIDER:
                if inner.block_type == RESPONSE_BLOCK and verbatim is None:
                    verbatim = inner.block()
                else:  # a function response part kept verbatim (fileData...)
                    media.append(inner.block())
            elif isinstance(inner, ProviderContent):
                self.reporter.loss(
                    ipath, f"{inner.provider} {inner.block_type} block", "it goes back only to its own provider"
                )
            else:
                self.reporter.loss(ipath, f"{inner.type or 'unknown'} content", "a tool result cannot hold it")
        if text_after_media:
            self.reporter.loss(
                path, "order of text after media", "text goes in response and media in parts: text reads back first"
            )
        if verbatim is None and len(texts) == 1 and texts[0] == "":
            self.reporter.loss(path + ".content", "empty text block", "an empty output reads back as no content")
        if verbatim is not None:
            if texts != [json.dumps(verbatim, ensure_ascii=False, separators=(",", ":"))]:
                self.reporter.loss(
                    path + ".content",
                    "tool-result text",
                    "the result holds a Gemini response object, which is written in its place",
                )
            return verbatim, media
        value: str | list[str] = texts[0] if len(texts) == 1 else (texts or "")
        return ({"error": value} if block.is_error else {"output": value}), media


def to_gemini(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
    unsigned_call_signature: str | None = None,
) -> dict[str, Any]:
    """A ``generateContent`` request body: ``{"systemInstruction"?, "contents"}``.

    ``model`` narrows the signature replay rule to one model. With
    ``unsigned_call_signature`` (one of :data:`PLACEHOLDER_SIGNATURES`), the
    first function call of each assistant message that carries no signature
    gets that value, as Gemini 3 models require. Everything the format cannot
    hold is reported (see the module docstring).
    """
    reporter = Reporter(TARGET, report, strict=strict)
    writer = _Writer(reporter, model, unsigned_call_signature)
    for path, message, _projected in llm_messages(messages, session_messages):
        writer.message(path, message)
    payload: dict[str, Any] = {}
    if writer.system_parts:
        payload["systemInstruction"] = {"parts": writer.system_parts}
    payload["contents"] = writer.contents
    reporter.finish()
    return payload


def _usage_metadata(usage: Usage, reporter: Reporter) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    cached = usage.known("cache_read_tokens")
    reasoning = usage.known("reasoning_tokens")
    if "input_tokens" in usage.reported:
        metadata["promptTokenCount"] = usage.input_tokens + (cached or 0)
    if cached is not None:
        metadata["cachedContentTokenCount"] = cached
    if "output_tokens" in usage.reported:
        candidates = usage.output_tokens - (reasoning or 0)
        if candidates < 0:
            reporter.loss("usage.output_tokens", "output token count", "it is smaller than the reasoning count")
        metadata["candidatesTokenCount"] = max(candidates, 0)
    elif reasoning is not None:
        reporter.loss("usage.output_tokens", "unknown output count", "Gemini output is read as candidates + thoughts")
    if reasoning is not None:
        metadata["thoughtsTokenCount"] = reasoning
    if "total_tokens" in usage.reported:
        metadata["totalTokenCount"] = usage.total_tokens
    if "cache_write_tokens" in usage.reported:
        reporter.loss("usage.cache_write_tokens", "cache-write token count", "Gemini reports no cache writes")
    if "cost" in usage.reported:
        reporter.loss("usage.cost", "cost", "Gemini usage metadata has no cost")
    return metadata


def _finish_reason(message: AssistantMessage, has_calls: bool, reporter: Reporter) -> str | None:
    raw = message.stop_reason_raw
    want = message.stop_reason
    if raw and _finish_stop(raw, has_calls) == want and (raw in _FINISH or want is None):
        return raw
    written = _CANONICAL_FINISH.get(want) if want is not None else None
    back = _finish_stop(written, has_calls) if written is not None else None
    if back != want:
        reporter.loss("stop_reason", f"stop reason {want}", "no Gemini finishReason reads back as it")
    if raw and raw != written:
        reporter.loss("stop_reason_raw", f"raw stop reason {raw!r}", f"written as {written!r}")
    return written


def to_gemini_response(
    message: AssistantMessage, *, strict: bool = False, report: ConversionReport | None = None
) -> dict[str, Any]:
    """A ``GenerateContentResponse`` body for an assistant message (one candidate).

    Signatures are written when the message's provenance is Google's (the
    replay rule); stop reason, usage, error and provenance map as
    :func:`from_gemini_response` reads them, and the grounding, URL context,
    logprobs, ``promptFeedback`` and response metadata read from Gemini go
    back to their places. A content-filtered message with no parts and a
    ``promptFeedback`` block with a ``blockReason`` is written as a blocked
    prompt (no candidate); any other content filter is a candidate.
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    reporter = Reporter(f"{TARGET} response", report, strict=strict)
    provenance = message.provenance
    replay = may_replay(provenance, PROVIDER, API)
    seed = provenance.response_id if provenance is not None else ""
    if message.name:
        reporter.loss("name", "participant name", "Gemini contents have no name")
    if provenance is not None and (provenance.provider, provenance.api) != (PROVIDER, API):
        reporter.loss("provenance", "provenance provider and API", "a Gemini response reads back as Google's")
    parts: list[dict[str, Any]] = []
    calls = 0
    sink: dict[str, Any] = {}
    derived = _derived_results(message.contents)
    grounded = _grounded(message)
    for j, block in enumerate(message.contents):
        if j in derived:
            continue
        part = _model_part(
            block,
            f"contents[{j}]",
            reporter,
            replay=replay,
            seed=seed,
            part_index=len(parts),
            call_position=calls,
            sink=sink,
            grounded=grounded,
        )
        if part is not None:
            calls += "functionCall" in part
            parts.append(part)
    response: dict[str, Any] = {}
    metadata: dict[str, Any] = dict(sink.get(extras.RESPONSE_METADATA) or {})
    extra_usage: dict[str, Any] = metadata.pop("usageMetadata", None) or {}
    extra_candidate: dict[str, Any] = metadata.pop("candidate", None) or {}
    feedback = sink.get(extras.PROMPT_FEEDBACK)
    blocked = isinstance(feedback, Mapping) and bool(feedback.get("blockReason"))
    if feedback:
        response["promptFeedback"] = feedback
    # A blocked prompt (read from a response without candidates) has no candidate; an answer that was
    # filtered (finishReason SAFETY...) keeps its candidate.
    if not (blocked and not parts and message.stop_reason is StopReason.CONTENT_FILTER):
        candidate: dict[str, Any] = {}
        if parts:
            candidate["content"] = {"role": "model", "parts": parts}
        finish = _finish_reason(message, calls > 0, reporter)
        if finish is not None:
            candidate["finishReason"] = finish
        if message.error:
            candidate["finishMessage"] = message.error
        for key in (extras.GROUNDING, extras.URL_CONTEXT):
            if key in sink:
                candidate[key] = sink[key]
        if extras.LOGPROBS in sink:
            candidate[extras.LOGPROBS] = extras.logprobs_result(sink[extras.LOGPROBS])
        candidate.update(extra_candidate)
        candidate["index"] = 0
        response["candidates"] = [candidate]
    elif message.error:
        reporter.loss("error", "error text", "a blocked prompt has no finish message")
    if message.usage is not None or extra_usage:
        usage_metadata = _usage_metadata(message.usage, reporter) if message.usage is not None else {}
        response["usageMetadata"] = {**usage_metadata, **extra_usage}
    response.update(metadata)
    if provenance is not None and provenance.model:
        response["modelVersion"] = provenance.model
    if provenance is not None and provenance.response_id:
        response["responseId"] = provenance.response_id
    report_response_extras(message, reporter, "a Gemini response")
    reporter.finish()
    return response


# --- reading -------------------------------------------------------------------------

_JSON_NAMES: Final[Mapping[type, str]] = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    list: "an array",
    Mapping: "an object",
}


def _camel(key: str) -> str:
    return _SNAKE.sub(lambda match: match.group(1).upper(), key)


def _camel_get(value: Any, key: str) -> Any:
    if not isinstance(value, Mapping):
        return None
    for name, item in value.items():
        if isinstance(name, str) and _camel(name) == key:
            return item
    return None


def _sub(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@dataclass
class _Fields:
    """A JSON object's fields under their lowerCamelCase names, remembering how the payload spelled them."""

    raw: Mapping[str, Any]
    values: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.values.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def at(self, path: str, key: str) -> str:
        """The payload path of a field, spelled as the payload spells it."""
        return _sub(path, self.names.get(key, key))


class _Reader:
    """Reads request contents and response candidates, collecting every problem."""

    def __init__(self, errors: PayloadErrors, id_map: Mapping[str, str] | None, pass_through: bool) -> None:
        self.errors = errors
        self.id_map = id_map
        self.pass_through = pass_through
        # Calls not yet answered, in order: (id, name); a response without an id answers the first of its name.
        self.pending: list[tuple[str, str]] = []
        self.calls_in_content = 0

    # helpers

    def add(self, path: str, rule: str, message: str) -> None:
        self.errors.add(path, f"{TARGET}.{rule}", message)

    def count(self) -> int:
        return len(self.errors.found)

    def fields(self, value: Any, path: str, what: str) -> _Fields | None:
        if not isinstance(value, Mapping):
            self.add(path, "type", f"{what} must be an object, got {json_type(value)}")
            return None
        result = _Fields(value)
        for key, item in value.items():
            if not isinstance(key, str):
                self.add(path, "type", f"keys must be strings, got {json_type(key)}")
                continue
            camel = _camel(key)
            if camel in result.values:
                self.add(_sub(path, key), "oneof", f"{key!r} is given twice (as {result.names[camel]!r} too)")
                continue
            result.values[camel] = item
            result.names[camel] = key
        return result

    def typed(self, obj: _Fields, key: str, path: str, kind: type, *, required: bool = False) -> Any:
        """The field's value when it has the JSON type; None when absent or null (recorded when required) or wrong."""
        value = obj.get(key)
        if value is None:
            if required:
                self.add(obj.at(path, key), "required", f"{key} is required")
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            self.add(obj.at(path, key), "type", f"{key} must be {_JSON_NAMES[kind]}, got {json_type(value)}")
            return None
        return value

    def build(self, path: str, make: Callable[[], T]) -> T | None:
        """``make()``; an agentmsg error it raises becomes violations at ``path`` (rules prefixed ``gemini.``).

        The violation's own field names agentmsg's structure, not the payload's, so the payload path is used.
        """
        try:
            return make()
        except ValidationError as exc:
            for violation in exc.violations:
                self.add(path, violation.rule_id, violation.message)
        except MediaError as exc:
            self.add(path, "media", str(exc))
        except DecodeError as exc:
            self.add(path, "json", str(exc))
        return None

    def decode_base64(self, value: Any, path: str) -> bytes | None:
        """Standard or URL-safe base64, padding optional (as ProtoJSON reads ``bytes``)."""
        if not isinstance(value, str):
            self.add(path, "type", f"data must be a base64 string, got {json_type(value)}")
            return None
        text = re.sub(r"\s+", "", value).replace("-", "+").replace("_", "/")
        text += "=" * (-len(text) % 4)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            self.add(path, "base64", f"data is not valid base64: {exc}")
            return None

    # parts

    def passthrough(self, part: _Fields, path: str, kind: str, rule: str, message: str) -> Content | None:
        if not self.pass_through:
            self.add(path, rule, message + " (pass_through_unknown=True keeps the part verbatim)")
            return None
        made: Content | None = self.build(path, lambda: ProviderContent(PROVIDER, kind, dump_arguments(part.raw, "")))
        return made

    def part(self, raw: Any, path: str, role: str, seed: str, index: int, result_position: int) -> Content | None:
        """One part as a block (a ToolResultContent for a function response), or None (problem recorded)."""
        part = self.fields(raw, path, "a part")
        if part is None:
            return None
        before = self.count()
        kinds = [key for key in part if key in _KINDS]
        others = [key for key in part if key not in _KINDS and key not in _META]
        if len(kinds) > 1:
            self.add(path, "oneof", f"a part holds one kind of data, found {', '.join(kinds)}")
        thought = self.typed(part, "thought", path, bool)
        signature = self.typed(part, "thoughtSignature", path, str)
        if self.count() > before:
            return None
        if not kinds and others:
            return self.passthrough(part, path, others[0], "unknown_type", f"unknown part kind {others[0]!r}")
        if not kinds and signature is None:
            self.add(path, "required", f"a part needs one of: {', '.join(_KINDS)}")
            return None
        kind = kinds[0] if kinds else "text"  # a part holding only a signature is empty text
        problem = self.unsupported(part, path, role, kind, others, thought=bool(thought), signed=signature is not None)
        if problem is not None:
            return self.passthrough(part, problem[0], kind, "unsupported", problem[1])
        signature = "" if signature is None or signature in PLACEHOLDER_SIGNATURES else signature
        where = part.at(path, kind)
        if kind == "text":
            text = self.typed(part, "text", path, str)
            if self.count() > before:
                return None
            if thought:
                return self.build(path, lambda: ThinkingContent(text or "", signature))
            return self.build(path, lambda: TextContent(text or "", signature=signature))
        if kind == "functionCall":
            return self.function_call(part.get(kind), where, signature, seed, index)
        if kind == "functionResponse":
            return self.function_response(part.get(kind), where, seed, index, result_position)
        if kind in HOSTED_PARTS:
            return self.build(where, lambda: extras.hosted_part(kind, part.raw, signature))
        return self.media(part, path, kind)

    def unsupported(
        self, part: _Fields, path: str, role: str, kind: str, others: list[str], *, thought: bool, signed: bool
    ) -> tuple[str, str] | None:
        """Where and why agentmsg cannot hold this part, or None."""
        if kind not in _ROLE_KINDS[role]:
            what = "an assistant message" if role == "model" else "a user or tool message"
            return part.at(path, kind), f"{what} cannot hold {kind} in agentmsg"
        if others:
            return part.at(path, others[0]), f"{others[0]!r} has no place beside {kind} in agentmsg"
        for key in ("videoMetadata", "partMetadata"):
            if key in part:
                return part.at(path, key), f"agentmsg has no field for {key}"
        if thought and (kind != "text" or role != "model"):
            return part.at(path, "thought"), "only model text can be a thought in agentmsg"
        if signed and kind in ("inlineData", "fileData", "functionResponse"):
            return part.at(path, "thoughtSignature"), f"agentmsg keeps no signature on {kind}"
        if "mediaResolution" in part:
            where = part.at(path, "mediaResolution")
            mime = _camel_get(part.get(kind), "mimeType")
            resolution = part.get("mediaResolution")
            if not isinstance(mime, str) or not mime.lower().startswith("image/"):
                return where, "agentmsg keeps a media resolution (image detail) on images only"
            if not isinstance(resolution, Mapping) or [_camel(key) for key in resolution] != ["level"]:
                return where, "agentmsg keeps a media resolution level only (no token count)"
            level = _camel_get(resolution, "level")
            if not isinstance(level, str) or level not in _LEVEL_TO_DETAIL:
                return where, f"agentmsg has no image detail for level {preview(level)}"
        return None

    def media(self, part: _Fields, path: str, kind: str) -> Content | None:
        where = part.at(path, kind)
        data = self.fields(part.get(kind), where, kind)
        if data is None:
            return None
        before = self.count()
        mime = self.typed(data, "mimeType", where, str, required=kind == "inlineData") or ""
        if self.count() > before:
            return None
        detail = None
        if "mediaResolution" in part:  # checked by unsupported()
            detail = _LEVEL_TO_DETAIL[_camel_get(part.get("mediaResolution"), "level")]
        lower = mime.lower()
        if kind == "inlineData":
            raw = self.decode_base64(data.get("data"), data.at(where, "data"))
            if raw is None:
                return None
            if lower.startswith("image/"):
                return self.build(where, lambda: ImageContent(raw, media_type=mime, detail=detail))
            if lower.startswith("audio/"):
                return self.build(where, lambda: AudioContent(raw, media_type=mime))
            return self.build(where, lambda: DocumentContent(raw, media_type=mime))
        uri = self.typed(data, "fileUri", where, str, required=True)
        if uri is None:
            return None
        arm = "image" if lower.startswith("image/") else "audio" if lower.startswith("audio/") else "document"
        source = "file_id" if _is_file_uri(uri) else "url"
        return self.build(where, lambda: _reference_block(arm, source, uri, mime, detail))

    def function_call(self, value: Any, path: str, signature: str, seed: str, index: int) -> Content | None:
        call = self.fields(value, path, "functionCall")
        if call is None:
            return None
        before = self.count()
        name = self.typed(call, "name", path, str, required=True)
        call_id = self.typed(call, "id", path, str)
        args = self.typed(call, "args", path, Mapping)
        if name == "":
            self.add(call.at(path, "name"), "min_len", "name must not be empty")
        if self.count() > before:
            return None
        arguments = self.build(call.at(path, "args"), lambda: dump_arguments(args or {}, ""))
        if arguments is None:
            return None
        final_id = restore_id(call_id, self.id_map) if call_id else generated_call_id(seed, index, name)
        position = self.calls_in_content
        self.calls_in_content += 1
        self.pending.append((final_id, name))
        return self.build(
            path, lambda: ToolCallContent(final_id, name, arguments=arguments, index=position, signature=signature)
        )

    def function_response(
        self, value: Any, path: str, seed: str, index: int, position: int
    ) -> ToolResultContent | None:
        response = self.fields(value, path, "functionResponse")
        if response is None:
            return None
        before = self.count()
        name = self.typed(response, "name", path, str, required=True)
        result_id = self.typed(response, "id", path, str)
        body = self.typed(response, "response", path, Mapping, required=True)
        media_parts = self.typed(response, "parts", path, list)
        if self.count() > before:
            return None
        blocks, is_error = _response_blocks(body)
        for k, raw in enumerate(media_parts or []):
            ppath = f"{response.at(path, 'parts')}[{k}]"
            part = self.fields(raw, ppath, "a function response part")
            if part is None:
                continue
            if list(part) != ["inlineData"] or not _plain_inline(part.get("inlineData")):
                # fileData, or media with fields agentmsg has no place for: the part, verbatim
                kind = next(iter(part), "part")
                kept = self.build(ppath, lambda: ProviderContent(PROVIDER, kind, dump_arguments(raw, "")))  # noqa: B023
                if kept is not None:
                    blocks.append(kept)
                continue
            media = self.media(part, ppath, "inlineData")
            if media is not None:
                blocks.append(media)
        if self.count() > before:
            return None
        final_id = self.answer(restore_id(result_id, self.id_map) if result_id else None, name, seed, index)
        made: ToolResultContent | None = self.build(
            path,
            lambda: ToolResultContent(final_id, blocks, is_error=is_error, name=name, index=position),  # type: ignore[arg-type]
        )
        return made

    def answer(self, result_id: str | None, name: str, seed: str, index: int) -> str:
        """The id of the call a function response answers; that call is no longer pending."""
        for at, (call_id, call_name) in enumerate(self.pending):
            if call_id == result_id if result_id is not None else call_name == name:
                del self.pending[at]
                return call_id
        return result_id if result_id is not None else generated_call_id(seed, index, name)

    # contents

    def model_blocks(self, parts: list[Any], path: str, seed: str) -> list[Content] | None:
        self.calls_in_content = 0
        before = self.count()
        blocks = [self.part(raw, f"{path}[{k}]", "model", seed, k, 0) for k, raw in enumerate(parts)]
        if self.count() > before:
            return None
        return [block for block in blocks if block is not None]

    def user_messages(self, parts: list[Any], path: str, parts_path: str, seed: str) -> list[AgentMessage]:
        """A user content's messages: each run of function responses a ToolMessage, each other run a UserMessage."""
        before = self.count()
        runs: list[tuple[bool, list[Content]]] = []
        for k, raw in enumerate(parts):
            position = len(runs[-1][1]) if runs and runs[-1][0] else 0
            block = self.part(raw, f"{parts_path}[{k}]", "user", seed, k, position)
            if block is None:
                continue
            is_result = isinstance(block, ToolResultContent)
            if runs and runs[-1][0] == is_result:
                runs[-1][1].append(block)
            else:
                runs.append((is_result, [block]))
        if self.count() > before:
            return []
        messages: list[AgentMessage] = []
        for is_result, blocks in runs:
            made: ToolMessage | UserMessage | None
            if is_result:
                made = self.build(path, functools.partial(ToolMessage, blocks))  # type: ignore[arg-type]
            else:
                made = self.build(path, functools.partial(UserMessage, blocks))  # type: ignore[arg-type]
            if made is not None:
                messages.append(made)
        return messages

    def content(self, raw: Any, path: str, index: int, provenance: Provenance | None) -> list[AgentMessage]:
        content = self.fields(raw, path, "a content")
        if content is None:
            return []
        before = self.count()
        role_value = self.typed(content, "role", path, str)
        parts = self.typed(content, "parts", path, list, required=True)
        if self.count() > before:
            return []
        role = _ROLES.get(role_value or "user")
        if role is None:
            self.add(content.at(path, "role"), "enum", f"role must be 'user' or 'model', got {role_value!r}")
            return []
        parts_path = content.at(path, "parts")
        if not parts:
            self.add(parts_path, "min_items", "a content needs at least one part")
            return []
        seed = f"contents[{index}]"
        if role == "user":
            return self.user_messages(parts, path, parts_path, seed)
        blocks = self.model_blocks(parts, parts_path, seed)
        if blocks is None:
            return []
        made = self.build(path, lambda: AssistantMessage(blocks, provenance=provenance))  # type: ignore[arg-type]
        return [made] if made is not None else []

    def system(self, value: Any, path: str) -> list[AgentMessage]:
        content = self.fields(value, path, "systemInstruction")
        if content is None:
            return []
        before = self.count()
        parts = self.typed(content, "parts", path, list, required=True)
        blocks: list[TextContent] = []
        for k, raw in enumerate(parts or []):
            ppath = f"{content.at(path, 'parts')}[{k}]"
            part = self.fields(raw, ppath, "a part")
            if part is None:
                continue
            if list(part) != ["text"]:
                bad = next((key for key in part if key != "text"), None)
                where = part.at(ppath, bad) if bad else ppath
                self.add(where, "unsupported", "an agentmsg system message holds text parts only")
                continue
            text = self.typed(part, "text", ppath, str, required=True)
            if text is not None:
                made = self.build(ppath, functools.partial(TextContent, text))
                if made is not None:
                    blocks.append(made)
        if self.count() > before or not blocks:
            return []
        system = self.build(path, lambda: SystemMessage(blocks))
        return [system] if system is not None else []

    def usage(self, value: Any, path: str) -> Usage | None:
        usage = self.fields(value, path, "usageMetadata")
        if usage is None:
            return None
        before = self.count()
        counts: dict[str, int | None] = {}
        for key in ("promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount"):
            counts[key] = self.typed(usage, key, path, int)
        counts["totalTokenCount"] = self.typed(usage, "totalTokenCount", path, int)
        for key, count in counts.items():
            if count is not None and count < 0:
                self.add(usage.at(path, key), "gte", f"{key} must not be negative")
        prompt, cached = counts["promptTokenCount"], counts["cachedContentTokenCount"]
        candidates, thoughts = counts["candidatesTokenCount"], counts["thoughtsTokenCount"]
        if self.count() > before:
            return None
        input_tokens = None if prompt is None else prompt - (cached or 0)
        if input_tokens is not None and input_tokens < 0:
            self.add(usage.at(path, "cachedContentTokenCount"), "gte", "the cached count exceeds the prompt count")
        if self.count() > before:
            return None
        output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
        made: Usage | None = self.build(
            path,
            lambda: Usage(
                input_tokens=input_tokens,
                output_tokens=output,
                cache_read_tokens=cached,
                reasoning_tokens=thoughts,
                total_tokens=counts["totalTokenCount"],
            ),
        )
        return made


def _reference_block(arm: str, source: str, value: str, media_type: str, detail: ImageDetail | None) -> Content:
    """An image, audio or document block by URL or file id, with exactly the given media type."""
    check_utf8(value, source)
    check_utf8(media_type, "media_type")
    arms: dict[str, Any] = {
        "image": content_pb2.ImageContent,
        "audio": content_pb2.AudioContent,
        "document": content_pb2.DocumentContent,
    }
    body = arms[arm](media_type=media_type)
    setattr(body, source, value)
    if arm == "image" and detail is not None:
        body.detail = detail_to_pb(detail)
    block = content_from_proto(content_pb2.Content(**{arm: body}))
    block.validate()
    return block


def _plain_inline(value: Any) -> bool:
    """Is an ``inlineData`` object just ``mimeType`` and ``data`` (what a media block writes back)?"""
    return isinstance(value, Mapping) and {_camel(key) for key in value} <= {"mimeType", "data"}


def _response_blocks(body: Mapping[str, Any]) -> tuple[list[Content], bool]:
    """The text blocks and error flag a ``functionResponse.response`` object stands for."""
    if set(body) in ({"output"}, {"error"}):
        is_error = "error" in body
        value = body["error"] if is_error else body["output"]
        if isinstance(value, str):
            return ([TextContent(value)] if value else []), is_error
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return [TextContent(item) for item in value], is_error
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise ValidationError.single("response", "json", f"the response cannot be JSON text: {exc}") from None
    # The text is what other formats send; the object itself goes back to Gemini as it was.
    return [TextContent(text), ProviderContent(PROVIDER, RESPONSE_BLOCK, text)], "error" in body


def from_gemini(
    payload: Mapping[str, Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
    provenance: Provenance | None = None,
) -> list[AgentMessage]:
    """Messages from a ``generateContent`` request body (``systemInstruction`` and ``contents``).

    ``provenance`` is stamped on every assistant message read (a request does
    not say which model wrote its model turns); give the Google provenance of
    those turns to let :func:`to_gemini` replay their signatures. Bad input
    raises :class:`~agentmsg.ValidationError` listing every problem, each at
    its JSON path.
    """
    if provenance is not None and not isinstance(provenance, Provenance):
        raise ValidationError.single("provenance", "type", f"expected Provenance, got {type(provenance).__name__}")
    errors = PayloadErrors("Gemini request")
    reader = _Reader(errors, id_map, pass_through_unknown)
    messages: list[AgentMessage] = []
    top = reader.fields(payload, "", "the request")
    if top is not None:
        if top.get("systemInstruction") is not None:
            messages.extend(reader.system(top.get("systemInstruction"), top.at("", "systemInstruction")))
        contents = reader.typed(top, "contents", "", list, required=True)
        for i, content in enumerate(contents or []):
            messages.extend(reader.content(content, f"{top.at('', 'contents')}[{i}]", i, provenance))
    errors.raise_if_any()
    return messages


def from_gemini_response(
    response: Mapping[str, Any],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
) -> AssistantMessage:
    """The assistant message of a ``GenerateContentResponse`` (its first candidate).

    Usage, stop reason (normalised, and the raw ``finishReason``), the finish
    message (as ``error``) and provenance are read as the module docstring
    says, and so are hosted tool parts, grounding (citations and a hosted
    search), URL context, logprobs and the response metadata. Other
    candidates are not read.
    """
    errors = PayloadErrors("Gemini response")
    reader = _Reader(errors, id_map, pass_through_unknown)
    message: AssistantMessage | None = None
    top = reader.fields(response, "", "the response")
    if top is not None:
        message = _response_message(reader, top)
        if message is None and not errors.found:
            reader.add("candidates", "required", "a response needs a candidate or a promptFeedback.blockReason")
    errors.raise_if_any()
    assert message is not None
    return message


def _metadata_blocks(
    reader: _Reader, top: _Fields, candidate: tuple[_Fields, str] | None, blocks: list[Content]
) -> list[Content] | None:
    """The blocks with the candidate's grounding, URL context, logprobs and the response metadata added.

    Citations and logprobs go on the text blocks (one block per part here);
    the hosted calls and results of grounding and URL context, then the
    ``promptFeedback`` and ``responseMetadata`` provider blocks, follow the
    parts. None when a field is malformed (recorded).
    """
    before = reader.count()
    blocks = list(blocks)
    tail: list[Content] = []
    logprobs_placed = False
    if candidate is not None:
        fields, path = candidate
        grounding = reader.typed(fields, extras.GROUNDING, path, Mapping)
        url_context = reader.typed(fields, extras.URL_CONTEXT, path, Mapping)
        logprobs = reader.typed(fields, extras.LOGPROBS, path, Mapping)
        if reader.count() > before:
            return None
        if grounding:
            where = fields.at(path, extras.GROUNDING)

            def part_text(i: int) -> str | None:
                block = blocks[i] if 0 <= i < len(blocks) else None
                return block.content if isinstance(block, TextContent) else None

            cited = reader.build(where, lambda: extras.grounding_citations(grounding, part_text))
            made = reader.build(where, lambda: extras.grounding_blocks(grounding))
            if cited is None or made is None:
                return None
            for i, citations in cited.items():
                blocks[i] = _with(blocks[i], citations=citations)  # type: ignore[arg-type]
            tail.extend(made)
        if url_context:
            made = reader.build(fields.at(path, extras.URL_CONTEXT), lambda: extras.url_context_blocks(url_context))
            if made is None:
                return None
            tail.extend(made)
        if logprobs:
            tokens = extras.logprobs_from_result(logprobs)
            first = next(
                (i for i, block in enumerate(blocks) if isinstance(block, TextContent) and not block.logprobs), None
            )
            if tokens is not None and first is not None:
                blocks[first] = _with(blocks[first], logprobs=tokens)  # type: ignore[arg-type]
                logprobs_placed = True
    feedback = top.get("promptFeedback")
    if isinstance(feedback, Mapping) and feedback:
        kept = reader.build(
            top.at("", "promptFeedback"), lambda: extras.provider_block(extras.PROMPT_FEEDBACK, feedback)
        )
        if kept is None:
            return None
        tail.append(kept)
    metadata = extras.response_metadata(
        top.raw, candidate[0].raw if candidate is not None else None, logprobs_placed=logprobs_placed
    )
    if metadata:
        kept = reader.build("", lambda: extras.provider_block(extras.RESPONSE_METADATA, metadata))
        if kept is None:
            return None
        tail.append(kept)
    return blocks + tail


def _with(block: TextContent, *, citations: Iterable[Any] = (), logprobs: Iterable[Any] = ()) -> TextContent:
    """The text block with citations or logprobs added."""
    return TextContent(
        block.content,
        signature=block.signature,
        citations=[*block.citations, *citations],
        logprobs=[*block.logprobs, *logprobs],
    )


def _response_message(reader: _Reader, top: _Fields) -> AssistantMessage | None:
    before = reader.count()
    model_version = reader.typed(top, "modelVersion", "", str) or ""
    response_id = reader.typed(top, "responseId", "", str) or ""
    candidates = reader.typed(top, "candidates", "", list)
    usage_value = top.get("usageMetadata")
    usage = reader.usage(usage_value, top.at("", "usageMetadata")) if usage_value is not None else None
    provenance = Provenance(PROVIDER, API, model_version, response_id)
    feedback_path = top.at("", "promptFeedback")
    feedback = reader.fields(top.get("promptFeedback") or {}, feedback_path, "promptFeedback")
    if not candidates:
        reason = None
        if feedback is not None:
            reason = extras.enum_name(feedback.get("blockReason"), extras.BLOCK_REASON_NAMES)
            if reason is not None and not isinstance(reason, str):
                reason = reader.typed(feedback, "blockReason", feedback_path, str)  # reports the wrong type
        if not reason or reader.count() > before:
            return None
        tail = _metadata_blocks(reader, top, None, [])
        if tail is None:
            return None
        return reader.build(
            "",
            lambda: AssistantMessage(
                tail,  # type: ignore[arg-type]
                usage=usage,
                stop_reason=_CF,
                stop_reason_raw=reason,
                provenance=provenance,
            ),
        )
    path = f"{top.at('', 'candidates')}[0]"
    candidate = reader.fields(candidates[0], path, "a candidate")
    if candidate is None:
        return None
    finish = extras.enum_name(candidate.get("finishReason"), extras.FINISH_REASON_NAMES)
    if finish is not None and not isinstance(finish, str):
        finish = reader.typed(candidate, "finishReason", path, str)  # reports the wrong type
    raw = finish or ""
    error = reader.typed(candidate, "finishMessage", path, str) or ""
    blocks: list[Content] | None = []
    if candidate.get("content") is not None:
        cpath = candidate.at(path, "content")
        content = reader.fields(candidate.get("content"), cpath, "content")
        if content is None:
            return None
        role = reader.typed(content, "role", cpath, str)
        if role not in (None, "", "model"):
            reader.add(content.at(cpath, "role"), "enum", f"a candidate's role must be 'model', got {role!r}")
        parts = reader.typed(content, "parts", cpath, list) or []
        blocks = reader.model_blocks(parts, content.at(cpath, "parts"), response_id)
    if reader.count() > before or blocks is None:
        return None
    has_calls = any(isinstance(block, ToolCallContent) for block in blocks)
    blocks = _metadata_blocks(reader, top, (candidate, path), blocks)
    if blocks is None:
        return None
    stop = _finish_stop(raw, has_calls) if raw else None
    return reader.build(
        path,
        lambda: AssistantMessage(
            blocks,  # type: ignore[arg-type]
            usage=usage,
            stop_reason=stop,
            stop_reason_raw=raw,
            error=error,
            provenance=provenance,
        ),
    )
