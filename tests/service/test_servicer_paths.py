"""The paths of the session and tool servicers that no other test runs (issue 34), each through a real server.

Every test here fails when its path breaks: empty sessions, page tokens that are not the server's or not for this
context, streams that name no session or send nothing, a publisher that leaves mid-stream, a runner that breaks
the protocol, and an unexpected exception in a unary handler (INTERNAL, logged).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from conftest import ServerThread
from google.rpc import error_details_pb2
from grpc_status import rpc_status

import agentmsg as am
from agentmsg.service import AsyncClient, Client
from agentmsg.service.frames import append_request
from agentmsg.service.handlers.sessions import _context_token
from agentmsg.streaming import events_from_message
from agentmsg.v1 import (
    content_pb2,
    message_pb2,
    session_service_pb2,
    session_service_pb2_grpc,
    tool_pb2,
    tool_service_pb2,
    tool_service_pb2_grpc,
)

# --- what a failed raw call said ----------------------------------------------------------------------------------


def _violations(error: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    found: list[tuple[str, str]] = []
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            found += [(v.field, v.reason) for v in bad.field_violations]
    return found


def _raw_error(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


# --- SessionService: BuildContext ----------------------------------------------------------------------------------


def test_the_context_of_a_session_that_does_not_exist_is_not_found_as_its_messages_are(client: Client) -> None:
    # One behaviour for a session that does not exist, on every read (issue 33): ListMessages, BuildContext.
    with pytest.raises(am.NotFoundError, match="no session 'never-written'"):
        client.build_context("never-written")
    with pytest.raises(am.NotFoundError, match="no session 'never-written'"):
        list(client.history("never-written"))


def _context_stub(server: ServerThread) -> tuple[grpc.Channel, session_service_pb2_grpc.SessionServiceStub]:
    channel = grpc.insecure_channel(server.target)
    return channel, session_service_pb2_grpc.SessionServiceStub(channel)


@pytest.mark.parametrize(
    "token",
    ["not a token!", "eyJsZWFmIjoiIiwic3RhcnQiOjB9", "eyJsZWFmIjoiYTEiLCJzdGFydCI6LTF9", "WzFd"],
    ids=["not-base64-json", "empty-leaf", "negative-start", "a-list"],
)
def test_a_page_token_the_server_did_not_give_is_invalid_argument(
    server: ServerThread, client: Client, token: str
) -> None:
    client.append("s", am.UserMessage.text("hi", id="a1"))
    channel, stub = _context_stub(server)
    with channel:
        request = session_service_pb2.BuildContextRequest(session_id="s", page_token=token)
        error = _raw_error(lambda: stub.BuildContext(request, timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("page_token", "page_token")]
    assert "not a page token this server gave" in (error.details() or "")  # type: ignore[attr-defined]


def _paged_server(make_server: Callable[..., ServerThread]) -> tuple[ServerThread, str]:
    """A server whose replies carry one 400 kB message each, a session of three such messages, and the token of
    the second part of its context."""
    server = make_server(max_message_bytes=1 << 20)
    with Client(server.target, timeout=10, max_message_bytes=1 << 20) as client:
        for i in range(3):
            client.append("big", am.UserMessage.text(str(i) * 400_000, id=f"m{i}"))
        assert [m.id for m in client.build_context("big")] == ["m0", "m1", "m2"]  # read in parts
    channel, stub = _context_stub(server)
    with channel:
        first = stub.BuildContext(session_service_pb2.BuildContextRequest(session_id="big"), timeout=10)
    assert [m.id for m in first.messages] == ["m0", "m1"]
    assert first.next_page_token
    return server, first.next_page_token


def test_a_page_token_for_another_leaf_is_invalid_argument_naming_both(
    make_server: Callable[..., ServerThread],
) -> None:
    server, token = _paged_server(make_server)
    channel, stub = _context_stub(server)
    with channel:
        request = session_service_pb2.BuildContextRequest(session_id="big", leaf_entry_id="m1", page_token=token)
        error = _raw_error(lambda: stub.BuildContext(request, timeout=10))
        again = session_service_pb2.BuildContextRequest(session_id="big", leaf_entry_id="m2", page_token=token)
        rest = stub.BuildContext(again, timeout=10)  # the leaf the token is for: the rest of the context
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("leaf_entry_id", "page_token")]
    assert "the page token is for leaf 'm2', not 'm1'" in (error.details() or "")  # type: ignore[attr-defined]
    assert [m.id for m in rest.messages] == ["m2"]
    assert not rest.next_page_token


def test_a_page_token_from_another_session_names_the_entry_it_lacks(
    make_server: Callable[..., ServerThread],
) -> None:
    server, token = _paged_server(make_server)
    channel, stub = _context_stub(server)
    with channel:
        request = session_service_pb2.BuildContextRequest(session_id="other", page_token=token)
        error = _raw_error(lambda: stub.BuildContext(request, timeout=10))
    assert error.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
    assert "session 'other' has no entry 'm2'" in (error.details() or "")  # type: ignore[attr-defined]


def test_a_page_token_past_the_end_of_the_context_is_invalid_argument(server: ServerThread, client: Client) -> None:
    client.append_many("s", [am.UserMessage.text("a", id="a1"), am.UserMessage.text("b", id="a2")])
    channel, stub = _context_stub(server)
    with channel:
        at_end = session_service_pb2.BuildContextRequest(session_id="s", page_token=_context_token("a2", 2))
        past = session_service_pb2.BuildContextRequest(session_id="s", page_token=_context_token("a2", 3))
        assert list(stub.BuildContext(at_end, timeout=10).messages) == []  # the end itself: nothing more
        error = _raw_error(lambda: stub.BuildContext(past, timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("page_token", "page_token")]
    assert "points past the end of the context" in (error.details() or "")  # type: ignore[attr-defined]


# --- SessionService: PublishStream ---------------------------------------------------------------------------------


def _publish_requests(session_id: str, message: am.AssistantMessage) -> list[session_service_pb2.PublishStreamRequest]:
    return [
        session_service_pb2.PublishStreamRequest(session_id=session_id if i == 0 else "", event=event.pb)
        for i, event in enumerate(events_from_message(message))
    ]


def test_a_stream_whose_first_event_names_no_session_is_refused(server: ServerThread, client: Client) -> None:
    requests = _publish_requests("", am.AssistantMessage.text("hello", id="a1"))
    channel, stub = _context_stub(server)
    with channel:
        error = _raw_error(lambda: stub.PublishStream(iter(requests), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("session_id", "required")]
    assert "the first event must name the session" in (error.details() or "")  # type: ignore[attr-defined]
    assert client.sessions() == []


def test_a_stream_with_no_events_is_refused(server: ServerThread, client: Client) -> None:
    channel, stub = _context_stub(server)
    with channel:
        error = _raw_error(lambda: stub.PublishStream(iter(()), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("event", "required")]
    assert "the stream sent no events" in (error.details() or "")  # type: ignore[attr-defined]
    assert client.sessions() == []


async def _watched(server: ServerThread, session_id: str) -> None:
    """Until the server has a subscriber of the session (a bounded poll)."""
    for _ in range(500):
        if server.running.store._watching.get(session_id):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no subscriber of {session_id!r} registered")


def test_a_publisher_gone_mid_stream_ends_the_stream_for_live_subscribers(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    events = _publish_requests("live", am.AssistantMessage.text("partial answer", id="a1"))

    async def scenario() -> list[Any]:
        async with AsyncClient(server.target, timeout=20) as client:
            seen: list[Any] = []

            async def watch() -> None:
                async for item in client.subscribe("live", live_events=True):
                    seen.append(item)
                    if isinstance(item, am.service.Live) and item.event.kind == "error":
                        return

            watcher = asyncio.ensure_future(watch())
            await _watched(server, "live")
            async with grpc.aio.insecure_channel(server.target) as channel:
                call = session_service_pb2_grpc.SessionServiceStub(channel).PublishStream()
                await call.write(events[0])
                await call.write(events[1])
                for _ in range(500):  # until the subscriber has the events written so far
                    if len(seen) >= 2:
                        break
                    await asyncio.sleep(0.01)
                call.cancel()
            await asyncio.wait_for(watcher, 20)
            with pytest.raises(am.NotFoundError):  # nothing was logged: the session does not exist
                [m.message.id async for m in client.history("live")]
            return seen

    with caplog.at_level(logging.ERROR, "agentmsg.service"):
        seen = asyncio.run(scenario())
    assert not [r for r in caplog.records if r.name == "agentmsg.service"]  # a publisher leaving is no server error
    *streamed, failed = seen
    assert len(streamed) == 2
    assert all(isinstance(item, am.service.Live) for item in seen)
    assert len({item.stream_id for item in seen}) == 1  # the failure ends the stream it belongs to
    assert failed.event.kind == "error"
    assert failed.event.pb.error.stop_reason == message_pb2.STOP_REASON_ERROR
    # A cancelled call reaches the handler as the end of its requests, or (a moment later) as its cancellation.
    assert failed.event.pb.error.message in (
        "the stream has not ended (no message_stop or error)",
        "the publisher went away mid-stream",
    )


def test_a_publisher_gone_while_its_message_is_stored_ends_the_stream_for_live_subscribers(
    server: ServerThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled while the server waits on the store (held here until the call is gone): the handler's
    cancellation, and live subscribers get the stream's end with the reason."""
    entered = threading.Event()
    release = threading.Event()
    append = server.running.sessions.store.append

    async def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        while not release.is_set():
            await asyncio.sleep(0.01)
        return await append(*args, **kwargs)

    monkeypatch.setattr(server.running.sessions.store, "append", held)
    events = _publish_requests("held", am.AssistantMessage.text("a whole answer", id="a1"))

    async def scenario() -> list[Any]:
        async with AsyncClient(server.target, timeout=20) as client:
            seen: list[Any] = []

            async def watch() -> None:
                async for item in client.subscribe("held", live_events=True):
                    seen.append(item)
                    if isinstance(item, am.service.Live) and item.event.kind == "error":
                        return

            watcher = asyncio.ensure_future(watch())
            await _watched(server, "held")
            async with grpc.aio.insecure_channel(server.target) as channel:
                call = session_service_pb2_grpc.SessionServiceStub(channel).PublishStream()
                for event in events:
                    await call.write(event)
                await call.done_writing()
                for _ in range(2000):  # until the server waits on the store
                    if entered.is_set():
                        break
                    await asyncio.sleep(0.01)
                assert entered.is_set()
                call.cancel()
            await asyncio.wait_for(watcher, 20)
            release.set()
            with pytest.raises(am.NotFoundError):  # nothing was logged
                [m.message.id async for m in client.history("held")]
            return seen

    try:
        seen = asyncio.run(scenario())
    finally:
        release.set()
    failed = seen[-1]
    assert len(seen) == len(events) + 1  # every event of the stream, then its end
    assert failed.event.kind == "error"
    assert failed.event.pb.error.message == "the publisher went away mid-stream"


# --- SessionService: AppendMessage's decoder -----------------------------------------------------------------------


def test_a_large_append_that_does_not_decode_is_invalid_argument(server: ServerThread, client: Client) -> None:
    """A canonical message over 64 KiB with a media payload is parsed with the payload cut short; when that form
    does not parse, the whole request is parsed for the parser's own error (here: a string that is not UTF-8)."""
    image = am.ImageContent(b"\x89PNG\r\n\x1a\n" + b"\x00" * 200_000, media_type="image/png")
    message = am.UserMessage([am.TextContent("PLACEHOLDER"), image], id="u1")
    encoded = message.pb.SerializeToString(deterministic=True).replace(b"PLACEHOLDER", b"\xff\xfe" + b"x" * 9)
    with grpc.insecure_channel(server.target) as channel:
        append = channel.unary_unary("/agentmsg.v1.SessionService/AppendMessage")
        error = _raw_error(lambda: append(append_request("s", encoded), timeout=10))
        assert append(append_request("s", message.pb.SerializeToString(deterministic=True)), timeout=10)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violations(error) == [("", "decode")]
    assert "not a valid agentmsg.v1.AppendMessageRequest encoding" in (error.details() or "")  # type: ignore[attr-defined]
    assert [m.message.id for m in client.history("s")] == ["u1"]  # the good encoding went in, once


# --- rpc.py: an unexpected exception in a unary handler ------------------------------------------------------------


def test_an_unexpected_exception_in_a_unary_handler_is_internal_and_logged(
    server: ServerThread, client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug in a read")

    client.append("s", am.UserMessage.text("hi", id="u1"))
    monkeypatch.setattr(server.running.sessions.store, "read", broken)
    channel, stub = _context_stub(server)
    with caplog.at_level(logging.ERROR, "agentmsg.service"), channel:
        error = _raw_error(lambda: stub.ListMessages(session_service_pb2.ListMessagesRequest(session_id="s")))
    assert error.code() == grpc.StatusCode.INTERNAL  # type: ignore[attr-defined]
    assert error.details() == "internal error; see the server log"  # type: ignore[attr-defined]
    (record,) = [r for r in caplog.records if r.getMessage() == "internal error in ListMessages"]
    assert record.exc_info is not None
    assert "a bug in a read" in str(record.exc_info[1])
    monkeypatch.undo()
    assert [m.message.id for m in client.history("s")] == ["u1"]  # the server serves on


# --- ToolService: runners that break the protocol --------------------------------------------------------------------


def _register(tool: str = "raw") -> tool_service_pb2.ServeToolsRequest:
    return tool_service_pb2.ServeToolsRequest(
        register=tool_service_pb2.RegisterTools(runner_name="raw", tools=[tool_pb2.ToolDefinition(name=tool)])
    )


class RawRunner:
    """A runner at the gRPC level, to send the service what no SDK runner sends."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stream = tool_service_pb2_grpc.ToolServiceStub(self.channel).ServeTools()

    async def send(self, **kind: Any) -> None:
        await self.stream.write(tool_service_pb2.ServeToolsRequest(**kind))

    async def read(self) -> tool_service_pb2.ServeToolsResponse:
        got = await asyncio.wait_for(self.stream.read(), 20)
        assert got is not grpc.aio.EOF
        return got  # type: ignore[return-value]

    async def answer(self, run: tool_service_pb2.RunToolCall, result: content_pb2.ToolResultContent) -> None:
        outcome = tool_service_pb2.ToolCallOutcome(call_id=run.call.id, handle=run.handle, result=result)
        await self.send(outcome=outcome)

    async def close(self) -> None:
        self.stream.cancel()
        await self.channel.close()


def _result(call_id: str, text: str) -> content_pb2.ToolResultContent:
    result = content_pb2.ToolResultContent(id=call_id, name="raw")
    result.content.add().text.text = text
    return result


def test_a_first_message_that_does_not_register_is_refused(server: ServerThread, client: Client) -> None:
    async def scenario() -> grpc.aio.AioRpcError:
        runner = RawRunner(server.target)
        await runner.send(outcome=tool_service_pb2.ToolCallOutcome(call_id="c1", result=_result("c1", "x")))
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await runner.read()
        await runner.close()
        return info.value

    error = asyncio.run(scenario())
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violations(error) == [("register", "required")]
    assert client.list_tools() == []


def test_a_stream_that_ends_at_once_registers_nothing(server: ServerThread, client: Client) -> None:
    async def scenario() -> list[Any]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
            await stream.done_writing()
            read = [item async for item in stream]
            assert await stream.code() == grpc.StatusCode.OK
            return read

    assert asyncio.run(scenario()) == []
    assert client.list_tools() == []


async def _call(client: AsyncClient, call_id: str) -> asyncio.Future[am.ToolResultContent]:
    return asyncio.ensure_future(client.call_tool(am.ToolCallContent(call_id, "raw", {}), timeout=20))


def test_a_message_other_than_an_outcome_after_registering_is_ignored(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> am.ToolResultContent:
        runner = RawRunner(server.target)
        await runner.send(register=_register().register)
        assert (await runner.read()).WhichOneof("kind") == "registered"
        await runner.send(register=_register("again").register)  # not an outcome: logged and ignored
        async with AsyncClient(server.target, timeout=20) as client:
            call = await _call(client, "c1")
            run = (await runner.read()).run
            await runner.answer(run, _result("c1", "still served"))
            result = await call
            assert [t.tool.name for t in await client.list_tools()] == ["raw"]
        await runner.close()
        return result

    with caplog.at_level(logging.WARNING, "agentmsg.service"):
        result = asyncio.run(scenario())
    assert (result.text, result.is_error) == ("still served", False)
    assert any(r.getMessage() == "runner 'raw' sent register after registering; ignored" for r in caplog.records)


def test_an_outcome_after_the_caller_left_is_dropped_and_the_runner_serves_on(server: ServerThread) -> None:
    async def scenario() -> tuple[tool_service_pb2.CancelToolCall, am.ToolResultContent]:
        runner = RawRunner(server.target)
        await runner.send(register=_register().register)
        await runner.read()
        async with AsyncClient(server.target, timeout=20) as client:
            call = await _call(client, "late")
            run = (await runner.read()).run
            call.cancel()
            cancel = (await runner.read()).cancel
            await runner.answer(run, _result("late", "too late"))  # nobody waits for it
            second = await _call(client, "next")
            run2 = (await runner.read()).run
            await runner.answer(run2, _result("next", "on time"))
            result = await second
        await runner.close()
        return cancel, result

    cancel, result = asyncio.run(scenario())
    assert (cancel.call_id, cancel.reason) == ("late", "cancelled")
    assert (result.id, result.text, result.is_error) == ("next", "on time", False)


@pytest.mark.parametrize(
    ("problem", "expected"),
    [("invalid", "result.index"), ("other-id", "its id does not match the call")],
    ids=["invalid", "mismatched"],
)
def test_an_invalid_or_mismatched_runner_result_becomes_an_error_result(
    server: ServerThread, problem: str, expected: str
) -> None:
    async def scenario() -> am.ToolResultContent:
        runner = RawRunner(server.target)
        await runner.send(register=_register().register)
        await runner.read()
        async with AsyncClient(server.target, timeout=20) as client:
            call = await _call(client, "c1")
            run = (await runner.read()).run
            bad = _result("c1", "x")
            if problem == "invalid":
                bad.index = -1
            else:
                bad.id = "someone-else"
            await runner.answer(run, bad)
            result = await call
        await runner.close()
        return result

    result = asyncio.run(scenario())
    assert (result.id, result.name, result.is_error) == ("c1", "raw", True)
    assert result.text.startswith("the runner's result was invalid: ")
    assert expected in result.text


# --- AsyncClient: the reads and the tree ---------------------------------------------------------------------------


def test_the_async_client_reads_compacts_and_builds_the_context(server: ServerThread) -> None:
    async def scenario() -> dict[str, Any]:
        async with AsyncClient(server.target, timeout=10) as client:
            await client.append_many("s", [am.UserMessage.text("q1", id="u1"), am.AssistantMessage.text("a1", id="a1")])
            await client.append("t", am.UserMessage.text("other", id="t1"))
            history = [(m.offset, m.message.id) async for m in client.history("s", page_size=1)]
            after = [m.offset async for m in client.history("s", after=1)]
            compacted = await client.compact("s", "the story so far", first_kept_entry_id="a1", tokens_before=120)
            await client.append("s", am.UserMessage.text("q2", id="u2"))
            context = await client.build_context("s")
            at_a1 = await client.build_context("s", leaf="a1")
            sessions = await client.sessions(page_size=1)
        return {
            "history": history,
            "after": after,
            "compacted": compacted,
            "context": context,
            "at_a1": [m.id for m in at_a1],
            "sessions": [(s.session_id, s.last_offset) for s in sessions],
        }

    got = asyncio.run(scenario())
    assert got["history"] == [(1, "u1"), (2, "a1")]
    assert got["after"] == [2]
    compacted = got["compacted"]
    assert compacted.offset == 3
    assert isinstance(compacted.message, am.CompactionSummaryMessage)
    assert (compacted.message.first_kept_id, compacted.message.tokens_before) == ("a1", 120)
    kinds = [(type(m).__name__, m.id) for m in got["context"]]
    assert kinds[1:] == [("AssistantMessage", "a1"), ("UserMessage", "u2")]
    assert "the story so far" in got["context"][0].text_content()  # the compaction comes first, as user text
    assert got["at_a1"] == ["u1", "a1"]
    assert got["sessions"] == [("s", 4), ("t", 1)]
