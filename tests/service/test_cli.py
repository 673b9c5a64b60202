"""The command line against a real server, and the `make run` demo end to end."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunnerThread, ServerThread

import agentmsg as am
from agentmsg.cli import main
from agentmsg.service import Client, ToolRunner


def test_send_tail_sessions(server: ServerThread, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = ["--target", server.target]
    assert main(["send", "chat", "--text", "hello there", *target]) == 0
    assert main(["send", "chat", "--role", "assistant", "--text", "hi!", *target]) == 0
    dicts = tmp_path / "m.json"
    dicts.write_text(json.dumps([am.UserMessage.text("from a file", id="f1", timestamp=1).to_dict()]))
    assert main(["send", "chat", "--file", str(dicts), *target]) == 0
    out = capsys.readouterr().out
    assert "chat#1 " in out
    assert "chat#3 f1" in out
    assert main(["tail", "chat", *target]) == 0
    out = capsys.readouterr().out
    assert "#1    user" in out
    assert "text       hello there" in out
    assert "#2    assistant" in out
    assert main(["sessions", *target]) == 0
    assert "chat" in capsys.readouterr().out


class _Watched(io.StringIO):
    """stdout for ``main``: sets ``seen`` once a line starting with ``prefix`` has been printed."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if any(line.startswith(self.prefix) for line in self.getvalue().splitlines()):
            self.seen.set()
        return written


def test_tail_follow_prints_a_message_appended_after_it_started(server: ServerThread) -> None:
    """The answer is appended only once the tail has printed the question: only following can show it."""
    out = _Watched("#1 ")
    appended: list[int] = []
    with Client(server.target) as client:
        client.append("t", am.UserMessage.text("q"))

        def answer_once_tailing() -> None:
            # On a timeout it appends all the same, so the tail ends and the assertions below say why.
            appended.append(int(out.seen.wait(60)))
            client.append("t", am.AssistantMessage.text("a", stop_reason="stop"))

        thread = threading.Thread(target=answer_once_tailing)
        thread.start()
        with contextlib.redirect_stdout(out):
            code = main(["tail", "t", "--follow", "--until-stop", "--target", server.target])
        thread.join(30)
    assert appended == [1], "the tail never printed the first message"
    assert code == 0
    headers = [line for line in out.getvalue().splitlines() if line.startswith("#")]
    assert len(headers) == 2, headers
    assert headers[0].startswith("#1    user")
    assert headers[1].startswith("#2    assistant")
    assert headers[1].endswith("stop=stop")


def test_tools_list_and_call(
    server: ServerThread, start_runner: Callable[..., RunnerThread], capsys: pytest.CaptureFixture[str]
) -> None:
    runner = ToolRunner(server.target, name="cli-runner")
    runner.tool(lambda name: f"hello {name}", name="greet", parameters={"type": "object"}, description="Greets.")
    start_runner(runner)
    assert main(["tools", "--target", server.target]) == 0
    assert "greet" in capsys.readouterr().out
    assert main(["tools", "call", "greet", "--args", '{"name": "ada"}', "--target", server.target]) == 0
    assert capsys.readouterr().out.strip() == "hello ada"
    assert main(["tools", "call", "nobody", "--target", server.target]) == 2
    assert "no runner serves the tool" in capsys.readouterr().err


def test_client_errors_are_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "s", "--text", "x", "--target", "127.0.0.1:1", "--timeout", "1"]) == 2
    assert "agentmsg:" in capsys.readouterr().err


def test_validate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.binpb"
    good.write_bytes(am.Conversation([am.UserMessage.text("ok")]).to_bytes())
    assert main(["validate", str(good)]) == 0
    bad = am.Conversation([am.UserMessage.text("ok")])
    bad.pb.messages[0].id = ""
    path = tmp_path / "bad.json"
    path.write_text(bad.to_json())
    assert main(["validate", str(path)]) == 1
    assert "[0].id: must be at least 1 characters [string.min_len]" in capsys.readouterr().out


def test_the_make_run_demo_runs_end_to_end() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentmsg.service.demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "agentmsg serving on 127.0.0.1:" in out
    assert "[server] agentmsg serving Connect and gRPC-Web on http://127.0.0.1:" in out
    assert re.search(r"\[server\] agentmsg viewer on http://127\.0\.0\.1:\d+/\n", out), out
    assert "[engine] tool answered: 14°C and light rain" in out
    assert "[  tail]       tool_call  get_weather" in out
    assert "[  tail]   ~ block 0 +text:" in out  # the live relay reached the observer
    assert "final answer landed at offset 5" in out
    assert "demo finished" in out


def test_the_viewer_demo_keeps_its_session_up_until_interrupted() -> None:
    demo = subprocess.Popen(
        [sys.executable, "-m", "agentmsg.service.demo", "viewer"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own group: a failing check below ends the demo's server and runner with it
    )
    assert demo.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in demo.stdout or ()], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not any("the session stays up" in line for line in seen):
            seen.append(lines.get(timeout=120))  # the demo's turn, then the keep line
        viewer = next(re.search(r"agentmsg viewer on (http://\S+/)", line) for line in seen if "viewer on" in line)
        assert viewer is not None
        request = urllib.request.Request(
            f"{viewer[1]}agentmsg.v1.SessionService/ListMessages",
            data=json.dumps({"sessionId": "demo-session"}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # the server is still up, the session in it
            assert len(json.loads(response.read())["messages"]) == 5
        with urllib.request.urlopen(viewer[1], timeout=10) as response:
            assert response.status == 200
        demo.send_signal(signal.SIGINT)
        assert demo.wait(60) == 0
    finally:
        # The demo and every process it started (its group): none is left running, whatever failed above.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(demo.pid, signal.SIGKILL)
        demo.wait(10)
        reader.join(10)
        demo.stdout.close()


def test_the_make_run_cluster_demo_runs_end_to_end(postgres: object) -> None:
    # `postgres`: the demo starts its own server from the same wheel; skip (or fail under CI) as that fixture does.
    result = subprocess.run(
        [sys.executable, "-m", "agentmsg.service.demo", "cluster"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("agentmsg serving on 127.0.0.1:") == 3
    assert "(PostgreSQL postgresql://postgres@127.0.0.1:" in out
    assert "[engine] tool answered: 14°C and light rain" in out  # called through node 3, served on node 1
    assert "[  tail]   ~ block 0 +text:" in out  # live events from node 3 reached the observer on node 2
    assert "final answer landed at offset 5" in out
    assert "cluster demo finished: 3 nodes" in out
