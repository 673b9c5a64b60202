"""pydantic-ai histories both ways, and a real Agent whose history lives in an agentmsg session."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from pai_history import PNG, at, every_part, histories
from pydantic_ai import Agent, ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from serverproc import ServerProcess
from ui.conversation import approval_turn

from agentmsg import (
    AssistantMessage,
    HostedToolCallContent,
    ImageContent,
    Provenance,
    ProviderContent,
    RedactedThinkingContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolMessage,
    ToolResultContent,
    Usage,
    UserMessage,
    ValidationError,
)
from agentmsg.frameworks.pydantic_ai import PROVIDER, AgentHistory, from_pydantic_ai, to_pydantic_ai
from agentmsg.providers._common import ConversionReport
from agentmsg.service import Client
from agentmsg.sessions import Session


def dump(history: list[ModelMessage]) -> list[dict[str, Any]]:
    return ModelMessagesTypeAdapter.dump_python(history, mode="json")  # type: ignore[no-any-return]


def back(history: list[ModelMessage]) -> tuple[list[ModelMessage], ConversionReport]:
    report = ConversionReport()
    return to_pydantic_ai(from_pydantic_ai(history), report=report), report


# --- round trips ------------------------------------------------------------------------------


def test_every_part_kind_comes_back_exactly() -> None:
    history = every_part()
    again, report = back(history)
    assert report.losses == []
    assert dump(again) == dump(history)


def test_what_agentmsg_holds_typed() -> None:
    messages = from_pydantic_ai(every_part())
    system, _dynamic, user, _one_item, response = messages[:5]
    assert isinstance(system, SystemMessage)
    assert system.text_content() == "You are terse."
    assert isinstance(user, UserMessage)
    kinds = [type(b).__name__ for b in user.contents]
    assert kinds[:6] == [
        "TextContent",
        "ProviderContent",  # TextContent with metadata: verbatim
        "ImageContent",
        "ImageContent",
        "AudioContent",
        "DocumentContent",
    ]
    image = user.contents[3]
    assert isinstance(image, ImageContent)
    assert image.detail == "high"
    assert user.datetime == at(1)
    assert isinstance(response, AssistantMessage)
    thinking, redacted, text, call, dict_call = response.contents[:5]
    assert thinking == ThinkingContent("I should call the tool.", signature="sig-abc")
    assert redacted == RedactedThinkingContent("opaque==")
    assert isinstance(text, TextContent)
    assert text.content == "Calling."
    assert isinstance(call, ToolCallContent)
    assert call.arguments == '{"city":"Paris", "n": 1}'  # verbatim
    assert isinstance(dict_call, ToolCallContent)
    assert dict_call.args == {"tz": "UTC"}
    hosted = response.contents[6]
    assert isinstance(hosted, HostedToolCallContent)
    assert hosted.kind == "web_search"
    assert response.provenance == Provenance("anthropic", "anthropic-messages", "claude-sonnet-4-5", "msg_01")
    assert response.stop_reason == "tool_calls"
    # pydantic-ai counts cache reads and writes in its input; agentmsg does not
    assert response.usage == Usage(
        input_tokens=90, output_tokens=40, cache_read_tokens=20, cache_write_tokens=10, reasoning_tokens=7
    )
    assert response.datetime == at(2)
    tools = [m for m in messages if isinstance(m, ToolMessage)]
    results = [r for m in tools for r in m.results()]
    assert [(r.id, r.name, r.is_error) for r in results[:3]] == [
        ("call_1", "get_weather", False),
        ("call_2", "get_time", False),
        ("call_3", "noop", True),
    ]
    assert results[0].text == "sunny"
    assert results[1].text == '{"time":"08:00"}'
    assert results[1].metadata["cached"] is True


def test_reading_twice_gives_the_same_ids() -> None:
    first = [m.id for m in from_pydantic_ai(every_part())]
    assert first == [m.id for m in from_pydantic_ai(dump(every_part()))]
    assert len(set(first)) == len(first)


@settings(max_examples=60, deadline=None)
@given(histories)
def test_generated_histories_round_trip(history: list[ModelMessage]) -> None:
    again, report = back(history)
    assert report.losses == []
    assert dump(again) == dump(history)
    # and agentmsg -> pydantic-ai -> agentmsg gives the same messages
    messages = from_pydantic_ai(history)
    assert from_pydantic_ai(to_pydantic_ai(messages)) == messages


# --- agentmsg messages not read from pydantic-ai --------------------------------------------


def native() -> list[Any]:
    return [
        SystemMessage.text("Be brief.", timestamp=at(0)),
        UserMessage([TextContent("what is this?"), ImageContent(PNG, media_type="image/png")], timestamp=at(1)),
        AssistantMessage(
            [
                ThinkingContent("look", signature="sig"),
                ToolCallContent("c1", "describe", arguments='{"x": 1}'),
                ToolCallContent("c2", "describe", arguments='{"x": 2}'),
            ],
            usage=Usage(input_tokens=10, output_tokens=5, cache_read_tokens=3),
            provenance=Provenance("anthropic", "anthropic-messages", "claude-x", "msg_1"),
            stop_reason="tool_calls",
            stop_reason_raw="tool_use",
            timestamp=at(2),
        ),
        ToolMessage(
            [ToolResultContent("c1", "a png"), ToolResultContent("c2", "same", is_error=True)], timestamp=at(3)
        ),
        AssistantMessage([TextContent("A PNG.")], stop_reason="abort", error="cancelled", timestamp=at(4)),
    ]


def test_agentmsg_messages_come_back_exactly() -> None:
    messages = native()
    report = ConversionReport()
    history = to_pydantic_ai(messages, report=report)
    assert report.losses == []
    assert [m.kind for m in history] == ["request", "response", "request", "response"]
    response = history[1]
    assert isinstance(response, ModelResponse)
    thinking = response.parts[0]
    assert isinstance(thinking, ThinkingPart)
    assert thinking.signature == "sig"
    assert thinking.provider_name == "anthropic"
    assert response.usage.input_tokens == 13  # cache reads counted in, as pydantic-ai counts them
    assert response.finish_reason == "tool_call"
    returns = history[2].parts
    assert [p.tool_name for p in returns if isinstance(p, ToolReturnPart)] == ["describe", "describe"]
    assert from_pydantic_ai(history) == messages


def test_what_pydantic_ai_cannot_hold_is_reported() -> None:
    messages = [
        UserMessage([TextContent("hi", signature="s")], name="alice"),
        AssistantMessage(
            [
                TextContent("x"),
                ToolCallContent("c1", "f", arguments="{}", signature="tsig"),
                ProviderContent("anthropic", "container_upload", '{"type": "container_upload"}'),
            ],
            usage=Usage(output_tokens=1),
        ),
        ToolMessage([ToolResultContent("orphan", "r", terminate=True)]),
    ]
    report = ConversionReport()
    to_pydantic_ai(messages, report=report)
    assert sorted(loss.path for loss in report.losses) == [
        "[0].contents[0].signature",
        "[0].name",
        "[1].contents[1].signature",
        "[1].contents[2]",
        "[1].usage.input_tokens",
        "[2].contents[0].name",
        "[2].contents[0].terminate",
    ]
    with pytest.raises(Exception, match="pydantic-ai cannot hold 7"):
        to_pydantic_ai(messages, strict=True)


def test_tool_call_and_result_indexes_come_back_and_a_stray_result_index_is_reported() -> None:
    """A ToolCallPart has no index: a call's index rides in the response's metadata["agentmsg"] and comes back,
    through pydantic-ai's own JSON too. A ToolReturnPart has none either: reading gives a result its call's index,
    and a result whose index differs from its call's is reported lost, not dropped silently."""
    messages = [
        UserMessage.text("go", timestamp=at(0)),
        AssistantMessage(
            [
                ToolCallContent("c1", "f", arguments="{}"),
                ToolCallContent("c2", "f", arguments="{}", index=1),
                ToolCallContent("c3", "f", arguments="{}", index=7),
            ],
            timestamp=at(1),
        ),
        ToolMessage(
            [
                ToolResultContent("c1", "a"),
                ToolResultContent("c2", "b", index=1),
                ToolResultContent("c3", "c", index=7),
            ],
            timestamp=at(2),
        ),
    ]
    report = ConversionReport()
    history = to_pydantic_ai(messages, report=report)
    assert report.losses == []
    for read in (history, ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))):
        back = from_pydantic_ai(read)
        calls = [b for b in back[1].contents if isinstance(b, ToolCallContent)]
        assert [(c.id, c.index) for c in calls] == [("c1", 0), ("c2", 1), ("c3", 7)]
        assert back == messages
    stray = [*messages[:2], ToolMessage([ToolResultContent("c2", "b", index=3)], timestamp=at(2))]
    report = ConversionReport()
    back = from_pydantic_ai(to_pydantic_ai(stray, report=report))
    assert [(loss.path, loss.what) for loss in report.losses] == [("[2].contents[0].index", "the result's index 3")]
    assert "reading gives its call's (1)" in report.losses[0].reason
    assert back[2].contents[0].index == 1
    with pytest.raises(Exception, match="pydantic-ai cannot hold 1"):
        to_pydantic_ai(stray, strict=True)


def test_bad_input_names_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        from_pydantic_ai([{"kind": "response", "parts": [{"part_kind": "tool-call", "args": "{}"}]}])
    fields = {v.field for v in caught.value.violations}
    assert any(f.startswith("[0].response.parts[0]") for f in fields), fields
    with pytest.raises(ValidationError, match="expected a list"):
        to_pydantic_ai(SystemMessage.text("x"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"\[1\]: expected a ModelMessage, got str"):
        from_pydantic_ai([ModelRequest(parts=[UserPromptPart("hi")]), "hello"])
    with pytest.raises(ValidationError, match="expected a list of pydantic-ai messages"):
        from_pydantic_ai(ModelRequest(parts=[UserPromptPart("hi")]))  # type: ignore[arg-type]


def test_a_history_pydantic_ai_grew_keeps_its_new_fields() -> None:
    # agentmsg messages written to pydantic-ai, then given fields by pydantic-ai (an app setting run ids on them)
    history = to_pydantic_ai(native())
    for message in history:
        message.run_id = "run-9"
    again = to_pydantic_ai(from_pydantic_ai(history))
    assert dump(again) == dump(history)


# --- a real Agent -----------------------------------------------------------------------------


class Scripted:
    """A FunctionModel body: thinks and calls the tool, then answers after the tool; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart("It is sunny.")], usage=RequestUsage(input_tokens=30, output_tokens=4))
        n = len(self.seen)
        return ModelResponse(
            parts=[
                ThinkingPart("The user wants weather.", signature=f"sig-{n}", provider_name="anthropic"),
                ToolCallPart("get_weather", '{"city": "Paris"}', tool_call_id=f"call_{n}"),
            ],
            usage=RequestUsage(input_tokens=20, output_tokens=8, cache_read_tokens=5),
            model_name="claude-sonnet-4-5",
            provider_name="anthropic",
            finish_reason="tool_call",
        )


def run(agent: Agent[None, str], prompt: str, **kwargs: Any) -> Any:
    """One run on its own event loop, closed after (``run_sync`` leaves a loop behind, which warns when collected)."""
    return asyncio.run(agent.run(prompt, **kwargs))


def make_agent(script: Scripted) -> Agent[None, str]:
    agent = Agent(FunctionModel(script), instructions="Answer briefly.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    return agent


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess("--memory")
    yield process
    process.stop()


@pytest.mark.parametrize("where", ["local", "service"])
def test_agent_history_through_a_session(where: str, server: ServerProcess) -> None:
    script = Scripted()
    agent = make_agent(script)
    first = run(agent, "Weather in Paris?")
    assert [type(p).__name__ for m in first.all_messages() for p in m.parts] == [
        "UserPromptPart",
        "ThinkingPart",
        "ToolCallPart",
        "ToolReturnPart",
        "TextPart",
    ]
    client = Client(server.target) if where == "service" else None
    store: Session | Client = client if client is not None else Session(session_id="s")
    history = AgentHistory(store, f"pai-{where}")
    saved = history.save(first.new_messages())
    assert len(saved) == 4
    assert history.save(first.all_messages()) == []  # saving again appends nothing
    loaded = history.load()
    assert history.report.losses == []
    assert dump(loaded) == dump(first.all_messages())

    # the next run takes the loaded history and the model sees what it would have seen without agentmsg
    direct_script = Scripted()
    direct = run(make_agent(direct_script), "And tomorrow?", message_history=first.all_messages())
    second = run(agent, "And tomorrow?", message_history=loaded)
    seen_direct, seen_loaded = direct_script.seen[0], script.seen[2]
    assert dump(seen_loaded[:-1]) == dump(seen_direct[:-1])
    prompt = seen_loaded[-1].parts[-1]
    assert isinstance(prompt, UserPromptPart)
    assert prompt.content == "And tomorrow?"
    history.save(second.new_messages())
    assert dump(history.load()) == dump(second.all_messages())
    assert len(direct.all_messages()) == len(second.all_messages())
    if client is not None:
        client.close()


def test_agent_history_refuses_a_service_session_without_id(server: ServerProcess) -> None:
    with Client(server.target) as client, pytest.raises(ValidationError, match="session_id"):
        AgentHistory(client)


def test_a_file_part_keeps_its_bytes() -> None:
    messages = from_pydantic_ai(every_part())
    response = messages[4]
    file_block = response.contents[-1]
    assert isinstance(file_block, ProviderContent)
    assert file_block.provider == PROVIDER
    assert file_block.block_type == "file"
    assert dump(to_pydantic_ai([response]))[0]["parts"][-1]["content"]["media_type"] == "image/png"


def test_approval_in_a_pydantic_ai_history() -> None:
    """pydantic-ai keeps no decision in its history (ToolApproved / ToolDenied are a run's input): the decisions are
    reported, a denied call's return gets pydantic-ai's own outcome for it, and a call's requires_approval rides in
    the response's agentmsg metadata."""
    question, call, decisions, results, waiting = approval_turn()
    report = ConversionReport()
    history = to_pydantic_ai([question, call, decisions, results, waiting], report=report)
    assert [(loss.path, loss.what) for loss in report.losses] == [
        ("[2].contents[0]", "a ToolApprovalContent"),
        ("[2].contents[1]", "a ToolApprovalContent"),
    ]
    returns = {p.tool_call_id: p.outcome for p in history[2].parts if isinstance(p, ToolReturnPart)}
    assert returns == {"call_rm": "success", "call_deploy": "denied", "call_ls": "success"}
    back = from_pydantic_ai(dump(history))
    asking = [b.id for m in back for b in m.contents if isinstance(b, ToolCallContent) and b.requires_approval]
    assert asking == ["call_rm", "call_deploy", "call_tag"]
    denial = back[2].contents[1]
    assert isinstance(denial, ToolResultContent)
    assert denial.is_error
    # and back again: the outcome stays denied with no decision in sight
    assert dump(to_pydantic_ai(back)) == dump(history)
