"""Python clients for the agentmsg service, speaking the wrapper types.

:class:`Client` (blocking) and :class:`AsyncClient` (asyncio) have the same
methods. Every failure is raised as the agentmsg error class the server
raised (``ValidationError`` with its violations, ``NotFoundError``...), or the
class for the status gRPC itself produced (``DeadlineExceededError``,
``UnavailableError``, ``ResourceExhaustedError``).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

import grpc

from agentmsg import formats
from agentmsg.content import ToolCallContent, ToolResultContent
from agentmsg.errors import ValidationError
from agentmsg.messages import AgentMessage, AssistantMessage, BaseMessage, ProviderState, message_from_proto
from agentmsg.providers._common import ConversionReport, Loss
from agentmsg.service import status
from agentmsg.service.frames import APPEND_MESSAGE, append_request
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES, HTTP2_MAX_FRAME
from agentmsg.service.telemetry import instrument_call, instrument_stub
from agentmsg.streaming import StreamEvent
from agentmsg.tools import ToolDefinition
from agentmsg.v1 import (
    content_pb2,
    convert_service_pb2,
    convert_service_pb2_grpc,
    session_service_pb2,
    session_service_pb2_grpc,
    tool_service_pb2,
    tool_service_pb2_grpc,
)

__all__ = ["AsyncClient", "Client", "Converted", "ConvertedMessages", "Live", "Logged", "RegisteredTool", "SessionInfo"]


@dataclass(frozen=True, slots=True)
class Logged:
    """A message from a session's log, with its offset."""

    offset: int
    message: AgentMessage


@dataclass(frozen=True, slots=True)
class Live:
    """A stream event of a message being generated, relayed live (not logged)."""

    stream_id: str
    event: StreamEvent


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session: its id, last offset and first/last append times."""

    session_id: str
    last_offset: int
    create_time: datetime
    update_time: datetime


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A tool and the runner serving it."""

    tool: ToolDefinition
    runner_name: str
    runner_id: str


@dataclass(frozen=True, slots=True)
class Converted:
    """Messages converted by the server (``convert_to``): the payload as JSON text, exactly as
    :func:`agentmsg.formats.dumps` writes the Python converter's output, and the converter's report (losses, and
    the tool-call ids it rewrote)."""

    json: str
    report: ConversionReport

    @property
    def payload(self) -> Any:
        """The payload, parsed."""
        return json.loads(self.json)


@dataclass(frozen=True, slots=True)
class ConvertedMessages:
    """A payload read by the server (``convert_from``): the messages, and what they could not hold."""

    messages: list[AgentMessage]
    report: ConversionReport


def _to_provider_request(
    format: str,  # noqa: A002 - the format's name, as `agentmsg convert --to` takes it
    messages: Sequence[BaseMessage] | None,
    session_id: str | None,
    leaf: str,
    strict: bool,
    response: bool,
) -> convert_service_pb2.ToProviderRequest:
    if (messages is None) == (session_id is None):
        raise ValidationError.single("input", "required", "give the messages, or a session_id (not both)")
    request = convert_service_pb2.ToProviderRequest(
        format=formats.wire_format(format), strict=strict, response=response
    )
    if session_id is not None:
        request.input.session.session_id = session_id
        request.input.session.leaf_entry_id = leaf
    else:
        request.input.messages.SetInParent()
        request.input.messages.messages.extend(_message_pb(m) for m in messages or ())
    return request


def _from_provider_request(
    format: str,  # noqa: A002 - the format's name, as `agentmsg convert --from` takes it
    payload: Any,
    response: bool,
    id_map: dict[str, str] | None,
    pass_through_unknown: bool | None,
) -> convert_service_pb2.FromProviderRequest:
    text = payload if isinstance(payload, str) else formats.dumps(payload)
    request = convert_service_pb2.FromProviderRequest(
        format=formats.wire_format(format), json=text, response=response, id_map=id_map or {}
    )
    if pass_through_unknown is not None:
        request.pass_through_unknown = pass_through_unknown
    return request


def _losses(losses: Iterable[convert_service_pb2.ConversionLoss]) -> list[Loss]:
    return [Loss(loss.path, loss.what, loss.reason) for loss in losses]


def _converted(response: convert_service_pb2.ToProviderResponse) -> Converted:
    return Converted(response.json, ConversionReport(_losses(response.losses), dict(response.id_map)))


def _converted_messages(response: convert_service_pb2.FromProviderResponse) -> ConvertedMessages:
    messages = [message_from_proto(m) for m in response.messages]
    return ConvertedMessages(messages, ConversionReport(_losses(response.losses)))


# Calls gRPC retries by itself when the server is UNAVAILABLE (restarting, a connection refused): the
# idempotent ones. Appends are idempotent by message id (a retried append lands on the same offset), a
# delete of a session already gone deletes nothing, reads change nothing. CallTool, PublishStream,
# BranchSession and CompactSession are not retried (a second attempt could act twice); Subscribe resumes
# itself from its last offset (``subscribe(..., resume=True)``).
RETRIED_METHODS = {
    "agentmsg.v1.SessionService": (
        "AppendMessage",
        "AppendMessages",
        "ListMessages",
        "ListSessions",
        "BuildContext",
        "DeleteSession",
    ),
    "agentmsg.v1.ToolService": ("ListTools",),
    "agentmsg.v1.ConvertService": ("ToProvider", "FromProvider"),
}
# At most four attempts, 0.7 s of backoff in all (gRPC waits a random part of 0.1, 0.2, 0.4 s): a blip is
# ridden out, and an unreachable server is still reported within a couple of seconds.
RETRY_POLICY = {
    "maxAttempts": 4,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}
SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": [
                    {"service": service, "method": method}
                    for service, methods in RETRIED_METHODS.items()
                    for method in methods
                ],
                "retryPolicy": RETRY_POLICY,
            }
        ]
    }
)
RECONNECT_BACKOFF_MS = (100, 5000)  # a channel's first and longest wait between connection attempts
# A resumed subscription waits this long before its first new attempt, doubling up to the cap.
RESUME_BACKOFF = 0.1
RESUME_BACKOFF_MAX = 5.0
# ``history`` reads pages of this many messages (the most ``ListMessages`` gives), this many pages in flight.
HISTORY_PAGE = 1000
HISTORY_AHEAD = 4


def _options(max_message_bytes: int) -> list[tuple[str, Any]]:
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.http2.max_frame_size", HTTP2_MAX_FRAME),
        ("grpc.enable_retries", 1),
        ("grpc.service_config", SERVICE_CONFIG),
        # Reconnect soon after a server comes back: gRPC's defaults wait 1 s at first and up to 120 s,
        # during which every call (retries and resumed subscriptions included) fails at once.
        ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
        ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[1]),
    ]


def _resumable(exc: grpc.RpcError) -> bool:
    """A subscription that ended like this may be resumed: the server went away or lost its store."""
    return exc.code() == grpc.StatusCode.UNAVAILABLE


def _backoff(delay: float) -> tuple[float, float]:
    """This wait (with jitter, so many clients do not return at once) and the next delay."""
    return delay * (0.5 + random.random() / 2), min(delay * 2, RESUME_BACKOFF_MAX)  # noqa: S311 - jitter


def _credentials(
    root_certificates: bytes | None, private_key: bytes | None, certificate_chain: bytes | None
) -> grpc.ChannelCredentials | None:
    if root_certificates is None and certificate_chain is None:
        return None
    return grpc.ssl_channel_credentials(root_certificates, private_key, certificate_chain)


def _message_pb(message: BaseMessage) -> Any:
    if not isinstance(message, BaseMessage):
        raise ValidationError.single("message", "type", f"expected a message, got {type(message).__name__}")
    return message.pb


# A frozen dataclass's __init__ sets each field through object.__setattr__; a subscriber makes one Logged per
# message, so they are filled through the slots' own descriptors instead (same object, a third of the cost).
_new = object.__new__
_set_offset: Any = Logged.__dict__["offset"].__set__
_set_message: Any = Logged.__dict__["message"].__set__


def _message_bytes(message: BaseMessage) -> bytes:
    if not isinstance(message, BaseMessage):
        raise ValidationError.single("message", "type", f"expected a message, got {type(message).__name__}")
    return message.to_bytes()


def _logged(messages: Iterable[session_service_pb2.LoggedMessage]) -> Iterator[Logged]:
    """Each logged message of a reply, wrapped as it is handed out: a reply's wrappers are not made (and kept
    alive) all at once, which under the cyclic garbage collector cost reads of 1,000-message pages ~2x the
    time of wrapping one message at a time (each collection walked the page's young wrappers, then promoted them)."""
    for m in messages:
        item = _new(Logged)
        _set_offset(item, m.offset)
        _set_message(item, message_from_proto(m.message))
        yield item


def _list_request(session_id: str, after: int, page_size: int) -> session_service_pb2.ListMessagesRequest:
    return session_service_pb2.ListMessagesRequest(session_id=session_id, after_offset=after, page_size=page_size)


class _Pages:
    """The ``ListMessages`` calls of one history read, up to :data:`HISTORY_AHEAD` in flight once the first page
    has come back with more to follow.

    Offsets are dense, so a full page after ``a`` ends at ``a + page_size``: the pages after it are asked for on
    that guess before it arrives. A page that comes back shorter (its reply reached the byte budget) or last
    says where the next one really starts: the guesses after it are cancelled and asked again from there.
    ``page_size`` 0 (the server's default size) asks one page at a time.
    """

    def __init__(self, ask: Callable[[int], Any], after: int, page_size: int) -> None:
        self._ask = ask
        self._size = page_size
        self._calls: deque[tuple[int, Any]] = deque()
        self._next = after
        self._fill(1)  # the first page alone: it says whether the session exists, and may be the only one

    def _fill(self, depth: int) -> None:
        while len(self._calls) < depth:
            self._calls.append((self._next, self._ask(self._next)))
            self._next += self._size

    def next(self) -> Any:
        """The call of the next page."""
        return self._calls[0][1]

    def arrived(self, following: int) -> int:
        """The next page was read; ``following`` is its ``next_after_offset`` (0: it was the last)."""
        self._calls.popleft()
        if not following:
            self.cancel()
            return 0
        if not self._calls or self._calls[0][0] != following:
            self.cancel()
            self._next = following
        self._fill(HISTORY_AHEAD if self._size else 1)
        return following

    def cancel(self) -> list[Any]:
        """Cancel the calls still out; they are returned."""
        calls = [call for _, call in self._calls]
        self._calls.clear()
        for call in calls:
            call.cancel()
        return calls


def _items(response: session_service_pb2.SubscribeResponse) -> Iterator[Logged | Live]:
    yield from _logged(response.messages)
    if response.HasField("live_event"):
        yield Live(response.live_event.stream_id, StreamEvent._wrap(response.live_event.event))


def _session(info: session_service_pb2.SessionInfo) -> SessionInfo:
    return SessionInfo(
        info.session_id,
        info.last_offset,
        info.create_time.ToDatetime(tzinfo=UTC),
        info.update_time.ToDatetime(tzinfo=UTC),
    )


def _publish_requests(
    session_id: str, events: Iterable[StreamEvent]
) -> Iterator[session_service_pb2.PublishStreamRequest]:
    for i, event in enumerate(events):
        yield session_service_pb2.PublishStreamRequest(session_id=session_id if i == 0 else "", event=event.pb)


def _compact_request(
    session_id: str,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int | None,
    provider_state: ProviderState | None,
    entry_id: str,
) -> session_service_pb2.CompactSessionRequest:
    request = session_service_pb2.CompactSessionRequest(
        session_id=session_id, summary=summary, first_kept_entry_id=first_kept_entry_id, entry_id=entry_id
    )
    if tokens_before is not None:
        request.tokens_before = tokens_before
    if provider_state is not None:
        request.provider_state.CopyFrom(provider_state.pb)
    return request


class Client:
    """A blocking client. ``token`` is sent as ``authorization: Bearer <token>``.

    ``root_certificates`` (PEM) turns on TLS; add ``private_key`` and
    ``certificate_chain`` for mTLS. ``timeout`` is the default deadline of every
    call, in seconds.
    """

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        timeout: float | None = 30.0,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        credentials = _credentials(root_certificates, private_key, certificate_chain)
        opts = list({**dict(_options(max_message_bytes)), **dict(options)}.items())  # yours win
        self._channel = (
            grpc.secure_channel(target, credentials, opts) if credentials else grpc.insecure_channel(target, opts)
        )
        # instrument_stub / instrument_call: with the otel extra and tracing configured, calls carry the trace context.
        self._sessions = instrument_stub(session_service_pb2_grpc.SessionServiceStub(self._channel))
        self._tools = instrument_stub(tool_service_pb2_grpc.ToolServiceStub(self._channel))
        self._convert = instrument_stub(convert_service_pb2_grpc.ConvertServiceStub(self._channel))
        # AppendMessage sends bytes encoded around the message's own encoding (see frames.append_request).
        self._append: Any = instrument_call(
            self._channel.unary_unary(
                APPEND_MESSAGE, response_deserializer=session_service_pb2.AppendMessageResponse.FromString
            ),
            APPEND_MESSAGE,
        )
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.timeout = timeout

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def _call(self, method: Any, request: Any, timeout: float | None = None) -> Any:
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise status.from_rpc_error(exc) from None

    def append(self, session_id: str, message: BaseMessage) -> int:
        """Append a message; its offset (the same offset again for a retried append)."""
        request = append_request(session_id, _message_bytes(message))
        return int(self._call(self._append, request).offset)

    def append_many(self, session_id: str, messages: Sequence[BaseMessage]) -> list[int]:
        """Append messages atomically, in order; their offsets."""
        request = session_service_pb2.AppendMessagesRequest(
            session_id=session_id, messages=[_message_pb(m) for m in messages]
        )
        return list(self._call(self._sessions.AppendMessages, request).offsets)

    def history(self, session_id: str, *, after: int = 0, page_size: int = HISTORY_PAGE) -> Iterator[Logged]:
        """Every logged message after ``after``, page by page (``ListMessages``).

        Several pages are asked for ahead (:class:`_Pages`), so the server reads them while this one is wrapped
        and handed out; closing the iterator early cancels those calls.
        """
        calls = self._sessions.ListMessages

        def ask(start: int) -> Any:
            request = _list_request(session_id, start, page_size)
            return calls.future(request, timeout=self.timeout, metadata=self._metadata)

        pages = _Pages(ask, after, page_size)
        try:
            while True:
                try:
                    response = pages.next().result()
                except grpc.RpcError as exc:
                    raise status.from_rpc_error(exc) from None
                following = pages.arrived(response.next_after_offset)
                yield from _logged(response.messages)
                if not following:
                    return
        finally:
            pages.cancel()

    def subscribe(
        self,
        session_id: str,
        *,
        after: int = 0,
        live_events: bool = False,
        max_batch: int = 0,
        timeout: float | None = None,
        resume: bool = False,
    ) -> Iterator[Logged | Live]:
        """The log after ``after``, then live. Resume with ``after=`` the last offset you got.

        It runs until the caller stops iterating (close the generator to
        cancel the call) or ``timeout`` seconds pass. With ``resume=True`` a
        subscription that ends UNAVAILABLE (the server restarting, a cluster
        node losing its database) subscribes again by itself from the last
        offset it delivered, after a capped exponential backoff: no logged
        message is lost or repeated. With ``live_events``, a subscription
        (new or resumed) starts with the events that rebuild each message
        still being generated (live catch-up), so after a resume a stream you
        were folding starts again with its ``message_start``: fold it afresh.
        """
        cursor, delay = after, RESUME_BACKOFF
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            request = session_service_pb2.SubscribeRequest(
                session_id=session_id, after_offset=cursor, live_events=live_events, max_batch=max_batch
            )
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            call = self._sessions.Subscribe(request, timeout=remaining, metadata=self._metadata)
            try:
                for response in call:
                    for item in _items(response):
                        if isinstance(item, Logged):
                            cursor, delay = item.offset, RESUME_BACKOFF
                        yield item
                return
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.CANCELLED and call.cancelled():  # type: ignore[attr-defined]
                    return
                if not (resume and _resumable(exc)):
                    raise status.from_rpc_error(exc) from None
            finally:
                call.cancel()
            wait, delay = _backoff(delay)
            time.sleep(wait)

    def publish_stream(self, session_id: str, events: Iterable[StreamEvent]) -> tuple[int, AssistantMessage]:
        """Relay a message's stream events live; the finished message's offset and the message."""
        try:
            response = self._sessions.PublishStream(
                _publish_requests(session_id, events), timeout=self.timeout, metadata=self._metadata
            )
        except grpc.RpcError as exc:
            raise status.from_rpc_error(exc) from None
        return response.offset, AssistantMessage.from_proto(response.message)

    def branch(self, session_id: str, from_entry_id: str, summary: str, *, entry_id: str = "") -> Logged:
        """Go back to ``from_entry_id``, leaving ``summary`` of the branch being left; the summary entry."""
        request = session_service_pb2.BranchSessionRequest(
            session_id=session_id, from_entry_id=from_entry_id, summary=summary, entry_id=entry_id
        )
        response = self._call(self._sessions.BranchSession, request)
        return Logged(response.offset, message_from_proto(response.entry))

    def compact(
        self,
        session_id: str,
        summary: str,
        *,
        first_kept_entry_id: str = "",
        tokens_before: int | None = None,
        provider_state: ProviderState | None = None,
        entry_id: str = "",
    ) -> Logged:
        """Compact the history up to the session's leaf; the compaction entry."""
        request = _compact_request(session_id, summary, first_kept_entry_id, tokens_before, provider_state, entry_id)
        response = self._call(self._sessions.CompactSession, request)
        return Logged(response.offset, message_from_proto(response.entry))

    def build_context(self, session_id: str, *, leaf: str = "") -> list[AgentMessage]:
        """The messages a model sees for the path to ``leaf`` (default: the last entry).

        A context too large for one reply comes in parts; they are read here, all for the same leaf.
        """
        found: list[AgentMessage] = []
        token = ""
        while True:
            request = session_service_pb2.BuildContextRequest(
                session_id=session_id, leaf_entry_id=leaf, page_token=token
            )
            response = self._call(self._sessions.BuildContext, request)
            found.extend(message_from_proto(m) for m in response.messages)
            token = response.next_page_token
            if not token:
                return found

    def delete_session(self, session_id: str) -> int:
        """Delete a session and all its messages; how many it held (0: there was no such session, not an error).

        Its subscribers end with :class:`~agentmsg.NotFoundError`; the id may be used again (a new session).
        Retried on UNAVAILABLE like the other idempotent calls: a retry after a delete that did happen returns 0.
        """
        request = session_service_pb2.DeleteSessionRequest(session_id=session_id)
        return int(self._call(self._sessions.DeleteSession, request).deleted_messages)

    def sessions(self, *, page_size: int = 100) -> list[SessionInfo]:
        """Every session, ordered by id."""
        found: list[SessionInfo] = []
        token = ""
        while True:
            request = session_service_pb2.ListSessionsRequest(page_size=page_size, page_token=token)
            response = self._call(self._sessions.ListSessions, request)
            found.extend(_session(info) for info in response.sessions)
            token = response.next_page_token
            if not token:
                return found

    def list_tools(self) -> list[RegisteredTool]:
        """The tools runners serve now."""
        response = self._call(self._tools.ListTools, tool_service_pb2.ListToolsRequest())
        return [RegisteredTool(ToolDefinition._wrap(t.tool), t.runner_name, t.runner_id) for t in response.tools]

    def call_tool(
        self, call: ToolCallContent, *, timeout: float | None = None, session_id: str = ""
    ) -> ToolResultContent:
        """Run a tool call on its runner, within ``timeout`` seconds (the default deadline otherwise).

        ``session_id`` names the session the call belongs to: a tool that requires approval waits there for a
        person's decision (the caller needs the session's scope), and is refused without one.
        """
        request = _call_request(call, session_id)
        response = self._call(self._tools.CallTool, request, timeout)
        return ToolResultContent._wrap(_wrap_result(response.result))

    def convert_to(
        self,
        format: str,  # noqa: A002 - the format's name, as `agentmsg convert --to` takes it
        messages: Sequence[BaseMessage] | None = None,
        *,
        session_id: str | None = None,
        leaf: str = "",
        strict: bool = False,
        response: bool = False,
    ) -> Converted:
        """``messages``, or the context of ``session_id`` for ``leaf`` (default: its last entry), in ``format``
        (``openai-chat``, ``anthropic``...: :data:`agentmsg.formats.WIRE_FORMATS`), converted by the server as
        :func:`agentmsg.formats.write` converts here. ``strict``: a :class:`~agentmsg.ValidationError` (one violation
        per loss) instead of any loss; ``response``: the provider's response object for one assistant message."""
        request = _to_provider_request(format, messages, session_id, leaf, strict, response)
        return _converted(self._call(self._convert.ToProvider, request))

    def convert_from(
        self,
        format: str,  # noqa: A002 - the format's name, as `agentmsg convert --from` takes it
        payload: Any,
        *,
        response: bool = False,
        id_map: dict[str, str] | None = None,
        pass_through_unknown: bool | None = None,
    ) -> ConvertedMessages:
        """A ``format`` payload (JSON text, or data to write as JSON) read by the server as agentmsg messages, as
        :func:`agentmsg.formats.read` reads it here. ``id_map``: a ``convert_to`` report's, to restore tool-call ids."""
        request = _from_provider_request(format, payload, response, id_map, pass_through_unknown)
        return _converted_messages(self._call(self._convert.FromProvider, request))


def _call_request(call: ToolCallContent, session_id: str) -> tool_service_pb2.CallToolRequest:
    if not isinstance(call, ToolCallContent):
        raise ValidationError.single("call", "type", f"expected a ToolCallContent, got {type(call).__name__}")
    if not isinstance(session_id, str):
        raise ValidationError.single("session_id", "type", f"expected str, got {type(session_id).__name__}")
    return tool_service_pb2.CallToolRequest(call=call.pb.tool_call, session_id=session_id)


def _wrap_result(result: Any) -> Any:
    return content_pb2.Content(tool_result=result)


class AsyncClient:
    """The asyncio client: the same methods as :class:`Client`, awaited."""

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        timeout: float | None = 30.0,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        credentials = _credentials(root_certificates, private_key, certificate_chain)
        opts = list({**dict(_options(max_message_bytes)), **dict(options)}.items())  # yours win
        self._channel = (
            grpc.aio.secure_channel(target, credentials, opts)
            if credentials
            else grpc.aio.insecure_channel(target, opts)
        )
        # instrument_stub / instrument_call: with the otel extra and tracing configured, calls carry the trace context.
        self._sessions = instrument_stub(session_service_pb2_grpc.SessionServiceStub(self._channel))
        self._tools = instrument_stub(tool_service_pb2_grpc.ToolServiceStub(self._channel))
        self._convert = instrument_stub(convert_service_pb2_grpc.ConvertServiceStub(self._channel))
        self._append: Any = instrument_call(
            self._channel.unary_unary(
                APPEND_MESSAGE, response_deserializer=session_service_pb2.AppendMessageResponse.FromString
            ),
            APPEND_MESSAGE,
        )
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.timeout = timeout

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def _call(self, method: Any, request: Any, timeout: float | None = None) -> Any:
        try:
            return await method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise status.from_rpc_error(exc) from None

    async def append(self, session_id: str, message: BaseMessage) -> int:
        """Append a message; its offset."""
        request = append_request(session_id, _message_bytes(message))
        return int((await self._call(self._append, request)).offset)

    async def append_many(self, session_id: str, messages: Sequence[BaseMessage]) -> list[int]:
        """Append messages atomically, in order; their offsets."""
        request = session_service_pb2.AppendMessagesRequest(
            session_id=session_id, messages=[_message_pb(m) for m in messages]
        )
        return list((await self._call(self._sessions.AppendMessages, request)).offsets)

    async def history(self, session_id: str, *, after: int = 0, page_size: int = HISTORY_PAGE) -> AsyncIterator[Logged]:
        """Every logged message after ``after``, page by page, several asked for ahead (as :meth:`Client.history`)."""
        calls = self._sessions.ListMessages

        def ask(start: int) -> Any:
            return asyncio.ensure_future(self._call(calls, _list_request(session_id, start, page_size)))

        pages = _Pages(ask, after, page_size)
        try:
            while True:
                response = await pages.next()
                following = pages.arrived(response.next_after_offset)
                for item in _logged(response.messages):
                    yield item
                if not following:
                    return
        finally:
            for task in pages.cancel():
                if task.done() and not task.cancelled():
                    task.exception()  # a page that failed after the caller stopped reading: retrieved, not logged

    async def subscribe(
        self,
        session_id: str,
        *,
        after: int = 0,
        live_events: bool = False,
        max_batch: int = 0,
        timeout: float | None = None,
        resume: bool = False,
    ) -> AsyncIterator[Logged | Live]:
        """The log after ``after``, then live (``async for item in client.subscribe(...)``).

        ``resume=True``: resumes by itself after UNAVAILABLE, as :meth:`Client.subscribe` does.
        """
        cursor, delay = after, RESUME_BACKOFF
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            request = session_service_pb2.SubscribeRequest(
                session_id=session_id, after_offset=cursor, live_events=live_events, max_batch=max_batch
            )
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            call = self._sessions.Subscribe(request, timeout=remaining, metadata=self._metadata)
            try:
                async for response in call:
                    for item in _items(response):
                        if isinstance(item, Logged):
                            cursor, delay = item.offset, RESUME_BACKOFF
                        yield item
                return
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.CANCELLED and call.cancelled():
                    return
                if not (resume and _resumable(exc)):
                    raise status.from_rpc_error(exc) from None
            finally:
                call.cancel()
            wait, delay = _backoff(delay)
            await asyncio.sleep(wait)

    async def publish_stream(
        self, session_id: str, events: Iterable[StreamEvent] | AsyncIterable[StreamEvent]
    ) -> tuple[int, AssistantMessage]:
        """Relay a message's stream events live (as they come); the finished message's offset and the message."""

        call = self._sessions.PublishStream(timeout=self.timeout, metadata=self._metadata)
        try:
            first = True
            if isinstance(events, AsyncIterable):
                async for event in events:
                    await call.write(
                        session_service_pb2.PublishStreamRequest(session_id=session_id if first else "", event=event.pb)
                    )
                    first = False
            else:
                for event in events:
                    await call.write(
                        session_service_pb2.PublishStreamRequest(session_id=session_id if first else "", event=event.pb)
                    )
                    first = False
            await call.done_writing()
            response = await call
        except grpc.RpcError as exc:
            raise status.from_rpc_error(exc) from None
        except BaseException:
            call.cancel()
            raise
        return response.offset, AssistantMessage.from_proto(response.message)

    async def branch(self, session_id: str, from_entry_id: str, summary: str, *, entry_id: str = "") -> Logged:
        """Go back to ``from_entry_id``, leaving ``summary`` of the branch being left; the summary entry."""
        request = session_service_pb2.BranchSessionRequest(
            session_id=session_id, from_entry_id=from_entry_id, summary=summary, entry_id=entry_id
        )
        response = await self._call(self._sessions.BranchSession, request)
        return Logged(response.offset, message_from_proto(response.entry))

    async def compact(
        self,
        session_id: str,
        summary: str,
        *,
        first_kept_entry_id: str = "",
        tokens_before: int | None = None,
        provider_state: ProviderState | None = None,
        entry_id: str = "",
    ) -> Logged:
        """Compact the history up to the session's leaf; the compaction entry."""
        request = _compact_request(session_id, summary, first_kept_entry_id, tokens_before, provider_state, entry_id)
        response = await self._call(self._sessions.CompactSession, request)
        return Logged(response.offset, message_from_proto(response.entry))

    async def build_context(self, session_id: str, *, leaf: str = "") -> list[AgentMessage]:
        """The messages a model sees for the path to ``leaf`` (default: the last entry).

        A context too large for one reply comes in parts; they are read here, all for the same leaf.
        """
        found: list[AgentMessage] = []
        token = ""
        while True:
            request = session_service_pb2.BuildContextRequest(
                session_id=session_id, leaf_entry_id=leaf, page_token=token
            )
            response = await self._call(self._sessions.BuildContext, request)
            found.extend(message_from_proto(m) for m in response.messages)
            token = response.next_page_token
            if not token:
                return found

    async def delete_session(self, session_id: str) -> int:
        """Delete a session and all its messages; how many it held (see :meth:`Client.delete_session`)."""
        request = session_service_pb2.DeleteSessionRequest(session_id=session_id)
        return int((await self._call(self._sessions.DeleteSession, request)).deleted_messages)

    async def sessions(self, *, page_size: int = 100) -> list[SessionInfo]:
        """Every session, ordered by id."""
        found: list[SessionInfo] = []
        token = ""
        while True:
            request = session_service_pb2.ListSessionsRequest(page_size=page_size, page_token=token)
            response = await self._call(self._sessions.ListSessions, request)
            found.extend(_session(info) for info in response.sessions)
            token = response.next_page_token
            if not token:
                return found

    async def list_tools(self) -> list[RegisteredTool]:
        """The tools runners serve now."""
        response = await self._call(self._tools.ListTools, tool_service_pb2.ListToolsRequest())
        return [RegisteredTool(ToolDefinition._wrap(t.tool), t.runner_name, t.runner_id) for t in response.tools]

    async def call_tool(
        self, call: ToolCallContent, *, timeout: float | None = None, session_id: str = ""
    ) -> ToolResultContent:
        """Run a tool call on its runner, within ``timeout`` seconds (``session_id``: see :meth:`Client.call_tool`)."""
        request = _call_request(call, session_id)
        response = await self._call(self._tools.CallTool, request, timeout)
        return ToolResultContent._wrap(_wrap_result(response.result))

    async def convert_to(
        self,
        format: str,  # noqa: A002 - the format's name, as `agentmsg convert --to` takes it
        messages: Sequence[BaseMessage] | None = None,
        *,
        session_id: str | None = None,
        leaf: str = "",
        strict: bool = False,
        response: bool = False,
    ) -> Converted:
        """``messages``, or the context of ``session_id`` for ``leaf`` (default: its last entry), in ``format``
        (``openai-chat``, ``anthropic``...: :data:`agentmsg.formats.WIRE_FORMATS`), converted by the server as
        :func:`agentmsg.formats.write` converts here. ``strict``: a :class:`~agentmsg.ValidationError` (one violation
        per loss) instead of any loss; ``response``: the provider's response object for one assistant message."""
        request = _to_provider_request(format, messages, session_id, leaf, strict, response)
        return _converted(await self._call(self._convert.ToProvider, request))

    async def convert_from(
        self,
        format: str,  # noqa: A002 - the format's name, as `agentmsg convert --from` takes it
        payload: Any,
        *,
        response: bool = False,
        id_map: dict[str, str] | None = None,
        pass_through_unknown: bool | None = None,
    ) -> ConvertedMessages:
        """A ``format`` payload (JSON text, or data to write as JSON) read by the server as agentmsg messages, as
        :func:`agentmsg.formats.read` reads it here. ``id_map``: a ``convert_to`` report's, to restore tool-call ids."""
        request = _from_provider_request(format, payload, response, id_map, pass_through_unknown)
        return _converted_messages(await self._call(self._convert.FromProvider, request))
