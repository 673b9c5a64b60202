"""LangChain core messages (``langchain_core.messages``), both directions.

Unlike the other converters this one works on objects, not dicts:
:func:`to_langchain` returns ``langchain_core.messages`` message objects and
:func:`from_langchain` reads them (or their ``messages_to_dict`` form). It
needs ``langchain-core`` (``pip install 'agentmsg[langchain]'``), imported by
this module only, so ``import agentmsg`` never does. Written against
``langchain-core`` 1.7.2: content blocks are its v1 standard blocks
(``langchain_core/messages/content.py``); thinking follows its Anthropic block
translator (``messages/block_translators/anthropic.py``), which is also what
``langchain-anthropic`` turns back into signed ``thinking`` blocks.

Mapping (agentmsg <-> LangChain):

===============================  ======================================================================
agentmsg                         LangChain
===============================  ======================================================================
SystemMessage                    ``SystemMessage``
UserMessage                      ``HumanMessage``; its tool results become ``ToolMessage`` objects in
                                 place (LangChain keeps tool results apart), see "Split messages"
AssistantMessage                 ``AIMessage`` (:func:`to_langchain_chunk`: ``AIMessageChunk``)
ToolMessage                      one ``ToolMessage`` per result, see "Split messages"
message ``id`` / ``name``        ``id`` / ``name`` (a ``ToolMessage``'s ``name`` is the tool's name)
TextContent                      ``str`` content when it is the only block, else
                                 ``{"type": "text", "text"}``; a signature goes to
                                 ``extras.signature`` (LangChain's place for Gemini's)
                                 (message ``name`` / ``id``: the LangChain message's)
ImageContent / AudioContent      ``{"type": "image" | "audio", "base64" | "url" | "file_id",
                                 "mime_type"}``; image ``detail`` in ``extras.detail`` (where LangChain
                                 puts OpenAI's ``detail`` when it reads an ``image_url`` block)
DocumentContent                  inline UTF-8 ``text/plain``: ``{"type": "text-plain", "mime_type",
                                 "text", "title"}``; any other: ``{"type": "file", "base64" | "url" |
                                 "file_id", "mime_type"}`` with ``extras.title``; ``filename`` in
                                 ``extras.filename`` (read by LangChain's OpenAI file conversion)
ThinkingContent                  ``{"type": "reasoning", "reasoning", "extras": {"signature"}}``
RedactedThinkingContent          ``{"type": "non_standard", "value": {"type": "redacted_thinking",
                                 "data"}}``, as LangChain's Anthropic translator writes it
ToolCallContent                  ``tool_calls`` entry ``{name, args, id, type: "tool_call"}`` (and a
                                 ``tool_call`` block in list content, keeping the order and
                                 ``extras.signature``); arguments that are not a JSON object go to
                                 ``invalid_tool_calls`` ``{name, args: the text verbatim, id, error}``.
                                 ``args`` is the parsed text: reading, it is written back with
                                 ``json.dumps(args, ensure_ascii=False, separators=(",", ":"))``
                                 (key order kept), or the stashed original text (see the stash)
ToolCallContent.signature        also ``additional_kwargs["__gemini_function_call_thought_signatures__"]``
(Gemini provenance)              ``{call id: signature}``, where langchain-google-genai keeps them
ToolResultContent                ``ToolMessage`` {``tool_call_id``, ``content`` (str or blocks),
                                 ``status`` "error" when ``is_error``, ``name``, ``artifact``}
ToolResultContent.metadata       ``artifact`` (a dict): LangChain's artifact is app-only data that is
                                 never sent to a model, which is exactly what ``metadata`` is
Usage                            ``usage_metadata`` {input_tokens = ours + cache read + cache write
                                 (LangChain's input counts every prompt token), output_tokens,
                                 total_tokens, input_token_details {cache_read, cache_creation},
                                 output_token_details {reasoning}}
Provenance                       ``response_metadata`` ``model_provider``, ``model_name``, ``id``;
                                 ("google", "google-generative-ai") is LangChain's ``google_genai``
stop_reason_raw                  ``response_metadata`` ``stop_reason`` (provider ``anthropic``, as
                                 langchain-anthropic writes it) or ``finish_reason`` (others)
HostedToolCallContent            ``{"type": "server_tool_call", "id", "name", "args"}`` (input that is
                                 not a JSON object: ``server_tool_call_chunk`` with ``args`` the text);
                                 an MCP call is ``name: "remote_mcp"``, ``extras.tool_name``, as
                                 LangChain's Anthropic translator writes it; signature in
                                 ``extras.signature``
HostedToolResultContent          ``{"type": "server_tool_result", "tool_call_id", "status": "success" |
                                 "error", "output"}``; ``output`` is the typed body (ProtoJSON, as the
                                 seed-1 dict form writes it) or the text of the content
TextContent.citations            the text block's ``annotations``: ``{"type": "citation", "url",
                                 "title", "start_index", "end_index", "cited_text"}`` (a search-result
                                 citation's source as ``url``)
TextContent.logprobs             ``response_metadata["logprobs"] = {"content": [{token, logprob, bytes,
                                 top_logprobs}]}`` (ChatOpenAI's shape) when one text block holds them
stop_sequence                    ``response_metadata["stop_sequence"]`` (langchain-anthropic's key)
Usage cache writes by TTL        ``input_token_details`` ``ephemeral_5m_input_tokens`` /
                                 ``ephemeral_1h_input_tokens`` (langchain-anthropic's keys)
ProviderContent ("langchain")    a LangChain standard block verbatim; any other block verbatim in
                                 a ``HumanMessage`` and wrapped as ``non_standard`` in v1 AIMessage
                                 content (``content_blocks`` wraps unknown blocks so, and unwraps
                                 ``value`` when reading)
ProviderContent (the assistant   ``{"type": "non_standard", "value": block}``, which
message's own provider)          langchain-anthropic and langchain-google-genai unwrap for their
                                 ``model_provider``; read back as the provenance provider's block
===============================  ======================================================================

Assistant content. A message that is at most one non-empty text block followed
by tool calls (valid ones before invalid ones) is written the classic way:
``content`` is the text and the calls are in ``tool_calls`` /
``invalid_tool_calls`` (what ChatOpenAI returns, and what every integration
and ``convert_to_openai_messages`` read). Any other assistant message (thinking,
signatures, several text blocks, text after a call...) gets list content in
the v1 standard blocks, ``tool_call`` / ``invalid_tool_call`` blocks in place,
the same calls in ``tool_calls`` / ``invalid_tool_calls``, and
``response_metadata["output_version"] = "v1"``: the marker LangChain's own v1
messages carry and that ``langchain-anthropic`` and ``langchain-openai`` check
before translating v1 content for their API.

Replay. LangChain is a carrier: the chat model the messages go to is picked
later, and LangChain integrations decide themselves what to send back
(``langchain-anthropic`` turns ``reasoning`` blocks into signed ``thinking``
and unwraps ``non_standard`` blocks only when ``model_provider`` is
``"anthropic"``; ``langchain-google-genai`` sends reasoning signatures back
only when it is ``"google_genai"``). So by default signatures, redacted thinking and the
assistant's own provider blocks are kept when the message's provenance names
a provider (written to ``model_provider``, so the integration can gate on it),
and (when ``model=`` is given) the same model. Pass ``target_provider=`` (and
``target_api=``) to decide here instead: then they are kept only when
:func:`~agentmsg.providers._common.may_replay` allows that target. Otherwise
thinking keeps its text without the signature, redacted thinking is left out,
and both are reported. Text signatures on system, user and tool-result text
have no provenance to vouch for them and are always left out and reported.

Split messages. A user message with tool results becomes one LangChain
message per run of other blocks (``HumanMessage``) and per result
(``ToolMessage``), in order; a tool message becomes one ``ToolMessage`` per
result. The first piece keeps the message id, piece ``k`` gets ``"<id>#<k>"``
(ids must stay unique: LangGraph's ``add_messages`` replaces messages by id),
and every piece records ``part_of`` in the stash, so :func:`from_langchain`
joins consecutive pieces back into one message.

The stash. What LangChain has no field for is kept in
``response_metadata["agentmsg"]`` (``response_metadata`` is metadata about a
message that no integration sends to a model; ``additional_kwargs`` is not
used because some integrations forward its keys to the provider): the
message ``timestamp`` (RFC 3339, nanoseconds kept), and when they have something to say:
``part_of`` / ``role`` (split messages), ``name`` (a tool message's own name),
``api`` (the provenance API; written whenever there is a provenance),
``stop_reason`` (when the raw stop reason does not map to it), ``error``,
``usage`` (ProtoJSON, when ``usage_metadata`` alone would not give the usage
back: unknown counts, cost), ``tool_calls`` (a list by call position, ``null``
for a call with nothing to add, each entry with the call ``id``: ``kind``,
``index`` when not the call's position, ``server_name``, ``metadata``, and
``arguments`` when the text is not what ``json.dumps(args,
ensure_ascii=False, separators=(",", ":"))`` writes) and ``result``
(``index``, ``terminate``, ``terminate_message`` of a tool result), and
``blocks``: ``[{"at": position in the content list, "block": seed-1 dict}]``
for each hosted tool call or result and each assistant text block whose
standard block alone does not give it back (hosted kind, server, status,
original provider block, typed result bodies; citations of other kinds than
web, token ids). A stashed block is used only when it writes exactly the
standard block found at its position (its index and signature aside): an
edited block wins. Reading a standard block with no stash entry, what its
typed fields do not hold (extras, an ``output`` of another shape, a
citation with extras or without URL) is kept whole as the block's or
citation's ``original`` (provider ``"langchain"``), which the writer writes
back as it was. A stash
value that contradicts the message (usage that does not match
``usage_metadata``, a ``tool_calls`` entry whose id is not the call's at that
position, argument text that does not parse to ``args``) is ignored.
``include_metadata=False`` writes no stash: timestamps, joins and the values
above are then not carried (not reported: they are not model input, as for
every other converter), but for the v1.1 content: each stashed ``blocks``
entry, hosted-tool request counts in the usage and an assistant message's
``provider_extra`` (stashed as ``{"provider", "type", "json"}``: the
provider response's keys no field holds) are reported lost.

Round trip: ``from_langchain(to_langchain(m)) == m``
for everything not reported as lost; session-only messages come back as the
user messages they were projected to.

Reported as lost by :func:`to_langchain`: signatures and redacted thinking
that may not be replayed (above); provider blocks of another provider; content
blocks and messages of a kind unknown to this version.

Reading (:func:`from_langchain`) takes every ``BaseMessage`` class:
``HumanMessage``, ``SystemMessage``, ``AIMessage`` and ``AIMessageChunk``,
``ToolMessage``, the legacy ``FunctionMessage`` (a tool result; the call is
the ``additional_kwargs["function_call"]`` of an earlier ``AIMessage``, which
becomes a tool call with the id ``function_call_<i>``, ``<i>`` the index of
that ``AIMessage``) and ``ChatMessage`` with role ``system``, ``developer``,
``user``, ``human``, ``assistant`` or ``ai``. Content is read through
LangChain's own ``content_blocks`` normalisation, so provider-native blocks
(OpenAI ``image_url``, Anthropic ``thinking`` / ``tool_use`` / ``image``
sources, LangChain v0 ``source_type`` blocks...) are read too. An
``AIMessageChunk``'s tool calls are read from its ``tool_call_chunks``, whose
argument text is verbatim (LangChain repairs partial JSON in ``tool_calls``);
``merge_chunks=True`` first adds up each run of consecutive chunks with ``+``
as LangChain's streaming does. ``RemoveMessage`` (a LangGraph instruction,
not part of a conversation) is refused (rule ``langchain.remove_message``)
unless ``remove_messages="skip"``. An ``AIMessage`` with no content at all
reads as one empty text block when agentmsg would refuse an empty assistant
message. Left out when reading (agentmsg has no field for them): block ids
and indexes, ``extras`` other than the ones above,
the ``context`` of ``text-plain`` blocks, ``additional_kwargs`` (but for what
``content_blocks`` reads and ``function_call``), ``response_metadata`` keys
other than the ones above (raw usage...), usage details other than
the cache and reasoning counts. LangChain does not record the wire API: for a
message read without a stash the provenance API comes from
``api_by_provider[model_provider]`` when the caller gives it, else from the
integrations that speak one API (``anthropic`` -> anthropic-messages,
``google_genai`` -> ("google", "google-generative-ai")), else it is ``""``
(ChatOpenAI, for one, speaks two), so other converters do not replay its
signatures.

Errors: one :class:`~agentmsg.ValidationError` listing every problem, each
with its path (``[2].content[1].base64``, ``[3].tool_calls[0].id``,
``[1].response_metadata.agentmsg.timestamp``) and a rule id: ``langchain.type``
(not a message, or a wrong type), ``langchain.required``, ``langchain.role``
(a ``ChatMessage`` role agentmsg has no message for), ``langchain.unknown_type``
(a block LangChain does not know), ``langchain.unsupported`` (a block the
role cannot carry), ``langchain.source`` (a media block with no or several
sources), ``langchain.base64``, ``langchain.enum`` (an image ``extras.detail``
agentmsg does not know), ``langchain.json`` (``args`` that are not JSON data),
``langchain.usage``, ``langchain.metadata``
(a malformed stash), ``langchain.artifact`` (an artifact that is not a JSON
object; pass ``artifacts="ignore"`` to leave artifacts out),
``langchain.remove_message``, ``langchain.content`` (LangChain itself failed
to read the content), and the contract's own rule ids for values agentmsg
refuses.
"""

from __future__ import annotations

import base64
import functools
import json
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, Final, Literal

from google.protobuf import timestamp_pb2

from agentmsg import _media, _validation
from agentmsg.content import (
    AudioContent,
    Citation,
    Content,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    TokenLogprob,
    ToolApprovalContent,
    ToolCallContent,
    ToolResultContent,
    UnknownContent,
    content_from_proto,
    content_to_dict,
    detail_to_pb,
    dump_arguments,
    parse_json_object,
)
from agentmsg.errors import DecodeError, MediaError, ValidationError
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
    may_replay,
    restore_id,
    split_media,
)
from agentmsg.usage import Usage
from agentmsg.v1 import content_pb2

try:
    from langchain_core import messages as lc
    from langchain_core.messages.content import KNOWN_BLOCK_TYPES
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("agentmsg.providers.langchain needs langchain-core: pip install 'agentmsg[langchain]'") from exc

__all__ = [
    "API",
    "GEMINI_SIGNATURES",
    "PROVIDER",
    "STASH_KEY",
    "from_langchain",
    "to_langchain",
    "to_langchain_chunk",
]

PROVIDER: Final = "langchain"
"""The provider name of :class:`~agentmsg.ProviderContent` blocks passed through from LangChain."""
API: Final = "langchain-core"
STASH_KEY: Final = "agentmsg"
"""The ``response_metadata`` key holding what LangChain has no field for."""

GEMINI_SIGNATURES: Final = "__gemini_function_call_thought_signatures__"
"""The ``additional_kwargs`` key where langchain-google-genai keeps function-call signatures by call id."""

# agentmsg provenance (provider, api) <-> LangChain's ``model_provider`` where the names differ.
_LC_PROVIDER: Final[Mapping[tuple[str, str], str]] = {("google", "google-generative-ai"): "google_genai"}
# LangChain integrations that speak exactly one wire API: model_provider -> (provider, api).
_FROM_LC_PROVIDER: Final[Mapping[str, tuple[str, str]]] = {
    "anthropic": ("anthropic", "anthropic-messages"),
    "google_genai": ("google", "google-generative-ai"),
}

_TARGET = "LangChain messages"
_WHAT = "LangChain messages"

# Raw stop reasons of the OpenAI, Anthropic and Google integrations -> our normalised value.
_STOP_FROM_RAW: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.STOP,
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "STOP": StopReason.STOP,
    "length": StopReason.LENGTH,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "MAX_TOKENS": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_CALLS,
    "function_call": StopReason.TOOL_CALLS,
    "tool_use": StopReason.TOOL_CALLS,
    "content_filter": StopReason.CONTENT_FILTER,
    "refusal": StopReason.CONTENT_FILTER,
    "SAFETY": StopReason.CONTENT_FILTER,
    "RECITATION": StopReason.CONTENT_FILTER,
    "BLOCKLIST": StopReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "SPII": StopReason.CONTENT_FILTER,
}
_CHAT_ROLES: Final[Mapping[str, str]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}
# Empty assistant content is allowed by the contract with these stop reasons (or an error).
_EMPTY_OK: Final = frozenset({StopReason.LENGTH, StopReason.CONTENT_FILTER, StopReason.ABORT, StopReason.ERROR})


def _compact(args: Mapping[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# =============================================================================== agentmsg -> LangChain


def to_langchain(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
    target_provider: str | None = None,
    target_api: str | None = None,
    include_metadata: bool = True,
) -> list[lc.BaseMessage]:
    """LangChain message objects for agentmsg messages (see the module docstring).

    ``target_provider`` / ``target_api`` / ``model`` name the chat model the
    messages are for, when known: signatures and redacted thinking are then
    kept only for messages that model produced. ``include_metadata=False``
    writes no ``response_metadata["agentmsg"]`` stash.
    """
    reporter = Reporter(_TARGET, report, strict=strict)
    writer = _Writer(reporter, model, target_provider, target_api, include_metadata)
    out: list[lc.BaseMessage] = []
    for path, message, _projected in llm_messages(messages, session_messages):
        out.extend(writer.message(message, path))
    reporter.finish()
    return out


def to_langchain_chunk(
    message: AssistantMessage,
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    model: str | None = None,
    target_provider: str | None = None,
    target_api: str | None = None,
    include_metadata: bool = True,
) -> lc.AIMessageChunk:
    """An assistant message as one final ``AIMessageChunk`` (``chunk_position="last"``).

    The content and metadata are those of :func:`to_langchain`; the tool calls
    are also given as ``tool_call_chunks`` whose ``args`` is the argument text
    verbatim and whose ``index`` is the call's position.
    """
    if not isinstance(message, AssistantMessage):
        raise ValidationError.single("", "type", f"expected an AssistantMessage, got {type(message).__name__}")
    reporter = Reporter(_TARGET, report, strict=strict)
    writer = _Writer(reporter, model, target_provider, target_api, include_metadata)
    kwargs, calls = writer.assistant_fields(message, "")
    chunks: list[Any] = [
        {"name": call.name, "args": call.arguments, "id": call.id, "index": i, "type": "tool_call_chunk"}
        for i, call in enumerate(calls)
    ]
    kwargs.pop("tool_calls", None)
    kwargs.pop("invalid_tool_calls", None)
    chunk = lc.AIMessageChunk(**kwargs, tool_call_chunks=chunks, chunk_position="last")
    reporter.finish()
    return chunk


class _Writer:
    def __init__(
        self,
        reporter: Reporter,
        model: str | None,
        target_provider: str | None,
        target_api: str | None,
        include_metadata: bool,
    ) -> None:
        self.reporter = reporter
        self.model = model
        self.target_provider = target_provider
        self.target_api = target_api
        self.include_metadata = include_metadata

    # --- policy

    def replayable(self, provenance: Provenance | None) -> bool:
        """May this message's signatures, redacted thinking and provider blocks be written?"""
        if provenance is None or not provenance.provider:
            return False
        provider = self.target_provider if self.target_provider is not None else provenance.provider
        api = self.target_api if self.target_api is not None else provenance.api
        return may_replay(provenance, provider, api, self.model)

    def refusal(self, provenance: Provenance | None) -> str:
        if provenance is None or not provenance.provider:
            return "no provenance vouches for it"
        if self.target_provider is not None:
            target = "/".join(x for x in (self.target_provider, self.target_api, self.model) if x)
            return f"it was produced by {provenance.provider}/{provenance.api or '?'}, not by {target}"
        return f"it was produced by {provenance.model or 'another model'}, not by {self.model}"

    # --- messages

    def message(self, message: AgentMessage, path: str) -> list[lc.BaseMessage]:
        if isinstance(message, SystemMessage):
            stash = self.base_stash(message)
            content = self.text_like(message.contents, path, None, collapse_empty=True)
            return [lc.SystemMessage(content=content, id=message.id, name=message.name or None, **self.meta(stash))]
        if isinstance(message, UserMessage):
            return self.user(message, path)
        if isinstance(message, AssistantMessage):
            kwargs, _ = self.assistant_fields(message, path)
            return [lc.AIMessage(**kwargs)]
        if isinstance(message, ToolMessage):
            pieces: list[tuple[str, Any]] = []
            for j, block in enumerate(message.contents):
                if isinstance(block, ToolResultContent):
                    pieces.append(("tool", (j, block)))
                else:
                    self.reporter.loss(f"{path}.contents[{j}]", "a content block of an unknown kind", "not readable")
            return self.pieces(message, path, pieces, role=None)
        self.reporter.loss(path, "a message of an unknown role", "LangChain has no message for it")
        return []

    def base_stash(self, message: BaseMessage) -> dict[str, Any]:
        return {"timestamp": message.pb.timestamp.ToJsonString()}

    def meta(self, stash: dict[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        metadata: dict[str, Any] = dict(extra or {})
        if self.include_metadata and stash:
            metadata[STASH_KEY] = stash
        return {"response_metadata": metadata} if metadata else {}

    def user(self, message: UserMessage, path: str) -> list[lc.BaseMessage]:
        pieces: list[tuple[str, Any]] = []
        run: list[tuple[int, Content]] = []
        has_results = False
        for j, block in enumerate(message.contents):
            if isinstance(block, ToolResultContent):
                has_results = True
                if run:
                    pieces.append(("human", run))
                    run = []
                pieces.append(("tool", (j, block)))
            else:
                run.append((j, block))
        if run:
            pieces.append(("human", run))
        return self.pieces(message, path, pieces, role="user" if has_results else None)

    def pieces(
        self, message: UserMessage | ToolMessage, path: str, pieces: list[tuple[str, Any]], role: str | None
    ) -> list[lc.BaseMessage]:
        out: list[lc.BaseMessage] = []
        result_position = 0
        for k, (kind, item) in enumerate(pieces):
            stash = self.base_stash(message)
            if len(pieces) > 1:
                stash["part_of"] = message.id
            if role is not None:
                stash["role"] = role
            piece_id = message.id if k == 0 else f"{message.id}#{k}"
            if kind == "human":
                blocks = self.blocks(item, path, None)
                content = _collapse(blocks, collapse_empty=True)
                out.append(lc.HumanMessage(content=content, id=piece_id, name=message.name or None, **self.meta(stash)))
                continue
            j, result = item
            out.append(self.tool_result(result, f"{path}.contents[{j}]", piece_id, stash, message, result_position))
            result_position += 1
        return out

    def tool_result(
        self,
        result: ToolResultContent,
        path: str,
        piece_id: str,
        stash: dict[str, Any],
        message: BaseMessage,
        position: int,
    ) -> lc.ToolMessage:
        if message.name:
            stash["name"] = message.name
        extra: dict[str, Any] = {}
        if result.index != position:
            extra["index"] = result.index
        if result.terminate:
            extra["terminate"] = True
        if result.terminate_message:
            extra["terminate_message"] = result.terminate_message
        if extra:
            stash["result"] = extra
        content = self.text_like(result.blocks, path, None, collapse_empty=False, field="content")
        metadata = result.metadata
        return lc.ToolMessage(
            content=content,
            tool_call_id=result.id,
            name=result.name or None,
            status="error" if result.is_error else "success",
            artifact=metadata or None,
            id=piece_id,
            **self.meta(stash),
        )

    # --- content

    def text_like(
        self,
        contents: Sequence[Content],
        path: str,
        provenance: Provenance | None,
        *,
        collapse_empty: bool,
        field: str = "contents",
    ) -> str | list[str | dict[Any, Any]]:
        blocks = self.blocks(list(enumerate(contents)), path, provenance, field=field)
        return _collapse(blocks, collapse_empty=collapse_empty)

    def blocks(
        self, items: Sequence[tuple[int, Content]], path: str, provenance: Provenance | None, field: str = "contents"
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for j, block in items:
            for piece_path, piece in split_media(block, f"{path}.{field}[{j}]", self.reporter):
                converted = self.block(piece, piece_path, provenance)
                if converted is not None:
                    out.append(converted)
        return out

    def signature(self, data: dict[str, Any], signature: str, path: str, provenance: Provenance | None) -> None:
        if not signature:
            return
        if self.replayable(provenance):
            data["extras"] = {**data.get("extras", {}), "signature": signature}
        else:
            self.reporter.loss(f"{path}.signature", "a signature", self.refusal(provenance))

    def provider_block(
        self, block: ProviderContent, path: str, provenance: Provenance | None, assistant: bool
    ) -> dict[str, Any] | None:
        """A passed-through block: LangChain's own (standard ones as they are, others raw in a human
        message and wrapped as ``non_standard`` in v1 assistant content), or the assistant's provider's."""
        payload = block.block()
        if block.provider == PROVIDER:
            if payload.get("type") in KNOWN_BLOCK_TYPES or not assistant:
                return payload
            return {"type": "non_standard", "value": payload}
        own = self.target_provider
        if own is None and provenance is not None:
            own = provenance.provider
        if assistant and block.provider == own and self.replayable(provenance):
            return {"type": "non_standard", "value": payload}
        self.reporter.loss(
            path, f"a {block.provider} {block.block_type!r} block", "LangChain carries only its own blocks"
        )
        return None

    def block(
        self, block: Content, path: str, provenance: Provenance | None, assistant: bool = False
    ) -> dict[str, Any] | None:
        if isinstance(block, TextContent):
            data: dict[str, Any] = _text_to_lc(block)
            self.signature(data, block.signature, path, provenance)
            extra = block.pb.text.citations or block.pb.text.logprobs
            if extra and not assistant and (block.pb.text.logprobs or _text_from_lc(data) != block):
                # Assistant text keeps them in the stash (assistant_fields); other text has none.
                self.reporter.loss(
                    path,
                    "the citations or logprobs of a text block",
                    "LangChain's annotations cannot hold them all, and only an assistant message keeps a stash",
                )
            return data
        if isinstance(block, (HostedToolCallContent, HostedToolResultContent)):
            data = _hosted_to_lc(block)
            if isinstance(block, HostedToolCallContent):
                self.signature(data, block.signature, path, provenance)
            return data
        if isinstance(block, (ImageContent, AudioContent, DocumentContent)):
            return _media_block(block)
        if isinstance(block, ThinkingContent):
            data = {"type": "reasoning", "reasoning": block.content}
            self.signature(data, block.signature, path, provenance)
            return data
        if isinstance(block, RedactedThinkingContent):
            if self.replayable(provenance):
                return {"type": "non_standard", "value": {"type": "redacted_thinking", "data": block.data}}
            self.reporter.loss(path, "redacted thinking", self.refusal(provenance))
            return None
        if isinstance(block, ProviderContent):
            return self.provider_block(block, path, provenance, assistant)
        if isinstance(block, UnknownContent):
            self.reporter.loss(path, "a content block of an unknown kind", "not readable by this version")
            return None
        if isinstance(block, ToolApprovalContent):
            self.reporter.loss(
                path,
                "tool approval",
                "LangChain's messages have no approval block (its human-in-the-loop decisions are the agent's "
                "interrupts); a denial reaches the model as the call's error ToolMessage",
            )
            return None
        # Tool calls and results never reach here: the callers route them first.
        self.reporter.loss(path, f"a {block.type} block", "not allowed here")  # pragma: no cover
        return None  # pragma: no cover

    # --- assistant

    def assistant_fields(self, message: AssistantMessage, path: str) -> tuple[dict[str, Any], list[ToolCallContent]]:
        provenance = message.provenance
        stash = self.base_stash(message)
        blocks: list[dict[str, Any]] = []
        tool_calls: list[dict[str, Any]] = []
        invalid: list[dict[str, Any]] = []
        calls: list[ToolCallContent] = []
        call_stash: list[dict[str, Any] | None] = []
        call_signatures: dict[str, str] = {}
        classic = True
        texts = 0
        kept: list[dict[str, Any]] = []
        # Token logprobs go where ChatOpenAI keeps them when one text block holds them all.
        contents = message.contents
        text_blocks = [block for block in contents if isinstance(block, TextContent)]
        lc_logprobs: list[dict[str, Any]] = []
        logprobs: list[TokenLogprob] = []
        if len(text_blocks) == 1 and text_blocks[0].logprobs:
            lc_logprobs = [_logprob_to_lc(item) for item in text_blocks[0].logprobs]
            logprobs = [_logprob_from_lc(item) for item in lc_logprobs]
        for j, block in enumerate(contents):
            where = f"{path}.contents[{j}]" if path else f"contents[{j}]"
            if isinstance(block, ToolCallContent):
                data, entry = self.tool_call(block, where, provenance, len(calls))
                calls.append(block)
                call_stash.append({"id": block.id, **entry} if entry else None)
                if "extras" in data:
                    call_signatures[block.id] = block.signature
                if data["type"] == "tool_call":
                    if invalid:
                        classic = False  # a valid call after an invalid one: only list content keeps the order
                    tool_calls.append({k: data[k] for k in ("name", "args", "id")} | {"type": "tool_call"})
                else:
                    invalid.append(
                        {k: data[k] for k in ("name", "args", "id", "error")} | {"type": "invalid_tool_call"}
                    )
                classic = classic and "extras" not in data
                blocks.append(data)
                continue
            converted = self.block(block, where, provenance, assistant=True)
            if converted is None:
                continue
            stashed = _stash_form(block, converted)
            if stashed is not None:
                if self.include_metadata:
                    kept.append({"at": len(blocks), "proto": base64.b64encode(stashed.to_bytes()).decode("ascii")})
                elif not _standard_holds(stashed, converted, logprobs):
                    self.reporter.loss(
                        where,
                        f"what LangChain's {converted['type']} block has no field for",
                        "it is kept in response_metadata.agentmsg.blocks, which include_metadata=False does not write",
                    )
            if set(converted) == {"type", "text"} and converted["type"] == "text" and not calls and texts == 0:
                classic = classic and converted["text"] != ""
                texts += 1
            else:
                classic = False
            blocks.append(converted)
        metadata: dict[str, Any] = {}
        if classic:
            content: str | list[Any] = blocks[0]["text"] if blocks and blocks[0]["type"] == "text" else ""
        else:
            content = blocks
            metadata["output_version"] = "v1"
        model_provider = ""
        if provenance is not None:
            model_provider = _LC_PROVIDER.get((provenance.provider, provenance.api), provenance.provider)
            for key, value in (
                ("model_provider", model_provider),
                ("model_name", provenance.model),
                ("id", provenance.response_id),
            ):
                if value:
                    metadata[key] = value
            stash["api"] = provenance.api
        if message.stop_reason_raw:
            key = "stop_reason" if provenance is not None and provenance.provider == "anthropic" else "finish_reason"
            metadata[key] = message.stop_reason_raw
        if lc_logprobs:
            metadata["logprobs"] = {"content": lc_logprobs}
        if message.stop_sequence:
            metadata["stop_sequence"] = message.stop_sequence  # where langchain-anthropic puts it
        if kept:
            stash["blocks"] = kept
        if message.stop_reason != _STOP_FROM_RAW.get(message.stop_reason_raw):
            stash["stop_reason"] = message.stop_reason.value if message.stop_reason is not None else ""
        if message.error:
            stash["error"] = message.error
        extra = message.provider_extra
        if extra is not None:
            stash["provider_extra"] = {"provider": extra.provider, "type": extra.block_type, "json": extra.json}
            if not self.include_metadata:
                self.reporter.loss(
                    f"{path}.provider_extra" if path else "provider_extra",
                    f"the {extra.provider} response keys no field holds",
                    "they are kept in response_metadata.agentmsg.provider_extra, "
                    "which include_metadata=False does not write",
                )
        usage_metadata: dict[str, Any] | None = None
        if message.usage is not None:
            usage_metadata = _usage_to_lc(message.usage)
            if _usage_from_lc_exact(usage_metadata) != message.usage:
                stash["usage"] = message.usage.to_json_dict()
                if not self.include_metadata and message.usage.hosted_tool_requests:
                    self.reporter.loss(
                        f"{path}.usage.hosted_tool_requests" if path else "usage.hosted_tool_requests",
                        "the hosted-tool request counts",
                        "usage_metadata has no field for them; they are kept in response_metadata.agentmsg.usage, "
                        "which include_metadata=False does not write",
                    )
        while call_stash and call_stash[-1] is None:
            call_stash.pop()
        if call_stash:
            stash["tool_calls"] = call_stash
        kwargs: dict[str, Any] = {
            "content": content,
            # langchain-google-genai reads function-call signatures from here, not from the blocks.
            "additional_kwargs": {GEMINI_SIGNATURES: call_signatures}
            if call_signatures and model_provider == "google_genai"
            else {},
            "tool_calls": tool_calls,
            "invalid_tool_calls": invalid,
            "usage_metadata": usage_metadata,
            "id": message.id,
            "name": message.name or None,
            **self.meta(stash, metadata),
        }
        return kwargs, calls

    def tool_call(
        self, block: ToolCallContent, path: str, provenance: Provenance | None, position: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        entry: dict[str, Any] = {}
        args, error = parse_json_object(block.arguments)
        data: dict[str, Any]
        if args is not None:
            data = {"type": "tool_call", "id": block.id, "name": block.name, "args": args}
            if _compact(args) != block.arguments:
                entry["arguments"] = block.arguments
        else:
            data = {"type": "invalid_tool_call", "id": block.id, "name": block.name, "args": block.arguments}
            data["error"] = error
        self.signature(data, block.signature, path, provenance)
        if block.kind is not None:
            entry["kind"] = block.kind.value
        if block.index != position:
            entry["index"] = block.index
        if block.server_name:
            entry["server_name"] = block.server_name
        if block.metadata:
            entry["metadata"] = block.metadata
        return data, entry


# --- v1.1 content: LangChain's standard blocks for hosted tools, citations and logprobs

_MCP_NAME: Final = "remote_mcp"
"""LangChain's ``server_tool_call`` name for an MCP call (the tool's own name goes to ``extras.tool_name``)."""


def _citation_to_lc(citation: content_pb2.Citation) -> dict[str, Any]:
    """A ``citation`` annotation (or, for a citation read from LangChain, the annotation as it was).

    Reads the generated message directly: this runs for every citation of every converted message.
    """
    if citation.HasField("original") and citation.original.provider == PROVIDER:
        return ProviderContent.from_proto(content_pb2.Content(provider=citation.original)).block()
    data: dict[str, Any] = {"type": "citation"}
    source = citation.WhichOneof("source")
    url = citation.web.url if source == "web" else citation.search_result.source if source == "search_result" else ""
    if url:
        data["url"] = url
    title = Citation._wrap(citation).title
    if title:
        data["title"] = title
    if citation.HasField("start_index"):
        data["start_index"] = citation.start_index
    if citation.HasField("end_index"):
        data["end_index"] = citation.end_index
    if citation.cited_text:
        data["cited_text"] = citation.cited_text
    return data


def _citation_from_lc(annotation: Mapping[str, Any]) -> Citation:
    """A citation for a ``citation`` annotation with a URL; any other annotation kept whole as ``original``."""
    url, title = annotation.get("url"), annotation.get("title", "")
    start, end = annotation.get("start_index"), annotation.get("end_index")
    cited = annotation.get("cited_text", "")
    typed = (
        annotation.get("type") == "citation"
        and isinstance(url, str)
        and url
        and isinstance(title, str)
        and isinstance(cited, str)
        and all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in (start, end))
    )
    if typed:
        citation = Citation.web(str(url), title, cited_text=cited, start_index=start, end_index=end)
        if _citation_to_lc(citation.pb) == dict(annotation):
            return citation
    return Citation(original=ProviderContent.from_block(PROVIDER, annotation))


def _logprob_to_lc(logprob: TokenLogprob, *, top: bool = True) -> dict[str, Any]:
    """One token in the OpenAI shape ChatOpenAI keeps in ``response_metadata["logprobs"]["content"]``."""
    data: dict[str, Any] = {
        "token": logprob.token,
        "logprob": logprob.logprob,
        "bytes": None if logprob.bytes is None else list(logprob.bytes),
    }
    if top:
        data["top_logprobs"] = [_logprob_to_lc(alt, top=False) for alt in logprob.top_logprobs]
    return data


def _logprob_from_lc(data: Any) -> TokenLogprob:
    if not isinstance(data, Mapping):
        raise ValidationError.single("", "langchain.type", f"expected a token object, got {json_type(data)}")
    raw = data.get("bytes")
    return TokenLogprob(
        data.get("token"),  # type: ignore[arg-type] # the constructor checks the types
        data.get("logprob"),  # type: ignore[arg-type]
        bytes=None if raw is None else bytes(raw),
        top_logprobs=[_logprob_from_lc(alt) for alt in data.get("top_logprobs") or []],
    )


def _text_to_lc(block: TextContent) -> dict[str, Any]:
    """A ``text`` block with its citations as ``annotations`` (the signature is the writer's business)."""
    data: dict[str, Any] = {"type": "text", "text": block.content}
    citations = block.pb.text.citations
    if citations:
        data["annotations"] = [_citation_to_lc(citation) for citation in citations]
    return data


def _hosted_to_lc(block: HostedToolCallContent | HostedToolResultContent) -> dict[str, Any]:
    """LangChain's ``server_tool_call`` (``server_tool_call_chunk`` for input that is not a JSON object)
    or ``server_tool_result``; a block read from LangChain goes back as it was."""
    original = block.original
    if original is not None and original.provider == PROVIDER:
        return original.block()
    if isinstance(block, HostedToolCallContent):
        args, _ = parse_json_object(block.input)
        name = _MCP_NAME if block.kind is HostedToolKind.MCP else block.name
        data: dict[str, Any] = {
            "type": "server_tool_call" if args is not None else "server_tool_call_chunk",
            "id": block.id,
            "name": name,
            "args": args if args is not None else block.input,
        }
        if name == _MCP_NAME:
            data["extras"] = {"tool_name": block.name}
        return data
    data = {
        "type": "server_tool_result",
        "tool_call_id": block.call_id,
        "status": "error" if block.is_error else "success",
    }
    body = block.body
    if body == "search_results":
        data["output"] = _search_output(block.pb.hosted_tool_result.search_results)
    elif body is not None:
        data["output"] = content_to_dict(block)[body]
    elif block.blocks and all(isinstance(part, TextContent) for part in block.blocks):
        data["output"] = "".join(part.content for part in block.blocks)  # type: ignore[union-attr]
    return data


def _search_output(search: content_pb2.SearchResults) -> dict[str, Any]:
    """Search results as ProtoJSON with proto field names writes them (the seed-1 dict form's), built directly:
    ``json_format`` cost more than the rest of a conversion."""
    results = []
    for item in search.results:
        entry = {key: getattr(item, key) for key in _SEARCH_RESULT_FIELDS if getattr(item, key)}
        if item.HasField("score"):
            entry["score"] = item.score
        results.append(entry)
    out: dict[str, Any] = {"results": results} if results else {}
    if search.queries:
        out["queries"] = list(search.queries)
    return out


_SEARCH_RESULT_FIELDS: Final = ("url", "title", "snippet", "page_age", "encrypted_content", "file_id")


def _hosted_from_lc(block: Mapping[str, Any]) -> HostedToolCallContent | HostedToolResultContent:
    """The hosted block a LangChain server-tool block stands for.

    A call's ``extras.signature`` is its signature. What the typed fields do
    not give back (other extras, an index, an output of another shape) is kept
    by keeping the whole block as ``original``.
    """
    extras = block.get("extras")
    signature = extras.get("signature", "") if isinstance(extras, Mapping) else ""
    plain = _lc_form(block) if signature else dict(block)
    if block.get("type") == "server_tool_result":
        output = plain.get("output")
        common: dict[str, Any] = {
            "call_id": plain.get("tool_call_id") or "",
            "content": output if isinstance(output, str) else (),
            "is_error": plain.get("status") == "error",
        }
        result = HostedToolResultContent(**common)
        if _hosted_to_lc(result) == dict(block):
            return result
        return HostedToolResultContent(**common, original=ProviderContent.from_block(PROVIDER, block))
    extras = plain.get("extras")
    name = plain.get("name") or ""
    mcp = name == _MCP_NAME and isinstance(extras, Mapping) and isinstance(extras.get("tool_name"), str)
    args = plain.get("args")
    fields: dict[str, Any] = {
        "id": plain.get("id") or "",
        "name": extras["tool_name"] if mcp else name,  # type: ignore[index]
        "input": _compact(args) if isinstance(args, Mapping) else (args or ""),
        "kind": HostedToolKind.MCP if mcp else None,
        "signature": signature,
    }
    call = HostedToolCallContent(**fields)
    if _hosted_to_lc(call) == plain:
        return call
    return HostedToolCallContent(**fields, original=ProviderContent.from_block(PROVIDER, block))


def _text_from_lc(block: Mapping[str, Any], logprobs: Sequence[TokenLogprob] = ()) -> TextContent:
    """A text block from LangChain's: ``extras.signature``, ``annotations`` as citations."""
    extras = block.get("extras")
    signature = extras.get("signature", "") if isinstance(extras, Mapping) else ""
    annotations = block.get("annotations") or []
    if not isinstance(annotations, list):
        raise ValidationError.single("annotations", "langchain.type", f"expected a list, got {json_type(annotations)}")
    citations = []
    for k, annotation in enumerate(annotations):
        if not isinstance(annotation, Mapping):
            raise ValidationError.single(
                f"annotations[{k}]", "langchain.type", f"expected an object, got {json_type(annotation)}"
            )
        citations.append(_citation_from_lc(annotation))
    return TextContent(block.get("text"), signature=signature, citations=citations, logprobs=logprobs)  # type: ignore[arg-type]


def _lc_form(block: Mapping[str, Any]) -> dict[str, Any]:
    """A standard block as compared with a stashed one: no ``index`` (streaming), no signature."""
    out = {key: value for key, value in block.items() if key != "index"}
    extras = out.get("extras")
    if isinstance(extras, Mapping) and "signature" in extras:
        rest = {key: value for key, value in extras.items() if key != "signature"}
        if rest:
            out["extras"] = rest
        else:
            del out["extras"]
    return out


def _stash_form(block: Content, written: Mapping[str, Any]) -> Content | None:
    """What ``response_metadata.agentmsg.blocks`` keeps of a block, or None for a block it never keeps.

    Hosted tool calls and results are kept whole (but a signature the writer
    left out); of a text block only its citations and logprobs, when it has
    any (the text and signature are the standard block's).
    """
    if isinstance(block, TextContent):
        if not block.pb.text.citations and not block.pb.text.logprobs:
            return None
        details = content_pb2.Content()
        details.CopyFrom(block.pb)
        details.text.ClearField("text")
        details.text.ClearField("signature")
        return content_from_proto(details)
    if isinstance(block, HostedToolCallContent):
        extras = written.get("extras") or {}
        if block.signature and "signature" not in extras:
            pb = content_pb2.Content()
            pb.CopyFrom(block.pb)
            pb.hosted_tool_call.signature = ""
            return content_from_proto(pb)
        return block
    if isinstance(block, HostedToolResultContent):
        return block
    return None


def _standard_holds(stashed: Content, written: Mapping[str, Any], logprobs: Sequence[TokenLogprob]) -> bool:
    """Does reading the standard block alone (and the message's logprobs) give back what the stash would hold?"""
    if isinstance(stashed, TextContent):
        read = _text_from_lc(written, logprobs if stashed.logprobs else ())
        return read.citations == stashed.citations and read.logprobs == stashed.logprobs
    return _hosted_from_lc(_lc_form(written)) == stashed


_HOSTED_TYPES: Final = ("server_tool_call", "server_tool_call_chunk", "server_tool_result")


def _same_standard(stashed: Content, block: Mapping[str, Any]) -> bool:
    """Does the stashed block write the standard block read (but its index, signature and, for text, the text)?"""
    if isinstance(stashed, TextContent):
        written = _text_to_lc(stashed)
        written["text"] = block.get("text")
    elif isinstance(stashed, (HostedToolCallContent, HostedToolResultContent)):
        written = _hosted_to_lc(stashed)
    else:
        return False
    return _lc_form(written) == _lc_form(block)


def _collapse(blocks: list[dict[str, Any]], *, collapse_empty: bool) -> str | list[str | dict[Any, Any]]:
    """A lone plain text block as a string; no blocks as ``""``; else the list."""
    if not blocks:
        return ""
    if len(blocks) == 1 and set(blocks[0]) == {"type", "text"} and blocks[0]["type"] == "text":
        text: str = blocks[0]["text"]
        if text or collapse_empty:
            return text
    return list(blocks)


def _media_block(block: ImageContent | AudioContent | DocumentContent) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    if isinstance(block, DocumentContent):
        if block.filename:
            extras["filename"] = block.filename
        text = _utf8_text(block.data) if block.media_type == "text/plain" else None
        if text is not None:
            data: dict[str, Any] = {"type": "text-plain", "mime_type": "text/plain", "text": text}
            if block.title:
                data["title"] = block.title
            if extras:
                data["extras"] = extras
            return data
        if block.title:
            extras["title"] = block.title
        data = {"type": "file"}
    elif isinstance(block, ImageContent):
        data = {"type": "image"}
        if block.detail is not None:
            extras["detail"] = block.detail.value
    else:
        data = {"type": "audio"}
    if block.data is not None:
        data["base64"] = _media.encode_base64(block.data)
    elif block.url is not None:
        data["url"] = block.url
    else:
        data["file_id"] = block.file_id
    if block.media_type:
        data["mime_type"] = block.media_type
    if extras:
        data["extras"] = extras
    return data


def _utf8_text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_CACHE_TTL_KEYS: Final = (
    ("cache_write_5m_tokens", "ephemeral_5m_input_tokens"),
    ("cache_write_1h_tokens", "ephemeral_1h_input_tokens"),
)


def _usage_to_lc(usage: Usage) -> dict[str, Any]:
    cache_read, cache_write = usage.known("cache_read_tokens"), usage.known("cache_write_tokens")
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    output = usage.output_tokens
    total = usage.total_tokens if "total_tokens" in usage.reported else prompt + output
    data: dict[str, Any] = {"input_tokens": prompt, "output_tokens": output, "total_tokens": total}
    details: dict[str, int] = {}
    if cache_read is not None:
        details["cache_read"] = cache_read
    if cache_write is not None:
        details["cache_creation"] = cache_write
    # langchain-anthropic's keys for the cache writes by TTL (parts of cache_creation).
    for ours, theirs in _CACHE_TTL_KEYS:
        value = usage.known(ours)
        if value is not None:
            details[theirs] = value
    if details:
        data["input_token_details"] = details
    if "reasoning_tokens" in usage.reported:
        data["output_token_details"] = {"reasoning": usage.reasoning_tokens}
    return data


def _usage_from_lc_exact(data: Mapping[str, Any]) -> Usage | None:
    """The usage a well-formed ``usage_metadata`` stands for (None when it cannot be one)."""
    inputs = data.get("input_token_details") or {}
    outputs = data.get("output_token_details") or {}
    cache_read, cache_write = inputs.get("cache_read"), inputs.get("cache_creation")
    prompt = data["input_tokens"] - (cache_read or 0) - (cache_write or 0)
    if prompt < 0:
        return None
    return Usage(
        input_tokens=prompt,
        output_tokens=data["output_tokens"],
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=outputs.get("reasoning"),
        total_tokens=data["total_tokens"],
        cache_write_5m_tokens=inputs.get("ephemeral_5m_input_tokens"),
        cache_write_1h_tokens=inputs.get("ephemeral_1h_input_tokens"),
    )


def _usage_projection(data: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a ``usage_metadata`` that :func:`_usage_to_lc` writes."""
    out = {key: data.get(key) for key in ("input_tokens", "output_tokens", "total_tokens")}
    kept = ("cache_read", "cache_creation", *(theirs for _, theirs in _CACHE_TTL_KEYS))
    inputs = {k: v for k, v in (data.get("input_token_details") or {}).items() if k in kept}
    inputs = {k: v for k, v in inputs.items() if v is not None}
    if inputs:
        out["input_token_details"] = inputs
    reasoning = (data.get("output_token_details") or {}).get("reasoning")
    if reasoning is not None:
        out["output_token_details"] = {"reasoning": reasoning}
    return out


# =============================================================================== LangChain -> agentmsg


@dataclass
class _Piece:
    """One LangChain message read, before the pieces of a split message are joined."""

    path: str
    role: str  # system | user | assistant | tool
    blocks: list[Content]
    id: str | None
    name: str
    timestamp: timestamp_pb2.Timestamp | None
    part_of: str | None = None
    result_index: int | None = None  # a tool result's stashed index (None: its position)
    assistant: dict[str, Any] = field(default_factory=dict)


def from_langchain(
    messages: Iterable[lc.BaseMessage | Mapping[str, Any]],
    *,
    id_map: Mapping[str, str] | None = None,
    pass_through_unknown: bool = True,
    remove_messages: Literal["refuse", "skip"] = "refuse",
    artifacts: Literal["metadata", "ignore"] = "metadata",
    merge_chunks: bool = False,
    api_by_provider: Mapping[str, str] | None = None,
) -> list[AgentMessage]:
    """agentmsg messages for LangChain messages (objects, or their ``messages_to_dict`` dicts).

    Blocks agentmsg has no kind for are kept as
    :class:`~agentmsg.ProviderContent` (user and assistant messages only;
    they go back to LangChain unchanged and are a loss to other formats);
    ``pass_through_unknown=False`` refuses them instead (rule
    ``langchain.unknown_type``).
    ``api_by_provider`` names the wire API of a ``model_provider`` for messages
    read without a stash (e.g. ``{"anthropic": "anthropic-messages"}``).
    Raises :class:`~agentmsg.ValidationError` listing every problem found (see
    the module docstring); nothing is returned unless everything converts.
    """
    errors = PayloadErrors(_WHAT)
    if isinstance(messages, (lc.BaseMessage, str, bytes, Mapping)) or not isinstance(messages, Iterable):
        errors.add("", "langchain.type", f"expected a list of messages, got {type(messages).__name__}")
        errors.raise_if_any()
    items = _materialise(list(messages), errors)
    if merge_chunks:
        items = _merge_chunk_runs(items)
    reader = _Reader(errors, id_map, pass_through_unknown, artifacts, api_by_provider or {})
    pieces: list[_Piece] = []
    for path, index, message in items:
        if isinstance(message, lc.RemoveMessage):
            if remove_messages == "refuse":
                errors.add(
                    path,
                    "langchain.remove_message",
                    "a RemoveMessage is a LangGraph instruction, not a message: apply it first, or pass "
                    'remove_messages="skip"',
                )
            continue
        piece = reader.message(message, path, index)
        if piece is not None:
            pieces.append(piece)
    out: list[AgentMessage] = []
    for group in _groups(pieces):
        built = reader.build(group)
        if built is not None:
            out.append(built)
    errors.raise_if_any()
    return out


def _materialise(items: list[Any], errors: PayloadErrors) -> list[tuple[str, int, lc.BaseMessage]]:
    out: list[tuple[str, int, lc.BaseMessage]] = []
    for i, item in enumerate(items):
        path = f"[{i}]"
        if isinstance(item, lc.BaseMessage):
            out.append((path, i, item))
        elif isinstance(item, Mapping) and set(item) >= {"type", "data"}:
            try:
                out.append((path, i, lc.messages_from_dict([dict(item)])[0]))
            except Exception as exc:  # LangChain raises ValueError, KeyError, pydantic errors...
                errors.add(path, "langchain.type", f"not a LangChain message dict: {exc}")
        else:
            errors.add(path, "langchain.type", f"expected a LangChain message, got {json_type(item)}")
    return out


def _merge_chunk_runs(items: list[tuple[str, int, lc.BaseMessage]]) -> list[tuple[str, int, lc.BaseMessage]]:
    """Each run of consecutive ``AIMessageChunk`` added up with ``+``, as LangChain's streaming does."""
    out: list[tuple[str, int, lc.BaseMessage]] = []
    run: list[tuple[str, int, lc.BaseMessage]] = []
    for item in [*items, None]:
        if item is not None and isinstance(item[2], lc.AIMessageChunk):
            run.append(item)
            continue
        if run:
            merged = functools.reduce(operator.add, [message for _, _, message in run])
            out.append((run[0][0], run[0][1], merged))
            run = []
        if item is not None:
            out.append(item)
    return out


def _groups(pieces: list[_Piece]) -> list[list[_Piece]]:
    """Consecutive pieces of one split message together; every other piece alone."""
    groups: list[list[_Piece]] = []
    for piece in pieces:
        last = groups[-1][-1] if groups else None
        if piece.part_of is not None and last is not None and last.part_of == piece.part_of:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups


class _Stash:
    """The ``response_metadata["agentmsg"]`` of one message, read with type checks."""

    def __init__(self, message: lc.BaseMessage, path: str, errors: PayloadErrors) -> None:
        self.errors = errors
        self.path = f"{path}.response_metadata.{STASH_KEY}"
        metadata = message.response_metadata if isinstance(message.response_metadata, Mapping) else {}
        raw = metadata.get(STASH_KEY)
        self.data: Mapping[str, Any] = {}
        if isinstance(raw, Mapping):
            self.data = raw
        elif raw is not None:
            errors.add(self.path, "langchain.metadata", f"expected an object, got {json_type(raw)}")

    def where(self, key: str) -> str:
        return f"{self.path}.{key}"

    def get(self, key: str, kind: type, what: str, within: tuple[str, Mapping[str, Any]] | None = None) -> Any:
        """``stash[key]`` (or ``within``'s), None when absent or of the wrong type (recorded)."""
        prefix, source = within if within is not None else ("", self.data)
        if not isinstance(source, Mapping) or key not in source:
            return None
        value = source[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            where = self.where(f"{prefix}.{key}" if prefix else key)
            self.errors.add(where, "langchain.metadata", f"expected {what}, got {json_type(value)}")
            return None
        return value

    def section(self, key: str) -> tuple[str, Mapping[str, Any]]:
        """``(key, stash[key])`` for :meth:`get`'s ``within`` (an empty object when absent)."""
        return key, self.get(key, Mapping, "an object") or {}

    def timestamp(self) -> timestamp_pb2.Timestamp | None:
        text = self.get("timestamp", str, "an RFC 3339 timestamp")
        if text is None:
            return None
        stamp = timestamp_pb2.Timestamp()
        try:
            stamp.FromJsonString(text)
            stamp.ToDatetime(tzinfo=UTC)
        except (ValueError, OverflowError) as exc:
            self.errors.add(self.where("timestamp"), "langchain.metadata", f"not an RFC 3339 timestamp: {exc}")
            return None
        return stamp


@dataclass
class _Call:
    """A tool call read from ``tool_calls``, ``invalid_tool_calls``, ``tool_call_chunks`` or a content block."""

    path: str
    id: Any
    name: Any
    args: Any  # a dict (tool_calls, tool_call blocks) or the text (the others)
    kind: str = "tool_call"  # the content block type it pairs with: tool_call, invalid_tool_call, or "" (chunks: any)
    signature: str = ""
    used: bool = False


class _Reader:
    def __init__(
        self,
        errors: PayloadErrors,
        id_map: Mapping[str, str] | None,
        pass_through: bool,
        artifacts: str,
        api_by_provider: Mapping[str, str],
    ) -> None:
        self.errors = errors
        self.id_map = id_map
        self.pass_through = pass_through
        self.artifacts = artifacts
        self.api_by_provider = api_by_provider
        self.legacy_calls: dict[str, str] = {}  # function name -> synthetic call id (FunctionMessage)

    # --- messages

    def message(self, message: lc.BaseMessage, path: str, index: int) -> _Piece | None:
        stash = _Stash(message, path, self.errors)
        part_of = stash.get("part_of", str, "a message id")
        common: dict[str, Any] = {
            "id": part_of or (message.id if isinstance(message.id, str) and message.id else None),
            "name": message.name if isinstance(message.name, str) else "",
            "timestamp": stash.timestamp(),
            "part_of": part_of,
        }
        role = stash.get("role", str, "a role")
        if role not in (None, "user"):
            self.errors.add(stash.where("role"), "langchain.metadata", f"unknown role {role!r}")
            role = None
        if isinstance(message, lc.AIMessage):
            return self.assistant(message, path, index, stash, common)
        if isinstance(message, lc.HumanMessage):
            return _Piece(path, "user", self.content(message, path, "user") or [TextContent("")], **common)
        if isinstance(message, lc.SystemMessage):
            return _Piece(path, "system", self.content(message, path, "system") or [TextContent("")], **common)
        if isinstance(message, lc.ToolMessage):
            common["name"] = stash.get("name", str, "a string") or ""
            result, result_index = self.tool_result(message, path, stash)
            blocks: list[Content] = [result] if result is not None else []
            return _Piece(path, role or "tool", blocks, result_index=result_index, **common)
        if isinstance(message, lc.FunctionMessage):
            name = message.name if isinstance(message.name, str) else ""
            call_id = self.legacy_calls.pop(name, None) or f"function_call_{index}"
            content = self.content(message, path, "tool")
            common["name"] = ""
            with self.errors.building(path):
                result = ToolResultContent(call_id, content, name=name)  # type: ignore[arg-type]
                return _Piece(path, "tool", [result], **common)
            return None
        if isinstance(message, lc.ChatMessage):
            mapped = _CHAT_ROLES.get(message.role) if isinstance(message.role, str) else None
            if mapped is None:
                self.errors.add(
                    _at(path, "role"),
                    "langchain.role",
                    f"agentmsg has no message for a ChatMessage role {message.role!r}",
                )
                return None
            if mapped == "assistant":
                return self.assistant(message, path, index, stash, common)
            return _Piece(path, mapped, self.content(message, path, mapped) or [TextContent("")], **common)
        self.errors.add(path, "langchain.type", f"agentmsg has no message for a LangChain {type(message).__name__}")
        return None

    def build(self, group: list[_Piece]) -> AgentMessage | None:
        first = group[0]
        role = "user" if any(piece.role == "user" for piece in group) else first.role
        position = 0
        for piece in group:
            for block in piece.blocks:
                if isinstance(block, ToolResultContent):
                    block.pb.tool_result.index = piece.result_index if piece.result_index is not None else position
                    position += 1
        blocks: list[Any] = [block for piece in group for block in piece.blocks]
        common: dict[str, Any] = {"id": first.id, "name": first.name}
        if first.timestamp is not None:
            common["timestamp"] = first.timestamp.ToDatetime(tzinfo=UTC)
        message: AgentMessage | None = None
        with self.errors.building(first.path):
            if role == "system":
                message = SystemMessage(blocks, **common)
            elif role == "user":
                message = UserMessage(blocks, **common)
            elif role == "tool":
                message = ToolMessage(blocks, **common)
            else:
                message = AssistantMessage(blocks, **common, **first.assistant)
        if message is not None and first.timestamp is not None:
            message.pb.timestamp.CopyFrom(first.timestamp)  # nanoseconds too, which a datetime cannot hold
        return message

    # --- content

    def content_blocks(self, message: lc.BaseMessage, path: str) -> list[tuple[str, dict[str, Any]]]:
        """LangChain's own standard blocks for the content, each with its path."""
        try:
            raw: list[Any] = list(message.content_blocks)
        except Exception as exc:  # a provider translator may raise anything
            self.errors.add(_at(path, "content"), "langchain.content", f"LangChain cannot read the content: {exc}")
            return []
        content = message.content
        if isinstance(content, str):
            if len(raw) == 1:
                return [(_at(path, "content"), dict(raw[0]))]
            base = "content_blocks"
        else:
            base = "content" if len(raw) == len(content) else "content_blocks"
        out: list[tuple[str, dict[str, Any]]] = []
        for j, block in enumerate(raw):
            where = f"{_at(path, base)}[{j}]"
            if isinstance(block, str):  # v1 content is handed back as is, and a list may hold strings
                out.append((where, {"type": "text", "text": block}))
            elif isinstance(block, Mapping):
                out.append((where, dict(block)))
            else:
                self.errors.add(where, "langchain.type", f"expected a content block, got {json_type(block)}")
        return out

    def content(self, message: lc.BaseMessage, path: str, role: str) -> list[Content]:
        if isinstance(message.content, str):
            if not message.content:
                return []
            text = self.text({"type": "text", "text": message.content}, _at(path, "content"))
            return [text] if text is not None else []
        out: list[Content] = []
        for where, block in self.content_blocks(message, path):
            kind = block.get("type")
            converted: Content | None
            if kind == "text":
                converted = self.text(block, where)
            elif role in ("user", "tool") and kind in ("image", "audio", "file", "text-plain"):
                converted = self.media(block, where)
            else:
                converted = self.other(block, where, role)
            if converted is not None:
                out.append(converted)
        return out

    def other(self, block: dict[str, Any], path: str, role: str, provider: str = "") -> Content | None:
        """A block agentmsg has no kind for in this role: passed through, or a recorded problem.

        ``content_blocks`` wraps every block LangChain does not know as ``non_standard``; the block
        kept is the one inside. It is the assistant's provider's (``model_provider``) when it has one.
        """
        kind = block.get("type")
        value = block.get("value")
        payload = value if kind == "non_standard" and isinstance(value, Mapping) else block
        if self.pass_through and role in ("user", "assistant"):
            with self.errors.building(path):
                return ProviderContent.from_block(provider if provider and payload is value else PROVIDER, payload)
            return None
        if kind in KNOWN_BLOCK_TYPES and kind != "non_standard":
            self.errors.add(path, "langchain.unsupported", f"an agentmsg {role} message cannot carry {kind!r} blocks")
            return None
        hint = " (pass_through_unknown=True, the default, keeps it)" if role in ("user", "assistant") else ""
        self.errors.add(path, "langchain.unknown_type", f"unknown block type {payload.get('type')!r}{hint}")
        return None

    def extras(self, block: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        extras = block.get("extras")
        if extras is None:
            return {}
        if not isinstance(extras, Mapping):
            self.errors.add(_at(path, "extras"), "langchain.type", f"expected an object, got {json_type(extras)}")
            return {}
        return extras

    def string(self, mapping: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str | None:
        value = mapping.get(key)
        if value is None:
            if required:
                self.errors.add(_at(path, key), "langchain.required", f"{key} is required")
            return None
        if not isinstance(value, str):
            self.errors.add(_at(path, key), "langchain.type", f"expected a string, got {json_type(value)}")
            return None
        return value

    def text(self, block: Mapping[str, Any], path: str) -> Content | None:
        before = len(self.errors.found)
        text = self.string(block, "text", path, required=True)
        self.string(self.extras(block, path), "signature", _at(path, "extras"))
        if text is None or len(self.errors.found) > before:
            return None
        with self.errors.building(path):
            return _text_from_lc(block)
        return None

    def hosted(self, block: Mapping[str, Any], path: str) -> Content | None:
        """A ``server_tool_call`` / ``server_tool_call_chunk`` / ``server_tool_result`` block."""
        before = len(self.errors.found)
        if block["type"] == "server_tool_result":
            self.string(block, "tool_call_id", path, required=True)
        else:
            self.string(block, "id", path)
            self.string(block, "name", path)
            args = block.get("args")
            if args is not None and not isinstance(args, (str, Mapping)):
                self.errors.add(_at(path, "args"), "langchain.type", f"expected an object, got {json_type(args)}")
        self.string(self.extras(block, path), "signature", _at(path, "extras"))
        if len(self.errors.found) > before:
            return None
        with self.errors.building(path):
            return _hosted_from_lc(block)
        return None

    def kept_blocks(self, stash: _Stash) -> dict[int, Content]:
        """The stashed blocks (``blocks``: ``[{at, proto}]``, binary ``Content`` in base64) by content position."""
        entries = stash.get("blocks", list, "a list") or []
        out: dict[int, Content] = {}
        for k, entry in enumerate(entries):
            where = stash.where(f"blocks[{k}]")
            at = entry.get("at") if isinstance(entry, Mapping) else None
            encoded = entry.get("proto") if isinstance(entry, Mapping) else None
            if isinstance(at, bool) or not isinstance(at, int) or not isinstance(encoded, str):
                self.errors.add(where, "langchain.metadata", "expected {at: integer, proto: base64 string}")
                continue
            where = _at(where, "proto")
            try:
                block = ContentBase.from_bytes(_media.decode_base64(encoded, "stashed block"), validate=True)
            except (MediaError, DecodeError) as exc:
                self.errors.add(where, "langchain.metadata", str(exc))
                continue
            except ValidationError as exc:
                for violation in exc.violations:
                    self.errors.add(
                        _at(where, violation.field) if violation.field else where, violation.rule_id, violation.message
                    )
                continue
            if isinstance(block, (TextContent, HostedToolCallContent, HostedToolResultContent)):
                out[at] = block
            else:
                self.errors.add(where, "langchain.metadata", f"a {block.type or 'unknown'} block is never stashed")
        return out

    def media(self, block: Mapping[str, Any], path: str) -> Content | None:
        kind = block["type"]
        extras = self.extras(block, path)
        keys = ("base64", "url", "file_id", "text") if kind == "text-plain" else ("base64", "url", "file_id")
        sources = [key for key in keys if block.get(key) is not None]
        if len(sources) != 1:
            found = ", ".join(sources) or "none"
            self.errors.add(path, "langchain.source", f"expected exactly one of {', '.join(keys)}; found {found}")
            return None
        source = sources[0]
        value = self.string(block, source, path)
        mime = self.string(block, "mime_type", path) or ""
        filename = self.string(extras, "filename", _at(path, "extras")) or self.string(block, "filename", path) or ""
        title = self.string(block, "title", path) or self.string(extras, "title", _at(path, "extras")) or ""
        detail = self.string(extras, "detail", _at(path, "extras")) if kind == "image" else None
        if detail is not None and detail not in {d.value for d in ImageDetail}:
            allowed = ", ".join(d.value for d in ImageDetail)
            self.errors.add(_at(path, "extras.detail"), "langchain.enum", f"{detail!r} is not one of: {allowed}")
            return None
        if value is None:
            return None
        if kind == "text-plain":
            kind, mime = "file", "text/plain"
        data: bytes | None = None
        if source == "base64":
            try:
                data = _media.decode_base64(value, kind)
            except MediaError as exc:
                self.errors.add(_at(path, "base64"), "langchain.base64", str(exc))
                return None
        elif source == "text":
            data = value.encode("utf-8", "surrogatepass")
        inline: bytes | str | None = data if data is not None else (value if value[:5].lower() == "data:" else None)
        with self.errors.building(path):
            if kind == "image":
                if inline is not None:
                    return ImageContent(inline, media_type=mime or None, detail=detail)
                image = content_pb2.ImageContent(media_type=mime, detail=detail_to_pb(detail))
                setattr(image, source, value)
                return _checked(content_pb2.Content(image=image))
            if kind == "audio":
                if inline is not None:
                    return AudioContent(inline, media_type=mime or None)
                audio = content_pb2.AudioContent(media_type=mime)
                setattr(audio, source, value)
                return _checked(content_pb2.Content(audio=audio))
            if inline is not None:
                return DocumentContent(inline, media_type=mime or None, filename=filename, title=title)
            document = content_pb2.DocumentContent(media_type=mime, filename=filename, title=title)
            setattr(document, source, value)
            return _checked(content_pb2.Content(document=document))
        return None

    # --- tool results

    def tool_result(
        self, message: lc.ToolMessage, path: str, stash: _Stash
    ) -> tuple[ToolResultContent | None, int | None]:
        blocks = self.content(message, path, "tool")
        section = stash.section("result")
        index = stash.get("index", int, "an integer", section)
        terminate = stash.get("terminate", bool, "a boolean", section)
        terminate_message = stash.get("terminate_message", str, "a string", section)
        metadata: Mapping[str, Any] | None = None
        artifact = message.artifact
        if artifact is not None and self.artifacts == "metadata":
            if isinstance(artifact, Mapping):
                metadata = artifact
            else:
                self.errors.add(
                    _at(path, "artifact"),
                    "langchain.artifact",
                    f"a {type(artifact).__name__} artifact has no agentmsg form (tool-result metadata is a JSON "
                    'object); pass artifacts="ignore" to leave artifacts out',
                )
        call_id = message.tool_call_id if isinstance(message.tool_call_id, str) else ""
        name = message.name if isinstance(message.name, str) else ""
        with self.errors.building(path):
            result = ToolResultContent(
                restore_id(call_id, self.id_map),
                blocks,  # type: ignore[arg-type]
                is_error=message.status == "error",
                name=name,
                terminate=bool(terminate),
                terminate_message=terminate_message or "",
            )
        with self.errors.building(_at(path, "artifact")):
            if metadata is not None:
                result = ToolResultContent(
                    result.id,
                    result.blocks,  # type: ignore[arg-type]
                    is_error=result.is_error,
                    name=result.name,
                    terminate=result.terminate,
                    terminate_message=result.terminate_message,
                    metadata=metadata,
                )
            return result, index
        return None, None

    # --- assistant

    def assistant(
        self, message: lc.BaseMessage, path: str, index: int, stash: _Stash, common: dict[str, Any]
    ) -> _Piece:
        metadata = message.response_metadata if isinstance(message.response_metadata, Mapping) else {}
        model_provider = metadata.get("model_provider")
        model_provider = model_provider if isinstance(model_provider, str) else ""
        provider, api = self.provenance_names(model_provider, stash)
        calls = self.calls(message, path)
        kwargs = message.additional_kwargs if isinstance(message.additional_kwargs, Mapping) else {}
        signatures = kwargs.get(GEMINI_SIGNATURES)
        if isinstance(signatures, Mapping):
            for call in calls:
                signature = signatures.get(call.id) if isinstance(call.id, str) else None
                if isinstance(signature, str):
                    call.signature = signature
        call_stash: list[Any] = stash.get("tool_calls", list, "a list") or []
        kept = self.kept_blocks(stash)
        blocks: list[Content] = []
        content = self.content_blocks(message, path) if message.content else []
        for position, (where, block) in enumerate(content):
            kind = block.get("type")
            value = block.get("value")
            converted: Content | None
            stashed = kept.get(position)
            if stashed is not None and kind in ("text", *_HOSTED_TYPES) and _same_standard(stashed, block):
                # The stash holds what the standard block has no field for, and agrees with it.
                converted = self.with_details(stashed, block, where) if kind == "text" else stashed
            elif kind in ("tool_call", "invalid_tool_call", "tool_call_chunk"):
                converted = self.tool_call(self.match(calls, block, where), call_stash, stash, len(_calls_in(blocks)))
            elif kind in _HOSTED_TYPES:
                converted = self.hosted(block, where)
            elif kind == "text":
                converted = self.text(block, where)
            elif kind == "reasoning":
                converted = self.reasoning(block, where)
            elif kind == "non_standard" and isinstance(value, Mapping) and value.get("type") == "redacted_thinking":
                converted = self.redacted(value, _at(where, "value"))
            else:
                converted = self.other(block, where, "assistant", provider)
            if converted is not None:
                blocks.append(converted)
        for call in calls:
            if not call.used:
                converted = self.tool_call(call, call_stash, stash, len(_calls_in(blocks)))
                if converted is not None:
                    blocks.append(converted)
        legacy = kwargs.get("function_call")
        if isinstance(legacy, Mapping) and not calls:
            where = _at(path, "additional_kwargs.function_call")
            name = self.string(legacy, "name", where, required=True)
            arguments = self.string(legacy, "arguments", where) or ""
            if name is not None:
                call_id = f"function_call_{index}"
                self.legacy_calls[name] = call_id
                with self.errors.building(where):
                    blocks.append(ToolCallContent(call_id, name, arguments=arguments, index=len(_calls_in(blocks))))
        self.attach_logprobs(blocks, metadata, path)
        fields = self.envelope(message, path, metadata, (provider, api), stash)
        if not blocks and not fields["error"] and fields["stop_reason"] not in _EMPTY_OK:
            blocks.append(TextContent(""))
        return _Piece(path, "assistant", blocks, assistant=fields, **common)

    def with_details(self, details: Content, block: Mapping[str, Any], path: str) -> Content | None:
        """The text block read, with the stashed citations and logprobs."""
        text = self.text(block, path)
        if not isinstance(text, TextContent) or not isinstance(details, TextContent):
            return text
        pb = content_pb2.Content()
        pb.CopyFrom(text.pb)
        pb.text.ClearField("citations")
        pb.text.citations.extend(details.pb.text.citations)
        pb.text.logprobs.extend(details.pb.text.logprobs)
        return content_from_proto(pb)

    def attach_logprobs(self, blocks: list[Content], metadata: Mapping[str, Any], path: str) -> None:
        """``response_metadata["logprobs"]["content"]`` (ChatOpenAI's) on the message's one text block."""
        raw = metadata.get("logprobs")
        tokens = raw.get("content") if isinstance(raw, Mapping) else None
        texts = [k for k, block in enumerate(blocks) if isinstance(block, TextContent)]
        if not isinstance(tokens, list) or len(texts) != 1:
            return
        text = blocks[texts[0]]
        assert isinstance(text, TextContent)
        if text.logprobs:
            return  # the stash gave them
        with self.errors.building(_at(path, "response_metadata.logprobs.content")):
            logprobs = [_logprob_from_lc(item) for item in tokens]
            blocks[texts[0]] = TextContent(
                text.content, signature=text.signature, citations=text.citations, logprobs=logprobs
            )

    def calls(self, message: lc.BaseMessage, path: str) -> list[_Call]:
        calls: list[_Call] = []
        if isinstance(message, lc.AIMessageChunk) and message.tool_call_chunks:
            for k, chunk in enumerate(message.tool_call_chunks):
                where = _at(path, f"tool_call_chunks[{k}]")
                calls.append(_Call(where, chunk.get("id"), chunk.get("name"), chunk.get("args") or "", kind=""))
            return calls
        if not isinstance(message, lc.AIMessage):
            return calls
        for k, call in enumerate(message.tool_calls):
            calls.append(_Call(_at(path, f"tool_calls[{k}]"), call.get("id"), call.get("name"), call.get("args")))
        for k, bad in enumerate(message.invalid_tool_calls):
            where = _at(path, f"invalid_tool_calls[{k}]")
            calls.append(_Call(where, bad.get("id"), bad.get("name"), bad.get("args") or "", "invalid_tool_call"))
        return calls

    def match(self, calls: list[_Call], block: Mapping[str, Any], path: str) -> _Call:
        """The call a tool-call content block stands for (same id), else the block itself.

        The ``tool_calls`` / ``invalid_tool_calls`` / ``tool_call_chunks`` entry wins over the block,
        as in LangChain's integrations; the block gives the position and the signature.
        """
        signature = self.string(self.extras(block, path), "signature", _at(path, "extras")) or ""
        block_id = block.get("id")
        kind = block.get("type")
        for call in calls:
            pairs = not call.kind or kind in ("tool_call_chunk", call.kind)
            if not call.used and block_id is not None and call.id == block_id and pairs:
                call.used = True
                call.signature = signature or call.signature
                return call
        args = block.get("args")
        if block.get("type") != "tool_call":
            args = args or ""
        return _Call(path, block_id, block.get("name"), args, signature=signature, used=True)

    def tool_call(self, call: _Call, call_stash: list[Any], stash: _Stash, position: int) -> ToolCallContent | None:
        ok = True
        if not isinstance(call.id, str) or not call.id:
            self.errors.add(_at(call.path, "id"), "langchain.required", "a tool call needs an id")
            ok = False
        name = call.name if call.name is not None else ""
        if not isinstance(name, str):
            self.errors.add(_at(call.path, "name"), "langchain.type", f"expected a string, got {json_type(name)}")
            ok = False
        # The stash entry of the call at this position, when it is still about this call.
        entry: tuple[str, Mapping[str, Any]] = ("", {})
        raw = call_stash[position] if position < len(call_stash) else None
        if raw is not None and not isinstance(raw, Mapping):
            self.errors.add(stash.where(f"tool_calls[{position}]"), "langchain.metadata", "expected an object or null")
        elif raw is not None and raw.get("id") == call.id:
            entry = (f"tool_calls[{position}]", raw)
        arguments = ""
        if isinstance(call.args, Mapping):
            text = stash.get("arguments", str, "a string", entry)
            if text is not None and parse_json_object(text)[0] == call.args:
                arguments = text
            else:
                try:
                    arguments = dump_arguments(call.args)
                except ValidationError as exc:
                    self.errors.add(_at(call.path, "args"), "langchain.json", exc.violations[0].message)
                    ok = False
        elif isinstance(call.args, str):
            arguments = call.args
        else:
            self.errors.add(
                _at(call.path, "args"), "langchain.type", f"expected an object or text, got {json_type(call.args)}"
            )
            ok = False
        kind = stash.get("kind", str, "a tool kind", entry)
        index = stash.get("index", int, "an integer", entry)
        server_name = stash.get("server_name", str, "a string", entry) or ""
        metadata = stash.get("metadata", Mapping, "an object", entry)
        if not ok:
            return None
        with self.errors.building(call.path):
            return ToolCallContent(
                restore_id(call.id, self.id_map),
                name,
                arguments=arguments,
                kind=kind,
                index=index if index is not None else position,
                signature=call.signature,
                server_name=server_name,
                metadata=metadata,
            )
        return None

    def reasoning(self, block: Mapping[str, Any], path: str) -> Content | None:
        text = self.string(block, "reasoning", path) or ""
        signature = self.string(self.extras(block, path), "signature", _at(path, "extras")) or ""
        with self.errors.building(path):
            return ThinkingContent(text, signature)
        return None

    def redacted(self, value: Mapping[str, Any], path: str) -> Content | None:
        data = self.string(value, "data", path, required=True)
        if data is None:
            return None
        with self.errors.building(path):
            return RedactedThinkingContent(data)
        return None

    def provenance_names(self, model_provider: str, stash: _Stash) -> tuple[str, str | None]:
        """Our (provider, api) for LangChain's ``model_provider``; api None when nothing names it."""
        api = stash.get("api", str, "a string")
        known = _FROM_LC_PROVIDER.get(model_provider)
        if api is not None:
            return (known[0] if known is not None and known[1] == api else model_provider), api
        if model_provider in self.api_by_provider:
            return model_provider, self.api_by_provider[model_provider]
        if known is not None:
            return known
        return model_provider, None

    def envelope(
        self,
        message: lc.BaseMessage,
        path: str,
        metadata: Mapping[str, Any],
        names: tuple[str, str | None],
        stash: _Stash,
    ) -> dict[str, Any]:
        """Stop reason, error, provenance and usage of an assistant message."""
        raw = next((metadata[k] for k in ("finish_reason", "stop_reason") if isinstance(metadata.get(k), str)), "")
        stop = _STOP_FROM_RAW.get(raw)
        stashed = stash.get("stop_reason", str, "a stop reason")
        if stashed == "":
            stop = None
        elif stashed is not None:
            if stashed in {reason.value for reason in StopReason}:
                stop = StopReason(stashed)
            else:
                self.errors.add(stash.where("stop_reason"), "langchain.metadata", f"unknown stop reason {stashed!r}")
        stop_sequence = metadata.get("stop_sequence")
        fields: dict[str, Any] = {
            "stop_reason": stop,
            "stop_reason_raw": raw,
            "stop_sequence": stop_sequence if isinstance(stop_sequence, str) else "",
            "error": stash.get("error", str, "a string") or "",
        }
        extra = stash.get("provider_extra", Mapping, "an object")
        if extra is not None:
            with self.errors.building(stash.where("provider_extra")):
                fields["provider_extra"] = ProviderContent(
                    str(extra.get("provider", "")), str(extra.get("type", "")), str(extra.get("json", ""))
                )
        model = next((metadata[k] for k in ("model_name", "model") if isinstance(metadata.get(k), str)), "")
        response_id: str = metadata["id"] if isinstance(metadata.get("id"), str) else ""
        provider, api = names
        if provider or model or response_id or api is not None:
            fields["provenance"] = Provenance(provider, api or "", model, response_id)
        usage = getattr(message, "usage_metadata", None)
        if isinstance(usage, Mapping):
            fields["usage"] = self.usage(usage, _at(path, "usage_metadata"), stash)
        return fields

    def usage(self, data: Mapping[str, Any], path: str, stash: _Stash) -> Usage | None:
        counts_ok = True
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.errors.add(_at(path, key), "langchain.usage", f"expected a token count, got {json_type(value)}")
                counts_ok = False
        if not counts_ok:
            return None
        stashed = stash.get("usage", Mapping, "an object")
        if stashed is not None:
            try:
                usage = Usage.from_json(stashed, validate=True)
            except (ValueError, TypeError) as exc:
                self.errors.add(stash.where("usage"), "langchain.metadata", f"not an agentmsg Usage: {exc}")
            else:
                if _usage_to_lc(usage) == _usage_projection(data):
                    return usage
        with self.errors.building(path):
            read = _usage_from_lc_exact(data)
            if read is None:
                self.errors.add(
                    _at(path, "input_tokens"),
                    "langchain.usage",
                    "input_tokens is smaller than cache_read + cache_creation (LangChain counts them in input_tokens)",
                )
            return read
        return None


def _calls_in(blocks: list[Content]) -> list[ToolCallContent]:
    return [block for block in blocks if isinstance(block, ToolCallContent)]


def _checked(pb: content_pb2.Content) -> Content:
    _validation.check(pb)
    return content_from_proto(pb)
