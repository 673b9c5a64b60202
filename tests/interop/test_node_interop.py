"""A Node client (@grpc/grpc-js + @grpc/proto-loader, loading proto/ at run time) against the Python server.

The test starts the server on 127.0.0.1:0 and a Python ToolRunner, each on its own event loop in a thread
(as tests/service/conftest.py does), and runs ``node tests/interop/client.mjs``. Node appends one message of
every role, holding every content kind, subscribes and gets them back, lists and calls the Python tool, and
gets INVALID_ARGUMENT with ``google.rpc.BadRequest`` details for an invalid message. Node reports everything as
ProtoJSON; the test compares it field for field with what Python sent, and reads the log back in Python to
check the Node-encoded messages arrived intact.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from nodetools import PROTO, require_node, run_node
from samples import every_content, every_role

import agentmsg as am
from agentmsg.service import RUN_METADATA_KEY, Client, ServerConfig, ToolRunner, create_server
from agentmsg.v1 import content_pb2, message_pb2, session_service_pb2

SESSION = "node-interop"
# google/rpc/{status,error_details}.proto: shipped beside the contract in proto/ (make deps fetches them).
RPC_INCLUDE = PROTO
USER_KINDS = {"text", "image", "audio", "document", "tool_result", "approval", "provider"}
ASSISTANT_KINDS = {
    "text", "thinking", "redacted_thinking", "tool_call", "hosted_tool_call", "hosted_tool_result", "provider",
}  # fmt: skip


class _LoopThread:
    """An event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        async def drain() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.get_running_loop().shutdown_asyncgens()

        self.run(drain())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def node() -> str:
    """``node``, or skip before any server starts."""
    return require_node("@grpc/grpc-js", "@grpc/proto-loader", "protobufjs")


@pytest.fixture
def target(node: str) -> Iterator[str]:
    """A server (memory store) and a runner serving ``shout``; yields the server's address."""
    server_loop = _LoopThread()
    running = server_loop.run(create_server(ServerConfig(db=None)))
    target = f"127.0.0.1:{running.port}"
    runner = ToolRunner(target, name="python-shouter")

    @runner.tool(kind="execute")
    def shout(text: str, times: int = 1) -> str:
        """Repeat a text in capitals."""
        return " ".join([text.upper()] * times)

    runner_loop = _LoopThread()
    served: Future[None] = asyncio.run_coroutine_threadsafe(runner.serve(), runner_loop.loop)
    runner_loop.run(asyncio.wait_for(runner.registered.wait(), 10), timeout=11)
    try:
        yield target
    finally:
        served.cancel()
        runner_loop.close()
        server_loop.run(running.stop(0))
        server_loop.close()


def _content_kinds(pb: Message) -> Iterator[str | None]:
    """The kind of every Content block in ``pb``, nested ones included."""
    if isinstance(pb, content_pb2.Content):
        yield pb.WhichOneof("kind")
    for field, value in pb.ListFields():
        if field.message_type is None or field.message_type.GetOptions().map_entry:
            continue
        for item in value if field.is_repeated else [value]:
            yield from _content_kinds(item)


def messages() -> list[am.AgentMessage]:
    """Every role, and between them every content kind (each checked against the contract's oneofs)."""
    blocks = every_content()
    user: list[Any] = [b for b in blocks if b.type in USER_KINDS]
    assistant: list[Any] = [b for b in blocks if b.type in ASSISTANT_KINDS]
    ts = 1_700_000_100.5
    result = [
        *every_role(),
        am.UserMessage(user, id="u-every", timestamp=ts),
        am.AssistantMessage(assistant, stop_reason="tool_calls", id="a-every", timestamp=ts + 1),
    ]
    pbs = [m.pb for m in result]
    roles = {pb.WhichOneof("role") for pb in pbs}
    kinds = {kind for pb in pbs for kind in _content_kinds(pb)}
    all_roles = {f.name for f in message_pb2.Message.DESCRIPTOR.oneofs_by_name["role"].fields}
    all_kinds = {f.name for f in content_pb2.Content.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert roles == all_roles, f"add a message of role {all_roles - roles} to the interop samples"
    assert kinds == all_kinds, f"add content of kind {all_kinds - kinds} to the interop samples"
    return result


def invalid_message() -> message_pb2.Message:
    """A message breaking two rules: an empty id, and an image in a system message."""
    pb = message_pb2.Message(id="")
    pb.timestamp.FromSeconds(1_700_000_200)
    pb.system.content.add().image.url = "https://example.test/a.png"
    return pb


def test_a_node_client_speaks_to_the_python_server(node: str, target: str, tmp_path: Path) -> None:
    sent = messages()
    call = am.ToolCallContent("call_node_1", "shout", arguments='{"text": "hi", "times": 2}')
    invalid = invalid_message()
    request = tmp_path / "input.json"
    request.write_text(
        json.dumps(
            {
                "sessionId": SESSION,
                "messages": [m.to_json_dict() for m in sent],
                "invalid": json_format.MessageToDict(invalid),
                "toolCall": json_format.MessageToDict(call.pb.tool_call),
            }
        ),
        encoding="utf-8",
    )
    report = run_node(node, "client.mjs", target, str(request), str(PROTO), str(RPC_INCLUDE))

    # Node -> Python: every append got the next offset, the retry none; the log holds what Python built.
    count = len(sent)
    assert report["appended"] == [{"offset": i, "duplicate": False} for i in range(1, count + 1)]
    assert report["retried"] == {"offset": 1, "duplicate": True}
    with Client(target, timeout=10) as client:
        logged = list(client.history(SESSION))
    assert [entry.offset for entry in logged] == list(range(1, count + 1))
    for entry, original in zip(logged, sent, strict=True):
        assert entry.message.to_bytes() == original.to_bytes(), f"message {original.id} changed on the way in"

    # Python -> Node: the subscription delivered every message, field for field, as canonical ProtoJSON.
    assert [item["offset"] for item in report["subscribed"]] == list(range(1, count + 1))
    for item, original in zip(report["subscribed"], sent, strict=True):
        assert item["message"] == original.to_json_dict(), f"message {original.id} differs in Node's ProtoJSON"
        assert json_format.ParseDict(item["message"], message_pb2.Message()) == original.pb

    # A tool served by the Python runner, called from Node.
    assert [(t["tool"]["name"], t["runnerName"]) for t in report["tools"]] == [("shout", "python-shouter")]
    assert report["tools"][0]["tool"]["kind"] == "TOOL_KIND_EXECUTE"
    expected = am.ToolResultContent("call_node_1", "HI HI", name="shout")
    got = dict(report["toolResult"])
    run = got.pop("metadata")[RUN_METADATA_KEY]  # the run CallTool records, read by Node like any metadata
    assert (run["runner"], run["runner_id"]) == ("python-shouter", report["tools"][0]["runnerId"])
    assert got == json_format.MessageToDict(expected.pb.tool_result)

    # An invalid message: INVALID_ARGUMENT, with the violations as google.rpc.BadRequest that Node decodes.
    wanted = am.violations(session_service_pb2.AppendMessageRequest(session_id=SESSION, message=invalid))
    assert {(v.field, v.rule_id) for v in wanted} == {
        ("message.id", "string.min_len"),
        ("message.system.content[0]", "system.content.kind"),
    }
    error = report["invalid"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["statusCode"] == 3
    assert error["errorInfo"] == {"reason": "ValidationError", "domain": "agentmsg"}
    assert sorted(error["fieldViolations"], key=lambda v: v["field"]) == sorted(
        ({"field": v.field, "reason": v.rule_id, "description": v.message} for v in wanted), key=lambda v: v["field"]
    )
