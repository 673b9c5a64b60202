"""Running the TypeScript SDK's interop programs (sdk/typescript/interop/*.ts, compiled to dist/) from pytest.

The programs import @agentmsg/sdk's sources through tsc's output; ``built_sdk`` compiles them when the output is
missing or older than a source (``make test`` has built it already), or skips saying why (no node, no npm packages;
under CI it fails instead: see tests/gates.py).
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import threading
from typing import Any

import pytest
from gates import skip_or_fail
from nodetools import NODE_MODULES, ROOT, require_node

from agentmsg.service import Running, ServerConfig, create_server

SDK = ROOT / "sdk" / "typescript"
DIST = SDK / "dist"
PACKAGES = ("@bufbuild/protobuf", "@bufbuild/protovalidate", "@connectrpc/connect", "@connectrpc/connect-node")
TIMEOUT = 60  # seconds for one node program


def _stale() -> bool:
    sources = [p for d in ("src", "interop", "examples") for p in (SDK / d).rglob("*.ts")]
    outputs = [DIST / p.relative_to(SDK).with_suffix(".js") for p in sources]
    if not all(o.is_file() for o in outputs):
        return True
    return max(p.stat().st_mtime for p in sources) > min(o.stat().st_mtime for o in outputs)


def built_sdk() -> str:
    """``node``, with sdk/typescript compiled to dist/ (built here when stale), or skip (fail under CI)."""
    node = require_node(*PACKAGES)
    if not (SDK / "node_modules" / "typescript").is_dir() and not (NODE_MODULES / "typescript").is_dir():
        skip_or_fail("typescript is not installed: run `npm install` (or make deps)")
    if _stale():
        subprocess.run(["npm", "run", "--silent", "build", "-w", "@agentmsg/sdk"], cwd=ROOT, check=True, timeout=300)
    return node


def program(name: str) -> str:
    return str(DIST / "interop" / f"{name}.js")


def run_ts(node: str, name: str, *args: str, timeout: float = TIMEOUT) -> Any:
    """Run ``sdk/typescript/interop/<name>.ts`` to the end; the JSON it prints."""
    try:
        done = subprocess.run(
            [node, program(name), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{name} did not finish in {timeout} s; stderr:\n{exc.stderr!r}")
    if done.returncode != 0:
        pytest.fail(f"{name} exited with {done.returncode}; stderr:\n{done.stderr}")
    return json.loads(done.stdout)


class TsProcess:
    """A long-running interop program whose stdout JSON lines are read as they come."""

    def __init__(self, node: str, name: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [node, program(name), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def next(self, timeout: float = 15) -> dict[str, Any]:
        """The next line it prints (fails after ``timeout`` seconds, with its stderr)."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"{self.name} printed nothing for {timeout} s; stderr so far:\n{self._stderr()}")

    def wait_for(self, key: str, timeout: float = 15) -> dict[str, Any]:
        """Skip lines until one has ``key``."""
        while True:
            line = self.next(timeout)
            if key in line:
                return line

    def _stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None or self.process.stderr.closed:
            return "(not available: the program is still running)"
        return self.process.stderr.read()

    def _close(self) -> None:
        self._reader.join(5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def stop(self, timeout: float = 10) -> int:
        """SIGTERM, then wait; its exit code."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            pytest.fail(f"{self.name} did not stop on SIGTERM within {timeout} s")
        finally:
            self._close()

    def finish(self, timeout: float = 30) -> int:
        """Wait for it to exit by itself; its exit code."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            pytest.fail(f"{self.name} did not finish in {timeout} s")
        finally:
            self._close()


class LoopThread:
    """An event loop in a daemon thread (servers, runners and clients of the Python side)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Any, timeout: float = 15) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        async def drain() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.get_running_loop().shutdown_asyncgens()

        self.run(drain())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class PythonServer:
    """An agentmsg server in this process, that can be stopped and started again on the same port and store."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.loop = LoopThread()
        self.running: Running | None = None
        self.start()

    def start(self) -> None:
        self.running = self.loop.run(create_server(self.config))
        if self.config.port == 0:
            self.config.port = self.running.port  # a restart binds the same port

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.config.port}"

    def stop(self, grace: float = 0.5) -> None:
        if self.running is not None:
            self.loop.run(self.running.stop(grace))
            self.running = None

    def close(self) -> None:
        self.stop(0)
        self.loop.close()
