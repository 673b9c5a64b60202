"""The agentmsg gRPC service: server, clients, tool runner, stores.

One module per concern (docs/service.md, "Architecture", has the map):
:mod:`~agentmsg.service.server` assembles the server from the transport-neutral
:mod:`~agentmsg.service.handlers` (sessions, tools), their adapters :mod:`~agentmsg.service.grpc` and
:mod:`~agentmsg.service.http` (Connect and gRPC-Web), :mod:`~agentmsg.service.live`, :mod:`~agentmsg.service.access`,
:mod:`~agentmsg.service.stores` and :mod:`~agentmsg.service.cluster`;
:mod:`~agentmsg.service.client` has the clients and
:mod:`~agentmsg.service.runner` ``ToolRunner``.
"""

from __future__ import annotations

from agentmsg.service.client import (
    AsyncClient,
    Client,
    Converted,
    ConvertedMessages,
    Live,
    Logged,
    RegisteredTool,
    SessionInfo,
)
from agentmsg.service.handlers.tools import RUN_METADATA_KEY
from agentmsg.service.limits import RequestLimits
from agentmsg.service.runner import ToolRunner, schema_for
from agentmsg.service.server import Running, ServerConfig, create_server, serve
from agentmsg.service.stores import Appended, MemoryStore, SessionRecord, SQLiteStore, Store, open_store

__all__ = [
    "RUN_METADATA_KEY",
    "Appended",
    "AsyncClient",
    "Client",
    "Converted",
    "ConvertedMessages",
    "Live",
    "Logged",
    "MemoryStore",
    "RegisteredTool",
    "RequestLimits",
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
