"""The agentmsg gRPC server assembled: sessions, live relay, tools, access, store and cluster.

``create_server(config)`` builds and starts a server and returns it with its
port (tests bind 127.0.0.1:0); ``serve(config)`` runs one until SIGINT or
SIGTERM, then shuts down gracefully: health goes NOT_SERVING, new calls are
refused, calls in flight get ``config.grace`` seconds to finish.

Each concern lives in its own module: the transport-neutral logic in :mod:`~agentmsg.service.handlers`
(sessions, tools, conversions), its gRPC servicers in :mod:`~agentmsg.service.grpc`, its Connect application in
:mod:`~agentmsg.service.http`, beside :mod:`~agentmsg.service.live`,
:mod:`~agentmsg.service.access`, :mod:`~agentmsg.service.stores`,
:mod:`~agentmsg.service.cluster`; this one only puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from agentmsg.errors import StoreError, UnavailableError, ValidationError
from agentmsg.service import budgets, reflection
from agentmsg.service.access import Access, BearerTokenGate, Scope
from agentmsg.service.budgets import BudgetGate, Budgets, Ledger
from agentmsg.service.catchup import CatchUpBounds
from agentmsg.service.cluster import Cluster, peer_credentials
from agentmsg.service.frames import DEFAULT_REPLY_CACHE_BYTES, FrameCache
from agentmsg.service.grpc.calls import Gate, capture, gated, register
from agentmsg.service.grpc.convert import ConvertServicer, add_convert_service
from agentmsg.service.grpc.sessions import SessionServicer, add_session_service
from agentmsg.service.grpc.tools import ToolServicer, add_tool_service
from agentmsg.service.handlers.convert import CONVERT_SERVICE, ConvertHandler
from agentmsg.service.handlers.sessions import SESSION_SERVICE, SessionHandler
from agentmsg.service.handlers.tools import TOOL_SERVICE, ToolHandler
from agentmsg.service.limits import RequestLimits
from agentmsg.service.live import LiveHub
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES, HTTP2_MAX_FRAME
from agentmsg.service.stores import PostgresStore, SQLiteStore, Store, open_store
from agentmsg.service.stores.base import DEFAULT_GROUP_WAIT
from agentmsg.service.telemetry import ServerTelemetry

if TYPE_CHECKING:
    from agentmsg.mcp._session import MCPServerSpec
    from agentmsg.mcp.hosted import HostedMcp
    from agentmsg.service.http.server import HttpListener

__all__ = ["ServerConfig", "create_server", "serve"]

log = logging.getLogger("agentmsg.service")

SHUTDOWN_STEP = 10.0  # seconds each shutdown step that talks to the store may take
RETENTION_EVERY = 60.0  # seconds between retention sweeps
MAX_PORT = 65535  # 0 asks for any free port
RETENTION_BATCH = 100  # sessions one sweep deletes at most; a full sweep is followed by the next after a second


@dataclass
class ServerConfig:
    """How to run the server. The defaults are the embedded setup: SQLite, loopback, no auth."""

    host: str = "127.0.0.1"
    port: int = 0
    # An SQLite path; None or ":memory:" for the in-memory store; a postgresql:// URL for PostgresStore.
    db: str | None = "agentmsg.db"
    pool_size: int = 10  # PostgreSQL: connections per node
    statement_timeout: float = 10.0  # PostgreSQL: seconds before a statement is cancelled
    group_wait: float = DEFAULT_GROUP_WAIT  # SQLite, PostgreSQL: seconds a batch waits for the last one's writers
    advertise: str | None = None  # PostgreSQL: the host:port other nodes reach this one at (default host:port)
    peer_ca: bytes | None = None  # PostgreSQL with TLS: PEM CA of the other nodes' certificates
    tokens: Sequence[str] = ()  # bearer tokens with full access; with no tokens and no grants: no auth
    grants: Mapping[str, Scope] = field(default_factory=dict)  # bearer tokens with a scope (see access.py)
    tls_cert: bytes | None = None  # PEM certificate chain of the server
    tls_key: bytes | None = None  # PEM private key of the server
    tls_client_ca: bytes | None = None  # PEM CA bundle: clients must present a certificate it signed (mTLS)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    # Blocks per message and per request, events per PublishStream (see limits.py and docs/reliability.md).
    limits: RequestLimits = field(default_factory=RequestLimits)
    reply_cache_bytes: int = DEFAULT_REPLY_CACHE_BYTES  # Subscribe replies framed once and shared, at most this
    # Calls in progress at once (0: no limit), long-lived streams and unary calls apart, per tenant (token)
    # and in total; health checks are never counted (see budgets.py).
    max_streams: int = budgets.DEFAULT_MAX_STREAMS
    max_streams_per_tenant: int = budgets.DEFAULT_MAX_STREAMS_PER_TENANT
    max_unary: int = budgets.DEFAULT_MAX_UNARY
    max_unary_per_tenant: int = budgets.DEFAULT_MAX_UNARY_PER_TENANT
    reflection: bool = True
    grace: float = 5.0
    store: Store | None = field(default=None, repr=False)  # a ready store (overrides db)
    metrics_port: int | None = None  # serve Prometheus /metrics on host:metrics_port (0: any free port)
    # Delete sessions whose last append is older than this many days (a background sweep); None keeps them all.
    retain_days: float | None = None
    # Connect (JSON and binary) and gRPC-Web on http_host:http_port (0: any free port; None: no HTTP), the
    # http extra. CORS headers only for these browser origins ("*": any); none: browsers elsewhere are refused.
    http_port: int | None = None
    http_host: str = "127.0.0.1"
    cors_origins: Sequence[str] = ()
    # MCP servers this server hosts (the mcp extra), by name: an http(s):// URL (streamable HTTP) or a command run
    # over stdio (its argv, or one command line). Their tools are served as NAME.TOOL (see agentmsg.mcp.hosted).
    mcp_servers: Mapping[str, str | Sequence[str]] = field(default_factory=dict)


# --- the server ----------------------------------------------------------------------------


@dataclass
class Running:
    """A started server and what it serves."""

    server: grpc.aio.Server
    port: int
    store: Store
    health: health.aio.HealthServicer
    sessions: SessionHandler  # the transport-neutral logic every transport calls
    tools: ToolHandler
    frames: FrameCache  # Subscribe batches and full ListMessages pages framed once for every gRPC reader
    cluster: Cluster | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    stopping: bool = False
    telemetry: ServerTelemetry | None = None  # tracing and /metrics (the otel extra), when turned on
    metrics_port: int | None = None  # where /metrics is served
    retain_days: float | None = None  # the retention period (None: sessions are kept)
    retention: asyncio.Task[None] | None = None  # the background sweep, with a retention period
    http: HttpListener | None = None  # Connect and gRPC-Web, when an HTTP port is configured
    ledger: Ledger | None = None  # the calls in progress against the budgets, and those refused (both transports)
    mcp: dict[str, HostedMcp] = field(default_factory=dict)  # the MCP servers it hosts, by name

    @property
    def http_port(self) -> int | None:
        """The bound HTTP port (Connect and gRPC-Web), or None when HTTP is not served."""
        return None if self.http is None else self.http.port

    def snapshot(self) -> dict[str, float]:
        """The state /metrics reads at scrape time: runners, dropped live events, store health and pool, calls
        refused by each budget (``refused:<budget>``)."""
        values = {
            "runners": float(len(self.tools.runners)),
            "live_dropped": float(self.sessions.hub.dropped),
            "store_healthy": 1.0 if self.store.healthy else 0.0,
        }
        if self.ledger is not None:
            values.update({f"refused:{budget}": float(count) for budget, count in self.ledger.refused.items()})
        if isinstance(self.store, PostgresStore | SQLiteStore):
            values["commits"] = float(self.store.commits)
            values["committed_appends"] = float(self.store.committed_appends)
        if isinstance(self.store, PostgresStore):
            values.update(self.store.pool_stats())
        return values

    async def set_serving(self, serving: bool, *, change: bool = False) -> None:
        """Health SERVING or NOT_SERVING for the server and each service (``change``: log it)."""
        if self.stopping:
            return
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", SESSION_SERVICE, TOOL_SERVICE, CONVERT_SERVICE):
            await self.health.set(name, status)
        if change and not serving:
            log.warning("the store is unavailable: health NOT_SERVING")
        elif change:
            log.info("the store is back: health SERVING")

    def track(self, coroutine: Awaitable[None]) -> None:
        """Run a background step, kept referenced until it ends."""
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def sweep(self, now: float | None = None) -> list[str]:
        """One retention sweep: delete up to ``RETENTION_BATCH`` sessions idle for more than ``retain_days``.

        ``now`` (seconds since the epoch; default: the clock) is when the sweep counts from. Returns the ids
        deleted. The background task calls it every ``RETENTION_EVERY`` seconds; every node of a cluster
        sweeps, and a session is deleted once (each delete re-checks the session is still idle).
        """
        if self.retain_days is None:
            return []
        now_us = int((time.time() if now is None else now) * 1_000_000)
        deleted = await self.store.sweep(now_us - int(self.retain_days * 86_400_000_000), RETENTION_BATCH)
        if deleted:
            log.info("retention: deleted %d session(s) idle for more than %g day(s)", len(deleted), self.retain_days)
        return deleted

    async def _retain(self) -> None:
        while True:
            try:
                full = len(await self.sweep()) >= RETENTION_BATCH
            except StoreError as exc:
                log.warning("retention sweep failed (tried again in %g s): %s", RETENTION_EVERY, exc)
                full = False
            await asyncio.sleep(1.0 if full else RETENTION_EVERY)

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, refuse new calls, let calls in flight finish for ``grace`` s."""
        self.stopping = True
        if self.retention is not None:
            self.retention.cancel()
            await asyncio.gather(self.retention, return_exceptions=True)
        await self.health.enter_graceful_shutdown()
        stopping = [self.server.stop(grace)]
        if self.http is not None:
            stopping.append(self.http.stop())
        await asyncio.gather(*stopping)
        for hosted in self.mcp.values():  # after the calls in flight had their grace
            await hosted.stop()
        # Leaving the cluster and closing the store talk to the database: bounded, so a node always exits.
        steps = [("leave the cluster", self.cluster.stop())] if self.cluster is not None else []
        for what, step in [*steps, ("close the store", self.store.close())]:
            try:
                await asyncio.wait_for(step, SHUTDOWN_STEP)
            except TimeoutError:
                log.error("could not %s within %g s; exiting anyway", what, SHUTDOWN_STEP)
        if self.telemetry is not None:
            self.telemetry.close()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def _bind_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound (checked before gRPC tries, whose failure is a log line and a
    RuntimeError), or None. Port 0 is always free; a name that does not resolve is left to gRPC."""
    if port == 0:
        return None
    try:
        family, kind, proto, _, sockaddr = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0]
    except OSError:
        return None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds: a TIME_WAIT port is free
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            return "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
    return None


def _hosting(config: ServerConfig) -> dict[str, MCPServerSpec]:
    """The MCP servers to host, checked (ValidationError), with the mcp extra there (UnavailableError)."""
    if not config.mcp_servers:
        return {}
    try:
        from agentmsg.mcp.hosted import mcp_server_spec
    except ImportError as exc:
        raise UnavailableError(
            f"hosting MCP servers (mcp_servers, --mcp) needs the mcp extra (pip install 'agentmsg[mcp]'): "
            f"{exc.name} is missing"
        ) from None
    return {name: mcp_server_spec(name, server) for name, server in config.mcp_servers.items()}


def _http_listener(
    config: ServerConfig,
    sessions: SessionHandler,
    tools: ToolHandler,
    convert: ConvertHandler,
    grpc_address: str,
    serving: Callable[[], bool],
    telemetry: ServerTelemetry | None,
    ledger: Ledger,
) -> HttpListener:
    """The Connect listener over the same handlers, bound, not started (UnavailableError when it cannot be)."""
    try:
        from agentmsg.service.http.app import create_app
        from agentmsg.service.http.server import HttpListener
    except ImportError as exc:
        raise UnavailableError(
            f"serving HTTP needs the http extra (pip install 'agentmsg[http]'): {exc.name} is missing"
        ) from None
    app = create_app(
        sessions,
        tools,
        convert,
        grpc_address=grpc_address,
        max_message_bytes=config.max_message_bytes,
        serving=serving,
        cors_origins=config.cors_origins,
        telemetry=telemetry,
        budgeting=(sessions.access, ledger),
    )
    return HttpListener(app, config.http_host, config.http_port or 0, grace=config.grace)


async def create_server(config: ServerConfig) -> Running:
    """Build, bind and start a server; ``running.port`` is the bound port (useful with port 0)."""
    for name, port in (("port", config.port), ("metrics_port", config.metrics_port), ("http_port", config.http_port)):
        if port is not None and not 0 <= port <= MAX_PORT:
            raise ValidationError.single(name, "port", f"must be a port number from 0 to {MAX_PORT}, got {port}")
    if config.retain_days is not None and not config.retain_days > 0:
        raise ValidationError.single(
            "retain_days", "gt", f"must be a positive number of days, got {config.retain_days}"
        )
    hosting = _hosting(config)
    if config.store is not None:
        store = config.store
    elif config.db is not None and config.db.startswith(("postgresql://", "postgres://")):
        store = open_store(
            config.db,
            pool_size=config.pool_size,
            statement_timeout=config.statement_timeout,
            group_wait=config.group_wait,
        )
    elif config.db is not None and config.db != ":memory:":
        store = open_store(config.db, group_wait=config.group_wait)
    else:
        store = open_store(config.db)
    # Before the store starts, so a refused configuration leaves nothing open (no store, no bound port).
    peers = None
    if isinstance(store, PostgresStore):
        peers = peer_credentials(config)
        if config.advertise is None and config.host in ("0.0.0.0", "::", ""):  # noqa: S104 - checked, not bound
            raise UnavailableError(
                f"a cluster node bound to {config.host!r} needs advertise (--advertise HOST:PORT): "
                "the address other nodes reach it at"
            )
    # A metrics port without the otel extra fails here, leaving nothing open too.
    telemetry = ServerTelemetry.create(
        metrics_port=config.metrics_port, store=type(store).__name__.removesuffix("Store").lower()
    )
    await store.start()
    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
        ("grpc.so_reuseport", 0),
        # Large HTTP/2 frames: a 1 MiB image crosses in one frame (measured ~35% faster on loopback).
        ("grpc.http2.max_frame_size", HTTP2_MAX_FRAME),
    ]
    access = Access(config.tokens, config.grants)
    limits = Budgets(config.max_streams, config.max_streams_per_tenant, config.max_unary, config.max_unary_per_tenant)
    # Authentication first (a refused call is never counted), then the budgets; neither decodes a request it
    # refuses. gRPC's own maximum_concurrent_rpcs stays off: it would count streams and health with the rest.
    gates: list[Gate] = [BearerTokenGate(access)] if access.enabled else []
    # One ledger for both transports: a tenant's calls over HTTP and gRPC count against the same budgets.
    ledger = Ledger(limits)
    gates.append(BudgetGate(access, limits, ledger))
    server = grpc.aio.server(options=options)
    # Every service registers through the gates (health and reflection too): each call passes them undecoded.
    gate = gated(server, gates)
    hub = LiveHub(CatchUpBounds.for_server(config.max_message_bytes, config.limits))
    sessions = SessionHandler(store, hub, access, max_message_bytes=config.max_message_bytes, limits=config.limits)
    tools = ToolHandler(access, store)
    convert = ConvertHandler(sessions)
    session_servicer = SessionServicer(sessions, reply_cache_bytes=config.reply_cache_bytes)
    # With telemetry, the services register through it: each handler is wrapped once (a span, the metrics).
    registering = telemetry.instrument(gate) if telemetry else gate
    add_session_service(session_servicer, registering)
    add_tool_service(ToolServicer(tools), registering)
    add_convert_service(ConvertServicer(convert), registering)
    health_servicer = health.aio.HealthServicer()
    register(gate, health.SERVICE_NAME, capture(health_pb2_grpc.add_HealthServicer_to_server, health_servicer))
    if config.reflection:
        reflection.enable(gate, [SESSION_SERVICE, TOOL_SERVICE, CONVERT_SERVICE, health.SERVICE_NAME])
    address = f"{config.host}:{config.port}"
    busy = _bind_problem(config.host, config.port)
    if busy is not None:
        if config.store is None:
            await store.close()
        raise UnavailableError(f"cannot listen on {address}: {busy}")
    if config.tls_cert is not None and config.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(config.tls_key, config.tls_cert)],
            root_certificates=config.tls_client_ca,
            require_client_auth=config.tls_client_ca is not None,
        )
    else:
        credentials = None
    try:
        port = (
            server.add_secure_port(address, credentials)
            if credentials is not None
            else server.add_insecure_port(address)
        )
    except RuntimeError:  # gRPC's "Failed to bind": a port in use, or one this user may not bind
        port = 0
    if port == 0:
        if config.store is None:  # a store this call opened: a store passed in stays its owner's
            await store.close()
        raise UnavailableError(f"cannot listen on {address}: the port is in use (or not one this user may bind)")
    http = None
    if config.http_port is not None:
        try:
            address = f"{config.host}:{port}"
            http = _http_listener(config, sessions, tools, convert, address, lambda: store.healthy, telemetry, ledger)
        except UnavailableError:
            await server.stop(None)
            if config.store is None:
                await store.close()
            raise
    cluster = None
    if isinstance(store, PostgresStore):
        advertise = config.advertise or f"{config.host}:{port}"
        cluster = Cluster(
            store,
            advertise,
            channel_credentials=peers,
            max_message_bytes=config.max_message_bytes,
            instrument=telemetry.instrument_peer_stub if telemetry else None,
        )
        await cluster.start(hub, tools)
    await server.start()
    if http is not None:
        await http.start()
    running = Running(
        server,
        port,
        store,
        health_servicer,
        sessions,
        tools,
        session_servicer.frames,
        cluster,
        telemetry=telemetry,
        retain_days=config.retain_days,
        http=http,
        ledger=ledger,
    )
    if config.retain_days is not None:
        running.retention = asyncio.create_task(running._retain(), name="agentmsg-retention")
    if telemetry is not None and config.metrics_port is not None:
        running.metrics_port = telemetry.serve_metrics(config.host, config.metrics_port, running)
    if hosting:
        from agentmsg.mcp.hosted import HostedMcp

        for name, spec in hosting.items():
            running.mcp[name] = HostedMcp(name, spec, tools)
        try:
            for hosted in running.mcp.values():
                await hosted.start()
        except BaseException:
            await running.stop(0)
            raise
    await running.set_serving(store.healthy)
    # A store that loses its server (PostgreSQL) makes the node NOT_SERVING until it is back.
    store.on_health(lambda healthy: running.track(running.set_serving(healthy, change=True)))
    return running


async def serve(config: ServerConfig, *, ready: Callable[[Running], None] | None = None) -> None:
    """Run a server until SIGINT/SIGTERM, then stop it gracefully."""
    running = await create_server(config)
    if ready is not None:
        ready(running)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop(config.grace)
