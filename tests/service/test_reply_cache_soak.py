"""The reply cache at its cap keeps the server's resident memory bounded (a server process, its RSS read).

Subscribers reading one small message a reply (``max_batch=1``, a live tail's pattern) make one cache entry per
reply, the worst ratio of objects to reply bytes. The server runs with ``--reply-cache-mb 8``; after a warm-up
that fills the cache, more subscribers read ENTRIES more replies through it (evicting all along), and the
resident memory may grow by at most ``GROWTH_KIB`` (24 MiB: allocator noise and SQLite's page cache). Before
the cache counted its objects, these entries held 8.2 times the reply bytes it counted (``test_frames``
measures that exactly with tracemalloc); under ``make soak`` (150,000 replies) that grew the server 57.7 MiB
here. ``make test`` runs a short version (8,000 replies) of the same check.
"""

from __future__ import annotations

from pathlib import Path

import grpc
from fuzzing import SOAK
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.service import Client
from agentmsg.v1 import session_service_pb2

ENTRIES = 150_000 if SOAK else 8_000
PER_SESSION = 2_000
GROWTH_KIB = 24 * 1024


def _read(channel: grpc.Channel, session: str, count: int) -> None:
    request = session_service_pb2.SubscribeRequest(session_id=session, max_batch=1).SerializeToString()
    call = channel.unary_stream("/agentmsg.v1.SessionService/Subscribe")(request, timeout=300)
    seen = 0
    for _ in call:
        seen += 1
        if seen == count:
            call.cancel()
            break
    assert seen == count


def test_the_reply_cache_at_its_cap_keeps_resident_memory_bounded(tmp_path: Path) -> None:
    server = ServerProcess("--db", str(tmp_path / "cache.db"), "--reply-cache-mb", "8")
    try:
        sessions = [f"tail-{i}" for i in range(ENTRIES // PER_SESSION + 8)]
        with Client(server.target, timeout=60) as client:
            for session in sessions:
                for start in range(0, PER_SESSION, 1000):
                    client.append_many(
                        session, [am.UserMessage.text(f"m{n}", id=f"{session}-{n}") for n in range(start, start + 1000)]
                    )
        with grpc.insecure_channel(server.target) as channel:
            for session in sessions[:8]:  # warm-up: 16,000 entries fill the 8 MiB cap (about 14,000 fit)
                _read(channel, session, PER_SESSION)
            before = server.rss_kib()
            for session in sessions[8:]:
                _read(channel, session, PER_SESSION)
            after = server.rss_kib()
    finally:
        server.stop()
    assert "Traceback" not in "".join(server.errors)
    print(f"[load] reply cache at its 8 MiB cap: RSS {before} -> {after} KiB over {ENTRIES} more replies")
    assert after - before <= GROWTH_KIB, f"resident memory grew {after - before} KiB ({before} -> {after})"
