"""The conversation every agentmsg.ui test converts: text, signed reasoning, parallel tool calls with
their results (one an error), a hosted web search, text with web citations, and an image."""

from __future__ import annotations

from agentmsg import (
    AssistantMessage,
    Citation,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    Provenance,
    SearchResult,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    Usage,
    UserMessage,
)

# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2b0e1d60000000049454e44ae426082"
)
ANTHROPIC = Provenance("anthropic", "anthropic-messages", "claude-sonnet-4-5", "msg_01")
T0 = 1_790_000_000.0


def conversation() -> list:
    """System, a user question with an image, a signed-reasoning turn with two parallel tool calls,
    their results, then a hosted web search and a cited answer."""
    return [
        SystemMessage.text("You are a weather assistant.", id="sys", timestamp=T0),
        UserMessage(
            [TextContent("What is the weather in Paris and Oslo? And what is in this picture?"), ImageContent(PNG)],
            id="u1",
            timestamp=T0 + 1,
        ),
        AssistantMessage(
            [
                ThinkingContent("Two cities: two calls at once.", "sig-abc"),
                TextContent("Let me check both."),
                ToolCallContent("call_paris", "get_weather", arguments='{"city": "Paris"}'),
                ToolCallContent("call_oslo", "get_weather", arguments='{"city":"Oslo","units":"metric"}', index=1),
            ],
            usage=Usage(input_tokens=120, output_tokens=40, cache_read_tokens=10),
            stop_reason=StopReason.TOOL_CALLS,
            stop_reason_raw="tool_use",
            provenance=ANTHROPIC,
            id="a1",
            timestamp=T0 + 2,
        ),
        ToolMessage(
            [
                ToolResultContent("call_paris", "18°C, cloudy", name="get_weather"),
                ToolResultContent("call_oslo", "station offline", is_error=True, name="get_weather", index=1),
            ],
            id="t1",
            timestamp=T0 + 3,
        ),
        AssistantMessage(
            [
                HostedToolCallContent("srv_1", "web_search", {"query": "Oslo weather"}, kind="web_search"),
                HostedToolResultContent(
                    "srv_1",
                    name="web_search",
                    kind="web_search",
                    search_results=[SearchResult("https://met.no/oslo", "Oslo forecast", "5°C, rain")],
                ),
                TextContent(
                    "Paris is 18°C and cloudy; Oslo is about 5°C with rain. The picture is a single pixel.",
                    citations=[Citation.web("https://met.no/oslo", "Oslo forecast", cited_text="5°C, rain")],
                ),
            ],
            usage=Usage(input_tokens=300, output_tokens=60),
            stop_reason=StopReason.STOP,
            stop_reason_raw="end_turn",
            provenance=ANTHROPIC,
            id="a2",
            timestamp=T0 + 4,
        ),
    ]


def image_turn() -> AssistantMessage:
    """A hosted image generation: its call, its result holding the image, and a caption."""
    return AssistantMessage(
        [
            HostedToolCallContent("ig_1", "image_generation", {"prompt": "one pixel"}, kind="image_generation"),
            HostedToolResultContent("ig_1", [ImageContent(PNG)], name="image_generation", kind="image_generation"),
            TextContent("Here it is."),
        ],
        provenance=Provenance("openai", "openai-responses", "gpt-5", "resp_1"),
        id="a7",
        timestamp=7.0,
    )


def pydantic_ai_conversation() -> list:
    """The same conversation as pydantic-ai ``ModelMessage``s (for the oracle: its AG-UI and Vercel adapters)."""
    from pydantic_ai.messages import (
        BinaryContent,
        ModelRequest,
        ModelResponse,
        NativeToolCallPart,
        NativeToolReturnPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    question = "What is the weather in Paris and Oslo? And what is in this picture?"
    answer = "Paris is 18°C and cloudy; Oslo is about 5°C with rain. The picture is a single pixel."
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("You are a weather assistant."),
                UserPromptPart([question, BinaryContent(PNG, media_type="image/png")]),
            ]
        ),
        ModelResponse(
            parts=[
                ThinkingPart("Two cities: two calls at once.", signature="sig-abc", provider_name="anthropic"),
                TextPart("Let me check both."),
                ToolCallPart("get_weather", '{"city": "Paris"}', "call_paris"),
                ToolCallPart("get_weather", '{"city":"Oslo","units":"metric"}', "call_oslo"),
            ],
            provider_name="anthropic",
            model_name="claude-sonnet-4-5",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("get_weather", "18°C, cloudy", "call_paris"),
                ToolReturnPart("get_weather", "station offline", "call_oslo", outcome="failed"),
            ]
        ),
        ModelResponse(
            parts=[
                NativeToolCallPart("web_search", {"query": "Oslo weather"}, "srv_1", provider_name="anthropic"),
                NativeToolReturnPart(
                    "web_search",
                    [{"url": "https://met.no/oslo", "title": "Oslo forecast"}],
                    "srv_1",
                    provider_name="anthropic",
                ),
                TextPart(answer),
            ],
            provider_name="anthropic",
        ),
    ]


def approval_turn() -> list:
    """A user question, then a turn whose three calls need a person's decision: one approved (it ran), one denied
    (its denial result), one still waiting; the decisions in a user message after the calls, as agentmsg places them."""
    from datetime import UTC, datetime

    from agentmsg import ToolApprovalContent

    return [
        UserMessage.text("Clean up the build and deploy.", id="q", timestamp=T0),
        AssistantMessage(
            [
                ToolCallContent("call_rm", "shell", arguments='{"cmd":"rm -rf build"}', requires_approval=True),
                ToolCallContent("call_deploy", "deploy", arguments='{"env":"prod"}', requires_approval=True, index=1),
                ToolCallContent("call_ls", "shell", arguments='{"cmd":"ls"}', index=2),
            ],
            stop_reason=StopReason.TOOL_CALLS,
            provenance=ANTHROPIC,
            id="b1",
            timestamp=T0 + 1,
        ),
        UserMessage(
            [
                ToolApprovalContent.deny(
                    "call_deploy",
                    "not on a Friday",
                    decided_by="ann",
                    decided_at=datetime(2026, 11, 27, 10, tzinfo=UTC),
                ),
                ToolApprovalContent.approve("call_rm"),
            ],
            id="d1",
            timestamp=T0 + 2,
        ),
        ToolMessage(
            [
                ToolResultContent("call_rm", "removed", name="shell"),
                ToolResultContent(
                    "call_deploy",
                    "The tool call was denied by ann: not on a Friday",
                    is_error=True,
                    name="deploy",
                    index=1,
                ),
                ToolResultContent("call_ls", "src", name="shell", index=2),
            ],
            id="r1",
            timestamp=T0 + 3,
        ),
        AssistantMessage(
            [
                TextContent("Build removed; deploy denied. Shall I tag it?"),
                ToolCallContent("call_tag", "tag", arguments="{}", requires_approval=True),
            ],
            stop_reason=StopReason.TOOL_CALLS,
            provenance=ANTHROPIC,
            id="b2",
            timestamp=T0 + 4,
        ),
    ]
