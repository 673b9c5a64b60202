"""agentmsg's UIMessages and UI message stream against the AI SDK's own code from npm (``ai`` 7, no network).

``tests/interop/ai_sdk.mjs`` runs ``validateUIMessages`` over :func:`to_ui_messages`'s messages,
``readUIMessageStream`` over :func:`ui_message_chunks`'s chunks of each assistant turn, and
``convertToModelMessages`` over the validated messages. The reader must fold the stream to exactly the
UIMessage the converter gives for the same turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nodetools import require_node, run_node
from ui.conversation import approval_turn, conversation, image_turn

from agentmsg import (
    AssistantMessage,
    Citation,
    Provenance,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    UserMessage,
)
from agentmsg.ui import ConversionReport
from agentmsg.ui.ai_sdk import to_ui_messages, ui_message_chunks


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_the_ai_sdk_validates_reads_and_converts_our_messages(tmp_path: Path) -> None:
    node = require_node("ai")
    messages = conversation()
    redacted = AssistantMessage(
        [
            ThinkingContent("a", "s1"),
            RedactedThinkingContent("opaque"),
            TextContent("ok", citations=[Citation.document(0, title="Report", pages=(1, 2), cited_text="ok")]),
        ],
        provenance=Provenance("anthropic", "anthropic-messages"),
        id="a9",
        timestamp=9.0,
    )
    report = ConversionReport()
    ui = to_ui_messages([*messages, redacted, image_turn()], report=report)
    assert not report.losses
    assert ui[3]["parts"][-1]["type"] == "source-document"
    turns = [messages[2:], [redacted], [image_turn()]]
    streams = [ui_message_chunks(turn, chunk_size=5, report=ConversionReport()) for turn in turns]
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"messages": ui, "streams": streams}))
    result = run_node(node, "ai_sdk.mjs", str(case))
    assert result["validated"] == _json(ui)
    # the AI SDK's reader folds our chunks to our UIMessage of the same turn, part for part
    assert result["folded"] == [_json(ui[2]), _json(ui[3]), _json(ui[4])]
    roles = [m["role"] for m in result["modelMessages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "assistant", "assistant"]
    first = result["modelMessages"][2]["content"]
    # the signature reaches the Anthropic provider's slot in the model message
    assert first[0] == {
        "type": "reasoning",
        "text": "Two cities: two calls at once.",
        "providerOptions": {"anthropic": {"signature": "sig-abc"}},
    }


def test_the_ai_sdk_takes_our_approval_states_and_chunks(tmp_path: Path) -> None:
    """A turn with an approved call that ran, a denied one, a call with no approval and one still waiting: the AI SDK
    validates the parts, folds the chunks (``tool-approval-request`` / ``-response``, ``tool-output-denied``) to the
    same UIMessage, and sends the decisions on to a model as its approval responses."""
    node = require_node("ai")
    question, call, decisions, results, waiting = approval_turn()
    report = ConversionReport()
    ui = to_ui_messages([question, call, decisions, results, waiting], report=report)
    assert not report.losses
    odd_call = AssistantMessage([ToolCallContent("x", "shell", arguments="{}")], id="o1", timestamp=1.0)
    odd = [odd_call, UserMessage([ToolApprovalContent.approve("x", "fine")], id="o2", timestamp=2.0)]
    odd_ui = to_ui_messages(odd, report=report)
    assert not report.losses
    streams = [
        ui_message_chunks([call, decisions, results, waiting], chunk_size=5, report=ConversionReport()),
        ui_message_chunks(odd, report=ConversionReport()),
    ]
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"messages": [*ui, *odd_ui], "streams": streams}))
    result = run_node(node, "ai_sdk.mjs", str(case))
    assert result["validated"] == _json([*ui, *odd_ui])
    assert result["folded"] == [_json(ui[1]), _json(odd_ui[0])]
    responses = [
        part
        for message in result["modelMessages"]
        for part in message["content"]
        if isinstance(part, dict) and part["type"] == "tool-approval-response"
    ]
    assert [(p["approvalId"], p["approved"]) for p in responses] == [
        ("call_rm", True),
        ("call_deploy", False),
        ("x", True),
    ]
