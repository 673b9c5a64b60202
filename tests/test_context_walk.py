"""``Session.build_context`` walks back only to where the context starts, and gives what the whole path gives.

The reference (``trees.reference``) reads the whole path from the root and applies the documented rules; the
session stops its walk at the latest compaction's first kept entry. They must agree on every generated tree, for
every entry as the leaf.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from trees import reference, session_trees, whole_path

import agentmsg as am
from agentmsg import sessions
from agentmsg.sessions import Session


def user(entry_id: str, **fields: object) -> am.UserMessage:
    return am.UserMessage.text(entry_id, id=entry_id, timestamp=1, **fields)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(session_trees())
def test_the_context_equals_the_whole_path_reference(entries: list[am.AgentMessage]) -> None:
    session = Session(entries)
    for entry in entries:
        expected = reference(entries, entry.id)
        assert session.build_context(entry.id) == expected
        # The old way, through the whole path, is the same too.
        assert sessions.build_context(session.path(entry.id)) == expected
        assert session.path(entry.id) == whole_path(entries, entry.id)
    assert session.build_context() == reference(entries, entries[-1].id)


def damaged(entries: list[am.AgentMessage]) -> Session:
    """A session holding entries written around the append checks (as a damaged or older store might)."""
    session = Session()
    session._entries = list(entries)
    session._index = {m.id: i for i, m in enumerate(entries)}
    return session


def test_the_walk_stops_at_the_first_kept_entry() -> None:
    """A break in the tree before the kept entries is never reached: the context is read, the path is not."""
    session = damaged(
        [
            user("a", parent_id="b"),  # a cycle with b
            user("b", parent_id="a"),
            user("k"),
            user("x"),
            am.CompactionSummaryMessage("summary", 10, first_kept_id="k", id="c", timestamp=1),
            user("t"),
        ]
    )
    assert [m.id for m in session.build_context()] == ["c", "k", "x", "t"]
    with pytest.raises(am.ValidationError, match="form a cycle"):
        session.path()  # the whole path meets the break


def test_a_kept_entry_off_the_path_ends_the_walk_once_it_is_passed() -> None:
    """The kept entry is on another branch: once the walk is below it in the log, the context starts after the
    compaction (the break further back is not reached)."""
    session = damaged(
        [
            user("a", parent_id="b"),  # a cycle with b, below everything the context needs
            user("b", parent_id="a"),
            user("r", parent_id="a"),
            user("side"),
            user("main", parent_id="r"),
            user("m2"),
            am.CompactionSummaryMessage("s", 1, first_kept_id="side", id="c", timestamp=1),
            user("t"),
        ]
    )
    assert [m.id for m in session.build_context()] == ["c", "t"]
    with pytest.raises(am.ValidationError, match="form a cycle"):
        session.path()


@pytest.mark.parametrize("kept", ["", "ghost", "c", "t"])
def test_a_compaction_that_keeps_nothing_before_it_ends_the_walk(kept: str) -> None:
    """No kept entry, one the session lacks, the compaction itself or an entry after it: the walk ends at the
    compaction (its missing parent is not looked for)."""
    session = damaged(
        [am.CompactionSummaryMessage("s", 1, first_kept_id=kept, id="c", parent_id="gone", timestamp=1), user("t")]
    )
    assert [m.id for m in session.build_context()] == ["c", "t"]
    with pytest.raises(am.NotFoundError, match="follows 'gone'"):
        session.path()
