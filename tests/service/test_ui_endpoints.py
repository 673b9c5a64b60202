"""The agent-UI endpoints on the HTTP port (agentmsg.service.http.ui), read as raw server-sent events.

Each stream hydrates from the log, follows it live, and resumes from ``Last-Event-ID`` with nothing lost or
repeated; input appends the user's message idempotently; errors get a status and the protocol's error form.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from conftest import ServerThread
from ui.conversation import conversation

from agentmsg import AssistantMessage, StopReason, TextContent, ThinkingContent, UserMessage
from agentmsg.service import Client
from agentmsg.service.access import Scope
from agentmsg.streaming import events_from_message
from agentmsg.ui import ConversionReport
from agentmsg.ui.ag_ui import messages_snapshot, to_ag_ui
from agentmsg.ui.ai_sdk import to_ui_messages, ui_message_chunks

WAIT = 10.0  # seconds any one read may take


def _events(response: httpx.Response) -> Iterator[tuple[str | None, Any]]:
    """(id, parsed data) of each SSE event of a streamed response."""
    event_id: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                text = "\n".join(data)
                yield event_id, text if text == "[DONE]" else json.loads(text)
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def _url(server: ServerThread, path: str) -> str:
    return f"http://127.0.0.1:{server.running.http_port}{path}"


def _seed(server: ServerThread, session: str, messages: list[Any]) -> None:
    with Client(server.target, timeout=10) as client:
        client.append_many(session, messages)


@pytest.fixture
def server(make_server: Callable[..., ServerThread]) -> ServerThread:
    return make_server(db=None, http_port=0)


def test_ag_ui_hydrates_the_session_and_finishes_at_rest(server: ServerThread) -> None:
    _seed(server, "s", conversation())
    with httpx.stream("GET", _url(server, "/ag-ui/sessions/s?runId=r1"), timeout=WAIT) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(_events(response))
    assert [e["type"] for _, e in events] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert events[0][1] == {"type": "RUN_STARTED", "threadId": "s", "runId": "r1"}
    assert events[1][1] == json.loads(json.dumps(messages_snapshot(conversation(), report=ConversionReport())))
    assert events[1][0] == "5"  # the offset of the last entry


def test_ai_sdk_messages_hydrate_and_resume_stream_replays_the_turn(server: ServerThread) -> None:
    messages = conversation()
    _seed(server, "s", messages)
    expected = json.loads(json.dumps(to_ui_messages(messages, report=ConversionReport())))
    got = httpx.get(_url(server, "/ai-sdk/sessions/s/messages"), timeout=WAIT)
    assert got.status_code == 200
    assert got.json() == expected
    assert got.headers["x-agentmsg-offset"] == "5"
    # at rest, the resumable-stream GET has nothing to resume
    assert httpx.get(_url(server, "/ai-sdk/sessions/s/stream"), timeout=WAIT).status_code == 204
    # from after the user's message (offset 2): the whole turn, as ui_message_chunks gives it
    headers = {"last-event-id": "2"}
    with httpx.stream("GET", _url(server, "/ai-sdk/sessions/s/stream"), headers=headers, timeout=WAIT) as response:
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        chunks = [data for _, data in _events(response)]
    assert chunks[-1] == "[DONE]"
    turn = ui_message_chunks(messages[2:], report=ConversionReport())
    assert chunks[:-1] == json.loads(json.dumps(turn))


def _publish(server: ServerThread, session: str, message: AssistantMessage, gate: threading.Event) -> threading.Thread:
    """Publish ``message``'s events from a thread, pausing after the first half until ``gate`` is set."""
    events = events_from_message(message, chunk_size=3)
    half = len(events) // 2

    def produce() -> Iterator[Any]:
        yield from events[:half]
        assert gate.wait(WAIT)
        yield from events[half:]

    def run() -> None:
        with Client(server.target, timeout=WAIT) as client:
            client.publish_stream(session, produce())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _live_answer() -> AssistantMessage:
    return AssistantMessage(
        [ThinkingContent("Short answer."), TextContent("It is sunny in Lisbon today, 24 degrees.")],
        stop_reason=StopReason.STOP,
        id="live1",
    )


def test_ai_sdk_chat_appends_then_streams_deltas_and_resumes_mid_message(server: ServerThread) -> None:
    _seed(server, "s", conversation())
    user = UserMessage.text("And Lisbon?", id="u9")
    request = {"id": "s", "messages": to_ui_messages([user]), "trigger": "submit-message"}
    gate = threading.Event()
    first: list[tuple[str | None, Any]] = []
    with httpx.stream("POST", _url(server, "/ai-sdk/sessions/s"), json=request, timeout=WAIT) as response:
        assert response.status_code == 200  # the user's message is appended: the engine answers it
        publisher = _publish(server, "s", _live_answer(), gate)
        for event_id, chunk in _events(response):
            first.append((event_id, chunk))
            if chunk.get("type") == "text-delta":
                break  # the client goes away mid-message
    # the user's message is in the log once, even when the request is sent again
    with Client(server.target, timeout=WAIT) as client:
        assert [entry.message.id for entry in client.history("s")][-1] == "u9"
    last_id = next(i for i, _ in reversed(first) if i)
    gate.set()
    with httpx.stream(
        "GET", _url(server, "/ai-sdk/sessions/s/stream"), headers={"last-event-id": last_id}, timeout=WAIT
    ) as response:
        rest = [chunk for _, chunk in _events(response)]
    publisher.join(WAIT)
    chunks = [c for _, c in first] + rest[:-1]
    assert [c["type"] for c in chunks].count("start") == 1
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    thinking = "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta")
    assert text == "It is sunny in Lisbon today, 24 degrees."
    assert thinking == "Short answer."
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1]["finishReason"] == "stop"
    assert rest[-1] == "[DONE]"


def test_ag_ui_run_input_resumed_mid_message_and_after_it_finished(server: ServerThread) -> None:
    _seed(server, "s", conversation())
    user = UserMessage.text("And Lisbon?", id="u9")
    run_input = {"threadId": "s", "runId": "run-1", "messages": to_ag_ui([user]), "tools": [], "context": []}
    gate = threading.Event()
    first: list[tuple[str | None, Any]] = []
    with httpx.stream("POST", _url(server, "/ag-ui/sessions/s"), json=run_input, timeout=WAIT) as response:
        assert response.status_code == 200
        publisher = _publish(server, "s", _live_answer(), gate)
        for event_id, event in _events(response):
            first.append((event_id, event))
            if event["type"] == "REASONING_MESSAGE_CONTENT":
                break
    gate.set()
    publisher.join(WAIT)  # the message is logged before the client comes back
    last_id = next(i for i, _ in reversed(first) if i)
    with httpx.stream(
        "GET", _url(server, "/ag-ui/sessions/s?runId=run-1"), headers={"last-event-id": last_id}, timeout=WAIT
    ) as response:
        rest = [event for _, event in _events(response)]
    events = [e for _, e in first] + rest
    reasoning = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "live1")
    assert reasoning == "Short answer."
    assert text == "It is sunny in Lisbon today, 24 degrees."
    assert [e["type"] for e in events].count("TEXT_MESSAGE_START") == 1  # the user's message is in the snapshot
    assert rest[0]["type"] == "RUN_STARTED"
    assert rest[-1]["type"] == "RUN_FINISHED"
    snapshot = rest[-2]
    assert snapshot["type"] == "MESSAGES_SNAPSHOT"
    assert snapshot["messages"][-1]["id"] == "live1"


def test_bad_and_unauthorised_requests_get_the_protocols_error_form(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, http_port=0, tokens=["admin"], grants={"acme": Scope.parse("acme:*")})
    with Client(server.target, timeout=WAIT, token="admin") as client:
        client.append("acme:1", UserMessage.text("hi", id="u1"))
    none = httpx.get(_url(server, "/ag-ui/sessions/acme:1"), timeout=WAIT)
    assert none.status_code == 401
    assert none.json()["type"] == "RUN_ERROR"
    assert none.json()["code"] == "UNAUTHENTICATED"
    other = httpx.get(_url(server, "/ai-sdk/sessions/globex:1/messages"), headers={"authorization": "Bearer acme"})
    assert other.status_code == 403
    assert other.json()["type"] == "error"
    missing = httpx.get(_url(server, "/ai-sdk/sessions/acme:2/messages"), headers={"authorization": "Bearer acme"})
    assert missing.status_code == 404
    assert "acme:2" in missing.json()["errorText"]
    bad = httpx.post(_url(server, "/ag-ui/sessions/acme:1"), content=b"{", headers={"authorization": "Bearer acme"})
    assert bad.status_code == 400
    assert bad.json()["type"] == "RUN_ERROR"
    wrong = httpx.post(
        _url(server, "/ag-ui/sessions/acme:1"),
        json={"threadId": "acme:9", "runId": "r", "messages": []},
        headers={"authorization": "Bearer acme"},
    )
    assert wrong.status_code == 400
    assert "threadId" in wrong.json()["message"]
    resume = httpx.get(
        _url(server, "/ai-sdk/sessions/acme:1/stream"), headers={"authorization": "Bearer acme", "last-event-id": "x"}
    )
    assert resume.status_code == 400
    assert "Last-Event-ID" in resume.json()["errorText"]
    ok = httpx.get(_url(server, "/ai-sdk/sessions/acme:1/messages"), headers={"authorization": "Bearer acme"})
    assert ok.status_code == 200
    assert ok.json()[0]["id"] == "u1"


def test_a_stream_opened_after_a_restart_hydrates_the_whole_session(
    make_server: Callable[..., ServerThread], tmp_path: Any
) -> None:
    db = str(tmp_path / "ui.db")
    first = make_server(db=db, http_port=0)
    _seed(first, "s", conversation())
    first.stop()
    second = make_server(db=db, http_port=0)
    with httpx.stream("GET", _url(second, "/ag-ui/sessions/s"), timeout=WAIT) as response:
        events = [e for _, e in _events(response)]
    assert events[1] == json.loads(json.dumps(messages_snapshot(conversation(), report=ConversionReport())))
    got = httpx.get(_url(second, "/ai-sdk/sessions/s/messages"), timeout=WAIT).json()
    assert got == json.loads(json.dumps(to_ui_messages(conversation(), report=ConversionReport())))


def test_each_stream_counts_against_the_servers_stream_budget(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, http_port=0, max_streams=1)
    _seed(server, "s", [UserMessage.text("hi", id="u1")])  # not at rest: a stream stays open for the answer
    with httpx.stream("GET", _url(server, "/ag-ui/sessions/s"), timeout=WAIT) as held:
        assert held.status_code == 200
        refused = httpx.get(_url(server, "/ai-sdk/sessions/s/stream"), timeout=WAIT)
        assert refused.status_code == 429
        assert refused.json()["errorText"].startswith("RESOURCE_EXHAUSTED")
        # a read that is not a stream is not counted
        assert httpx.get(_url(server, "/ai-sdk/sessions/s/messages"), timeout=WAIT).status_code == 200
    # the slot comes back when the client goes away
    for _ in range(100):
        with httpx.stream("GET", _url(server, "/ai-sdk/sessions/s/stream"), timeout=WAIT) as again:
            if again.status_code == 200:
                break
        threading.Event().wait(0.05)
    assert again.status_code == 200


def test_a_body_over_the_maximum_message_size_is_refused_unread(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, http_port=0, max_message_bytes=64 * 1024)
    big = {"id": "s", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "x" * 100_000}]}]}
    refused = httpx.post(_url(server, "/ai-sdk/sessions/s"), json=big, timeout=WAIT)
    assert refused.status_code == 400
    assert "larger than 65536 bytes" in refused.json()["errorText"]
    with Client(server.target, timeout=WAIT) as client:
        assert client.sessions() == []  # nothing was appended
