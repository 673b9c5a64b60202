"""A tool runner in a subprocess whose stdout lines are read as they come, for the graceful-stop tests."""

from __future__ import annotations

import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import agentmsg as am
from agentmsg.service import Client

WAIT = 60.0  # seconds for any one step (a registration, a call, an exit): a bound, not a measurement


class RunnerProcess:
    """``command`` as a process; its stdout lines kept in ``lines``, its stderr in ``errors``."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.errors.append(line)

    def expect(self, wanted: str | Callable[[str], bool]) -> str:
        """The next stdout line that is ``wanted`` (or passes it); fails if the process ends or WAIT passes first."""
        deadline = time.monotonic() + WAIT
        while True:
            try:
                line = self._new.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"no line {wanted!r} in {WAIT} s: {self.lines} {''.join(self.errors)}") from None
            if line is None:
                raise AssertionError(f"exited before {wanted!r}: {self.lines} {''.join(self.errors)[-3000:]}")
            if line == wanted or (callable(wanted) and wanted(line)):
                return line

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.process.send_signal(signum)

    def wait(self) -> int:
        """Its exit code, once it exited (within WAIT)."""
        code = self.process.wait(WAIT)
        for reader in self._readers:
            reader.join(5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def call_tool(target: str, call_id: str, tool: str, arguments: dict[str, Any]) -> am.ToolResultContent:
    """An engine's call, on a client of its own (for calls made from several threads at once)."""
    with Client(target, timeout=WAIT) as client:
        return client.call_tool(am.ToolCallContent(call_id, tool, arguments))


def served(target: str) -> set[str]:
    """The tool names the server routes calls for now."""
    with Client(target, timeout=WAIT) as client:
        return {tool.tool.name for tool in client.list_tools()}


def until(check: Callable[[], bool], what: str) -> None:
    """Poll ``check`` (every 20 ms, WAIT at most)."""
    for _ in range(int(WAIT / 0.02)):
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
