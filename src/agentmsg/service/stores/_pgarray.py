"""One-dimensional PostgreSQL arrays built in PostgreSQL's binary format, for the group-commit writer's parameters.

psycopg adapts a Python list by looking at it: which element type it holds, which dumper suits it, then each
element dumped (text arrays escaped element by element). For the writer's six arrays per batch that was the
largest share of its Python time. The writer knows its arrays' types, so it builds them whole: a header (one
dimension, no nulls, the element type, the length, lower bound 1), then each element as its length and bytes.

The values are :class:`bytes` subclasses, one per array type, sent as they are by the dumpers :func:`register`
adds to a connection's adapters. psycopg is imported only there, so the store's module loads without it.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

__all__ = ["ByteaArray", "Int4Array", "Int8Array", "TextArray", "register"]

_HEADER = struct.Struct("!iiIii")  # dimensions, has nulls, element type oid, length, lower bound
_EMPTY = struct.Struct("!iiI")  # no dimensions: no length, no lower bound
_LENGTH = struct.Struct("!i")


class PgArray(bytes):
    """An array already in PostgreSQL's binary format; ``oid`` is the array type's."""

    oid: ClassVar[int]
    element_oid: ClassVar[int]

    @classmethod
    def _of(cls, count: int, parts: Iterable[bytes | memoryview]) -> Any:
        if count == 0:  # no dimensions at all
            return cls(_EMPTY.pack(0, 0, cls.element_oid))
        return cls(b"".join((_HEADER.pack(1, 0, cls.element_oid, count, 1), *parts)))


class TextArray(PgArray):
    """``text[]`` from strings (UTF-8)."""

    oid = 1009
    element_oid = 25

    @classmethod
    def of(cls, values: Sequence[str]) -> TextArray:
        encoded = [value.encode() for value in values]
        return cls._of(len(encoded), _lengthed(encoded))  # type: ignore[no-any-return]


class ByteaArray(PgArray):
    """``bytea[]`` from bytes-like values (memoryviews are read where they are, not copied first)."""

    oid = 1001
    element_oid = 17

    @classmethod
    def of(cls, values: Sequence[bytes | memoryview]) -> ByteaArray:
        return cls._of(len(values), _lengthed(values))  # type: ignore[no-any-return]


class _IntArray(PgArray):
    """An integer array: each element its width and its big-endian value."""

    width: ClassVar[int]
    code: ClassVar[str]  # the element's struct code

    @classmethod
    def of(cls, values: Sequence[int]) -> Any:
        fields = [x for value in values for x in (cls.width, value)]
        return cls._of(len(values), (struct.pack(f"!{('i' + cls.code) * len(values)}", *fields),))


class Int4Array(_IntArray):
    """``int4[]`` (``integer[]``)."""

    oid = 1007
    element_oid = 23
    width = 4
    code = "i"


class Int8Array(_IntArray):
    """``int8[]`` (``bigint[]``)."""

    oid = 1016
    element_oid = 20
    width = 8
    code = "q"


def _lengthed(values: Sequence[bytes | memoryview]) -> Iterable[bytes | memoryview]:
    for value in values:
        yield _LENGTH.pack(len(value))
        yield value


def register(adapters: Any) -> None:
    """Teach ``adapters`` (a connection's, or a pool's configure hook's) to send the arrays here as they are."""
    for array, dumper in _dumpers():
        adapters.register_dumper(array, dumper)


@functools.cache
def _dumpers() -> tuple[tuple[type[PgArray], type[Any]], ...]:
    """One psycopg dumper class per array type, made once (every connection of every pool registers them)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    return tuple(
        (array, type(f"{array.__name__}Dumper", (Dumper,), {"format": Format.BINARY, "oid": array.oid, "dump": _as_is}))
        for array in (TextArray, ByteaArray, Int4Array, Int8Array)
    )


def _as_is(self: Any, obj: PgArray) -> PgArray:
    return obj
