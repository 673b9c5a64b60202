"""Sample messages of every role and content kind, with fixed ids and timestamps."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from PIL import Image

import agentmsg as am


def png_bytes(size: tuple[int, int] = (2, 2), color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
PDF = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def every_content() -> list[am.Content]:
    """One block of every content kind (several sources for media)."""
    return [
        am.TextContent("hello", signature="sig-text"),
        am.ImageContent(png_bytes(), detail="high"),
        am.ImageContent.from_url("https://example.test/cat.jpg"),
        am.ImageContent.from_file_id("file-img-1", media_type="image/png"),
        am.ImageContent(
            images=[
                png_bytes(color="blue"),
                "https://example.test/dog.png",
                am.ImageContent.from_file_id("file-img-2"),
            ],
            detail="auto",
        ),
        am.AudioContent(WAV),
        am.AudioContent.from_url("https://example.test/a.mp3"),
        am.AudioContent(audio=[WAV, "https://example.test/b.mp3"]),
        am.DocumentContent(PDF, filename="a.pdf", title="A"),
        am.DocumentContent.from_text("plain words"),
        am.DocumentContent.from_url("https://example.test/d.pdf"),
        am.ThinkingContent("let me think", "sig-think"),
        am.RedactedThinkingContent("ENCRYPTED=="),
        am.ToolCallContent("call_1", "get_weather", {"city": "Paris", "days": 3}, kind="web", index=1, signature="s"),
        am.ToolResultContent(
            "call_1",
            [am.TextContent("sunny"), am.ImageContent(png_bytes())],
            name="get_weather",
            is_error=False,
            metadata={"latency_ms": 12, "source": "cache"},
            terminate=True,
            terminate_message="done",
            index=1,
        ),
        am.ProviderContent.from_block(
            "anthropic", {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
        ),
        *hosted_content(),
        am.ToolApprovalContent.deny(
            "call_1", "not today", decided_by="ann", decided_at=datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
        ),
    ]


def hosted_content() -> list[am.Content]:
    """Contract v1.1 content: a cited text block with logprobs, a hosted tool call and its result."""
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "paris"}}
    return [
        am.TextContent(
            "Paris is the capital of France.",
            citations=[
                am.Citation.web(
                    "https://example.test/paris",
                    "Paris",
                    cited_text="Paris is the capital",
                    original=am.ProviderContent.from_block(
                        "anthropic",
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.test/paris",
                            "title": "Paris",
                            "encrypted_index": "EpMB",
                            "cited_text": "Paris is the capital",
                        },
                    ),
                ),
                am.Citation.document(0, title="Atlas", chars=(3, 40), cited_text="capital", start_index=0, end_index=5),
            ],
            logprobs=[am.TokenLogprob("Paris", -0.01, bytes=b"Paris", top_logprobs=[am.TokenLogprob("Rome", -5.2)])],
        ),
        am.HostedToolCallContent(
            "srvtoolu_1",
            "web_search",
            '{"query": "paris"}',
            kind="web_search",
            status="completed",
            original=am.ProviderContent.from_block("anthropic", search),
        ),
        am.HostedToolResultContent(
            "srvtoolu_1",
            kind="web_search",
            search_results=[
                am.SearchResult("https://example.test/paris", "Paris", page_age="2 days", encrypted_content="Eq8B")
            ],
        ),
    ]


def every_role() -> list[am.AgentMessage]:
    """One message of every role, exercising every field, ids s1..k1, fixed timestamps."""
    ts = 1_700_000_000.25
    return [
        am.SystemMessage([am.TextContent("You are terse.")], id="s1", timestamp=ts),
        am.UserMessage(
            [
                am.TextContent("What is this?"),
                am.ImageContent(png_bytes(), detail="low"),
                am.AudioContent(WAV),
                am.DocumentContent(PDF, filename="spec.pdf"),
            ],
            id="u1",
            timestamp=ts + 1,
            name="alice",
        ),
        am.AssistantMessage(
            [
                am.ThinkingContent("It is a picture.", "sig-1"),
                am.RedactedThinkingContent("opaque=="),
                am.TextContent("Checking."),
                am.ToolCallContent("call_1", "lookup", arguments='{"q": "cat", "n": 10}', kind="read"),
                am.ToolCallContent("call_2", "lookup", {"q": "dog"}, index=1),
            ],
            usage=am.Usage(
                input_tokens=100,
                output_tokens=40,
                cache_read_tokens=0,
                cache_write_tokens=12,
                reasoning_tokens=20,
                total_tokens=152,
                cost=am.UsageCost(input=0.001, output=0.002, total=0.003),
            ),
            stop_reason=am.StopReason.TOOL_CALLS,
            stop_reason_raw="tool_use",
            provenance=am.Provenance("anthropic", "anthropic-messages", "claude-x", "msg_01"),
            id="a1",
            timestamp=ts + 2,
        ),
        am.ToolMessage.from_results(
            [
                am.ToolResultContent("call_1", "a cat", name="lookup", metadata={"rows": 1}),
                am.ToolResultContent.error("call_2", "not found", name="lookup"),
            ],
            id="t1",
            timestamp=ts + 3,
        ),
        am.UserMessage([am.ToolResultContent("call_3", "ok")], id="u2", timestamp=ts + 4),
        am.AssistantMessage.text("A cat.", stop_reason="stop", id="a2", timestamp=ts + 5),
        am.CustomMessage(
            "bash_execution", [am.TextContent("$ ls")], details={"exit": 0, "out": ["a"]}, id="c1", timestamp=ts + 6
        ),
        am.BranchSummaryMessage("Tried the other tool first.", "a1", id="b1", timestamp=ts + 7),
        am.CompactionSummaryMessage("Earlier: greetings.", 4096, id="k1", timestamp=ts + 8),
    ]
