"""MCP tool results <-> ToolResultContent: every content kind, the structured part, isError, bad input."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import mcp_types
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from samples import png_bytes

import agentmsg as am
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.mcp import (
    METADATA_KEY,
    from_mcp_result,
    from_mcp_tools,
    structured_content,
    to_mcp_result,
    to_mcp_tools,
)

PNG = png_bytes()
PNG64 = base64.b64encode(PNG).decode()
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
RESULT: dict[str, Any] = {
    "content": [
        {"type": "text", "text": "Here you go", "annotations": {"audience": ["user"], "priority": 0.5}},
        {"type": "image", "data": PNG64, "mimeType": "image/png"},
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav", "_meta": {"k": "v"}},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}},
        {"type": "resource", "resource": {"uri": "demo://blob/1", "mimeType": "application/json", "blob": "e30="}},
        {"type": "resource", "resource": {"uri": "demo://no-type", "text": "plain"}},
        {
            "type": "resource_link",
            "uri": "demo://resource/2",
            "name": "Resource 2",
            "title": "The second",
            "description": "A resource",
            "mimeType": "text/plain",
            "size": 12,
        },
    ],
    "structuredContent": {"zeta": 1, "alpha": [1.5, "two"], "nested": {"b": True, "a": None}},
}


def test_every_kind_arrives_as_blocks_and_goes_back_unchanged() -> None:
    result = from_mcp_result(RESULT, "call-1", name="fetch", index=2)
    kinds = [type(block).__name__ for block in result.blocks]
    assert kinds == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "DocumentContent",
        "DocumentContent",
        "DocumentContent",
        "DocumentContent",
    ]
    _text, image, audio, notes, blob, untyped, link = result.blocks
    assert image.data == PNG
    assert image.media_type == "image/png"
    assert audio.data == WAV
    assert audio.media_type == "audio/wav"
    assert (notes.data, notes.media_type, notes.filename) == (b"notes", "text/plain", "file:///notes.txt")  # type: ignore[union-attr]
    assert (blob.data, blob.media_type) == (b"{}", "application/json")  # type: ignore[union-attr]
    assert untyped.media_type == "text/plain"  # type: ignore[union-attr]
    assert (link.url, link.filename, link.title) == ("demo://resource/2", "Resource 2", "The second")  # type: ignore[union-attr]
    assert (result.id, result.name, result.index, result.is_error) == ("call-1", "fetch", 2, False)
    assert structured_content(result) == RESULT["structuredContent"]
    assert list(structured_content(result) or {}) == ["zeta", "alpha", "nested"]  # key order kept
    report = ConversionReport()
    back = to_mcp_result(result, report=report)
    assert back == RESULT
    assert not report.losses
    mcp_types.CallToolResult.model_validate(back)
    # and through the wire format and back
    assert to_mcp_result(am.ToolResultContent.from_bytes(result.to_bytes())) == RESULT


def test_error_result() -> None:
    failed = {"content": [{"type": "text", "text": "no such city"}], "isError": True}
    result = from_mcp_result(failed, "c")
    assert result.is_error
    assert result.text == "no such city"
    assert METADATA_KEY not in result.metadata
    assert to_mcp_result(result) == failed
    assert from_mcp_result({"content": []}, "c").blocks == ()


def test_agentmsg_blocks_written_for_mcp() -> None:
    result = am.ToolResultContent(
        "c",
        [
            am.TextContent("hi"),
            am.ImageContent([PNG, PNG], media_type="image/png"),
            am.ImageContent.from_url("https://example.com/cat.png"),
            am.DocumentContent.from_text("# notes", media_type="text/markdown", filename="notes.md", title="Notes"),
            am.DocumentContent(b"%PDF-1.7", media_type="application/pdf"),
            am.DocumentContent.from_file_id("file-123"),
        ],
        metadata={"app": "data"},
        terminate=True,
    )
    report = ConversionReport()
    written = to_mcp_result(result, report=report)
    mcp_types.CallToolResult.model_validate(written)
    assert [b["type"] for b in written["content"]] == [
        "text",
        "image",
        "image",
        "resource_link",
        "resource",
        "resource",
    ]
    link = {"type": "resource_link", "uri": "https://example.com/cat.png", "name": "cat.png", "mimeType": "image/png"}
    assert written["content"][3] == link
    assert written["content"][4]["resource"] == {
        "uri": "attachment:///notes.md",
        "mimeType": "text/markdown",
        "text": "# notes",
    }
    assert written["content"][5]["resource"]["blob"] == base64.b64encode(b"%PDF-1.7").decode()
    assert "structuredContent" not in written
    assert set(written) == {"content"}  # app metadata and terminate never leave
    lost = sorted(loss.path for loss in report.losses)
    assert lost == ["content[1]", "content[2]", "content[3].title", "content[5]"]


@pytest.mark.parametrize(
    ("result", "field", "message"),
    [
        ({"content": [{"type": "image", "mimeType": "image/png"}]}, "content[0].data", "expected a string"),
        ({"content": [{"type": "image", "data": "!!!", "mimeType": "image/png"}]}, "content[0]", "base64"),
        ({"content": [{"type": "text"}]}, "content[0].text", "expected a string"),
        ({"content": [{"type": "video", "data": ""}]}, "content[0].type", "unknown MCP content type"),
        ({"content": [{"type": "resource", "resource": {"uri": "x://y"}}]}, "content[0].resource", "text or its blob"),
        ({"content": [{"type": "resource_link", "name": "n"}]}, "content[0].uri", "expected a string"),
        ({"content": "text"}, "content", "expected a list"),
        ({"content": [], "isError": "no"}, "isError", "expected a boolean"),
        ({"content": [], "structuredContent": [1]}, "structuredContent", "JSON object"),
        (
            {"content": [{"type": "image", "data": PNG64, "mimeType": "text/plain"}]},
            "content[0].image.media_type",
            "regex",
        ),
        ({"content": [7]}, "content[0]", "expected a content block object"),
    ],
)
def test_malformed_results_are_named(result: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(am.ValidationError) as caught:
        from_mcp_result(result, "c")
    assert field in [v.field for v in caught.value.violations], caught.value.violations
    assert message in str(caught.value)


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "mcp"


@pytest.mark.parametrize(
    "recorded", json.loads((GOLDEN / "everything_tools_call.json").read_text()), ids=lambda r: r["name"]
)
def test_reference_server_results_round_trip(recorded: dict[str, Any]) -> None:
    """Every result the reference server gave (recorded) goes through agentmsg and back unchanged."""
    raw = recorded["result"]
    result = from_mcp_result(raw, "call-1", name=recorded["name"])
    assert to_mcp_result(am.ToolResultContent.from_bytes(result.to_bytes())) == raw
    mcp_types.CallToolResult.model_validate(raw)


def test_reference_server_tools() -> None:
    """The reference server's tools/list (recorded): every tool read, what agentmsg has no field for reported."""
    listed = json.loads((GOLDEN / "everything_tools_list.json").read_text())
    report = ConversionReport()
    definitions = from_mcp_tools(listed, kind=am.ToolKind.MCP, report=report)
    assert len(definitions) == len(listed["tools"]) >= 10
    assert {loss.what for loss in report.losses} == {"'execution'"}
    back = to_mcp_tools(definitions, report=ConversionReport())
    for original, written in zip(listed["tools"], back, strict=True):
        assert written == {key: value for key, value in original.items() if key != "execution"}


def test_not_a_result() -> None:
    with pytest.raises(am.ValidationError, match="expected a result object"):
        from_mcp_result([], "c")  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError, match="ToolResultContent"):
        to_mcp_result({"content": []})  # type: ignore[arg-type]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_EXTRAS = st.fixed_dictionaries(
    {},
    optional={
        "annotations": st.fixed_dictionaries(
            {},
            optional={
                "audience": st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
                "priority": st.floats(0, 1),
            },
        ),
        "_meta": st.dictionaries(st.sampled_from(["a", "b.c"]), _TEXT, max_size=2),
    },
)
_URI = st.from_regex(r"\A(file|demo|https)://[a-z0-9/._-]{1,20}\Z")
_BYTES = st.binary(min_size=1, max_size=40).map(lambda raw: base64.b64encode(raw).decode())


@st.composite
def blocks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "image", "audio", "text-resource", "blob-resource", "resource_link"]))
    extras = draw(_EXTRAS)
    if kind == "text":
        return {"type": "text", "text": draw(_TEXT), **extras}
    if kind == "image":
        return {"type": "image", "data": draw(_BYTES), "mimeType": "image/png", **extras}
    if kind == "audio":
        return {"type": "audio", "data": draw(_BYTES), "mimeType": "audio/wav", **extras}
    if kind == "resource_link":
        link = {"type": "resource_link", "uri": draw(_URI), "name": draw(_TEXT)}
        if draw(st.booleans()):
            link["mimeType"] = "text/plain"
        if draw(st.booleans()):
            link["description"] = draw(_TEXT)
        return {**link, **extras}
    resource: dict[str, Any] = {"uri": draw(_URI)}
    if draw(st.booleans()):
        resource["mimeType"] = draw(st.sampled_from(["text/plain", "application/json", "application/octet-stream"]))
    if kind == "text-resource":
        resource["text"] = draw(_TEXT)
    else:
        resource["blob"] = draw(_BYTES)
    return {"type": "resource", "resource": resource, **extras}


@settings(max_examples=100, deadline=None)
@given(
    content=st.lists(blocks(), max_size=5),
    structured=st.none() | st.dictionaries(_TEXT, _TEXT | st.integers(-1000, 1000), max_size=3),
    is_error=st.booleans(),
)
def test_results_round_trip_property(content: list[dict[str, Any]], structured: Any, is_error: bool) -> None:
    raw: dict[str, Any] = {"content": content}
    if structured is not None:
        raw["structuredContent"] = structured
    if is_error:
        raw["isError"] = True
    result = from_mcp_result(raw, "c")
    assert to_mcp_result(am.ToolResultContent.from_bytes(result.to_bytes())) == raw


def is_valid_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(st.text(st.characters(), max_size=12), max_size=4),
    is_error=st.none() | st.booleans(),
    index=st.integers(0, 9),
)
@example(texts=["ok", "\ud800"], is_error=None, index=0)
def test_text_results_read_directly_equal_the_full_reading(texts: list[str], is_error: bool | None, index: int) -> None:
    """The commonest result (text blocks only) is built straight into its message: the same message as the full
    reading (a result that is not a plain dict goes that way), the same error when it is bad (a lone surrogate)."""
    raw: dict[str, Any] = {"content": [{"type": "text", "text": text} for text in texts]}
    if is_error is not None:
        raw["isError"] = is_error
    if any(not is_valid_utf8(text) for text in texts):
        with pytest.raises(am.ValidationError) as full:
            from_mcp_result(MappingProxyType(raw), "c", name="t", index=index)
        with pytest.raises(am.ValidationError) as caught:
            from_mcp_result(raw, "c", name="t", index=index)
        assert caught.value.violations == full.value.violations
        return
    full_reading = from_mcp_result(MappingProxyType(raw), "c", name="t", index=index)
    direct = from_mcp_result(raw, "c", name="t", index=index)
    assert direct.pb == full_reading.pb
    assert (direct.text, direct.is_error, direct.index) == ("".join(texts), bool(is_error), index)


def test_a_bad_call_id_is_refused_on_the_direct_reading_too() -> None:
    with pytest.raises(am.ValidationError) as caught:
        from_mcp_result({"content": [{"type": "text", "text": "hi"}]}, "")
    with pytest.raises(am.ValidationError) as full:
        from_mcp_result(MappingProxyType({"content": [{"type": "text", "text": "hi"}]}), "")
    assert caught.value.violations == full.value.violations
