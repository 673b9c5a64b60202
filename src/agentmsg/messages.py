"""Messages: ``agentmsg.v1.Message`` with its ``role`` oneof as one class per role.

Every message has an ``id`` (a UUID4 string by default) and a ``timestamp``
(now, by default). Constructors check the contract's rules (protovalidate,
from the proto) and raise :class:`~agentmsg.ValidationError` listing every
violation, so a system message with an image, or a tool message with text,
cannot be built.
"""

from __future__ import annotations

import base64
import operator
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, overload

from google.protobuf import timestamp_pb2
from google.protobuf.message import DecodeError as _PbDecodeError

from agentmsg import _media, _struct, _validation
from agentmsg._dict_paths import _at, _fail, _get, _require
from agentmsg._wrapper import ProtoWrapper
from agentmsg.content import (
    AudioContent,
    Content,
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
    ToolResultContent,
    UnknownContent,
    check_utf8,
    content_from_proto,
    content_to_dict,
    contents_from_dict,
)
from agentmsg.errors import DecodeError, ValidationError, Violation, preview
from agentmsg.usage import COST_FIELDS, TOKEN_FIELDS, Usage, UsageCost
from agentmsg.v1 import message_pb2

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "AgentMessage",
    "AssistantMessage",
    "BaseMessage",
    "Blocks",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "Conversation",
    "CustomMessage",
    "LLMMessage",
    "Provenance",
    "ProviderState",
    "Role",
    "SessionMessage",
    "StopReason",
    "SystemMessage",
    "ToolMessage",
    "UnknownMessage",
    "UserMessage",
    "message_from_proto",
]


class Role(StrEnum):
    """Who a message is from. The value is the name of the ``Message.role`` arm."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    CUSTOM = "custom"
    BRANCH_SUMMARY = "branch_summary"
    COMPACTION_SUMMARY = "compaction_summary"


class StopReason(StrEnum):
    """Why a model stopped, normalised (``agentmsg.v1.StopReason``); values as in the seed."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    ABORT = "abort"
    ERROR = "error"


_STOP_TO_PB: dict[StopReason, message_pb2.StopReason.ValueType] = {
    reason: message_pb2.StopReason.Value(f"STOP_REASON_{reason.name}") for reason in StopReason
}
_STOP_FROM_PB = {number: reason for reason, number in _STOP_TO_PB.items()}


def _stop_to_pb(reason: StopReason | str | None) -> message_pb2.StopReason.ValueType:
    if reason is None:
        return message_pb2.STOP_REASON_UNSPECIFIED
    try:
        return _STOP_TO_PB[StopReason(reason)]
    except ValueError:
        allowed = ", ".join(r.value for r in StopReason)
        raise ValidationError.single("stop_reason", "enum", f"{reason!r} is not one of: {allowed}") from None


def _set_timestamp(target: timestamp_pb2.Timestamp, value: datetime | float | int | None) -> None:
    try:
        _fill_timestamp(target, value)
    except (ValueError, OverflowError) as exc:
        raise ValidationError.single("timestamp", "timestamp.range", f"not a representable time: {exc}") from None


def _fill_timestamp(target: timestamp_pb2.Timestamp, value: datetime | float | int | None) -> None:
    if value is None:
        # Microseconds, like datetime: the timestamp survives datetime and float forms exactly.
        target.FromMicroseconds(time.time_ns() // 1000)
    elif isinstance(value, datetime):
        # A naive datetime is taken as UTC, as protobuf's Timestamp does.
        target.FromDatetime(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        target.FromMicroseconds(round(value * 1_000_000))
    else:
        raise ValidationError.single(
            "timestamp", "type", f"expected a datetime or epoch seconds, got {type(value).__name__}"
        )


def new_id() -> str:
    """A random UUID4 in its canonical text form, as ``str(uuid.uuid4())`` gives, without the UUID object.

    Building a message spent a fifth of its time in ``uuid.uuid4()`` (the object, then its ``__str__``).
    """
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    x = raw.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def _check_str(value: Any, field: str) -> None:
    if not isinstance(value, str):
        raise ValidationError.single(field, "type", f"expected str, got {type(value).__name__}")
    check_utf8(value, field)


def _fill_content(target: Any, contents: Iterable[ContentBase], field: str = "contents") -> None:
    if isinstance(contents, (str, bytes, ContentBase)) or not isinstance(contents, Iterable):
        raise ValidationError.single(field, "type", f"expected a list of content blocks, got {type(contents).__name__}")
    for i, block in enumerate(contents):
        if not isinstance(block, ContentBase):
            raise ValidationError.single(
                f"{field}[{i}]", "type", f"expected a content block, got {type(block).__name__}"
            )
        target.append(block._pb)


_NO_BLOCKS: tuple[Any, ...] = ()


class Blocks(Sequence[Content]):
    """A message's content blocks: an immutable sequence that wraps each block when it is read.

    Reading ``message.contents[0]`` wraps one block, not all of them (the per-message path of a
    subscriber). It compares equal to a tuple of the same blocks, and slicing gives a tuple.
    """

    __slots__ = ("_pbs",)
    _pbs: Any  # the body's repeated `content` field (live), or () for a body without one

    def __len__(self) -> int:
        return len(self._pbs)

    @overload
    def __getitem__(self, index: int) -> Content: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Content, ...]: ...
    def __getitem__(self, index: int | slice) -> Content | tuple[Content, ...]:
        pb = self._pbs[index]
        try:
            block = _new(_arm_class(pb.WhichOneof("kind"), UnknownContent))
        except AttributeError:  # a slice: a list of blocks (checked this way, the usual index pays nothing)
            return tuple(content_from_proto(item) for item in pb)
        block._pb = pb
        return block  # type: ignore[return-value]

    def __iter__(self) -> Iterator[Content]:
        by_arm = _BY_ARM
        for pb in self._pbs:
            block = object.__new__(by_arm.get(pb.WhichOneof("kind"), UnknownContent))
            block._pb = pb
            yield block  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Blocks):
            return tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: tuple[Content, ...] | Blocks) -> tuple[Content, ...]:
        if not isinstance(other, (tuple, Blocks)):
            return NotImplemented
        return (*self, *other)

    def __radd__(self, other: tuple[Content, ...]) -> tuple[Content, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return (*other, *self)

    def __repr__(self) -> str:
        return repr(tuple(self))


_BY_ARM = ContentBase._BY_ARM
_arm_class = _BY_ARM.get  # bound once: reading a block looks its class up by arm
_new = object.__new__


_message_from_string = message_pb2.Message.FromString


class Provenance(ProtoWrapper[message_pb2.Provenance]):
    """Which provider, API and model produced an assistant message (``agentmsg.v1.Provenance``)."""

    __slots__ = ()
    _PB = message_pb2.Provenance

    def __init__(self, provider: str = "", api: str = "", model: str = "", response_id: str = "") -> None:
        for field, value in (("provider", provider), ("api", api), ("model", model), ("response_id", response_id)):
            _check_str(value, field)
        self._pb = message_pb2.Provenance(provider=provider, api=api, model=model, response_id=response_id)

    @property
    def provider(self) -> str:
        """E.g. ``anthropic``, ``openai``, ``google``."""
        return self._pb.provider

    @property
    def api(self) -> str:
        """E.g. ``anthropic-messages``, ``openai-responses``."""
        return self._pb.api

    @property
    def model(self) -> str:
        """The model, as the provider named it."""
        return self._pb.model

    @property
    def response_id(self) -> str:
        """The provider's response id."""
        return self._pb.response_id


class ProviderState(ProtoWrapper[message_pb2.ProviderState]):
    """Opaque provider state kept verbatim, tagged with its source (``agentmsg.v1.ProviderState``)."""

    __slots__ = ()
    _PB = message_pb2.ProviderState

    def __init__(self, provider: str, data: str, *, api: str = "", type: str = "") -> None:  # noqa: A002
        for field, value in (("provider", provider), ("data", data), ("api", api), ("type", type)):
            _check_str(value, field)
        self._pb = message_pb2.ProviderState(provider=provider, api=api, type=type, data=data)
        _validation.ensure(self._pb)

    @property
    def provider(self) -> str:
        """The provider, e.g. ``openai``."""
        return self._pb.provider

    @property
    def api(self) -> str:
        """The API, e.g. ``openai-responses``."""
        return self._pb.api

    @property
    def type(self) -> str:
        """The provider's name for the state, e.g. ``compaction``."""
        return self._pb.type

    @property
    def data(self) -> str:
        """The state, verbatim."""
        return self._pb.data


class _MessageType(type):
    """Constructs messages the seed's way too: ``BaseMessage(role, contents, id, timestamp)``.

    Called on :class:`BaseMessage` itself, it builds the class of ``role``;
    each role class also takes the seed's inherited ``role`` keyword, which
    must name its own role.
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is BaseMessage:
            return _by_role(*args, **kwargs)
        if "role" in kwargs:
            role = kwargs.pop("role")
            own: Role | None = getattr(cls, "ROLE", None)
            if own is None or _role(role) is not own:
                raise ValidationError.single(
                    "role", "role", f"{cls.__name__} is a {own.value if own else 'role-less'} message, not {role!r}"
                )
        return super().__call__(*args, **kwargs)


def _role(value: Any) -> Role:
    try:
        return Role(value)
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise ValidationError.single("role", "enum", f"{value!r} is not one of: {allowed}") from None


def _by_role(
    role: Role | str,
    contents: Sequence[ContentBase] = (),
    id: str | None = None,  # noqa: A002 - the seed's field
    timestamp: datetime | float | None = None,
    **fields: Any,
) -> BaseMessage:
    """``BaseMessage(role, contents, id, timestamp, ...)``: the message of that role's class."""
    own = _role(role)
    build: Callable[..., BaseMessage] = BaseMessage._BY_ROLE[own.value]
    common = {"id": id, "timestamp": timestamp, **fields}
    if own in (Role.BRANCH_SUMMARY, Role.COMPACTION_SUMMARY):
        if contents:
            raise ValidationError.single(
                "contents", "role", f"a {own.value} message holds its summary in `summary`, not in contents"
            )
        return build(**common)
    if own is Role.CUSTOM:
        return build(contents=contents, **common)
    return build(contents, **common)


class BaseMessage(ProtoWrapper[message_pb2.Message], metaclass=_MessageType):
    """Base of the message classes: a view of one ``agentmsg.v1.Message``.

    ``BaseMessage(role, contents, id=..., timestamp=...)`` builds the message
    of that role (a :class:`UserMessage` for ``Role.USER``...), as the seed's
    dataclass is built; other fields of the role go as keywords.
    """

    __slots__ = ()
    _PB = message_pb2.Message
    _DISPATCH = True
    ROLE: ClassVar[Role | None] = None
    _BY_ROLE: ClassVar[dict[str | None, type[BaseMessage]]] = {}
    # The body's oneof arm, and the same when it has a `content` field (plain str: StrEnum .value is slow).
    _ARM: ClassVar[str] = ""
    _CONTENT_ARM: ClassVar[str | None] = None
    # pb -> the body's repeated `content` (an attrgetter, so not bound as a method), () for a body without one.
    _READ_CONTENT: ClassVar[Any] = staticmethod(lambda pb: _NO_BLOCKS)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # `role` reads as a plain class attribute on the role classes: no property call per read.
        setattr(cls, "role", cls.ROLE)  # noqa: B010 - mypy sees the property below; this shadows it
        if cls.ROLE is not None:
            BaseMessage._BY_ROLE[cls.ROLE.value] = cls
            cls._ARM = cls.ROLE.value
            body = message_pb2.Message.DESCRIPTOR.fields_by_name[cls.ROLE.value].message_type
            assert body is not None
            cls._CONTENT_ARM = cls.ROLE.value if "content" in body.fields_by_name else None
            if cls._CONTENT_ARM is not None:
                cls._READ_CONTENT = operator.attrgetter(f"{cls._CONTENT_ARM}.content")

    def _init(
        self,
        body: Any,
        id: str | None,  # noqa: A002
        timestamp: datetime | float | None,
        name: str,
        parent_id: str = "",
    ) -> None:
        pb = self._start(id, name, parent_id)
        getattr(pb, self._ARM).MergeFrom(body)
        self._finish(pb, timestamp)

    def _start(self, id: str | None, name: str, parent_id: str) -> message_pb2.Message:  # noqa: A002
        """The envelope; the role's body is then filled in place (no copy of the content blocks)."""
        if id is None:
            id = new_id()  # noqa: A001
        else:
            _check_str(id, "id")
        # The defaults ("") are common enough to skip the checks for.
        if type(name) is not str or name:
            _check_str(name, "name")
        if type(parent_id) is not str or parent_id:
            _check_str(parent_id, "parent_id")
        pb = message_pb2.Message(id=id, name=name, parent_id=parent_id)
        getattr(pb, self._ARM).SetInParent()  # the role arm is set even when its body stays empty
        return pb

    def _finish(self, pb: message_pb2.Message, timestamp: datetime | float | None) -> None:
        """Stamp, check the contract (the compiled checker; protovalidate's violations when it fails), hold."""
        if timestamp is None:
            # Microseconds, like datetime: the timestamp survives datetime and float forms exactly.
            pb.timestamp.FromMicroseconds(time.time_ns() // 1000)
        else:
            _set_timestamp(pb.timestamp, timestamp)
        _validation.ensure(pb)
        self._pb = pb

    @classmethod
    def from_proto(cls, pb: message_pb2.Message, *, validate: bool = False) -> Self:
        """Wrap a generated ``Message`` as the class of its role (no copy)."""
        if not isinstance(pb, message_pb2.Message):
            raise TypeError(f"{cls.__name__}.from_proto expects agentmsg.v1.Message, got {type(pb).__name__}")
        message = message_from_proto(pb)
        if not isinstance(message, cls):
            raise DecodeError(f"expected {cls.__name__}, got {type(message).__name__}")
        if validate:
            _validation.check(pb)
        return message

    @classmethod
    def from_bytes(cls, data: bytes, *, validate: bool = False) -> Self:
        """Decode a binary ``Message`` into the class of its role (see :meth:`ProtoWrapper.from_bytes`).

        The per-message decoding path of a subscriber: one parse, one type lookup, no further checks.
        """
        try:
            pb = _message_from_string(data)  # upb reads bytes and any other buffer
        except _PbDecodeError as exc:
            raise DecodeError(f"not a valid agentmsg.v1.Message encoding: {exc}") from None
        except TypeError:
            return super().from_bytes(data, validate=validate)  # not a buffer: its clear error
        message = _new(_role_class(pb.WhichOneof("role"), UnknownMessage))
        message._pb = pb
        if validate:
            _validation.check(pb)
        if cls is BaseMessage or isinstance(message, cls):
            return message  # type: ignore[return-value]
        raise DecodeError(f"expected {cls.__name__}, got {type(message).__name__}")

    @property
    def role(self) -> Role | None:
        """The role (None for an :class:`UnknownMessage`)."""
        return self.ROLE

    @property
    def id(self) -> str:
        """The message id."""
        return self._pb.id

    @property
    def timestamp(self) -> float:
        """When the message was created, as the seed has it: Unix epoch seconds (exact to the microsecond)."""
        ts = self._pb.timestamp
        return ts.seconds + (ts.nanos // 1000) / 1_000_000

    @property
    def datetime(self) -> datetime:
        """When the message was created, as a timezone-aware (UTC) ``datetime``.

        Raises :class:`~agentmsg.ValidationError` for a timestamp outside what ``datetime`` holds (one stored
        before the contract's range rule); :attr:`timestamp` reads any value.
        """
        try:
            return self._pb.timestamp.ToDatetime(tzinfo=UTC)
        except (ValueError, OverflowError) as exc:
            ts = self._pb.timestamp
            raise ValidationError.single(
                "timestamp", "timestamp.range", f"not a valid time (seconds={ts.seconds}, nanos={ts.nanos}): {exc}"
            ) from None

    @property
    def name(self) -> str:
        """The participant name, or ``""``."""
        return self._pb.name

    @property
    def parent_id(self) -> str:
        """The session-tree entry this one follows; ``""``: the one before it in the log."""
        return self._pb.parent_id

    def with_parent(self, parent_id: str) -> Self:
        """A copy that follows ``parent_id`` in its session's tree."""
        _check_str(parent_id, "parent_id")
        copy = self.copy()
        copy._pb.parent_id = parent_id
        return copy

    @property
    def contents(self) -> Blocks:
        """The content blocks (empty for summary messages), wrapped as they are read."""
        blocks = _new(Blocks)
        blocks._pbs = self._READ_CONTENT(self._pb)
        return blocks

    def text_content(self) -> str:
        """The text blocks joined, as in the seed (summary messages: the summary)."""
        return "".join(block.content for block in self.contents if isinstance(block, TextContent))

    def to_dict(self) -> dict[str, Any]:
        """The seed-1 dict form (see :mod:`agentmsg.dict_form`)."""
        return message_to_dict(self)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Build a message from its seed-1 dict form."""
        message = message_from_dict(data)
        if not isinstance(message, cls):
            raise ValidationError.single(
                "role", "type", f"expected a {cls.__name__} dict, got {type(message).__name__}"
            )
        return message

    def __repr__(self) -> str:
        kinds = ", ".join(block.type or "unknown" for block in self.contents)
        return f"{type(self).__name__}(id={self.id!r}, contents=[{kinds}])"


class SystemMessage(BaseMessage):
    """Instructions for the model: the ``system`` arm. Text, and provider blocks kept verbatim."""

    __slots__ = ()
    ROLE = Role.SYSTEM

    def __init__(
        self,
        contents: Sequence[TextContent | ProviderContent],
        *,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        pb = self._start(id, name, parent_id)
        _fill_content(getattr(pb, self._ARM).content, contents)
        self._finish(pb, timestamp)

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> SystemMessage:
        """A system message with one text block."""
        return cls([TextContent(content)], **kwargs)


class UserMessage(BaseMessage):
    """Input from the user: the ``user`` arm. Text, images, audio, documents, tool results, approval decisions."""

    __slots__ = ()
    ROLE = Role.USER

    def __init__(
        self,
        contents: Sequence[
            TextContent
            | ImageContent
            | AudioContent
            | DocumentContent
            | ToolResultContent
            | ToolApprovalContent
            | ProviderContent
        ],
        *,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        pb = self._start(id, name, parent_id)
        _fill_content(getattr(pb, self._ARM).content, contents)
        self._finish(pb, timestamp)

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> UserMessage:
        """A user message with one text block."""
        return cls([TextContent(content)], **kwargs)

    @classmethod
    def with_images(
        cls,
        content: str,
        images: Sequence[str | bytes | Image.Image | ImageContent],
        *,
        detail: ImageDetail | str | None = None,
        **kwargs: Any,
    ) -> UserMessage:
        """Text followed by one image block per image (URL, base64, bytes, PIL image)."""
        blocks: list[TextContent | ImageContent] = [TextContent(content)]
        blocks.extend(
            image if isinstance(image, ImageContent) else ImageContent(image, detail=detail) for image in images
        )
        return cls(blocks, **kwargs)

    @classmethod
    def with_audio(cls, content: str, audio: Sequence[str | bytes | AudioContent], **kwargs: Any) -> UserMessage:
        """Text followed by one audio block per clip (bytes, base64, ``file:`` path)."""
        blocks: list[TextContent | AudioContent] = [TextContent(content)]
        blocks.extend(clip if isinstance(clip, AudioContent) else AudioContent(clip) for clip in audio)
        return cls(blocks, **kwargs)


class AssistantMessage(BaseMessage):
    """A model response: the ``assistant`` arm.

    Text, thinking, redacted thinking, tool calls, the calls and results of
    tools the provider ran itself (hosted tools), and provider blocks.
    """

    __slots__ = ()
    ROLE = Role.ASSISTANT

    def __init__(
        self,
        contents: Sequence[
            TextContent
            | ThinkingContent
            | RedactedThinkingContent
            | ToolCallContent
            | HostedToolCallContent
            | HostedToolResultContent
            | ProviderContent
        ] = (),
        *,
        usage: Usage | None = None,
        stop_reason: StopReason | str | None = None,
        stop_reason_raw: str = "",
        error: str = "",
        provenance: Provenance | None = None,
        stop_sequence: str = "",
        provider_extra: ProviderContent | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        _check_str(stop_reason_raw, "stop_reason_raw")
        _check_str(error, "error")
        _check_str(stop_sequence, "stop_sequence")
        if provider_extra is not None and not isinstance(provider_extra, ProviderContent):
            raise ValidationError.single(
                "provider_extra", "type", f"expected ProviderContent, got {type(provider_extra).__name__}"
            )
        stop = _stop_to_pb(stop_reason)
        pb = self._start(id, name, parent_id)
        body = pb.assistant
        if stop:
            body.stop_reason = stop
        if stop_reason_raw:
            body.stop_reason_raw = stop_reason_raw
        if error:
            body.error = error
        if stop_sequence:
            body.stop_sequence = stop_sequence
        _fill_content(body.content, contents)
        if usage is not None:
            if not isinstance(usage, Usage):
                raise ValidationError.single("usage", "type", f"expected Usage, got {type(usage).__name__}")
            body.usage.CopyFrom(usage._pb)
        if provenance is not None:
            if not isinstance(provenance, Provenance):
                raise ValidationError.single(
                    "provenance", "type", f"expected Provenance, got {type(provenance).__name__}"
                )
            body.provenance.CopyFrom(provenance._pb)
        if provider_extra is not None:
            body.provider_extra.CopyFrom(provider_extra.pb.provider)
        self._finish(pb, timestamp)

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> AssistantMessage:
        """An assistant message with one text block."""
        return cls([TextContent(content)], **kwargs)

    def tool_calls(self) -> list[ToolCallContent]:
        """The tool-call blocks, in order."""
        return [block for block in self.contents if isinstance(block, ToolCallContent)]

    def thinking(self) -> list[ThinkingContent]:
        """The thinking blocks, in order."""
        return [block for block in self.contents if isinstance(block, ThinkingContent)]

    def hosted_tool_calls(self) -> list[HostedToolCallContent]:
        """The calls of tools the provider ran itself, in order."""
        return [block for block in self.contents if isinstance(block, HostedToolCallContent)]

    def hosted_tool_results(self) -> list[HostedToolResultContent]:
        """The results of tools the provider ran itself, in order."""
        return [block for block in self.contents if isinstance(block, HostedToolResultContent)]

    @property
    def stop_sequence(self) -> str:
        """The caller's stop sequence that ended generation, or ``""``."""
        return self._pb.assistant.stop_sequence

    @property
    def provider_extra(self) -> ProviderContent | None:
        """The provider response's keys no field holds (Anthropic ``container``, ``stop_details``), or None.

        A JSON object shaped like the response object (``.block()`` parses it);
        the same provider's response writer merges it back.
        """
        body = self._pb.assistant
        if not body.HasField("provider_extra"):
            return None
        extra = body.provider_extra
        return ProviderContent(extra.provider, extra.type, extra.json)

    @property
    def usage(self) -> Usage | None:
        """Tokens and cost, or None when not reported."""
        body = self._pb.assistant
        return Usage._wrap(body.usage) if body.HasField("usage") else None

    @property
    def stop_reason(self) -> StopReason | None:
        """The normalised stop reason, or None when unspecified (or unknown to this version)."""
        return _STOP_FROM_PB.get(self._pb.assistant.stop_reason)

    @property
    def stop_reason_raw(self) -> str:
        """The provider's own stop reason string."""
        return self._pb.assistant.stop_reason_raw

    @property
    def error(self) -> str:
        """The error that ended the response, or ``""``."""
        return self._pb.assistant.error

    @property
    def provenance(self) -> Provenance | None:
        """Which provider/API/model produced the message, or None."""
        body = self._pb.assistant
        return Provenance._wrap(body.provenance) if body.HasField("provenance") else None


class ToolMessage(BaseMessage):
    """Tool results: the ``tool`` arm. Tool results only."""

    __slots__ = ()
    ROLE = Role.TOOL

    def __init__(
        self,
        contents: Sequence[ToolResultContent],
        *,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        pb = self._start(id, name, parent_id)
        _fill_content(getattr(pb, self._ARM).content, contents)
        self._finish(pb, timestamp)

    @classmethod
    def from_result(cls, result: ToolResultContent, **kwargs: Any) -> ToolMessage:
        """A tool message with one result."""
        return cls([result], **kwargs)

    @classmethod
    def from_results(cls, results: Sequence[ToolResultContent], **kwargs: Any) -> ToolMessage:
        """A tool message with several results."""
        return cls(list(results), **kwargs)

    def results(self) -> list[ToolResultContent]:
        """The results, in order."""
        return [block for block in self.contents if isinstance(block, ToolResultContent)]


class CustomMessage(BaseMessage):
    """An application-defined session message: the ``custom`` arm. Never sent to a model as such."""

    __slots__ = ()
    ROLE = Role.CUSTOM

    def __init__(
        self,
        custom_type: str,
        contents: Sequence[TextContent | ImageContent | AudioContent | DocumentContent] = (),
        details: Any = None,
        *,
        to_model: bool = False,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        _check_str(custom_type, "custom_type")
        if not isinstance(to_model, bool):
            raise ValidationError.single("to_model", "type", f"expected bool, got {type(to_model).__name__}")
        body = message_pb2.CustomMessage(custom_type=custom_type, to_model=to_model)
        _fill_content(body.content, contents)
        if details is not None:
            _struct.fill_value(body.details, details, "details")
        self._init(body, id, timestamp, name, parent_id)

    @property
    def custom_type(self) -> str:
        """The application's name for the message kind."""
        return self._pb.custom.custom_type

    @property
    def to_model(self) -> bool:
        """Whether a context builder gives the content to the model."""
        return self._pb.custom.to_model

    @property
    def details(self) -> Any:
        """Application data (any JSON value), or None."""
        body = self._pb.custom
        return _struct.value_to_python(body.details) if body.HasField("details") else None


class BranchSummaryMessage(BaseMessage):
    """The summary of a branch that was left: the ``branch_summary`` arm."""

    __slots__ = ()
    ROLE = Role.BRANCH_SUMMARY

    def __init__(
        self,
        summary: str,
        from_id: str = "",
        *,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        _check_str(summary, "summary")
        _check_str(from_id, "from_id")
        self._init(message_pb2.BranchSummaryMessage(summary=summary, from_id=from_id), id, timestamp, name, parent_id)

    @property
    def summary(self) -> str:
        """What happened on the branch."""
        return self._pb.branch_summary.summary

    @property
    def from_id(self) -> str:
        """The entry the branch started from."""
        return self._pb.branch_summary.from_id

    def text_content(self) -> str:
        """The summary."""
        return self.summary


class CompactionSummaryMessage(BaseMessage):
    """The summary of compacted history: the ``compaction_summary`` arm."""

    __slots__ = ()
    ROLE = Role.COMPACTION_SUMMARY

    def __init__(
        self,
        summary: str,
        tokens_before: int | None = None,
        *,
        first_kept_id: str = "",
        provider_state: ProviderState | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: datetime | float | None = None,
        name: str = "",
        parent_id: str = "",
    ) -> None:
        _check_str(summary, "summary")
        _check_str(first_kept_id, "first_kept_id")
        body = message_pb2.CompactionSummaryMessage(summary=summary, first_kept_id=first_kept_id)
        if provider_state is not None:
            if not isinstance(provider_state, ProviderState):
                raise ValidationError.single(
                    "provider_state", "type", f"expected ProviderState, got {type(provider_state).__name__}"
                )
            body.provider_state.CopyFrom(provider_state.pb)
        if tokens_before is not None:
            if isinstance(tokens_before, bool) or not isinstance(tokens_before, int):
                raise ValidationError.single(
                    "tokens_before", "type", f"expected an int, got {type(tokens_before).__name__}"
                )
            if not -(2**63) <= tokens_before < 2**63:
                raise ValidationError.single("tokens_before", "int64", f"{tokens_before} does not fit in int64")
            body.tokens_before = tokens_before
        self._init(body, id, timestamp, name, parent_id)

    @property
    def summary(self) -> str:
        """What the compacted history said."""
        return self._pb.compaction_summary.summary

    @property
    def first_kept_id(self) -> str:
        """The first entry kept after the summary (``""``: none before it)."""
        return self._pb.compaction_summary.first_kept_id

    @property
    def provider_state(self) -> ProviderState | None:
        """A provider's own compaction of the history, or None."""
        body = self._pb.compaction_summary
        return ProviderState._wrap(body.provider_state) if body.HasField("provider_state") else None

    @property
    def tokens_before(self) -> int | None:
        """Context tokens before compaction, or None when not known."""
        body = self._pb.compaction_summary
        return body.tokens_before if body.HasField("tokens_before") else None

    def text_content(self) -> str:
        """The summary."""
        return self.summary


class UnknownMessage(BaseMessage):
    """A message whose role this version does not know (a newer peer's), or that has none.

    Kept unchanged: re-encoding it gives the bytes it came with.
    """

    __slots__ = ()


_BY_ROLE = BaseMessage._BY_ROLE
_role_class = _BY_ROLE.get  # bound once: the per-message decoding path looks a class up by role

LLMMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage
"""The messages a model sees."""
SessionMessage: TypeAlias = CustomMessage | BranchSummaryMessage | CompactionSummaryMessage
"""Session-only messages, projected to LLM messages by a context builder."""
AgentMessage: TypeAlias = LLMMessage | SessionMessage | UnknownMessage
"""Every message class: a closed union usable with ``match``."""


def message_from_proto(pb: message_pb2.Message) -> AgentMessage:
    """Wrap a generated ``Message`` in the class of its role (no copy)."""
    message = _new(_BY_ROLE.get(pb.WhichOneof("role"), UnknownMessage))
    message._pb = pb
    return message  # type: ignore[return-value]


class Conversation(ProtoWrapper[message_pb2.Conversation], Sequence[AgentMessage]):
    """An ordered list of messages (``agentmsg.v1.Conversation``), with bytes and JSON forms.

    Messages are wrapped on access, so decoding a conversation costs what
    decoding the protobuf costs.
    """

    __slots__ = ()
    _PB = message_pb2.Conversation

    def __init__(self, messages: Iterable[BaseMessage] = ()) -> None:
        self._pb = message_pb2.Conversation()
        self.extend(messages)

    def append(self, message: BaseMessage) -> None:
        """Add a message at the end (its generated message is copied in)."""
        if not isinstance(message, BaseMessage):
            raise ValidationError.single(
                f"messages[{len(self)}]", "type", f"expected a message, got {type(message).__name__}"
            )
        self._pb.messages.append(message._pb)

    def extend(self, messages: Iterable[BaseMessage]) -> None:
        """Add messages at the end."""
        if isinstance(messages, BaseMessage):
            raise ValidationError.single("messages", "type", "expected a list of messages, got a single message")
        for message in messages:
            self.append(message)

    def __len__(self) -> int:
        return len(self._pb.messages)

    @overload
    def __getitem__(self, index: int) -> AgentMessage: ...
    @overload
    def __getitem__(self, index: slice) -> list[AgentMessage]: ...
    def __getitem__(self, index: int | slice) -> AgentMessage | list[AgentMessage]:
        if isinstance(index, slice):
            return [message_from_proto(pb) for pb in self._pb.messages[index]]
        return message_from_proto(self._pb.messages[index])

    def __iter__(self) -> Iterator[AgentMessage]:
        for pb in self._pb.messages:
            yield message_from_proto(pb)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The seed-1 dict form of every message."""
        return [message.to_dict() for message in self]

    @classmethod
    def from_dicts(cls, data: Iterable[Mapping[str, Any]]) -> Conversation:
        """Build a conversation from seed-1 dicts."""
        return cls(messages_from_dicts(data))

    def __repr__(self) -> str:
        roles = ", ".join((message.role.value if message.role else "unknown") for message in self)
        return f"Conversation([{roles}])"


# --- the seed-1 dict form of a message (the format is described in agentmsg.dict_form) ---


def _timestamp(message: BaseMessage) -> float:
    ts = message.pb.timestamp
    return ts.seconds + ts.nanos / 1_000_000_000


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
            if message.provider_extra is not None:
                extra = message.provider_extra
                out["provider_extra"] = {"provider": extra.provider, "type": extra.block_type, "json": extra.json}
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


def _provider_extra_from_dict(data: Mapping[str, Any] | None, path: str) -> ProviderContent | None:
    if data is None:
        return None
    sub = f"{path}.provider_extra" if path else "provider_extra"
    provider, kind, text = (_require(data, key, str, sub) for key in ("provider", "type", "json"))
    with _at(sub):
        return ProviderContent(provider, kind, text)


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
                provider_extra=_provider_extra_from_dict(_get(data, "provider_extra", Mapping, path), path),
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
