"""What server nodes over one PostgreSQL share: live events, tool runners, each other's addresses.

A node started with a ``postgresql://`` store joins the cluster of every node
on that database. The log itself needs nothing more (the store's offsets and
change feed are already shared); this module carries the rest:

- **Live events.** ``PublishStream`` events published on one node reach live
  subscribers on every node: each event goes out as ``NOTIFY agentmsg_live``
  from one connection per node, in order (an event too large for a NOTIFY
  payload waits in an unlogged spill table and the notification carries its
  id). A publisher's message is appended only once its events have gone
  out, and every node reads them on the store's one LISTEN connection, the
  same one that carries the append wake-ups, so they arrive ahead of the
  message's notification. A live subscriber that reads messages waits
  (:meth:`Cluster.settle`) for the feed to pass its read
  (``PostgresStore.caught_up``) and for spilled events ahead of it to be
  read, so a message's live events reach it before the message; events of a later stream may come
  before an earlier message. A node skips its own events (it delivered them
  locally). Live events are best effort, as on one node: a slow viewer
  loses the oldest, and a node that is cut off from the database misses them;
  the logged message is never lost.
- **Tools.** Each node records its runners' tools in ``agentmsg_tools`` and
  itself (id, advertised address, heartbeat) in ``agentmsg_nodes``. A tool name
  is served by one runner in the whole cluster. ``CallTool`` on a node with no
  local runner for the tool is forwarded over gRPC to the node that has one,
  with the caller's remaining deadline and token; the node that owns the runner
  applies the same deadline, cancellation and runner-disconnect rules as on one
  node, and a cancelled caller cancels the forwarded call. A node that stops
  cleanly removes its rows; one that dies stops counting after its lease
  (``LEASE`` seconds without a heartbeat), and its tools may be claimed again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import grpc

from agentmsg._logtext import loggable
from agentmsg.errors import ConflictError, StoreError
from agentmsg.service import status
from agentmsg.service.stores.postgres import LIVE_CHANNEL, PostgresStore
from agentmsg.v1 import session_service_pb2, tool_pb2, tool_service_pb2, tool_service_pb2_grpc

__all__ = ["FORWARDED_HEADER", "HEARTBEAT", "LEASE", "OUTBOX_LIMIT", "PAYLOAD_LIMIT", "SPILL_TTL", "Cluster"]

log = logging.getLogger("agentmsg.service.cluster")

HEARTBEAT = 1.0  # seconds between a node's heartbeats
LEASE = 5.0  # seconds without a heartbeat after which a node's tools no longer count
FORWARDED_HEADER = "x-agentmsg-forwarded-by"  # a forwarded call is served locally or not at all
PAYLOAD_LIMIT = 7900  # bytes in one NOTIFY payload (PostgreSQL refuses 8000 or more)
OUTBOX_LIMIT = 4096  # live events waiting to go to the other nodes before publishers wait for them
SPILL_TTL = 60  # seconds a spilled live event is kept for the nodes to read


# What the cluster needs of this node's live hub and tool handler (agentmsg.service.live and
# .handlers.tools, which sit above the cluster and hold it): described here, so the dependency points one way.


class LocalHub(Protocol):
    """This node's live hub: the cluster delivers the events other nodes relay."""

    cluster: Cluster | None

    def deliver(self, session_id: str, live: session_service_pb2.LiveEvent) -> None: ...


class LocalRunner(Protocol):
    """A tool runner connected to this node."""

    @property
    def runner_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def tools(self) -> Sequence[tool_pb2.ToolDefinition]: ...


class LocalTools(Protocol):
    """This node's tool servicer: its runners are what the cluster records and re-claims."""

    cluster: Cluster | None

    @property
    def runners(self) -> Mapping[str, LocalRunner]: ...


class Cluster:
    """This node's part in the cluster (see the module docstring)."""

    def __init__(
        self,
        store: PostgresStore,
        advertise: str,
        *,
        channel_credentials: grpc.ChannelCredentials | None = None,
        max_message_bytes: int = 32 * 1024 * 1024,
        heartbeat: float = HEARTBEAT,
        lease: float = LEASE,
        instrument: Callable[[Any], Any] | None = None,
    ) -> None:
        self.store = store
        self.node_id = store.node_id
        self.advertise = advertise
        self.heartbeat = heartbeat
        self.lease = lease
        self._credentials = channel_credentials
        self._channel_options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._instrument = instrument  # telemetry: the trace context travels on, forwards are counted
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        # Incoming events behind a spilled one (delivered in order once it is read), and settle markers.
        self._inbox: asyncio.Queue[tuple[str, str] | asyncio.Future[None]] = asyncio.Queue()
        self._reading = False  # a spilled event is being read
        self._tasks: list[asyncio.Task[None]] = []
        self.hub: LocalHub | None = None
        self.tools: LocalTools | None = None

    async def start(self, hub: LocalHub, tools: LocalTools) -> None:
        """Join: record this node, relay live events both ways, route tools."""
        self.hub, self.tools = hub, tools
        hub.cluster = tools.cluster = self
        self.store.on_channel(LIVE_CHANNEL, self._on_live)
        self.store.on_reconnect(self._rejoin)
        await self._beat()
        self._tasks = [
            asyncio.create_task(self._send_live(), name="agentmsg-cluster-send"),
            asyncio.create_task(self._receive_spilled(), name="agentmsg-cluster-receive"),
            asyncio.create_task(self._heartbeat(), name="agentmsg-cluster-heartbeat"),
        ]

    async def stop(self) -> None:
        """Leave: stop the tasks, remove this node and its tools, close the channels to peers."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        while not self._inbox.empty():  # nobody may wait for a task that no longer runs
            item = self._inbox.get_nowait()
            if isinstance(item, asyncio.Future) and not item.done():
                item.set_result(None)
        with contextlib.suppress(StoreError):
            async with self.store.connection("leave the cluster") as conn, conn.transaction():
                await conn.execute("DELETE FROM agentmsg_tools WHERE node_id = %s", (self.node_id,))
                await conn.execute("DELETE FROM agentmsg_nodes WHERE node_id = %s", (self.node_id,))
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    # -- membership

    async def _beat(self) -> None:
        async with self.store.connection("record this node") as conn:
            await conn.execute(
                "INSERT INTO agentmsg_nodes (node_id, address, heartbeat_at) VALUES (%s, %s, now()) "
                "ON CONFLICT (node_id) DO UPDATE SET address = excluded.address, heartbeat_at = now()",
                (self.node_id, self.advertise),
            )

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            try:
                await self._beat()
                async with self.store.connection("clean up spilled events") as conn:
                    await conn.execute(
                        "DELETE FROM agentmsg_live_spill WHERE created_at < now() - make_interval(secs => %s)",
                        (SPILL_TTL,),
                    )
            except StoreError as exc:
                log.warning("heartbeat failed: %s", exc)

    async def _rejoin(self) -> None:
        """After the change feed comes back: beat, and record the local runners' tools again if they lapsed."""
        if self.tools is None:
            return
        try:
            await self._beat()
            for runner in list(self.tools.runners.values()):
                taken = await self._insert_tools(runner, strict=False)
                if taken:
                    log.error(
                        "runner %s lost its tools to another node while cut off: %s",
                        loggable(runner.name),
                        ", ".join(loggable(t) for t in taken),
                    )
        except StoreError as exc:
            log.warning("could not rejoin the cluster yet: %s", exc)

    # -- live events

    def relay(self, session_id: str, live: session_service_pb2.LiveEvent) -> None:
        """Queue a live event for the other nodes (sent in order by one task)."""
        self._outbox.put_nowait((session_id, live.SerializeToString()))

    async def pace(self) -> None:
        """Wait while ``OUTBOX_LIMIT`` live events or more wait to go out (a publisher calls it per event).

        A publisher faster than the relay slows down rather than the node's memory growing without bound.
        """
        if self._outbox.qsize() >= OUTBOX_LIMIT:
            await self._outbox.join()

    async def flush(self) -> None:
        """Wait until every live event queued so far has gone out."""
        await self._outbox.join()

    async def _send_live(self) -> None:
        """Send the queued events in order, as many per notification as fit (large ones spilled)."""
        carried: list[str] = []  # the line of an event taken that did not fit in the last notification
        while True:
            item = None if carried else await self._outbox.get()
            owed = 1  # events taken from the outbox and not yet marked done
            lines, carried = carried, []
            try:
                if item is not None:
                    lines.append(await self._line(*item))
                size = len(self.node_id) + 1 + len(lines[0])
                while not self._outbox.empty():
                    item = self._outbox.get_nowait()
                    owed += 1
                    line = await self._line(*item)
                    if size + 1 + len(line) > PAYLOAD_LIMIT:
                        carried, owed = [line], owed - 1  # it opens the next notification
                        break
                    lines.append(line)
                    size += 1 + len(line)
                await self._send(lines)
            except StoreError as exc:
                log.warning("%d live event(s) did not reach the other nodes: %s", len(lines) or 1, exc)
            finally:
                for _ in range(owed):
                    self._outbox.task_done()

    async def _line(self, session_id: str, body: bytes) -> str:
        """An event's line in a notification: ``SESSION b:BASE64``, or ``SESSION s:ID`` once spilled."""
        line = f"{session_id} b:{base64.b64encode(body).decode('ascii')}"
        if len(self.node_id) + 1 + len(line) <= PAYLOAD_LIMIT:
            return line
        async with self.store.connection("spill a live event") as conn:
            cur = await conn.execute("INSERT INTO agentmsg_live_spill (body) VALUES (%s) RETURNING id", (body,))
            row = await cur.fetchone()
        assert row is not None
        return f"{session_id} s:{row[0]}"

    async def _send(self, lines: list[str]) -> None:
        await self.store.notify(LIVE_CHANNEL, "\n".join([self.node_id, *lines]))

    def _on_live(self, payload: str) -> None:
        """A NOTIFY from some node: its node id, then one line per event; delivered here unless it is our own."""
        node_id, _, rest = payload.partition("\n")
        if node_id == self.node_id:
            return
        for line in rest.split("\n"):
            session_id, _, data = line.partition(" ")
            if not session_id or data[:2] not in ("b:", "s:"):
                log.warning("dropped a malformed live event line from node %s", node_id[:8])
                continue
            if data.startswith("b:") and self._inbox.empty() and not self._reading:
                self._deliver(session_id, data[2:])
            else:
                self._inbox.put_nowait((session_id, data))  # keeps the order behind a spilled event

    def _deliver(self, session_id: str, encoded: str | bytes) -> None:
        try:
            raw = encoded if isinstance(encoded, bytes) else base64.b64decode(encoded, validate=True)
            live = session_service_pb2.LiveEvent.FromString(raw)
        except Exception as exc:
            log.warning("dropped a malformed live event from another node: %s", exc)
            return
        if self.hub is not None:
            self.hub.deliver(session_id, live)

    async def settle(self) -> None:
        """Wait until the live events sent ahead of what was just read are delivered here.

        A live subscriber calls it after reading messages, before sending them: first the change feed passes
        the read (every event notified before those messages has arrived), then spilled events ahead are read.
        """
        await self.store.caught_up()
        if self._inbox.empty() and not self._reading:
            return
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(marker)
        await asyncio.shield(marker)

    async def _receive_spilled(self) -> None:
        while True:
            item = await self._inbox.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            session_id, data = item
            if data.startswith("b:"):
                self._deliver(session_id, data[2:])
                continue
            self._reading = True  # events arriving meanwhile queue behind this one
            try:
                async with self.store.connection("read a spilled live event") as conn:
                    cur = await conn.execute("SELECT body FROM agentmsg_live_spill WHERE id = %s", (int(data[2:]),))
                    row = await cur.fetchone()
            except (StoreError, ValueError) as exc:
                log.warning("a spilled live event could not be read: %s", exc)
                continue
            finally:
                self._reading = False
            if row is not None:
                self._deliver(session_id, bytes(row[0]))

    # -- tools

    async def claim(self, runner: LocalRunner) -> None:
        """Record a runner's tools for the cluster; a name a live node already serves is a ConflictError."""
        # A taken name raises inside the registration transaction (undoing it), as a ConflictError.
        await self._insert_tools(runner, strict=True)

    async def _insert_tools(self, runner: LocalRunner, *, strict: bool) -> list[str]:
        names = [tool.name for tool in runner.tools]
        async with self.store.connection("register tools") as conn, conn.transaction():
            # Tools of nodes that stopped beating (or vanished) are free to take.
            await conn.execute(
                "DELETE FROM agentmsg_tools WHERE name = ANY(%s) AND node_id NOT IN "
                "(SELECT node_id FROM agentmsg_nodes WHERE heartbeat_at >= now() - make_interval(secs => %s))",
                (names, self.lease),
            )
            taken = []
            for tool in runner.tools:
                cur = await conn.execute(
                    "INSERT INTO agentmsg_tools (name, node_id, runner_id, runner_name, definition) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING RETURNING name",
                    (tool.name, self.node_id, runner.runner_id, runner.name, tool.SerializeToString()),
                )
                if await cur.fetchone() is None:
                    cur = await conn.execute("SELECT runner_id FROM agentmsg_tools WHERE name = %s", (tool.name,))
                    row = await cur.fetchone()
                    if row is None or row[0] != runner.runner_id:
                        taken.append(tool.name)
            if taken and strict:
                raise _TakenError(taken)
        return taken

    async def release(self, runner: LocalRunner) -> None:
        """Remove a runner's tools (it left)."""
        try:
            async with self.store.connection("unregister tools") as conn:
                await conn.execute("DELETE FROM agentmsg_tools WHERE runner_id = %s", (runner.runner_id,))
        except StoreError as exc:
            log.warning(
                "runner %s left, and its tools stay recorded until this node's lease ends: %s",
                loggable(runner.name),
                exc,
            )

    async def remote_tools(self) -> list[tuple[tool_pb2.ToolDefinition, str, str]]:
        """The tools live runners on other nodes serve: (definition, runner name, runner id)."""
        async with self.store.connection("list tools") as conn:
            cur = await conn.execute(
                "SELECT t.definition, t.runner_name, t.runner_id FROM agentmsg_tools t "
                "JOIN agentmsg_nodes n ON n.node_id = t.node_id "
                "WHERE t.node_id <> %s AND n.heartbeat_at >= now() - make_interval(secs => %s) ORDER BY t.name",
                (self.node_id, self.lease),
            )
            rows = await cur.fetchall()
        return [(tool_pb2.ToolDefinition.FromString(bytes(d)), str(name), str(rid)) for d, name, rid in rows]

    async def locate(self, tool_name: str) -> str | None:
        """The address of the live node whose runner serves the tool, or None."""
        async with self.store.connection("find a tool") as conn:
            cur = await conn.execute(
                "SELECT n.address FROM agentmsg_tools t JOIN agentmsg_nodes n ON n.node_id = t.node_id "
                "WHERE t.name = %s AND t.node_id <> %s AND n.heartbeat_at >= now() - make_interval(secs => %s)",
                (tool_name, self.node_id, self.lease),
            )
            row = await cur.fetchone()
        return None if row is None else str(row[0])

    def _channel(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            if self._credentials is not None:
                channel = grpc.aio.secure_channel(address, self._credentials, options=self._channel_options)
            else:
                channel = grpc.aio.insecure_channel(address, options=self._channel_options)
            self._channels[address] = channel
        return channel

    async def forward(
        self,
        address: str,
        request: tool_service_pb2.CallToolRequest,
        metadata: Any,
        timeout: float | None,
    ) -> tool_service_pb2.CallToolResponse:
        """Call the tool on the node at ``address`` as the caller (its token, its remaining deadline)."""
        stub = tool_service_pb2_grpc.ToolServiceStub(self._channel(address))
        if self._instrument is not None:
            stub = self._instrument(stub)
        headers: list[tuple[str, str | bytes]] = [(key, value) for key, value in metadata if key == "authorization"]
        headers.append((FORWARDED_HEADER, self.node_id))
        try:
            response: tool_service_pb2.CallToolResponse = await stub.CallTool(
                request, timeout=timeout, metadata=headers
            )
        except grpc.aio.AioRpcError as exc:
            raise status.from_rpc_error(exc) from None
        return response


class _TakenError(ConflictError):
    """Raised inside the registration transaction to undo it: the names are taken."""

    def __init__(self, taken: list[str]) -> None:
        self.taken = taken
        super().__init__(f"tool name(s) already served by another node: {', '.join(taken)}")


def peer_credentials(config: Any) -> grpc.ChannelCredentials | None:
    """How a node reaches its peers: plaintext, or TLS with the configured CA (and client cert for mTLS)."""
    if config.tls_cert is None:
        return None
    root = config.peer_ca or config.tls_client_ca
    if root is None:
        raise StoreError(
            "a TLS node in a cluster needs the CA that signed its peers' certificates: pass --peer-ca FILE"
        )
    if config.tls_client_ca is not None:
        return grpc.ssl_channel_credentials(root, config.tls_key, config.tls_cert)
    return grpc.ssl_channel_credentials(root)
