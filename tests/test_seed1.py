"""The seed-1 document (a Python agent framework's message layer), section by section.

Each test exercises a section of ``shared/seeds/001_*.txt`` exactly as the seed
writes it: its classes, keyword names, defaults, factories and its detected-MIME
table. Where agentmsg refuses what the seed's dataclasses would accept (a block
with no image, a tool call with no id), the test shows the error, which names
the field (and, in a list, the item).
"""

from __future__ import annotations

import base64
import io
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import agentmsg as am
from agentmsg.providers._common import ConversionError, ConversionReport
from agentmsg.providers.anthropic import to_anthropic
from agentmsg.providers.openai_chat import to_openai_chat

# --- fixtures the seed's examples need -------------------------------------------------------


def encoded(fmt: str, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (3, 2), "red").save(buffer, fmt)
    return buffer.getvalue()


PNG, JPEG, GIF, WEBP = encoded("PNG"), encoded("JPEG"), encoded("GIF", "P"), encoded("WEBP")
MP3_ID3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(32)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# --- Content types ---------------------------------------------------------------------------


def test_content_types_table() -> None:
    """Each content type is a class with a ``type`` literal."""
    blocks: list[tuple[str, am.Content]] = [
        ("text", am.TextContent()),
        ("image", am.ImageContent(images=[PNG])),
        ("audio", am.AudioContent(audio=[WAV])),
        ("thinking", am.ThinkingContent()),
        ("tool_call", am.ToolCallContent(id="c1", name="f")),
        ("tool_result", am.ToolResultContent(id="c1")),
    ]
    for literal, block in blocks:
        assert block.type == literal
        # The literal is the seed's `type` field: given, it must match.
        assert type(block)(**_seed_kwargs(block), type=literal) == block
        with pytest.raises(am.ValidationError) as info:
            type(block)(**_seed_kwargs(block), type="something_else")
        assert info.value.violations[0].field == "type"


def _seed_kwargs(block: am.Content) -> dict[str, Any]:
    match block:
        case am.ImageContent():
            return {"images": [PNG]}
        case am.AudioContent():
            return {"audio": [WAV]}
        case am.ToolCallContent() | am.ToolResultContent():
            return {"id": "c1", "name": "f"} if isinstance(block, am.ToolCallContent) else {"id": "c1"}
    return {}


def test_per_role_constraints() -> None:
    """SystemContent = Text; UserContent = Text | Image | Audio | ToolResult; AssistantContent = Text |
    Thinking | ToolCall; ToolContent = ToolResult. The seed's types do not enforce it; agentmsg's roles do."""
    text, image, audio = am.TextContent("t"), am.ImageContent(images=[PNG]), am.AudioContent(audio=[WAV])
    thinking, call = am.ThinkingContent("hm", "sig"), am.ToolCallContent(id="c1", name="f")
    result = am.ToolResultContent(id="c1", content="ok")
    allowed = {
        am.SystemMessage: [text],
        am.UserMessage: [text, image, audio, result],
        am.AssistantMessage: [text, thinking, call],
        am.ToolMessage: [result],
    }
    every = [text, image, audio, thinking, call, result]
    for cls, blocks in allowed.items():
        assert len(cls(blocks).contents) == len(blocks)  # type: ignore[operator]
        for block in every:
            if block in blocks:
                continue
            with pytest.raises(am.ValidationError) as info:
                cls([block])  # type: ignore[operator]
            assert info.value.violations[0].rule_id.endswith(".content.kind")


# --- TextContent -----------------------------------------------------------------------------


def test_text_content() -> None:
    assert am.TextContent().content == ""
    assert am.TextContent(content="hello").content == "hello"
    assert am.TextContent(type="text", content="hello") == am.TextContent("hello")


# --- ImageContent ----------------------------------------------------------------------------


def test_image_content_holds_one_or_more_images_of_three_forms(tmp_path: Path) -> None:
    pil = Image.open(io.BytesIO(JPEG))  # a PIL image keeps its own format: JPEG
    block = am.ImageContent(images=["https://example.test/a.png", b64(GIF), pil, PNG])
    assert block.type == "image"
    assert len(block.images) == block.count == 4
    got = block.to_base64()
    # A URL passes through unchanged with an empty MIME type.
    assert got[0] == ("https://example.test/a.png", "")
    # A base64 string: MIME type detected from the data.
    assert got[1] == (b64(GIF), "image/gif")
    # PIL: converted to bytes in the image's own format.
    assert got[2][1] == "image/jpeg"
    assert Image.open(io.BytesIO(base64.b64decode(got[2][0]))).format == "JPEG"
    # bytes: MIME type from the magic bytes.
    assert got[3] == (b64(PNG), "image/png")
    # The seed's list reads back: bytes for inline images, the URL for URL images.
    assert block.images[0] == "https://example.test/a.png"
    assert block.images[3] == PNG


@pytest.mark.parametrize(
    ("data", "mime"), [(JPEG, "image/jpeg"), (PNG, "image/png"), (GIF, "image/gif"), (WEBP, "image/webp")]
)
def test_image_mime_detected_from_magic_bytes(data: bytes, mime: str) -> None:
    assert am.ImageContent(images=[data]).to_base64() == [(b64(data), mime)]
    assert am.ImageContent(images=[b64(data)]).to_base64() == [(b64(data), mime)]


def test_image_factories(tmp_path: Path) -> None:
    path = tmp_path / "cat.webp"
    path.write_bytes(WEBP)
    assert am.ImageContent.from_file(path).to_base64() == [(b64(WEBP), "image/webp")]
    assert am.ImageContent.from_url("https://example.test/cat.jpg").to_base64() == [
        ("https://example.test/cat.jpg", "")
    ]


def test_image_content_as_the_seed_writes_it_and_the_single_image_form() -> None:
    seed = am.ImageContent(type="image", images=[PNG])
    assert seed == am.ImageContent(PNG)  # the single-image positional form keeps working
    assert am.ImageContent([PNG, JPEG]) == am.ImageContent(images=[PNG, JPEG])


@pytest.mark.parametrize(
    ("images", "field", "match"),
    [
        ([], "images", "at least one"),
        ([PNG, 42], "images[1]", "got int"),
        ([PNG, JPEG, b"not an image at all"], "images[2]", "unknown image format"),
        ([PNG, "%%% not base64 %%%"], "images[1]", "invalid base64"),
    ],
)
def test_image_list_errors_name_the_item(images: list[Any], field: str, match: str) -> None:
    with pytest.raises(am.AgentMsgError, match=match) as info:
        am.ImageContent(images=images)
    error = info.value
    if isinstance(error, am.ValidationError):
        assert error.violations[0].field == field
    else:
        assert isinstance(error, am.MediaError)
        assert str(error).startswith(f"{field}: ")


def test_image_default_is_refused_with_a_clear_error() -> None:
    """The seed's ``images=[]`` default builds an empty block; the contract needs at least one image."""
    with pytest.raises(am.ValidationError) as info:
        am.ImageContent()
    assert [(v.field, v.rule_id) for v in info.value.violations] == [("images", "min_items")]


# --- AudioContent ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("magic", "mime"),
    [
        (b"ID3\x03", "audio/mpeg"),
        (b"\xff\xfb\x90\x00", "audio/mpeg"),
        (b"\xff\xf3\x90\x00", "audio/mpeg"),
        (b"\xff\xf2\x90\x00", "audio/mpeg"),
        (b"OggS\x00\x02", "audio/ogg"),
        (b"fLaC\x00\x00", "audio/flac"),
        (WAV, "audio/wav"),
        (b"\x00\x01\x02 unknown", "audio/mpeg"),  # unrecognised: the seed's default
    ],
)
def test_audio_detected_mime_types_table(magic: bytes, mime: str) -> None:
    data = magic + bytes(16)
    assert am.AudioContent(audio=[data]).to_base64() == [(b64(data), mime)]


def test_audio_content_three_forms_one_tuple_each(tmp_path: Path) -> None:
    clip = tmp_path / "clip.wav"
    clip.write_bytes(WAV)
    block = am.AudioContent(audio=[MP3_ID3, b64(b"OggS" + bytes(8)), f"file:{clip}"])
    assert block.type == "audio"
    assert block.to_base64() == [
        (b64(MP3_ID3), "audio/mpeg"),
        (b64(b"OggS" + bytes(8)), "audio/ogg"),
        (b64(WAV), "audio/wav"),
    ]
    assert block.audio == [MP3_ID3, b"OggS" + bytes(8), WAV]


def test_audio_factories(tmp_path: Path) -> None:
    path = tmp_path / "a.flac"
    path.write_bytes(b"fLaC" + bytes(8))
    assert am.AudioContent.from_file(path).media_type == "audio/flac"
    assert am.AudioContent.from_base64(b64(WAV)).to_base64() == [(b64(WAV), "audio/wav")]


@pytest.mark.parametrize(
    ("audio", "field", "match"),
    [
        ([], "audio", "at least one"),
        ([WAV, 3.5], "audio[1]", "got float"),
        ([WAV, "file:/nonexistent/clip.mp3"], "audio[1]", "cannot read audio file"),
        ([WAV, WAV, "@@@"], "audio[2]", "invalid base64"),
    ],
)
def test_audio_list_errors_name_the_item(audio: list[Any], field: str, match: str) -> None:
    with pytest.raises(am.AgentMsgError, match=match) as info:
        am.AudioContent(audio=audio)
    error = info.value
    if isinstance(error, am.ValidationError):
        assert error.violations[0].field == field
    else:
        assert str(error).startswith(f"{field}: ")


def test_user_message_with_audio(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp3"
    clip.write_bytes(MP3_ID3)
    msg = am.UserMessage.with_audio("Transcribe this", [Path(clip).read_bytes()])
    text, audio = msg.contents
    assert isinstance(text, am.TextContent)
    assert text.content == "Transcribe this"
    assert isinstance(audio, am.AudioContent)
    assert audio.to_base64() == [(b64(MP3_ID3), "audio/mpeg")]


# --- ThinkingContent -------------------------------------------------------------------------


def test_thinking_content_keeps_its_signature_for_resubmission() -> None:
    assert (am.ThinkingContent().content, am.ThinkingContent().signature) == ("", "")
    thought = am.ThinkingContent(content="Let me see.", signature="EqQBCgIYAh")
    # Re-submitted to the provider that made it, the signature goes with it.
    reply = am.AssistantMessage(
        [thought, am.TextContent("Done.")],
        provenance=am.Provenance("anthropic", "anthropic-messages", "claude-x"),
        stop_reason=am.StopReason.STOP,
    )
    payload = to_anthropic([am.UserMessage.text("hi"), reply])
    assert payload["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Let me see.",
        "signature": "EqQBCgIYAh",
    }


# --- ToolCallContent -------------------------------------------------------------------------


def test_tool_call_content() -> None:
    call = am.ToolCallContent(id="toolu_1", name="read_file", kind=am.ToolKind.READ, args={"path": "a.txt"})
    assert (call.type, call.id, call.name, call.kind, call.args) == (
        "tool_call",
        "toolu_1",
        "read_file",
        am.ToolKind.READ,
        {"path": "a.txt"},
    )
    bare = am.ToolCallContent(id="toolu_2", name="ls")
    assert (bare.kind, bare.args) == (None, {})  # the seed's defaults
    # The seed's empty id and name defaults are not a valid call in the contract: the error names them.
    with pytest.raises(am.ValidationError) as info:
        am.ToolCallContent()
    assert {v.field for v in info.value.violations} == {"tool_call.id", "tool_call.name"}


# --- ToolResultContent -----------------------------------------------------------------------


def test_tool_result_content_reads_as_the_seed() -> None:
    result = am.ToolResultContent(
        id="toolu_1", content="18C", is_error=False, metadata={"latency_ms": 3}, terminate=True
    )
    assert (result.type, result.id, result.content, result.is_error) == ("tool_result", "toolu_1", "18C", False)
    assert (result.metadata, result.terminate) == ({"latency_ms": 3}, True)
    defaults = am.ToolResultContent(id="toolu_2")
    assert (defaults.content, defaults.is_error, defaults.metadata, defaults.terminate) == ("", False, {}, False)
    # Multimodal results: the blocks under `blocks`; `content` stays the text.
    rich = am.ToolResultContent(id="toolu_3", content=[am.TextContent("a chart"), am.ImageContent(images=[PNG])])
    assert rich.content == "a chart"
    assert [block.type for block in rich.blocks] == ["text", "image"]


def test_metadata_and_terminate_never_reach_the_llm() -> None:
    result = am.ToolResultContent(id="call_1", content="18C", metadata={"secret": "hook-data"}, terminate=True)
    call = am.AssistantMessage([am.ToolCallContent(id="call_1", name="weather")], stop_reason="tool_calls")
    payload = to_openai_chat([am.UserMessage.text("weather?"), call, am.ToolMessage.from_result(result)])
    text = repr(payload)
    assert "hook-data" not in text
    assert "terminate" not in text
    assert payload[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "18C"}


# --- Message types ---------------------------------------------------------------------------


def test_base_message_fields_and_defaults() -> None:
    before = time.time()
    msg = am.BaseMessage(role=am.Role.USER, contents=[am.TextContent("hi")])
    assert isinstance(msg, am.UserMessage)
    assert msg.role is am.Role.USER
    assert uuid.UUID(msg.id).version == 4  # UUID, auto-generated
    assert isinstance(msg.timestamp, float)  # Unix timestamp, auto-generated
    assert before - 1 <= msg.timestamp <= time.time() + 1
    given = am.BaseMessage(am.Role.ASSISTANT, [am.TextContent("yo")], "m-7", 1_700_000_000.25)
    assert isinstance(given, am.AssistantMessage)
    assert (given.id, given.timestamp) == ("m-7", 1_700_000_000.25)
    # The role classes take the seed's inherited `role` field too, and refuse another role.
    assert am.SystemMessage(role=am.Role.SYSTEM, contents=[am.TextContent("x")]).role is am.Role.SYSTEM
    with pytest.raises(am.ValidationError) as info:
        am.UserMessage(role=am.Role.TOOL, contents=[am.TextContent("x")])
    assert info.value.violations[0].field == "role"


def test_role_enum() -> None:
    assert {role.name: role.value for role in am.Role} == {
        "SYSTEM": "system",
        "USER": "user",
        "ASSISTANT": "assistant",
        "TOOL": "tool",
        "CUSTOM": "custom",
        "BRANCH_SUMMARY": "branch_summary",
        "COMPACTION_SUMMARY": "compaction_summary",
    }


def test_llm_messages_and_their_factories() -> None:
    user = am.UserMessage.text("hello")
    assert user.text_content() == "hello"
    img1, img2 = PNG, "https://example.test/b.png"
    described = am.UserMessage.with_images("describe this", [img1, img2])
    assert described.text_content() == "describe this"
    images = [block for block in described.contents if isinstance(block, am.ImageContent)]
    assert [pair for block in images for pair in block.to_base64()] == [(b64(PNG), "image/png"), (img2, "")]
    system = am.SystemMessage.text("You are a helpful assistant.")
    assert system.text_content() == "You are a helpful assistant."
    r1, r2 = am.ToolResultContent(id="a", content="1"), am.ToolResultContent(id="b", content="2")
    assert am.ToolMessage.from_results([r1, r2]).results() == [r1, r2]
    assert am.ToolMessage.from_result(r1).results() == [r1]
    # LLMMessage and AgentMessage are the seed's unions.
    for message in (user, system, am.ToolMessage.from_result(r1), am.AssistantMessage.text("x")):
        assert isinstance(message, am.LLMMessage)  # type: ignore[arg-type,misc]
        assert isinstance(message, am.AgentMessage)  # type: ignore[arg-type,misc]


def test_assistant_message_usage_stop_reason_error_and_accessors() -> None:
    usage = am.Usage(input_tokens=100, output_tokens=20, cost=am.UsageCost(input=0.1, output=0.2, total=0.3))
    msg = am.AssistantMessage(
        contents=[
            am.ThinkingContent("plan", "sig"),
            am.TextContent("Hello "),
            am.ToolCallContent(id="c1", name="f", args={"x": 1}),
            am.TextContent("world"),
        ],
        usage=usage,
        stop_reason=am.StopReason.TOOL_CALLS,
    )
    assert msg.text_content() == "Hello world"
    assert [call.id for call in msg.tool_calls()] == ["c1"]
    assert [block.content for block in msg.thinking()] == ["plan"]
    assert (msg.usage, msg.stop_reason, msg.error) == (usage, am.StopReason.TOOL_CALLS, "")
    failed = am.AssistantMessage([], stop_reason=am.StopReason.ERROR, error="overloaded")
    assert failed.error == "overloaded"


def test_session_only_messages() -> None:
    custom = am.CustomMessage("bash_execution", [am.TextContent("$ ls")], {"exit_code": 0})
    assert (custom.role, custom.custom_type, custom.details) == (am.Role.CUSTOM, "bash_execution", {"exit_code": 0})
    branch = am.BranchSummaryMessage(summary="Tried grep first.", from_id="m-3")
    assert (branch.role, branch.summary, branch.from_id) == (am.Role.BRANCH_SUMMARY, "Tried grep first.", "m-3")
    compaction = am.CompactionSummaryMessage(summary="Earlier: setup.", tokens_before=50_000)
    assert (compaction.summary, compaction.tokens_before) == ("Earlier: setup.", 50_000)
    for message in (custom, branch, compaction):
        assert isinstance(message, am.AgentMessage)  # type: ignore[arg-type,misc]
        assert not isinstance(message, am.LLMMessage)  # type: ignore[arg-type,misc]
        # They never go to the LLM as such: asked to refuse them, a converter does.
        with pytest.raises(am.ValidationError) as info:
            to_openai_chat([message], session_messages="refuse")
        assert info.value.violations[0].rule_id == "session_message"
        # Built the seed's way too.
        assert isinstance(am.BaseMessage(message.role, **_session_fields(message)), type(message))


def _session_fields(message: am.AgentMessage) -> dict[str, Any]:
    match message:
        case am.CustomMessage():
            return {"contents": list(message.contents), "custom_type": message.custom_type}
        case am.BranchSummaryMessage():
            return {"summary": message.summary, "from_id": message.from_id}
        case am.CompactionSummaryMessage():
            return {"summary": message.summary, "tokens_before": message.tokens_before}
    raise AssertionError(message)


# --- Usage and cost --------------------------------------------------------------------------


def test_usage_and_cost_defaults_and_reading() -> None:
    usage = am.Usage()
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (0, 0, 0, 0)
    cost = usage.cost
    assert isinstance(cost, am.UsageCost)
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total) == (0.0, 0.0, 0.0, 0.0, 0.0)
    full = am.Usage(
        input_tokens=1200,
        output_tokens=300,
        cache_read_tokens=800,
        cache_write_tokens=64,
        cost=am.UsageCost(input=0.0036, output=0.0045, cache_read=0.00024, cache_write=0.00024, total=0.00858),
    )
    # "Agent reads input_tokens + output_tokens to track context size."
    assert full.input_tokens + full.output_tokens == 1500
    assert full.cost.total == pytest.approx(0.00858)
    # What the seed cannot say and the contract can: which counts were reported.
    assert usage.reported == frozenset()
    assert full.reported == {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost"}


# --- Provider API boundary -------------------------------------------------------------------


def test_provider_boundary_merges_tool_results_from_user_messages() -> None:
    call = am.AssistantMessage([am.ToolCallContent(id="call_1", name="f")], stop_reason="tool_calls")
    user = am.UserMessage([am.ToolResultContent(id="call_1", content="42"), am.TextContent("and now?")])
    payload = to_openai_chat([call, user])
    assert [m["role"] for m in payload] == ["assistant", "tool", "user"]
    assert payload[1] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}


def test_provider_boundary_converts_to_base64_into_image_blocks() -> None:
    block = am.ImageContent(images=[PNG, "https://example.test/b.png"])
    report = ConversionReport()
    payload = to_anthropic([am.UserMessage([block])], report=report)
    sources = [part["source"] for part in payload["messages"][0]["content"]]
    (data, mime), (url, _) = block.to_base64()
    assert sources == [{"type": "base64", "media_type": mime, "data": data}, {"type": "url", "url": url}]
    with pytest.raises(ConversionError):
        to_anthropic([am.UserMessage([block])], strict=True)  # the grouping itself does not come back
