"""The seed-1 dict form: stored seed histories load, and go back out in the seed's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentmsg as am
from agentmsg import dict_form

GOLDEN = Path(__file__).parent / "golden" / "seed1" / "conversation.json"


def load_golden() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(GOLDEN.read_text())["messages"]
    return messages


def test_a_seed_history_loads() -> None:
    messages = dict_form.messages_from_dicts(load_golden())
    assert [m.role for m in messages] == list(am.Role)
    system, user, assistant, tool, custom, branch, compaction = messages
    assert system.text_content() == "You are a coding agent."
    # One seed image dict with two images is one block of two images, as in the seed.
    assert [type(c).__name__ for c in user.contents] == ["TextContent", "ImageContent", "AudioContent"]
    images = user.contents[1]
    assert isinstance(images, am.ImageContent)
    assert images.count == 2
    (url, url_type), (_, inline_type) = images.to_base64()
    assert (url, url_type, inline_type) == ("https://example.test/a.png", "", "image/png")
    assert user.contents[2].media_type == "audio/wav"  # type: ignore[union-attr]
    assert isinstance(assistant, am.AssistantMessage)
    assert assistant.thinking()[0].signature == "EqQBCgIYAh"
    (call,) = assistant.tool_calls()
    assert (call.id, call.kind, call.args) == ("toolu_01", am.ToolKind.READ, {"path": "a.txt", "limit": 10})
    assert assistant.stop_reason is am.StopReason.TOOL_CALLS
    assert assistant.usage is not None
    assert assistant.usage.cost is not None
    assert assistant.usage.cost.total == pytest.approx(0.00081)
    assert isinstance(tool, am.ToolMessage)
    assert tool.results()[0].text == "hello\n"
    assert tool.results()[0].metadata == {"bytes": 6}
    assert isinstance(custom, am.CustomMessage)
    assert custom.details == {"exit_code": 0}
    assert custom.id  # session-only messages get ids too
    assert isinstance(branch, am.BranchSummaryMessage)
    assert branch.from_id == "m-asst"
    assert isinstance(compaction, am.CompactionSummaryMessage)
    assert compaction.tokens_before == 48213
    assert system.timestamp == 1700000000.5


def test_export_gives_back_the_seed_shape() -> None:
    source = load_golden()
    loaded = dict_form.messages_from_dicts(source)
    exported = dict_form.messages_to_dicts(loaded)
    for original, out in zip(source, exported, strict=True):
        for key, value in original.items():
            if key in {"contents", "id"} and original["role"] in {"custom", "branch_summary", "compaction_summary"}:
                continue
            if key == "contents":
                for original_block, out_block in zip(value, out[key], strict=True):
                    assert {k: out_block[k] for k in original_block} == original_block
                continue
            assert out[key] == value, key
    user_images = [b for b in exported[1]["contents"] if b["type"] == "image"]
    assert [len(b["images"]) for b in user_images] == [2]
    # Exported dicts are JSON and load to equal messages (ids minted on the first load are kept).
    again = dict_form.messages_from_dicts(json.loads(json.dumps(exported)))
    assert again == loaded


def test_unknown_usage_is_left_out_not_written_as_zero() -> None:
    message = am.AssistantMessage.text("x", usage=am.Usage(output_tokens=3))
    assert message.to_dict()["usage"] == {"output_tokens": 3}
    assert "usage" not in am.AssistantMessage.text("x").to_dict()


@pytest.mark.parametrize(
    ("payload", "field", "rule"),
    [
        ({"role": "wizard"}, "[0].role", "enum"),
        ({"role": "user", "contents": [{"type": "video"}]}, "[0].contents[0].type", "enum"),
        ({"role": "user", "contents": [{"type": "image", "images": ["%%%"]}]}, "[0].contents[0].images[0]", "media"),
        ({"role": "user", "contents": [{"type": "image", "images": []}]}, "[0].contents[0].images", "required"),
        (
            {"role": "user", "contents": [{"type": "audio", "audio": ["file:/etc/hostname"]}]},
            "[0].contents[0].audio[0]",
            "media",
        ),
        ({"role": "user", "contents": "hi"}, "[0].contents", "type"),
        ({"role": "user", "contents": ["hi"]}, "[0].contents[0]", "type"),
        ({"role": "user", "contents": []}, "[0].contents", "repeated.min_items"),
        (
            {"role": "system", "contents": [{"type": "thinking", "content": "x"}]},
            "[0].contents[0]",
            "system.content.kind",
        ),
        ({"role": "assistant", "contents": [{"type": "tool_call", "name": "f"}]}, "[0].contents[0].id", "required"),
        (
            {"role": "assistant", "contents": [{"type": "tool_call", "id": "c", "name": "f", "args": "{}"}]},
            "[0].contents[0].args",
            "type",
        ),
        ({"role": "assistant", "contents": [], "stop_reason": "done"}, "[0].stop_reason", "enum"),
        ({"role": "assistant", "contents": [], "usage": {"input_tokens": "9"}}, "[0].usage.input_tokens", "type"),
        (
            {"role": "tool", "contents": [{"type": "tool_result", "id": "c", "content": 3}]},
            "[0].contents[0].content",
            "type",
        ),
        ({"role": "compaction_summary", "summary": "s", "tokens_before": "many"}, "[0].tokens_before", "type"),
        ({"role": "user", "contents": [{"type": "text", "content": "x"}], "timestamp": "now"}, "[0].timestamp", "type"),
        ("not a dict", "[0]", "type"),
    ],
)
def test_bad_dicts_name_the_path(payload: Any, field: str, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        dict_form.messages_from_dicts([payload])
    assert (info.value.violations[0].field, info.value.violations[0].rule_id) == (field, rule)


def test_every_bad_message_is_reported_at_once() -> None:
    with pytest.raises(am.ValidationError) as info:
        dict_form.messages_from_dicts([{"role": "x"}, {"role": "user", "contents": []}, {"role": "y"}])
    assert [v.field for v in info.value.violations] == ["[0].role", "[1].contents", "[2].role"]


def test_messages_from_dicts_wants_a_list() -> None:
    with pytest.raises(am.ValidationError):
        dict_form.messages_from_dicts({"role": "user"})  # type: ignore[arg-type]


def test_an_image_dict_of_several_images_is_one_block() -> None:
    block = am.ContentBase.from_dict({"type": "image", "images": ["https://a.test/1.png", "https://a.test/2.jpg"]})
    assert isinstance(block, am.ImageContent)
    assert block.images == ["https://a.test/1.png", "https://a.test/2.jpg"]
    assert block.to_dict() == {
        "type": "image",
        "images": ["https://a.test/1.png", "https://a.test/2.jpg"],
        "media_types": ["image/png", "image/jpeg"],
    }
    with pytest.raises(am.ValidationError, match="TextContent"):
        am.TextContent.from_dict({"type": "thinking", "content": "x"})


# --- Contract v1.1: every new field goes through the seed-1 dict form and JSON text ----------------------------


def _original(kind: str, provider: str = "anthropic") -> am.ProviderContent:
    return am.ProviderContent.from_block(provider, {"type": kind, "x": [1, {"y": None}]})


V11_BLOCKS: list[am.Content] = [
    am.TextContent(
        "cited",
        signature="sig",
        citations=[
            am.Citation.web("https://a.test/", "A", result_index=2, cited_text="c", start_index=0, end_index=3),
            am.Citation.web("https://b.test/", confidence=0.75, original=_original("url_citation", "openai")),
            am.Citation.document(1, title="Doc", file_id="file_1", chars=(0, 4)),
            am.Citation.document(0, pages=(1, 3)),
            am.Citation.document(2, blocks=(0, 1)),
            am.Citation.search_result("kb://x", title="X", search_result_index=1, blocks=(1, 2)),
            am.Citation.file("file_2", filename="a.txt", container_id="cntr_1", start_index=4, end_index=4),
            am.Citation(original=_original("future_citation", "google")),
        ],
        logprobs=[
            am.TokenLogprob("c", -0.5, bytes=b"\xff\x00", token_id=-1, top_logprobs=[am.TokenLogprob("d", -2.0)]),
            am.TokenLogprob("ited", 0.0),
        ],
    ),
    am.HostedToolCallContent(
        "mcptoolu_1",
        "lookup",
        '{"q": 1}',
        kind="mcp",
        server="kb",
        status="awaiting_approval",
        status_raw="mcp_approval_request",
        signature="ts",
        original=_original("mcp_tool_use"),
    ),
    am.HostedToolCallContent("", "google_search", "not json"),
    am.HostedToolResultContent("s1", search_results=[], queries=["nothing"]),
    am.HostedToolResultContent(
        "s2",
        name="file_search",
        kind="file_search",
        search_results=[am.SearchResult("", "a.txt", "text", file_id="file_1", score=0.5)],
        status="completed",
        status_raw="completed",
    ),
    am.HostedToolResultContent(
        "c1",
        [am.TextContent("see"), am.ImageContent(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, media_type="image/png")],
        kind="code_execution",
        code_execution=am.CodeExecutionOutput(
            "out", "err", 2, files=["file_a", am.CodeExecutionFile(url="https://f.test/x.png")], encrypted_stdout="E"
        ),
        status="failed",
        status_raw="OUTCOME_FAILED",
    ),
    am.HostedToolResultContent(
        "f1",
        [am.DocumentContent(b"hello", media_type="text/plain", title="page")],
        kind="web_fetch",
        web_fetch=am.WebFetchOutput("https://w.test/", "2025-01-01T00:00:00Z"),
        original=_original("web_fetch_tool_result"),
    ),
    am.HostedToolResultContent("e1", error_code="max_uses_exceeded", error_message="too many", kind="web_search"),
    am.HostedToolResultContent("t1", [_original("tool_reference")], kind="tool_search"),
]


@pytest.mark.parametrize("block", V11_BLOCKS, ids=lambda b: b.type or "unknown")
def test_every_v11_block_round_trips_through_the_dict_form_and_json(block: am.Content) -> None:
    data = dict_form.content_to_dict(block)
    text = json.dumps(data)
    assert dict_form.content_from_dict(json.loads(text)) == block
    assert dict_form.contents_from_dict(json.loads(text)) == [block]


def test_v11_messages_and_usage_round_trip_through_the_dict_form() -> None:
    usage = am.Usage(
        input_tokens=1,
        output_tokens=2,
        cache_write_tokens=3,
        cache_write_5m_tokens=1,
        cache_write_1h_tokens=2,
        hosted_tool_requests={"web_search": 2, "web_fetch": 0, "my_tool": 1},
    )
    messages: list[am.AgentMessage] = [
        am.SystemMessage([am.TextContent("rules"), _original("tool_addition")], id="s", timestamp=1.5),
        am.UserMessage([am.TextContent("q"), _original("search_result")], id="u", timestamp=2.5),
        am.AssistantMessage(
            V11_BLOCKS, id="a", timestamp=3.5, stop_reason="stop", stop_sequence="\n\nHuman:", usage=usage
        ),
        am.ToolMessage(
            [am.ToolResultContent("t", [am.TextContent("x"), _original("tool_reference")], name="f")],
            id="t",
            timestamp=4.5,
        ),
    ]
    data = dict_form.messages_to_dicts(messages)
    back = dict_form.messages_from_dicts(json.loads(json.dumps(data)))
    assert back == messages
    assistant = back[2]
    assert isinstance(assistant, am.AssistantMessage)
    assert assistant.stop_sequence == "\n\nHuman:"
    assert assistant.usage is not None
    assert assistant.usage.hosted_tool_requests == {"web_search": 2, "web_fetch": 0, "my_tool": 1}
    assert {"cache_write_5m_tokens", "cache_write_1h_tokens", "hosted_tool_requests"} <= set(assistant.usage.reported)
    # An absent detail stays absent (not reported), a zero count stays a reported zero.
    plain = dict_form.messages_from_dicts(
        json.loads(
            json.dumps(dict_form.messages_to_dicts([am.AssistantMessage.text("x", usage=am.Usage(input_tokens=1))]))
        )
    )[0]
    assert isinstance(plain, am.AssistantMessage)
    assert plain.usage is not None
    assert "hosted_tool_requests" not in plain.usage.reported
    assert plain.stop_sequence == ""
