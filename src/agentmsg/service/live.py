"""The live relay on one node: ``PublishStream`` events fanned out to the session's live subscribers.

Each subscriber has a bounded queue (``LIVE_QUEUE``); a slow one loses the
oldest events, never the log. With a cluster (:mod:`agentmsg.service.cluster`)
the hub also relays events to and from the other nodes.

Every event the hub delivers is also folded per in-flight stream
(:mod:`agentmsg.service.catchup`), on every node, so a subscriber that asks to
catch up (``subscribe(session_id, catch_up=True)``) finds in its queue first the
events that rebuild each stream so far, then the events that follow: taken and
registered in one step, with no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from agentmsg.service.catchup import CatchUpBounds, InFlight, Join
from agentmsg.service.cluster import Cluster
from agentmsg.v1 import session_service_pb2

__all__ = ["LIVE_QUEUE", "LiveHub"]

LIVE_QUEUE = 1024  # live events buffered per subscriber before the oldest are dropped


class LiveHub:
    """Fans live stream events out to the subscribers of a session (bounded, drop-oldest), with catch-up."""

    def __init__(self, catch_up: CatchUpBounds | None = None) -> None:
        # Each subscriber's queue, and how the streams it joined mid-way are renumbered or withheld for it.
        self._subscribers: dict[str, dict[asyncio.Queue[session_service_pb2.LiveEvent], dict[str, Join | None]]] = {}
        # The in-flight streams of every session, as the events delivered here build them.
        self.in_flight = InFlight(catch_up)
        # Set when the node shares a PostgreSQL with others: relays events to and from the other nodes.
        self.cluster: Cluster | None = None
        self.dropped = 0  # live events dropped for slow subscribers (read by /metrics)

    @contextlib.contextmanager
    def subscribe(
        self, session_id: str, *, catch_up: bool = False
    ) -> Iterator[asyncio.Queue[session_service_pb2.LiveEvent]]:
        """A queue of the session's live events from now on, while the block runs.

        With ``catch_up``, the queue starts with the events that rebuild the session's in-flight streams
        (:meth:`~agentmsg.service.catchup.InFlight.catch_up`), taken in the same step as the registration:
        every later event follows them, none is missed or repeated. They do not count against ``LIVE_QUEUE``.
        """
        joined = self.in_flight.catch_up(session_id) if catch_up else None
        backlog = joined.events if joined is not None else []
        queue: asyncio.Queue[session_service_pb2.LiveEvent] = asyncio.Queue(LIVE_QUEUE + len(backlog))
        for live in backlog:
            queue.put_nowait(live)
        self._subscribers.setdefault(session_id, {})[queue] = joined.joins if joined is not None else {}
        try:
            yield queue
        finally:
            queues = self._subscribers.get(session_id)
            if queues is not None:
                queues.pop(queue, None)
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
        """Fan an event out to this node's subscribers of the session (and fold it for later ones)."""
        self.in_flight.observe(session_id, live)
        ends = live.event.WhichOneof("event") in ("message_stop", "error")
        for queue, joins in self._subscribers.get(session_id, {}).items():
            sent: session_service_pb2.LiveEvent | None = live
            if joins and live.stream_id in joins:
                join = joins[live.stream_id]
                sent = join.renumber(live) if join is not None else None
                if ends:
                    del joins[live.stream_id]
            if sent is None:
                continue
            if queue.full():
                # A slow live viewer loses the oldest deltas, never the log: the finished message is logged.
                queue.get_nowait()
                self.dropped += 1
            queue.put_nowait(sent)
