"""The "seed-2" form: Adaline gateway messages (``@adaline/types``), both directions.

The format is the zod schema in ``adaline/gateway`` under
``packages/types/src/message/`` (``message.ts``, ``roles.ts``, ``content/*.ts``;
read at commit 9a9e420, ``@adaline/types`` 1.15.0). The tests run the output
through the published npm packages (``@adaline/types`` 1.11.0, the latest on
npm, and the ``@adaline/openai`` 1.16.0 / ``@adaline/anthropic`` 1.11.0
request transforms). A message is
``{"role", "content": [...], "metadata"}``; ``role`` is ``system``, ``user``,
``assistant`` or ``tool``; ``content`` is a list (the schema sets no minimum)
of blocks told apart by ``modality``.

Mapping (agentmsg <-> format):

=================================  ==============================================================
agentmsg                           format
=================================  ==============================================================
SystemMessage / UserMessage /      role ``system`` / ``user`` / ``assistant`` / ``tool``; a
AssistantMessage / ToolMessage     ``user`` message may carry ``tool-response`` (our user
                                   message may carry tool results), a ``tool`` message only that
TextContent                        ``text`` {value}
ImageContent (data)                ``image`` {detail, value: {type: "base64", base64, mediaType}}
ImageContent (url)                 ``image`` {detail, value: {type: "url", url}}
DocumentContent (application/pdf)  ``pdf`` {value: base64 | url, file: {name, id, size?}}
ThinkingContent                    ``reasoning`` {value: {type: "thinking", thinking, signature}}
RedactedThinkingContent            ``reasoning`` {value: {type: "redacted", data}}
ToolCallContent                    ``tool-call`` {index, id, name, arguments, serverName?,
                                   thoughtSignature?}; arguments are kept verbatim
ToolResultContent (text only)      ``tool-response`` {index, id, name, data}; data is the
                                   result's text blocks joined
ToolMessage of several results     one ``tool`` message a ``tool-response`` (:func:`to_adaline`)
HostedToolCallContent,             no modality: the message's ``metadata.agentmsg.blocks``
HostedToolResultContent,           (seed-1 dicts with their position)
ToolApprovalContent,
ProviderContent
=================================  ==============================================================

Choices where the two models differ:

- Image ``detail`` is required by the format; an image whose detail is not
  stated (``ImageDetail`` None) is sent as ``"auto"``, the value that leaves
  the choice to the provider.
- Image ``mediaType`` is ``png``, ``jpeg``, ``webp`` or ``gif``; our
  ``image/png``... map to those (``image/jpg`` is read as jpeg).
- Inline bytes are written to the ``base64`` field as a base64 ``data:`` URL
  (``data:image/png;base64,...``, ``data:application/pdf;base64,...``). The
  gateway's OpenAI, OpenRouter and xAI providers pass that field on as an image
  URL unchanged, and its Anthropic and Google providers strip such a prefix,
  so the data URL is the form every provider of the gateway accepts. Reading,
  both a bare base64 string and a base64 data URL are accepted; base64 must be
  valid (standard alphabet, padded; ASCII whitespace is ignored).
- ``pdf.file`` is required: ``name`` is our ``filename`` (``""`` when we have
  none); ``id`` is the SHA-256 (hex) of the PDF bytes, or of the URL text for a
  PDF by URL (the gateway's Google provider names uploaded files by this id, so
  different PDFs must not share one); ``size`` is the byte count of inline PDFs.
  Reading, ``file.id`` and ``file.size`` are dropped: agentmsg has no field for
  them (our ``file_id`` is a document *source*, exclusive with the bytes or URL
  the format requires).
- A ``tool-response`` needs a non-empty ``name``; a result without one takes
  the name of the tool call with its id earlier in the list given to
  :func:`to_adaline` (:func:`message_to_adaline` has no earlier messages and
  refuses it).
- A tool message of several results is written by :func:`to_adaline` as one
  ``tool`` message a result: the gateway's OpenAI provider refuses a ``tool``
  message of more than one item ("must have exactly one content item"), and
  its Anthropic provider takes either. The messages after the first carry
  ``sameMessage`` in their stash and are read back as one message (a
  ``sameMessage`` after anything but a tool message is ignored).
  :func:`message_to_adaline`, which returns one message, keeps them together.
- The format has no hosted tool calls or results (its ``search-result``
  modality is a response-only Google grounding shape that the gateway's
  providers strip from requests), no citations, token logprobs, stop sequence
  or usage; these travel in the stash (below).
- A URL image's media type is not in the format; reading, it is guessed from
  the URL's path as :meth:`agentmsg.ImageContent.from_url` does, and URL
  sources are kept as URLs (a ``data:`` URL in a ``url`` value stays a URL).

The ``metadata`` slot. Every content schema and the message schema have a
``metadata`` field whose schema is a type parameter. agentmsg information the
format has no field for is written there under the single key ``"agentmsg"``,
so that ``from_adaline(to_adaline(messages)) == messages`` for everything the
format can carry:

- message: ``id``, ``timestamp`` (RFC 3339, as ProtoJSON writes it), ``name``,
  ``blocks`` (the blocks with no modality: ``[{"at": position in the
  message's contents, "proto": base64 of the block's binary
  ``agentmsg.v1.Content``}]``), ``sameMessage`` (this tool message
  continues the one before); for assistant messages ``usage`` and
  ``provenance`` (ProtoJSON, so token counts are strings, as ProtoJSON writes
  int64; usage holds the cache writes by TTL and the hosted-tool request
  counts), ``stopReason`` (our :class:`~agentmsg.StopReason` value),
  ``stopReasonRaw``, ``stopSequence``, ``error`` and ``providerExtra`` (the
  provider response's keys no field holds: ``{"provider", "type", "json"}``);
- text: ``signature``, ``details`` (the citations and logprobs: base64 of a
  binary ``agentmsg.v1.TextContent`` holding only them; binary rather than
  ProtoJSON because the JSON form of these bulky values cost more than the
  whole rest of the conversion, see ``make bench``); image: ``mediaType``
  (when the exact media type is not the one the format's value gives back),
  ``detailUnset`` (when "auto" stood for an unstated detail) and
  ``sameBlock`` (the image belongs to the block of
  the image item before it: an :class:`~agentmsg.ImageContent` of several
  images is written as one ``image`` item per image, and read back as one
  block); pdf: ``mediaType`` (likewise) and ``title``;
- tool-call: ``kind`` (our :class:`~agentmsg.ToolKind` value), ``metadata`` and
  ``requiresApproval`` (written when true);
- tool-response: ``isError``, ``metadata``, ``terminate``,
  ``terminateMessage``, ``nameFromCall`` (the name was filled in from the
  call) and ``textBlocks`` (the lengths, in code points, and signatures of the
  text blocks when ``data`` alone would not give them back).

A key is written only when it has something to say; a stash that contradicts
the format's own field (an image ``mediaType`` of another format, ``detailUnset``
on a detail other than "auto") is ignored. Everything else in ``metadata`` is
foreign data and is dropped on reading, as are the foreign fields without an
agentmsg counterpart: ``tool-response.apiResponse``, ``pdf.file.id`` and
``pdf.file.size``. A message read without a stash gets a new UUID4 id and the
current time, as the message constructors give.

Caveat: the gateway's own handlers and providers parse messages with
``Message()``, whose default metadata schemas are ``z.undefined()``; such a
parser rejects any ``metadata`` value. Pass ``include_metadata=False`` to write
payloads for that parser: the result then carries no ``metadata`` at all, and
everything listed above is lost on the way back. Each such loss is reported
(a :class:`~agentmsg.providers._common.Loss` in ``report=``, a
``ConversionError`` with ``strict=True``, else one ``ConversionWarning``),
all but the message ids and times, which the reader makes anew as the message
constructors do. (``Message()`` also passes its
content metadata schemas to ``Content()`` in another order than ``Content()``
declares them, so a caller giving different schemas per content type gets the
pdf, tool-call, tool-response and reasoning ones swapped around.)

What the format cannot hold (writing raises :class:`~agentmsg.ValidationError`,
rule ``adaline.unsupported``, the field being the path in the agentmsg input,
e.g. ``[2].contents[0]``): audio; documents other than PDF; images or PDFs
held as a provider file id; images whose media type is not PNG, JPEG, WEBP or
GIF; tool results carrying anything but text; content of a kind unknown to this
version (``UnknownContent``); messages of role custom, branch_summary, compaction_summary or an
unknown role.

What agentmsg cannot hold (reading raises, rule ``adaline.unsupported``): the
``error`` and ``search-result`` modalities; role and modality pairs our roles
refuse (a system message with anything but text, a user message with
tool-call or reasoning, an assistant message with image, pdf or tool-response
(the gateway's Anthropic provider reads the latter as an MCP tool result), a
tool message with anything but tool-response); an ``index`` above 2**31 - 1;
and (rule ``adaline.min_items``) an empty ``content`` list, which the schema
allows but agentmsg refuses except for an assistant message that records an
error or a length, content-filter, abort or error stop reason.

Reading checks every constraint of the schema and reports every violation at
once, in one :class:`~agentmsg.ValidationError` whose violation fields are JSON
paths into the payload (``[0].content[1].value.mediaType``) and whose rule ids
start with ``adaline.``: ``type`` (wrong JSON type), ``required`` (missing
field), ``modality`` (unknown modality), ``enum`` (a value outside an
enumeration: role, detail, mediaType, value type), ``min_len`` (empty id or
name), ``int`` / ``gte`` (index not a non-negative integer), ``base64``,
``min_items``, ``metadata`` (a malformed ``agentmsg`` stash), ``json`` (text
that is not JSON), ``unsupported``, ``media`` (bytes the media checks refuse),
``invalid`` (a value agentmsg cannot store, such as a lone surrogate), and
``adaline.<rule>`` for a rule of the agentmsg contract (for example
``adaline.string.uri``). Unknown keys are ignored, as zod objects do; ``null``
for an optional field is refused, as zod's ``.optional()`` does. Nothing is
returned unless the whole payload converts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC
from functools import partial
from typing import Any, Final, TypeVar

from google.protobuf import timestamp_pb2
from google.protobuf.message import DecodeError as PbDecodeError

from agentmsg import _media
from agentmsg.content import (
    AudioContent,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolKind,
    ToolResultContent,
    detail_to_pb,
)
from agentmsg.errors import DecodeError, MediaError, ValidationError, Violation
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Provenance,
    StopReason,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from agentmsg.providers._common import ConversionReport, Reporter, json_type, unencodable
from agentmsg.usage import Usage
from agentmsg.v1 import content_pb2, message_pb2

__all__ = [
    "from_adaline",
    "from_adaline_json",
    "message_from_adaline",
    "message_to_adaline",
    "to_adaline",
    "to_adaline_json",
]

T = TypeVar("T")

STASH_KEY: Final = "agentmsg"
"""The key under the format's ``metadata`` that holds agentmsg-only information."""

ROLES: Final = ("system", "user", "assistant", "tool")
MODALITIES: Final = ("text", "image", "pdf", "tool-call", "tool-response", "reasoning", "error", "search-result")
IMAGE_DETAILS: Final = ("low", "medium", "high", "auto")
IMAGE_MEDIA_TYPES: Final = ("png", "jpeg", "webp", "gif")

# Which modalities each agentmsg role can hold (the format itself allows any modality in any role).
_ROLE_MODALITIES: Final[Mapping[str, frozenset[str]]] = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image", "pdf", "tool-response"}),
    "assistant": frozenset({"text", "reasoning", "tool-call"}),
    "tool": frozenset({"tool-response"}),
}
_PDF: Final = "application/pdf"
_IMAGE_ALIASES: Final[Mapping[str, str]] = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/webp": "webp",
    "image/gif": "gif",
}
_INT32_MAX: Final = 2**31 - 1
_DATA_URL: Final = re.compile(r"^data:(?P<mime>[^,;]*)(?P<params>(?:;[^,;]*)*),(?P<data>.*)$", re.DOTALL)
_B64_SPACE: Final = re.compile(r"[\t\n\r ]+")
_UNSUPPORTED: Final = "unsupported"


# --------------------------------------------------------------------------- shared helpers


def _at(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top)."""
    return f"{path}.{key}" if path else key


def _base_media_type(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def _image_format(media_type: str) -> str | None:
    """The format's ``mediaType`` for one of ours (``image/png`` -> ``png``), or None."""
    return _IMAGE_ALIASES.get(_base_media_type(media_type))


def _guess_image_type(url: str) -> str:
    """The media type a URL image gets on reading: the guess ``ImageContent.from_url`` makes."""
    return _media.guess_from_path(url, "image/")


_TARGET: Final = "the Adaline format"
# Stash keys whose loss is not reported: the reader gives a message a new id and time, as the constructors do.
_IDENTITY_KEYS: Final = frozenset({"id", "timestamp"})


class _Issues:
    """The violations found so far in one conversion, and (writing) where its losses go."""

    __slots__ = ("found", "reporter")

    def __init__(self, reporter: Reporter | None = None) -> None:
        self.found: list[Violation] = []
        self.reporter = reporter

    def lose(self, path: str, what: str, reason: str) -> None:
        """Record a loss (writing with ``include_metadata=False``)."""
        if self.reporter is not None:
            self.reporter.loss(path, what, reason)

    def lose_stash(self, path: str, stash: Mapping[str, Any]) -> None:
        """Report the stash keys ``include_metadata=False`` leaves out (all but the message's id and time)."""
        keys = [key for key in stash if key not in _IDENTITY_KEYS]
        if keys:
            self.lose(
                path,
                f"agentmsg data the format has no field for ({', '.join(keys)})",
                "it is kept in metadata.agentmsg, which include_metadata=False does not write",
            )

    def add(self, field: str, rule: str, message: str) -> None:
        self.found.append(Violation(field, f"adaline.{rule}", message))

    def raise_if_any(self, what: str) -> None:
        if self.found:
            raise ValidationError(self.found, what)


# --------------------------------------------------------------------------- agentmsg -> format


def message_to_adaline(
    message: BaseMessage,
    *,
    include_metadata: bool = True,
    report: ConversionReport | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """One agentmsg message as one format ``Message`` (``{"role", "content", "metadata"}``).

    Raises :class:`~agentmsg.ValidationError` (rule ``adaline.unsupported``,
    fields relative to the message: ``contents[1]``) when the message holds
    something the format cannot. A tool result without a name is refused here:
    use :func:`to_adaline`, which finds the name on the earlier tool call.
    A tool message of several results stays one message here; :func:`to_adaline`
    writes the one-result-a-message form the gateway's providers take.
    ``report`` / ``strict``: as for :func:`to_adaline`.
    """
    reporter = Reporter(_TARGET, report, strict=strict)
    issues = _Issues(reporter)
    data = _export_message(message, "", issues, {}, include_metadata)
    issues.raise_if_any("message for the Adaline format")
    assert data is not None
    reporter.finish()
    return data


def to_adaline(
    messages: Iterable[BaseMessage],
    *,
    include_metadata: bool = True,
    report: ConversionReport | None = None,
    strict: bool = False,
) -> list[dict[str, Any]]:
    """Messages as a list of format ``Message`` dicts (a JSON-ready payload).

    A tool message of several results is written as one ``tool`` message a
    result, the form the gateway's OpenAI and Anthropic providers take; with
    metadata, the messages after the first say ``sameMessage`` and are read
    back as one message.

    With ``include_metadata=False`` no ``metadata`` is written (the form the
    gateway's stock ``Message()`` schema accepts); the agentmsg-only
    information is then lost, and each such loss (but the message ids and
    times) is reported: in ``report``, as a
    :class:`~agentmsg.providers.ConversionError` with ``strict=True``, or
    else as one :class:`~agentmsg.providers.ConversionWarning`. Every
    unsupported item is reported at once, with its path in the input
    (``[2].contents[0]``).
    """
    reporter = Reporter(_TARGET, report, strict=strict)
    issues = _Issues(reporter)
    if isinstance(messages, (BaseMessage, str, bytes, Mapping)) or not isinstance(messages, Iterable):
        issues.add("", "type", f"expected an iterable of messages, got {type(messages).__name__}")
        issues.raise_if_any("messages for the Adaline format")
    call_names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        data = _export_message(message, f"[{i}]", issues, call_names, include_metadata)
        if data is None:
            continue
        if isinstance(message, ToolMessage) and len(data["content"]) > 1:
            out.extend(_split_tool_message(data, f"[{i}]", issues, include_metadata))
        else:
            out.append(data)
    issues.raise_if_any("messages for the Adaline format")
    reporter.finish()
    return out


def _split_tool_message(
    data: dict[str, Any], path: str, issues: _Issues, include_metadata: bool
) -> list[dict[str, Any]]:
    """One ``tool`` message a ``tool-response``: the gateway's providers refuse a tool message of several.

    The first keeps the message's stash; the others say ``sameMessage``.
    """
    items = data["content"]
    first = {**data, "content": items[:1]}
    rest = [{"role": data["role"], "content": [item]} for item in items[1:]]
    if include_metadata:
        for extra in rest:
            extra["metadata"] = {STASH_KEY: {"sameMessage": True}}
    else:
        issues.lose(
            path,
            f"the grouping of {len(items)} tool results in one message",
            f"they are written as {len(items)} tool messages (the gateway's OpenAI and Anthropic providers take "
            "one tool-response a tool message) and, without metadata, read back as as many messages",
        )
    return [first, *rest]


def to_adaline_json(
    messages: Iterable[BaseMessage],
    *,
    include_metadata: bool = True,
    report: ConversionReport | None = None,
    strict: bool = False,
) -> str:
    """Messages as the format's JSON text: a compact array of ``Message`` objects (see :func:`to_adaline`)."""
    return json.dumps(
        to_adaline(messages, include_metadata=include_metadata, report=report, strict=strict),
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )


def _export_message(
    message: Any, path: str, issues: _Issues, call_names: dict[str, str], include_metadata: bool
) -> dict[str, Any] | None:
    """A ``Message``: the role, each content block, and the message-level stash."""
    if not isinstance(message, BaseMessage):
        issues.add(path, "type", f"expected an agentmsg message, got {type(message).__name__}")
        return None
    match message:
        case SystemMessage() | UserMessage() | AssistantMessage() | ToolMessage():
            pass
        case CustomMessage():
            issues.add(
                _at(path, "role"),
                _UNSUPPORTED,
                f"a custom message ({message.custom_type!r}) is an application's session entry; "
                "the format's roles are system, user, assistant and tool",
            )
            return None
        case BranchSummaryMessage() | CompactionSummaryMessage():
            issues.add(
                _at(path, "role"),
                _UNSUPPORTED,
                f"a {message.ROLE} message is a session entry a context builder projects to user text; "
                "the format's roles are system, user, assistant and tool (project it first)",
            )
            return None
        case _:
            issues.add(_at(path, "role"), _UNSUPPORTED, "a message of a role this agentmsg version does not know")
            return None
    assert message.role is not None
    content: list[dict[str, Any]] = []
    # Blocks with no modality in the format (hosted tool calls and results, approvals, provider blocks): seed-1 dicts
    # with their position in the message's contents.
    kept: list[dict[str, Any]] = []
    for j, block in enumerate(message.contents):
        block_path = f"{_at(path, 'contents')}[{j}]"
        if isinstance(block, ImageContent) and block.count > 1:
            # One image an item; the items after the first say they belong to the same block.
            for k, piece in enumerate(block.split()):
                item = _export_image(piece, f"{block_path}.images[{k}]", issues, include_metadata, same_block=k > 0)
                if item is not None:
                    content.append(item)
            continue
        if isinstance(block, (HostedToolCallContent, HostedToolResultContent, ToolApprovalContent, ProviderContent)):
            kept.append({"at": j, "proto": base64.b64encode(block.to_bytes()).decode("ascii")})
            if not include_metadata:
                issues.lose(
                    block_path,
                    f"a {block.type} block",
                    "the format has no modality for it; it is kept in the message's metadata.agentmsg.blocks, "
                    "which include_metadata=False does not write",
                )
            continue
        item = _export_content(block, block_path, issues, call_names, include_metadata)
        if item is not None:
            content.append(item)
    data: dict[str, Any] = {"role": message.role.value, "content": content}
    stash: dict[str, Any] = {"id": message.id, "timestamp": message.pb.timestamp.ToJsonString()}
    if message.name:
        stash["name"] = message.name
    if kept:
        stash["blocks"] = kept
    if isinstance(message, AssistantMessage):
        if message.usage is not None:
            stash["usage"] = message.usage.to_json_dict()
        if message.stop_reason is not None:
            stash["stopReason"] = message.stop_reason.value
        if message.stop_reason_raw:
            stash["stopReasonRaw"] = message.stop_reason_raw
        if message.stop_sequence:
            stash["stopSequence"] = message.stop_sequence
        if message.error:
            stash["error"] = message.error
        if message.provenance is not None:
            stash["provenance"] = message.provenance.to_json_dict()
        extra = message.provider_extra
        if extra is not None:
            stash["providerExtra"] = {"provider": extra.provider, "type": extra.block_type, "json": extra.json}
    if include_metadata:
        data["metadata"] = {STASH_KEY: stash}
    else:
        stash.pop("blocks", None)  # reported block by block above
        issues.lose_stash(path, stash)
    return data


def _with_stash(
    data: dict[str, Any], stash: dict[str, Any], include_metadata: bool, path: str, issues: _Issues
) -> dict[str, Any]:
    """The item with its stash, or (``include_metadata=False``) without it, the stash's keys reported lost."""
    if include_metadata:
        if stash:
            data["metadata"] = {STASH_KEY: stash}
    else:
        issues.lose_stash(path, stash)
    return data


def _export_content(
    block: ContentBase, path: str, issues: _Issues, call_names: dict[str, str], include_metadata: bool
) -> dict[str, Any] | None:
    """One content block as the format's block of the matching modality."""
    stash: dict[str, Any] = {}
    match block:
        case TextContent():
            if block.signature:
                stash["signature"] = block.signature
            if block.citations or block.logprobs:
                stash["details"] = _text_details(block)
            return _with_stash({"modality": "text", "value": block.content}, stash, include_metadata, path, issues)
        case ImageContent():
            return _export_image(block, path, issues, include_metadata)
        case DocumentContent():
            return _export_pdf(block, path, issues, include_metadata)
        case ThinkingContent():
            value = {"type": "thinking", "thinking": block.content, "signature": block.signature}
            return {"modality": "reasoning", "value": value}
        case RedactedThinkingContent():
            return {"modality": "reasoning", "value": {"type": "redacted", "data": block.data}}
        case ToolCallContent():
            call_names.setdefault(block.id, block.name)
            data: dict[str, Any] = {
                "modality": "tool-call",
                "index": block.index,
                "id": block.id,
                "name": block.name,
                "arguments": block.arguments,
            }
            if block.server_name:
                data["serverName"] = block.server_name
            if block.signature:
                data["thoughtSignature"] = block.signature
            if block.kind is not None:
                stash["kind"] = block.kind.value
            if block.metadata:
                stash["metadata"] = block.metadata
            if block.requires_approval:
                stash["requiresApproval"] = True
            return _with_stash(data, stash, include_metadata, path, issues)
        case ToolResultContent():
            return _export_tool_result(block, path, issues, call_names, include_metadata)
        case AudioContent():
            issues.add(
                path,
                _UNSUPPORTED,
                "audio cannot be sent: the format's modalities are text, image, pdf, tool-call, "
                "tool-response, reasoning, error and search-result",
            )
        case _:
            issues.add(path, _UNSUPPORTED, "a content block of a kind this agentmsg version does not know")
    return None


def _text_details(block: TextContent) -> str:
    """The citations and logprobs of a text block: base64 of an ``agentmsg.v1.TextContent`` holding only them.

    Binary protobuf, not ProtoJSON: citations and logprobs are bulky and the
    JSON form costs several times the rest of the conversion (``make bench``).
    """
    details = content_pb2.TextContent()
    details.citations.extend(block.pb.text.citations)
    details.logprobs.extend(block.pb.text.logprobs)
    return base64.b64encode(details.SerializeToString(deterministic=True)).decode("ascii")


def _export_image(
    block: ImageContent, path: str, issues: _Issues, include_metadata: bool, *, same_block: bool = False
) -> dict[str, Any] | None:
    """An ``image`` block: a base64 value (written as a data URL) or a url value."""
    stash: dict[str, Any] = {"sameBlock": True} if same_block else {}
    detail = "auto" if block.detail is None else block.detail.value
    if block.detail is None:
        stash["detailUnset"] = True
    if block.data is not None:
        fmt = _image_format(block.media_type)
        if fmt is None:
            issues.add(
                path,
                _UNSUPPORTED,
                f"an image of media type {block.media_type!r} cannot be sent: the format's base64 images are "
                f"{', '.join(IMAGE_MEDIA_TYPES)}",
            )
            return None
        if block.media_type != f"image/{fmt}":
            stash["mediaType"] = block.media_type
        encoded = base64.b64encode(block.data).decode("ascii")
        value = {"type": "base64", "base64": f"data:image/{fmt};base64,{encoded}", "mediaType": fmt}
    elif block.url is not None:
        if block.media_type != _guess_image_type(block.url):
            stash["mediaType"] = block.media_type
        value = {"type": "url", "url": block.url}
    else:
        issues.add(
            path,
            _UNSUPPORTED,
            "an image held as a provider file id cannot be sent: the format's image value is base64 or a url",
        )
        return None
    return _with_stash({"modality": "image", "detail": detail, "value": value}, stash, include_metadata, path, issues)


def _export_pdf(block: DocumentContent, path: str, issues: _Issues, include_metadata: bool) -> dict[str, Any] | None:
    """A ``pdf`` block (the format's only document modality), with its required ``file``."""
    if _base_media_type(block.media_type) != _PDF:
        shown = repr(block.media_type) if block.media_type else "unknown"
        issues.add(
            path,
            _UNSUPPORTED,
            f"a document of media type {shown} cannot be sent: the format's only document modality is pdf",
        )
        return None
    stash: dict[str, Any] = {}
    if block.media_type != _PDF:
        stash["mediaType"] = block.media_type
    if block.title:
        stash["title"] = block.title
    file: dict[str, Any] = {"name": block.filename}
    if block.data is not None:
        encoded = base64.b64encode(block.data).decode("ascii")
        value = {"type": "base64", "base64": f"data:{_PDF};base64,{encoded}"}
        file["id"] = hashlib.sha256(block.data).hexdigest()
        file["size"] = len(block.data)
    elif block.url is not None:
        value = {"type": "url", "url": block.url}
        file["id"] = hashlib.sha256(block.url.encode("utf-8")).hexdigest()
    else:
        issues.add(
            path,
            _UNSUPPORTED,
            "a PDF held as a provider file id cannot be sent: the format's pdf value is base64 or a url",
        )
        return None
    return _with_stash({"modality": "pdf", "value": value, "file": file}, stash, include_metadata, path, issues)


def _export_tool_result(
    block: ToolResultContent, path: str, issues: _Issues, call_names: Mapping[str, str], include_metadata: bool
) -> dict[str, Any] | None:
    """A ``tool-response`` block: ``data`` is the result's text; other blocks cannot be sent."""
    ok = True
    texts: list[TextContent] = []
    for k, inner in enumerate(block.blocks):
        if isinstance(inner, TextContent):
            texts.append(inner)
        else:
            ok = False
            issues.add(
                f"{_at(path, 'content')}[{k}]",
                _UNSUPPORTED,
                f"a tool result with {inner.type or 'unknown'} content cannot be sent: "
                "the format's tool-response carries text only (data: string)",
            )
    stash: dict[str, Any] = {}
    name = block.name
    if not name:
        name = call_names.get(block.id, "")
        if name:
            stash["nameFromCall"] = True
        else:
            ok = False
            issues.add(
                _at(path, "name"),
                _UNSUPPORTED,
                f"the tool result for call {block.id!r} has no name and no earlier tool call with that id "
                "names it; the format requires a tool-response name (at least 1 character)",
            )
    if not ok:
        return None
    data = "".join(text.content for text in texts)
    plain = not texts or (len(texts) == 1 and texts[0].content != "" and not texts[0].signature)
    if not plain:
        blocks: list[dict[str, Any]] = []
        for text in texts:
            entry: dict[str, Any] = {"length": len(text.content)}
            if text.signature:
                entry["signature"] = text.signature
            blocks.append(entry)
        stash["textBlocks"] = blocks
    if block.is_error:
        stash["isError"] = True
    if block.metadata:
        stash["metadata"] = block.metadata
    if block.terminate:
        stash["terminate"] = True
    if block.terminate_message:
        stash["terminateMessage"] = block.terminate_message
    item = {"modality": "tool-response", "index": block.index, "id": block.id, "name": name, "data": data}
    return _with_stash(item, stash, include_metadata, path, issues)


# --------------------------------------------------------------------------- format -> agentmsg


def message_from_adaline(data: Mapping[str, Any]) -> AgentMessage:
    """One format ``Message`` dict as an agentmsg message.

    Raises :class:`~agentmsg.ValidationError` listing every violation, with
    fields relative to the message (``content[1].value.mediaType``).
    """
    issues = _Issues()
    message = _import_message(data, "", issues)
    issues.raise_if_any("Adaline message")
    assert message is not None
    return message


def from_adaline(payload: Sequence[Mapping[str, Any]]) -> list[AgentMessage]:
    """A list of format ``Message`` dicts as agentmsg messages (all of them, or an error).

    Raises :class:`~agentmsg.ValidationError` listing every violation in the
    payload, each with its JSON path (``[0].content[1].value.mediaType``).
    """
    issues = _Issues()
    if isinstance(payload, (str, bytes, bytearray, Mapping)) or not isinstance(payload, Sequence):
        issues.add("", "type", f"expected an array of messages, got {json_type(payload)}")
        issues.raise_if_any("Adaline payload")
    out: list[AgentMessage] = []
    for i, item in enumerate(payload):
        message = _import_message(item, f"[{i}]", issues)
        if message is None:
            continue
        if out and _continues(item, out[-1], message):
            out[-1] = _join_tool_messages(out[-1], message)  # type: ignore[arg-type]
        else:
            out.append(message)
    issues.raise_if_any("Adaline payload")
    return out


def _continues(item: Mapping[str, Any], previous: AgentMessage, message: AgentMessage) -> bool:
    """Is this tool message the rest of the one before (``sameMessage``, as :func:`to_adaline` splits them)?

    The flag is ignored when it contradicts the payload: the message before is not a tool message.
    """
    if not isinstance(previous, ToolMessage) or not isinstance(message, ToolMessage):
        return False
    metadata = item.get("metadata")
    stash = metadata.get(STASH_KEY) if isinstance(metadata, Mapping) else None
    return isinstance(stash, Mapping) and stash.get("sameMessage") is True


def _join_tool_messages(first: ToolMessage, rest: ToolMessage) -> ToolMessage:
    """``first`` with the results of ``rest`` after its own (id, time and name stay ``first``'s)."""
    pb = message_pb2.Message()
    pb.CopyFrom(first.pb)
    pb.tool.content.extend(rest.pb.tool.content)
    return ToolMessage.from_proto(pb)


def _insert_kept_blocks(blocks: list[ContentBase], stash: _Stash, issues: _Issues) -> None:
    """Put the stashed blocks (``blocks``: ``[{at, block}]``, seed-1 dicts) back at their positions."""
    if "blocks" not in stash.values:
        return
    where = stash.where("blocks")
    entries = stash.values["blocks"]
    if not isinstance(entries, (list, tuple)):
        issues.add(where, "metadata", f"expected an array, got {json_type(entries)}")
        return
    last = -1
    for k, entry in enumerate(entries):
        at = entry.get("at") if isinstance(entry, Mapping) else None
        encoded = entry.get("proto") if isinstance(entry, Mapping) else None
        entry_path = f"{where}[{k}]"
        if isinstance(at, bool) or not isinstance(at, int) or not isinstance(encoded, str):
            issues.add(entry_path, "metadata", "expected {at: integer, proto: base64 string}")
            return
        if at <= last or at > len(blocks):
            issues.add(
                _at(entry_path, "at"),
                "metadata",
                f"position {at} is out of order or past the end (the message has {len(blocks)} blocks here)",
            )
            return
        raw = _decode_base64(encoded, _at(entry_path, "proto"), issues)
        if raw is None:
            return
        kept = _build(issues, _at(entry_path, "proto"), partial(ContentBase.from_bytes, raw, validate=True))
        if kept is None:
            return
        if not isinstance(kept, (HostedToolCallContent, HostedToolResultContent, ToolApprovalContent, ProviderContent)):
            issues.add(
                _at(entry_path, "proto"),
                "metadata",
                f"a {kept.type or 'unknown'} block has a modality of its own and is never kept here",
            )
            return
        blocks.insert(at, kept)
        last = at


def from_adaline_json(text: str | bytes) -> list[AgentMessage]:
    """The format's JSON text (an array of ``Message`` objects) as agentmsg messages."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise ValidationError.single("", "adaline.type", f"expected JSON text, got {type(text).__name__}", "JSON")
    try:
        payload = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise ValidationError.single("", "adaline.json", f"not JSON: {exc}", "Adaline JSON") from None
    return from_adaline(payload)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


# Field readers: each returns the value, or None after recording why it is unusable.


def _require(obj: Mapping[str, Any], key: str, path: str, issues: _Issues) -> Any:
    if key not in obj:
        issues.add(_at(path, key), "required", f"required field {key!r} is missing")
        return None
    return obj[key]


def _read_str(obj: Mapping[str, Any], key: str, path: str, issues: _Issues, *, min_len: int = 0) -> str | None:
    if key not in obj:
        issues.add(_at(path, key), "required", f"required string {key!r} is missing")
        return None
    value = obj[key]
    if not isinstance(value, str):
        issues.add(_at(path, key), "type", f"expected a string, got {json_type(value)}")
        return None
    if len(value) < min_len:
        issues.add(_at(path, key), "min_len", f"{key!r} must not be empty")
        return None
    if unencodable(value):
        issues.add(_at(path, key), "string.utf8", "not encodable as UTF-8 (an unpaired surrogate)")
        return None
    return value


def _read_optional_str(obj: Mapping[str, Any], key: str, path: str, issues: _Issues) -> str | None:
    """An optional string: absent gives None; present it must be a string (null is refused, as zod does)."""
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, str):
        issues.add(_at(path, key), "type", f"expected a string or no {key!r} at all, got {json_type(value)}")
        return None
    if unencodable(value):
        issues.add(_at(path, key), "string.utf8", "not encodable as UTF-8 (an unpaired surrogate)")
        return None
    return value


def _read_object(obj: Mapping[str, Any], key: str, path: str, issues: _Issues) -> Mapping[str, Any] | None:
    value = _require(obj, key, path, issues)
    if value is None and key not in obj:
        return None
    if not isinstance(value, Mapping):
        issues.add(_at(path, key), "type", f"expected an object, got {json_type(value)}")
        return None
    return value


def _read_enum(obj: Mapping[str, Any], key: str, path: str, issues: _Issues, allowed: Sequence[str]) -> str | None:
    value = _read_str(obj, key, path, issues)
    if value is None:
        return None
    if value not in allowed:
        issues.add(_at(path, key), "enum", f"{value!r} is not one of: {', '.join(allowed)}")
        return None
    return value


def _read_nonneg_int(value: Any, path: str, issues: _Issues) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        issues.add(path, "type", f"expected a number, got {json_type(value)}")
        return None
    if isinstance(value, float) and not value.is_integer():
        issues.add(path, "int", f"expected an integer, got {value!r}")
        return None
    number = int(value)
    if number < 0:
        issues.add(path, "gte", f"must be 0 or more, got {number}")
        return None
    return number


def _read_index(obj: Mapping[str, Any], path: str, issues: _Issues) -> int | None:
    if "index" not in obj:
        issues.add(_at(path, "index"), "required", "required integer 'index' is missing")
        return None
    number = _read_nonneg_int(obj["index"], _at(path, "index"), issues)
    if number is not None and number > _INT32_MAX:
        issues.add(
            _at(path, "index"), _UNSUPPORTED, f"index {obj['index']!r} is above agentmsg's limit of {_INT32_MAX}"
        )
        return None
    return number


def _decode_base64(text: str, path: str, issues: _Issues) -> bytes | None:
    """Bytes from bare base64 or a base64 ``data:`` URL (the two forms the gateway's providers use)."""
    body = text
    if text.startswith("data:"):
        match = _DATA_URL.match(text)
        if match is None:
            issues.add(path, "base64", "a malformed data: URL")
            return None
        params = [param.strip().lower() for param in match.group("params").split(";")[1:]]
        if "base64" not in params:
            issues.add(path, "base64", "a data: URL that is not base64-encoded (no ';base64')")
            return None
        body = match.group("data")
    try:
        return base64.b64decode(_B64_SPACE.sub("", body), validate=True)
    except (binascii.Error, ValueError) as exc:
        issues.add(path, "base64", f"invalid base64: {exc}")
        return None


def _build(
    issues: _Issues, path: str, factory: Callable[[], T], fields: Mapping[str, str] | None = None, media: str = ""
) -> T | None:
    """Run an agentmsg constructor; its errors become violations at payload paths.

    ``fields`` maps the last part of an agentmsg field path (``url``) to a path
    relative to ``path`` (``value.url``); ``media`` is where a MediaError points.
    """
    try:
        return factory()
    except ValidationError as exc:
        for violation in exc.violations:
            where = _map_field(path, violation.field, fields or {})
            origin = f" (agentmsg field {violation.field!r})" if violation.field else ""
            issues.add(where, violation.rule_id, f"{violation.message}{origin}")
    except (MediaError, DecodeError) as exc:
        issues.add(
            _at(path, media) if media else path, "media" if isinstance(exc, MediaError) else "metadata", str(exc)
        )
    except (ValueError, TypeError) as exc:
        issues.add(path, "invalid", f"agentmsg cannot hold this value: {exc}")
    return None


def _map_field(path: str, field: str, fields: Mapping[str, str]) -> str:
    """The payload path for an agentmsg field path: the first mapped part, then the rest of the field."""
    parts = field.split(".")
    for k, part in enumerate(parts):
        target = fields.get(part.split("[", 1)[0])
        if target is not None:
            rest = part[len(part.split("[", 1)[0]) :]
            return ".".join([_at(path, target) + rest, *parts[k + 1 :]])
    return path


class _Stash:
    """The ``metadata.agentmsg`` object of one payload item, read with checks."""

    __slots__ = ("issues", "path", "values")

    def __init__(self, obj: Mapping[str, Any], path: str, issues: _Issues) -> None:
        self.issues = issues
        self.path = _at(_at(path, "metadata"), STASH_KEY)
        self.values: Mapping[str, Any] = {}
        metadata = obj.get("metadata")
        # The metadata schema is the user's: anything but an object cannot hold a stash and is foreign data.
        if isinstance(metadata, Mapping) and STASH_KEY in metadata:
            stash = metadata[STASH_KEY]
            if isinstance(stash, Mapping):
                self.values = stash
            else:
                issues.add(self.path, "metadata", f"expected an object, got {json_type(stash)}")

    def _get(self, key: str, check: Callable[[Any], bool], what: str) -> Any:
        if key not in self.values:
            return None
        value = self.values[key]
        if not check(value):
            self.issues.add(_at(self.path, key), "metadata", f"expected {what}, got {json_type(value)}")
            return None
        return value

    def text(self, key: str) -> str | None:
        """A string, or None when absent (or wrong, recorded)."""
        value: str | None = self._get(key, lambda v: isinstance(v, str), "a string")
        return value

    def flag(self, key: str) -> bool:
        """A boolean; absent is False."""
        return self._get(key, lambda v: isinstance(v, bool), "a boolean") is True

    def obj(self, key: str) -> dict[str, Any] | None:
        """A JSON object (as a new dict), or None when absent (or wrong, recorded)."""
        value = self._get(key, lambda v: isinstance(v, Mapping), "an object")
        return dict(value) if value is not None else None

    def where(self, key: str) -> str:
        """The payload path of one stash key."""
        return _at(self.path, key)


def _import_message(data: Any, path: str, issues: _Issues) -> AgentMessage | None:
    """A ``Message``: role, content (each block checked), then the message-level stash."""
    if not isinstance(data, Mapping):
        issues.add(path, "type", f"expected a message object, got {json_type(data)}")
        return None
    before = len(issues.found)
    role = _read_enum(data, "role", path, issues, ROLES)
    content_path = _at(path, "content")
    raw_content = _require(data, "content", path, issues)
    blocks: list[ContentBase] = []
    if "content" in data:
        if not isinstance(raw_content, (list, tuple)):
            issues.add(content_path, "type", f"expected an array, got {json_type(raw_content)}")
        else:
            for j, item in enumerate(raw_content):
                modality, block = _import_content(item, f"{content_path}[{j}]", issues)
                if role is not None and modality is not None and modality not in _ROLE_MODALITIES[role]:
                    allowed = ", ".join(sorted(_ROLE_MODALITIES[role]))
                    issues.add(
                        f"{content_path}[{j}]",
                        _UNSUPPORTED,
                        f"agentmsg's {role} message cannot hold {modality} content (it holds {allowed})",
                    )
                elif block is not None:
                    joined = _join_images(item, block, blocks, f"{content_path}[{j}]", issues)
                    if joined is not None:
                        blocks[-1] = joined
                    else:
                        blocks.append(block)
    stash = _Stash(data, path, issues)
    stash.flag("sameMessage")  # checked here; from_adaline joins the messages
    _insert_kept_blocks(blocks, stash, issues)
    # A message whose only blocks are kept in metadata (a user's approval) has an empty content list.
    if isinstance(raw_content, (list, tuple)) and not raw_content and not blocks and role not in (None, "assistant"):
        issues.add(
            content_path,
            "min_items",
            f"a {role} message needs at least one content block in agentmsg (the format allows an empty list)",
        )
    message_id = stash.text("id")
    if message_id == "":
        issues.add(stash.where("id"), "metadata", "the message id must not be empty")
    timestamp = _read_timestamp(stash, issues)
    name = stash.text("name") or ""
    assistant: dict[str, Any] = {}
    if role == "assistant":
        assistant = _read_assistant_stash(stash, issues)
    if role is None or len(issues.found) > before:
        return None
    fields = {"id": "metadata.agentmsg.id", "name": "metadata.agentmsg.name"}
    common: dict[str, Any] = {"id": message_id, "name": name}
    if timestamp is not None:
        common["timestamp"] = timestamp.ToDatetime(tzinfo=UTC)
    message: AgentMessage | None
    match role:
        case "system":
            message = _build(issues, path, lambda: SystemMessage(blocks, **common), fields)  # type: ignore[arg-type]
        case "user":
            message = _build(issues, path, lambda: UserMessage(blocks, **common), fields)  # type: ignore[arg-type]
        case "tool":
            message = _build(issues, path, lambda: ToolMessage(blocks, **common), fields)  # type: ignore[arg-type]
        case _:
            message = _build_assistant(blocks, common, assistant, path, issues)
    if message is not None and timestamp is not None:
        # Keep sub-microsecond precision, which a datetime cannot carry.
        message.pb.timestamp.CopyFrom(timestamp)
    return message


def _build_assistant(
    blocks: list[ContentBase], common: Mapping[str, Any], extra: Mapping[str, Any], path: str, issues: _Issues
) -> AssistantMessage | None:
    """An AssistantMessage; the contract's "content required" rule is reported against the payload's content."""
    before = len(issues.found)
    fields = {"id": "metadata.agentmsg.id", "name": "metadata.agentmsg.name"}
    message = _build(issues, path, lambda: AssistantMessage(blocks, **common, **extra), fields)  # type: ignore[arg-type]
    for k in range(before, len(issues.found)):
        if issues.found[k].rule_id == "adaline.assistant.content.required":
            issues.found[k] = Violation(
                _at(path, "content"),
                "adaline.min_items",
                "an assistant message with no content needs, in agentmsg, an error or a stop reason of length, "
                "content_filter, abort or error (in metadata.agentmsg); the format allows an empty list",
            )
    return message


def _read_timestamp(stash: _Stash, issues: _Issues) -> timestamp_pb2.Timestamp | None:
    text = stash.text("timestamp")
    if text is None:
        return None
    timestamp = timestamp_pb2.Timestamp()
    try:
        timestamp.FromJsonString(text)
        timestamp.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:
        issues.add(stash.where("timestamp"), "metadata", f"not an RFC 3339 timestamp: {exc}")
        return None
    return timestamp


def _read_assistant_stash(stash: _Stash, issues: _Issues) -> dict[str, Any]:
    """The assistant-only stash keys as AssistantMessage keyword arguments."""
    extra: dict[str, Any] = {}
    usage = stash.obj("usage")
    if usage is not None:
        extra["usage"] = _build(issues, stash.where("usage"), lambda: Usage.from_json(usage, validate=True))
    provenance = stash.obj("provenance")
    if provenance is not None:
        extra["provenance"] = _build(
            issues, stash.where("provenance"), lambda: Provenance.from_json(provenance, validate=True)
        )
    reason = stash.text("stopReason")
    if reason is not None:
        allowed = [member.value for member in StopReason]
        if reason in allowed:
            extra["stop_reason"] = reason
        else:
            issues.add(stash.where("stopReason"), "metadata", f"{reason!r} is not one of: {', '.join(allowed)}")
    provider_extra = stash.obj("providerExtra")
    if provider_extra is not None:
        extra["provider_extra"] = _build(
            issues,
            stash.where("providerExtra"),
            lambda: ProviderContent(
                str(provider_extra.get("provider", "")),
                str(provider_extra.get("type", "")),
                str(provider_extra.get("json", "")),
            ),
        )
    extra["stop_reason_raw"] = stash.text("stopReasonRaw") or ""
    extra["stop_sequence"] = stash.text("stopSequence") or ""
    extra["error"] = stash.text("error") or ""
    return extra


def _join_images(
    item: Any, block: ContentBase, blocks: list[ContentBase], path: str, issues: _Issues
) -> ImageContent | None:
    """The image block before this image item, grown by it, when the item's stash says ``sameBlock``.

    The flag is ignored (the image stays a block of its own) when it contradicts
    the payload: no image item just before, or one with another detail.
    """
    if not isinstance(block, ImageContent) or not _Stash(item, path, issues).flag("sameBlock"):
        return None
    previous = blocks[-1] if blocks else None
    if not isinstance(previous, ImageContent) or previous.detail != block.detail:
        return None
    return ImageContent(images=[previous, block], detail=block.detail)


def _import_content(item: Any, path: str, issues: _Issues) -> tuple[str | None, ContentBase | None]:
    """One content block: (its modality, the agentmsg block) or Nones after recording the violations."""
    if not isinstance(item, Mapping):
        issues.add(path, "type", f"expected a content object, got {json_type(item)}")
        return None, None
    if "modality" not in item:
        issues.add(_at(path, "modality"), "required", "required field 'modality' is missing")
        return None, None
    modality = item["modality"]
    if not isinstance(modality, str):
        issues.add(_at(path, "modality"), "type", f"expected a string, got {json_type(modality)}")
        return None, None
    if modality not in MODALITIES:
        issues.add(_at(path, "modality"), "modality", f"unknown modality {modality!r}; known: {', '.join(MODALITIES)}")
        return None, None
    before = len(issues.found)
    stash = _Stash(item, path, issues)
    block: ContentBase | None = None
    match modality:
        case "text":
            block = _import_text(item, path, issues, stash, before)
        case "image":
            block = _import_image(item, path, issues, stash, before)
        case "pdf":
            block = _import_pdf(item, path, issues, stash, before)
        case "reasoning":
            block = _import_reasoning(item, path, issues, before)
        case "tool-call":
            block = _import_tool_call(item, path, issues, stash, before)
        case "tool-response":
            block = _import_tool_response(item, path, issues, stash, before)
        case _:
            issues.add(
                path,
                _UNSUPPORTED,
                f"agentmsg has no {modality} content: the gateway emits it in responses only, "
                "and agentmsg keeps no such block",
            )
            return None, None
    return modality, block


def _import_text(item: Mapping[str, Any], path: str, issues: _Issues, stash: _Stash, before: int) -> ContentBase | None:
    """``text`` {value} -> TextContent (signature from the stash)."""
    value = _read_str(item, "value", path, issues)
    signature = stash.text("signature") or ""
    details = stash.text("details")
    if value is None or len(issues.found) > before:
        return None
    if details is None:
        return _build(issues, path, lambda: TextContent(value, signature=signature))
    raw = _decode_base64(details, stash.where("details"), issues)
    if raw is None:
        return None
    pb = content_pb2.Content()
    try:
        pb.text.ParseFromString(raw)
    except PbDecodeError as exc:
        issues.add(stash.where("details"), "metadata", f"not an agentmsg.v1.TextContent encoding: {exc}")
        return None
    pb.text.text = value
    pb.text.signature = signature
    where = {"citations": "metadata.agentmsg.details", "logprobs": "metadata.agentmsg.details"}
    return _build(issues, path, lambda: TextContent.from_proto(pb, validate=True), where)


def _import_image(
    item: Mapping[str, Any], path: str, issues: _Issues, stash: _Stash, before: int
) -> ContentBase | None:
    """``image`` {detail, value: base64 | url} -> ImageContent."""
    detail = _read_enum(item, "detail", path, issues, IMAGE_DETAILS)
    value = _read_object(item, "value", path, issues)
    value_path = _at(path, "value")
    kind = _read_enum(value, "type", value_path, issues, ("base64", "url")) if value is not None else None
    stashed_type = stash.text("mediaType")
    unset = stash.flag("detailUnset")
    chosen: ImageDetail | None = None if detail is None or (unset and detail == "auto") else ImageDetail(detail)
    if kind == "base64":
        assert value is not None
        fmt = _read_enum(value, "mediaType", value_path, issues, IMAGE_MEDIA_TYPES)
        text = _read_str(value, "base64", value_path, issues)
        raw = _decode_base64(text, _at(value_path, "base64"), issues) if text is not None else None
        if raw is None or fmt is None or detail is None or len(issues.found) > before:
            return None
        media_type = stashed_type if stashed_type is not None and _image_format(stashed_type) == fmt else f"image/{fmt}"
        fields = {"media_type": "value.mediaType", "data": "value.base64", "detail": "detail"}
        return _build(
            issues,
            path,
            lambda: ImageContent(raw, media_type=media_type, detail=chosen),
            fields,
            media="value.base64",
        )
    if kind == "url":
        assert value is not None
        url = _read_str(value, "url", value_path, issues)
        if url is None or detail is None or len(issues.found) > before:
            return None
        media_type = stashed_type if stashed_type is not None else _guess_image_type(url)
        pb = content_pb2.Content(
            image=content_pb2.ImageContent(url=url, media_type=media_type, detail=detail_to_pb(chosen))
        )
        fields = {"url": "value.url", "media_type": "metadata.agentmsg.mediaType"}
        return _build(issues, path, lambda: ImageContent.from_proto(pb, validate=True), fields)
    return None


def _import_pdf(item: Mapping[str, Any], path: str, issues: _Issues, stash: _Stash, before: int) -> ContentBase | None:
    """``pdf`` {value: base64 | url, file: {name, id, size?}} -> DocumentContent (application/pdf)."""
    value = _read_object(item, "value", path, issues)
    value_path = _at(path, "value")
    kind = _read_enum(value, "type", value_path, issues, ("base64", "url")) if value is not None else None
    file = _read_object(item, "file", path, issues)
    filename = None
    if file is not None:
        file_path = _at(path, "file")
        filename = _read_str(file, "name", file_path, issues)
        _read_str(file, "id", file_path, issues)
        if "size" in file and (isinstance(file["size"], bool) or not isinstance(file["size"], (int, float))):
            issues.add(_at(file_path, "size"), "type", f"expected a number, got {json_type(file['size'])}")
    stashed_type = stash.text("mediaType")
    media_type = stashed_type if stashed_type is not None and _base_media_type(stashed_type) == _PDF else _PDF
    title = stash.text("title") or ""
    fields = {"media_type": "metadata.agentmsg.mediaType", "filename": "file.name", "title": "metadata.agentmsg.title"}
    if kind == "base64":
        assert value is not None
        text = _read_str(value, "base64", value_path, issues)
        raw = _decode_base64(text, _at(value_path, "base64"), issues) if text is not None else None
        if raw is None or filename is None or len(issues.found) > before:
            return None
        return _build(
            issues,
            path,
            lambda: DocumentContent(raw, media_type=media_type, filename=filename, title=title),
            fields,
            media="value.base64",
        )
    if kind == "url":
        assert value is not None
        url = _read_str(value, "url", value_path, issues)
        if url is None or filename is None or len(issues.found) > before:
            return None
        pb = content_pb2.Content(
            document=content_pb2.DocumentContent(url=url, media_type=media_type, filename=filename, title=title)
        )
        return _build(
            issues, path, lambda: DocumentContent.from_proto(pb, validate=True), {**fields, "url": "value.url"}
        )
    return None


def _import_reasoning(item: Mapping[str, Any], path: str, issues: _Issues, before: int) -> ContentBase | None:
    """``reasoning`` {value: thinking | redacted} -> ThinkingContent or RedactedThinkingContent."""
    value = _read_object(item, "value", path, issues)
    value_path = _at(path, "value")
    kind = _read_enum(value, "type", value_path, issues, ("thinking", "redacted")) if value is not None else None
    if kind == "thinking":
        assert value is not None
        thinking = _read_str(value, "thinking", value_path, issues)
        signature = _read_str(value, "signature", value_path, issues)
        if thinking is None or signature is None or len(issues.found) > before:
            return None
        return _build(issues, path, lambda: ThinkingContent(thinking, signature))
    if kind == "redacted":
        assert value is not None
        data = _read_str(value, "data", value_path, issues)
        if data is None or len(issues.found) > before:
            return None
        return _build(issues, path, lambda: RedactedThinkingContent(data), {"data": "value.data"})
    return None


def _import_tool_call(
    item: Mapping[str, Any], path: str, issues: _Issues, stash: _Stash, before: int
) -> ContentBase | None:
    """``tool-call`` {index, id, name, arguments, serverName?, thoughtSignature?} -> ToolCallContent."""
    index = _read_index(item, path, issues)
    call_id = _read_str(item, "id", path, issues, min_len=1)
    name = _read_str(item, "name", path, issues, min_len=1)
    arguments = _read_str(item, "arguments", path, issues)
    server_name = _read_optional_str(item, "serverName", path, issues) or ""
    signature = _read_optional_str(item, "thoughtSignature", path, issues) or ""
    kind = stash.text("kind")
    if kind is not None and kind not in {member.value for member in ToolKind}:
        issues.add(stash.where("kind"), "metadata", f"{kind!r} is not one of: {', '.join(m.value for m in ToolKind)}")
    metadata = stash.obj("metadata")
    requires_approval = stash.flag("requiresApproval")
    if index is None or call_id is None or name is None or arguments is None or len(issues.found) > before:
        return None
    fields = {"metadata": "metadata.agentmsg.metadata", "kind": "metadata.agentmsg.kind"}
    return _build(
        issues,
        path,
        lambda: ToolCallContent(
            call_id,
            name,
            arguments=arguments,
            kind=kind,
            index=index,
            signature=signature,
            server_name=server_name,
            metadata=metadata,
            requires_approval=requires_approval,
        ),
        fields,
    )


def _import_tool_response(
    item: Mapping[str, Any], path: str, issues: _Issues, stash: _Stash, before: int
) -> ContentBase | None:
    """``tool-response`` {index, id, name, data, apiResponse?} -> ToolResultContent (text)."""
    index = _read_index(item, path, issues)
    call_id = _read_str(item, "id", path, issues, min_len=1)
    name = _read_str(item, "name", path, issues, min_len=1)
    data = _read_str(item, "data", path, issues)
    if "apiResponse" in item:
        api = item["apiResponse"]
        api_path = _at(path, "apiResponse")
        if not isinstance(api, Mapping):
            issues.add(api_path, "type", f"expected an object or no 'apiResponse' at all, got {json_type(api)}")
        elif "statusCode" not in api:
            issues.add(_at(api_path, "statusCode"), "required", "required integer 'statusCode' is missing")
        else:
            _read_nonneg_int(api["statusCode"], _at(api_path, "statusCode"), issues)
    metadata = stash.obj("metadata")
    is_error = stash.flag("isError")
    terminate = stash.flag("terminate")
    terminate_message = stash.text("terminateMessage") or ""
    name_from_call = stash.flag("nameFromCall")
    content: str | list[TextContent] | None = data
    if data is not None and "textBlocks" in stash.values:
        content = _split_text_blocks(data, stash, issues)
    if index is None or call_id is None or name is None or content is None or len(issues.found) > before:
        return None
    result_content = content
    fields = {"metadata": "metadata.agentmsg.metadata", "terminate_message": "metadata.agentmsg.terminateMessage"}
    return _build(
        issues,
        path,
        lambda: ToolResultContent(
            call_id,
            result_content,
            is_error=is_error,
            name="" if name_from_call else name,
            metadata=metadata,
            terminate=terminate,
            terminate_message=terminate_message,
            index=index,
        ),
        fields,
    )


def _split_text_blocks(data: str, stash: _Stash, issues: _Issues) -> list[TextContent] | None:
    """Cut ``data`` back into the text blocks the ``textBlocks`` stash describes."""
    where = stash.where("textBlocks")
    entries = stash.values["textBlocks"]
    if not isinstance(entries, (list, tuple)):
        issues.add(where, "metadata", f"expected an array, got {json_type(entries)}")
        return None
    blocks: list[TextContent] = []
    start = 0
    for k, entry in enumerate(entries):
        length = entry.get("length") if isinstance(entry, Mapping) else None
        signature = entry.get("signature", "") if isinstance(entry, Mapping) else ""
        if isinstance(length, bool) or not isinstance(length, int) or length < 0 or not isinstance(signature, str):
            issues.add(f"{where}[{k}]", "metadata", "expected {length: integer >= 0, signature?: string}")
            return None
        blocks.append(TextContent(data[start : start + length], signature=signature))
        start += length
    if start != len(data):
        issues.add(where, "metadata", f"the block lengths add up to {start}, but data has {len(data)} characters")
        return None
    return blocks
