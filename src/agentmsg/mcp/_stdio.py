"""A client connection to an MCP server run over stdio, on asyncio's own pipes: one JSON line out per request, the
answer read where its bytes arrive.

The SDK's stdio transport hands every message through in-memory streams and a writer and a reader task, and its
session a dispatcher task and pydantic models: four task hops and two model conversions per call. A call here is
a write to the server's stdin and a future that the line answering it resolves, in the event loop's read callback
(:class:`_Pipes`), with no task between. The server runs with the SDK's safe default environment plus the spec's
``env``, stderr to ``errlog``, in a process group of its own but not a session of its own (:func:`_own_group`), and is
stopped as the MCP lifecycle says: stdin closed, a grace, then SIGTERM and SIGKILL to its process group; the stop runs
to its end even if the caller is cancelled.

What the server sends is read as raw JSON (the caller checks results, :mod:`agentmsg.providers.mcp`); a line that is
not a JSON-RPC message is logged and skipped. Requests from the server are answered: ``ping`` with an empty
result, anything else "method not found" (this client offers no roots, sampling or elicitation).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO, cast

import mcp_types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.exceptions import MCPError

from agentmsg._jsontext import compact_encoder, loads

__all__ = ["StdioConnection", "open_stdio"]

log = logging.getLogger("agentmsg.mcp")

EXIT_GRACE = 2.0  # seconds the server has to exit on its own once its stdin is closed
TERM_GRACE = 2.0  # seconds from SIGTERM to SIGKILL
KILL_WAIT = 2.0  # seconds for the loop to see a killed server exit
METHOD_NOT_FOUND = -32601
_ENCODE = compact_encoder(allow_nan=True)  # as json.dumps(..., ensure_ascii=False), compact


class _Pipes(asyncio.SubprocessProtocol):
    """The server's stdout, read as it arrives; its exit."""

    def __init__(self) -> None:
        self.connection: StdioConnection | None = None
        self.exited = asyncio.Event()
        self.early: list[bytes] = []  # bytes read before the connection was made

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if self.connection is not None:
            self.connection._feed(data)
        else:
            self.early.append(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        # Its stdout closed, or its stdin (it stopped reading): either way no request gets an answer any more.
        if fd in (0, 1) and self.connection is not None:
            self.connection._hung_up()

    def process_exited(self) -> None:
        self.exited.set()


class StdioConnection:
    """A live MCP server over stdio: raw requests and their raw results (see the module docstring)."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        pipes: _Pipes,
        server: StdioServerParameters,
        on_tools_changed: Callable[[], None] | None,
    ) -> None:
        self._transport = transport
        self._pipes = pipes
        self._loop = asyncio.get_running_loop()  # made on it; asked once (each asking is a getpid() system call)
        # A write transport (not checked with isinstance: uvloop's pipes do not derive from asyncio's classes).
        self._stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))
        self._encoding = server.encoding
        self._errors = server.encoding_error_handler
        self._on_tools_changed = on_tools_changed
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._last_id = 0
        self._partial: list[bytes] = []
        self.ended = asyncio.Event()
        """Set when the server closed its stdout or its stdin (it exited or hung up)."""
        self.protocol_version = ""
        self.server_name = ""
        self.list_changed = False
        pipes.connection = self
        for data in pipes.early:
            self._feed(data)
        pipes.early.clear()
        if transport.get_pipe_transport(1) is None:
            self._hung_up()

    # --- what goes out ------------------------------------------------------------------------------------------

    def _send(self, message: Mapping[str, Any]) -> None:
        line = _ENCODE(message) + "\n"
        if not self._stdin.is_closing():
            self._stdin.write(line.encode(self._encoding, self._errors))

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification (nothing when the server is gone)."""
        if self.ended.is_set():
            return
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    async def request(self, method: str, params: Mapping[str, Any] | None, timeout: float | None = None) -> Any:
        """A request's raw result (a JSON value). Raises ``MCPError`` for an error response, a connection that
        ended, or a timeout; a request that times out or is cancelled sends the server ``notifications/cancelled``."""
        if self.ended.is_set():
            raise MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed")
        self._last_id += 1
        request_id = self._last_id
        future: asyncio.Future[Any] = self._loop.create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
            if timeout is None:
                return await future
            try:
                async with asyncio.timeout(timeout):
                    return await future
            except TimeoutError:
                self.notify("notifications/cancelled", {"requestId": request_id, "reason": "timed out"})
                raise MCPError(
                    mcp_types.REQUEST_TIMEOUT, f"Timed out while waiting for a response to {method} ({timeout:g}s)"
                ) from None
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                future.exception()  # answered as the cancel came: retrieved here, so it is not reported unread
            else:
                self.notify("notifications/cancelled", {"requestId": request_id, "reason": "cancelled"})
            raise
        finally:
            self._pending.pop(request_id, None)

    # --- what comes in ------------------------------------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        # A long line comes in many reads: its pieces are kept apart and joined once, when its end arrives.
        if b"\n" not in data:
            self._partial.append(data)
            return
        if self._partial:
            self._partial.append(data)
            data = b"".join(self._partial)
            self._partial.clear()
        lines = data.split(b"\n")
        rest = lines.pop()
        if rest:
            self._partial.append(rest)
        for line in lines:
            if line.strip():
                self._receive(line)

    def _receive(self, line: bytes) -> None:
        try:
            message = loads(line.decode(self._encoding, self._errors))
        except ValueError as exc:
            log.warning("MCP server wrote a line that is not JSON (skipped): %s", exc)
            return
        if not isinstance(message, dict):
            log.warning("MCP server wrote JSON that is not a JSON-RPC message (skipped): %.200s", line)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer(message["id"], method)
            elif method == "notifications/tools/list_changed" and self._on_tools_changed is not None:
                self._on_tools_changed()
            return
        request_id = message.get("id")
        future = self._pending.get(request_id) if type(request_id) is int else None
        if future is None or future.done():
            return  # answers a request nobody waits for any more (cancelled, timed out)
        error = message.get("error")
        if "result" in message:
            future.set_result(message["result"])
        elif isinstance(error, dict):
            code, text = error.get("code"), error.get("message")
            future.set_exception(
                MCPError(
                    code if type(code) is int else mcp_types.INTERNAL_ERROR,
                    text if isinstance(text, str) else "an error without a message",
                    error.get("data"),
                )
            )
        else:
            future.set_exception(
                MCPError(mcp_types.INTERNAL_ERROR, "the server's response has neither a result nor an error")
            )

    def _answer(self, request_id: Any, method: str) -> None:
        """A request from the server: ``ping`` answered, anything else refused."""
        if method == "ping":
            self._send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
            self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _hung_up(self) -> None:
        if self.ended.is_set():
            return
        self.ended.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed"))

    # --- the end ------------------------------------------------------------------------------------------------

    async def _exited(self, timeout: float) -> bool:
        try:
            async with asyncio.timeout(timeout):
                await self._pipes.exited.wait()
        except TimeoutError:
            return False
        return True

    def _signal(self, sig: signal.Signals) -> None:
        pid = self._transport.get_pid()
        try:
            os.killpg(pid, sig)  # the server's process group: what it started goes too
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    async def _stop(self) -> None:
        self._stdin.close()  # what was written is flushed first
        if not await self._exited(EXIT_GRACE):
            self._signal(signal.SIGTERM)
            if not await self._exited(TERM_GRACE):
                self._signal(signal.SIGKILL)
                if not await self._exited(KILL_WAIT):
                    log.warning("MCP server process %d is still alive after SIGKILL", self._transport.get_pid())
        self._hung_up()
        self._transport.close()

    async def close(self) -> None:
        """Stop the server (see the module docstring). A cancel meanwhile waits for the stop, then is raised."""
        stopping = asyncio.ensure_future(self._stop())
        cancelled = False
        while not stopping.done():
            try:
                await asyncio.wait([stopping])
            except asyncio.CancelledError:
                cancelled = True  # bounded: every wait in the stop is
        stopping.result()
        if cancelled:
            raise asyncio.CancelledError


def _own_group(loop: asyncio.AbstractEventLoop) -> dict[str, Any]:
    """Spawn options that put the server in a process group of its own, in this process's session.

    Its own group, so the stop's signals reach what it started and a Ctrl-C at our terminal does not reach it (the
    stop closes its stdin first). Not a session of its own (``start_new_session``, as the SDK spawns): on Linux with
    autogroup scheduling (most distributions' default) a new session is a new scheduling group, and a server woken
    by every request then preempts ours at each write, which cost about a tenth of the calls per second 16 callers
    get (``bench/mcp_bridge.py``). asyncio's loop takes ``process_group`` (set in C between fork and exec); uvloop
    takes only ``preexec_fn``, which it runs in the child after the fork handlers it always runs.
    """
    if isinstance(loop, asyncio.BaseEventLoop):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}


async def open_stdio(
    server: StdioServerParameters,
    *,
    errlog: TextIO | None,
    on_tools_changed: Callable[[], None] | None,
) -> StdioConnection:
    """Start the server (not yet initialised). Raises OSError when its command cannot run."""
    loop = asyncio.get_running_loop()
    pipes = _Pipes()
    transport, _ = await loop.subprocess_exec(
        lambda: pipes,
        server.command,
        *server.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errlog or sys.stderr,
        env=get_default_environment() | (server.env or {}),
        cwd=server.cwd,
        **_own_group(loop),
    )
    try:
        return StdioConnection(transport, pipes, server, on_tools_changed)
    except BaseException:
        # No connection, so nobody would ever stop the server: killed here, its process group with it, and its
        # pipes closed. (Left running, it holds uvloop's loop.close() for ever: a process handle stays open.)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(transport.get_pid(), signal.SIGKILL)
        transport.close()
        raise
