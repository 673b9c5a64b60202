"""Property tests of agentmsg.ui: any messages convert, every AG-UI message validates with AG-UI's models,
a conversion that reports no loss comes back exactly, and the turns a UI shows come back exactly."""

from __future__ import annotations

import json
from typing import Any

from agui_check import check_event, check_message, fold_events, without_metadata
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import messages as any_message

import agentmsg as am
from agentmsg.ui import ConversionReport
from agentmsg.ui.ag_ui import from_ag_ui, message_events, to_ag_ui
from agentmsg.ui.ai_sdk import from_ui_messages, to_ui_messages

conversations = st.lists(any_message, max_size=6, unique_by=lambda m: m.id)


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@settings(max_examples=60, deadline=None)
@given(conversations)
def test_any_messages_go_to_ag_ui_and_back_exactly_unless_a_loss_is_reported(items: list[am.AgentMessage]) -> None:
    report = ConversionReport()
    out = _json(to_ag_ui(items, report=report))
    for message in out:
        check_message(message)
    back = from_ag_ui(out, report=ConversionReport())
    if not report.losses:
        assert back == items


@settings(max_examples=60, deadline=None)
@given(conversations)
def test_any_messages_go_to_uimessages_and_back_exactly_unless_a_loss_is_reported(
    items: list[am.AgentMessage],
) -> None:
    report = ConversionReport()
    out = _json(to_ui_messages(items, report=report))
    back = from_ui_messages(out, report=ConversionReport())
    if not report.losses:
        assert back == items


# A chat as UIs show it: user questions, answers that think (signed, from a known producer), search the web (a
# hosted tool), talk and call tools (the model's argument text as it came), and the tools' answers. Nothing in it
# is lost by either protocol.
ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
words = st.text(min_size=1, max_size=30)
json_object = st.dictionaries(
    st.text(max_size=8), st.integers(-(2**40), 2**40) | st.text(max_size=8) | st.booleans(), max_size=3
)
argument_text = st.one_of(
    json_object.map(json.dumps),
    json_object.map(lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False)),
)
producers = st.sampled_from(
    [
        am.Provenance("anthropic", "anthropic-messages", "claude-sonnet-4-5", "msg_1"),
        am.Provenance("openai", "openai-responses", "gpt-5", "resp_1"),
        am.Provenance("google", "google-generative-ai", "gemini-3-pro", "r"),
    ]
)


@st.composite
def chats(draw: st.DrawFn) -> list[am.AgentMessage]:
    out: list[am.AgentMessage] = []
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        n += 1
        out.append(am.UserMessage.text(draw(words), id=f"u{n}", timestamp=float(n)))
        for _step in range(draw(st.integers(1, 2))):
            n += 1
            blocks: list[Any] = []
            if draw(st.booleans()):
                blocks.append(am.ThinkingContent(draw(words), draw(st.sampled_from(["", "c2ln"]))))
            if draw(st.booleans()):
                query = {"query": draw(words)}
                blocks.append(am.HostedToolCallContent(f"h{n}", "web_search", query, kind="web_search"))
                found = [am.SearchResult(f"https://example.test/{draw(ident)}", draw(words))]
                blocks.append(am.HostedToolResultContent(f"h{n}", name="web_search", search_results=found))
            if draw(st.booleans()):
                blocks.append(am.TextContent(draw(words)))
            calls = [
                am.ToolCallContent(f"c{n}_{j}", draw(ident), arguments=draw(argument_text), index=j)
                for j in range(draw(st.integers(0 if blocks else 1, 3)))
            ]
            usage = am.Usage(input_tokens=draw(st.integers(0, 10**6)), output_tokens=draw(st.integers(0, 10**6)))
            out.append(
                am.AssistantMessage(
                    [*blocks, *calls],
                    usage=usage,
                    stop_reason=am.StopReason.TOOL_CALLS if calls else am.StopReason.STOP,
                    provenance=draw(producers),
                    id=f"a{n}",
                    timestamp=float(n),
                )
            )
            if not calls:
                break
            n += 1
            results = [
                am.ToolResultContent(c.id, draw(words), is_error=draw(st.booleans()), name=c.name, index=c.index)
                for c in draw(st.permutations(calls))
            ]
            out.append(am.ToolMessage(results, id=f"t{n}", timestamp=float(n)))
    return out


@settings(max_examples=60, deadline=None)
@given(chats())
def test_a_chat_comes_back_exactly_from_both_protocols(chat: list[am.AgentMessage]) -> None:
    for to, back in ((to_ag_ui, from_ag_ui), (to_ui_messages, from_ui_messages)):
        report = ConversionReport()
        out = _json(to(chat, report=report))  # type: ignore[operator]
        assert not report.losses, (to.__name__, report.summary())
        assert back(out) == chat  # type: ignore[operator]


@settings(max_examples=40, deadline=None)
@given(chats(), st.sampled_from([None, 1, 7]))
def test_the_events_of_a_chat_build_its_snapshot(chat: list[am.AgentMessage], chunk_size: int | None) -> None:
    events: list[dict[str, Any]] = []
    for message in chat:
        events += message_events(message, chunk_size=chunk_size)
    for event in events:
        check_event(event)
    # an assistant message with neither text nor tool calls is in the snapshot for its metadata (usage,
    # provenance) alone: no event makes it
    snapshot = [m for m in without_metadata(to_ag_ui(chat)) if m["role"] != "assistant" or len(m) > 2]
    assert sorted(fold_events(events), key=lambda m: m["id"]) == sorted(snapshot, key=lambda m: m["id"])
