"""Gemini ``streamGenerateContent`` chunks as stream events (``agentmsg.providers.gemini_stream``).

Recorded streams live in ``tests/golden/gemini_stream/``: ``*.json`` hold the
decoded chunks (``chunks``) and name, under ``_source``, the Gemini
documentation they follow; ``*.sse`` hold raw ``?alt=sse`` text. No Gemini SDK
is installed, so :func:`test_fixtures_follow_the_api_schema` checks every chunk
against the field names and enum values of the API's own protos, transcribed
below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentmsg import (
    AssistantMessage,
    CodeExecutionOutput,
    HostedToolCallContent,
    HostedToolResultContent,
    Provenance,
    ProviderContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    Usage,
    ValidationError,
)
from agentmsg.providers._common import ConversionReport
from agentmsg.providers.gemini import from_gemini_response, generated_call_id, to_gemini_response
from agentmsg.providers.gemini_stream import (
    API,
    PROVIDER,
    GeminiStreamParser,
    stream_events,
    stream_events_from_sse,
)
from agentmsg.streaming import StreamAccumulator, StreamEvent, StreamProtocolError, fold, iter_sse

GOLDEN = Path(__file__).parent.parent / "golden" / "gemini_stream"
SIG = "c2lnbmVkIGNhbGw="

# --- the API's shapes --------------------------------------------------------
# Field names (proto3 JSON: lowerCamelCase) and enum values of
# google/ai/generativelanguage/v1beta/{generative_service,content,safety,citation}.proto
# in googleapis/googleapis at f8291d2b89f0017ab078a4c7378069bae5686f6f. A dict is
# a message (its keys are every field it may hold), a one-item list a repeated
# field, a frozenset an enum, STRUCT a google.protobuf.Struct.
STRUCT = object()
MODALITY = frozenset({"MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "VIDEO", "AUDIO", "DOCUMENT"})
MODALITY_COUNT = {"modality": MODALITY, "tokenCount": int}
HARM_CATEGORY = frozenset(
    {
        "HARM_CATEGORY_UNSPECIFIED",
        "HARM_CATEGORY_DEROGATORY",
        "HARM_CATEGORY_TOXICITY",
        "HARM_CATEGORY_VIOLENCE",
        "HARM_CATEGORY_SEXUAL",
        "HARM_CATEGORY_MEDICAL",
        "HARM_CATEGORY_DANGEROUS",
        "HARM_CATEGORY_HARASSMENT",
        "HARM_CATEGORY_HATE_SPEECH",
        "HARM_CATEGORY_SEXUALLY_EXPLICIT",
        "HARM_CATEGORY_DANGEROUS_CONTENT",
        "HARM_CATEGORY_CIVIC_INTEGRITY",
    }
)
SAFETY_RATING = {
    "category": HARM_CATEGORY,
    "probability": frozenset({"HARM_PROBABILITY_UNSPECIFIED", "NEGLIGIBLE", "LOW", "MEDIUM", "HIGH"}),
    "blocked": bool,
}
PART = {
    "text": str,
    "inlineData": {"mimeType": str, "data": str},
    "functionCall": {"id": str, "name": str, "args": STRUCT},
    "functionResponse": {"id": str, "name": str, "response": STRUCT},
    "fileData": {"mimeType": str, "fileUri": str},
    "executableCode": {"language": frozenset({"LANGUAGE_UNSPECIFIED", "PYTHON"}), "code": str},
    "codeExecutionResult": {
        "outcome": frozenset({"OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"}),
        "output": str,
    },
    "videoMetadata": STRUCT,
    "thought": bool,
    "thoughtSignature": str,  # bytes: base64 text in JSON
    "partMetadata": STRUCT,
}
PART_DATA = (
    "text",
    "inlineData",
    "functionCall",
    "functionResponse",
    "fileData",
    "executableCode",
    "codeExecutionResult",
)
FINISH_REASON = frozenset(
    {
        "FINISH_REASON_UNSPECIFIED",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
        "RECITATION",
        "LANGUAGE",
        "OTHER",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "MALFORMED_FUNCTION_CALL",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_OTHER",
        "NO_IMAGE",
        "IMAGE_RECITATION",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
    }
)
CANDIDATE = {
    "index": int,
    "content": {"parts": [PART], "role": str},
    "finishReason": FINISH_REASON,
    "finishMessage": str,
    "safetyRatings": [SAFETY_RATING],
    "citationMetadata": {
        "citationSources": [{"startIndex": int, "endIndex": int, "uri": str, "license": str}],
    },
    "tokenCount": int,
    "groundingAttributions": STRUCT,
    "groundingMetadata": STRUCT,
    "avgLogprobs": float,
    "logprobsResult": STRUCT,
    "urlContextMetadata": STRUCT,
}
RESPONSE = {
    "candidates": [CANDIDATE],
    "promptFeedback": {
        "blockReason": frozenset(
            {"BLOCK_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY"}
        ),
        "safetyRatings": [SAFETY_RATING],
    },
    "usageMetadata": {
        "promptTokenCount": int,
        "cachedContentTokenCount": int,
        "candidatesTokenCount": int,
        "toolUsePromptTokenCount": int,
        "thoughtsTokenCount": int,
        "totalTokenCount": int,
        "promptTokensDetails": [MODALITY_COUNT],
        "cacheTokensDetails": [MODALITY_COUNT],
        "candidatesTokensDetails": [MODALITY_COUNT],
        "toolUsePromptTokensDetails": [MODALITY_COUNT],
    },
    "modelVersion": str,
    "responseId": str,
}
# google.rpc.Status as the Google API error model sends it (https://cloud.google.com/apis/design/errors).
ERROR_CHUNK = {"error": {"code": int, "message": str, "status": str, "details": [STRUCT]}}


def conforms(value: Any, spec: Any, path: str = "") -> None:
    if spec is STRUCT:
        assert isinstance(value, dict), path
    elif isinstance(spec, list):
        assert isinstance(value, list), path
        for i, item in enumerate(value):
            conforms(item, spec[0], f"{path}[{i}]")
    elif isinstance(spec, dict):
        assert isinstance(value, dict), path
        assert set(value) <= set(spec), f"{path}: unknown fields {set(value) - set(spec)}"
        if spec is PART:
            assert sum(key in value for key in PART_DATA) <= 1, f"{path}: more than one data field"
        for key, item in value.items():
            conforms(item, spec[key], f"{path}.{key}")
    elif isinstance(spec, frozenset):
        assert value in spec, f"{path}: {value!r} is not a value of the enum"
    elif spec is int:
        assert isinstance(value, int), path
        assert not isinstance(value, bool), path
        assert 0 <= value < 2**31, path
    elif spec is float:
        assert isinstance(value, (int, float)), path
        assert not isinstance(value, bool), path
    else:
        assert isinstance(value, spec), path


# --- helpers -----------------------------------------------------------------


def golden(name: str) -> list[dict[str, Any]]:
    data = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert data["_source"]
    chunks: list[dict[str, Any]] = data["chunks"]
    return chunks


def run(chunks: list[dict[str, Any]], **options: Any) -> tuple[AssistantMessage, list[str]]:
    accumulator = StreamAccumulator().extend(stream_events(chunks, message_id="m1", **options))
    return accumulator.finish(), accumulator.issues


def expected(
    folded: AssistantMessage, contents: list[Any], *, model: str, response_id: str, **fields: Any
) -> AssistantMessage:
    return AssistantMessage(
        contents,
        id="m1",
        timestamp=folded.timestamp,
        provenance=Provenance(PROVIDER, API, model, response_id),
        **fields,
    )


def metadata(block_type: str, value: dict[str, Any]) -> ProviderContent:
    """The trailing provider block holding what a response has no typed place for (``responseMetadata``)."""
    return ProviderContent("google", block_type, json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def kinds(events: list[StreamEvent]) -> list[str | None]:
    return [event.kind for event in events]


# --- the recorded streams ----------------------------------------------------

FIXTURES = sorted(path.stem for path in GOLDEN.glob("*.json"))


def test_every_fixture_is_tested() -> None:
    assert FIXTURES == [
        "blocked_prompt",
        "code_execution",
        "cut_off",
        "malformed_function_call",
        "no_usage",
        "parallel_tool_calls",
        "safety_finish",
        "stream_error",
        "text_answer",
        "thinking_signature",
    ]


@pytest.mark.parametrize("name", FIXTURES)
def test_every_stream_starts_once_and_ends_once(name: str) -> None:
    events = list(stream_events(golden(name)))
    names = kinds(events)
    assert names[0] == "message_start"
    assert names.count("message_start") == 1
    assert names[-1] in ("message_stop", "error")
    assert names.count("message_stop") + names.count("error") == 1


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_follow_the_api_schema(name: str) -> None:
    for i, item in enumerate(golden(name)):
        conforms(item, ERROR_CHUNK if "error" in item else RESPONSE, f"{name}[{i}]")


def test_sse_fixture_holds_the_same_chunks() -> None:
    lines = (GOLDEN / "text_answer.sse").read_text(encoding="utf-8").splitlines(keepends=True)
    assert [json.loads(event.data) for event in iter_sse(lines)] == golden("text_answer")


def test_plain_text_answer() -> None:
    message, issues = run(golden("text_answer"))
    assert message == expected(
        message,
        [
            TextContent(
                "Sunlight scatters off air molecules, and blue light, with its short wavelength, scatters the most"
                " — so the sky looks blue.\n"
            ),
            metadata(
                "responseMetadata",
                {
                    "usageMetadata": {
                        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 7}],
                        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 23}],
                    }
                },
            ),
        ],
        model="gemini-2.0-flash",
        response_id="Kf3aaPqWJ4aXz7IPkNeM-Ak",
        usage=Usage(input_tokens=7, output_tokens=23, total_tokens=30),
        stop_reason=StopReason.STOP,
        stop_reason_raw="STOP",
    )
    assert issues == []


def test_sse_text_and_decoded_chunks_give_the_same_message() -> None:
    text = (GOLDEN / "text_answer.sse").read_text(encoding="utf-8")
    from_sse = fold(stream_events_from_sse(text.splitlines(keepends=True), message_id="m1"))
    # Bytes with CRLF line ends, as the server sends them, too.
    raw = [line.encode() for line in text.replace("\n", "\r\n").splitlines(keepends=True)]
    from_bytes = fold(stream_events_from_sse(raw, message_id="m1"))
    decoded = fold(stream_events(golden("text_answer"), message_id="m1"))
    assert from_sse == expected(
        from_sse,
        list(decoded.contents),
        model="gemini-2.0-flash",
        response_id="Kf3aaPqWJ4aXz7IPkNeM-Ak",
        usage=decoded.usage,
        stop_reason=decoded.stop_reason,
        stop_reason_raw=decoded.stop_reason_raw,
    )
    assert from_bytes == expected(
        from_bytes,
        list(decoded.contents),
        model="gemini-2.0-flash",
        response_id="Kf3aaPqWJ4aXz7IPkNeM-Ak",
        usage=decoded.usage,
        stop_reason=decoded.stop_reason,
        stop_reason_raw=decoded.stop_reason_raw,
    )


def test_thinking_with_signatures() -> None:
    chunks = golden("thinking_signature")
    thought_signature = chunks[1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    text_signature = chunks[4]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    message, issues = run(chunks)
    assert message == expected(
        message,
        [
            ThinkingContent(
                "**Listing the primes**\n\nI need every prime below 20: 2, 3, 5, 7, 11, 13, 17 and 19. That is eight.",
                thought_signature,
            ),
            TextContent("There are eight primes below 20: 2, 3, 5, 7, 11, 13, 17 and 19.", signature=text_signature),
            metadata(
                "responseMetadata",
                {
                    "usageMetadata": {
                        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 2100}],
                        "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 2048}],
                    }
                },
            ),
        ],
        model="gemini-2.5-pro",
        response_id="p8TaaNTcBf6Qz7IP_7KkmQ0",
        # promptTokenCount 2100 includes the 2048 cached; output = 24 candidates + 180 thoughts.
        usage=Usage(
            input_tokens=52, output_tokens=204, cache_read_tokens=2048, reasoning_tokens=180, total_tokens=2304
        ),
        stop_reason=StopReason.STOP,
        stop_reason_raw="STOP",
    )
    assert issues == []


def test_parallel_tool_calls() -> None:
    chunks = golden("parallel_tool_calls")
    signature = chunks[1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    message, issues = run(chunks)
    assert message == expected(
        message,
        [
            TextContent("I'll check both cities."),
            ToolCallContent(
                # No id in the parts: the converter's generated id (responseId, block index, name).
                generated_call_id("vMXaaJSmL8DUz7IPsL2m4QU", 1, "get_weather"),
                "get_weather",
                arguments='{"city":"Paris","unit":"celsius"}',
                index=0,
                signature=signature,
            ),
            ToolCallContent(
                generated_call_id("vMXaaJSmL8DUz7IPsL2m4QU", 2, "get_weather"),
                "get_weather",
                arguments='{"city":"Tōkyō","unit":"celsius"}',
                index=1,
            ),
        ],
        model="gemini-3-pro-preview",
        response_id="vMXaaJSmL8DUz7IPsL2m4QU",
        usage=Usage(input_tokens=96, output_tokens=165, reasoning_tokens=127, total_tokens=261),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="STOP",
    )
    assert issues == []
    assert [call.args for call in message.tool_calls()] == [
        {"city": "Paris", "unit": "celsius"},
        {"city": "Tōkyō", "unit": "celsius"},
    ]


def test_malformed_function_call_ends_in_an_error() -> None:
    message, issues = run(golden("malformed_function_call"))
    assert message == expected(
        message,
        [TextContent("Adding the meeting to your calendar.")],
        model="gemini-2.5-flash",
        response_id="Zs7aaM6oHZ2Fz7IP4pW8sAg",
        usage=Usage(input_tokens=141, output_tokens=271, reasoning_tokens=262, total_tokens=412),
        stop_reason=StopReason.ERROR,
        stop_reason_raw="MALFORMED_FUNCTION_CALL",
        error="Malformed function call: print(default_api.add_event(title='Standup', start=tomorrow 9am))",
    )
    assert issues == []


def test_a_stream_without_usage_leaves_usage_unknown() -> None:
    message, issues = run(golden("no_usage"))
    assert message == expected(
        message,
        [TextContent("Once upon a time, a lighthouse keeper found a letter in a")],
        model="gemini-2.0-flash-lite",
        response_id="A9DaaLKvMpXbz7IPr9yQwQ4",
        stop_reason=StopReason.LENGTH,
        stop_reason_raw="MAX_TOKENS",
    )
    assert message.usage is None
    assert issues == []


def test_a_blocked_prompt_is_a_content_filter_stop() -> None:
    chunks = golden("blocked_prompt")
    message, issues = run(chunks)
    assert message == expected(
        message,
        [metadata("promptFeedback", chunks[-1]["promptFeedback"])],
        model="gemini-2.0-flash",
        response_id="H9LaaPbHDqCEz7IP0vGd6Q0",
        usage=Usage(input_tokens=12, total_tokens=12),
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="SAFETY",
    )
    assert issues == []


def test_a_safety_stop_keeps_the_text_so_far() -> None:
    chunks = golden("safety_finish")
    message, issues = run(chunks)
    ratings = chunks[-1]["candidates"][0]["safetyRatings"]
    assert message == expected(
        message,
        [
            TextContent("Here is how the reaction works. First,"),
            metadata("responseMetadata", {"candidate": {"safetyRatings": ratings}}),
        ],
        model="gemini-2.0-flash",
        response_id="WtPaaOqKJcyJz7IPi8C36A4",
        usage=Usage(input_tokens=18, output_tokens=9, total_tokens=27),
        stop_reason=StopReason.CONTENT_FILTER,
        stop_reason_raw="SAFETY",
    )
    assert issues == []


def test_a_stream_cut_off_before_its_finish_reason_is_an_error() -> None:
    message, issues = run(golden("cut_off"))
    assert message == expected(
        message,
        [TextContent("The three laws of motion are: first, an object stays at rest")],
        model="gemini-2.0-flash",
        response_id="r9TaaPO5C7Wez7IPyd7H8Qg",
        usage=Usage(input_tokens=9, total_tokens=9),
        stop_reason=StopReason.ERROR,
        error="the Gemini stream was cut short: no chunk had a finishReason",
    )
    assert issues == ["block 0 (text) was cut short by the error and kept as far as it got"]


def test_an_error_object_in_the_stream_ends_it() -> None:
    message, issues = run(golden("stream_error"))
    assert message == expected(
        message,
        [TextContent("Step 1: preheat the oven")],
        model="gemini-2.5-flash",
        response_id="c9XaaIfjGIyAz7IPq_CfwQo",
        usage=Usage(input_tokens=11, total_tokens=11),
        stop_reason=StopReason.ERROR,
        stop_reason_raw="UNAVAILABLE",
        error="The model is overloaded. Please try again later.",
    )
    assert issues == ["block 0 (text) was cut short by the error and kept as far as it got"]


def test_code_execution_parts_are_hosted_tool_blocks() -> None:
    chunks = golden("code_execution")
    code_part = chunks[1]["candidates"][0]["content"]["parts"][0]
    result_part = chunks[2]["candidates"][0]["content"]["parts"][0]
    message, issues = run(chunks)
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    assert message == expected(
        message,
        [
            TextContent("I'll compute the sum of the first 50 primes."),
            HostedToolCallContent(
                "",
                "code_execution",
                json.dumps(code_part["executableCode"], **compact),  # type: ignore[arg-type]
                kind="code_execution",
                original=ProviderContent("google", "executableCode", json.dumps(code_part, **compact)),  # type: ignore[arg-type]
            ),
            HostedToolResultContent(
                name="code_execution",
                kind="code_execution",
                code_execution=CodeExecutionOutput(stdout=result_part["codeExecutionResult"]["output"]),
                status="completed",
                status_raw="OUTCOME_OK",
                original=ProviderContent("google", "codeExecutionResult", json.dumps(result_part, **compact)),  # type: ignore[arg-type]
            ),
            TextContent("The sum of the first 50 primes is 5117."),
            metadata("responseMetadata", {"usageMetadata": {"toolUsePromptTokenCount": 40}}),
        ],
        model="gemini-2.0-flash",
        response_id="T9baaJ2YE-SKz7IP6cXW0Qg",
        # toolUsePromptTokenCount (40) is counted apart and added to nothing.
        usage=Usage(input_tokens=23, output_tokens=61, total_tokens=84),
        stop_reason=StopReason.STOP,
        stop_reason_raw="STOP",
    )
    assert issues == []
    assert message.contents[1].original.block() == code_part  # type: ignore[union-attr]


ROUND_TRIPS = [name for name in FIXTURES if name not in ("cut_off", "stream_error")]


@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_the_folded_message_is_what_the_unstreamed_converter_reads(name: str) -> None:
    # The unstreamed response for a folded stream has one part per block: the converter writes it
    # without loss and reads the same message back (ids, stop reason, usage, error, provider blocks).
    folded = fold(stream_events(golden(name), message_id="m1"))
    report = ConversionReport()
    response = to_gemini_response(folded, report=report)
    assert not report, report.summary()
    for part in response.get("candidates", [{}])[0].get("content", {}).get("parts", []):
        assert "id" not in part.get("functionCall", {})  # generated ids are left out again
    back = from_gemini_response(response, pass_through_unknown=True)
    assert back.contents == folded.contents
    assert (back.usage, back.stop_reason, back.stop_reason_raw, back.error, back.provenance) == (
        folded.usage,
        folded.stop_reason,
        folded.stop_reason_raw,
        folded.error,
        folded.provenance,
    )


# --- the block rule ----------------------------------------------------------


def test_consecutive_parts_of_one_kind_share_a_block_and_a_change_of_kind_starts_one() -> None:
    events = list(
        stream_events(
            [
                chunk({"text": "a", "thought": True}, {"text": "b", "thought": True}),
                chunk({"text": "c"}, {"text": "d", "thought": False}),
                chunk({"text": "e", "thought": True}, finish="STOP"),
            ]
        )
    )
    message = fold(events)
    assert message.contents == (ThinkingContent("ab"), TextContent("cd"), ThinkingContent("e"))
    assert kinds(events).count("block_start") == 3


def test_a_function_call_closes_the_text_block_and_text_after_it_starts_a_new_one() -> None:
    message = fold(
        stream_events(
            [
                chunk({"text": "Let me check."}, {"functionCall": {"name": "now"}}, {"text": "Done."}, finish="STOP"),
            ]
        )
    )
    assert message.contents == (
        TextContent("Let me check."),
        ToolCallContent(generated_call_id("", 1, "now"), "now", arguments="{}"),
        TextContent("Done."),
    )
    assert message.stop_reason is StopReason.TOOL_CALLS


def test_empty_text_without_a_signature_changes_nothing() -> None:
    events = list(
        stream_events([chunk({"text": "a"}, {"text": "", "thought": True}, {"text": "b"}, {}, finish="STOP")])
    )
    assert fold(events).contents == (TextContent("ab"),)
    assert kinds(events).count("block_start") == 1


def test_a_second_signature_starts_a_new_block_so_signatures_stay_whole() -> None:
    message = fold(
        stream_events(
            [
                chunk({"text": "one", "thoughtSignature": "c2lnMQ=="}, {"text": " more"}),
                chunk({"text": "two", "thoughtSignature": "c2lnMg=="}, finish="STOP"),
            ]
        )
    )
    assert message.contents == (
        TextContent("one more", signature="c2lnMQ=="),
        TextContent("two", signature="c2lnMg=="),
    )


def test_a_signature_only_part_signs_the_open_block_of_its_kind() -> None:
    message = fold(
        stream_events(
            [
                chunk({"text": "hmm", "thought": True}, {"thought": True, "thoughtSignature": "c2ln"}),
                chunk({"text": "Yes."}, finish="STOP"),
            ]
        )
    )
    assert message.contents == (ThinkingContent("hmm", "c2ln"), TextContent("Yes."))


def test_an_empty_text_part_with_a_signature_after_a_call_is_its_own_text_block() -> None:
    message = fold(
        stream_events(
            [
                chunk(
                    {"functionCall": {"name": "ping", "args": {}}},
                    {"text": "", "thoughtSignature": "c2ln"},
                    finish="STOP",
                )
            ]
        )
    )
    assert message.contents == (
        ToolCallContent(generated_call_id("", 0, "ping"), "ping", arguments="{}"),
        TextContent("", signature="c2ln"),
    )


def test_other_parts_are_provider_blocks_named_by_their_data_field() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}, "thoughtSignature": "c2ln"}
    future = {"someNewPart": {"x": 1}, "thought": True}
    message = fold(stream_events([chunk({"text": "Here:"}, image, future, {"text": "Done."}, finish="STOP")]))
    assert message.contents == (
        TextContent("Here:"),
        ProviderContent("google", "inlineData", json.dumps(image, separators=(",", ":"))),
        ProviderContent("google", "someNewPart", json.dumps(future, separators=(",", ":"))),
        TextContent("Done."),
    )


def test_a_text_or_call_part_with_fields_agentmsg_cannot_hold_is_kept_whole() -> None:
    parts: list[dict[str, Any]] = [
        {"text": "tagged", "partMetadata": {"source": "a.txt"}},
        {"functionCall": {"name": "f", "args": {}}, "thought": True},
        {"text": "and", "somethingNew": 1},
    ]
    message = fold(stream_events([chunk(*parts, finish="STOP")]))
    assert message.contents == (
        ProviderContent("google", "text", json.dumps(parts[0], separators=(",", ":"))),
        ProviderContent("google", "functionCall", json.dumps(parts[1], separators=(",", ":"))),
        ProviderContent("google", "text", json.dumps(parts[2], separators=(",", ":"))),
    )
    assert message.tool_calls() == []


def test_placeholder_signatures_are_not_read_as_signatures() -> None:
    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"}
    message = fold(stream_events([chunk(call, finish="STOP")]))
    assert message.tool_calls()[0].signature == ""


# --- function calls ----------------------------------------------------------


def test_a_function_call_id_comes_from_the_part_when_present() -> None:
    message = fold(
        stream_events(
            [
                chunk(
                    {"functionCall": {"id": "fc-7", "name": "lookup", "args": {"q": "x", "n": 2}}},
                    {"functionCall": {"name": "lookup", "args": None}},
                    finish="STOP",
                    responseId="r",
                )
            ]
        )
    )
    assert message.contents == (
        ToolCallContent("fc-7", "lookup", arguments='{"q":"x","n":2}', index=0),
        ToolCallContent(generated_call_id("r", 1, "lookup"), "lookup", arguments="{}", index=1),
    )


def test_a_function_call_is_one_start_one_delta_one_stop() -> None:
    parser = GeminiStreamParser(message_id="m1")
    events = parser.feed(chunk({"functionCall": {"name": "f", "args": {"a": [1, "é"]}}, "thoughtSignature": "c2ln"}))
    assert kinds(events) == ["message_start", "block_start", "block_delta", "block_delta", "block_stop"]
    assert events[2].pb.block_delta.tool_call.arguments == '{"a":[1,"é"]}'
    assert events[3].pb.block_delta.signature.signature == "c2ln"


def test_args_that_are_not_an_object_are_kept_verbatim_and_reported() -> None:
    # The API promises a Struct; anything else is written as its JSON text and flagged by the fold, never replaced.
    accumulator = StreamAccumulator().extend(
        stream_events([chunk({"functionCall": {"name": "f", "args": ["not", "an", "object"]}}, finish="STOP")])
    )
    message = accumulator.finish()
    call = message.tool_calls()[0]
    assert call.arguments == '["not","an","object"]'
    assert call.arguments_error == "a JSON list is not an object"
    assert accumulator.issues == [
        f"block 0 (tool call 'f', id {call.id!r}): arguments kept verbatim, not a JSON object: "
        "a JSON list is not an object"
    ]


# --- stop reasons ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("STOP", StopReason.STOP),
        ("MAX_TOKENS", StopReason.LENGTH),
        ("SAFETY", StopReason.CONTENT_FILTER),
        ("RECITATION", StopReason.CONTENT_FILTER),
        ("LANGUAGE", StopReason.CONTENT_FILTER),
        ("BLOCKLIST", StopReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", StopReason.CONTENT_FILTER),
        ("SPII", StopReason.CONTENT_FILTER),
        ("IMAGE_SAFETY", StopReason.CONTENT_FILTER),
        ("IMAGE_PROHIBITED_CONTENT", StopReason.CONTENT_FILTER),
        ("IMAGE_RECITATION", StopReason.CONTENT_FILTER),
        ("FINISH_REASON_UNSPECIFIED", None),
        ("A_REASON_FROM_THE_FUTURE", None),
    ],
)
def test_finish_reasons_that_end_with_message_stop(raw: str, reason: StopReason | None) -> None:
    events = list(stream_events([chunk({"text": "x"}, finish=raw)]))
    assert events[-1].kind == "message_stop"
    message = fold(events)
    assert (message.stop_reason, message.stop_reason_raw, message.error) == (reason, raw, "")


FAILURES = [
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "OTHER",
    "IMAGE_OTHER",
    "NO_IMAGE",
]


@pytest.mark.parametrize("raw", FAILURES)
def test_failure_reasons_without_a_finish_message_stop_with_error(raw: str) -> None:
    events = list(stream_events([chunk({"text": "x"}, finish=raw)]))
    assert kinds(events)[-2:] == ["block_stop", "message_stop"]
    message = fold(events)
    assert (message.stop_reason, message.stop_reason_raw, message.error) == (StopReason.ERROR, raw, "")
    assert message.contents == (TextContent("x"),)


@pytest.mark.parametrize("raw", FAILURES)
def test_failure_reasons_with_a_finish_message_end_with_an_error_event_holding_it(raw: str) -> None:
    item = chunk({"text": "x"}, finish=raw)
    item["candidates"][0]["finishMessage"] = "what went wrong"
    events = list(stream_events([item]))
    assert kinds(events)[-2:] == ["block_stop", "error"]  # the blocks are complete: stopped first
    message = fold(events)
    assert (message.stop_reason, message.stop_reason_raw, message.error) == (StopReason.ERROR, raw, "what went wrong")
    assert message.contents == (TextContent("x"),)


def test_a_finish_message_with_a_reason_that_is_not_a_failure_is_not_kept() -> None:
    # message_stop has no field for it (the unstreamed converter keeps it as `error`).
    item = chunk({"text": "x"}, finish="SAFETY")
    item["candidates"][0]["finishMessage"] = "blocked"
    message = fold(stream_events([item]))
    assert (message.stop_reason, message.error) == (StopReason.CONTENT_FILTER, "")


def test_the_last_finish_reason_wins_and_a_prompt_block_wins_over_it() -> None:
    message = fold(stream_events([chunk({"text": "x"}, finish="MAX_TOKENS"), chunk(finish="STOP")]))
    assert message.stop_reason is StopReason.STOP
    blocked = fold(stream_events([{"promptFeedback": {"blockReason": "OTHER"}}, chunk(finish="STOP")]))
    assert (blocked.stop_reason, blocked.stop_reason_raw) == (StopReason.CONTENT_FILTER, "OTHER")
    unblocked = fold(
        stream_events(
            [{"promptFeedback": {"blockReason": "BLOCK_REASON_UNSPECIFIED"}}, chunk({"text": "x"}, finish="STOP")]
        )
    )
    assert unblocked.stop_reason is StopReason.STOP


@pytest.mark.parametrize("raw", ["STOP", "FINISH_REASON_UNSPECIFIED", "A_REASON_FROM_THE_FUTURE"])
def test_an_empty_answer_that_claims_a_normal_stop_is_an_error(raw: str) -> None:
    # The contract has no empty assistant message that stopped normally (assistant.content.required).
    message = fold(stream_events([chunk({"text": ""}, finish=raw, usageMetadata={"promptTokenCount": 4})]))
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.ERROR, raw)
    assert message.error == f"the Gemini response had no content (finishReason {raw})"
    assert message.contents == ()
    assert fold(stream_events([chunk(finish="MAX_TOKENS")])).stop_reason is StopReason.LENGTH


# --- usage -------------------------------------------------------------------


def test_usage_is_sent_when_the_counts_change_and_only_reported_counts_are_set() -> None:
    usage = {"promptTokenCount": 5, "totalTokenCount": 5}
    events = list(
        stream_events(
            [
                chunk({"text": "a"}, usageMetadata=usage),
                chunk({"text": "b"}, usageMetadata=usage),
                chunk({"text": "c"}, usageMetadata={"trafficType": "ON_DEMAND"}),  # Vertex AI: no counts
                chunk(finish="STOP", usageMetadata={**usage, "candidatesTokenCount": 3, "totalTokenCount": 8}),
            ]
        )
    )
    assert kinds(events).count("usage") == 2
    assert fold(events).usage == Usage(input_tokens=5, output_tokens=3, total_tokens=8)


def test_thoughts_alone_are_output_and_reasoning() -> None:
    message = fold(stream_events([chunk({"text": "x"}, finish="STOP", usageMetadata={"thoughtsTokenCount": 12})]))
    assert message.usage == Usage(output_tokens=12, reasoning_tokens=12)


# --- ids and provenance ------------------------------------------------------


def test_the_message_id_defaults_to_the_response_id() -> None:
    message = fold(stream_events([chunk({"text": "x"}, finish="STOP", responseId="resp-1", modelVersion="gemini-x")]))
    assert message.id == "resp-1"
    assert message.provenance == Provenance(PROVIDER, API, "gemini-x", "resp-1")


def test_without_a_response_id_the_message_id_is_a_uuid_and_the_model_comes_from_the_option() -> None:
    message = fold(stream_events([chunk({"text": "x"}, finish="STOP")], model="gemini-2.0-flash"))
    assert len(message.id) == 36
    assert message.provenance == Provenance(PROVIDER, API, "gemini-2.0-flash", "")


def test_a_response_id_that_comes_late_goes_in_message_stop() -> None:
    events = list(stream_events([chunk({"text": "x"}), chunk(finish="STOP", responseId="late")], message_id="m1"))
    assert events[-1].pb.message_stop.response_id == "late"
    message = fold(events)
    assert (message.id, message.provenance.response_id) == ("m1", "late")  # type: ignore[union-attr]


# --- end of input ------------------------------------------------------------


def test_close_is_idempotent_and_ends_an_empty_stream_with_an_error() -> None:
    parser = GeminiStreamParser(message_id="m1")
    events = parser.close()
    assert kinds(events) == ["message_start", "error"]
    assert parser.close() == []
    assert parser.ended
    message = fold(events)
    assert message.error == "the Gemini stream was cut short: no chunk arrived"
    assert message.stop_reason is StopReason.ERROR


def test_an_error_chunk_without_a_message_names_the_status() -> None:
    message = fold(stream_events([{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}]))
    assert message.error == "the Gemini API reported an error (RESOURCE_EXHAUSTED)"
    assert message.stop_reason_raw == "RESOURCE_EXHAUSTED"
    numeric = fold(stream_events([{"error": {"code": 500, "message": "Internal error"}}]))
    assert (numeric.error, numeric.stop_reason_raw) == ("Internal error", "500")


# --- malformed input ---------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ([["not", "an", "object"]], "chunk 0: expected a JSON object, got array"),
        ([chunk({"text": "a"}), {"candidates": {}}], "chunk 1.candidates: expected an array, got object"),
        ([chunk({"text": 5})], "chunk 0.candidates[0].content.parts[0].text: expected a string, got number"),
        ([chunk({"text": "a", "thought": "yes"})], "parts[0].thought: expected a boolean, got string"),
        ([chunk({"text": "a", "thoughtSignature": 1})], "parts[0].thoughtSignature: expected a string, got number"),
        (
            [chunk({"text": "a", "functionCall": {"name": "f"}})],
            "a part holds one data field, got text and functionCall",
        ),
        ([chunk({"functionCall": {"args": {}}})], "parts[0].functionCall.name: a function call needs a name"),
        ([chunk({"functionCall": "f"})], "parts[0].functionCall: expected an object, got string"),
        (
            [chunk({"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "a"}], "willContinue": True}})],
            "functionCall.partialArgs[0].jsonPath: expected a JSON path such as $.a[0].b, got 'a'",
        ),
        (
            [chunk({"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.a"}], "willContinue": True}})],
            "functionCall.partialArgs[0]: a piece holds one of stringValue, numberValue, boolValue, nullValue",
        ),
        (
            [
                chunk({"functionCall": {"name": "f", "willContinue": True}}),
                chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}], "willContinue": True}}),
                chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.a.b", "numberValue": 2}]}}),
            ],
            "chunk 2.candidates[0].content.parts[0].functionCall.partialArgs[0].jsonPath: the path goes through",
        ),
        ([{"candidates": [{"index": 1}]}], "candidates[0]: candidate 1: the parser folds one candidate"),
        ([{"candidates": [{}, {}]}], "candidates[1]: candidate 1: the parser folds one candidate"),
        ([{"candidates": [{"finishReason": [1]}]}], "candidates[0].finishReason: expected a string, got array"),
        ([{"usageMetadata": {"promptTokenCount": "7"}}], "usageMetadata.promptTokenCount: expected a non-negative"),
        ([{"usageMetadata": {"promptTokenCount": True}}], "usageMetadata.promptTokenCount: expected a non-negative"),
        ([{"usageMetadata": {"totalTokenCount": -1}}], "usageMetadata.totalTokenCount: expected a non-negative"),
        (
            [{"usageMetadata": {"promptTokenCount": 5, "cachedContentTokenCount": 6}}],
            "chunk 0.usageMetadata.cachedContentTokenCount: 6 cached tokens exceed the prompt's 5",
        ),
        ([{"responseId": 3}], "chunk 0.responseId: expected a string, got number"),
        ([{"error": "boom"}], "chunk 0.error: expected an object, got string"),
        ([chunk({"text": "a\ud800"})], "parts[0].text: not encodable as UTF-8: surrogates not allowed at 1"),
        (
            [chunk({"functionCall": {"name": "f", "args": {"x": float("nan")}}})],
            "functionCall.args: not JSON-serialisable: Out of range float values are not JSON compliant",
        ),
        (
            [chunk({"executableCode": {"code": "\udc80"}})],
            "parts[0]: invalid value: executableCode: not encodable as UTF-8",
        ),
        ([{"error": {"message": "x"}}, chunk({"text": "a"})], "chunk 1: a chunk after the stream ended"),
    ],
)
def test_malformed_chunks_raise_naming_the_chunk_and_field(chunks: list[Any], message: str) -> None:
    with pytest.raises(StreamProtocolError, match="Gemini stream") as caught:
        list(stream_events(chunks))
    assert message in str(caught.value)


def test_a_chunk_after_close_raises() -> None:
    parser = GeminiStreamParser()
    parser.feed(chunk({"text": "a"}, finish="STOP"))
    parser.close()
    with pytest.raises(StreamProtocolError, match="chunk 1: a chunk after the stream ended"):
        parser.feed(chunk({"text": "b"}))


def test_sse_data_that_is_not_json_raises_naming_the_event() -> None:
    lines = ['data: {"candidates": []}\n', "\n", "data: {not json\n", "\n"]
    with pytest.raises(StreamProtocolError, match="SSE event 1: data is not JSON"):
        list(stream_events_from_sse(lines))


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValidationError):
        GeminiStreamParser(message_id="")
    with pytest.raises(ValidationError):
        GeminiStreamParser(model=3)  # type: ignore[arg-type]


# --- grounding and streamed arguments (issue 16) -----------------------------------------------------


def test_grounding_in_the_last_chunk_cites_the_text_streamed_before() -> None:
    grounding = {
        "webSearchQueries": ["weather zürich"],
        "groundingChunks": [{"web": {"uri": "https://vertexaisearch.test/r/1", "title": "meteo.ch"}}],
        "groundingSupports": [{"segment": {"endIndex": len("Zürich: ☀".encode())}, "groundingChunkIndices": [0]}],
    }
    chunks = [
        chunk({"text": "Zürich: "}, responseId="g1", modelVersion="gemini-2.5-flash"),
        {"candidates": [{**chunk({"text": "☀ warm."})["candidates"][0], "groundingMetadata": {}}]},
        chunk({"functionCall": {"name": "f", "args": {}}}),
        {
            "candidates": [{**chunk(finish="STOP")["candidates"][0], "groundingMetadata": grounding}],
            "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9},
        },
    ]
    message, issues = run(chunks)
    assert issues == []
    text, call, search, results = message.contents
    assert isinstance(text, TextContent)
    assert isinstance(call, ToolCallContent)
    (citation,) = text.citations
    assert text.content[citation.start_index : citation.end_index] == "Zürich: ☀"  # type: ignore[misc]
    assert isinstance(search, HostedToolCallContent)
    assert search.original is not None
    assert search.original.block() == grounding
    assert isinstance(results, HostedToolResultContent)
    # the same message as the response the chunks make
    response = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"text": "Zürich: ☀ warm."}, {"functionCall": {"name": "f", "args": {}}}],
                },
                "finishReason": "STOP",
                "groundingMetadata": grounding,
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "g1",
    }
    unstreamed = from_gemini_response(response)
    assert message.contents == unstreamed.contents
    assert to_gemini_response(message) == response


def test_streamed_function_call_arguments_are_assembled() -> None:
    def piece(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
        call: dict[str, Any] = {"partialArgs": list(args)}
        if more:
            call["willContinue"] = True
        return chunk({"functionCall": call})

    chunks = [
        chunk({"functionCall": {"name": "cook", "willContinue": True}, "thoughtSignature": SIG}, responseId="v1"),
        piece({"jsonPath": "$.recipe.steps[0]", "stringValue": "Preheat", "willContinue": True}),
        piece({"jsonPath": "$.recipe.steps[0]", "stringValue": " the oven."}),
        piece({"jsonPath": "$.recipe.servings", "numberValue": 4}, {"jsonPath": "$.recipe.vegan", "boolValue": False}),
        piece({"jsonPath": "$.recipe.note", "nullValue": None}),
        chunk({"functionCall": {}}),
        chunk({"functionCall": {"name": "serve", "willContinue": True}}),
        piece({"jsonPath": "$.plates[1]", "stringValue": "b"}, more=False),
        chunk(finish="STOP"),
    ]
    message, issues = run(chunks)
    assert issues == []
    cook, serve = message.contents
    assert isinstance(cook, ToolCallContent)
    assert isinstance(serve, ToolCallContent)
    assert (cook.name, cook.signature) == ("cook", SIG)
    assert cook.args == {"recipe": {"steps": ["Preheat the oven."], "servings": 4, "vegan": False, "note": None}}
    assert serve.args == {"plates": [None, "b"]}
    assert cook.id == generated_call_id("v1", 0, "cook")


def test_a_cut_short_stream_lists_only_the_block_it_cut() -> None:
    # the first text was followed by a call, so it was complete; the last text was cut
    message, issues = run(
        [chunk({"text": "a"}), chunk({"functionCall": {"name": "f", "args": {}}}), chunk({"text": "b"})]
    )
    assert [type(b).__name__ for b in message.contents] == ["TextContent", "ToolCallContent", "TextContent"]
    assert issues == ["block 2 (text) was cut short by the error and kept as far as it got"]
