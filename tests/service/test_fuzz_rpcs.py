"""Random and mutated request bytes to every RPC of a real server process, through a raw gRPC channel.

Every method of ``SessionService`` and ``ToolService`` (unary and streaming alike), health and reflection gets
request bytes made from a valid request by byte mutations (``fuzzing.mutate_bytes``: flips, cuts, inserts,
duplicated spans, over-long varints) and plain random bytes. The server must answer each with a status (or
keep a stream open until the client's short deadline): never ``UNKNOWN``, never a traceback in its log, and its
resident memory after the run must stay within ``GROWTH`` of what it was after a warm-up round.

``make test`` runs ``ROUNDS`` = 8 requests a method; ``make soak`` (``AGENTMSG_SOAK=1``) 400. Health and
reflection (grpcio's own servicers, registered through the same tolerant decoding) are fuzzed too.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import grpc
from fuzzing import SOAK, mutate_bytes
from google.protobuf import descriptor
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.v1 import convert_service_pb2, session_service_pb2, tool_service_pb2

ROUNDS = 400 if SOAK else 8
GROWTH_KIB = 48 * 1024  # resident memory the run may add after its warm-up round (allocator noise, caches)
DEADLINE = 0.5  # seconds a call may take: a stream that stays open ends here (DEADLINE_EXCEEDED)


def _seeds() -> dict[str, bytes]:
    """A valid request of each input type (by full name): what the mutations start from."""
    message = am.UserMessage.text("hello", id="m1").pb
    tool_call = am.ToolCallContent("call-1", "echo", {"text": "hi"})
    call = tool_call.pb.tool_call
    found: list[Any] = [
        session_service_pb2.AppendMessageRequest(session_id="fuzz", message=message),
        session_service_pb2.AppendMessagesRequest(session_id="fuzz", messages=[message]),
        session_service_pb2.ListMessagesRequest(session_id="fuzz", page_size=5),
        session_service_pb2.SubscribeRequest(session_id="fuzz", max_batch=2),
        session_service_pb2.ListSessionsRequest(page_size=3),
        session_service_pb2.BranchSessionRequest(session_id="fuzz", from_entry_id="m1", summary="s"),
        session_service_pb2.CompactSessionRequest(session_id="fuzz", summary="s"),
        session_service_pb2.BuildContextRequest(session_id="fuzz"),
        tool_service_pb2.CallToolRequest(call=call),
        tool_service_pb2.ListToolsRequest(),
        health_pb2.HealthCheckRequest(service="agentmsg.v1.SessionService"),
        reflection_pb2.ServerReflectionRequest(list_services=""),
        convert_service_pb2.FromProviderRequest(
            format=convert_service_pb2.CONVERSION_FORMAT_ANTHROPIC,
            json='{"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},'
            '{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"a":[1,2.5,null]}}]}]}',
        ),
    ]
    to_provider = convert_service_pb2.ToProviderRequest(format=convert_service_pb2.CONVERSION_FORMAT_GEMINI)
    to_provider.input.messages.messages.extend([message, am.AssistantMessage([tool_call], id="a1").pb])
    found.append(to_provider)
    register = tool_service_pb2.ServeToolsRequest()
    register.register.runner_name = "fuzz"
    register.register.tools.add(name="echo", description="echo")
    found.append(register)
    publish = session_service_pb2.PublishStreamRequest(session_id="fuzz")
    publish.event.message_start.message_id = "p1"
    found.append(publish)
    return {type(m).DESCRIPTOR.full_name: m.SerializeToString() for m in found}


SEEDS = _seeds()
_REFLECTION = reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"]
# (the name the server serves it under, its descriptor): reflection v1 is v1alpha's service renamed.
SERVICES: dict[str, list[tuple[str, descriptor.ServiceDescriptor]]] = {
    "session": [("agentmsg.v1.SessionService", session_service_pb2.DESCRIPTOR.services_by_name["SessionService"])],
    "tool": [("agentmsg.v1.ToolService", tool_service_pb2.DESCRIPTOR.services_by_name["ToolService"])],
    "convert": [("agentmsg.v1.ConvertService", convert_service_pb2.DESCRIPTOR.services_by_name["ConvertService"])],
    "health": [("grpc.health.v1.Health", health_pb2.DESCRIPTOR.services_by_name["Health"])],
    "reflection": [(_REFLECTION.full_name, _REFLECTION), ("grpc.reflection.v1.ServerReflection", _REFLECTION)],
}
Method = tuple[str, descriptor.MethodDescriptor]  # its path, its descriptor


def _inputs(method: descriptor.MethodDescriptor, rng: random.Random, rounds: int) -> Iterator[bytes]:
    seed = SEEDS.get(method.input_type.full_name, b"")
    yield b"\xff\xff\xff"  # never decodes: a field key with no end
    for n in range(rounds - 1):
        if n % 4 == 3:
            yield rng.randbytes(rng.randrange(1, 64))
        else:
            choices = [
                (rng.randrange(5), rng.randrange(1 << 16), rng.randrange(256)) for _ in range(rng.randrange(1, 4))
            ]
            yield mutate_bytes(seed, iter(choices))


async def _call(
    channel: grpc.aio.Channel, path: str, method: descriptor.MethodDescriptor, data: bytes
) -> grpc.StatusCode:
    try:
        if method.client_streaming and method.server_streaming:
            call: Any = channel.stream_stream(path)(iter([data]), timeout=DEADLINE)
            async for _ in call:
                pass
        elif method.client_streaming:
            await channel.stream_unary(path)(iter([data]), timeout=DEADLINE)
        elif method.server_streaming:
            async for _ in channel.unary_stream(path)(data, timeout=DEADLINE):
                pass
        else:
            await channel.unary_unary(path)(data, timeout=DEADLINE)
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


async def _round(target: str, methods: list[Method], rounds: int, seed: int) -> list[str]:
    """Every input to every method (16 at a time); the calls answered UNKNOWN, described."""
    rng = random.Random(seed)
    work = [(path, method, data) for path, method in methods for data in _inputs(method, rng, rounds)]
    unknown: list[str] = []
    gate = asyncio.Semaphore(16)
    async with grpc.aio.insecure_channel(target) as channel:

        async def one(path: str, method: descriptor.MethodDescriptor, data: bytes) -> None:
            async with gate:
                if await _call(channel, path, method, data) == grpc.StatusCode.UNKNOWN:
                    unknown.append(f"{path} <- {data[:40]!r}")

        await asyncio.gather(*(one(path, method, data) for path, method, data in work))
    return unknown


def _fuzz(services: list[str]) -> None:
    methods = [
        (f"/{served}/{m.name}", m) for name in services for served, service in SERVICES[name] for m in service.methods
    ]
    server = ServerProcess("--memory")
    try:
        warm = asyncio.run(_round(server.target, methods, 4, seed=1))
        before = server.rss_kib()
        unknown = warm + asyncio.run(_round(server.target, methods, ROUNDS, seed=2))
        after = server.rss_kib()
    finally:
        server.stop()
    log = "".join(server.errors)
    assert unknown == [], f"{len(unknown)} call(s) answered UNKNOWN: {unknown[:5]}"
    assert "Traceback" not in log, log[-3000:]
    assert after - before <= GROWTH_KIB, f"resident memory grew {after - before} KiB ({before} -> {after})"


def test_fuzzed_bytes_to_every_session_and_tool_rpc() -> None:
    _fuzz(["session", "tool"])


def test_fuzzed_bytes_to_the_conversion_rpcs() -> None:
    _fuzz(["convert"])


def test_fuzzed_bytes_to_health_and_reflection() -> None:
    _fuzz(["health", "reflection"])
