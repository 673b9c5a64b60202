"""Reading a session page by page: ``client.history`` and ``ListMessages``.

Pages come from the stored bytes, framed as ``Subscribe`` frames its batches, and a full page is kept in the node's
frame cache: read again, it is served without reading the log, and still says whether a next page follows. The
client asks for the next page as one arrives; closing its iterator early leaves nothing behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
import pytest
from conftest import ServerThread

import agentmsg as am
from agentmsg.service import AsyncClient, Client, Logged
from agentmsg.service.stores import MemoryStore
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc


class CountingStore(MemoryStore):
    """A memory store that counts the log rows it hands out."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = 0

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
        rows = await super().read(session_id, after, limit)
        self.rows += len(rows)
        return rows


def user(i: int, text: str = "") -> am.UserMessage:
    return am.UserMessage.text(text or f"message {i}", id=f"m{i}", timestamp=1)


def fill(client: Client, session: str, count: int, text: str = "", batch: int = 500) -> None:
    for start in range(0, count, batch):
        client.append_many(session, [user(i, text) for i in range(start, min(start + batch, count))])


def page(channel: grpc.Channel, session: str, after: int, size: int) -> session_service_pb2.ListMessagesResponse:
    stub = session_service_pb2_grpc.SessionServiceStub(channel)
    request = session_service_pb2.ListMessagesRequest(session_id=session, after_offset=after, page_size=size)
    return stub.ListMessages(request, timeout=10)


def test_history_reads_every_page_in_order(client: Client, server: ServerThread) -> None:
    fill(client, "s", 2345)
    expected = [(i + 1, f"m{i}") for i in range(2345)]
    assert [(m.offset, m.message.id) for m in client.history("s")] == expected
    assert [(m.offset, m.message.id) for m in client.history("s", page_size=7, after=2300)] == expected[2300:]

    async def read_async() -> list[tuple[int, str]]:
        async with AsyncClient(server.target, timeout=10) as aclient:
            return [(m.offset, m.message.id) async for m in aclient.history("s")]

    assert asyncio.run(read_async()) == expected


def test_pages_cut_short_by_the_byte_budget_are_followed_from_where_they_end(
    make_server: Callable[..., ServerThread],
) -> None:
    """The client asks for pages ahead on the guess that each is full; a page the reply budget cut short (here at
    ~190 messages of 1 KiB) sends it back to where that page ended: every message once, in order."""
    server = make_server(db=":memory:", max_message_bytes=256 * 1024)
    with Client(server.target, timeout=10) as client:
        fill(client, "s", 3000, "x" * 1024, batch=100)
        expected = list(range(1, 3001))
        assert [m.offset for m in client.history("s")] == expected
        assert [m.offset for m in client.history("s", page_size=0)] == expected  # the server's default size

        async def read_async() -> list[int]:
            async with AsyncClient(server.target, timeout=10) as aclient:
                return [m.offset async for m in aclient.history("s", after=5)]

        assert asyncio.run(read_async()) == expected[5:]


def test_a_full_page_read_again_is_served_from_the_cache_and_says_whether_more_follows(
    make_server: Callable[..., ServerThread],
) -> None:
    store = CountingStore()
    server = make_server(store=store)
    with Client(server.target, timeout=10) as client, grpc.insecure_channel(server.target) as channel:
        fill(client, "s", 1000)
        before = store.rows
        first = page(channel, "s", 0, 1000)
        assert [m.offset for m in first.messages] == list(range(1, 1001))
        assert first.next_after_offset == 0  # the session ends with this page
        assert store.rows - before == 1000

        before = store.rows
        again = page(channel, "s", 0, 1000)
        assert again == first
        assert store.rows == before  # served from the cache

        client.append("s", user(1000))
        grown = page(channel, "s", 0, 1000)
        assert list(grown.messages) == list(first.messages)
        assert grown.next_after_offset == 1000  # the cached page learns that a next one follows
        assert store.rows == before
        rest = page(channel, "s", 1000, 1000)
        assert [(m.offset, m.message.id) for m in rest.messages] == [(1001, "m1000")]
        assert rest.next_after_offset == 0


def test_a_subscriber_reads_a_page_list_messages_framed(make_server: Callable[..., ServerThread]) -> None:
    store = CountingStore()
    server = make_server(store=store)
    with Client(server.target, timeout=10) as client, grpc.insecure_channel(server.target) as channel:
        fill(client, "s", 300)
        listed = page(channel, "s", 0, 300)
        before = store.rows
        seen = []
        for item in client.subscribe("s", max_batch=300):
            assert isinstance(item, Logged)
            seen.append((item.offset, item.message.id))
            if len(seen) == 300:
                break
        assert seen == [(m.offset, m.message.id) for m in listed.messages]
        assert store.rows == before  # the batch was the cached page


def test_a_deleted_session_s_pages_are_not_served_again(client: Client, server: ServerThread) -> None:
    with grpc.insecure_channel(server.target) as channel:
        fill(client, "s", 100, "old")
        assert page(channel, "s", 0, 100).messages[0].message.user.content[0].text.text == "old"
        assert client.delete_session("s") == 100
        fill(client, "s", 100, "new")  # a new session by the same id, the same offsets
        assert [m.message.text_content() for m in client.history("s", page_size=100)] == ["new"] * 100


def test_closing_history_early_leaves_the_client_usable(client: Client, server: ServerThread) -> None:
    fill(client, "s", 2500)
    pages = client.history("s")
    assert next(pages).offset == 1  # the second page has been asked for
    pages.close()
    assert sum(1 for _ in client.history("s", after=2400)) == 100

    async def read_async() -> int:
        async with AsyncClient(server.target, timeout=10) as aclient:
            pages = aclient.history("s")
            first = await anext(pages)
            await pages.aclose()
            return first.offset + sum([1 async for _ in aclient.history("s", after=2490)])

    assert asyncio.run(read_async()) == 11


def test_history_of_a_missing_session_is_not_found(client: Client) -> None:
    with pytest.raises(am.NotFoundError, match="nothing-here"):
        list(client.history("nothing-here"))
