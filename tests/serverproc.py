"""``agentmsg serve`` in a subprocess (loopback, port 0), for tests that kill it or measure it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

_READY = re.compile(r"agentmsg serving on 127\.0\.0\.1:(\d+)")
_HTTP = re.compile(r"agentmsg serving Connect and gRPC-Web on http://127\.0\.0\.1:(\d+)")


class ServerProcess:
    """``python -m agentmsg serve --port 0 ...``; ``target`` once it prints its port.

    ``command`` replaces ``python -m agentmsg`` (an installed ``agentmsg`` script), ``cwd`` the working directory.
    """

    def __init__(
        self,
        *args: str,
        timeout: float = 20,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
        env.pop("AGENTMSG_TOKEN", None)
        program = [sys.executable, "-m", "agentmsg"] if command is None else command
        self.proc = subprocess.Popen(
            [*program, "serve", "--host", "127.0.0.1", "--port", "0", "--grace", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.output: list[str] = []
        self.errors: list[str] = []
        found = threading.Event()
        self.port = 0
        self.http_port = 0  # with --http: the HTTP port (printed right after the gRPC one)

        def read_stdout() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.output.append(line)
                match = _READY.search(line)
                if match:
                    self.port = int(match.group(1))
                    if "--http" not in args:
                        found.set()
                http = _HTTP.search(line)
                if http:
                    self.http_port = int(http.group(1))
                    found.set()

        def read_stderr() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.errors.append(line)

        self._readers = [
            threading.Thread(target=read_stdout, daemon=True),
            threading.Thread(target=read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"the server did not start: {''.join(self.output + self.errors)[-2000:]}")
        self.target = f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kib(self) -> int:
        """The server's resident memory now (KiB, from /proc)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no goodbye."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._close()

    def _close(self) -> None:
        for reader in self._readers:
            reader.join(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def stop(self) -> bool:
        """SIGTERM (graceful), then SIGKILL if it lingers; False when it had to be killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
                return False
        self._close()
        return True
