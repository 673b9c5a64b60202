"""What goes into the log: peer-supplied names and ids one line each, whatever they hold; gRPC core's own lines
kept out of a command's output."""

from __future__ import annotations

import os

__all__ = ["loggable", "quiet_grpc_core"]

LIMIT = 200  # characters of a value kept in a log line


def loggable(value: object, limit: int = LIMIT) -> str:
    """``value`` (a runner's name, a tool's, a call id: anything a peer chose) for a log line.

    Quoted, with every control and line-breaking character escaped (``repr``'s rules: ``\\n``, ``\\r``,
    ``\\x1b``, ``\\u2028`` ...), and cut to ``limit`` characters: a name cannot end the line it is in and
    forge the next one, colour a terminal, or fill the log.
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)


def quiet_grpc_core() -> None:
    """Keep gRPC core's informational lines (``I1127 ... chttp2_transport.cc] Got goaway [8] ...``, printed when a
    peer closes its connection) out of the output of agentmsg's commands and demos: only its errors are printed.

    For the ``agentmsg`` command and the demos only, never on import (a program that embeds agentmsg keeps its own
    setting); a ``GRPC_VERBOSITY`` the user set wins. gRPC reads it when it starts, so this runs before any server
    or channel is made.
    """
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
