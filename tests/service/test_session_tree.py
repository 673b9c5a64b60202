"""Session trees through the service: branch, compact, build the context; tail shows the tree."""

from __future__ import annotations

import pytest
from conftest import ServerThread

import agentmsg as am
from agentmsg.cli import main
from agentmsg.service import Client
from agentmsg.sessions import Session


def entry(kind: type[am.UserMessage] | type[am.AssistantMessage], entry_id: str, **kw: object) -> am.BaseMessage:
    if kind is am.AssistantMessage:
        return am.AssistantMessage.text(entry_id, stop_reason="stop", id=entry_id, timestamp=1, **kw)  # type: ignore[arg-type]
    return am.UserMessage.text(entry_id, id=entry_id, timestamp=1, **kw)  # type: ignore[arg-type]


def test_branch_compact_and_context_through_the_service(
    server: ServerThread, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    client.append_many(
        "tree",
        [
            entry(am.UserMessage, "u1"),
            entry(am.AssistantMessage, "a1"),
            entry(am.UserMessage, "u2"),
            entry(am.AssistantMessage, "a2"),
        ],
    )
    branched = client.branch("tree", "a1", "u2 went nowhere", entry_id="b1")
    assert branched.offset == 5
    assert isinstance(branched.message, am.BranchSummaryMessage)
    assert (branched.message.parent_id, branched.message.from_id) == ("a1", "a2")
    client.append("tree", entry(am.UserMessage, "u3"))
    assert [m.id for m in client.build_context("tree")] == ["u1", "a1", "b1", "u3"]
    assert [m.id for m in client.build_context("tree", leaf="a2")] == ["u1", "a1", "u2", "a2"]
    state = am.ProviderState("openai", "ENC", api="openai-responses", type="compaction")
    compacted = client.compact(
        "tree", "all of it", first_kept_entry_id="u3", tokens_before=500, entry_id="k1", provider_state=state
    )
    assert compacted.message.parent_id == ""  # follows the last entry
    context = client.build_context("tree")
    assert [m.id for m in context] == ["k1", "u3"]
    # The stored entries rebuild the same session locally.
    local = Session([item.message for item in client.history("tree")])
    assert [m.id for m in local.build_context()] == ["k1", "u3"]
    assert main(["tail", "tree", "--tree", "--target", server.target]) == 0
    out = capsys.readouterr().out
    assert "* u1" in out
    assert "    u2" in out  # off the path, indented under the fork
    assert "* " in out


def test_tree_bad_input_is_refused_and_changes_nothing(client: Client) -> None:
    client.append_many("t2", [entry(am.UserMessage, "u1"), entry(am.AssistantMessage, "a1")])
    with pytest.raises(am.NotFoundError, match="no such entry"):
        client.branch("t2", "ghost", "x")
    with pytest.raises(am.ValidationError) as info:
        client.append("t2", entry(am.UserMessage, "u2", parent_id="ghost"))
    assert info.value.violations[0].rule_id == "session.parent"
    with pytest.raises(am.ValidationError) as info:
        client.compact("t2", "s", first_kept_entry_id="nope")
    assert info.value.violations[0].rule_id == "session.first_kept_on_path"
    with pytest.raises(am.NotFoundError):
        client.compact("empty-session", "s")
    with pytest.raises(am.NotFoundError):
        client.build_context("t2", leaf="ghost")
    assert [item.message.id for item in client.history("t2")] == ["u1", "a1"]
