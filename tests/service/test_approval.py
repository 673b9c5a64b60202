"""Human approval of tool calls through a real server: a call of a tool that requires approval waits, within its
deadline, for a decision appended to the call's session (by the CLI, a client, before or after the call, across a
restart, over Connect, on another node of a cluster), then runs or answers a denial the model reads; unknown calls
and out-of-scope tokens are refused."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import RunnerThread, ServerThread
from serverproc import ServerProcess
from transports import Transport

import agentmsg as am
from agentmsg.cli import main
from agentmsg.providers import anthropic, openai_chat
from agentmsg.providers._common import ConversionReport
from agentmsg.service import Client, ToolRunner
from agentmsg.service.access import Scope
from agentmsg.service.localpg import wait_until
from agentmsg.v1 import session_service_pb2, tool_service_pb2

SESSION = "acme:review"


class Deleter:
    """A runner whose one tool requires approval, and the paths it was run with."""

    def __init__(self, target: str, token: str | None = None) -> None:
        self.runs: list[str] = []
        self.ran = threading.Event()
        self.runner = ToolRunner(target, name="files", token=token)

        @self.runner.tool(requires_approval=True, kind="edit")
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.runs.append(path)
            self.ran.set()
            return f"deleted {path}"


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2) as executor:
        yield executor


def ask(client: Client, session: str, call_id: str, path: str = "/tmp/x") -> am.ToolCallContent:
    """The engine's side before the call: the user's request and the model's tool call, appended to the session."""
    call = am.ToolCallContent(call_id, "delete_file", {"path": path}, requires_approval=True)
    client.append(session, am.UserMessage.text("tidy up"))
    client.append(session, am.AssistantMessage([call], stop_reason="tool_calls"))
    return call


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_the_registered_definition_says_it_requires_approval(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    (registered,) = client.list_tools()
    assert registered.tool.requires_approval


def test_an_approval_from_the_cli_lets_the_waiting_call_run(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread], pool: ThreadPoolExecutor
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    call = ask(client, SESSION, "call_1")
    waiting: Future[am.ToolResultContent] = pool.submit(client.call_tool, call, timeout=30, session_id=SESSION)
    assert not deleter.ran.wait(0.3)  # not run before a decision (a bounded look, not a timing assertion)
    code, out, err = cli("approve", SESSION, "call_1", "--reason", "fine", "--by", "ann", "--target", server.target)
    assert (code, err) == (0, "")
    assert out.strip().endswith("approved call_1")
    result = waiting.result(30)
    assert (result.id, result.text, result.is_error) == ("call_1", "deleted /tmp/x", False)
    assert deleter.runs == ["/tmp/x"]
    (decision,) = [
        b for m in client.build_context(SESSION) for b in m.contents if isinstance(b, am.ToolApprovalContent)
    ]
    assert (decision.call_id, decision.approved, decision.reason, decision.decided_by) == (
        "call_1",
        True,
        "fine",
        "ann",
    )
    assert decision.decided_at is not None


def test_a_decision_given_before_the_call_counts(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    call = ask(client, SESSION, "call_early")
    client.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_early")]))
    assert client.call_tool(call, timeout=30, session_id=SESSION).text == "deleted /tmp/x"
    # The CLI's tools call names the session too.
    ask(client, SESSION, "call_cli", "/tmp/y")
    assert cli("approve", SESSION, "call_cli", "--target", server.target)[0] == 0
    code, out, _ = cli(
        "tools", "call", "delete_file", "--args", '{"path": "/tmp/y"}', "--call-id", "call_cli",
        "--session", SESSION, "--target", server.target,
    )  # fmt: skip
    assert (code, out) == (0, "deleted /tmp/y\n")


def test_a_denial_reaches_the_model_and_the_tool_does_not_run(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread], pool: ThreadPoolExecutor
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    call = ask(client, SESSION, "call_2", "/etc/hosts")
    waiting = pool.submit(client.call_tool, call, timeout=30, session_id=SESSION)
    code, _, _ = cli(
        "approve", SESSION, "call_2", "--deny", "--reason", "not on this machine", "--by", "ann",
        "--target", server.target,
    )  # fmt: skip
    assert code == 0
    result = waiting.result(30)
    assert result.is_error
    assert result.text == "The tool call was denied by ann: not on this machine"
    assert deleter.runs == []
    # The engine appends the result, as after any call; the next model call reads it.
    client.append(SESSION, am.ToolMessage([result]))
    context = client.build_context(SESSION)
    request = anthropic.to_anthropic(context, report=ConversionReport())
    assert request["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_2", "content": result.text, "is_error": True}
    ]
    chat = openai_chat.to_openai_chat(context, report=ConversionReport())
    assert chat[-1] == {"role": "tool", "tool_call_id": "call_2", "content": result.text}
    # agentmsg tail shows what waited and who decided.
    code, out, _ = cli("tail", SESSION, "--target", server.target)
    assert code == 0
    assert "[call_2]  needs approval" in out
    assert "approval   denied by ann: not on this machine  [call_2]" in out


def test_the_deadline_ends_an_unanswered_call(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    call = ask(client, SESSION, "call_3")
    with pytest.raises(am.DeadlineExceededError):
        client.call_tool(call, timeout=0.5, session_id=SESSION)
    # The ended wait holds nothing of the session's: no change event left registered until its next append.
    store = server.running.store
    assert wait_until(lambda: SESSION not in store._waiters and SESSION not in store._watching, 10)
    # A decision after the deadline is kept in the log; the call did not run and runs when called again.
    assert deleter.runs == []
    client.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_3")]))
    assert client.call_tool(call, timeout=30, session_id=SESSION).text == "deleted /tmp/x"
    assert deleter.runs == ["/tmp/x"]


def test_a_server_restart_between_request_and_decision(
    make_server: Callable[..., ServerThread],
    start_runner: Callable[..., RunnerThread],
    pool: ThreadPoolExecutor,
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "approvals.db")
    first = make_server(db=db)
    with Client(first.target, timeout=10) as engine:
        deleter = Deleter(first.target)
        runner = start_runner(deleter.runner)
        call = ask(engine, SESSION, "call_4")
        waiting = pool.submit(engine.call_tool, call, timeout=30, session_id=SESSION)
        first.stop()
        with pytest.raises(am.ServiceError):
            waiting.result(30)  # the server went away under the waiting call
        runner.stop()
    second = make_server(db=db)
    deleter = Deleter(second.target)
    start_runner(deleter.runner)
    code, _, err = cli("approve", SESSION, "call_4", "--target", second.target)
    assert (code, err) == (0, "")
    with Client(second.target, timeout=10) as engine:
        assert engine.call_tool(call, timeout=30, session_id=SESSION).text == "deleted /tmp/x"
    # And a decision given before a restart still counts after it.
    with Client(second.target, timeout=10) as engine:
        later = ask(engine, SESSION, "call_5")
        engine.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_5")]))
    second.stop()
    third = make_server(db=db)
    deleter = Deleter(third.target)
    start_runner(deleter.runner)
    with Client(third.target, timeout=10) as engine:
        assert engine.call_tool(later, timeout=30, session_id=SESSION).text == "deleted /tmp/x"


def test_a_decision_on_an_unknown_call_is_refused(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    ask(client, SESSION, "call_6")
    with pytest.raises(am.ValidationError) as caught:
        client.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_ghost")]))
    (violation,) = caught.value.violations
    assert (violation.field, violation.rule_id) == ("message.user.content[0].approval.call_id", "session.approval.call")
    with pytest.raises(am.ValidationError):
        client.append_many("other-session", [am.UserMessage([am.ToolApprovalContent.approve("call_6")])])
    # A batch that holds the call before its decision is fine.
    call = am.ToolCallContent("call_7", "delete_file", {"path": "p"})
    client.append_many(
        SESSION, [am.AssistantMessage([call]), am.UserMessage([am.ToolApprovalContent.deny("call_7", "no")])]
    )
    code, _, err = cli("approve", SESSION, "call_ghost", "--target", server.target)
    assert code == 2
    assert "session.approval.call" in err


def test_calls_of_a_tool_that_requires_approval_need_their_session(
    server: ServerThread, client: Client, start_runner: Callable[..., RunnerThread]
) -> None:
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    call = am.ToolCallContent("call_8", "delete_file", {"path": "p"})
    with pytest.raises(am.ValidationError) as caught:
        client.call_tool(call, timeout=10)
    assert caught.value.violations[0].field == "session_id"
    with pytest.raises(am.ValidationError) as caught:
        client.call_tool(call, timeout=10, session_id=SESSION)  # the session does not hold the call
    assert caught.value.violations[0].field == "call.id"
    assert deleter.runs == []


GRANTS = {
    "engine": Scope.parse("acme:*,tools:call"),
    "reviewer": Scope.parse("acme:*"),
    "outsider": Scope.parse("globex:*,tools:call"),
    "runner": Scope.parse("tools:serve"),
}


def test_scopes_are_enforced(
    make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread], pool: ThreadPoolExecutor
) -> None:
    server = make_server(tokens=["admin"], grants=GRANTS)
    deleter = Deleter(server.target, token="runner")
    start_runner(deleter.runner)
    with (
        Client(server.target, token="engine", timeout=10) as engine,
        Client(server.target, token="reviewer", timeout=10) as reviewer,
        Client(server.target, token="outsider", timeout=10) as outsider,
    ):
        call = ask(engine, SESSION, "call_9")
        # A token without the session's scope can neither decide nor wait on the session.
        with pytest.raises(am.PermissionDeniedError):
            outsider.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_9")]))
        with pytest.raises(am.PermissionDeniedError):
            outsider.call_tool(call, timeout=10, session_id=SESSION)
        # The reviewer's token has the session but not the tools; it decides, and the engine's call runs.
        with pytest.raises(am.PermissionDeniedError):
            reviewer.call_tool(call, timeout=10, session_id=SESSION)
        waiting = pool.submit(engine.call_tool, call, timeout=30, session_id=SESSION)
        reviewer.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_9", decided_by="rev")]))
        assert waiting.result(30).text == "deleted /tmp/x"
        assert deleter.runs == ["/tmp/x"]


def test_over_connect_a_call_waits_for_a_decision_appended_over_connect(
    make_server: Callable[..., ServerThread], start_runner: Callable[..., RunnerThread]
) -> None:
    server = make_server(http_port=0)
    deleter = Deleter(server.target)
    start_runner(deleter.runner)
    with Client(server.target, timeout=10) as engine:
        call = ask(engine, SESSION, "call_http")

    async def run() -> tuple[Any, Any]:
        async with (
            Transport("connect-json", server.target, server.running.http_port) as caller,
            Transport("connect-json", server.target, server.running.http_port) as reviewer,
        ):
            request = tool_service_pb2.CallToolRequest(call=call.pb.tool_call, session_id=SESSION)
            waiting = asyncio.ensure_future(caller.unary("CallTool", request))
            decision = am.UserMessage([am.ToolApprovalContent.deny("call_http", "not now", decided_by="web")])
            appended = await reviewer.unary(
                "AppendMessage", session_service_pb2.AppendMessageRequest(session_id=SESSION, message=decision.pb)
            )
            return appended, await asyncio.wait_for(waiting, 30)

    appended, called = asyncio.run(run())
    assert appended.offset == 3
    assert called.result.is_error
    assert called.result.content[0].text.text == "The tool call was denied by web: not now"
    assert deleter.runs == []


def test_on_a_cluster_a_decision_on_one_node_releases_a_call_waiting_on_another(
    cluster_nodes: list[ServerProcess], start_runner: Callable[..., RunnerThread], pool: ThreadPoolExecutor
) -> None:
    """The engine calls through node three, the runner is on node one (where the call waits), the reviewer
    decides through node two: the shared log's change feed wakes the waiting call."""
    first, second, third = cluster_nodes
    deleter = Deleter(first.target)
    start_runner(deleter.runner)
    with Client(third.target, timeout=20) as engine, Client(second.target, timeout=20) as reviewer:
        assert wait_until(lambda: [t.tool.name for t in engine.list_tools()] == ["delete_file"], 30)
        call = ask(engine, SESSION, "call_c1")
        waiting = pool.submit(engine.call_tool, call, timeout=60, session_id=SESSION)
        reviewer.append(SESSION, am.UserMessage([am.ToolApprovalContent.approve("call_c1", decided_by="rev")]))
        assert waiting.result(60).text == "deleted /tmp/x"
        denied = ask(engine, SESSION, "call_c2", "/etc")
        waiting = pool.submit(engine.call_tool, denied, timeout=60, session_id=SESSION)
        reviewer.append(SESSION, am.UserMessage([am.ToolApprovalContent.deny("call_c2", "no", decided_by="rev")]))
        assert waiting.result(60).text == "The tool call was denied by rev: no"
    assert deleter.runs == ["/tmp/x"]
