"""The walk from a session entry back to the root, one set of rules for every reader of a session tree.

:class:`~agentmsg.sessions.Session` walks its entries in memory; the service walks a stored session through its
store's indexes, reading only the path. Both step through a :class:`PathWalk`, which says where each
entry's parent is and reports a broken tree the same way, and both stop a walk for the model's context where
:class:`ContextStart` says the context begins.
"""

from __future__ import annotations

from agentmsg.errors import NotFoundError, ValidationError

__all__ = ["ContextStart", "PathWalk"]


class PathWalk:
    """One walk from an entry towards the root.

    An entry follows its ``parent_id``, or, when that is empty, the entry before it in the log (none
    before the first: the root). Appends refuse a parent the session lacks and an entry naming itself,
    so a broken tree is found only in a session written around them (a damaged or older database):
    a path that comes back to an entry it passed is a :class:`~agentmsg.ValidationError` (``parent_id``,
    rule ``session.cycle``); a parent the session does not hold is a :class:`~agentmsg.NotFoundError`
    (:meth:`missing`).
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def step(self, entry_id: str, parent_id: str) -> str | None:
        """Pass the entry ``entry_id``: the id of its parent, or None when it follows the entry before it in
        the log. Coming back to an entry already passed is a cycle."""
        if entry_id in self._seen:
            raise ValidationError.single("parent_id", "session.cycle", f"the parents of {entry_id!r} form a cycle")
        self._seen.add(entry_id)
        return parent_id or None

    @staticmethod
    def missing(entry_id: str, parent_id: str) -> NotFoundError:
        """The error for an entry whose parent the session does not hold."""
        return NotFoundError(f"entry {entry_id!r} follows {parent_id!r}, which is not in the session")


class ContextStart:
    """Where a walk from a leaf towards the root has passed everything the model's context holds.

    Walking back from the leaf, the first compaction met is the latest on the path: the context is what follows
    it, and the entries of the path from its ``first_kept_id`` up to it (see :func:`agentmsg.sessions.build_context`).
    So the walk stops at that kept entry, or at the compaction itself when it keeps none, keeps an entry the session
    does not hold, or one not before it. Its cost then follows the context, not the session.

    Positions are places in the log (offsets, or indexes in memory). An entry's parent comes before it in the log
    (appends refuse a parent the session does not hold yet), so a walk that has gone below the kept entry's
    position without meeting it will not meet it: the kept entry is off the path, and the context starts after
    the compaction, as it would had the walk gone on to the root.
    """

    __slots__ = ("_floor", "_kept", "found")

    def __init__(self) -> None:
        self.found = False  # the latest compaction has been met
        self._kept = ""
        self._floor = -1

    def compaction(self, at: int, first_kept_id: str, kept_at: int | None) -> bool:
        """The walk met the latest compaction, at position ``at``; ``kept_at`` is where its first kept entry is in
        the log (None: the session does not hold it). Whether the walk ends here."""
        self.found = True
        if not first_kept_id or kept_at is None or kept_at >= at:
            return True
        self._kept, self._floor = first_kept_id, kept_at
        return False

    def passed(self, entry_id: str, at: int) -> bool:
        """After the compaction, the walk passed ``entry_id`` at position ``at``: whether it ends here (the kept
        entry, or below where it is)."""
        return entry_id == self._kept or at <= self._floor

    def page(self, at: int, size: int) -> int:
        """How many entries to read back from position ``at`` in one page: ``size``, or fewer when the context
        starts nearer (nothing below the kept entry is read)."""
        return size if self._floor < 0 else max(1, min(size, at - self._floor + 1))
