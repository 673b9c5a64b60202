"""Hostile and heavy clients (issue 26): refusals that cost no decoding, budgets per tenant, and the small
defects a fuzzing or careless peer found (tracebacks, forged log lines, server paths, lost outcomes).

Each test reproduces its defect on the code before the fix: the refusal decoded its request, 256 idle
subscriptions refused everyone else, health and reflection answered UNKNOWN with a traceback, and so on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from conftest import RunnerThread, ServerThread
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.cli import main
from agentmsg.service import AsyncClient, Client, RequestLimits, ToolRunner
from agentmsg.service.access import Scope, named_session
from agentmsg.service.budgets import Budgets
from agentmsg.service.frames import append_request
from agentmsg.service.grpc import sessions as grpc_sessions
from agentmsg.service.stores import SQLiteStore
from agentmsg.v1 import content_pb2, session_service_pb2, tool_pb2, tool_service_pb2, tool_service_pb2_grpc

GRANTS = {
    "acme": Scope.parse("acme:*,tools:call"),
    "globex": Scope.parse("globex:*"),
    "caller": Scope.parse("tools:call"),
    "runner": Scope.parse("tools:serve"),
}
APPEND = "/agentmsg.v1.SessionService/AppendMessage"
SUBSCRIBE = "/agentmsg.v1.SessionService/Subscribe"
BIG_SEND = [("grpc.max_send_message_length", 64 << 20)]


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def big_append(session: str) -> bytes:
    """An ~4 MB AppendMessageRequest of 150,000 text blocks: the kind the append fast path walks in Python
    (its canonical-encoding check), seconds of work on the server's one event loop."""
    message = am.UserMessage([am.TextContent("x" * 20) for _ in range(150_000)], id="big", timestamp=1)
    return append_request(session, message.to_bytes())


@pytest.fixture(scope="module")
def big() -> bytes:
    return big_append("acme:big")


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the AppendMessage requests the server's deserializer was given (servers made after)."""
    sizes: list[int] = []
    original = grpc_sessions._receive_append

    def counting(data: bytes) -> Any:
        sizes.append(len(data))
        return original(data)

    counting.request_type = original.request_type  # type: ignore[attr-defined]
    monkeypatch.setattr(grpc_sessions, "_receive_append", counting)
    return sizes


def health_check(target: str) -> int:
    with grpc.insecure_channel(target) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return int(reply.status)


def text(i: int) -> am.UserMessage:
    return am.UserMessage.text(f"m{i}", id=f"m{i}", timestamp=1_700_000_000 + i)


# --- 1. refused before the request is decoded ------------------------------------------------------------


def test_a_4mb_unauthenticated_append_is_refused_undecoded_while_health_and_another_tenant_are_answered(
    make_server: Callable[..., ServerThread], decoded: list[int], big: bytes
) -> None:
    server = make_server(grants=GRANTS)
    codes: list[grpc.StatusCode] = []
    started = threading.Event()

    def hostile() -> None:
        with grpc.insecure_channel(server.target, options=BIG_SEND) as channel:
            append = channel.unary_unary(APPEND)
            for _ in range(5):
                started.set()
                with pytest.raises(grpc.RpcError) as info:
                    append(big, timeout=30)
                codes.append(info.value.code())  # type: ignore[attr-defined]

    attacker = threading.Thread(target=hostile)
    attacker.start()
    assert started.wait(10)
    answered = []
    with Client(server.target, token="globex", timeout=10) as other:
        while attacker.is_alive() or not answered:
            assert health_check(server.target) == health_pb2.HealthCheckResponse.SERVING
            answered.append(other.append("globex:s", text(len(answered))))
    attacker.join(30)
    assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 5
    assert answered == list(range(1, len(answered) + 1))
    # Not one byte of the refused requests reached the append deserializer; the other tenant's appends did.
    assert len(decoded) == len(answered)
    assert max(decoded) < 1000


def test_an_out_of_scope_append_is_refused_by_its_session_field_alone(
    make_server: Callable[..., ServerThread], decoded: list[int], big: bytes
) -> None:
    # Limits raised so the in-scope request below is decoded and stored whole (150,000 blocks).
    server = make_server(grants=GRANTS, limits=RequestLimits(max_blocks=200_000, max_request_blocks=200_000))
    foreign = big_append("globex:s")
    with grpc.insecure_channel(server.target, options=BIG_SEND) as channel:
        append = channel.unary_unary(APPEND)
        for token, request, message in [
            ("acme", foreign, "does not include session 'globex:s'"),
            ("caller", big, "includes no session"),  # tools only: no session at all
        ]:
            with pytest.raises(grpc.RpcError) as info:
                append(request, timeout=30, metadata=bearer(token))
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED  # type: ignore[attr-defined]
            assert message in info.value.details()  # type: ignore[attr-defined]
        assert decoded == []
        # In scope, the same kind of request is decoded and stored.
        assert session_service_pb2.AppendMessageResponse.FromString(
            append(big, timeout=60, metadata=bearer("acme"))
        ) == session_service_pb2.AppendMessageResponse(offset=1)
    assert decoded == [len(big)]


def test_tool_capabilities_are_refused_from_the_metadata(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(grants=GRANTS)
    with grpc.insecure_channel(server.target) as channel:
        for method, token in [
            ("/agentmsg.v1.ToolService/CallTool", "globex"),
            ("/agentmsg.v1.ToolService/ListTools", "runner"),
        ]:
            with pytest.raises(grpc.RpcError) as info:
                channel.unary_unary(method)(b"\xff\xff\xff\xff", timeout=5, metadata=bearer(token))
            # Refused for the token, before the (undecodable) bytes were looked at.
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED  # type: ignore[attr-defined]


def test_the_session_a_request_names_is_read_from_its_top_level_fields() -> None:
    request = session_service_pb2.ListMessagesRequest(session_id="acme:a", after_offset=3, page_size=9)
    assert named_session(request.SerializeToString()) == "acme:a"
    assert named_session(big_append("acme:b")[:40] + b"") is None  # cut inside the message: not well formed
    # Field 1 twice: a parser keeps the last, and so does the peek.
    twice = b"\x0a\x06acme:a" + b"\x0a\x08globex:b"
    assert named_session(twice) == "globex:b"
    assert session_service_pb2.ListMessagesRequest.FromString(twice).session_id == "globex:b"
    assert named_session(b"\x10\x01" * 20 + b"\x0a\x01s") is None  # past the fields it looks at: undecided
    assert named_session(b"\x0a\x02\xff\xfe") is None  # not UTF-8
    assert named_session(b"") is None


# --- 2. budgets -------------------------------------------------------------------------------------------


def _quota(error: grpc.RpcError) -> tuple[str, str, dict[str, str]]:
    """The QuotaFailure subject, ErrorInfo reason and metadata of a RESOURCE_EXHAUSTED refusal."""
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
    rich = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert rich is not None
    quota, info = error_details_pb2.QuotaFailure(), error_details_pb2.ErrorInfo()
    assert any(d.Unpack(quota) for d in rich.details if d.Is(quota.DESCRIPTOR))
    assert any(d.Unpack(info) for d in rich.details if d.Is(info.DESCRIPTOR))
    return quota.violations[0].subject, info.reason, dict(info.metadata)


async def _subscribe(channel: grpc.aio.Channel, session: str, token: str) -> grpc.aio.UnaryStreamCall[Any, Any]:
    """An open Subscribe of ``session`` (which holds one message): returned once its first reply arrived."""
    call = channel.unary_stream(SUBSCRIBE)(
        session_service_pb2.SubscribeRequest(session_id=session).SerializeToString(), metadata=bearer(token)
    )
    await asyncio.wait_for(call.read(), 30)
    return call  # type: ignore[return-value]


def test_300_idle_subscriptions_of_one_tenant_leave_other_tenants_and_health_answered(
    make_server: Callable[..., ServerThread],
) -> None:
    server = make_server(grants=GRANTS)
    with Client(server.target, token="acme") as acme:
        acme.append("acme:busy", text(0))

    async def scenario() -> list[int]:
        channels = [grpc.aio.insecure_channel(server.target) for _ in range(3)]
        try:
            calls = [await _subscribe(channels[i % 3], "acme:busy", "acme") for i in range(300)]
            async with AsyncClient(server.target, token="globex", timeout=10) as globex:
                offsets = [await globex.append("globex:s", text(i)) for i in range(3)]
                assert [m.offset async for m in globex.history("globex:s")] == [1, 2, 3]
            assert await asyncio.to_thread(health_check, server.target) == health_pb2.HealthCheckResponse.SERVING
            assert all(not call.done() for call in calls)  # all 300 still open
            return offsets
        finally:
            for channel in channels:
                await channel.close()

    assert asyncio.run(scenario()) == [1, 2, 3]


def test_a_tenant_past_its_stream_budget_is_refused_and_the_others_are_not(
    make_server: Callable[..., ServerThread],
) -> None:
    server = make_server(grants=GRANTS, max_streams_per_tenant=3, max_streams=5)
    with Client(server.target, token="acme") as acme, Client(server.target, token="globex") as globex:
        acme.append("acme:s", text(0))
        globex.append("globex:s", text(0))

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            held = [await _subscribe(channel, "acme:s", "acme") for _ in range(3)]
            with pytest.raises(grpc.RpcError) as info:
                await _subscribe(channel, "acme:s", "acme")
            assert _quota(info.value) == (
                "max_streams_per_tenant",
                "ResourceExhaustedError",
                {"budget": "max_streams_per_tenant", "limit": "3"},
            )
            assert "--max-streams-per-tenant" in info.value.details()  # type: ignore[attr-defined]
            # Another tenant's streams and unary calls, and health, go on.
            others = [await _subscribe(channel, "globex:s", "globex") for _ in range(2)]
            async with AsyncClient(server.target, token="acme", timeout=10) as unary:
                assert await unary.append("acme:s", text(1)) == 2
            assert await asyncio.to_thread(health_check, server.target) == health_pb2.HealthCheckResponse.SERVING
            # The server's total (5) is reached now: a third tenant stream is refused by it.
            with pytest.raises(grpc.RpcError) as info:
                await _subscribe(channel, "globex:s", "globex")
            assert _quota(info.value)[0] == "max_streams"
            # A stream that ends gives its place back.
            held.pop().cancel()
            refusals: list[grpc.StatusCode] = []
            for _ in range(100):
                try:
                    held.append(await _subscribe(channel, "acme:s", "acme"))
                    break
                except grpc.RpcError as exc:  # until the server has seen the cancel
                    refusals.append(exc.code())  # type: ignore[attr-defined]
                    await asyncio.sleep(0.02)
            assert len(held) == 3
            assert set(refusals) <= {grpc.StatusCode.RESOURCE_EXHAUSTED}
            for call in held + others:
                call.cancel()

    asyncio.run(scenario())


def holding_runner(
    server: ServerThread, start_runner: Callable[[ToolRunner], RunnerThread]
) -> tuple[threading.Event, threading.Event]:
    """A runner serving ``wait``, a tool that holds its call (and the caller's unary budget) until ``release`` is
    set; ``started`` is set once a call is in it. Gives (release, started)."""
    release, started = threading.Event(), threading.Event()
    runner = ToolRunner(server.target, name="slow", token="runner")

    @runner.tool
    def wait() -> str:
        started.set()
        release.wait(20)
        return "done"

    start_runner(runner)
    return release, started


def test_a_tenant_past_its_unary_budget_is_refused_and_the_others_are_not(
    make_server: Callable[..., ServerThread], start_runner: Callable[[ToolRunner], RunnerThread]
) -> None:
    server = make_server(grants=GRANTS, max_unary_per_tenant=1)
    release, started = holding_runner(server, start_runner)
    results: list[am.ToolResultContent] = []
    with Client(server.target, token="acme", timeout=20) as acme:
        caller = threading.Thread(target=lambda: results.append(acme.call_tool(am.ToolCallContent("c", "wait", {}))))
        caller.start()
        assert started.wait(10)
        request = session_service_pb2.ListSessionsRequest().SerializeToString()
        with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
            channel.unary_unary("/agentmsg.v1.SessionService/ListSessions")(request, timeout=5, metadata=bearer("acme"))
        assert _quota(info.value)[0] == "max_unary_per_tenant"
        with Client(server.target, token="globex") as globex:
            assert globex.append("globex:s", text(1)) == 1
        assert health_check(server.target) == health_pb2.HealthCheckResponse.SERVING
        release.set()
        caller.join(20)
        assert results[0].text == "done"
        assert acme.append("acme:s", text(1)) == 1  # its place given back


def test_a_call_without_a_valid_token_is_refused_before_the_budgets_and_never_counted(
    make_server: Callable[..., ServerThread], start_runner: Callable[[ToolRunner], RunnerThread]
) -> None:
    """The server's one unary call is taken: a call with no token, or a wrong one, is answered UNAUTHENTICATED
    and is not a budget refusal (the token is checked first); a valid token's call is the budget's refusal."""
    server = make_server(grants=GRANTS, max_unary=1)
    release, started = holding_runner(server, start_runner)
    ledger = server.running.ledger
    assert ledger is not None
    request = session_service_pb2.ListSessionsRequest().SerializeToString()
    with Client(server.target, token="acme", timeout=20) as acme, grpc.insecure_channel(server.target) as channel:
        caller = threading.Thread(target=lambda: acme.call_tool(am.ToolCallContent("c", "wait", {})))
        caller.start()
        try:
            assert started.wait(10)
            list_sessions = channel.unary_unary("/agentmsg.v1.SessionService/ListSessions")
            for metadata in ((), bearer("wrong")):
                with pytest.raises(grpc.RpcError) as info:
                    list_sessions(request, timeout=5, metadata=metadata)
                assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
            assert ledger.refused["max_unary"] == 0
            with pytest.raises(grpc.RpcError) as info:
                list_sessions(request, timeout=5, metadata=bearer("globex"))
            assert _quota(info.value)[0] == "max_unary"
            assert ledger.refused["max_unary"] == 1
        finally:
            release.set()
            caller.join(20)


def test_health_watch_streams_are_budgeted_and_health_checks_never_are(
    make_server: Callable[..., ServerThread],
) -> None:
    """Callers without a token (health probes) are one tenant: their Watch streams are bounded like any
    tenant's; a Check is answered however many streams are open."""
    server = make_server(grants=GRANTS, max_streams_per_tenant=1, max_unary_per_tenant=1)

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest())
            first = await asyncio.wait_for(watch.read(), 10)
            assert first.status == health_pb2.HealthCheckResponse.SERVING  # type: ignore[union-attr]
            with pytest.raises(grpc.RpcError) as info:
                await asyncio.wait_for(health.Watch(health_pb2.HealthCheckRequest()).read(), 10)
            assert _quota(info.value)[0] == "max_streams_per_tenant"
            checks = await asyncio.gather(*(health.Check(health_pb2.HealthCheckRequest()) for _ in range(20)))
            assert {c.status for c in checks} == {health_pb2.HealthCheckResponse.SERVING}
            watch.cancel()

    asyncio.run(scenario())


def test_agentmsg_serve_takes_the_budget_flags() -> None:
    server = ServerProcess("--memory", "--token", "t", "--max-streams-per-tenant", "1")
    try:

        async def scenario() -> str:
            async with grpc.aio.insecure_channel(server.target) as channel:
                async with AsyncClient(server.target, token="t") as client:
                    await client.append("s", text(0))
                first = await _subscribe(channel, "s", "t")
                with pytest.raises(grpc.RpcError) as info:
                    await _subscribe(channel, "s", "t")
                first.cancel()
                return _quota(info.value)[0]

        assert asyncio.run(scenario()) == "max_streams_per_tenant"
    finally:
        server.stop()
    with pytest.raises(SystemExit):
        main(["serve", "--max-unary", "-1"])


def test_a_negative_budget_is_refused_naming_it() -> None:
    with pytest.raises(am.ValidationError, match="max_streams_per_tenant") as info:
        Budgets(max_streams_per_tenant=-1)
    assert info.value.violations[0].field == "max_streams_per_tenant"
    assert Budgets(0, 0, 0, 0).max_unary == 0  # 0: no limit


# --- 5. the smaller defects -------------------------------------------------------------------------------


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO)
    return caplog


def _no_traceback(log: pytest.LogCaptureFixture) -> None:
    """Neither the server nor gRPC's server side logged an error or a traceback. (Records of the test's own
    asyncio loops are not the server's: grpc.aio clients on successive loops of one process log poller
    callbacks there.)"""
    server = [r for r in log.records if r.name.startswith(("agentmsg", "grpc"))]
    assert [r.getMessage() for r in server if r.exc_info or r.levelno >= logging.ERROR] == []


GARBAGE = b"\xff\xff\xff\xff"  # a field tag whose varint never ends


def test_malformed_bytes_to_health_and_reflection_are_invalid_argument_without_a_traceback(
    make_server: Callable[..., ServerThread], server_log: pytest.LogCaptureFixture
) -> None:
    server = make_server(grants=GRANTS)
    with grpc.insecure_channel(server.target) as channel:
        calls: list[Callable[[], object]] = [
            lambda: channel.unary_unary("/grpc.health.v1.Health/Check")(GARBAGE, timeout=5),
            lambda: list(channel.unary_stream("/grpc.health.v1.Health/Watch")(GARBAGE, timeout=5)),
        ]
        for name in ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"):
            method = channel.stream_stream(f"/{name}/ServerReflectionInfo")
            calls.append(lambda method=method: list(method(iter([GARBAGE]), timeout=5, metadata=bearer("acme"))))  # type: ignore[misc]
        for call in calls:
            with pytest.raises(grpc.RpcError) as info:
                call()
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
            rich = rpc_status.from_call(info.value)  # type: ignore[arg-type]
            assert rich is not None
            assert any(d.Is(error_details_pb2.BadRequest.DESCRIPTOR) for d in rich.details)
    assert health_check(server.target) == health_pb2.HealthCheckResponse.SERVING
    _no_traceback(server_log)


def test_a_newline_in_a_runners_name_cannot_forge_a_log_line(
    server: ServerThread, server_log: pytest.LogCaptureFixture
) -> None:
    forged = "evil\n2026-01-01 00:00:00 agentmsg.service INFO runner 'admin' registered everything\x1b[2J"

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
            register = tool_service_pb2.RegisterTools(runner_name=forged, tools=[tool_pb2.ToolDefinition(name="t")])
            await stream.write(tool_service_pb2.ServeToolsRequest(register=register))
            assert (await stream.read()).WhichOneof("kind") == "registered"  # type: ignore[union-attr]
            await stream.done_writing()
            assert await stream.read() is grpc.aio.EOF

    asyncio.run(scenario())
    lines = [r.getMessage() for r in server_log.records if r.name == "agentmsg.service"]
    about = [line for line in lines if "evil" in line]
    assert len(about) == 2  # registered, left
    for line in lines:
        assert "\n" not in line
        assert "\x1b" not in line
    assert repr(forged) in about[0]


def test_tool_calls_whose_deadline_passes_log_no_traceback(
    server: ServerThread, server_log: pytest.LogCaptureFixture
) -> None:
    """Before the fix, about 1% of such calls raced gRPC's own deadline and logged an ExecuteBatchError."""

    async def scenario() -> list[str]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
            register = tool_service_pb2.RegisterTools(runner_name="mute", tools=[tool_pb2.ToolDefinition(name="mute")])
            await stream.write(tool_service_pb2.ServeToolsRequest(register=register))
            await stream.read()
            outcomes = []
            async with AsyncClient(server.target) as client:

                async def one(i: int) -> str:
                    try:
                        await client.call_tool(am.ToolCallContent(f"c{i}", "mute", {}), timeout=0.05)
                    except am.AgentMsgError as exc:
                        return type(exc).__name__
                    return "answered"

                for _ in range(10):
                    outcomes += await asyncio.gather(*(one(i) for i in range(50)))
            # The runner leaves as a runner does (its side closed, the server's read to the end): cancelling the
            # stream instead races the server's last cancel messages, which gRPC itself logs as an ExecuteBatchError
            # (a teardown this test is not about).
            await stream.done_writing()
            while await asyncio.wait_for(stream.read(), 30) is not grpc.aio.EOF:
                pass
            return outcomes

    outcomes = asyncio.run(scenario())
    assert set(outcomes) == {"DeadlineExceededError"}
    _no_traceback(server_log)


def test_store_errors_show_clients_no_server_path(
    server: ServerThread, client: Client, server_log: pytest.LogCaptureFixture
) -> None:
    store = server.running.store
    assert isinstance(store, SQLiteStore)
    client.append("s", text(0))
    with store._lock:
        store._db.execute("PRAGMA query_only = 1")
    try:
        with pytest.raises(am.StoreError) as info:
            client.append("s", text(1))
    finally:
        with store._lock:
            store._db.execute("PRAGMA query_only = 0")
    assert "read-only" in str(info.value)
    assert store.path not in str(info.value)
    assert "agentmsg.db" not in str(info.value)
    # The server's own log says which file.
    assert any(store.path in r.getMessage() for r in server_log.records)


async def _mute_runner(target: str, stream_ended: asyncio.Future[grpc.RpcError]) -> AsyncIterator[str]:
    """A runner that answers its calls without their handle once two are waiting; yields "registered", then
    each call id."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
        tool = tool_pb2.ToolDefinition(name="old")
        await stream.write(
            tool_service_pb2.ServeToolsRequest(register=tool_service_pb2.RegisterTools(runner_name="old", tools=[tool]))
        )
        waiting = 0
        try:
            while (read := await stream.read()) is not grpc.aio.EOF:
                response: tool_service_pb2.ServeToolsResponse = read  # type: ignore[assignment]
                if response.WhichOneof("kind") == "registered":
                    yield "registered"
                if response.WhichOneof("kind") != "run":
                    continue
                waiting += 1
                if waiting == 2:
                    result = content_pb2.ToolResultContent(id=response.run.call.id, name="old")
                    result.content.add().text.text = "answered"
                    outcome = tool_service_pb2.ToolCallOutcome(call_id=response.run.call.id, result=result)
                    await stream.write(tool_service_pb2.ServeToolsRequest(outcome=outcome))
                yield response.run.call.id
        except grpc.RpcError as exc:
            stream_ended.set_result(exc)


def test_an_outcome_without_a_handle_for_a_shared_call_id_is_refused_at_once(server: ServerThread) -> None:
    async def scenario() -> tuple[list[am.ToolResultContent], grpc.RpcError]:
        ended: asyncio.Future[grpc.RpcError] = asyncio.get_running_loop().create_future()
        runner = _mute_runner(server.target, ended)
        async with AsyncClient(server.target) as client:
            assert await anext(runner) == "registered"
            calls = [
                asyncio.ensure_future(client.call_tool(am.ToolCallContent("call_1", "old", {}), timeout=60))
                for _ in range(2)
            ]
            assert [await anext(runner), await anext(runner)] == ["call_1", "call_1"]
            # Both answered now, not after their 60 s deadline (a wait_for well below it fails the test).
            results = await asyncio.wait_for(asyncio.gather(*calls), 20)
        async for _ in runner:
            pass
        return results, await asyncio.wait_for(ended, 10)

    results, ended = asyncio.run(scenario())
    for result in results:
        assert result.is_error
        assert "handle" in result.text
    assert ended.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert "ToolCallOutcome.handle" in ended.details()  # type: ignore[attr-defined]
