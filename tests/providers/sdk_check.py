"""Validate a payload against a provider SDK's own request or response type.

pydantic validates ``Iterable[...]`` fields of TypedDicts lazily: it returns a
``ValidatorIterator`` and checks the items only when iterated. So a bad block
inside ``content: Iterable[...]`` passes ``TypeAdapter.validate_python``
silently. :func:`validate_with` walks the result and exhausts every iterator,
so every part is checked (and errors surface as ``pydantic.ValidationError``).
The adapter must outlive the iterators (pydantic-core panics when an iterator
is consumed after its adapter is gone), so adapters are kept in a cache.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import pydantic


def force(value: Any) -> Any:
    """The value with every lazy iterator (recursively) turned into a list."""
    if isinstance(value, Mapping):
        return {key: force(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [force(item) for item in value]
    if isinstance(value, Iterator):
        return [force(item) for item in value]
    return value


@functools.cache
def adapter(type_: Any) -> pydantic.TypeAdapter[Any]:
    """One adapter per type, kept alive for the whole test session."""
    return pydantic.TypeAdapter(type_)


def validate_with(type_: Any, value: Any) -> Any:
    """Validate ``value`` as ``type_`` (a TypedDict, model or union) and force every lazy part."""
    return force(adapter(type_).validate_python(value))
