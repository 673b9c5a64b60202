"""Sessions as a tree, and the LLM context built from them.

A session is a log of messages (its *entries*). Each entry follows a parent:
``Message.parent_id``, or, when that is empty, the entry just before it in the
log, so a linear session needs no parent ids at all. An entry that names an
earlier parent starts a branch there. The session-only roles are the other
entry kinds: a :class:`~agentmsg.BranchSummaryMessage` summarises a branch
that was left, a :class:`~agentmsg.CompactionSummaryMessage` stands for
compacted history, a :class:`~agentmsg.CustomMessage` is the application's
own entry (given to the model only with ``to_model=True``).

:meth:`Session.build_context` walks from a leaf towards the root and returns
what the model sees, by these rules (the walk stops where the context starts:
at the latest compaction's first kept entry, see :class:`agentmsg._tree.ContextStart`):

- the latest compaction on the path comes first, as user text
  (:data:`~agentmsg.providers._common.COMPACTION_SUMMARY_TEMPLATE`), followed
  by the path's entries from its ``first_kept_id`` up to it, then everything
  after it; entries before the kept ones are left out;
- a branch summary on the path becomes user text
  (:data:`~agentmsg.providers._common.BRANCH_SUMMARY_TEMPLATE`);
- a custom entry is given to the model only with ``to_model``, as user
  content (:data:`~agentmsg.providers._common.CUSTOM_MESSAGE_TEMPLATE` for
  its text, then its other blocks);
- every other message is given as it is.

The history repair helpers (:func:`repair_history` and its parts) fix what a
provider would refuse, before a call: tool calls nobody answered, empty
assistant messages, and an unusable assistant message at the end.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from agentmsg._tree import ContextStart, PathWalk
from agentmsg.content import TextContent, ToolCallContent, ToolResultContent
from agentmsg.errors import ConflictError, DecodeError, NotFoundError, ValidationError, Violation
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    LLMMessage,
    ProviderState,
    StopReason,
    ToolMessage,
)
from agentmsg.providers._common import project_session_message
from agentmsg.v1 import message_pb2

__all__ = [
    "EXPORT_VERSION",
    "Session",
    "answer_unanswered_tool_calls",
    "drop_empty_assistant_messages",
    "repair_history",
    "strip_trailing_unusable_assistant",
]

EXPORT_VERSION = 1
"""The version of the JSONL export this release writes; every later release reads version 1."""
_EXPORT_KIND = "agentmsg.session"


class Session:
    """A session's entries, in log order, with their tree (see the module docstring).

    Operations check their input first and change nothing when it is wrong:
    an unknown parent or branch point is a :class:`~agentmsg.NotFoundError`,
    a cycle or a first kept entry off the path a :class:`~agentmsg.ValidationError`.
    """

    def __init__(self, entries: Iterable[BaseMessage] = (), *, session_id: str = "") -> None:
        self.session_id = session_id
        self._entries: list[AgentMessage] = []
        self._index: dict[str, int] = {}
        self._next_parent: str | None = None
        for entry in entries:
            self.append(entry)

    # -- reading

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AgentMessage]:
        return iter(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._index

    def get(self, entry_id: str) -> AgentMessage:
        """The entry with this id (:class:`~agentmsg.NotFoundError` when there is none)."""
        position = self._index.get(entry_id)
        if position is None:
            raise NotFoundError(f"session {self.session_id or '(unnamed)'} has no entry {entry_id!r}")
        return self._entries[position]

    @property
    def entries(self) -> tuple[AgentMessage, ...]:
        """Every entry, in log order."""
        return tuple(self._entries)

    @property
    def leaf_id(self) -> str | None:
        """Where the next entry goes: the last entry, or the branch point :meth:`branch` chose."""
        if self._next_parent is not None:
            return self._next_parent
        return self._entries[-1].id if self._entries else None

    def parent_of(self, entry_id: str) -> str | None:
        """An entry's parent id (its own ``parent_id``, or the entry before it in the log)."""
        position = self._index.get(entry_id)
        if position is None:
            raise NotFoundError(f"session {self.session_id or '(unnamed)'} has no entry {entry_id!r}")
        return _parent(self._entries, position)

    def children(self, entry_id: str | None) -> list[AgentMessage]:
        """The entries that follow ``entry_id`` (None: the roots), in log order."""
        return [e for i, e in enumerate(self._entries) if _parent(self._entries, i) == entry_id]

    def path(self, leaf: str | None = None) -> list[AgentMessage]:
        """The entries from the root to ``leaf`` (default :attr:`leaf_id`)."""
        leaf = leaf if leaf is not None else self.leaf_id
        if leaf is None:
            return []
        position = self._index.get(leaf)
        if position is None:
            raise NotFoundError(f"session {self.session_id or '(unnamed)'} has no entry {leaf!r}")
        return _walk(self._entries, self._index, position)

    # -- changing

    def append(self, message: BaseMessage) -> AgentMessage:
        """Add an entry after :attr:`leaf_id` (or after its own ``parent_id``); returns it as stored.

        Appending an entry whose id the session holds returns the held entry
        when they are equal (a retry) and raises :class:`~agentmsg.ConflictError`
        when they differ.
        """
        if not isinstance(message, BaseMessage):
            raise ValidationError.single("message", "type", f"expected a message, got {type(message).__name__}")
        held = self._index.get(message.id)
        if held is not None:
            stored = self._entries[held]
            # A retry may lack the parent id the session filled in when it first came.
            if stored == message or (not message.parent_id and message.with_parent(stored.parent_id) == stored):
                return stored
            raise ConflictError(f"entry id {message.id!r} is already in the session with different content")
        if message.parent_id:
            if message.parent_id == message.id:
                raise ValidationError.single(
                    "parent_id", "session.cycle", f"entry {message.id!r} names itself as parent"
                )
            if message.parent_id not in self._index:
                raise NotFoundError(f"entry {message.id!r} follows {message.parent_id!r}, which is not in the session")
        elif self._next_parent is not None and self._next_parent != self._last_id():
            message = message.with_parent(self._next_parent)
        self._next_parent = None
        self._index[message.id] = len(self._entries)
        self._entries.append(message)  # type: ignore[arg-type]
        return message  # type: ignore[return-value]

    def _last_id(self) -> str | None:
        return self._entries[-1].id if self._entries else None

    def branch(self, from_id: str, *, summary: str | None = None, **fields: Any) -> BranchSummaryMessage | None:
        """Go back to ``from_id``: later entries follow it instead of the current leaf.

        With ``summary``, a :class:`~agentmsg.BranchSummaryMessage` of the branch
        being left is appended after ``from_id`` (its ``from_id`` is the old leaf)
        and returned; ``fields`` go to its constructor (``id``, ``timestamp``).
        """
        if from_id not in self._index:
            raise NotFoundError(f"cannot branch from {from_id!r}: the session has no such entry")
        left = self.leaf_id or ""
        if summary is None:
            self._next_parent = from_id
            return None
        entry = BranchSummaryMessage(summary, left, parent_id=from_id, **fields)
        self._next_parent = None
        self.append(entry)
        return entry

    def compact(
        self,
        summary: str,
        *,
        first_kept_id: str = "",
        tokens_before: int | None = None,
        provider_state: ProviderState | None = None,
        **fields: Any,
    ) -> CompactionSummaryMessage:
        """Append a compaction of the path to :attr:`leaf_id`; ``first_kept_id`` must lie on that path."""
        path_ids = [entry.id for entry in self.path()]
        if first_kept_id and first_kept_id not in path_ids:
            raise ValidationError(
                [
                    Violation(
                        "first_kept_id",
                        "session.first_kept_on_path",
                        f"{first_kept_id!r} is not on the path to {self.leaf_id!r}",
                    )
                ],
                "compaction",
            )
        parent = self.leaf_id or ""
        entry = CompactionSummaryMessage(
            summary,
            tokens_before,
            first_kept_id=first_kept_id,
            provider_state=provider_state,
            parent_id=parent if parent != self._last_id() else "",
            **fields,
        )
        self._next_parent = None
        self.append(entry)
        return entry

    # -- the model's view

    def build_context(self, leaf: str | None = None) -> list[LLMMessage]:
        """The messages the model sees for the path to ``leaf`` (rules in the module docstring).

        Only the part of the path the context holds is walked: from the leaf back to the latest compaction's
        first kept entry (the whole path when it has no compaction).
        """
        leaf = leaf if leaf is not None else self.leaf_id
        if leaf is None:
            return []
        position = self._index.get(leaf)
        if position is None:
            raise NotFoundError(f"session {self.session_id or '(unnamed)'} has no entry {leaf!r}")
        return build_context(_walk(self._entries, self._index, position, ContextStart()))

    # -- persistence

    def export_jsonl(self) -> str:
        """The session as JSONL: a header line, then one ProtoJSON message per line, in log order."""
        header = {
            "kind": _EXPORT_KIND,
            "version": EXPORT_VERSION,
            "sessionId": self.session_id,
            "exportTime": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        lines = [json.dumps(header, ensure_ascii=False)]
        lines.extend(entry.to_json() for entry in self._entries)
        return "\n".join(lines) + "\n"

    @classmethod
    def import_jsonl(cls, text: str | bytes) -> Session:
        """Read an export (any version up to :data:`EXPORT_VERSION`); errors name the line."""
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                raw = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DecodeError(f"the session export is not UTF-8: {exc}") from None
        elif isinstance(text, str):
            raw = text
        else:
            raise DecodeError(f"Session.import_jsonl expects str or bytes, got {type(text).__name__}")
        lines = [line for line in raw.splitlines() if line.strip()]
        if not lines:
            raise DecodeError("an empty session export: the header line is missing")
        try:
            header = json.loads(lines[0])
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"line 1: the header is not JSON: {exc}") from None
        if not isinstance(header, dict) or header.get("kind") != _EXPORT_KIND:
            raise DecodeError(f"line 1: not an agentmsg session export (kind {_EXPORT_KIND!r} expected)")
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise DecodeError(f"line 1: bad export version {version!r}")
        if version > EXPORT_VERSION:
            raise DecodeError(
                f"line 1: written by a newer agentmsg (export version {version}; this release reads up to "
                f"{EXPORT_VERSION})"
            )
        entries: list[AgentMessage] = []
        for number, line in enumerate(lines[1:], start=2):
            try:
                entries.append(BaseMessage.from_json(line, validate=True))  # type: ignore[arg-type]
            except (DecodeError, ValidationError) as exc:
                raise DecodeError(f"line {number}: {exc}") from None
        session = cls(session_id=str(header.get("sessionId") or ""))
        try:
            for entry in entries:
                session.append(entry)
        except (NotFoundError, ValidationError, ConflictError) as exc:
            raise DecodeError(f"the export's tree is broken: {exc}") from None
        return session

    def tree_lines(self) -> list[tuple[int, AgentMessage]]:
        """Every entry with its depth, depth-first from the roots, children in log order (for display)."""
        out: list[tuple[int, AgentMessage]] = []
        children: dict[str | None, list[int]] = {}
        for i in range(len(self._entries)):
            children.setdefault(_parent(self._entries, i), []).append(i)
        stack = [(0, i) for i in reversed(children.get(None, []))]
        while stack:
            depth, i = stack.pop()
            out.append((depth, self._entries[i]))
            kids = children.get(self._entries[i].id, [])
            # A linear run stays at one depth; a fork indents its branches.
            next_depth = depth + 1 if len(kids) > 1 else depth
            stack.extend((next_depth, k) for k in reversed(kids))
        return out


def _parent(entries: Sequence[AgentMessage], position: int) -> str | None:
    entry = entries[position]
    if entry.parent_id:
        return entry.parent_id
    return entries[position - 1].id if position > 0 else None


def _walk(
    entries: Sequence[AgentMessage], index: dict[str, int], position: int, context: ContextStart | None = None
) -> list[AgentMessage]:
    """The path from the root to ``entries[position]``; with ``context``, only from where the context starts."""
    path: list[AgentMessage] = []
    walk = PathWalk()
    current: int | None = position
    while current is not None:
        entry = entries[current]
        parent = walk.step(entry.id, entry.parent_id)
        path.append(entry)
        if context is not None and _context_ends(context, entry, current, index):
            break
        if parent is None:
            current = current - 1 if current > 0 else None
            continue
        current = index.get(parent)
        if current is None:
            raise walk.missing(entry.id, parent)
    path.reverse()
    return path


def _context_ends(context: ContextStart, entry: AgentMessage, at: int, index: dict[str, int]) -> bool:
    if context.found:
        return context.passed(entry.id, at)
    if isinstance(entry, CompactionSummaryMessage):
        kept = entry.first_kept_id
        return context.compaction(at, kept, index.get(kept) if kept else None)
    return False


SESSION_ARMS = frozenset({"custom", "branch_summary", "compaction_summary"})
"""The role arms of the session-only entries: the only entries whose content the context rules read."""


def context_plan(
    ids: Sequence[str], arms: Sequence[str | None], session: Mapping[int, AgentMessage]
) -> list[int | LLMMessage]:
    """The model's view of a path of entries ending at the leaf, decided from what the rules read of each entry.

    ``ids`` and ``arms`` are each entry's id and role arm (``Message.role``'s arm name; None for a role this version
    does not know), in path order; ``session`` holds the session-only entries (:data:`SESSION_ARMS`) by index, whose
    fields the rules read (a compaction's ``first_kept_id``, a custom entry's ``to_model``) and which they project.
    Each item of the answer is either the index of an entry the model is given as it is, or the message a
    session-only entry is projected to, in the context's order. :func:`build_context` (what
    :meth:`Session.build_context` gives) and the service's ``BuildContext`` (which sends the entries given as they are
    as their stored bytes, never parsing them) both answer through it: one rule.
    """
    count = len(arms)
    latest = None
    for i in range(count - 1, -1, -1):
        if arms[i] == "compaction_summary":
            latest = i
            break
    out: list[int | LLMMessage] = []
    order: Iterable[int] = range(count)
    if latest is not None:
        compaction = session[latest]
        assert isinstance(compaction, CompactionSummaryMessage)
        out.append(_projected(compaction))
        start = latest + 1
        if compaction.first_kept_id:
            with contextlib.suppress(ValueError):  # not on the path before it: the context starts after it
                start = ids.index(compaction.first_kept_id, 0, latest)
        order = itertools.chain(range(start, latest), range(latest + 1, count))
    for i in order:
        arm = arms[i]
        if arm is None:
            continue  # a role this version does not know: not given to a model
        if arm in SESSION_ARMS:
            entry = session[i]
            if not isinstance(entry, CustomMessage) or entry.to_model:
                out.append(_projected(entry))
            continue
        out.append(i)
    return out


def _projected(entry: AgentMessage) -> LLMMessage:
    projected = project_session_message(entry, "project", "")
    assert projected is not None  # a session-only entry always projects
    return projected


def build_context(path: Sequence[AgentMessage]) -> list[LLMMessage]:
    """The model's view of a path of entries ending at the leaf (rules in the module docstring).

    The path runs from the root, or from any entry at or before where the context starts (as
    :meth:`Session.build_context` and the service walk it): the result is the same. The decision is
    :func:`context_plan`'s.
    """
    arms = [entry._ARM or None for entry in path]
    session = {i: entry for i, entry in enumerate(path) if arms[i] in SESSION_ARMS}
    plan = context_plan([entry.id for entry in path], arms, session)
    return [path[item] if isinstance(item, int) else item for item in plan]  # type: ignore[misc]


# --- history repair -------------------------------------------------------------------------

UNANSWERED_TEXT = "No result: the tool call was not answered (the run was interrupted or the result was lost)."


def _results_in(message: AgentMessage) -> set[str]:
    return {block.id for block in message.contents if isinstance(block, ToolResultContent)}


def answer_unanswered_tool_calls(
    messages: Sequence[AgentMessage],
    *,
    mode: Literal["error_result", "drop"] = "error_result",
    text: str = UNANSWERED_TEXT,
) -> list[AgentMessage]:
    """Make every tool call answered before the next assistant turn, as providers require.

    ``error_result``: a :class:`~agentmsg.ToolMessage` of ``is_error`` results
    with ``text`` is inserted after the results that did come. ``drop``: the
    unanswered calls are removed from their assistant message (and the
    message too, when nothing else is left in it).
    """
    out: list[AgentMessage] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        out.append(message)
        i += 1
        if not isinstance(message, AssistantMessage):
            continue
        calls = message.tool_calls()
        if not calls:
            continue
        answered: set[str] = set()
        j = i
        while j < len(messages) and not isinstance(messages[j], AssistantMessage):
            answered |= _results_in(messages[j])
            j += 1
        missing = [call for call in calls if call.id not in answered]
        if not missing:
            continue
        if mode == "drop":
            out.pop()
            kept = [
                block for block in message.contents if not (isinstance(block, ToolCallContent) and block in missing)
            ]
            if kept:
                copy = message.copy()
                del copy.pb.assistant.content[:]
                copy.pb.assistant.content.extend(block.pb for block in kept)
                if not copy.tool_calls() and copy.stop_reason is StopReason.TOOL_CALLS:
                    copy.pb.assistant.stop_reason = message_pb2.STOP_REASON_STOP  # nothing waits for tools now
                out.append(copy)
            continue
        # Keep the results that came (tool and user turns up to the next assistant), then answer the rest.
        last_result = i
        for k in range(i, j):
            if _results_in(messages[k]):
                last_result = k + 1
        out.extend(messages[i:last_result])
        out.append(
            ToolMessage(
                [ToolResultContent.error(call.id, text, name=call.name) for call in missing],
                id=f"{message.id}:unanswered",
                timestamp=message.timestamp,
            )
        )
        i = last_result
    return out


def _empty(message: AssistantMessage) -> bool:
    return all(isinstance(block, TextContent) and not block.content for block in message.contents)


def drop_empty_assistant_messages(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """Leave out assistant messages with no content, or only empty text."""
    return [m for m in messages if not (isinstance(m, AssistantMessage) and _empty(m))]


def strip_trailing_unusable_assistant(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """Leave out a final assistant message that failed, was aborted, or is empty."""
    out = list(messages)
    while out and isinstance(out[-1], AssistantMessage):
        last = out[-1]
        assert isinstance(last, AssistantMessage)
        if last.error or last.stop_reason in (StopReason.ERROR, StopReason.ABORT) or _empty(last):
            out.pop()
            continue
        break
    return out


def repair_history(
    messages: Sequence[AgentMessage], *, unanswered: Literal["error_result", "drop"] = "error_result"
) -> list[AgentMessage]:
    """All three repairs, in the order a provider call needs them."""
    return answer_unanswered_tool_calls(
        drop_empty_assistant_messages(strip_trailing_unusable_assistant(messages)), mode=unanswered
    )
