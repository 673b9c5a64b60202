"""agentmsg's own work per hosted ``CallTool``, in one process, with gRPC and the MCP server left out.

- **server**: the ``CallTool`` handler as the server registers it (the budget gate's counted handler, the
  tolerant decoding, the servicer, ``ToolHandler.CallTool``, a hosted MCP server's call, the MCP result read and
  checked, the response stamped and encoded), from request bytes to response bytes, against a raw handler doing the
  least the same call needs (decode, JSON arguments, the result's text into a response, encode). The MCP connection
  is a stand-in that answers with a text result from a loop callback, as the stdio connection's read callback does;
  the gRPC context says what grpc.aio's says (no metadata, a 30 s deadline).
- **client**: ``AsyncClient.call_tool(ToolCallContent(...))`` and the bench's result check, with the gRPC call a
  stand-in that encodes the request and decodes a recorded response, against the same with a request built as a
  bare protobuf message.

Thread CPU time per call, the least of ``--repeats`` runs (warm caches: between real calls each costs several
times more; ``bench/mcp_percall.py`` measures those). Run: ``.venv/bin/python bench/calltool_path.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp_bridge

import agentmsg as am
from agentmsg.mcp._session import stdio_server
from agentmsg.mcp.hosted import HostedMcp
from agentmsg.service import AsyncClient
from agentmsg.service.access import Access
from agentmsg.service.budgets import BudgetGate, Budgets
from agentmsg.service.grpc.calls import _decoding, capture
from agentmsg.service.grpc.tools import ToolServicer
from agentmsg.service.handlers.tools import ToolHandler
from agentmsg.v1 import tool_pb2, tool_service_pb2, tool_service_pb2_grpc

METHOD = "/agentmsg.v1.ToolService/CallTool"


class Answering:
    """The MCP connection's stand-in: the request encoded as the stdio connection encodes it, the echo tool's text
    result delivered by a loop callback."""

    async def request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        del timeout
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        text = f"Echo: {params['arguments']['message']}"
        loop.call_soon(answer.set_result, json.loads(json.dumps({"content": [{"type": "text", "text": text}]})))
        return await answer


class Context:
    """What the handlers ask grpc.aio's servicer context."""

    def invocation_metadata(self) -> tuple[()]:
        return ()

    def time_remaining(self) -> float:
        return 30.0

    def done(self) -> bool:
        return False


class Details:
    method = METHOD
    invocation_metadata = ()


async def server_paths() -> dict[str, Callable[[bytes], Awaitable[bytes]]]:
    handler = ToolHandler(Access())
    hosted = HostedMcp("ev", stdio_server("true"), handler)
    conn = Answering()
    hosted._conn = conn  # type: ignore[assignment]
    hosted._names = {"ev.echo": "echo"}
    await handler.host("mcp:ev", [tool_pb2.ToolDefinition(name="ev.echo", description="Echo.")], hosted._call)
    methods = capture(tool_service_pb2_grpc.add_ToolServiceServicer_to_server, ToolServicer(handler))
    decoding = _decoding(methods["CallTool"])
    budgets = BudgetGate(Access(), Budgets(0, 0, 0, 0))
    context, details = Context(), Details()

    def admitted(_: Any, handler: Any) -> Any:  # the gates after the budgets' (none)
        return handler

    async def agentmsg_path(data: bytes) -> bytes:
        method: Any = budgets(details, decoding, admitted)  # as gRPC's method lookup calls the gates
        response = await method.unary_unary(method.request_deserializer(data), context)
        return bytes(method.response_serializer(response))

    async def raw(data: bytes) -> bytes:
        request = tool_service_pb2.CallToolRequest.FromString(data)
        arguments = json.loads(request.call.arguments)
        answer = await conn.request("tools/call", {"name": "echo", "arguments": arguments})
        response = tool_service_pb2.CallToolResponse()
        response.result.id = request.call.id
        response.result.content.add().text.text = answer["content"][0]["text"]
        return response.SerializeToString()

    return {"agentmsg": agentmsg_path, "raw": raw}


def client_paths() -> tuple[AsyncClient, dict[str, Callable[[int], Awaitable[None]]]]:
    response = tool_service_pb2.CallToolResponse()
    result = response.result
    result.id, result.name = "call-1", "ev.echo"
    result.content.add().text.text = "Echo: m1"
    run = result.metadata.fields["agentmsg.run"].struct_value.fields
    run["runner"].string_value, run["runner_id"].string_value = "mcp:ev", "0" * 36
    run["latency_ms"].number_value = 0.412
    recorded = response.SerializeToString()

    async def call(request: Any, timeout: float | None = None, metadata: Any = None) -> Any:
        request.SerializeToString()
        return tool_service_pb2.CallToolResponse.FromString(recorded)

    class Tools:
        CallTool = staticmethod(call)

    client = AsyncClient("127.0.0.1:1")
    client._tools = Tools  # type: ignore[assignment]

    async def agentmsg_path(i: int) -> None:
        answer = await client.call_tool(am.ToolCallContent(f"call-{i}", "ev.echo", {"message": f"m{i}"}))
        mcp_bridge.checked(answer, "m1")

    async def raw(i: int) -> None:
        request = tool_service_pb2.CallToolRequest()
        request.call.id, request.call.name = f"call-{i}", "ev.echo"
        request.call.arguments = json.dumps({"message": f"m{i}"})
        answer = await call(request)
        if "m1" not in answer.result.content[0].text.text:
            raise RuntimeError("unexpected answer")

    return client, {"agentmsg": agentmsg_path, "raw": raw}


def request_bytes(i: int) -> bytes:
    request = tool_service_pb2.CallToolRequest()
    request.call.id, request.call.name = f"call-{i}", "ev.echo"
    request.call.arguments = json.dumps({"message": f"m{i}"})
    return request.SerializeToString()


async def run(calls: int, repeats: int) -> dict[str, dict[str, float]]:
    servers = await server_paths()
    requests = [request_bytes(i) for i in range(calls)]
    if b"Echo: m3" not in await servers["agentmsg"](requests[3]):
        raise RuntimeError("the agentmsg path gave no echo")
    client, clients = client_paths()
    times: dict[str, list[float]] = {}
    for _ in range(repeats):
        for name, server_path in servers.items():
            began = time.thread_time()
            for data in requests:
                await server_path(data)
            times.setdefault(f"server {name}", []).append((time.thread_time() - began) / calls)
        for name, client_path in clients.items():
            began = time.thread_time()
            for i in range(calls):
                await client_path(i)
            times.setdefault(f"client {name}", []).append((time.thread_time() - began) / calls)
    await client.close()
    return {key: {"min_us": min(v) * 1e6, "median_us": statistics.median(v) * 1e6} for key, v in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    results = asyncio.run(run(args.calls, args.repeats))
    for key, figures in results.items():
        print(f"{key:16s} {figures['min_us']:7.2f} us a call (median of runs {figures['median_us']:7.2f})")
    for side in ("server", "client"):
        extra = results[f"{side} agentmsg"]["min_us"] - results[f"{side} raw"]["min_us"]
        print(f"{side}: agentmsg's work over the raw path {extra:.2f} us a call")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
