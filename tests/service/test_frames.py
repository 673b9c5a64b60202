"""Subscribe batches are framed once per range and shared by the subscribers reading it."""

from __future__ import annotations

import random
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from conftest import ServerThread
from fuzzing import mutate_bytes
from google.protobuf.message import DecodeError
from samples import every_role

import agentmsg as am
from agentmsg.service import Client, Logged, status
from agentmsg.service.frames import (
    APPEND_MESSAGE,
    FrameCache,
    append_request,
    blind_encoding,
    encode_logged,
    is_canonical,
)
from agentmsg.service.rpc import ENTRY_OVERHEAD
from agentmsg.v1 import content_pb2, message_pb2, session_service_pb2


def rows(after: int, count: int) -> list[tuple[int, bytes]]:
    return [
        (after + 1 + i, am.UserMessage.text(f"m{after + 1 + i}", id=f"id{after + 1 + i}").to_bytes())
        for i in range(count)
    ]


def test_an_encoded_batch_is_the_subscribe_response_of_its_rows() -> None:
    batch = [*rows(126, 3), (300_000, am.UserMessage.text("x" * 200, id="big").to_bytes())]
    response = session_service_pb2.SubscribeResponse.FromString(encode_logged(batch))
    assert [(m.offset, m.message.SerializeToString(deterministic=True)) for m in response.messages] == batch


def test_a_range_is_framed_once_and_a_full_batch_is_served_without_the_store() -> None:
    cache = FrameCache(budget=1 << 20)
    first = cache.encode("s", 0, 4, rows(0, 4))
    assert cache.encode("s", 0, 4, rows(0, 4)) is first
    assert cache.full("s", 0, 4) == (first, 4)
    assert (cache.encoded, cache.shared) == (1, 2)
    assert cache.full("s", 0, 8) is None  # another batch size is another range
    assert cache.full("other", 0, 4) is None


def test_a_partial_batch_at_the_tail_is_shared_until_the_log_grows() -> None:
    cache = FrameCache(budget=1 << 20)
    three = cache.encode("s", 10, 100, rows(10, 3))
    assert cache.full("s", 10, 100) is None  # not full: the store may have more by now
    assert cache.encode("s", 10, 100, rows(10, 3)) is three
    five = cache.encode("s", 10, 100, rows(10, 5))
    assert five != three
    assert session_service_pb2.SubscribeResponse.FromString(five[0]).messages[-1].offset == 15
    # Counted with the objects that hold it (key, tuples, the bytes object's header): the reply and under 1 kB.
    assert len(five[0]) < cache.size < len(five[0]) + 1024


def test_a_batch_over_the_reply_budget_is_framed_as_several_replies() -> None:
    batch = rows(0, 6)
    replies = FrameCache(budget=2 * (len(batch[0][1]) + ENTRY_OVERHEAD)).encode("s", 0, 6, batch)
    decoded = [session_service_pb2.SubscribeResponse.FromString(reply) for reply in replies]
    assert len(replies) == 3
    assert [m.offset for d in decoded for m in d.messages] == [1, 2, 3, 4, 5, 6]


def test_the_cache_keeps_to_its_byte_bound() -> None:
    cache = FrameCache(budget=1 << 20, max_bytes=4096)
    for after in range(0, 400, 4):
        cache.encode("s", after, 4, rows(after, 4))
    assert 0 < cache.size <= 4096
    assert cache.full("s", 0, 4) is None  # the oldest went first
    assert cache.full("s", 396, 4) is not None


@pytest.mark.parametrize("body", [10, 60, 1000, 20_000])
def test_what_the_cache_holds_is_what_it_counts(body: int) -> None:
    """The Python heap the cache keeps (tracemalloc) stays within its cap, for tiny batches too.

    Before, only the reply bytes were counted: a cache of one-message batches of ~70 bytes (a live tail)
    held 8.2 times its cap (69 MB under an 8 MiB cap).
    """
    cap = 1 << 20
    tracemalloc.start()
    try:
        cache = FrameCache(budget=1 << 20, max_bytes=cap)
        base = tracemalloc.get_traced_memory()[0]
        message = b"x" * body
        for i in range(3 * cap // (body + 100)):  # enough to go round the cap about three times
            cache.encode(f"session-{i % 50}", i, 256, [(i + 1, message)])
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert cache.size <= cap
    assert held <= cap, f"the cache holds {held} bytes under a cap of {cap} (it counts {cache.size})"
    assert held > cap // 2  # it did fill up


def test_subscribers_of_one_session_share_the_framed_batches(server: ServerThread, client: Client) -> None:
    client.append_many("fan", [am.UserMessage.text(f"m{i}", id=f"fan-{i}") for i in range(50)])
    got: list[list[tuple[int, str]]] = []

    def read() -> None:
        with Client(server.target, timeout=10) as c:
            seen = []
            for item in c.subscribe("fan", max_batch=10):
                assert isinstance(item, Logged)
                seen.append((item.offset, item.message.text_content()))
                if len(seen) == 50:
                    break
            got.append(seen)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    expected = [(i + 1, f"m{i}") for i in range(50)]
    assert got == [expected] * 4
    frames = server.running.frames
    assert frames.encoded >= 5  # every range framed at least once
    assert frames.encoded + frames.shared >= 20  # 4 subscribers x 5 batches
    assert frames.shared >= 1


def test_the_clients_append_request_is_the_requests_deterministic_encoding() -> None:
    image = am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(300_000), media_type="image/png")
    for session_id, message in (
        ("s", am.UserMessage.text("héllo")),
        ("x" * 128, am.UserMessage([am.TextContent("look"), image])),
    ):
        expected = session_service_pb2.AppendMessageRequest(session_id=session_id, message=message.pb)
        assert append_request(session_id, message.to_bytes()) == expected.SerializeToString(deterministic=True)


# --- the received encoding is kept only when it is the canonical one -----------------------------------------


def seeds() -> list[bytes]:
    image = am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(2000), media_type="image/png", detail="high")
    extra = [
        am.UserMessage([am.TextContent("look"), image], name="n", parent_id="p"),
        am.AssistantMessage(
            [am.ToolCallContent("c", "f", {"a": [1, 2]}, index=3)],
            usage=am.Usage(input_tokens=5, output_tokens=0, cost=am.UsageCost(total=0.25)),
            stop_reason="tool_calls",
        ),
    ]
    return [message.to_bytes() for message in [*every_role(), *extra]]


def canonical(data: bytes) -> bool:
    return is_canonical(data, message_pb2.Message.DESCRIPTOR)


def test_the_deterministic_encoding_of_a_message_without_maps_is_recognised() -> None:
    recognised = [canonical(data) for data in seeds()]
    assert sum(recognised) >= len(recognised) - 2  # the two with a Struct (a map inside) are re-encoded
    image = am.UserMessage([am.ImageContent(bytes(1 << 20), media_type="image/png")])
    assert canonical(image.to_bytes())


def test_any_other_encoding_of_the_same_message_is_not() -> None:
    message = am.UserMessage.text("hi", id="m", name="n")
    data = message.to_bytes()
    assert canonical(data)
    pb = message.pb
    head = message_pb2.Message(id="m").SerializeToString()
    rest = message_pb2.Message(timestamp=pb.timestamp, user=pb.user, name="n").SerializeToString()
    assert head + rest == data
    assert not canonical(rest + head)  # fields out of order
    assert not canonical(data + b"\x52\x00")  # a default ("" name) written out
    assert not canonical(data + b"\x52\x01x")  # name twice
    assert not canonical(data + b"\xf8\x07\x01")  # an unknown field (number 127)
    assert not canonical(b"\x0a\x81\x00" + data[1:])  # a length in a longer varint than needed
    assert not canonical(data[:-1])  # cut short


def test_whatever_is_recognised_re_encodes_to_the_same_bytes() -> None:
    """Soundness on thousands of mutated encodings: a True is never wrong (a False only costs an encode)."""
    rng = random.Random(18)
    accepted = 0
    for seed in seeds():
        for _ in range(300):
            choices = iter([(rng.randrange(5), rng.randrange(1 << 16), rng.randrange(256)) for _ in range(3)])
            data = mutate_bytes(seed, choices)
            try:
                parsed = message_pb2.Message.FromString(data)  # the server asks only about what parsed
            except DecodeError:
                continue
            if not canonical(data):
                continue
            accepted += 1
            assert parsed.SerializeToString(deterministic=True) == data
    assert accepted > 50, accepted


def big_message(message_id: str) -> am.UserMessage:
    image = am.ImageContent(b"\x89PNG\r\n\x1a\n" + bytes(200_000), media_type="image/png")
    return am.UserMessage([am.TextContent("look"), image], id=message_id, timestamp=1)


@pytest.mark.parametrize("db", [None, "file"])
def test_a_large_message_is_stored_in_the_encoding_it_arrived_in_when_canonical(
    make_server: Callable[..., ServerThread], tmp_path: Path, db: str | None
) -> None:
    server = make_server(db=None if db is None else str(tmp_path / "big.db"))
    message = big_message("big-1")
    with Client(server.target, timeout=10) as c:
        assert c.append("big", message) == 1
        assert c.append("big", message) == 1  # a retry is a duplicate, not a conflict
        (logged,) = list(c.history("big"))
    assert logged.message.to_bytes() == message.to_bytes()
    if db is None:
        (held,) = server.run(server.running.store.read("big", 0, 1))
        assert isinstance(held[1], memoryview)  # the request's own bytes: no second encoding


def test_a_large_message_in_another_encoding_is_stored_re_encoded(
    make_server: Callable[..., ServerThread],
) -> None:
    server = make_server(db=None)
    message = big_message("big-2")
    canonical_bytes = message.to_bytes()
    pb = message.pb
    # The same message with its fields out of order (parent_id-less, name last -> id written last).
    reordered = (
        message_pb2.Message(timestamp=pb.timestamp, user=pb.user).SerializeToString()
        + message_pb2.Message(id=pb.id).SerializeToString()
    )
    assert reordered != canonical_bytes
    assert message_pb2.Message.FromString(reordered) == pb
    with grpc.insecure_channel(server.target) as channel:
        call = channel.unary_unary(
            APPEND_MESSAGE, response_deserializer=session_service_pb2.AppendMessageResponse.FromString
        )
        assert call(append_request("big", reordered), timeout=10).offset == 1
    (held,) = server.run(server.running.store.read("big", 0, 1))
    assert bytes(held[1]) == canonical_bytes
    assert not isinstance(held[1], memoryview)


def test_the_cut_request_parses_to_the_request_with_its_large_media_swapped() -> None:
    big = am.ImageContent(
        images=[b"\x89PNG\r\n\x1a\n" + bytes(100_000), b"\x89PNG\r\n\x1a\n" + bytes(10)], media_type="image/png"
    )
    message = am.UserMessage([am.TextContent("look"), big], id="m")
    data = append_request("s", message.to_bytes())
    cut = blind_encoding(data, session_service_pb2.AppendMessageRequest.DESCRIPTOR)
    assert cut is not None
    assert len(cut) < 1000
    expected = session_service_pb2.AppendMessageRequest.FromString(data)
    expected.message.user.content[1].image.data = b"\x00"  # the large one only; the 18-byte one stays
    assert session_service_pb2.AppendMessageRequest.FromString(cut) == expected
    small = append_request("s", am.UserMessage.text("hi").to_bytes())
    assert blind_encoding(small, session_service_pb2.AppendMessageRequest.DESCRIPTOR) is None
    assert blind_encoding(data[:-3], session_service_pb2.AppendMessageRequest.DESCRIPTOR) is None  # cut short


def test_a_large_invalid_message_is_refused_with_the_rule_it_breaks(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(db=None)
    image = content_pb2.Content(image=content_pb2.ImageContent(data=bytes(200_000)))  # no media_type
    pb = message_pb2.Message(id="bad", user=message_pb2.UserMessage(content=[image]))
    pb.timestamp.seconds = 1
    raw = append_request("big", pb.SerializeToString(deterministic=True))
    with grpc.insecure_channel(server.target) as channel:
        call = channel.unary_unary(APPEND_MESSAGE)
        with pytest.raises(grpc.RpcError) as info:
            call(raw, timeout=10)
    error = status.from_rpc_error(info.value)
    assert isinstance(error, am.ValidationError)
    assert [(v.field, v.rule_id) for v in error.violations] == [
        ("message.user.content[0].image", "image.media_type_for_data")
    ]
    assert server.run(server.running.store.read("big", 0, 1)) == []
