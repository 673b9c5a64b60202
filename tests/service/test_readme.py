"""README.md as a test: its Python and shell blocks run as written, in `make test`, so no snippet can drift.

How the README's fenced blocks are run (keep to it when you add one):

- ```` ```python ```` blocks run in README order, in one namespace, in a fresh interpreter: as a reader who
  pastes them one after another. A block whose first line starts with ``>>>`` runs as a doctest (its
  expected output is checked).
- ```` ```sh ````, ```` ```bash ```` and ```` ```shell ```` blocks run one by one with ``bash -euo pipefail``;
  each must exit 0 (a command expected to fail says so: ``cmd || echo "exit status $?"``).
- Both run in a scratch directory laid out like a checkout (``proto`` and ``node_modules`` linked to the
  repository's), with ``.venv/bin`` and ``node_modules/.bin`` first on ``PATH``: ``python``, ``agentmsg``
  and ``npx buf`` are the project's own, and nothing is fetched.
- A server (``agentmsg serve --memory --http 0``) runs for the whole README; the address the README writes,
  ``127.0.0.1:50051``, is replaced by that server's (it listens on a free port), and ``AGENTMSG_TARGET``
  holds it; its HTTP port (Connect and gRPC-Web) likewise replaces ``127.0.0.1:8080``, and ``AGENTMSG_HTTP``
  holds it.
- **To leave a block out**, put ``<!-- readme-test: skip (why) -->`` on the line right before its opening
  fence; the reason is required and shows in the test's id. Blocks in other languages (``js``) and blocks
  with no language (sample output) are never run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from serverproc import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ADDRESS = "127.0.0.1:50051"
HTTP_ADDRESS = "127.0.0.1:8080"
RUN = {"python": "python", "sh": "shell", "bash": "shell", "shell": "shell"}
SKIP = re.compile(r"^<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)\s*$")
TIMEOUT = 180  # seconds for all the Python blocks, or for one shell block


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None  # the reason, when marked


def blocks(text: str) -> list[Block]:
    """Every fenced block of ``text`` with its language and skip marker."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        marker = SKIP.match(lines[start - 1]) if start else None
        found.append(Block(start + 1, opening["lang"], "\n".join(body) + "\n", marker["reason"] if marker else None))
        i += 1
    return found


def runnable(kind: str) -> list[Block]:
    return [b for b in blocks(README.read_text(encoding="utf-8")) if RUN.get(b.lang) == kind]


def _id(block: Block) -> str:
    return f"README.md:{block.line}" + (f" skip: {block.skip}" if block.skip else "")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory", "--http", "0")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that looks like a checkout to the blocks (``proto``, ``node_modules``), writes aside."""
    where = tmp_path_factory.mktemp("readme")
    for name in ("proto", "node_modules"):
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    return where


def _addresses(code: str, server: ServerProcess) -> str:
    """The block with the README's addresses replaced by the test server's (gRPC and HTTP)."""
    return code.replace(ADDRESS, server.target).replace(HTTP_ADDRESS, f"127.0.0.1:{server.http_port}")


def _environment(server: ServerProcess) -> dict[str, str]:
    env = dict(os.environ)
    path = [str(Path(sys.executable).parent), str(ROOT / "node_modules" / ".bin"), env.get("PATH", "")]
    http = f"127.0.0.1:{server.http_port}"
    env.update(PATH=os.pathsep.join(path), AGENTMSG_TARGET=server.target, AGENTMSG_HTTP=http, PYTHONUNBUFFERED="1")
    env.pop("AGENTMSG_TOKEN", None)
    return env


DRIVER = r"""
import doctest, json, sys
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for block in blocks:
    print(f"=== README.md:{block['line']}", flush=True)
    if block["code"].lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block["code"], namespace, "README", "README.md", block["line"])
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        if runner.failures:
            sys.exit(f"README.md:{block['line']}: the doctest failed")
        namespace.update(test.globs)
    else:
        exec(compile(block["code"], f"README.md:{block['line']}", "exec"), namespace)
print("=== done", flush=True)
"""


def test_the_readme_has_blocks_to_run() -> None:
    assert [b for b in runnable("python") if not b.skip], "the README has no Python block to run"
    assert [b for b in runnable("shell") if not b.skip], "the README has no shell block to run"
    # A marker must sit right before a block that would run: anywhere else it silently does nothing.
    lines = README.read_text(encoding="utf-8").splitlines()
    marked = [b.line for b in blocks(README.read_text(encoding="utf-8")) if b.skip]
    for number, line in enumerate(lines, start=1):
        if SKIP.match(line):
            assert number + 1 in marked, f"README.md:{number}: a skip marker not right before a fence"
        elif "readme-test" in line:
            pytest.fail(f"README.md:{number}: a malformed marker (write <!-- readme-test: skip (why) -->)")


def test_the_python_blocks_run_as_written(server: ServerProcess, scratch: Path) -> None:
    chosen = [b for b in runnable("python") if not b.skip]
    spec = scratch / "python-blocks.json"
    spec.write_text(
        json.dumps([{"line": b.line, "code": _addresses(b.code, server)} for b in chosen]),
        encoding="utf-8",
    )
    driver = scratch / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(driver), str(spec)],
        cwd=scratch,
        env=_environment(server),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    ran = re.findall(r"^=== (README\.md:\d+|done)$", done.stdout, re.MULTILINE)
    where = ran[-1] if ran else "the driver"
    assert done.returncode == 0, f"failed in {where}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert ran == [f"README.md:{b.line}" for b in chosen] + ["done"]


@pytest.mark.parametrize("block", runnable("shell"), ids=_id)
def test_a_shell_block_runs_as_written(block: Block, server: ServerProcess, scratch: Path) -> None:
    if block.skip:
        pytest.skip(block.skip)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _addresses(block.code, server)],
        cwd=scratch,
        env=_environment(server),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"README.md:{block.line} exited {done.returncode}:\n{output}"


def test_the_extractor_reads_markers_and_languages() -> None:
    sample = (
        "text\n<!-- readme-test: skip (needs a GPU) -->\n```python\nprint(1)\n```\n"
        "```sh\necho hi\n```\n```\nsample output\n```\n```js\nconsole.log(1)\n```\n"
    )
    found = blocks(sample)
    assert [(b.lang, b.skip, b.code) for b in found] == [
        ("python", "needs a GPU", "print(1)\n"),
        ("sh", None, "echo hi\n"),
        ("", None, "sample output\n"),
        ("js", None, "console.log(1)\n"),
    ]
    assert [RUN.get(b.lang) for b in found] == ["python", "shell", None, None]
