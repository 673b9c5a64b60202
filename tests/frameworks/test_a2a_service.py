"""A real a2a-sdk server and client (JSON-RPC, uvicorn on 127.0.0.1) talking agentmsg through the extension."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from a2a.client import ClientConfig, create_client
from a2a.client.client import Client
from a2a.server.agent_execution import RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message, Part, Role, SendMessageRequest
from a2a.utils.errors import A2AError
from google.protobuf import json_format
from starlette.applications import Starlette

import agentmsg as am
from agentmsg.frameworks.a2a import EXTENSION_URI, AgentmsgExecutor, agent_extension, client_context, from_a2a, to_a2a
from agentmsg.providers._common import ConversionReport

USAGE = am.Usage(input_tokens=120, output_tokens=30, cache_read_tokens=100, reasoning_tokens=12)
PROVENANCE = am.Provenance("anthropic", "anthropic-messages", "claude-x", "msg_01")


def _answer_call(reply_to: str) -> am.AssistantMessage:
    return am.AssistantMessage(
        [
            am.ThinkingContent("The user wants the weather; call the tool.", "EqQBCkYIBxgCKkD-signature"),
            am.RedactedThinkingContent("b3BhcXVl"),
            am.TextContent("Checking the weather."),
            am.ToolCallContent("toolu_01", "weather", arguments='{"city": "Paris", "days": 2}'),
        ],
        usage=USAGE,
        stop_reason=am.StopReason.TOOL_CALLS,
        stop_reason_raw="tool_use",
        provenance=PROVENANCE,
        id=f"answer-{reply_to}",
        timestamp=1_700_000_000.5,
    )


def _answer_text(reply_to: str) -> am.AssistantMessage:
    return am.AssistantMessage(
        [am.TextContent("Sunny in Paris, 21 °C.", signature="c2ln")],
        usage=am.Usage(input_tokens=160, output_tokens=9),
        stop_reason=am.StopReason.STOP,
        provenance=PROVENANCE,
        id=f"answer-{reply_to}",
        timestamp=1_700_000_001.25,
    )


class WeatherAgent:
    """The remote agent: a scripted model that calls a tool, then answers from its result."""

    def __init__(self) -> None:
        self.received: list[am.AgentMessage] = []
        self.extensions: list[set[str]] = []

    async def __call__(self, message: am.AgentMessage, context: RequestContext) -> am.AgentMessage:
        self.received.append(message)
        self.extensions.append(set(context.requested_extensions))
        if isinstance(message, am.ToolMessage):
            return _answer_text(message.id)
        return _answer_call(message.id)


@contextlib.asynccontextmanager
async def a2a_server(agent: WeatherAgent) -> AsyncIterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = AgentCard(
        name="weather",
        description="Answers weather questions with a tool.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=f"{url}/")],
        capabilities=AgentCapabilities(streaming=False, extensions=[agent_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="weather", name="weather", description="The weather of a city.", tags=["weather"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=AgentmsgExecutor(agent), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        for _ in range(500):
            if server.started or serving.done():
                break
            await asyncio.sleep(0.01)
        assert server.started, "the A2A server did not start"
        yield url
    finally:
        server.should_exit = True
        await serving
        sock.close()


async def _send(client: Client, message: Message, *, extension: bool) -> Message:
    replies = [
        event.message
        async for event in client.send_message(
            SendMessageRequest(message=message), context=client_context(extension=extension)
        )
    ]
    assert len(replies) == 1
    return replies[0]


async def _conversation() -> tuple[WeatherAgent, list[am.AgentMessage], list[Message]]:
    agent = WeatherAgent()
    async with a2a_server(agent) as url, httpx.AsyncClient() as http:
        client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
        assert [e.uri for e in client._card.capabilities.extensions] == [EXTENSION_URI]
        question = am.UserMessage.text("Weather in Paris?", id="q1", timestamp=1_699_999_999.75, name="alice")
        results = am.ToolMessage.from_result(
            am.ToolResultContent("toolu_01", '{"temp_c": 21, "sky": "clear"}', name="weather", metadata={"ms": 41}),
            id="r1",
            timestamp=1_700_000_000.75,
        )
        history: list[am.AgentMessage] = []
        wire: list[Message] = []
        for outgoing in (question, results):
            history.append(outgoing)
            (sent,) = to_a2a([outgoing], context_id="ctx-1")
            reply = await _send(client, sent, extension=True)
            wire.append(reply)
            history.extend(from_a2a([reply], report=ConversionReport()))
        await client.close()
    return agent, history, wire


def test_two_agentmsg_agents_lose_nothing_through_the_extension() -> None:
    agent, history, wire = asyncio.run(_conversation())
    question, answer, results, final = history
    # the client reads the agent's messages back exactly: reasoning with signatures, tool calls, usage, provenance
    assert answer == _answer_call("q1")
    assert final == _answer_text("r1")
    assert answer.to_bytes() == _answer_call("q1").to_bytes()
    assert isinstance(answer, am.AssistantMessage)
    assert answer.usage == USAGE
    assert [b.signature for b in answer.thinking()] == ["EqQBCkYIBxgCKkD-signature"]
    # and the server read the client's exactly: the name, the timestamp, the tool result's app-only metadata
    assert agent.received == [question, results]
    assert agent.extensions == [{EXTENSION_URI}, {EXTENSION_URI}]
    assert all(list(m.extensions) == [EXTENSION_URI] for m in wire)


def test_a_plain_client_reads_the_text_parts() -> None:
    async def run() -> tuple[WeatherAgent, Message]:
        agent = WeatherAgent()
        async with a2a_server(agent) as url, httpx.AsyncClient() as http:
            client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
            question = Message(message_id="p1", role=Role.ROLE_USER, parts=[Part(text="Weather in Paris?")])
            reply = await _send(client, question, extension=False)
            await client.close()
            return agent, reply

    agent, reply = asyncio.run(run())
    assert agent.extensions == [set()]
    assert [(type(m), m.id, m.text_content()) for m in agent.received] == [(am.UserMessage, "p1", "Weather in Paris?")]
    # no extension on the wire: the text part only, no metadata, no data part
    assert not reply.extensions
    assert not reply.metadata
    assert [json_format.MessageToDict(p) for p in reply.parts] == [{"text": "Checking the weather."}]
    assert reply.role == Role.ROLE_AGENT
    assert reply.message_id == "answer-p1"


def test_a_malformed_message_is_refused_and_the_server_keeps_serving() -> None:
    async def run() -> tuple[str, Message]:
        agent = WeatherAgent()
        async with a2a_server(agent) as url, httpx.AsyncClient() as http:
            client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
            (good,) = to_a2a([am.UserMessage.text("hi", id="q1")])
            bad = Message()
            bad.CopyFrom(good)
            bad.metadata.update({EXTENSION_URI: {"user": {"content": "not a list"}}})
            with pytest.raises(A2AError) as caught:
                await _send(client, bad, extension=True)
            reply = await _send(client, good, extension=True)
            await client.close()
            return str(caught.value), reply

    error, reply = asyncio.run(run())
    assert "agentmsg cannot read the message" in error
    assert EXTENSION_URI in error
    assert json_format.MessageToDict(reply)["messageId"] == "answer-q1"
