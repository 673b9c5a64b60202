"""Content blocks: the ``agentmsg.v1.Content`` oneof as a closed union of classes.

Each class wraps one ``agentmsg.v1.Content`` whose ``kind`` arm is set, so a
block is a zero-copy view of the wire message. The classes work with
``match``::

    match block:
        case TextContent(text):
            ...
        case ToolCallContent(id, name, arguments):
            ...

A block whose arm this version does not know (from a newer peer) is an
:class:`UnknownContent`: kept and re-encoded unchanged, never dropped.
"""

from __future__ import annotations

import base64
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from agentmsg import _jsontext, _media, _struct, _validation
from agentmsg._dict_paths import _at, _fail, _get, _require
from agentmsg._wrapper import ProtoWrapper
from agentmsg.errors import DecodeError, MediaError, ToolArgumentsError, ValidationError, Violation, preview
from agentmsg.v1 import content_pb2

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "AudioContent",
    "Citation",
    "CodeExecutionFile",
    "CodeExecutionOutput",
    "Content",
    "DocumentContent",
    "HostedToolCallContent",
    "HostedToolKind",
    "HostedToolResultContent",
    "HostedToolStatus",
    "ImageContent",
    "ImageDetail",
    "ProviderContent",
    "RedactedThinkingContent",
    "SearchResult",
    "TextContent",
    "ThinkingContent",
    "TokenLogprob",
    "ToolCallContent",
    "ToolKind",
    "ToolResultContent",
    "UnknownContent",
    "WebFetchOutput",
    "content_from_proto",
]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_BYTES = bytes  # TokenLogprob takes a ``bytes`` keyword (the providers' name), which hides the builtin there


class ImageDetail(StrEnum):
    """How closely a model should look at an image (``agentmsg.v1.ImageDetail``)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    AUTO = "auto"


class ToolKind(StrEnum):
    """What a tool does (``agentmsg.v1.ToolKind``).

    A kind not stated reads None. ``UNKNOWN`` is what a kind this version does
    not know reads as (a newer peer's); given to a constructor it means not stated.
    """

    READ = "read"
    EDIT = "edit"
    WRITE = "write"
    EXECUTE = "execute"
    WEB = "web"
    CRON = "cron"
    AGENT = "agent"
    WORKFLOW = "workflow"
    PLAN = "plan"
    AUTOMATION = "automation"
    MCP = "mcp"
    UNKNOWN = "unknown"


class HostedToolKind(StrEnum):
    """What a tool the provider runs itself does (``agentmsg.v1.HostedToolKind``).

    A kind not stated reads None; a kind this version does not know (a newer
    peer's) reads ``OTHER``. The values are also the keys of
    :attr:`Usage.hosted_tool_requests <agentmsg.Usage.hosted_tool_requests>`.
    """

    WEB_SEARCH = "web_search"
    WEB_FETCH = "web_fetch"
    CODE_EXECUTION = "code_execution"
    FILE_SEARCH = "file_search"
    IMAGE_GENERATION = "image_generation"
    MCP = "mcp"
    COMPUTER_USE = "computer_use"
    TOOL_SEARCH = "tool_search"
    OTHER = "other"


class HostedToolStatus(StrEnum):
    """How far a hosted tool call got (``agentmsg.v1.HostedToolStatus``); None when not stated."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    INCOMPLETE = "incomplete"
    FAILED = "failed"
    AWAITING_APPROVAL = "awaiting_approval"


class ToolApprovalDecision(StrEnum):
    """A person's decision on a tool call (``agentmsg.v1.ToolApprovalDecision``)."""

    APPROVED = "approved"
    DENIED = "denied"


_DECISION_TO_PB: dict[ToolApprovalDecision, content_pb2.ToolApprovalDecision.ValueType] = {
    ToolApprovalDecision.APPROVED: content_pb2.TOOL_APPROVAL_DECISION_APPROVED,
    ToolApprovalDecision.DENIED: content_pb2.TOOL_APPROVAL_DECISION_DENIED,
}
_DECISION_FROM_PB = {number: decision for decision, number in _DECISION_TO_PB.items()}


_HOSTED_KIND_TO_PB: dict[HostedToolKind, content_pb2.HostedToolKind.ValueType] = {
    kind: content_pb2.HostedToolKind.Value(f"HOSTED_TOOL_KIND_{kind.name}") for kind in HostedToolKind
}
_HOSTED_KIND_FROM_PB = {number: kind for kind, number in _HOSTED_KIND_TO_PB.items()}
_HOSTED_STATUS_TO_PB: dict[HostedToolStatus, content_pb2.HostedToolStatus.ValueType] = {
    status: content_pb2.HostedToolStatus.Value(f"HOSTED_TOOL_STATUS_{status.name}") for status in HostedToolStatus
}
_HOSTED_STATUS_FROM_PB = {number: status for status, number in _HOSTED_STATUS_TO_PB.items()}


def hosted_kind_to_pb(kind: HostedToolKind | str | None) -> content_pb2.HostedToolKind.ValueType:
    if kind is None:
        return content_pb2.HOSTED_TOOL_KIND_UNSPECIFIED
    return _HOSTED_KIND_TO_PB[_enum(HostedToolKind, kind, "kind")]


def hosted_kind_from_pb(number: content_pb2.HostedToolKind.ValueType) -> HostedToolKind | None:
    if number == content_pb2.HOSTED_TOOL_KIND_UNSPECIFIED:
        return None
    return _HOSTED_KIND_FROM_PB.get(number, HostedToolKind.OTHER)


def hosted_status_to_pb(status: HostedToolStatus | str | None) -> content_pb2.HostedToolStatus.ValueType:
    if status is None:
        return content_pb2.HOSTED_TOOL_STATUS_UNSPECIFIED
    return _HOSTED_STATUS_TO_PB[_enum(HostedToolStatus, status, "status")]


def hosted_status_from_pb(number: content_pb2.HostedToolStatus.ValueType) -> HostedToolStatus | None:
    return _HOSTED_STATUS_FROM_PB.get(number)


_DETAIL_TO_PB: dict[ImageDetail, content_pb2.ImageDetail.ValueType] = {
    ImageDetail.LOW: content_pb2.IMAGE_DETAIL_LOW,
    ImageDetail.MEDIUM: content_pb2.IMAGE_DETAIL_MEDIUM,
    ImageDetail.HIGH: content_pb2.IMAGE_DETAIL_HIGH,
    ImageDetail.AUTO: content_pb2.IMAGE_DETAIL_AUTO,
}
_DETAIL_FROM_PB = {number: detail for detail, number in _DETAIL_TO_PB.items()}
_KIND_TO_PB: dict[ToolKind, content_pb2.ToolKind.ValueType] = {
    kind: content_pb2.ToolKind.Value(f"TOOL_KIND_{kind.name}") for kind in ToolKind if kind is not ToolKind.UNKNOWN
}
_KIND_TO_PB[ToolKind.UNKNOWN] = content_pb2.TOOL_KIND_UNSPECIFIED
_KIND_FROM_PB = {number: kind for kind, number in _KIND_TO_PB.items()}


def _expect(value: Any, types: type | tuple[type, ...], field: str) -> None:
    if type(value) is types:  # the usual case, decided without the generic checks below
        if types is str and isinstance(value, str) and not value.isascii():
            check_utf8(value, field)
        return
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        names = " or ".join(t.__name__ for t in _as_tuple(types))
        raise ValidationError.single(field, "type", f"expected {names}, got {type(value).__name__}")
    if isinstance(value, str):
        check_utf8(value, field)


def check_utf8(value: str, field: str) -> None:
    """Protobuf strings are UTF-8: a lone surrogate cannot be encoded."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError.single(
            field, "string.utf8", f"not encodable as UTF-8: {exc.reason} at {exc.start}"
        ) from None


INT32_MAX = 2**31 - 1


def check_int32(value: int, field: str) -> None:
    """An ``int32`` field cannot hold more: refuse the value instead of letting protobuf raise."""
    if not -(2**31) <= value <= INT32_MAX:
        raise ValidationError.single(field, "int32.range", f"{value} does not fit in an int32")


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _enum(enum_type: type[StrEnum], value: Any, field: str) -> Any:
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum_type)
        raise ValidationError.single(field, "enum", f"{value!r} is not one of: {allowed}") from None


def detail_to_pb(detail: ImageDetail | str | None) -> content_pb2.ImageDetail.ValueType:
    if detail is None:
        return content_pb2.IMAGE_DETAIL_UNSPECIFIED
    return _DETAIL_TO_PB[_enum(ImageDetail, detail, "detail")]


def kind_to_pb(kind: ToolKind | str | None) -> content_pb2.ToolKind.ValueType:
    if kind is None:
        return content_pb2.TOOL_KIND_UNSPECIFIED
    return _KIND_TO_PB[_enum(ToolKind, kind, "kind")]


def kind_from_pb(number: content_pb2.ToolKind.ValueType) -> ToolKind | None:
    # Not stated reads None (the seed's default); a number this version does not know (a newer peer's
    # kind) reads UNKNOWN, and the pb keeps the number.
    if number == content_pb2.TOOL_KIND_UNSPECIFIED:
        return None
    return _KIND_FROM_PB.get(number, ToolKind.UNKNOWN)


class ContentBase(ProtoWrapper[content_pb2.Content]):
    """Base of the content classes: a view of one ``agentmsg.v1.Content``."""

    __slots__ = ()
    _PB = content_pb2.Content
    _DISPATCH = True
    _ARM: ClassVar[str | None] = None
    _BY_ARM: ClassVar[dict[str | None, type[ContentBase]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._ARM is not None:
            ContentBase._BY_ARM[cls._ARM] = cls

    @property
    def type(self) -> str | None:
        """The block kind, the oneof arm's name (``"text"``, ``"tool_call"``...); None when unknown."""
        return self._ARM

    @classmethod
    def from_proto(cls, pb: content_pb2.Content, *, validate: bool = False) -> Self:
        """Wrap a generated ``Content`` as the class of its arm (no copy)."""
        if not isinstance(pb, content_pb2.Content):
            raise TypeError(f"{cls.__name__}.from_proto expects agentmsg.v1.Content, got {type(pb).__name__}")
        block = content_from_proto(pb)
        if not isinstance(block, cls):
            raise DecodeError(f"expected {cls.__name__}, got {type(block).__name__}")
        if validate:
            _validation.check(pb)
        return block

    def to_dict(self) -> dict[str, Any]:
        """The seed-1 dict form of this block (see :mod:`agentmsg.dict_form`)."""
        return content_to_dict(self)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Build a block from its seed-1 dict form."""
        block = content_from_dict(data)
        if not isinstance(block, cls):
            raise ValidationError.single("type", "type", f"expected a {cls.__name__} dict, got {type(block).__name__}")
        return block


def content_from_proto(pb: content_pb2.Content) -> Content:
    """Wrap a generated ``Content`` in the class of its arm (no copy)."""
    block = object.__new__(ContentBase._BY_ARM.get(pb.WhichOneof("kind"), UnknownContent))
    block._pb = pb
    return block  # type: ignore[return-value]


def _wrappers(values: Any, wrapper: type[ProtoWrapper[Any]], field: str) -> list[Any]:
    """The generated messages of a sequence of ``wrapper`` objects (refusing anything else, by position)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValidationError.single(
            field, "type", f"expected a list of {wrapper.__name__}, got {type(values).__name__}"
        )
    out = []
    for i, value in enumerate(values):
        if not isinstance(value, wrapper):
            raise ValidationError.single(
                f"{field}[{i}]", "type", f"expected {wrapper.__name__}, got {type(value).__name__}"
            )
        out.append(value._pb)
    return out


def _original_pb(original: Any, field: str = "original") -> content_pb2.ProviderContent | None:
    """The ``ProviderContent`` message of an ``original`` given as a :class:`ProviderContent` block (or None)."""
    if original is None:
        return None
    if not isinstance(original, ProviderContent):
        raise ValidationError.single(field, "type", f"expected ProviderContent, got {type(original).__name__}")
    return original._pb.provider


def _original_block(holder: Any) -> ProviderContent | None:
    """The ``original`` field of a generated message as a (detached) :class:`ProviderContent` block."""
    if not holder.HasField("original"):
        return None
    block = ProviderContent.__new__(ProviderContent)
    block._pb = content_pb2.Content(provider=holder.original)
    return block


def _optional_int(value: Any, field: str, *, minimum: int | None = 0, bits: int = 32) -> int | None:
    if value is None:
        return None
    _expect(value, int, field)
    if minimum is not None and value < minimum:
        raise ValidationError.single(field, f"int{bits}.gte", f"must be at least {minimum}, got {value}")
    if bits == 32:
        check_int32(value, field)
    elif not -(2**63) <= value < 2**63:
        raise ValidationError.single(field, "int64.range", f"{value} does not fit in an int64")
    return int(value)


def _optional_float(value: Any, field: str) -> float | None:
    if value is None:
        return None
    _expect(value, (int, float), field)
    return float(value)


class Citation(ProtoWrapper[content_pb2.Citation]):
    """A source that supports a text block (``agentmsg.v1.Citation``), on :attr:`TextContent.citations`.

    Build one with the factory for its source: :meth:`web`, :meth:`document`,
    :meth:`search_result`, :meth:`file`; or with the constructor alone for a
    provider citation of a kind agentmsg has no type for (``original`` then
    holds it). Every factory takes the fields every citation has:
    ``cited_text``, the span ``start_index``/``end_index`` (code points of
    the block's text; unset: the whole block), ``confidence`` (0 to 1) and
    ``original``, the provider's citation object kept verbatim as a
    :class:`ProviderContent` (``ProviderContent.from_block(provider, obj)``).
    """

    __slots__ = ()
    _PB = content_pb2.Citation

    def __init__(
        self,
        *,
        cited_text: str = "",
        start_index: int | None = None,
        end_index: int | None = None,
        confidence: float | None = None,
        original: ProviderContent | None = None,
    ) -> None:
        self._pb = self._common(cited_text, start_index, end_index, confidence, original)
        _validation.check(self._pb)

    @staticmethod
    def _common(
        cited_text: str,
        start_index: int | None,
        end_index: int | None,
        confidence: float | None,
        original: ProviderContent | None,
    ) -> content_pb2.Citation:
        _expect(cited_text, str, "cited_text")
        pb = content_pb2.Citation(cited_text=cited_text)
        start = _optional_int(start_index, "start_index")
        end = _optional_int(end_index, "end_index")
        if start is not None:
            pb.start_index = start
        if end is not None:
            pb.end_index = end
        value = _optional_float(confidence, "confidence")
        if value is not None:
            pb.confidence = value
        original_pb = _original_pb(original)
        if original_pb is not None:
            pb.original.CopyFrom(original_pb)
        return pb

    @classmethod
    def _build(cls, pb: content_pb2.Citation) -> Citation:
        _validation.check(pb)
        return cls._wrap(pb)

    @classmethod
    def web(
        cls,
        url: str,
        title: str = "",
        *,
        result_index: int | None = None,
        cited_text: str = "",
        start_index: int | None = None,
        end_index: int | None = None,
        confidence: float | None = None,
        original: ProviderContent | None = None,
    ) -> Citation:
        """A web page (Anthropic ``web_search_result_location``, OpenAI ``url_citation``, a Gemini web chunk)."""
        _expect(url, str, "url")
        _expect(title, str, "title")
        pb = cls._common(cited_text, start_index, end_index, confidence, original)
        pb.web.url, pb.web.title = url, title
        index = _optional_int(result_index, "result_index")
        if index is not None:
            pb.web.result_index = index
        return cls._build(pb)

    @classmethod
    def document(
        cls,
        document_index: int,
        *,
        title: str = "",
        file_id: str = "",
        chars: tuple[int, int] | None = None,
        pages: tuple[int, int] | None = None,
        blocks: tuple[int, int] | None = None,
        cited_text: str = "",
        start_index: int | None = None,
        end_index: int | None = None,
        confidence: float | None = None,
        original: ProviderContent | None = None,
    ) -> Citation:
        """A document of the request, at ``chars``, ``pages`` or ``blocks`` ``(start, end)`` (end exclusive).

        Characters and blocks count from 0, pages from 1 (Anthropic
        ``char_location``, ``page_location``, ``content_block_location``).
        """
        index = _optional_int(document_index, "document_index")
        _expect(title, str, "title")
        _expect(file_id, str, "file_id")
        pb = cls._common(cited_text, start_index, end_index, confidence, original)
        pb.document.document_index, pb.document.title, pb.document.file_id = index or 0, title, file_id
        given = [(name, value) for name, value in (("chars", chars), ("pages", pages), ("blocks", blocks)) if value]
        if len(given) > 1:
            raise ValidationError.single("location", "exclusive", "give one of chars, pages or blocks")
        for name, value in given:
            _fill_range(getattr(pb.document, name), value, name)
        return cls._build(pb)

    @classmethod
    def search_result(
        cls,
        source: str,
        *,
        title: str = "",
        search_result_index: int | None = None,
        blocks: tuple[int, int] | None = None,
        cited_text: str = "",
        start_index: int | None = None,
        end_index: int | None = None,
        confidence: float | None = None,
        original: ProviderContent | None = None,
    ) -> Citation:
        """A search result of the request (Anthropic ``search_result_location``, Gemini ``retrievedContext``)."""
        _expect(source, str, "source")
        _expect(title, str, "title")
        pb = cls._common(cited_text, start_index, end_index, confidence, original)
        pb.search_result.source, pb.search_result.title = source, title
        index = _optional_int(search_result_index, "search_result_index")
        if index is not None:
            pb.search_result.search_result_index = index
        if blocks is not None:
            _fill_range(pb.search_result.blocks, blocks, "blocks")
        return cls._build(pb)

    @classmethod
    def file(
        cls,
        file_id: str,
        *,
        filename: str = "",
        container_id: str = "",
        cited_text: str = "",
        start_index: int | None = None,
        end_index: int | None = None,
        confidence: float | None = None,
        original: ProviderContent | None = None,
    ) -> Citation:
        """A provider file (OpenAI ``file_citation``, ``container_file_citation``, ``file_path``)."""
        _expect(file_id, str, "file_id")
        _expect(filename, str, "filename")
        _expect(container_id, str, "container_id")
        pb = cls._common(cited_text, start_index, end_index, confidence, original)
        pb.file.file_id, pb.file.filename, pb.file.container_id = file_id, filename, container_id
        return cls._build(pb)

    @property
    def source_kind(self) -> str | None:
        """``"web"``, ``"document"``, ``"search_result"``, ``"file"``; None when only ``original`` says."""
        return self._pb.WhichOneof("source")

    @property
    def cited_text(self) -> str:
        """The quoted source text, or ``""``."""
        return self._pb.cited_text

    @property
    def start_index(self) -> int | None:
        """Where the supported span starts (code points), or None (the whole block)."""
        return self._pb.start_index if self._pb.HasField("start_index") else None

    @property
    def end_index(self) -> int | None:
        """Where the supported span ends (exclusive), or None (the whole block)."""
        return self._pb.end_index if self._pb.HasField("end_index") else None

    @property
    def confidence(self) -> float | None:
        """The provider's confidence, 0 to 1, or None."""
        return self._pb.confidence if self._pb.HasField("confidence") else None

    @property
    def url(self) -> str:
        """The web page's URL (``""`` unless the source is ``web``)."""
        return self._pb.web.url

    @property
    def title(self) -> str:
        """The source's title (web page, document or search result), or ``""``."""
        kind = self._pb.WhichOneof("source")
        if kind == "web":
            return self._pb.web.title
        if kind == "document":
            return self._pb.document.title
        if kind == "search_result":
            return self._pb.search_result.title
        if kind == "file":
            return self._pb.file.filename
        return ""

    @property
    def result_index(self) -> int | None:
        """The web page's position among the response's sources (Gemini chunk index), or None."""
        web = self._pb.web
        return web.result_index if web.HasField("result_index") else None

    @property
    def document_index(self) -> int | None:
        """The cited document's position in the request, or None when the source is not a document."""
        return self._pb.document.document_index if self._pb.HasField("document") else None

    @property
    def location(self) -> tuple[str, int, int] | None:
        """The cited part: ``("chars" | "pages" | "blocks", start, end)``, or None when not given."""
        kind = self._pb.WhichOneof("source")
        if kind == "document":
            unit = self._pb.document.WhichOneof("location")
            if unit is None:
                return None
            found = getattr(self._pb.document, unit)
            return unit, found.start, found.end
        if kind == "search_result" and self._pb.search_result.HasField("blocks"):
            found = self._pb.search_result.blocks
            return "blocks", found.start, found.end
        return None

    @property
    def source(self) -> str:
        """The search result's source (a URL or a name), or ``""``."""
        return self._pb.search_result.source

    @property
    def search_result_index(self) -> int | None:
        """The search result's position in the request, or None."""
        result = self._pb.search_result
        return result.search_result_index if result.HasField("search_result_index") else None

    @property
    def file_id(self) -> str:
        """The cited file's id (file and document sources), or ``""``."""
        return self._pb.file.file_id if self._pb.HasField("file") else self._pb.document.file_id

    @property
    def filename(self) -> str:
        """The cited file's name, or ``""``."""
        return self._pb.file.filename

    @property
    def container_id(self) -> str:
        """The container holding the cited file, or ``""``."""
        return self._pb.file.container_id

    @property
    def original(self) -> ProviderContent | None:
        """The provider's citation object, verbatim (a copy), or None."""
        return _original_block(self._pb)


def _fill_range(target: content_pb2.IndexRange, value: Any, field: str) -> None:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValidationError.single(field, "type", f"expected a (start, end) pair, got {preview(value)}")
    start = _optional_int(value[0], f"{field}.start", bits=64)
    end = _optional_int(value[1], f"{field}.end", bits=64)
    target.start, target.end = start or 0, end or 0


class TokenLogprob(ProtoWrapper[content_pb2.TokenLogprob]):
    """The log probability of one generated token (``agentmsg.v1.TokenLogprob``), on :attr:`TextContent.logprobs`.

    ``top_logprobs`` are the most likely tokens at the position, themselves
    :class:`TokenLogprob` with no alternatives of their own.
    """

    __slots__ = ()
    __match_args__ = ("token", "logprob")
    _PB = content_pb2.TokenLogprob

    def __init__(
        self,
        token: str,
        logprob: float,
        *,
        bytes: bytes | None = None,  # noqa: A002 - the providers' field name
        token_id: int | None = None,
        top_logprobs: Sequence[TokenLogprob] = (),
    ) -> None:
        _expect(token, str, "token")
        pb = content_pb2.TokenLogprob(token=token, logprob=_optional_float(logprob, "logprob") or 0.0)
        if bytes is not None:
            _expect(bytes, (_BYTES, bytearray), "bytes")
            pb.bytes = _BYTES(bytes)
        number = _optional_int(token_id, "token_id", minimum=None)
        if number is not None:
            pb.token_id = number
        pb.top_logprobs.extend(_wrappers(top_logprobs, TokenLogprob, "top_logprobs"))
        self._pb = pb

    @property
    def token(self) -> str:
        """The token's text."""
        return self._pb.token

    @property
    def logprob(self) -> float:
        """Its natural-log probability, as reported."""
        return self._pb.logprob

    @property
    def bytes(self) -> bytes | None:
        """The token's UTF-8 bytes, or None when not given."""
        return self._pb.bytes if self._pb.HasField("bytes") else None

    @property
    def token_id(self) -> int | None:
        """The provider's token id, or None."""
        return self._pb.token_id if self._pb.HasField("token_id") else None

    @property
    def top_logprobs(self) -> tuple[TokenLogprob, ...]:
        """The most likely tokens at this position, most likely first."""
        return tuple(TokenLogprob._wrap(item) for item in self._pb.top_logprobs)


class TextContent(ContentBase):
    """Plain text: the ``text`` arm (``agentmsg.v1.TextContent``).

    A text block may carry the :class:`Citation` objects that support it and
    the :class:`TokenLogprob` of its tokens, when the provider returned them.
    """

    __slots__ = ()
    __match_args__ = ("content", "signature")
    _ARM = "text"

    def __init__(
        self,
        content: str = "",
        *,
        signature: str = "",
        citations: Sequence[Citation] = (),
        logprobs: Sequence[TokenLogprob] = (),
        type: str = "text",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "text")
        _expect(content, str, "content")
        _expect(signature, str, "signature")
        arm = content_pb2.TextContent(text=content, signature=signature)
        if citations:
            arm.citations.extend(_wrappers(citations, Citation, "citations"))
        if logprobs:
            arm.logprobs.extend(_wrappers(logprobs, TokenLogprob, "logprobs"))
        self._pb = content_pb2.Content(text=arm)

    if TYPE_CHECKING:

        @property
        def content(self) -> str:
            """The text."""

    else:  # read by every consumer of text: a C getter, no Python frame per read
        content = property(operator.attrgetter("_pb.text.text"), doc="The text.")

    @property
    def signature(self) -> str:
        """Opaque provider signature on the text (Gemini), or ``""``."""
        return self._pb.text.signature

    @property
    def citations(self) -> tuple[Citation, ...]:
        """The sources that support the text, in the provider's order (live views)."""
        return tuple(Citation._wrap(item) for item in self._pb.text.citations)

    @property
    def logprobs(self) -> tuple[TokenLogprob, ...]:
        """The log probabilities of the text's tokens, in order; empty when not requested."""
        return tuple(TokenLogprob._wrap(item) for item in self._pb.text.logprobs)


class _MediaContent(ContentBase):
    """Shared reading of the ``source`` oneof of image, audio and document blocks."""

    __slots__ = ()

    def _arm_pb(self) -> Any:
        return getattr(self._pb, self._ARM or "")

    @property
    def data(self) -> bytes | None:
        """The inline bytes, or None when the source is a URL or a file id."""
        arm = self._arm_pb()
        return arm.data if arm.WhichOneof("source") == "data" else None

    @property
    def url(self) -> str | None:
        """The URL, or None when the source is not a URL."""
        arm = self._arm_pb()
        return arm.url if arm.WhichOneof("source") == "url" else None

    @property
    def file_id(self) -> str | None:
        """The provider file id, or None when the source is not a file id."""
        arm = self._arm_pb()
        return arm.file_id if arm.WhichOneof("source") == "file_id" else None

    @property
    def media_type(self) -> str:
        """The MIME type, or ``""`` when unknown (allowed for URLs and file ids)."""
        return str(self._arm_pb().media_type)

    def to_base64(self) -> list[tuple[str, str]]:
        """``[(base64, media_type)]``; a URL gives ``[(url, "")]`` as in the seed."""
        arm = self._arm_pb()
        source = arm.WhichOneof("source")
        if source == "data":
            return [(_media.encode_base64(arm.data), arm.media_type)]
        if source == "url":
            return [(arm.url, "")]
        raise MediaError(f"{type(self).__name__} refers to provider file {arm.file_id!r}: it has no bytes to encode")


def _is_data_url(value: str) -> bool:
    return value[:5].lower() == "data:"


def _resolve_str_source(value: str, what: str) -> tuple[str, Any]:
    """Classify a string source: ('url', url) or ('data', (mime, bytes)) or ('base64', text)."""
    if _is_data_url(value):
        return "data", _media.parse_data_url(value, what)
    if _URL.match(value):
        return "url", value
    return "base64", value


_Source: TypeAlias = tuple[str, Any, str]
"""One image or clip of a block: (``"data"`` | ``"url"`` | ``"file_id"``, the bytes or text, media type)."""


def _literal_type(value: Any, expected: str) -> None:
    """The seed's dataclasses have a ``type`` field fixed to their literal; accept it, refuse another."""
    if value != expected:
        raise ValidationError.single("type", "type", f"expected {expected!r}, got {preview(value)}")


def _items(single: Any, many: Any, field: str, item_types: tuple[type, ...]) -> tuple[list[Any], bool]:
    """The items given positionally (one, or a list) or as the seed's list keyword; (items, given as a list)."""
    if single is not None and many is not None:
        raise ValidationError.single(field, "exclusive", f"give one item positionally or the {field} list, not both")
    if many is None and (single is None or isinstance(single, item_types) or not isinstance(single, (list, tuple))):
        if single is None:
            raise ValidationError.single(field, "min_items", f"the block needs at least one item in {field}")
        return [single], False
    items = single if many is None else many
    if not isinstance(items, (list, tuple)):
        raise ValidationError.single(field, "type", f"expected a list, got {type(items).__name__}")
    if not items:
        raise ValidationError.single(field, "min_items", f"the block needs at least one item in {field}")
    return list(items), True


def _item_error(exc: ValidationError | MediaError, field: str, index: int, own: str) -> ValidationError | MediaError:
    """The error of one list item, its path naming the item (``images[2]``, ``images[2].media_type``)."""
    where = f"{field}[{index}]"
    if isinstance(exc, MediaError):
        return MediaError(f"{where}: {exc}")
    return ValidationError(
        [
            Violation(where if v.field in ("", own) else f"{where}.{v.field}", v.rule_id, v.message)
            for v in exc.violations
        ],
        "value",
    )


class _MultiMediaContent(_MediaContent):
    """Image and audio blocks: one item in the ``source`` oneof, the block's further items in a repeated field."""

    __slots__ = ()
    _MORE: ClassVar[str] = ""
    _ITEMS: ClassVar[str] = ""  # the seed's name for the list: "images", "audio"

    def _sources(self) -> list[_Source]:
        arm = self._arm_pb()
        found: list[_Source] = []
        for item in (arm, *getattr(arm, self._MORE)):
            kind = item.WhichOneof("source")
            found.append((kind or "", getattr(item, kind) if kind else b"", item.media_type))
        return found

    def _fill(self, arm: Any, sources: list[_Source]) -> None:
        (kind, value, mime), *rest = sources
        setattr(arm, kind, value)
        arm.media_type = mime
        more = getattr(arm, self._MORE)
        for kind, value, mime in rest:
            item = more.add(media_type=mime)
            setattr(item, kind, value)

    def _collect(
        self,
        single: Any,
        many: Any,
        media_type: str | None,
        item_types: tuple[type, ...],
        resolve: Callable[[Any, str | None], _Source],
    ) -> list[_Source]:
        items, listed = _items(single, many, self._ITEMS, item_types)
        own = self._ITEMS if self._ITEMS == "audio" else "image"
        sources: list[_Source] = []
        for index, item in enumerate(items):
            if isinstance(item, type(self)):
                sources.extend(item._sources())
                continue
            try:
                sources.append(resolve(item, media_type))
            except (ValidationError, MediaError) as exc:
                if not listed:
                    raise
                raise _item_error(exc, self._ITEMS, index, own) from None
        return sources

    @property
    def count(self) -> int:
        """How many images (or clips) the block holds."""
        return 1 + len(getattr(self._arm_pb(), self._MORE))

    def _items_view(self) -> list[Any]:
        out: list[Any] = []
        for piece, (kind, value, _) in zip(self.split(), self._sources(), strict=True):
            out.append(piece if kind == "file_id" else value)
        return out

    def to_base64(self) -> list[tuple[str, str]]:
        """One ``(base64, media_type)`` per item, as the seed gives; a URL gives ``(url, "")``."""
        out = []
        for index, (kind, value, mime) in enumerate(self._sources()):
            if kind == "data":
                out.append((_media.encode_base64(value), mime))
            elif kind == "url":
                out.append((value, ""))
            else:
                where = type(self).__name__ if self.count == 1 else f"{self._ITEMS}[{index}]"
                raise MediaError(f"{where} refers to provider file {value!r}: it has no bytes to encode")
        return out

    def split(self) -> list[Self]:
        """One single-item block per item, in order (how provider formats, one item a block, take them)."""
        if self.count == 1:
            return [self]
        pieces = []
        for source in self._sources():
            block = type(self).__new__(type(self))
            arm = type(self._arm_pb())()
            self._copy_block_fields(arm)
            block._fill(arm, [source])
            block._pb = content_pb2.Content(**{self._ARM or "": arm})
            pieces.append(block)
        return pieces

    def _copy_block_fields(self, arm: Any) -> None:
        """Fields of the block that every item shares (the image detail)."""


def _image_source(image: Any, media_type: str | None) -> _Source:
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        return "data", data, _media.inspect_image(data, media_type)
    if _media.is_pil_image(image):
        data, mime = _media.encode_pil(image)
        return "data", data, media_type or mime
    if isinstance(image, str):
        check_utf8(image, "image")
        kind, value = _resolve_str_source(image, "image")
        if kind == "url":
            return "url", value, media_type if media_type is not None else _media.guess_from_path(value, "image/")
        hint = None
        if kind == "data":
            declared, data = value
            hint = declared if declared.startswith("image/") else None
        else:
            data = _media.decode_base64(value, "image")
        return "data", data, _media.inspect_image(data, media_type, hint)
    raise ValidationError.single(
        "image", "type", f"expected a URL, base64 str, bytes or PIL image, got {type(image).__name__}"
    )


class ImageContent(_MultiMediaContent):
    """A block of one or more images: the ``image`` arm (``agentmsg.v1.ImageContent``).

    As in the seed, ``ImageContent(images=[...])`` holds one or more images, and
    ``ImageContent(image)`` one. Each image may be:

    - a URL string (``https://...``, any ``scheme://``): kept as a URL;
    - a ``data:`` URL: decoded to bytes;
    - any other string: base64, decoded, the MIME type sniffed from the bytes;
    - ``bytes``: JPEG, PNG, GIF or WEBP by magic bytes (or any format Pillow
      identifies);
    - a PIL ``Image.Image``: encoded in its own format (PNG when it has none);
    - an :class:`ImageContent`: its images, in order.

    Bytes are checked with Pillow's header reader: unknown formats, and images
    over ``PIL.Image.MAX_IMAGE_PIXELS`` (decompression bombs), raise
    :class:`~agentmsg.MediaError`; an error about one item of the list names it
    (``images[2]: invalid base64 ...``). An explicit ``media_type`` overrides
    sniffing for every inline image; ``detail`` applies to every image.

    :attr:`data`, :attr:`url`, :attr:`file_id` and :attr:`media_type` read the
    first image; :attr:`images`, :meth:`to_base64` and :meth:`split` all of them.
    """

    __slots__ = ()
    __match_args__ = ("data", "url", "media_type", "detail")
    _ARM = "image"
    _MORE = "more_images"
    _ITEMS = "images"

    def __init__(
        self,
        image: str | bytes | bytearray | memoryview | Image.Image | ImageContent | Sequence[Any] | None = None,
        *,
        images: Sequence[str | bytes | Image.Image | ImageContent] | None = None,
        media_type: str | None = None,
        detail: ImageDetail | str | None = None,
        type: str = "image",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "image")
        if media_type is not None:
            _expect(media_type, str, "media_type")
        arm = content_pb2.ImageContent(detail=detail_to_pb(detail))
        sources = self._collect(
            image, images, media_type, (str, bytes, bytearray, memoryview, ImageContent), _image_source
        )
        self._fill(arm, sources)
        self._pb = content_pb2.Content(image=arm)
        _validation.ensure(self._pb)

    def _copy_block_fields(self, arm: Any) -> None:
        arm.detail = self._pb.image.detail

    @classmethod
    def from_file(
        cls, path: str | Path, *, media_type: str | None = None, detail: ImageDetail | str | None = None
    ) -> ImageContent:
        """Read an image file (MIME type from its bytes)."""
        return cls(_media.read_file(path, "image"), media_type=media_type, detail=detail)

    @classmethod
    def from_url(
        cls, url: str, *, media_type: str | None = None, detail: ImageDetail | str | None = None
    ) -> ImageContent:
        """An image by URL; the media type is guessed from the path when None (``""``: unknown)."""
        _expect(url, str, "url")
        if not _URL.match(url) and not _is_data_url(url):
            raise ValidationError.single("url", "string.uri", f"not an absolute URL: {url!r}")
        return cls(url, media_type=media_type, detail=detail)

    @classmethod
    def from_base64(
        cls, data: str, *, media_type: str | None = None, detail: ImageDetail | str | None = None
    ) -> ImageContent:
        """An image from base64 text."""
        _expect(data, str, "data")
        return cls(_media.decode_base64(data, "image"), media_type=media_type, detail=detail)

    @classmethod
    def from_file_id(
        cls, file_id: str, *, media_type: str = "", detail: ImageDetail | str | None = None
    ) -> ImageContent:
        """An image already uploaded to the provider's file store."""
        _expect(file_id, str, "file_id")
        _expect(media_type, str, "media_type")
        block = cls.__new__(cls)
        block._pb = content_pb2.Content(
            image=content_pb2.ImageContent(file_id=file_id, media_type=media_type, detail=detail_to_pb(detail))
        )
        _validation.ensure(block._pb)
        return block

    @property
    def images(self) -> list[bytes | str | ImageContent]:
        """The images, as the seed's ``images`` list: bytes for inline images, the URL for URL images.

        An image held as a provider file id (which the seed has no form for)
        comes as a one-image :class:`ImageContent`.
        """
        return self._items_view()

    @property
    def detail(self) -> ImageDetail | None:
        """The requested detail, or None when not stated."""
        return _DETAIL_FROM_PB.get(self._pb.image.detail)


def _audio_source(audio: Any, media_type: str | None) -> _Source:
    if isinstance(audio, (bytes, bytearray, memoryview)):
        data = bytes(audio)
    elif isinstance(audio, str):
        check_utf8(audio, "audio")
        if audio.startswith("file:"):
            data = _media.read_file(audio[len("file:") :], "audio")
        else:
            kind, value = _resolve_str_source(audio, "audio")
            if kind == "url":
                return (
                    "url",
                    value,
                    media_type if media_type is not None else _media.guess_from_path(value, "audio/"),
                )
            if kind == "data":
                declared, data = value
                media_type = media_type or (declared if declared.startswith("audio/") else None)
            else:
                data = _media.decode_base64(value, "audio")
    else:
        raise ValidationError.single(
            "audio", "type", f"expected bytes, a base64 str, a URL or 'file:<path>', got {type(audio).__name__}"
        )
    if not data:
        raise MediaError("audio data is empty")
    return "data", data, media_type or _media.sniff_audio(data)


class AudioContent(_MultiMediaContent):
    """A block of one or more audio clips: the ``audio`` arm (``agentmsg.v1.AudioContent``).

    As in the seed, ``AudioContent(audio=[...])`` holds one or more clips, and
    ``AudioContent(clip)`` one. Each clip may be bytes, a base64 string, a
    ``data:`` or other URL, ``"file:<path>"`` (read here: a library-side
    convenience that the decoders never use), or an :class:`AudioContent`
    (its clips). The MIME type is sniffed from the bytes: MP3 (``ID3`` or an
    MPEG frame sync), Ogg, FLAC, WAV; unknown bytes default to ``audio/mpeg``
    as in the seed. An error about one item of the list names it
    (``audio[1]: cannot read audio file ...``).

    :attr:`data`, :attr:`url`, :attr:`file_id` and :attr:`media_type` read the
    first clip; :attr:`audio`, :meth:`to_base64` and :meth:`split` all of them.
    """

    __slots__ = ()
    __match_args__ = ("data", "url", "media_type")
    _ARM = "audio"
    _MORE = "more_clips"
    _ITEMS = "audio"

    def __init__(
        self,
        clip: str | bytes | bytearray | memoryview | AudioContent | Sequence[Any] | None = None,
        *,
        audio: Sequence[bytes | str | AudioContent] | None = None,
        media_type: str | None = None,
        type: str = "audio",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "audio")
        if media_type is not None:
            _expect(media_type, str, "media_type")
        arm = content_pb2.AudioContent()
        self._fill(
            arm,
            self._collect(clip, audio, media_type, (str, bytes, bytearray, memoryview, AudioContent), _audio_source),
        )
        self._pb = content_pb2.Content(audio=arm)
        _validation.ensure(self._pb)

    @classmethod
    def from_file(cls, path: str | Path, *, media_type: str | None = None) -> AudioContent:
        """Read an audio file (MIME type from its bytes)."""
        return cls(_media.read_file(path, "audio"), media_type=media_type)

    @classmethod
    def from_base64(cls, data: str, mime_type: str | None = None, *, media_type: str | None = None) -> AudioContent:
        """Audio from base64 text (``mime_type`` is the seed's name for ``media_type``)."""
        _expect(data, str, "data")
        return cls(_media.decode_base64(data, "audio"), media_type=media_type or mime_type)

    @classmethod
    def from_file_id(cls, file_id: str, *, media_type: str = "") -> AudioContent:
        """Audio already uploaded to the provider's file store."""
        _expect(file_id, str, "file_id")
        _expect(media_type, str, "media_type")
        block = cls.__new__(cls)
        block._pb = content_pb2.Content(audio=content_pb2.AudioContent(file_id=file_id, media_type=media_type))
        _validation.ensure(block._pb)
        return block

    @classmethod
    def from_url(cls, url: str, *, media_type: str | None = None) -> AudioContent:
        """Audio by URL; the media type is guessed from the path when None (``""``: unknown).

        A URL is kept as a URL, never read: ``file://`` URLs too (only the
        constructor's ``"file:<path>"`` strings and :meth:`from_file` read files).
        """
        _expect(url, str, "url")
        if not _URL.match(url) and not _is_data_url(url):
            raise ValidationError.single("url", "string.uri", f"not an absolute URL: {url!r}")
        if _is_data_url(url):
            return cls(url, media_type=media_type)
        if media_type is not None:
            _expect(media_type, str, "media_type")
        block = cls.__new__(cls)
        guessed = media_type if media_type is not None else _media.guess_from_path(url, "audio/")
        block._pb = content_pb2.Content(audio=content_pb2.AudioContent(url=url, media_type=guessed))
        _validation.ensure(block._pb)
        return block

    @property
    def audio(self) -> list[bytes | str | AudioContent]:
        """The clips, as the seed's ``audio`` list: bytes for inline clips, the URL for URL clips.

        A clip held as a provider file id comes as a one-clip :class:`AudioContent`.
        """
        return self._items_view()


class DocumentContent(_MediaContent):
    """A document or file: the ``document`` arm (``agentmsg.v1.DocumentContent``).

    ``DocumentContent(document)`` takes bytes (PDF by magic bytes, else UTF-8
    text; pass ``media_type`` for anything else) or a URL. Use
    :meth:`from_text` for text and :meth:`from_base64` for base64;
    :meth:`with_context` adds text about the document for the model.
    """

    __slots__ = ()
    __match_args__ = ("data", "url", "media_type", "filename")
    _ARM = "document"

    def __init__(
        self,
        document: str | bytes | bytearray | memoryview,
        *,
        media_type: str | None = None,
        filename: str = "",
        title: str = "",
    ) -> None:
        _expect(filename, str, "filename")
        _expect(title, str, "title")
        if media_type is not None:
            _expect(media_type, str, "media_type")
        arm = content_pb2.DocumentContent(filename=filename, title=title)
        if isinstance(document, (bytes, bytearray, memoryview)):
            data = bytes(document)
        elif isinstance(document, str):
            kind, value = _resolve_str_source(document, "document")
            if kind == "base64":
                raise ValidationError.single(
                    "document", "type", "a str must be a URL; use DocumentContent.from_text or from_base64"
                )
            if kind == "url":
                arm.url = value
                arm.media_type = media_type if media_type is not None else _media.guess_from_path(value, "")
                self._pb = content_pb2.Content(document=arm)
                _validation.ensure(self._pb)
                return
            declared, data = value
            media_type = media_type or declared or None
        else:
            raise ValidationError.single("document", "type", f"expected bytes or a URL, got {type(document).__name__}")
        if not data:
            raise MediaError("document data is empty")
        arm.data = data
        sniffed = media_type or _media.sniff_document(data)
        if not sniffed:
            raise MediaError("unknown document format (neither PDF nor UTF-8 text); pass media_type")
        arm.media_type = sniffed
        self._pb = content_pb2.Content(document=arm)
        _validation.ensure(self._pb)

    @classmethod
    def from_file(cls, path: str | Path, *, media_type: str | None = None, title: str = "") -> DocumentContent:
        """Read a file: PDF by its bytes, else the type its extension names, else UTF-8 text."""
        data = _media.read_file(path, "document")
        if media_type is None and not data.startswith(b"%PDF-"):
            media_type = _media.guess_from_path(str(path), "") or None
        media_type = media_type or _media.sniff_document(data)
        return cls(data, media_type=media_type, filename=Path(path).name, title=title)

    @classmethod
    def from_text(
        cls, text: str, *, media_type: str = "text/plain", filename: str = "", title: str = ""
    ) -> DocumentContent:
        """A text document."""
        _expect(text, str, "text")
        return cls(text.encode("utf-8"), media_type=media_type, filename=filename, title=title)

    @classmethod
    def from_base64(
        cls, data: str, *, media_type: str | None = None, filename: str = "", title: str = ""
    ) -> DocumentContent:
        """A document from base64 text."""
        _expect(data, str, "data")
        return cls(_media.decode_base64(data, "document"), media_type=media_type, filename=filename, title=title)

    @classmethod
    def from_url(
        cls, url: str, *, media_type: str | None = None, filename: str = "", title: str = ""
    ) -> DocumentContent:
        """A document by URL."""
        _expect(url, str, "url")
        if not _URL.match(url) and not _is_data_url(url):
            raise ValidationError.single("url", "string.uri", f"not an absolute URL: {url!r}")
        return cls(url, media_type=media_type, filename=filename, title=title)

    @classmethod
    def from_file_id(
        cls, file_id: str, *, media_type: str = "", filename: str = "", title: str = ""
    ) -> DocumentContent:
        """A document already uploaded to the provider's file store."""
        _expect(file_id, str, "file_id")
        _expect(media_type, str, "media_type")
        _expect(filename, str, "filename")
        _expect(title, str, "title")
        block = cls.__new__(cls)
        block._pb = content_pb2.Content(
            document=content_pb2.DocumentContent(file_id=file_id, media_type=media_type, filename=filename, title=title)
        )
        _validation.ensure(block._pb)
        return block

    @property
    def filename(self) -> str:
        """The file name, or ``""``."""
        return self._pb.document.filename

    @property
    def title(self) -> str:
        """The title shown to the model, or ``""``."""
        return self._pb.document.title

    @property
    def context(self) -> str:
        """Text about the document given to the model with it (Anthropic ``context``), or ``""``."""
        return self._pb.document.context

    def with_context(self, context: str) -> DocumentContent:
        """A copy of the block with ``context``: text about the document, given to the model with it."""
        _expect(context, str, "context")
        block = self.copy()
        block._pb.document.context = context
        return block

    def text(self) -> str:
        """The document decoded as UTF-8 text (for ``text/*`` documents)."""
        data = self.data
        if data is None:
            raise MediaError("the document is a reference (URL or file id), not inline text")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MediaError(f"the document ({self.media_type}) is not UTF-8 text: {exc}") from None


class ThinkingContent(ContentBase):
    """Reasoning in clear text with its signature: the ``thinking`` arm."""

    __slots__ = ()
    __match_args__ = ("content", "signature")
    _ARM = "thinking"

    def __init__(
        self,
        content: str = "",
        signature: str = "",
        *,
        type: str = "thinking",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "thinking")
        _expect(content, str, "content")
        _expect(signature, str, "signature")
        self._pb = content_pb2.Content(thinking=content_pb2.ThinkingContent(text=content, signature=signature))

    @property
    def content(self) -> str:
        """The reasoning text."""
        return self._pb.thinking.text

    @property
    def signature(self) -> str:
        """The provider's opaque signature, or ``""``."""
        return self._pb.thinking.signature


class RedactedThinkingContent(ContentBase):
    """Encrypted reasoning to send back unchanged: the ``redacted_thinking`` arm."""

    __slots__ = ()
    __match_args__ = ("data",)
    _ARM = "redacted_thinking"

    def __init__(self, data: str) -> None:
        _expect(data, str, "data")
        self._pb = content_pb2.Content(redacted_thinking=content_pb2.RedactedThinkingContent(data=data))
        _validation.ensure(self._pb)

    @property
    def data(self) -> str:
        """The opaque encrypted payload."""
        return self._pb.redacted_thinking.data


# Made once: json.dumps with these options builds an encoder per call.
_COMPACT_JSON = _jsontext.compact_encoder(allow_nan=False)


def dump_arguments(args: Mapping[str, Any], field: str = "args") -> str:
    """Compact JSON text for arguments given as a mapping."""
    if not isinstance(args, Mapping):
        raise ValidationError.single(field, "type", f"expected a dict of arguments, got {type(args).__name__}")
    try:
        text = _COMPACT_JSON(args)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError.single(field, "json", f"arguments are not JSON-serialisable: {exc}") from None
    check_utf8(text, field)
    return text


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse JSON object text: (value, None) or (None, the reason it is not one)."""
    if text.strip() == "":
        return {}, None
    try:
        value = _jsontext.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__} is not an object"
    return value, None


class ToolCallContent(ContentBase):
    """A request to run a tool: the ``tool_call`` arm (``agentmsg.v1.ToolCallContent``).

    The argument text is kept verbatim in :attr:`arguments`; :attr:`args` parses
    it (and raises :class:`~agentmsg.ToolArgumentsError` when it is not a JSON
    object). Give ``args`` (a dict, written as compact JSON) or ``arguments``
    (text, kept as is), not both. ``provider_extra`` keeps the provider
    block's keys that no field holds (Anthropic ``caller``), as a
    :class:`ProviderContent` of the block's ``type`` and those keys.
    """

    __slots__ = ()
    __match_args__ = ("id", "name", "arguments")
    _ARM = "tool_call"

    def __init__(
        self,
        id: str = "",  # noqa: A002 - the seed's field name
        name: str = "",
        args: Mapping[str, Any] | None = None,
        *,
        kind: ToolKind | str | None = None,
        arguments: str | None = None,
        index: int = 0,
        signature: str = "",
        server_name: str = "",
        metadata: Mapping[str, Any] | None = None,
        provider_extra: ProviderContent | None = None,
        requires_approval: bool = False,
        type: str = "tool_call",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "tool_call")
        _expect(requires_approval, bool, "requires_approval")
        _expect(id, str, "id")
        _expect(name, str, "name")
        _expect(index, int, "index")
        check_int32(index, "index")
        _expect(signature, str, "signature")
        _expect(server_name, str, "server_name")
        if args is not None and arguments is not None:
            raise ValidationError.single("arguments", "exclusive", "give args (a dict) or arguments (text), not both")
        if arguments is not None:
            _expect(arguments, str, "arguments")
            text = arguments
        else:
            text = dump_arguments(args if args is not None else {})
        # Built in place in its Content (no arm made apart and copied in).
        pb = content_pb2.Content()
        arm = pb.tool_call
        arm.id = id
        arm.name = name
        arm.kind = kind_to_pb(kind)
        arm.arguments = text
        arm.index = index
        arm.signature = signature
        arm.server_name = server_name
        arm.requires_approval = requires_approval
        if metadata is not None:
            _struct.fill_struct(arm.metadata, metadata, "metadata")
        extra = _original_pb(provider_extra, "provider_extra")
        if extra is not None:
            arm.provider_extra.CopyFrom(extra)
        self._pb = pb
        _validation.ensure(pb)

    @property
    def id(self) -> str:
        """The provider's call id."""
        return self._pb.tool_call.id

    @property
    def name(self) -> str:
        """The tool name."""
        return self._pb.tool_call.name

    @property
    def kind(self) -> ToolKind | None:
        """What the tool does: None when not stated (the seed's default), ``UNKNOWN`` for a newer peer's kind."""
        return kind_from_pb(self._pb.tool_call.kind)

    @property
    def arguments(self) -> str:
        """The argument text exactly as the model wrote it."""
        return self._pb.tool_call.arguments

    @property
    def args(self) -> dict[str, Any]:
        """The parsed arguments (``{}`` for empty text). Raises when not a JSON object."""
        value, error = parse_json_object(self._pb.tool_call.arguments)
        if value is None:
            call = self._pb.tool_call
            raise ToolArgumentsError(call.id, call.name, error or "", call.arguments)
        return value

    @property
    def arguments_error(self) -> str | None:
        """Why the argument text is not a JSON object, or None when it is."""
        return parse_json_object(self._pb.tool_call.arguments)[1]

    @property
    def index(self) -> int:
        """Position among the message's tool calls."""
        return self._pb.tool_call.index

    @property
    def signature(self) -> str:
        """Opaque provider signature on the call (Gemini), or ``""``."""
        return self._pb.tool_call.signature

    @property
    def server_name(self) -> str:
        """The MCP server hosting the tool, or ``""``."""
        return self._pb.tool_call.server_name

    @property
    def metadata(self) -> dict[str, Any]:
        """Application data (never sent to a model)."""
        return _struct.struct_to_dict(self._pb.tool_call.metadata)

    @property
    def requires_approval(self) -> bool:
        """The call waits for a person's decision (a :class:`ToolApprovalContent`) before it runs."""
        return self._pb.tool_call.requires_approval

    @property
    def provider_extra(self) -> ProviderContent | None:
        """The provider block's keys the typed fields do not hold (Anthropic ``caller``), or None."""
        call = self._pb.tool_call
        if not call.HasField("provider_extra"):
            return None
        block = ProviderContent.__new__(ProviderContent)
        block._pb = content_pb2.Content(provider=call.provider_extra)
        return block


class ToolResultContent(ContentBase):
    """The outcome of a tool run: the ``tool_result`` arm (``agentmsg.v1.ToolResultContent``).

    As in the seed, :attr:`content` is the result's text. A result may also
    carry images, audio and documents, and provider blocks kept verbatim
    (Anthropic ``tool_reference``): give ``content`` a list of blocks, and
    read them all from :attr:`blocks`.
    ``metadata``, ``terminate`` and ``terminate_message`` are for the
    application and never reach a model.
    """

    __slots__ = ()
    __match_args__ = ("id", "content", "is_error")
    _ARM = "tool_result"

    def __init__(
        self,
        id: str = "",  # noqa: A002 - the seed's field name
        content: str | Sequence[TextContent | ImageContent | AudioContent | DocumentContent | ProviderContent] = "",
        is_error: bool = False,
        metadata: Mapping[str, Any] | None = None,
        terminate: bool = False,
        *,
        name: str = "",
        terminate_message: str = "",
        index: int = 0,
        type: str = "tool_result",  # noqa: A002 - the seed's field
    ) -> None:
        _literal_type(type, "tool_result")
        _expect(id, str, "id")
        _expect(is_error, bool, "is_error")
        _expect(name, str, "name")
        _expect(terminate, bool, "terminate")
        _expect(terminate_message, str, "terminate_message")
        _expect(index, int, "index")
        check_int32(index, "index")
        arm = content_pb2.ToolResultContent(
            id=id, name=name, is_error=is_error, terminate=terminate, terminate_message=terminate_message, index=index
        )
        if isinstance(content, str):
            check_utf8(content, "content")
            if content:
                arm.content.add().text.text = content
        elif isinstance(content, Sequence):
            for i, block in enumerate(content):
                if not isinstance(block, ContentBase):
                    raise ValidationError.single(
                        f"content[{i}]", "type", f"expected a content block, got {block.__class__.__name__}"
                    )
                arm.content.append(block._pb)
        else:
            raise ValidationError.single(
                "content", "type", f"expected str or a list of blocks, got {content.__class__.__name__}"
            )
        if metadata is not None:
            _struct.fill_struct(arm.metadata, metadata, "metadata")
        self._pb = content_pb2.Content(tool_result=arm)
        _validation.ensure(self._pb)

    @classmethod
    def error(cls, id: str, message: str, *, name: str = "") -> ToolResultContent:  # noqa: A002
        """A failed result with an error message."""
        return cls(id, message, is_error=True, name=name)

    @property
    def id(self) -> str:
        """The id of the tool call answered."""
        return self._pb.tool_result.id

    @property
    def name(self) -> str:
        """The tool name, or ``""``."""
        return self._pb.tool_result.name

    @property
    def content(self) -> str:
        """The result's text, as the seed's ``content: str``: the text blocks joined."""
        blocks = self._pb.tool_result.content
        return "".join([block.text.text for block in blocks if block.WhichOneof("kind") == "text"])

    @property
    def text(self) -> str:
        """The same as :attr:`content`: the text blocks joined."""
        return self.content

    @property
    def blocks(self) -> tuple[Content, ...]:
        """Every block of the result, in order: text, image, audio, document."""
        return tuple(content_from_proto(block) for block in self._pb.tool_result.content)

    @property
    def is_error(self) -> bool:
        """True when the tool failed."""
        return self._pb.tool_result.is_error

    @property
    def metadata(self) -> dict[str, Any]:
        """Application data (never sent to a model)."""
        return _struct.struct_to_dict(self._pb.tool_result.metadata)

    @property
    def terminate(self) -> bool:
        """Hint that the agent loop should stop (never sent to a model)."""
        return self._pb.tool_result.terminate

    @property
    def terminate_message(self) -> str:
        """Why the loop should stop (never sent to a model)."""
        return self._pb.tool_result.terminate_message

    @property
    def index(self) -> int:
        """Position of the answered call among the message's tool calls."""
        return self._pb.tool_result.index


class ProviderContent(ContentBase):
    """A provider block agentmsg has no kind for, kept verbatim: the ``provider`` arm.

    Every reader keeps a block it has no kind for this way by default, and
    writers send it back only to the provider it came from. The same form is
    the ``original`` of hosted tool blocks and citations.
    """

    __slots__ = ()
    __match_args__ = ("provider", "block_type", "json")
    _ARM = "provider"

    def __init__(self, provider: str, block_type: str, json_text: str) -> None:
        _expect(provider, str, "provider")
        _expect(block_type, str, "type")
        _expect(json_text, str, "json")
        value, error = parse_json_object(json_text)
        if value is None or not json_text.strip():
            raise ValidationError.single("json", "json", f"the block must be a JSON object: {error or 'empty'}")
        self._pb = content_pb2.Content(
            provider=content_pb2.ProviderContent(provider=provider, type=block_type, json=json_text)
        )
        _validation.ensure(self._pb)

    @classmethod
    def from_block(cls, provider: str, block: Mapping[str, Any]) -> ProviderContent:
        """Keep a provider's block (a JSON object) verbatim; its ``type`` key names it."""
        kind = block.get("type") if isinstance(block, Mapping) else None
        return cls(provider, kind if isinstance(kind, str) and kind else "unknown", dump_arguments(block, "block"))

    @property
    def provider(self) -> str:
        """The provider whose format the block is in."""
        return self._pb.provider.provider

    @property
    def block_type(self) -> str:
        """The block's type in that format."""
        return self._pb.provider.type

    @property
    def json(self) -> str:
        """The block as JSON text, verbatim."""
        return self._pb.provider.json

    def block(self) -> dict[str, Any]:
        """The block as a dict."""
        value, _ = parse_json_object(self._pb.provider.json)
        return value or {}


class ToolApprovalContent(ContentBase):
    """A person's decision on a tool call that waits for approval: the ``approval`` arm.

    ``agentmsg.v1.ToolApprovalContent``, carried by user messages. ``call_id``
    names the tool call (or hosted call, or approval request) decided;
    ``decision`` is approved or denied. ``decided_at`` is a datetime (a naive one
    is UTC) or None when not known. ``original`` keeps the provider's item
    (OpenAI Responses ``mcp_approval_response``) for an exact round trip.
    Build one with :meth:`approve` or :meth:`deny`.
    """

    __slots__ = ()
    __match_args__ = ("call_id", "decision", "reason")
    _ARM = "approval"

    def __init__(
        self,
        call_id: str,
        decision: ToolApprovalDecision | str,
        reason: str = "",
        *,
        decided_by: str = "",
        decided_at: datetime | None = None,
        original: ProviderContent | None = None,
    ) -> None:
        _expect(call_id, str, "call_id")
        _expect(reason, str, "reason")
        _expect(decided_by, str, "decided_by")
        arm = content_pb2.ToolApprovalContent(
            call_id=call_id,
            decision=_DECISION_TO_PB[_enum(ToolApprovalDecision, decision, "decision")],
            reason=reason,
            decided_by=decided_by,
        )
        if decided_at is not None:
            _expect(decided_at, datetime, "decided_at")
            try:
                arm.decided_at.FromDatetime(decided_at)
            except (ValueError, OverflowError) as exc:
                raise ValidationError.single(
                    "decided_at", "timestamp.range", f"not a representable time: {exc}"
                ) from None
        original_pb = _original_pb(original)
        if original_pb is not None:
            arm.original.CopyFrom(original_pb)
        self._pb = content_pb2.Content(approval=arm)
        _validation.ensure(self._pb)

    @classmethod
    def approve(
        cls, call_id: str, reason: str = "", *, decided_by: str = "", decided_at: datetime | None = None
    ) -> ToolApprovalContent:
        """An approval of the call ``call_id``."""
        return cls(call_id, ToolApprovalDecision.APPROVED, reason, decided_by=decided_by, decided_at=decided_at)

    @classmethod
    def deny(
        cls, call_id: str, reason: str = "", *, decided_by: str = "", decided_at: datetime | None = None
    ) -> ToolApprovalContent:
        """A denial of the call ``call_id``."""
        return cls(call_id, ToolApprovalDecision.DENIED, reason, decided_by=decided_by, decided_at=decided_at)

    @property
    def call_id(self) -> str:
        """The id of the call decided."""
        return self._pb.approval.call_id

    @property
    def decision(self) -> ToolApprovalDecision | None:
        """Approved or denied; None for a value this version does not know (a newer peer's)."""
        return _DECISION_FROM_PB.get(self._pb.approval.decision)

    @property
    def approved(self) -> bool:
        """True when the call may run."""
        return self._pb.approval.decision == content_pb2.TOOL_APPROVAL_DECISION_APPROVED

    @property
    def reason(self) -> str:
        """Why, in the person's words, or ``""``."""
        return self._pb.approval.reason

    @property
    def decided_by(self) -> str:
        """Who decided, or ``""`` when not known."""
        return self._pb.approval.decided_by

    @property
    def decided_at(self) -> datetime | None:
        """When the decision was made (timezone-aware UTC), or None when not known."""
        arm = self._pb.approval
        if not arm.HasField("decided_at"):
            return None
        return arm.decided_at.ToDatetime(tzinfo=UTC)

    @property
    def original(self) -> ProviderContent | None:
        """The provider's item, verbatim (a copy), or None for a decision made by hand."""
        return _original_block(self._pb.approval)

    def denial_text(self) -> str:
        """The text a model reads for a denied call: who denied it and why."""
        who = f" by {self.decided_by}" if self.decided_by else ""
        why = f": {self.reason}" if self.reason else ""
        return f"The tool call was denied{who}{why}"

    def denial_result(self, name: str = "") -> ToolResultContent:
        """The error tool result that answers a denied call (:meth:`denial_text`), for the model's next turn."""
        return ToolResultContent(self.call_id, self.denial_text(), is_error=True, name=name)


def _input_text(value: str | Mapping[str, Any], field: str) -> str:
    """JSON object text given as text (kept verbatim) or as a mapping (written as compact JSON)."""
    if isinstance(value, str):
        check_utf8(value, field)
        return value
    return dump_arguments(value, field)


class HostedToolCallContent(ContentBase):
    """A call of a tool the provider ran itself: the ``hosted_tool_call`` arm (``agentmsg.v1.HostedToolCallContent``).

    Web search, web fetch, code execution, file search, image generation, a
    remote MCP call... The application does not run it and does not answer
    it; the provider's outcome is a :class:`HostedToolResultContent` whose
    ``call_id`` is this ``id``. ``input`` is JSON object text, kept verbatim
    when given as text (a mapping is written as compact JSON);
    :attr:`input_value` parses it. ``original`` keeps the provider's block
    verbatim (``ProviderContent.from_block(provider, block)``) for an exact
    round trip to that provider.
    """

    __slots__ = ()
    __match_args__ = ("id", "name", "input")
    _ARM = "hosted_tool_call"

    def __init__(
        self,
        id: str = "",  # noqa: A002 - the contract's field name
        name: str = "",
        input: str | Mapping[str, Any] = "",  # noqa: A002 - the contract's field name
        *,
        kind: HostedToolKind | str | None = None,
        server: str = "",
        status: HostedToolStatus | str | None = None,
        status_raw: str = "",
        signature: str = "",
        original: ProviderContent | None = None,
    ) -> None:
        for field, value in (("id", id), ("name", name), ("server", server), ("status_raw", status_raw)):
            _expect(value, str, field)
        _expect(signature, str, "signature")
        arm = content_pb2.HostedToolCallContent(
            id=id,
            name=name,
            kind=hosted_kind_to_pb(kind),
            input=_input_text(input, "input"),
            server=server,
            status=hosted_status_to_pb(status),
            status_raw=status_raw,
            signature=signature,
        )
        original_pb = _original_pb(original)
        if original_pb is not None:
            arm.original.CopyFrom(original_pb)
        self._pb = content_pb2.Content(hosted_tool_call=arm)
        _validation.check(self._pb)

    @property
    def id(self) -> str:
        """The provider's call id, or ``""`` when it gave none."""
        return self._pb.hosted_tool_call.id

    @property
    def name(self) -> str:
        """The tool's name as the provider calls it."""
        return self._pb.hosted_tool_call.name

    @property
    def kind(self) -> HostedToolKind | None:
        """What the tool does; None when not stated, ``OTHER`` for a newer peer's kind."""
        return hosted_kind_from_pb(self._pb.hosted_tool_call.kind)

    @property
    def input(self) -> str:
        """The input as JSON object text, verbatim."""
        return self._pb.hosted_tool_call.input

    @property
    def input_value(self) -> dict[str, Any]:
        """The parsed input (``{}`` for empty text). Raises :class:`~agentmsg.ToolArgumentsError` when not an object."""
        call = self._pb.hosted_tool_call
        value, error = parse_json_object(call.input)
        if value is None:
            raise ToolArgumentsError(call.id, call.name, error or "", call.input)
        return value

    @property
    def input_error(self) -> str | None:
        """Why the input text is not a JSON object, or None when it is."""
        return parse_json_object(self._pb.hosted_tool_call.input)[1]

    @property
    def server(self) -> str:
        """The MCP server that ran the tool, or ``""`` for the provider's own tools."""
        return self._pb.hosted_tool_call.server

    @property
    def status(self) -> HostedToolStatus | None:
        """How far the call got, or None when not stated."""
        return hosted_status_from_pb(self._pb.hosted_tool_call.status)

    @property
    def status_raw(self) -> str:
        """The provider's status string, or ``""``."""
        return self._pb.hosted_tool_call.status_raw

    @property
    def signature(self) -> str:
        """Opaque provider signature on the block (Gemini), or ``""``."""
        return self._pb.hosted_tool_call.signature

    @property
    def original(self) -> ProviderContent | None:
        """The provider's block, verbatim (a copy), or None for a call built by hand."""
        return _original_block(self._pb.hosted_tool_call)


class SearchResult(ProtoWrapper[content_pb2.SearchResult]):
    """One result of a hosted search (``agentmsg.v1.SearchResult``): a web page or a file."""

    __slots__ = ()
    __match_args__ = ("url", "title", "snippet")
    _PB = content_pb2.SearchResult

    def __init__(
        self,
        url: str = "",
        title: str = "",
        snippet: str = "",
        *,
        page_age: str = "",
        encrypted_content: str = "",
        file_id: str = "",
        score: float | None = None,
    ) -> None:
        values = (
            ("url", url),
            ("title", title),
            ("snippet", snippet),
            ("page_age", page_age),
            ("encrypted_content", encrypted_content),
            ("file_id", file_id),
        )
        for field, value in values:
            _expect(value, str, field)
        pb = content_pb2.SearchResult(
            url=url,
            title=title,
            snippet=snippet,
            page_age=page_age,
            encrypted_content=encrypted_content,
            file_id=file_id,
        )
        number = _optional_float(score, "score")
        if number is not None:
            pb.score = number
        _validation.check(pb)
        self._pb = pb

    @property
    def url(self) -> str:
        """The page's URL, or ``""`` for a file."""
        return self._pb.url

    @property
    def title(self) -> str:
        """The page title or file name, or ``""``."""
        return self._pb.title

    @property
    def snippet(self) -> str:
        """The result's text as the provider returned it, or ``""``."""
        return self._pb.snippet

    @property
    def page_age(self) -> str:
        """How old the page is, as the provider wrote it, or ``""``."""
        return self._pb.page_age

    @property
    def encrypted_content(self) -> str:
        """The provider's encrypted copy of the content (send back unchanged), or ``""``."""
        return self._pb.encrypted_content

    @property
    def file_id(self) -> str:
        """The provider file the result is from, or ``""``."""
        return self._pb.file_id

    @property
    def score(self) -> float | None:
        """The provider's relevance score, or None."""
        return self._pb.score if self._pb.HasField("score") else None


class CodeExecutionFile(ProtoWrapper[content_pb2.CodeExecutionFile]):
    """A file hosted code wrote (``agentmsg.v1.CodeExecutionFile``): a provider file id, or a URL."""

    __slots__ = ()
    __match_args__ = ("file_id", "url")
    _PB = content_pb2.CodeExecutionFile

    def __init__(self, file_id: str = "", url: str = "") -> None:
        _expect(file_id, str, "file_id")
        _expect(url, str, "url")
        self._pb = content_pb2.CodeExecutionFile(file_id=file_id, url=url)

    @property
    def file_id(self) -> str:
        """The provider's file id, or ``""``."""
        return self._pb.file_id

    @property
    def url(self) -> str:
        """The file's URL, or ``""``."""
        return self._pb.url


class CodeExecutionOutput(ProtoWrapper[content_pb2.CodeExecutionOutput]):
    """What hosted code printed and wrote (``agentmsg.v1.CodeExecutionOutput``).

    ``files`` takes :class:`CodeExecutionFile` objects or file ids.
    """

    __slots__ = ()
    __match_args__ = ("stdout", "stderr", "return_code")
    _PB = content_pb2.CodeExecutionOutput

    def __init__(
        self,
        stdout: str = "",
        stderr: str = "",
        return_code: int | None = None,
        *,
        files: Sequence[CodeExecutionFile | str] = (),
        encrypted_stdout: str = "",
    ) -> None:
        _expect(stdout, str, "stdout")
        _expect(stderr, str, "stderr")
        _expect(encrypted_stdout, str, "encrypted_stdout")
        pb = content_pb2.CodeExecutionOutput(stdout=stdout, stderr=stderr, encrypted_stdout=encrypted_stdout)
        code = _optional_int(return_code, "return_code", minimum=None)
        if code is not None:
            pb.return_code = code
        given = [CodeExecutionFile(item) if isinstance(item, str) else item for item in files]
        pb.files.extend(_wrappers(given, CodeExecutionFile, "files"))
        self._pb = pb

    @property
    def stdout(self) -> str:
        """The standard output, or ``""``."""
        return self._pb.stdout

    @property
    def stderr(self) -> str:
        """The standard error, or ``""``."""
        return self._pb.stderr

    @property
    def return_code(self) -> int | None:
        """The return code, or None when not reported."""
        return self._pb.return_code if self._pb.HasField("return_code") else None

    @property
    def files(self) -> tuple[CodeExecutionFile, ...]:
        """The files the code wrote, in order."""
        return tuple(CodeExecutionFile._wrap(item) for item in self._pb.files)

    @property
    def encrypted_stdout(self) -> str:
        """The standard output in the provider's encrypted form, or ``""``."""
        return self._pb.encrypted_stdout


class WebFetchOutput(ProtoWrapper[content_pb2.WebFetchOutput]):
    """A page a hosted fetch read (``agentmsg.v1.WebFetchOutput``); its content is the result's blocks."""

    __slots__ = ()
    __match_args__ = ("url", "retrieved_at")
    _PB = content_pb2.WebFetchOutput

    def __init__(self, url: str, retrieved_at: str = "") -> None:
        _expect(url, str, "url")
        _expect(retrieved_at, str, "retrieved_at")
        self._pb = content_pb2.WebFetchOutput(url=url, retrieved_at=retrieved_at)

    @property
    def url(self) -> str:
        """The fetched URL."""
        return self._pb.url

    @property
    def retrieved_at(self) -> str:
        """When the page was read (ISO 8601), or ``""``."""
        return self._pb.retrieved_at


class HostedToolResultContent(ContentBase):
    """What a tool the provider ran returned: the ``hosted_tool_result`` arm (``agentmsg.v1.HostedToolResultContent``).

    The typed body is at most one of ``search_results`` (with the
    ``queries``), ``code_execution`` or ``web_fetch``; anything else the tool
    returned for the model is ``content``: a string (one text block) or text,
    image, audio, document and provider blocks. A failure is ``is_error``,
    with the provider's ``error_code`` and ``error_message`` when it gave them
    (either implies ``is_error``). ``original`` keeps the provider's block.
    """

    __slots__ = ()
    __match_args__ = ("call_id", "kind", "is_error")
    _ARM = "hosted_tool_result"

    def __init__(
        self,
        call_id: str = "",
        content: str | Sequence[ContentBase] = (),
        *,
        name: str = "",
        kind: HostedToolKind | str | None = None,
        is_error: bool = False,
        error_code: str | None = None,
        error_message: str | None = None,
        search_results: Sequence[SearchResult] | None = None,
        queries: Sequence[str] = (),
        code_execution: CodeExecutionOutput | None = None,
        web_fetch: WebFetchOutput | None = None,
        status: HostedToolStatus | str | None = None,
        status_raw: str = "",
        original: ProviderContent | None = None,
    ) -> None:
        for field, value in (("call_id", call_id), ("name", name), ("status_raw", status_raw)):
            _expect(value, str, field)
        _expect(is_error, bool, "is_error")
        arm = content_pb2.HostedToolResultContent(
            call_id=call_id,
            name=name,
            kind=hosted_kind_to_pb(kind),
            is_error=is_error or error_code is not None or error_message is not None,
            status=hosted_status_to_pb(status),
            status_raw=status_raw,
        )
        if error_code is not None or error_message is not None:
            _expect(error_code or "", str, "error_code")
            _expect(error_message or "", str, "error_message")
            arm.error.code, arm.error.message = error_code or "", error_message or ""
        bodies = [
            name
            for name, value in (
                ("search_results", search_results if search_results is not None else queries or None),
                ("code_execution", code_execution),
                ("web_fetch", web_fetch),
            )
            if value is not None
        ]
        if len(bodies) > 1:
            raise ValidationError.single(
                "body", "exclusive", f"give one of search_results, code_execution or web_fetch, not {bodies}"
            )
        if search_results is not None or queries:
            if isinstance(queries, str) or not isinstance(queries, Sequence):
                raise ValidationError.single("queries", "type", f"expected a list of str, got {type(queries).__name__}")
            for i, query in enumerate(queries):
                _expect(query, str, f"queries[{i}]")
            arm.search_results.SetInParent()
            arm.search_results.results.extend(_wrappers(search_results or (), SearchResult, "search_results"))
            arm.search_results.queries.extend(queries)
        if code_execution is not None:
            if not isinstance(code_execution, CodeExecutionOutput):
                raise ValidationError.single(
                    "code_execution", "type", f"expected CodeExecutionOutput, got {type(code_execution).__name__}"
                )
            arm.code_execution.CopyFrom(code_execution._pb)
        if web_fetch is not None:
            if not isinstance(web_fetch, WebFetchOutput):
                raise ValidationError.single(
                    "web_fetch", "type", f"expected WebFetchOutput, got {type(web_fetch).__name__}"
                )
            arm.web_fetch.CopyFrom(web_fetch._pb)
        _fill_blocks(arm.content, content)
        original_pb = _original_pb(original)
        if original_pb is not None:
            arm.original.CopyFrom(original_pb)
        self._pb = content_pb2.Content(hosted_tool_result=arm)
        _validation.check(self._pb)

    @property
    def call_id(self) -> str:
        """The id of the hosted call answered, or ``""`` when the provider gave none."""
        return self._pb.hosted_tool_result.call_id

    @property
    def name(self) -> str:
        """The tool's name, or ``""``."""
        return self._pb.hosted_tool_result.name

    @property
    def kind(self) -> HostedToolKind | None:
        """What the tool does; None when not stated."""
        return hosted_kind_from_pb(self._pb.hosted_tool_result.kind)

    @property
    def is_error(self) -> bool:
        """True when the tool failed."""
        return self._pb.hosted_tool_result.is_error

    @property
    def error_code(self) -> str | None:
        """The provider's error code, or None when it reported no error object."""
        result = self._pb.hosted_tool_result
        return result.error.code if result.HasField("error") else None

    @property
    def error_message(self) -> str | None:
        """The provider's error message, or None when it reported no error object."""
        result = self._pb.hosted_tool_result
        return result.error.message if result.HasField("error") else None

    @property
    def body(self) -> str | None:
        """Which typed body is set: ``"search_results"``, ``"code_execution"``, ``"web_fetch"``, or None."""
        return self._pb.hosted_tool_result.WhichOneof("body")

    @property
    def search_results(self) -> tuple[SearchResult, ...]:
        """The search results (empty unless the body is ``search_results``)."""
        return tuple(SearchResult._wrap(item) for item in self._pb.hosted_tool_result.search_results.results)

    @property
    def queries(self) -> tuple[str, ...]:
        """The queries the provider ran, when it reported them."""
        return tuple(self._pb.hosted_tool_result.search_results.queries)

    @property
    def code_execution(self) -> CodeExecutionOutput | None:
        """The code's output, or None when the body is not ``code_execution``."""
        result = self._pb.hosted_tool_result
        return CodeExecutionOutput._wrap(result.code_execution) if result.HasField("code_execution") else None

    @property
    def web_fetch(self) -> WebFetchOutput | None:
        """The fetched page, or None when the body is not ``web_fetch``."""
        result = self._pb.hosted_tool_result
        return WebFetchOutput._wrap(result.web_fetch) if result.HasField("web_fetch") else None

    @property
    def blocks(self) -> tuple[Content, ...]:
        """The content blocks the tool returned for the model, in order."""
        return tuple(content_from_proto(block) for block in self._pb.hosted_tool_result.content)

    @property
    def text(self) -> str:
        """The text blocks of :attr:`blocks` joined."""
        return "".join(
            block.text.text for block in self._pb.hosted_tool_result.content if block.WhichOneof("kind") == "text"
        )

    @property
    def status(self) -> HostedToolStatus | None:
        """How far the tool got, or None when not stated."""
        return hosted_status_from_pb(self._pb.hosted_tool_result.status)

    @property
    def status_raw(self) -> str:
        """The provider's status or outcome string, or ``""``."""
        return self._pb.hosted_tool_result.status_raw

    @property
    def original(self) -> ProviderContent | None:
        """The provider's block, verbatim (a copy), or None."""
        return _original_block(self._pb.hosted_tool_result)


def _fill_blocks(target: Any, content: Any, field: str = "content") -> None:
    """Content given as a string (one text block; none when empty) or a list of blocks."""
    if isinstance(content, str):
        check_utf8(content, field)
        if content:
            target.add().text.text = content
        return
    if not isinstance(content, Sequence):
        raise ValidationError.single(field, "type", f"expected str or a list of blocks, got {type(content).__name__}")
    for i, block in enumerate(content):
        if not isinstance(block, ContentBase):
            raise ValidationError.single(
                f"{field}[{i}]", "type", f"expected a content block, got {type(block).__name__}"
            )
        target.append(block._pb)


class UnknownContent(ContentBase):
    """A block whose arm this version does not know (a newer peer's), or that is unset.

    It is kept unchanged: re-encoding it gives the bytes it came with.
    """

    __slots__ = ()
    __match_args__ = ("pb",)


Content: TypeAlias = (
    TextContent
    | ImageContent
    | AudioContent
    | DocumentContent
    | ThinkingContent
    | RedactedThinkingContent
    | ToolCallContent
    | ToolResultContent
    | ProviderContent
    | HostedToolCallContent
    | HostedToolResultContent
    | ToolApprovalContent
    | UnknownContent
)
"""Every content block class: a closed union usable with ``match``."""


# --- the seed-1 dict form of a block (the format is described in agentmsg.dict_form) ---

M = TypeVar("M", ImageContent, AudioContent)


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
            for key, default in (("index", 0), ("signature", ""), ("server_name", ""), ("requires_approval", False)):
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
        case ToolApprovalContent():
            approval = block.pb.approval
            out = {"type": "approval", "call_id": approval.call_id, "decision": _approval_decision_name(block)}
            for key in ("reason", "decided_by"):
                if getattr(approval, key):
                    out[key] = getattr(approval, key)
            if approval.HasField("decided_at"):
                out["decided_at"] = approval.decided_at.ToJsonString()
            if approval.HasField("original"):
                out["original"] = _pb_dict(approval.original)
            return out
        case UnknownContent():
            return {"type": "unknown", "proto": base64.b64encode(block.to_bytes()).decode("ascii")}
    raise ValidationError.single("type", "type", f"not a content block: {type(block).__name__}")


def _pb_dict(pb: Message) -> dict[str, Any]:
    """A nested v1.1 message (citation, token logprob, hosted tool body) as ProtoJSON with proto field names."""
    return json_format.MessageToDict(pb, preserving_proto_field_name=True)


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
        if kind == "approval":
            return [_approval_from_dict(data, path)]
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


def _approval_decision_name(block: ToolApprovalContent) -> str:
    decision = block.decision
    if decision is None:
        raise ValidationError.single("decision", "enum", f"unknown decision {block.pb.approval.decision}")
    return decision.value


def _approval_from_dict(data: Mapping[str, Any], path: str) -> ToolApprovalContent:
    decided_at = _get(data, "decided_at", str, path)
    when: datetime | None = None
    if decided_at is not None:
        stamp = content_pb2.ToolApprovalContent().decided_at
        try:
            stamp.FromJsonString(decided_at)
        except ValueError as exc:
            raise _fail(_join(path, "decided_at"), "timestamp", f"not an RFC 3339 time: {exc}") from None
        when = stamp.ToDatetime(tzinfo=UTC)
    return ToolApprovalContent(
        _require(data, "call_id", str, path),
        _require(data, "decision", str, path),
        _get(data, "reason", str, path, ""),
        decided_by=_get(data, "decided_by", str, path, ""),
        decided_at=when,
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
    pb = content_pb2.Content(**{field: arm})
    _validation.ensure(pb)
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
        requires_approval=_get(data, "requires_approval", bool, path, False),
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
