"""Faults, on loopback: a server SIGKILLed mid-burst, subscribers cut off, runners killed mid-call,
clients that cancel, a store that turns read-only or fills up. Nothing acknowledged is lost.

The server runs as ``python -m agentmsg serve --port 0 --db FILE`` in a subprocess where it is
killed; in a thread (``conftest.ServerThread``) where its internals are inspected.
``AGENTMSG_SOAK=1`` runs the burst and resume cases longer.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from conftest import RunnerThread, ServerThread
from fuzzing import nested_message_bytes, varint
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.errors import StoreFullError
from agentmsg.service import AsyncClient, Client, Logged, ToolRunner, status
from agentmsg.service.stores import SQLiteStore
from agentmsg.streaming import StreamEvent
from agentmsg.v1 import tool_pb2, tool_service_pb2

SOAK = os.environ.get("AGENTMSG_SOAK", "") not in ("", "0")
BATCH = 5


def message(session: str, writer: int, batch: int, i: int) -> am.UserMessage:
    key = f"{session}-w{writer}-b{batch}-{i}"
    return am.UserMessage.text(f"payload {key} " + "x" * 200, id=key, timestamp=1_700_000_000 + batch)


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.kill()


def test_sigkill_mid_burst_keeps_every_acknowledged_append(tmp_path: Path, processes: list[ServerProcess]) -> None:
    """Writers append atomic batches until the server is SIGKILLed; after a restart on the same file,
    every acknowledged message is at its acknowledged offset, and every batch is all there or not at all."""
    db = str(tmp_path / "burst.db")
    server = ServerProcess("--db", db)
    processes.append(server)
    target_acks = 10_000 if SOAK else 1_000
    acked: dict[str, int] = {}  # message id -> offset the server acknowledged
    sent: dict[str, list[am.UserMessage]] = {}  # batch key -> its messages (acknowledged or not)
    lock = threading.Lock()
    stop = threading.Event()
    failures: list[str] = []

    def writer(number: int) -> None:
        session = "shared" if number % 2 else f"own-{number}"
        with Client(server.target, timeout=5) as client:
            batch = 0
            while not stop.is_set():
                messages = [message(session, number, batch, i) for i in range(BATCH)]
                with lock:
                    sent[f"{session}/{number}/{batch}"] = messages
                try:
                    offsets = client.append_many(session, messages)
                except (am.UnavailableError, am.DeadlineExceededError, am.CancelledError):
                    return  # the server is gone: this batch is unacknowledged
                except am.AgentMsgError as exc:  # pragma: no cover - reported below
                    failures.append(repr(exc))
                    return
                with lock:
                    acked.update({m.id: offset for m, offset in zip(messages, offsets, strict=True)})
                batch += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    while len(acked) < target_acks and time.monotonic() - began < 60:
        time.sleep(0.005)
    server.kill()  # SIGKILL in the middle of the burst
    stop.set()
    for thread in threads:
        thread.join(15)
    assert not failures
    assert len(acked) >= target_acks

    restarted = ServerProcess("--db", db)
    processes.append(restarted)
    with Client(restarted.target, timeout=10) as client:
        logs = {s.session_id: list(client.history(s.session_id, page_size=1000)) for s in client.sessions()}
    stored = {item.message.id: (session, item.offset, item.message) for session, log in logs.items() for item in log}
    for session, log in logs.items():
        assert [item.offset for item in log] == list(range(1, len(log) + 1)), session  # no hole, no partial write
    for message_id, offset in acked.items():
        assert message_id in stored, f"acknowledged {message_id} is lost"
        assert stored[message_id][1] == offset
    for key, messages in sent.items():
        present = [m.id in stored for m in messages]
        assert all(present) or not any(present), f"batch {key} is partly stored: {present}"
        if all(present):
            assert [stored[m.id][2] for m in messages] == messages
    assert set(stored) <= {m.id for messages in sent.values() for m in messages}
    print(
        f"\n[faults] burst: {len(acked)} acknowledged appends, SIGKILL, restart: "
        f"{len(stored)} stored ({len(stored) - len(acked)} committed but unacknowledged), 0 lost, 0 partial"
    )


def test_a_subscriber_resumes_across_a_server_kill_and_restart(tmp_path: Path, processes: list[ServerProcess]) -> None:
    """A subscriber reading live is cut off by a SIGKILL; after the restart it resumes from its last offset."""
    db = str(tmp_path / "resume.db")
    total = 2_000 if SOAK else 200
    first = ServerProcess("--db", db)
    processes.append(first)
    seen: list[int] = []
    cut = threading.Event()
    reading = threading.Event()

    def follow(target: str, after: int, until: int | None) -> None:
        with Client(target, timeout=10) as client:
            try:
                for item in client.subscribe("live", after=after, timeout=30):
                    assert isinstance(item, Logged)
                    seen.append(item.offset)
                    reading.set()
                    if until is not None and item.offset >= until:
                        return
            except am.ServiceError:  # UNAVAILABLE as a rule: the connection is gone
                cut.set()

    subscriber = threading.Thread(target=follow, args=(first.target, 0, None))
    subscriber.start()
    with Client(first.target, timeout=5) as writer:
        offset = 0
        for i in range(total // 2):
            offset = writer.append("live", am.UserMessage.text(f"m{i}", id=f"m{i}", timestamp=1))
            if i == total // 4:
                assert reading.wait(60)
    first.kill()  # mid-stream: the subscriber may be anywhere in the first half
    subscriber.join(60)
    assert cut.is_set(), "the subscriber did not see the server go"
    assert offset == total // 2
    last = seen[-1]
    assert seen == list(range(1, last + 1))

    second = ServerProcess("--db", db)
    processes.append(second)
    with Client(second.target, timeout=5) as writer:
        for i in range(total // 2, total):
            writer.append("live", am.UserMessage.text(f"m{i}", id=f"m{i}", timestamp=1))
    follow(second.target, last, total)  # resume with after = the last offset seen
    assert seen == list(range(1, total + 1))  # no loss, no duplicate, across the kill
    print(f"\n[faults] resume: cut at offset {last} of {total // 2} by SIGKILL; resumed to {total}: none lost")


RUNNER = textwrap.dedent(
    """
    import asyncio, sys
    from agentmsg.service import ToolRunner

    runner = ToolRunner(sys.argv[1], name="doomed")

    @runner.tool
    async def hang(seconds: float) -> str:
        print("started", flush=True)
        await asyncio.sleep(seconds)
        return "finished"

    runner.run()
    """
)


def test_a_runner_process_killed_mid_call_gives_the_engine_an_error_before_its_deadline(
    server: ServerThread, client: Client, tmp_path: Path
) -> None:
    """The engine's answer is the disconnection, an error result: not the call's deadline (an exception)."""
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    runner = subprocess.Popen(
        [sys.executable, str(script), server.target], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while not client.list_tools():
            assert time.monotonic() < deadline, "the runner did not register"
            assert runner.poll() is None, runner.communicate()
            time.sleep(0.05)
        outcome: list[am.ToolResultContent | BaseException] = []

        def engine() -> None:
            try:
                outcome.append(client.call_tool(am.ToolCallContent("c1", "hang", {"seconds": 60}), timeout=20))
            except BaseException as exc:
                outcome.append(exc)

        caller = threading.Thread(target=engine)
        caller.start()
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "started"
        runner.kill()  # SIGKILL, mid-call
        caller.join(60)  # a bound on a hang: the call's own deadline (20 s) answers first
        assert not caller.is_alive()
    finally:
        runner.kill()
        runner.communicate()
    (result,) = outcome
    assert isinstance(result, am.ToolResultContent), result
    assert result.is_error
    assert "tool runner 'doomed' disconnected before answering" in result.text
    assert client.list_tools() == []
    assert server.running.tools.runners == {}


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_clients_that_cancel_leave_nothing_behind(
    server: ServerThread, start_runner: Callable[[ToolRunner], RunnerThread]
) -> None:
    """Subscribes, tool calls and a stream publish, each cancelled by its client: the server's maps empty out."""
    calls = 20
    runner = ToolRunner(server.target, name="slow")

    @runner.tool
    async def wait_forever() -> str:
        await asyncio.sleep(60)
        return "never"

    start_runner(runner)
    sessions, tools = server.running.sessions, server.running.tools
    store = server.running.store

    async def cancel_everything() -> None:
        async with AsyncClient(server.target, timeout=30) as client:

            async def subscribe(session: str, live: bool) -> None:
                async for _ in client.subscribe(session, live_events=live):
                    pass

            async def publish() -> None:
                async def events() -> Any:
                    yield StreamEvent.message_start("m")
                    yield StreamEvent.block_start(0, am.TextContent())
                    await asyncio.sleep(60)  # the publisher stalls, then is cancelled

                await client.publish_stream("pub", events())  # type: ignore[arg-type]

            tasks = [asyncio.ensure_future(subscribe(f"sub-{i}", i % 2 == 0)) for i in range(calls)]
            tasks += [
                asyncio.ensure_future(client.call_tool(am.ToolCallContent(f"c{i}", "wait_forever")))
                for i in range(calls)
            ]
            tasks.append(asyncio.ensure_future(publish()))
            (registered,) = tools.runners.values()
            deadline = time.monotonic() + 30
            while (len(sessions.hub._subscribers) < calls or len(registered.pending) < calls) and (
                time.monotonic() < deadline
            ):
                await asyncio.sleep(0.01)
            assert len(sessions.hub._subscribers) == calls
            assert len(store._watching) == calls
            assert len(registered.pending) == calls
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(cancel_everything())
    (registered,) = tools.runners.values()
    _wait_for(lambda: not sessions.hub._subscribers, "the live hub to drop the subscribers")
    _wait_for(lambda: not registered.pending, "the runner's pending calls to be dropped")
    _wait_for(lambda: not store._watching, "the subscriber counts to be dropped")
    assert store._waiters == {}  # no change event kept for sessions nobody follows
    assert store._holds == {}  # no exclusive hold left behind
    with Client(server.target) as client:  # and the server is fine
        assert client.append("after", am.UserMessage.text("still here")) == 1
        with pytest.raises(am.NotFoundError):  # the cancelled stream logged nothing: no session
            list(client.history("pub"))


def _sqlite(server: ServerThread) -> SQLiteStore:
    store = server.running.store
    assert isinstance(store, SQLiteStore)
    return store


def _pragma(store: SQLiteStore, statement: str) -> Any:
    with store._lock:
        return store._db.execute(statement).fetchone()


def _raw_code(server: ServerThread, session: str, text: str = "x") -> tuple[grpc.StatusCode, str]:
    """The status code and ErrorInfo reason a bare gRPC append gets (what any language's client sees)."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

    request = session_service_pb2.AppendMessageRequest(session_id=session, message=am.UserMessage.text(text).pb)
    with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
        session_service_pb2_grpc.SessionServiceStub(channel).AppendMessage(request, timeout=5)
    status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
    assert status is not None
    reason = error_details_pb2.ErrorInfo()
    assert any(d.Unpack(reason) for d in status.details if d.Is(reason.DESCRIPTOR))
    return info.value.code(), reason.reason  # type: ignore[attr-defined]


def _still_serving(server: ServerThread, client: Client, session: str, count: int) -> None:
    """Reads, subscribe, sessions and health all work while writes fail."""
    assert [m.offset for m in client.history(session)] == list(range(1, count + 1))
    stream = client.subscribe(session, timeout=5)
    assert next(stream).offset == 1  # type: ignore[union-attr]
    stream.close()
    assert session in {s.session_id for s in client.sessions()}
    with grpc.insecure_channel(server.target) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING


def test_a_store_turned_read_only_refuses_writes_clearly_and_keeps_serving_reads(
    server: ServerThread, client: Client
) -> None:
    """``PRAGMA query_only`` gives the error a read-only file gives (SQLITE_READONLY), whoever runs the test
    (root ignores chmod): the append fails with UNAVAILABLE saying so, nothing is written, reads go on."""
    store = _sqlite(server)
    assert client.append_many("ro", [am.UserMessage.text(f"m{i}", id=f"m{i}") for i in range(3)]) == [1, 2, 3]
    _pragma(store, "PRAGMA query_only=1")
    with pytest.raises(am.StoreError, match="read-only") as info:
        client.append("ro", am.UserMessage.text("refused", id="r1"))
    assert type(info.value) is am.StoreError  # the class the server raised
    assert _raw_code(server, "ro") == (grpc.StatusCode.UNAVAILABLE, "StoreError")
    _still_serving(server, client, "ro", 3)
    _pragma(store, "PRAGMA query_only=0")  # writable again: the retried append lands after the others
    assert client.append("ro", am.UserMessage.text("refused", id="r1")) == 4


def test_a_full_store_refuses_writes_with_resource_exhausted_and_keeps_serving_reads(
    server: ServerThread, client: Client
) -> None:
    """``PRAGMA max_page_count`` gives the error a full disk gives (SQLITE_FULL): RESOURCE_EXHAUSTED
    (``StoreFullError``, a ``ResourceExhaustedError`` and a ``StoreError``), the batch rolled back."""
    store = _sqlite(server)
    assert client.append("full", am.UserMessage.text("small", id="s1")) == 1
    (pages,) = _pragma(store, "PRAGMA page_count")
    _pragma(store, f"PRAGMA max_page_count={pages}")
    big = [am.UserMessage.text("y" * 100_000, id=f"big{i}") for i in range(5)]
    with pytest.raises(StoreFullError, match="full") as info:
        client.append_many("full", big)
    assert isinstance(info.value, am.ResourceExhaustedError)
    assert isinstance(info.value, am.StoreError)
    assert _raw_code(server, "full", "z" * 500_000) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "StoreFullError")
    _still_serving(server, client, "full", 1)
    _pragma(store, "PRAGMA max_page_count=1073741823")
    assert client.append_many("full", big) == [2, 3, 4, 5, 6]  # nothing of the failed batch was kept


def test_a_request_protobuf_cannot_decode_is_refused_and_the_server_stays_up(server: ServerThread) -> None:
    """A message nested past protobuf's 100-level limit (hand-made bytes: no library builds one) fails to
    decode: INVALID_ARGUMENT with a google.rpc.BadRequest for that call (never UNKNOWN naming a Python class),
    nothing else."""
    body = nested_message_bytes(300)
    request = b"\x0a\x01s" + b"\x12" + varint(len(body)) + body  # AppendMessageRequest(session_id="s", message)
    with grpc.insecure_channel(server.target) as channel:
        append = channel.unary_unary("/agentmsg.v1.SessionService/AppendMessage")
        with pytest.raises(grpc.RpcError) as info:
            append(request, timeout=5)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    error = status.from_rpc_error(info.value)  # type: ignore[arg-type]
    assert isinstance(error, am.ValidationError)
    assert error.violations[0].rule_id == "decode"
    assert "agentmsg.v1.AppendMessageRequest" in error.violations[0].message
    with Client(server.target) as client:
        assert client.append("s", am.UserMessage.text("fine")) == 1
        assert [m.offset for m in client.history("s")] == [1]


GARBAGE = b"\xff\xff\xff\xff"  # a field tag whose varint never ends: no protobuf decodes it


@pytest.mark.parametrize(
    ("method", "kind"),
    [
        ("/agentmsg.v1.SessionService/ListMessages", "unary_unary"),
        ("/agentmsg.v1.SessionService/Subscribe", "unary_stream"),
        ("/agentmsg.v1.SessionService/PublishStream", "stream_unary"),
        ("/agentmsg.v1.ToolService/ServeTools", "stream_stream"),
        ("/agentmsg.v1.ToolService/CallTool", "unary_unary"),
    ],
)
def test_undecodable_bytes_are_invalid_argument_with_a_bad_request(
    server: ServerThread, method: str, kind: str
) -> None:
    def call(channel: grpc.Channel) -> None:
        request = GARBAGE if kind.startswith("unary") else iter([GARBAGE])
        reply = getattr(channel, kind)(method)(request, timeout=5)
        if kind.endswith("stream"):
            list(reply)

    with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
        call(channel)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    rich = rpc_status.from_call(info.value)  # type: ignore[arg-type]
    assert rich is not None
    assert any(detail.Is(error_details_pb2.BadRequest.DESCRIPTOR) for detail in rich.details)
    message = info.value.details()  # type: ignore[attr-defined]
    assert "ValueError" not in message
    assert "DecodeError" not in message


def test_a_runner_outcome_that_does_not_decode_ends_its_stream_invalid_argument(server: ServerThread) -> None:
    register = tool_service_pb2.ServeToolsRequest(
        register=tool_service_pb2.RegisterTools(runner_name="r", tools=[tool_pb2.ToolDefinition(name="t")])
    ).SerializeToString()
    with grpc.insecure_channel(server.target) as channel:
        serve = channel.stream_stream("/agentmsg.v1.ToolService/ServeTools")
        with pytest.raises(grpc.RpcError) as info:
            list(serve(iter([register, GARBAGE]), timeout=5))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    with Client(server.target) as client:
        assert client.list_tools() == []  # the runner was let go
