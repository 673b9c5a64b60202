"""Sessions as a tree: walks, branches, compaction, custom entries, the built context, repair, persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentmsg as am
from agentmsg.providers import anthropic, gemini, openai_chat, openai_responses
from agentmsg.providers._common import BRANCH_SUMMARY_TEMPLATE, COMPACTION_SUMMARY_TEMPLATE, ConversionReport
from agentmsg.sessions import (
    EXPORT_VERSION,
    Session,
    answer_unanswered_tool_calls,
    build_context,
    context_plan,
    drop_empty_assistant_messages,
    repair_history,
    strip_trailing_unusable_assistant,
)

GOLDEN = Path(__file__).parent / "golden" / "session" / "v1.jsonl"


def user(entry_id: str, text: str | None = None, **kw: object) -> am.UserMessage:
    return am.UserMessage.text(text or entry_id, id=entry_id, timestamp=1, **kw)  # type: ignore[arg-type]


def assistant(entry_id: str, text: str | None = None, **kw: object) -> am.AssistantMessage:
    return am.AssistantMessage.text(text or entry_id, stop_reason="stop", id=entry_id, timestamp=1, **kw)  # type: ignore[arg-type]


def ids(messages: list[am.AgentMessage] | tuple[am.AgentMessage, ...]) -> list[str]:
    return [m.id for m in messages]


def test_a_linear_session_needs_no_parent_ids() -> None:
    session = Session([user("u1"), assistant("a1"), user("u2")])
    assert ids(session.path()) == ["u1", "a1", "u2"]
    assert session.parent_of("a1") == "u1"
    assert session.parent_of("u1") is None
    assert [m.text_content() for m in session.build_context()] == ["u1", "a1", "u2"]


def test_branches_walk_to_any_leaf() -> None:
    session = Session([user("u1"), assistant("a1"), user("u2"), assistant("a2")])
    assert session.branch("a1") is None  # go back without a summary
    assert session.leaf_id == "a1"
    session.append(user("u3"))
    session.append(assistant("a3"))
    assert session.get("u3").parent_id == "a1"
    assert ids(session.path()) == ["u1", "a1", "u3", "a3"]
    assert ids(session.path("a2")) == ["u1", "a1", "u2", "a2"]  # the old branch is still there
    assert ids(session.children("a1")) == ["u2", "u3"]
    assert ids(session.build_context("a2")) == ["u1", "a1", "u2", "a2"]


def test_branch_summaries_on_the_path_are_projected() -> None:
    session = Session([user("u1"), assistant("a1"), user("u2"), assistant("a2")])
    summary = session.branch("a1", summary="Tried u2; it failed.", id="b1", timestamp=1)
    assert summary is not None
    assert (summary.parent_id, summary.from_id) == ("a1", "a2")
    session.append(user("u3"))
    context = session.build_context()
    assert [m.id for m in context] == ["u1", "a1", "b1", "u3"]
    assert isinstance(context[2], am.UserMessage)
    assert context[2].text_content() == BRANCH_SUMMARY_TEMPLATE.format(summary="Tried u2; it failed.")
    assert ids(session.build_context("a2")) == ["u1", "a1", "u2", "a2"]  # not on that path


def test_compaction_boundaries() -> None:
    session = Session([user("u1"), assistant("a1"), user("u2"), assistant("a2")])
    session.compact("Summary of u1..a2", first_kept_id="u2", tokens_before=900, id="k1", timestamp=1)
    session.append(user("u3"))
    context = session.build_context()
    assert context[0].text_content() == COMPACTION_SUMMARY_TEMPLATE.format(summary="Summary of u1..a2")
    assert ids(context[1:]) == ["u2", "a2", "u3"]  # kept from first_kept_id, then after the compaction
    # A second compaction supersedes the first; keeping nothing before it.
    session.compact("Everything so far", id="k2", timestamp=1)
    session.append(user("u4"))
    context = session.build_context()
    assert context[0].text_content().endswith("<summary>\nEverything so far\n</summary>")
    assert ids(context[1:]) == ["u4"]
    # Building for a leaf before the compactions ignores them.
    assert ids(session.build_context("a2")) == ["u1", "a1", "u2", "a2"]


def test_custom_entries_go_to_the_model_only_when_flagged() -> None:
    session = Session(
        [
            user("u1"),
            am.CustomMessage("ui_event", [am.TextContent("clicked")], id="c1", timestamp=1),
            am.CustomMessage("hint", [am.TextContent("check the tokenizer")], to_model=True, id="c2", timestamp=1),
            assistant("a1"),
        ]
    )
    context = session.build_context()
    assert ids(context) == ["u1", "c2", "a1"]
    assert context[1].text_content() == '<custom type="hint">\ncheck the tokenizer\n</custom>'


def test_the_context_plan_gives_indexes_for_entries_as_they_are_and_projects_the_rest() -> None:
    """The rule as the service applies it: from ids, role arms and the session-only entries alone (no other entry
    is read), the indexes of the entries given as they are and the projections, in context order."""
    hidden = am.CustomMessage("ui_event", [am.TextContent("clicked")], id="n0", timestamp=1)
    shown = am.CustomMessage("hint", [am.TextContent("look")], to_model=True, id="n1", timestamp=1)
    summary = am.BranchSummaryMessage("left", "x", id="b", parent_id="u0", timestamp=1)
    compaction = am.CompactionSummaryMessage("s", 10, first_kept_id="u1", id="c", timestamp=1)
    entry_ids = ["u0", "n0", "u1", "n1", "x", "b", "c", "a"]
    arms = ["user", "custom", "user", "custom", None, "branch_summary", "compaction_summary", "assistant"]
    plan = context_plan(entry_ids, arms, {1: hidden, 3: shown, 5: summary, 6: compaction})
    assert [item if isinstance(item, int) else item.id for item in plan] == ["c", 2, "n1", "b", 7]
    assert all(isinstance(item, am.UserMessage) for item in plan if not isinstance(item, int))
    # Without a compaction: the whole path, the entry of an unknown role (None) and the hidden custom left out.
    plan = context_plan(entry_ids[:6], arms[:6], {1: hidden, 3: shown, 5: summary})
    assert [item if isinstance(item, int) else item.id for item in plan] == [0, 2, "n1", "b"]
    # build_context over wrappers is the same plan.
    path = [user("u0"), hidden, user("u1"), shown, summary, compaction, assistant("a")]
    assert ids(build_context(path)) == ["c", "u1", "n1", "b", "a"]


def test_bad_input_leaves_the_session_unchanged() -> None:
    session = Session([user("u1"), assistant("a1")])
    before = session.entries
    with pytest.raises(am.NotFoundError, match="no such entry"):
        session.branch("ghost", summary="x")
    with pytest.raises(am.NotFoundError, match="not in the session"):
        session.append(user("u2", parent_id="ghost"))
    with pytest.raises(am.ValidationError) as info:
        session.append(user("u3", parent_id="u3"))
    assert info.value.violations[0].rule_id == "session.cycle"
    session.branch("u1")
    session.append(user("side"))
    with pytest.raises(am.ValidationError) as info:
        session.compact("s", first_kept_id="a1")  # a1 is on the other branch
    assert info.value.violations[0].rule_id == "session.first_kept_on_path"
    with pytest.raises(am.ConflictError):
        session.append(am.UserMessage.text("different", id="u1", timestamp=1))
    assert session.append(user("u1")) == before[0]  # an identical retry is a no-op
    assert ids(session.entries) == [*ids(before), "side"]


def test_a_cycle_in_imported_data_is_reported() -> None:
    a = user("a", parent_id="b")
    b = user("b", parent_id="a")
    session = Session()
    session._entries = [a, b]
    session._index = {"a": 0, "b": 1}
    with pytest.raises(am.ValidationError, match="cycle"):
        session.path("a")
    text = "\n".join([json.dumps({"kind": "agentmsg.session", "version": 1}), a.to_json(), b.to_json()])
    with pytest.raises(am.DecodeError, match="tree is broken"):
        Session.import_jsonl(text)


def test_export_round_trip_and_the_golden_v1_file() -> None:
    session = Session.import_jsonl(GOLDEN.read_text())
    assert session.session_id == "golden-v1"
    assert len(session) == 11
    assert ids(session.build_context()) == ["e-k1", "e-c2", "e-a3", "e-u2"]
    assert ids(session.path("e-a2")) == ["e-sys", "e-u1", "e-a1", "e-t1", "e-a2"]
    compaction = session.get("e-k1")
    assert isinstance(compaction, am.CompactionSummaryMessage)
    assert compaction.provider_state is not None
    assert compaction.provider_state.data == "ENCRYPTED-COMPACTION=="
    again = Session.import_jsonl(session.export_jsonl())
    assert again.entries == session.entries
    assert EXPORT_VERSION == 1


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "header line is missing"),
        ("{nope", "not JSON"),
        (json.dumps({"kind": "other"}), "not an agentmsg session export"),
        (json.dumps({"kind": "agentmsg.session", "version": 2}), "newer agentmsg"),
        (json.dumps({"kind": "agentmsg.session", "version": 1}) + "\n{bad}", "line 2"),
        (json.dumps({"kind": "agentmsg.session", "version": 1}) + '\n{"id": "", "system": {}}', "line 2"),
    ],
)
def test_bad_exports_name_the_line(text: str, needle: str) -> None:
    with pytest.raises(am.DecodeError, match=needle):
        Session.import_jsonl(text)


def test_the_built_context_converts_to_every_provider_format() -> None:
    session = Session.import_jsonl(GOLDEN.read_text())
    context = session.build_context("e-a2")
    for convert in (openai_chat.to_openai_chat, openai_responses.to_openai_responses, anthropic.to_anthropic):
        assert convert(context, report=ConversionReport())
    body = gemini.to_gemini(context, report=ConversionReport())
    assert body["systemInstruction"]["parts"][0]["text"] == "You are a coding agent."
    chat = openai_chat.to_openai_chat(session.build_context(), report=ConversionReport())
    assert chat[0]["role"] == "user"
    assert "traced to the tokenizer" in chat[0]["content"]


def test_answer_unanswered_tool_calls() -> None:
    call_a = am.ToolCallContent("c_a", "f")
    call_b = am.ToolCallContent("c_b", "g")
    calls = am.AssistantMessage([am.TextContent("x"), call_a, call_b], stop_reason="tool_calls", id="a1", timestamp=1)
    result_a = am.ToolMessage.from_result(am.ToolResultContent("c_a", "ok"), id="t1", timestamp=1)
    history = [user("u1"), calls, result_a, assistant("a2")]
    repaired = answer_unanswered_tool_calls(history)
    assert ids(repaired) == ["u1", "a1", "t1", "a1:unanswered", "a2"]
    synthetic = repaired[3]
    assert isinstance(synthetic, am.ToolMessage)
    (result,) = synthetic.results()
    assert (result.id, result.is_error, result.name) == ("c_b", True, "g")
    dropped = answer_unanswered_tool_calls(history, mode="drop")
    assert [c.id for c in dropped[1].tool_calls()] == ["c_a"]  # type: ignore[union-attr]
    only_b = am.AssistantMessage([call_b], stop_reason="tool_calls", id="a3", timestamp=1)
    assert ids(answer_unanswered_tool_calls([user("u"), only_b], mode="drop")) == ["u"]
    assert answer_unanswered_tool_calls([user("u"), only_b])[-1].id == "a3:unanswered"


def test_drop_empty_and_strip_trailing_unusable_assistant() -> None:
    empty = am.AssistantMessage([am.TextContent("")], id="e", timestamp=1)
    failed = am.AssistantMessage([], error="overloaded", stop_reason="error", id="f", timestamp=1)
    aborted = am.AssistantMessage([am.TextContent("half")], stop_reason="abort", id="ab", timestamp=1)
    assert ids(drop_empty_assistant_messages([user("u"), empty, assistant("a")])) == ["u", "a"]
    assert ids(strip_trailing_unusable_assistant([user("u"), assistant("a"), aborted, failed])) == ["u", "a"]
    assert ids(strip_trailing_unusable_assistant([user("u"), failed, user("u2")])) == ["u", "f", "u2"]
    assert ids(repair_history([user("u"), empty, assistant("a"), failed])) == ["u", "a"]


def test_the_tree_display_order() -> None:
    session = Session([user("u1"), assistant("a1"), user("u2")])
    session.branch("a1", summary="left u2", id="b1", timestamp=1)
    session.append(user("u3"))
    assert [(depth, entry.id) for depth, entry in session.tree_lines()] == [
        (0, "u1"),
        (0, "a1"),
        (1, "u2"),
        (1, "b1"),
        (1, "u3"),
    ]
