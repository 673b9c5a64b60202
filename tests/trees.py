"""Generated session trees and a naive reference for the model's context, shared by the library and service tests.

:func:`session_trees` draws sessions with branches (explicit parent ids), branch summaries, custom entries and
compactions whose first kept entry is on the path, off it, missing, empty, or the compaction itself. :func:`reference`
builds the context the documented way: the whole path from the root, then the rules of ``agentmsg.sessions``.
"""

from __future__ import annotations

from hypothesis import strategies as st

import agentmsg as am
from agentmsg.providers._common import project_session_message


@st.composite
def session_trees(draw: st.DrawFn, max_entries: int = 40) -> list[am.AgentMessage]:
    """Entries in log order; each parent is an earlier entry, as appends require."""
    count = draw(st.integers(1, max_entries))
    entries: list[am.AgentMessage] = []
    for i in range(count):
        entry_id = f"e{i}"
        parent = ""
        if entries and draw(st.integers(0, 3)) == 0:  # a branch: an explicit parent somewhere before
            parent = entries[draw(st.integers(0, len(entries) - 1))].id
        kind = draw(st.sampled_from(["user", "user", "assistant", "assistant", "compaction", "branch", "custom"]))
        common = {"id": entry_id, "timestamp": 1, "parent_id": parent}
        if kind == "user":
            entries.append(am.UserMessage.text(f"u{i}", **common))  # type: ignore[arg-type]
        elif kind == "assistant":
            entries.append(am.AssistantMessage.text(f"a{i}", stop_reason="stop", **common))  # type: ignore[arg-type]
        elif kind == "branch":
            left = entries[-1].id if entries else ""
            entries.append(am.BranchSummaryMessage(f"left {left}", left, **common))  # type: ignore[arg-type]
        elif kind == "custom":
            entries.append(
                am.CustomMessage("note", [am.TextContent(f"n{i}")], to_model=draw(st.booleans()), **common)  # type: ignore[arg-type]
            )
        else:
            choice = draw(st.sampled_from(["earlier", "earlier", "earlier", "none", "missing", "itself", "later"]))
            if choice == "earlier" and entries:
                kept = entries[draw(st.integers(0, len(entries) - 1))].id  # on the path or not
            elif choice == "missing":
                kept = "ghost"
            elif choice == "itself":
                kept = entry_id
            elif choice == "later":
                kept = f"e{i + 1}"  # an entry that may come after it
            else:
                kept = ""
            entries.append(am.CompactionSummaryMessage(f"s{i}", 100, first_kept_id=kept, **common))  # type: ignore[arg-type]
    return entries


def whole_path(entries: list[am.AgentMessage], leaf: str) -> list[am.AgentMessage]:
    """Root to ``leaf``: every entry follows its parent id, or the entry before it in the log."""
    position = {entry.id: i for i, entry in enumerate(entries)}
    path = []
    at: int | None = position[leaf]
    while at is not None:
        entry = entries[at]
        path.append(entry)
        at = position[entry.parent_id] if entry.parent_id else (at - 1 if at else None)
    path.reverse()
    return path


def reference(entries: list[am.AgentMessage], leaf: str) -> list[am.AgentMessage]:
    """The model's context read the naive way: the whole path, then the latest compaction's rules."""
    path = whole_path(entries, leaf)
    chosen = path
    latest = max((i for i, e in enumerate(path) if isinstance(e, am.CompactionSummaryMessage)), default=None)
    if latest is not None:
        compaction = path[latest]
        assert isinstance(compaction, am.CompactionSummaryMessage)
        before = [entry.id for entry in path[:latest]]
        start = before.index(compaction.first_kept_id) if compaction.first_kept_id in before else latest + 1
        chosen = [compaction, *path[start:latest], *path[latest + 1 :]]
    out: list[am.AgentMessage] = []
    for entry in chosen:
        if isinstance(entry, am.CustomMessage) and not entry.to_model:
            continue
        projected = project_session_message(entry, "project", "")
        out.append(projected if projected is not None else entry)
    return out
