"""The pages' Node blocks that no other test runs, run as written (issue 33): each is taken from its page by the
heading it follows, written into the repository (where ``node_modules`` resolves, as the page's reader has it) and run
with Node against a server this test starts; the only code added is what observes it (a last line printing a result,
and for docs/ui-streams.md the ``show`` the block leaves to the reader's UI).

- docs/json-schema.md, "Using it": Ajv 2020 over schema/agentmsg.v1.schema.json passes a message and refuses one
  without its timestamp, naming the field.
- docs/service.md, "From another language": the @grpc/grpc-js client appends a message to a Python server and prints
  the offset the server gave it; the message is in the session.
- docs/ui-streams.md, "The endpoints": @ag-ui/client's HttpAgent hydrates a session, sends a user message and shows a
  Python engine's answer delta by delta; the AI SDK's DefaultChatTransport, as the block configures it, sends only the
  last message to the session's URL and reads the next answer.

tests/service/test_readme.py's guard holds the table of which test runs which block.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from nodetools import ROOT, TIMEOUT, require_node
from serverproc import ServerProcess

from agentmsg import AssistantMessage, StopReason, TextContent, UserMessage
from agentmsg.service import Client
from agentmsg.streaming import events_from_message

GRPC_ADDRESS = "127.0.0.1:50051"  # what the pages write; replaced by the test server's
HTTP_ADDRESS = "127.0.0.1:8080"


def page_block(page: str, heading: str) -> str:
    """The first ```js block after ``heading`` on ``page``."""
    found = re.search(re.escape(heading) + r"\n.*?```js\n(?P<code>.*?)```", (ROOT / page).read_text("utf-8"), re.DOTALL)
    assert found is not None, f"{page} has no js block after {heading!r}"
    return found.group("code")


def run_block(node: str, code: str) -> Any:
    """Run ``code`` as an ES module from the repository's root; the JSON its last line prints."""
    cache = ROOT / ".cache"
    cache.mkdir(exist_ok=True)
    script = cache / f"doc-block-{os.getpid()}-{threading.get_ident()}.mjs"
    script.write_text(code, encoding="utf-8")
    try:
        done = subprocess.run(
            [node, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    finally:
        script.unlink()
    assert done.returncode == 0, f"node exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def grpc_server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def http_server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory", "--http", "0")
    try:
        yield process
    finally:
        process.stop()


# --- docs/json-schema.md ---------------------------------------------------------------------------------------------

SCHEMA_CHECK = """
const good = { id: "m1", timestamp: "2026-01-02T03:04:05Z", user: { content: [{ text: { text: "hi" } }] } };
const bad = { id: "m2", user: { content: [{ text: { text: "hi" } }] } };
const verdicts = [good, bad].map((m) => validateMessage(m));
console.log(JSON.stringify({ verdicts, errors: validateMessage.errors }));
"""


def test_the_json_schema_pages_ajv_block_passes_a_message_and_refuses_one_without_timestamp() -> None:
    node = require_node("ajv")
    printed = json.loads(run_block(node, page_block("docs/json-schema.md", "## Using it") + SCHEMA_CHECK))
    assert printed["verdicts"] == [True, False]
    assert any("timestamp" in json.dumps(error) for error in printed["errors"]), printed["errors"]


# --- docs/service.md -------------------------------------------------------------------------------------------------


def test_the_service_pages_node_grpc_block_appends_a_message(grpc_server: ServerProcess) -> None:
    node = require_node("@grpc/grpc-js", "@grpc/proto-loader", "protobufjs")
    code = page_block("docs/service.md", "## From another language")
    assert GRPC_ADDRESS in code
    printed = run_block(node, code.replace(GRPC_ADDRESS, grpc_server.target))  # as written: it prints the offset
    assert printed == "offset 1\n"
    with Client(grpc_server.target, timeout=10) as client:
        logged = list(client.history("s1"))
    assert [(entry.offset, entry.message.id, entry.message.text_content()) for entry in logged] == [(1, "m1", "hi")]


# --- docs/ui-streams.md ----------------------------------------------------------------------------------------------

SHOW = "const shown = [];\nconst show = (delta) => shown.push(delta);\n"
UI_CHECK = """
const sent = await transport.sendMessages({
  chatId: "chat-1",
  messages: [
    { id: "u1", role: "user", parts: [{ type: "text", text: "Hi" }] },
    { id: "u3", role: "user", parts: [{ type: "text", text: "And Porto?" }] },
  ],
  trigger: "submit-message",
  messageId: undefined,
  abortSignal: undefined,
});
const chunks = [];
for await (const chunk of sent) chunks.push(chunk);
console.log(JSON.stringify({ messages: agent.messages, shown, chunks }));
"""
ANSWERS = {"And Lisbon?": "Lisbon: sunny, twenty-one degrees.", "And Porto?": "Porto: cloudy, eighteen degrees."}


def _engine(server: ServerProcess) -> threading.Thread:
    """A Python engine: when a user's question reaches the session, it streams its answer through the live relay."""

    def answered(client: Client) -> list[str]:
        return [entry.message.text_content() for entry in client.history("chat-1")]

    def run() -> None:
        with Client(server.target, timeout=10) as client:
            for number, (question, answer) in enumerate(ANSWERS.items()):
                deadline = time.monotonic() + TIMEOUT
                while question not in answered(client):
                    assert time.monotonic() < deadline, f"{question!r} never reached the session"
                    time.sleep(0.05)
                message = AssistantMessage(
                    [TextContent(answer)], stop_reason=StopReason.STOP, id=f"answer{number}", timestamp=10.0 + number
                )
                client.publish_stream("chat-1", events_from_message(message, chunk_size=6))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_ui_streams_pages_front_end_block_hydrates_sends_and_shows_deltas(http_server: ServerProcess) -> None:
    node = require_node("ai", "@ag-ui/client")
    with Client(http_server.target, timeout=10) as client:
        client.append_many(
            "chat-1",
            [
                UserMessage.text("Hi", id="u1", timestamp=1.0),
                AssistantMessage([TextContent("Hello!")], stop_reason=StopReason.STOP, id="a1", timestamp=2.0),
            ],
        )
    code = page_block("docs/ui-streams.md", "## The endpoints: a session as an AG-UI or AI SDK stream")
    assert HTTP_ADDRESS in code
    assert "show(" in code
    engine = _engine(http_server)
    printed = run_block(node, SHOW + code.replace(HTTP_ADDRESS, f"127.0.0.1:{http_server.http_port}") + UI_CHECK)
    engine.join(TIMEOUT)
    assert not engine.is_alive()
    got = json.loads(printed)
    # HttpAgent: hydrated, the question added, the answer shown delta by delta as it came
    assert [m["content"] for m in got["messages"]] == ["Hi", "Hello!", "And Lisbon?", ANSWERS["And Lisbon?"]]
    assert len(got["shown"]) > 1
    assert "".join(got["shown"]) == ANSWERS["And Lisbon?"]
    # DefaultChatTransport: the answer as UI-stream chunks, and only the last message was sent (no second "Hi")
    deltas = [c["delta"] for c in got["chunks"] if c["type"] == "text-delta"]
    assert "".join(deltas) == ANSWERS["And Porto?"]
    with Client(http_server.target, timeout=10) as client:
        texts = [entry.message.text_content() for entry in client.history("chat-1")]
    assert texts == ["Hi", "Hello!", "And Lisbon?", ANSWERS["And Lisbon?"], "And Porto?", ANSWERS["And Porto?"]]
