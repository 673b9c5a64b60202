"""Faults of a cluster over PostgreSQL: a node killed mid-burst, the database stopped and started again.

Nothing acknowledged may be lost or duplicated; a node without its database
says so (health NOT_SERVING, calls UNAVAILABLE) and comes back by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading
from collections.abc import Callable

import grpc
import pytest
from conftest import RunnerThread
from grpc_health.v1 import health_pb2, health_pb2_grpc
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import AsyncClient, Client, ToolRunner
from agentmsg.service.cluster import LEASE
from agentmsg.service.localpg import LocalPostgres, wait_until
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def health(target: str) -> int:
    with grpc.insecure_channel(target) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
        except grpc.RpcError:
            return -1
        return int(reply.status)


def logged_ids(target: str, session_id: str) -> list[str]:
    with Client(target, timeout=20) as client:
        return [item.message.id for item in client.history(session_id)]


@pytest.fixture
def cluster(cluster_nodes: list[ServerProcess]) -> list[ServerProcess]:
    return cluster_nodes


def test_a_node_killed_mid_burst_loses_and_duplicates_nothing(
    cluster: list[ServerProcess], start_runner: Callable[..., RunnerThread]
) -> None:
    victim, *others = cluster
    runner = ToolRunner(victim.target, name="doomed")
    runner.tool(lambda: "ok", name="on_victim")
    start_runner(runner)
    with Client(others[0].target) as client:
        assert wait_until(lambda: [t.tool.name for t in client.list_tools()] == ["on_victim"], 30)
    acked: dict[str, int] = {}
    retried = 0
    kill_at = threading.Event()

    async def publisher(p: int) -> None:
        nonlocal retried
        targets = [cluster[p % 3], *[n for n in cluster if n is not cluster[p % 3]]]
        clients = [AsyncClient(t.target, timeout=5) for t in targets]
        try:
            for i in range(60):
                message = am.UserMessage.text(f"{p}:{i}", id=f"p{p}-{i}")
                for attempt, client in enumerate(clients):
                    if client is clients[0] and targets[0] is victim and victim.proc.poll() is not None:
                        continue
                    try:
                        acked[message.id] = await client.append("burst", message)
                        retried += attempt > 0
                        break
                    except (am.UnavailableError, am.DeadlineExceededError, am.CancelledError):
                        continue  # the node is gone: the same message, same id, to the next node
                else:
                    raise AssertionError(f"no node took {message.id}")
                if len(acked) == 150:
                    kill_at.set()
        finally:
            for client in clients:
                await client.close()

    async def main() -> None:
        killer = asyncio.ensure_future(asyncio.to_thread(lambda: kill_at.wait(120) and victim.kill()))
        await asyncio.gather(*(publisher(p) for p in range(6)))
        await killer

    asyncio.run(main())
    assert victim.proc.poll() is not None  # it was killed mid-burst
    assert retried > 0  # and some publishers had to go elsewhere
    ids = logged_ids(others[1].target, "burst")
    assert len(ids) == len(set(ids)) == 360  # nothing duplicated, nothing missing
    assert set(acked) <= set(ids)
    with Client(others[0].target) as client:
        assert [item.offset for item in client.history("burst")] == list(range(1, 361))
        assert sorted(acked.values()) == sorted(set(acked.values()))  # every ack a distinct offset
        # The dead node's tools stop counting once its lease runs out (polled well past it: a bound on a hang).
        assert wait_until(lambda: client.list_tools() == [], LEASE + 60)


def test_postgres_stopped_and_started_again() -> None:
    # A server of its own (the shared one must not stop); its directory is one PostgreSQL's account can reach.
    with LocalPostgres.temporary() as database:
        nodes = [ServerProcess("--store", database.dsn, "--pool-size", "3") for _ in range(2)]
        try:
            stop_and_restart(database, nodes)
        finally:
            for node in nodes:
                node.stop()


def stop_and_restart(database: LocalPostgres, nodes: list[ServerProcess]) -> None:
    first, second = nodes
    sent = [am.UserMessage.text(str(i), id=f"m{i}") for i in range(20)]
    with Client(first.target, timeout=5) as client:
        acked = [client.append("s", message) for message in sent]
    assert acked == list(range(1, 21))
    assert health(first.target) == health(second.target) == SERVING
    # Live subscribers on both nodes, caught up and waiting (one also for live events): `agentmsg tail
    # --follow` processes, so no gRPC call is in flight in this process when pg_ctl forks.
    followers = [
        subprocess.Popen(
            [sys.executable, "-m", "agentmsg", "tail", "s", "--follow", "--target", node.target]
            + (["--live"] if node is first else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for node in nodes
    ]
    for follower in followers:
        assert follower.stdout is not None
        while not follower.stdout.readline().startswith("#20 "):
            assert follower.poll() is None, follower.stderr.read() if follower.stderr else ""
    database.stop(mode="fast")
    # Each node ends its subscribers' streams UNAVAILABLE once it loses the database, rather than leaving them
    # silent (the wait is a bound on a hang: a follower left waiting fails below).
    try:
        for follower in followers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                follower.wait(60)
    finally:
        for follower in followers:
            if follower.poll() is None:
                follower.kill()
                follower.wait()
    for follower in followers:
        _, err = follower.communicate()
        assert follower.returncode == 2, err
        assert "this node lost its store" in err
    for node in nodes:
        assert wait_until(lambda node=node: health(node.target) == NOT_SERVING, 60), node.errors[-5:]
    # UNAVAILABLE on the wire, with the store's error class in the status details.
    with Client(second.target, timeout=5) as client, pytest.raises(am.StoreError, match="unreachable"):
        client.append("s", am.UserMessage.text("lost?", id="m-down"))
    request = session_service_pb2.AppendMessageRequest(session_id="s")
    request.message.CopyFrom(am.UserMessage.text("lost?", id="m-down").pb)
    with grpc.insecure_channel(first.target) as channel, pytest.raises(grpc.RpcError) as info:
        session_service_pb2_grpc.SessionServiceStub(channel).AppendMessage(request, timeout=5)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE

    database.start()
    for node in nodes:
        assert wait_until(lambda node=node: health(node.target) == SERVING, 60), node.errors[-5:]
    with Client(second.target, timeout=10) as client:
        assert client.append("s", am.UserMessage.text("back", id="m-up")) == 21
        assert client.append("s", sent[0]) == 1  # a retry of an acknowledged append: the same offset
    assert logged_ids(first.target, "s") == [f"m{i}" for i in range(20)] + ["m-up"]
