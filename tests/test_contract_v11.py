"""Contract v1.1 in Python: hosted tool calls and results, citations, logprobs, stop sequence, usage details."""

from __future__ import annotations

import json
from typing import Any

import pytest
from samples import hosted_content

import agentmsg as am
from agentmsg import dict_form
from agentmsg.streaming import AssistantMessageChunk, StreamEvent, events_from_message, fold
from agentmsg.v1 import content_pb2

SERVER_TOOL_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}


def original(block: dict[str, Any], provider: str = "anthropic") -> am.ProviderContent:
    return am.ProviderContent.from_block(provider, block)


def web_search_pair() -> tuple[am.HostedToolCallContent, am.HostedToolResultContent]:
    call = am.HostedToolCallContent(
        "srvtoolu_1", "web_search", '{"query": "x"}', kind="web_search", original=original(SERVER_TOOL_USE)
    )
    result = am.HostedToolResultContent(
        "srvtoolu_1",
        kind=am.HostedToolKind.WEB_SEARCH,
        search_results=[am.SearchResult("https://a.test/", "A", page_age="1 day", encrypted_content="Eq")],
        queries=["x"],
    )
    return call, result


def assistant() -> am.AssistantMessage:
    call, result = web_search_pair()
    cited = am.TextContent(
        "A says so.",
        citations=[am.Citation.web("https://a.test/", "A", cited_text="so", start_index=2, end_index=9)],
        logprobs=[am.TokenLogprob("A", -0.5, bytes=b"A", token_id=7, top_logprobs=[am.TokenLogprob("B", -2.0)])],
    )
    return am.AssistantMessage(
        [call, result, cited],
        usage=am.Usage(
            input_tokens=10,
            output_tokens=5,
            cache_write_tokens=30,
            cache_write_5m_tokens=10,
            cache_write_1h_tokens=20,
            hosted_tool_requests={"web_search": 1, "web_fetch": 0},
        ),
        stop_reason="stop",
        stop_reason_raw="stop_sequence",
        stop_sequence="END",
        id="a-v11",
        timestamp=1_700_000_000.5,
    )


# --- hosted tool calls ------------------------------------------------------


def test_hosted_tool_call_reads_its_fields_and_keeps_the_original() -> None:
    call, _ = web_search_pair()
    assert (call.id, call.name, call.input, call.kind) == ("srvtoolu_1", "web_search", '{"query": "x"}', "web_search")
    assert call.input_value == {"query": "x"}
    assert call.input_error is None
    assert call.status is None
    assert call.server == ""
    assert call.signature == ""
    kept = call.original
    assert kept is not None
    assert kept.block() == SERVER_TOOL_USE
    assert kept.provider == "anthropic"
    assert call.type == "hosted_tool_call"
    match call:
        case am.HostedToolCallContent(id, name, text):
            assert (id, name, text) == ("srvtoolu_1", "web_search", '{"query": "x"}')
        case _:
            pytest.fail("no match")


def test_hosted_tool_call_input_from_a_mapping_is_compact_json_and_bad_text_is_kept() -> None:
    assert am.HostedToolCallContent("i", "n", {"a": 1, "b": "é"}).input == '{"a":1,"b":"é"}'
    call = am.HostedToolCallContent("i", "n", '{"a": ', kind="mcp", server="github", status="awaiting_approval")
    assert call.input == '{"a": '
    assert call.input_error is not None
    assert "invalid JSON" in call.input_error
    with pytest.raises(am.ToolArgumentsError):
        _ = call.input_value
    assert (call.kind, call.server, call.status) == (
        am.HostedToolKind.MCP,
        "github",
        am.HostedToolStatus.AWAITING_APPROVAL,
    )


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"kind": "telepathy"}, "kind", "enum"),
        ({"status": "done"}, "status", "enum"),
        ({"original": {"type": "x"}}, "original", "type"),
        ({"server": 3}, "server", "type"),
    ],
)
def test_hosted_tool_call_bad_input_names_the_field(kwargs: dict[str, Any], field: str, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        am.HostedToolCallContent("i", "n", **kwargs)
    (violation,) = info.value.violations
    assert (violation.field, violation.rule_id) == (field, rule)


def test_a_newer_peers_hosted_kind_reads_other() -> None:
    pb = content_pb2.Content(hosted_tool_call=content_pb2.HostedToolCallContent(kind=99))  # type: ignore[arg-type]
    block = am.content_from_proto(pb)
    assert isinstance(block, am.HostedToolCallContent)
    assert block.kind is am.HostedToolKind.OTHER
    assert am.HostedToolCallContent.from_bytes(block.to_bytes()).pb.hosted_tool_call.kind == 99


# --- hosted tool results ----------------------------------------------------


def test_hosted_tool_result_search_body() -> None:
    _, result = web_search_pair()
    assert result.body == "search_results"
    (hit,) = result.search_results
    assert (hit.url, hit.title, hit.page_age, hit.encrypted_content, hit.score) == (
        "https://a.test/",
        "A",
        "1 day",
        "Eq",
        None,
    )
    assert result.queries == ("x",)
    assert result.code_execution is None
    assert result.web_fetch is None
    assert not result.is_error
    assert result.error_code is None
    assert result.error_message is None


def test_hosted_tool_result_search_with_no_results_keeps_the_body() -> None:
    empty = am.HostedToolResultContent("c", search_results=[])
    assert empty.body == "search_results"
    assert empty.search_results == ()
    assert am.HostedToolResultContent("c", queries=["q"]).body == "search_results"
    assert am.HostedToolResultContent("c").body is None


def test_hosted_tool_result_code_execution_and_content() -> None:
    output = am.CodeExecutionOutput("4\n", "", 0, files=["file_1", am.CodeExecutionFile(url="https://a.test/p.png")])
    result = am.HostedToolResultContent(
        "c2",
        [am.ImageContent.from_url("https://a.test/p.png")],
        kind="code_execution",
        code_execution=output,
        status="completed",
        status_raw="OUTCOME_OK",
    )
    code = result.code_execution
    assert code is not None
    assert (code.stdout, code.stderr, code.return_code) == ("4\n", "", 0)
    assert [(f.file_id, f.url) for f in code.files] == [("file_1", ""), ("", "https://a.test/p.png")]
    assert isinstance(result.blocks[0], am.ImageContent)
    assert (result.status, result.status_raw) == (am.HostedToolStatus.COMPLETED, "OUTCOME_OK")
    assert am.CodeExecutionOutput(encrypted_stdout="EqQB", return_code=1).return_code == 1
    assert am.CodeExecutionOutput().return_code is None


def test_hosted_tool_result_web_fetch_and_error() -> None:
    fetched = am.HostedToolResultContent(
        "c3",
        [am.DocumentContent.from_text("hello")],
        kind="web_fetch",
        web_fetch=am.WebFetchOutput("https://a.test/", "2026-01-02T03:04:05Z"),
    )
    assert fetched.web_fetch is not None
    assert fetched.web_fetch.retrieved_at == "2026-01-02T03:04:05Z"
    failed = am.HostedToolResultContent("c4", "server down", kind="mcp", error_code="unavailable")
    assert failed.is_error
    assert (failed.error_code, failed.error_message) == ("unavailable", "")
    assert failed.text == "server down"


def test_hosted_tool_result_refuses_two_bodies_and_assistant_only_blocks() -> None:
    with pytest.raises(am.ValidationError) as info:
        am.HostedToolResultContent("c", search_results=[], web_fetch=am.WebFetchOutput("https://a.test/"))
    assert info.value.violations[0].rule_id == "exclusive"
    with pytest.raises(am.ValidationError) as info:
        am.HostedToolResultContent("c", [am.ToolCallContent("t", "n")])
    assert info.value.violations[0].rule_id == "hosted_tool_result.content.kind"
    with pytest.raises(am.ValidationError) as info:
        am.HostedToolResultContent("c", search_results=[am.SearchResult(score=float("nan"))])
    assert info.value.violations[0].rule_id == "double.finite"
    with pytest.raises(am.ValidationError) as info:
        am.HostedToolResultContent("c", search_results=["https://a.test/"])  # type: ignore[list-item]
    assert info.value.violations[0].field == "search_results[0]"


def test_hosted_blocks_belong_to_assistant_messages_only() -> None:
    call, result = web_search_pair()
    for block in (call, result):
        with pytest.raises(am.ValidationError) as info:
            am.UserMessage([block])  # type: ignore[list-item]
        assert info.value.violations[0].rule_id == "user.content.kind"
        with pytest.raises(am.ValidationError):
            am.ToolResultContent("t", [block])  # type: ignore[list-item]
    message = am.AssistantMessage([call, result])
    assert message.hosted_tool_calls() == [call]
    assert message.hosted_tool_results() == [result]
    assert message.tool_calls() == []  # a hosted call is not the application's to run


# --- citations and logprobs -------------------------------------------------


def test_citation_kinds() -> None:
    web = am.Citation.web("https://a.test/", "A", result_index=3, confidence=0.5, start_index=0, end_index=4)
    assert (web.source_kind, web.url, web.title, web.result_index, web.confidence) == (
        "web",
        "https://a.test/",
        "A",
        3,
        0.5,
    )
    assert (web.start_index, web.end_index, web.location) == (0, 4, None)
    doc = am.Citation.document(2, title="Atlas", pages=(1, 3), cited_text="p")
    assert (doc.source_kind, doc.document_index, doc.title, doc.location) == ("document", 2, "Atlas", ("pages", 1, 3))
    assert doc.start_index is None
    assert doc.end_index is None
    found = am.Citation.search_result("kb://1", title="KB", search_result_index=0, blocks=(0, 2))
    assert (found.source, found.search_result_index, found.location) == ("kb://1", 0, ("blocks", 0, 2))
    file = am.Citation.file("file_1", filename="a.md", container_id="cntr", start_index=5, end_index=5)
    assert (file.file_id, file.filename, file.container_id, file.title) == ("file_1", "a.md", "cntr", "a.md")
    only = am.Citation(original=original({"type": "future_citation"}, "openai"))
    assert only.source_kind is None
    assert only.original is not None
    assert only.original.block_type == "future_citation"
    assert am.Citation.document(0, file_id="f").file_id == "f"


@pytest.mark.parametrize(
    ("build", "rule"),
    [
        (am.Citation, "citation.source"),
        (lambda: am.Citation.web("u", start_index=4, end_index=2), "citation.span"),
        (lambda: am.Citation.web("u", confidence=2), "double.gte_lte"),
        (lambda: am.Citation.document(0, chars=(5, 1)), "index_range.order"),
        (lambda: am.Citation.document(0, chars=(1, 2), pages=(1, 2)), "exclusive"),
        (lambda: am.Citation.document(-1), "int32.gte"),
        (lambda: am.Citation.web("u", start_index=-1), "int32.gte"),
        (lambda: am.Citation.search_result("s", blocks=(1,)), "type"),  # type: ignore[arg-type]
    ],
)
def test_citation_bad_input(build: Any, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        build()
    assert rule in {v.rule_id for v in info.value.violations}


def test_text_carries_citations_and_logprobs() -> None:
    block = assistant().contents[2]
    assert isinstance(block, am.TextContent)
    (citation,) = block.citations
    assert (citation.url, citation.cited_text, citation.start_index, citation.end_index) == (
        "https://a.test/",
        "so",
        2,
        9,
    )
    (token,) = block.logprobs
    assert (token.token, token.logprob, token.bytes, token.token_id) == ("A", -0.5, b"A", 7)
    (alt,) = token.top_logprobs
    assert (alt.token, alt.bytes, alt.token_id, alt.top_logprobs) == ("B", None, None, ())
    match block:
        case am.TextContent(text, signature):
            assert (text, signature) == ("A says so.", "")
    assert am.TextContent("plain").citations == ()
    assert am.TextContent("plain").logprobs == ()
    with pytest.raises(am.ValidationError) as info:
        am.TextContent("x", citations=["https://a.test/"])  # type: ignore[list-item]
    assert info.value.violations[0].field == "citations[0]"
    with pytest.raises(am.ValidationError):
        am.TokenLogprob("x", "low")  # type: ignore[arg-type]


# --- messages, usage, encodings ---------------------------------------------


def test_stop_sequence_and_usage_details() -> None:
    message = assistant()
    assert message.stop_sequence == "END"
    usage = message.usage
    assert usage is not None
    assert (usage.cache_write_5m_tokens, usage.cache_write_1h_tokens) == (10, 20)
    assert usage.hosted_tool_requests == {"web_search": 1, "web_fetch": 0}
    assert {"cache_write_5m_tokens", "cache_write_1h_tokens", "hosted_tool_requests"} <= usage.reported
    assert "hosted_tool_requests" not in am.Usage(input_tokens=1).reported
    assert usage.known("cache_write_1h_tokens") == 20
    assert am.Usage().known("cache_write_5m_tokens") is None


@pytest.mark.parametrize(
    ("requests", "field", "rule"),
    [
        ({"Web Search": 1}, "hosted_tool_requests['Web Search']", "string.pattern"),
        ({"web_search": -1}, "hosted_tool_requests['web_search']", "int64.gte"),
        ({"web_search": 1.5}, "hosted_tool_requests['web_search']", "type"),
        ({1: 1}, "hosted_tool_requests", "type"),
    ],
)
def test_usage_hosted_tool_requests_bad_input(requests: Any, field: str, rule: str) -> None:
    with pytest.raises(am.ValidationError) as info:
        am.Usage(hosted_tool_requests=requests)
    (violation,) = info.value.violations
    assert (violation.field, violation.rule_id) == (field, rule)


def test_every_encoding_round_trips() -> None:
    message = assistant()
    assert am.AssistantMessage.from_bytes(message.to_bytes(), validate=True) == message
    assert am.AssistantMessage.from_json(message.to_json(), validate=True) == message
    assert am.AssistantMessage.from_proto(message.to_proto()) == message
    data = message.to_dict()
    assert json.loads(json.dumps(data)) == data  # plain JSON
    assert am.AssistantMessage.from_dict(data) == message
    for block in (*message.contents, *hosted_content()):
        assert type(block).from_dict(block.to_dict()) == block
        assert type(block).from_bytes(block.to_bytes()) == block


def test_seed1_dict_shapes() -> None:
    call, result, text = (block.to_dict() for block in assistant().contents)
    assert call == {
        "type": "hosted_tool_call",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": '{"query": "x"}',
        "kind": "web_search",
        "original": {
            "provider": "anthropic",
            "type": "server_tool_use",
            "json": json.dumps(SERVER_TOOL_USE, separators=(",", ":")),
        },
    }
    assert result["search_results"]["queries"] == ["x"]
    assert result["search_results"]["results"][0]["page_age"] == "1 day"
    assert text["citations"][0]["web"] == {"url": "https://a.test/", "title": "A"}
    assert text["logprobs"][0]["token_id"] == 7
    data = assistant().to_dict()
    assert data["stop_sequence"] == "END"
    assert data["usage"]["hosted_tool_requests"] == {"web_search": 1, "web_fetch": 0}
    assert data["usage"]["cache_write_1h_tokens"] == 20


def test_seed1_dict_bad_nested_data_names_the_path() -> None:
    with pytest.raises(am.ValidationError) as info:
        dict_form.content_from_dict({"type": "text", "content": "x", "citations": [{"web": {"url": 3}}]})
    assert info.value.violations[0].field.startswith("citations[0]")
    with pytest.raises(am.ValidationError) as info:
        dict_form.content_from_dict({"type": "text", "citations": [{"startIndex": 3, "endIndex": 1, "web": {}}]})
    assert info.value.violations[0].rule_id == "citation.span"
    with pytest.raises(am.ValidationError) as info:
        dict_form.content_from_dict({"type": "hosted_tool_result", "search_results": {"results": [{"nope": 1}]}})
    assert info.value.violations[0].field == "search_results"


# --- streaming --------------------------------------------------------------


def test_fold_builds_hosted_calls_citations_and_logprobs() -> None:
    call, result = web_search_pair()
    opening = am.HostedToolCallContent("srvtoolu_1", "web_search", kind="web_search", original=call.original)
    citation = am.Citation.web("https://a.test/", "A")
    tokens = [am.TokenLogprob("A", -0.1), am.TokenLogprob(" says", -0.2)]
    events = [
        StreamEvent.message_start("m1"),
        StreamEvent.block_start(0, opening),
        StreamEvent.arguments_delta(0, '{"query"'),
        StreamEvent.arguments_delta(0, ': "x"}'),
        StreamEvent.block_stop(0),
        StreamEvent.block_start(1, result),
        StreamEvent.block_stop(1),
        StreamEvent.block_start(2, am.TextContent("")),
        StreamEvent.citation_delta(2, citation),
        StreamEvent.text_delta(2, "A says"),
        StreamEvent.logprobs_delta(2, tokens),
        StreamEvent.block_stop(2),
        StreamEvent.message_stop("stop", "stop_sequence", stop_sequence="END"),
    ]
    message = fold(events)
    folded_call, folded_result, text = message.contents
    assert folded_call == call
    assert folded_result == result
    assert isinstance(text, am.TextContent)
    assert text.content == "A says"
    assert text.citations == (citation,)
    assert text.logprobs == tuple(tokens)
    assert message.stop_sequence == "END"
    chunks = sum((AssistantMessageChunk.from_event(e) for e in events), AssistantMessageChunk())
    assert chunks.to_message().contents == message.contents


def test_fold_refuses_deltas_of_the_wrong_kind() -> None:
    _, result = web_search_pair()
    accumulator = am.streaming.StreamAccumulator()
    accumulator.add(StreamEvent.message_start("m"))
    accumulator.add(StreamEvent.block_start(0, result))
    with pytest.raises(am.streaming.StreamProtocolError, match="cannot go to block 0"):
        accumulator.add(StreamEvent.arguments_delta(0, "{}"))
    accumulator.add(StreamEvent.block_start(1, am.ThinkingContent("")))
    with pytest.raises(am.streaming.StreamProtocolError, match="citation delta cannot go"):
        accumulator.add(StreamEvent.citation_delta(1, am.Citation.web("u")))


def test_fold_reports_hosted_input_that_is_not_json() -> None:
    accumulator = am.streaming.StreamAccumulator()
    accumulator.extend(
        [
            StreamEvent.message_start("m"),
            StreamEvent.block_start(0, am.HostedToolCallContent("h", "web_search")),
            StreamEvent.arguments_delta(0, '{"q": '),
            StreamEvent.block_stop(0),
            StreamEvent.message_stop("stop"),
        ]
    )
    message = accumulator.finish()
    assert message.hosted_tool_calls()[0].input == '{"q": '
    assert any("input kept verbatim" in issue for issue in accumulator.issues)


@pytest.mark.parametrize("chunk_size", [None, 3])
def test_events_from_message_replays_v11_content(chunk_size: int | None) -> None:
    message = assistant()
    events = events_from_message(message, chunk_size=chunk_size)
    assert fold(events) == message
    kinds = {e.pb.block_delta.WhichOneof("delta") for e in events if e.kind == "block_delta"}
    assert {"citation", "logprobs", "tool_call", "text"} <= kinds


def test_chunk_addition_keeps_tool_call_fragments_apart_from_text() -> None:
    text = AssistantMessageChunk.from_event(StreamEvent.block_start(0, am.TextContent("")))
    fragment = AssistantMessageChunk.from_event(StreamEvent.arguments_delta(0, "{}"))
    with pytest.raises(am.streaming.StreamProtocolError, match="cannot merge tool-call arguments"):
        _ = text + fragment


def test_tool_call_provider_extra_round_trips_in_every_form() -> None:
    extra = am.ProviderContent.from_block("anthropic", {"type": "tool_use", "caller": {"type": "direct"}})
    call = am.ToolCallContent("t1", "f", {"a": 1}, provider_extra=extra)
    assert call.provider_extra == extra
    assert am.ToolCallContent("t2", "f").provider_extra is None
    assert am.ToolCallContent.from_dict(call.to_dict()) == call
    assert call.to_dict()["provider_extra"]["type"] == "tool_use"
    assert am.ToolCallContent.from_bytes(call.to_bytes()) == call
    with pytest.raises(am.ValidationError) as info:
        am.ToolCallContent("t3", "f", provider_extra={"type": "x"})  # type: ignore[arg-type]
    assert info.value.violations[0].field == "provider_extra"


def test_document_context_is_kept_in_every_form() -> None:
    document = am.DocumentContent.from_text("The sky is blue.", title="Sky").with_context("A note.")
    assert (document.context, document.title, document.text()) == ("A note.", "Sky", "The sky is blue.")
    assert am.DocumentContent.from_text("x").context == ""
    assert am.DocumentContent.from_dict(document.to_dict()) == document
    assert document.to_dict()["context"] == "A note."
    assert am.DocumentContent.from_json(document.to_json()) == document
    with pytest.raises(am.ValidationError):
        document.with_context(3)  # type: ignore[arg-type]


def test_assistant_provider_extra_round_trips_in_every_form() -> None:
    extra = am.ProviderContent.from_block(
        "anthropic", {"type": "message", "container": {"id": "container_011CaNRhtVsGiXZx1CgSETLH"}}
    )
    message = am.AssistantMessage.text("Done.", provider_extra=extra)
    assert message.provider_extra == extra
    assert am.AssistantMessage.text("x").provider_extra is None
    as_dict = message.to_dict()
    assert as_dict["provider_extra"] == {"provider": "anthropic", "type": "message", "json": extra.json}
    assert am.AssistantMessage.from_dict(as_dict) == message
    assert am.AssistantMessage.from_bytes(message.to_bytes()) == message
    assert am.AssistantMessage.from_json(message.to_json()) == message
    chunk = AssistantMessageChunk.from_message(message)
    assert chunk.to_message() == message
    with pytest.raises(am.ValidationError) as info:
        am.AssistantMessage.from_dict({**as_dict, "provider_extra": {**as_dict["provider_extra"], "json": "[]"}})
    assert "provider_extra" in str(info.value)
