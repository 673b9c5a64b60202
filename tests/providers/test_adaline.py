"""The Adaline gateway form (``agentmsg.providers.adaline``): golden payloads, round trips, errors.

Golden payloads live in ``tests/golden/adaline/*.json``; each names, under
``_source``, the ``adaline/gateway`` schema files it follows.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import agentmsg as am
from agentmsg import (
    AgentMessage,
    AssistantMessage,
    AudioContent,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    DocumentContent,
    ImageContent,
    ImageDetail,
    Provenance,
    RedactedThinkingContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolKind,
    ToolMessage,
    ToolResultContent,
    UnknownMessage,
    Usage,
    UsageCost,
    UserMessage,
    ValidationError,
    content_from_proto,
    message_from_proto,
)
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.adaline import (
    from_adaline,
    from_adaline_json,
    message_from_adaline,
    message_to_adaline,
    to_adaline,
    to_adaline_json,
)
from agentmsg.v1 import content_pb2, message_pb2

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "adaline"
SCHEMA_DIR = "packages/types/src/message/"

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
PDF = b"%PDF-1.4\n%%EOF\n"
TS = datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)


def _image_bytes(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), (10, 20, 30)).save(buffer, format=fmt)
    return buffer.getvalue()


def load_golden(name: str) -> list[dict[str, Any]]:
    """A golden payload, with its ``_source`` note checked and stripped."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["repo"] == "adaline/gateway"
    assert len(source["commit"]) == 40
    assert source["schemas"]
    assert all(path.startswith(SCHEMA_DIR) and path.endswith(".ts") for path in source["schemas"])
    messages = doc.pop("messages")
    assert doc == {}, f"unexpected top-level keys in {name}: {sorted(doc)}"
    assert isinstance(messages, list)
    return messages


def conversation() -> list[BaseMessage]:
    """Every role and content kind the format can hold, with fixed ids and timestamps."""
    return [
        SystemMessage([TextContent("You are terse.")], id="m0", timestamp=TS, name="policy"),
        UserMessage(
            [
                TextContent("Look at these.", signature="txt-sig"),
                ImageContent(PNG, detail="high"),
                ImageContent("https://example.com/cat.jpg"),
                DocumentContent(PDF, filename="report.pdf", title="Q3 report"),
                DocumentContent.from_url("https://example.com/paper.pdf", filename="paper.pdf"),
            ],
            id="m1",
            timestamp=TS,
        ),
        AssistantMessage(
            [
                ThinkingContent("Two tools.", "sig-1"),
                RedactedThinkingContent("opaque"),
                TextContent("Checking."),
                ToolCallContent(
                    "call_1", "read_file", {"path": "a.txt"}, kind="read", index=0, metadata={"approved": True}
                ),
                ToolCallContent(
                    "call_2", "lookup", arguments='{"q": 1', index=1, signature="ts-2", server_name="search-mcp"
                ),
            ],
            usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15, cost=UsageCost(total=0.25)),
            stop_reason=StopReason.TOOL_CALLS,
            stop_reason_raw="tool_use",
            provenance=Provenance("anthropic", "anthropic-messages", "claude-x", "msg_1"),
            id="m2",
            timestamp=TS,
        ),
        ToolMessage(
            [
                ToolResultContent("call_1", "hello", index=0, metadata={"bytes": 5}),
                ToolResultContent(
                    "call_2",
                    "not found",
                    is_error=True,
                    name="lookup",
                    index=1,
                    terminate=True,
                    terminate_message="done",
                ),
            ],
            id="m3",
            timestamp=TS,
        ),
        UserMessage(
            [ToolResultContent("call_1", [TextContent("a"), TextContent("b")], name="read_file")], id="m4", timestamp=TS
        ),
        AssistantMessage([], error="upstream timeout", stop_reason="error", id="m5", timestamp=TS, name="worker"),
    ]


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON value, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def violation_of(exc: pytest.ExceptionInfo[ValidationError], field: str) -> tuple[str, str]:
    """The (rule_id, message) of the violation at ``field`` (which must exist)."""
    found = {v.field: (v.rule_id, v.message) for v in exc.value.violations}
    assert field in found, f"no violation at {field!r}; got {exc.value.violations}"
    return found[field]


# --------------------------------------------------------------------------- golden payloads, format -> agentmsg


def test_golden_chat_text_imports_roles_and_text() -> None:
    payload = load_golden("chat_text.json")
    messages = from_adaline(payload)
    assert [type(m) for m in messages] == [SystemMessage, UserMessage, AssistantMessage]
    assert messages[0].contents == (TextContent("You are terse."),)
    assert messages[1].contents == (TextContent("Hello"), TextContent(""))
    assert messages[2].contents == (TextContent("Hi."),)
    # No stash: each message gets a fresh UUID4 id and a timestamp.
    assert len({m.id for m in messages}) == 3
    assert all(len(m.id) == 36 for m in messages)
    # Nothing the stock form carries is lost: re-exported without metadata it is the same payload.
    assert to_adaline(messages, include_metadata=False) == payload


def test_golden_image_imports_both_base64_forms_and_urls() -> None:
    (message,) = from_adaline(load_golden("image.json"))
    assert isinstance(message, UserMessage)
    text, bare, data_url, jpg_url, plain_url = message.contents
    assert text == TextContent("What is in these?")
    assert bare == ImageContent(PNG, detail="low")
    assert data_url == ImageContent(PNG, detail=ImageDetail.HIGH)
    assert isinstance(bare, ImageContent)
    assert bare.media_type == "image/png"
    assert bare.data == PNG
    assert jpg_url == ImageContent.from_url("https://example.com/cat.jpg", detail="auto")
    assert isinstance(jpg_url, ImageContent)
    assert jpg_url.media_type == "image/jpeg"
    assert jpg_url.detail is ImageDetail.AUTO
    assert isinstance(plain_url, ImageContent)
    assert plain_url.url == "https://example.com/render"
    assert plain_url.media_type == ""
    assert plain_url.detail is ImageDetail.MEDIUM


def test_golden_pdf_imports_and_drops_file_id_and_size() -> None:
    payload = load_golden("pdf.json")
    (message,) = from_adaline(payload)
    inline, by_url = message.contents
    assert inline == DocumentContent(PDF, media_type="application/pdf", filename="report.pdf")
    assert by_url == DocumentContent.from_url("https://example.com/paper.pdf", filename="paper.pdf")
    assert isinstance(by_url, DocumentContent)
    assert by_url.media_type == "application/pdf"
    # file.id has no agentmsg field: export derives it from the content (SHA-256) instead.
    out = to_adaline([message], include_metadata=False)[0]["content"]
    assert out[0]["file"] == {"name": "report.pdf", "id": hashlib.sha256(PDF).hexdigest(), "size": len(PDF)}
    assert out[0]["value"] == {"type": "base64", "base64": "data:application/pdf;base64,JVBERi0xLjQKJSVFT0YK"}
    assert out[1]["file"] == {"name": "paper.pdf", "id": hashlib.sha256(b"https://example.com/paper.pdf").hexdigest()}


def test_golden_tool_use_imports_calls_and_both_result_roles() -> None:
    payload = load_golden("tool_use.json")
    user, assistant, tool, user_result = from_adaline(payload)
    assert isinstance(user, UserMessage)
    assert isinstance(assistant, AssistantMessage)
    first, second = assistant.tool_calls()
    assert first == ToolCallContent("call_1", "get_weather", arguments='{"city": "Paris", "days": 3}', index=0)
    assert first.args == {"city": "Paris", "days": 3}
    # Arguments are verbatim, even text that is not a JSON object.
    assert second.arguments == '{"city":"Oslo"'
    assert second.arguments_error is not None
    assert (second.index, second.server_name, second.signature) == (1, "weather-mcp", "c2lnbmF0dXJl")
    assert second.kind is None
    assert isinstance(tool, ToolMessage)
    assert tool.contents == (ToolResultContent("call_1", '{"temp": 21}', name="get_weather", index=0),)
    assert isinstance(user_result, UserMessage)
    assert user_result.contents == (ToolResultContent("call_2", "", name="lookup", index=1),)
    # apiResponse has no agentmsg field; everything else comes back unchanged.
    del payload[2]["content"][0]["apiResponse"]
    assert to_adaline([user, assistant, tool, user_result], include_metadata=False) == payload


def test_golden_reasoning_imports_thinking_and_redacted() -> None:
    payload = load_golden("reasoning.json")
    (message,) = from_adaline(payload)
    assert message.contents == (
        ThinkingContent("Two plus two.", "EqQBCkYIBRgC"),
        ThinkingContent("", ""),
        RedactedThinkingContent("EmwKAhgBEgy3va3pzix"),
        TextContent("4"),
    )
    assert to_adaline([message], include_metadata=False) == payload


def test_golden_conversation_is_the_export_and_imports_back() -> None:
    payload = load_golden("conversation.json")
    assert to_adaline(conversation()) == payload
    assert from_adaline(payload) == conversation()


# --------------------------------------------------------------------------- agentmsg -> format: shapes


def test_export_shapes_follow_the_schema() -> None:
    image_url = ImageContent.from_url("https://example.com/x.png", detail="low")
    message = UserMessage([ImageContent(PNG), image_url], id="u", timestamp=TS)
    data = message_to_adaline(message)
    assert data["role"] == "user"
    inline, url = data["content"]
    assert inline["modality"] == "image"
    assert inline["detail"] == "auto"  # an unstated detail is sent as "auto"...
    assert inline["metadata"] == {"agentmsg": {"detailUnset": True}}  # ...and remembered as unstated
    assert inline["value"] == {"type": "base64", "base64": f"data:image/png;base64,{PNG_B64}", "mediaType": "png"}
    assert url == {"modality": "image", "detail": "low", "value": {"type": "url", "url": "https://example.com/x.png"}}
    assert data["metadata"] == {"agentmsg": {"id": "u", "timestamp": "2025-01-02T03:04:05.123456Z"}}


def test_export_without_metadata_has_no_metadata_anywhere() -> None:
    report = ConversionReport()
    payload = to_adaline(conversation(), include_metadata=False, report=report)
    assert all(key != "metadata" for key, _ in walk(payload))
    # Every piece of the stash left out is reported, but the message ids and times.
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0]", "agentmsg data the format has no field for (name)"),
        ("[1].contents[0]", "agentmsg data the format has no field for (signature)"),
        ("[1].contents[2]", "agentmsg data the format has no field for (detailUnset)"),
        ("[1].contents[3]", "agentmsg data the format has no field for (title)"),
        ("[2].contents[3]", "agentmsg data the format has no field for (kind, metadata)"),
        ("[2]", "agentmsg data the format has no field for (usage, stopReason, stopReasonRaw, provenance)"),
        ("[3].contents[0]", "agentmsg data the format has no field for (nameFromCall, metadata)"),
        ("[3].contents[1]", "agentmsg data the format has no field for (isError, terminate, terminateMessage)"),
        ("[3]", "the grouping of 2 tool results in one message"),
        ("[4].contents[0]", "agentmsg data the format has no field for (textBlocks)"),
        ("[5]", "agentmsg data the format has no field for (name, stopReason, error)"),
    ]
    # Without a report the same losses come as one warning; strict refuses.
    with pytest.warns(ConversionWarning, match="11 item"):
        assert to_adaline(conversation(), include_metadata=False) == payload
    with pytest.raises(ConversionError):
        to_adaline(conversation(), include_metadata=False, strict=True)
    # The last message records an error with no content: without its stash agentmsg cannot read it back.
    assert payload[6] == {"role": "assistant", "content": []}
    with pytest.raises(ValidationError) as exc:
        from_adaline(payload)
    assert violation_of(exc, "[6].content")[0] == "adaline.min_items"
    back = from_adaline(payload[:6])
    # What the format's own fields carry survives; what lived only in the stash is lost.
    # The tool message of two results went out as two tool messages (the gateway's providers want one result
    # a tool message) and, without the sameMessage mark, comes back as two.
    system, user, assistant, tool, tool_2, user_result = back
    assert system.contents == (TextContent("You are terse."),)
    assert (system.id, system.name) != ("m0", "policy")
    assert user.contents == (
        TextContent("Look at these."),  # the signature is lost
        ImageContent(PNG, detail="high"),
        ImageContent("https://example.com/cat.jpg", detail="auto"),  # an unstated detail reads as "auto"
        DocumentContent(PDF, filename="report.pdf"),  # the title is lost
        DocumentContent.from_url("https://example.com/paper.pdf", filename="paper.pdf"),
    )
    assert isinstance(assistant, AssistantMessage)
    assert (assistant.usage, assistant.stop_reason, assistant.provenance) == (None, None, None)
    read, lookup = assistant.tool_calls()
    assert (read.kind, read.metadata, read.arguments) == (None, {}, '{"path":"a.txt"}')
    assert lookup == ToolCallContent(
        "call_2", "lookup", arguments='{"q": 1', index=1, signature="ts-2", server_name="search-mcp"
    )
    assert tool.contents == (ToolResultContent("call_1", "hello", name="read_file"),)  # the name from the call
    # is_error and terminate are lost
    assert tool_2.contents == (ToolResultContent("call_2", "not found", name="lookup", index=1),)
    assert user_result.contents == (ToolResultContent("call_1", "ab", name="read_file"),)  # one block, not two


def test_tool_result_name_is_taken_from_the_earlier_call() -> None:
    call = AssistantMessage([ToolCallContent("c9", "search", {})], id="a", timestamp=TS)
    result = ToolMessage([ToolResultContent("c9", "ok")], id="t", timestamp=TS)
    payload = to_adaline([call, result])
    item = payload[1]["content"][0]
    assert item["name"] == "search"
    assert item["metadata"] == {"agentmsg": {"nameFromCall": True}}
    back = from_adaline(payload)
    assert back == [call, result]
    restored = back[1].contents[0]
    assert isinstance(restored, ToolResultContent)
    assert restored.name == ""


# --------------------------------------------------------------------------- round trips


def _with_nanos() -> UserMessage:
    message = UserMessage.text("precise", id="n", timestamp=TS)
    message.pb.timestamp.nanos = 123_456_789
    return message


def _url_image_without_media_type() -> ImageContent:
    pb = content_pb2.Content(image=content_pb2.ImageContent(url="https://example.com/a.png"))
    return ImageContent.from_proto(pb, validate=True)


ROUND_TRIPS: dict[str, list[BaseMessage]] = {
    "system": [SystemMessage([TextContent("a"), TextContent("b")], id="s", timestamp=TS, name="ops")],
    "user-text": [UserMessage([TextContent("hi", signature="g"), TextContent("")], id="u", timestamp=TS)],
    "image-formats": [
        UserMessage(
            [
                ImageContent(_image_bytes("PNG")),
                ImageContent(_image_bytes("JPEG")),
                ImageContent(_image_bytes("WEBP")),
                ImageContent(_image_bytes("GIF")),
            ],
            id="i",
            timestamp=TS,
        )
    ],
    "image-details": [
        UserMessage(
            [ImageContent(PNG, detail=detail) for detail in (None, "low", "medium", "high", "auto")],
            id="d",
            timestamp=TS,
        )
    ],
    "image-media-type-variants": [
        UserMessage(
            [
                ImageContent(_image_bytes("JPEG"), media_type="image/jpg"),
                ImageContent(PNG, media_type="image/PNG"),
                ImageContent.from_url("https://example.com/photo", media_type="image/webp"),
                ImageContent.from_url("https://example.com/a.gif"),
                _url_image_without_media_type(),
            ],
            id="v",
            timestamp=TS,
        )
    ],
    "pdf": [
        UserMessage(
            [
                DocumentContent(PDF, filename="a.pdf", title="A"),
                DocumentContent(PDF),
                DocumentContent(PDF, media_type="application/PDF"),
                DocumentContent.from_url("https://example.com/b.pdf", title="B"),
                DocumentContent.from_url("https://example.com/c", media_type="application/pdf"),
            ],
            id="p",
            timestamp=TS,
        )
    ],
    "reasoning": [
        AssistantMessage(
            [ThinkingContent("t", "s"), ThinkingContent(""), RedactedThinkingContent("r"), TextContent("x")],
            id="r",
            timestamp=TS,
        )
    ],
    "tool-calls": [
        AssistantMessage(
            [
                ToolCallContent("c1", "f", {"a": [1, 2.5, None]}, kind=kind, index=i, metadata={"k": {"n": i}})
                for i, kind in enumerate(ToolKind)
            ]
            + [ToolCallContent("c2", "g", arguments="not json", signature="s", server_name="srv", index=99)],
            id="c",
            timestamp=TS,
        )
    ],
    "tool-results": [
        AssistantMessage([ToolCallContent("x", "named", {})], id="a", timestamp=TS),
        ToolMessage(
            [
                ToolResultContent("x", "plain", name="f"),
                ToolResultContent("x", "", name="f"),
                ToolResultContent("x", [TextContent("")], name="f"),
                ToolResultContent("x", [TextContent("ab", signature="s1"), TextContent("cd")], name="f", index=2),
                ToolResultContent.error("x", "boom", name="f"),
                ToolResultContent("x", "m", name="f", metadata={"a": 1}, terminate=True, terminate_message="stop"),
                ToolResultContent("x", "from the call"),
            ],
            id="t",
            timestamp=TS,
        ),
        UserMessage([TextContent("and"), ToolResultContent("x", "in user", name="f")], id="u", timestamp=TS),
    ],
    "assistant-fields": [
        *(
            AssistantMessage.text(
                "done",
                usage=Usage(1, 2, 3, 4, 5, 6, UsageCost(0.1, 0.2, 0.3, 0.4, 1.0)),
                stop_reason=reason,
                stop_reason_raw="raw",
                provenance=Provenance("openai", "openai-responses", "gpt", "resp_1"),
                id=f"a-{reason}",
                timestamp=TS,
                name="bot",
            )
            for reason in StopReason
        ),
        AssistantMessage.text("empty parts", usage=Usage(), provenance=Provenance(), id="e", timestamp=TS),
    ],
    "assistant-without-content": [
        AssistantMessage([], stop_reason="length", id="l", timestamp=TS),
        AssistantMessage([], error="failed", id="f", timestamp=TS),
    ],
    "nanosecond-timestamp": [_with_nanos()],
    "full-conversation": conversation(),
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
def test_round_trip(name: str) -> None:
    messages = ROUND_TRIPS[name]
    payload = to_adaline(messages)
    assert from_adaline(payload) == messages
    assert [message_from_adaline(message_to_adaline(m)) for m in messages if not _needs_context(m)] == [
        m for m in messages if not _needs_context(m)
    ]


def _needs_context(message: BaseMessage) -> bool:
    return any(isinstance(b, ToolResultContent) and not b.name for b in message.contents)


def test_json_round_trip() -> None:
    messages = conversation()
    text = to_adaline_json(messages)
    assert isinstance(text, str)
    assert json.loads(text) == to_adaline(messages)
    assert ", " not in text.split('"arguments"')[0]  # compact separators
    assert from_adaline_json(text) == messages
    assert from_adaline_json(text.encode("utf-8")) == messages


def test_json_keeps_non_ascii_text() -> None:
    message = UserMessage.text("héllo ✓ 𝄞", id="x", timestamp=TS)
    text = to_adaline_json([message])
    assert "héllo ✓ 𝄞" in text
    assert from_adaline_json(text) == [message]


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(),
    arguments=st.text(),
    name=st.text(min_size=1),
    metadata=st.dictionaries(st.text(), st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text())),
)
def test_round_trip_property(text: str, arguments: str, name: str, metadata: dict[str, Any]) -> None:
    messages: list[BaseMessage] = [
        UserMessage.text(text, id="u", timestamp=TS),
        AssistantMessage(
            [ToolCallContent("id", name, arguments=arguments, metadata=metadata)], id="a", name=text, timestamp=TS
        ),
        ToolMessage([ToolResultContent("id", text, metadata=metadata)], id="t", timestamp=TS),
    ]
    assert from_adaline_json(to_adaline_json(messages)) == messages


# --------------------------------------------------------------------------- what the format cannot hold


def _unknown_content_message() -> UserMessage:
    pb = message_pb2.Message(id="k")
    pb.user.content.add()  # a Content with no arm: an UnknownContent
    message = message_from_proto(pb)
    assert isinstance(message, UserMessage)
    assert content_from_proto(pb.user.content[0]).type is None
    return message


UNSUPPORTED: list[tuple[str, list[BaseMessage], str, str]] = [
    (
        "audio",
        [UserMessage.text("x"), UserMessage([TextContent("hear"), AudioContent(b"ID3\x03\x00")])],
        "[1].contents[1]",
        "audio",
    ),
    ("text-document", [UserMessage([DocumentContent.from_text("notes")])], "[0].contents[0]", "text/plain"),
    (
        "untyped-document-url",
        [UserMessage([DocumentContent.from_url("https://example.com/file")])],
        "[0].contents[0]",
        "unknown",
    ),
    (
        "document-file-id",
        [UserMessage([DocumentContent.from_file_id("file_1", media_type="application/pdf")])],
        "[0].contents[0]",
        "file id",
    ),
    ("image-file-id", [UserMessage([ImageContent.from_file_id("file_2")])], "[0].contents[0]", "file id"),
    (
        "image-svg",
        [UserMessage([ImageContent(b"<svg xmlns='http://www.w3.org/2000/svg'/>", media_type="image/svg+xml")])],
        "[0].contents[0]",
        "image/svg+xml",
    ),
    (
        "multimodal-tool-result",
        [ToolMessage([ToolResultContent("c", [TextContent("see"), ImageContent(PNG)], name="shot")])],
        "[0].contents[0].content[1]",
        "image content",
    ),
    (
        "nameless-tool-result",
        [UserMessage.text("x"), ToolMessage([ToolResultContent("c", "r")])],
        "[1].contents[0].name",
        "no name",
    ),
    ("custom", [UserMessage.text("x"), CustomMessage("bash_execution", [TextContent("ls")])], "[1].role", "custom"),
    ("branch-summary", [BranchSummaryMessage("left a branch")], "[0].role", "branch_summary"),
    (
        "compaction-summary",
        [UserMessage.text("x"), UserMessage.text("y"), CompactionSummaryMessage("s", 10)],
        "[2].role",
        "compaction_summary",
    ),
    ("unknown-role", [message_from_proto(message_pb2.Message(id="z"))], "[0].role", "does not know"),
    ("unknown-content", [_unknown_content_message()], "[0].contents[0]", "does not know"),
]


@pytest.mark.parametrize(("case", "messages", "field", "words"), UNSUPPORTED, ids=[c[0] for c in UNSUPPORTED])
def test_unsupported_export_raises_at_the_input_path(
    case: str, messages: list[BaseMessage], field: str, words: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        to_adaline(messages)
    rule, message = violation_of(exc, field)
    assert rule == "adaline.unsupported"
    assert words in message
    assert len(exc.value.violations) == 1


def test_a_message_without_a_role_is_an_unknown_message() -> None:
    message = message_from_proto(message_pb2.Message(id="z"))
    assert isinstance(message, UnknownMessage)
    with pytest.raises(ValidationError) as exc:
        message_to_adaline(message)
    assert violation_of(exc, "role") == (
        "adaline.unsupported",
        "a message of a role this agentmsg version does not know",
    )


def test_unsupported_export_reports_every_item_at_once() -> None:
    messages: list[BaseMessage] = [
        UserMessage([AudioContent(b"ID3"), DocumentContent.from_text("x")]),
        CustomMessage("note"),
        ToolMessage([ToolResultContent("c", "no name")]),
    ]
    with pytest.raises(ValidationError) as exc:
        to_adaline(messages)
    assert [v.field for v in exc.value.violations] == [
        "[0].contents[0]",
        "[0].contents[1]",
        "[1].role",
        "[2].contents[0].name",
    ]
    assert {v.rule_id for v in exc.value.violations} == {"adaline.unsupported"}


def test_message_to_adaline_paths_are_relative_and_need_named_results() -> None:
    with pytest.raises(ValidationError) as exc:
        message_to_adaline(UserMessage([TextContent("x"), AudioContent(b"ID3")]))
    assert violation_of(exc, "contents[1]")[0] == "adaline.unsupported"
    with pytest.raises(ValidationError) as exc:
        message_to_adaline(ToolMessage([ToolResultContent("c", "r")]))
    assert violation_of(exc, "contents[0].name")[0] == "adaline.unsupported"


def test_export_refuses_what_is_not_a_list_of_messages() -> None:
    with pytest.raises(ValidationError) as exc:
        to_adaline(UserMessage.text("x"))  # type: ignore[arg-type]
    assert violation_of(exc, "")[0] == "adaline.type"
    with pytest.raises(ValidationError) as exc:
        to_adaline([UserMessage.text("x"), {"role": "user"}])  # type: ignore[list-item]
    assert violation_of(exc, "[1]")[0] == "adaline.type"


# --------------------------------------------------------------------------- bad payloads


def _user(*content: Any, **extra: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": list(content), **extra}]


def _call(**changes: Any) -> dict[str, Any]:
    item = {"modality": "tool-call", "index": 0, "id": "c", "name": "f", "arguments": "{}"}
    item.update(changes)
    return {key: value for key, value in item.items() if value is not _DROP}


def _response(**changes: Any) -> dict[str, Any]:
    item = {"modality": "tool-response", "index": 0, "id": "c", "name": "f", "data": ""}
    item.update(changes)
    return {key: value for key, value in item.items() if value is not _DROP}


def _image(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "modality": "image",
        "detail": "low",
        "value": {"type": "base64", "base64": PNG_B64, "mediaType": "png"},
    }
    item.update(changes)
    return {key: value for key, value in item.items() if value is not _DROP}


def _assistant(*content: Any, **extra: Any) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": list(content), **extra}]


_DROP = object()
TEXT = {"modality": "text", "value": "x"}

BAD_INPUTS: list[tuple[str, Any, str, str]] = [
    ("payload-not-array", {"role": "user"}, "", "adaline.type"),
    ("message-not-object", ["hi"], "[0]", "adaline.type"),
    ("role-missing", [{"content": [TEXT]}], "[0].role", "adaline.required"),
    ("role-unknown", [{"role": "developer", "content": [TEXT]}], "[0].role", "adaline.enum"),
    ("role-not-string", [{"role": 1, "content": [TEXT]}], "[0].role", "adaline.type"),
    ("content-missing", [{"role": "user"}], "[0].content", "adaline.required"),
    ("content-not-array", [{"role": "user", "content": "hi"}], "[0].content", "adaline.type"),
    ("content-empty", [{"role": "user", "content": []}], "[0].content", "adaline.min_items"),
    ("assistant-content-empty", _assistant(), "[0].content", "adaline.min_items"),
    ("content-item-not-object", _user(TEXT, "x"), "[0].content[1]", "adaline.type"),
    ("modality-missing", _user({"value": "x"}), "[0].content[0].modality", "adaline.required"),
    (
        "modality-unknown",
        _user(TEXT, {"modality": "video", "value": "x"}),
        "[0].content[1].modality",
        "adaline.modality",
    ),
    (
        "modality-partial",
        _user({"modality": "partial-text", "value": "x"}),
        "[0].content[0].modality",
        "adaline.modality",
    ),
    ("text-value-missing", _user({"modality": "text"}), "[0].content[0].value", "adaline.required"),
    ("text-value-not-string", _user({"modality": "text", "value": 3}), "[0].content[0].value", "adaline.type"),
    ("detail-missing", _user(TEXT, _image(detail=_DROP)), "[0].content[1].detail", "adaline.required"),
    ("detail-unknown", _user(_image(detail="ultra")), "[0].content[0].detail", "adaline.enum"),
    (
        "media-type-not-allowed",
        _user(TEXT, _image(value={"type": "base64", "base64": PNG_B64, "mediaType": "bmp"})),
        "[0].content[1].value.mediaType",
        "adaline.enum",
    ),
    (
        "media-type-missing",
        _user(_image(value={"type": "base64", "base64": PNG_B64})),
        "[0].content[0].value.mediaType",
        "adaline.required",
    ),
    (
        "base64-invalid",
        _user(_image(value={"type": "base64", "base64": "not base64!", "mediaType": "png"})),
        "[0].content[0].value.base64",
        "adaline.base64",
    ),
    (
        "base64-unpadded",
        _user(_image(value={"type": "base64", "base64": "iVBORw0KGgo", "mediaType": "png"})),
        "[0].content[0].value.base64",
        "adaline.base64",
    ),
    (
        "data-url-not-base64",
        _user(_image(value={"type": "base64", "base64": "data:image/png,abc", "mediaType": "png"})),
        "[0].content[0].value.base64",
        "adaline.base64",
    ),
    (
        "image-empty-bytes",
        _user(_image(value={"type": "base64", "base64": "", "mediaType": "png"})),
        "[0].content[0].value.base64",
        "adaline.media",
    ),
    ("value-not-object", _user(_image(value="https://x")), "[0].content[0].value", "adaline.type"),
    (
        "value-type-unknown",
        _user(_image(value={"type": "file", "id": "f"})),
        "[0].content[0].value.type",
        "adaline.enum",
    ),
    ("url-missing", _user(_image(value={"type": "url"})), "[0].content[0].value.url", "adaline.required"),
    (
        "url-not-a-uri",
        _user(_image(value={"type": "url", "url": "not a url"})),
        "[0].content[0].value.url",
        "adaline.string.uri",
    ),
    (
        "pdf-file-missing",
        _user({"modality": "pdf", "value": {"type": "base64", "base64": "JVBERi0="}}),
        "[0].content[0].file",
        "adaline.required",
    ),
    (
        "pdf-file-id-missing",
        _user({"modality": "pdf", "value": {"type": "url", "url": "https://x.org/a.pdf"}, "file": {"name": "a"}}),
        "[0].content[0].file.id",
        "adaline.required",
    ),
    (
        "pdf-file-size-not-number",
        _user(
            {
                "modality": "pdf",
                "value": {"type": "url", "url": "https://x.org/a.pdf"},
                "file": {"name": "a", "id": "a", "size": "1kB"},
            }
        ),
        "[0].content[0].file.size",
        "adaline.type",
    ),
    ("call-id-empty", _assistant(_call(id="")), "[0].content[0].id", "adaline.min_len"),
    ("call-id-missing", _assistant(_call(id=_DROP)), "[0].content[0].id", "adaline.required"),
    ("call-name-empty", _assistant(TEXT, _call(name="")), "[0].content[1].name", "adaline.min_len"),
    ("call-index-negative", _assistant(_call(index=-1)), "[0].content[0].index", "adaline.gte"),
    ("call-index-fraction", _assistant(_call(index=1.5)), "[0].content[0].index", "adaline.int"),
    ("call-index-string", _assistant(_call(index="1")), "[0].content[0].index", "adaline.type"),
    ("call-index-bool", _assistant(_call(index=True)), "[0].content[0].index", "adaline.type"),
    ("call-index-missing", _assistant(_call(index=_DROP)), "[0].content[0].index", "adaline.required"),
    ("call-index-over-int32", _assistant(_call(index=2**31)), "[0].content[0].index", "adaline.unsupported"),
    ("call-arguments-object", _assistant(_call(arguments={"a": 1})), "[0].content[0].arguments", "adaline.type"),
    ("call-arguments-missing", _assistant(_call(arguments=_DROP)), "[0].content[0].arguments", "adaline.required"),
    ("call-server-name-null", _assistant(_call(serverName=None)), "[0].content[0].serverName", "adaline.type"),
    ("response-id-empty", [{"role": "tool", "content": [_response(id="")]}], "[0].content[0].id", "adaline.min_len"),
    (
        "response-name-empty",
        [{"role": "tool", "content": [_response(name="")]}],
        "[0].content[0].name",
        "adaline.min_len",
    ),
    ("response-data-number", [{"role": "tool", "content": [_response(data=1)]}], "[0].content[0].data", "adaline.type"),
    (
        "response-status-negative",
        [{"role": "tool", "content": [_response(apiResponse={"statusCode": -1})]}],
        "[0].content[0].apiResponse.statusCode",
        "adaline.gte",
    ),
    (
        "reasoning-signature-missing",
        _assistant({"modality": "reasoning", "value": {"type": "thinking", "thinking": "t"}}),
        "[0].content[0].value.signature",
        "adaline.required",
    ),
    (
        "redacted-data-empty",
        _assistant({"modality": "reasoning", "value": {"type": "redacted", "data": ""}}),
        "[0].content[0].value.data",
        "adaline.string.min_len",
    ),
    (
        "error-modality",
        _assistant({"modality": "error", "value": {"type": "response_error", "value": {"code": "1", "message": "m"}}}),
        "[0].content[0]",
        "adaline.unsupported",
    ),
    (
        "search-result-modality",
        _assistant(TEXT, {"modality": "search-result", "value": {"query": "q", "responses": [], "references": []}}),
        "[0].content[1]",
        "adaline.unsupported",
    ),
    ("system-with-image", [{"role": "system", "content": [_image()]}], "[0].content[0]", "adaline.unsupported"),
    ("assistant-with-tool-response", _assistant(_response()), "[0].content[0]", "adaline.unsupported"),
    ("user-with-tool-call", _user(_call()), "[0].content[0]", "adaline.unsupported"),
    ("tool-with-text", [{"role": "tool", "content": [TEXT]}], "[0].content[0]", "adaline.unsupported"),
    ("stash-not-object", _user(TEXT, metadata={"agentmsg": "x"}), "[0].metadata.agentmsg", "adaline.metadata"),
    ("stash-id-empty", _user(TEXT, metadata={"agentmsg": {"id": ""}}), "[0].metadata.agentmsg.id", "adaline.metadata"),
    (
        "stash-timestamp-bad",
        _user(TEXT, metadata={"agentmsg": {"timestamp": "yesterday"}}),
        "[0].metadata.agentmsg.timestamp",
        "adaline.metadata",
    ),
    (
        "stash-stop-reason-bad",
        _assistant(TEXT, metadata={"agentmsg": {"stopReason": "tired"}}),
        "[0].metadata.agentmsg.stopReason",
        "adaline.metadata",
    ),
    (
        "stash-usage-negative",
        _assistant(TEXT, metadata={"agentmsg": {"usage": {"inputTokens": -1}}}),
        "[0].metadata.agentmsg.usage",
        "adaline.int64.gte",
    ),
    (
        "stash-usage-unknown-field",
        _assistant(TEXT, metadata={"agentmsg": {"usage": {"tokens": 1}}}),
        "[0].metadata.agentmsg.usage",
        "adaline.metadata",
    ),
    (
        "stash-kind-bad",
        _assistant(_call(metadata={"agentmsg": {"kind": "teleport"}})),
        "[0].content[0].metadata.agentmsg.kind",
        "adaline.metadata",
    ),
    (
        "stash-tool-metadata-not-object",
        _assistant(_call(metadata={"agentmsg": {"metadata": [1]}})),
        "[0].content[0].metadata.agentmsg.metadata",
        "adaline.metadata",
    ),
    (
        "stash-text-blocks-mismatch",
        [{"role": "tool", "content": [_response(data="abc", metadata={"agentmsg": {"textBlocks": [{"length": 2}]}})]}],
        "[0].content[0].metadata.agentmsg.textBlocks",
        "adaline.metadata",
    ),
    (
        "stash-is-error-not-bool",
        [{"role": "tool", "content": [_response(metadata={"agentmsg": {"isError": "yes"}})]}],
        "[0].content[0].metadata.agentmsg.isError",
        "adaline.metadata",
    ),
]


@pytest.mark.parametrize(("case", "payload", "field", "rule"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_at_the_payload_path(case: str, payload: Any, field: str, rule: str) -> None:
    with pytest.raises(ValidationError) as exc:
        from_adaline(payload)
    found_rule, message = violation_of(exc, field)
    assert found_rule == rule
    assert message
    assert all(v.rule_id.startswith("adaline.") for v in exc.value.violations)


def test_bad_input_lists_every_violation_and_returns_nothing() -> None:
    payload = [
        {"role": "user", "content": [TEXT]},
        {
            "role": "user",
            "content": [_image(detail="huge", value={"type": "base64", "base64": "@@", "mediaType": "tiff"})],
        },
        {"role": "assistant", "content": [_call(id="", index=-2, arguments=None)]},
        {"role": "robot", "content": [{"modality": "hologram"}]},
    ]
    with pytest.raises(ValidationError) as exc:
        from_adaline(payload)
    assert [(v.field, v.rule_id) for v in exc.value.violations] == [
        ("[1].content[0].detail", "adaline.enum"),
        ("[1].content[0].value.mediaType", "adaline.enum"),
        ("[1].content[0].value.base64", "adaline.base64"),
        ("[2].content[0].index", "adaline.gte"),
        ("[2].content[0].id", "adaline.min_len"),
        ("[2].content[0].arguments", "adaline.type"),
        ("[3].role", "adaline.enum"),
        ("[3].content[0].modality", "adaline.modality"),
    ]
    assert "huge" in str(exc.value)


def test_message_from_adaline_paths_are_relative() -> None:
    with pytest.raises(ValidationError) as exc:
        message_from_adaline(
            {"role": "user", "content": [TEXT, _image(value={"type": "base64", "base64": PNG_B64, "mediaType": "svg"})]}
        )
    assert violation_of(exc, "content[1].value.mediaType")[0] == "adaline.enum"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("[{", "adaline.json"),
        ('[{"role": NaN}]', "adaline.json"),
        ('{"role": "user"}', "adaline.type"),
        ("3", "adaline.type"),
    ],
)
def test_bad_json_text(text: str, rule: str) -> None:
    with pytest.raises(ValidationError) as exc:
        from_adaline_json(text)
    assert violation_of(exc, "")[0] == rule


# --------------------------------------------------------------------------- import semantics


def test_tool_response_role_decides_the_message_class() -> None:
    response = _response(id="c1", name="f", data="out")
    tool, user = from_adaline([{"role": "tool", "content": [response]}, {"role": "user", "content": [TEXT, response]}])
    assert isinstance(tool, ToolMessage)
    assert isinstance(user, UserMessage)
    assert tool.contents == (ToolResultContent("c1", "out", name="f"),)
    assert user.contents == (TextContent("x"), ToolResultContent("c1", "out", name="f"))


def test_foreign_metadata_is_ignored() -> None:
    messages = from_adaline(
        [
            {"role": "user", "content": [{**TEXT, "metadata": {"trace": 1}}], "metadata": "anything"},
            {"role": "user", "content": [{**TEXT, "metadata": None}], "metadata": {"other": {"agentmsg": 1}}},
        ]
    )
    assert [m.contents for m in messages] == [(TextContent("x"),), (TextContent("x"),)]


def test_unknown_keys_are_ignored_as_zod_does() -> None:
    (message,) = from_adaline([{"role": "user", "content": [{**TEXT, "extra": True}], "partialContent": 1}])
    assert message.contents == (TextContent("x"),)


def test_integral_float_index_is_an_integer() -> None:
    (message,) = from_adaline(_assistant(_call(index=3.0)))
    call = message.contents[0]
    assert isinstance(call, ToolCallContent)
    assert call.index == 3


def test_stale_stash_yields_to_the_format_fields() -> None:
    stash = {"agentmsg": {"mediaType": "image/gif", "detailUnset": True}}
    (message,) = from_adaline(_user(_image(detail="high", metadata=stash)))
    image = message.contents[0]
    assert isinstance(image, ImageContent)
    assert (image.media_type, image.detail) == ("image/png", ImageDetail.HIGH)


def test_assistant_without_content_needs_an_error_in_the_stash() -> None:
    (message,) = from_adaline(_assistant(metadata={"agentmsg": {"error": "boom", "id": "a1"}}))
    assert isinstance(message, AssistantMessage)
    assert (message.id, message.error, message.contents) == ("a1", "boom", ())


def test_stash_restores_message_envelope() -> None:
    (message,) = from_adaline(
        _user(TEXT, metadata={"agentmsg": {"id": "u7", "timestamp": "2025-01-02T03:04:05.123456Z", "name": "ann"}})
    )
    assert (message.id, message.datetime, message.name) == ("u7", TS, "ann")


def test_data_url_base64_with_other_mime_uses_media_type_field() -> None:
    item = _image(value={"type": "base64", "base64": f"data:image/jpeg;base64,{PNG_B64}", "mediaType": "png"})
    (message,) = from_adaline(_user(item))
    assert message.contents == (ImageContent(PNG, detail="low"),)


def test_agent_message_type_is_returned() -> None:
    result: list[AgentMessage] = from_adaline(load_golden("chat_text.json"))
    assert all(isinstance(m, BaseMessage) for m in result)


def test_constructor_errors_point_into_the_stash() -> None:
    text = '[{"role":"assistant","content":[{"modality":"tool-call","index":0,"id":"a","name":"b","arguments":"{}",'
    text += '"metadata":{"agentmsg":{"metadata":{"deep":{"x":1e400}}}}}]}]'
    with pytest.raises(ValidationError) as exc:
        from_adaline_json(text)
    assert violation_of(exc, "[0].content[0].metadata.agentmsg.metadata.deep.x")[0] == "adaline.json"


_KEYS = st.sampled_from(
    (
        *("role", "content", "modality", "value", "detail", "type", "base64", "mediaType", "url", "file", "name"),
        *("id", "size", "index", "arguments", "data", "thinking", "signature", "metadata", "agentmsg", "timestamp"),
        *("usage", "textBlocks", "length", "kind", "apiResponse", "statusCode", "serverName", "isError", "error"),
    )
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.sampled_from(
        (
            *("text", "image", "pdf", "tool-call", "tool-response", "reasoning", "error", "search-result"),
            *("system", "user", "assistant", "tool", "base64", "url", "thinking", "redacted", "png", "low"),
            *("https://x.org/a", f"data:;base64,{PNG_B64}"),
        )
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        _LEAVES,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=6)),
        max_leaves=30,
    )
)
def test_any_json_converts_or_raises_validation_error(value: Any) -> None:
    payload = value if isinstance(value, list) else [value]
    error: ValidationError | None = None
    try:
        messages = from_adaline(payload)
    except ValidationError as exc:  # anything else escaping fails the test
        error = exc
    if error is None:
        assert len(messages) == len(payload)
        assert all(isinstance(m, BaseMessage) for m in messages)
    else:
        assert error.violations
        assert all(v.rule_id.startswith("adaline.") and v.message for v in error.violations)


def test_url_image_media_type_is_guessed_as_from_url_does() -> None:
    url = "https://example.com/img/cat.webp?size=large#top"
    (message,) = from_adaline(_user(_image(detail="low", value={"type": "url", "url": url})))
    assert message.contents == (ImageContent.from_url(url, detail="low"),)
    image = message.contents[0]
    assert isinstance(image, ImageContent)
    assert image.media_type == "image/webp"


def test_data_url_in_a_url_value_stays_a_url() -> None:
    url = f"data:image/png;base64,{PNG_B64}"
    (message,) = from_adaline(_user(_image(value={"type": "url", "url": url})))
    image = message.contents[0]
    assert isinstance(image, ImageContent)
    assert (image.url, image.data) == (url, None)
    assert to_adaline([message], include_metadata=False)[0]["content"][0]["value"] == {"type": "url", "url": url}


# --------------------------------------------------------------------------- issue 16: tool messages, v1.1 content


def _two_results() -> ToolMessage:
    return ToolMessage.from_results(
        [ToolResultContent("c1", "one", name="f"), ToolResultContent("c2", "two", name="g", index=1)],
        id="t",
        timestamp=TS,
        name="runner",
    )


def test_a_tool_message_of_several_results_goes_out_one_result_a_message() -> None:
    tool = _two_results()
    payload = to_adaline([tool])
    assert [len(m["content"]) for m in payload] == [1, 1]
    assert payload[0]["metadata"] == {
        "agentmsg": {"id": "t", "timestamp": "2025-01-02T03:04:05.123456Z", "name": "runner"}
    }
    assert payload[1] == {
        "role": "tool",
        "content": [{"modality": "tool-response", "index": 1, "id": "c2", "name": "g", "data": "two"}],
        "metadata": {"agentmsg": {"sameMessage": True}},
    }
    assert from_adaline(payload) == [tool]
    assert from_adaline_json(to_adaline_json([tool, tool])) == [tool, tool]
    # message_to_adaline returns one message: the results stay together there.
    assert len(message_to_adaline(tool)["content"]) == 2
    assert message_from_adaline(message_to_adaline(tool)) == tool


def test_same_message_is_ignored_when_the_message_before_is_not_a_tool_message() -> None:
    item = {"modality": "tool-response", "index": 0, "id": "c1", "name": "f", "data": "x"}
    payload = [
        {"role": "user", "content": [{"modality": "text", "value": "hi"}]},
        {"role": "tool", "content": [item], "metadata": {"agentmsg": {"sameMessage": True}}},
        {"role": "tool", "content": [item], "metadata": {"agentmsg": {"sameMessage": True}}},
    ]
    user, tool = from_adaline(payload)
    assert isinstance(user, UserMessage)
    assert isinstance(tool, ToolMessage)
    assert len(tool.contents) == 2
    with pytest.raises(ValidationError) as exc:
        from_adaline([{**payload[1], "metadata": {"agentmsg": {"sameMessage": "yes"}}}])
    assert violation_of(exc, "[0].metadata.agentmsg.sameMessage")[0] == "adaline.metadata"


def _v11_assistant() -> AssistantMessage:
    call = am.HostedToolCallContent(
        "srvtoolu_1",
        "web_search",
        '{"query": "x"}',
        kind="web_search",
        original=am.ProviderContent.from_block(
            "anthropic", {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
        ),
    )
    result = am.HostedToolResultContent(
        "srvtoolu_1",
        kind="web_search",
        search_results=[am.SearchResult("https://a.example", "A", encrypted_content="ENC")],
    )
    code = am.HostedToolResultContent(
        "ci_1", "see the chart", code_execution=am.CodeExecutionOutput("out", "", 0, files=["file_1"])
    )
    text = TextContent(
        "Cited.",
        signature="sig",
        citations=[
            am.Citation.web("https://a.example", "A", cited_text="c", start_index=0, end_index=5),
            am.Citation.document(0, title="Doc", chars=(1, 4)),
        ],
        logprobs=[am.TokenLogprob("Cited", -0.5, bytes=b"Cited", token_id=7)],
    )
    usage = Usage(
        input_tokens=5,
        output_tokens=2,
        cache_write_tokens=3,
        cache_write_5m_tokens=1,
        cache_write_1h_tokens=2,
        hosted_tool_requests={"web_search": 1, "web_fetch": 0},
    )
    return AssistantMessage(
        [ThinkingContent("hm", "s"), call, result, text, code, ToolCallContent("c1", "f", {})],
        id="a",
        timestamp=TS,
        stop_reason=StopReason.TOOL_CALLS,
        stop_sequence="STOP",
        usage=usage,
    )


def test_v11_content_round_trips_exactly_through_the_stash() -> None:
    assistant = _v11_assistant()
    system = SystemMessage(
        [TextContent("rules"), am.ProviderContent.from_block("anthropic", {"type": "tool_addition", "x": 1})],
        id="s",
        timestamp=TS,
    )
    payload = to_adaline([system, assistant])
    stash = payload[1]["metadata"]["agentmsg"]
    assert [entry["at"] for entry in stash["blocks"]] == [1, 2, 4]
    assert stash["stopSequence"] == "STOP"
    assert stash["usage"]["hostedToolRequests"] == {"web_search": "1", "web_fetch": "0"}
    # The format's own items: reasoning, text (citations and logprobs in its stash), tool-call.
    assert [item["modality"] for item in payload[1]["content"]] == ["reasoning", "text", "tool-call"]
    # Citations and logprobs: an agentmsg.v1.TextContent holding only them, binary, base64.
    text_stash = payload[1]["content"][1]["metadata"]["agentmsg"]
    details = content_pb2.TextContent.FromString(base64.b64decode(text_stash["details"]))
    assert (details.text, len(details.citations), details.logprobs[0].token_id) == ("", 2, 7)
    assert content_pb2.Content.FromString(base64.b64decode(stash["blocks"][0]["proto"])).WhichOneof("kind") == (
        "hosted_tool_call"
    )
    assert payload[0]["metadata"]["agentmsg"]["blocks"][0]["at"] == 1
    assert from_adaline(payload) == [system, assistant]
    assert from_adaline_json(to_adaline_json([system, assistant])) == [system, assistant]


def test_v11_content_without_metadata_is_reported_lost() -> None:
    report = ConversionReport()
    payload = to_adaline([_v11_assistant()], include_metadata=False, report=report)
    assert [item["modality"] for item in payload[0]["content"]] == ["reasoning", "text", "tool-call"]
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].contents[1]", "a hosted_tool_call block"),
        ("[0].contents[2]", "a hosted_tool_result block"),
        ("[0].contents[3]", "agentmsg data the format has no field for (signature, details)"),
        ("[0].contents[4]", "a hosted_tool_result block"),
        ("[0]", "agentmsg data the format has no field for (usage, stopReason, stopSequence)"),
    ]
    (back,) = from_adaline(payload)
    assert isinstance(back, AssistantMessage)
    assert back.hosted_tool_calls() == []
    assert back.stop_sequence == ""
    with pytest.raises(ConversionError, match="5 item"):
        to_adaline([_v11_assistant()], include_metadata=False, strict=True)


def _proto(block: am.Content) -> str:
    return base64.b64encode(block.to_bytes()).decode("ascii")


PROVIDER_BLOCK = am.ProviderContent.from_block("anthropic", {"type": "tool_addition"})
BAD_PROVIDER = content_pb2.Content(provider=content_pb2.ProviderContent(provider="p", json="{}"))  # no type


@pytest.mark.parametrize(
    ("blocks", "field", "rule"),
    [
        ("no", "[0].metadata.agentmsg.blocks", "adaline.metadata"),
        ([{"at": "0", "proto": ""}], "[0].metadata.agentmsg.blocks[0]", "adaline.metadata"),
        ([{"at": 0, "block": {}}], "[0].metadata.agentmsg.blocks[0]", "adaline.metadata"),
        ([{"at": 5, "proto": _proto(PROVIDER_BLOCK)}], "[0].metadata.agentmsg.blocks[0].at", "adaline.metadata"),
        (
            [{"at": 0, "proto": _proto(PROVIDER_BLOCK)}, {"at": 0, "proto": _proto(PROVIDER_BLOCK)}],
            "[0].metadata.agentmsg.blocks[1].at",
            "adaline.metadata",
        ),
        ([{"at": 0, "proto": "%%%"}], "[0].metadata.agentmsg.blocks[0].proto", "adaline.base64"),
        ([{"at": 0, "proto": "/w=="}], "[0].metadata.agentmsg.blocks[0].proto", "adaline.metadata"),
        ([{"at": 0, "proto": _proto(TextContent("t"))}], "[0].metadata.agentmsg.blocks[0].proto", "adaline.metadata"),
        (
            [{"at": 0, "proto": base64.b64encode(BAD_PROVIDER.SerializeToString()).decode()}],
            "[0].metadata.agentmsg.blocks[0].proto",
            "adaline.string.min_len",
        ),
    ],
)
def test_a_malformed_blocks_stash_is_refused_with_its_path(blocks: Any, field: str, rule: str) -> None:
    payload = [
        {
            "role": "assistant",
            "content": [{"modality": "text", "value": "x"}],
            "metadata": {"agentmsg": {"blocks": blocks}},
        }
    ]
    with pytest.raises(ValidationError) as exc:
        from_adaline(payload)
    assert violation_of(exc, field)[0] == rule


def test_hosted_blocks_in_a_user_message_stash_are_refused_by_the_contract() -> None:
    block = am.HostedToolCallContent("x", "web_search", "{}")
    payload = [
        {
            "role": "user",
            "content": [{"modality": "text", "value": "x"}],
            "metadata": {"agentmsg": {"blocks": [{"at": 0, "proto": _proto(block)}]}},
        }
    ]
    with pytest.raises(ValidationError) as exc:
        from_adaline(payload)
    assert [v.rule_id for v in exc.value.violations] == ["adaline.user.content.kind"]


@pytest.mark.parametrize(
    ("details", "rule"),
    [
        ("%%", "adaline.base64"),
        ("/w==", "adaline.metadata"),
        (
            base64.b64encode(content_pb2.TextContent(citations=[content_pb2.Citation()]).SerializeToString()).decode(),
            "adaline.citation.source",
        ),
    ],
)
def test_bad_text_details_are_refused_with_their_path(details: str, rule: str) -> None:
    item = {"modality": "text", "value": "x", "metadata": {"agentmsg": {"details": details}}}
    with pytest.raises(ValidationError) as exc:
        from_adaline([{"role": "assistant", "content": [item]}])
    assert [
        (v.field.startswith("[0].content[0].metadata.agentmsg.details"), v.rule_id) for v in exc.value.violations
    ] == [(True, rule)], exc.value.violations


def test_provider_response_keys_round_trip_through_the_stash() -> None:
    extra = am.ProviderContent.from_block(
        "anthropic", {"type": "message", "stop_details": {"type": "refusal", "category": "cyber"}}
    )
    assistant = AssistantMessage(
        [TextContent("No.")], id="a", timestamp=TS, stop_reason=StopReason.CONTENT_FILTER, provider_extra=extra
    )
    payload = to_adaline([assistant])
    assert payload[0]["metadata"]["agentmsg"]["providerExtra"] == {
        "provider": "anthropic",
        "type": "message",
        "json": extra.json,
    }
    assert from_adaline(payload) == [assistant]
    report = ConversionReport()
    to_adaline([assistant], include_metadata=False, report=report)
    assert "providerExtra" in report.losses[-1].what
    payload[0]["metadata"]["agentmsg"]["providerExtra"]["json"] = "[1]"
    with pytest.raises(ValidationError, match="providerExtra"):
        from_adaline(payload)
