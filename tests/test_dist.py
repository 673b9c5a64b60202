"""The release artifacts of ``make dist``, checked and installed outside the repository.

``make dist`` (a step of ``make pytest``) builds ``dist/agentmsg-V-py3-none-any.whl``, ``dist/agentmsg-V.tar.gz``
and ``dist/agentmsg-sdk-V.tgz``, V being pyproject.toml's version. The wheel, sdist and tarball are read member by
member; then the wheel (with its ``http`` extra) goes into a new virtual environment and the tarball into a new Node
project, both in a temporary directory with nothing of the repository on their paths (dependencies come from the
registries, as a user's would), and a session runs end to end there: the wheel's ``agentmsg serve`` console script
(gRPC and Connect), a Python tool runner and an engine importing the installed package, and a TypeScript client,
type-checked against the installed declarations, that appends, subscribes and calls the Python runner's tool over
gRPC (``@agentmsg/sdk``), then appends and calls it over Connect (``@agentmsg/sdk/web`` on Node's fetch).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gates import skip_or_fail
from serverproc import ServerProcess

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DIST = ROOT / "dist"
SDK = ROOT / "sdk" / "typescript"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
WHEEL = DIST / f"agentmsg-{VERSION}-py3-none-any.whl"
SDIST = DIST / f"agentmsg-{VERSION}.tar.gz"
TARBALL = DIST / f"agentmsg-sdk-{VERSION}.tgz"
# The top-level packages the wheel installs: agentmsg, and buf.validate (validate.proto's generated code, which the
# contract's generated modules import as `buf.validate.validate_pb2`; protovalidate does not ship it).
TOP_LEVEL = {"agentmsg", "buf"}
INSTALL_TIMEOUT = 600  # seconds for one pip or npm install (dependencies from the registries; cached after once)
RUN_TIMEOUT = 60  # seconds for one program of the session


def _artifact(path: Path) -> Path:
    if not path.is_file():
        skip_or_fail(f"{path.relative_to(ROOT)} is missing: run `make dist` (make pytest does)")
    return path


def _package_files(*packages: str) -> set[str]:
    """The files under src/<package> that a wheel must carry: everything but bytecode caches."""
    return {
        path.relative_to(SRC).as_posix()
        for package in packages
        for path in (SRC / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_holds_the_package_and_nothing_else() -> None:
    with zipfile.ZipFile(_artifact(WHEEL)) as wheel:
        names = set(wheel.namelist())
        info = f"agentmsg-{VERSION}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    packaged = {name for name in names if not name.startswith(f"{info}/")}

    assert {name.split("/")[0] for name in packaged} == TOP_LEVEL
    # exactly the source tree: generated code, stubs, py.typed and any data file (web assets) in, nothing else
    assert packaged == _package_files(*TOP_LEVEL)
    assert not [name for name in packaged if "tests" in name.split("/") or name.split("/")[-1].startswith("test_")]
    assert "agentmsg/py.typed" in packaged
    for proto in sorted((ROOT / "proto" / "agentmsg" / "v1").glob("*.proto")):
        for generated in ("_pb2.py", "_pb2.pyi"):
            assert f"agentmsg/v1/{proto.stem}{generated}" in packaged
    for service in ("session_service", "tool_service"):
        assert f"agentmsg/v1/{service}_pb2_grpc.py" in packaged
        assert f"agentmsg/v1/{service}_connect.py" in packaged
    assert "buf/validate/validate_pb2.py" in packaged
    # the session viewer (`make viewer`, which `make dist` runs first), served by `serve --http` at /
    viewer = "agentmsg/service/http/static"
    assert {f"{viewer}/index.html", f"{viewer}/viewer/viewer.js", f"{viewer}/viewer/viewer.css"} <= packaged
    assert re.search(rf"^Version: {re.escape(VERSION)}$", metadata, re.MULTILINE)
    assert re.search(r"^agentmsg = agentmsg\.cli:main$", entry_points, re.MULTILINE)


def test_the_sdist_builds_the_package_from_its_sources_alone() -> None:
    with tarfile.open(_artifact(SDIST)) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "PKG-INFO"} <= names
    assert {f"src/{name}" for name in _package_files(*TOP_LEVEL)} <= names
    assert {f"proto/agentmsg/v1/{p.name}" for p in (ROOT / "proto" / "agentmsg" / "v1").glob("*.proto")} <= names
    assert not [name for name in names if name.startswith(("tests/", "bench/", "scripts/", "sdk/", "fuzz/"))]


def test_the_npm_tarball_holds_the_compiled_sdk_its_types_and_the_browser_bundle() -> None:
    with tarfile.open(_artifact(TARBALL)) as tarball:
        names = {name.removeprefix("package/") for name in tarball.getnames()}
        member = tarball.extractfile("package/package.json")
        assert member is not None
        package = json.load(member)
    assert package["name"] == "@agentmsg/sdk"
    assert package["version"] == VERSION
    exported = {path for entry in package["exports"].values() for path in entry.values()}
    assert exported == {"./dist/src/index.js", "./dist/src/index.d.ts", "./dist/src/web.js", "./dist/src/web.d.ts"}
    assert {path.removeprefix("./") for path in exported} <= names
    assert {"dist/browser/agentmsg-web.js", "dist/browser/agentmsg-web.js.map", "README.md"} <= names
    # compiled from the sources it ships, nothing stale (a .js whose .ts is gone) and no tests, interop or examples
    compiled = {
        name.removeprefix("dist/").removesuffix(".js") for name in names if re.fullmatch(r"dist/src/.*\.js", name)
    }
    assert compiled == {name.removesuffix(".ts") for name in names if re.fullmatch(r"src/.*\.ts", name)}
    assert {name.removesuffix(".d.ts") for name in names if name.endswith(".d.ts")} == {f"dist/{c}" for c in compiled}
    assert not [name for name in names if name.startswith(("dist/test/", "dist/interop/", "dist/examples/", "test/"))]


RUNNER = """
import sys

from agentmsg.service import ToolRunner

runner = ToolRunner(sys.argv[1], name="dist-runner")


@runner.tool
def add(a: int, b: int) -> str:
    \"\"\"Add two integers.\"\"\"
    return str(a + b)


runner.start()  # returns once the tool is registered
print("registered", flush=True)
sys.stdin.read()  # serves until the test closes stdin
runner.stop()
"""

ENGINE = """
import json
import sys

import agentmsg as am
from agentmsg.service import Client

target, session = sys.argv[1:3]
with Client(target) as client:
    offsets = [client.append(session, am.UserMessage.text("What is 2 + 40?"))]
    call = am.ToolCallContent("call_1", "add", {"a": 2, "b": 40})
    offsets.append(client.append(session, am.AssistantMessage([am.TextContent("Let me add."), call])))
    result = client.call_tool(call, timeout=10)
    offsets.append(client.append(session, am.ToolMessage.from_result(result)))
    offsets.append(client.append(session, am.AssistantMessage([am.TextContent(f"2 + 40 = {result.text}")])))
print(json.dumps({"offsets": offsets, "result": result.text, "module": am.__file__, "version": am.__version__}))
"""

TS_CLIENT = """
import { Client, roleOf, textContent, toolCall, toolResultText, userText } from "@agentmsg/sdk";
import * as web from "@agentmsg/sdk/web";

const [target, httpUrl, session] = process.argv.slice(2);
const client = new Client(target, { timeoutMs: 10_000 });
const own = await client.append(session, userText("And 40 + 2, from TypeScript?"));
const seen: { offset: number; role: string; text: string }[] = [];
const stop = new AbortController();
for await (const item of client.subscribe(session, { after: 0n, signal: stop.signal })) {
  if (item.kind !== "logged") continue;
  seen.push({ offset: Number(item.offset), role: roleOf(item.message) ?? "", text: textContent(item.message) });
  if (item.offset === own || seen.length > 10) break;
}
const result = await client.callTool(toolCall("ts_call_1", "add", { a: 40, b: 2 }), { timeoutMs: 10_000 });
client.close();
// the browser entry over Connect (Node's fetch), to the server's HTTP port
const browser = new web.Client(httpUrl, { timeoutMs: 10_000 });
const webOwn = await browser.append(session, web.userText("And over Connect?"));
const webResult = await browser.callTool(web.toolCall("web_call_1", "add", { a: 1, b: 1 }));
browser.close();
console.log(
  JSON.stringify({
    own: Number(own),
    seen,
    result: toolResultText(result),
    webOwn: Number(webOwn),
    webResult: web.toolResultText(webResult),
  }),
);
"""

TSCONFIG = {
    "compilerOptions": {
        "target": "es2022",
        "module": "nodenext",
        "moduleResolution": "nodenext",
        "strict": True,
        "skipLibCheck": True,
        "types": ["node"],
        "outDir": "out",
    },
    "files": ["client.ts"],
}


def _outside_env() -> dict[str, str]:
    """The environment minus anything that would lead back to the repository (its venv, sources, node_modules)."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "NODE_PATH", "PYTHONHOME"}}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and ROOT not in Path(p).parents)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(args[:3])} did not finish in {timeout} s; stderr:\n{exc.stderr!r}")
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(args[:3])} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done.stdout


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    if ROOT in tmp_path.parents:
        pytest.fail(f"the temporary directory {tmp_path} is inside the repository")
    return tmp_path


def _python_env(where: Path, env: dict[str, str]) -> Path:
    """A new virtual environment with the wheel and its ``http`` extra installed (this venv's pip drives it: no pip
    inside); its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=RUN_TIMEOUT)
    python = where / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", f"{WHEEL}[http]"],
        where.parent,
        env,
        INSTALL_TIMEOUT,
    )
    return where / "bin"


def _node_project(where: Path, env: dict[str, str]) -> Path:
    """A new Node project with the tarball (and @types/node for the type check) installed from the registry."""
    where.mkdir()
    (where / "package.json").write_text(json.dumps({"name": "outside", "private": True, "type": "module"}))
    types_node = json.loads((SDK / "package.json").read_text())["devDependencies"]["@types/node"]
    npm = shutil.which("npm", path=env["PATH"])
    assert npm is not None
    _run(
        [npm, "install", "--no-audit", "--no-fund", "--prefer-offline", str(TARBALL), f"@types/node@{types_node}"],
        where,
        env,
        INSTALL_TIMEOUT,
    )
    return where


def test_the_artifacts_run_a_session_outside_the_repository(outside: Path) -> None:
    _artifact(WHEEL)
    _artifact(TARBALL)
    node = shutil.which("node")
    tsc = ROOT / "node_modules" / "typescript" / "bin" / "tsc"
    if node is None or shutil.which("npm") is None:
        skip_or_fail("node and npm are needed to install the npm tarball (Node 20+; CI has them)")
    if not tsc.is_file():
        skip_or_fail("typescript is not installed: run `npm install` (or make deps)")
    env = _outside_env()
    # the two installs wait mostly on their registries and share nothing: they run side by side
    with ThreadPoolExecutor(2) as installs:
        python_env = installs.submit(_python_env, outside / "venv", env)
        node_project = installs.submit(_node_project, outside / "app", env)
        bin_dir, app = python_env.result(), node_project.result()
    installed = app / "node_modules" / "@agentmsg" / "sdk"
    assert json.loads((installed / "package.json").read_text())["version"] == VERSION
    assert (installed / "dist" / "browser" / "agentmsg-web.js").is_file()

    assert _run([str(bin_dir / "agentmsg"), "--version"], outside, env).strip() == f"agentmsg {VERSION}"
    (outside / "runner.py").write_text(RUNNER)
    (outside / "engine.py").write_text(ENGINE)
    (app / "client.ts").write_text(TS_CLIENT)
    (app / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    # the client compiles against the installed declarations (both entries), then runs from the installed JavaScript
    _run([node, str(tsc), "-p", "tsconfig.json"], app, env)

    server = ServerProcess(
        "--db", str(outside / "session.db"), "--http", "0", command=[str(bin_dir / "agentmsg")], cwd=outside, env=env
    )
    http_url = f"http://127.0.0.1:{server.http_port}"
    try:
        with subprocess.Popen(
            [str(bin_dir / "python"), "runner.py", server.target],
            cwd=outside,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as runner:
            assert runner.stdin is not None
            assert runner.stdout is not None
            try:
                if runner.stdout.readline().strip() != "registered":
                    runner.stdin.close()
                    runner.wait(RUN_TIMEOUT)
                    pytest.fail(f"the Python runner did not register:\n{runner.stderr.read() if runner.stderr else ''}")
                engine = json.loads(_run([str(bin_dir / "python"), "engine.py", server.target, "s1"], outside, env))
                client = json.loads(_run([node, "out/client.js", server.target, http_url, "s1"], app, env))
            finally:
                runner.stdin.close()
                try:
                    runner.wait(RUN_TIMEOUT)
                except subprocess.TimeoutExpired:
                    runner.kill()
                    runner.wait()
    finally:
        stopped = server.stop()

    assert stopped, "the installed server did not stop on SIGTERM"
    assert runner.returncode == 0
    assert Path(engine["module"]).is_relative_to(outside / "venv")
    assert engine["version"] == VERSION
    assert engine["offsets"] == [1, 2, 3, 4]
    assert engine["result"] == "42"
    assert client["own"] == 5
    assert client["seen"] == [
        {"offset": 1, "role": "user", "text": "What is 2 + 40?"},
        {"offset": 2, "role": "assistant", "text": "Let me add."},
        {"offset": 3, "role": "tool", "text": ""},
        {"offset": 4, "role": "assistant", "text": "2 + 40 = 42"},
        {"offset": 5, "role": "user", "text": "And 40 + 2, from TypeScript?"},
    ]
    assert client["result"] == "42"
    assert client["webOwn"] == 6
    assert client["webResult"] == "2"
