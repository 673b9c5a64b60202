"""A scripted Agents SDK model (no network) and one conversation turn over an AgentmsgSession.

Run as a script (``python agents_script.py TARGET SESSION_ID QUESTION``) it plays one turn against the agentmsg
server at TARGET and prints, as JSON, the input items the model was given on each call: the second process of the
cross-process test.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, Usage, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

from agentmsg.frameworks.openai_agents import AgentmsgSession
from agentmsg.service import AsyncClient

set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers a question with reasoning and a tool call, and a tool output with text; records its inputs."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.seen: list[list[dict[str, Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],  # noqa: A002 - the SDK's parameter name
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else [dict(i) for i in input]
        self.seen.append(items)
        n = len(self.seen)
        usage = Usage(requests=1, input_tokens=10 * n, output_tokens=3, total_tokens=10 * n + 3)
        if items[-1].get("type") == "function_call_output":
            text = ResponseOutputText(text=f"{self.tag}: sunny", type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id=f"msg_{self.tag}_{n}", role="assistant", status="completed", type="message", content=[text]
            )
            return ModelResponse(output=[message], usage=usage, response_id=f"resp_{self.tag}_{n}")
        reasoning = ResponseReasoningItem(
            id=f"rs_{self.tag}_{n}",
            type="reasoning",
            summary=[Summary(text="the user wants weather", type="summary_text")],
            encrypted_content=f"enc-{self.tag}-{n}",
        )
        call = ResponseFunctionToolCall(
            id=f"fc_{self.tag}_{n}",
            call_id=f"call_{self.tag}_{n}",
            name="get_weather",
            arguments='{"city": "Paris"}',
            type="function_call",
            status="completed",
        )
        return ModelResponse(output=[reasoning, call], usage=usage, response_id=f"resp_{self.tag}_{n}")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise TypeError("the scripted model serves Runner.run, not Runner.run_streamed")


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def make_agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="weather", instructions="Answer briefly.", model=model, tools=[get_weather])


async def turn(target: str, session_id: str, question: str, tag: str) -> tuple[str, list[list[dict[str, Any]]]]:
    model = ScriptedModel(tag)
    async with AsyncClient(target) as client:
        session = AgentmsgSession(session_id, client, model="gpt-5")
        result = await Runner.run(make_agent(model), question, session=session)
    return str(result.final_output), model.seen


if __name__ == "__main__":
    final, seen = asyncio.run(turn(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]))
    print(json.dumps({"final": final, "seen": seen}))
