"""``agentmsg.v1.SessionService``'s logic: appends, reads, subscriptions, live publishing, the session tree and deletes.

The handler reads and writes through a :class:`~agentmsg.service.stores.Store` and fans live events out
through a :class:`~agentmsg.service.live.LiveHub`. It takes request messages and a
:class:`~agentmsg.service.handlers.Caller` and raises :class:`~agentmsg.errors.AgentMsgError`; no transport's
types appear here. ``Subscribe`` hands the stored rows to the transport's :class:`Batches`, which frames them
(gRPC: encoded once, shared by every subscriber; Connect: response messages). ``ListMessages`` and
``BuildContext`` answer with the encoded response, framed from the store's bytes without re-encoding them (gRPC
sends it as it is; Connect parses it for its codec); ``ListMessages`` shares full pages through the transport's
:class:`Frames`, when it keeps them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol

from agentmsg._tree import ContextStart, PathWalk
from agentmsg.errors import AgentMsgError, NotFoundError, UnavailableError, ValidationError, Violation
from agentmsg.messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    LLMMessage,
    ProviderState,
    message_from_proto,
)
from agentmsg.service.access import Access, Scope
from agentmsg.service.approvals import check_decisions
from agentmsg.service.frames import ReceivedAppend, context_reply, encode_logged, list_page
from agentmsg.service.handlers import Caller
from agentmsg.service.heads import Head, first_kept_id
from agentmsg.service.limits import RequestLimits
from agentmsg.service.live import LiveHub
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES, _check, check_messages, fit, reply_budget
from agentmsg.service.stores import Body, SessionRecord, Store
from agentmsg.sessions import SESSION_ARMS, context_plan
from agentmsg.streaming import IncompleteStreamError, StreamAccumulator, StreamProtocolError
from agentmsg.v1 import message_pb2, session_service_pb2, stream_pb2

__all__ = ["SESSION_SERVICE", "Batches", "Frames", "SessionHandler"]

SESSION_SERVICE = "agentmsg.v1.SessionService"


def _context_token(leaf_id: str, start: int) -> str:
    """A ``BuildContext`` page token: the pinned leaf and the index of the next message (opaque to callers)."""
    raw = json.dumps({"leaf": leaf_id, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def _context_page(token: str, leaf: str) -> tuple[str, int]:
    """The leaf and start index a page token holds; INVALID_ARGUMENT naming ``page_token`` when it is not one."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
        pinned, start = data["leaf"], data["start"]
        if not isinstance(pinned, str) or not pinned or not isinstance(start, int) or start < 0:
            raise TypeError("bad fields")
    except (ValueError, TypeError, KeyError, UnicodeError):
        raise ValidationError.single(
            "page_token", "page_token", "not a page token this server gave (pass next_page_token unchanged)"
        ) from None
    if leaf and leaf != pinned:
        raise ValidationError.single(
            "leaf_entry_id", "page_token", f"the page token is for leaf {pinned!r}, not {leaf!r}"
        )
    return pinned, start


# The first page a path walk reads back through a run of entries without parent ids, and the most a page grows to.
WALK_PAGE = 256
WALK_PAGE_MAX = 1024


def _parse(body: Body) -> message_pb2.Message:
    """A stored message (bytes, or a view of the request it arrived in: upb parses any buffer)."""
    return message_pb2.Message.FromString(body)  # type: ignore[arg-type]


_head = Head.FromString


class _Run(NamedTuple):
    """Entries of a path walked: their ids, role arms (None: a role this version does not know) and stored bytes."""

    ids: list[str]
    arms: list[str | None]
    bodies: list[Body]


def missing_session(session_id: str) -> NotFoundError:
    """The one answer, on every read of every transport, for a session that does not exist (no message appended,
    or deleted): NOT_FOUND."""
    return NotFoundError(f"no session {session_id!r} (it has no messages)")


class Batches(Protocol):
    """How a transport frames the rows ``Subscribe`` reads as replies (response messages, or their encodings).

    ``encode`` turns the store's answer to ``read(session_id, after, limit)`` into replies, each within the
    reply budget; ``full`` gives the replies of such a batch framed before (and its last offset), if the
    transport keeps them (gRPC shares them between subscribers), else None.
    """

    def full(self, session_id: str, after: int, limit: int) -> tuple[Sequence[Any], int] | None: ...

    def encode(
        self, session_id: str, after: int, limit: int, rows: Sequence[tuple[int, bytes | memoryview]]
    ) -> Sequence[Any]: ...


class Frames(Protocol):
    """Encoded batches a transport keeps and shares (gRPC's :class:`~agentmsg.service.frames.FrameCache`):
    ``ListMessages`` serves a full page from it, and frames one into it.

    As :class:`Batches`, with the replies encoded (``SubscribeResponse`` bytes, as :func:`encode_logged` frames
    them): ``full`` gives a batch framed before (and its last offset), or None; ``encode`` frames and keeps one.
    """

    def full(self, session_id: str, after: int, limit: int) -> tuple[Sequence[bytes], int] | None: ...

    def encode(
        self, session_id: str, after: int, limit: int, rows: Sequence[tuple[int, bytes | memoryview]]
    ) -> Sequence[bytes]: ...


class SessionHandler:
    """``agentmsg.v1.SessionService``'s logic over a :class:`~agentmsg.service.stores.Store`, for any transport."""

    def __init__(
        self,
        store: Store,
        hub: LiveHub,
        access: Access | None = None,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        limits: RequestLimits | None = None,
    ) -> None:
        self.store = store
        self.hub = hub
        self.access = access if access is not None else Access()
        self.limits = limits if limits is not None else RequestLimits()
        # Every reply carries messages up to this many bytes, and no entry may be larger: whatever was
        # appended can be read back, by every reading RPC, under the configured maximum message size.
        self.budget = reply_budget(max_message_bytes)
        # Set while the store is unavailable: every waiting subscription ends UNAVAILABLE.
        self._outage = asyncio.Event()
        if not store.healthy:
            self._outage.set()
        store.on_health(self._on_store_health)
        # The subscriptions and PublishStream calls of each session on this node: set when it is deleted.
        self._deletions: dict[str, set[asyncio.Event]] = {}
        store.on_delete(self._on_deleted)

    def _on_store_health(self, healthy: bool) -> None:
        if healthy:
            self._outage = asyncio.Event()
        else:
            self._outage.set()

    def _on_deleted(self, session_id: str) -> None:
        """A session was deleted (here or on another node): its calls are told.

        It runs when the delete commits on this node, or when its notification arrives from another (before
        the notification of any append that follows the delete), so a subscriber never takes a new session
        by the same id for the old one. The store then wakes the subscribers.
        """
        self.hub.in_flight.forget(session_id)  # a new session by this id is not handed the old one's streams
        for deleted in self._deletions.get(session_id, ()):
            deleted.set()

    @contextlib.contextmanager
    def _watch_deletion(self, session_id: str) -> Iterator[asyncio.Event]:
        """An event set if the session is deleted while the caller follows or publishes to it."""
        deleted = asyncio.Event()
        self._deletions.setdefault(session_id, set()).add(deleted)
        try:
            yield deleted
        finally:
            watching = self._deletions[session_id]
            watching.discard(deleted)
            if not watching:
                del self._deletions[session_id]

    def _allow(self, caller: Caller, session_id: str) -> None:
        """The caller's token must include the session (checked before anything is read: nothing leaks)."""
        if self.access.enabled:
            self.access.check_session(caller.metadata, session_id)

    async def last_offset(self, caller: Caller, session_id: str) -> int:
        """The session's last offset (0: no such session), for a caller allowed to read it."""
        self._allow(caller, session_id)
        return await self.store.last_offset(session_id)

    async def _last_row(self, session_id: str) -> tuple[int, Body] | None:
        """The session's last entry (its offset and stored bytes), or None for an empty session."""
        last = await self.store.last_offset(session_id)
        rows = await self.store.read(session_id, last - 1, 1) if last else []
        return rows[0] if rows else None

    async def _last(self, session_id: str) -> tuple[int, message_pb2.Message] | None:
        """The session's last entry (its offset and message), or None for an empty session."""
        row = await self._last_row(session_id)
        return (row[0], _parse(row[1])) if row is not None else None

    async def _walk_back(
        self, session_id: str, start: tuple[int, Body], context: ContextStart | None = None, until: str = ""
    ) -> AsyncGenerator[_Run, None]:
        """The entries from ``start`` back to the root, in runs (each run what was walked between two store reads: the
        entries' ids, role arms and stored bytes, leaf first), each parent found through the store's indexes. With
        ``context``, back only to where the model's context starts (:class:`ContextStart`); with ``until``, to the
        entry of that id.

        Each entry is read as its :data:`~agentmsg.service.heads.Head` (id, parent id, role arm), never parsed whole.
        An entry with no ``parent_id`` follows the one before it in the log: those are read a page at a time (pages
        grow while the run goes on; never below where the context starts), each read only when the walk reaches it.
        Only the path is read, never the rest of the session. The rules, and how a broken tree is reported, are
        :class:`~agentmsg._tree.PathWalk`'s, as for :class:`~agentmsg.sessions.Session`.
        """
        page: dict[int, Body] = {}
        size = WALK_PAGE
        offset, body = start
        walk = PathWalk()
        step = walk.step
        run = _Run([], [], [])
        ids, arms, bodies = run
        while True:
            head = _head(body)
            entry_id: str = head.id
            parent = step(entry_id, head.parent_id)
            arm: str | None = head.WhichOneof("role")
            ids.append(entry_id)
            arms.append(arm)
            bodies.append(body)
            if entry_id == until:
                break
            if context is not None:
                if context.found:
                    if context.passed(entry_id, offset):
                        break
                elif arm == "compaction_summary":
                    kept = first_kept_id(head)
                    found = await self.store.entry(session_id, kept) if kept else None
                    if context.compaction(offset, kept, found[0] if found is not None else None):
                        break
            if parent is not None:
                yield run
                run = _Run([], [], [])
                ids, arms, bodies = run
                found = await self.store.entry(session_id, parent)
                if found is None:
                    raise walk.missing(entry_id, parent)
                offset, body = found
                continue
            if offset <= 1:
                break
            offset -= 1
            held = page.get(offset)
            if held is None:
                yield run
                run = _Run([], [], [])
                ids, arms, bodies = run
                limit = size if context is None else context.page(offset, size)
                page = dict(await self.store.before(session_id, offset + 1, limit))
                size = min(2 * size, WALK_PAGE_MAX)
                held = page[offset]
            body = held
        yield run

    async def _on_path(self, session_id: str, start: tuple[int, Body], entry_id: str) -> bool:
        """Whether ``entry_id`` lies on the path from ``start`` to the root (the walk stops where it is found)."""
        async with contextlib.aclosing(self._walk_back(session_id, start, until=entry_id)) as walk:
            async for run in walk:
                if run.ids and run.ids[-1] == entry_id:
                    return True
        return False

    async def _context_path(self, session_id: str, leaf_id: str) -> _Run:
        """The path to the leaf (``leaf_id``, or the last entry) from where its context starts (or the root), in path
        order: each entry's id, role arm and stored bytes (no entries: the session has none)."""
        if leaf_id:
            start = await self.store.entry(session_id, leaf_id)
            if start is None:
                raise NotFoundError(f"session {session_id!r} has no entry {leaf_id!r}")
        else:
            start = await self._last_row(session_id)
        path = _Run([], [], [])
        if start is None:
            return path
        async for run in self._walk_back(session_id, start, ContextStart()):
            path.ids.extend(run.ids)
            path.arms.extend(run.arms)
            path.bodies.extend(run.bodies)
        path.ids.reverse()
        path.arms.reverse()
        path.bodies.reverse()
        return path

    @staticmethod
    def _plan(path: _Run) -> list[int | LLMMessage]:
        """:func:`~agentmsg.sessions.context_plan` of a path: only its session-only entries are parsed."""
        session = {
            i: message_from_proto(_parse(path.bodies[i])) for i, arm in enumerate(path.arms) if arm in SESSION_ARMS
        }
        return context_plan(path.ids, path.arms, session)

    async def AppendMessage(  # noqa: N802 - the RPC's name
        self,
        request: session_service_pb2.AppendMessageRequest | ReceivedAppend,
        caller: Caller,
    ) -> session_service_pb2.AppendMessageResponse:
        received: list[Body | None] = []
        sizes: list[int] | None = None
        if isinstance(request, ReceivedAppend):
            received, sizes = [request.encoding], [len(request.encoding)]
            request = request.request
        self._allow(caller, request.session_id)
        self.limits.check_messages([request.message], "message")
        _check(request)
        # A received canonical encoding's length is what ByteSize would say (of the message, not the cut form).
        self._check_sizes([request.message], "message", sizes)
        await check_decisions(self.store, request.session_id, [request.message], "message")
        (appended,) = await self.store.append(request.session_id, [request.message], received)
        return session_service_pb2.AppendMessageResponse(offset=appended.offset, duplicate=appended.duplicate)

    async def AppendMessages(  # noqa: N802
        self,
        request: session_service_pb2.AppendMessagesRequest,
        caller: Caller,
    ) -> session_service_pb2.AppendMessagesResponse:
        self._allow(caller, request.session_id)
        self.limits.check_messages(request.messages, "messages")
        await check_messages(request, "messages")
        self._check_sizes(request.messages, "messages")
        await check_decisions(self.store, request.session_id, request.messages)
        appended = await self.store.append(request.session_id, list(request.messages))
        return session_service_pb2.AppendMessagesResponse(
            offsets=[a.offset for a in appended], duplicates=[a.duplicate for a in appended]
        )

    async def ListMessages(  # noqa: N802
        self,
        request: session_service_pb2.ListMessagesRequest,
        caller: Caller,
        frames: Frames | None = None,
    ) -> bytes:
        """A page of the log as an encoded ``ListMessagesResponse``: the stored bytes as they are, as ``Subscribe``
        sends them (its messages field is laid out as ``SubscribeResponse``'s).

        With ``frames`` (the transport's shared batches), a full page is framed once into it and shared: read again
        (the same page, or a subscriber's batch of the same range), only the session's last offset is read.
        """
        self._allow(caller, request.session_id)
        _check(request)
        session_id, after = request.session_id, request.after_offset
        size = request.page_size or 100
        framed = frames.full(session_id, after, size) if frames is not None else None
        if framed is not None and len(framed[0]) == 1:
            (reply,), last = framed
            more = await self.store.last_offset(session_id) > last
            return list_page(reply, last if more else 0)
        with self._watch_deletion(session_id) as deleted:
            rows = await self.store.read(session_id, after, size + 1)
            if not rows and not await self.store.last_offset(session_id):
                raise missing_session(session_id)
            # The page ends at page_size messages or at the byte budget, whichever comes first.
            count = min(size, fit([len(body) for _, body in rows], self.budget))
            page = rows[:count]
            if frames is not None and count == size and not deleted.is_set():  # rows read as it was deleted: not kept
                (reply,) = frames.encode(session_id, after, size, page)
            else:
                reply = encode_logged(page)
        return list_page(reply, rows[count - 1][0] if len(rows) > count else 0)

    async def Subscribe(  # noqa: N802
        self,
        request: session_service_pb2.SubscribeRequest,
        caller: Caller,
        batches: Batches,
    ) -> AsyncIterator[Any]:
        """The session's entries after ``request.after_offset``, then each as it is appended (and live events when
        asked), framed by ``batches``; ends with the error that stops it (deletion, a lost store)."""
        self._allow(caller, request.session_id)
        _check(request)
        session_id = request.session_id
        cursor = request.after_offset
        batch = request.max_batch or 256
        with self.store.watching(session_id), self._watch_deletion(session_id) as deleted:
            async for response in self._follow(request, session_id, cursor, batch, deleted, batches):
                yield response

    async def _follow(
        self,
        request: session_service_pb2.SubscribeRequest,
        session_id: str,
        cursor: int,
        batch: int,
        deleted: asyncio.Event,
        batches: Batches,
    ) -> AsyncIterator[Any]:
        # A resumed subscription (and one woken by a change that brought nothing) also checks that its cursor
        # is still in the log: a session deleted when this node could not hear of it is shorter, or gone.
        verify = cursor > 0
        # A live subscriber first gets the events that rebuild the messages being generated, then what follows.
        with self.hub.subscribe(session_id, catch_up=request.live_events) as live:
            while True:
                if deleted.is_set():
                    raise NotFoundError(f"session {session_id!r} was deleted")
                changed = self.store.changed(session_id)  # before reading: an append after the read wakes us
                if request.live_events:
                    # Live events queued so far were published before any append we are about to read:
                    # deliver them first, so a message's events never trail the message itself.
                    while not live.empty():
                        yield session_service_pb2.SubscribeResponse(live_event=live.get_nowait())
                else:
                    # A full batch another subscriber read is sent again as it was framed, store unread.
                    framed = batches.full(session_id, cursor, batch)
                    if framed is not None:
                        replies, cursor = framed
                        for reply in replies:
                            yield reply
                        continue
                rows = await self.store.read(session_id, cursor, batch)
                if deleted.is_set():  # the rows may be a new session's, by the same id
                    raise NotFoundError(f"session {session_id!r} was deleted")
                if rows and request.live_events:
                    # With other nodes, the events relayed ahead of these messages may still be on the way.
                    await self.hub.settled()
                    while not live.empty():
                        yield session_service_pb2.SubscribeResponse(live_event=live.get_nowait())
                if rows:
                    # The stored bytes go out as they are (no parse and re-encode), framed once per range.
                    encoded = batches.encode(session_id, cursor, batch, rows)
                    cursor = rows[-1][0]
                    for reply in encoded:
                        yield reply
                    continue
                if verify and cursor > 0 and await self.store.last_offset(session_id) < cursor:
                    raise NotFoundError(
                        f"session {session_id!r} was deleted (it has no offset {cursor}); "
                        "a new session by this id starts at offset 1"
                    )
                # Waiting for news also watches the store: a node that loses it ends its subscriptions
                # UNAVAILABLE at once (the client resumes on a node that has it), rather than going silent.
                outage = self._outage
                waits: list[asyncio.Future[Any]] = [
                    asyncio.ensure_future(changed.wait()),
                    asyncio.ensure_future(outage.wait()),
                ]
                if request.live_events:
                    waits.append(asyncio.ensure_future(live.get()))
                try:
                    done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waits:
                        waiter.cancel()
                    await asyncio.gather(*waits, return_exceptions=True)
                verify = changed.is_set()
                if outage.is_set():
                    raise UnavailableError(
                        f"this node lost its store; resume the subscription after offset {cursor} "
                        "(on this node when it is back, or on another)"
                    )
                got = waits[-1] if request.live_events else None
                if got in done and got is not None and not got.cancelled() and got.exception() is None:
                    yield session_service_pb2.SubscribeResponse(live_event=got.result())

    async def PublishStream(  # noqa: N802
        self,
        request_iterator: AsyncIterator[session_service_pb2.PublishStreamRequest],
        caller: Caller,
    ) -> session_service_pb2.PublishStreamResponse:
        stream_id = str(uuid.uuid4())
        session_id = ""
        accumulator = StreamAccumulator()
        deleted = asyncio.Event()  # set when the session is deleted during the stream
        watching = contextlib.ExitStack()
        events = received = 0
        try:
            async for request in request_iterator:
                events += 1
                received += request.ByteSize()
                # The events carry the message: far more of them than an entry may be is refused as they come.
                self.limits.check_stream(events, received, 2 * self.budget)
                _check(request)
                if not session_id:
                    if not request.session_id:
                        raise ValidationError(
                            [Violation("session_id", "required", "the first event must name the session")]
                        )
                    self._allow(caller, request.session_id)
                    session_id = request.session_id
                    deleted = watching.enter_context(self._watch_deletion(session_id))
                self._check_not_deleted(session_id, deleted)
                accumulator.add(request.event)
                self.limits.check_blocks(accumulator.blocks)
                self.hub.publish(session_id, session_service_pb2.LiveEvent(stream_id=stream_id, event=request.event))
                if self.hub.cluster is not None:
                    await self.hub.cluster.pace()  # a publisher ahead of the relay waits for it
                if accumulator.done:
                    break
            if not session_id:
                raise ValidationError([Violation("event", "required", "the stream sent no events")])
            message = accumulator.finish()
            _check(message.pb)
            self._check_sizes([message.pb], "message")
            # Other nodes get the stream's events before the message: both go through one feed, in order.
            await self.hub.flushed()
            self._check_not_deleted(session_id, deleted)
            (appended,) = await self.store.append(session_id, [message.pb])
            return session_service_pb2.PublishStreamResponse(offset=appended.offset, message=message.pb)
        except (StreamProtocolError, IncompleteStreamError) as exc:
            self._relay_failure(session_id, stream_id, str(exc))
            raise ValidationError([Violation("event", "stream", str(exc))], "stream") from None
        except AgentMsgError as exc:
            self._relay_failure(session_id, stream_id, str(exc))
            raise
        except asyncio.CancelledError:
            self._relay_failure(session_id, stream_id, "the publisher went away mid-stream")
            raise
        except Exception:
            self._relay_failure(session_id, stream_id, "the server failed to publish the stream")
            raise  # INTERNAL, and logged by the transport
        finally:
            watching.close()

    @staticmethod
    def _check_not_deleted(session_id: str, deleted: asyncio.Event) -> None:
        if deleted.is_set():
            raise NotFoundError(
                f"session {session_id!r} was deleted while this stream was published; its message was not appended"
            )

    def _relay_failure(self, session_id: str, stream_id: str, reason: str) -> None:
        if session_id:
            error = stream_pb2.StreamEvent(
                error=stream_pb2.StreamError(message=reason, stop_reason=message_pb2.STOP_REASON_ERROR)
            )
            self.hub.publish(session_id, session_service_pb2.LiveEvent(stream_id=stream_id, event=error))

    async def BranchSession(  # noqa: N802 - the RPC's name
        self,
        request: session_service_pb2.BranchSessionRequest,
        caller: Caller,
    ) -> session_service_pb2.BranchSessionResponse:
        self._allow(caller, request.session_id)
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

    async def CompactSession(  # noqa: N802
        self,
        request: session_service_pb2.CompactSessionRequest,
        caller: Caller,
    ) -> session_service_pb2.CompactSessionResponse:
        self._allow(caller, request.session_id)
        _check(request)
        session_id = request.session_id
        async with self.store.exclusive(session_id):
            row = await self._last_row(session_id)
            if row is None:
                raise NotFoundError(f"session {session_id!r} has no entries to compact")
            last = (row[0], _parse(row[1]))
            first_kept = request.first_kept_entry_id
            # Walk back from the leaf only as far as the first kept entry: the path's tail, not the session.
            if first_kept and not await self._on_path(session_id, row, first_kept):
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

    async def BuildContext(  # noqa: N802
        self,
        request: session_service_pb2.BuildContextRequest,
        caller: Caller,
    ) -> bytes:
        """The context as an encoded ``BuildContextResponse``: each message given as it is goes out as the bytes the
        store holds (no re-encoding); the summaries and custom entries it projects are encoded here."""
        self._allow(caller, request.session_id)
        _check(request)
        leaf, start = request.leaf_entry_id, 0
        if request.page_token:
            leaf, start = _context_page(request.page_token, leaf)
        path = await self._context_path(request.session_id, leaf)
        if not path.ids:  # as ListMessages answers: a session that does not exist is not an empty one
            raise missing_session(request.session_id)
        bodies = path.bodies
        encoded = [
            bodies[item] if isinstance(item, int) else item.pb.SerializeToString(deterministic=True)
            for item in self._plan(path)
        ]
        if start > len(encoded):
            raise ValidationError.single("page_token", "page_token", "the token points past the end of the context")
        # The context goes out in parts when it outgrows one reply; the token pins the leaf for the next part.
        count = fit([len(body) for body in encoded[start:]], self.budget)
        token = _context_token(path.ids[-1], start + count) if start + count < len(encoded) else ""
        return context_reply(encoded[start : start + count], token)

    async def context(self, caller: Caller, session_id: str, leaf_id: str) -> list[LLMMessage]:
        """The messages a model sees for the path to ``leaf_id`` (empty: the last entry), whole, as ``BuildContext``
        gives them (the caller's token must include the session; NOT_FOUND for a session that does not exist)."""
        self._allow(caller, session_id)
        path = await self._context_path(session_id, leaf_id)
        if not path.ids:
            raise missing_session(session_id)
        return [
            message_from_proto(_parse(path.bodies[item])) if isinstance(item, int) else item  # type: ignore[misc]
            for item in self._plan(path)
        ]

    async def DeleteSession(  # noqa: N802
        self,
        request: session_service_pb2.DeleteSessionRequest,
        caller: Caller,
    ) -> session_service_pb2.DeleteSessionResponse:
        self._allow(caller, request.session_id)
        _check(request)
        removed = await self.store.delete(request.session_id)
        return session_service_pb2.DeleteSessionResponse(deleted=removed > 0, deleted_messages=removed)

    def _check_sizes(
        self, messages: Iterable[message_pb2.Message], field: str, sizes: Sequence[int] | None = None
    ) -> None:
        """Refuse an entry larger than one reply can carry: it could be appended but never read back.

        ``sizes``: the messages' encoded sizes when known (a received canonical encoding), else ByteSize.
        """
        found = [
            Violation(
                f"{field}[{i}]" if field == "messages" else field,
                "message.max_bytes",
                f"the message is {size} bytes; a session entry may be at most {self.budget} "
                "(the server's maximum message size less room for framing)",
            )
            for i, message in enumerate(messages)
            if (size := sizes[i] if sizes is not None else message.ByteSize()) > self.budget
        ]
        if found:
            raise ValidationError(found, "message size")

    async def ListSessions(  # noqa: N802
        self,
        request: session_service_pb2.ListSessionsRequest,
        caller: Caller,
    ) -> session_service_pb2.ListSessionsResponse:
        _check(request)
        size = request.page_size or 100
        scope = self.access.require(caller.metadata)
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
