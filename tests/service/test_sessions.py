"""The session service against a real server: ordering, idempotency, resume, restart, validation, limits."""

from __future__ import annotations

import threading
from collections.abc import Callable

import grpc
import pytest
from conftest import ServerThread
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import agentmsg as am
from agentmsg.service import Client, Live, Logged
from agentmsg.service.localpg import wait_until
from agentmsg.streaming import StreamEvent, events_from_message


def text(i: int, session: str = "s") -> am.UserMessage:
    return am.UserMessage.text(f"{session}-{i}", id=f"{session}-{i}", timestamp=1_700_000_000 + i)


def test_offsets_are_per_session_and_ordered(server: ServerThread) -> None:
    def writer(session: str, results: list[int]) -> None:
        with Client(server.target, timeout=10) as c:
            results.extend(c.append(session, text(i, session)) for i in range(40))

    results: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    threads = [threading.Thread(target=writer, args=(s, r)) for s, r in results.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    with Client(server.target) as c:
        for session, offsets in results.items():
            assert offsets == list(range(1, 41))  # each writer saw its own appends in order
            logged = list(c.history(session, page_size=7))
            assert [item.offset for item in logged] == list(range(1, 41))
            assert [item.message.id for item in logged] == [f"{session}-{i}" for i in range(40)]
        assert [(s.session_id, s.last_offset) for s in c.sessions(page_size=2)] == [("a", 40), ("b", 40), ("c", 40)]


def test_a_retried_append_never_duplicates(client: Client) -> None:
    message = text(1)
    assert client.append("s", message) == 1
    assert client.append("s", message) == 1
    assert client.append_many("s", [text(2), message, text(2)]) == [2, 1, 2]
    assert [m.offset for m in client.history("s")] == [1, 2]
    with pytest.raises(am.ConflictError, match="already at offset 1 with different content"):
        client.append("s", am.UserMessage.text("other words", id="s-1"))
    with pytest.raises(am.ConflictError):
        client.append_many("s", [text(3), am.UserMessage.text("other", id="s-2")])
    assert [m.offset for m in client.history("s")] == [1, 2]  # the failed batch wrote nothing


def test_invalid_messages_are_rejected_with_field_violations(client: Client) -> None:
    bad = am.UserMessage.text("x")
    bad.pb.id = ""
    bad.pb.user.content.add().image.url = "https://example.test/a.png"
    bad.pb.user.content[-1].image.media_type = "text/html"
    with pytest.raises(am.ValidationError) as info:
        client.append("s", bad)
    assert {(v.field, v.rule_id) for v in info.value.violations} == {
        ("message.id", "string.min_len"),
        ("message.user.content[1].image.media_type", "string.pattern"),
    }
    with pytest.raises(am.ValidationError) as info:
        client.append("bad session!", text(1))
    assert info.value.violations[0].field == "session_id"
    with pytest.raises(am.NotFoundError, match="no session 's'"):  # nothing was appended: no session
        list(client.history("s"))


def test_the_details_are_a_google_rpc_bad_request(server: ServerThread) -> None:
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

    with grpc.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.AppendMessage(session_service_pb2.AppendMessageRequest(session_id="s"))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
        assert status is not None
        bad = error_details_pb2.BadRequest()
        assert any(d.Unpack(bad) for d in status.details if d.Is(bad.DESCRIPTOR))
        assert [(v.field, v.reason) for v in bad.field_violations] == [("message", "required")]


def test_subscribe_resumes_with_no_loss_and_no_duplicate(client: Client) -> None:
    client.append_many("s", [text(i) for i in range(1, 6)])
    seen: list[int] = []
    stream = client.subscribe("s", max_batch=2)
    for item in stream:
        assert isinstance(item, Logged)
        seen.append(item.offset)
        if item.offset == 3:
            break  # the subscriber drops
    stream.close()
    client.append_many("s", [text(i) for i in range(6, 9)])
    resumed = client.subscribe("s", after=seen[-1])
    for item in resumed:
        assert isinstance(item, Logged)
        seen.append(item.offset)
        if item.offset == 8:
            break
    resumed.close()
    assert seen == list(range(1, 9))


def test_subscribe_follows_live_appends(server: ServerThread, client: Client) -> None:
    """Offsets 2 to 30 are appended only once the subscriber has read offset 1: only following delivers them."""
    received: list[int] = []
    first = threading.Event()

    def follow() -> None:
        with Client(server.target) as c:
            stream = c.subscribe("live", timeout=60)
            for item in stream:
                assert isinstance(item, Logged)
                received.append(item.offset)
                first.set()
                if item.offset == 30:
                    stream.close()
                    return

    client.append("live", text(0, "live"))
    thread = threading.Thread(target=follow)
    thread.start()
    assert first.wait(60)
    for i in range(1, 30):
        client.append("live", text(i, "live"))
    thread.join(60)
    assert received == list(range(1, 31))


def test_published_streams_are_relayed_live_and_logged_once(server: ServerThread, client: Client) -> None:
    answer = am.AssistantMessage.text("streamed, piece by piece", stop_reason="stop", id="a-1")
    events = events_from_message(answer, chunk_size=5)
    items: list[Logged | Live] = []

    def watch() -> None:
        with Client(server.target) as c:
            stream = c.subscribe("chat", live_events=True, timeout=60)
            for item in stream:
                items.append(item)
                if isinstance(item, Logged):
                    stream.close()
                    return

    thread = threading.Thread(target=watch)
    thread.start()
    # Live events go to the subscribers registered when they are published: publish once the server has it.
    hub = server.running.sessions.hub
    assert wait_until(lambda: "chat" in hub._subscribers, 60), "the subscription never reached the server"
    offset, message = client.publish_stream("chat", events)
    thread.join(60)
    assert offset == 1
    assert message == answer
    live = [item for item in items if isinstance(item, Live)]
    assert [item.event.kind for item in live] == [e.kind for e in events]
    assert len({item.stream_id for item in live}) == 1
    logged = [item for item in items if isinstance(item, Logged)]
    assert [(item.offset, item.message) for item in logged] == [(1, answer)]
    assert [m.message for m in client.history("chat")] == [answer]


def test_a_broken_stream_is_rejected_and_not_logged(client: Client) -> None:
    events = [StreamEvent.message_start("m"), StreamEvent.text_delta(0, "no block")]
    with pytest.raises(am.ValidationError, match="before its block_start"):
        client.publish_stream("s", events)
    unfinished = [StreamEvent.message_start("m"), StreamEvent.block_start(0, am.TextContent())]
    with pytest.raises(am.ValidationError, match="has not ended"):
        client.publish_stream("s", unfinished)
    with pytest.raises(am.NotFoundError):  # nothing was logged: no session
        list(client.history("s"))


def test_a_restart_on_the_same_file_keeps_every_acknowledged_message(
    make_server: Callable[..., ServerThread], tmp_path: object
) -> None:
    first = make_server()
    with Client(first.target) as c:
        offsets = c.append_many("s", [text(i) for i in range(50)])
    first.stop()
    second = make_server()  # same db path
    with Client(second.target) as c:
        logged = list(c.history("s"))
        assert [m.offset for m in logged] == offsets == list(range(1, 51))
        assert [m.message for m in logged] == [text(i) for i in range(50)]
        assert c.append("s", text(0)) == 1  # idempotency survives the restart
        assert c.append("s", text(50)) == 51


def test_the_in_memory_store_serves_the_same_api(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None)
    with Client(server.target) as c:
        assert c.append_many("m", [text(1), text(2)]) == [1, 2]
        assert [m.offset for m in c.history("m", after=1)] == [2]


def test_messages_over_the_size_limit_are_refused_clearly(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(max_message_bytes=1 << 20)
    big = am.UserMessage([am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(2 << 20), media_type="image/png")])
    with Client(server.target, max_message_bytes=8 << 20) as c:
        with pytest.raises(am.ResourceExhaustedError, match="larger than max"):
            c.append("s", big)
        assert c.append("s", text(1)) == 1  # the server is fine


def test_health_and_reflection(server: ServerThread) -> None:
    with grpc.insecure_channel(server.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", "agentmsg.v1.SessionService", "agentmsg.v1.ToolService"):
            response = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert response.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        names = {s.name for r in responses for s in r.list_services_response.service}
        assert {"agentmsg.v1.SessionService", "agentmsg.v1.ToolService", "grpc.health.v1.Health"} <= names


def test_graceful_shutdown_goes_not_serving_then_refuses(make_server: Callable[..., ServerThread]) -> None:
    server = make_server()
    with grpc.insecure_channel(server.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        server.run(server.running.health.enter_graceful_shutdown())
        status = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status
        assert status == health_pb2.HealthCheckResponse.NOT_SERVING
    server.stop(grace=1)
    with Client(server.target, timeout=2) as c, pytest.raises(am.UnavailableError):
        c.append("s", text(1))
