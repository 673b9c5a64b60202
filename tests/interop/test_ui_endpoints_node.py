"""The agent-UI endpoints read by the protocols' own clients in Node (from npm): ``@ag-ui/client``'s HttpAgent and
the AI SDK's ``DefaultChatTransport`` with ``readUIMessageStream`` (``tests/interop/ui_endpoints.mjs``).

A real server process (``agentmsg serve --memory --http 0``, or on a SQLite file across a restart) holds the
conversation of tests/ui/conversation.py; what each client ends with must be exactly what the Python converters
give for the same session. A Python engine's live message reaches both as deltas.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nodetools import HERE, ROOT, TIMEOUT, require_node
from serverproc import ServerProcess
from ui.conversation import conversation, image_turn

from agentmsg import AssistantMessage, StopReason, TextContent, ThinkingContent, UserMessage
from agentmsg.service import Client
from agentmsg.streaming import events_from_message
from agentmsg.ui import ConversionReport
from agentmsg.ui.ag_ui import to_ag_ui
from agentmsg.ui.ai_sdk import to_ui_messages


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _session() -> list[Any]:
    """The conversation (text, signed reasoning, parallel calls with results, a hosted search, citations, an image
    from the user) and a hosted image generation turn."""
    return [*conversation(), UserMessage.text("Draw it.", id="u2", timestamp=6.0), image_turn()]


@pytest.fixture
def node() -> str:
    return require_node("ai", "@ag-ui/client")


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory", "--http", "0")
    try:
        yield process
    finally:
        process.stop()


def _base(server: ServerProcess) -> str:
    return f"http://127.0.0.1:{server.http_port}"


def _node(node: str, *args: str, started: threading.Event | None = None, dropped: threading.Event | None = None) -> Any:
    """Run ui_endpoints.mjs; ``started`` is set when it says a live run's request was accepted, ``dropped`` when it
    says it went away mid-message."""
    with subprocess.Popen(
        [node, str(HERE / "ui_endpoints.mjs"), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        return _finish(process, args, started, dropped)


def _finish(
    process: subprocess.Popen[str],
    args: tuple[str, ...],
    started: threading.Event | None,
    dropped: threading.Event | None,
) -> Any:
    errors: list[str] = []
    output: list[str] = []

    def watch() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            errors.append(line)
            if line.strip() == "started" and started is not None:
                started.set()
            if line.strip() == "dropped" and dropped is not None:
                dropped.set()

    def collect() -> None:
        assert process.stdout is not None
        output.append(process.stdout.read())

    readers = [threading.Thread(target=watch, daemon=True), threading.Thread(target=collect, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"node ui_endpoints.mjs {args[0]} did not finish in {TIMEOUT} s; stderr:\n{''.join(errors)}")
    for reader in readers:
        reader.join(5)
    stdout = "".join(output)
    if process.returncode != 0:
        pytest.fail(f"node ui_endpoints.mjs {args[0]} exited with {process.returncode}; stderr:\n{''.join(errors)}")
    return json.loads(stdout)


def test_both_clients_hydrate_exactly_the_converters_messages(node: str, server: ServerProcess) -> None:
    messages = _session()
    with Client(server.target, timeout=10) as client:
        client.append_many("chat", messages)
    agui = _json(to_ag_ui(messages, report=ConversionReport()))  # citations are AG-UI's one loss here (reported)
    assert _node(node, "ag-ui", _base(server), "chat")["messages"] == agui
    report = ConversionReport()
    ui = _json(to_ui_messages(messages, report=report))
    assert not report.losses
    assert _node(node, "ai-sdk", _base(server), "chat")["messages"] == ui
    # the AI SDK's resumable-stream GET from after each user message reads to that turn's UIMessage
    assert _node(node, "ai-sdk-turn", _base(server), "chat", "2")["message"] == ui[2]
    assert _node(node, "ai-sdk-turn", _base(server), "chat", "6")["message"] == ui[4]
    assert _node(node, "ai-sdk-turn", _base(server), "chat", "")["message"] is None  # at rest: 204


def _engine(server: ServerProcess, started: threading.Event, answer: AssistantMessage) -> threading.Thread:
    """A Python engine: once the client's run is under way, it streams ``answer`` through the live relay."""

    def run() -> None:
        assert started.wait(TIMEOUT)
        with Client(server.target, timeout=10) as client:
            client.publish_stream("chat", events_from_message(answer, chunk_size=4))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _answer() -> AssistantMessage:
    return AssistantMessage(
        [ThinkingContent("Pixel art is quick."), TextContent("Done: one pixel, drawn in the finest detail.")],
        stop_reason=StopReason.STOP,
        id="live1",
        timestamp=8.0,
    )


def test_a_live_message_reaches_both_clients_as_deltas(node: str, server: ServerProcess) -> None:
    messages = conversation()
    with Client(server.target, timeout=10) as client:
        client.append_many("chat", messages)
    user = UserMessage.text("Draw it.", id="u2", timestamp=6.0)
    started = threading.Event()
    engine = _engine(server, started, _answer())
    got = _node(node, "ag-ui-run", _base(server), "chat", json.dumps(to_ag_ui([user])[0]), started=started)
    engine.join(TIMEOUT)
    texts = [e["delta"] for e in got["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(texts) > 1
    assert "".join(texts) == "Done: one pixel, drawn in the finest detail."
    assert _json(to_ag_ui([*messages, user, _answer()], report=ConversionReport())) == got["messages"]

    second = UserMessage.text("Again?", id="u3", timestamp=9.0)
    again = AssistantMessage(
        [TextContent("Again: the same pixel, once more.")], stop_reason=StopReason.STOP, id="live2"
    )
    started = threading.Event()
    engine = _engine(server, started, again)
    chat = _node(node, "ai-sdk-chat", _base(server), "chat", json.dumps(to_ui_messages([second])[0]), started=started)
    engine.join(TIMEOUT)
    deltas = [c["delta"] for c in chat["chunks"] if c["type"] == "text-delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "Again: the same pixel, once more."
    assert chat["message"] == _json(to_ui_messages([again])[0])


def test_a_client_opening_after_a_restart_hydrates_the_whole_session(node: str, tmp_path: Path) -> None:
    db = str(tmp_path / "chat.db")
    first = ServerProcess("--db", db, "--http", "0")
    try:
        with Client(first.target, timeout=10) as client:
            client.append_many("chat", _session())
    finally:
        first.stop()
    second = ServerProcess("--db", db, "--http", "0")
    try:
        assert _node(node, "ag-ui", _base(second), "chat")["messages"] == _json(
            to_ag_ui(_session(), report=ConversionReport())
        )
        assert _node(node, "ai-sdk", _base(second), "chat")["messages"] == _json(to_ui_messages(_session()))
    finally:
        second.stop()


def test_an_ai_sdk_client_gone_mid_message_resumes_the_turn(node: str, server: ServerProcess) -> None:
    """useChat's resume (``reconnectToStream``) after the client went away mid-message: the turn from its start,
    the rest of the message still being generated included, folds to exactly the converter's UIMessage."""
    with Client(server.target, timeout=10) as client:
        client.append_many("chat", conversation())
    answer = _answer()
    events = events_from_message(answer, chunk_size=4)
    half = len(events) // 2
    started, dropped = threading.Event(), threading.Event()

    def engine() -> None:
        def produce() -> Iterator[Any]:
            yield from events[:half]
            assert dropped.wait(TIMEOUT)  # the rest once the client went away and came back mid-message
            yield from events[half:]

        assert started.wait(TIMEOUT)
        with Client(server.target, timeout=TIMEOUT) as client:
            client.publish_stream("chat", produce())

    thread = threading.Thread(target=engine, daemon=True)
    thread.start()
    user = UserMessage.text("Draw it.", id="u2", timestamp=6.0)
    got = _node(
        node,
        "ai-sdk-drop",
        _base(server),
        "chat",
        json.dumps(to_ui_messages([user])[0]),
        started=started,
        dropped=dropped,
    )
    thread.join(TIMEOUT)
    assert [c["type"] for c in got["before"]][-1] == "text-delta"
    assert got["message"] == _json(to_ui_messages([answer])[0])
