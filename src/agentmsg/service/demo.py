"""``make run``: the service demo, across separate processes.

``python -m agentmsg.service.demo`` starts an agentmsg server on the embedded
SQLite store (a temporary file), then three processes that talk only through
it:

- a **tool runner** serving ``get_weather``;
- a **tail** observer following the session live (``agentmsg tail --follow --live``);
- an **engine** running one agent turn with a scripted model (no network): the
  user's question, an assistant message streamed live with a thinking block and
  a tool call, the tool called through the service, the runner's result, and a
  streamed final answer.

Every process's output is shown with its name in front; everything exits
cleanly, the server last (graceful shutdown).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import agentmsg as am
from agentmsg.service import AsyncClient, ToolRunner
from agentmsg.streaming import StreamEvent, events_from_message

SESSION = "demo-session"
PROVENANCE = am.Provenance("scripted", "agentmsg-demo", "scripted-model-1")


async def _stream(message: am.AssistantMessage) -> AsyncIterator[StreamEvent]:
    """A scripted model 'generating' ``message``: its events, a few characters at a time."""
    for event in events_from_message(message, chunk_size=6):
        await asyncio.sleep(0.01)
        yield event


async def engine(target: str) -> None:
    """One agent turn through the service."""
    async with AsyncClient(target, timeout=20) as client:
        while not any(t.tool.name == "get_weather" for t in await client.list_tools()):
            await asyncio.sleep(0.05)
        system = am.SystemMessage.text("You are a weather assistant. Use tools for facts.")
        question = am.UserMessage.text("What's the weather in Paris right now?")
        offsets = await client.append_many(SESSION, [system, question])
        print(f"appended the system prompt and the question at offsets {offsets}", flush=True)

        call = am.ToolCallContent("call_w1", "get_weather", {"city": "Paris"}, kind="web")
        thinking = am.AssistantMessage(
            [am.ThinkingContent("The user wants current weather; call the tool.", "c2NyaXB0ZWQ="), call],
            usage=am.Usage(input_tokens=52, output_tokens=31),
            stop_reason=am.StopReason.TOOL_CALLS,
            provenance=PROVENANCE,
        )
        offset, _ = await client.publish_stream(SESSION, _stream(thinking))
        print(f"model asked for get_weather; the streamed message landed at offset {offset}", flush=True)

        result = await client.call_tool(call, timeout=10)
        print(f"tool answered: {result.text}", flush=True)
        offset = await client.append(SESSION, am.ToolMessage.from_result(result))
        print(f"tool result appended at offset {offset}", flush=True)

        answer = am.AssistantMessage.text(
            f"It is {result.text} in Paris right now.",
            usage=am.Usage(input_tokens=97, output_tokens=14),
            stop_reason=am.StopReason.STOP,
            provenance=PROVENANCE,
        )
        offset, final = await client.publish_stream(SESSION, _stream(answer))
        print(f"final answer landed at offset {offset}: {final.text_content()!r}", flush=True)


def runner(target: str) -> None:
    """A tool runner with one tool."""
    tools = ToolRunner(target, name="weather-runner")

    @tools.tool(kind="web")
    def get_weather(city: str) -> str:
        """Current weather for a city (scripted)."""
        return {"Paris": "14°C and light rain"}.get(city, "unknown")

    print("serving get_weather", flush=True)
    tools.run()


def _pump(name: str, stream: object) -> threading.Thread:
    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            print(f"[{name:>6}] {line.rstrip()}", flush=True)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def _spawn(name: str, *args: str) -> tuple[subprocess.Popen[str], threading.Thread]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    return process, _pump(name, process.stdout)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="agentmsg-demo-") as tmp:
        db = str(Path(tmp) / "demo.db")
        server = subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
            [sys.executable, "-m", "agentmsg", "serve", "--port", "0", "--db", db],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert server.stdout is not None
        line = server.stdout.readline()
        print(f"[server] {line.rstrip()}", flush=True)
        if "serving on" not in line:
            server.kill()
            return 1
        target = line.split("serving on ", 1)[1].split()[0]
        server_pump = _pump("server", server.stdout)
        here = "agentmsg.service.demo"
        tool_runner, _ = _spawn("runner", "-m", here, "runner", target)
        tail, tail_pump = _spawn(
            "tail", "-m", "agentmsg", "tail", SESSION, "--follow", "--live", "--until-stop", "--target", target
        )
        time.sleep(0.3)  # let the observer subscribe before the turn starts
        engine_process, engine_pump = _spawn("engine", "-m", here, "engine", target)
        code = 0
        try:
            code |= engine_process.wait(60)
            code |= tail.wait(30)
        finally:
            for process in (engine_process, tail, tool_runner):
                if process.poll() is None:
                    process.terminate()
                    process.wait(10)
            server.terminate()  # SIGTERM: graceful shutdown
            server.wait(15)
            for pump in (engine_pump, tail_pump, server_pump):
                pump.join(5)
        print(f"demo {'finished' if code == 0 else 'FAILED'}: server, runner, tail and engine all exited", flush=True)
        return code


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "engine":
        asyncio.run(engine(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "runner":
        runner(sys.argv[2])
    else:
        raise SystemExit(main())
