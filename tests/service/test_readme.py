"""README.md and every docs/*.md page as tests: their Python and shell blocks run as written, in `make test`, so no
snippet can drift.

How a page's fenced blocks are run (keep to it when you add one):

- Each page runs on its own, in its own scratch directory, its blocks in the page's order (Python and shell as
  they come): as a reader who opens that page and pastes its blocks one after another. A page never relies on
  another page's blocks: it makes the sessions it reads (``-k docs/http.md`` runs one page alone).
- ```` ```python ```` blocks of a page run in one namespace, fresh for the page (one interpreter runs every page's
  blocks, each page in a new namespace, directory and environment). A block whose first line starts with ``>>>``
  runs as a doctest (its expected output is checked).
- ```` ```sh ````, ```` ```bash ```` and ```` ```shell ```` blocks run one by one with ``bash -euo pipefail``;
  each must exit 0 (a command expected to fail says so: ``cmd || echo "exit status $?"``).
- The scratch directory is laid out like a checkout (``proto``, ``node_modules`` and ``schema`` linked to the
  repository's), with ``.venv/bin`` and ``node_modules/.bin`` first on ``PATH``: ``python``, ``agentmsg`` and
  ``npx buf`` are the project's own, and nothing is fetched.
- A server (``agentmsg serve --memory --http 0``) serves the pages whose blocks name it: the address they write,
  ``127.0.0.1:50051``, is replaced by that server's (it listens on a free port), and ``AGENTMSG_TARGET`` holds it;
  its HTTP port (Connect and gRPC-Web) likewise replaces ``127.0.0.1:8080``, and ``AGENTMSG_HTTP`` holds it. A page
  whose blocks name neither address nor an ``AGENTMSG_`` variable runs with neither set.
- Blocks inside a list item (fences indented under it) run too, their indentation taken off.
- **To leave a block out**, put ``<!-- readme-test: skip (why) -->`` on the line right before its opening
  fence; the reason is required and shows in the test's id. Blocks with no language (sample output) and ``json``
  blocks (data) are never run.
- Blocks in a language not run here (``js``, ``ts``...) are run by another test, named in ``ELSEWHERE`` (page and
  heading → test id), or carry the skip marker: a new one that has neither fails
  ``test_every_other_block_is_run_elsewhere_or_skipped``, naming its page and line.

Each block is a test of its own, named by its page and line (``docs/http.md:42``); a Python block after one that
failed on the same page fails too, naming the block it waited on.
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from serverproc import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
GUIDE = ROOT / "docs" / "getting-started.md"
ADDRESS = "127.0.0.1:50051"
HTTP_ADDRESS = "127.0.0.1:8080"
RUN = {"python": "python", "sh": "shell", "bash": "shell", "shell": "shell"}
SKIP = re.compile(r"^<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\s*$")  # indented: a block inside a list item
TIMEOUT = 180  # seconds for one block, Python or shell
VENV_ADVICE = "source .venv/bin/activate"
NOT_CODE = {"", "json"}  # sample output, data
NODE_BLOCKS = "tests/interop/test_doc_blocks_node.py::"
# The blocks in a language not run here, by page and the heading they follow (one block each), and the test that
# runs each as written.
ELSEWHERE = {
    ("README.md", "An example in TypeScript"): "tests/interop/test_ts_sdk.py::test_a_pages_example_runs_as_written",
    ("docs/typescript.md", "TypeScript"): "tests/interop/test_ts_sdk.py::test_a_pages_example_runs_as_written",
    ("docs/typescript.md", "In the browser"): "tests/interop/test_browser.py::"
    + "test_the_readmes_browser_example_runs_as_written",
    ("docs/json-schema.md", "Using it"): NODE_BLOCKS
    + "test_the_json_schema_pages_ajv_block_passes_a_message_and_refuses_one_without_timestamp",
    ("docs/service.md", "From another language"): NODE_BLOCKS
    + "test_the_service_pages_node_grpc_block_appends_a_message",
    ("docs/ui-streams.md", "The endpoints: a session as an AG-UI or AI SDK stream"): NODE_BLOCKS
    + "test_the_ui_streams_pages_front_end_block_hydrates_sends_and_shows_deltas",
}


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None  # the reason, when marked
    page: str = "README.md"


def blocks(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced block of ``text`` with its language and skip marker."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        start, body, indent = i, [], opening["indent"]
        i += 1
        while i < len(lines) and not lines[i].startswith(indent + "```"):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip(" "))
            i += 1
        marker = SKIP.match(lines[start - 1].strip()) if start else None
        code = "\n".join(body) + "\n"
        found.append(Block(start + 1, opening["lang"], code, marker["reason"] if marker else None, page))
        i += 1
    return found


def page_blocks(page: Path) -> list[Block]:
    return blocks(page.read_text(encoding="utf-8"), _name(page))


def runnable(kind: str | None = None) -> list[Block]:
    """The blocks that run (or are marked to skip), page by page in ``PAGES`` order, each page in its own order."""
    return [b for p in PAGES for b in page_blocks(p) if RUN.get(b.lang) and (kind is None or RUN[b.lang] == kind)]


def _id(block: Block) -> str:
    return f"{block.page}:{block.line}" + (f" skip: {block.skip}" if block.skip else "")


def needs_server(page: str) -> bool:
    """Whether a block of the page that runs names the server: its addresses or an ``AGENTMSG_`` variable."""
    names = (ADDRESS, HTTP_ADDRESS, "AGENTMSG_")
    if not (ROOT / page).exists():
        return False
    return any(n in b.code for b in page_blocks(ROOT / page) if RUN.get(b.lang) and not b.skip for n in names)


def _addresses(code: str, server: ServerProcess | None) -> str:
    """The block with the pages' addresses replaced by the test server's (gRPC and HTTP)."""
    if server is None:
        return code
    return code.replace(ADDRESS, server.target).replace(HTTP_ADDRESS, f"127.0.0.1:{server.http_port}")


def _environment(server: ServerProcess | None) -> dict[str, str]:
    env = dict(os.environ)
    path = [str(Path(sys.executable).parent), str(ROOT / "node_modules" / ".bin"), env.get("PATH", "")]
    env.update(PATH=os.pathsep.join(path), PYTHONUNBUFFERED="1")
    for name in ("AGENTMSG_TOKEN", "AGENTMSG_TARGET", "AGENTMSG_HTTP"):
        env.pop(name, None)
    if server is not None:
        env.update(AGENTMSG_TARGET=server.target, AGENTMSG_HTTP=f"127.0.0.1:{server.http_port}")
    return env


# The page's Python blocks go to one interpreter, one JSON line each on stdin; after each, the driver prints a line
# with the session's token and "ok" or "failed" (the traceback or failed doctest before it, on the same stream).
DRIVER = r"""
import doctest, json, os, sys, traceback
token = sys.argv[1]
page = None
for request in sys.stdin:
    block = json.loads(request)
    where = f"{block['page']}:{block['line']}"
    if block["page"] != page:  # a new page: a new namespace, in the page's directory and environment
        page, namespace = block["page"], {"__name__": "__main__"}
        os.chdir(block["cwd"])
        os.environ.clear()
        os.environ.update(block["env"])
    try:
        if block["code"].lstrip().startswith(">>>"):
            parser = doctest.DocTestParser()
            test = parser.get_doctest(block["code"], namespace, where, block["page"], block["line"])
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            runner.run(test)
            namespace.update(test.globs)
            ok = not runner.failures
        else:
            exec(compile(block["code"], where, "exec"), namespace)
            ok = True
    except BaseException:
        traceback.print_exc()
        ok = False
    sys.stderr.flush()
    print(f"\n{token} {'ok' if ok else 'failed'}", flush=True)
"""


class Interpreter:
    """The pages' Python blocks in a process of their own: ``run`` sends a block and waits for its verdict. Each page
    gets a fresh namespace, so a page that leans on another page's names fails; what a block does to the process
    (a module's global state) stays, as it did when the whole README ran in one namespace."""

    def __init__(self, where: Path) -> None:
        self.token = f"=== docs-test {secrets.token_hex(8)}"
        driver = where / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, str(driver), self.token],
            cwd=where,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, block: Block, code: str, cwd: Path, env: dict[str, str]) -> tuple[bool, str]:
        """Whether the block ran (its doctest passed), and what it printed."""
        assert self.proc.stdin is not None
        request = {"page": block.page, "line": block.line, "code": code, "cwd": str(cwd), "env": env}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        printed: list[str] = []
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False, "".join(printed) + f"\n(no verdict within {TIMEOUT} s)"
            if line is None:
                return False, "".join(printed) + f"\n(the interpreter exited with status {self.proc.wait()})"
            if line.startswith(self.token):
                return line.split()[-1] == "ok", "".join(printed)
            printed.append(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@dataclass
class PageRun:
    """What one page's blocks share: its server, its scratch directory, its Python namespace."""

    page: str
    server: ServerProcess | None  # None for a page that names it nowhere (needs_server)
    scratch: Path
    failed: str | None = None  # the Python block that failed, when one did
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(cls, page: str, where: Path, server: ServerProcess | None = None) -> PageRun:
        scratch = where / re.sub(r"\W", "_", page)
        scratch.mkdir()
        for name in ("proto", "node_modules", "schema"):
            (scratch / name).symlink_to(ROOT / name, target_is_directory=True)
        return cls(page, server, scratch, env=_environment(server))

    def python(self, block: Block, interpreter: Interpreter) -> None:
        if self.failed is not None:
            pytest.fail(f"not run: {self.failed}, a Python block before it on the page, failed")
        ok, printed = interpreter.run(block, _addresses(block.code, self.server), self.scratch, self.env)
        if not ok:
            self.failed = f"{block.page}:{block.line}"
            pytest.fail(f"{block.page}:{block.line} failed:\n{printed[-6000:]}")

    def shell(self, block: Block) -> None:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", _addresses(block.code, self.server)],
            cwd=self.scratch,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, f"{block.page}:{block.line} exited {done.returncode}:\n{output}"


class Pages:
    """The page whose blocks run now, the server and the interpreter the pages share, each started when first
    needed. Asking for the next page leaves the one before (the tests run in page order)."""

    def __init__(self) -> None:
        self.where = Path(tempfile.mkdtemp(prefix="agentmsg-docs-"))
        self.current: PageRun | None = None
        self.server: ServerProcess | None = None
        self.started: Interpreter | None = None

    @property
    def interpreter(self) -> Interpreter:
        if self.started is None:
            self.started = Interpreter(self.where)
        return self.started

    def get(self, page: str) -> PageRun:
        if self.current is None or self.current.page != page:
            if self.server is None and needs_server(page):
                self.server = ServerProcess("--memory", "--http", "0")
            self.current = PageRun.open(page, self.where, self.server if needs_server(page) else None)
        return self.current

    def close(self) -> None:
        if self.started is not None:
            self.started.close()
        if self.server is not None:
            self.server.stop()
        shutil.rmtree(self.where, ignore_errors=True)


@pytest.fixture(scope="module")
def pages() -> Iterator[Pages]:
    opened = Pages()
    yield opened
    opened.close()


@pytest.mark.parametrize("block", runnable(), ids=_id)
def test_a_block_runs_as_written(block: Block, pages: Pages) -> None:
    if block.skip:
        pytest.skip(block.skip)
    run = pages.get(block.page)
    if RUN[block.lang] == "python":
        run.python(block, pages.interpreter)
    else:
        run.shell(block)


def test_the_pages_have_blocks_to_run() -> None:
    assert {"README.md", "docs/getting-started.md", "docs/service.md"} <= {_name(p) for p in PAGES}
    assert [b for b in page_blocks(README) if RUN.get(b.lang) == "python" and not b.skip], "README: no Python block"
    assert [b for b in runnable("shell") if not b.skip], "the pages have no shell block to run"
    # A marker must sit right before a block that would run: anywhere else it silently does nothing.
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        marked = [b.line for b in blocks(text) if b.skip]
        for number, line in enumerate(text.splitlines(), start=1):
            if SKIP.match(line.strip()):
                assert number + 1 in marked, f"{_name(page)}:{number}: a skip marker not right before a fence"
            elif "readme-test" in line:
                pytest.fail(f"{_name(page)}:{number}: a malformed marker (write <!-- readme-test: skip (why) -->)")


def headings(text: str) -> dict[int, str]:
    """Each fenced block's opening line (1-based) → the title of the heading it follows ("" before the first)."""
    found: dict[int, str] = {}
    title, fence = "", None
    for number, line in enumerate(text.splitlines(), start=1):
        if fence is not None:
            if line.startswith(fence + "```"):
                fence = None
            continue
        opening = FENCE.match(line)
        if opening is not None:
            fence = opening["indent"]
            found[number] = title
        elif heading := re.match(r"^#{1,6} (?P<title>.+?)\s*$", line):
            title = heading["title"]
    return found


def elsewhere(page: str, text: str) -> list[str]:
    """The page's blocks in a language not run here that are neither in ``ELSEWHERE`` nor marked to skip, each with
    its place; and a heading with two such blocks (the table names one)."""
    wrong: list[str] = []
    titles = headings(text)
    claimed: dict[str, int] = {}
    for block in blocks(text, page):
        if RUN.get(block.lang) or block.lang in NOT_CODE or block.skip:
            continue
        heading = titles[block.line]
        where = f"{page}:{block.line} ({block.lang} block under {heading!r})"
        if (page, heading) not in ELSEWHERE:
            wrong.append(f"{where}: no test runs it; list it in ELSEWHERE or mark it <!-- readme-test: skip (why) -->")
        elif heading in claimed:
            wrong.append(f"{where}: a second one under the heading of {page}:{claimed[heading]}, which ELSEWHERE names")
        claimed.setdefault(heading, block.line)
    return wrong


def test_every_other_block_is_run_elsewhere_or_skipped() -> None:
    """Issue 33: a block in a language this file does not run (js, ts...) is run by the test ELSEWHERE names, or
    carries the skip marker with its reason; and every test ELSEWHERE names exists, on a block that exists."""
    wrong = [w for page in PAGES for w in elsewhere(_name(page), page.read_text(encoding="utf-8"))]
    assert not wrong, "\n".join(wrong)
    for (page, heading), test in ELSEWHERE.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        assert heading in headings(text).values(), f"ELSEWHERE: {page} has no block under {heading!r}"
        path, _, name = test.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"ELSEWHERE: no test {test}"


def test_the_guard_names_an_unlisted_block_and_lets_a_marked_one_by() -> None:
    text = (
        "# Page\n```js\nx()\n```\n## Other\n```sh\n# not a heading\n```\n```ts\ny()\n```\n"
        "<!-- readme-test: skip (needs a browser) -->\n```js\nz()\n```\n```json\n{}\n```\n```\noutput\n```\n"
    )
    assert headings(text) == {2: "Page", 6: "Other", 9: "Other", 13: "Other", 16: "Other", 19: "Other"}
    assert [w.split(" ")[0] for w in elsewhere("docs/x.md", text)] == ["docs/x.md:2", "docs/x.md:9"]
    assert "docs/x.md:9 (ts block under 'Other'): no test runs it" in elsewhere("docs/x.md", text)[1]


def test_the_extractor_reads_markers_and_languages() -> None:
    sample = (
        "text\n<!-- readme-test: skip (needs a GPU) -->\n```python\nprint(1)\n```\n"
        "```sh\necho hi\n```\n```\nsample output\n```\n```js\nconsole.log(1)\n```\n"
    )
    found = blocks(sample, "docs/x.md")
    assert [(b.lang, b.skip, b.code, b.page) for b in found] == [
        ("python", "needs a GPU", "print(1)\n", "docs/x.md"),
        ("sh", None, "echo hi\n", "docs/x.md"),
        ("", None, "sample output\n", "docs/x.md"),
        ("js", None, "console.log(1)\n", "docs/x.md"),
    ]
    assert [RUN.get(b.lang) for b in found] == ["python", "shell", None, None]
    assert _id(found[0]) == "docs/x.md:3 skip: needs a GPU"


def test_a_fence_inside_a_list_item_is_found_and_dedented() -> None:
    text = (
        "- an item:\n\n  ```python\n  x = 1\n  if x:\n      y = 2\n  ```\n\n"
        "  <!-- readme-test: skip (why) -->\n  ```sh\n  false\n  ```\n"
    )
    found = blocks(text)
    assert [(b.line, b.lang, b.code, b.skip) for b in found] == [
        (3, "python", "x = 1\nif x:\n    y = 2\n", None),
        (10, "sh", "false\n", "why"),
    ]


def test_a_failing_python_block_fails_its_test_and_the_next_one_names_it(tmp_path: Path) -> None:
    """The runner itself: a block that raises, or a doctest whose output differs, is a failure with its output."""
    run, interpreter = PageRun.open("docs/sample.md", tmp_path), Interpreter(tmp_path)
    try:
        sample = "```python\nx = 41\n```\n```python\n>>> x + 2\n42\n```\n```python\nx\n```\n"
        good, bad, later = blocks(sample, "docs/sample.md")
        run.python(good, interpreter)
        with pytest.raises(pytest.fail.Exception, match=r"sample.md:4 failed:(.|\n)*Expected:\n    42\nGot:\n    43"):
            run.python(bad, interpreter)
        with pytest.raises(pytest.fail.Exception, match=r"not run: docs/sample.md:4, a Python block before it"):
            run.python(later, interpreter)
        with pytest.raises(AssertionError, match=r"docs/sample.md:1 exited 3"):
            run.shell(Block(1, "sh", "exit 3\n", None, "docs/sample.md"))
        # The next page starts afresh: the names of the page before are gone.
        other = PageRun.open("docs/other.md", tmp_path)
        alone = blocks("```python\nprint(x)\n```\n", "docs/other.md")[0]
        with pytest.raises(pytest.fail.Exception, match=r"NameError: name 'x' is not defined"):
            other.python(alone, interpreter)
    finally:
        interpreter.close()


def test_the_pages_say_up_front_how_to_reach_the_agentmsg_command() -> None:
    """A newcomer who types `agentmsg serve` after `make run` must not meet "command not found" (issue 33): the
    README and the getting-started page say it once, before their first such command; every other page that runs
    one links to it first."""
    for page in (README, GUIDE):
        text = page.read_text(encoding="utf-8")
        assert text.count(VENV_ADVICE) == 1, f"{_name(page)} says it {text.count(VENV_ADVICE)} times"
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        commands = [b.line for b in page_blocks(page) if "agentmsg " in b.code and RUN.get(b.lang) == "shell"]
        if not commands:
            continue
        advice = text.find(VENV_ADVICE) if page in (README, GUIDE) else text.find("getting-started.md#quick-start")
        assert advice >= 0, f"{_name(page)} runs agentmsg but does not say where it comes from"
        assert text[:advice].count("\n") + 1 < min(commands), f"{_name(page)}: said after its first agentmsg command"
    done = subprocess.run(["make", "-s", "deps"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert VENV_ADVICE in done.stdout


LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def _anchors(text: str) -> set[str]:
    """The GitHub-style ids of a page's headings (outside fences): lower case, punctuation dropped, spaces to
    hyphens, a repeated one numbered ``-1``, ``-2``..."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            if line.startswith(fence + "```"):
                fence = None
            continue
        opening = FENCE.match(line)
        if opening is not None:
            fence = opening["indent"]
            continue
        heading = re.match(r"^#{1,6} (?P<title>.+?)\s*$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading["title"].lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_relative_link_resolves() -> None:
    """Every link of the README and the pages to a file of the repository finds it, and its #anchor a heading."""
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for found in LINK.finditer(text):
            target = found["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{_name(page)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
                broken.append(f"{_name(page)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_anchors_are_github_slugs() -> None:
    text = "# Getting started\n## Quick start\n```sh\n# not a heading\n```\n## HTTP and browsers\n## A2A\n## A2A\n"
    assert _anchors(text) == {"getting-started", "quick-start", "http-and-browsers", "a2a", "a2a-1"}
    assert _anchors("## `agentmsg serve`: the server, v1.1\n") == {"agentmsg-serve-the-server-v11"}
