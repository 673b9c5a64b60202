"""The session viewer (``agentmsg serve --http`` at ``/``) in a real browser: Debian's Chromium, driven by Playwright.

The viewer is the TypeScript application in sdk/typescript/viewer, bundled by ``make viewer`` into the package's
``static/`` directory (built here when missing or older than its sources). These tests open it on the service's
own HTTP port and check what it shows: a session with a tool call paired with its result, a message opened
mid-generation (the text so far, then the rest, then the logged message), and untrusted text rendered inert.
"""

from __future__ import annotations

import json
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gates import skip_or_fail
from nodetools import ROOT
from test_browser import CHROMIUM, FLAGS, WAIT_MS, Service
from tstools import SDK, LoopThread

from agentmsg import AssistantMessage, CustomMessage, Provenance, ToolMessage, Usage, UsageCost, UserMessage, formats
from agentmsg.content import (
    AudioContent,
    DocumentContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from agentmsg.formats import ConversionReport
from agentmsg.service import Client, ServerConfig, create_server
from agentmsg.streaming import events_from_message

STATIC = ROOT / "src" / "agentmsg" / "service" / "http" / "static"
SOURCES = SDK / "viewer"
SHOTS = ROOT / ".cache" / "viewer-screenshots"

XSS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='a'\">a</a>",
]


def _built() -> Path:
    """The viewer's bundle, built when missing or older than any of its sources (``make test`` built it)."""
    bundle = STATIC / "viewer" / "viewer.js"
    newest = max(p.stat().st_mtime for p in [*SOURCES.rglob("*"), *(SDK / "src").rglob("*.ts")] if p.is_file())
    if not bundle.is_file() or bundle.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "viewer", "-w", "@agentmsg/sdk"], cwd=ROOT, check=True, timeout=300)
    return bundle


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not CHROMIUM.is_file():
        skip_or_fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium (as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright is not installed: pip install -e '.[dev]'")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    _built()
    # Same origin as the page: no CORS origin is needed, so none is allowed.
    running = Service(tmp_path_factory.mktemp("viewer") / "viewer.db", origin="http://127.0.0.1:1")
    try:
        yield running
    finally:
        running.close()


def _open(chromium: Any, service: Service, session: str) -> Any:
    page = chromium.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.problems = problems
    page.goto(f"{service.http}/#/sessions/{session}")
    return page


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_the_viewer_page_is_served_with_a_same_origin_only_policy(service: Service) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{service.http}/", timeout=10) as response:
        policy = response.headers["content-security-policy"]
        page = response.read().decode()
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert '<script type="module" src="viewer/viewer.js">' in page
    with urllib.request.urlopen(f"{service.http}/viewer/viewer.js", timeout=10) as response:
        assert response.headers["content-type"].startswith("text/javascript")
        assert b"hashchange" in response.read()  # the viewer's router


def _weather_session(service: Service) -> str:
    """A session of four messages: a question, thinking and a tool call, the tool's result, the answer."""
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    call = ToolCallContent("call-1", "get_weather", {"city": "Paris"})
    with Client(service.target) as client:
        client.append(
            session,
            UserMessage(
                [TextContent("What is the weather in **Paris**?"), AudioContent(b"RIFF", media_type="audio/wav")]
            ),
        )
        client.append(
            session,
            AssistantMessage(
                [ThinkingContent("The user wants the weather; ask the tool.", "sig-1"), call],
                stop_reason="tool_calls",
                provenance=Provenance(provider="anthropic", model="claude-test"),
            ),
        )
        client.append(
            session, ToolMessage.from_result(ToolResultContent("call-1", "18 °C, light rain", name="get_weather"))
        )
        usage = Usage(input_tokens=120, output_tokens=30, cache_read_tokens=100, cost=UsageCost(total=0.0015))
        client.append(
            session, AssistantMessage.text("It is 18 °C with light rain in Paris.", stop_reason="stop", usage=usage)
        )
    return session


def test_a_session_with_a_tool_call_renders_paired_with_its_result(chromium: Any, service: Service) -> None:
    page = _open(chromium, service, _weather_session(service))
    try:
        page.wait_for_selector(".tool-call .tool-result", timeout=WAIT_MS)
        call_box = page.locator(".tool-call").first
        assert "get_weather" in call_box.inner_text()
        assert "Paris" in call_box.locator("pre.json").inner_text()
        assert "18 °C, light rain" in call_box.locator(".tool-result").inner_text()
        thinking = page.locator("details.thinking").first
        assert thinking.get_attribute("open") is None  # collapsed
        assert "replays to anthropic claude-test" in thinking.locator("summary").inner_text()
        assert page.locator(".role-user strong").inner_text() == "Paris"  # Markdown, built as nodes
        assert page.locator(".role-user audio").get_attribute("src").startswith("blob:")  # inline, from its bytes
        assert page.locator("article.msg").count() == 4
        assert "It is 18 °C with light rain in Paris." in page.locator("article.msg").last.inner_text()
        footers = page.locator("footer.msg-foot").all_inner_texts()
        assert footers[0].startswith("usage not reported")  # the tool-call turn reported none: not 0
        assert footers[1].startswith("in 120 · out 30 · cache read 100 · cache write not reported · cost 0.0015")
        assert page.locator("p.usage").inner_text() == (
            "2 assistant messages read: in 120 · out 30 · cache read 100 · cache write not reported · cost 0.0015"
            " (1 without usage, 1 without cost)"
        )
        _shot(page, "tool-call")
        assert page.problems == []
    finally:
        page.close()


@pytest.mark.parametrize("format_name", ["openai-chat", "gemini"])
def test_what_the_model_sees_as_a_provider_request_equals_the_python_converter(
    chromium: Any, service: Service, format_name: str
) -> None:
    session = _weather_session(service)
    with Client(service.target) as client:
        leaf = client.build_context(session)[2]  # the tool's result: the path to it is the first three messages
        context = client.build_context(session, leaf=leaf.id)
    report = ConversionReport()
    expected = formats.write(format_name, context, report=report)
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector(".tool-call .tool-result", timeout=WAIT_MS)
        page.locator("article.msg", has_text="#3").locator("button.ctx").click()
        page.wait_for_selector("aside.context article.msg", timeout=WAIT_MS)  # BuildContext first
        assert page.locator("aside.context article.msg").count() == len(context) == 3
        page.locator("aside.context select.format").select_option(format_name)
        page.wait_for_selector("aside.context pre.preview", timeout=WAIT_MS)
        assert json.loads(page.locator("aside.context pre.preview").inner_text()) == expected
        shown = page.evaluate(
            "() => [...document.querySelectorAll('aside.context li.loss')].map((li) =>"
            " [li.querySelector('.path').textContent, li.querySelector('.what').textContent,"
            " li.querySelector('.reason').textContent])"
        )
        assert shown == [[loss.path or "<input>", loss.what, loss.reason] for loss in report.losses]
        assert report.losses  # thinking and its signature do not travel to these formats whole
        _shot(page, f"context-{format_name}")
        assert page.problems == []
    finally:
        page.close()


def test_a_page_opened_mid_generation_shows_the_text_so_far_then_the_rest(chromium: Any, service: Service) -> None:
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    answer = AssistantMessage(
        [ThinkingContent("Count them out loud."), TextContent("Streaming: one two three four five six seven eight.")],
        stop_reason="stop",
    )
    events = events_from_message(answer, chunk_size=6)
    half = len(events) // 2
    sent_half, go_on = threading.Event(), threading.Event()
    outcome: list[Any] = []

    def stream() -> Iterator[Any]:
        yield from events[:half]
        sent_half.set()
        if not go_on.wait(WAIT_MS / 1000):
            raise TimeoutError("the test never let the stream go on")
        yield from events[half:]

    def publish() -> None:
        with Client(service.target) as client:
            try:
                outcome.append(client.publish_stream(session, stream()))
            except Exception as exc:  # reported by the assertion below
                outcome.append(exc)

    with Client(service.target) as client:
        client.append(session, UserMessage.text("Count to eight."))
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    assert sent_half.wait(WAIT_MS / 1000)
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector("article.msg.live", timeout=WAIT_MS)
        so_far = page.locator("article.msg.live").inner_text()
        assert "Stream" in so_far  # the text so far
        assert page.locator("article.msg.live details.thinking").get_attribute("open") is not None  # open while live
        assert "Count them out loud." in so_far
        assert "eight." not in so_far
        _shot(page, "mid-generation")
        go_on.set()
        publisher.join(WAIT_MS / 1000)
        assert len(outcome) == 1, "the publisher never finished"
        assert not isinstance(outcome[0], Exception), outcome
        page.wait_for_function(
            "() => document.querySelectorAll('article.msg.live').length === 0 &&"
            " [...document.querySelectorAll('article.msg')].some((m) => m.innerText.includes('#2')"
            " && m.innerText.includes('seven eight.'))",
            timeout=WAIT_MS,
        )
        assert page.locator("article.msg").count() == 2
        assert page.locator("article.msg details.thinking").get_attribute("open") is None  # logged: collapsed
        assert page.problems == []
    finally:
        go_on.set()
        page.close()


def test_untrusted_text_tool_output_and_file_names_render_inert(chromium: Any, service: Service) -> None:
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    payload = "\n\n".join(XSS)
    with Client(service.target) as client:
        client.append(
            session,
            UserMessage(
                [TextContent(payload), DocumentContent(b"%PDF-1.4", media_type="application/pdf", filename=XSS[1])]
            ),
        )
        client.append(
            session, AssistantMessage([ToolCallContent("call-x", "fetch", {"url": XSS[0]})], stop_reason="tool_calls")
        )
        client.append(session, ToolMessage.from_result(ToolResultContent("call-x", payload, name="fetch")))
        client.append(
            session,
            CustomMessage(XSS[0], [TextContent(XSS[1])], details={"html": XSS[1], "href": "javascript:alert(1)"}),
        )
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector(".tool-call .tool-result", timeout=WAIT_MS)
        page.wait_for_selector(".document", timeout=WAIT_MS)
        app = page.locator("#app")
        assert app.locator("script").count() == 0
        assert app.locator("img").count() == 0
        assert page.evaluate(
            "() => [...document.querySelectorAll('#app article a:not(.offset)')].map((a) => a.protocol)"
        ) == [
            "blob:"  # the document's download link, named by the untrusted file name as text
        ]
        own = page.evaluate("() => [...document.querySelectorAll('#app article a.offset')].map((a) => a.href)")
        assert own
        assert all(href.startswith(f"{service.http}/#/sessions/{session}/") for href in own)
        assert (
            page.evaluate(
                "() => [...document.querySelectorAll('#app *')]"
                ".some((e) => e.getAttributeNames().some((n) => n.startsWith('on')))"
            )
            is False
        )
        text = app.inner_text()
        assert "<script>window.__pwned = 'script'</script>" in text
        assert "javascript:window.__pwned='link'" in text
        assert page.locator(".document").inner_text().count("<img src=x onerror=") == 1
        custom = page.locator("article.role-custom").inner_text()
        assert "<script>window.__pwned = 'script'</script>" in custom  # its type, as text
        assert '"href": "javascript:alert(1)"' in custom  # its details, as JSON text
        page.locator(".document a").click()  # a download, not a script
        assert page.evaluate("() => window.__pwned") is None
        _shot(page, "xss")
        assert page.problems == []
    finally:
        page.close()


def _long_session(service: Service, total: int, text: str = "message") -> str:
    """A session of ``total`` user messages ("message 1" ...), appended 1,000 at a time."""
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    with Client(service.target) as client:
        for start in range(0, total, 1_000):
            client.append_many(
                session, [UserMessage.text(f"{text} {i + 1}") for i in range(start, min(start + 1_000, total))]
            )
    return session


def _count_reads(page: Any) -> list[str]:
    """The page's ListMessages requests, as they are made."""
    reads: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if "ListMessages" in r.url else None)
    return reads


NODE_BOUND = 1_500  # elements in the whole page while 10,000 messages scroll by (one per message would be 10,000+)


def test_ten_thousand_messages_scroll_end_to_end_with_a_bounded_dom(chromium: Any, service: Service) -> None:
    total = 10_000
    session = _long_session(service, total)
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector("article.msg:not(.placeholder)", timeout=WAIT_MS)
        # One page read, the rest only counted: ListMessages pages, never the whole session.
        assert page.locator("#status").inner_text().startswith(f"{total} messages ({total - 200} not read yet)")
        most_rows = most_nodes = steps = 0
        while steps < 400:  # a bounded number of bounded steps, each up to 8 screens
            steps += 1
            page.wait_for_function(
                "() => document.querySelectorAll('article.placeholder').length === 0", timeout=WAIT_MS
            )
            most_rows = max(most_rows, page.locator("article.msg").count())
            most_nodes = max(most_nodes, page.evaluate("() => document.getElementsByTagName('*').length"))
            at_end = page.evaluate(
                "() => { const s = document.getElementById('messages');"
                " return s.scrollTop + s.clientHeight >= s.scrollHeight - 2; }"
            )
            if at_end and page.locator("article.msg", has_text=f"message {total}").count() == 1:
                break
            page.evaluate("() => { const s = document.getElementById('messages'); s.scrollTop += s.clientHeight * 8; }")
        assert page.locator("article.msg", has_text=f"message {total}").count() == 1
        assert f"#{total}" in page.locator("article.msg").last.inner_text()
        assert steps > 10  # it did scroll through, a bounded step at a time
        assert most_rows <= 40, f"{most_rows} message rows in the DOM at once"
        assert most_nodes <= NODE_BOUND, f"{most_nodes} elements in the page at once"
        assert page.problems == []
    finally:
        page.close()


def test_a_long_session_opened_at_the_top_is_live_at_once(chromium: Any, service: Service) -> None:
    total = 3_000
    session = _long_session(service, total)
    page = chromium.new_page()
    reads = _count_reads(page)
    page.goto(f"{service.http}/#/sessions/{session}")
    try:
        page.wait_for_selector("article.msg:not(.placeholder)", timeout=WAIT_MS)
        assert "message 1" in page.locator("article.msg").first.inner_text()
        # Appended now, far below the view: counted, not scrolled to, and no page of the middle is read for it.
        with Client(service.target) as client:
            client.append(session, UserMessage.text("appended while the top is read"))
        page.wait_for_selector("button.fresh:not([hidden])", timeout=WAIT_MS)
        assert page.locator("button.fresh").inner_text().startswith("1 new")
        assert len(reads) == 1, reads  # the first page only
        page.click("button.fresh")  # to the end: the last page of the log, then the new entry
        page.locator("article.msg", has_text="appended while the top is read").wait_for(timeout=WAIT_MS)
        assert f"#{total + 1}" in page.locator("article.msg").last.inner_text()
        page.wait_for_selector("button.fresh", state="hidden", timeout=WAIT_MS)
        assert len(reads) < total // 200, reads  # the pages at the end, not the 15 of the whole log
        # At the end, a new entry is shown and followed.
        with Client(service.target) as client:
            client.append(session, UserMessage.text("appended at the end"))
        page.locator("article.msg", has_text="appended at the end").wait_for(timeout=WAIT_MS)
        assert page.locator("button.fresh").is_hidden()
        assert f"#{total + 2}" in page.locator("article.msg").last.inner_text()
    finally:
        page.close()


def test_a_server_with_tokens_asks_for_one_and_then_shows_the_sessions(
    chromium: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _built()
    db = tmp_path_factory.mktemp("viewer-tokens") / "tokens.db"
    config = ServerConfig(port=0, db=str(db), http_port=0, tokens=["sekret"], grace=0.2)
    loop = LoopThread()
    running = loop.run(create_server(config))
    try:
        with Client(f"127.0.0.1:{running.port}", token="sekret") as client:
            client.append("guarded", UserMessage.text("behind a token"))
        page = chromium.new_page()
        try:
            page.goto(f"http://127.0.0.1:{running.http_port}/#/sessions/guarded")
            page.wait_for_selector("form.token", timeout=WAIT_MS)
            assert "UnauthenticatedError" in page.locator("form.token").inner_text()
            page.fill("form.token input", "sekret")
            page.click("form.token button")
            page.wait_for_selector("article.msg", timeout=WAIT_MS)
            assert "behind a token" in page.locator("article.msg").inner_text()
            assert page.evaluate("() => sessionStorage.getItem('agentmsg.viewer.token')") == "sekret"
        finally:
            page.close()
    finally:
        loop.run(running.stop(0.2))
        loop.close()


def test_a_deep_link_to_an_offset_survives_a_reload(chromium: Any, service: Service) -> None:
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    with Client(service.target) as client:
        client.append_many(session, [UserMessage.text(f"entry {i + 1}") for i in range(600)])
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector("article.msg", timeout=WAIT_MS)
        page.locator("article.msg", has_text="entry 2").first.locator("a.offset").click()  # each #n links to itself
        page.wait_for_function("() => location.hash.endsWith('/2')", timeout=WAIT_MS)
        page.goto(f"{service.http}/#/sessions/{session}/450")
        for attempt in ("opened", "reloaded"):
            page.wait_for_selector("article.msg.target", timeout=WAIT_MS)
            target = page.locator("article.msg.target")
            assert "entry 450" in target.inner_text(), attempt
            box, view = target.bounding_box(), page.locator("#messages").bounding_box()
            assert box is not None
            assert view is not None
            assert view["y"] - 1 <= box["y"] < view["y"] + view["height"], (attempt, box, view)
            if attempt == "opened":
                page.reload()
        assert page.problems == []
    finally:
        page.close()


def test_the_jsonl_export_holds_each_message_in_the_python_dict_form(chromium: Any, service: Service) -> None:
    session = _weather_session(service)
    with Client(service.target) as client:
        expected = [logged.message.to_dict() for logged in client.history(session)]
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector(".tool-call .tool-result", timeout=WAIT_MS)
        with page.expect_download(timeout=WAIT_MS) as download:
            page.click("button.export")
        assert download.value.suggested_filename == f"{session}.jsonl"
        lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in lines] == expected
        assert len(expected) == 4
        assert page.problems == []
    finally:
        page.close()


def test_the_make_run_demo_turn_appears_live(chromium: Any, service: Service) -> None:
    import asyncio
    import sys

    from agentmsg.service import demo

    runner = subprocess.Popen(  # the demo's tool runner, as `make run` starts it
        [sys.executable, "-m", "agentmsg.service.demo", "runner", service.target],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = _open(chromium, service, demo.SESSION)
    try:
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('no entries yet')")
        # Every live row's text as it changes, so what streamed can be checked after it was logged.
        page.evaluate(
            "() => { window.liveTexts = []; new MutationObserver(() => document.querySelectorAll('article.msg.live')"
            ".forEach((a) => window.liveTexts.push(a.innerText))).observe(document.getElementById('messages'),"
            " {subtree: true, childList: true, characterData: true}); }"
        )
        # The page follows the session: an entry appended now arrives through its subscription.
        with Client(service.target) as client:
            client.append(demo.SESSION, UserMessage.text("watching"))
        page.locator("article.msg", has_text="watching").wait_for(timeout=WAIT_MS)
        failed: list[BaseException] = []

        def turn() -> None:  # in its own thread: Playwright's sync API holds this one's event loop
            try:
                # Slower than `make run` (50 ms a chunk, not 10): a loaded machine may draw no frame in a
                # 10 ms step, and the part-way checks below need the browser to draw the stream mid-way.
                asyncio.run(demo.engine(service.target, pace=0.05))
            except BaseException as exc:  # reported below
                failed.append(exc)

        engine = threading.Thread(target=turn, daemon=True)
        engine.start()
        engine.join(WAIT_MS / 1000)
        assert not engine.is_alive(), "the demo's turn did not finish"
        assert failed == []
        page.wait_for_function(
            "() => [...document.querySelectorAll('article.msg')].some((m) => m.innerText.includes('#6')"
            " && m.innerText.includes('It is 14°C and light rain in Paris right now.'))",
            timeout=WAIT_MS,
        )
        assert page.locator("article.msg.live").count() == 0
        call = page.locator(".tool-call")
        assert "get_weather" in call.inner_text()
        assert "14°C and light rain" in call.locator(".tool-result").inner_text()  # paired with its result
        assert "replays to scripted scripted-model-1" in page.locator("details.thinking summary").inner_text()
        streamed = page.evaluate("() => window.liveTexts")
        assert any("The user wants" in text and "call the tool." not in text for text in streamed)  # thinking, part
        assert any("It is 14" in text and "right now." not in text for text in streamed)  # the answer, part
        _shot(page, "demo")
        # Only the first read's 404 (no session yet: the page then followed it), as the browser logs it.
        assert [p for p in page.problems if "ListMessages" not in p and "status of 404" not in p] == []
    finally:
        page.close()
        runner.terminate()
        runner.wait(10)


def _png(width: int, height: int) -> bytes:
    """A valid PNG of random pixels (it does not compress: width * height * 3 bytes and a little more)."""
    import os
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b"")


# Counts animation frames, and those drawn while an image of the page was still loading or decoding.
FRAME_COUNTER = """
window.__frames = 0; window.__pendingFrames = 0;
const tick = () => {
  window.__frames++;
  if ([...document.images].some((img) => !img.complete || img.naturalWidth === 0)) window.__pendingFrames++;
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"""

LOADS = """(url) => new Promise((done) => { const img = new Image(); img.onload = () => done(true);
img.onerror = () => done(false); img.src = url; })"""


def test_a_five_mib_image_renders_without_freezing_and_its_url_is_revoked_when_left(
    chromium: Any, service: Service
) -> None:
    from agentmsg.content import ImageContent

    png = _png(1_280, 1_366)
    assert len(png) >= 5 * 1024 * 1024
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    with Client(service.target) as client:
        client.append(session, UserMessage([TextContent("a large picture"), ImageContent(png, media_type="image/png")]))
        client.append(session, AssistantMessage.text("Noise.", stop_reason="stop"))
    page = chromium.new_page()
    page.add_init_script(FRAME_COUNTER)
    try:
        page.goto(f"{service.http}/#/sessions/{session}")
        page.wait_for_function(
            "() => { const img = document.querySelector('article.msg img');"
            " return img !== null && img.complete && img.naturalWidth === 1280; }",
            timeout=WAIT_MS,
        )
        # The page kept drawing frames while the image was read and decoded: it did not freeze.
        assert page.evaluate("() => window.__pendingFrames") > 0
        clicked = page.evaluate(
            "() => { let ran = false; const b = document.querySelector('button.export');"
            " b.addEventListener('click', (e) => { ran = true; e.stopImmediatePropagation(); }, {capture: true});"
            " b.click(); return ran; }"
        )
        assert clicked
        url = page.locator("article.msg img").get_attribute("src")
        assert url.startswith("blob:")
        assert page.evaluate(LOADS, url) is True
        # Its row drawn again (marked as the target of a deep link), the block keeps its one URL.
        page.evaluate(f"() => {{ location.hash = '#/sessions/{session}/1'; }}")
        page.wait_for_selector("article.msg.target img", timeout=WAIT_MS)
        assert page.locator("article.msg.target img").get_attribute("src") == url
        _shot(page, "large-image")
        page.evaluate("() => { location.hash = '#/'; }")
        page.wait_for_selector("ul.sessions", timeout=WAIT_MS)
        assert page.evaluate(LOADS, url) is False  # revoked once the session was left
    finally:
        page.close()


def test_citations_mark_the_span_they_support_and_list_their_sources_inert(chromium: Any, service: Service) -> None:
    from agentmsg.content import Citation

    text = "🌧 Paris is rainy in November. Bring an umbrella. Museums are open late."
    first = text.index("Paris")
    second = text.index("Bring")
    citations = [
        Citation.web(
            "https://example.org/paris-weather",
            "Paris weather",
            cited_text="November is among the wettest months",
            start_index=first,
            end_index=text.index("."),
        ),
        Citation.web(
            XSS[2][11:-1].replace("window.__pwned='link'", "alert(1)"),
            XSS[1],
            start_index=second,
            end_index=text.index(".", second) + 1,
        ),
        Citation.document(0, title="Travel guide", pages=(3, 5), cited_text="take an umbrella"),
    ]
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    with Client(service.target) as client:
        client.append(session, UserMessage.text("Weather in Paris?"))
        client.append(session, AssistantMessage([TextContent(text, citations=citations)], stop_reason="stop"))
    page = _open(chromium, service, session)
    try:
        page.wait_for_selector(".cite-sources", timeout=WAIT_MS)
        marks = page.evaluate(
            "() => [...document.querySelectorAll('mark.cite-span')].map((m) => [m.textContent, m.dataset.cites])"
        )
        assert marks == [["Paris is rainy in November", "1"], ["Bring an umbrella.", "2"]]  # code points, not UTF-16
        block = page.locator(".block.cited")
        assert block.get_attribute("data-cites") == "3"  # the document citation covers the whole block
        assert page.locator(".block.cited .cited-text").inner_text().startswith("🌧 Paris is rainy")
        sources = page.locator(".cite-sources li")
        assert sources.count() == 3
        link = sources.nth(0).locator("a")
        assert link.get_attribute("href") == "https://example.org/paris-weather"
        assert link.inner_text() == "Paris weather"
        assert "November is among the wettest months" in sources.nth(0).inner_text()
        unsafe = sources.nth(1)
        assert unsafe.locator("a").count() == 0  # a javascript: URL is shown as text, never linked
        assert "javascript:alert(1)" in unsafe.inner_text()
        assert "<img src=x onerror=" in unsafe.inner_text()  # the title, as text
        assert "Travel guide, pages 3-4" in sources.nth(2).inner_text()
        assert page.locator("#app img").count() == 0
        assert (
            page.evaluate(
                "() => [...document.querySelectorAll('#app *')]"
                ".some((e) => e.getAttributeNames().some((n) => n.startsWith('on')))"
            )
            is False
        )
        assert page.evaluate("() => window.__pwned") is None
        _shot(page, "citations")
        assert page.problems == []
    finally:
        page.close()


def test_a_live_stream_that_fails_unlogged_shows_its_error_and_stops_generating(
    chromium: Any, service: Service
) -> None:
    from agentmsg.streaming import StreamEvent

    session = f"viewer-{uuid.uuid4().hex[:8]}"
    answer = AssistantMessage([TextContent("This answer will never be finished, it breaks off.")], stop_reason="stop")
    events = events_from_message(answer, chunk_size=8)
    half = len(events) // 2
    sent_half, go_on = threading.Event(), threading.Event()
    outcome: list[Any] = []

    def stream() -> Iterator[Any]:
        yield from events[:half]
        sent_half.set()
        if not go_on.wait(WAIT_MS / 1000):
            raise TimeoutError("the test never let the stream go on")
        yield StreamEvent.text_delta(7, "a block that never started")  # the server refuses the stream here

    def publish() -> None:
        with Client(service.target) as client:
            try:
                outcome.append(client.publish_stream(session, stream()))
            except Exception as exc:  # expected: the stream is refused
                outcome.append(exc)

    with Client(service.target) as client:
        client.append(session, UserMessage.text("Say something long."))
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    page = _open(chromium, service, session)
    try:
        assert sent_half.wait(WAIT_MS / 1000)
        page.wait_for_selector("article.msg.live", timeout=WAIT_MS)
        assert page.locator("article.msg.live .badge.live").inner_text() == "generating"
        go_on.set()
        publisher.join(WAIT_MS / 1000)
        assert len(outcome) == 1, outcome
        assert isinstance(outcome[0], Exception), outcome
        page.wait_for_selector("article.msg.failed", timeout=WAIT_MS)
        failed = page.locator("article.msg.failed")
        assert failed.locator(".badge.live").count() == 0  # no longer "generating"
        assert "stream failed" in failed.inner_text()
        assert "block" in failed.locator(".block.error").inner_text()  # the server's reason, as relayed
        assert "This answer" in failed.inner_text()  # what it got to
        assert page.locator("article.msg").count() == 2
        with Client(service.target) as client:
            assert len(list(client.history(session))) == 1  # nothing was logged for it
    finally:
        go_on.set()
        page.close()


def test_a_hash_change_within_the_session_scrolls_without_reading_again(chromium: Any, service: Service) -> None:
    session = _long_session(service, 600, text="entry")
    page = chromium.new_page()
    reads = _count_reads(page)
    page.goto(f"{service.http}/#/sessions/{session}/10")
    try:
        page.wait_for_selector("article.msg.target", timeout=WAIT_MS)
        assert "entry 10" in page.locator("article.msg.target").inner_text()
        before = len(reads)
        page.evaluate(f"() => {{ location.hash = '#/sessions/{session}/150'; }}")
        page.wait_for_function(
            "() => { const t = document.querySelector('article.msg.target');"
            " return t !== null && t.innerText.includes('entry 150'); }",
            timeout=WAIT_MS,
        )
        box, view = page.locator("article.msg.target").bounding_box(), page.locator("#messages").bounding_box()
        assert box is not None
        assert view is not None
        assert view["y"] - 1 <= box["y"] < view["y"] + view["height"]
        assert page.locator("article.msg.target").count() == 1  # the mark moved
        assert len(reads) == before  # entry 150 is on the page already read: scrolled to, not read again
        page.evaluate(f"() => {{ location.hash = '#/sessions/{session}/480'; }}")
        page.wait_for_function(
            "() => document.querySelector('article.msg.target')?.innerText.includes('entry 480') === true",
            timeout=WAIT_MS,
        )
        assert len(reads) == before + 1  # its own page, once
    finally:
        page.close()


def test_usage_shows_a_reported_zero_as_0_and_an_absent_count_as_not_reported(chromium: Any, service: Service) -> None:
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    with Client(service.target) as client:
        client.append(session, UserMessage.text("Hi"))
        usage = Usage(input_tokens=12, output_tokens=3, cache_read_tokens=0, cache_write_tokens=0)
        client.append(session, AssistantMessage.text("Hello.", stop_reason="stop", usage=usage))
        client.append(session, AssistantMessage.text("Again.", stop_reason="stop", usage=Usage(output_tokens=2)))
    page = _open(chromium, service, session)
    try:
        page.wait_for_function("() => document.querySelectorAll('footer.msg-foot').length === 2", timeout=WAIT_MS)
        footers = page.locator("footer.msg-foot").all_inner_texts()
        assert footers[0].startswith("in 12 · out 3 · cache read 0 · cache write 0 · cost not reported")
        assert footers[1].startswith(
            "in not reported · out 2 · cache read not reported · cache write not reported · cost not reported"
        )
        assert page.locator("p.usage").inner_text() == (
            "2 assistant messages read: in 12 · out 5 · cache read 0 · cache write 0 · cost not reported"
        )
        assert page.problems == []
    finally:
        page.close()
