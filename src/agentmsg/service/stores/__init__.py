"""Where the session service keeps messages: one interface, one module per backend.

- :mod:`~agentmsg.service.stores.base`: the :class:`Store` interface alone;
- :mod:`~agentmsg.service.stores.memory`: :class:`MemoryStore`, in the process;
- :mod:`~agentmsg.service.stores.sqlite`: :class:`SQLiteStore`, the embedded default (one file);
- :mod:`~agentmsg.service.stores.postgres`: :class:`PostgresStore`, which lets
  several server nodes share one PostgreSQL (its change feed is LISTEN/NOTIFY,
  its exclusive hold an advisory lock).

Backends import the interface, never each other; :func:`open_store`, which
picks one, sits above them all.
"""

from __future__ import annotations

from typing import Any

from agentmsg.service.stores.base import Appended, Body, SessionRecord, Store
from agentmsg.service.stores.memory import MemoryStore
from agentmsg.service.stores.postgres import PostgresStore
from agentmsg.service.stores.sqlite import SQLiteStore

__all__ = ["Appended", "Body", "MemoryStore", "PostgresStore", "SQLiteStore", "SessionRecord", "Store", "open_store"]


def open_store(db: str | None, **options: Any) -> Store:
    """``None`` or ``":memory:"`` gives a :class:`MemoryStore`; a ``postgresql://`` (or ``postgres://``) URL a
    :class:`PostgresStore` (``options``: its pool, timeout and ``group_wait`` settings); anything else a
    :class:`SQLiteStore` at that path (``options``: ``group_wait``, ``synchronous``). Call ``await store.start()``
    before using it."""
    if db is None or db == ":memory:":
        return MemoryStore()
    if db.startswith(("postgresql://", "postgres://")):
        return PostgresStore(db, **options)
    return SQLiteStore(db, **options)
