"""Live catch-up: the state of every stream being generated, so a subscriber joining mid-stream can rebuild it.

Every live event a node's hub delivers (published here, or relayed from another node) is also folded here,
per stream, with the same fold a client uses (:class:`~agentmsg.streaming.StreamAccumulator`). A new live
subscriber is handed, in the same step as its registration (no event can come between), each in-flight
stream's :meth:`~agentmsg.streaming.StreamAccumulator.replay`: the start events and one delta per block and
fragment kind carrying everything so far. The events that follow reach it as they reach everyone, so its fold
ends where an early subscriber's does.

A numbered stream (``StreamEvent.sequence``) is renumbered for a late subscriber: its catch-up events are
0, 1, ..., and each later event is shifted to follow them (:class:`Join`); a publisher's resend of an event
from before the join is not relayed to it (its fold would ignore it anyway). Unnumbered events go as they are.

**What is kept, and its bound.** Per in-flight stream, the fold so far: no more than the bytes of the events
that built it, and at most :attr:`CatchUpBounds.max_bytes` of them (by default twice the most one session
entry may be: what ``PublishStream`` refuses above), :attr:`CatchUpBounds.max_events` events and
:attr:`CatchUpBounds.max_blocks` blocks (``RequestLimits``). A stream over a bound (a node with larger limits
published it) or that breaks the fold (a relayed event lost on the way) is no longer followed: late subscribers
get none of its events, and its message from the log; nor is any stream of a session that is deleted. A stream
is dropped when it ends (``message_stop`` or ``error``: a publisher that goes away mid-stream ends it with an
``error``, on every node), or when no event of it came for :attr:`CatchUpBounds.idle` seconds (its node died
without saying so). So the memory is at most the number of streams in flight in the cluster (each node takes
at most ``--max-streams`` calls) times ``max_bytes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from agentmsg.service.limits import DEFAULT_MAX_BLOCKS, DEFAULT_MAX_STREAM_EVENTS, RequestLimits
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES, reply_budget
from agentmsg.streaming import StreamAccumulator, StreamProtocolError
from agentmsg.v1 import session_service_pb2

__all__ = ["REPLAY_CHUNK", "STREAM_IDLE", "CatchUp", "CatchUpBounds", "InFlight", "Join"]

STREAM_IDLE = 600.0  # seconds without an event after which an unfinished stream is forgotten
REPLAY_CHUNK = 256 * 1024  # characters of text per catch-up delta (at most 1 MiB of UTF-8): each fits a reply

_ENDS = frozenset({"message_stop", "error"})


@dataclass(frozen=True)
class CatchUpBounds:
    """What the hub keeps of one in-flight stream (see the module docstring)."""

    max_bytes: int = 2 * reply_budget(DEFAULT_MAX_MESSAGE_BYTES)
    """Encoded bytes of the stream's events."""
    max_events: int = DEFAULT_MAX_STREAM_EVENTS
    """Events of the stream."""
    max_blocks: int = DEFAULT_MAX_BLOCKS
    """Content blocks the stream opened."""
    idle: float = STREAM_IDLE
    """Seconds without an event after which an unfinished stream is dropped."""

    @classmethod
    def for_server(cls, max_message_bytes: int, limits: RequestLimits) -> CatchUpBounds:
        """The bounds ``PublishStream`` applies on a server with this maximum message size and these limits."""
        return cls(2 * reply_budget(max_message_bytes), limits.max_stream_events, limits.max_blocks)


@dataclass(frozen=True)
class Join:
    """How a numbered stream's later events are renumbered for a subscriber that joined it mid-stream.

    ``last``: the number of the last event applied when it joined; ``replayed``: the catch-up events it got
    (numbered 0 to ``replayed - 1``). Event ``n`` goes to it as ``n - last - 1 + replayed``; events numbered
    ``last`` or below are resends it does not need.
    """

    last: int
    replayed: int

    def renumber(self, live: session_service_pb2.LiveEvent) -> session_service_pb2.LiveEvent | None:
        """The event as this subscriber gets it, or None when it is a resend from before the join."""
        if not live.event.HasField("sequence"):
            return live
        sequence = live.event.sequence
        if sequence <= self.last:
            return None
        shifted = session_service_pb2.LiveEvent()
        shifted.CopyFrom(live)
        shifted.event.sequence = sequence - self.last - 1 + self.replayed
        return shifted


@dataclass(frozen=True)
class CatchUp:
    """What a new live subscriber of a session gets: the catch-up events, and how to treat later ones.

    ``joins`` maps a stream id to its :class:`Join` (a numbered stream), or to None for a stream the
    subscriber must not be sent (one no longer followed: it would get deltas of blocks it never saw start).
    Streams not in ``joins`` go to it as they are.
    """

    events: list[session_service_pb2.LiveEvent]
    joins: dict[str, Join | None]


class _Stream:
    __slots__ = ("bytes", "events", "fold", "seen")

    def __init__(self, now: float) -> None:
        self.fold: StreamAccumulator | None = StreamAccumulator()  # None: no longer followed
        self.events = 0
        self.bytes = 0
        self.seen = now


class InFlight:
    """The in-flight streams of every session, as the events this node delivers build them."""

    def __init__(self, bounds: CatchUpBounds | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.bounds = bounds if bounds is not None else CatchUpBounds()
        self._clock = clock
        # Session -> stream id -> state, in the order the streams started.
        self._sessions: dict[str, dict[str, _Stream]] = {}

    def streams(self, session_id: str) -> list[str]:
        """The ids of the session's in-flight streams (followed or not), in the order they started."""
        return list(self._sessions.get(session_id, ()))

    def observe(self, session_id: str, live: session_service_pb2.LiveEvent) -> None:
        """Fold one delivered event into its stream's state (a stream is taken up at its ``message_start``)."""
        event = live.event
        kind = event.WhichOneof("event")
        streams = self._sessions.get(session_id)
        stream = streams.get(live.stream_id) if streams is not None else None
        now = self._clock()
        if stream is None:
            if kind != "message_start":
                return  # a stream that started before this node heard of it, or that was dropped
            self._expire(now)
            stream = _Stream(now)
            self._sessions.setdefault(session_id, {})[live.stream_id] = stream
        stream.seen = now
        if kind in _ENDS:
            self._drop(session_id, live.stream_id)
            return
        fold = stream.fold
        if fold is None:
            return
        stream.events += 1
        stream.bytes += event.ByteSize()
        bounds = self.bounds
        if stream.events > bounds.max_events or stream.bytes > bounds.max_bytes:
            stream.fold = None
            return
        try:
            fold.add(event)
        except (StreamProtocolError, ValueError):
            stream.fold = None  # an event was lost on the way: what this node holds is not the stream
            return
        if kind == "block_start" and fold.blocks > bounds.max_blocks:
            stream.fold = None

    def forget(self, session_id: str) -> None:
        """The session was deleted: its streams are no longer followed (withheld from later joiners, so a new
        session by the id is never handed them) until they end."""
        for stream in self._sessions.get(session_id, {}).values():
            stream.fold = None

    def catch_up(self, session_id: str) -> CatchUp:
        """The events that rebuild the session's in-flight streams, and how to treat their later events."""
        self._expire(self._clock())
        events: list[session_service_pb2.LiveEvent] = []
        joins: dict[str, Join | None] = {}
        for stream_id, stream in self._sessions.get(session_id, {}).items():
            if stream.fold is None:
                joins[stream_id] = None
                continue
            replayed = [event.pb for event in stream.fold.replay(chunk_size=REPLAY_CHUNK)]
            last = stream.fold.last_sequence
            if last is not None:
                for number, event in enumerate(replayed):
                    event.sequence = number
                joins[stream_id] = Join(last, len(replayed))
            events += [session_service_pb2.LiveEvent(stream_id=stream_id, event=event) for event in replayed]
        return CatchUp(events, joins)

    def _drop(self, session_id: str, stream_id: str) -> None:
        streams = self._sessions[session_id]
        del streams[stream_id]
        if not streams:
            del self._sessions[session_id]

    def _expire(self, now: float) -> None:
        horizon = now - self.bounds.idle
        stale = [(s, i) for s, streams in self._sessions.items() for i, st in streams.items() if st.seen < horizon]
        for session_id, stream_id in stale:
            self._drop(session_id, stream_id)
