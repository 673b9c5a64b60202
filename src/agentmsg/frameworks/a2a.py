"""A2A (the Agent2Agent protocol, v1): agentmsg messages ↔ A2A ``Message`` / ``Part``, with the agentmsg extension.

Install with ``pip install 'agentmsg[a2a]'`` (``a2a-sdk``). Messages are the SDK's own ``a2a.types.Message``
(``lf.a2a.v1.Message``); :func:`from_a2a` also reads their ProtoJSON dicts.

**Plain A2A** (any A2A peer). One agentmsg message is one A2A message, ``message_id`` = the message id:

- Roles: assistant → ``ROLE_AGENT``; user, system, tool and the session-only roles → ``ROLE_USER`` (tool
  results are the model's input, as Anthropic's user-role ``tool_result``). Reading, ``ROLE_USER`` → a user
  message, ``ROLE_AGENT`` → an assistant message.
- Text → a text part. An image, audio clip or document → a part with its bytes (``raw``) or ``url``, its
  ``media_type`` and (a document's) ``filename``; a block of several images or clips → one part each.
  Reading, a file part becomes an image, audio clip or document by its media type; a data part becomes its
  JSON as text (reported). An agent's files have no place in an assistant message: reported.
- Everything else has no A2A kind and a plain reader cannot see it; each is a reported
  :class:`~agentmsg.providers._common.Loss`: thinking and its signature, redacted reasoning, tool calls and
  results, hosted tools, provider blocks, a text's signature, citations and logprobs, an image's detail, a
  document's title and context, a ``file_id`` source, the timestamp, name and parent id, the system role,
  usage, stop reason, error and provenance. Session-only messages are projected to user text. A message
  with no part left (a tool message) is left out, reported.

**The agentmsg extension**, :data:`EXTENSION_URI` (``https://agentmsg.dev/a2a/ext/v1``), carries the rest so
that ``from_a2a(to_a2a(messages)) == messages`` exactly, while a plain reader still sees the text and files:

- ``Message.extensions`` lists the URI, and ``Message.metadata[EXTENSION_URI]`` holds the envelope: the
  ProtoJSON of the ``agentmsg.v1.Message`` without its id (the ``message_id``) and without its content
  blocks (the parts).
- Each part's ``metadata[EXTENSION_URI]`` says what the part is:

  ``{"content": <Content>}``
      the part and the ProtoJSON of an ``agentmsg.v1.Content`` form one block: the Content holds what the
      part does not (a text's signature and citations, an image's detail...), the part its text, bytes or
      URL, media type and filename.
  ``{"item": k}``
      item ``k`` (from 1) of the image or audio block before it (``more_images`` / ``more_clips``).
  ``{"data": true}``
      a data part whose ``data`` is the whole block's ProtoJSON (tool calls and results, thinking with its
      signature, redacted reasoning, hosted tools, provider blocks, media by ``file_id``); its media type is
      :data:`CONTENT_MEDIA_TYPE`.
  ``{"projection": true}``
      text for plain readers only (a summary's text, an error of an assistant message without content);
      an extension reader skips it.

- Activation follows the A2A extension rules: an agent declares :func:`agent_extension` in its card's
  ``capabilities.extensions``; a client asks for it per request with the ``A2A-Extensions`` header
  (:func:`client_context`); the agent answers with the extension only when it was asked
  (:class:`AgentmsgExecutor`), and its messages list the URI in ``extensions``.

``context_id``, ``task_id`` and ``reference_task_ids`` address A2A conversations and tasks, not message content:
they are written from the arguments and read by the caller from the A2A message itself.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from a2a.client import ClientCallContext
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import AgentExtension, Part, Role
from a2a.types import Message as A2AMessage
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from google.protobuf import json_format, struct_pb2

from agentmsg import _validation
from agentmsg.errors import ValidationError
from agentmsg.messages import AgentMessage, BaseMessage, message_from_proto
from agentmsg.providers._common import (
    ConversionError,
    ConversionReport,
    Loss,
    PayloadErrors,
    Reporter,
    SessionPolicy,
    project_session_message,
    split_media,
)
from agentmsg.v1 import content_pb2, message_pb2

__all__ = [
    "CONTENT_MEDIA_TYPE",
    "EXTENSION_URI",
    "AgentmsgExecutor",
    "ConversionError",
    "ConversionReport",
    "Loss",
    "agent_extension",
    "client_context",
    "from_a2a",
    "to_a2a",
]

log = logging.getLogger(__name__)

TARGET = "A2A"
EXTENSION_URI = "https://agentmsg.dev/a2a/ext/v1"
"""The agentmsg A2A extension: the full agentmsg message in A2A message and part metadata."""
CONTENT_MEDIA_TYPE = "application/vnd.agentmsg.content+json"
"""The media type of a data part holding one ``agentmsg.v1.Content`` as ProtoJSON."""

_MEDIA_ARMS = ("image", "audio", "document")
_MORE = {"image": "more_images", "audio": "more_clips"}
_ITEM = {"image": content_pb2.ImageSource, "audio": content_pb2.AudioSource}
_TEXT_EXTRAS = (("signature", "the text's signature"), ("citations", "citations"), ("logprobs", "logprobs"))
_MARKERS = ("content", "item", "data", "projection")
_PLAIN_WHY = "A2A has no kind for it: a plain A2A reader cannot see it (the agentmsg extension carries it)"


def agent_extension(*, required: bool = False) -> AgentExtension:
    """The agent card's declaration of the agentmsg extension, for ``AgentCapabilities.extensions``."""
    return AgentExtension(
        uri=EXTENSION_URI,
        description=(
            "agentmsg messages in full: tool calls and results, reasoning with signatures, usage and provenance "
            "in message and part metadata under this URI (agentmsg.v1 ProtoJSON); text and files stay plain parts"
        ),
        required=required,
    )


def client_context(*, extension: bool = True, context: ClientCallContext | None = None) -> ClientCallContext:
    """A client call context asking for the agentmsg extension (the ``A2A-Extensions`` service parameter)."""
    base = context.service_parameters if context is not None else None
    updates = [with_a2a_extensions([EXTENSION_URI])] if extension else []
    parameters = ServiceParametersFactory.create_from(base, updates)
    if context is None:
        return ClientCallContext(service_parameters=parameters)
    return context.model_copy(update={"service_parameters": parameters})


# --- writing ----------------------------------------------------------------------------------------------------


def to_a2a(
    messages: Iterable[AgentMessage],
    *,
    extension: bool = True,
    context_id: str = "",
    task_id: str = "",
    session_messages: SessionPolicy = "project",
    strict: bool = False,
    report: ConversionReport | None = None,
) -> list[A2AMessage]:
    """agentmsg messages as A2A messages, one for one (a message with no part left is left out, reported).

    ``extension=True`` writes the agentmsg extension (nothing lost); ``extension=False`` writes plain A2A
    and reports each thing a plain reader cannot see. ``session_messages`` applies to plain A2A only.
    """
    if isinstance(messages, BaseMessage):
        raise ValidationError.single("", "type", "expected a list of messages, got a single message")
    reporter = Reporter(TARGET, report, strict=strict)
    out: list[A2AMessage] = []
    for i, message in enumerate(messages):
        path = f"[{i}]"
        if not isinstance(message, BaseMessage):
            raise ValidationError.single(path, "type", f"expected a message, got {type(message).__name__}")
        if message.role is None:
            reporter.loss(path, "the message", "its role is unknown to this version of agentmsg")
            continue
        if extension:
            try:
                written: A2AMessage | None = _write_extended(message.pb, path, reporter)
            except (ValueError, json_format.Error) as exc:  # a timestamp outside ProtoJSON's years
                raise ValidationError.single(path, "json.unprintable", f"no ProtoJSON form: {exc}") from None
        else:
            written = _write_plain(message, path, reporter, session_messages)
        if written is None:
            continue
        written.context_id = context_id
        written.task_id = task_id
        out.append(written)
    reporter.finish()
    return out


def _a2a_role(role_arm: str) -> Any:
    return Role.ROLE_AGENT if role_arm == "assistant" else Role.ROLE_USER


def _meta(part: Part, value: Mapping[str, Any]) -> Part:
    part.metadata.update({EXTENSION_URI: dict(value)})
    return part


def _source_part(source: Any, media_type: str) -> Part:
    """A file part from an agentmsg media source (its ``data`` or ``url`` arm)."""
    if source.WhichOneof("source") == "data":
        return Part(raw=source.data, media_type=media_type)
    return Part(url=source.url, media_type=media_type)


def _write_extended(pb: message_pb2.Message, path: str, reporter: Reporter) -> A2AMessage:
    role_arm = pb.WhichOneof("role")
    assert role_arm is not None
    envelope = message_pb2.Message()
    envelope.CopyFrom(pb)
    envelope.ClearField("id")
    body = getattr(envelope, role_arm)
    blocks: list[content_pb2.Content] = []
    if "content" in body.DESCRIPTOR.fields_by_name:
        blocks = list(getattr(pb, role_arm).content)
        body.ClearField("content")
    out = A2AMessage(message_id=pb.id, role=_a2a_role(role_arm), extensions=[EXTENSION_URI])
    out.metadata.update({EXTENSION_URI: json_format.MessageToDict(envelope)})
    for j, block in enumerate(blocks):
        if block.WhichOneof("kind") is None:  # a newer peer's kind: ProtoJSON has no form for its unknown fields
            reporter.loss(
                f"{path}.contents[{j}]", "a block of unknown kind", "this version of agentmsg cannot write it"
            )
            continue
        out.parts.extend(_extended_parts(block))
    if not out.parts:
        # A2A needs a part: a summary's text, or what an assistant message without content records.
        text = _projection_text(pb, role_arm)
        out.parts.append(_meta(Part(text=text), {"projection": True}))
    return out


def _projection_text(pb: message_pb2.Message, role_arm: str) -> str:
    if role_arm in ("branch_summary", "compaction_summary"):
        return str(getattr(pb, role_arm).summary)
    if role_arm == "assistant":
        body = pb.assistant
        return body.error or body.stop_reason_raw or message_pb2.StopReason.Name(body.stop_reason)
    return ""


def _extended_parts(block: content_pb2.Content) -> list[Part]:
    arm = block.WhichOneof("kind")
    if arm == "text":
        text = block.text
        if not (text.signature or text.citations or text.logprobs):  # the common case, without ProtoJSON
            return [_meta(Part(text=text.text), {"content": {"text": {}}})]
        rest = content_pb2.Content()
        rest.CopyFrom(block)
        rest.text.ClearField("text")
        return [_meta(Part(text=text.text), {"content": json_format.MessageToDict(rest)})]
    if arm in _MEDIA_ARMS:
        media = getattr(block, arm)
        items = list(getattr(media, _MORE[arm])) if arm in _MORE else []
        if all(source.WhichOneof("source") in ("data", "url") for source in (media, *items)):
            rest = content_pb2.Content()
            rest.CopyFrom(block)
            held = getattr(rest, arm)
            held.ClearField("source")
            held.ClearField("media_type")
            first = _source_part(media, media.media_type)
            if arm == "document":
                first.filename = media.filename
                held.ClearField("filename")
            else:
                held.ClearField(_MORE[arm])
            parts = [_meta(first, {"content": json_format.MessageToDict(rest)})]
            parts.extend(_meta(_source_part(item, item.media_type), {"item": k}) for k, item in enumerate(items, 1))
            return parts
    data = struct_pb2.Value()
    data.struct_value.update(json_format.MessageToDict(block))
    return [_meta(Part(data=data, media_type=CONTENT_MEDIA_TYPE), {"data": True})]


def _write_plain(message: AgentMessage, path: str, reporter: Reporter, policy: SessionPolicy) -> A2AMessage | None:
    projected = project_session_message(message, policy, path)
    if projected is not None:
        reporter.loss(path, f"the {message.role} role", "A2A has no session-only messages: sent as user text")
        message = projected
    pb = message.pb
    role_arm = pb.WhichOneof("role")
    assert role_arm is not None
    out = A2AMessage(message_id=pb.id, role=_a2a_role(role_arm))
    _report_envelope(pb, role_arm, path, reporter)
    for j, block in enumerate(getattr(pb, role_arm).content):
        out.parts.extend(_plain_parts(message.contents[j], block, f"{path}.contents[{j}]", reporter))
    if not out.parts:
        reporter.loss(path, "the message", "none of its blocks has an A2A part, and an A2A message needs one")
        return None
    return out


def _report_envelope(pb: message_pb2.Message, role_arm: str, path: str, reporter: Reporter) -> None:
    reporter.loss(f"{path}.timestamp", "the timestamp", "A2A messages have no timestamp")
    if pb.name:
        reporter.loss(f"{path}.name", "the participant name", "A2A messages have no name")
    if pb.parent_id:
        reporter.loss(f"{path}.parent_id", "the parent id", "A2A messages have no session tree")
    if role_arm == "system":
        reporter.loss(f"{path}.role", "the system role", "A2A has user and agent roles only: sent as ROLE_USER")
    for field, _ in getattr(pb, role_arm).ListFields():
        if field.name != "content":
            reporter.loss(
                f"{path}.{field.name}", f"the {field.name.replace('_', ' ')}", "A2A messages have no place for it"
            )


def _plain_parts(wrapper: Any, block: content_pb2.Content, path: str, reporter: Reporter) -> list[Part]:
    arm = block.WhichOneof("kind")
    if arm == "text":
        text = block.text
        for field, what in _TEXT_EXTRAS:
            if getattr(text, field):
                reporter.loss(f"{path}.{field}", what, "A2A text parts have no place for it")
        return [Part(text=text.text)]
    if arm not in _MEDIA_ARMS:
        reporter.loss(path, f"a {arm.replace('_', ' ') if arm else 'block of unknown kind'}", _PLAIN_WHY)
        return []
    parts: list[Part] = []
    for item_path, piece in split_media(wrapper, path, reporter):
        media = getattr(piece.pb, arm)
        if media.WhichOneof("source") == "file_id":
            reporter.loss(item_path, f"the {arm} by file id", "A2A file parts hold bytes or a URL")
            continue
        part = _source_part(media, media.media_type)
        if arm == "image" and media.detail:
            reporter.loss(f"{item_path}.detail", "the image detail", "A2A file parts have no detail")
        if arm == "document":
            part.filename = media.filename
            for field in ("title", "context"):
                if getattr(media, field):
                    reporter.loss(
                        f"{item_path}.{field}", f"the document {field}", "A2A file parts have no place for it"
                    )
        parts.append(part)
    return parts


# --- reading ----------------------------------------------------------------------------------------------------


def from_a2a(
    messages: Iterable[A2AMessage | Mapping[str, Any]],
    *,
    extension: bool = True,
    strict: bool = False,
    report: ConversionReport | None = None,
) -> list[AgentMessage]:
    """A2A messages (SDK messages or their ProtoJSON dicts) as agentmsg messages.

    A message that carries the agentmsg extension is read from it exactly (``extension=False`` ignores it
    and reads the plain parts). Every problem is raised at once in one :class:`~agentmsg.ValidationError`,
    each at its path; what agentmsg has no place for is reported.
    """
    if isinstance(messages, (A2AMessage, Mapping)):
        raise ValidationError.single("", "type", "expected a list of A2A messages, got a single message")
    reporter = Reporter(TARGET, report, strict=strict)
    errors = PayloadErrors("A2A messages")
    out: list[AgentMessage] = []
    for i, value in enumerate(messages):
        path = f"[{i}]"
        message = _parse(value, path, errors)
        if message is None:
            continue
        if extension and EXTENSION_URI in message.metadata:
            read = _read_extended(message, path, errors, reporter)
        else:
            read = _read_plain(message, path, errors, reporter)
        if read is not None:
            out.append(read)
    errors.raise_if_any()
    reporter.finish()
    return out


def _parse(value: Any, path: str, errors: PayloadErrors) -> A2AMessage | None:
    if isinstance(value, A2AMessage):
        return value
    if not isinstance(value, Mapping):
        errors.add(path, "type", f"expected an A2A Message or its ProtoJSON object, got {type(value).__name__}")
        return None
    message = A2AMessage()
    try:
        json_format.ParseDict(dict(value), message)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        errors.add(path, "a2a.protojson", f"not an A2A Message in ProtoJSON: {exc}")
        return None
    return message


def _struct_dict(value: Any) -> Any:
    return json_format.MessageToDict(value)


def _read_extended(message: A2AMessage, path: str, errors: PayloadErrors, reporter: Reporter) -> AgentMessage | None:
    where = f'{path}.metadata["{EXTENSION_URI}"]'
    envelope = message_pb2.Message()
    try:
        json_format.ParseDict(_struct_dict(message.metadata[EXTENSION_URI]), envelope)
    except (json_format.ParseError, ValueError, TypeError, RecursionError, AttributeError) as exc:
        errors.add(where, "a2a.extension", f"not an agentmsg.v1.Message envelope in ProtoJSON: {exc}")
        return None
    role_arm = envelope.WhichOneof("role")
    if role_arm is None:
        errors.add(where, "a2a.extension", "the envelope has no role")
        return None
    envelope.id = message.message_id
    body = getattr(envelope, role_arm)
    takes_content = "content" in body.DESCRIPTOR.fields_by_name
    for j, part in enumerate(message.parts):
        part_path = f"{path}.parts[{j}]"
        marker = _part_marker(part, part_path, errors)
        if marker is not None:
            _report_metadata([key for key in part.metadata if key != EXTENSION_URI], f"{part_path}.metadata", reporter)
        if marker is None:  # a part without the extension (added on the way): read as plain A2A
            block = _plain_block(part, role_arm == "assistant", part_path, reporter)
            if block is not None and takes_content:
                body.content.append(block)
            continue
        if marker.get("projection") is True:
            continue
        if not takes_content:
            errors.add(part_path, "a2a.extension", f"a {role_arm} message holds no content blocks")
            continue
        block = _extended_block(part, marker, body.content, part_path, errors)
        if block is not None:
            body.content.append(block)
    others = [key for key in message.metadata if key != EXTENSION_URI]
    _report_metadata(others, f"{path}.metadata", reporter)
    with errors.building(path):
        _validation.ensure(envelope)
        return message_from_proto(envelope)
    return None


def _part_marker(part: Part, path: str, errors: PayloadErrors) -> dict[str, Any] | None:
    if EXTENSION_URI not in part.metadata:
        return None
    value = _struct_dict(part.metadata[EXTENSION_URI])
    if (
        not isinstance(value, dict)
        or len(value) != 1
        or next(iter(value)) not in ("content", "item", "data", "projection")
    ):
        errors.add(
            f'{path}.metadata["{EXTENSION_URI}"]',
            "a2a.extension",
            'expected one of {"content": ...}, {"item": k}, {"data": true}, {"projection": true}',
        )
        return {"projection": True}  # the error is recorded; the part adds nothing
    return value


def _extended_block(
    part: Part, marker: dict[str, Any], blocks: Any, path: str, errors: PayloadErrors
) -> content_pb2.Content | None:
    kind = part.WhichOneof("content")
    block = content_pb2.Content()
    where = f'{path}.metadata["{EXTENSION_URI}"]'
    if "data" in marker:
        if kind != "data":
            errors.add(path, "a2a.extension", f"a data-marked part must be a data part, got {kind or 'nothing'}")
            return None
        try:
            json_format.ParseDict(_struct_dict(part.data), block)
        except (json_format.ParseError, ValueError, TypeError, RecursionError, AttributeError) as exc:
            errors.add(f"{path}.data", "a2a.extension", f"not an agentmsg.v1.Content in ProtoJSON: {exc}")
            return None
        return block
    if "item" in marker:
        previous = blocks[-1] if len(blocks) else None
        arm = previous.WhichOneof("kind") if previous is not None else None
        if arm not in _MORE or kind not in ("raw", "url"):
            errors.add(where, "a2a.extension", "an item part must follow an image or audio block and hold a file")
            return None
        item = _ITEM[arm](media_type=part.media_type)
        _fill_source(item, part)
        getattr(getattr(previous, arm), _MORE[arm]).append(item)
        return None
    if marker["content"] == {"text": {}} and kind == "text":  # the common case, without ProtoJSON
        block.text.text = part.text
        return block
    try:
        json_format.ParseDict(marker["content"], block)
    except (json_format.ParseError, ValueError, TypeError, RecursionError, AttributeError) as exc:
        errors.add(where, "a2a.extension", f"not an agentmsg.v1.Content in ProtoJSON: {exc}")
        return None
    arm = block.WhichOneof("kind")
    if arm == "text" and kind == "text":
        block.text.text = part.text
    elif arm in _MEDIA_ARMS and kind in ("raw", "url"):
        media = getattr(block, arm)
        _fill_source(media, part)
        media.media_type = part.media_type
        if arm == "document":
            media.filename = part.filename
    else:
        errors.add(path, "a2a.extension", f"a {arm or 'kindless'} block cannot be read from a {kind or 'empty'} part")
        return None
    return block


def _fill_source(target: Any, part: Part) -> None:
    if part.WhichOneof("content") == "raw":
        target.data = part.raw
    else:
        target.url = part.url


def _read_plain(message: A2AMessage, path: str, errors: PayloadErrors, reporter: Reporter) -> AgentMessage | None:
    if message.role not in (Role.ROLE_USER, Role.ROLE_AGENT):
        errors.add(f"{path}.role", "a2a.role", f"expected ROLE_USER or ROLE_AGENT, got {Role.Name(message.role)}")
        return None
    agent = message.role == Role.ROLE_AGENT
    pb = message_pb2.Message(id=message.message_id)
    body = pb.assistant if agent else pb.user
    body.SetInParent()
    for j, part in enumerate(message.parts):
        block = _plain_block(part, agent, f"{path}.parts[{j}]", reporter)
        if block is not None:
            body.content.append(block)
    _report_metadata(list(message.metadata), f"{path}.metadata", reporter)
    if message.reference_task_ids:
        reporter.loss(f"{path}.reference_task_ids", "the referenced task ids", "agentmsg messages have no tasks")
    if not body.content:
        reporter.loss(path, "the message", "none of its parts has an agentmsg block")
        return None
    pb.timestamp.FromMicroseconds(time.time_ns() // 1000)
    with errors.building(path):
        _validation.ensure(pb)
        return message_from_proto(pb)
    return None


def _integral(value: Any) -> Any:
    """JSON from a ``google.protobuf.Value`` with its whole numbers as integers (a Value holds doubles only)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


def _report_metadata(keys: Iterable[str], path: str, reporter: Reporter) -> None:
    for key in keys:
        reporter.loss(f'{path}["{key}"]', f"metadata {key!r}", "agentmsg has no place for another extension's data")


def _plain_block(part: Part, agent: bool, path: str, reporter: Reporter) -> content_pb2.Content | None:
    kind = part.WhichOneof("content")
    if part.metadata:
        _report_metadata(list(part.metadata), f"{path}.metadata", reporter)
    if kind == "text":
        if part.filename or part.media_type not in ("", "text/plain"):
            reporter.loss(path, "the text part's filename and media type", "agentmsg text has neither")
        return content_pb2.Content(text=content_pb2.TextContent(text=part.text))
    if kind == "data":
        reporter.loss(path, "the data part's type", "agentmsg has no data block: read as its JSON text")
        text = json.dumps(_integral(json_format.MessageToDict(part.data)), ensure_ascii=False, separators=(",", ":"))
        return content_pb2.Content(text=content_pb2.TextContent(text=text))
    if kind not in ("raw", "url"):
        reporter.loss(path, "an empty part", "it holds no content")
        return None
    if agent:
        reporter.loss(path, "the file", "an agentmsg assistant message holds no files")
        return None
    media_type = part.media_type.lower()
    block = content_pb2.Content()
    arm = "image" if media_type.startswith("image/") else "audio" if media_type.startswith("audio/") else "document"
    media = getattr(block, arm)
    _fill_source(media, part)
    media.media_type = part.media_type
    if arm == "document":
        media.filename = part.filename
    elif part.filename:
        reporter.loss(f"{path}.filename", "the filename", f"agentmsg {arm} blocks have no filename")
    return block


# --- the agent side ---------------------------------------------------------------------------------------------

Respond = Callable[[AgentMessage, RequestContext], Awaitable[AgentMessage]]


class AgentmsgExecutor(AgentExecutor):
    """An A2A agent executor for an agent written against agentmsg messages.

    ``respond(message, context)`` gets each incoming A2A message as an agentmsg message (read through the
    extension when it carries it) and returns the agentmsg answer, which goes back as one A2A message: with
    the extension when the client asked for it (``A2A-Extensions``), else plain A2A (what a plain reader
    cannot see is logged at debug level; a message with no plain part left is answered by a text part
    saying so). A message agentmsg cannot read is refused with the A2A ``InvalidParamsError`` naming the
    field and the problem.
    """

    def __init__(self, respond: Respond) -> None:
        self._respond = respond

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Read the request's message, ask ``respond``, enqueue the answer as one A2A message."""
        if context.message is None:
            raise InvalidParamsError(message="the request carries no message")
        read = ConversionReport()
        try:
            messages = from_a2a([context.message], report=read)
        except ValidationError as exc:
            raise InvalidParamsError(message=f"agentmsg cannot read the message: {exc}") from None
        if not messages:
            raise InvalidParamsError(message=f"agentmsg cannot read the message: {read.summary()}")
        message = messages[0]
        answer = await self._respond(message, context)
        extension = EXTENSION_URI in context.requested_extensions
        report = ConversionReport()
        written = to_a2a([answer], extension=extension, context_id=context.context_id or "", task_id="", report=report)
        if report:
            log.debug("A2A answer %s to a plain client: %s", answer.id, report.summary())
        if written:
            reply = written[0]
        else:
            reply = A2AMessage(
                message_id=answer.id,
                context_id=context.context_id or "",
                role=Role.ROLE_AGENT,
                parts=[Part(text=f"[no plain A2A content: {report.summary()}]")],
            )
        await event_queue.enqueue_event(reply)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """An answer is one message, made at once: there is nothing running to cancel."""
        raise UnsupportedOperationError(message="an agentmsg A2A answer is a single message: nothing to cancel")
