"""Azure OpenAI's and Vertex AI's dialects of the Chat Completions and Gemini formats, at their boundaries.

Recorded traffic of both is in the real-traffic corpus (``tests/corpus``, ``azure.*`` and ``vertex.*``
cases). These tests add what no recording in the corpus holds: a choice Azure's content filter stopped
(Azure's documented shape, https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter:
``finish_reason: "content_filter"``, no ``message``, the filter that fired in ``content_filter_results``),
a stream its filter cut, and every integer enum Vertex AI sends with ``$alt=json;enum-encoding=int``
(numbers from ``google.cloud.aiplatform.v1`` ``content.proto`` / ``tool.proto``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from agentmsg import AssistantMessage, HostedToolResultContent, ProviderContent, StopReason, ValidationError
from agentmsg.providers import gemini, gemini_stream, openai_chat, openai_chat_stream
from agentmsg.providers._common import ConversionReport
from agentmsg.streaming import StreamProtocolError, fold

SAFE = {"filtered": False, "severity": "safe"}
PROMPT_FILTER = [
    {
        "prompt_index": 0,
        "content_filter_results": {
            "hate": SAFE,
            "jailbreak": {"filtered": False, "detected": False},
            "self_harm": SAFE,
            "sexual": SAFE,
            "violence": SAFE,
        },
    }
]
VIOLENCE = {"hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": {"filtered": True, "severity": "medium"}}


def _kept(message: AssistantMessage, block_type: str) -> Any:
    blocks = [b for b in message.contents if isinstance(b, ProviderContent) and b.block_type == block_type]
    assert len(blocks) == 1, [b.block_type for b in message.contents]
    return blocks[0].block()


# --------------------------------------------------------------------------- Azure OpenAI, responses


def _filtered_response() -> dict[str, Any]:
    return {
        "id": "chatcmpl-filtered",
        "object": "chat.completion",
        "created": 1758119573,
        "model": "gpt-4.1-2025-04-14",
        "prompt_filter_results": PROMPT_FILTER,
        "choices": [{"index": 0, "finish_reason": "content_filter", "content_filter_results": VIOLENCE}],
        "usage": {"prompt_tokens": 13, "completion_tokens": 0, "total_tokens": 13},
    }


def test_a_choice_the_content_filter_stopped_is_read_with_its_filter_results() -> None:
    message = openai_chat.from_openai_chat_response(_filtered_response())
    assert message.stop_reason is StopReason.CONTENT_FILTER
    assert message.stop_reason_raw == "content_filter"
    assert message.text_content() == ""
    assert _kept(message, "response.content_filter_results") == {"content_filter_results": VIOLENCE}
    assert _kept(message, "response.prompt_filter_results") == {"prompt_filter_results": PROMPT_FILTER}


def test_a_filtered_choice_is_written_back_as_it_came() -> None:
    body = _filtered_response()
    written = openai_chat.to_openai_chat_response(openai_chat.from_openai_chat_response(body))
    assert "message" not in written["choices"][0]
    assert written["choices"][0]["content_filter_results"] == VIOLENCE
    assert written["prompt_filter_results"] == PROMPT_FILTER
    assert written["choices"][0]["finish_reason"] == "content_filter"


def test_filter_results_are_response_data_not_model_input() -> None:
    message = openai_chat.from_openai_chat_response(_filtered_response())
    report = ConversionReport()
    sent = json.dumps(openai_chat.to_openai_chat([message], report=report))
    assert "filter" not in sent  # a request leaves response data out, as it does usage details
    assert report.losses == []


def test_a_filtered_choice_without_filter_results_is_an_empty_content_filter_stop() -> None:
    body = _filtered_response()
    del body["choices"][0]["content_filter_results"], body["prompt_filter_results"]
    message = openai_chat.from_openai_chat_response(body)
    assert (list(message.contents), message.stop_reason) == ([], StopReason.CONTENT_FILTER)
    written = openai_chat.to_openai_chat_response(message)
    assert written["choices"] == [{"index": 0, "finish_reason": "content_filter", "logprobs": None}]


def test_a_choice_without_message_is_still_refused_unless_the_filter_stopped_it() -> None:
    body = _filtered_response()
    body["choices"][0]["finish_reason"] = "stop"
    with pytest.raises(ValidationError) as caught:
        openai_chat.from_openai_chat_response(body)
    assert any(v.field == "choices[0].message" for v in caught.value.violations)


def test_older_api_versions_prompt_annotations_are_kept_too() -> None:
    body = _filtered_response()
    body["prompt_annotations"] = body.pop("prompt_filter_results")
    message = openai_chat.from_openai_chat_response(body)
    assert openai_chat.to_openai_chat_response(message)["prompt_annotations"] == PROMPT_FILTER


# --------------------------------------------------------------------------- Azure OpenAI, streams


def _chunk(delta: dict[str, Any], finish: str | None = None, filters: Any = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    if filters is not None:
        choice["content_filter_results"] = filters
    return {
        "id": "chatcmpl-azure",
        "object": "chat.completion.chunk",
        "created": 1757173664,
        "model": "gpt-4.1-2025-04-14",
        "choices": [choice],
    }


PROMPT_CHUNK = {
    "id": "",
    "object": "",
    "created": 0,
    "model": "",
    "choices": [],
    "prompt_filter_results": PROMPT_FILTER,
}


def _cut_stream() -> list[dict[str, Any]]:
    """A stream Azure's filter cut: the prompt-filter chunk, text, then the stop with the filter that fired."""
    return [
        PROMPT_CHUNK,
        _chunk({"role": "assistant", "content": ""}, filters={}),
        _chunk({"content": "Once upon"}, filters={"hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": SAFE}),
        _chunk({}, "content_filter", filters=VIOLENCE),
    ]


def test_the_prompt_filter_chunk_opens_a_stream_and_is_kept() -> None:
    message = fold(openai_chat_stream.stream_events(_cut_stream()))
    assert message.error == ""
    assert message.provenance is not None
    assert (message.provenance.response_id, message.provenance.model) == ("chatcmpl-azure", "gpt-4.1-2025-04-14")
    assert message.text_content() == "Once upon"
    assert message.stop_reason is StopReason.CONTENT_FILTER
    assert _kept(message, "response.prompt_filter_results") == {"prompt_filter_results": PROMPT_FILTER}
    assert _kept(message, "response.content_filter_results") == {"content_filter_results": VIOLENCE}


def test_a_cut_stream_folds_as_the_openai_sdk_accumulates_it() -> None:
    chunks = _cut_stream()
    state = ChatCompletionStreamState()
    for item in chunks:
        list(state.handle_chunk(ChatCompletionChunk.construct(**item)))
    # the snapshot: get_final_completion() raises for a content_filter finish; id, model and created are the
    # blank ones of the prompt-filter chunk, the first the SDK saw
    final = state.current_completion_snapshot.to_dict()
    final.update(id="chatcmpl-azure", model="gpt-4.1-2025-04-14", created=1757173664)
    # ...and its choice keeps the content_filter_results of the choice's first chunk ({}), never updated: the
    # filter that cut the stream would be lost; the fold keeps the last results the stream sent
    assert final["choices"][0]["content_filter_results"] == {}
    final["choices"][0]["content_filter_results"] = VIOLENCE
    ours = fold(openai_chat_stream.stream_events(chunks)).to_json_dict()
    theirs = openai_chat.from_openai_chat_response(final).to_json_dict()
    for view in (ours, theirs):
        view.pop("id")
    assert ours == theirs


def test_an_empty_object_chunk_without_prompt_filter_results_is_still_refused() -> None:
    with pytest.raises(StreamProtocolError, match=r"chunk\.object"):
        list(openai_chat_stream.stream_events([{"id": "", "object": "", "created": 0, "model": "", "choices": []}]))


def test_a_prompt_filter_chunk_after_the_stream_started_is_refused() -> None:
    chunks = [_chunk({"content": "a"}), PROMPT_CHUNK]
    with pytest.raises(StreamProtocolError, match=r"chunk\.object"):
        list(openai_chat_stream.stream_events(chunks))


# --------------------------------------------------------------------------- Vertex AI integer enums


def _vertex(**candidate: Any) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, **candidate}],
        "usageMetadata": {
            "promptTokenCount": 5,
            "candidatesTokenCount": 1,
            "totalTokenCount": 6,
            "trafficType": 1,
            "promptTokensDetails": [{"modality": 1, "tokenCount": 5}],
        },
        "modelVersion": "gemini-2.5-pro",
        "responseId": "vertex-1",
    }


@pytest.mark.parametrize(
    ("number", "name", "stop"),
    [
        (1, "STOP", StopReason.STOP),
        (2, "MAX_TOKENS", StopReason.LENGTH),
        (3, "SAFETY", StopReason.CONTENT_FILTER),
        (7, "PROHIBITED_CONTENT", StopReason.CONTENT_FILTER),
        (9, "MALFORMED_FUNCTION_CALL", None),
    ],
)
def test_an_integer_finish_reason_reads_as_its_name(number: int, name: str, stop: StopReason | None) -> None:
    by_number = gemini.from_gemini_response(_vertex(finishReason=number))
    by_name = gemini.from_gemini_response(_vertex(finishReason=name))
    assert by_number.stop_reason_raw == name
    assert by_number.stop_reason is by_name.stop_reason
    if stop is not None:
        assert by_number.stop_reason is stop


def test_a_finish_reason_number_this_version_does_not_know_is_kept_as_its_digits() -> None:
    message = gemini.from_gemini_response(_vertex(finishReason=99))
    assert message.stop_reason_raw == "99"


@pytest.mark.parametrize("value", [True, 1.5, [1]])
def test_a_finish_reason_of_another_type_is_still_refused(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        gemini.from_gemini_response(_vertex(finishReason=value))
    assert any(v.field == "candidates[0].finishReason" for v in caught.value.violations)


def test_safety_ratings_modality_and_traffic_type_numbers_are_kept_verbatim() -> None:
    ratings = [{"category": 1, "probability": 1, "severity": 1, "probabilityScore": 0.1}]
    body = _vertex(finishReason=1, safetyRatings=ratings)
    message = gemini.from_gemini_response(body)
    written = gemini.to_gemini_response(message)
    assert written["candidates"][0]["safetyRatings"] == ratings
    assert written["usageMetadata"]["promptTokensDetails"] == [{"modality": 1, "tokenCount": 5}]
    assert written["usageMetadata"]["trafficType"] == 1


def test_an_integer_block_reason_is_a_blocked_prompt() -> None:
    body = {"promptFeedback": {"blockReason": 1, "safetyRatings": [{"category": 2, "probability": 4}]}}
    message = gemini.from_gemini_response(body)
    assert message.stop_reason is StopReason.CONTENT_FILTER
    assert message.stop_reason_raw == "SAFETY"
    streamed = fold(gemini_stream.stream_events([body]))
    assert (streamed.stop_reason, streamed.stop_reason_raw) == (StopReason.CONTENT_FILTER, "SAFETY")


def test_integer_code_execution_outcomes_and_url_statuses_read_as_their_names() -> None:
    parts = [
        {"executableCode": {"language": 1, "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": 2, "output": "Traceback"}},
        {"text": "done"},
    ]
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": 1,
                "urlContextMetadata": {
                    "urlMetadata": [{"retrievedUrl": "https://example.com/", "urlRetrievalStatus": 2}]
                },
            }
        ]
    }
    message = gemini.from_gemini_response(body)
    results = [b for b in message.contents if isinstance(b, HostedToolResultContent)]
    assert [(r.status_raw, r.is_error) for r in results] == [
        ("OUTCOME_FAILED", True),
        ("URL_RETRIEVAL_STATUS_ERROR", True),
    ]
    written = gemini.to_gemini_response(message)
    assert written["candidates"][0]["content"]["parts"][:2] == parts[:2]  # the numbers go back as they came
    assert written["candidates"][0]["urlContextMetadata"] == body["candidates"][0]["urlContextMetadata"]


def test_a_vertex_stream_with_integer_enums_folds_as_the_response_reads() -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}], "modelVersion": "gemini-2.5-pro"},
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": 2}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5},
            "modelVersion": "gemini-2.5-pro",
            "responseId": "vertex-2",
        },
    ]
    streamed = fold(gemini_stream.stream_events(chunks))
    assert (streamed.stop_reason, streamed.stop_reason_raw) == (StopReason.LENGTH, "MAX_TOKENS")
    assert streamed.text_content() == "Hello"
    sse = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    assert fold(gemini_stream.stream_events_from_sse(sse)).stop_reason_raw == "MAX_TOKENS"
