"""The HTTP port beside the gRPC one: transports mixed on one server and across a cluster, health, CORS, the
request size limit, the CLI flags."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ServerThread, fresh_database
from otlp_collector import collecting, otlp_environment
from serverproc import ServerProcess
from transports import CallFailedError, Transport

import agentmsg as am
from agentmsg.service import AsyncClient, Logged, ServerConfig, ToolRunner, create_server
from agentmsg.service.localpg import LocalPostgres
from agentmsg.v1 import content_pb2, session_service_pb2, tool_service_pb2

S = session_service_pb2


def user(text: str, i: int) -> Any:
    return am.UserMessage.text(text, id=f"m{i}", timestamp=1_700_000_000 + i)


@pytest.fixture
def server(make_server: Callable[..., ServerThread]) -> ServerThread:
    return make_server(db=None, http_port=0)


def _post(
    port: int, path: str, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST")
    request.add_header("content-type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


def test_an_append_over_connect_reaches_a_grpc_subscriber_and_the_reverse(server: ServerThread) -> None:
    async def run() -> tuple[list[str], list[str]]:
        async with (
            AsyncClient(server.target, timeout=10) as grpc_client,
            Transport("connect-json", server.target, server.running.http_port) as connect,
        ):
            grpc_seen: list[str] = []
            connect_seen: list[str] = []

            async def follow_grpc() -> None:
                async for item in grpc_client.subscribe("mixed"):
                    assert isinstance(item, Logged)
                    grpc_seen.append(item.message.id)
                    if len(grpc_seen) == 2:
                        return

            async def follow_connect() -> None:
                async for reply in connect.stream("Subscribe", S.SubscribeRequest(session_id="mixed")):
                    connect_seen.extend(m.message.id for m in reply.messages)
                    if len(connect_seen) == 2:
                        return

            async with asyncio.timeout(20):
                followers = [asyncio.create_task(follow_grpc()), asyncio.create_task(follow_connect())]
                request = S.AppendMessageRequest(session_id="mixed", message=user("over connect", 1).pb)
                await connect.unary("AppendMessage", request)
                await grpc_client.append("mixed", user("over grpc", 2))
                await asyncio.gather(*followers)
            return grpc_seen, connect_seen

    grpc_seen, connect_seen = asyncio.run(run())
    assert grpc_seen == ["m1", "m2"]
    assert connect_seen == ["m1", "m2"]


def test_a_tool_served_by_a_grpc_runner_is_called_over_connect_and_grpc_web(
    server: ServerThread, start_runner: Callable[[ToolRunner], Any]
) -> None:
    runner = ToolRunner(server.target, name="grpc-runner")

    @runner.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    start_runner(runner)

    async def run(name: str) -> Any:
        async with Transport(name, server.target, server.running.http_port) as transport:
            listed = await transport.unary("ListTools", tool_service_pb2.ListToolsRequest(), get=True)
            call = content_pb2.ToolCallContent(id="c1", name="add", arguments='{"a": 2, "b": 3}')
            return listed, await transport.unary("CallTool", tool_service_pb2.CallToolRequest(call=call))

    for name in ("connect-json", "connect-proto", "grpc-web"):
        listed, called = asyncio.run(run(name))
        assert [t.tool.name for t in listed.tools] == ["add"]
        assert called.result.content[0].text.text == "5"
        assert not called.result.is_error


def test_on_a_cluster_a_connect_subscriber_sees_appends_made_on_another_node(postgres: LocalPostgres) -> None:
    url = fresh_database(postgres)
    nodes = [ServerProcess("--store", url, "--pool-size", "4", "--http", "0") for _ in range(2)]
    try:
        subscriber, writer = nodes

        async def run() -> list[str]:
            seen: list[str] = []
            async with (
                Transport("connect-proto", subscriber.target, subscriber.http_port) as connect,
                AsyncClient(writer.target, timeout=10) as grpc_client,
            ):

                async def follow() -> None:
                    async for reply in connect.stream("Subscribe", S.SubscribeRequest(session_id="shared")):
                        seen.extend(m.message.id for m in reply.messages)
                        if len(seen) == 3:
                            return

                async with asyncio.timeout(30):
                    task = asyncio.create_task(follow())
                    for i in range(3):
                        await grpc_client.append("shared", user(f"from the other node {i}", i))
                    await task
            return seen

        assert asyncio.run(run()) == ["m0", "m1", "m2"]
    finally:
        lingered = [node.target for node in nodes if not node.stop()]
    assert not lingered


def test_health_answers_over_http(server: ServerThread) -> None:
    status, _, body = _post(server.running.http_port or 0, "/grpc.health.v1.Health/Check", b"{}")
    assert (status, json.loads(body)) == (200, {"status": "SERVING"})
    status, _, body = _post(server.running.http_port or 0, "/grpc.health.v1.Health/Check", b'{"service":"nope"}')
    assert status == 404
    assert json.loads(body)["code"] == "not_found"


def test_health_is_open_when_tokens_are_required(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, http_port=0, tokens=["secret"])
    status, _, body = _post(server.running.http_port or 0, "/grpc.health.v1.Health/Check", b"{}")
    assert (status, json.loads(body)) == (200, {"status": "SERVING"})
    status, _, body = _post(server.running.http_port or 0, "/agentmsg.v1.SessionService/ListSessions", b"{}")
    assert (status, json.loads(body)["code"]) == (401, "unauthenticated")


def _preflight(port: int, origin: str) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/agentmsg.v1.SessionService/ListSessions",
        method="OPTIONS",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,connect-protocol-version,authorization",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as error:
        with error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}


def test_cors_is_off_unless_an_origin_is_configured(make_server: Callable[..., ServerThread]) -> None:
    closed = make_server(db=None, http_port=0)
    _, headers = _preflight(closed.running.http_port or 0, "https://app.example")
    assert "access-control-allow-origin" not in headers
    _, headers, _ = _post(closed.running.http_port or 0, "/agentmsg.v1.SessionService/ListSessions", b"{}",
                          {"origin": "https://app.example"})  # fmt: skip
    assert "access-control-allow-origin" not in {k.lower() for k in headers}

    opened = make_server(db=None, http_port=0, cors_origins=["https://app.example"])
    status, headers = _preflight(opened.running.http_port or 0, "https://app.example")
    assert status == 200
    assert headers["access-control-allow-origin"] == "https://app.example"
    assert "connect-protocol-version" in headers["access-control-allow-headers"]
    status, headers = _preflight(opened.running.http_port or 0, "https://evil.example")
    assert headers.get("access-control-allow-origin") != "https://evil.example"
    status, headers, _ = _post(opened.running.http_port or 0, "/agentmsg.v1.SessionService/ListSessions", b"{}",
                               {"origin": "https://app.example"})  # fmt: skip
    assert status == 200
    assert headers.get("access-control-allow-origin") == "https://app.example"
    assert "grpc-status" in headers.get("access-control-expose-headers", "")


def test_a_request_over_the_maximum_message_size_is_refused(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, http_port=0, max_message_bytes=256 * 1024)
    big = user("x" * (300 * 1024), 1)

    async def run(name: str) -> CallFailedError:
        async with Transport(name, server.target, server.running.http_port) as transport:
            with pytest.raises(CallFailedError) as refused:
                await transport.unary("AppendMessage", S.AppendMessageRequest(session_id="s", message=big.pb))
            return refused.value

    for name in ("grpc", "connect-json", "connect-proto", "grpc-web"):
        assert asyncio.run(run(name)).code == "RESOURCE_EXHAUSTED", name

    async def empty() -> bool:
        async with AsyncClient(server.target, timeout=10) as client:
            return not await client.sessions()

    assert asyncio.run(empty())


def test_an_unknown_path_is_not_found(server: ServerThread) -> None:
    status, _, body = _post(server.running.http_port or 0, "/nothing/here", b"{}")
    assert status == 404
    assert b"agentmsg.v1.SessionService" in body


def test_http_binds_loopback_unless_told_and_a_busy_port_is_refused(server: ServerThread) -> None:
    assert server.running.http is not None
    assert server.running.http.host == "127.0.0.1"

    async def busy() -> str:
        with pytest.raises(am.AgentMsgError) as refused:
            await create_server(ServerConfig(db=None, http_port=server.running.http_port))
        return str(refused.value)

    assert "cannot listen for HTTP" in asyncio.run(busy())


def test_agentmsg_serve_takes_the_http_flags() -> None:
    node = ServerProcess("--memory", "--http", "0", "--cors-origin", "https://app.example")
    try:
        assert node.http_port
        printed = "".join(node.output)
        assert f"http://127.0.0.1:{node.http_port}" in printed
        assert "CORS for https://app.example" in printed
        status, _, body = _post(node.http_port, "/grpc.health.v1.Health/Check", b"{}")
        assert (status, json.loads(body)) == (200, {"status": "SERVING"})
    finally:
        assert node.stop()


def test_http_calls_are_traced_as_grpc_calls_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """An append over Connect is the same SERVER span as over gRPC (name, attributes, the caller's traceparent as
    its parent); a Subscribe over Connect has its span and its delivery spans."""
    with collecting() as (receiver, port):
        for key, value in otlp_environment(port, "http-server").items():
            monkeypatch.setenv(key, value)
        node = ServerProcess("--memory", "--http", "0")
        parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
        traceparent = f"00-{parent[0]}-{parent[1]}-01"
        message = am.AssistantMessage(
            [am.TextContent("hi")], provenance=am.Provenance(provider="anthropic", model="claude-test-1"), id="a1"
        )

        async def run() -> None:
            async with (
                Transport("grpc", node.target, None) as over_grpc,
                Transport("connect-proto", node.target, node.http_port) as over_connect,
            ):
                await over_grpc.unary("AppendMessage", S.AppendMessageRequest(session_id="t-grpc", message=message.pb))
                request = S.AppendMessageRequest(session_id="t-http", message=message.pb)
                await over_connect.unary_with_headers("AppendMessage", request, {"traceparent": traceparent})
                async for _ in over_connect.stream("Subscribe", S.SubscribeRequest(session_id="t-http")):
                    break

        try:
            asyncio.run(run())

            def complete(spans: list[Any]) -> bool:
                names = [s.name for s in spans]
                return (
                    names.count("agentmsg.v1.SessionService/AppendMessage") == 2
                    and "agentmsg.v1.SessionService/Subscribe" in names
                    and "agentmsg.v1.SessionService/Subscribe deliver" in names
                )

            spans = receiver.wait_for(complete)
        finally:
            assert node.stop()
    appends = {
        s.attributes["gen_ai.conversation.id"]: s for s in spans if s.name == "agentmsg.v1.SessionService/AppendMessage"
    }
    over_grpc, over_http = appends["t-grpc"], appends["t-http"]
    assert (over_http.trace_id, over_http.parent_id) == parent
    assert over_http.kind == over_grpc.kind == 2  # SPAN_KIND_SERVER
    same = {k: v for k, v in over_http.attributes.items() if k != "gen_ai.conversation.id"}
    assert same == {k: v for k, v in over_grpc.attributes.items() if k != "gen_ai.conversation.id"}
    assert same["gen_ai.provider.name"] == "anthropic"
    (delivery,) = [s for s in spans if s.name == "agentmsg.v1.SessionService/Subscribe deliver"]
    assert delivery.attributes["gen_ai.conversation.id"] == "t-http"


def test_http_and_grpc_calls_count_against_the_same_budgets(make_server: Callable[..., ServerThread]) -> None:
    """A token's open stream on one transport takes its place on the other: the next one is refused
    RESOURCE_EXHAUSTED with the same details either way."""
    server = make_server(db=None, http_port=0, tokens=["t"], max_streams_per_tenant=1)

    async def run(first: str, second: str) -> CallFailedError:
        async with (
            Transport(first, server.target, server.running.http_port) as holder,
            Transport(second, server.target, server.running.http_port) as refused,
        ):
            await holder.unary(
                "AppendMessage", S.AppendMessageRequest(session_id="b", message=user("x", 1).pb), token="t"
            )
            stream = holder.stream("Subscribe", S.SubscribeRequest(session_id="b"), token="t")
            async with asyncio.timeout(20):
                await anext(stream)  # the stream is open and counted
                second = refused.stream("Subscribe", S.SubscribeRequest(session_id="b"), token="t")
                with pytest.raises(CallFailedError) as over:
                    await anext(second)
                await stream.aclose()
            return over.value

    over_grpc = asyncio.run(run("connect-proto", "grpc"))
    over_http = asyncio.run(run("grpc", "connect-json"))
    assert over_grpc.code == over_http.code == "RESOURCE_EXHAUSTED"
    assert over_grpc == over_http
    assert "max_streams_per_tenant" in over_http.message
