"""The walk from a session entry back to the root, one set of rules for every reader of a session tree.

:class:`~agentmsg.sessions.Session` walks its entries in memory; the service walks a stored session through its
store's indexes, reading only the path. Both step through a :class:`PathWalk`, which says where each
entry's parent is and reports a broken tree the same way.
"""

from __future__ import annotations

from agentmsg.errors import NotFoundError, ValidationError

__all__ = ["PathWalk"]


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
