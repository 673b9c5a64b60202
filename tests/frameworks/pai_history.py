"""pydantic-ai histories for the framework tests: one with every part kind, and a hypothesis strategy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    CachePoint,
    Citation,
    CompactionPart,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
    WebCitationSource,
)
from pydantic_ai.usage import RequestUsage

T0 = datetime(2026, 11, 27, 8, 0, 0, 123456, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)
PDF = b"%PDF-1.7\n" + bytes(16)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def every_part() -> list[ModelMessage]:
    """A history with every request and response part kind pydantic-ai 2.68 has for a conversation."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("You are terse.", timestamp=at(0)),
                SystemPromptPart("Dynamic.", timestamp=at(0), dynamic_ref="f", scope="request"),
                UserPromptPart(
                    [
                        "look at these",
                        TextContent("with metadata", metadata={"k": 1}),
                        ImageUrl("https://example.com/a.png"),
                        ImageUrl("https://example.com/b.jpg", vendor_metadata={"detail": "high"}),
                        AudioUrl("https://example.com/a.mp3"),
                        DocumentUrl("https://example.com/a.pdf"),
                        VideoUrl("https://example.com/a.mp4"),
                        BinaryContent(PNG, media_type="image/png"),
                        BinaryContent(b"ID3" + bytes(16), media_type="audio/mpeg"),
                        BinaryContent(PDF, media_type="application/pdf"),
                        BinaryContent(b"\x00\x00\x00\x18ftypmp42", media_type="video/mp4"),
                        UploadedFile("file-123", "openai", media_type="application/pdf"),
                        CachePoint(),
                    ],
                    timestamp=at(1),
                ),
                UserPromptPart(["only one item"], timestamp=at(1)),
            ],
            timestamp=at(0),
            instructions="Be brief.",
            run_id="run-1",
            conversation_id="conv-1",
            metadata={"app": "x"},
        ),
        ModelResponse(
            parts=[
                ThinkingPart("I should call the tool.", signature="sig-abc", provider_name="anthropic"),
                ThinkingPart("", id="redacted_thinking", signature="opaque==", provider_name="anthropic"),
                TextPart(
                    "Calling.",
                    id="t1",
                    provider_details={"x": 1},
                    citations=[Citation(sources=[WebCitationSource("https://example.com", title="Ex")])],
                ),
                ToolCallPart("get_weather", '{"city":"Paris", "n": 1}', tool_call_id="call_1"),
                ToolCallPart("get_time", {"tz": "UTC"}, tool_call_id="call_2"),
                ToolCallPart("noop", None, tool_call_id="call_3"),
                NativeToolCallPart("web_search", {"query": "weather"}, tool_call_id="ws_1", provider_name="anthropic"),
                NativeToolReturnPart(
                    "web_search", [{"url": "https://example.com"}], tool_call_id="ws_1", provider_name="anthropic"
                ),
                FilePart(BinaryContent(PNG, media_type="image/png")),
            ],
            usage=RequestUsage(
                input_tokens=120,
                output_tokens=40,
                cache_read_tokens=20,
                cache_write_tokens=10,
                output_reasoning_tokens=7,
            ),
            model_name="claude-sonnet-4-5",
            timestamp=at(2),
            provider_name="anthropic",
            provider_response_id="msg_01",
            finish_reason="tool_call",
            run_id="run-1",
            conversation_id="conv-1",
            provider_details={"finish_reason": "tool_use"},
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("get_weather", "sunny", tool_call_id="call_1", timestamp=at(3)),
                ToolReturnPart(
                    "get_time", {"time": "08:00"}, tool_call_id="call_2", timestamp=at(3), metadata={"cached": True}
                ),
                ToolReturnPart("noop", "boom", tool_call_id="call_3", timestamp=at(3), outcome="failed"),
            ],
            timestamp=at(3),
            instructions="Be brief.",
            run_id="run-1",
            conversation_id="conv-1",
        ),
        ModelResponse(
            parts=[ToolCallPart("get_weather", '{"city": 3}', tool_call_id="call_4")],
            usage=RequestUsage(input_tokens=5, output_tokens=2, cost=Decimal("0.0012")),
            model_name="claude-sonnet-4-5",
            timestamp=at(4),
            provider_name="anthropic",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    "get_weather",
                    "city must be a string",
                    tool_call_id="call_4",
                    timestamp=at(5),
                    outcome="retried",
                    retry=RetryInfo(cause="validation_error", attempt=1, max_retries=3),
                ),
                RetryFeedbackPart("try again", retry=RetryInfo(cause="model_retry"), timestamp=at(5)),
            ],
            timestamp=at(5),
            run_id="run-1",
        ),
        ModelResponse(
            parts=[TextPart("Il fait beau."), CompactionPart("summary", provider_name="openai")],
            timestamp=at(6),
            model_name="gpt-5",
            provider_name="openai",
            finish_reason="stop",
        ),
        ModelResponse(parts=[], timestamp=at(7), finish_reason="length"),
    ]


# --- generated histories --------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
ids = st.text("abcdefghij0123456789_", min_size=1, max_size=8)
names = st.sampled_from(["get_weather", "search", "calc"])
stamps = st.integers(0, 10_000).map(lambda s: at(s / 7))
json_args = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers() | texts, max_size=3)


@st.composite
def user_items(draw: Any) -> Any:
    kind = draw(st.sampled_from(["str", "image", "binary", "doc"]))
    if kind == "str":
        return draw(texts)
    if kind == "image":
        return ImageUrl(f"https://example.com/{draw(ids)}.png")
    if kind == "doc":
        return BinaryContent(PDF, media_type="application/pdf")
    return BinaryContent(PNG, media_type="image/png")


@st.composite
def requests(draw: Any) -> ModelRequest:
    parts: list[Any] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["system", "user", "tool", "feedback"]))
        when = draw(stamps)
        if kind == "system":
            parts.append(SystemPromptPart(draw(texts), timestamp=when))
        elif kind == "user":
            content = draw(texts | st.lists(user_items(), min_size=1, max_size=3))
            parts.append(UserPromptPart(content, timestamp=when))
        elif kind == "tool":
            content = draw(texts | json_args)
            outcome = draw(st.sampled_from(["success", "failed", "denied"]))
            parts.append(ToolReturnPart(draw(names), content, tool_call_id=draw(ids), timestamp=when, outcome=outcome))
        else:
            parts.append(RetryFeedbackPart(draw(texts), retry=RetryInfo(cause="model_retry"), timestamp=when))
    return ModelRequest(
        parts=parts,
        timestamp=draw(stamps | st.none()),
        instructions=draw(texts | st.none()),
        run_id=draw(ids | st.none()),
    )


@st.composite
def responses(draw: Any) -> ModelResponse:
    parts: list[Any] = []
    provider = draw(st.sampled_from([None, "anthropic", "openai", "google-gla", "groq"]))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "thinking", "call", "hosted"]))
        if kind == "text":
            parts.append(TextPart(draw(texts), id=draw(ids | st.none())))
        elif kind == "thinking":
            parts.append(
                ThinkingPart(
                    draw(texts), signature=draw(ids | st.none()), provider_name=draw(st.sampled_from([None, provider]))
                )
            )
        elif kind == "call":
            args = draw(json_args.map(lambda a: a) | json_args.map(lambda a: __import__("json").dumps(a)) | st.none())
            parts.append(ToolCallPart(draw(names), args, tool_call_id=draw(ids)))
        else:
            parts.append(
                NativeToolCallPart("web_search", draw(json_args), tool_call_id=draw(ids), provider_name=provider)
            )
    usage = RequestUsage(
        input_tokens=draw(st.integers(0, 1000)),
        output_tokens=draw(st.integers(0, 1000)),
        cache_read_tokens=draw(st.integers(0, 50)),
    )
    return ModelResponse(
        parts=parts,
        usage=usage,
        model_name=draw(st.sampled_from([None, "m1"])),
        provider_name=provider,
        timestamp=draw(stamps),
        finish_reason=draw(st.sampled_from([None, "stop", "length", "tool_call"])),
        provider_response_id=draw(ids | st.none()),
    )


histories = st.lists(st.one_of(requests(), responses()), max_size=6)
