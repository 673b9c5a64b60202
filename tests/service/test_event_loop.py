"""The event loop the long-running commands run on: ``--loop {auto,asyncio,uvloop}``, uvloop by default.

The server names its loop in its serving line, the MCP runner in its log, a ``ToolRunner.run(loop=...)`` tool
answers with the loop it runs on; on either loop the server serves calls and a SIGTERM or SIGINT drains it and it
exits 0 (its signal handlers are the loop's), and the runners answer a call and exit 0 on SIGTERM. A loop that is
not one of the three, or uvloop when it cannot be imported, is refused naming the option, before anything starts.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from runnerproc import WAIT, RunnerProcess, served, until
from serverproc import ServerProcess

import agentmsg as am
from agentmsg import _eventloop
from agentmsg.cli import main
from agentmsg.service import Client, ToolRunner

pytest.importorskip("uvloop", reason="uvloop is a dependency of agentmsg on CPython off Windows")

FAST_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "fast_server.py"


@pytest.mark.parametrize(
    ("flags", "loop", "signum"),
    [
        ((), "uvloop", signal.SIGTERM),
        (("--loop", "uvloop"), "uvloop", signal.SIGINT),
        (("--loop", "asyncio"), "asyncio", signal.SIGTERM),
    ],
)
def test_serve_runs_on_the_loop_asked_for_and_drains_on_a_signal(
    flags: tuple[str, ...], loop: str, signum: signal.Signals
) -> None:
    server = ServerProcess("--memory", *flags)
    try:
        ready = next(line for line in server.output if "agentmsg serving on" in line)
        assert ready.rstrip().endswith(f"plaintext, {loop})"), ready
        with Client(server.target, timeout=30) as client:
            offset = client.append("s-loop", am.UserMessage.text("on any loop"))
            assert [item.offset for item in client.history("s-loop")] == [offset]
        server.proc.send_signal(signum)  # the loop's signal handler starts the graceful stop
        code = server.proc.wait(WAIT)
    finally:
        server.stop()  # already gone: closes its pipes (SIGKILL if the wait above failed)
    assert code == 0, "".join(server.errors)[-2000:]


RUNNER = """
import sys
from agentmsg import _eventloop
from agentmsg.service import ToolRunner

runner = ToolRunner(sys.argv[1], name="where")

@runner.tool
async def where() -> str:
    "The event loop this runner serves on."
    return _eventloop.loop_name()

runner.run(loop=sys.argv[2])
print("exited", flush=True)
"""


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_tool_runner_run_serves_on_the_loop_asked_for(loop: str) -> None:
    server = ServerProcess("--memory")
    runner = RunnerProcess([sys.executable, "-c", RUNNER, server.target, loop])
    try:
        until(lambda: "where" in served(server.target), "the runner's tool")
        with Client(server.target, timeout=30) as client:
            result = client.call_tool(am.ToolCallContent("c1", "where", {}))
        assert result.text == loop
        runner.signal()  # SIGTERM: drained by the loop's signal handler, then run() returns
        runner.expect("exited")
        assert runner.wait() == 0, "".join(runner.errors)[-2000:]
    finally:
        runner.kill()
        server.stop()


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_the_mcp_runner_runs_on_the_loop_asked_for(loop: str) -> None:
    server = ServerProcess("--memory")
    command = [sys.executable, "-m", "agentmsg", "mcp", "runner", "--target", server.target, "--prefix", "fast."]
    runner = RunnerProcess([*command, "--loop", loop, "--", sys.executable, str(FAST_SERVER)])
    try:
        until(lambda: "fast.add" in served(server.target), "the runner's tools")
        with Client(server.target, timeout=30) as client:
            result = client.call_tool(am.ToolCallContent("c1", "fast.add", {"a": 2, "b": 40}))
        assert not result.is_error, result.text
        assert "42" in result.text
        runner.signal()  # SIGTERM: drained by the loop's signal handler
        assert runner.wait() == 0, "".join(runner.errors)[-2000:]
        assert f"agentmsg.mcp: on {loop}'s event loop" in "".join(runner.errors)
    finally:
        runner.kill()
        server.stop()


def test_an_unknown_loop_is_refused_by_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["serve", "--loop", "trio"], ["mcp", "runner", "--loop", "trio", "--", "x"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert "argument --loop: invalid choice: 'trio'" in capsys.readouterr().err


def test_uvloop_that_cannot_be_imported_is_refused_naming_the_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert main(["serve", "--memory", "--port", "0", "--loop", "uvloop"]) == 2
    err = capsys.readouterr().err
    assert "loop" in err, err
    assert "uvloop cannot be imported" in err, err
    with pytest.raises(am.ValidationError) as refused:
        ToolRunner("127.0.0.1:1", name="r").run(loop="uvloop")
    assert [v.field for v in refused.value.violations] == ["loop"]


def test_auto_falls_back_to_asyncio_when_uvloop_cannot_be_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    async def which() -> str:
        return _eventloop.loop_name()

    assert _eventloop.run(which()) == "uvloop"
    assert _eventloop.run(which(), "asyncio") == "asyncio"
    monkeypatch.setitem(sys.modules, "uvloop", None)
    assert _eventloop.run(which()) == "asyncio"
    assert _eventloop.run(which(), "auto") == "asyncio"


def test_a_loop_name_that_is_not_one_of_the_three_is_refused_and_nothing_runs() -> None:
    ran: list[bool] = []

    async def body() -> None:
        ran.append(True)

    with pytest.raises(am.ValidationError) as refused:
        _eventloop.run(body(), "trio")
    violation = refused.value.violations[0]
    assert (violation.field, violation.rule_id) == ("loop", "in")
    assert "auto, asyncio, uvloop" in violation.message
    assert "'trio'" in violation.message
    assert ran == []  # and its coroutine was closed: no "never awaited" warning (warnings are errors here)
    with pytest.raises(am.ValidationError, match="trio"):
        ToolRunner("127.0.0.1:1", name="r").run(loop="trio")  # type: ignore[arg-type]
    mcp = pytest.importorskip("agentmsg.mcp", reason="the mcp extra")
    with pytest.raises(am.ValidationError, match="trio"):
        mcp.McpRunner("127.0.0.1:1", mcp.stdio_server(sys.executable)).run(loop="trio")
