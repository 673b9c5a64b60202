"""Human approval of tool calls, over a session's durable log (transport-neutral).

A decision is an ``approval`` block (``agentmsg.v1.ToolApprovalContent``) of a user message appended to the call's
session, by any client with that session's scope. This module holds the two things the service does with them:

- :func:`check_decisions`, on append: a decision must name a tool call (or hosted call) of the session, in the log
  or earlier in the same batch; a decision for an unknown call is refused (``INVALID_ARGUMENT``, rule
  ``session.approval.call``), and nothing of the batch is written.
- :func:`wait_for_decision`, for ``CallTool`` on a tool that requires approval: the first decision on the call
  after the session's last tool call with its id counts (a model may reuse an id in a later turn: an old decision
  does not approve a new call), one appended before ``CallTool`` arrived too, and one appended before a server
  restart (the log is read, then followed as it grows).

Both read the log through the :class:`~agentmsg.service.stores.Store` interface, so they hold on every backend and,
with a shared PostgreSQL, across nodes (its change feed wakes the waiter on whichever node holds the call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentmsg.errors import ValidationError, Violation
from agentmsg.service.stores.base import Body, Store
from agentmsg.v1 import content_pb2, message_pb2

__all__ = ["APPROVAL_RULE", "check_decisions", "find_calls", "first_decision", "last_call_offset", "wait_for_decision"]

APPROVAL_RULE = "session.approval.call"
PAGE = 512
# A waiter re-reads the log at least this often even without a change event: another party may drop the
# session's pending event (Store.forget) while this waiter holds it.
RECHECK = 1.0


def _decisions(message: message_pb2.Message) -> list[tuple[int, content_pb2.ToolApprovalContent]]:
    if message.WhichOneof("role") != "user":
        return []
    return [(j, block.approval) for j, block in enumerate(message.user.content) if block.HasField("approval")]


def _call_ids(message: message_pb2.Message) -> set[str]:
    if message.WhichOneof("role") != "assistant":
        return set()
    found = set()
    for block in message.assistant.content:
        kind = block.WhichOneof("kind")
        if kind == "tool_call":
            found.add(block.tool_call.id)
        elif kind == "hosted_tool_call" and block.hosted_tool_call.id:
            found.add(block.hosted_tool_call.id)
    return found


def _mentions(body: Body, ids: set[str]) -> bool:
    """A cheap filter before parsing: an entry that names a call holds its id's UTF-8 bytes."""
    data = bytes(body)
    return any(call_id.encode() in data for call_id in ids)


async def find_calls(
    store: Store, session_id: str, call_ids: set[str]
) -> dict[str, content_pb2.ToolCallContent | content_pb2.HostedToolCallContent]:
    """The tool calls (and hosted calls) of the session with these ids, as the log holds them."""
    found: dict[str, content_pb2.ToolCallContent | content_pb2.HostedToolCallContent] = {}
    cursor = 0
    while len(found) < len(call_ids):
        rows = await store.read(session_id, cursor, PAGE)
        if not rows:
            break
        cursor = rows[-1][0]
        for _, body in rows:
            if not _mentions(body, call_ids - found.keys()):
                continue
            message = message_pb2.Message.FromString(bytes(body))
            if message.WhichOneof("role") != "assistant":
                continue
            for block in message.assistant.content:
                kind = block.WhichOneof("kind")
                if kind == "tool_call" and block.tool_call.id in call_ids:
                    found.setdefault(block.tool_call.id, block.tool_call)
                elif kind == "hosted_tool_call" and block.hosted_tool_call.id in call_ids:
                    found.setdefault(block.hosted_tool_call.id, block.hosted_tool_call)
    return found


async def last_call_offset(store: Store, session_id: str, call_id: str) -> int | None:
    """The offset of the session's last entry holding a tool call (or hosted call) with this id, or None."""
    ids = {call_id}
    found = None
    cursor = 0
    while True:
        rows = await store.read(session_id, cursor, PAGE)
        if not rows:
            return found
        cursor = rows[-1][0]
        for offset, body in rows:
            if _mentions(body, ids) and call_id in _call_ids(message_pb2.Message.FromString(bytes(body))):
                found = offset


async def check_decisions(
    store: Store, session_id: str, messages: Sequence[message_pb2.Message], field: str = "messages"
) -> None:
    """Refuse a batch with a decision on a call that is neither in the session nor earlier in the batch.

    ``field`` names the request's message field in the violations (``messages[i]`` for a batch, ``message`` for
    one). A batch without decisions costs one scan of its own blocks and no read.
    """
    if not any(_decisions(message) for message in messages):
        return  # the common case: no decision, no further look
    wanted: list[tuple[str, str]] = []  # (violation field, call id)
    in_batch: set[str] = set()
    for i, message in enumerate(messages):
        where = field if field == "message" else f"{field}[{i}]"
        for j, decision in _decisions(message):
            if decision.call_id not in in_batch:
                wanted.append((f"{where}.user.content[{j}].approval.call_id", decision.call_id))
        in_batch |= _call_ids(message)
    if not wanted:
        return
    known = await find_calls(store, session_id, {call_id for _, call_id in wanted})
    problems = [
        Violation(path, APPROVAL_RULE, f"no tool call {call_id!r} in session {session_id!r} to decide on")
        for path, call_id in wanted
        if call_id not in known
    ]
    if problems:
        raise ValidationError(problems, "append")


async def first_decision(
    store: Store, session_id: str, call_id: str, after: int = 0
) -> tuple[content_pb2.ToolApprovalContent | None, int]:
    """The first decision on ``call_id`` after offset ``after``, and the offset read up to."""
    ids = {call_id}
    cursor = after
    while True:
        rows = await store.read(session_id, cursor, PAGE)
        if not rows:
            return None, cursor
        for offset, body in rows:
            cursor = offset
            if not _mentions(body, ids):
                continue
            for _, decision in _decisions(message_pb2.Message.FromString(bytes(body))):
                if decision.call_id == call_id:
                    return decision, cursor


async def wait_for_decision(
    store: Store, session_id: str, call_id: str, timeout: float | None, *, after: int = 0
) -> content_pb2.ToolApprovalContent:
    """The first decision on ``call_id`` in the session's log after offset ``after``, waiting for one to be appended.

    Raises :class:`TimeoutError` when ``timeout`` (seconds; None waits until cancelled) passes first. However the
    wait ends, it releases its hold on the session's change event at once (:meth:`Store.watching`).
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    cursor = after
    with store.watching(session_id):
        while True:
            changed = store.changed(session_id)  # before reading: an append after the read wakes us
            decision, cursor = await first_decision(store, session_id, call_id, cursor)
            if decision is not None:
                return decision
            wait = RECHECK if deadline is None else min(RECHECK, deadline - loop.time())
            if wait <= 0:
                raise TimeoutError
            try:
                await asyncio.wait_for(changed.wait(), wait)
            except TimeoutError:
                if deadline is not None and loop.time() >= deadline:
                    raise
