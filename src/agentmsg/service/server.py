"""The agentmsg gRPC server: sessions, live relay and tools, on grpc.aio.

``create_server(config)`` builds and starts a server and returns it with its
port (tests bind 127.0.0.1:0); ``serve(config)`` runs one until SIGINT or
SIGTERM, then shuts down gracefully: health goes NOT_SERVING, new calls are
refused, calls in flight get ``config.grace`` seconds to finish.

Every request is validated against the contract (protovalidate) before it is
acted on; a violation is INVALID_ARGUMENT with ``google.rpc.BadRequest`` field
violations. Every other failure maps to a status through
:mod:`agentmsg.service.status`; nothing a peer sends crashes the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from agentmsg import _validation
from agentmsg.errors import (
    AgentMsgError,
    ConflictError,
    NotFoundError,
    UnauthenticatedError,
    UnavailableError,
    ValidationError,
    Violation,
)
from agentmsg.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ProviderState,
    message_from_proto,
)
from agentmsg.service import status
from agentmsg.service.access import Access, Scope
from agentmsg.service.cluster import FORWARDED_HEADER, Cluster, peer_credentials
from agentmsg.service.pgstore import PostgresStore
from agentmsg.service.store import SessionRecord, Store, open_store
from agentmsg.sessions import build_context
from agentmsg.streaming import IncompleteStreamError, StreamAccumulator, StreamProtocolError
from agentmsg.v1 import (
    content_pb2,
    message_pb2,
    session_service_pb2,
    session_service_pb2_grpc,
    stream_pb2,
    tool_service_pb2,
    tool_service_pb2_grpc,
)

__all__ = ["ServerConfig", "create_server", "serve"]

log = logging.getLogger("agentmsg.service")

DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
HTTP2_MAX_FRAME = 16 * 1024 * 1024 - 1  # the largest frame HTTP/2 allows
SESSION_SERVICE = "agentmsg.v1.SessionService"
TOOL_SERVICE = "agentmsg.v1.ToolService"
# Methods any caller may use without a token: load balancers and orchestrators probe health.
PUBLIC_METHODS = ("/grpc.health.v1.Health/",)
LIVE_QUEUE = 1024  # live events buffered per subscriber before the oldest are dropped
SHUTDOWN_STEP = 10.0  # seconds each shutdown step that talks to the store may take


@dataclass
class ServerConfig:
    """How to run the server. The defaults are the embedded setup: SQLite, loopback, no auth."""

    host: str = "127.0.0.1"
    port: int = 0
    # An SQLite path; None or ":memory:" for the in-memory store; a postgresql:// URL for PostgresStore.
    db: str | None = "agentmsg.db"
    pool_size: int = 10  # PostgreSQL: connections per node
    statement_timeout: float = 10.0  # PostgreSQL: seconds before a statement is cancelled
    advertise: str | None = None  # PostgreSQL: the host:port other nodes reach this one at (default host:port)
    peer_ca: bytes | None = None  # PostgreSQL with TLS: PEM CA of the other nodes' certificates
    tokens: Sequence[str] = ()  # bearer tokens with full access; with no tokens and no grants: no auth
    grants: Mapping[str, Scope] = field(default_factory=dict)  # bearer tokens with a scope (see access.py)
    tls_cert: bytes | None = None  # PEM certificate chain of the server
    tls_key: bytes | None = None  # PEM private key of the server
    tls_client_ca: bytes | None = None  # PEM CA bundle: clients must present a certificate it signed (mTLS)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_concurrent_rpcs: int = 256
    reflection: bool = True
    grace: float = 5.0
    store: Store | None = field(default=None, repr=False)  # a ready store (overrides db)


# --- validation and errors ------------------------------------------------------------------


def _check(request: Any) -> None:
    found = _validation.violations_of(request)
    if found:
        raise ValidationError(found, type(request).__name__)


async def _fail(context: grpc.aio.ServicerContext, name: str, exc: Exception) -> None:  # type: ignore[type-arg]
    """End a call that raised: agentmsg errors as rich statuses; anything else INTERNAL, logged."""
    if isinstance(exc, AgentMsgError):
        await status.abort(context, exc)
    log.error("internal error in %s", name, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, "internal error; see the server log")


def _guard(
    method: Callable[..., Awaitable[Any]],
) -> Callable[..., Awaitable[Any]]:
    """Unary handlers: failures end the call through :func:`_fail`."""

    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        try:
            return await method(self, request, context)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            await _fail(context, method.__name__, exc)

    wrapper.__name__ = method.__name__
    return wrapper


def _guard_stream(
    method: Callable[..., AsyncIterator[Any]],
) -> Callable[..., AsyncIterator[Any]]:
    """Streaming handlers: failures end the call through :func:`_fail`."""

    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        try:
            async for item in method(self, request, context):
                yield item
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            await _fail(context, method.__name__, exc)

    wrapper.__name__ = method.__name__
    return wrapper


# --- sessions ------------------------------------------------------------------------------


class LiveHub:
    """Fans live stream events out to the subscribers of a session (bounded, drop-oldest)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[session_service_pb2.LiveEvent]]] = {}
        # Set when the node shares a PostgreSQL with others: relays events to and from the other nodes.
        self.cluster: Cluster | None = None

    @contextlib.contextmanager
    def subscribe(self, session_id: str) -> Any:
        queue: asyncio.Queue[session_service_pb2.LiveEvent] = asyncio.Queue(LIVE_QUEUE)
        self._subscribers.setdefault(session_id, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._subscribers.get(session_id)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._subscribers[session_id]

    def publish(self, session_id: str, live: session_service_pb2.LiveEvent) -> None:
        """An event published on this node: to its subscribers here, and to the other nodes."""
        self.deliver(session_id, live)
        if self.cluster is not None:
            self.cluster.relay(session_id, live)

    async def flushed(self) -> None:
        """Wait until the events published so far have reached the other nodes' feed."""
        if self.cluster is not None:
            await self.cluster.flush()

    async def settled(self) -> None:
        """Wait until the events other nodes sent ahead of what was just read are with this node's subscribers."""
        if self.cluster is not None:
            await self.cluster.settle()

    def deliver(self, session_id: str, live: session_service_pb2.LiveEvent) -> None:
        """Fan an event out to this node's subscribers of the session."""
        for queue in self._subscribers.get(session_id, ()):
            if queue.full():
                # A slow live viewer loses the oldest deltas, never the log: the finished message is logged.
                queue.get_nowait()
            queue.put_nowait(live)


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes([i]) for i in range(0x80)]


def _encode_logged(rows: list[tuple[int, bytes]]) -> bytes:
    """A ``SubscribeResponse`` holding ``rows`` as ``LoggedMessage``s, encoded directly from the stored bytes.

    ``LoggedMessage`` is field 1 ``offset`` (varint, tag 0x08) and field 2
    ``message`` (bytes, tag 0x12); each is field 1 of the response (tag 0x0a).
    """
    parts: list[bytes] = []
    for offset, body in rows:
        logged = b"\x08" + _varint(offset) + b"\x12" + _varint(len(body))
        parts += (b"\x0a", _varint(len(logged) + len(body)), logged, body)
    return b"".join(parts)


def _serialize_response(response: Any) -> bytes:
    """Subscribe responses are messages, or bytes already encoded by :func:`_encode_logged`."""
    return response if isinstance(response, bytes) else bytes(response.SerializeToString())


class _Captured:
    """Stands in for a server to take the generated handlers (so one can be adjusted before registering)."""

    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.handlers = handlers


def _add_session_service(servicer: SessionServicer, server: grpc.aio.Server) -> None:
    captured = _Captured()
    session_service_pb2_grpc.add_SessionServiceServicer_to_server(servicer, captured)  # type: ignore[arg-type]
    handlers = dict(captured.handlers)
    handlers["Subscribe"] = grpc.unary_stream_rpc_method_handler(
        servicer.Subscribe,
        request_deserializer=session_service_pb2.SubscribeRequest.FromString,
        response_serializer=_serialize_response,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SESSION_SERVICE, handlers),))
    server.add_registered_method_handlers(SESSION_SERVICE, handlers)


class SessionServicer(session_service_pb2_grpc.SessionServiceServicer):
    """``agentmsg.v1.SessionService`` over a :class:`~agentmsg.service.store.Store`."""

    def __init__(self, store: Store, hub: LiveHub, access: Access | None = None) -> None:
        self.store = store
        self.hub = hub
        self.access = access if access is not None else Access()
        # Subscribers per session on this node: the store's change event is dropped when the last one leaves.
        self._watchers: dict[str, int] = {}

    def _allow(self, context: grpc.aio.ServicerContext, session_id: str) -> None:  # type: ignore[type-arg]
        """The caller's token must include the session (checked before anything is read: nothing leaks)."""
        if self.access.enabled:
            self.access.check_session(context.invocation_metadata(), session_id)

    async def _last(self, session_id: str) -> tuple[int, message_pb2.Message] | None:
        """The session's last entry (its offset and message), or None for an empty session."""
        last = await self.store.last_offset(session_id)
        rows = await self.store.read(session_id, last - 1, 1) if last else []
        return (rows[0][0], message_pb2.Message.FromString(rows[0][1])) if rows else None

    async def _walk_back(
        self, session_id: str, start: tuple[int, message_pb2.Message]
    ) -> AsyncGenerator[message_pb2.Message, None]:
        """The entries from ``start`` back to the root, each parent found through the store's indexes.

        An entry with no ``parent_id`` follows the one before it in the log: those are read a page at a
        time. Only the path is read, never the rest of the session.
        """
        by_offset: dict[int, message_pb2.Message] = {}
        offset, message = start
        seen: set[str] = set()
        while True:
            if message.id in seen:
                raise ValidationError.single(
                    "parent_id", "session.cycle", f"the parents of {message.id!r} form a cycle"
                )
            seen.add(message.id)
            yield message
            if message.parent_id:
                found = await self.store.entry(session_id, message.parent_id)
                if found is None:
                    raise NotFoundError(
                        f"entry {message.id!r} follows {message.parent_id!r}, which is not in the session"
                    )
                offset, message = found[0], message_pb2.Message.FromString(found[1])
                continue
            if offset <= 1:
                return
            offset -= 1
            if offset not in by_offset:
                by_offset = {
                    o: message_pb2.Message.FromString(b)
                    for o, b in await self.store.before(session_id, offset + 1, 256)
                }
            message = by_offset[offset]

    async def _on_path(self, session_id: str, start: tuple[int, message_pb2.Message], entry_id: str) -> bool:
        """Whether ``entry_id`` lies on the path from ``start`` to the root (the walk stops where it is found)."""
        async with contextlib.aclosing(self._walk_back(session_id, start)) as walk:
            async for message in walk:
                if message.id == entry_id:
                    return True
        return False

    async def _path(self, session_id: str, leaf_id: str) -> list[AgentMessage]:
        """The root-to-leaf path (leaf: ``leaf_id``, or the last entry)."""
        if leaf_id:
            found = await self.store.entry(session_id, leaf_id)
            if found is None:
                raise NotFoundError(f"session {session_id!r} has no entry {leaf_id!r}")
            start: tuple[int, message_pb2.Message] | None = (found[0], message_pb2.Message.FromString(found[1]))
        else:
            start = await self._last(session_id)
        if start is None:
            return []
        path = [message_from_proto(message) async for message in self._walk_back(session_id, start)]
        path.reverse()
        return path

    @_guard
    async def AppendMessage(  # noqa: N802 - the RPC's name
        self,
        request: session_service_pb2.AppendMessageRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.AppendMessageResponse:
        self._allow(context, request.session_id)
        _check(request)
        (appended,) = await self.store.append(request.session_id, [request.message])
        return session_service_pb2.AppendMessageResponse(offset=appended.offset, duplicate=appended.duplicate)

    @_guard
    async def AppendMessages(  # noqa: N802
        self,
        request: session_service_pb2.AppendMessagesRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.AppendMessagesResponse:
        self._allow(context, request.session_id)
        _check(request)
        appended = await self.store.append(request.session_id, list(request.messages))
        return session_service_pb2.AppendMessagesResponse(
            offsets=[a.offset for a in appended], duplicates=[a.duplicate for a in appended]
        )

    @_guard
    async def ListMessages(  # noqa: N802
        self,
        request: session_service_pb2.ListMessagesRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.ListMessagesResponse:
        self._allow(context, request.session_id)
        _check(request)
        size = request.page_size or 100
        rows = await self.store.read(request.session_id, request.after_offset, size + 1)
        response = session_service_pb2.ListMessagesResponse()
        for offset, body in rows[:size]:
            logged = response.messages.add(offset=offset)
            logged.message.ParseFromString(body)
        if len(rows) > size:
            response.next_after_offset = rows[size - 1][0]
        return response

    @_guard_stream
    async def Subscribe(  # noqa: N802
        self,
        request: session_service_pb2.SubscribeRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[session_service_pb2.SubscribeResponse | bytes]:
        self._allow(context, request.session_id)
        _check(request)
        session_id = request.session_id
        cursor = request.after_offset
        batch = request.max_batch or 256
        self._watchers[session_id] = self._watchers.get(session_id, 0) + 1
        try:
            async for response in self._follow(request, session_id, cursor, batch):
                yield response
        finally:
            left = self._watchers.pop(session_id) - 1
            if left:
                self._watchers[session_id] = left
            else:
                self.store.forget(session_id)  # nobody on this node waits for it any more

    async def _follow(
        self, request: session_service_pb2.SubscribeRequest, session_id: str, cursor: int, batch: int
    ) -> AsyncIterator[session_service_pb2.SubscribeResponse | bytes]:
        with self.hub.subscribe(session_id) as live:
            while True:
                changed = self.store.changed(session_id)  # before reading: an append after the read wakes us
                if request.live_events:
                    # Live events queued so far were published before any append we are about to read:
                    # deliver them first, so a message's events never trail the message itself.
                    while not live.empty():
                        yield session_service_pb2.SubscribeResponse(live_event=live.get_nowait())
                rows = await self.store.read(session_id, cursor, batch)
                if rows and request.live_events:
                    # With other nodes, the events relayed ahead of these messages may still be on the way.
                    await self.hub.settled()
                    while not live.empty():
                        yield session_service_pb2.SubscribeResponse(live_event=live.get_nowait())
                if rows:
                    cursor = rows[-1][0]
                    # The stored bytes go out as they are: no parse and re-encode per message.
                    yield _encode_logged(rows)
                    continue
                if not request.live_events:
                    await changed.wait()
                    continue
                waits = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(live.get())]
                try:
                    done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waits:
                        waiter.cancel()
                    await asyncio.gather(*waits, return_exceptions=True)
                got = waits[1]
                if got in done and not got.cancelled() and got.exception() is None:
                    yield session_service_pb2.SubscribeResponse(live_event=got.result())

    async def PublishStream(  # noqa: N802
        self,
        request_iterator: AsyncIterator[session_service_pb2.PublishStreamRequest],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.PublishStreamResponse:
        stream_id = str(uuid.uuid4())
        session_id = ""
        accumulator = StreamAccumulator()
        try:
            async for request in request_iterator:
                _check(request)
                if not session_id:
                    if not request.session_id:
                        raise ValidationError(
                            [Violation("session_id", "required", "the first event must name the session")]
                        )
                    self._allow(context, request.session_id)
                    session_id = request.session_id
                accumulator.add(request.event)
                self.hub.publish(session_id, session_service_pb2.LiveEvent(stream_id=stream_id, event=request.event))
                if self.hub.cluster is not None:
                    await self.hub.cluster.pace()  # a publisher ahead of the relay waits for it
                if accumulator.done:
                    break
            if not session_id:
                raise ValidationError([Violation("event", "required", "the stream sent no events")])
            message = accumulator.finish()
            _validation.check(message.pb)
            # Other nodes get the stream's events before the message: both go through one feed, in order.
            await self.hub.flushed()
            (appended,) = await self.store.append(session_id, [message.pb])
            return session_service_pb2.PublishStreamResponse(offset=appended.offset, message=message.pb)
        except (StreamProtocolError, IncompleteStreamError) as exc:
            self._relay_failure(session_id, stream_id, str(exc))
            await status.abort(context, ValidationError([Violation("event", "stream", str(exc))], "stream"))
        except AgentMsgError as exc:
            self._relay_failure(session_id, stream_id, str(exc))
            await status.abort(context, exc)
        except asyncio.CancelledError:
            self._relay_failure(session_id, stream_id, "the publisher went away mid-stream")
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _relay_failure(self, session_id: str, stream_id: str, reason: str) -> None:
        if session_id:
            error = stream_pb2.StreamEvent(
                error=stream_pb2.StreamError(message=reason, stop_reason=message_pb2.STOP_REASON_ERROR)
            )
            self.hub.publish(session_id, session_service_pb2.LiveEvent(stream_id=stream_id, event=error))

    @_guard
    async def BranchSession(  # noqa: N802 - the RPC's name
        self,
        request: session_service_pb2.BranchSessionRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.BranchSessionResponse:
        self._allow(context, request.session_id)
        _check(request)
        session_id = request.session_id
        # Held by the engine for the read and the append, whichever node serves the call.
        async with self.store.exclusive(session_id):
            if await self.store.entry(session_id, request.from_entry_id) is None:
                raise NotFoundError(f"cannot branch from {request.from_entry_id!r}: the session has no such entry")
            last = await self._last(session_id)
            fields: dict[str, Any] = {"id": request.entry_id} if request.entry_id else {}
            left = last[1].id if last is not None else ""
            entry = BranchSummaryMessage(request.summary, left, parent_id=request.from_entry_id, **fields)
            (appended,) = await self.store.append(session_id, [entry.pb])
        return session_service_pb2.BranchSessionResponse(offset=appended.offset, entry=entry.pb)

    @_guard
    async def CompactSession(  # noqa: N802
        self,
        request: session_service_pb2.CompactSessionRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.CompactSessionResponse:
        self._allow(context, request.session_id)
        _check(request)
        session_id = request.session_id
        async with self.store.exclusive(session_id):
            last = await self._last(session_id)
            if last is None:
                raise NotFoundError(f"session {session_id!r} has no entries to compact")
            first_kept = request.first_kept_entry_id
            # Walk back from the leaf only as far as the first kept entry: the path's tail, not the session.
            if first_kept and not await self._on_path(session_id, last, first_kept):
                raise ValidationError(
                    [
                        Violation(
                            "first_kept_id",
                            "session.first_kept_on_path",
                            f"{first_kept!r} is not on the path to {last[1].id!r}",
                        )
                    ],
                    "compaction",
                )
            fields: dict[str, Any] = {"id": request.entry_id} if request.entry_id else {}
            state = ProviderState._wrap(request.provider_state) if request.HasField("provider_state") else None
            entry = CompactionSummaryMessage(
                request.summary,
                request.tokens_before if request.HasField("tokens_before") else None,
                first_kept_id=first_kept,
                provider_state=state,
                **fields,
            )
            (appended,) = await self.store.append(session_id, [entry.pb])
        return session_service_pb2.CompactSessionResponse(offset=appended.offset, entry=entry.pb)

    @_guard
    async def BuildContext(  # noqa: N802
        self,
        request: session_service_pb2.BuildContextRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.BuildContextResponse:
        self._allow(context, request.session_id)
        _check(request)
        messages = build_context(await self._path(request.session_id, request.leaf_entry_id))
        return session_service_pb2.BuildContextResponse(messages=[m.pb for m in messages])

    @_guard
    async def ListSessions(  # noqa: N802
        self,
        request: session_service_pb2.ListSessionsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> session_service_pb2.ListSessionsResponse:
        _check(request)
        size = request.page_size or 100
        scope = self.access.require(context.invocation_metadata())
        records = await self._sessions_in(scope, request.page_token, size + 1)
        response = session_service_pb2.ListSessionsResponse()
        for record in records[:size]:
            info = response.sessions.add(session_id=record.session_id, last_offset=record.last_offset)
            info.create_time.FromMicroseconds(record.created_us)
            info.update_time.FromMicroseconds(record.updated_us)
        if len(records) > size:
            response.next_page_token = records[size - 1].session_id
        return response

    async def _sessions_in(self, scope: Scope, after: str, limit: int) -> list[SessionRecord]:
        """Up to ``limit`` sessions after ``after`` that the scope includes, ordered by id.

        Each of the scope's prefixes is a contiguous range of ids: one bounded store query a prefix.
        """
        prefixes = scope.listing()
        if prefixes is None:
            return await self.store.sessions(after, limit)
        found: dict[str, SessionRecord] = {}
        for prefix in prefixes:
            for record in await self.store.sessions(after, limit, prefix=prefix):
                if scope.allows(record.session_id):
                    found[record.session_id] = record
        return [found[key] for key in sorted(found)][:limit]


# --- tools ---------------------------------------------------------------------------------


def _error_result(call: content_pb2.ToolCallContent, text: str) -> content_pb2.ToolResultContent:
    result = content_pb2.ToolResultContent(id=call.id, name=call.name, is_error=True, index=call.index)
    result.content.add().text.text = text
    return result


@dataclass
class _Runner:
    runner_id: str
    name: str
    tools: list[Any]
    outbox: asyncio.Queue[tool_service_pb2.ServeToolsResponse]
    pending: dict[str, asyncio.Future[content_pb2.ToolResultContent]] = field(default_factory=dict)


class ToolServicer(tool_service_pb2_grpc.ToolServiceServicer):
    """``agentmsg.v1.ToolService``: runners register; engines call through."""

    def __init__(self, access: Access | None = None) -> None:
        self.runners: dict[str, _Runner] = {}
        self.by_tool: dict[str, _Runner] = {}
        self.access = access if access is not None else Access()
        self.cluster: Cluster | None = None  # set when the node shares a PostgreSQL with others
        self._leaving: set[asyncio.Task[None]] = set()

    def _allow(self, context: grpc.aio.ServicerContext, *, serve: bool) -> None:  # type: ignore[type-arg]
        if self.access.enabled:
            self.access.check_tools(context.invocation_metadata(), serve=serve)

    async def ServeTools(  # noqa: N802
        self,
        request_iterator: AsyncIterator[tool_service_pb2.ServeToolsRequest],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[tool_service_pb2.ServeToolsResponse]:
        requests = request_iterator.__aiter__()
        try:
            first = await requests.__anext__()
        except StopAsyncIteration:
            return
        try:
            self._allow(context, serve=True)
            _check(first)
            if first.WhichOneof("kind") != "register":
                raise ValidationError([Violation("register", "required", "the first message must register tools")])
            runner = self._register(first.register)
            if self.cluster is not None:
                try:
                    await self.cluster.claim(runner)
                except AgentMsgError:
                    self._unregister(runner)
                    raise
        except AgentMsgError as exc:
            await status.abort(context, exc)
        reader = asyncio.ensure_future(self._read_outcomes(runner, requests))
        getter: asyncio.Future[tool_service_pb2.ServeToolsResponse] | None = None
        try:
            yield tool_service_pb2.ServeToolsResponse(
                registered=tool_service_pb2.Registered(runner_id=runner.runner_id)
            )
            while True:
                getter = asyncio.ensure_future(runner.outbox.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    break  # the runner closed its side
                response, getter = getter.result(), None
                yield response
        finally:
            self._unregister(runner)
            if self.cluster is not None:
                leaving = asyncio.ensure_future(self.cluster.release(runner))
                self._leaving.add(leaving)
                leaving.add_done_callback(self._leaving.discard)
            pending = [task for task in (getter, reader) if task is not None and not task.done()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def _register(self, register: tool_service_pb2.RegisterTools) -> _Runner:
        names = [tool.name for tool in register.tools]
        taken = sorted({n for n in names if n in self.by_tool} | {n for n in names if names.count(n) > 1})
        if taken:
            raise ConflictError(f"tool name(s) already served: {', '.join(taken)}")
        runner = _Runner(str(uuid.uuid4()), register.runner_name, list(register.tools), asyncio.Queue())
        self.runners[runner.runner_id] = runner
        for name in names:
            self.by_tool[name] = runner
        log.info("runner %s (%s) registered %s", runner.name, runner.runner_id, ", ".join(names))
        return runner

    def _unregister(self, runner: _Runner) -> None:
        self.runners.pop(runner.runner_id, None)
        for tool in runner.tools:
            if self.by_tool.get(tool.name) is runner:
                del self.by_tool[tool.name]
        for call_id, future in runner.pending.items():
            if not future.done():
                call = content_pb2.ToolCallContent(id=call_id)
                future.set_result(_error_result(call, f"tool runner {runner.name!r} disconnected before answering"))
        log.info("runner %s (%s) left", runner.name, runner.runner_id)

    async def _read_outcomes(
        self, runner: _Runner, requests: AsyncIterator[tool_service_pb2.ServeToolsRequest]
    ) -> None:
        async for request in requests:
            if request.WhichOneof("kind") != "outcome":
                log.warning("runner %s sent %s after registering; ignored", runner.name, request.WhichOneof("kind"))
                continue
            outcome = request.outcome
            future = runner.pending.get(outcome.call_id)
            if future is None or future.done():
                continue  # answered after a cancel or a deadline: nobody waits for it
            found = _validation.violations_of(outcome)
            if found or outcome.result.id != outcome.call_id:
                problem = "; ".join(str(v) for v in found) or "its id does not match the call"
                future.set_result(
                    _error_result(
                        content_pb2.ToolCallContent(id=outcome.call_id), f"the runner's result was invalid: {problem}"
                    )
                )
            else:
                future.set_result(outcome.result)

    @_guard
    async def ListTools(  # noqa: N802
        self,
        request: tool_service_pb2.ListToolsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> tool_service_pb2.ListToolsResponse:
        self._allow(context, serve=False)
        listed: dict[str, tool_service_pb2.RegisteredTool] = {}
        if self.cluster is not None:
            for tool, runner_name, runner_id in await self.cluster.remote_tools():
                listed[tool.name] = tool_service_pb2.RegisteredTool(
                    tool=tool, runner_name=runner_name, runner_id=runner_id
                )
        for name, runner in self.by_tool.items():
            tool = next(t for t in runner.tools if t.name == name)
            listed[name] = tool_service_pb2.RegisteredTool(
                tool=tool, runner_name=runner.name, runner_id=runner.runner_id
            )
        return tool_service_pb2.ListToolsResponse(tools=[listed[name] for name in sorted(listed)])

    @_guard
    async def CallTool(  # noqa: N802
        self,
        request: tool_service_pb2.CallToolRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> tool_service_pb2.CallToolResponse:
        self._allow(context, serve=False)
        _check(request)
        call = request.call
        runner = self.by_tool.get(call.name)
        if runner is None:
            metadata = context.invocation_metadata() or ()
            forwarded = any(key == FORWARDED_HEADER for key, _ in metadata)
            address = await self.cluster.locate(call.name) if self.cluster is not None and not forwarded else None
            if address is None or self.cluster is None:
                raise NotFoundError(f"no runner serves the tool {call.name!r}")
            # The runner is on another node: call it there as the caller, within the caller's deadline.
            return await self.cluster.forward(address, request, metadata, context.time_remaining())
        if call.id in runner.pending:
            raise ConflictError(f"tool call {call.id!r} is already running")
        future: asyncio.Future[content_pb2.ToolResultContent] = asyncio.get_running_loop().create_future()
        runner.pending[call.id] = future
        run = tool_service_pb2.RunToolCall(call=call)
        remaining = context.time_remaining()
        if remaining is not None:
            run.timeout.FromNanoseconds(int(remaining * 1e9))
        runner.outbox.put_nowait(tool_service_pb2.ServeToolsResponse(run=run))
        try:
            result = await future
        except asyncio.CancelledError:
            remaining = context.time_remaining()
            reason = "deadline_exceeded" if remaining is not None and remaining <= 0 else "cancelled"
            runner.outbox.put_nowait(
                tool_service_pb2.ServeToolsResponse(
                    cancel=tool_service_pb2.CancelToolCall(call_id=call.id, reason=reason)
                )
            )
            raise
        finally:
            runner.pending.pop(call.id, None)
        return tool_service_pb2.CallToolResponse(result=result)


# --- auth ----------------------------------------------------------------------------------


class BearerTokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses calls without ``authorization: Bearer <token>`` for one of the configured tokens.

    Only authentication happens here; what a token may touch (its scope) is checked by each RPC,
    which knows the session the request names.
    """

    def __init__(self, access: Access) -> None:
        self._access = access

    def _allowed(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        return self._access.scope_of(metadata) is not None

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        if method.startswith(PUBLIC_METHODS) or self._allowed(handler_call_details.invocation_metadata):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return _refusing(handler, UnauthenticatedError("missing or wrong bearer token"))


def _refusing(handler: grpc.RpcMethodHandler[Any, Any], error: AgentMsgError) -> grpc.RpcMethodHandler[Any, Any]:
    rich = status.to_status(error)

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        await context.abort_with_status(rich)

    async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        await context.abort_with_status(rich)
        yield  # pragma: no cover - makes this an async generator

    kwargs = {"request_deserializer": handler.request_deserializer, "response_serializer": handler.response_serializer}
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary, **kwargs)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming, **kwargs)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(unary, **kwargs)
    return grpc.stream_stream_rpc_method_handler(streaming, **kwargs)


# --- the server ----------------------------------------------------------------------------


@dataclass
class Running:
    """A started server and what it serves."""

    server: grpc.aio.Server
    port: int
    store: Store
    health: health.aio.HealthServicer
    sessions: SessionServicer
    tools: ToolServicer
    cluster: Cluster | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    stopping: bool = False

    async def set_serving(self, serving: bool, *, change: bool = False) -> None:
        """Health SERVING or NOT_SERVING for the server and both services (``change``: log it)."""
        if self.stopping:
            return
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", SESSION_SERVICE, TOOL_SERVICE):
            await self.health.set(name, status)
        if change and not serving:
            log.warning("the store is unavailable: health NOT_SERVING")
        elif change:
            log.info("the store is back: health SERVING")

    def track(self, coroutine: Awaitable[None]) -> None:
        """Run a background step, kept referenced until it ends."""
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, refuse new calls, let calls in flight finish for ``grace`` s."""
        self.stopping = True
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        # Leaving the cluster and closing the store talk to the database: bounded, so a node always exits.
        steps = [("leave the cluster", self.cluster.stop())] if self.cluster is not None else []
        for what, step in [*steps, ("close the store", self.store.close())]:
            try:
                await asyncio.wait_for(step, SHUTDOWN_STEP)
            except TimeoutError:
                log.error("could not %s within %g s; exiting anyway", what, SHUTDOWN_STEP)
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def create_server(config: ServerConfig) -> Running:
    """Build, bind and start a server; ``running.port`` is the bound port (useful with port 0)."""
    if config.store is not None:
        store = config.store
    elif config.db is not None and config.db.startswith(("postgresql://", "postgres://")):
        store = open_store(config.db, pool_size=config.pool_size, statement_timeout=config.statement_timeout)
    else:
        store = open_store(config.db)
    await store.start()
    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
        ("grpc.so_reuseport", 0),
        # Large HTTP/2 frames: a 1 MiB image crosses in one frame (measured ~35% faster on loopback).
        ("grpc.http2.max_frame_size", HTTP2_MAX_FRAME),
    ]
    access = Access(config.tokens, config.grants)
    interceptors = [BearerTokenInterceptor(access)] if access.enabled else []
    server = grpc.aio.server(
        interceptors=interceptors, options=options, maximum_concurrent_rpcs=config.max_concurrent_rpcs
    )
    hub = LiveHub()
    sessions = SessionServicer(store, hub, access)
    tools = ToolServicer(access)
    _add_session_service(sessions, server)
    tool_service_pb2_grpc.add_ToolServiceServicer_to_server(tools, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [SESSION_SERVICE, TOOL_SERVICE, health.SERVICE_NAME]
    if config.reflection:
        names.append(reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, server)
    address = f"{config.host}:{config.port}"
    if config.tls_cert is not None and config.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(config.tls_key, config.tls_cert)],
            root_certificates=config.tls_client_ca,
            require_client_auth=config.tls_client_ca is not None,
        )
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise UnavailableError(f"cannot bind {address}")
    cluster = None
    if isinstance(store, PostgresStore):
        peers = peer_credentials(config)
        if config.advertise is None and config.host in ("0.0.0.0", "::", ""):  # noqa: S104 - checked, not bound
            raise UnavailableError(
                f"a cluster node bound to {config.host!r} needs advertise (--advertise HOST:PORT): "
                "the address other nodes reach it at"
            )
        advertise = config.advertise or f"{config.host}:{port}"
        cluster = Cluster(store, advertise, channel_credentials=peers, max_message_bytes=config.max_message_bytes)
        await cluster.start(hub, tools)
    await server.start()
    running = Running(server, port, store, health_servicer, sessions, tools, cluster)
    await running.set_serving(store.healthy)
    # A store that loses its server (PostgreSQL) makes the node NOT_SERVING until it is back.
    store.on_health(lambda healthy: running.track(running.set_serving(healthy, change=True)))
    return running


async def serve(config: ServerConfig, *, ready: Callable[[Running], None] | None = None) -> None:
    """Run a server until SIGINT/SIGTERM, then stop it gracefully."""
    running = await create_server(config)
    if ready is not None:
        ready(running)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop(config.grace)
