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
