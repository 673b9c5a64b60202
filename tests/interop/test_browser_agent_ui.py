"""docs/ui-streams.md's browser example (examples/agent-ui: a chat page on @ag-ui/client's HttpAgent) in a real
Chromium.

The page is bundled here with esbuild (from node_modules), served on its own origin, and pointed at a server whose
HTTP port allows that origin. It hydrates a session a Python client wrote, sends what is typed in its form, and shows
the answer a Python engine streams, delta by delta; its messages end as ``to_ag_ui`` gives the session.
Chromium and Playwright as in test_browser.py (skipped without them, failed under CI).
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nodetools import NODE_MODULES, ROOT, require_node
from test_browser import WAIT_MS, Service, chromium  # noqa: F401 - chromium: the fixture
from ui.conversation import conversation

from agentmsg import AssistantMessage, StopReason, TextContent
from agentmsg.service import Client
from agentmsg.streaming import events_from_message
from agentmsg.ui import ConversionReport
from agentmsg.ui.ag_ui import to_ag_ui

EXAMPLE = ROOT / "examples" / "agent-ui"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example page and its bundle, served on 127.0.0.1 (another origin than the service's)."""
    require_node("@ag-ui/client")
    root = tmp_path_factory.mktemp("agent-ui")
    (root / "index.html").write_text((EXAMPLE / "index.html").read_text())
    subprocess.run(
        [
            str(NODE_MODULES / ".bin" / "esbuild"),
            str(EXAMPLE / "chat.js"),
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={root / 'chat.bundle.js'}",
        ],
        cwd=ROOT,
        check=True,
        timeout=120,
    )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def service(tmp_path: Path, site: str) -> Iterator[Service]:
    running = Service(tmp_path / "agentmsg.db", site)
    try:
        yield running
    finally:
        running.close()


def _wait(page: Any, condition: str) -> None:
    try:
        page.wait_for_function(f"() => ({condition})(window.chat)", timeout=WAIT_MS)
    except Exception as exc:
        state = page.evaluate("() => window.chat && window.chat.state")
        pytest.fail(f"the page never had {condition}: {exc}\nstate: {state}")


def test_the_example_page_hydrates_sends_and_shows_the_answer_live(chromium: Any, site: str, service: Service) -> None:  # noqa: F811
    messages = conversation()
    with Client(service.target, timeout=10) as client:
        client.append_many("chat-1", messages)
    page = chromium.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{site}/index.html?server={service.http}&session=chat-1")
    _wait(page, "(chat) => chat && chat.ready")
    assert page.evaluate("() => window.chat.state.messages") == to_ag_ui(messages, report=ConversionReport())
    assert page.locator("#messages li").count() == len(page.evaluate("() => window.chat.state.messages"))

    page.fill("#text", "Is it raining in Oslo now?")
    page.click("button[type=submit]")
    answer = AssistantMessage(
        [TextContent("Yes: light rain in Oslo, 5 degrees, until the evening.")], stop_reason=StopReason.STOP, id="live1"
    )
    events = events_from_message(answer, chunk_size=6)
    half = len(events) // 2
    released = threading.Event()

    def first_then_rest() -> Iterator[Any]:
        yield from events[:half]
        assert released.wait(WAIT_MS / 1000)
        yield from events[half:]

    with Client(service.target, timeout=30) as engine:
        # the engine answers once the page's message is in the log
        for _ in range(200):
            if [e.message.id for e in engine.history("chat-1")][-1] != messages[-1].id:
                break
            threading.Event().wait(0.05)
        publisher = threading.Thread(target=lambda: engine.publish_stream("chat-1", first_then_rest()), daemon=True)
        publisher.start()
        _wait(page, "(chat) => chat.state.deltas.length > 0")  # the first deltas are on the page while it is made
        assert page.locator("#live").inner_text().startswith("Yes")
        released.set()
        publisher.join(30)
        _wait(page, "(chat) => chat.state.runs === 2")
        logged = [e.message for e in engine.history("chat-1")]
    state = page.evaluate("() => window.chat.state")
    assert state["error"] is None
    assert "".join(state["deltas"]) == "Yes: light rain in Oslo, 5 degrees, until the evening."
    assert len(state["deltas"]) > 1
    assert state["messages"] == to_ag_ui(logged, report=ConversionReport())
    assert page.locator("#messages li").last.inner_text() == "assistant: " + answer.text_content()
    assert problems == []
    page.close()
