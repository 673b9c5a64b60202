"""LangChain core messages (``agentmsg.providers.langchain``): goldens, round trips, interop, errors.

Golden files live in ``tests/golden/langchain/*.json`` in LangChain's own
``messages_to_dict`` form; each names under ``_source`` the LangChain
documentation and ``langchain_core`` 1.7.2 types it follows. There is no
provider SDK request type for LangChain objects: instead every object
written is checked the way LangChain itself would take it (construction,
``messages_to_dict`` / ``messages_from_dict``, the ``content.py`` TypedDict of
every block, ``content_blocks``, ``convert_to_openai_messages`` whose output
the OpenAI SDK types then validate).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import typing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core import messages as lc
from langchain_core.messages import content as lc_content
from openai.types.chat import ChatCompletionMessageParam
from samples import PDF, WAV, every_role
from sdk_check import validate_with

import agentmsg as am
from agentmsg import (
    AgentMessage,
    AssistantMessage,
    AudioContent,
    BaseMessage,
    CompactionSummaryMessage,
    DocumentContent,
    HostedToolCallContent,
    ImageContent,
    ImageDetail,
    Provenance,
    ProviderContent,
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
)
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning, project_session_message
from agentmsg.providers.langchain import API, PROVIDER, STASH_KEY, from_langchain, to_langchain, to_langchain_chunk
from agentmsg.v1 import content_pb2, message_pb2

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "langchain"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
TS = datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
CLAUDE = Provenance("anthropic", "anthropic-messages", "claude-x", "msg_1")


def load_golden(name: str) -> list[dict[str, Any]]:
    """A golden file's messages, with its ``_source`` note checked and stripped."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["form"].startswith("langchain_core.messages.messages_to_dict")
    assert source["follows"]
    messages = doc.pop("messages")
    assert doc == {}, f"unexpected top-level keys in {name}: {sorted(doc)}"
    return messages


def conversation() -> list[BaseMessage]:
    """Every role and content kind LangChain can hold, with fixed ids and timestamps."""
    return [
        SystemMessage([TextContent("You are terse.")], id="m0", timestamp=TS, name="policy"),
        UserMessage(
            [
                TextContent("Look at these."),
                ImageContent(PNG, detail="high"),
                ImageContent.from_url("https://example.com/cat.jpg"),
                ImageContent.from_file_id("file-img-1"),
                AudioContent(WAV),
                AudioContent.from_url("https://example.com/a.mp3"),
                DocumentContent(PDF, filename="report.pdf", title="Q3 report"),
                DocumentContent.from_text("plain words", filename="notes.txt", title="Notes"),
                DocumentContent.from_url("https://example.com/paper.pdf", filename="paper.pdf"),
                DocumentContent.from_file_id("file-doc-1", media_type="application/pdf"),
            ],
            id="m1",
            timestamp=TS,
            name="alice",
        ),
        AssistantMessage(
            [
                ThinkingContent("Two tools.", "sig-1"),
                RedactedThinkingContent("opaque=="),
                TextContent("Checking."),
                ToolCallContent(
                    "call_1",
                    "read_file",
                    arguments='{"path": "a.txt", "n": 10}',
                    kind="read",
                    metadata={"approved": True},
                ),
                ToolCallContent("call_2", "lookup", {"q": "cats"}, index=1, server_name="search-mcp"),
                ToolCallContent("call_3", "lookup", arguments='{"q": ', index=2),
            ],
            usage=Usage(
                input_tokens=10,
                output_tokens=50,
                cache_read_tokens=100,
                cache_write_tokens=20,
                reasoning_tokens=30,
                total_tokens=180,
                cost=UsageCost(total=0.25),
            ),
            stop_reason=StopReason.TOOL_CALLS,
            stop_reason_raw="tool_use",
            provenance=CLAUDE,
            id="m2",
            timestamp=TS,
        ),
        ToolMessage(
            [
                ToolResultContent(
                    "call_1", [TextContent("hello"), ImageContent(PNG)], name="read_file", metadata={"bytes": 5}
                ),
                ToolResultContent(
                    "call_2", "not found", is_error=True, name="lookup", index=1, terminate=True, terminate_message="x"
                ),
            ],
            id="m3",
            timestamp=TS,
        ),
        UserMessage(
            [ToolResultContent("call_3", "bad arguments", is_error=True), TextContent("Try again.")],
            id="m4",
            timestamp=TS,
        ),
        AssistantMessage.text(
            "Done.",
            stop_reason="stop",
            stop_reason_raw="stop",
            provenance=Provenance("openai", "openai-chat-completions", "gpt-x", "chatcmpl-1"),
            usage=Usage(input_tokens=90, output_tokens=3, cache_read_tokens=10, total_tokens=103),
            id="m5",
            timestamp=TS,
        ),
        AssistantMessage([], error="upstream timeout", stop_reason="error", id="m6", timestamp=TS, name="worker"),
    ]


def violation_of(exc: pytest.ExceptionInfo[ValidationError], field: str) -> tuple[str, str]:
    """The (rule_id, message) of the violation at ``field`` (which must exist)."""
    found = {v.field: (v.rule_id, v.message) for v in exc.value.violations}
    assert field in found, f"no violation at {field!r}; got {exc.value.violations}"
    return found[field]


def quiet(messages: list[BaseMessage], **kwargs: Any) -> list[lc.BaseMessage]:
    """``to_langchain`` that must lose nothing."""
    report = ConversionReport()
    out = to_langchain(messages, report=report, **kwargs)
    assert report.losses == [], report.summary()
    return out


# --------------------------------------------------------------------------- LangChain's own block types

_BLOCK_TYPES: dict[str, Any] = {
    "text": lc_content.TextContentBlock,
    "reasoning": lc_content.ReasoningContentBlock,
    "image": lc_content.ImageContentBlock,
    "audio": lc_content.AudioContentBlock,
    "file": lc_content.FileContentBlock,
    "text-plain": lc_content.PlainTextContentBlock,
    "tool_call": lc_content.ToolCall,
    "invalid_tool_call": lc_content.InvalidToolCall,
    "non_standard": lc_content.NonStandardContentBlock,
    "server_tool_call": lc_content.ServerToolCall,
    "server_tool_call_chunk": lc_content.ServerToolCallChunk,
    "server_tool_result": lc_content.ServerToolResult,
}


def assert_annotations(block: dict[str, Any]) -> None:
    """Every annotation of a text block is one of LangChain's ``Annotation`` TypedDicts."""
    for annotation in block.get("annotations", []):
        typed = lc_content.Citation if annotation["type"] == "citation" else lc_content.NonStandardAnnotation
        assert set(annotation) <= set(typing.get_type_hints(typed))
        validate_with(typed, annotation)


def assert_standard_block(block: Any) -> None:
    """The block is exactly one of langchain-core's v1 ``ContentBlock`` TypedDicts: no key it lacks."""
    assert isinstance(block, dict)
    typed = _BLOCK_TYPES[block["type"]]
    allowed = set(typing.get_type_hints(typed))
    assert set(block) <= allowed, f"{block['type']} block has keys LangChain does not define: {set(block) - allowed}"
    assert typed.__required_keys__ <= set(block), f"{block['type']} block misses {typed.__required_keys__ - set(block)}"
    validate_with(typed, block)
    assert_annotations(block)


def assert_langchain_accepts(messages: list[lc.BaseMessage]) -> None:
    """LangChain serialises and restores the messages unchanged, and every list block is a standard one."""
    dumped = lc.messages_to_dict(messages)
    json.dumps(dumped)  # plain JSON data
    assert lc.messages_from_dict(dumped) == messages
    for message in messages:
        if isinstance(message.content, list):
            for block in message.content:
                assert_standard_block(block)
            if isinstance(message, lc.AIMessage):
                assert message.response_metadata["output_version"] == "v1"
                # LangChain hands v1 content back as is, with no provider translation.
                assert message.content_blocks == message.content


# --------------------------------------------------------------------------- golden: agentmsg -> LangChain


def test_golden_export_is_langchain_v1_form() -> None:
    messages = quiet(conversation())
    assert lc.messages_to_dict(messages) == load_golden("v1_export.json")
    assert [type(m).__name__ for m in messages] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
        "AIMessage",
        "AIMessage",
    ]
    assert_langchain_accepts(messages)


def test_golden_export_reads_back_exactly() -> None:
    assert from_langchain(load_golden("v1_export.json")) == conversation()
    assert from_langchain(quiet(conversation())) == conversation()


def test_user_content_uses_standard_data_blocks() -> None:
    human = quiet(conversation())[1]
    assert human.name == "alice"
    text, png, jpg, img_id, wav, mp3, pdf, plain, pdf_url, doc_id = human.content
    assert text == {"type": "text", "text": "Look at these."}
    assert png == {"type": "image", "base64": PNG_B64, "mime_type": "image/png", "extras": {"detail": "high"}}
    assert jpg == {"type": "image", "url": "https://example.com/cat.jpg", "mime_type": "image/jpeg"}
    assert img_id == {"type": "image", "file_id": "file-img-1"}
    assert wav == {"type": "audio", "base64": base64.b64encode(WAV).decode(), "mime_type": "audio/wav"}
    assert mp3 == {"type": "audio", "url": "https://example.com/a.mp3", "mime_type": "audio/mpeg"}
    assert pdf == {
        "type": "file",
        "base64": base64.b64encode(PDF).decode(),
        "mime_type": "application/pdf",
        "extras": {"filename": "report.pdf", "title": "Q3 report"},
    }
    assert plain == {
        "type": "text-plain",
        "mime_type": "text/plain",
        "text": "plain words",
        "title": "Notes",
        "extras": {"filename": "notes.txt"},
    }
    assert pdf_url == {
        "type": "file",
        "url": "https://example.com/paper.pdf",
        "mime_type": "application/pdf",
        "extras": {"filename": "paper.pdf"},
    }
    assert doc_id == {"type": "file", "file_id": "file-doc-1", "mime_type": "application/pdf"}
    # LangChain's own normalisation sees the same standard blocks.
    assert human.content_blocks == human.content


def test_assistant_with_thinking_is_v1_content_with_parallel_and_invalid_calls() -> None:
    ai = quiet(conversation())[2]
    assert isinstance(ai, lc.AIMessage)
    assert ai.content == [
        {"type": "reasoning", "reasoning": "Two tools.", "extras": {"signature": "sig-1"}},
        {"type": "non_standard", "value": {"type": "redacted_thinking", "data": "opaque=="}},
        {"type": "text", "text": "Checking."},
        {"type": "tool_call", "id": "call_1", "name": "read_file", "args": {"path": "a.txt", "n": 10}},
        {"type": "tool_call", "id": "call_2", "name": "lookup", "args": {"q": "cats"}},
        {
            "type": "invalid_tool_call",
            "id": "call_3",
            "name": "lookup",
            "args": '{"q": ',
            "error": "invalid JSON: Expecting value: line 1 column 7 (char 6)",
        },
    ]
    assert ai.tool_calls == [
        {"name": "read_file", "args": {"path": "a.txt", "n": 10}, "id": "call_1", "type": "tool_call"},
        {"name": "lookup", "args": {"q": "cats"}, "id": "call_2", "type": "tool_call"},
    ]
    assert ai.invalid_tool_calls == [
        {
            "type": "invalid_tool_call",
            "id": "call_3",
            "name": "lookup",
            "args": '{"q": ',
            "error": "invalid JSON: Expecting value: line 1 column 7 (char 6)",
        }
    ]
    # LangChain counts every prompt token in input_tokens: 10 uncached + 100 read + 20 written.
    assert ai.usage_metadata == {
        "input_tokens": 130,
        "output_tokens": 50,
        "total_tokens": 180,
        "input_token_details": {"cache_read": 100, "cache_creation": 20},
        "output_token_details": {"reasoning": 30},
    }
    metadata = dict(ai.response_metadata)
    stash = metadata.pop(STASH_KEY)
    assert metadata == {
        "output_version": "v1",
        "model_provider": "anthropic",
        "model_name": "claude-x",
        "id": "msg_1",
        "stop_reason": "tool_use",
    }
    assert stash == {
        "timestamp": "2025-01-02T03:04:05.123456Z",
        "api": "anthropic-messages",
        "usage": {
            "inputTokens": "10",
            "outputTokens": "50",
            "cacheReadTokens": "100",
            "cacheWriteTokens": "20",
            "reasoningTokens": "30",
            "totalTokens": "180",
            "cost": {"total": 0.25},
        },
        "tool_calls": [
            {"id": "call_1", "arguments": '{"path": "a.txt", "n": 10}', "kind": "read", "metadata": {"approved": True}},
            {"id": "call_2", "server_name": "search-mcp"},
        ],
    }


def test_assistant_thinking_matches_langchains_own_anthropic_translation() -> None:
    """ChatAnthropic's raw content, standardised by LangChain itself, is what we write."""
    raw = lc.AIMessage(
        content=[
            {"type": "thinking", "thinking": "Two tools.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque=="},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_2", "name": "lookup", "input": {"q": "cats"}},
        ],
        tool_calls=[{"name": "lookup", "args": {"q": "cats"}, "id": "call_2"}],
        response_metadata={"model_provider": "anthropic", "model_name": "claude-x", "id": "msg_1"},
    )
    ours = AssistantMessage(
        [
            ThinkingContent("Two tools.", "sig-1"),
            RedactedThinkingContent("opaque=="),
            TextContent("Checking."),
            ToolCallContent("call_2", "lookup", {"q": "cats"}),
        ],
        provenance=CLAUDE,
    )
    (written,) = quiet([ours])
    assert written.content == raw.content_blocks


def test_tool_results_are_one_tool_message_each_with_artifact_and_status() -> None:
    written = quiet(conversation())
    first, second, in_user, human = written[3:7]
    assert isinstance(first, lc.ToolMessage)
    assert first.tool_call_id == "call_1"
    assert first.name == "read_file"
    assert first.status == "success"
    assert first.content == [
        {"type": "text", "text": "hello"},
        {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
    ]
    # LangChain's artifact is app-only data, never sent to a model: the result's metadata.
    assert first.artifact == {"bytes": 5}
    assert (first.id, second.id) == ("m3", "m3#1")
    assert first.response_metadata[STASH_KEY] == {"timestamp": "2025-01-02T03:04:05.123456Z", "part_of": "m3"}
    assert isinstance(second, lc.ToolMessage)
    assert (second.content, second.status, second.artifact) == ("not found", "error", None)
    assert second.response_metadata[STASH_KEY]["result"] == {"terminate": True, "terminate_message": "x"}
    # A user message's tool result becomes a ToolMessage in place; its text a HumanMessage after it.
    assert isinstance(in_user, lc.ToolMessage)
    assert isinstance(human, lc.HumanMessage)
    assert (in_user.id, human.id, human.content) == ("m4", "m4#1", "Try again.")
    assert in_user.response_metadata[STASH_KEY]["role"] == "user"


def test_classic_assistant_forms() -> None:
    done, failed = quiet(conversation())[7:]
    assert isinstance(done, lc.AIMessage)
    assert done.content == "Done."
    assert done.tool_calls == []
    assert "output_version" not in done.response_metadata
    assert done.response_metadata["finish_reason"] == "stop"
    assert done.usage_metadata == {
        "input_tokens": 100,
        "output_tokens": 3,
        "total_tokens": 103,
        "input_token_details": {"cache_read": 10},
    }
    assert STASH_KEY in done.response_metadata
    assert "usage" not in done.response_metadata[STASH_KEY]  # usage_metadata says it all
    assert isinstance(failed, lc.AIMessage)
    assert (failed.content, failed.name) == ("", "worker")
    assert failed.response_metadata[STASH_KEY]["error"] == "upstream timeout"
    assert failed.response_metadata[STASH_KEY]["stop_reason"] == "error"


def test_text_and_tool_calls_stay_classic_for_every_integration() -> None:
    message = AssistantMessage(
        [
            TextContent("Let me check."),
            ToolCallContent("a", "f", {"x": 1}),
            ToolCallContent("b", "g", {}, index=1),
            ToolCallContent("c", "h", arguments="{oops", index=2),
        ]
    )
    (ai,) = quiet([message])
    assert isinstance(ai, lc.AIMessage)
    assert ai.content == "Let me check."
    assert [call["id"] for call in ai.tool_calls] == ["a", "b"]
    assert [(call["id"], call["args"]) for call in ai.invalid_tool_calls] == [("c", "{oops")]
    assert "output_version" not in ai.response_metadata
    assert from_langchain([ai]) == [message]


@pytest.mark.parametrize(
    "contents",
    [
        [ToolCallContent("a", "f", {}), TextContent("after the call")],
        [TextContent("one"), TextContent("two")],
        [ToolCallContent("a", "f", arguments="{bad"), ToolCallContent("b", "g", {}, index=1)],
        [TextContent("")],
        [TextContent("hi", signature="gem-sig")],
    ],
    ids=["text-after-call", "two-texts", "valid-after-invalid", "empty-text", "text-signature"],
)
def test_order_only_list_content_can_hold_is_kept_in_v1_form(contents: list[Any]) -> None:
    message = AssistantMessage(contents, provenance=Provenance("google", "google-generative-ai", "gemini-x"))
    (ai,) = quiet([message])
    assert isinstance(ai.content, list)
    assert ai.response_metadata["output_version"] == "v1"
    assert_langchain_accepts([ai])
    assert from_langchain([ai]) == [message]


# --------------------------------------------------------------------------- round trips


def expected_after_projection(messages: list[AgentMessage]) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    for i, message in enumerate(messages):
        projected = project_session_message(message, "project", f"[{i}]")
        out.append(projected if projected is not None else message)
    return out


def test_every_role_sample_round_trips() -> None:
    """Every role and field of the shared sample; session messages come back as their projection."""
    messages = every_role()
    written = quiet(messages)
    assert_langchain_accepts(written)
    assert from_langchain(written) == expected_after_projection(messages)
    assert from_langchain(lc.messages_to_dict(written)) == expected_after_projection(messages)


def test_timestamps_keep_nanoseconds() -> None:
    message = UserMessage.text("hi", id="u", timestamp=TS)
    message.pb.timestamp.nanos = 123456789
    (written,) = quiet([message])
    assert written.response_metadata[STASH_KEY]["timestamp"] == "2025-01-02T03:04:05.123456789Z"
    assert from_langchain([written]) == [message]


@settings(max_examples=40, deadline=None)
@given(
    args=st.dictionaries(
        st.text(max_size=5),
        st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none(), st.lists(st.integers(), max_size=3)),
        max_size=4,
    ),
    indent=st.sampled_from([None, 2]),
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
    ascii_only=st.booleans(),
)
def test_argument_text_round_trips_verbatim(
    args: dict[str, Any], indent: int | None, separators: tuple[str, str], ascii_only: bool
) -> None:
    text = json.dumps(args, indent=indent, separators=separators, ensure_ascii=ascii_only)
    message = AssistantMessage([ToolCallContent("c", "f", arguments=text)], id="a", timestamp=TS)
    (ai,) = quiet([message])
    assert ai.tool_calls[0]["args"] == args
    (back,) = from_langchain([ai])
    assert isinstance(back, AssistantMessage)
    assert back.tool_calls()[0].arguments == text
    assert back == message


def test_edited_args_win_over_the_stashed_text() -> None:
    message = AssistantMessage([ToolCallContent("c", "f", arguments='{"a": 1}')])
    (ai,) = quiet([message])
    ai.tool_calls[0]["args"] = {"a": 2}
    (back,) = from_langchain([ai])
    assert isinstance(back, AssistantMessage)
    assert back.tool_calls()[0].arguments == '{"a":2}'  # re-serialised, the stale text ignored


def test_without_metadata_only_the_envelope_is_lost() -> None:
    messages = conversation()
    written = quiet(messages, include_metadata=False)
    assert all(STASH_KEY not in m.response_metadata for m in written)
    back = from_langchain(written)
    # The split messages are no longer joined: every LangChain message reads as one message.
    assert len(back) == len(written)
    assert back[2].contents[:3] == messages[2].contents[:3]
    assert isinstance(back[2], AssistantMessage)
    # model_provider "anthropic" is ChatAnthropic, which speaks one wire API: the Messages API.
    assert back[2].provenance == CLAUDE
    # input_tokens / cache counts come back from usage_metadata alone; the cost does not.
    assert back[2].usage == Usage(
        input_tokens=10,
        output_tokens=50,
        cache_read_tokens=100,
        cache_write_tokens=20,
        reasoning_tokens=30,
        total_tokens=180,
    )
    assert back[0].timestamp != TS


def test_gemini_signatures_where_langchain_google_genai_reads_them() -> None:
    message = AssistantMessage(
        [
            ThinkingContent("Plan.", "th-sig"),
            TextContent("Calling.", signature="txt-sig"),
            ToolCallContent("fc_1", "get_weather", {"city": "Oslo"}, signature="fc-sig"),
        ],
        provenance=Provenance("google", "google-generative-ai", "gemini-3-pro", "resp-1"),
        stop_reason="tool_calls",
        stop_reason_raw="STOP",
        id="g",
        timestamp=TS,
    )
    (ai,) = quiet([message])
    # langchain-google-genai sends reasoning signatures back only for model_provider "google_genai",
    # and keeps function-call signatures in additional_kwargs by call id.
    assert ai.response_metadata["model_provider"] == "google_genai"
    assert ai.additional_kwargs == {"__gemini_function_call_thought_signatures__": {"fc_1": "fc-sig"}}
    assert ai.content == [
        {"type": "reasoning", "reasoning": "Plan.", "extras": {"signature": "th-sig"}},
        {"type": "text", "text": "Calling.", "extras": {"signature": "txt-sig"}},
        {
            "type": "tool_call",
            "id": "fc_1",
            "name": "get_weather",
            "args": {"city": "Oslo"},
            "extras": {"signature": "fc-sig"},
        },
    ]
    assert_langchain_accepts([ai])
    assert from_langchain([ai]) == [message]
    # A ChatGoogleGenerativeAI message (signatures only in additional_kwargs) reads the same way.
    native = lc.AIMessage(
        content="Calling.",
        tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "fc_1"}],
        additional_kwargs={"__gemini_function_call_thought_signatures__": {"fc_1": "fc-sig"}},
        response_metadata={"model_provider": "google_genai", "model_name": "gemini-3-pro", "finish_reason": "STOP"},
    )
    (read,) = from_langchain([native])
    assert isinstance(read, AssistantMessage)
    assert read.tool_calls()[0].signature == "fc-sig"
    assert read.provenance == Provenance("google", "google-generative-ai", "gemini-3-pro", "")


# --------------------------------------------------------------------------- LangChain itself uses the result


def test_convert_to_openai_messages_takes_the_classic_forms() -> None:
    messages = [
        SystemMessage.text("Be brief.", id="s"),
        UserMessage([TextContent("What is this?"), ImageContent(PNG), DocumentContent(PDF, filename="a.pdf")], id="u"),
        AssistantMessage(
            [TextContent("Checking."), ToolCallContent("call_1", "look", {"q": "x"})],
            provenance=Provenance("openai", "openai-chat-completions", "gpt-x"),
            id="a",
        ),
        ToolMessage([ToolResultContent("call_1", "a cat", name="look")], id="t"),
        AssistantMessage.text("A cat.", id="b"),
    ]
    openai_messages = lc.convert_to_openai_messages(quiet(messages))
    assert openai_messages == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
                {
                    "type": "file",
                    "file": {
                        "file_data": f"data:application/pdf;base64,{base64.b64encode(PDF).decode()}",
                        "filename": "a.pdf",
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "tool_calls": [
                {"type": "function", "id": "call_1", "function": {"name": "look", "arguments": '{"q": "x"}'}}
            ],
            "content": "Checking.",
        },
        {"role": "tool", "name": "look", "tool_call_id": "call_1", "content": "a cat"},
        {"role": "assistant", "content": "A cat."},
    ]
    for message in openai_messages:
        validate_with(ChatCompletionMessageParam, message)


def test_chunk_is_a_final_aimessagechunk_with_verbatim_argument_text() -> None:
    message = conversation()[2]
    assert isinstance(message, AssistantMessage)
    report = ConversionReport()
    chunk = to_langchain_chunk(message, report=report)
    assert report.losses == []
    assert isinstance(chunk, lc.AIMessageChunk)
    assert chunk.chunk_position == "last"
    assert chunk.tool_call_chunks == [
        {
            "name": "read_file",
            "args": '{"path": "a.txt", "n": 10}',
            "id": "call_1",
            "index": 0,
            "type": "tool_call_chunk",
        },
        {"name": "lookup", "args": '{"q":"cats"}', "id": "call_2", "index": 1, "type": "tool_call_chunk"},
        {"name": "lookup", "args": '{"q": ', "id": "call_3", "index": 2, "type": "tool_call_chunk"},
    ]
    assert lc.messages_from_dict(lc.messages_to_dict([chunk])) == [chunk]
    assert from_langchain([chunk]) == [message]


def test_streamed_chunks_merge_with_verbatim_arguments() -> None:
    chunks = [
        lc.AIMessageChunk(content="The ", id="lc_run--1"),
        lc.AIMessageChunk(
            content="answer.", tool_call_chunks=[{"name": "f", "args": '{"a": ', "id": "c1", "index": 0}]
        ),
        lc.AIMessageChunk(
            content="",
            tool_call_chunks=[{"name": None, "args": "1", "id": None, "index": 0}],
            response_metadata={"finish_reason": "tool_calls", "model_name": "gpt-x", "model_provider": "openai"},
            usage_metadata={"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
            chunk_position="last",
        ),
        lc.HumanMessage("next"),
    ]
    merged, human = from_langchain(chunks, merge_chunks=True)
    assert isinstance(merged, AssistantMessage)
    assert merged.id == "lc_run--1"
    # LangChain repairs the truncated JSON in tool_calls; the chunk's text is kept as the model wrote it.
    assert merged.contents == (TextContent("The answer."), ToolCallContent("c1", "f", arguments='{"a": 1'))
    assert (merged.stop_reason, merged.stop_reason_raw) == (StopReason.TOOL_CALLS, "tool_calls")
    assert merged.usage == Usage(input_tokens=5, output_tokens=7, total_tokens=12)
    assert human == UserMessage.text("next", id=human.id, timestamp=human.timestamp)
    # Without merging every chunk is its own message, and a continuation fragment is no tool call.
    with pytest.raises(ValidationError) as exc:
        from_langchain(chunks)
    assert violation_of(exc, "[2].tool_call_chunks[0].id")[0] == "langchain.required"


# --------------------------------------------------------------------------- golden: LangChain -> agentmsg


def test_golden_chat_openai_imports() -> None:
    system, user, calls, weather, time_error, answer = from_langchain(load_golden("chat_openai.json"))
    assert system.contents == (TextContent("You are a weather bot."),)
    assert isinstance(user, UserMessage)
    assert user.id == "human-1"
    text, image = user.contents
    assert text == TextContent("Weather where this photo was taken, and the time there?")
    assert isinstance(image, ImageContent)
    # OpenAI's image_url block, read through LangChain's normalisation: detail kept, no guessed media type.
    assert (image.url, image.detail, image.media_type) == ("https://example.com/paris.jpg", ImageDetail.HIGH, "")
    assert isinstance(calls, AssistantMessage)
    assert calls.contents == (
        ToolCallContent("call_Jja7J89XsjrOLA5r", "get_weather", {"city": "Paris", "unit": "C"}),
        ToolCallContent("call_4mXq0b1Qk2", "get_time", {"tz": "Europe/Paris"}, index=1),
        ToolCallContent("call_trunc9", "get_map", arguments='{"city": "Par', index=2),
    )
    # prompt 1254 = 230 uncached + 1024 cached (usage.proto's input_tokens excludes cached tokens).
    assert calls.usage == Usage(
        input_tokens=230, output_tokens=61, cache_read_tokens=1024, reasoning_tokens=0, total_tokens=1315
    )
    assert (calls.stop_reason, calls.stop_reason_raw) == (StopReason.TOOL_CALLS, "tool_calls")
    assert calls.provenance == Provenance(
        "openai", "", "gpt-4o-mini-2024-07-18", "chatcmpl-BDrISvLar6AqcZngBmhajFZXVc2u9"
    )
    assert calls.id == "lc_run--6c1f3bd0-79a4-4b8e-9a4e-3cb0f3f1b2a1-0"
    # ChatOpenAI speaks two wire APIs; the caller may say which one it used.
    named = from_langchain(load_golden("chat_openai.json"), api_by_provider={"openai": "openai-chat-completions"})[2]
    assert isinstance(named, AssistantMessage)
    assert named.provenance is not None
    assert named.provenance.api == "openai-chat-completions"
    assert isinstance(weather, ToolMessage)
    assert weather.contents == (ToolResultContent("call_Jja7J89XsjrOLA5r", "18 C, sunny", name="get_weather"),)
    assert isinstance(time_error, ToolMessage)
    assert time_error.results()[0].is_error
    assert isinstance(answer, AssistantMessage)
    assert (answer.text_content(), answer.stop_reason) == ("It is 18 C and sunny in Paris.", StopReason.STOP)
    # Written back, the assistant turn with its valid and invalid calls is the same classic form.
    back = to_langchain([calls], include_metadata=False)[0]
    original = lc.messages_from_dict(load_golden("chat_openai.json"))[2]
    assert isinstance(back, lc.AIMessage)
    assert isinstance(original, lc.AIMessage)
    assert (back.content, back.tool_calls) == (original.content, original.tool_calls)
    assert [(c["id"], c["args"]) for c in back.invalid_tool_calls] == [("call_trunc9", '{"city": "Par')]


def test_golden_chat_anthropic_imports_thinking_cache_and_artifact() -> None:
    user, assistant, tool = from_langchain(load_golden("chat_anthropic.json"))
    assert isinstance(user, UserMessage)
    assert user.contents == (
        TextContent("Summarise the report and read the chart."),
        ImageContent(PNG, media_type="image/png"),
        DocumentContent(base64.b64decode("JVBERi0xLjQKJSVFT0YK"), media_type="application/pdf", title="Q3 report"),
    )
    assert isinstance(assistant, AssistantMessage)
    assert assistant.contents == (
        ThinkingContent("The user wants a summary; I should fetch the numbers first.", "ErUBCkYIARgCIkCxD3Qb"),
        RedactedThinkingContent("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl"),
        TextContent("Let me look up the figures."),
        ToolCallContent("toolu_01A09q90qw90lq917835lq9", "lookup", {"quarter": "Q3", "metrics": ["revenue", "margin"]}),
    )
    # 2017 prompt tokens = 17 uncached + 1800 read + 200 written.
    assert assistant.usage == Usage(
        input_tokens=17, output_tokens=221, cache_read_tokens=1800, cache_write_tokens=200, total_tokens=2238
    )
    assert assistant.provenance == Provenance(
        "anthropic", "anthropic-messages", "claude-sonnet-4-5-20250929", "msg_01JHnvPqgERY7MZwrvfkmq52"
    )
    assert (assistant.stop_reason, assistant.stop_reason_raw) == (StopReason.TOOL_CALLS, "tool_use")
    assert isinstance(tool, ToolMessage)
    (result,) = tool.results()
    assert result.metadata == {"rows": 2, "source": "warehouse"}
    assert result.text == "revenue 1.2M, margin 31%"
    # Written back, the assistant turn is LangChain's own standardisation of the ChatAnthropic message,
    # signatures included (the provenance names Anthropic, as model_provider does).
    original = lc.messages_from_dict(load_golden("chat_anthropic.json"))[1]
    (back,) = quiet([assistant])
    assert back.content == original.content_blocks
    assert back.response_metadata["model_provider"] == "anthropic"


def test_golden_legacy_function_calling_and_chat_roles() -> None:
    system, user, call, result, answer = from_langchain(load_golden("legacy.json"))
    assert isinstance(system, SystemMessage)
    assert system.text_content() == "Be brief."
    assert isinstance(user, UserMessage)
    assert isinstance(call, AssistantMessage)
    assert call.contents == (ToolCallContent("function_call_2", "get_weather", arguments='{"city": "Oslo"}'),)
    assert isinstance(result, ToolMessage)
    assert result.contents == (ToolResultContent("function_call_2", "-3 C, snow", name="get_weather"),)
    assert isinstance(answer, AssistantMessage)
    assert answer.contents == (TextContent("Cold and snowy."),)


# --------------------------------------------------------------------------- replay and losses


def test_signatures_kept_for_the_target_that_produced_them() -> None:
    messages = [conversation()[2]]
    written = quiet(messages, target_provider="anthropic", target_api="anthropic-messages", model="claude-x")
    assert written[0].content[0]["extras"] == {"signature": "sig-1"}


def test_signatures_and_redacted_thinking_dropped_for_another_target() -> None:
    report = ConversionReport()
    (ai,) = to_langchain([conversation()[2]], report=report, target_provider="openai")
    assert ai.content[0] == {"type": "reasoning", "reasoning": "Two tools."}
    assert all(block.get("type") != "non_standard" for block in ai.content)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].contents[0].signature", "a signature"),
        ("[0].contents[1]", "redacted thinking"),
    ]
    assert "not by openai" in report.losses[0].reason


def test_no_provenance_no_signature_and_strict_refuses() -> None:
    message = AssistantMessage([ThinkingContent("hm", "sig"), TextContent("ok")])
    with pytest.raises(ConversionError) as exc:
        to_langchain([message], strict=True)
    assert exc.value.losses[0].reason == "no provenance vouches for it"
    with pytest.warns(ConversionWarning, match="signature"):
        (ai,) = to_langchain([message])
    assert ai.content == [{"type": "reasoning", "reasoning": "hm"}, {"type": "text", "text": "ok"}]


def test_model_mismatch_drops_signatures() -> None:
    report = ConversionReport()
    to_langchain([conversation()[2]], report=report, model="claude-other")
    assert [loss.path for loss in report.losses] == ["[0].contents[0].signature", "[0].contents[1]"]


def test_provider_blocks() -> None:
    own = ProviderContent.from_block("anthropic", {"type": "server_tool_use", "id": "srv_1", "name": "web_search"})
    langchain_block = ProviderContent.from_block(
        PROVIDER, {"type": "server_tool_call", "id": "s", "name": "x", "args": {}}
    )
    other = ProviderContent.from_block("google", {"type": "executableCode", "code": "1"})
    message = AssistantMessage(
        [TextContent("hi"), own, langchain_block, other], provenance=CLAUDE, id="a", timestamp=TS
    )
    report = ConversionReport()
    (ai,) = to_langchain([message], report=report)
    assert ai.content[1:] == [
        {"type": "non_standard", "value": {"type": "server_tool_use", "id": "srv_1", "name": "web_search"}},
        {"type": "server_tool_call", "id": "s", "name": "x", "args": {}},
    ]
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].contents[3]", "a google 'executableCode' block")
    ]
    # A standard server_tool_call block now reads as the hosted tool call it is.
    hosted = HostedToolCallContent("s", "x", "{}")
    kept = AssistantMessage([TextContent("hi"), own, hosted], provenance=CLAUDE, id="a", timestamp=TS)
    assert from_langchain([ai], pass_through_unknown=True) == [kept]


def test_unknown_user_block_passes_through_raw() -> None:
    raw = {"type": "search_result", "source": "kb", "title": "Leave policy", "content": []}
    human = lc.HumanMessage(content=[{"type": "text", "text": "see"}, raw], id="h")
    # Unknown blocks are read by default (issue 16), as they are by every other reader.
    (user,) = from_langchain([human])
    assert isinstance(user, UserMessage)
    assert user.contents[1] == ProviderContent.from_block(PROVIDER, raw)
    (back,) = quiet([user])
    assert back.content == [{"type": "text", "text": "see"}, raw]
    with pytest.raises(ValidationError) as exc:
        from_langchain([human], pass_through_unknown=False)
    rule, message = violation_of(exc, "[0].content[1]")
    assert rule == "langchain.unknown_type"
    assert "'search_result'" in message
    assert "pass_through_unknown" in message


def test_session_messages_project_or_refuse() -> None:
    summary = CompactionSummaryMessage("Earlier: hello.", id="k", timestamp=TS)
    (human,) = quiet([summary])
    assert isinstance(human, lc.HumanMessage)
    assert "Earlier: hello." in human.content
    with pytest.raises(ValidationError) as exc:
        to_langchain([summary], session_messages="refuse")
    assert violation_of(exc, "[0]")[0] == "session_message"


def test_unknown_messages_and_blocks_are_reported() -> None:
    unknown_message = UnknownMessage.from_proto(message_pb2.Message(id="x"))
    tool = ToolMessage([ToolResultContent("c", "ok")], id="t")
    tool.pb.tool.content.add()  # a block of a kind this version does not know
    report = ConversionReport()
    written = to_langchain([unknown_message, tool], report=report)
    assert len(written) == 1
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0]", "a message of an unknown role"),
        ("[1].contents[1]", "a content block of an unknown kind"),
    ]


def test_id_map_restores_rewritten_ids() -> None:
    ai = lc.AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "safe_1"}])
    tool = lc.ToolMessage("ok", tool_call_id="safe_1")
    call, result = from_langchain([ai, tool], id_map={"safe_1": "orig.1"})
    assert isinstance(call, AssistantMessage)
    assert call.tool_calls()[0].id == "orig.1"
    assert isinstance(result, ToolMessage)
    assert result.results()[0].id == "orig.1"


def test_remove_message_refused_or_skipped() -> None:
    messages = [lc.HumanMessage("hi"), lc.RemoveMessage(id="old")]
    with pytest.raises(ValidationError) as exc:
        from_langchain(messages)
    assert violation_of(exc, "[1]")[0] == "langchain.remove_message"
    assert [type(m) for m in from_langchain(messages, remove_messages="skip")] == [UserMessage]


def test_artifacts_that_are_not_objects() -> None:
    tool = lc.ToolMessage("3 docs", tool_call_id="c", artifact=["doc1", "doc2"])
    with pytest.raises(ValidationError) as exc:
        from_langchain([tool])
    rule, message = violation_of(exc, "[0].artifact")
    assert rule == "langchain.artifact"
    assert 'artifacts="ignore"' in message
    (result,) = from_langchain([tool], artifacts="ignore")
    assert isinstance(result, ToolMessage)
    assert result.results()[0].metadata == {}


def test_v1_content_may_hold_plain_strings() -> None:
    ai = lc.AIMessage(content=["Hello ", {"type": "text", "text": "there"}], response_metadata={"output_version": "v1"})
    (message,) = from_langchain([ai])
    assert message.contents == (TextContent("Hello "), TextContent("there"))


def test_empty_ai_message_reads_as_one_empty_text() -> None:
    (message,) = from_langchain([lc.AIMessage("", response_metadata={"stop_reason": "end_turn"})])
    assert message.contents == (TextContent(""),)
    (stopped,) = from_langchain([lc.AIMessage("", response_metadata={"finish_reason": "length"})])
    assert stopped.contents == ()


def test_stop_reasons_normalised_from_each_integration() -> None:
    for raw, expected in [
        ("end_turn", StopReason.STOP),
        ("STOP", StopReason.STOP),
        ("max_tokens", StopReason.LENGTH),
        ("MAX_TOKENS", StopReason.LENGTH),
        ("tool_use", StopReason.TOOL_CALLS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("pause_turn", None),
    ]:
        (message,) = from_langchain([lc.AIMessage("x", response_metadata={"stop_reason": raw})])
        assert isinstance(message, AssistantMessage)
        assert (message.stop_reason, message.stop_reason_raw) == (expected, raw)
        (back,) = quiet([message])
        assert from_langchain([back]) == [message]


def test_tool_kinds_and_unknown_tool_message_name() -> None:
    message = AssistantMessage([ToolCallContent("c", "f", {}, kind=ToolKind.MCP, index=7)], id="a", timestamp=TS)
    (ai,) = quiet([message])
    assert ai.response_metadata[STASH_KEY]["tool_calls"] == [{"id": "c", "kind": "mcp", "index": 7}]
    assert from_langchain([ai]) == [message]
    named = ToolMessage([ToolResultContent("c", "x", name="f")], id="t", timestamp=TS, name="worker-2")
    (tool,) = quiet([named])
    assert tool.name == "f"  # LangChain's ToolMessage.name is the tool's name
    assert tool.response_metadata[STASH_KEY]["name"] == "worker-2"
    assert from_langchain([tool]) == [named]


# --------------------------------------------------------------------------- bad input


def test_input_must_be_a_list_of_messages() -> None:
    with pytest.raises(ValidationError) as exc:
        from_langchain(lc.HumanMessage("hi"))  # type: ignore[arg-type]
    assert violation_of(exc, "")[0] == "langchain.type"
    with pytest.raises(ValidationError) as exc:
        from_langchain([lc.HumanMessage("hi"), "hello", {"type": "nope", "data": {}}])  # type: ignore[list-item]
    assert violation_of(exc, "[1]") == ("langchain.type", "expected a LangChain message, got string")
    assert violation_of(exc, "[2]")[0] == "langchain.type"
    with pytest.raises(ValidationError):
        to_langchain(UserMessage.text("hi"))
    with pytest.raises(ValidationError):
        to_langchain_chunk(UserMessage.text("hi"))  # type: ignore[arg-type]


def test_every_problem_is_reported_with_its_path() -> None:
    messages: list[Any] = [
        lc.HumanMessage(
            content=[
                {"type": "image", "base64": "not base64!", "mime_type": "image/png"},
                {"type": "reasoning", "reasoning": "no"},
                {"type": "file", "url": "https://x/a.pdf", "file_id": "f"},
                {"type": "image", "url": "https://x/a.png", "extras": {"detail": "huge"}},
            ]
        ),
        lc.AIMessage("", invalid_tool_calls=[{"name": "f", "args": "{", "id": None, "error": None}]),
        lc.ChatMessage(content="x", role="function"),
        lc.SystemMessage(content=[{"type": "image", "url": "https://x/a.png"}]),
        lc.ToolMessage("x", tool_call_id="c", response_metadata={STASH_KEY: {"timestamp": "yesterday"}}),
        lc.AIMessage(
            "x",
            usage_metadata={
                "input_tokens": 5,
                "output_tokens": 1,
                "total_tokens": 6,
                "input_token_details": {"cache_read": 9},
            },
        ),
        lc.AIMessage("x", response_metadata={STASH_KEY: {"stop_reason": "bored", "api": 3}}),
    ]
    with pytest.raises(ValidationError) as exc:
        from_langchain(messages, pass_through_unknown=False)
    assert violation_of(exc, "[0].content[0].base64")[0] == "langchain.base64"
    assert violation_of(exc, "[0].content[1]") == (
        "langchain.unsupported",
        "an agentmsg user message cannot carry 'reasoning' blocks",
    )
    assert violation_of(exc, "[0].content[2]")[0] == "langchain.source"
    assert violation_of(exc, "[0].content[3].extras.detail")[0] == "langchain.enum"
    assert violation_of(exc, "[1].invalid_tool_calls[0].id")[0] == "langchain.required"
    assert violation_of(exc, "[2].role")[0] == "langchain.role"
    assert violation_of(exc, "[3].content[0]")[0] == "langchain.unsupported"
    assert violation_of(exc, f"[4].response_metadata.{STASH_KEY}.timestamp")[0] == "langchain.metadata"
    assert violation_of(exc, "[5].usage_metadata.input_tokens")[0] == "langchain.usage"
    assert violation_of(exc, f"[6].response_metadata.{STASH_KEY}.stop_reason")[0] == "langchain.metadata"
    assert violation_of(exc, f"[6].response_metadata.{STASH_KEY}.api")[0] == "langchain.metadata"
    assert len(exc.value.violations) == 11


def test_stale_usage_stash_is_ignored() -> None:
    message = AssistantMessage.text("x", usage=Usage(input_tokens=1, output_tokens=2, cost=UsageCost(total=1.0)))
    (ai,) = quiet([message])
    assert isinstance(ai, lc.AIMessage)
    ai.usage_metadata = {"input_tokens": 4, "output_tokens": 2, "total_tokens": 6}
    (back,) = from_langchain([ai])
    assert isinstance(back, AssistantMessage)
    assert back.usage == Usage(input_tokens=4, output_tokens=2, total_tokens=6)


def test_langchain_is_needed_only_by_this_module() -> None:
    script = (
        "import sys\n"
        "import agentmsg, agentmsg.providers\n"
        "assert 'langchain_core' not in sys.modules\n"
        "sys.modules['langchain_core'] = None  # as if the extra were not installed\n"
        "try:\n"
        "    import agentmsg.providers.langchain\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert "pip install 'agentmsg[langchain]'" in done.stdout


def test_constants() -> None:
    assert (PROVIDER, API, STASH_KEY) == ("langchain", "langchain-core", "agentmsg")


# ------------------------------------------------------------------ issue 16: hosted tools, citations, logprobs


def hosted_assistant(**kwargs: Any) -> AssistantMessage:
    """An assistant turn with every v1.1 addition, as the Anthropic and OpenAI readers give them."""
    search = am.HostedToolCallContent(
        "srvtoolu_01",
        "web_search",
        '{"query": "agentmsg"}',
        kind="web_search",
        original=am.ProviderContent.from_block(
            "anthropic",
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "agentmsg"}},
        ),
    )
    found = am.HostedToolResultContent(
        "srvtoolu_01",
        kind="web_search",
        search_results=[am.SearchResult("https://example.com/a", "A", page_age="2 days", encrypted_content="E1")],
    )
    mcp = am.HostedToolCallContent("mcp_1", "lookup", {"q": 1}, kind="mcp", server="kb")
    mcp_result = am.HostedToolResultContent("mcp_1", "found it")
    failed = am.HostedToolResultContent("ci_1", "boom", is_error=True)
    answer = am.TextContent(
        "agentmsg is a contract.",
        citations=[
            am.Citation.web("https://example.com/a", "A", cited_text="a contract", start_index=0, end_index=8),
            am.Citation.document(0, title="Spec", chars=(3, 9), cited_text="contract"),
        ],
    )
    usage = Usage(
        input_tokens=10,
        output_tokens=5,
        cache_write_tokens=4,
        cache_write_5m_tokens=1,
        cache_write_1h_tokens=3,
        hosted_tool_requests={"web_search": 1},
    )
    return AssistantMessage(
        [search, found, mcp, mcp_result, failed, answer],
        id="a",
        timestamp=TS,
        provenance=CLAUDE,
        stop_reason=StopReason.STOP,
        stop_reason_raw="stop_sequence",
        stop_sequence="END",
        usage=usage,
        **kwargs,
    )


def test_hosted_tools_and_citations_are_langchain_standard_blocks() -> None:
    message = hosted_assistant()
    (ai,) = quiet([message])
    assert_langchain_accepts([ai])
    assert ai.content[:5] == [
        {"type": "server_tool_call", "id": "srvtoolu_01", "name": "web_search", "args": {"query": "agentmsg"}},
        {
            "type": "server_tool_result",
            "tool_call_id": "srvtoolu_01",
            "status": "success",
            "output": {
                "results": [
                    {"url": "https://example.com/a", "title": "A", "page_age": "2 days", "encrypted_content": "E1"}
                ]
            },
        },
        # MCP calls the way LangChain's Anthropic translator writes them.
        {
            "type": "server_tool_call",
            "id": "mcp_1",
            "name": "remote_mcp",
            "args": {"q": 1},
            "extras": {"tool_name": "lookup"},
        },
        {"type": "server_tool_result", "tool_call_id": "mcp_1", "status": "success", "output": "found it"},
        {"type": "server_tool_result", "tool_call_id": "ci_1", "status": "error", "output": "boom"},
    ]
    assert ai.content[5] == {
        "type": "text",
        "text": "agentmsg is a contract.",
        "annotations": [
            {
                "type": "citation",
                "url": "https://example.com/a",
                "title": "A",
                "start_index": 0,
                "end_index": 8,
                "cited_text": "a contract",
            },
            {"type": "citation", "title": "Spec", "cited_text": "contract"},
        ],
    }
    assert ai.response_metadata["stop_sequence"] == "END"
    assert ai.usage_metadata is not None
    assert ai.usage_metadata["input_token_details"] == {
        "cache_creation": 4,
        "ephemeral_5m_input_tokens": 1,
        "ephemeral_1h_input_tokens": 3,
    }
    # What the standard blocks have no field for is in the stash, by position: every hosted block (binary
    # agentmsg.v1.Content in base64) and the citations of the text (a TextContent holding only them).
    stash = ai.response_metadata[STASH_KEY]
    assert [entry["at"] for entry in stash["blocks"]] == [0, 1, 2, 3, 4, 5]
    details = content_pb2.Content.FromString(base64.b64decode(stash["blocks"][5]["proto"]))
    assert (details.text.text, len(details.text.citations)) == ("", 2)
    assert stash["usage"]["hostedToolRequests"] == {"web_search": "1"}
    assert from_langchain([ai]) == [message]
    assert from_langchain(lc.messages_from_dict(lc.messages_to_dict([ai]))) == [message]


def test_hosted_content_round_trips_through_a_chunk() -> None:
    message = hosted_assistant()
    chunk = to_langchain_chunk(message)
    assert isinstance(chunk, lc.AIMessageChunk)
    assert from_langchain([chunk]) == [message]


def test_without_metadata_the_v11_details_are_reported_lost() -> None:
    report = ConversionReport()
    (ai,) = to_langchain([hosted_assistant()], include_metadata=False, report=report)
    assert [loss.path for loss in report.losses] == [
        "[0].contents[0]",
        "[0].contents[1]",
        "[0].contents[2]",
        "[0].contents[5]",
        "[0].usage.hosted_tool_requests",
    ]
    (back,) = from_langchain([ai])
    assert isinstance(back, AssistantMessage)
    # The standard blocks alone: ids, names, args, statuses, outputs and web citations survive.
    search, found, mcp, mcp_result, failed, answer = back.contents
    assert search == am.HostedToolCallContent("srvtoolu_01", "web_search", '{"query":"agentmsg"}')
    assert isinstance(found, am.HostedToolResultContent)
    assert found.original is not None  # the output object, kept as LangChain wrote it
    assert found.original.block()["output"]["results"][0]["url"] == "https://example.com/a"
    assert mcp == am.HostedToolCallContent("mcp_1", "lookup", '{"q":1}', kind="mcp")
    assert mcp_result == am.HostedToolResultContent("mcp_1", "found it")
    assert failed == am.HostedToolResultContent("ci_1", "boom", is_error=True)
    assert isinstance(answer, TextContent)
    web, document = answer.citations
    assert web == am.Citation.web("https://example.com/a", "A", cited_text="a contract", start_index=0, end_index=8)
    assert document.original is not None
    assert document.original.block() == {"type": "citation", "title": "Spec", "cited_text": "contract"}
    assert back.stop_sequence == "END"
    assert back.usage is not None
    assert (back.usage.cache_write_5m_tokens, back.usage.cache_write_1h_tokens) == (1, 3)
    assert back.usage.hosted_tool_requests == {}


def test_langchains_own_translation_of_anthropic_reads_and_goes_back_unchanged() -> None:
    # What langchain-core's Anthropic translator makes of server_tool_use / web_search_tool_result / citations.
    raw = lc.AIMessage(
        content=[
            {"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": {"query": "q"}},
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_9",
                "content": [
                    {"type": "web_search_result", "url": "https://e.com", "title": "E", "encrypted_content": "x"}
                ],
            },
            {
                "type": "text",
                "text": "E says so.",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://e.com",
                        "title": "E",
                        "cited_text": "so",
                        "encrypted_index": "i",
                    }
                ],
            },
        ],
        response_metadata={"model_provider": "anthropic"},
    )
    standard = lc.AIMessage(content=raw.content_blocks, response_metadata={"output_version": "v1"}, id="x")
    (message,) = from_langchain([standard])
    assert isinstance(message, AssistantMessage)
    call, result, text = message.contents
    assert isinstance(call, am.HostedToolCallContent)
    assert (call.id, call.name, call.input_value) == ("srvtoolu_9", "web_search", {"query": "q"})
    assert isinstance(result, am.HostedToolResultContent)
    assert result.call_id == "srvtoolu_9"
    assert not result.is_error
    assert isinstance(text, TextContent)
    (citation,) = text.citations
    assert citation.original is not None  # extras.encrypted_index has no typed field
    assert citation.original.block()["extras"] == {"encrypted_index": "i"}
    (again,) = to_langchain([message], include_metadata=False, report=ConversionReport())
    assert again.content == standard.content


def test_input_that_is_not_a_json_object_is_a_server_tool_call_chunk() -> None:
    call = am.HostedToolCallContent("ci_1", "code_interpreter", '{"code": "print(1)"', kind="code_execution")
    message = AssistantMessage([call, TextContent("done")], id="a", timestamp=TS)
    (ai,) = quiet([message])
    assert ai.content[0] == {
        "type": "server_tool_call_chunk",
        "id": "ci_1",
        "name": "code_interpreter",
        "args": '{"code": "print(1)"',
    }
    assert_langchain_accepts([ai])
    assert from_langchain([ai]) == [message]


def test_logprobs_go_where_chat_openai_keeps_them() -> None:
    top = am.TokenLogprob("Hi", -1.5, bytes=b"Hi")
    text = TextContent("Hello", logprobs=[am.TokenLogprob("Hello", -0.1, bytes=b"Hello", top_logprobs=[top])])
    message = AssistantMessage([text], id="a", timestamp=TS)
    (ai,) = quiet([message])
    assert ai.content == "Hello"
    assert ai.response_metadata["logprobs"] == {
        "content": [
            {
                "token": "Hello",
                "logprob": -0.1,
                "bytes": list(b"Hello"),
                "top_logprobs": [{"token": "Hi", "logprob": -1.5, "bytes": list(b"Hi")}],
            }
        ]
    }
    assert from_langchain([ai]) == [message]
    # A ChatOpenAI message read with no stash at all.
    plain = lc.AIMessage(content="Hello", response_metadata=dict(ai.response_metadata))
    del plain.response_metadata[STASH_KEY]
    (read,) = from_langchain([plain])
    assert read.contents == (text,)
    # Token ids have no place in that shape: the stash keeps them.
    with_id = AssistantMessage(
        [TextContent("x", logprobs=[am.TokenLogprob("x", -1.0, token_id=5)])], id="b", timestamp=TS
    )
    (ai_id,) = quiet([with_id])
    assert from_langchain([ai_id]) == [with_id]


def test_an_edited_standard_block_wins_over_the_stash() -> None:
    (ai,) = quiet([hosted_assistant()])
    content = list(ai.content)
    content[0] = {**content[0], "args": {"query": "edited"}}
    edited = lc.AIMessage(
        content=content, response_metadata=ai.response_metadata, usage_metadata=ai.usage_metadata, id="a"
    )
    (back,) = from_langchain([edited])
    call = back.contents[0]
    assert isinstance(call, am.HostedToolCallContent)
    assert call.input_value == {"query": "edited"}
    assert call.original is None


@pytest.mark.parametrize(
    ("blocks", "field"),
    [
        ("no", "[0].response_metadata.agentmsg.blocks"),
        ([{"at": "0", "proto": ""}], "[0].response_metadata.agentmsg.blocks[0]"),
        ([{"at": 0, "block": {}}], "[0].response_metadata.agentmsg.blocks[0]"),
        ([{"at": 0, "proto": "%%"}], "[0].response_metadata.agentmsg.blocks[0].proto"),
        ([{"at": 0, "proto": "/w=="}], "[0].response_metadata.agentmsg.blocks[0].proto"),
        (
            [{"at": 0, "proto": base64.b64encode(ThinkingContent("x", "").to_bytes()).decode()}],
            "[0].response_metadata.agentmsg.blocks[0].proto",
        ),
    ],
)
def test_a_malformed_blocks_stash_is_refused_with_its_path(blocks: Any, field: str) -> None:
    ai = lc.AIMessage(content="hi", response_metadata={STASH_KEY: {"blocks": blocks}})
    with pytest.raises(ValidationError) as exc:
        from_langchain([ai])
    assert violation_of(exc, field)[0] == "langchain.metadata"


def test_malformed_server_tool_blocks_are_refused_with_their_path() -> None:
    content = [
        {"type": "server_tool_call", "id": 5, "name": "x", "args": {}},
        {"type": "server_tool_result", "status": "success"},
    ]
    ai = lc.AIMessage(content=content, response_metadata={"output_version": "v1"})
    with pytest.raises(ValidationError) as exc:
        from_langchain([ai])
    assert violation_of(exc, "[0].content[0].id")[0] == "langchain.type"
    assert violation_of(exc, "[0].content[1].tool_call_id")[0] == "langchain.required"


def test_a_signature_left_out_is_not_kept_in_the_stash_either() -> None:
    call = am.HostedToolCallContent("c", "google_search", {"queries": ["x"]}, signature="SIG")
    text = TextContent("t", signature="TSIG", citations=[am.Citation.web("https://a.test/")])
    report = ConversionReport()
    (ai,) = to_langchain([AssistantMessage([call, text], id="a", timestamp=TS)], report=report)
    assert [loss.what for loss in report.losses] == ["a signature", "a signature"]
    assert b"SIG" not in b"".join(base64.b64decode(e["proto"]) for e in ai.response_metadata[STASH_KEY]["blocks"])
    (back,) = from_langchain([ai])
    assert back.contents == (
        am.HostedToolCallContent("c", "google_search", {"queries": ["x"]}),
        TextContent("t", citations=[am.Citation.web("https://a.test/")]),
    )


def test_provider_response_keys_round_trip_through_the_stash() -> None:
    extra = am.ProviderContent.from_block(
        "anthropic", {"type": "message", "container": {"id": "container_011CaNRhtVsGiXZx1CgSETLH"}}
    )
    message = am.AssistantMessage(
        [am.TextContent("Done.")],
        id="a",
        timestamp=TS,
        provenance=am.Provenance("anthropic", "anthropic-messages", "claude-opus-4-8", "msg_1"),
        provider_extra=extra,
    )
    (written,) = to_langchain([message])
    assert written.response_metadata[STASH_KEY]["provider_extra"]["json"] == extra.json
    (back,) = from_langchain([written])
    assert back == message
    report = ConversionReport()
    to_langchain([message], include_metadata=False, report=report)
    assert [loss.path for loss in report.losses] == ["[0].provider_extra"]
    written.response_metadata[STASH_KEY]["provider_extra"]["json"] = "[1]"
    with pytest.raises(am.ValidationError, match="provider_extra"):
        from_langchain([written])
