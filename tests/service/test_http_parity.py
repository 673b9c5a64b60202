"""The same service on every transport: gRPC, Connect JSON, Connect binary and gRPC-Web answer every unary and
server-streaming RPC with equal responses and equal errors (code, message, ErrorInfo reason, BadRequest
violations), through each transport's own client (grpcio's stubs, connectrpc's client)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from conftest import ServerThread
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from transports import TRANSPORTS, CallFailedError, Transport, _connect_failure, _grpc_failure

import agentmsg as am
from agentmsg.service import ToolRunner
from agentmsg.service.access import Scope
from agentmsg.v1 import content_pb2, session_service_pb2, tool_service_pb2
from agentmsg.v1.session_service_connect import SessionServiceClient

S = session_service_pb2
T = tool_service_pb2
MIB = 1024 * 1024


def user(text: str, i: int, **fields: Any) -> Any:
    return am.UserMessage.text(text, id=f"m{i}", timestamp=1_700_000_000 + i, **fields).pb


def assistant(text: str, i: int, **fields: Any) -> Any:
    return am.AssistantMessage([am.TextContent(text)], id=f"a{i}", timestamp=1_700_000_100 + i, **fields).pb


def _scrub(response: Any) -> Any:
    """The response with what differs between two servers by nature cleared: server clocks."""
    copy = type(response)()
    copy.CopyFrom(response)
    if isinstance(copy, S.ListSessionsResponse):
        for info in copy.sessions:
            info.ClearField("create_time")
            info.ClearField("update_time")
    if isinstance(copy, (S.BranchSessionResponse, S.CompactSessionResponse)):
        copy.entry.ClearField("timestamp")
    if isinstance(copy, S.BuildContextResponse):
        _server_made(copy.messages)
    if isinstance(copy, S.ListMessagesResponse):
        _server_made(m.message for m in copy.messages)
    return copy


def _server_made(messages: Any) -> None:
    """Clear the timestamps of the entries the server made (the branch and compaction summaries)."""
    for message in messages:
        if message.id in ("b1", "c1"):
            message.ClearField("timestamp")


async def _outcome(call: Any) -> Any:
    try:
        return _scrub(await call)
    except CallFailedError as failure:
        return failure


async def _script(transport: Transport) -> list[Any]:
    """Every unary RPC, successes and refusals, and Subscribe, in one order: what the transport answered."""
    out: list[Any] = []
    u = transport.unary
    good = [user("hello", 1), assistant("hi", 1), user("again", 2)]
    out.append(await _outcome(u("AppendMessage", S.AppendMessageRequest(session_id="s", message=good[0]))))
    out.append(await _outcome(u("AppendMessage", S.AppendMessageRequest(session_id="s", message=good[0]))))
    out.append(await _outcome(u("AppendMessages", S.AppendMessagesRequest(session_id="s", messages=good[1:]))))
    # bad input: a message with no timestamp; a batch with two broken messages; a session id the pattern refuses
    no_time = user("x", 9)
    no_time.ClearField("timestamp")
    out.append(await _outcome(u("AppendMessage", S.AppendMessageRequest(session_id="s", message=no_time))))
    broken = user("y", 10)
    broken.ClearField("id")
    batch = S.AppendMessagesRequest(session_id="s", messages=[user("ok", 11), no_time, broken])
    out.append(await _outcome(u("AppendMessages", batch)))
    out.append(await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="bad id!"))))
    out.append(await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="s", page_size=2))))
    out.append(await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="s", after_offset=2))))
    out.append(await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="nobody"))))
    if transport.name != "grpc":  # the same read as a GET (NO_SIDE_EFFECTS) answers the same
        got = await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="s", page_size=2), get=True))
        assert got == out[-3]
        got = await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="nobody"), get=True))
        assert got == out[-1]
    branch = S.BranchSessionRequest(session_id="s", from_entry_id="m1", summary="went back", entry_id="b1")
    out.append(await _outcome(u("BranchSession", branch)))
    missing = S.BranchSessionRequest(session_id="s", from_entry_id="nope", summary="x")
    out.append(await _outcome(u("BranchSession", missing)))
    compact = S.CompactSessionRequest(session_id="s", summary="short", first_kept_entry_id="m1", entry_id="c1")
    out.append(await _outcome(u("CompactSession", compact)))
    off_path = S.CompactSessionRequest(session_id="s", summary="short", first_kept_entry_id="m2")
    out.append(await _outcome(u("CompactSession", off_path)))
    out.append(await _outcome(u("BuildContext", S.BuildContextRequest(session_id="s"))))
    out.append(await _outcome(u("BuildContext", S.BuildContextRequest(session_id="s", page_token="garbage"))))
    out.append(await _outcome(u("ListSessions", S.ListSessionsRequest())))
    out.append(await _outcome(u("ListTools", T.ListToolsRequest())))
    call = content_pb2.ToolCallContent(id="c1", name="nobody_serves_this", arguments="{}")
    out.append(await _outcome(u("CallTool", T.CallToolRequest(call=call))))
    bad_call = content_pb2.ToolCallContent(id="", name="", arguments="{}")
    out.append(await _outcome(u("CallTool", T.CallToolRequest(call=bad_call))))
    # Subscribe: the log, then a message appended while it follows
    replies = []
    async with asyncio.timeout(20):
        stream = transport.stream("Subscribe", S.SubscribeRequest(session_id="s", after_offset=1))
        async for reply in stream:
            replies.append(reply)
            offsets = [m.offset for r in replies for m in r.messages]
            if offsets and offsets[-1] == 5:
                await u("AppendMessage", S.AppendMessageRequest(session_id="s", message=user("late", 20)))
            if offsets and offsets[-1] == 6:
                break
        await stream.aclose()
    logged = [m for r in replies for m in r.messages]
    _server_made(m.message for m in logged)
    out.append(logged)
    refused: list[Any] = []
    async with asyncio.timeout(20):
        try:
            async for reply in transport.stream("Subscribe", S.SubscribeRequest(session_id="", after_offset=0)):
                refused.append(reply)
        except CallFailedError as failure:
            refused.append(failure)
    out.append(refused)
    out.append(await _outcome(u("DeleteSession", S.DeleteSessionRequest(session_id="s"))))
    out.append(await _outcome(u("DeleteSession", S.DeleteSessionRequest(session_id="s"))))
    return out


@pytest.mark.parametrize("name", TRANSPORTS[1:])
def test_every_rpc_answers_as_over_grpc(make_server: Callable[..., ServerThread], name: str) -> None:
    answers = {}
    for transport_name in ("grpc", name):
        server = make_server(db=None, http_port=0)

        async def run(server: ServerThread = server, transport_name: str = transport_name) -> list[Any]:
            async with Transport(transport_name, server.target, server.running.http_port) as transport:
                return await _script(transport)

        answers[transport_name] = asyncio.run(run())
    grpc_answers, other = answers["grpc"], answers[name]
    assert len(grpc_answers) == len(other)
    for i, (expected, got) in enumerate(zip(grpc_answers, other, strict=True)):
        assert got == expected, f"answer {i} differs over {name}"
    # the script reached both kinds of answer
    assert any(isinstance(a, CallFailedError) and a.violations for a in grpc_answers)
    assert any(isinstance(a, S.ListMessagesResponse) and a.messages for a in grpc_answers)


def test_streaming_requests_are_refused_over_http_naming_the_grpc_port(server_with_http: ServerThread) -> None:
    async def run(name: str) -> CallFailedError:
        async with Transport(name, server_with_http.target, server_with_http.running.http_port) as transport:
            event = S.PublishStreamRequest(session_id="s")
            with pytest.raises(CallFailedError) as publish:
                await transport.client_stream("PublishStream", [event])
            return publish.value

    for name in TRANSPORTS[1:]:
        failure = asyncio.run(run(name))
        assert failure.code == "UNIMPLEMENTED"
        assert "PublishStream" in failure.message
        assert server_with_http.target in failure.message


@pytest.fixture
def server_with_http(make_server: Callable[..., ServerThread]) -> ServerThread:
    return make_server(db=None, http_port=0)


def test_list_pages_from_the_frame_cache_answer_alike(server_with_http: ServerThread) -> None:
    """ListMessages answers with the stored bytes framed: over gRPC as they are (a full page kept in the frame cache
    and served again from it), over Connect and gRPC-Web parsed for the codec. Every transport reads the same pages
    and the same next_after_offset, first and again, and after appends lengthen the session past a cached page."""
    server = server_with_http
    messages = [user(f"hello {i}", i) if i % 2 else assistant(f"answer {i}", i) for i in range(25)]

    async def call(name: str, rpc: str, request: Any) -> Any:
        async with Transport(name, server.target, server.running.http_port) as transport:
            return await transport.unary(rpc, request)

    async def pages(name: str) -> list[list[Any]]:
        async with Transport(name, server.target, server.running.http_port) as transport:
            read = []
            for after in (0, 10, 20, 0, 10, 20):
                request = S.ListMessagesRequest(session_id="p", after_offset=after, page_size=10)
                got = await transport.unary("ListMessages", request)
                read.append([[(m.offset, m.message) for m in got.messages], got.next_after_offset])
            return read

    asyncio.run(call("grpc", "AppendMessages", S.AppendMessagesRequest(session_id="p", messages=messages)))
    expected = asyncio.run(pages("grpc"))
    assert [[o for o, _ in page] for page, _ in expected[:3]] == [
        list(range(1, 11)),
        list(range(11, 21)),
        list(range(21, 26)),
    ]
    assert [m for page, _ in expected[:3] for _, m in page] == messages
    assert [after for _, after in expected] == [10, 20, 0, 10, 20, 0]
    assert expected[3:] == expected[:3]
    assert server.running.frames.full("p", 10, 10) is not None  # the gRPC read kept its full pages
    for name in TRANSPORTS[1:]:
        assert asyncio.run(pages(name)) == expected, name
    # five more fill the last page; one more and the cached page says a next one follows
    more = [user(f"more {i}", i) for i in range(25, 31)]
    asyncio.run(call("grpc", "AppendMessages", S.AppendMessagesRequest(session_id="p", messages=more[:5])))
    last_page = S.ListMessagesRequest(session_id="p", after_offset=20, page_size=10)
    full = asyncio.run(call("grpc", "ListMessages", last_page))
    assert [m.offset for m in full.messages] == list(range(21, 31))
    assert full.next_after_offset == 0
    asyncio.run(call("grpc", "AppendMessage", S.AppendMessageRequest(session_id="p", message=more[5])))
    for name in TRANSPORTS:
        got = asyncio.run(call(name, "ListMessages", last_page))
        assert got.messages == full.messages, name
        assert got.next_after_offset == 30, name


async def _access_script(transport: Transport) -> list[Any]:
    out: list[Any] = []
    u = transport.unary
    append = S.AppendMessageRequest(session_id="acme:one", message=user("hi", 1))
    out.append(await _outcome(u("AppendMessage", append)))  # no token
    out.append(await _outcome(u("AppendMessage", append, token="wrong")))
    out.append(await _outcome(u("AppendMessage", append, token="acme-token")))
    other = S.AppendMessageRequest(session_id="globex:one", message=user("hi", 2))
    out.append(await _outcome(u("AppendMessage", other, token="acme-token")))
    out.append(await _outcome(u("AppendMessage", other, token="full-token")))
    out.append(await _outcome(u("ListSessions", S.ListSessionsRequest(), token="acme-token")))
    out.append(await _outcome(u("ListSessions", S.ListSessionsRequest())))
    out.append(await _outcome(u("ListMessages", S.ListMessagesRequest(session_id="globex:one"), token="acme-token")))
    out.append(await _outcome(u("ListTools", T.ListToolsRequest(), token="acme-token")))
    out.append(await _outcome(u("ListTools", T.ListToolsRequest(), token="caller-token")))
    out.append(await _outcome(u("DeleteSession", S.DeleteSessionRequest(session_id="globex:one"), token="acme-token")))
    refused: list[Any] = []
    try:
        async for reply in transport.stream(
            "Subscribe", S.SubscribeRequest(session_id="globex:one"), token="acme-token"
        ):
            refused.append(reply)
    except CallFailedError as failure:
        refused.append(failure)
    out.append(refused)
    return out


@pytest.mark.parametrize("name", TRANSPORTS[1:])
def test_tokens_and_scopes_answer_as_over_grpc(make_server: Callable[..., ServerThread], name: str) -> None:
    grants = {
        "acme-token": Scope.parse("acme:*"),
        "caller-token": Scope.parse("acme:one,tools:call"),
        "full-token": Scope.parse("*"),
    }
    answers = {}
    for transport_name in ("grpc", name):
        server = make_server(db=None, http_port=0, grants=grants)

        async def run(server: ServerThread = server, transport_name: str = transport_name) -> list[Any]:
            async with Transport(transport_name, server.target, server.running.http_port) as transport:
                return await _access_script(transport)

        answers[transport_name] = asyncio.run(run())
    assert answers[name] == answers["grpc"]
    codes = [a.code for a in answers["grpc"] if isinstance(a, CallFailedError)]
    assert "UNAUTHENTICATED" in codes
    assert "PERMISSION_DENIED" in codes


def image_message(i: int, size: int = MIB) -> Any:
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)
    return am.UserMessage(
        [am.ImageContent(data, media_type="image/png")], id=f"img-{i}", timestamp=1_700_000_000 + i
    ).pb


def test_byte_bounded_replies_split_alike(make_server: Callable[..., ServerThread]) -> None:
    """40 x 128 KiB images (more than the server's 4 MiB maximum message size, as 40 x 1 MiB are more than the default
    32 MiB: the same proportions at an eighth of the bytes each transport encodes): ListMessages pages, Subscribe
    replies and BuildContext parts are cut at the same messages on every transport."""
    server = make_server(db=None, http_port=0, max_message_bytes=4 * MIB)

    async def fill() -> None:
        async with Transport("grpc", server.target, None) as transport:
            for i in range(40):
                await transport.unary(
                    "AppendMessage", S.AppendMessageRequest(session_id="big", message=image_message(i, MIB // 8))
                )

    asyncio.run(fill())

    async def shape(name: str) -> tuple[list[list[int]], list[list[int]], list[list[str]]]:
        async with Transport(name, server.target, server.running.http_port) as transport:
            pages: list[list[int]] = []
            after = 0
            while True:
                request = S.ListMessagesRequest(session_id="big", after_offset=after, page_size=1000)
                page = await transport.unary("ListMessages", request, timeout=60)
                pages.append([m.offset for m in page.messages])
                if not page.next_after_offset:
                    break
                after = page.next_after_offset
            replies: list[list[int]] = []
            async with asyncio.timeout(120):
                request = S.SubscribeRequest(session_id="big", after_offset=3, max_batch=1000)
                async for reply in transport.stream("Subscribe", request, timeout=120):
                    replies.append([m.offset for m in reply.messages])
                    if replies[-1] and replies[-1][-1] == 40:
                        break
            parts: list[list[str]] = []
            token = ""
            while True:
                context = await transport.unary(
                    "BuildContext", S.BuildContextRequest(session_id="big", page_token=token), timeout=60
                )
                parts.append([m.id for m in context.messages])
                token = context.next_page_token
                if not token:
                    break
            return pages, replies, parts

    expected = asyncio.run(shape("grpc"))
    assert len(expected[0]) >= 2
    assert len(expected[1]) >= 2
    assert len(expected[2]) >= 2
    assert [o for page in expected[0] for o in page] == list(range(1, 41))
    assert [i for part in expected[2] for i in part] == [f"img-{i}" for i in range(40)]
    for name in TRANSPORTS[1:]:
        assert asyncio.run(shape(name)) == expected, name


def test_deadlines_and_tool_calls_cross_transports(
    server_with_http: ServerThread, start_runner: Callable[[ToolRunner], Any]
) -> None:
    """A tool served by a gRPC runner answers over every transport; a call past its deadline (connect-timeout-ms,
    grpc-timeout) is DEADLINE_EXCEEDED on every transport, and the runner is told to cancel."""
    server = server_with_http
    cancelled = []
    release = asyncio.Event()

    runner = ToolRunner(server.target, name="py-runner")

    @runner.tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    @runner.tool
    async def wait_forever() -> str:
        """Never answers on its own."""
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "released"

    start_runner(runner)

    async def run(name: str) -> tuple[Any, Any]:
        async with Transport(name, server.target, server.running.http_port) as transport:
            call = content_pb2.ToolCallContent(id="c1", name="shout", arguments='{"text": "hi"}')
            done = await transport.unary("CallTool", T.CallToolRequest(call=call))
            slow = content_pb2.ToolCallContent(id="c2", name="wait_forever", arguments="{}")
            try:
                await transport.unary("CallTool", T.CallToolRequest(call=slow), timeout=0.5)
            except CallFailedError as failure:
                return done, failure.code
            return done, "answered"

    for name in TRANSPORTS:
        done, late = asyncio.run(run(name))
        assert done.result.content[0].text.text == "HI", name
        assert late == "DEADLINE_EXCEEDED", name


def test_a_tool_served_in_the_process_is_cancelled_at_its_deadline_on_every_transport(
    server_with_http: ServerThread,
) -> None:
    """A tool served in the server's process (as hosted MCP servers are) arms no timer of its own: each transport
    ends the call at its deadline itself, DEADLINE_EXCEEDED, and the tool's work is cancelled, on every transport."""
    server = server_with_http
    started: dict[str, asyncio.Event] = {}
    cancelled: set[str] = set()

    async def local(call: content_pb2.ToolCallContent) -> content_pb2.ToolResultContent:
        started[call.id].set()
        try:
            await asyncio.Event().wait()  # answers only when cancelled
        except asyncio.CancelledError:
            cancelled.add(call.id)
            raise
        raise AssertionError("unreachable")

    async def host() -> None:
        for name in TRANSPORTS:
            started[name] = asyncio.Event()
        await server.running.tools.host("in-process", [am.ToolDefinition("stall", "Never answers.").pb], local)

    server.run(host())

    async def run(name: str) -> str:
        async with Transport(name, server.target, server.running.http_port) as transport:
            stall = content_pb2.ToolCallContent(id=name, name="stall", arguments="{}")
            try:
                await transport.unary("CallTool", T.CallToolRequest(call=stall), timeout=0.5)
            except CallFailedError as failure:
                return failure.code
            return "answered"

    for name in TRANSPORTS:
        assert asyncio.run(run(name)) == "DEADLINE_EXCEEDED", name

    async def all_cancelled() -> None:
        for _ in range(100):
            if cancelled == set(TRANSPORTS):
                return
            await asyncio.sleep(0.05)

    server.run(all_cancelled())
    assert cancelled == set(TRANSPORTS)
    assert all(started[name].is_set() for name in TRANSPORTS)


class _Raw:
    """A request body sent as it is: bytes no codec made (the codec below writes them unchanged)."""

    def __init__(self, body: bytes) -> None:
        self.body = body


class _RawCodec:
    """Sends a :class:`_Raw` body under the codec name ``name`` (``proto`` or ``json``): the bytes a broken or
    hostile client would send, through connectrpc's own client and framing."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name

    def encode(self, message: _Raw) -> bytes:
        return message.body

    def decode(self, data: bytes | bytearray, message_class: Any) -> Any:
        return message_class.FromString(bytes(data))


async def _raw_call(transport: str, server: ServerThread, body: bytes, codec: str = "proto") -> CallFailedError:
    """AppendMessage with ``body`` as its request bytes over ``transport``: the failure it is answered with."""
    if transport == "grpc":
        async with grpc.aio.insecure_channel(server.target) as channel:
            append = channel.unary_unary("/agentmsg.v1.SessionService/AppendMessage")
            try:
                await append(body, timeout=10)
            except grpc.aio.AioRpcError as exc:
                return _grpc_failure(exc)
        raise AssertionError("gRPC accepted an undecodable request")
    protocol = ProtocolType.GRPC_WEB if transport.startswith("grpc-web") else ProtocolType.CONNECT
    address = f"http://127.0.0.1:{server.running.http_port}"
    client = SessionServiceClient(address, codec=_RawCodec(codec), protocol=protocol, send_compression=None)  # type: ignore[arg-type]
    try:
        await client.append_message(_Raw(body), timeout_ms=10_000)  # type: ignore[arg-type]
    except ConnectError as exc:
        return _connect_failure(exc)
    finally:
        await client.close()
    raise AssertionError(f"{transport} accepted an undecodable request")


BAD_PROTO = {
    "corrupt": b"\xff\xff\xff\xff",  # a field tag whose varint never ends
    "bad utf-8": b"\x0a\x02\xff\xfe",  # session_id (a string) holding bytes that are not UTF-8
    "not a message": b"\x12\x03abc",  # message (a Message) holding bytes that do not parse as one
}


@pytest.mark.parametrize("case", BAD_PROTO)
def test_request_bytes_that_do_not_decode_are_refused_alike_on_every_transport(
    server_with_http: ServerThread, case: str
) -> None:
    """The same undecodable request bytes: INVALID_ARGUMENT with the same message, ErrorInfo and BadRequest
    violation (field, rule ``decode``, description) over gRPC, Connect (binary) and gRPC-Web."""
    body = BAD_PROTO[case]
    over_grpc = asyncio.run(_raw_call("grpc", server_with_http, body))
    assert over_grpc.code == "INVALID_ARGUMENT"
    assert over_grpc.reason == "ValidationError"
    [(field, rule, description)] = over_grpc.violations
    assert (field, rule) == ("", "decode")
    assert "agentmsg.v1.AppendMessageRequest" in description
    for transport in ("connect-proto", "grpc-web"):
        assert asyncio.run(_raw_call(transport, server_with_http, body)) == over_grpc, transport


BAD_JSON = {
    "not json": (b'{"sessionId": ', "Failed to load JSON"),
    "wrong type": (b'{"sessionId": 5}', "sessionId"),
    "wrong nested type": (b'{"sessionId": "s", "message": {"id": ["x"]}}', "id"),
    "not an object": (b"[1]", "AppendMessageRequest"),
}


@pytest.mark.parametrize("case", BAD_JSON)
@pytest.mark.parametrize("transport", ["connect-json", "grpc-web-json"])
def test_a_json_body_that_does_not_decode_gets_the_decode_violation(
    server_with_http: ServerThread, transport: str, case: str
) -> None:
    """A ProtoJSON body that does not parse (bad JSON, a field of the wrong type) is refused as undecodable
    protobuf bytes are over gRPC: INVALID_ARGUMENT, ErrorInfo ValidationError, one BadRequest violation with
    rule ``decode`` whose description names the request type and the parser's complaint."""
    body, named = BAD_JSON[case]
    failure = asyncio.run(_raw_call(transport, server_with_http, body, codec="json"))
    assert failure.code == "INVALID_ARGUMENT"
    assert failure.reason == "ValidationError"
    [(field, rule, description)] = failure.violations
    assert (field, rule) == ("", "decode")
    assert "agentmsg.v1.AppendMessageRequest" in description
    assert named in description
    assert description in failure.message
