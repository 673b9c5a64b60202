"""Property tests: any valid message survives every form; garbage never escapes as a foreign error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from samples import PDF, WAV, png_bytes

import agentmsg as am
from agentmsg import dict_form

PNG = png_bytes()
text = st.text(max_size=40)
ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=16)
json_scalar = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | text
)
json_value = st.recursive(
    json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=8
)
json_object = st.dictionaries(text, json_value, max_size=4)
details = st.sampled_from([None, *am.ImageDetail])
timestamps = st.integers(0, 4_102_444_800_000_000).map(lambda us: us / 1_000_000)

texts = st.builds(am.TextContent, text, signature=st.sampled_from(["", "sig"]))
images = st.one_of(
    st.builds(lambda d: am.ImageContent(PNG, detail=d), details),
    st.builds(lambda d: am.ImageContent.from_url("https://example.test/i.webp", detail=d), details),
    st.builds(am.ImageContent.from_file_id, ident),
)
# A block of several images (or clips): the seed's lists, in any order of sources.
image_lists = st.builds(
    lambda items, d: am.ImageContent(images=items, detail=d),
    st.lists(
        st.sampled_from([PNG, "https://example.test/j.png", "https://example.test/k.gif"]), min_size=2, max_size=4
    ),
    details,
)
images = st.one_of(images, image_lists)
audio = st.one_of(
    st.just(am.AudioContent(WAV)),
    st.just(am.AudioContent.from_url("https://example.test/a.ogg")),
    st.builds(
        lambda items: am.AudioContent(audio=items),
        st.lists(st.sampled_from([WAV, "https://example.test/b.mp3"]), min_size=2, max_size=3),
    ),
)
documents = st.one_of(
    st.builds(lambda t: am.DocumentContent.from_text(t, title="t"), st.text(min_size=1, max_size=40)),
    st.just(am.DocumentContent(PDF, filename="x.pdf")),
)
thinking = st.builds(am.ThinkingContent, text, st.sampled_from(["", "c2lnbmF0dXJl"]))
redacted = st.builds(am.RedactedThinkingContent, st.text(min_size=1, max_size=20))
arguments = st.one_of(json_object.map(json.dumps), text)  # valid or not, kept verbatim
tool_calls = st.builds(
    lambda i, n, a, k, idx, m: am.ToolCallContent(i, n, arguments=a, kind=k, index=idx, metadata=m),
    ident,
    ident,
    arguments,
    st.sampled_from(list(am.ToolKind)),
    st.integers(0, 2**31 - 1),
    st.none() | json_object,
)
result_parts = st.lists(texts | images | audio | documents, max_size=3)
tool_results = st.builds(
    lambda i, c, e, m, t: am.ToolResultContent(i, c, is_error=e, metadata=m, terminate=t),
    ident,
    text | result_parts,
    st.booleans(),
    st.none() | json_object,
    st.booleans(),
)
counts = st.none() | st.integers(0, 2**62)
money = st.none() | st.floats(0, 1e6, allow_nan=False)
usage = st.none() | st.builds(
    am.Usage,
    counts,
    counts,
    counts,
    counts,
    counts,
    counts,
    st.none() | st.builds(am.UsageCost, money, money, money, money, money),
)
common: dict[str, Any] = {"id": ident, "timestamp": timestamps}

messages = st.one_of(
    st.builds(am.SystemMessage, st.lists(texts, min_size=1, max_size=3), **common),
    st.builds(
        am.UserMessage, st.lists(texts | images | audio | documents | tool_results, min_size=1, max_size=4), **common
    ),
    st.builds(
        am.AssistantMessage,
        st.lists(texts | thinking | redacted | tool_calls, min_size=1, max_size=4),
        usage=usage,
        stop_reason=st.sampled_from([None, *am.StopReason]),
        stop_reason_raw=text,
        error=text,
        provenance=st.none() | st.builds(am.Provenance, ident, ident, text, text),
        **common,
    ),
    st.builds(am.ToolMessage, st.lists(tool_results, min_size=1, max_size=3), **common),
    st.builds(am.CustomMessage, ident, st.lists(texts | images, max_size=2), details=st.none() | json_value, **common),
    st.builds(am.BranchSummaryMessage, st.text(min_size=1, max_size=20), ident, **common),
    st.builds(am.CompactionSummaryMessage, st.text(min_size=1, max_size=20), counts, **common),
)


@settings(max_examples=300, deadline=None)
@given(messages)
def test_any_message_round_trips_every_form(message: am.AgentMessage) -> None:
    am.validate(message)
    assert am.BaseMessage.from_bytes(message.to_bytes(), validate=True) == message
    assert am.BaseMessage.from_json(message.to_json(), validate=True) == message
    back = dict_form.message_from_dict(json.loads(json.dumps(message.to_dict())))
    assert back == message, (back.to_bytes().hex(), message.to_bytes().hex(), message.to_dict())


@settings(max_examples=50, deadline=None)
@given(st.lists(messages, max_size=6))
def test_any_conversation_round_trips(items: list[am.AgentMessage]) -> None:
    conversation = am.Conversation(items)
    assert am.Conversation.from_bytes(conversation.to_bytes()) == conversation
    assert list(am.Conversation.from_json(conversation.to_json())) == items


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_give_a_value_or_an_agentmsg_error(data: bytes) -> None:
    for cls in (am.BaseMessage, am.ContentBase, am.Conversation):
        try:
            value = cls.from_bytes(data)
        except am.AgentMsgError:
            continue
        assert isinstance(value, cls)
        am.violations(value)  # validation of garbage reports, never crashes


SEED1_USER = {"role": "user", "contents": [{"type": "text", "content": "hi"}], "id": "u1", "timestamp": 1.5}


@settings(max_examples=200, deadline=None)
@given(json_value)
@example({})  # ProtoJSON's empty message: a value, so the value checks below always run
@example({"id": "m1", "user": {"content": [{"text": {"text": "hi"}}]}, "timestamp": "2024-01-01T00:00:00Z"})
@example([SEED1_USER, {**SEED1_USER, "id": "u2"}])
def test_arbitrary_json_gives_a_value_or_an_agentmsg_error(value: Any) -> None:
    text = json.dumps(value)
    try:
        message = am.BaseMessage.from_json(text)
    except am.AgentMsgError:
        pass
    else:
        # A message, whole: what it prints in either form reads back equal.
        assert isinstance(message, am.BaseMessage)
        assert am.BaseMessage.from_json(message.to_json()) == message
        assert am.BaseMessage.from_bytes(message.to_bytes()) == message
    items = value if isinstance(value, list) else [value]
    try:
        messages = dict_form.messages_from_dicts(items)
    except am.AgentMsgError:
        return
    # One message per dict, each valid (the constructors checked it), the same again from its own dicts.
    assert len(messages) == len(items)
    assert all(isinstance(m, am.BaseMessage) and not am.violations(m) for m in messages)
    assert dict_form.messages_from_dicts(dict_form.messages_to_dicts(messages)) == messages
