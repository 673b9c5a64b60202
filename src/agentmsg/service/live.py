"""The live relay on one node: ``PublishStream`` events fanned out to the session's live subscribers.

Each subscriber has a bounded queue (``LIVE_QUEUE``); a slow one loses the
oldest events, never the log. With a cluster (:mod:`agentmsg.service.cluster`)
the hub also relays events to and from the other nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from agentmsg.service.cluster import Cluster
from agentmsg.v1 import session_service_pb2

__all__ = ["LIVE_QUEUE", "LiveHub"]

LIVE_QUEUE = 1024  # live events buffered per subscriber before the oldest are dropped


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
