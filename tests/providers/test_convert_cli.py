"""`agentmsg convert --from X --to Y`: every pair of formats, losses on stderr, strict mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentmsg as am
from agentmsg.cli import main
from agentmsg.formats import FORMATS

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call:1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call:1", "content": "14C and rain"},
    {"role": "assistant", "content": "14C and rain."},
]


@pytest.mark.parametrize("target", FORMATS)
def test_every_format_can_be_written_and_read_back(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(CHAT))
    assert main(["convert", "--from", "openai-chat", "--to", target, str(source)]) == 0
    converted = tmp_path / f"out.{target}.json"
    converted.write_text(capsys.readouterr().out)
    assert main(["convert", "--from", target, "--to", "openai-chat", str(converted)]) == 0
    back = json.loads(capsys.readouterr().out)
    texts = [m.get("content") for m in back if m["role"] in ("system", "user", "assistant") and m.get("content")]
    assert texts[:2] == ["Be brief.", "Weather in Paris?"] or texts[0] == [{"type": "text", "text": "Be brief."}]
    calls = [c for m in back for c in m.get("tool_calls", [])]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    tool = [m for m in back if m["role"] == "tool"]
    assert [t["content"] for t in tool] == ["14C and rain"]


def test_losses_go_to_stderr_and_strict_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversation = am.Conversation(
        [am.AssistantMessage([am.ThinkingContent("hmm", "sig"), am.TextContent("ok")], stop_reason="stop")]
    )
    source = tmp_path / "c.json"
    source.write_text(conversation.to_json())
    assert main(["convert", "--from", "agentmsg", "--to", "openai-chat", str(source)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == [{"role": "assistant", "content": "ok"}]
    assert "lost: [0].contents[0]" in captured.err
    assert main(["convert", "--from", "agentmsg", "--to", "openai-chat", "--strict", str(source)]) == 2
    assert "cannot hold" in capsys.readouterr().err


def test_ids_rewritten_for_anthropic_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(CHAT))
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", str(source)]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    blocks = [b for m in payload["messages"] for b in m["content"] if isinstance(b, dict)]
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert ids
    assert all(":" not in i for i in ids)
    assert "tool call id 'call:1' written as" in captured.err


def test_bad_input_names_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.json"
    source.write_text(json.dumps([{"role": "wizard", "content": "x"}]))
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", str(source)]) == 2
    assert "[0].role" in capsys.readouterr().err
    source.write_text("{not json")
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", str(source)]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_unknown_blocks_follow_the_readers_default_unless_the_flag_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upload = {"type": "container_upload", "file_id": "file_1"}
    payload = {"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": [upload]}]}
    source = tmp_path / "anthropic.json"
    source.write_text(json.dumps(payload))
    # The Anthropic reader keeps unknown blocks by default, and they go back verbatim.
    assert main(["convert", "--from", "anthropic", "--to", "anthropic", str(source)]) == 0
    assert json.loads(capsys.readouterr().out)["messages"][1]["content"] == [upload]
    assert main(["convert", "--from", "anthropic", "--to", "anthropic", "--no-pass-through-unknown", str(source)]) == 2
    assert "messages[1].content[0].type" in capsys.readouterr().err
