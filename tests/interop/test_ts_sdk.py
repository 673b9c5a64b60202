"""@agentmsg/sdk (TypeScript) against the Python server, runner and engine, in both directions.

- a TypeScript ToolRunner answers a Python engine's calls (results, errors, a deadline that cancels the handler);
- TypeScript engine and runner, each in an application that registered an OpenTelemetry SDK, are one trace
  through a tracing Python server;
- a Python ToolRunner answers a TypeScript engine (a deadline, an AbortSignal, typed errors with violations);
- a TypeScript subscriber follows a session across a restart of the Python server: nothing lost or repeated;
  one whose session is deleted ends with NotFoundError, and deleteSession is idempotent;
- a TypeScript publishStream relays a message live; a Python live subscriber folds the events into the same
  message the TypeScript fold gives, and the server logs it;
- the seed-1 dict form in TypeScript is Python's, both ways, for every valid golden message;
- a TypeScript client over TLS with bearer tokens; the README's and docs/typescript.md's examples and ``make run-ts``
  run as written.

The TypeScript programs are sdk/typescript/interop/*.ts (compiled by tsc; see tstools.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import trustme
from google.protobuf import json_format
from nodetools import ROOT
from otlp_collector import Span, collecting, otlp_environment
from serverproc import ServerProcess
from tstools import DIST, LoopThread, PythonServer, TsProcess, built_sdk, run_ts

import agentmsg as am
from agentmsg.dict_form import message_from_dict, message_to_dict
from agentmsg.service import Client, ServerConfig, ToolRunner
from agentmsg.service.client import Live, Logged
from agentmsg.streaming import StreamAccumulator
from agentmsg.v1 import message_pb2

VECTORS = ROOT / "tests" / "vectors"


@pytest.fixture(scope="module")
def node() -> str:
    return built_sdk()


@pytest.fixture
def server(node: str) -> Iterator[PythonServer]:
    running = PythonServer(ServerConfig(db=None))
    try:
        yield running
    finally:
        running.close()


# --- a TypeScript runner, a Python engine --------------------------------------------------------------------------


def test_a_typescript_runner_answers_a_python_engine(node: str, server: PythonServer) -> None:
    runner = TsProcess(node, "runner", server.target)
    try:
        runner.wait_for("registered")
        with Client(server.target, timeout=10) as client:
            tools = {t.tool.name: t for t in client.list_tools()}
            assert set(tools) == {"ts_add", "ts_describe", "ts_result", "ts_fail", "ts_wait"}
            assert tools["ts_add"].runner_name == "ts-runner"
            assert tools["ts_add"].tool.kind is am.ToolKind.EXECUTE
            assert json.loads(tools["ts_add"].tool.pb.parameters)["required"] == ["a", "b"]
            added_pb = tools["ts_add"].tool.pb
            assert (added_pb.title, added_pb.read_only_hint, added_pb.idempotent_hint) == ("Adder", True, True)
            assert not added_pb.HasField("destructive_hint")  # not stated stays unknown

            added = client.call_tool(am.ToolCallContent("py_1", "ts_add", {"a": 2, "b": 40}))
            assert (added.id, added.text, added.is_error, added.name) == ("py_1", "42", False, "ts_add")

            described = client.call_tool(am.ToolCallContent("py_2", "ts_describe", {"subject": "rain"}))
            assert [b.content for b in described.blocks] == ["call py_2 about rain", " from TypeScript"]

            # A handler may return a result made by toolResult(...): it goes out as that result, not nested in one.
            returned = client.call_tool(am.ToolCallContent("py_r", "ts_result", {"note": "dry"}))
            assert (returned.id, returned.text, returned.is_error) == ("py_r", "noted: dry", True)
            assert returned.metadata["by"] == "ts"  # the runner's own key, beside the service's "agentmsg.run"

            failed = client.call_tool(am.ToolCallContent("py_3", "ts_fail", {}))
            assert failed.is_error
            assert failed.text == "RangeError: the tool failed on purpose"

            bad = client.call_tool(am.ToolCallContent("py_4", "ts_add", arguments="{not json"))
            assert bad.is_error
            assert bad.text.startswith("invalid arguments: invalid JSON")

            # Two callers with the same (model-chosen) call id at once: the service's handles keep them apart.
            with ThreadPoolExecutor(2) as pool:
                same_id = [
                    pool.submit(client.call_tool, am.ToolCallContent("dup", "ts_add", {"a": n, "b": 1}))
                    for n in (10, 20)
                ]
                assert sorted(f.result(10).text for f in same_id) == ["11", "21"]

            with pytest.raises(am.DeadlineExceededError):
                client.call_tool(am.ToolCallContent("py_5", "ts_wait", {}), timeout=0.5)
            cancelled = runner.wait_for("cancelled")
            assert cancelled["cancelled"] == "py_5"
        assert runner.stop() == 0
    finally:
        runner.stop()


def _printed_spans(
    program: TsProcess, names: set[str], report: str | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The spans a traced program printed, by name, once every one of ``names`` has come; and the line that has
    ``report``, when asked for (it may come before or among the spans)."""
    printed: dict[str, dict[str, Any]] = {}
    found: dict[str, Any] = {}
    while not names <= set(printed) or (report is not None and not found):
        line = program.next()
        if "span" in line:
            printed[line["span"]["name"]] = line["span"]
        elif report is not None and report in line:
            found = line
    return printed, found


@pytest.mark.parametrize("capture", [False, True], ids=["default", "capture-on"])
def test_a_typescript_engine_and_runner_are_one_trace_through_a_tracing_python_server(node: str, capture: bool) -> None:
    """TypeScript on both sides of a tracing Python server (exporting over OTLP to a collector here), each in an
    application that registered an OpenTelemetry SDK: the engine's append carries its `turn` span's context, its
    CallTool is a CLIENT span the server's span is the child of, and the runner's `execute_tool {name}` span is the
    child of the server's (from RunToolCall.trace_context), current while the handler runs. GenAI attributes on
    both; content only when captured."""
    tool = "agentmsg.v1.ToolService/CallTool"
    with collecting() as (receiver, port):
        # The server's environment, and the programs' (they read the capture setting); this process does not trace.
        environment = otlp_environment(port, "test-server", capture)
        server = ServerProcess("--memory", env=environment)
        runner = TsProcess(node, "traced_runner", server.target, env=environment)
        try:
            runner.wait_for("registered")
            engine = TsProcess(node, "traced_engine", server.target, "ts-traced", env=environment)
            try:
                calls = {"turn", f"{tool} ts_weather", f"{tool} nobody_serves_this"}
                on_engine, report = _printed_spans(engine, calls, "result")
                assert engine.finish() == 0
            finally:
                engine.stop()
            assert report == {"offset": "1", "result": "sleet in Oslo", "missing": "not found"}
            with Client(server.target, timeout=10) as client:
                assert client.call_tool(am.ToolCallContent("call-22", "ts_fail", {})).is_error
            on_runner, _ = _printed_spans(runner, {"lookup", "execute_tool ts_weather", "execute_tool ts_fail"})

            def served(spans: list[Span]) -> bool:
                names = {s.name for s in spans}
                return {"agentmsg.v1.SessionService/AppendMessage", f"{tool} ts_weather", f"{tool} ts_fail"} <= names

            on_server = {s.name: s for s in receiver.wait_for(served)}
            assert runner.stop() == 0
        finally:
            runner.stop()
            server.stop()

    turn = on_engine["turn"]
    appended, served_weather = on_server["agentmsg.v1.SessionService/AppendMessage"], on_server[f"{tool} ts_weather"]
    # A session call carries the context the engine is in: the server's span is the turn's child.
    assert (appended.trace_id, appended.parent_id) == (turn["traceId"], turn["spanId"])
    calling = on_engine[f"{tool} ts_weather"]
    assert (calling["kind"], calling["parentSpanId"], calling["traceId"]) == (
        2,
        turn["spanId"],
        turn["traceId"],
    )  # CLIENT
    assert calling["attributes"]["gen_ai.tool.call.id"] == "call-31"
    assert calling["attributes"]["rpc.grpc.status_code"] == 0
    assert (served_weather.trace_id, served_weather.parent_id) == (turn["traceId"], calling["spanId"])
    missing = on_engine[f"{tool} nobody_serves_this"]
    assert (missing["status"], missing["attributes"]["error.type"]) == (2, "NOT_FOUND")  # SpanStatusCode.ERROR
    assert missing["attributes"]["rpc.grpc.status_code"] == 5

    for name in ("ts_weather", "ts_fail"):
        executed, parent = on_runner[f"execute_tool {name}"], on_server[f"{tool} {name}"]
        assert (executed["traceId"], executed["parentSpanId"]) == (parent.trace_id, parent.span_id)
        assert executed["kind"] == 0  # INTERNAL, as the Python runner's
        attributes = executed["attributes"]
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == name
        assert attributes["gen_ai.tool.type"] == "function"
    assert on_runner["execute_tool ts_weather"]["attributes"]["gen_ai.tool.call.id"] == "call-31"
    # The handler's own span is the child of the runner's: the call's span is current while the tool runs.
    assert on_runner["lookup"]["parentSpanId"] == on_runner["execute_tool ts_weather"]["spanId"]
    failed = on_runner["execute_tool ts_fail"]
    assert (failed["status"], failed["attributes"]["error.type"]) == (2, "tool_error")
    for attributes in (on_runner["execute_tool ts_weather"]["attributes"], calling["attributes"]):
        if capture:
            assert json.loads(attributes["gen_ai.tool.call.arguments"]) == {"city": "Oslo"}
            assert json.loads(attributes["gen_ai.tool.call.result"]) == "sleet in Oslo"
        else:
            assert not {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} & set(attributes)


def test_a_typescript_runner_reconnects_and_registers_again_after_a_server_restart(
    node: str, server: PythonServer
) -> None:
    runner = TsProcess(node, "runner", server.target)
    try:
        first = runner.wait_for("registered")["registered"]
        server.stop()
        server.start()
        second = runner.wait_for("registered", timeout=20)["registered"]
        assert second != first  # a new registration with the new server
        with Client(server.target, timeout=10) as client:
            added = client.call_tool(am.ToolCallContent("py_after", "ts_add", {"a": 1, "b": 2}))
        assert added.text == "3"
        assert runner.stop() == 0
    finally:
        runner.stop()


# --- a Python runner, a TypeScript engine --------------------------------------------------------------------------


class PythonRunner:
    """A Python ToolRunner serving ``shout`` and ``sleep`` on its own loop; records the calls it saw cancelled."""

    def __init__(self, target: str) -> None:
        self.cancelled: list[float] = []
        self.runner = ToolRunner(target, name="python-runner")
        cancelled = self.cancelled

        @self.runner.tool(kind="execute")
        def shout(text: str, times: int = 1) -> str:
            """Repeat a text in capitals."""
            return " ".join([text.upper()] * times)

        @self.runner.tool
        async def sleep(seconds: float) -> str:
            """Sleep, then say so."""
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                cancelled.append(seconds)
                raise
            return "slept"

        self.loop = LoopThread()
        self.served: Future[None] = asyncio.run_coroutine_threadsafe(self.runner.serve(), self.loop.loop)
        self.loop.run(asyncio.wait_for(self.runner.registered.wait(), 10))

    def close(self) -> None:
        self.served.cancel()
        self.loop.close()


def test_a_python_runner_answers_a_typescript_engine(node: str, server: PythonServer) -> None:
    runner = PythonRunner(server.target)
    try:
        report = run_ts(node, "engine", server.target)
        deadline = time.monotonic() + 60  # a bound on a hang: the assertion below says what was missed
        while len(runner.cancelled) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        runner.close()
    assert sorted(report["tools"]) == [["shout", "python-runner"], ["sleep", "python-runner"]]
    assert report["shout"] == {"id": "ts_call_1", "text": "FROM NODE FROM NODE", "isError": False}
    assert report["deadline"]["error"] == "DeadlineExceededError"
    assert report["abort"]["error"] == "CancelledError"
    assert report["missing"]["error"] == "NotFoundError"
    assert report["invalid"]["error"] == "ValidationError"
    assert ["call.id", "string.min_len"] in report["invalid"]["violations"]
    # The deadline and the abort both reached the Python tool, which was cancelled.
    assert runner.cancelled == [30, 30]


# --- a TypeScript subscriber across a Python server restart --------------------------------------------------------


def test_a_typescript_subscriber_resumes_across_a_server_restart(node: str, tmp_path: Path) -> None:
    server = PythonServer(ServerConfig(db=str(tmp_path / "restart.db")))
    session = "ts-resume"
    sent: list[str] = []
    subscriber: TsProcess | None = None
    try:
        with Client(server.target, timeout=10) as client:
            for i in range(3):
                message = am.UserMessage.text(f"before {i}", id=f"before-{i}")
                client.append(session, message)
                sent.append(message.id)
        subscriber = TsProcess(node, "subscriber", server.target, session, "8")
        seen = [subscriber.wait_for("offset") for _ in range(3)]

        server.stop()
        reconnects = [subscriber.wait_for("reconnect", timeout=60)]  # it found the server gone and retries
        server.start()
        with Client(server.target, timeout=10) as client:
            for i in range(5):
                message = am.UserMessage.text(f"after {i}", id=f"after-{i}")
                client.append(session, message)
                sent.append(message.id)
        while len(seen) < 8:
            line = subscriber.next()
            if "reconnect" in line:
                reconnects.append(line)
            elif "offset" in line:
                seen.append(line)
        assert subscriber.wait_for("done")["done"] == 8
        assert subscriber.finish() == 0
    finally:
        if subscriber is not None:
            subscriber.stop()
        server.close()
    assert [line["offset"] for line in seen] == [str(i) for i in range(1, 9)]
    assert [line["id"] for line in seen] == sent
    assert reconnects, "the subscriber never reconnected: the restart was not exercised"
    assert all(line["reconnect"] == "3" for line in reconnects)


def test_a_typescript_subscriber_of_a_deleted_session_ends_not_found(node: str, server: PythonServer) -> None:
    session = "ts-doomed"
    with Client(server.target, timeout=10) as client:
        client.append_many(session, [am.UserMessage.text(f"m{i}", id=f"m{i}") for i in range(3)])
        subscriber = TsProcess(node, "subscriber", server.target, session, "100")
        try:
            assert [subscriber.wait_for("offset")["offset"] for _ in range(3)] == ["1", "2", "3"]
            assert client.delete_session(session) == 3
            assert subscriber.wait_for("ended")["ended"] == "NotFoundError"
            assert subscriber.wait_for("done")["done"] == 3
            assert subscriber.finish() == 0
        finally:
            subscriber.stop()


def test_a_typescript_append_is_retried_until_the_server_is_back(node: str, tmp_path: Path) -> None:
    server = PythonServer(ServerConfig(db=str(tmp_path / "retry.db")))
    appender: TsProcess | None = None
    try:
        server.stop()
        appender = TsProcess(node, "retry", server.target)
        appender.wait_for("trying")
        time.sleep(0.5)  # a few attempts fail: nothing listens
        server.start()
        assert appender.wait_for("offset", timeout=20) == {"offset": "1", "again": "1"}
        assert appender.finish() == 0
        with Client(server.target, timeout=10) as client:
            assert [item.message.id for item in client.history("retried")] == ["retried-1"]
    finally:
        if appender is not None:
            appender.stop()
        server.close()


def test_the_typescript_session_calls(node: str, server: PythonServer) -> None:
    report = run_ts(node, "sessions", server.target)
    assert report["appendMany"] == ["1", "2", "3", "4"]
    assert report["appendManyAgain"] == ["1", "2", "3", "4"]  # the same messages again: the same offsets
    assert report["appendAgain"] == "1"
    assert report["listed"] == ["1:u1", "2:a1", "3:u2", "4:a2"]
    branched = report["branched"]
    assert branched["offset"] == "5"
    assert (branched["dict"]["role"], branched["dict"]["parent_id"], branched["dict"]["from_id"]) == (
        "branch_summary",
        "a1",
        "a2",
    )
    assert report["context"] == ["u1", "a1", "b1", "u3"]
    assert report["contextAtA2"] == ["u1", "a1", "u2", "a2"]
    compacted = report["compacted"]["dict"]
    assert compacted["role"] == "compaction_summary"
    assert (compacted["id"], compacted["tokens_before"], compacted["first_kept_id"]) == ("k1", 500, "u3")
    assert compacted["provider_state"] == {
        "provider": "openai",
        "api": "openai-responses",
        "type": "compaction",
        "data": "ENC",
    }
    assert report["contextAfterCompaction"] == ["k1", "u3"]
    assert report["sessions"] == [["tree", "7"]]
    assert report["branchGhost"]["error"] == "NotFoundError"
    assert report["compactBadKeep"] == {"error": "ValidationError", "rules": ["session.first_kept_on_path"]}
    assert report["contextGhost"]["error"] == "NotFoundError"
    assert report["conflict"]["error"] == "ConflictError"
    assert report["badSession"] == {"error": "ValidationError", "rules": ["string.pattern"]}
    assert report["deleted"] == [True, "2"]
    assert report["deletedAgain"] == [False, "0"]  # idempotent
    assert report["listDeleted"]["error"] == "NotFoundError"
    # A session that does not exist (deleted, or never written): reads are NOT_FOUND, as in Python and the CLI.
    assert report["contextDeleted"]["error"] == report["contextNever"]["error"] == "NotFoundError"
    assert report["reused"] == "1"  # the id and the message id start a new session
    assert report["badDelete"] == {"error": "ValidationError", "rules": ["string.pattern"]}
    # What the TypeScript client wrote is what Python reads.
    with Client(server.target, timeout=10) as client:
        history = [item.message for item in client.history("tree")]
    assert [m.id for m in history] == ["u1", "a1", "u2", "a2", "b1", "u3", "k1"]
    assert message_to_dict(history[6]) == compacted


def test_a_typescript_build_context_reads_a_context_larger_than_one_reply(node: str) -> None:
    server = PythonServer(ServerConfig(db=None, max_message_bytes=256 * 1024))
    try:
        report = run_ts(node, "context", server.target, "12", str(60_000))
    finally:
        server.close()
    # 12 x 60 KB cannot come in one 256 KiB reply: the client read the parts, all of them, in order.
    assert report["ids"] == [f"big-{i}" for i in range(12)]


# --- a TypeScript publishStream, a Python live subscriber ----------------------------------------------------------


def test_a_typescript_publish_stream_folds_the_same_in_python(node: str, server: PythonServer) -> None:
    session = "ts-live"
    events: list[Any] = []
    logged: list[Logged] = []
    subscribed = threading.Event()
    with Client(server.target, timeout=10) as client:
        client.append(session, am.UserMessage.text("What is the weather in Paris?", id="question"))

    def follow() -> None:
        with Client(server.target, timeout=30) as client:
            for item in client.subscribe(session, live_events=True, timeout=30):
                if isinstance(item, Live):
                    events.append(item.event)
                elif item.message.id == "question":
                    subscribed.set()  # the subscription is open on the server: live events will reach it
                else:
                    logged.append(item)
                    return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    assert subscribed.wait(10)
    report = run_ts(node, "publisher", server.target, session)
    follower.join(30)
    assert not follower.is_alive()

    assert len(events) == report["events"]
    folded = StreamAccumulator().extend(events).finish()
    ts_fold = json_format.ParseDict(report["local"], message_pb2.Message())
    assert folded.pb == ts_fold
    assert json_format.MessageToDict(folded.pb) == report["local"] == report["logged"]
    assert [item.offset for item in logged] == [int(report["offset"])]
    assert logged[0].message.pb == ts_fold
    assert folded.tool_calls()[0].args == {"city": "Paris", "unit": "C"}
    # v1.1 content crossed too: a hosted search and its results, a cited text block with logprobs.
    assert [call.name for call in folded.hosted_tool_calls()] == ["web_search"]
    assert folded.hosted_tool_results()[0].search_results[0].url == "https://example.com/paris"
    text = folded.pb.assistant.content[3].text
    assert (text.citations[0].cited_text, text.logprobs[0].token) == ("Paris", "Let")
    assert dict(folded.pb.assistant.usage.hosted_tool_requests) == {"web_search": 1}


# --- the seed-1 dict form ------------------------------------------------------------------------------------------


def test_the_typescript_dict_form_is_pythons(node: str) -> None:
    report = run_ts(node, "dict_form", str(VECTORS))
    manifest = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
    compared = 0
    for entry in manifest:
        if entry["violations"] or entry["type"] not in ("agentmsg.v1.Message", "agentmsg.v1.Conversation"):
            continue
        data = (VECTORS / entry["binary"]).read_bytes()
        if entry["type"] == "agentmsg.v1.Message":
            messages = [am.message_from_proto(message_pb2.Message.FromString(data))]
        else:
            messages = [am.message_from_proto(m) for m in message_pb2.Conversation.FromString(data).messages]
        result = report[entry["name"]]
        dicts = [message_to_dict(m) for m in messages]
        assert result["dicts"] == dicts, entry["name"]
        # The import by the same rules: Python's message_from_dict of the dict, field for field.
        back = [message_pb2.Message.FromString(base64.b64decode(text)) for text in result["back"]]
        assert back == [message_from_dict(d).pb for d in dicts], f"{entry['name']}: messageFromDict differs"
        compared += len(messages)
    assert compared >= 10


# --- TLS and bearer tokens -----------------------------------------------------------------------------------------


def test_a_typescript_client_over_tls_with_a_token(node: str, tmp_path: Path) -> None:
    ca = trustme.CA()
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    server = PythonServer(
        ServerConfig(
            db=None,
            tls_cert=leaf.cert_chain_pems[0].bytes(),
            tls_key=leaf.private_key_pem.bytes(),
            tokens=["s3cret"],
        )
    )
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca.cert_pem.bytes())
    try:
        report = run_ts(node, "secure", server.target, str(ca_file), "s3cret")
    finally:
        server.close()
    assert report == {"right": "offset 1", "wrong": "UnauthenticatedError", "none": "UnauthenticatedError"}


# --- the README's and docs/typescript.md's examples, and the demo --------------------------------------------------

EXAMPLES = {
    # page: (the heading the example's js block follows, a pattern its output must match)
    "README.md": (
        "## An example in TypeScript",
        r"#1 What is 2 \+ 40\?\n#2 42\n\{\"contents\":\[\{\"role\":\"user\".*\n",
    ),
    "docs/typescript.md": ("# TypeScript", r"#2: Let me add\. -> 42\n"),
}


@pytest.mark.parametrize("page", sorted(EXAMPLES))
def test_a_pages_example_runs_as_written(node: str, server: PythonServer, page: str) -> None:
    heading, expected = EXAMPLES[page]
    example_block = re.compile(re.escape(heading) + r"\n.*?```js\n(?P<code>.*?)```", re.DOTALL)
    found = example_block.search((ROOT / page).read_text(encoding="utf-8"))
    assert found is not None, f"{page} has no js example after {heading!r}"
    # In the repository (as the page says), where `@agentmsg/sdk` resolves to the workspace package.
    cache = ROOT / ".cache"
    cache.mkdir(exist_ok=True)
    example = cache / f"page-example-{os.getpid()}.mjs"
    example.write_text(found.group("code"), encoding="utf-8")
    try:
        done = subprocess.run(
            [node, str(example)],
            cwd=ROOT,
            env={**os.environ, "AGENTMSG_TARGET": server.target},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        example.unlink()
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(expected, done.stdout), done.stdout


def test_the_make_run_ts_demo_runs_end_to_end(node: str) -> None:
    done = subprocess.run(
        [node, str(DIST / "examples" / "demo.js")],
        cwd=ROOT,
        env={**os.environ, "AGENTMSG_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[ts-run] serving get_weather" in out
    assert "[engine] tool answered: 14°C and light rain" in out
    assert out.count("the live fold equals the logged message") == 2
    assert "TypeScript demo finished" in out
    # gRPC core's informational lines (the Python server's "Got goaway [8]" as each Node client closes) stay out.
    assert "goaway" not in (out + done.stderr).lower()
