"""The group-commit writer's arrays, built in PostgreSQL's binary format: PostgreSQL reads back exactly what was sent.

Checked against the real server (the ``postgres`` fixture), element types and edge values included: text that
a text-format array would have to quote or escape, non-ASCII text, empty strings and bytes, memoryviews, the
integer limits, and empty arrays.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import fresh_database
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmsg.service.stores._pgarray import ByteaArray, Int4Array, Int8Array, TextArray, register


@pytest.fixture(scope="module")
def conn(postgres: Any) -> Any:
    with psycopg.connect(fresh_database(postgres), autocommit=True) as connection:
        register(connection.adapters)
        yield connection


def back(conn: Any, cast: str, value: bytes) -> Any:
    row = conn.execute(f"SELECT %b::{cast}, array_ndims(%b::{cast}), pg_typeof(%b)::text", (value,) * 3).fetchone()
    assert row is not None
    return row


def test_edge_values_come_back_as_they_were_sent(conn: Any) -> None:
    texts = ["", "plain", 'a "quoted" word', "back\\slash", "{braces}, commas", "NULL", "naïve ✓ 中文", " spaced "]
    assert back(conn, "text[]", TextArray.of(texts)) == (texts, 1, "text[]")
    blobs = [b"", b"\x00\x01\xff", b"\\x41", bytes(range(256))]
    views = [memoryview(b"--view--")[2:6], *blobs]
    assert back(conn, "bytea[]", ByteaArray.of(views)) == ([b"view", *blobs], 1, "bytea[]")
    assert back(conn, "int4[]", Int4Array.of([0, -1, 2**31 - 1, -(2**31)])) == (
        [0, -1, 2**31 - 1, -(2**31)],
        1,
        "integer[]",
    )
    assert back(conn, "int8[]", Int8Array.of([0, -1, 2**63 - 1, -(2**63)])) == (
        [0, -1, 2**63 - 1, -(2**63)],
        1,
        "bigint[]",
    )


def test_empty_arrays_have_no_dimensions(conn: Any) -> None:
    for array, cast in ((TextArray, "text[]"), (ByteaArray, "bytea[]"), (Int4Array, "int4[]"), (Int8Array, "int8[]")):
        assert back(conn, cast, array.of([])) == ([], None, cast.replace("int4", "integer").replace("int8", "bigint"))


def test_an_int4_array_refuses_a_value_it_cannot_hold() -> None:
    with pytest.raises(Exception, match="format requires"):
        Int4Array.of([2**31])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]))),
    blobs=st.lists(st.binary()),
)
def test_any_text_and_bytes_come_back_as_they_were_sent(conn: Any, texts: list[str], blobs: list[bytes]) -> None:
    assert conn.execute("SELECT %b::text[], %b::bytea[]", (TextArray.of(texts), ByteaArray.of(blobs))).fetchone() == (
        texts,
        blobs,
    )
