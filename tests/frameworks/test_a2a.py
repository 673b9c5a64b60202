"""The A2A converter: exact round trips through the agentmsg extension, reported losses without it, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types import Message, Part, Role
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from samples import PDF, WAV, every_content, every_role, hosted_content, png_bytes
from test_properties import messages as any_message

import agentmsg as am
from agentmsg.frameworks.a2a import CONTENT_MEDIA_TYPE, EXTENSION_URI, agent_extension, from_a2a, to_a2a
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.v1 import message_pb2


def _wire(messages: list[Message]) -> list[Message]:
    """Through the A2A wire: binary and back, then ProtoJSON and back (what the HTTP bindings carry)."""
    out = []
    for message in messages:
        again = Message.FromString(message.SerializeToString())
        out.append(json_format.ParseDict(json_format.MessageToDict(again), Message()))
    return out


def test_every_role_round_trips_exactly_through_the_extension() -> None:
    originals = every_role()
    written = to_a2a(originals, context_id="ctx-1")
    assert all(EXTENSION_URI in m.extensions and m.context_id == "ctx-1" for m in written)
    report = ConversionReport()
    back = from_a2a(_wire(written), report=report)
    assert back == originals
    assert [m.to_bytes() for m in back] == [m.to_bytes() for m in originals]
    assert not report, report.summary()


def test_every_content_kind_round_trips_exactly_through_the_extension() -> None:
    """Each block in a role that may carry it: citations, logprobs, hosted tools, provider blocks included."""
    user_kinds = (
        am.TextContent,
        am.ImageContent,
        am.AudioContent,
        am.DocumentContent,
        am.ToolResultContent,
        am.ToolApprovalContent,
    )
    blocks = [*every_content(), *hosted_content()]
    user = [b for b in blocks if isinstance(b, user_kinds)]
    assistant = [b for b in blocks if not isinstance(b, user_kinds[1:])]
    originals = [
        am.UserMessage(user, id="u", timestamp=1.0),
        am.AssistantMessage(assistant, id="a", timestamp=2.0),
    ]
    assert len(user) + len(assistant) > len(blocks)  # text is in both; every other block in one
    report = ConversionReport()
    assert from_a2a(_wire(to_a2a(originals)), report=report) == originals
    assert not report, report.summary()


def test_a_plain_reader_sees_the_text_and_files_of_an_extended_message() -> None:
    user, assistant = every_role()[1], every_role()[2]
    a2a_user, a2a_assistant = to_a2a([user, assistant])
    kinds = [p.WhichOneof("content") for p in a2a_user.parts]
    assert kinds == ["text", "raw", "raw", "raw"]
    assert a2a_user.parts[0].text == "What is this?"
    assert a2a_user.parts[1].raw == png_bytes()
    assert a2a_user.parts[1].media_type == "image/png"
    assert a2a_user.parts[3].filename == "spec.pdf"
    assert a2a_user.parts[3].media_type == "application/pdf"
    assert a2a_user.role == Role.ROLE_USER
    assert a2a_assistant.role == Role.ROLE_AGENT
    # what A2A has no kind for rides as data parts of the agentmsg content type, readable JSON
    data = [p for p in a2a_assistant.parts if p.WhichOneof("content") == "data"]
    assert [p.media_type for p in data] == [CONTENT_MEDIA_TYPE] * 4
    call = json_format.MessageToDict(data[2].data)
    assert call["toolCall"]["name"] == "lookup"
    assert call["toolCall"]["arguments"] == '{"q": "cat", "n": 10}'
    envelope = json_format.MessageToDict(a2a_assistant.metadata)[EXTENSION_URI]
    assert envelope["assistant"]["usage"]["inputTokens"] == "100"
    assert envelope["assistant"]["provenance"]["provider"] == "anthropic"


def test_without_the_extension_every_drop_is_a_loss() -> None:
    originals = every_role()
    report = ConversionReport()
    written = to_a2a(originals, extension=False, report=report)
    assert all(not m.extensions and not m.metadata for m in written)
    lost = {(loss.path, loss.what) for loss in report.losses}
    # t1 (a tool message: tool results only) has no plain part: left out
    assert [m.message_id for m in written] == ["s1", "u1", "a1", "a2", "c1", "b1", "k1"]
    assert ("[3]", "the message") in lost
    assert ("[4]", "the message") in lost  # u2: a tool result only
    for expected in [
        ("[0].role", "the system role"),
        ("[1].timestamp", "the timestamp"),
        ("[1].name", "the participant name"),
        ("[1].contents[1].detail", "the image detail"),
        ("[2].contents[0]", "a thinking"),
        ("[2].contents[1]", "a redacted thinking"),
        ("[2].contents[3]", "a tool call"),
        ("[2].usage", "the usage"),
        ("[2].stop_reason", "the stop reason"),
        ("[2].provenance", "the provenance"),
        ("[3].contents[0]", "a tool result"),
        ("[6]", "the custom role"),
        ("[7]", "the branch_summary role"),
    ]:
        assert expected in lost, expected
    # what is left is read back plainly
    back = from_a2a(_wire(written), report=ConversionReport())
    assert list(back[1].contents) == [
        am.TextContent("What is this?"),
        am.ImageContent(png_bytes()),
        am.AudioContent(WAV),
        am.DocumentContent(PDF, filename="spec.pdf"),
    ]
    assert back[2].text_content() == "Checking."
    assert isinstance(back[0], am.UserMessage)
    assert back[0].text_content() == "You are terse."


def test_strict_refuses_and_no_report_warns() -> None:
    message = every_role()[2]
    with pytest.raises(ConversionError, match=r"A2A cannot hold 9 item\(s\): \[0\].timestamp"):
        to_a2a([message], extension=False, strict=True)
    with pytest.warns(ConversionWarning, match="A2A"):
        to_a2a([message], extension=False)
    assert to_a2a([message], strict=True)  # nothing is lost with the extension


def test_several_images_and_media_by_file_id_through_the_extension() -> None:
    message = am.UserMessage(
        [
            am.ImageContent(images=[png_bytes(), "https://example.test/j.png"], detail="high"),
            am.AudioContent(audio=[WAV, "https://example.test/b.mp3"]),
            am.ImageContent.from_file_id("file-1"),
            am.DocumentContent.from_text("notes", title="T"),
        ],
        id="m",
        timestamp=1.5,
    )
    (written,) = to_a2a([message])
    assert [p.WhichOneof("content") for p in written.parts] == ["raw", "url", "raw", "url", "data", "raw"]
    assert from_a2a(_wire([written])) == [message]
    report = ConversionReport()
    to_a2a([message], extension=False, report=report)
    whats = [loss.what for loss in report.losses]
    assert "the grouping of 2 images in one block" in whats
    assert "the image by file id" in whats
    assert "the document title" in whats


def test_plain_a2a_from_another_agent() -> None:
    incoming = {
        "messageId": "x1",
        "contextId": "c",
        "role": "ROLE_AGENT",
        "parts": [
            {"text": "Here you go."},
            {"data": {"rows": [1, 2.5]}, "metadata": {"https://other.test/ext": {"a": 1}}},
            {"url": "https://example.test/r.pdf", "mediaType": "application/pdf", "filename": "r.pdf"},
        ],
        "metadata": {"trace": "t"},
        "referenceTaskIds": ["task-0"],
    }
    report = ConversionReport()
    (message,) = from_a2a([incoming], report=report)
    assert isinstance(message, am.AssistantMessage)
    assert message.id == "x1"
    assert [b.content for b in message.contents] == ["Here you go.", '{"rows":[1,2.5]}']
    whats = [loss.what for loss in report.losses]
    assert whats == [
        "metadata 'https://other.test/ext'",
        "the data part's type",
        "the file",
        "metadata 'trace'",
        "the referenced task ids",
    ]
    user = {"messageId": "u", "role": "ROLE_USER", "parts": [{"raw": "AAEC", "mediaType": "audio/wav"}]}
    (read,) = from_a2a([user], report=ConversionReport())
    assert list(read.contents) == [am.AudioContent(b"\x00\x01\x02", media_type="audio/wav")]


def test_the_agent_card_declaration() -> None:
    extension = agent_extension()
    assert extension.uri == EXTENSION_URI == "https://agentmsg.dev/a2a/ext/v1"
    assert not extension.required
    assert "tool calls" in extension.description
    assert agent_extension(required=True).required


def _extended(**changes: Any) -> dict[str, Any]:
    (written,) = to_a2a([every_role()[2]])
    value = json_format.MessageToDict(written)
    value.update(changes)
    return value


@pytest.mark.parametrize(
    ("bad", "field", "problem"),
    [
        ({"role": "ROLE_UNSPECIFIED", "parts": [{"text": "x"}], "messageId": "m"}, "[0].role", "ROLE_USER"),
        ({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}], "oops": 1}, "[0]", "oops"),
        (
            {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "[0].id",
            "must be at least 1 characters",
        ),
        (_extended(metadata={EXTENSION_URI: {"assistant": {}, "nope": 1}}), f'[0].metadata["{EXTENSION_URI}"]', "nope"),
        (_extended(metadata={EXTENSION_URI: {}}), f'[0].metadata["{EXTENSION_URI}"]', "no role"),
        (
            _extended(parts=[{"text": "x", "metadata": {EXTENSION_URI: {"what": 1}}}]),
            f'[0].parts[0].metadata["{EXTENSION_URI}"]',
            "expected one of",
        ),
        (
            _extended(parts=[{"text": "x", "metadata": {EXTENSION_URI: {"data": True}}}]),
            "[0].parts[0]",
            "must be a data part",
        ),
        (
            _extended(parts=[{"data": {"toolCall": {"nope": 1}}, "metadata": {EXTENSION_URI: {"data": True}}}]),
            "[0].parts[0].data",
            "toolCall",
        ),
        (
            _extended(parts=[{"url": "https://e.test/a.png", "metadata": {EXTENSION_URI: {"item": 1}}}]),
            f'[0].parts[0].metadata["{EXTENSION_URI}"]',
            "must follow an image or audio block",
        ),
        (
            _extended(parts=[{"text": "x", "metadata": {EXTENSION_URI: {"content": {"image": {}}}}}]),
            "[0].parts[0]",
            "cannot be read from a text part",
        ),
        ("not a message", "[0]", "expected an A2A Message"),
    ],
)
def test_bad_input_names_the_field_and_the_problem(bad: Any, field: str, problem: str) -> None:
    with pytest.raises(am.ValidationError) as caught:
        from_a2a([bad], report=ConversionReport())
    assert any(v.field == field and problem in v.message for v in caught.value.violations), caught.value.violations


def test_a_tool_call_with_an_empty_id_is_refused_by_the_contract() -> None:
    bad = _extended(
        parts=[{"data": {"toolCall": {"id": "", "name": "n"}}, "metadata": {EXTENSION_URI: {"data": True}}}]
    )
    with pytest.raises(am.ValidationError) as caught:
        from_a2a([bad])
    assert [v.field for v in caught.value.violations] == ["[0].assistant.content[0].tool_call.id"]


def test_single_message_is_refused_with_a_clear_error() -> None:
    with pytest.raises(am.ValidationError, match="expected a list of messages"):
        to_a2a(every_role()[0])  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError, match="expected a list of A2A messages"):
        from_a2a(Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="x")]))  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.lists(any_message, min_size=1, max_size=4))
def test_any_conversation_round_trips_exactly_through_the_extension(items: list[am.AgentMessage]) -> None:
    report = ConversionReport()
    back = from_a2a(_wire(to_a2a(items, report=report)), report=report)
    assert back == items
    assert not report, report.summary()


@settings(max_examples=150, deadline=None)
@given(any_message)
def test_any_message_without_the_extension_reports_what_it_drops(message: am.AgentMessage) -> None:
    report = ConversionReport()
    written = to_a2a([message], extension=False, report=report)
    assert any(loss.what == "the timestamp" for loss in report.losses)  # A2A has none, so always one loss at least
    if message.role is am.Role.TOOL:
        assert written == []  # tool results have no plain part
    read = from_a2a(_wire(written), report=ConversionReport())
    assert len(read) == len(written)
    if written and not isinstance(message, am.SessionMessage):
        kept = [b for b in message.contents if isinstance(b, am.TextContent)]
        assert [b.content for b in read[0].contents if isinstance(b, am.TextContent)] == [b.content for b in kept]


def test_another_extensions_metadata_on_an_extended_part_is_reported() -> None:
    value = json_format.MessageToDict(to_a2a([am.UserMessage.text("hi", id="m", timestamp=1.0)])[0])
    value["parts"][0]["metadata"]["https://other.test/ext"] = {"x": 1}
    report = ConversionReport()
    (message,) = from_a2a([value], report=report)
    assert message.text_content() == "hi"
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ('[0].parts[0].metadata["https://other.test/ext"]', "metadata 'https://other.test/ext'")
    ]


def test_a_timestamp_protojson_cannot_print_is_a_validation_error() -> None:
    message = am.UserMessage.text("hi", id="m", timestamp=1.0)
    message.pb.timestamp.seconds = 253_402_300_800 + 86_400  # after 9999-12-31, stored before the range rule
    with pytest.raises(am.ValidationError) as caught:
        to_a2a([message])
    assert [(v.field, v.rule_id) for v in caught.value.violations] == [("[0]", "json.unprintable")]


def test_a_newer_peers_block_and_message_are_reported_not_lost_silently() -> None:
    user = am.UserMessage.text("hi", id="u", timestamp=1)
    user.pb.user.content.add().MergeFromString(b"\x9a\x06\x00")  # content arm 99, unknown to this version
    newer = am.BaseMessage.from_bytes(_newer_message())
    for extension in (True, False):
        report = ConversionReport()
        written = to_a2a([user, newer], extension=extension, report=report)
        assert [m.message_id for m in written] == ["u"]
        lost = [(loss.path, loss.what) for loss in report.losses if loss.what != "the timestamp"]
        assert lost == [("[0].contents[1]", "a block of unknown kind"), ("[1]", "the message")]


def _newer_message() -> bytes:
    newer = message_pb2.Message(id="n1")
    newer.timestamp.FromSeconds(1)
    return newer.SerializeToString() + b"\x9a\x06\x02\x08\x01"  # role arm 99
