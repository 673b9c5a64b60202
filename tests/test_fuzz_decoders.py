"""Bad input, fuzzed: every decoder of untrusted input gives a value or an AgentMsgError, never another exception.

Each decoder (see ``tests/fuzzing.py``: protobuf bytes, ProtoJSON, seed-1
dicts, seed-2 JSON, every provider ``from_x`` / ``from_x_response``, every
stream parser over decoded events and over raw SSE lines) gets

- mutations of its golden payloads (keys dropped, types changed, values
  swapped, items duplicated, odd strings such as unpaired surrogates and
  ``file:`` paths, values nested 5,000 deep), which reach deep into the code;
- random JSON built from the golden payloads' own keys;
- for binary decoders, mutated encodings of every role and content kind.

A value must also be valid against the contract and re-encode. Every call
runs under a CPU-time bound (a hang fails the test; a loaded machine does not). ``AGENTMSG_SOAK=1`` runs ten
times the examples. The examples are derandomized: the same inputs every run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzzing import (
    DEEP,
    ODD_LINES,
    ODD_VALUES,
    OPS,
    SOAK,
    Target,
    json_keys,
    mutate,
    mutate_bytes,
    mutate_lines,
    nested,
    run,
    targets,
    time_bound,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg as am

TARGETS = targets()
BY_KIND = {kind: [t for t in TARGETS if t.kind == kind] for kind in ("json", "events", "text", "bytes", "lines")}
EXAMPLES = 600 if SOAK else 60
PER_CALL = 10.0  # CPU seconds: the hang bound of one decoder call (they take milliseconds)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

odd = st.sampled_from(ODD_VALUES)
mutations = st.lists(
    st.tuples(st.integers(0, 10**6), st.sampled_from(OPS), st.integers(0, 10**6), odd), min_size=1, max_size=5
)
keys = st.sampled_from(json_keys()) | st.text(max_size=8)
scalars = odd | st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
random_json = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)


def _call(target: Target, data: Any) -> Any:
    with time_bound(PER_CALL):
        return run(target, data)


def _ids(items: list[Target]) -> list[str]:
    return [t.name for t in items]


def test_every_decoder_is_covered() -> None:
    names = {t.name for t in TARGETS}
    for module in ("openai_chat", "openai_responses", "anthropic", "gemini"):
        assert f"{module}.from_{module}" in names
        assert f"{module}.from_{module}_response" in names
        assert f"{module}_stream.stream_events" in names
        assert f"{module}_stream.stream_events_from_sse" in names
    for name in ("BaseMessage", "ContentBase", "Conversation", "StreamEvent"):
        assert f"{name}.from_bytes" in names
        assert f"{name}.from_json" in names
    assert {"dict_form.messages_from_dicts", "adaline.from_adaline", "adaline.from_adaline_json"} <= names
    # Every JSON decoder has golden seeds to mutate (the ProtoJSON content/event decoders get random JSON).
    unseeded = {t.name for t in BY_KIND["json"] + BY_KIND["events"] if not t.seeds}
    assert unseeded == {"ContentBase.from_json", "StreamEvent.from_json"}


@pytest.mark.parametrize("target", BY_KIND["json"] + BY_KIND["events"], ids=_ids(BY_KIND["json"] + BY_KIND["events"]))
def test_golden_payloads_decode(target: Target) -> None:
    """Every golden payload decodes to a value: ``run`` hands an AgentMsgError back, so a refusal fails here."""
    for i, seed in enumerate(target.seeds):
        result = _call(target, seed)
        assert not isinstance(result, am.AgentMsgError), f"{target.name}: golden payload {i} is refused: {result}"
        assert result, f"{target.name}: golden payload {i} decodes to nothing: {result!r}"


@pytest.mark.parametrize("target", [t for t in TARGETS if t.seeds], ids=_ids([t for t in TARGETS if t.seeds]))
@FUZZ
@given(data=st.data())
def test_mutated_golden_payloads(target: Target, data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(target.seeds), label="seed")
    if target.kind == "bytes":
        choices = data.draw(
            st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6)
        )
        payload: Any = mutate_bytes(seed, iter(choices))
    elif target.kind == "lines":
        line = st.sampled_from(ODD_LINES) | st.text(max_size=30).map(lambda t: f"data: {t}")
        choices = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6), line), min_size=1, max_size=4))
        payload = mutate_lines(seed, iter(choices))
    else:
        payload = mutate(seed, iter(data.draw(mutations, label="mutations")))
        if target.kind == "events" and not isinstance(payload, list):
            payload = [payload]
    _call(target, payload)


@pytest.mark.parametrize("target", BY_KIND["json"], ids=_ids(BY_KIND["json"]))
@FUZZ
@given(value=random_json)
def test_random_json(target: Target, value: Any) -> None:
    _call(target, value)


@pytest.mark.parametrize("target", BY_KIND["events"], ids=_ids(BY_KIND["events"]))
@FUZZ
@given(events=st.lists(random_json | st.dictionaries(st.just("type"), st.sampled_from(json_keys())), max_size=8))
def test_random_event_lists(target: Target, events: list[Any]) -> None:
    _call(target, events)


@pytest.mark.parametrize("target", BY_KIND["text"], ids=_ids(BY_KIND["text"]))
@FUZZ
@given(text=st.text(max_size=200) | random_json.map(json.dumps) | st.sampled_from(ODD_LINES))
def test_random_text(target: Target, text: str) -> None:
    _call(target, text)


@pytest.mark.parametrize("target", BY_KIND["bytes"], ids=_ids(BY_KIND["bytes"]))
@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes(target: Target, data: bytes) -> None:
    _call(target, data)


@pytest.mark.parametrize("target", BY_KIND["lines"], ids=_ids(BY_KIND["lines"]))
@FUZZ
@given(lines=st.lists(st.sampled_from(ODD_LINES) | st.text(max_size=40), max_size=10))
def test_random_sse_lines(target: Target, lines: list[str]) -> None:
    _call(target, [line + "\n" for line in lines])


@pytest.mark.parametrize("target", BY_KIND["json"] + BY_KIND["events"], ids=_ids(BY_KIND["json"] + BY_KIND["events"]))
def test_a_deep_value_at_every_place_of_every_golden_payload(target: Target) -> None:
    """A value 5,000 levels deep (past the recursion limit) in place of each value of each seed."""
    from fuzzing import get, paths

    deep_object, deep_array = nested(DEEP), nested(DEEP, "array")
    for seed in target.seeds:
        for path in list(paths(seed)):
            for deep in (deep_object, deep_array):
                payload = json.loads(json.dumps(seed))
                if path:
                    get(payload, path[:-1])[path[-1]] = deep
                else:
                    payload = deep
                _call(target, payload)


def test_the_bugs_this_fuzzing_found_stay_fixed() -> None:
    """One case for each escape the fuzzing found (and the fix removed)."""
    from agentmsg import dict_form
    from agentmsg.providers import gemini, gemini_stream, openai_chat_stream, openai_responses
    from agentmsg.sessions import Session
    from agentmsg.streaming import StreamEvent

    deep_text = "[" * 100_000 + "]" * 100_000
    cases = [
        # ProtoJSON field names with an unpaired surrogate: upb raised SystemError.
        lambda: am.BaseMessage.from_json('{"\\ud800": 1}'),
        # SSE data nested past the recursion limit: RecursionError from json.loads.
        lambda: list(openai_chat_stream.stream_events_from_sse([f"data: {deep_text}\n", "\n"])),
        lambda: list(gemini_stream.stream_events_from_sse([f"data: {deep_text}\n", "\n"])),
        lambda: Session.import_jsonl(deep_text),
        lambda: Session.import_jsonl(b"\xff\xfe"),  # UnicodeDecodeError
        lambda: dict_form.messages_from_dicts(1.5),  # type: ignore[arg-type]  # TypeError: not iterable
        # Strings protobuf cannot hold (unpaired surrogates): UnicodeEncodeError from the field setters.
        lambda: am.ToolResultContent("c", "\ud800"),
        lambda: StreamEvent.text_delta(0, "\ud800"),
        lambda: am.DocumentContent.from_file_id("f", filename="\ud800"),
        lambda: gemini.from_gemini({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "\ud800"}}]}]}),
        # int32 fields given bigger numbers: ValueError from protobuf.
        lambda: am.ToolCallContent("c", "n", index=2**40),
        lambda: StreamEvent.block_stop(2**63),
        # Times no platform can represent: OverflowError.
        lambda: list(
            openai_chat_stream.stream_events(
                [{"object": "chat.completion.chunk", "id": "x", "created": 1e308, "choices": []}]
            )
        ),
        # Unhashable and deeply nested values where a name is expected: TypeError / RecursionError.
        lambda: gemini.from_gemini(
            {
                "contents": [
                    {
                        "role": "user",
                        "parts": [
                            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}, "mediaResolution": {"level": []}}
                        ],
                    }
                ]
            },
            pass_through_unknown=False,  # by default the part is kept verbatim, unread
        ),
        lambda: dict_form.messages_from_dicts([{"role": nested(100_000)}]),
        # Metadata nested 40 deep (found by atheris): protobuf's own DecodeError from its 100-level limit.
        lambda: am.ToolCallContent("c", "n", metadata=nested(40)),
        lambda: dict_form.messages_from_dicts(
            [{"role": "custom", "custom_type": "x", "contents": [], "details": nested(40, "array")}]
        ),
        lambda: dict_form.messages_from_dicts([{"role": "user", "contents": [], "metadata": nested(100_000)}]),
        lambda: openai_responses.from_openai_responses_response(
            {"id": "r", "status": "completed", "output": [], "usage": {"input_tokens": nested(100_000)}}
        ),
    ]
    for case in cases:
        with time_bound(PER_CALL), pytest.raises(am.AgentMsgError):
            case()
