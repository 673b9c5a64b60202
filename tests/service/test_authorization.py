"""Scoped tokens: a token for one tenant (session-id prefix) or session cannot read or write another.

The model (``agentmsg.service.access``): a token is full, or scoped to
``PREFIX*`` tenants, exact session ids, ``tools:call`` and ``tools:serve``.
Every SessionService RPC checks the session it names before the store is read
(PERMISSION_DENIED, the same whether the session exists or not);
``ListSessions`` lists only the sessions in scope; tool calls and serving are
per-token capabilities. Health is open; reflection needs a token.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from conftest import RunnerThread, ServerThread
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import Client, Live, Logged, ToolRunner
from agentmsg.service.access import FULL, Scope, load_token_file, parse_token
from agentmsg.service.localpg import wait_until
from agentmsg.streaming import events_from_message

GRANTS = {
    "acme-token": Scope.parse("acme:*"),
    "two-tenants": Scope.parse("acme:*,globex:*"),
    "one-session": Scope.parse("s1"),
    "caller": Scope.parse("tools:call"),
    "runner": Scope.parse("tools:serve"),
    "tenant-caller": Scope.parse("acme:*,tools:call"),
}


def text(i: int, prefix: str = "m") -> am.UserMessage:
    return am.UserMessage.text(f"{prefix}-{i}", id=f"{prefix}-{i}", timestamp=1_700_000_000 + i)


@pytest.fixture
def scoped(make_server: Callable[..., ServerThread]) -> ServerThread:
    server = make_server(tokens=["admin"], grants=GRANTS)
    with Client(server.target, token="admin") as admin:
        for session in ("acme:a", "acme:b", "acme:c", "globex:a", "globex:b", "s1", "s10", "initech"):
            admin.append(session, text(1, session))
    return server


@pytest.fixture
def clients(scoped: ServerThread) -> Iterator[Callable[[str | None], Client]]:
    opened: list[Client] = []

    def client(token: str | None) -> Client:
        c = Client(scoped.target, token=token, timeout=10)
        opened.append(c)
        return c

    yield client
    for c in opened:
        c.close()


def every_session_call(c: Client, session: str) -> list[Callable[[], object]]:
    """One call of each SessionService RPC that names a session."""
    answer = am.AssistantMessage.text("hi", stop_reason="stop", id=f"{session}-answer")
    return [
        lambda: c.append(session, text(2, session)),
        lambda: c.append_many(session, [text(3, session)]),
        lambda: list(c.history(session)),
        lambda: next(iter(c.subscribe(session, timeout=5))),
        lambda: c.publish_stream(session, events_from_message(answer)),
        lambda: c.branch(session, f"{session}-1", "left"),
        lambda: c.compact(session, "summary"),
        lambda: c.build_context(session),
    ]


def test_a_tenant_token_works_inside_its_tenant(clients: Callable[[str | None], Client]) -> None:
    acme = clients("acme-token")
    for call in every_session_call(acme, "acme:a"):
        call()
    assert acme.append("acme:new", text(1, "acme:new")) == 1  # a new session inside the tenant
    assert [m.offset for m in acme.history("acme:a")][-1] >= 4


def test_a_tenant_token_cannot_touch_another_tenant(clients: Callable[[str | None], Client]) -> None:
    acme = clients("acme-token")
    for session in ("globex:a", "initech", "s1", "acmex:a", "acme"):  # "acme" and "acmex:a" are not "acme:*"
        for call in every_session_call(acme, session):
            with pytest.raises(am.PermissionDeniedError, match=f"does not include session '{session}'"):
                call()
    admin = clients("admin")
    # Nothing was written to the other tenants.
    assert [m.message.id for m in admin.history("globex:a")] == ["globex:a-1"]
    assert [s.session_id for s in admin.sessions()] == [
        "acme:a",
        "acme:b",
        "acme:c",
        "globex:a",
        "globex:b",
        "initech",
        "s1",
        "s10",
    ]


def test_a_refusal_does_not_reveal_whether_a_session_exists(clients: Callable[[str | None], Client]) -> None:
    acme = clients("acme-token")
    answers = []
    for session in ("globex:a", "globex:never-created"):
        with pytest.raises(am.PermissionDeniedError) as info:
            list(acme.history(session))
        answers.append(str(info.value).replace(session, "<id>"))
    assert answers[0] == answers[1]


def test_a_session_token_is_exact(clients: Callable[[str | None], Client]) -> None:
    one = clients("one-session")
    assert [m.message.id for m in one.history("s1")] == ["s1-1"]
    with pytest.raises(am.PermissionDeniedError):
        list(one.history("s10"))  # a longer id is another session, not a prefix match
    assert [s.session_id for s in one.sessions()] == ["s1"]


def test_list_sessions_shows_only_what_is_in_scope(clients: Callable[[str | None], Client]) -> None:
    acme = clients("acme-token")
    for i in range(5):
        acme.append(f"acme:z{i}", text(i))
    expected = ["acme:a", "acme:b", "acme:c", *(f"acme:z{i}" for i in range(5))]
    assert [s.session_id for s in acme.sessions()] == expected
    assert [s.session_id for s in acme.sessions(page_size=3)] == expected  # paged: three pages, no strays
    both = clients("two-tenants")
    assert [s.session_id for s in both.sessions(page_size=2)] == sorted([*expected, "globex:a", "globex:b"])
    assert [s.session_id for s in clients("caller").sessions()] == []  # tools only: no sessions


def test_tool_calls_and_serving_are_per_token(
    scoped: ServerThread, clients: Callable[[str | None], Client], start_runner: Callable[..., RunnerThread]
) -> None:
    # A runner needs tools:serve.
    refused = ToolRunner(scoped.target, name="x", token="acme-token")
    refused.tool(lambda: "no", name="nope")
    with pytest.raises(am.PermissionDeniedError, match="may not serve tools"):
        asyncio.run(refused.serve())
    runner = ToolRunner(scoped.target, name="weather", token="runner")
    runner.tool(lambda city: f"sunny in {city}", name="weather", parameters={"type": "object"})
    start_runner(runner)
    call = am.ToolCallContent("c1", "weather", {"city": "Oslo"})
    for token in ("admin", "caller", "tenant-caller"):
        assert clients(token).call_tool(call).text == "sunny in Oslo"
        assert [t.tool.name for t in clients(token).list_tools()] == ["weather"]
    for token in ("acme-token", "runner", "one-session"):
        with pytest.raises(am.PermissionDeniedError, match="may not call or list tools"):
            clients(token).call_tool(call)
        with pytest.raises(am.PermissionDeniedError):
            clients(token).list_tools()
    caller = clients("caller")
    with pytest.raises(am.PermissionDeniedError):  # tools:call gives no session access
        caller.append("acme:a", text(9))


def test_no_token_or_a_wrong_one_is_unauthenticated(clients: Callable[[str | None], Client]) -> None:
    for token in (None, "wrong", "acme-token-but-longer"):
        c = clients(token)
        with pytest.raises(am.UnauthenticatedError):
            c.append("acme:a", text(5))
        with pytest.raises(am.UnauthenticatedError):
            c.sessions()
        with pytest.raises(am.UnauthenticatedError):
            next(iter(c.subscribe("acme:a", timeout=5)))


def test_health_is_open_and_reflection_needs_a_token(scoped: ServerThread) -> None:
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    with grpc.insecure_channel(scoped.target) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            list(reflection.ServerReflectionInfo(iter([request]), timeout=5))
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
        for token in ("admin", "acme-token"):  # any valid token may list the services
            responses = reflection.ServerReflectionInfo(
                iter([request]), timeout=5, metadata=(("authorization", f"Bearer {token}"),)
            )
            names = {s.name for r in responses for s in r.list_services_response.service}
            assert "agentmsg.v1.SessionService" in names


def test_a_live_subscriber_of_one_tenant_sees_nothing_of_another(
    scoped: ServerThread, clients: Callable[[str | None], Client]
) -> None:
    """Live relay fan-out is per session: a tenant's subscriber gets its own stream's events, no one else's."""
    got: list[Live | Logged] = []

    def watch() -> None:
        with Client(scoped.target, token="acme-token") as c:
            for item in c.subscribe("acme:live", live_events=True, timeout=60):
                got.append(item)
                if isinstance(item, Logged):
                    return

    thread = threading.Thread(target=watch)
    thread.start()
    hub = scoped.running.sessions.hub
    assert wait_until(lambda: "acme:live" in hub._subscribers, 60), "the subscription never reached the server"
    admin = clients("admin")
    admin.publish_stream("globex:live", events_from_message(am.AssistantMessage.text("secret", stop_reason="stop")))
    mine = am.AssistantMessage.text("for acme", stop_reason="stop")
    admin.publish_stream("acme:live", events_from_message(mine))
    thread.join(60)
    live = [item for item in got if isinstance(item, Live)]
    assert [item.event.kind for item in live] == [e.kind for e in events_from_message(mine)]
    assert [item.message for item in got if isinstance(item, Logged)] == [mine]


def test_scope_syntax() -> None:
    assert parse_token("plain") == ("plain", FULL)
    token, scope = parse_token("t=acme:*, s1 ,tools:call")
    assert token == "t"
    assert scope.prefixes == ("acme:",)
    assert scope.sessions == frozenset({"s1"})
    assert (scope.call_tools, scope.serve_tools, scope.all_sessions) == (True, False, False)
    assert scope.allows("acme:x")
    assert scope.allows("s1")
    assert not scope.allows("acme")
    assert not scope.allows("s11")
    assert parse_token("t=*")[1] == FULL
    for bad in ("t=", "t=a b", "t=**", "t=tools:all", "=acme:*", "t=a*b"):
        with pytest.raises(am.ValidationError):
            parse_token(bad)


def test_token_files(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# tenants\nadmin\n\nacme-token=acme:*  # the acme tenant\nrunner=tools:serve\n")
    grants = load_token_file(path)
    assert grants["admin"] == FULL
    assert grants["acme-token"].prefixes == ("acme:",)
    assert grants["runner"].serve_tools
    path.write_text("ok\nbad=not a scope\n")
    with pytest.raises(am.ValidationError, match=":2:"):
        load_token_file(path)


def test_agentmsg_serve_takes_scoped_tokens(tmp_path: Path) -> None:
    """The CLI: repeatable ``--token TOKEN[=SCOPE]`` and ``--token-file``."""
    tokens = tmp_path / "tokens"
    tokens.write_text("from-file=globex:*\n")
    server = ServerProcess(
        "--db", str(tmp_path / "cli.db"), "--token", "admin", "--token", "acme=acme:*", "--token-file", str(tokens)
    )
    try:
        assert "3 token(s), 2 scoped" in "".join(server.output)
        with (
            Client(server.target, token="acme", timeout=10) as acme,
            Client(server.target, token="from-file", timeout=10) as globex,
        ):
            assert acme.append("acme:1", text(1)) == 1
            assert globex.append("globex:1", text(1)) == 1
            with pytest.raises(am.PermissionDeniedError):
                acme.append("globex:1", text(2))
            with pytest.raises(am.PermissionDeniedError):
                list(globex.history("acme:1"))
            assert [s.session_id for s in acme.sessions()] == ["acme:1"]
    finally:
        server.stop()
