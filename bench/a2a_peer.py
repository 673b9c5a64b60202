"""The A2A peer the transport benchmarks compare with: a minimal a2a-sdk agent in its own process, and its client.

``python bench/a2a_peer.py rest`` serves a2a-sdk's HTTP+JSON (REST) binding, ``python bench/a2a_peer.py grpc``
its gRPC binding, on 127.0.0.1 on a free port, and prints ``serving URL`` once it listens. Either way the
agent is a2a-sdk's ``DefaultRequestHandler`` over an in-memory task store with an executor that answers every
``SendMessage`` with one fixed agent message (no task: A2A stores nothing for it). The agent card names the
one binding served. ``Peer`` starts that process; ``a2a_client`` makes a2a-sdk's own client for the binding
(non-streaming ``send_message``), ``question`` the user message it sends, ``cpu_seconds`` a server's CPU time.

Used by bench/connect_http.py (HTTP+JSON) and bench/roundtrip_a2a.py (gRPC).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message, Part, Role
from a2a.utils.constants import TransportProtocol

ANSWER = "Sunny in Lisbon tomorrow, 24 °C."
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system, all threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class FixedAnswer(AgentExecutor):
    """Answers every message with the same agent message, in the request's context."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(
            Message(
                message_id=f"answer-{context.message.message_id if context.message else ''}",
                context_id=context.context_id or "",
                role=Role.ROLE_AGENT,
                parts=[Part(text=ANSWER)],
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("an answer is made at once: nothing to cancel")


BINDINGS = {"rest": TransportProtocol.HTTP_JSON, "grpc": TransportProtocol.GRPC}


def card(binding: str, url: str) -> AgentCard:
    return AgentCard(
        name="weather",
        description="Answers every question with the same forecast.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(protocol_binding=BINDINGS[binding], protocol_version="1.0", url=url)],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="weather", name="weather", description="The weather of a city.", tags=["weather"])],
    )


async def serve_rest() -> None:
    import uvicorn
    from a2a.server.routes import create_agent_card_routes, create_rest_routes
    from starlette.applications import Starlette

    # IPPROTO_TCP named, so asyncio sets TCP_NODELAY on the accepted connections (as agentmsg's HTTP listener)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    agent_card = card("rest", url)
    handler = DefaultRequestHandler(agent_executor=FixedAnswer(), task_store=InMemoryTaskStore(), agent_card=agent_card)
    app = Starlette(routes=[*create_agent_card_routes(agent_card), *create_rest_routes(handler)])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    print(f"serving {url}", flush=True)
    await serving


async def serve_grpc() -> None:
    import grpc
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    url = f"127.0.0.1:{port}"
    handler = DefaultRequestHandler(
        agent_executor=FixedAnswer(), task_store=InMemoryTaskStore(), agent_card=card("grpc", url)
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    print(f"serving {url}", flush=True)
    await server.wait_for_termination()


class Peer:
    """The A2A agent in its own process (``with Peer("rest") as peer: peer.url``)."""

    def __init__(self, binding: str) -> None:
        self.binding = binding
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), binding],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not (found := re.match(r"serving (\S+)", line)):
            self.process.kill()
            raise SystemExit(f"the A2A {binding} peer did not start")
        self.url = found.group(1)

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(30)


async def a2a_client(binding: str, url: str) -> Any:
    """a2a-sdk's own client for the peer, over the one binding its card names."""
    from a2a.client import ClientConfig, create_client

    if binding == "grpc":
        import grpc

        config = ClientConfig(
            streaming=False,
            supported_protocol_bindings=[TransportProtocol.GRPC],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
    else:
        config = ClientConfig(streaming=False, supported_protocol_bindings=[TransportProtocol.HTTP_JSON])
    return await create_client(card(binding, url), config)


def question(i: int) -> Message:
    """The user message a round trip sends (the text agentmsg's side appends)."""
    return Message(
        message_id=f"q-{i}",
        context_id="bench",
        role=Role.ROLE_USER,
        parts=[Part(text=f"message {i}: what is the weather in Lisbon tomorrow?")],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("binding", choices=sorted(BINDINGS))
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_rest() if args.binding == "rest" else serve_grpc())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
