"""Every reading RPC is bounded by bytes as well as by count: what was legal to append can be read back.

40 messages of 1 MiB images (40 MiB in all, more than the 32 MiB default maximum message size) read
through ListMessages, Subscribe (fresh and resumed) and BuildContext at the defaults.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import grpc
import pytest
from conftest import ServerThread
from fuzzing import varint

import agentmsg as am
from agentmsg.service import Client, Logged, status
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES, reply_budget
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc

MIB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n"


def image_message(i: int, size: int = MIB) -> am.UserMessage:
    data = PNG + os.urandom(size - len(PNG))
    return am.UserMessage([am.ImageContent(data, media_type="image/png")], id=f"img-{i}", timestamp=1_700_000_000 + i)


@pytest.fixture
def big_session(make_server: Callable[..., ServerThread]) -> tuple[ServerThread, list[str]]:
    server = make_server(db=None)  # the defaults otherwise: a 32 MiB maximum message size
    ids = []
    with Client(server.target, timeout=30) as client:
        for i in range(40):
            client.append("big", image_message(i))
            ids.append(f"img-{i}")
    return server, ids


def test_list_messages_pages_by_bytes(big_session: tuple[ServerThread, list[str]]) -> None:
    server, ids = big_session
    options = [("grpc.max_receive_message_length", DEFAULT_MAX_MESSAGE_BYTES)]
    with grpc.insecure_channel(server.target, options) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        after, pages, seen = 0, 0, []
        while True:
            response = stub.ListMessages(
                session_service_pb2.ListMessagesRequest(session_id="big", after_offset=after, page_size=1000),
                timeout=30,
            )
            assert response.ByteSize() <= DEFAULT_MAX_MESSAGE_BYTES
            assert response.messages, "a page always carries a message when one follows"
            seen += [m.message.id for m in response.messages]
            pages += 1
            if not response.next_after_offset:
                break
            after = response.next_after_offset
    assert seen == ids
    assert pages >= 2
    with Client(server.target, timeout=30) as client:
        assert [logged.message.id for logged in client.history("big", page_size=1000)] == ids


@pytest.mark.parametrize("after", [0, 17], ids=["fresh", "resumed"])
def test_subscribe_splits_a_batch_larger_than_a_reply(big_session: tuple[ServerThread, list[str]], after: int) -> None:
    server, ids = big_session
    got: list[Logged] = []
    with Client(server.target, timeout=30) as client:
        stream = client.subscribe("big", after=after, max_batch=1000, timeout=60)
        for item in stream:
            assert isinstance(item, Logged)
            got.append(item)
            if item.offset == 40:
                break
        stream.close()
    assert [item.offset for item in got] == list(range(after + 1, 41))
    assert [item.message.id for item in got] == ids[after:]


def test_build_context_returns_a_context_larger_than_a_reply_in_parts(
    big_session: tuple[ServerThread, list[str]],
) -> None:
    server, ids = big_session
    with Client(server.target, timeout=30) as client:
        context = client.build_context("big")
        assert [m.id for m in context] == ids
        assert context[5].contents[0].data == client.history("big", after=5).__next__().message.contents[0].data
        # The session grows between the parts: the token pinned the leaf, so the context stays the one asked for.
        options = [("grpc.max_receive_message_length", DEFAULT_MAX_MESSAGE_BYTES)]
        with grpc.insecure_channel(server.target, options) as channel:
            stub = session_service_pb2_grpc.SessionServiceStub(channel)
            first = stub.BuildContext(session_service_pb2.BuildContextRequest(session_id="big"), timeout=30)
            assert first.next_page_token
            assert first.ByteSize() <= DEFAULT_MAX_MESSAGE_BYTES
            client.append("big", am.UserMessage.text("later", id="later"))
            rest: list[str] = []
            token = first.next_page_token
            while token:
                page = stub.BuildContext(
                    session_service_pb2.BuildContextRequest(session_id="big", page_token=token), timeout=30
                )
                rest += [m.id for m in page.messages]
                token = page.next_page_token
            assert [m.id for m in first.messages] + rest == ids
        assert client.build_context("big")[-1].id == "later"


def test_a_bad_page_token_is_invalid_argument(server: ServerThread, client: Client) -> None:
    client.append("s", am.UserMessage.text("hi", id="a"))
    with grpc.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.BuildContext(session_service_pb2.BuildContextRequest(session_id="s", page_token="nope"), timeout=10)
    error = status.from_rpc_error(caught.value)
    assert isinstance(error, am.ValidationError)
    assert [v.field for v in error.violations] == ["page_token"]


def test_an_entry_too_large_to_read_back_is_refused(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None, max_message_bytes=MIB)
    budget = reply_budget(MIB)
    with Client(server.target, timeout=30) as client:
        with pytest.raises(am.ValidationError) as caught:
            client.append_many("s", [image_message(0, 1000), image_message(1, budget + 1)])
        assert [(v.field, v.rule_id) for v in caught.value.violations] == [("messages[1]", "message.max_bytes")]
        client.append("s", image_message(2, budget - 200))  # the largest that fits is legal, and is read back
        client.append("s", image_message(3, budget - 200))
        assert [m.id for m in client.build_context("s")] == ["img-2", "img-3"]
        assert [m.message.id for m in client.history("s")] == ["img-2", "img-3"]


def _with_unknown_field(message: am.BaseMessage, payload: bytes) -> bytes:
    """The message's bytes plus field 9999 (length-delimited), a field this contract does not define."""
    tag = (9999 << 3) | 2
    return message.to_bytes() + varint(tag) + varint(len(payload)) + payload


def _append_raw(target: str, session_id: str, message_bytes: bytes) -> None:
    request = b"\x0a" + varint(len(session_id)) + session_id.encode() + b"\x12" + varint(len(message_bytes))
    with grpc.insecure_channel(target) as channel:
        channel.unary_unary("/agentmsg.v1.SessionService/AppendMessage")(request + message_bytes, timeout=10)


def test_unknown_fields_are_kept_and_counted_against_the_size_limit(make_server: Callable[..., ServerThread]) -> None:
    """The policy (docs/operations.md, "Unknown fields"): a newer peer's fields are kept byte for byte and served back,
    and they count towards the entry size limit like any other byte."""
    server = make_server(db=None, max_message_bytes=MIB)
    newer = am.UserMessage.text("from a newer peer", id="n1")
    _append_raw(server.target, "s", _with_unknown_field(newer, b"future data"))
    with grpc.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        listed = stub.ListMessages(session_service_pb2.ListMessagesRequest(session_id="s"), timeout=10)
    (logged,) = listed.messages
    assert logged.message.SerializeToString() == _with_unknown_field(newer, b"future data")
    with pytest.raises(grpc.RpcError) as caught:
        _append_raw(server.target, "s", _with_unknown_field(am.UserMessage.text("x", id="n2"), bytes(980 * 1024)))
    error = status.from_rpc_error(caught.value)  # type: ignore[arg-type]
    assert isinstance(error, am.ValidationError)
    assert [(v.field, v.rule_id) for v in error.violations] == [("message", "message.max_bytes")]
