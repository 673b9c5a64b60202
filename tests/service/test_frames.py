"""Subscribe batches are framed once per range and shared by the subscribers reading it."""

from __future__ import annotations

import threading

from conftest import ServerThread

import agentmsg as am
from agentmsg.service import Client, Logged
from agentmsg.service.frames import FrameCache, encode_logged
from agentmsg.v1 import session_service_pb2


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
    cache = FrameCache()
    first = cache.encode("s", 0, 4, rows(0, 4))
    assert cache.encode("s", 0, 4, rows(0, 4)) is first
    assert cache.full("s", 0, 4) == (first, 4)
    assert (cache.encoded, cache.shared) == (1, 2)
    assert cache.full("s", 0, 8) is None  # another batch size is another range
    assert cache.full("other", 0, 4) is None


def test_a_partial_batch_at_the_tail_is_shared_until_the_log_grows() -> None:
    cache = FrameCache()
    three = cache.encode("s", 10, 100, rows(10, 3))
    assert cache.full("s", 10, 100) is None  # not full: the store may have more by now
    assert cache.encode("s", 10, 100, rows(10, 3)) is three
    five = cache.encode("s", 10, 100, rows(10, 5))
    assert five != three
    assert session_service_pb2.SubscribeResponse.FromString(five).messages[-1].offset == 15
    assert cache.size == len(five)


def test_the_cache_keeps_to_its_byte_bound() -> None:
    cache = FrameCache(max_bytes=4096)
    for after in range(0, 400, 4):
        cache.encode("s", after, 4, rows(after, 4))
    assert 0 < cache.size <= 4096
    assert cache.full("s", 0, 4) is None  # the oldest went first
    assert cache.full("s", 396, 4) is not None


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
    frames = server.running.sessions.frames
    assert frames.encoded >= 5  # every range framed at least once
    assert frames.encoded + frames.shared >= 20  # 4 subscribers x 5 batches
    assert frames.shared >= 1
