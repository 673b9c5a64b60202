"""agentmsg._jsontext reads and writes JSON text exactly as the json module does: the same values, the same text,
the same errors, for any JSON value and for text around the edges the fast path hands back to json.loads."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import _jsontext

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _outcome(call: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "value", call(*args)
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN (json reads "NaN" as a float that equals nothing)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from(["compact", "spaced", "padded"]))
def test_loads_reads_any_json_text_as_json_loads_does(value: Any, layout: str) -> None:
    text = {
        "compact": json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        "spaced": json.dumps(value, indent=1),
        "padded": " \n" + json.dumps(value) + "\t ",
    }[layout]
    assert _same(_jsontext.loads(text), json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "{",
        '{"a":1}x',
        '{"a":1} {"b":2}',
        "\ufeff{}",
        "NaN",
        "[Infinity,-Infinity]",
        '{"a":1,"a":2}',
        "1e400",
        "12345678901234567890123456789",
        '"\\ud800"',
        '{"a":"\\u00e9\\n"}',
        "[1,]",
        "tru",
        "[" * 100_000,
    ],
)
def test_loads_gives_json_loads_value_or_error_at_the_edges(text: str) -> None:
    ours, theirs = _outcome(_jsontext.loads, text), _outcome(json.loads, text)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert _same(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("allow_nan", [False, True])
@settings(max_examples=200, deadline=None)
@given(value=JSON_VALUES)
def test_compact_encoder_writes_what_json_writes(allow_nan: bool, value: Any) -> None:
    theirs = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan).encode
    assert _jsontext.compact_encoder(allow_nan=allow_nan)(value) == theirs(value)


def _circular() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize("allow_nan", [False, True])
@pytest.mark.parametrize(
    "value",
    [
        {"x": math.nan},
        [math.inf],
        {"x": object()},
        {(1, 2): 3},
        {1: 2, None: True, 1.5: False},
        "line\u2028separator",
        _circular(),
    ],
    ids=["nan", "inf", "object", "tuple-key", "odd-keys", "str", "circular"],
)
def test_compact_encoder_gives_json_text_or_error_at_the_edges(allow_nan: bool, value: Any) -> None:
    theirs = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan).encode
    assert _outcome(_jsontext.compact_encoder(allow_nan=allow_nan), value) == _outcome(theirs, value)


def test_compact_encoder_finds_a_circular_reference_on_every_call() -> None:
    # Each call has its own table of the containers being written: a value written before is no loop later.
    encode = _jsontext.compact_encoder(allow_nan=False)
    shared = {"a": [1, 2]}
    assert encode([shared, shared]) == '[{"a":[1,2]},{"a":[1,2]}]'
    with pytest.raises(ValueError, match="Circular reference"):
        encode(_circular())
    assert encode(shared) == '{"a":[1,2]}'
