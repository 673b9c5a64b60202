"""The OpenAI Responses converter (``agentmsg.providers.openai_responses``).

Golden payloads live in ``tests/golden/openai_responses/*.json``; each names,
under ``_source``, the SDK types (``openai`` 3.52.0) and documentation pages
it follows. Every payload :func:`to_openai_responses` writes is validated
with the SDK's own request types, and every response
:func:`to_openai_responses_response` writes with its ``Response`` model.

What a request cannot carry, and the tests therefore normalise: message ids
and timestamps (request items have none; reading gives new UUIDs and the
time of reading), and an assistant message's usage, stop reason, error and
provenance (requests carry none of them; an assistant turn read back with
reasoning gets ``Provenance("openai", "openai-responses")``, which the
samples use so that whole messages compare equal).
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import (
    EasyInputMessageParam,
    Response,
    ResponseFunctionToolCallParam,
    ResponseInputParam,
    ResponseOutputItem,
    ResponseOutputMessageParam,
    ResponseReasoningItemParam,
)
from openai.types.responses.response_input_param import FunctionCallOutput, Message
from samples import PDF, WAV, png_bytes
from sdk_check import validate_with

from agentmsg import (
    AgentMessage,
    AssistantMessage,
    AudioContent,
    Citation,
    CompactionSummaryMessage,
    DocumentContent,
    ImageContent,
    ImageDetail,
    Provenance,
    ProviderContent,
    RedactedThinkingContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolApprovalContent,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    Usage,
    UsageCost,
    UserMessage,
    ValidationError,
)
from agentmsg.providers._common import ConversionError, ConversionReport, ConversionWarning
from agentmsg.providers.openai_responses import (
    API,
    BLOCK_FORMAT,
    PROVIDER,
    envelope_slots,
    from_openai_responses,
    from_openai_responses_response,
    hosted_blocks,
    to_openai_responses,
    to_openai_responses_response,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "openai_responses"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PNG = base64.b64decode(PNG_B64)
OPENAI = Provenance(PROVIDER, API)
# The request-echo fields the SDK's Response requires and a message cannot say; these are the API's
# documented defaults (parallel_tool_calls true, tool_choice "auto", no tools).
ECHO = {"parallel_tool_calls": True, "tool_choice": "auto", "tools": []}


def typed(message: Any) -> tuple[Any, ...]:
    """A message's blocks without the item envelopes (ProviderContent that the blocks after it fill)."""
    return tuple(
        block
        for block in message.contents
        if not (isinstance(block, ProviderContent) and (envelope_slots(block) or (None, 0))[1] > 0)
    )


def load_golden(name: str) -> dict[str, Any]:
    """A golden payload, with its ``_source`` note checked and stripped."""
    doc = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    source = doc.pop("_source")
    assert source["sdk"] == "openai 3.52.0"
    assert source["types"]
    assert source["docs"]
    return dict(doc)


# --------------------------------------------------------------------------- SDK checks


ITEM_TYPES: dict[str, Any] = {
    "function_call": ResponseFunctionToolCallParam,
    "function_call_output": FunctionCallOutput,
}


def check_request(payload: dict[str, Any], *, ours: bool = True) -> None:
    """Validate a request payload with the SDK's types, item by item, and assert nothing was dropped.

    ``ResponseInputParam`` is a plain union in which ``ItemReference`` (only ``id`` required)
    matches nearly anything, so each item is also validated as its own type and compared
    with the validated value (a TypedDict drops unknown keys silently).
    The SDK's ``ResponseReasoningItemParam`` requires ``id``; the converter writes reasoning
    items read without one (or built by agentmsg) without it (OpenAI's Codex client sends them
    so), so a placeholder stands in for it during validation only. Goldens (``ours=False``) are
    written as clients send them: with item ids and output-form assistant messages.
    """
    assert set(payload) <= {"input", "instructions"}
    if "instructions" in payload:
        assert isinstance(payload["instructions"], str)
    items = payload["input"]
    view = [
        {**item, "id": "rs_placeholder"} if item.get("type") == "reasoning" and "id" not in item else item
        for item in items
    ]
    validate_with(ResponseInputParam, view)
    for item, shown in zip(items, view, strict=True):
        kind = item.get("type", "message")
        if kind == "message" and "id" in item:
            assert validate_with(ResponseOutputMessageParam, item) == item
        elif kind == "message":
            assert validate_with(EasyInputMessageParam, item) == item
            if isinstance(item["content"], list):
                assert validate_with(Message, item) == item
        elif kind == "reasoning":
            assert validate_with(ResponseReasoningItemParam, shown) == shown
        elif kind in ITEM_TYPES:
            assert validate_with(ITEM_TYPES[kind], item) == item


def no_extras(value: Any) -> None:
    """No field the SDK model does not declare, anywhere (its models keep unknown keys as extras)."""
    if isinstance(value, pydantic.BaseModel):
        assert not value.model_extra, (type(value).__name__, value.model_extra)
        for name in type(value).model_fields:
            no_extras(getattr(value, name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            no_extras(item)


def check_response(data: dict[str, Any]) -> None:
    """Validate a written response with the SDK's ``Response`` (plus the echo fields) and its output items."""
    model = Response.model_validate({**data, **ECHO})
    no_extras(model)
    assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == json.loads(json.dumps({**data, **ECHO}))
    for item in data["output"]:
        validated = validate_with(ResponseOutputItem, item)
        assert validated.model_dump(mode="json", by_alias=True, exclude_unset=True) == item


def write(messages: Sequence[Any], **kwargs: Any) -> tuple[dict[str, Any], ConversionReport]:
    """to_openai_responses with a report, validated with the SDK."""
    report = ConversionReport()
    payload = to_openai_responses(messages, report=report, **kwargs)
    check_request(payload)
    return payload, report


def restamp(read: Sequence[AgentMessage], originals: Sequence[AgentMessage]) -> list[AgentMessage]:
    """The read messages with the originals' ids and timestamps (requests carry neither)."""
    assert len(read) == len(originals), (read, originals)
    for message, original in zip(read, originals, strict=True):
        message.pb.id = original.id
        message.pb.timestamp.CopyFrom(original.pb.timestamp)
    return list(read)


def losses(report: ConversionReport) -> list[str]:
    return [str(loss) for loss in report.losses]


def violations(info: pytest.ExceptionInfo[ValidationError]) -> set[tuple[str, str]]:
    return {(v.field, v.rule_id) for v in info.value.violations}


# --------------------------------------------------------------------------- the conversation the format holds


def holdable() -> list[AgentMessage]:
    """Everything the format can hold, in the shapes that read back as they are."""
    return [
        SystemMessage([TextContent("Be terse."), TextContent(" Really.")], id="s1", timestamp=1),
        UserMessage(
            [
                TextContent("Look:"),
                ImageContent(png_bytes(), detail="high"),
                ImageContent.from_url("https://example.test/cat.jpg"),
                ImageContent.from_file_id("file-img-1", detail="low"),
                DocumentContent(PDF, filename="a.pdf"),
                DocumentContent.from_url("https://example.test/d.pdf"),
                DocumentContent.from_file_id("file-doc-1", filename="notes.txt"),
                DocumentContent.from_text("plain words", filename="p.txt"),
                DocumentContent.from_text("# Title", media_type="text/markdown; charset=utf-8", filename="r.md"),
            ],
            id="u1",
            timestamp=2,
        ),
        AssistantMessage(
            [
                ThinkingContent("Step one.", ""),
                ThinkingContent("Step two.", "enc-1"),
                RedactedThinkingContent("enc-2"),
                ThinkingContent("", "enc-3"),
                TextContent("Calling."),
                ToolCallContent("call_a", "f", arguments='{"x": 1, "y": [1.50, "é"]}'),
                ToolCallContent("call_b", "g", arguments="{}", index=1),
                ToolCallContent("call_c", "h", arguments="", index=2),
                ToolCallContent("call_d", "h", arguments=' {"spaced" : [1e5]} ', index=3),
            ],
            provenance=OPENAI,
            id="a1",
            timestamp=3,
        ),
        ToolMessage(
            [
                ToolResultContent("call_a", "one", name="f"),
                ToolResultContent("call_b", [TextContent("two"), ImageContent(png_bytes())], name="g", index=1),
                ToolResultContent("call_c", "", index=2),
                ToolResultContent("call_d", [TextContent("")], index=3),
                ToolResultContent("call_x", [TextContent("a"), TextContent("b")]),
            ],
            id="t1",
            timestamp=4,
        ),
        AssistantMessage([TextContent("Done."), TextContent("")], id="a2", timestamp=5),
        UserMessage([TextContent("")], id="u2", timestamp=6),
    ]


def test_round_trip_holds_for_everything_the_format_holds() -> None:
    messages = holdable()
    payload, report = write(messages)
    assert losses(report) == []
    assert restamp(from_openai_responses(payload), messages) == messages


def test_round_trip_payload_is_exactly_the_items_the_sdk_describes() -> None:
    payload, _ = write(holdable())
    items = payload["input"]
    assert items[0] == {
        "type": "message",
        "role": "system",
        "content": [{"type": "input_text", "text": "Be terse."}, {"type": "input_text", "text": " Really."}],
    }
    parts = items[1]["content"]
    assert parts[1]["image_url"].startswith("data:image/png;base64,")
    assert parts[1]["detail"] == "high"
    assert parts[2] == {"type": "input_image", "image_url": "https://example.test/cat.jpg", "detail": "auto"}
    assert parts[3] == {"type": "input_image", "file_id": "file-img-1", "detail": "low"}
    assert parts[4] == {
        "type": "input_file",
        "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
        "filename": "a.pdf",
    }
    assert parts[5] == {"type": "input_file", "file_url": "https://example.test/d.pdf"}
    assert parts[6] == {"type": "input_file", "file_id": "file-doc-1", "filename": "notes.txt"}
    assert parts[8]["file_data"].startswith("data:text/markdown; charset=utf-8;base64,")
    assert items[2:9] == [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Step one."}, {"type": "summary_text", "text": "Step two."}],
            "encrypted_content": "enc-1",
        },
        {"type": "reasoning", "summary": [], "encrypted_content": "enc-2"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": ""}], "encrypted_content": "enc-3"},
        {"type": "message", "role": "assistant", "content": "Calling."},
        {"type": "function_call", "call_id": "call_a", "name": "f", "arguments": '{"x": 1, "y": [1.50, "é"]}'},
        {"type": "function_call", "call_id": "call_b", "name": "g", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_c", "name": "h", "arguments": ""},
    ]
    outputs = [item for item in items if item["type"] == "function_call_output"]
    assert outputs[0] == {"type": "function_call_output", "call_id": "call_a", "output": "one", "name": "f"}
    assert outputs[1]["output"][0] == {"type": "input_text", "text": "two"}
    assert outputs[1]["output"][1]["type"] == "input_image"
    assert outputs[2] == {"type": "function_call_output", "call_id": "call_c", "output": ""}
    assert outputs[3]["output"] == [{"type": "input_text", "text": ""}]
    assert items[-3:] == [
        {"type": "message", "role": "assistant", "content": "Done."},
        {"type": "message", "role": "assistant", "content": ""},
        {"type": "message", "role": "user", "content": ""},
    ]


SURROGATES: tuple[Literal["Cs"]] = ("Cs",)  # protobuf strings are UTF-8: no lone surrogates
CHARS = st.characters(exclude_categories=SURROGATES)
TEXT = st.text(CHARS, max_size=20)


@settings(max_examples=40, deadline=None)
@given(
    user_text=TEXT,
    answer=st.lists(TEXT, min_size=1, max_size=3),
    call_ids=st.lists(st.text(CHARS, min_size=1, max_size=70), max_size=3),
    args=st.dictionaries(TEXT, st.integers() | TEXT | st.booleans(), max_size=3),
)
def test_round_trip_property(user_text: str, answer: list[str], call_ids: list[str], args: dict[str, Any]) -> None:
    ids = list(dict.fromkeys(call_ids))
    calls = [
        ToolCallContent(call_id, "tool", arguments=json.dumps(args, ensure_ascii=False), index=k)
        for k, call_id in enumerate(ids)
    ]
    messages: list[AgentMessage] = [
        UserMessage.text(user_text),
        AssistantMessage([*(TextContent(text) for text in answer), *calls]),
    ]
    if ids:
        messages.append(ToolMessage([ToolResultContent(call_id, user_text, index=k) for k, call_id in enumerate(ids)]))
    payload, report = write(messages)
    assert report.losses == []
    for item in payload["input"]:
        if "call_id" in item:
            assert len(item["call_id"]) <= 64
    assert restamp(from_openai_responses(payload, id_map=report.id_map), messages) == messages


# --------------------------------------------------------------------------- goldens, format -> agentmsg


def test_golden_text_and_roles() -> None:
    payload = load_golden("text_and_roles.json")
    check_request(payload, ours=False)
    read = from_openai_responses(payload)
    assert [type(m) for m in read] == [
        SystemMessage,
        SystemMessage,
        UserMessage,
        AssistantMessage,
        UserMessage,
        AssistantMessage,
    ]
    assert read[0].contents == (TextContent("You are a terse assistant."),)
    assert read[1].contents == (TextContent("Answer in French."),)  # developer reads as system
    assert read[2].contents == (TextContent("Bonjour"),)
    assert read[3].contents == (TextContent("Bonjour !"),)
    assert read[4].contents == (TextContent("Deux "), TextContent("blocs."))
    # The output-message form: one text block per output_text part, after the item's envelope (id, status, phase).
    assert typed(read[5]) == (TextContent("D'accord."), TextContent(" Voilà."))
    envelope = read[5].contents[0]
    assert isinstance(envelope, ProviderContent)
    assert envelope.block_type == "message"
    assert all(isinstance(m, AssistantMessage) and m.provenance is None for m in read[3::2])
    # Written back in the converter's own form: system items, easy assistant messages.
    again, report = write(read)
    assert report.losses == []
    assert again == {
        "input": [
            {
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": "You are a terse assistant."}],
            },
            {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Answer in French."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Bonjour"}]},
            {"type": "message", "role": "assistant", "content": "Bonjour !"},
            payload["input"][3],
            payload["input"][4],  # the item as it was: id, status and phase from the envelope
        ],
    }


def test_golden_media_reads_every_source_and_writes_back_identically() -> None:
    payload = load_golden("media.json")
    check_request(payload, ours=False)
    (message,) = from_openai_responses(payload)
    assert isinstance(message, UserMessage)
    text, url_image, data_image, file_image, pdf, pdf_url, file_doc = message.contents
    assert text == TextContent("What is in these?")
    assert isinstance(url_image, ImageContent)
    assert url_image.url is not None
    assert url_image.url.endswith("boardwalk.jpg")
    assert (url_image.media_type, url_image.detail) == ("image/jpeg", None)  # "auto" reads as unstated
    assert data_image == ImageContent(PNG, media_type="image/png", detail=ImageDetail.HIGH)
    assert file_image == ImageContent.from_file_id("file-6F2ksmvXxt4VdoqmHRw6kL", detail="low")
    assert pdf == DocumentContent(b"%PDF-1.4\n%%EOF\n", media_type="application/pdf", filename="draconomicon.pdf")
    assert pdf_url == DocumentContent.from_url("https://www.berkshirehathaway.com/letters/2024ltr.pdf")
    assert isinstance(pdf_url, DocumentContent)
    assert pdf_url.media_type == "application/pdf"
    assert file_doc == DocumentContent.from_file_id("file-6F2ksmvXxt4VdoqmHRw6kL", filename="notes.txt")
    again, report = write([message])
    assert report.losses == []
    assert again == payload


def test_golden_tool_calls_parallel_calls_outputs_and_error_text() -> None:
    payload = load_golden("tool_calls.json")
    check_request(payload, ours=False)
    user, assistant, tool, answer = from_openai_responses(payload)
    assert isinstance(assistant, AssistantMessage)
    assert assistant.contents == (
        ToolCallContent("call_12345xyz", "get_weather", arguments='{"location":"Paris, France"}'),
        ToolCallContent(
            "call_67890abc", "get_weather", arguments='{"location": "Bogotá, Colombia", "units": "celsius"}', index=1
        ),
        ToolCallContent("call_time_01", "get_time", arguments='{"zone":"Atlantis"}', index=2),
    )
    assert isinstance(tool, ToolMessage)
    first, second, third = tool.results()
    assert first == ToolResultContent("call_12345xyz", '{"temperature": 14, "sky": "cloudy"}')
    assert second == ToolResultContent(
        "call_67890abc",
        [TextContent("18 °C. Radar:"), ImageContent(PNG, media_type="image/png")],
        name="get_weather",
        index=1,
    )
    # The format has no error flag: an error is text like any other.
    assert third == ToolResultContent("call_time_01", "Error: unknown time zone 'Atlantis'", name="get_time", index=2)
    assert answer.contents == (TextContent("Paris: 14 °C, cloudy. Bogotá: 18 °C. Atlantis has no time zone."),)
    again, report = write([user, assistant, tool, answer])
    assert report.losses == []
    assert again == payload


def test_golden_reasoning_items_become_thinking_and_replay_without_ids() -> None:
    payload = load_golden("reasoning.json")
    check_request(payload, ours=False)
    user, assistant, tool, final = from_openai_responses(payload)
    assert isinstance(assistant, AssistantMessage)
    encrypted = payload["input"][1]["encrypted_content"]
    assert typed(assistant) == (
        ThinkingContent("**Multiplying**\n\n17 times 23 is 391.", ""),
        ThinkingContent("**Checking primality**\n\nI should use the tool.", encrypted),
        ToolCallContent("call_prime_1", "is_prime", arguments='{"n":391}'),
    )
    # Reasoning is this API's own: the turn may send it back to any OpenAI model.
    assert assistant.provenance == OPENAI
    assert tool.contents == (ToolResultContent("call_prime_1", "false"),)
    assert isinstance(final, AssistantMessage)
    assert typed(final) == (
        RedactedThinkingContent(payload["input"][4]["encrypted_content"]),
        TextContent("391 = 17 * 23, so it is not prime."),
    )
    again, report = write([user, assistant, tool, final], model="gpt-5")
    assert report.losses == []
    # The same items, ids, statuses and the output-message form included (kept in the items' envelopes).
    assert again == {"input": payload["input"]}


# --------------------------------------------------------------------------- writing: options and reasoning


def test_instructions_option_and_developer_role() -> None:
    messages = [
        SystemMessage.text("A"),
        SystemMessage([TextContent("B"), TextContent("C")]),
        UserMessage.text("hi"),
        SystemMessage.text("late"),
    ]
    payload, report = write(messages, instructions=True, system_role="developer")
    assert payload == {
        "instructions": "A\n\nBC",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "late"}]},
        ],
    }
    assert [loss.path for loss in report.losses] == ["[1].contents[0]", "[1].contents[1]"]
    assert all(loss.what == "text block boundary" for loss in report.losses)
    read = from_openai_responses(payload)
    assert [(type(m), m.text_content()) for m in read] == [
        (SystemMessage, "A\n\nBC"),
        (UserMessage, "hi"),
        (SystemMessage, "late"),
    ]
    with pytest.raises(ValidationError):
        to_openai_responses(messages, system_role="boss")  # type: ignore[arg-type]


def reasoning_turn(provenance: Provenance | None) -> AssistantMessage:
    return AssistantMessage(
        [ThinkingContent("Think.", "enc-a"), RedactedThinkingContent("enc-b"), TextContent("Answer.")],
        provenance=provenance,
    )


def test_reasoning_is_replayed_only_to_its_own_provider_api_and_model() -> None:
    own = reasoning_turn(Provenance(PROVIDER, API, "gpt-5", "resp_1"))
    payload, report = write([own], model="gpt-5")
    assert report.losses == []
    assert [item["type"] for item in payload["input"]] == ["reasoning", "reasoning", "message"]

    other_model, report = write([own], model="gpt-4.1")
    assert other_model["input"] == [{"type": "message", "role": "assistant", "content": "Answer."}]
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[0].contents[0]", "thinking"),
        ("[0].contents[1]", "redacted thinking"),
    ]
    assert "openai/openai-responses/gpt-5, not openai/openai-responses/gpt-4.1" in report.losses[0].reason

    for provenance in (None, Provenance("anthropic", "anthropic-messages", "claude", "msg_1")):
        foreign, report = write([reasoning_turn(provenance)])
        assert foreign["input"] == [{"type": "message", "role": "assistant", "content": "Answer."}]
        assert [loss.what for loss in report.losses] == ["thinking", "redacted thinking"]


def test_unsigned_thinking_cannot_be_replayed_even_from_openai() -> None:
    turn = AssistantMessage([ThinkingContent("Summary only."), TextContent("Hi.")], provenance=OPENAI)
    payload, report = write([turn])
    assert payload["input"] == [{"type": "message", "role": "assistant", "content": "Hi."}]
    (loss,) = report.losses
    assert (loss.path, loss.what) == ("[0].contents[0]", "thinking")
    assert "encrypted_content" in loss.reason


def test_tool_ids_are_rewritten_and_restored() -> None:
    weird = "toolu:01/AbC d" + "x" * 80
    messages: list[AgentMessage] = [
        AssistantMessage([ToolCallContent(weird, "f", {"a": 1})]),
        ToolMessage([ToolResultContent(weird, "ok")]),
    ]
    payload, report = write(messages)
    call, output = payload["input"]
    assert call["call_id"] == output["call_id"] != weird
    assert len(call["call_id"]) <= 64
    assert report.id_map == {call["call_id"]: weird}
    assert report.losses == []
    assert restamp(from_openai_responses(payload, id_map=report.id_map), messages) == messages
    assert from_openai_responses(payload)[0].contents[0].id == call["call_id"]  # type: ignore[union-attr]


def test_provider_content_goes_back_verbatim_as_parts_or_items() -> None:
    audio_part = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    search = {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "x"},
    }
    shell_output = {"type": "computer_call_output", "call_id": "call_c", "output": {"type": "computer_screenshot"}}
    messages: list[AgentMessage] = [
        UserMessage([TextContent("Listen:"), ProviderContent.from_block(BLOCK_FORMAT, audio_part)]),
        AssistantMessage([ProviderContent.from_block(BLOCK_FORMAT, search), TextContent("Found.")]),
        UserMessage([ProviderContent.from_block(BLOCK_FORMAT, shell_output)]),
    ]
    report = ConversionReport()
    payload = to_openai_responses(messages, report=report)
    assert report.losses == []
    assert payload["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Listen:"}, audio_part]},
        search,
        {"type": "message", "role": "assistant", "content": "Found."},
        shell_output,
    ]
    # Read back, the web search is a hosted tool call (its original the item) and its outcome.
    again = restamp(from_openai_responses(payload), messages)
    assert again[1].contents == (*hosted_blocks(search), TextContent("Found."))
    assert [again[0], again[2]] == [messages[0], messages[2]]
    assert to_openai_responses(again) == payload
    # Another provider's block is reported, not sent.
    foreign = UserMessage([ProviderContent.from_block("anthropic", {"type": "search_result", "title": "t"})])
    payload = to_openai_responses([foreign], report=report)
    assert payload["input"] == []
    assert report.losses[-1].what == "anthropic search_result block"


def test_session_messages_are_projected_or_refused() -> None:
    payload, _ = write([CompactionSummaryMessage("Earlier: hello.", 10)])
    (item,) = payload["input"]
    assert item["role"] == "user"
    assert "<summary>\nEarlier: hello.\n</summary>" in item["content"][0]["text"]
    with pytest.raises(ValidationError) as info:
        to_openai_responses([CompactionSummaryMessage("x")], session_messages="refuse")
    assert violations(info) == {("[0]", "session_message")}


# --------------------------------------------------------------------------- losses: report, strict, warning


def lossy() -> list[AgentMessage]:
    return [
        UserMessage(
            [
                TextContent("hi", signature="sig-gemini"),
                AudioContent(WAV),
                ImageContent(png_bytes(), detail="auto"),
                ImageContent(png_bytes(), detail="medium"),
                ImageContent.from_url("https://example.test/pic", media_type="image/webp"),
                ImageContent.from_file_id("file-1", media_type="image/png"),
                DocumentContent(PDF, title="Spec"),
                DocumentContent.from_file_id("file-2", media_type="application/pdf"),
            ],
            name="alice",
        ),
        AssistantMessage(
            [
                ToolCallContent("c1", "run", {"cmd": "ls"}, kind="execute", signature="s", server_name="srv", index=4),
                ToolCallContent("c2", "run", {}, metadata={"app": True}, index=1),
            ]
        ),
        ToolMessage(
            [
                ToolResultContent.error("c1", "boom"),
                ToolResultContent(
                    "c2", [AudioContent(WAV)], metadata={"x": 1}, terminate=True, terminate_message="m", index=1
                ),
            ]
        ),
    ]


EXPECTED_LOSSES = [
    "[0].name: message name dropped: the format's items have no participant name",
    "[0].contents[0].signature: text signature dropped: the format has no signature on text",
    "[0].contents[1]: audio dropped: the Responses input has no audio part (input_text, input_image, input_file)",
    "[0].contents[2].detail: image detail 'auto' dropped: 'auto' is the format's default and is written for an "
    "unstated detail too: it reads back as unstated",
    "[0].contents[3].detail: image detail 'medium' dropped: the format's details are low, high, auto and original; "
    "'auto' was sent",
    "[0].contents[4].media_type: image media type 'image/webp' dropped: an image URL carries no media type; "
    "it reads back as '', guessed from the URL path",
    "[0].contents[5].media_type: image media type 'image/png' dropped: an image file id carries no media type; "
    "it reads back empty",
    "[0].contents[6].filename: missing filename dropped: the API requires a filename on inline files; "
    "'document.pdf' was sent and reads back",
    "[0].contents[6].title: document title dropped: input_file has no title",
    "[0].contents[7].media_type: document media type 'application/pdf' dropped: a file id carries no media type; "
    "it reads back empty",
    "[1].contents[0].kind: tool kind 'execute' dropped: function_call has no tool kind",
    "[1].contents[0].signature: tool call signature dropped: function_call has no signature",
    "[1].contents[0].server_name: tool server name dropped: function_call has no server name",
    "[1].contents[0].index: tool call index 4 dropped: the index is read back as the call's position among the "
    "message's calls (0)",
    "[2].contents[0].is_error: tool error flag dropped: function_call_output has no error flag; the output is sent "
    "as it is",
    "[2].contents[1].content[0]: audio dropped: the Responses input has no audio part (input_text, input_image, "
    "input_file)",
]


def test_report_lists_every_loss_with_its_input_path() -> None:
    payload, report = write(lossy())
    assert losses(report) == EXPECTED_LOSSES
    user = payload["input"][0]
    assert [part["type"] for part in user["content"]] == [
        "input_text",
        "input_image",
        "input_image",
        "input_image",
        "input_image",
        "input_file",
        "input_file",
    ]
    assert user["content"][5]["filename"] == "document.pdf"
    # metadata / terminate / terminate_message are app-only: never sent, never reported.
    assert payload["input"][-1] == {"type": "function_call_output", "call_id": "c2", "output": []}
    assert "metadata" not in json.dumps(payload)


def test_strict_mode_raises_with_the_losses() -> None:
    with pytest.raises(ConversionError) as info:
        to_openai_responses(lossy(), strict=True)
    assert [str(loss) for loss in info.value.losses] == EXPECTED_LOSSES
    assert info.value.target == "OpenAI Responses"
    # Nothing lost: strict mode is silent.
    assert to_openai_responses([UserMessage.text("ok")], strict=True)["input"][0]["role"] == "user"


def test_one_warning_when_the_caller_keeps_no_report() -> None:
    with pytest.warns(ConversionWarning, match=r"OpenAI Responses: 16 item\(s\) dropped"):
        to_openai_responses(lossy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_openai_responses([UserMessage.text("fine")])


# --------------------------------------------------------------------------- reading: pass-through and bad input


def test_unknown_items_and_parts_pass_through_when_asked() -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search"}}
    approval = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    stored = {"id": "rs_only", "type": "reasoning", "summary": []}
    payload: dict[str, Any] = {
        "input": [
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "mp3"}}]},
            search,
            stored,
            {"type": "message", "role": "assistant", "content": "ok"},
            approval,
            {
                "role": "user",
                "content": [{"type": "input_image", "image_url": "https://x.test/a.png", "detail": "original"}],
            },
        ]
    }
    with pytest.raises(ValidationError) as info:
        from_openai_responses(payload, pass_through_unknown=False)
    assert violations(info) == {
        ("input[0].content[0].type", "openai_responses.unknown_type"),
        ("input[5].content[0].detail", "openai_responses.unsupported"),
    }
    # By default (issue 16) everything is read: unknown items and parts kept verbatim, hosted tools typed.
    user, assistant, approved, original = from_openai_responses(payload)
    assert user.contents == (ProviderContent.from_block(BLOCK_FORMAT, payload["input"][0]["content"][0]),)
    assert assistant.contents == (
        *hosted_blocks(search),
        ProviderContent.from_block(BLOCK_FORMAT, stored),  # it only names a stored item: kept whole
        TextContent("ok"),
    )
    # An approval is typed since contract v1.2, the item kept whole as its original.
    assert approved.contents == (
        ToolApprovalContent("mcpr_1", "approved", original=ProviderContent.from_block(BLOCK_FORMAT, approval)),
    )
    assert isinstance(original, UserMessage)
    assert original.contents[0].block_type == "input_image"  # type: ignore[union-attr]
    assert to_openai_responses([user, assistant, approved, original])["input"][1:5] == payload["input"][1:5]


def test_refusals_are_kept_whole() -> None:
    refusal = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "No."}],
    }
    (message,) = from_openai_responses([refusal])
    assert message.contents == (ProviderContent.from_block(BLOCK_FORMAT, refusal),)
    payload, report = write([message])
    assert payload == {"input": [refusal]}
    assert report.losses == []


def test_bad_payload_reports_every_problem_with_its_path() -> None:
    payload = {
        "instructions": 7,
        "input": [
            {"type": "message", "role": "robot", "content": "x"},
            {"type": "function_call", "name": "f", "arguments": "{not json"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_image", "detail": "huge", "image_url": "https://x.test/y.png"},
                    {"type": "input_video"},
                    {"type": "input_image", "image_url": "data:image/png;base64,@@@", "detail": "low"},
                    {"type": "input_image", "image_url": "not a url", "detail": "low"},
                    {"type": "input_file", "file_id": "f", "file_url": "https://x.test/a.pdf"},
                    {"type": "input_text"},
                    "loose",
                ],
            },
            {"type": "web_search_call", "id": "ws_1"},
            5,
            {"type": "function_call_output", "call_id": "", "output": 3},
            {"type": "reasoning", "summary": [{"type": "reasoning_text", "text": 1}]},
            {"role": "system", "content": [{"type": "input_image", "file_id": "f", "detail": "low"}]},
            {"type": "message", "role": "user", "content": []},
            {"type": "function_call", "call_id": "c", "name": "", "arguments": {}},
            {"id": "no_type"},
        ],
    }
    with pytest.raises(ValidationError) as info:
        from_openai_responses(payload, pass_through_unknown=False)
    assert violations(info) == {
        ("instructions", "openai_responses.type"),
        ("input[0].role", "openai_responses.enum"),
        ("input[1].call_id", "openai_responses.required"),
        ("input[1].arguments", "openai_responses.json"),
        ("input[2].content[0].detail", "openai_responses.enum"),
        ("input[2].content[1].type", "openai_responses.unknown_type"),
        ("input[2].content[2].image_url", "openai_responses.base64"),
        ("input[2].content[3].image_url", "openai_responses.url"),
        ("input[2].content[4]", "openai_responses.one_of"),
        ("input[2].content[5].text", "openai_responses.required"),
        ("input[2].content[6]", "openai_responses.type"),
        ("input[4]", "openai_responses.type"),
        ("input[5].call_id", "openai_responses.min_len"),
        ("input[5].output", "openai_responses.type"),
        ("input[6].summary[0].type", "openai_responses.enum"),
        ("input[6].summary[0].text", "openai_responses.type"),
        ("input[7].content[0].type", "openai_responses.unsupported"),
        ("input[8].content", "openai_responses.min_items"),
        ("input[9].name", "openai_responses.min_len"),
        ("input[9].arguments", "openai_responses.type"),
        ("input[10].type", "openai_responses.required"),
    }
    assert "invalid OpenAI Responses payload" in str(info.value)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("hello", {("", "openai_responses.type")}),
        ({"model": "gpt-5"}, {("input", "openai_responses.required")}),
        ({"input": 3}, {("input", "openai_responses.type")}),
        ([{"role": "user", "content": 1}], {("[0].content", "openai_responses.type")}),
        ([{"type": "reasoning"}], {("[0].summary", "openai_responses.required")}),
        ([{"type": "function_call_output", "call_id": "c"}], {("[0].output", "openai_responses.required")}),
        (
            [{"type": "message", "role": "user", "content": [{"type": "input_file", "file_data": "%%%"}]}],
            {("[0].content[0].file_data", "openai_responses.base64")},
        ),
        (
            [{"type": "message", "role": "user", "content": [{"type": "input_image", "detail": "low"}]}],
            {("[0].content[0]", "openai_responses.required")},
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "input_file", "file_data": base64.b64encode(b"\xff\xfe").decode()}],
                }
            ],
            {("[0].content[0].file_data", "media")},
        ),
        (
            [{"role": "assistant", "content": [{"type": "output_audio"}]}],
            {("[0].content[0].type", "openai_responses.unknown_type")},
        ),
        (
            [{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_audio"}]}],
            {("[0].output[0].type", "openai_responses.unknown_type")},
        ),
    ],
)
def test_bad_payload_cases(payload: Any, expected: set[tuple[str, str]]) -> None:
    with pytest.raises(ValidationError) as info:
        from_openai_responses(payload, pass_through_unknown=False)
    assert violations(info) == expected


def test_reading_accepts_the_sdk_shorthands() -> None:
    assert [m.text_content() for m in from_openai_responses({"input": "Hi", "instructions": "Sys"})] == ["Sys", "Hi"]
    bare = [
        {
            "role": "user",
            "content": [{"type": "input_file", "file_data": base64.b64encode(PDF).decode(), "filename": "x"}],
        },
        {
            "role": "user",
            "content": [{"type": "input_file", "file_data": base64.b64encode(b"hi").decode(), "filename": "a.csv"}],
        },
        {"role": "assistant", "content": [{"type": "input_text", "text": "echo"}]},
    ]
    pdf, csv, echo = from_openai_responses(bare)
    assert pdf.contents == (DocumentContent(PDF, media_type="application/pdf", filename="x"),)
    assert csv.contents == (DocumentContent(b"hi", media_type="text/csv", filename="a.csv"),)
    assert echo.contents == (TextContent("echo"),)


# --------------------------------------------------------------------------- responses


def test_golden_response_with_parallel_tool_calls_and_usage() -> None:
    data = load_golden("response_tool_calls.json")
    message = from_openai_responses_response(data)
    assert typed(message) == (
        ThinkingContent("**Looking up the weather**\n\nTwo cities: two calls.", data["output"][0]["encrypted_content"]),
        ToolCallContent("call_12345xyz", "get_weather", arguments='{"location":"Paris, France"}'),
        ToolCallContent("call_67890abc", "get_weather", arguments='{"location":"Bogotá, Colombia"}', index=1),
    )
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.TOOL_CALLS, "completed")
    # input_tokens 2048 includes 1536 cached and 256 cache-written tokens.
    assert message.usage == Usage(
        input_tokens=256,
        output_tokens=312,
        cache_read_tokens=1536,
        cache_write_tokens=256,
        reasoning_tokens=256,
        total_tokens=2360,
    )
    assert message.provenance == Provenance(PROVIDER, API, "gpt-5-2025-08-07", data["id"])
    assert message.datetime == datetime.fromtimestamp(1741476542, UTC)
    assert message.error == ""


def test_golden_response_message_with_summaries_and_citations() -> None:
    data = load_golden("response_message.json")
    message = from_openai_responses_response(data)
    (annotation,) = data["output"][1]["content"][0]["annotations"]
    citation = Citation.web(
        annotation["url"],
        annotation["title"],
        start_index=annotation["start_index"],
        end_index=annotation["end_index"],
        original=ProviderContent.from_block(BLOCK_FORMAT, annotation),
    )
    assert typed(message) == (
        ThinkingContent("**Recalling the capital**\n\nThe capital of France is Paris."),
        ThinkingContent("**Citing**\n\nAdd a source."),
        TextContent("Paris is the capital of France.", citations=[citation]),  # the url_citation annotation
    )
    assert message.contents[0] == ProviderContent(
        BLOCK_FORMAT,
        "reasoning",
        json.dumps(
            {**data["output"][0], "summary": [{"type": "summary_text", "text": ""}] * 2},
            ensure_ascii=False,
            separators=(",", ":"),
        ),
    )  # the item's envelope: its id (and any other key) with the typed values emptied
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.STOP, "completed")
    assert message.usage == Usage(12, 90, 0, 0, 64, 102)
    assert message.datetime == datetime.fromtimestamp(1756315696.5, UTC)


def test_golden_incomplete_refusal_and_failed_responses() -> None:
    incomplete = load_golden("response_incomplete.json")
    message = from_openai_responses_response(incomplete)
    # The id-only reasoning item is kept whole (its envelope, with no typed block after it).
    assert message.contents == (ProviderContent.from_block(BLOCK_FORMAT, incomplete["output"][0]),)
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.LENGTH, "max_output_tokens")
    assert message.usage == Usage(25, 16, 0, 0, 16, 41)

    refusal = load_golden("response_refusal.json")
    message = from_openai_responses_response(refusal)
    assert message.contents == (ProviderContent.from_block(BLOCK_FORMAT, refusal["output"][0]),)
    assert (message.stop_reason, message.stop_reason_raw) == (StopReason.CONTENT_FILTER, "completed")

    failed = from_openai_responses_response(load_golden("response_failed.json"))
    assert failed.contents == ()
    assert (failed.stop_reason, failed.stop_reason_raw) == (StopReason.ERROR, "failed")
    assert failed.error == "server_error: The server had an error while processing your request. Sorry about that!"
    assert failed.usage is None


@pytest.mark.parametrize(
    "name",
    [
        "response_tool_calls.json",
        "response_message.json",
        "response_incomplete.json",
        "response_refusal.json",
        "response_failed.json",
    ],
)
def test_responses_round_trip_and_validate(name: str) -> None:
    golden = load_golden(name)
    Response.model_validate(golden)
    message = from_openai_responses_response(golden)
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert report.losses == []
    check_response(written)
    again = from_openai_responses_response(written)
    again.pb.id = message.id
    assert again == message
    # What is written back is the golden's own fields, the items with their ids and statuses included.
    assert {key: written[key] for key in ("id", "object", "created_at", "model", "status", "output")} == {
        key: golden[key] for key in ("id", "object", "created_at", "model", "status", "output")
    }
    assert written.get("usage") == golden["usage"]
    assert written.get("error") == golden["error"]
    assert written.get("incomplete_details") == golden["incomplete_details"]


def test_response_written_for_our_own_message_exactly() -> None:
    message = AssistantMessage(
        [
            ThinkingContent("a"),
            ThinkingContent("b", "enc"),
            TextContent("Hi."),
            ToolCallContent("call_1", "f", arguments='{"q":1}'),
        ],
        usage=Usage(10, 5, 2, 1, 3, 18),
        stop_reason=StopReason.TOOL_CALLS,
        stop_reason_raw="completed",
        provenance=Provenance(PROVIDER, API, "gpt-5", "resp_9"),
        timestamp=1_700_000_000.25,
    )
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert report.losses == []
    assert written == {
        "id": "resp_9",
        "object": "response",
        "created_at": 1_700_000_000.25,
        "model": "gpt-5",
        "status": "completed",
        "output": [
            {
                "type": "reasoning",
                "id": "rs_0",
                "summary": [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}],
                "encrypted_content": "enc",
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hi.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_2",
                "call_id": "call_1",
                "name": "f",
                "arguments": '{"q":1}',
                "status": "completed",
            },
        ],
        "usage": {
            "input_tokens": 13,
            "input_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 1},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 3},
            "total_tokens": 18,
        },
    }
    check_response(written)
    again = from_openai_responses_response(written)
    # Read back, the made-up ids and statuses are the items' envelopes; the blocks are the message's.
    assert typed(again) == message.contents
    assert to_openai_responses_response(again) == written


def test_response_of_a_foreign_message_reports_what_does_not_come_back() -> None:
    message = AssistantMessage(
        [
            ThinkingContent("hm", "anthropic-sig"),
            RedactedThinkingContent("opaque"),
            TextContent("Done.", signature="t"),
            ToolCallContent("toolu_1", "f", {"a": 1}, kind="read"),
        ],
        usage=Usage(input_tokens=10, output_tokens=4, cost=UsageCost(total=0.01)),
        stop_reason=StopReason.STOP,
        stop_reason_raw="end_turn",
        error="overloaded",
        provenance=Provenance("anthropic", "anthropic-messages", "claude-x", "msg_1"),
    )
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    check_response(written)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("contents[0].signature", "thinking signature"),
        ("contents[1]", "redacted thinking"),
        ("contents[2].signature", "text signature"),
        ("contents[3].kind", "tool kind 'read'"),
        ("provenance", "provenance anthropic/anthropic-messages"),
        ("stop_reason_raw", "stop reason 'end_turn'"),
        ("error", "error text"),
        ("stop_reason", "stop reason stop"),
        ("usage.cache_read_tokens", "unknown cache_read_tokens"),
        ("usage.cache_write_tokens", "unknown cache_write_tokens"),
        ("usage.reasoning_tokens", "unknown reasoning_tokens"),
        ("usage.total_tokens", "unknown total_tokens"),
        ("usage.cost", "usage cost"),
    ]
    assert written["output"][0] == {
        "type": "reasoning",
        "id": "rs_0",
        "summary": [{"type": "summary_text", "text": "hm"}],
    }
    assert written["usage"]["total_tokens"] == 14
    assert written["status"] == "completed"
    with pytest.raises(ConversionError):
        to_openai_responses_response(message, strict=True)
    with pytest.warns(ConversionWarning):
        to_openai_responses_response(message)


def test_response_errors_and_statuses_are_written_from_the_stop_reason() -> None:
    cases = [
        (StopReason.LENGTH, "", ("incomplete", {"reason": "max_output_tokens"})),
        (StopReason.CONTENT_FILTER, "", ("incomplete", {"reason": "content_filter"})),
        (StopReason.ABORT, "", ("cancelled", None)),
        (StopReason.ERROR, "", ("failed", None)),
        (None, "queued", ("queued", None)),
        (None, "steered", ("incomplete", {"reason": "steered"})),
    ]
    for stop, raw, (status, details) in cases:
        written = to_openai_responses_response(
            AssistantMessage(
                [TextContent("x")],
                stop_reason=stop,
                stop_reason_raw=raw,
                provenance=Provenance(PROVIDER, API, "m", "r"),
            ),
            strict=True,
        )
        check_response(written)
        assert (written["status"], written.get("incomplete_details")) == (status, details)
    failed = AssistantMessage(
        stop_reason="error", error="rate_limit_exceeded: slow down", provenance=Provenance(PROVIDER, API, "m", "r")
    )
    written = to_openai_responses_response(failed, strict=True)
    assert written["error"] == {"code": "rate_limit_exceeded", "message": "slow down"}
    assert from_openai_responses_response(written).error == "rate_limit_exceeded: slow down"
    report = ConversionReport()
    uncoded = to_openai_responses_response(
        AssistantMessage(stop_reason="error", error="kaput", provenance=Provenance(PROVIDER, API, "m", "r")),
        report=report,
    )
    assert uncoded["error"] == {"code": "server_error", "message": "kaput"}
    assert [loss.what for loss in report.losses] == ["error without an error code"]


@pytest.mark.parametrize(
    ("status", "reason", "output", "expected"),
    [
        ("completed", None, [{"type": "message", "role": "assistant", "content": "x"}], StopReason.STOP),
        (
            "completed",
            None,
            [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}],
            StopReason.TOOL_CALLS,
        ),
        ("incomplete", "max_output_tokens", [], StopReason.LENGTH),
        ("incomplete", "content_filter", [], StopReason.CONTENT_FILTER),
        ("incomplete", "max_messages", [{"type": "message", "role": "assistant", "content": "x"}], None),
        ("cancelled", None, [], StopReason.ABORT),
        ("in_progress", None, [{"type": "message", "role": "assistant", "content": "x"}], None),
    ],
)
def test_response_stop_reasons(status: str, reason: str | None, output: list[Any], expected: StopReason | None) -> None:
    data: dict[str, Any] = {"id": "resp_1", "model": "m", "status": status, "output": output}
    if reason is not None:
        data["incomplete_details"] = {"reason": reason}
    message = from_openai_responses_response(data)
    assert message.stop_reason == expected
    assert message.stop_reason_raw == (reason or status)


def test_response_usage_keeps_presence() -> None:
    base: dict[str, Any] = {
        "id": "r",
        "model": "m",
        "status": "completed",
        "output": [{"role": "assistant", "content": "x", "type": "message"}],
    }
    bare = from_openai_responses_response(
        {**base, "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}}
    )
    assert bare.usage == Usage(input_tokens=9, output_tokens=2, total_tokens=11)
    assert bare.usage is not None
    assert bare.usage.known("cache_read_tokens") is None
    assert bare.usage.known("reasoning_tokens") is None
    older = from_openai_responses_response(
        {**base, "usage": {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 2}}
    )
    assert older.usage == Usage(input_tokens=5, output_tokens=2, cache_read_tokens=4)
    assert from_openai_responses_response(base).usage is None


def test_bad_responses_report_every_problem() -> None:
    with pytest.raises(ValidationError) as info:
        from_openai_responses_response(
            {
                "status": "done",
                "created_at": "yesterday",
                "output": [
                    {"type": "message", "role": "user", "content": "x"},
                    {"type": "custom_tool_call", "id": "ct_1"},
                    {"type": "function_call", "call_id": "c", "name": "f"},
                ],
                "usage": {"input_tokens": 3, "input_tokens_details": {"cached_tokens": 5}, "output_tokens": -1},
            },
            pass_through_unknown=False,
        )
    assert violations(info) == {
        ("status", "openai_responses.enum"),
        ("created_at", "openai_responses.type"),
        ("output[0].role", "openai_responses.enum"),
        ("output[1].type", "openai_responses.unknown_type"),
        ("output[2].arguments", "openai_responses.required"),
        ("usage.output_tokens", "openai_responses.type"),
        ("usage.input_tokens", "openai_responses.usage"),
    }
    with pytest.raises(ValidationError) as info:
        from_openai_responses_response({"status": "completed"})
    assert violations(info) == {("output", "openai_responses.required")}
    with pytest.raises(ValidationError) as info:
        from_openai_responses_response([])  # type: ignore[arg-type]
    assert violations(info) == {("", "openai_responses.type")}
    with pytest.raises(ValidationError) as info:
        to_openai_responses_response(UserMessage.text("x"))  # type: ignore[arg-type]
    assert violations(info) == {("", "type")}


def test_response_arguments_are_kept_even_when_cut_short() -> None:
    data = {
        "id": "r",
        "model": "m",
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"q": "unfini'}],
    }
    (call,) = from_openai_responses_response(data).contents
    assert isinstance(call, ToolCallContent)
    assert call.arguments == '{"q": "unfini'
    assert call.arguments_error is not None


def test_what_the_item_structure_cannot_give_back_is_regrouped_not_lost() -> None:
    messages: list[AgentMessage] = [
        AssistantMessage([ToolCallContent("c1", "f", {})]),
        UserMessage([TextContent("before"), ToolResultContent("c1", "ok"), TextContent("after")]),
        AssistantMessage.text("one"),
        AssistantMessage.text("two"),
    ]
    payload, report = write(messages)
    assert report.losses == []
    assert [item["type"] for item in payload["input"]] == [
        "function_call",
        "message",
        "function_call_output",
        "message",
        "message",
        "message",
    ]
    read = from_openai_responses(payload)
    assert [(type(m).__name__, m.contents) for m in read] == [
        ("AssistantMessage", (ToolCallContent("c1", "f", {}),)),
        ("UserMessage", (TextContent("before"),)),
        ("ToolMessage", (ToolResultContent("c1", "ok"),)),
        ("UserMessage", (TextContent("after"),)),
        # Two assistant messages in a row are one run of items: they read back as one message.
        ("AssistantMessage", (TextContent("one"), TextContent("two"))),
    ]


# --------------------------------------------------------------------------- real traffic (issue 16)

# Item shapes as the API returns them (the recorded corpus under tests/corpus/openai_responses has them all).
SEARCH = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "rain in Paris", "sources": [{"type": "url", "url": "https://w.test/p"}]},
}
FILES = {
    "id": "fs_1",
    "type": "file_search_call",
    "status": "completed",
    "queries": ["refund policy"],
    "results": [{"file_id": "file-1", "filename": "policy.pdf", "score": 0.9, "text": "30 days", "attributes": {}}],
}
CODE = {
    "id": "ci_1",
    "type": "code_interpreter_call",
    "status": "completed",
    "code": "print(2 + 2)",
    "container_id": "cntr_1",
    "outputs": [{"type": "logs", "logs": "4\n"}, {"type": "image", "url": "https://c.test/plot.png"}],
}
IMAGE = {
    "id": "ig_1",
    "type": "image_generation_call",
    "status": "completed",
    "output_format": "png",
    "revised_prompt": "a red square",
    "result": base64.b64encode(png_bytes()).decode(),
}
MCP = {
    "id": "mcp_1",
    "type": "mcp_call",
    "status": "failed",
    "approval_request_id": None,
    "arguments": '{"repo":"x/y"}',
    "error": {"type": "http_error", "code": 500, "message": "upstream down"},
    "name": "read_wiki",
    "output": None,
    "server_label": "deepwiki",
}
APPROVAL = {"id": "mcpr_1", "type": "mcp_approval_request", "arguments": "{}", "name": "ask", "server_label": "wiki"}


def _response(output: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "created_at": 1700000000,
        "model": "gpt-5",
        "status": "completed",
        "output": output,
        **extra,
    }


def test_hosted_tool_items_are_hosted_calls_and_results_and_go_back_verbatim() -> None:
    data = _response([SEARCH, FILES, CODE, IMAGE, MCP, APPROVAL])
    message = from_openai_responses_response(data)
    kinds = [(b.type, getattr(b, "name", "")) for b in message.contents]
    assert kinds == [
        ("hosted_tool_call", "web_search"),
        ("hosted_tool_result", "web_search"),
        ("hosted_tool_call", "file_search"),
        ("hosted_tool_result", "file_search"),
        ("hosted_tool_call", "code_interpreter"),
        ("hosted_tool_result", "code_interpreter"),
        ("hosted_tool_call", "image_generation"),
        ("hosted_tool_result", "image_generation"),
        ("hosted_tool_call", "read_wiki"),
        ("hosted_tool_result", "read_wiki"),
        ("hosted_tool_call", "ask"),  # an approval request is a call alone, awaiting approval
    ]
    search, found, files, hits, code, run, _image, picture, mcp, failure, approval = message.contents
    assert search.original.block() == SEARCH  # type: ignore[attr-defined]
    assert search.input_value == {"type": "search", "query": "rain in Paris"}  # type: ignore[attr-defined]
    assert [r.url for r in found.search_results] == ["https://w.test/p"]  # type: ignore[attr-defined]
    assert (found.call_id, found.original) == ("ws_1", None)  # type: ignore[attr-defined]
    assert files.input_value == {"queries": ["refund policy"]}  # type: ignore[attr-defined]
    (hit,) = hits.search_results  # type: ignore[attr-defined]
    assert (hit.title, hit.snippet, hit.file_id) == ("policy.pdf", "30 days", "file-1")
    assert code.input_value == {"code": "print(2 + 2)"}  # type: ignore[attr-defined]
    assert run.code_execution.stdout == "4\n"  # type: ignore[attr-defined]
    assert [f.url for f in run.code_execution.files] == ["https://c.test/plot.png"]  # type: ignore[attr-defined]
    (png,) = picture.blocks  # type: ignore[attr-defined]
    assert isinstance(png, ImageContent)
    assert png.data == png_bytes()
    assert (mcp.server, mcp.input) == ("deepwiki", '{"repo":"x/y"}')  # type: ignore[attr-defined]
    assert (failure.is_error, failure.status.value) == (True, "failed")  # type: ignore[attr-defined]
    assert approval.status.value == "awaiting_approval"  # type: ignore[attr-defined]
    assert message.stop_reason is StopReason.STOP
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert report.losses == []
    assert written["output"] == data["output"]
    # In a request, the same items are read into an assistant turn and written back as they were.
    (turn,) = from_openai_responses(data["output"])
    assert to_openai_responses([turn])["input"] == data["output"]


def test_item_envelopes_keep_ids_status_phase_namespace_and_caller() -> None:
    output = [
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Think."}], "status": None},
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "Looking.", "annotations": [], "logprobs": []}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "call_id": "call_1",
            "name": "get_weather",
            "namespace": "weather",
            "caller": {"type": "program", "caller_id": "call_0"},
            "arguments": '{"city":"Paris"}',
        },
    ]
    message = from_openai_responses_response(_response(output))
    assert typed(message) == (
        ThinkingContent("Think."),
        TextContent("Looking."),
        ToolCallContent("call_1", "get_weather", arguments='{"city":"Paris"}'),
    )
    envelope = message.contents[4]
    assert isinstance(envelope, ProviderContent)
    assert envelope.block() == {**output[2], "call_id": "", "name": "", "arguments": ""}
    report = ConversionReport()
    assert to_openai_responses_response(message, report=report)["output"] == output
    assert report.losses == []
    # Another format has no place for the envelopes: each is reported, never sent as it is.
    from agentmsg.providers.openai_chat import to_openai_chat_response

    chat_report = ConversionReport()
    to_openai_chat_response(message, report=chat_report)
    envelopes = sorted(loss.what for loss in chat_report.losses if loss.what.startswith("openai-responses"))
    assert envelopes == [
        "openai-responses block 'function_call'",
        "openai-responses block 'message'",
        "openai-responses block 'reasoning'",
    ]


def test_an_edited_item_loses_its_envelope_with_a_loss() -> None:
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "One.", "annotations": []},
            {"type": "output_text", "text": "Two.", "annotations": []},
        ],
    }
    message = from_openai_responses_response(_response([item]))
    envelope, first, _second = message.contents
    edited = AssistantMessage([envelope, first], provenance=message.provenance)
    report = ConversionReport()
    written = to_openai_responses_response(edited, report=report)
    assert [loss.what for loss in report.losses if loss.path.startswith("contents")] == ["message item envelope"]
    assert [o["content"][0]["text"] for o in written["output"]] == ["One."]
    assert written["output"][0]["id"] == "msg_0"  # the block alone, with a made-up id by position


def test_annotations_are_citations_and_logprobs_token_logprobs() -> None:
    annotations = [
        {"type": "url_citation", "url": "https://a.test", "title": "A", "start_index": 0, "end_index": 5},
        {"type": "file_citation", "file_id": "file-1", "filename": "f.pdf", "index": 3},
        {
            "type": "container_file_citation",
            "container_id": "cntr_1",
            "file_id": "cfile_1",
            "filename": "out.csv",
            "start_index": 1,
            "end_index": 4,
        },
        {"type": "file_path", "file_id": "file-2", "index": 2},
        {"type": "new_kind_citation", "anything": 1},
    ]
    logprobs = [
        {
            "token": "Hello",
            "logprob": -0.25,
            "bytes": [72, 101, 108, 108, 111],
            "top_logprobs": [{"token": "Hi", "logprob": -1.5, "bytes": [72, 105]}],
        }
    ]
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello", "annotations": annotations, "logprobs": logprobs}],
    }
    message = from_openai_responses_response(_response([item]))
    (text,) = typed(message)
    web, file, container, path, unknown = text.citations
    assert (web.source_kind, web.url, web.title, web.start_index, web.end_index) == ("web", "https://a.test", "A", 0, 5)
    assert (file.file_id, file.filename, file.start_index, file.end_index) == ("file-1", "f.pdf", 3, 3)
    assert (container.container_id, container.file_id, container.start_index) == ("cntr_1", "cfile_1", 1)
    assert (path.file_id, path.start_index) == ("file-2", 2)
    assert unknown.source_kind is None
    assert unknown.original.block() == annotations[4]  # type: ignore[union-attr]
    (token,) = text.logprobs
    assert (token.token, token.logprob, token.bytes) == ("Hello", -0.25, b"Hello")
    assert [(t.token, t.bytes) for t in token.top_logprobs] == [("Hi", b"Hi")]
    written = to_openai_responses_response(message)
    part = written["output"][0]["content"][0]
    assert part["annotations"] == annotations
    assert part["logprobs"] == [
        {**logprobs[0], "top_logprobs": [{**logprobs[0]["top_logprobs"][0], "bytes": [72, 105]}]}
    ]


def test_citations_of_other_formats_are_projected_or_reported() -> None:
    anthropic_web = Citation.web(
        "https://b.test",
        "B",
        cited_text="the quote",
        original=ProviderContent.from_block(
            "anthropic", {"type": "web_search_result_location", "url": "https://b.test", "encrypted_index": "x"}
        ),
    )
    page = Citation.document(0, pages=(1, 2))
    message = AssistantMessage(
        [TextContent("Quoted.", citations=[anthropic_web, page])],
        provenance=Provenance("anthropic", "anthropic-messages", "claude"),
    )
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert written["output"][0]["content"][0]["annotations"] == [
        {"type": "url_citation", "url": "https://b.test", "title": "B", "start_index": 0, "end_index": 7}
    ]
    lost = {(loss.path, loss.what) for loss in report.losses}
    assert ("contents[0].citations[0]", "cited text, the anthropic original") in lost
    assert ("contents[0].citations[1]", "document citation") in lost
    # In a request, annotations go only in the output-message form, which needs the item id: reported.
    payload, request_report = write([message])
    assert payload["input"] == [{"type": "message", "role": "assistant", "content": "Quoted."}]
    assert [(loss.path, loss.what) for loss in request_report.losses] == [("[0].contents[0].citations", "citations")]


def test_hosted_tools_of_other_formats_are_reported() -> None:
    from agentmsg import HostedToolCallContent, HostedToolResultContent

    original = ProviderContent.from_block("anthropic", {"type": "server_tool_use", "id": "srvtoolu_1"})
    message = AssistantMessage(
        [
            HostedToolCallContent("srvtoolu_1", "web_search", {"query": "q"}, kind="web_search", original=original),
            HostedToolResultContent("srvtoolu_1", queries=["q"]),
            TextContent("Done."),
        ],
        provenance=Provenance("anthropic", "anthropic-messages", "claude"),
    )
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert [item["type"] for item in written["output"]] == ["message"]
    assert [(loss.path, loss.what) for loss in report.losses if loss.path.startswith("contents")] == [
        ("contents[0]", "hosted tool call 'web_search'"),
        ("contents[1]", "hosted tool result"),
    ]


def test_empty_instructions_are_no_system_message() -> None:
    """Bug 2 of issue 16: an empty instructions string read as an empty system message and written back."""
    read = from_openai_responses({"instructions": "", "input": "hi"})
    assert [type(m) for m in read] == [UserMessage]
    assert to_openai_responses(read) == {
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    }


@pytest.mark.parametrize("status", ["queued", "in_progress"])
def test_background_responses_without_output_read_and_write_back(status: str) -> None:
    data = _response([], status=status, background=True)
    message = from_openai_responses_response(data)
    assert message.contents == (TextContent(""),)
    assert (message.stop_reason, message.stop_reason_raw) == (None, status)
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert (written["status"], written["output"]) == (status, [])
    assert report.losses == []


def test_unknown_items_are_read_by_default_and_refused_when_asked() -> None:
    custom = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_1", "name": "patch", "input": "diff"}
    compaction = {"id": "cmp_1", "type": "compaction", "encrypted_content": "enc"}
    additional = {"type": "additional_tools", "role": "developer", "tools": [{"type": "function", "name": "f"}]}
    message = from_openai_responses_response(_response([custom, compaction]))
    assert message.contents == (
        ProviderContent.from_block(BLOCK_FORMAT, custom),
        ProviderContent.from_block(BLOCK_FORMAT, compaction),
    )
    system, turn = from_openai_responses([additional, compaction])
    assert isinstance(system, SystemMessage)  # a developer-role item: a system message holding it verbatim
    assert to_openai_responses([system, turn])["input"] == [additional, compaction]
    with pytest.raises(ValidationError) as info:
        from_openai_responses_response(_response([custom]), pass_through_unknown=False)
    assert violations(info) == {("output[0].type", "openai_responses.unknown_type")}


def test_another_providers_response_keys_are_reported() -> None:
    extra = ProviderContent.from_block("anthropic", {"type": "message", "container": {"id": "container_1"}})
    message = AssistantMessage(
        [TextContent("Done.")],
        provenance=Provenance("openai", "openai-responses", "gpt-5", "resp_1"),
        stop_reason=StopReason.STOP,
        provider_extra=extra,
    )
    report = ConversionReport()
    written = to_openai_responses_response(message, report=report)
    assert "container" not in written
    assert [loss.path for loss in report.losses] == ["provider_extra"]
