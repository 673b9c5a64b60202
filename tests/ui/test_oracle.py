"""An independent oracle: pydantic-ai's own AG-UI and Vercel AI adapters (``pydantic_ai.ui``) on the same conversation.

Both directions. Writing: their ``dump_messages`` of the conversation equals our ``to_ag_ui`` /
``to_ui_messages`` once each difference docs/ui-streams.md lists ("Compared with pydantic-ai") is applied,
and each of those differences does occur. Reading: their ``load_messages`` of *our* output gives back the
conversation they started from, but for the listed differences.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from ag_ui.core import Message
from conversation import conversation, pydantic_ai_conversation
from pydantic import TypeAdapter
from pydantic_ai.ui.ag_ui import AGUIAdapter
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import UIMessage

from agentmsg.ui import ConversionReport
from agentmsg.ui.ag_ui import to_ag_ui
from agentmsg.ui.ai_sdk import to_ui_messages

Messages = list[dict[str, Any]]


def _applied(name: str, change: Callable[[Messages], Messages], messages: Messages) -> Messages:
    """``change`` applied to a copy of ``messages``; it must change something (the difference does occur)."""
    changed = change(copy.deepcopy(messages))
    assert changed != messages, f"difference {name!r} no longer occurs"
    return changed


def _without_ids_and_metadata(messages: Messages) -> Messages:
    for message in messages:
        message.pop("id")
        message.pop("metadata", None)
    return messages


# --- AG-UI ---------------------------------------------------------------------------------


def _agui_theirs() -> Messages:
    dumped = AGUIAdapter.dump_messages(pydantic_ai_conversation())
    return [m.model_dump(by_alias=True, mode="json") for m in dumped]


def _reasoning_signature(messages: Messages) -> Messages:
    # theirs: {"signature", "provider_name"} as JSON in encryptedValue; ours: the producer's signature itself,
    # its provenance in metadata.agentmsg
    for m in messages:
        if m["role"] == "reasoning":
            m["encryptedValue"] = json.loads(m["encryptedValue"])["signature"]
    return messages


def _verbatim_arguments(ours: Messages) -> Callable[[Messages], Messages]:
    # theirs: compact JSON; ours: the model's text as it was (equal as JSON)
    verbatim = {c["id"]: c["function"]["arguments"] for m in ours for c in m.get("toolCalls", [])}

    def change(messages: Messages) -> Messages:
        for m in messages:
            for call in m.get("toolCalls", []):
                if call["id"] in verbatim:
                    assert json.loads(call["function"]["arguments"]) == json.loads(verbatim[call["id"]])
                    call["function"]["arguments"] = verbatim[call["id"]]
        return messages

    return change


def _outcome_carrier(messages: Messages) -> Messages:
    # theirs: a failed result also carries {"pydantic_ai": {"outcome": "failed"}} in encryptedValue; ours: error only
    for m in messages:
        if m["role"] == "tool":
            m.pop("encryptedValue", None)
    return messages


def _hosted_tool(ours: Messages) -> Callable[[Messages], Messages]:
    # theirs: a hosted call as a client tool call (id "pyd_ai_builtin|<provider>|<id>") with a tool message, and
    # the text after it as another assistant message; ours: the call and result as agentmsg.content activity
    # messages, then one assistant message
    activity = [m for m in ours if m["role"] == "activity"]

    def change(messages: Messages) -> Messages:
        k = next(i for i, m in enumerate(messages) if "pyd_ai_builtin|" in json.dumps(m))
        call, result, text = messages[k : k + 3]
        assert call["toolCalls"][0]["id"] == "pyd_ai_builtin|anthropic|srv_1"
        assert result["toolCallId"] == "pyd_ai_builtin|anthropic|srv_1"
        assert text["role"] == "assistant"
        return [*messages[:k], *activity, text, *messages[k + 3 :]]

    return change


def test_pydantic_ais_ag_ui_dump_equals_ours_but_for_the_documented_differences() -> None:
    ours = _without_ids_and_metadata(to_ag_ui(conversation(), report=ConversionReport()))
    for m in ours:
        for call in m.get("toolCalls", []):
            call.pop("metadata", None)
    theirs = _without_ids_and_metadata(_agui_theirs())
    assert theirs != ours
    theirs = _applied("reasoning signature form", _reasoning_signature, theirs)
    theirs = _applied("verbatim arguments", _verbatim_arguments(ours), theirs)
    theirs = _applied("outcome carrier", _outcome_carrier, theirs)
    theirs = _applied("hosted tool", _hosted_tool(ours), theirs)
    assert theirs == ours


def _projection(messages: list[Any]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """What the model sees of pydantic-ai messages: each part's kind and payload."""
    out = []
    for message in messages:
        parts = []
        for part in message.parts:
            if part.part_kind == "user-prompt":
                payload: Any = [
                    item if isinstance(item, str) else (item.media_type, item.data) for item in part.content
                ]
            elif part.part_kind in ("tool-call", "builtin-tool-call"):
                args = part.args if isinstance(part.args, dict) else json.loads(part.args)
                payload = (part.tool_name, part.tool_call_id, args)
            elif part.part_kind in ("tool-return", "builtin-tool-return"):
                payload = (part.tool_name, part.tool_call_id, part.content, part.outcome)
            elif part.part_kind == "thinking":
                payload = (part.content, part.signature)
            else:
                payload = part.content
            parts.append((part.part_kind, payload))
        out.append((message.kind, parts))
    return out


def test_pydantic_ai_reads_our_ag_ui_messages_as_the_conversation() -> None:
    ours = TypeAdapter(list[Message]).validate_python(to_ag_ui(conversation(), report=ConversionReport()))
    loaded = _projection(AGUIAdapter.load_messages(ours))
    expected = _projection(pydantic_ai_conversation())
    # pydantic-ai reads a signature only from its own JSON form of encryptedValue
    assert loaded[1][1][0] == ("thinking", ("Two cities: two calls at once.", None))
    assert expected[1][1][0] == ("thinking", ("Two cities: two calls at once.", "sig-abc"))
    # AG-UI has no hosted tools: pydantic-ai skips our agentmsg.content activity messages
    assert [kind for kind, _ in expected[3][1]] == ["builtin-tool-call", "builtin-tool-return", "text"]
    expected[1][1][0] = loaded[1][1][0]
    expected[3] = ("response", expected[3][1][2:])
    assert loaded == expected


# --- Vercel AI SDK -------------------------------------------------------------------------


def _vercel_theirs() -> Messages:
    dumped = VercelAIAdapter.dump_messages(pydantic_ai_conversation())
    return [m.model_dump(by_alias=True, mode="json", exclude_none=True) for m in dumped]


def _private(part: dict[str, Any]) -> None:
    """Each side's own namespace in the metadata slots: ours "agentmsg", theirs "pydantic_ai"."""
    for key in ("providerMetadata", "callProviderMetadata", "resultProviderMetadata"):
        if key in part:
            part[key] = {k: v for k, v in part[key].items() if k not in ("agentmsg", "pydantic_ai")}
            if not part[key]:
                del part[key]


def _one_turn(messages: Messages) -> Messages:
    # theirs: one UIMessage per model response, no step-start; ours: one UIMessage a turn, a step-start a step
    out: Messages = []
    for m in messages:
        if m["role"] == "assistant" and out and out[-1]["role"] == "assistant":
            out[-1]["parts"] += [{"type": "step-start"}, *m["parts"]]
        elif m["role"] == "assistant":
            out.append(m | {"parts": [{"type": "step-start"}, *m["parts"]]})
        else:
            out.append(m)
    return out


def _plain_text_state(messages: Messages) -> Messages:
    # theirs: state "done" on system and user text parts; ours: no state there (as useChat sends them)
    for m in messages:
        if m["role"] != "assistant":
            for part in m["parts"]:
                part.pop("state", None)
    return messages


def _signature_under_the_provider(messages: Messages) -> Messages:
    # theirs: providerMetadata.pydantic_ai {signature, provider_name}; ours: under the provider's own key,
    # where @ai-sdk/anthropic reads it, and the part's id
    for m in messages:
        for k, part in enumerate(m["parts"]):
            if part["type"] == "reasoning":
                mine = part["providerMetadata"]["pydantic_ai"]
                part["providerMetadata"] = {mine["provider_name"]: {"signature": mine["signature"]}}
                m["parts"][k] = {"type": "reasoning", "id": "a1.0"} | part
    return messages


def _client_tools_unmarked(messages: Messages) -> Messages:
    # theirs: providerExecuted: false on the application's tools; ours leaves it out (it is optional)
    for m in messages:
        for part in m["parts"]:
            if part.get("providerExecuted") is False:
                del part["providerExecuted"]
    return messages


def _citations(ours: Messages) -> Callable[[Messages], Messages]:
    # theirs: pydantic-ai's adapters drop text citations (their docstring); ours: text.citations and a source-url
    def change(messages: Messages) -> Messages:
        turn = next(m for m in ours if m["role"] == "assistant")
        cited = [p for p in turn["parts"] if p["type"] == "text" and "citations" in p]
        sources = [p for p in turn["parts"] if p["type"] == "source-url"]
        last = messages[-1]["parts"]
        last[-1]["citations"] = cited[0]["citations"]
        last.extend(sources)
        return messages

    return change


def test_pydantic_ais_vercel_dump_equals_ours_but_for_the_documented_differences() -> None:
    ours = _without_ids_and_metadata(to_ui_messages(conversation(), report=ConversionReport()))
    theirs = _without_ids_and_metadata(_vercel_theirs())
    theirs = _applied("one UIMessage a turn", _one_turn, theirs)
    theirs = _applied("text state on plain messages", _plain_text_state, theirs)
    theirs = _applied("reasoning signature key", _signature_under_the_provider, theirs)
    for m in [*ours, *theirs]:
        for part in m["parts"]:
            _private(part)
    theirs = _applied("client tools unmarked", _client_tools_unmarked, theirs)
    theirs = _applied("citations", _citations(ours), theirs)
    assert theirs == ours


def test_pydantic_ai_reads_our_uimessages_as_the_conversation() -> None:
    ours = to_ui_messages(conversation(), report=ConversionReport())
    # pydantic-ai's UIMessage model predates AI SDK v7's text citations and resultProviderMetadata (and forbids
    # unknown keys): those two fields are taken out for it
    for m in ours:
        for part in m["parts"]:
            part.pop("citations", None)
            part.pop("resultProviderMetadata", None)
    loaded = _projection(VercelAIAdapter.load_messages(TypeAdapter(list[UIMessage]).validate_python(ours)))
    expected = _projection(pydantic_ai_conversation())
    # pydantic-ai reads a signature only from its own providerMetadata.pydantic_ai
    assert loaded[1][1][0] == ("thinking", ("Two cities: two calls at once.", None))
    expected[1][1][0] = loaded[1][1][0]
    assert loaded == expected
