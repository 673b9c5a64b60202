"""``/metrics`` after a known workload: every counter equals the work done (``agentmsg serve --metrics-port``)."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from conftest import RunnerThread, ServerThread
from prometheus_client.parser import text_string_to_metric_families
from transports import CallFailedError, Transport

import agentmsg as am
from agentmsg.service import Client, Logged, ServerConfig, ToolRunner, telemetry
from agentmsg.service.live import LIVE_QUEUE
from agentmsg.streaming import events_from_message
from agentmsg.v1 import session_service_pb2


@pytest.fixture
def server() -> Iterator[ServerThread]:
    running = ServerThread(ServerConfig(db=None, metrics_port=0, reflection=False))
    yield running
    running.stop()


def scrape(server: ServerThread) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    port = server.running.metrics_port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_the_counters_equal_the_work_done(server: ServerThread) -> None:
    runner = ToolRunner(server.target, name="math")

    @runner.tool
    def add(a: int, b: int) -> int:
        return a + b

    @runner.tool
    def fail() -> str:
        raise RuntimeError("no")

    thread = RunnerThread(runner)
    try:
        with Client(server.target) as client:
            first = am.UserMessage.text("one")
            client.append("s1", first)
            client.append("s1", first)  # a retry: a duplicate, not a second message
            client.append("s1", am.UserMessage.text("two"))
            client.append_many("s1", [am.UserMessage.text("three"), am.UserMessage.text("four")])
            client.publish_stream("s1", events_from_message(am.AssistantMessage.text("hello", stop_reason="stop")))
            with pytest.raises(am.ValidationError):
                client.append("bad id!", am.UserMessage.text("x"))
            assert client.call_tool(am.ToolCallContent("c1", "add", {"a": 1, "b": 2})).text == "3"
            assert client.call_tool(am.ToolCallContent("c2", "add", {"a": 2, "b": 2})).text == "4"
            assert client.call_tool(am.ToolCallContent("c3", "fail", {})).is_error
            with pytest.raises(am.NotFoundError):
                client.call_tool(am.ToolCallContent("c4", "nope", {}))
            subscription = client.subscribe("s1")
            assert isinstance(next(subscription), Logged)  # one Subscribe open while scraping
            samples = scrape(server)
            subscription.close()
            stored = list(client.history("s1"))
    finally:
        thread.stop()

    assert len(stored) == 5
    appended = [m.message for m in stored]
    rpc = "agentmsg_rpc_requests_total"
    assert value(samples, rpc, method="AppendMessage", code="OK") == 3
    assert value(samples, rpc, method="AppendMessage", code="INVALID_ARGUMENT") == 1
    assert value(samples, rpc, method="AppendMessages", code="OK") == 1
    assert value(samples, rpc, method="PublishStream", code="OK") == 1
    assert value(samples, rpc, method="CallTool", code="OK") == 3
    assert value(samples, rpc, method="CallTool", code="NOT_FOUND") == 1
    assert value(samples, "agentmsg_rpc_duration_seconds_count", method="CallTool", code="OK") == 3
    assert value(samples, "agentmsg_appended_messages_total", store="memory") == 5
    assert value(samples, "agentmsg_appended_bytes_total", store="memory") == sum(m.pb.ByteSize() for m in appended)
    assert value(samples, "agentmsg_tool_calls_total", tool="add", outcome="ok") == 2
    assert value(samples, "agentmsg_tool_calls_total", tool="fail", outcome="error") == 1
    assert value(samples, "agentmsg_tool_calls_total", tool="nope", outcome="not_found") == 1
    assert value(samples, "agentmsg_tool_call_duration_seconds_count", tool="add", outcome="ok") == 2
    assert value(samples, "agentmsg_runners_connected") == 1
    assert value(samples, "agentmsg_store_healthy", store="memory") == 1
    assert value(samples, "agentmsg_live_events_dropped_total") == 0
    assert value(samples, "agentmsg_subscribers", live_events="false") == 1
    assert value(samples, "agentmsg_subscribe_deliveries_total", kind="messages") == 1


def test_a_large_append_counts_the_bytes_that_arrived(server: ServerThread) -> None:
    """A large message is parsed with its media cut short (the store keeps the received encoding): the
    telemetry wrapping the handler reads that form, and counts the bytes that arrived, media included."""
    image = am.UserMessage([am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(300_000), media_type="image/png")])
    with Client(server.target) as client:
        client.append("s-large", image)
        (stored,) = list(client.history("s-large"))
    samples = scrape(server)
    assert stored.message.pb.ByteSize() > 300_000
    assert value(samples, "agentmsg_rpc_requests_total", method="AppendMessage", code="OK") == 1
    assert value(samples, "agentmsg_appended_messages_total", store="memory") == 1
    assert value(samples, "agentmsg_appended_bytes_total", store="memory") == stored.message.pb.ByteSize()


def test_dropped_live_events_are_counted(server: ServerThread) -> None:
    """A live subscriber that does not read loses the oldest events beyond its queue: each one is counted."""
    hub = server.running.sessions.hub

    async def overflow() -> int:
        with hub.subscribe("s-live") as queue:
            for i in range(LIVE_QUEUE + 3):
                event = session_service_pb2.LiveEvent(stream_id=f"st-{i}")
                hub.publish("s-live", event)
            return queue.qsize()

    assert server.run(overflow()) == LIVE_QUEUE
    assert value(scrape(server), "agentmsg_live_events_dropped_total") == 3


def _appended_ok(registry: Any) -> float:
    return registry.get_sample_value("agentmsg_rpc_requests_total", {"method": "AppendMessage", "code": "OK"}) or 0.0


def test_answered_calls_are_recorded_in_batches_and_always_before_a_scrape(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session RPCs are recorded in batches after their answer: a full batch at once, the rest a moment later,
    or at the latest when a scrape reads the counters or the server stops."""
    monkeypatch.setattr(telemetry, "_RECORD_BATCH", 3)
    monkeypatch.setattr(telemetry, "_RECORD_DELAY", 3600.0)  # nothing but a full batch, a scrape or a stop
    running = ServerThread(ServerConfig(db=None, metrics_port=0, reflection=False))
    try:
        recorder = running.running.telemetry
        assert recorder is not None
        assert recorder.metrics is not None
        registry = recorder.metrics.registry

        def pending() -> int:
            return running.run(asyncio.sleep(0, len(recorder._pending)))

        with Client(running.target) as client:
            for i in range(4):
                client.append("s-batch", am.UserMessage.text(f"m{i}"))
        for _ in range(3000):  # the fourth call's done callback runs just after its answer (bounded: 30 s and more)
            if pending() == 1:
                break
            time.sleep(0.01)
        assert pending() == 1  # three recorded as a batch, the fourth waits
        assert value(scrape(running), "agentmsg_rpc_requests_total", method="AppendMessage", code="OK") == 4
        assert pending() == 0  # the scrape had it recorded first
        with Client(running.target) as client:
            client.append("s-batch", am.UserMessage.text("m4"))
        for _ in range(3000):
            if pending() == 1:
                break
            time.sleep(0.01)
        running.stop()  # stopping records what is pending
        assert len(recorder._pending) == 0
        assert _appended_ok(registry) == 5
    finally:
        running.stop()


def test_the_store_counts_its_commits_and_the_appends_they_acknowledged(tmp_path: Any) -> None:
    """SQLite: appends one after the other are one commit each; a retried duplicate writes nothing, so no commit."""
    running = ServerThread(ServerConfig(db=str(tmp_path / "agentmsg.db"), metrics_port=0, reflection=False))
    try:
        with Client(running.target) as client:
            first = am.UserMessage.text("one")
            client.append("s", first)
            client.append("s", first)  # a duplicate
            client.append("s", am.UserMessage.text("two"))
            client.append_many("s", [am.UserMessage.text("three"), am.UserMessage.text("four")])
        samples = scrape(running)
    finally:
        running.stop()
    assert value(samples, "agentmsg_store_commits_total") == 3
    assert value(samples, "agentmsg_store_committed_appends_total") == 3


def test_calls_refused_for_a_budget_are_counted_by_budget() -> None:
    """A call over a budget is refused RESOURCE_EXHAUSTED before its request is read, over gRPC and over Connect
    (one ledger): each refusal is counted in agentmsg_calls_refused_total under the budget that refused it."""
    server = ServerThread(ServerConfig(db=None, metrics_port=0, http_port=0, reflection=False, max_streams=1))
    try:
        ledger = server.running.ledger
        assert ledger is not None
        before = scrape(server)
        for budget in ("max_streams", "max_streams_per_tenant", "max_unary", "max_unary_per_tenant"):
            assert ("agentmsg_calls_refused_total", frozenset({("budget", budget)})) in before
            assert value(before, "agentmsg_calls_refused_total", budget=budget) == 0

        async def refuse() -> tuple[str, str]:
            request = session_service_pb2.SubscribeRequest(session_id="s")
            async with grpc.aio.insecure_channel(server.target) as channel:
                subscribe = channel.unary_stream(
                    "/agentmsg.v1.SessionService/Subscribe",
                    request_serializer=session_service_pb2.SubscribeRequest.SerializeToString,
                    response_deserializer=session_service_pb2.SubscribeResponse.FromString,
                )
                held = subscribe(request)
                for _ in range(500):  # until the server counts the held stream
                    if ledger.total["streams"] == 1:
                        break
                    await asyncio.sleep(0.01)
                assert ledger.total["streams"] == 1
                with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                    await subscribe(request).read()
                async with Transport("connect-json", server.target, server.running.http_port) as connect:
                    with pytest.raises(CallFailedError) as over_connect:
                        async for _ in connect.stream("Subscribe", request):
                            pass
                held.cancel()
            return over_grpc.value.code().name, over_connect.value.code

        assert server.run(refuse()) == ("RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED")
        after = scrape(server)
        assert value(after, "agentmsg_calls_refused_total", budget="max_streams") == 2
        assert value(after, "agentmsg_calls_refused_total", budget="max_unary") == 0
    finally:
        server.stop()
