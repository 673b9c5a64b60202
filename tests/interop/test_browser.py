"""The TypeScript SDK's browser entry in a real browser: Debian's Chromium, driven by Playwright.

A page served here (sdk/typescript/interop/browser/, on its own origin) loads the SDK's browser bundle
(``make ts-bundle``: dist/browser/agentmsg-web.js) and talks to the service's HTTP port over Connect or gRPC-Web,
across origins (the server allows the page's origin with ``cors_origins``). It appends, follows the session through
a server restart (resuming after the last offset it saw: nothing lost or repeated), calls a tool a Python runner
serves, cancels one with an AbortSignal, and gets the server's errors as the SDK's classes.

Chromium comes from Debian (``make browser`` installs it as root), Playwright from the dev extra, launched with the
system executable: no browser is downloaded. Without either the tests skip; under CI they fail (tests/gates.py).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gates import skip_or_fail
from nodetools import ROOT
from tstools import SDK, LoopThread, built_sdk

from agentmsg import AssistantMessage, UserMessage
from agentmsg.service import Client, ServerConfig, ToolRunner, create_server
from agentmsg.streaming import events_from_message

CHROMIUM = Path("/usr/bin/chromium")
PAGE = SDK / "interop" / "browser"
BUNDLE = SDK / "dist" / "browser" / "agentmsg-web.js"
# No GPU, no sandbox (root), and none of Chromium's own traffic: this machine reaches no outside host.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
README = ROOT / "docs" / "typescript.md"  # where the browser example is
README_EXAMPLE = re.compile(r"## In the browser\n.*?```js\n(?P<code>.*?)```", re.DOTALL)
README_ADDRESS = "http://127.0.0.1:8080"
WAIT_MS = 20_000  # the longest a page condition is waited for


def _bundle() -> Path:
    """The SDK's browser bundle, built here when missing or older than the compiled SDK (``make test`` built it)."""
    built_sdk()
    compiled = max(p.stat().st_mtime for p in (SDK / "dist" / "src").rglob("*.js"))
    if not BUNDLE.is_file() or BUNDLE.stat().st_mtime < compiled:
        subprocess.run(["npm", "run", "--silent", "bundle", "-w", "@agentmsg/sdk"], cwd=ROOT, check=True, timeout=300)
    return BUNDLE


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium (Debian's) with a fresh user-data-dir, as a Playwright browser context."""
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


@dataclass(frozen=True)
class Site:
    origin: str  # http://127.0.0.1:PORT
    root: Path  # the directory it serves


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The page and the SDK's bundle served on 127.0.0.1 (its own port: another origin than the service's)."""
    bundle = _bundle()
    root = tmp_path_factory.mktemp("page")
    for source in (PAGE / "index.html", PAGE / "page.js", bundle, bundle.with_suffix(".js.map")):
        shutil.copy(source, root / source.name)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}", root)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class Service:
    """An agentmsg server with its HTTP port (Connect and gRPC-Web) on SQLite, restartable on the same ports."""

    def __init__(self, db: Path, origin: str) -> None:
        self.config = ServerConfig(port=0, db=str(db), http_port=0, cors_origins=[origin], grace=0.2)
        self.loop = LoopThread()
        self.running: Any = None
        self.start()

    def start(self) -> None:
        self.running = self.loop.run(create_server(self.config))
        self.config.port = self.running.port  # a restart binds the same ports
        self.config.http_port = self.running.http_port

    def stop(self) -> None:
        if self.running is not None:
            self.loop.run(self.running.stop(0.2))
            self.running = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.config.port}"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.config.http_port}"

    def close(self) -> None:
        self.stop()
        self.loop.close()


class Runner:
    """A Python ToolRunner serving ``add`` and ``wait``; records the ``wait`` calls it started and saw cancelled."""

    def __init__(self, target: str) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.runner = ToolRunner(target, name="python-runner")
        started, cancelled = self.started, self.cancelled

        @self.runner.tool
        def add(a: int, b: int) -> str:
            """Add two integers."""
            return str(a + b)

        @self.runner.tool
        async def wait(seconds: float) -> str:
            """Wait, then say so (the browser cancels it first)."""
            import asyncio

            started.set()
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "waited"

        self.runner.start()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, site: Site) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("store") / "agentmsg.db", site.origin)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="module")
def runner(service: Service) -> Iterator[Runner]:
    serving = Runner(service.target)
    try:
        yield serving
    finally:
        serving.runner.stop(0)


@contextlib.contextmanager
def opened(chromium: Any, origin: str, service: Service, session: str, **query: str) -> Iterator[Any]:
    """The page, following ``session`` on the service's HTTP port; its console errors are in ``page.problems``."""
    page = chromium.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.problems = problems
    params = "&".join(f"{key}={value}" for key, value in {"server": service.http, "session": session, **query}.items())
    page.goto(f"{origin}/index.html?{params}")
    page.wait_for_function("() => window.harness !== undefined", timeout=WAIT_MS)
    try:
        yield page
    finally:
        page.evaluate("() => window.harness.stop()")
        page.close()


def wait_until(page: Any, condition: str, arg: Any = None) -> None:
    """Wait for ``condition`` (a JS function of ``harness`` and ``arg``) to hold on the page, or fail saying so."""
    try:
        page.wait_for_function(f"(arg) => ({condition})(window.harness, arg)", arg=arg, timeout=WAIT_MS)
    except Exception as exc:
        state = page.evaluate("() => window.harness.state")
        pytest.fail(f"the page never had {condition}: {exc}\nstate: {state}\nconsole: {page.problems}")


def session_id() -> str:
    return f"browser-{uuid.uuid4().hex[:8]}"


def test_subscription_resumes_after_the_server_restarts(chromium: Any, site: Site, service: Service) -> None:
    session = session_id()
    with opened(chromium, site.origin, service, session) as page:
        assert page.evaluate("() => window.harness.append('one')") == {"offset": 1}
        assert page.evaluate("() => window.harness.append('two')") == {"offset": 2}
        wait_until(page, "(h) => h.state.received.length === 2")

        service.stop()
        # The page sees the server gone and keeps reconnecting, after offset 2, until it is back.
        wait_until(page, "(h) => h.state.reconnects.length >= 1")
        service.start()
        with Client(service.target) as grpc_client:  # an append over gRPC while the page reconnects over HTTP
            assert grpc_client.append(session, UserMessage.text("three")) == 3
        assert page.evaluate("() => window.harness.append('four')") == {"offset": 4}

        wait_until(page, "(h) => h.state.received.length >= 4")
        state = page.evaluate("() => window.harness.state")
        assert [(m["offset"], m["text"]) for m in state["received"]] == [
            (1, "one"),
            (2, "two"),
            (3, "three"),
            (4, "four"),
        ]
        assert {r["after"] for r in state["reconnects"]} == {2}
        assert state["ended"] is None
        assert [li.strip() for li in page.locator("#log li").all_inner_texts()] == ["one", "two", "three", "four"]
        assert page.problems == [] or all("Failed to load resource" in p for p in page.problems), page.problems


def test_live_events_from_a_python_publisher_fold_in_the_browser(chromium: Any, site: Site, service: Service) -> None:
    session = session_id()
    with opened(chromium, site.origin, service, session, live="1") as page:
        # The page's own append coming back through its subscription shows it is following before the stream starts.
        assert page.evaluate("() => window.harness.append('go')") == {"offset": 1}
        wait_until(page, "(h) => h.state.received.length === 1")
        answer = AssistantMessage.text("The answer is 42, sent in small pieces.", stop_reason="stop")
        events = events_from_message(answer, chunk_size=4)
        with Client(service.target) as grpc_client:
            assert grpc_client.publish_stream(session, events)[0] == 2
        wait_until(page, "(h) => h.state.received.length === 2")
        wait_until(page, "(h, n) => h.state.live.length === n", len(events))
        assert page.evaluate("() => window.harness.foldLive()") == {"text": answer.text_content(), "same": True}
        assert page.problems == []


@pytest.mark.parametrize(
    "query",
    [{"protocol": "connect", "format": "binary"}, {"protocol": "connect", "format": "json"}, {"protocol": "grpc-web"}],
    ids=["connect-binary", "connect-json", "grpc-web"],
)
def test_append_subscribe_and_call_a_python_tool(
    chromium: Any, site: Site, service: Service, runner: Runner, query: dict[str, str]
) -> None:
    session = session_id()
    with opened(chromium, site.origin, service, session, **query) as page:
        wait_until(page, "async (h) => (await h.tools()).includes('add')")
        assert page.evaluate("() => window.harness.append('hello')") == {"offset": 1}
        result = page.evaluate("() => window.harness.callTool('add', {a: 2, b: 40}, 'call-1')")
        assert result == {"text": "42", "isError": False}
        wait_until(page, "(h) => h.state.received.length === 1")
        assert page.evaluate("() => window.harness.state.received[0].text") == "hello"
        assert page.problems == []


def test_the_servers_errors_arrive_as_the_sdks_classes(chromium: Any, site: Site, service: Service) -> None:
    with opened(chromium, site.origin, service, session_id()) as page:
        missing = page.evaluate("() => window.harness.callTool('no_such_tool', {}, 'call-2')")
        assert missing["error"] == "NotFoundError"
        assert missing["service"] is True
        assert "no_such_tool" in missing["message"]
        invalid = page.evaluate("() => window.harness.append('x', '')")
        assert invalid["error"] == "ValidationError"
        assert [v["field"] for v in invalid["violations"]] == ["session_id"]


def test_an_aborted_signal_cancels_the_tool_call(chromium: Any, site: Site, service: Service, runner: Runner) -> None:
    runner.started.clear()
    runner.cancelled.clear()
    with opened(chromium, site.origin, service, session_id()) as page:
        wait_until(page, "async (h) => (await h.tools()).includes('wait')")
        page.evaluate("() => window.harness.startTool('wait', {seconds: 60}, 'call-3')")
        assert runner.started.wait(WAIT_MS / 1000), "the runner never got the call"
        page.evaluate("() => window.harness.abort('call-3')")
        ended = page.evaluate("() => window.harness.settled('call-3')")
        assert ended["error"] == "CancelledError"
        assert ended["cancelled"] is True
        assert runner.cancelled.wait(WAIT_MS / 1000), "the runner's call was not cancelled"


def test_the_readmes_browser_example_runs_as_written(
    chromium: Any, site: Site, service: Service, runner: Runner
) -> None:
    found = README_EXAMPLE.search(README.read_text(encoding="utf-8"))
    assert found is not None, "docs/typescript.md has no js example under 'In the browser'"
    assert README_ADDRESS in found["code"]
    # The page maps the package's name to the bundle, as an application's build would resolve it.
    (site.root / "readme.js").write_text(found["code"].replace(README_ADDRESS, service.http), encoding="utf-8")
    (site.root / "readme.html").write_text(
        '<!doctype html><link rel="icon" href="data:,">'
        '<script type="importmap">{"imports": {"@agentmsg/sdk/web": "./agentmsg-web.js"}}</script>'
        '<script type="module" src="./readme.js"></script>',
        encoding="utf-8",
    )
    page = chromium.new_page()
    lines: list[str] = []
    page.on("console", lambda message: lines.append(message.text))
    page.on("pageerror", lambda error: lines.append(f"page error: {error}"))
    try:
        with page.expect_console_message(lambda m: m.text.startswith("#"), timeout=WAIT_MS):
            page.goto(f"{site.origin}/readme.html")
        assert lines == ["add -> 42", "#1 What is 2 + 40?"]
    finally:
        page.close()
