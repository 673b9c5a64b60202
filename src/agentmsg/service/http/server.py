"""The HTTP listener: uvicorn serving the Connect application in the running event loop (the gRPC server's).

uvicorn's own signal handling is left out: the process's signals belong to :func:`agentmsg.service.serve`,
which stops both listeners.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn

from agentmsg.errors import UnavailableError

__all__ = ["HttpListener"]

STARTUP_WAIT = 10.0  # seconds uvicorn may take to start serving on its bound socket


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpListener:
    """An ASGI application served on ``host:port`` (port 0: any free port) until :meth:`stop`."""

    def __init__(self, app: Any, host: str, port: int, *, grace: float) -> None:
        self.host = host
        # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it
        # every response waits out the client's delayed ACK (about 40 ms on Linux).
        self._socket = socket.socket(_family(host), socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind((host, port))
            self._socket.listen(1024)
        except OSError as exc:
            self._socket.close()
            raise UnavailableError(f"cannot listen for HTTP on {host}:{port}: {exc.strerror or exc}") from None
        self._socket.setblocking(False)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=max(1, math.ceil(grace)),
            server_header=False,
        )
        self._server = _Server(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Serve; returns once uvicorn accepts connections."""
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]), name="agentmsg-http")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_WAIT
        while not self._server.started:
            if self._task.done():
                self._task.result()  # its failure, raised here
                raise UnavailableError("the HTTP server stopped while starting")
            if loop.time() > deadline:
                raise UnavailableError(f"the HTTP server did not start within {STARTUP_WAIT} s")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop accepting; requests in flight get the grace period, then are cancelled."""
        self._server.should_exit = True
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        self._socket.close()


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
