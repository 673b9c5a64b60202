"""The rules every converter shares."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import agentmsg as am
from agentmsg.providers import _common as common
from agentmsg.providers import gemini, openai_chat, openai_responses


def test_tool_id_map_keeps_good_ids_and_rewrites_bad_ones_stably() -> None:
    report = common.ConversionReport()
    ids = common.ToolIdMap(report=report)
    assert ids("toolu_01A-b") == "toolu_01A-b"
    bad = "call:1/weird id"
    safe = ids(bad)
    assert safe != bad
    assert common.ToolIdMap()(bad) == safe  # stable across conversations
    assert ids(bad) == safe
    assert report.id_map == {safe: bad}
    assert common.restore_id(safe, report.id_map) == bad
    assert common.restore_id("toolu_01A-b", report.id_map) == "toolu_01A-b"
    # Distinct ids stay distinct even when their safe characters agree.
    assert ids("a:b") != ids("a/b")
    assert ids("x" * 100) != ids("x" * 101)
    assert len(ids("x" * 100)) <= 64


def test_may_replay_needs_matching_provenance() -> None:
    prov = am.Provenance("anthropic", "anthropic-messages", "claude-a", "msg_1")
    assert common.may_replay(prov, "anthropic", "anthropic-messages")
    assert common.may_replay(prov, "anthropic", "anthropic-messages", "claude-a")
    assert not common.may_replay(prov, "anthropic", "anthropic-messages", "claude-b")
    assert not common.may_replay(prov, "google", "google-generative-ai")
    assert not common.may_replay(prov, "anthropic", "bedrock-converse")
    assert not common.may_replay(None, "anthropic", "anthropic-messages")


def test_session_messages_are_projected_by_template_or_refused() -> None:
    compaction = am.CompactionSummaryMessage("Earlier: hello.", 10, id="k")
    projected = common.project_session_message(compaction, "project", "[0]")
    assert isinstance(projected, am.UserMessage)
    assert projected.id == "k"
    assert projected.text_content() == common.COMPACTION_SUMMARY_TEMPLATE.format(summary="Earlier: hello.")
    branch = common.project_session_message(am.BranchSummaryMessage("Went left."), "project", "[1]")
    assert branch is not None
    assert "<summary>\nWent left.\n</summary>" in branch.text_content()
    custom = common.project_session_message(am.CustomMessage("note", [am.TextContent("hi")]), "project", "[2]")
    assert custom is not None
    assert custom.text_content() == '<custom type="note">\nhi\n</custom>'
    assert common.project_session_message(am.UserMessage.text("x"), "project", "[3]") is None
    with pytest.raises(am.ValidationError) as info:
        common.project_session_message(compaction, "refuse", "[4]")
    assert (info.value.violations[0].field, info.value.violations[0].rule_id) == ("[4]", "session_message")


def test_reporter_reports_raises_or_warns_never_silent() -> None:
    report = common.ConversionReport()
    reporter = common.Reporter("x", report, strict=False)
    reporter.loss("[0].contents[1]", "audio", "x has no audio")
    reporter.finish()
    assert [str(loss) for loss in report.losses] == ["[0].contents[1]: audio dropped: x has no audio"]
    assert bool(report)
    strict = common.Reporter("x", None, strict=True)
    strict.loss("[1]", "signature", "no place")
    with pytest.raises(common.ConversionError, match="x cannot hold 1 item"):
        strict.finish()
    quiet = common.Reporter("x", None, strict=False)
    quiet.loss("[2]", "thing", "why")
    with pytest.warns(common.ConversionWarning, match="1 item"):
        quiet.finish()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        common.Reporter("x", None, strict=False).finish()  # nothing lost: nothing said


V11_RESPONSE_FIELDS = {
    "stop_sequence",
    "provider_extra",
    "usage.cache_write_5m_tokens",
    "usage.cache_write_1h_tokens",
    "usage.hosted_tool_requests",
}


@pytest.mark.parametrize(
    "writer",
    [
        pytest.param(openai_chat.to_openai_chat_response, id="openai_chat"),
        pytest.param(openai_responses.to_openai_responses_response, id="openai_responses"),
        pytest.param(gemini.to_gemini_response, id="gemini"),
    ],
)
def test_response_writers_report_the_v11_fields_they_have_no_place_for(writer: Any) -> None:
    message = am.AssistantMessage(
        [am.TextContent("Done.")],
        stop_reason=am.StopReason.STOP,
        stop_reason_raw="stop_sequence",
        stop_sequence="END",
        usage=am.Usage(
            input_tokens=10,
            output_tokens=2,
            cache_write_tokens=8,
            cache_write_5m_tokens=5,
            cache_write_1h_tokens=3,
            hosted_tool_requests={"web_search": 1},
        ),
        provider_extra=am.ProviderContent.from_block("anthropic", {"type": "message", "container": {"id": "c_1"}}),
    )
    report = common.ConversionReport()
    writer(message, report=report)
    assert {loss.path for loss in report.losses} >= V11_RESPONSE_FIELDS
    # A message without them reports none of them.
    plain = common.ConversionReport()
    writer(am.AssistantMessage([am.TextContent("Done.")], stop_reason=am.StopReason.STOP), report=plain)
    assert not {loss.path for loss in plain.losses} & V11_RESPONSE_FIELDS


@pytest.mark.parametrize(
    "writer",
    [
        pytest.param(openai_chat.to_openai_chat, id="openai_chat"),
        pytest.param(openai_responses.to_openai_responses, id="openai_responses"),
        pytest.param(gemini.to_gemini, id="gemini"),
    ],
)
def test_request_writers_report_a_document_context_they_cannot_send(writer: Any) -> None:
    document = am.DocumentContent(b"%PDF-1.4 report", media_type="application/pdf", filename="r.pdf")
    message = am.UserMessage([am.TextContent("Summarise."), document.with_context("Q3 figures, unaudited")])
    report = common.ConversionReport()
    writer([message], report=report)
    assert any(loss.what == "document context" for loss in report.losses)
    without = common.ConversionReport()
    writer([am.UserMessage([am.TextContent("Summarise."), document])], report=without)
    assert not any(loss.what == "document context" for loss in without.losses)
