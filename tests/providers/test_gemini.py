"""The Gemini ``generateContent`` form (``agentmsg.providers.gemini``): goldens, round trips, losses, errors.

Golden payloads live in ``tests/golden/gemini/*.json``; each names, under
``_source``, the ai.google.dev sections and the ``googleapis/googleapis``
v1beta proto messages it follows. No Gemini SDK is installed, so payloads are
checked against a schema written here from ``content.proto`` and
``generative_service.proto`` (:func:`check_request`, :func:`check_response`)
and compared as exact dicts.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from samples import PDF, WAV, png_bytes

import agentmsg as am
from agentmsg.providers import gemini, openai_chat
from agentmsg.providers._common import COMPACTION_SUMMARY_TEMPLATE, ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.gemini import (
    API,
    PLACEHOLDER_SIGNATURES,
    PROVIDER,
    from_gemini,
    from_gemini_response,
    generated_call_id,
    to_gemini,
    to_gemini_response,
)
from agentmsg.v1 import message_pb2

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "gemini"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
PROV = am.Provenance(PROVIDER, API, "gemini-3-flash-preview", "")
SIG_A = "ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLtehTcOVV6V0n32j5M="
SIG_B = "PiPoFgA5WUoziU9lZOGxNIu9egCI1CxKy3PurtWcAJ0/8XJs1EN/HzDiaPk="
# A part agentmsg cannot hold (video metadata), kept verbatim as a provider block of its kind.
VIDEO_CLIP = '{"fileData":{"mimeType":"video/mp4","fileUri":"gs://b/v.mp4"},"videoMetadata":{"startOffset":"1s"}}'
REQUEST_GOLDENS = [
    "text_multiturn.json",
    "media.json",
    "parallel_function_calls.json",
    "calls_without_ids.json",
    "thinking.json",
    "function_response_error_and_media.json",
    "snake_case_curl.json",
]
RESPONSE_GOLDENS = [
    "response_function_call.json",
    "response_max_tokens.json",
    "response_blocked_prompt.json",
    "response_grounding.json",
    "response_code_execution.json",
]


def load(name: str) -> dict[str, Any]:
    """A golden document, its ``_source`` checked (it must name the docs it follows) and stripped."""
    doc: dict[str, Any] = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["docs"]
    assert all(line.startswith("https://ai.google.dev/") for line in source["docs"])
    assert source["reference"]
    return doc


# --- the REST schema, written from content.proto / generative_service.proto (v1beta) -----------------

_PART_DATA = {
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "toolCall",
    "toolResponse",
}
_PART_META = {"thought", "thoughtSignature", "mediaResolution", "videoMetadata", "partMetadata"}
_LEVELS = {"MEDIA_RESOLUTION_LOW", "MEDIA_RESOLUTION_MEDIUM", "MEDIA_RESOLUTION_HIGH"}


def _b64(value: Any) -> None:
    """ProtoJSON ``bytes``: standard or URL-safe base64, padding optional."""
    assert isinstance(value, str)
    text = value.replace("-", "+").replace("_", "/")
    base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def _keys(obj: Any, allowed: set[str], required: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    assert isinstance(obj, dict), obj
    assert set(obj) <= allowed, set(obj) - allowed
    assert required <= set(obj), required - set(obj)


def _check_blob(blob: Any) -> None:
    _keys(blob, {"mimeType", "data"}, {"mimeType", "data"})
    assert isinstance(blob["mimeType"], str)
    assert "/" in blob["mimeType"]
    _b64(blob["data"])


def _check_part(part: Any) -> None:
    _keys(part, _PART_DATA | _PART_META)
    data = set(part) & _PART_DATA
    assert len(data) == 1, part  # Part.data is a oneof
    if "text" in part:
        assert isinstance(part["text"], str)
    if "thought" in part:
        assert part["thought"] is True
        assert "text" in part
    if "thoughtSignature" in part:
        _b64(part["thoughtSignature"])
    if "mediaResolution" in part:
        _keys(part["mediaResolution"], {"level"}, {"level"})
        assert part["mediaResolution"]["level"] in _LEVELS
    if "inlineData" in part:
        _check_blob(part["inlineData"])
    if "fileData" in part:
        _keys(part["fileData"], {"mimeType", "fileUri"}, {"fileUri"})
    if "functionCall" in part:
        call = part["functionCall"]
        _keys(call, {"id", "name", "args"}, {"name"})
        assert isinstance(call["args"], dict)
    if "functionResponse" in part:
        response = part["functionResponse"]
        _keys(response, {"id", "name", "response", "parts"}, {"name", "response"})
        assert isinstance(response["response"], dict)
        for inner in response.get("parts", []):
            _keys(inner, {"inlineData"}, {"inlineData"})
            _check_blob(inner["inlineData"])


def _check_content(content: Any, roles: set[str]) -> None:
    _keys(content, {"role", "parts"}, {"role", "parts"})
    assert content["role"] in roles
    assert content["parts"]
    for part in content["parts"]:
        _check_part(part)


def check_request(payload: Any) -> None:
    """What to_gemini writes: a GenerateContentRequest body (model goes in the URL)."""
    _keys(payload, {"systemInstruction", "contents"}, {"contents"})
    if "systemInstruction" in payload:
        _keys(payload["systemInstruction"], {"parts"}, {"parts"})
        for part in payload["systemInstruction"]["parts"]:
            _keys(part, {"text"}, {"text"})
    roles = [content["role"] for content in payload["contents"]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # same-role contents are merged
    for content in payload["contents"]:
        _check_content(content, {"user", "model"})


def check_response(payload: Any) -> None:
    """What to_gemini_response writes: a GenerateContentResponse body."""
    _keys(payload, {"candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId", "createTime"})
    candidate_keys = {"content", "finishReason", "finishMessage", "index", "safetyRatings", "citationMetadata"}
    candidate_keys |= {"groundingMetadata", "urlContextMetadata", "logprobsResult", "avgLogprobs"}
    for candidate in payload.get("candidates", []):
        _keys(candidate, candidate_keys)
        if "groundingMetadata" in candidate:
            grounding_keys = {"webSearchQueries", "searchEntryPoint", "groundingChunks", "groundingSupports"}
            _keys(candidate["groundingMetadata"], grounding_keys | {"retrievalMetadata", "groundingChunkIndices"})
        if "content" not in candidate:  # a filtered answer: no content, a finish reason
            assert candidate["finishReason"]
            continue
        content = candidate["content"]
        _keys(content, {"role", "parts"}, {"role", "parts"})
        for part in content["parts"]:
            _check_part(part)
    counts = {"promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount"}
    counts |= {"totalTokenCount", "toolUsePromptTokenCount"}
    details = {"promptTokensDetails", "candidatesTokensDetails", "cacheTokensDetails", "toolUsePromptTokensDetails"}
    usage = payload.get("usageMetadata", {})
    _keys(usage, counts | details | {"trafficType", "serviceTier"})
    assert all(isinstance(v, int) and v >= 0 for k, v in usage.items() if k in counts)
    for key in details & set(usage):
        for entry in usage[key]:
            _keys(entry, {"modality", "tokenCount"}, {"modality"})


def roundtrip(messages: list[am.AgentMessage], **kwargs: Any) -> tuple[dict[str, Any], list[am.AgentMessage]]:
    """to_gemini then from_gemini, nothing lost, the payload checked."""
    report = ConversionReport()
    payload = to_gemini(messages, report=report, **kwargs)
    assert report.summary() == "nothing lost"
    check_request(payload)
    return payload, from_gemini(payload, provenance=PROV, pass_through_unknown=True)


def shape(messages: list[am.AgentMessage]) -> list[tuple[Any, ...]]:
    """What the format carries of each message: its class, its blocks, and (assistant) provenance.

    Message ids and timestamps are not in the format: they are left out here.
    """
    return [(type(m), m.contents, m.provenance if isinstance(m, am.AssistantMessage) else None) for m in messages]


def response_shape(message: am.AssistantMessage) -> tuple[Any, ...]:
    """Everything a response carries of an assistant message (not its id and timestamp)."""
    return (
        message.contents,
        message.usage,
        message.stop_reason,
        message.stop_reason_raw,
        message.error,
        message.provenance,
    )


def violations(exc: pytest.ExceptionInfo[am.ValidationError]) -> list[tuple[str, str]]:
    return [(v.field, v.rule_id) for v in exc.value.violations]


# --- goldens --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", REQUEST_GOLDENS)
def test_request_goldens_read_and_write_back_exactly(name: str) -> None:
    doc = load(name)
    messages = from_gemini(doc["payload"], provenance=PROV)
    report = ConversionReport()
    written = to_gemini(messages, report=report)
    assert written == doc.get("expected", doc["payload"])
    assert not report
    check_request(written)
    # And the agentmsg side is stable: reading what was written gives the same messages.
    assert shape(from_gemini(written, provenance=PROV)) == shape(messages)


def test_text_golden_reads_system_and_turns() -> None:
    messages = from_gemini(load("text_multiturn.json")["payload"])
    assert [type(m) for m in messages] == [am.SystemMessage, am.UserMessage, am.AssistantMessage, am.UserMessage]
    assert messages[0].contents == (am.TextContent("You are a cat."), am.TextContent("Your name is Neko."))
    assert messages[2].text_content() == "Great to meet you. What would you like to know?"
    assert messages[2].provenance is None  # a request does not say who wrote its model turns


def test_media_golden_reads_every_source() -> None:
    (message,) = from_gemini(load("media.json")["payload"])
    text, inline_png, files_api, pdf, wav, url_pdf, video = message.contents
    assert text == am.TextContent("Compare these.")
    assert inline_png == am.ImageContent(PNG, media_type="image/png", detail="high")
    assert files_api == am.ImageContent.from_file_id(
        "https://generativelanguage.googleapis.com/v1beta/files/abc-123", media_type="image/jpeg"
    )
    assert pdf == am.DocumentContent(b"%PDF-1.4\n%%EOF\n", media_type="application/pdf")
    assert wav == am.AudioContent(WAV, media_type="audio/wav")
    assert url_pdf == am.DocumentContent.from_url("https://example.com/report.pdf", media_type="application/pdf")
    assert isinstance(video, am.DocumentContent)
    assert (video.url, video.media_type) == ("gs://cloud-samples-data/video/animals.mp4", "video/mp4")


def test_parallel_calls_golden() -> None:
    user, model, tool, final = from_gemini(load("parallel_function_calls.json")["payload"], provenance=PROV)
    assert isinstance(model, am.AssistantMessage)
    calls = model.tool_calls()
    assert [(c.id, c.name, c.args, c.index) for c in calls] == [
        ("fc-power-1", "power_disco_ball", {"power": True}, 0),
        ("fc-music-2", "start_music", {"energetic": True, "loud": True}, 1),
        ("fc-lights-3", "dim_lights", {"brightness": 0.5}, 2),
    ]
    assert [c.signature for c in calls] == [SIG_A, "", ""]  # parallel calls: the first one is signed
    assert calls[1].arguments == '{"energetic":true,"loud":true}'  # re-serialised compactly, key order kept
    assert isinstance(tool, am.ToolMessage)
    assert [(r.id, r.name, r.text, r.is_error, r.index) for r in tool.results()] == [
        ("fc-power-1", "power_disco_ball", "Disco ball is spinning!", False, 0),
        ("fc-music-2", "start_music", "Starting music! energetic=True, loud=True", False, 1),
        ("fc-lights-3", "dim_lights", "Lights are now set to 50%", False, 2),
    ]
    assert isinstance(user, am.UserMessage)
    assert final.text_content() == "Let's get this party started!"


def test_calls_without_ids_get_generated_ids_and_pair_by_name_in_order() -> None:
    _, model, tool, question = from_gemini(load("calls_without_ids.json")["payload"])
    assert isinstance(model, am.AssistantMessage)
    assert isinstance(tool, am.ToolMessage)
    ids = [call.id for call in model.tool_calls()]
    assert ids == [
        generated_call_id("contents[1]", 0, "get_current_weather"),
        generated_call_id("contents[1]", 1, "get_current_weather"),
    ]
    assert all(re.fullmatch(r"call_[0-9a-f]{12}", call_id) for call_id in ids)
    assert len(set(ids)) == 2
    assert [result.id for result in tool.results()] == ids  # the earliest unanswered call of the name, in order
    assert tool.results()[1].text == '{"temperature":-3,"unit":"celsius"}'
    # A user content with responses then text splits into a tool message and a user message.
    assert question == am.UserMessage.text("And which one is warmer?", id=question.id, timestamp=question.timestamp)


def test_thinking_golden_keeps_thoughts_and_signatures() -> None:
    messages = from_gemini(load("thinking.json")["payload"], provenance=PROV)
    first = messages[1]
    assert isinstance(first, am.AssistantMessage)
    assert first.contents == (
        am.ThinkingContent("**Checking the flight**\nI should look up AA100 first."),
        am.ToolCallContent("fc-1", "check_flight", arguments='{"flight":"AA100"}', signature=SIG_B),
    )
    last = messages[-1]
    assert isinstance(last.contents[0], am.TextContent)
    assert last.contents[0].signature.startswith("GKw+")


def test_error_and_multimodal_function_responses() -> None:
    _, tool = from_gemini(load("function_response_error_and_media.json")["payload"])
    assert isinstance(tool, am.ToolMessage)
    failed, image = tool.results()
    assert failed == am.ToolResultContent("fc-a", "ENOENT: no such file", is_error=True, name="read_file")
    assert image == am.ToolResultContent(
        "fc-b",
        [am.TextContent("Here is the instrument you ordered."), am.ImageContent(PNG, media_type="image/png")],
        name="get_image",
        index=1,
    )


def test_snake_case_names_read_like_camel_case() -> None:
    doc = load("snake_case_curl.json")
    assert shape(from_gemini(doc["payload"])) == shape(from_gemini(doc["expected"]))


@pytest.mark.parametrize("name", RESPONSE_GOLDENS)
def test_response_goldens_read_and_write_back(name: str) -> None:
    doc = load(name)
    message = from_gemini_response(doc["payload"])
    report = ConversionReport()
    written = to_gemini_response(message, report=report)
    assert written == doc.get("expected", doc["payload"])
    assert not report
    check_response(written)
    assert response_shape(from_gemini_response(written)) == response_shape(message)


def test_response_golden_usage_stop_and_provenance() -> None:
    message = from_gemini_response(load("response_function_call.json")["payload"])
    assert message.usage == am.Usage(
        input_tokens=100, output_tokens=80, cache_read_tokens=20, reasoning_tokens=50, total_tokens=200
    )
    assert (message.stop_reason, message.stop_reason_raw) == (am.StopReason.TOOL_CALLS, "STOP")
    assert message.provenance == am.Provenance(PROVIDER, API, "gemini-2.5-flash", "aBcDeFgHiJkLmNoPqRsTuV")
    thinking, call = message.contents
    assert isinstance(thinking, am.ThinkingContent)
    assert isinstance(call, am.ToolCallContent)
    assert (call.id, call.args, call.signature[:4]) == ("fc-w1", {"location": "Paris"}, "P3m7")


def test_response_golden_max_tokens_and_unknown_counts() -> None:
    message = from_gemini_response(load("response_max_tokens.json")["payload"])
    assert (message.stop_reason, message.stop_reason_raw) == (am.StopReason.LENGTH, "MAX_TOKENS")
    assert message.usage == am.Usage(input_tokens=9, output_tokens=10, total_tokens=19)
    assert message.usage is not None
    assert message.usage.known("cache_read_tokens") is None
    assert message.usage.known("reasoning_tokens") is None


def test_blocked_prompt_reads_as_content_filter_with_the_feedback_kept() -> None:
    payload = load("response_blocked_prompt.json")["payload"]
    message = from_gemini_response(payload)
    (feedback,) = message.contents
    assert isinstance(feedback, am.ProviderContent)
    assert (feedback.provider, feedback.block_type, feedback.block()) == (
        PROVIDER,
        "promptFeedback",
        payload["promptFeedback"],
    )
    assert (message.stop_reason, message.stop_reason_raw) == (am.StopReason.CONTENT_FILTER, "SAFETY")
    assert message.usage == am.Usage(input_tokens=8, total_tokens=8)


def test_a_filtered_answer_stays_a_candidate_and_a_blocked_prompt_stays_a_prompt_block() -> None:
    # issue 16 bug 3: "the answer was filtered" must not come back as "your prompt was blocked"
    filtered = {"candidates": [{"content": {}, "finishReason": "SAFETY"}], "modelVersion": "m", "responseId": "r"}
    message = from_gemini_response(filtered)
    assert (message.contents, message.stop_reason) == ((), am.StopReason.CONTENT_FILTER)
    report = ConversionReport()
    written = to_gemini_response(message, report=report)
    assert written == {"candidates": [{"finishReason": "SAFETY", "index": 0}], "modelVersion": "m", "responseId": "r"}
    assert not report
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "m", "responseId": "r"}
    assert to_gemini_response(from_gemini_response(blocked)) == blocked


# --- the round-trip law ---------------------------------------------------------------------------


def sample_conversation() -> list[am.AgentMessage]:
    """Everything Gemini can hold, with provenance so signatures replay, and indexes at their positions."""
    return [
        am.SystemMessage([am.TextContent("Be terse."), am.TextContent("Answer in English.")]),
        am.UserMessage(
            [
                am.TextContent("What is in these?"),
                am.ImageContent(png_bytes(), detail="low"),
                am.ImageContent(png_bytes(color="blue"), detail="medium"),
                am.ImageContent.from_url("https://example.test/cat.jpg", media_type="image/jpeg"),
                am.ImageContent.from_file_id(
                    "https://generativelanguage.googleapis.com/v1beta/files/img-1", media_type="image/png"
                ),
                am.AudioContent(WAV),
                am.AudioContent.from_url("https://example.test/a.mp3"),
                am.DocumentContent(PDF, media_type="application/pdf"),
                am.DocumentContent.from_text("plain words"),
                am.DocumentContent.from_url("https://example.test/d"),
                am.DocumentContent.from_file_id("files/doc-9"),
            ]
        ),
        am.AssistantMessage(
            [
                am.ThinkingContent("Let me look.", SIG_A),
                am.ThinkingContent("No signature here."),
                am.TextContent("Checking.", signature=SIG_B),
                am.ToolCallContent("call_1", "lookup", {"q": "cat", "n": 10}, signature=SIG_A),
                am.ToolCallContent("call_2", "lookup", {"q": "dog", "nested": {"a": [1, 2.5, None]}}, index=1),
                am.ToolCallContent("call_3", "noop", {}, index=2),
            ],
            provenance=PROV,
        ),
        am.ToolMessage(
            [
                am.ToolResultContent("call_1", "a cat", name="lookup"),
                am.ToolResultContent(
                    "call_2",
                    [am.TextContent("first"), am.TextContent("second"), am.ImageContent(png_bytes())],
                    is_error=True,
                    name="lookup",
                    index=1,
                ),
                am.ToolResultContent("call_3", name="noop", index=2),
            ]
        ),
        am.UserMessage([am.TextContent("And the dog?"), am.ProviderContent(PROVIDER, "fileData", VIDEO_CLIP)]),
        am.AssistantMessage([am.TextContent("A dog.")], provenance=PROV),
        # hosted code execution (read from Gemini: the parts are their originals), and a result object
        am.UserMessage.text("Sum 1 to 3 with code, then look it up."),
        am.AssistantMessage([*CODE_BLOCKS, am.ToolCallContent("c9", "lookup", {"n": 6})], provenance=PROV),
        am.ToolMessage(
            [
                am.ToolResultContent(
                    "c9",
                    [am.TextContent('{"found":true}'), am.ProviderContent(PROVIDER, "response", '{"found":true}')],
                    name="lookup",
                )
            ]
        ),
    ]


CODE_BLOCKS = (
    am.HostedToolCallContent(
        "x1",
        "code_execution",
        '{"language":"PYTHON","code":"print(1+2+3)"}',
        kind="code_execution",
        signature=SIG_B,
        original=am.ProviderContent(
            PROVIDER,
            "executableCode",
            json.dumps(
                {
                    "executableCode": {"language": "PYTHON", "code": "print(1+2+3)", "id": "x1"},
                    "thoughtSignature": SIG_B,
                },
                separators=(",", ":"),
            ),
        ),
    ),
    am.HostedToolResultContent(
        "x1",
        name="code_execution",
        kind="code_execution",
        code_execution=am.CodeExecutionOutput("6\n"),
        status="completed",
        status_raw="OUTCOME_OK",
        original=am.ProviderContent(
            PROVIDER,
            "codeExecutionResult",
            '{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"6\\n","id":"x1"}}',
        ),
    ),
)


def test_from_gemini_inverts_to_gemini_for_everything_it_holds() -> None:
    messages = sample_conversation()
    _, back = roundtrip(messages)
    assert shape(back) == shape(messages)


def test_gemini_to_agentmsg_to_gemini_is_exact_for_a_written_payload() -> None:
    payload, back = roundtrip(sample_conversation())
    assert to_gemini(back) == payload
    assert payload["contents"][2]["parts"][-1] == json.loads(VIDEO_CLIP)


def test_merged_turns_and_results_in_user_messages_normalise() -> None:
    """What the format does not carry: message boundaries within a role, and tool results' message class."""
    messages: list[am.AgentMessage] = [
        am.UserMessage.text("one"),
        am.UserMessage.text("two"),
        am.AssistantMessage([am.ToolCallContent("c1", "f", {})]),
        am.UserMessage([am.ToolResultContent("c1", "r", name="f"), am.TextContent("more")]),
    ]
    payload, back = roundtrip(messages)
    assert [c["role"] for c in payload["contents"]] == ["user", "model", "user"]
    assert payload["contents"][0]["parts"] == [{"text": "one"}, {"text": "two"}]
    assert [type(m) for m in back] == [am.UserMessage, am.AssistantMessage, am.ToolMessage, am.UserMessage]
    assert back[0].contents == (am.TextContent("one"), am.TextContent("two"))


def test_user_content_splits_at_each_change_of_kind() -> None:
    payload = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {"text": "before"},
                    {"functionResponse": {"id": "a", "name": "f", "response": {"output": "x"}}},
                    {"text": "after"},
                ],
            },
        ]
    }
    messages = from_gemini(payload)
    assert [type(m) for m in messages] == [am.AssistantMessage, am.UserMessage, am.ToolMessage, am.UserMessage]
    assert to_gemini(messages) == payload


@st.composite
def conversations(draw: st.DrawFn) -> list[am.AgentMessage]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    names = st.sampled_from(["get", "put", "list_items"])
    values = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), text)
    messages: list[am.AgentMessage] = []
    call_number = 0
    for _turn in range(draw(st.integers(1, 3))):
        messages.append(am.UserMessage([am.TextContent(t) for t in draw(st.lists(text, min_size=1, max_size=2))]))
        blocks: list[Any] = []
        calls: list[am.ToolCallContent] = []
        for kind in draw(st.lists(st.sampled_from(["text", "thinking", "call"]), min_size=1, max_size=4)):
            signature = draw(st.sampled_from(["", SIG_A]))
            if kind == "text":
                blocks.append(am.TextContent(draw(text), signature=signature))
            elif kind == "thinking":
                blocks.append(am.ThinkingContent(draw(text), signature))
            else:
                call_number += 1
                args = draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3))
                call = am.ToolCallContent(f"id-{call_number}", draw(names), args, index=len(calls), signature=signature)
                calls.append(call)
                blocks.append(call)
        messages.append(am.AssistantMessage(blocks, provenance=PROV))
        if calls:
            results = [
                am.ToolResultContent(c.id, draw(text), name=c.name, is_error=draw(st.booleans()), index=i)
                for i, c in enumerate(calls)
            ]
            messages.append(am.ToolMessage(results))
    return messages


@settings(max_examples=30, deadline=None)
@given(conversations())
def test_round_trip_property(messages: list[am.AgentMessage]) -> None:
    # An empty text result reads back as no block: normalise the input the same way.
    messages = [
        am.ToolMessage(
            [am.ToolResultContent(r.id, r.text, name=r.name, is_error=r.is_error, index=r.index) for r in m.results()]
        )
        if isinstance(m, am.ToolMessage)
        else m
        for m in messages
    ]
    _, back = roundtrip(messages)
    assert shape(back) == shape(messages)


# --- losses, strict mode, warnings ---------------------------------------------------------------


def lossy_conversation() -> list[am.AgentMessage]:
    foreign = am.Provenance("anthropic", "anthropic-messages", "claude", "msg_1")
    return [
        am.UserMessage.text("hi", name="alice"),
        am.SystemMessage.text("late system"),
        am.UserMessage(
            [
                am.TextContent("signed user text", signature="c2ln"),
                am.ImageContent(png_bytes(), detail="auto"),
                am.ImageContent.from_url("https://example.test/no-extension"),
                am.DocumentContent(PDF, filename="a.pdf", title="A"),
                am.ImageContent.from_url(
                    "https://generativelanguage.googleapis.com/v1beta/files/x", media_type="image/png"
                ),
                am.ProviderContent.from_block("anthropic", {"type": "server_tool_use", "id": "s"}),
            ]
        ),
        am.AssistantMessage(
            [
                am.ThinkingContent("foreign thought", "c2ln"),
                am.RedactedThinkingContent("opaque=="),
                am.ToolCallContent("t1", "run", arguments="not json", kind="execute", server_name="srv", index=3),
            ],
            provenance=foreign,
        ),
        am.ToolMessage(
            [
                am.ToolResultContent(
                    "t1",
                    [
                        am.ImageContent.from_url("https://example.test/x.png"),
                        am.ImageContent(png_bytes()),
                        am.TextContent("late"),
                    ],
                    metadata={"app": 1},
                    terminate=True,
                    terminate_message="stop",
                )
            ]
        ),
    ]


def test_everything_dropped_is_reported_at_its_input_path() -> None:
    report = ConversionReport()
    payload = to_gemini(lossy_conversation(), report=report)
    check_request(payload)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].name", "participant name"),
        ("[1]", "system message position"),
        ("[2].contents[0].signature", "signature"),
        ("[2].contents[1].detail", "image detail 'auto'"),
        ("[2].contents[2]", "image kind"),
        ("[2].contents[3].filename", "document filename"),
        ("[2].contents[3].title", "document title"),
        ("[2].contents[4]", "image URL source"),
        ("[2].contents[5]", "anthropic server_tool_use block"),
        ("[3].contents[0].signature", "signature"),
        ("[3].contents[1]", "redacted thinking"),
        ("[3].contents[2].arguments", "tool-call arguments"),
        ("[3].contents[2].kind", "tool kind"),
        ("[3].contents[2].server_name", "tool server name"),
        ("[3].contents[2].index", "tool-call index"),
        ("[4].contents[0].content[0]", "image by reference in a tool result"),
        ("[4].contents[0]", "order of text after media"),
    ]
    # Thinking keeps its text without the signature; invalid arguments become {}; the name comes from the call.
    assert [content["role"] for content in payload["contents"]] == ["user", "model", "user"]  # [0] and [2] merged
    model = payload["contents"][1]
    assert model["parts"] == [
        {"text": "foreign thought", "thought": True},
        {"functionCall": {"id": "t1", "name": "run", "args": {}}},
    ]
    result = payload["contents"][2]["parts"][0]["functionResponse"]
    assert result["name"] == "run"
    assert result["response"] == {"output": "late"}
    assert len(result["parts"]) == 1
    assert "metadata" not in json.dumps(payload)  # app-only fields never reach the payload, and are not reported
    assert payload["systemInstruction"] == {"parts": [{"text": "late system"}]}


def test_strict_mode_raises_and_no_report_warns() -> None:
    with pytest.raises(ConversionError, match="gemini cannot hold 17 item"):
        to_gemini(lossy_conversation(), strict=True)
    with pytest.warns(ConversionWarning, match="17 item"):
        to_gemini(lossy_conversation())
    with pytest.raises(ConversionError, match="redacted thinking"):
        to_gemini_response(am.AssistantMessage([am.RedactedThinkingContent("x")], provenance=PROV), strict=True)


def test_signatures_replay_only_to_the_same_provider_api_and_model() -> None:
    message = am.AssistantMessage(
        [
            am.ThinkingContent("t", SIG_A),
            am.TextContent("x", signature=SIG_B),
            am.ToolCallContent("c", "f", {}, signature=SIG_A),
        ],
        provenance=PROV,
    )
    signed = to_gemini([message], model="gemini-3-flash-preview")["contents"][0]["parts"]
    assert [part.get("thoughtSignature") for part in signed] == [SIG_A, SIG_B, SIG_A]
    report = ConversionReport()
    other_model = to_gemini([message], model="gemini-2.5-pro", report=report)["contents"][0]["parts"]
    assert all("thoughtSignature" not in part for part in other_model)
    assert other_model[0] == {"text": "t", "thought": True}
    assert [loss.path for loss in report.losses] == [f"[0].contents[{i}].signature" for i in range(3)]
    unsigned = am.AssistantMessage(message.contents, id=message.id)
    report = ConversionReport()
    to_gemini([unsigned], report=report)
    assert len(report.losses) == 3  # no provenance: nobody vouches for the signatures


def test_unsigned_call_signature_placeholder_and_reading_it_back() -> None:
    messages: list[am.AgentMessage] = [
        am.UserMessage.text("go"),
        am.AssistantMessage(
            [am.TextContent("ok"), am.ToolCallContent("c1", "f", {}), am.ToolCallContent("c2", "g", {}, index=1)]
        ),
        am.ToolMessage([am.ToolResultContent("c1", "1", name="f"), am.ToolResultContent("c2", "2", name="g", index=1)]),
        am.AssistantMessage([am.ToolCallContent("c3", "f", {}, signature=SIG_A)], provenance=PROV),
    ]
    payload = to_gemini(messages, unsigned_call_signature=PLACEHOLDER_SIGNATURES[0])
    check_request(payload)
    model = payload["contents"][1]["parts"]
    assert [part.get("thoughtSignature") for part in model] == [None, "skip_thought_signature_validator", None]
    assert payload["contents"][3]["parts"][0]["thoughtSignature"] == SIG_A  # a real signature is kept
    back = from_gemini(payload, provenance=PROV)
    assert [c.signature for c in back[1].tool_calls()] == ["", ""]  # the placeholder signs nothing
    assert back[3].tool_calls()[0].signature == SIG_A
    assert to_gemini(messages)["contents"][1]["parts"][1] == {"functionCall": {"id": "c1", "name": "f", "args": {}}}


def test_arguments_are_re_serialised_compactly() -> None:
    call = am.ToolCallContent("c", "f", arguments='{ "b": 1,  "a": [1.5, "é"] }')
    payload = to_gemini([am.AssistantMessage([call])])
    assert payload["contents"][0]["parts"][0]["functionCall"]["args"] == {"b": 1, "a": [1.5, "é"]}
    (back,) = from_gemini(payload)
    assert back.tool_calls()[0].arguments == '{"b":1,"a":[1.5,"é"]}'
    empty = from_gemini(to_gemini([am.AssistantMessage([am.ToolCallContent("c", "f", arguments="")])]))
    assert empty[0].tool_calls()[0].arguments == "{}"


def test_tool_result_without_a_name_needs_its_call() -> None:
    payload = to_gemini(
        [
            am.AssistantMessage([am.ToolCallContent("c1", "lookup", {})]),
            am.ToolMessage([am.ToolResultContent("c1", "x")]),
        ]
    )
    assert payload["contents"][1]["parts"][0]["functionResponse"]["name"] == "lookup"
    with pytest.raises(am.ValidationError) as info:
        to_gemini([am.ToolMessage([am.ToolResultContent("orphan", "x")])])
    assert violations(info) == [("[0].contents[0].name", "gemini.required")]


def test_tool_result_bodies() -> None:
    def body(result: am.ToolResultContent) -> dict[str, Any]:
        parts = to_gemini([am.ToolMessage([result])])["contents"][0]["parts"]
        response: dict[str, Any] = parts[0]["functionResponse"]
        return response

    assert body(am.ToolResultContent("c", "ok", name="f"))["response"] == {"output": "ok"}
    assert body(am.ToolResultContent.error("c", "boom", name="f"))["response"] == {"error": "boom"}
    assert body(am.ToolResultContent("c", name="f"))["response"] == {"output": ""}
    two = am.ToolResultContent("c", [am.TextContent("a"), am.TextContent("b")], name="f")
    assert body(two)["response"] == {"output": ["a", "b"]}
    image = am.ToolResultContent("c", [am.ImageContent(PNG, media_type="image/png")], name="f")
    assert body(image) == {
        "id": "c",
        "name": "f",
        "response": {"output": ""},
        "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}],
    }


def test_reading_other_response_objects_keeps_them_as_json_text() -> None:
    def read(response: dict[str, Any]) -> am.ToolResultContent:
        part = {"functionResponse": {"id": "c", "name": "f", "response": response}}
        (message,) = from_gemini({"contents": [{"role": "user", "parts": [part]}]})
        assert isinstance(message, am.ToolMessage)
        return message.results()[0]

    assert (read({"temperature": 22}).text, read({"temperature": 22}).is_error) == ('{"temperature":22}', False)
    assert (read({"error": {"code": 5}}).text, read({"error": {"code": 5}}).is_error) == ('{"error":{"code":5}}', True)
    assert read({"output": {"rows": 1}}).text == '{"output":{"rows":1}}'
    assert read({"output": ""}).blocks == ()


def test_ids_round_trip_when_generated_and_restore_through_id_map() -> None:
    payload = load("calls_without_ids.json")["payload"]
    messages = from_gemini(payload)
    assert to_gemini(messages) == payload  # generated ids are left out again
    # A result answering a call out of the name order keeps its id explicitly.
    model, tool = messages[1], messages[2]
    first, second = tool.results()
    swapped = am.ToolMessage(
        [
            am.ToolResultContent(second.id, second.text, name=second.name),
            am.ToolResultContent(first.id, first.text, name=first.name, index=1),
        ]
    )
    written = to_gemini([messages[0], model, swapped])["contents"][2]["parts"]
    assert [part["functionResponse"].get("id") for part in written] == [model.tool_calls()[1].id, None]
    back = from_gemini(to_gemini([messages[0], model, swapped]))
    assert [r.id for r in back[2].results()] == [model.tool_calls()[1].id, model.tool_calls()[0].id]
    id_map = {"safe_1": "orig:1"}
    mapped = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"id": "safe_1", "name": "f", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"id": "safe_1", "name": "f", "response": {"output": ""}}}],
            },
        ]
    }
    restored = from_gemini(mapped, id_map=id_map)
    assert restored[0].tool_calls()[0].id == "orig:1"
    assert restored[1].results()[0].id == "orig:1"


def test_session_messages_are_projected_or_refused() -> None:
    compaction = am.CompactionSummaryMessage("Earlier: hello.")
    payload = to_gemini([compaction, am.UserMessage.text("next")])
    assert payload["contents"] == [
        {
            "role": "user",
            "parts": [{"text": COMPACTION_SUMMARY_TEMPLATE.format(summary="Earlier: hello.")}, {"text": "next"}],
        }
    ]
    with pytest.raises(am.ValidationError) as info:
        to_gemini([compaction], session_messages="refuse")
    assert violations(info) == [("[0]", "session_message")]


def test_code_execution_is_hosted_and_other_parts_pass_through_both_ways() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)", "id": "x1"}, "thoughtSignature": SIG_A}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n", "id": "x1"}}
    image = {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}
    future = {"someNewPart": {"a": 1}}
    payload = {"contents": [{"role": "model", "parts": [{"text": "Running."}, code, result, image, future]}]}
    (message,) = from_gemini(payload, provenance=PROV)
    _, call, outcome, kept_image, kept_future = message.contents
    assert call == am.HostedToolCallContent(
        "x1",
        "code_execution",
        '{"language":"PYTHON","code":"print(1)"}',
        kind="code_execution",
        signature=SIG_A,
        original=am.ProviderContent(PROVIDER, "executableCode", json.dumps(code, separators=(",", ":"))),
    )
    assert isinstance(outcome, am.HostedToolResultContent)
    assert (outcome.call_id, outcome.status, outcome.status_raw, outcome.is_error) == (
        "x1",
        am.HostedToolStatus.COMPLETED,
        "OUTCOME_OK",
        False,
    )
    assert outcome.code_execution == am.CodeExecutionOutput(stdout="1\n")
    kinds = [(b.provider, b.block_type) for b in (kept_image, kept_future) if isinstance(b, am.ProviderContent)]
    assert kinds == [("google", "inlineData"), ("google", "someNewPart")]
    assert to_gemini([message]) == payload
    with pytest.raises(am.ValidationError) as info:
        from_gemini(payload, pass_through_unknown=False)
    assert violations(info) == [
        ("contents[0].parts[3].inlineData", "gemini.unsupported"),
        ("contents[0].parts[4]", "gemini.unknown_type"),
    ]
    # without the Google provenance the signature stays behind (reported); elsewhere the blocks are lost
    report = ConversionReport()
    unsigned = to_gemini([am.AssistantMessage(list(message.contents))], report=report)
    assert "thoughtSignature" not in unsigned["contents"][0]["parts"][1]
    assert [loss.path for loss in report.losses] == ["[0].contents[1].signature"]


# --- bad input ------------------------------------------------------------------------------------


def test_bad_request_reports_every_problem_with_its_path() -> None:
    payload = {
        "systemInstruction": {"parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]},
        "contents": [
            {"role": "assistant", "parts": [{"text": "x"}]},
            {"role": "user", "parts": []},
            {"role": "user", "parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": PNG_B64}}]},
            {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "***"}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]},
            {"role": "model", "parts": [{"functionCall": {"args": {}}}]},
            {"role": "user", "parts": [{"text": 3}, "plain string", {}]},
            {"role": "user", "parts": [{"text": "t", "thought": True}]},
            {
                "role": "user",
                "parts": [
                    {
                        "fileData": {"mimeType": "image/png", "fileUri": "gs://b/i.png"},
                        "mediaResolution": {"level": "MEDIA_RESOLUTION_ULTRA_HIGH"},
                    }
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "ok"}}]},
            {"role": "user", "parts": [{"inline_data": {"mimeType": "image/png", "data": PNG_B64}, "inlineData": {}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "", "args": {}}}]},
            {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": ""}}]},
            {"role": "user", "parts": [{"text": "x", "thought": "yes"}]},
        ],
    }
    with pytest.raises(am.ValidationError) as info:
        from_gemini(payload, pass_through_unknown=False)
    assert violations(info) == [
        ("systemInstruction.parts[0].inlineData", "gemini.unsupported"),
        ("contents[0].role", "gemini.enum"),
        ("contents[1].parts", "gemini.min_items"),
        ("contents[2].parts[0]", "gemini.oneof"),
        ("contents[3].parts[0].inlineData.data", "gemini.base64"),
        ("contents[4].parts[0].functionCall.args", "gemini.type"),
        ("contents[5].parts[0].functionCall.name", "gemini.required"),
        ("contents[6].parts[0].text", "gemini.type"),
        ("contents[6].parts[1]", "gemini.type"),
        ("contents[6].parts[2]", "gemini.required"),
        ("contents[7].parts[0].thought", "gemini.unsupported"),
        ("contents[8].parts[0].mediaResolution", "gemini.unsupported"),
        ("contents[9].parts[0].functionResponse.response", "gemini.type"),
        ("contents[10].parts[0].inlineData", "gemini.oneof"),
        ("contents[11].parts[0].functionCall.name", "gemini.min_len"),
        ("contents[12].parts[0].inlineData", "gemini.media"),
        ("contents[13].parts[0].thought", "gemini.type"),
    ]


def test_bad_top_level_shapes() -> None:
    for payload, expected in [
        ([], [("", "gemini.type")]),
        ({}, [("contents", "gemini.required")]),
        ({"contents": {}}, [("contents", "gemini.type")]),
        ({"contents": ["x"]}, [("contents[0]", "gemini.type")]),
        ({"contents": [{"role": 1, "parts": [{"text": "x"}]}]}, [("contents[0].role", "gemini.type")]),
    ]:
        with pytest.raises(am.ValidationError) as info:
            from_gemini(payload)  # type: ignore[arg-type]
        assert violations(info) == expected


def test_roles_read_leniently() -> None:
    parts = [{"text": "x"}]
    messages = from_gemini(
        {"contents": [{"parts": parts}, {"role": "model", "parts": parts}, {"role": "function", "parts": parts}]}
    )
    assert [type(m) for m in messages] == [am.UserMessage, am.AssistantMessage, am.UserMessage]


def test_bad_response_reports_every_problem() -> None:
    bad = {
        "candidates": [{"content": {"role": "user", "parts": [{"text": 1}]}, "finishReason": True}],
        "usageMetadata": {"promptTokenCount": -1, "thoughtsTokenCount": "3"},
        "responseId": 5,
    }
    with pytest.raises(am.ValidationError) as info:
        from_gemini_response(bad)
    assert violations(info) == [
        ("responseId", "gemini.type"),
        ("usageMetadata.thoughtsTokenCount", "gemini.type"),
        ("usageMetadata.promptTokenCount", "gemini.gte"),
        ("candidates[0].finishReason", "gemini.type"),
        ("candidates[0].content.role", "gemini.enum"),
        ("candidates[0].content.parts[0].text", "gemini.type"),
    ]
    for response, expected in [
        ({}, [("candidates", "gemini.required")]),
        ([], [("", "gemini.type")]),
        ({"candidates": "x"}, [("candidates", "gemini.type")]),
        # STOP with no content is not a valid assistant message (and a silent empty answer is worth an error).
        ({"candidates": [{"finishReason": "STOP"}]}, [("candidates[0]", "gemini.assistant.content.required")]),
        (
            {"usageMetadata": {"promptTokenCount": 3, "cachedContentTokenCount": 5}, "candidates": []},
            [("usageMetadata.cachedContentTokenCount", "gemini.gte")],
        ),
    ]:
        with pytest.raises(am.ValidationError) as info:
            from_gemini_response(response)  # type: ignore[arg-type]
        assert violations(info) == expected


# --- responses ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "with_call", "expected"),
    [
        ("STOP", False, am.StopReason.STOP),
        ("STOP", True, am.StopReason.TOOL_CALLS),
        ("MAX_TOKENS", False, am.StopReason.LENGTH),
        ("SAFETY", False, am.StopReason.CONTENT_FILTER),
        ("RECITATION", False, am.StopReason.CONTENT_FILTER),
        ("BLOCKLIST", False, am.StopReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", False, am.StopReason.CONTENT_FILTER),
        ("SPII", False, am.StopReason.CONTENT_FILTER),
        ("MALFORMED_FUNCTION_CALL", False, am.StopReason.ERROR),
        ("OTHER", False, am.StopReason.ERROR),
        ("SOMETHING_NEW", False, None),
        ("FINISH_REASON_UNSPECIFIED", False, None),
    ],
)
def test_finish_reasons(raw: str, with_call: bool, expected: am.StopReason | None) -> None:
    parts: list[dict[str, Any]] = [{"text": "x"}]
    if with_call:
        parts.append({"functionCall": {"id": "c", "name": "f", "args": {}}})
    response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": raw, "index": 0}]}
    message = from_gemini_response(response)
    assert (message.stop_reason, message.stop_reason_raw) == (expected, raw)
    report = ConversionReport()
    written = to_gemini_response(message, report=report)
    assert written == response
    assert not report


def test_response_call_ids_are_generated_from_the_response_id() -> None:
    response = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": 1}}}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "responseId": "r-1",
    }
    message = from_gemini_response(response)
    assert message.tool_calls()[0].id == generated_call_id("r-1", 0, "f")
    assert to_gemini_response(message) == response
    other = from_gemini_response({**response, "responseId": "r-2"})
    assert other.tool_calls()[0].id != message.tool_calls()[0].id  # ids differ across responses


def test_finish_message_is_the_error_and_unknown_kinds_pass_through() -> None:
    response = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"executableCode": {"language": "PYTHON", "code": "1"}}]},
                "finishReason": "MALFORMED_FUNCTION_CALL",
                "finishMessage": "Malformed function call: f(",
                "index": 0,
            }
        ]
    }
    message = from_gemini_response(response, pass_through_unknown=True)
    assert (message.stop_reason, message.error) == (am.StopReason.ERROR, "Malformed function call: f(")
    assert to_gemini_response(message) == response


def test_to_gemini_response_reports_what_it_cannot_write() -> None:
    message = am.AssistantMessage(
        [am.TextContent("partial")],
        usage=am.Usage(input_tokens=1, output_tokens=2, cache_write_tokens=3, cost=am.UsageCost(total=0.5)),
        stop_reason=am.StopReason.ABORT,
        stop_reason_raw="aborted",
        provenance=am.Provenance("openai", "openai-responses", "gpt", "resp_1"),
        name="bot",
    )
    report = ConversionReport()
    written = to_gemini_response(message, report=report)
    check_response(written)
    assert [loss.path for loss in report.losses] == [
        "name",
        "provenance",
        "stop_reason",
        "stop_reason_raw",
        "usage.cache_write_tokens",
        "usage.cost",
    ]
    assert written["usageMetadata"] == {"promptTokenCount": 1, "candidatesTokenCount": 2}
    assert "finishReason" not in written["candidates"][0]


def test_usage_round_trips_with_presence() -> None:
    for usage in [
        am.Usage(),
        am.Usage(input_tokens=5),
        am.Usage(input_tokens=5, cache_read_tokens=0, output_tokens=7, reasoning_tokens=0, total_tokens=12),
        am.Usage(input_tokens=1, cache_read_tokens=9, output_tokens=40, reasoning_tokens=30, total_tokens=50),
    ]:
        message = am.AssistantMessage(
            [am.TextContent("x")], usage=usage, stop_reason="stop", stop_reason_raw="STOP", provenance=PROV
        )
        report = ConversionReport()
        back = from_gemini_response(to_gemini_response(message, report=report))
        assert not report
        assert back.usage == usage
        assert shape([back]) == shape([message])
        assert (back.stop_reason, back.stop_reason_raw) == (message.stop_reason, message.stop_reason_raw)


def test_to_gemini_response_needs_an_assistant_message() -> None:
    with pytest.raises(am.ValidationError):
        to_gemini_response(am.UserMessage.text("x"))  # type: ignore[arg-type]
    assert gemini.PROVIDER == "google"
    assert gemini.API == "google-generative-ai"


def test_image_by_reference_keeps_its_detail() -> None:
    part = {
        "fileData": {"mimeType": "image/webp", "fileUri": "https://example.test/i.webp"},
        "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"},
    }
    payload = {"contents": [{"role": "user", "parts": [part]}]}
    (message,) = from_gemini(payload)
    assert message.contents == (
        am.ImageContent.from_url("https://example.test/i.webp", media_type="image/webp", detail="low"),
    )
    assert to_gemini([message]) == payload


def test_more_losses_are_reported() -> None:
    unknown_message = am.message_from_proto(message_pb2.Message(id="m", timestamp={"seconds": 1}))
    user_with_unknown = message_pb2.Message(id="u", timestamp={"seconds": 1})
    user_with_unknown.user.content.add().text.text = "ok"
    user_with_unknown.user.content.add()  # a block of a kind this version does not know
    assistant_with_unknown = message_pb2.Message(id="a", timestamp={"seconds": 1})
    assistant_with_unknown.assistant.content.add()
    messages: list[am.AgentMessage] = [
        unknown_message,
        am.message_from_proto(user_with_unknown),
        am.message_from_proto(assistant_with_unknown),
        am.UserMessage([am.ImageContent.from_file_id("gs://bucket/x.png", media_type="image/png")]),
        am.ToolMessage(
            [
                am.ToolResultContent("c1", [am.TextContent("")], name="f"),
                am.ToolResultContent(
                    "c2",
                    [
                        am.DocumentContent(PDF, media_type="application/pdf", filename="r.pdf"),
                        am.ImageContent(PNG, detail="high"),
                    ],
                    name="f",
                    index=1,
                ),
                am.ToolResultContent("c3", "x", name="f", index=7),
            ]
        ),
    ]
    report = ConversionReport()
    payload = to_gemini(messages, report=report)
    check_request(payload)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0]", "message of an unknown role"),
        ("[1].contents[1]", "unknown content"),
        ("[2].contents[0]", "unknown content"),
        ("[3].contents[0]", "image file-id source"),
        ("[4].contents[0].content", "empty text block"),
        ("[4].contents[1].content[0].filename", "document filename"),
        ("[4].contents[1].content[1].detail", "image detail in a tool result"),
        ("[4].contents[2].index", "tool-result index"),
    ]
    # a content filter without Gemini's promptFeedback is a filtered answer: a candidate
    filtered = am.AssistantMessage(stop_reason="content_filter", stop_reason_raw="OTHER", error="why", provenance=PROV)
    report = ConversionReport()
    assert to_gemini_response(filtered, report=report) == {
        "candidates": [{"finishReason": "SAFETY", "finishMessage": "why", "index": 0}],
        "modelVersion": "gemini-3-flash-preview",
    }
    assert [loss.path for loss in report.losses] == ["stop_reason_raw"]  # OTHER would read back as ERROR
    odd_usage = am.AssistantMessage(
        [am.TextContent("x")], usage=am.Usage(output_tokens=1, reasoning_tokens=3), provenance=PROV
    )
    report = ConversionReport()
    assert to_gemini_response(odd_usage, report=report)["usageMetadata"] == {
        "candidatesTokenCount": 0,
        "thoughtsTokenCount": 3,
    }
    no_output = am.AssistantMessage([am.TextContent("x")], usage=am.Usage(reasoning_tokens=3), provenance=PROV)
    to_gemini_response(no_output, report=report)
    assert [loss.what for loss in report.losses] == ["output token count", "unknown output count"]


def test_more_parts_agentmsg_cannot_hold() -> None:
    png = {"mimeType": "image/png", "data": PNG_B64}
    payload = {
        "contents": [
            {"role": "user", "parts": [{"text": "x", "extraField": 1}]},
            {"role": "user", "parts": [{"inlineData": png, "thoughtSignature": SIG_A}]},
            {
                "role": "user",
                "parts": [
                    {
                        "inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQKJSVFT0YK"},
                        "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"},
                    }
                ],
            },
            {
                "role": "user",
                "parts": [{"inlineData": png, "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW", "numTokens": 64}}],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "f",
                            "response": {},
                            "parts": [{"fileData": {"fileUri": "gs://b/x"}}],
                        }
                    }
                ],
            },
            {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": 5}}]},
            {"role": "user", "parts": [{"text": "x", "partMetadata": {"source": "a"}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f"}}, {"text": "x", "thought": False}]},
        ]
    }
    with pytest.raises(am.ValidationError) as info:
        from_gemini(payload, pass_through_unknown=False)
    assert violations(info) == [
        ("contents[0].parts[0].extraField", "gemini.unsupported"),
        ("contents[1].parts[0].thoughtSignature", "gemini.unsupported"),
        ("contents[2].parts[0].mediaResolution", "gemini.unsupported"),
        ("contents[3].parts[0].mediaResolution", "gemini.unsupported"),
        ("contents[5].parts[0].inlineData.data", "gemini.type"),
        ("contents[6].parts[0].partMetadata", "gemini.unsupported"),
    ]
    # By default only the malformed part is refused: the others are kept verbatim, and the fileData
    # of a function response is a provider block inside the result.
    with pytest.raises(am.ValidationError) as default_info:
        from_gemini(payload)
    assert violations(default_info) == [("contents[5].parts[0].inlineData.data", "gemini.type")]
    kept = [c for i, c in enumerate(payload["contents"]) if i not in (5, 7)]
    written = to_gemini(from_gemini({"contents": kept}))["contents"]
    # (a result that answers no call of the payload gets a generated id, written back)
    for part in written[0]["parts"]:
        part.get("functionResponse", {}).pop("id", None)
    assert [p for c in written for p in c["parts"]] == [p for c in kept for p in c["parts"]]
    # A call without args reads as "{}"; thought: false is plain text.
    (model,) = from_gemini({"contents": [payload["contents"][-1]]})
    assert model.contents == (
        am.ToolCallContent(generated_call_id("contents[0]", 0, "f"), "f", arguments="{}"),
        am.TextContent("x"),
    )
    with pytest.raises(am.ValidationError) as type_info:
        from_gemini({"contents": []}, provenance="google")  # type: ignore[arg-type]
    assert violations(type_info) == [("provenance", "type")]


def test_signature_only_part_reads_as_empty_text() -> None:
    payload = {"contents": [{"role": "model", "parts": [{"text": "hi"}, {"thoughtSignature": SIG_A}]}]}
    (message,) = from_gemini(payload, provenance=PROV)
    assert message.contents == (am.TextContent("hi"), am.TextContent("", signature=SIG_A))
    assert to_gemini([message]) == {
        "contents": [{"role": "model", "parts": [{"text": "hi"}, {"text": "", "thoughtSignature": SIG_A}]}]
    }


# --- real-traffic parts and candidate fields (issue 16) ---------------------------------------------


def _grounded_response() -> dict[str, Any]:
    answer = "Zürich: ☀ 21°C. Rain later."
    first = "Zürich: ☀ 21°C."
    start = len(answer.encode()) - len(b" Rain later.")
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "thinking...", "thought": True}, {"text": answer}]},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["weather zürich"],
                    "groundingChunks": [
                        {"web": {"uri": "https://vertexaisearch.test/r/1", "title": "meteo.ch"}},
                        {"retrievedContext": {"uri": "gs://docs/forecast.txt", "title": "forecast", "text": "rain"}},
                    ],
                    "groundingSupports": [
                        {
                            "segment": {"partIndex": 1, "endIndex": len(first.encode()), "text": first},
                            "groundingChunkIndices": [0, 1],
                            "confidenceScores": [0.9, 0.5],
                        },
                        {
                            "segment": {"partIndex": 1, "startIndex": start + 1, "endIndex": len(answer.encode())},
                            "groundingChunkIndices": [1],
                        },
                    ],
                    "searchEntryPoint": {"renderedContent": "<div>chips</div>"},
                },
                "urlContextMetadata": {
                    "urlMetadata": [
                        {"retrievedUrl": "https://meteo.test/zh", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"},
                        {"retrievedUrl": "https://down.test/", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_ERROR"},
                    ]
                },
                "avgLogprobs": -0.25,
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 12,
            "candidatesTokenCount": 9,
            "totalTokenCount": 140,
            "toolUsePromptTokenCount": 119,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "gRoUnDeD",
        "createTime": "2026-05-27T16:53:45.443719Z",
    }


def test_grounding_becomes_citations_on_its_part_and_a_hosted_search() -> None:
    payload = _grounded_response()
    message = from_gemini_response(payload)
    thinking, text, call, result, fetch, ok, failed, metadata = message.contents
    assert isinstance(thinking, am.ThinkingContent)
    assert isinstance(text, am.TextContent)
    web, retrieved, later = text.citations
    # byte offsets of the UTF-8 text converted to code points of the block's text
    assert (web.start_index, web.end_index) == (0, len("Zürich: ☀ 21°C."))
    assert text.content[web.start_index : web.end_index] == "Zürich: ☀ 21°C."
    assert text.content[later.start_index : later.end_index] == "Rain later."
    assert (web.source_kind, web.url, web.title, web.result_index, web.confidence) == (
        "web",
        "https://vertexaisearch.test/r/1",
        "meteo.ch",
        0,
        0.9,
    )
    assert (retrieved.source_kind, retrieved.source, retrieved.title, retrieved.confidence) == (
        "search_result",
        "gs://docs/forecast.txt",
        "forecast",
        0.5,
    )
    assert isinstance(call, am.HostedToolCallContent)
    assert (call.name, call.kind, call.input_value) == (
        "file_search",
        am.HostedToolKind.FILE_SEARCH,
        {"queries": ["weather zürich"]},
    )
    assert call.original is not None
    assert call.original.block() == payload["candidates"][0]["groundingMetadata"]
    assert isinstance(result, am.HostedToolResultContent)
    assert [(r.url, r.title, r.snippet) for r in result.search_results] == [
        ("https://vertexaisearch.test/r/1", "meteo.ch", ""),
        ("gs://docs/forecast.txt", "forecast", "rain"),
    ]
    assert isinstance(fetch, am.HostedToolCallContent)
    assert fetch.kind is am.HostedToolKind.WEB_FETCH
    assert isinstance(ok, am.HostedToolResultContent)
    assert isinstance(failed, am.HostedToolResultContent)
    assert (ok.web_fetch.url if ok.web_fetch else None, ok.is_error, failed.is_error) == (
        "https://meteo.test/zh",
        False,
        True,
    )
    assert isinstance(metadata, am.ProviderContent)
    assert metadata.block_type == "responseMetadata"
    assert metadata.block() == {
        "createTime": "2026-05-27T16:53:45.443719Z",
        "usageMetadata": {
            "toolUsePromptTokenCount": 119,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
        },
        "candidate": {"avgLogprobs": -0.25},
    }
    report = ConversionReport()
    written = to_gemini_response(message, report=report)
    assert not report
    assert written == payload
    assert response_shape(from_gemini_response(written)) == response_shape(message)


def test_grounding_elsewhere_is_projected_or_reported() -> None:
    message = from_gemini_response(_grounded_response())
    # Chat Completions: the web citations become url_citation annotations; the rest is reported
    report = ConversionReport()
    chat = openai_chat.to_openai_chat_response(message, report=report)
    annotations = chat["choices"][0]["message"]["annotations"]
    assert [a["url_citation"]["url"] for a in annotations] == ["https://vertexaisearch.test/r/1"]
    assert ("contents[1].citations[1]", "search_result citation") in [(x.path, x.what) for x in report.losses]
    # a Gemini request holds neither grounding nor citations; the response metadata is not model input
    report = ConversionReport()
    to_gemini([message], report=report)
    assert [(x.path, x.what) for x in report.losses] == [
        ("[0].contents[1].citations", "citations"),
        ("[0].contents[2]", "Gemini groundingMetadata"),
        ("[0].contents[4]", "Gemini urlContextMetadata"),
    ]


def test_logprobs_are_token_logprobs_and_come_back_exactly() -> None:
    logprobs = {
        "chosenCandidates": [
            {"logProbability": -0.01972555, "token": "2", "tokenId": 236778},
            {"logProbability": -2.3844768e-07, "token": " +", "tokenId": 900},
        ],
        "topCandidates": [
            {"candidates": [{"logProbability": -0.01972555, "token": "2", "tokenId": 236778}]},
            {"candidates": [{"logProbability": -2.3844768e-07, "token": " +", "tokenId": 900}]},
        ],
    }
    payload = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "2 +"}]},
                "finishReason": "STOP",
                "logprobsResult": logprobs,
            }
        ],
        "modelVersion": "m",
        "responseId": "r",
    }
    message = from_gemini_response(payload)
    (text,) = message.contents
    assert isinstance(text, am.TextContent)
    assert [(t.token, t.logprob, t.token_id) for t in text.logprobs] == [
        ("2", -0.01972555, 236778),
        (" +", -2.3844768e-07, 900),
    ]
    assert [t.token for t in text.logprobs[0].top_logprobs] == ["2"]
    assert to_gemini_response(message) == {**payload, "candidates": [{**payload["candidates"][0], "index": 0}]}
    # logprobs that would not come back exactly (a field agentmsg does not type) are kept whole
    odd = json.loads(json.dumps(payload))
    odd["candidates"][0]["logprobsResult"]["logProbabilitySum"] = -0.02
    message = from_gemini_response(odd)
    assert isinstance(message.contents[0], am.TextContent)
    assert not message.contents[0].logprobs
    assert to_gemini_response(message)["candidates"][0]["logprobsResult"] == odd["candidates"][0]["logprobsResult"]


def test_function_response_objects_of_any_shape_come_back_exactly() -> None:
    responses = [
        {"return_value": ["Here is the image:", {"marker": "42"}]},
        {},
        {"error": {"code": 3, "message": "bad"}},
        {"output": '{"temperature":22}'},  # a string output that holds JSON stays a string output
    ]
    contents: list[dict[str, Any]] = [{"role": "model", "parts": []}, {"role": "user", "parts": []}]
    for k, response in enumerate(responses):
        contents[0]["parts"].append({"functionCall": {"id": f"c{k}", "name": "f", "args": {}}})
        contents[1]["parts"].append({"functionResponse": {"id": f"c{k}", "name": "f", "response": response}})
    contents[1]["parts"].append(
        {
            "functionResponse": {
                "id": "c0",
                "name": "f",
                "response": {"return_value": "see file"},
                "parts": [{"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/report.pdf"}}],
            }
        }
    )
    payload = {"contents": contents}
    messages = from_gemini(payload, provenance=PROV)
    results = messages[1].contents
    first = results[0]
    assert isinstance(first, am.ToolResultContent)
    text, kept = first.blocks
    assert text == am.TextContent('{"return_value":["Here is the image:",{"marker":"42"}]}')
    assert isinstance(kept, am.ProviderContent)
    assert kept.block() == responses[0]
    assert isinstance(results[2], am.ToolResultContent)
    assert results[2].is_error
    assert isinstance(results[3], am.ToolResultContent)
    assert results[3].blocks == (am.TextContent('{"temperature":22}'),)
    last = results[4]
    assert isinstance(last, am.ToolResultContent)
    assert [type(b).__name__ for b in last.blocks] == ["TextContent", "ProviderContent", "ProviderContent"]
    report = ConversionReport()
    assert to_gemini(messages, report=report) == payload
    assert not report
    # other formats get the text; the Gemini-only pieces are reported
    report = ConversionReport()
    chat = openai_chat.to_openai_chat(messages, report=report)
    assert chat[1] == {
        "role": "tool",
        "tool_call_id": "c0",
        "content": '{"return_value":["Here is the image:",{"marker":"42"}]}',
    }
    # (besides the error flag, and the index of the second result for c0, which Chat has no place for)
    assert {loss.what for loss in report.losses} == {"provider in a tool result", "error flag", "index 4"}


def test_built_in_tool_parts_are_hosted_calls_and_results() -> None:
    call = {
        "toolCall": {"args": {"queries": ["largest city in Mexico"]}, "id": "0yzlft9k", "toolType": "GOOGLE_SEARCH_WEB"}
    }
    outcome = {"toolResponse": {"id": "0yzlft9k", "response": {"search_suggestions": "<div/>"}}}
    payload = {
        "candidates": [
            {"content": {"role": "model", "parts": [call, outcome, {"text": "Mexico City."}]}, "finishReason": "STOP"}
        ],
        "responseId": "r",
    }
    message = from_gemini_response(payload)
    hosted_call, hosted_result, _ = message.contents
    assert isinstance(hosted_call, am.HostedToolCallContent)
    assert (hosted_call.id, hosted_call.name, hosted_call.kind, hosted_call.input) == (
        "0yzlft9k",
        "google_search_web",
        am.HostedToolKind.WEB_SEARCH,
        '{"queries":["largest city in Mexico"]}',
    )
    assert isinstance(hosted_result, am.HostedToolResultContent)
    assert hosted_result.call_id == "0yzlft9k"
    assert to_gemini_response(message)["candidates"][0]["content"]["parts"] == [call, outcome, {"text": "Mexico City."}]


def test_grounding_golden_spans_are_the_segments_in_code_points() -> None:
    payload = load("response_grounding.json")["payload"]
    message = from_gemini_response(payload)
    text = message.contents[0]
    assert isinstance(text, am.TextContent)
    supports = payload["candidates"][0]["groundingMetadata"]["groundingSupports"]
    segments = [s["segment"]["text"] for s in supports for _ in s["groundingChunkIndices"]]
    assert [text.content[c.start_index : c.end_index] for c in text.citations] == segments  # type: ignore[misc]
    assert [c.title for c in text.citations] == ["uefa.com", "wikipedia.org", "wikipedia.org"]


def test_code_execution_golden_is_a_hosted_call_and_result() -> None:
    message = from_gemini_response(load("response_code_execution.json")["payload"])
    _, call, result, _ = message.contents
    assert isinstance(call, am.HostedToolCallContent)
    assert call.input_value == {
        "language": "PYTHON",
        "code": "primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]\nprint(sum(primes))\n",
    }
    assert isinstance(result, am.HostedToolResultContent)
    assert result.code_execution == am.CodeExecutionOutput(stdout="129\n")
    assert (result.status, result.status_raw) == (am.HostedToolStatus.COMPLETED, "OUTCOME_OK")
    assert list(message.hosted_tool_calls()) == [call]
