"""The service's logic, transport-neutral: sessions and tools, for plain requests from a :class:`Caller`.

The gRPC servicers (:mod:`agentmsg.service.grpc`) and the Connect application (:mod:`agentmsg.service.http`)
are thin adapters over these handlers: each turns its transport's call into a request message and a
``Caller`` (the caller's headers, which hold its bearer token, and its deadline), calls the handler, and turns
the :class:`~agentmsg.errors.AgentMsgError` it may raise into its transport's error through
:mod:`agentmsg.service.status`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Caller"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls, and until when: the request's headers (lower-case keys; ``authorization`` holds the bearer
    token) and its deadline on :func:`time.monotonic`'s clock (None: no deadline).

    ``enforced``: the transport itself cancels the handler when the deadline passes (gRPC and Connect do), so a
    handler need not arm a timer of its own to stop work at the deadline."""

    metadata: Sequence[tuple[str, str | bytes]] = ()
    deadline: float | None = None
    enforced: bool = False

    @classmethod
    def within(
        cls, metadata: Sequence[tuple[str, str | bytes]], timeout: float | None, *, enforced: bool = False
    ) -> Caller:
        """A caller whose deadline is ``timeout`` seconds from now (None: no deadline)."""
        return cls(tuple(metadata), None if timeout is None else time.monotonic() + timeout, enforced)

    def time_remaining(self) -> float | None:
        """Seconds left before the deadline (never negative), or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
