"""JSON text on agentmsg's hot paths (a tool call's arguments, an MCP server's lines), read and written by the
``json`` module's C parts with less Python around them: the same values and the same errors.

- :func:`loads`: ``json.loads`` goes through three Python frames and two regular-expression matches (whitespace before
  and after) around its C scanner, about three quarters of its time for a small object. Here the scanner is called
  once; text it does not take whole (whitespace around the value, a byte-order mark, trailing data, nothing at all)
  is handed to ``json.loads``, which reads it, or raises, as it always does.
- :func:`compact_encoder`: ``JSONEncoder.encode`` makes its C encoder anew through two Python frames on every call;
  here one is made per call straight away (a fresh one: its table of the containers being written is what finds a
  circular reference, and a shared one would be shared between threads).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.decoder import JSONDecoder
from json.encoder import JSONEncoder, encode_basestring
from json.scanner import make_scanner
from typing import Any

try:
    from _json import make_encoder as c_make_encoder
except ImportError:  # pragma: no cover - CPython always has it; another interpreter may not
    c_make_encoder = None  # type: ignore[misc,assignment]

__all__ = ["compact_encoder", "loads"]

# json.loads's own decoder settings: the same values, NaN included. (typeshed types the argument as the scanner.)
_scan = make_scanner(JSONDecoder())  # type: ignore[arg-type]


def loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``: the same value, or the same ``JSONDecodeError``/``RecursionError``."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:  # not a value at index 0 (whitespace, a BOM, nothing): json.loads says what it is
        return json.loads(text)
    if end != len(text):  # whitespace after it, or more data: json.loads accepts the one, refuses the other
        return json.loads(text)
    return value


def compact_encoder(*, allow_nan: bool) -> Callable[[Any], str]:
    """``JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan).encode``: the same text, or the
    same ``TypeError``/``ValueError``/``RecursionError``."""
    encoder = JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    if c_make_encoder is None:  # pragma: no cover - see the import
        return encoder.encode
    make, default = c_make_encoder, encoder.default

    def encode(value: Any) -> str:
        return "".join(make({}, default, encode_basestring, None, ":", ",", False, False, allow_nan)(value, 0))

    return encode
