"""Gemini parts and candidate fields beyond text, media and function calls, both directions.

Shared by :mod:`agentmsg.providers.gemini` (responses and requests) and
:mod:`agentmsg.providers.gemini_stream` (the fold), so both read the same
payload into the same blocks. The rules are written in the ``gemini`` module
docstring; in short:

- ``executableCode`` / ``codeExecutionResult`` parts are a hosted code
  execution call and result, ``toolCall`` / ``toolResponse`` parts (built-in
  tools such as Google Search and File Search) a hosted call and result; each
  keeps its whole part as ``original``.
- A candidate's ``groundingMetadata`` is a hosted search call (``original``:
  the whole ``groundingMetadata``) and its result (the chunks as search
  results), plus one :class:`~agentmsg.Citation` per (support, chunk) pair on
  the text block of ``segment.partIndex`` (UTF-8 byte offsets converted to
  code points). ``urlContextMetadata`` is a hosted web fetch call with one
  result per URL. ``logprobsResult`` is the :class:`~agentmsg.TokenLogprob`
  list of the first answer text block when it reads back exactly.
- What has no typed place (``avgLogprobs``, per-modality token counts,
  ``toolUsePromptTokenCount``, Vertex AI's ``createTime``, candidate fields
  this version does not know) is one trailing ``ProviderContent`` of type
  ``responseMetadata``; ``promptFeedback`` is one of type ``promptFeedback``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentmsg.content import (
    Citation,
    CodeExecutionOutput,
    Content,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    HostedToolStatus,
    ProviderContent,
    SearchResult,
    TokenLogprob,
    WebFetchOutput,
    dump_arguments,
)
from agentmsg.errors import ValidationError

PROVIDER: Final = "google"

HOSTED_PARTS: Final = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")
# Candidate-level objects that are content blocks of their own (hosted calls).
GROUNDING: Final = "groundingMetadata"
URL_CONTEXT: Final = "urlContextMetadata"
LOGPROBS: Final = "logprobsResult"
PROMPT_FEEDBACK: Final = "promptFeedback"
RESPONSE_METADATA: Final = "responseMetadata"
METADATA_TYPES: Final = frozenset({GROUNDING, URL_CONTEXT, PROMPT_FEEDBACK, RESPONSE_METADATA})

# The usage counts agentmsg types (usage.proto); every other usageMetadata key is response metadata.
USAGE_COUNTS: Final = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "totalTokenCount",
)
# Candidate keys read elsewhere (content, stop, error) or not message data (safety scores, the index).
# Vertex AI with ``$alt=json;enum-encoding=int`` (what its clients' REST transport asks for) sends enums as
# their numbers. The names by number, from ``google.cloud.aiplatform.v1`` (``content.proto``:
# ``Candidate.FinishReason``, ``GenerateContentResponse.PromptFeedback.BlockedReason``).
FINISH_REASON_NAMES: Final = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "MODEL_ARMOR",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "UNEXPECTED_TOOL_CALL",
    "NO_IMAGE",
)
BLOCK_REASON_NAMES: Final = ("BLOCKED_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT")
# ``tool.proto`` ``CodeExecutionResult.Outcome`` and ``content.proto`` ``UrlMetadata.UrlRetrievalStatus``.
OUTCOME_NAMES: Final = ("OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED")
URL_RETRIEVAL_NAMES: Final = (
    "URL_RETRIEVAL_STATUS_UNSPECIFIED",
    "URL_RETRIEVAL_STATUS_SUCCESS",
    "URL_RETRIEVAL_STATUS_ERROR",
)


def enum_name(value: Any, names: Sequence[str]) -> Any:
    """An enum sent as its number (Vertex AI's integer encoding) as its name; a number this version does not
    know as its decimal string (kept, not guessed); anything else unchanged (a name, or a wrong type the
    caller reports)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if 0 <= value < len(names) else str(value)
    return value


CANDIDATE_READ: Final = frozenset({"content", "finishReason", "finishMessage", "index", GROUNDING, URL_CONTEXT})
# Response keys read elsewhere.
RESPONSE_READ: Final = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId", PROMPT_FEEDBACK})

_TOOL_TYPES: Final[Mapping[str, HostedToolKind]] = {
    "GOOGLE_SEARCH_WEB": HostedToolKind.WEB_SEARCH,
    "GOOGLE_SEARCH_IMAGE": HostedToolKind.WEB_SEARCH,
    "GOOGLE_SEARCH": HostedToolKind.WEB_SEARCH,
    "ENTERPRISE_WEB_SEARCH": HostedToolKind.WEB_SEARCH,
    "URL_CONTEXT": HostedToolKind.WEB_FETCH,
    "FILE_SEARCH": HostedToolKind.FILE_SEARCH,
    "CODE_EXECUTION": HostedToolKind.CODE_EXECUTION,
}
_OUTCOMES: Final[Mapping[str, HostedToolStatus]] = {
    "OUTCOME_OK": HostedToolStatus.COMPLETED,
    "OUTCOME_FAILED": HostedToolStatus.FAILED,
    "OUTCOME_DEADLINE_EXCEEDED": HostedToolStatus.INCOMPLETE,
}


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """A field by its lowerCamelCase name, in either spelling the API accepts."""
    for name, value in obj.items():
        if isinstance(name, str) and camel(name) == key:
            return value
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def provider_block(block_type: str, value: Mapping[str, Any]) -> ProviderContent:
    return ProviderContent(PROVIDER, block_type, dump_arguments(value, block_type))


# --- parts --------------------------------------------------------------------------


def hosted_part(kind: str, part: Mapping[str, Any], signature: str) -> Content:
    """The hosted call or result of a code execution (``executableCode``...) or built-in tool part (``toolCall``...).

    ``part`` is the whole part (kept as ``original``); raises
    :class:`~agentmsg.ValidationError` when a field has the wrong type.
    """
    body = _get(part, kind)
    if not isinstance(body, Mapping):
        raise ValidationError.single(kind, "type", f"{kind} must be an object")
    original = provider_block(kind, part)
    call_id = _str(_get(body, "id"))
    if kind == "executableCode":
        code_input = {k: v for k, v in body.items() if camel(k) != "id"}
        return HostedToolCallContent(
            call_id,
            "code_execution",
            dump_arguments(code_input, "executableCode"),
            kind=HostedToolKind.CODE_EXECUTION,
            signature=signature,
            original=original,
        )
    if kind == "codeExecutionResult":
        outcome = _str(enum_name(_get(body, "outcome"), OUTCOME_NAMES))
        status = _OUTCOMES.get(outcome)
        return HostedToolResultContent(
            call_id,
            name="code_execution",
            kind=HostedToolKind.CODE_EXECUTION,
            code_execution=CodeExecutionOutput(stdout=_str(_get(body, "output"))),
            is_error=status in (HostedToolStatus.FAILED, HostedToolStatus.INCOMPLETE),
            status=status,
            status_raw=outcome,
            original=original,
        )
    tool_type = _str(_get(body, "toolType"))
    tool_kind = _TOOL_TYPES.get(tool_type, HostedToolKind.OTHER) if tool_type else None
    name = tool_type.lower()
    if kind == "toolCall":
        args = _get(body, "args")
        return HostedToolCallContent(
            call_id,
            name,
            dump_arguments(args if isinstance(args, Mapping) else {}, "toolCall.args"),
            kind=tool_kind,
            signature=signature,
            original=original,
        )
    return HostedToolResultContent(call_id, name=name, kind=tool_kind, original=original)


def strip_signature(block: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The part without its ``thoughtSignature`` (either spelling), and whether it had one."""
    kept = {k: v for k, v in block.items() if camel(k) != "thoughtSignature"}
    return kept, len(kept) != len(block)


# --- candidate metadata -------------------------------------------------------------


def _code_points(text: str, offset: Any) -> int | None:
    """A UTF-8 byte offset into ``text`` as a code-point offset (None when not an integer)."""
    if type(offset) is not int or offset < 0:
        return None
    return len(text.encode("utf-8")[:offset].decode("utf-8", "ignore"))


def _chunk_citation(
    chunk: Any, index: int, start: int | None, end: int | None, confidence: float | None, original: ProviderContent
) -> Citation:
    common: dict[str, Any] = {"start_index": start, "end_index": end, "confidence": confidence, "original": original}
    if isinstance(chunk, Mapping):
        for key in ("web", "maps", "image"):
            source = _get(chunk, key)
            if isinstance(source, Mapping):
                url = _str(_get(source, "uri")) or _str(_get(source, "sourceUri"))
                return Citation.web(url, _str(_get(source, "title")), result_index=index, **common)
        context = _get(chunk, "retrievedContext")
        if isinstance(context, Mapping):
            source_name = _str(_get(context, "uri")) or _str(_get(context, "fileSearchStore"))
            return Citation.search_result(source_name, title=_str(_get(context, "title")), **common)
    return Citation(**common)


def _search_result(chunk: Any) -> SearchResult:
    if isinstance(chunk, Mapping):
        for key in ("web", "maps", "image"):
            source = _get(chunk, key)
            if isinstance(source, Mapping):
                url = _str(_get(source, "uri")) or _str(_get(source, "sourceUri"))
                return SearchResult(url, _str(_get(source, "title")))
        context = _get(chunk, "retrievedContext")
        if isinstance(context, Mapping):
            return SearchResult(_str(_get(context, "uri")), _str(_get(context, "title")), _str(_get(context, "text")))
    return SearchResult()


def grounding_citations(grounding: Mapping[str, Any], part_text: Any) -> dict[int, list[Citation]]:
    """The citations of each part index (``part_text(i)`` gives the text of part i, or None when not text)."""
    chunks = _get(grounding, "groundingChunks")
    chunks = chunks if isinstance(chunks, list) else []
    supports = _get(grounding, "groundingSupports")
    out: dict[int, list[Citation]] = {}
    for support in supports if isinstance(supports, list) else []:
        if not isinstance(support, Mapping):
            continue
        segment = _get(support, "segment")
        segment = segment if isinstance(segment, Mapping) else {}
        part_index = _get(segment, "partIndex")
        part_index = part_index if type(part_index) is int else 0
        text = part_text(part_index)
        if text is None:
            continue
        start = _code_points(text, _get(segment, "startIndex") or 0)
        end = _code_points(text, _get(segment, "endIndex"))
        if start is not None and end is not None and end < start:
            continue
        indices = _get(support, "groundingChunkIndices")
        scores = _get(support, "confidenceScores")
        scores = scores if isinstance(scores, list) else []
        original = provider_block("groundingSupport", support)
        for j, chunk_index in enumerate(indices if isinstance(indices, list) else []):
            if type(chunk_index) is not int or chunk_index < 0:
                continue
            chunk = chunks[chunk_index] if chunk_index < len(chunks) else None
            score = scores[j] if j < len(scores) else None
            confidence = float(score) if isinstance(score, (int, float)) and 0 <= score <= 1 else None
            citation = _chunk_citation(chunk, chunk_index, start, end, confidence, original)
            out.setdefault(part_index, []).append(citation)
    return out


def grounding_blocks(grounding: Mapping[str, Any]) -> list[Content]:
    """The hosted search call (original: the whole ``groundingMetadata``) and its result."""
    queries = [q for q in (_get(grounding, "webSearchQueries") or []) if isinstance(q, str)]
    chunks = _get(grounding, "groundingChunks")
    chunks = chunks if isinstance(chunks, list) else []
    retrieval = any(isinstance(c, Mapping) and _get(c, "retrievedContext") is not None for c in chunks)
    name, kind = (
        ("file_search", HostedToolKind.FILE_SEARCH) if retrieval else ("google_search", HostedToolKind.WEB_SEARCH)
    )
    call = HostedToolCallContent(
        "", name, dump_arguments({"queries": queries}), kind=kind, original=provider_block(GROUNDING, grounding)
    )
    result = HostedToolResultContent(
        "", name=name, kind=kind, search_results=[_search_result(c) for c in chunks], queries=queries
    )
    return [call, result]


def url_context_blocks(metadata: Mapping[str, Any]) -> list[Content]:
    """A hosted web fetch call (original: the whole ``urlContextMetadata``) and one result per URL."""
    entries = [e for e in (_get(metadata, "urlMetadata") or []) if isinstance(e, Mapping)]
    urls = [_str(_get(e, "retrievedUrl")) for e in entries]
    blocks: list[Content] = [
        HostedToolCallContent(
            "",
            "url_context",
            dump_arguments({"urls": urls}),
            kind=HostedToolKind.WEB_FETCH,
            original=provider_block(URL_CONTEXT, metadata),
        )
    ]
    for entry, url in zip(entries, urls, strict=True):
        status = _str(enum_name(_get(entry, "urlRetrievalStatus"), URL_RETRIEVAL_NAMES))
        ok = status in ("", "URL_RETRIEVAL_STATUS_SUCCESS")
        blocks.append(
            HostedToolResultContent(
                "",
                name="url_context",
                kind=HostedToolKind.WEB_FETCH,
                web_fetch=WebFetchOutput(url),
                is_error=not ok,
                status=HostedToolStatus.COMPLETED if ok else HostedToolStatus.FAILED,
                status_raw=status,
            )
        )
    return blocks


def _token(entry: Mapping[str, Any], top: Sequence[TokenLogprob] = ()) -> TokenLogprob:
    token_id = _get(entry, "tokenId")
    value = _get(entry, "logProbability")
    return TokenLogprob(
        _str(_get(entry, "token")),
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0,
        token_id=token_id if type(token_id) is int else None,
        top_logprobs=top,
    )


def logprobs_from_result(result: Mapping[str, Any]) -> list[TokenLogprob] | None:
    """``logprobsResult`` as tokens, or None when the tokens would not write it back exactly."""
    try:
        chosen = _get(result, "chosenCandidates") or []
        top = _get(result, "topCandidates")
        if not isinstance(chosen, list) or not all(isinstance(c, Mapping) for c in chosen):
            return None
        tops: list[list[TokenLogprob]] = [[] for _ in chosen]
        if top is not None:
            if not isinstance(top, list) or len(top) != len(chosen):
                return None
            for i, entry in enumerate(top):
                items = _get(entry, "candidates") if isinstance(entry, Mapping) else None
                if not isinstance(items, list) or not all(isinstance(c, Mapping) for c in items):
                    return None
                tops[i] = [_token(c) for c in items]
        tokens = [_token(c, tops[i]) for i, c in enumerate(chosen)]
        if _canonical(logprobs_result(tokens)) != _canonical(result):
            return None
    except (ValueError, TypeError, RecursionError):
        return None
    return tokens


def _token_dict(token: TokenLogprob) -> dict[str, Any]:
    out: dict[str, Any] = {"logProbability": token.logprob, "token": token.token}
    if token.token_id is not None:
        out["tokenId"] = token.token_id
    return out


def logprobs_result(tokens: Sequence[TokenLogprob]) -> dict[str, Any]:
    """The ``logprobsResult`` object of a list of tokens."""
    result: dict[str, Any] = {"chosenCandidates": [_token_dict(t) for t in tokens]}
    if any(t.top_logprobs for t in tokens):
        result["topCandidates"] = [{"candidates": [_token_dict(c) for c in t.top_logprobs]} for t in tokens]
    return result


def _canonical(value: Any) -> str:
    """Key-order-free JSON text with empty lists and objects and nulls left out (as ProtoJSON may omit them)."""

    def prune(item: Any) -> Any:
        if isinstance(item, Mapping):
            pruned = {camel(k): prune(v) for k, v in item.items()}
            return {k: v for k, v in pruned.items() if v is not None and v not in ([], {})}
        if isinstance(item, list):
            return [prune(v) for v in item]
        return item

    return json.dumps(prune(value), sort_keys=True)


def response_metadata(
    response: Mapping[str, Any], candidate: Mapping[str, Any] | None, *, logprobs_placed: bool
) -> dict[str, Any]:
    """What a response carries that has no typed place: the ``responseMetadata`` block's object (may be empty).

    ``{"usageMetadata": {...the keys other than the typed counts}, "candidate": {...unread candidate keys},
    <unread response keys>...}``.
    """
    out: dict[str, Any] = {}
    for key, value in response.items():
        if camel(key) not in RESPONSE_READ and value is not None:
            out[key] = value
    usage = _get(response, "usageMetadata")
    if isinstance(usage, Mapping):
        extra = {k: v for k, v in usage.items() if camel(k) not in USAGE_COUNTS and v is not None}
        if extra:
            out["usageMetadata"] = extra
    if candidate is not None:
        extra = {
            k: v
            for k, v in candidate.items()
            if camel(k) not in CANDIDATE_READ and v is not None and not (logprobs_placed and camel(k) == LOGPROBS)
        }
        content = _get(candidate, "content")
        if isinstance(content, Mapping) and content and not _get(content, "parts"):
            extra["content"] = content  # a content with no parts (``{"role": "model"}``) gives no block
        if extra:
            out["candidate"] = extra
    return out
