"""The agentmsg gRPC service: server, clients, tool runner, stores.

See :mod:`agentmsg.service.server` for the server, :mod:`~agentmsg.service.client`
for the clients, :mod:`~agentmsg.service.runner` for ``ToolRunner`` and
:mod:`~agentmsg.service.store` for the store interface and the embedded stores.
"""

from __future__ import annotations

from agentmsg.service.client import AsyncClient, Client, Live, Logged, RegisteredTool, SessionInfo
from agentmsg.service.runner import ToolRunner, schema_for
from agentmsg.service.server import Running, ServerConfig, create_server, serve
from agentmsg.service.store import Appended, MemoryStore, SessionRecord, SQLiteStore, Store, open_store

__all__ = [
    "Appended",
    "AsyncClient",
    "Client",
    "Live",
    "Logged",
    "MemoryStore",
    "RegisteredTool",
    "Running",
    "SQLiteStore",
    "ServerConfig",
    "SessionInfo",
    "SessionRecord",
    "Store",
    "ToolRunner",
    "create_server",
    "open_store",
    "schema_for",
    "serve",
]
