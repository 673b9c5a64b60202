"""Reading the seed-1 dict form (:mod:`agentmsg.dict_form`): typed lookups whose errors name the dict path.

Shared by the content blocks' and the messages' dict readers (``content.py``,
``messages.py``), which sit on two floors above this one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from agentmsg.errors import DecodeError, MediaError, ValidationError, Violation


class _PayloadError(ValidationError):
    """A ValidationError whose paths already point into the payload."""


@contextmanager
def _at(path: str) -> Iterator[None]:
    """Re-raise errors from the constructors with ``path`` in front of their fields."""
    try:
        yield
    except _PayloadError:
        raise
    except ValidationError as exc:
        raise _PayloadError([_prefixed(path, v) for v in exc.violations], "seed-1 dict") from None
    except (MediaError, DecodeError) as exc:
        rule = "media" if isinstance(exc, MediaError) else "decode"
        raise _PayloadError([Violation(path, rule, str(exc))], "seed-1 dict") from None


# A proto path inside a message body (`user.content[0].image`) names the dict key `contents`.
_BODY_CONTENT = re.compile(r"^(system|user|assistant|tool|custom)\.content")


def _prefixed(path: str, violation: Violation) -> Violation:
    field = _BODY_CONTENT.sub("contents", violation.field)
    if not field:
        return Violation(path, violation.rule_id, violation.message)
    sep = "" if field.startswith("[") else "."
    return Violation(f"{path}{sep}{field}" if path else field, violation.rule_id, violation.message)


def _fail(path: str, rule: str, message: str) -> ValidationError:
    return _PayloadError([Violation(path, rule, message)], "seed-1 dict")


def _get(data: Mapping[str, Any], key: str, types: type | tuple[type, ...], path: str, default: Any = None) -> Any:
    value = data.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, types) or (
        isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,))
    ):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise _fail(f"{path}.{key}", "type", f"expected {names}, got {type(value).__name__}")
    return value


def _require(data: Mapping[str, Any], key: str, types: type | tuple[type, ...], path: str) -> Any:
    if key not in data or data[key] is None:
        raise _fail(f"{path}.{key}", "required", "value is required")
    return _get(data, key, types, path)
