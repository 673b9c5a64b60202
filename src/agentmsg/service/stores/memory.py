"""The in-memory store: everything in this process, fast, and gone when it exits."""

from __future__ import annotations

import heapq

from agentmsg.service.stores.base import Appended, Body, SessionRecord, Store, _plan

__all__ = ["MemoryStore"]


class MemoryStore(Store):
    """Everything in this process: fast, and gone when it exits."""

    def __init__(self) -> None:
        super().__init__()
        self._logs: dict[str, list[Body]] = {}
        self._ids: dict[str, dict[str, int]] = {}
        self._times: dict[str, tuple[int, int]] = {}

    async def _append(self, session_id: str, encoded: list[tuple[str, Body]], now_us: int) -> list[Appended]:
        log = self._logs.get(session_id, [])
        ids = self._ids.get(session_id, {})
        result, staged, staged_ids = _plan(log.__getitem__, ids, encoded, len(log))
        if staged:
            self._logs.setdefault(session_id, log).extend(staged)
            self._ids.setdefault(session_id, ids).update(staged_ids)
            created = self._times.get(session_id, (now_us, now_us))[0]
            self._times[session_id] = (created, now_us)
        return result

    async def _delete(self, session_id: str) -> int:
        log = self._logs.pop(session_id, [])
        self._ids.pop(session_id, None)
        self._times.pop(session_id, None)
        return len(log)

    async def _sweep(self, idle_before_us: int, limit: int) -> list[str]:
        idle = heapq.nsmallest(limit, ((u, s) for s, (_, u) in self._times.items() if u < idle_before_us))
        deleted = [s for _, s in idle]
        for session_id in deleted:
            await self._delete(session_id)
        return deleted

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Body]]:
        log = self._logs.get(session_id, [])
        return [(after + 1 + i, body) for i, body in enumerate(log[after : after + limit])]

    async def last_offset(self, session_id: str) -> int:
        return len(self._logs.get(session_id, ()))

    async def known_ids(self, session_id: str, message_ids: set[str]) -> set[str]:
        ids = self._ids.get(session_id, {})
        return {message_id for message_id in message_ids if message_id in ids}

    async def entry(self, session_id: str, message_id: str) -> tuple[int, Body] | None:
        offset = self._ids.get(session_id, {}).get(message_id)
        return None if offset is None else (offset, self._logs[session_id][offset - 1])

    async def sessions(self, after: str, limit: int, *, prefix: str = "") -> list[SessionRecord]:
        ids = sorted(s for s in self._logs if s > after and s.startswith(prefix))[:limit]
        return [SessionRecord(s, len(self._logs[s]), *self._times[s]) for s in ids]
