"""The seed-2 form against the Adaline gateway's own code from npm (pure transforms, no network).

``tests/interop/adaline_gateway.mjs`` parses each payload with the zod ``Message`` schema of ``@adaline/types``
and turns it into the OpenAI and Anthropic request bodies with ``@adaline/openai`` and ``@adaline/anthropic``
(``getCompleteChatData``, which builds the body and sends nothing). Issue 16, bug 7: a tool message of several
results used to go out as one ``tool`` message the OpenAI provider refuses.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from nodetools import require_node, run_node

import agentmsg as am
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.adaline import from_adaline, to_adaline

PACKAGES = ("@adaline/types", "@adaline/openai", "@adaline/anthropic", "zod")
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def tool_conversation() -> list[am.BaseMessage]:
    """Two tool calls answered by one tool message of two results (the shape from_openai_chat gives)."""
    return [
        am.UserMessage.text("Weather in Paris and Oslo?"),
        am.AssistantMessage(
            [
                am.ToolCallContent("call_1", "get_weather", {"city": "Paris"}, index=0),
                am.ToolCallContent("call_2", "get_weather", {"city": "Oslo"}, index=1),
            ]
        ),
        am.ToolMessage.from_results(
            [
                am.ToolResultContent("call_1", "21C", name="get_weather", index=0),
                am.ToolResultContent("call_2", "4C", name="get_weather", index=1),
            ]
        ),
        am.AssistantMessage.text("Paris 21C, Oslo 4C."),
    ]


def hosted_conversation() -> list[am.BaseMessage]:
    """Every v1.1 addition: hosted tool call and result, citations, logprobs, stop sequence, usage details."""
    search = am.HostedToolCallContent(
        "srvtoolu_01", "web_search", {"query": "agentmsg"}, kind="web_search", status="completed"
    )
    found = am.HostedToolResultContent(
        "srvtoolu_01",
        kind="web_search",
        search_results=[am.SearchResult("https://example.com/a", "A page", page_age="2 days")],
        queries=["agentmsg"],
    )
    answer = am.TextContent(
        "agentmsg is a message contract.",
        citations=[am.Citation.web("https://example.com/a", "A page", cited_text="a contract", start_index=0)],
        logprobs=[am.TokenLogprob("agentmsg", -0.25, top_logprobs=[am.TokenLogprob("agent", -1.5)])],
    )
    usage = am.Usage(
        input_tokens=10,
        output_tokens=5,
        cache_write_tokens=4,
        cache_write_5m_tokens=1,
        cache_write_1h_tokens=3,
        hosted_tool_requests={"web_search": 1},
    )
    return [
        am.SystemMessage.text("Cite your sources."),
        am.UserMessage.text("What is agentmsg?"),
        am.AssistantMessage([search, found, answer], stop_sequence="END", usage=usage, stop_reason="stop"),
        am.UserMessage.text("Thanks."),
    ]


def gateway(tmp_path: Path, cases: dict[str, tuple[list[dict[str, Any]], bool]]) -> dict[str, Any]:
    node = require_node(*PACKAGES)
    file = tmp_path / "cases.json"
    file.write_text(
        json.dumps([{"name": name, "messages": payload, "metadata": meta} for name, (payload, meta) in cases.items()]),
        encoding="utf-8",
    )
    result: dict[str, Any] = run_node(node, "adaline_gateway.mjs", str(file))
    return result


def quiet(messages: list[am.BaseMessage]) -> list[dict[str, Any]]:
    """The stock gateway form (no metadata), losses collected."""
    return to_adaline(messages, include_metadata=False, report=ConversionReport())


def test_tool_results_go_out_one_a_message_and_every_gateway_provider_takes_them(tmp_path: Path) -> None:
    payload = quiet(tool_conversation())
    assert [m["role"] for m in payload] == ["user", "assistant", "tool", "tool", "assistant"]
    # The old shape: one tool message holding both results (the schema takes it, the OpenAI provider does not).
    merged = [*payload[:2], {"role": "tool", "content": payload[2]["content"] + payload[3]["content"]}, payload[4]]
    out = gateway(tmp_path, {"split": (payload, False), "merged": (merged, False)})
    split = out["split"]
    assert split["schema"] == {"ok": True}
    assert split["openai"]["ok"], split["openai"]
    tool_messages = [m for m in split["openai"]["body"]["messages"] if m["role"] == "tool"]
    assert tool_messages == [
        {"role": "tool", "tool_call_id": "call_1", "content": "21C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "4C"},
    ]
    assert split["anthropic"]["ok"], split["anthropic"]
    results = [
        block
        for m in split["anthropic"]["body"]["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block["type"] == "tool_result"
    ]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [("call_1", "21C"), ("call_2", "4C")]
    assert out["merged"]["schema"] == {"ok": True}
    assert not out["merged"]["openai"]["ok"]
    assert "exactly one content item" in out["merged"]["openai"]["error"]


def test_with_metadata_the_split_is_schema_valid_and_reads_back_as_one_message(tmp_path: Path) -> None:
    messages = tool_conversation()
    payload = to_adaline(messages)
    assert [m["role"] for m in payload] == ["user", "assistant", "tool", "tool", "assistant"]
    assert payload[3]["metadata"] == {"agentmsg": {"sameMessage": True}}
    assert from_adaline(payload) == messages
    assert gateway(tmp_path, {"split": (payload, True)})["split"]["schema"] == {"ok": True}


def test_v11_content_is_schema_valid_with_metadata_and_the_stock_form_reaches_both_providers(
    tmp_path: Path,
) -> None:
    messages = hosted_conversation()
    with_metadata = to_adaline(messages)
    assert from_adaline(with_metadata) == messages
    report = ConversionReport()
    stock = to_adaline(messages, include_metadata=False, report=report)
    assert {loss.path for loss in report.losses} == {"[2]", "[2].contents[0]", "[2].contents[1]", "[2].contents[2]"}
    out = gateway(tmp_path, {"metadata": (with_metadata, True), "stock": (stock, False)})
    assert out["metadata"]["schema"] == {"ok": True}
    stock_out = out["stock"]
    assert stock_out["schema"] == {"ok": True}
    assert stock_out["openai"]["ok"], stock_out["openai"]
    assert stock_out["openai"]["body"]["messages"][2] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "agentmsg is a message contract."}],
    }
    assert stock_out["anthropic"]["ok"], stock_out["anthropic"]
    assert stock_out["anthropic"]["body"]["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "agentmsg is a message contract."}],
    }


def rich_conversation() -> list[am.BaseMessage]:
    """Every modality the form writes, with a stash on every kind of item."""
    png = base64.b64decode(PNG_B64)
    return [
        am.SystemMessage.text("Be brief.", name="policy"),
        am.UserMessage(
            [
                am.TextContent("Look.", signature="sig"),
                am.ImageContent(images=[png, "https://example.com/cat.jpg"]),
                am.DocumentContent(b"%PDF-1.4\n%%EOF\n", media_type="application/pdf", filename="a.pdf", title="A"),
            ]
        ),
        am.AssistantMessage(
            [
                am.ThinkingContent("Hm.", "c2ln"),
                am.RedactedThinkingContent("ZGF0YQ=="),
                am.ToolCallContent("call_9", "lookup", {"q": 1}, kind="read", server_name="kb", metadata={"m": 1}),
            ],
            usage=am.Usage(input_tokens=1, output_tokens=2),
            stop_reason="tool_calls",
        ),
        am.ToolMessage([am.ToolResultContent("call_9", [am.TextContent("a"), am.TextContent("b")], is_error=True)]),
    ]


def test_every_modality_with_its_stash_is_schema_valid(tmp_path: Path) -> None:
    messages = rich_conversation()
    payload = to_adaline(messages)
    assert [item["modality"] for item in payload[1]["content"]] == ["text", "image", "image", "pdf"]
    assert from_adaline(payload) == messages
    out = gateway(tmp_path, {"rich": (payload, True)})
    assert out["rich"]["schema"] == {"ok": True}


def test_the_stash_is_refused_by_the_stock_schema(tmp_path: Path) -> None:
    # Why include_metadata=False exists: the gateway's stock Message() takes no metadata at all.
    payload = to_adaline(tool_conversation())
    out = gateway(tmp_path, {"stash": (payload, False)})["stash"]
    assert not out["schema"]["ok"]
    assert "metadata" in out["schema"]["error"]


@pytest.mark.parametrize("name", ["tool", "hosted"])
def test_stock_form_parses_back(name: str) -> None:
    messages = tool_conversation() if name == "tool" else hosted_conversation()
    back = from_adaline(quiet(messages))
    assert [m.text_content() for m in back if isinstance(m, am.AssistantMessage)][-1] == (
        messages[-1].text_content() if name == "tool" else "agentmsg is a message contract."
    )
