"""Cluster paths no other test runs (issue 34): TLS and mTLS between nodes (``--peer-ca``), a TLS node refused for
want of its peers' CA, a forwarded call that fails on the way, and a live subscriber on another node that waits
(``Cluster.settle``) for spilled events before the message they belong to."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import pytest
import trustme
from conftest import RunnerThread, ServerThread, fresh_database

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Live, Logged, ServerConfig, ToolRunner, create_server
from agentmsg.service.cluster import PAYLOAD_LIMIT
from agentmsg.service.localpg import LocalPostgres
from agentmsg.streaming import events_from_message


@pytest.fixture(scope="module")
def pki() -> dict[str, bytes]:
    ca = trustme.CA()
    node = ca.issue_cert("localhost", "127.0.0.1")
    client = ca.issue_cert("client.agentmsg.test")
    return {
        "ca": ca.cert_pem.bytes(),
        "node_cert": node.cert_chain_pems[0].bytes(),
        "node_key": node.private_key_pem.bytes(),
        "client_cert": client.cert_chain_pems[0].bytes(),
        "client_key": client.private_key_pem.bytes(),
    }


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mtls"])
def test_a_call_is_forwarded_between_tls_nodes(
    postgres: LocalPostgres,
    make_server: Callable[..., ServerThread],
    start_runner: Callable[..., RunnerThread],
    pki: dict[str, bytes],
    mutual: bool,
) -> None:
    """TLS: the nodes trust each other's certificates through ``peer_ca``. mTLS: each node also requires a client
    certificate, and presents its own when it forwards (its CA for clients is the peers' CA)."""
    url = fresh_database(postgres)
    tls: dict[str, Any] = {"tls_cert": pki["node_cert"], "tls_key": pki["node_key"]}
    tls |= {"tls_client_ca": pki["ca"]} if mutual else {"peer_ca": pki["ca"]}
    near, far = make_server(db=url, **tls), make_server(db=url, **tls)
    credentials: dict[str, Any] = {"root_certificates": pki["ca"]}
    if mutual:
        credentials |= {"private_key": pki["client_key"], "certificate_chain": pki["client_cert"]}
    runner = ToolRunner(far.target, name="far", **credentials)
    runner.tool(lambda text: text.upper(), name="shout")
    start_runner(runner)
    with Client(near.target, timeout=20, **credentials) as client:
        result = client.call_tool(am.ToolCallContent("c1", "shout", {"text": "over tls"}))
    assert (result.id, result.text, result.is_error) == ("c1", "OVER TLS", False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_a_tls_node_without_its_peers_ca_is_refused_and_opens_nothing(
    postgres: LocalPostgres, pki: dict[str, bytes]
) -> None:
    port = _free_port()
    config = ServerConfig(db=fresh_database(postgres), port=port, tls_cert=pki["node_cert"], tls_key=pki["node_key"])
    with pytest.raises(am.StoreError, match="needs the CA that signed its peers' certificates: pass --peer-ca"):
        asyncio.run(create_server(config))
    assert _bindable(port)


def test_a_forwarded_call_that_cannot_reach_the_far_node_is_unavailable(
    postgres: LocalPostgres, make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread]
) -> None:
    """The far node advertises an address nothing listens on: the near node's forward fails, and the caller gets
    the failure as the agentmsg error it stands for."""
    url = fresh_database(postgres)
    near = make_server(db=url)
    far = make_server(db=url, advertise=f"127.0.0.1:{_free_port()}")
    runner = ToolRunner(far.target, name="far")
    runner.tool(lambda: "never reached", name="remote")
    start_runner(runner)
    with Client(near.target, timeout=20) as client:
        assert [t.tool.name for t in client.list_tools()] == ["remote"]  # listed: the node's row says so
        with pytest.raises(am.UnavailableError):
            client.call_tool(am.ToolCallContent("c1", "remote", {}), timeout=5)
    with Client(far.target, timeout=20) as client:  # on its own node the runner answers
        assert client.call_tool(am.ToolCallContent("c2", "remote", {})).text == "never reached"


def test_a_live_subscriber_on_another_node_gets_spilled_events_before_their_message(
    postgres: LocalPostgres, make_server: Callable[..., ServerThread]
) -> None:
    """Each delta is larger than a NOTIFY payload: it is spilled, and the other node reads it back from the
    database. The subscriber there reads the logged message only after the events ahead of it (``settle``)."""
    url = fresh_database(postgres)
    publisher_node, subscriber_node = make_server(db=url), make_server(db=url)
    chunks = [f"{i:02d}" + "x" * PAYLOAD_LIMIT for i in range(12)]
    message = am.AssistantMessage.text("".join(chunks), id="a1")
    events = list(events_from_message(message, chunk_size=len(chunks[0])))
    deltas = sum(1 for e in events if e.kind == "block_delta")
    assert deltas == len(chunks)

    async def scenario() -> list[Any]:
        seen: list[Any] = []
        async with AsyncClient(subscriber_node.target, timeout=60) as watcher:

            async def watch() -> None:
                async for item in watcher.subscribe("spilled", live_events=True):
                    seen.append(item)
                    if isinstance(item, Logged):
                        return

            task = asyncio.ensure_future(watch())
            for _ in range(1000):
                if subscriber_node.running.store._watching.get("spilled"):
                    break
                await asyncio.sleep(0.01)
            async with AsyncClient(publisher_node.target, timeout=60) as publisher:
                offset, _ = await publisher.publish_stream("spilled", iter(events))
            assert offset == 1
            await asyncio.wait_for(task, 60)
        return seen

    seen = asyncio.run(scenario())
    assert isinstance(seen[-1], Logged)
    assert seen[-1].message.id == "a1"
    live = [item for item in seen[:-1] if isinstance(item, Live)]
    assert len(live) == len(seen) - 1
    texts = [item.event.pb.block_delta.text.text for item in live if item.event.kind == "block_delta"]
    assert texts == chunks  # every spilled delta, in order, before the message
