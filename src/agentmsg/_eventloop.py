"""The event loop a long-running agentmsg process runs on: uvloop's or asyncio's own.

``auto`` (the default) picks uvloop when it is importable (a core dependency on Linux and macOS with CPython) and
asyncio's loop otherwise; ``uvloop`` and ``asyncio`` ask for one. The same asyncio code runs on either: uvloop (on
libuv) spends less CPU on each socket, pipe and timer event, which is most of what a relaying server does. It is
chosen by ``agentmsg serve --loop``, ``agentmsg mcp runner --loop``, ``agentmsg mcp serve --loop``,
``ToolRunner.run(loop=...)`` and ``McpRunner.run(loop=...)``; each starts its loop with ``asyncio.Runner`` and a
loop factory, never through the event loop policy (deprecated, and global to the process).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from agentmsg.errors import ValidationError

__all__ = ["LOOPS", "EventLoopName", "loop_factory", "loop_name", "run"]

EventLoopName = Literal["auto", "asyncio", "uvloop"]
LOOPS: tuple[EventLoopName, ...] = ("auto", "asyncio", "uvloop")

_T = TypeVar("_T")

if sys.platform == "win32":
    _ASYNCIO: Callable[[], asyncio.AbstractEventLoop] = asyncio.ProactorEventLoop
else:
    _ASYNCIO = asyncio.SelectorEventLoop


def loop_factory(loop: str = "auto") -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes the event loop ``loop`` names (see the module docstring).

    Raises :class:`~agentmsg.ValidationError` (field ``loop``) for a name that is not ``auto``, ``asyncio`` or
    ``uvloop``, and for ``uvloop`` when it cannot be imported.
    """
    if loop not in LOOPS:
        raise ValidationError.single("loop", "in", f"expected one of {', '.join(LOOPS)}, got {loop!r}")
    if loop == "asyncio":
        return _ASYNCIO
    try:
        import uvloop
    except ImportError as exc:
        if loop == "auto":
            return _ASYNCIO
        raise ValidationError.single(
            "loop",
            "available",
            f"uvloop cannot be imported ({exc}); it is installed with agentmsg on Linux and macOS with CPython "
            "(pip install uvloop), or choose asyncio",
        ) from None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, _T], loop: str = "auto") -> _T:
    """Run ``main`` to its end on a new event loop of the kind ``loop`` names, then close the loop as ``asyncio.run``
    does (the tasks left cancelled, async generators and the default executor shut down)."""
    try:
        factory = loop_factory(loop)
    except BaseException:
        main.close()  # never started: no "never awaited" warning for the caller's coroutine
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def loop_name(loop: asyncio.AbstractEventLoop | None = None) -> str:
    """``uvloop`` or ``asyncio`` for the running loop (or ``loop``); another loop's module and class name."""
    loop = asyncio.get_running_loop() if loop is None else loop
    kind = type(loop)
    top = kind.__module__.partition(".")[0]
    return top if top in ("uvloop", "asyncio") else f"{kind.__module__}.{kind.__qualname__}"
