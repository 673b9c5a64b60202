"""Peer-supplied names and ids as they go into the log: one line each, whatever they hold."""

from __future__ import annotations

__all__ = ["loggable"]

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
