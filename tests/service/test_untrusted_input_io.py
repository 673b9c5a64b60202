"""Untrusted input never touches the local disk or the network.

Nothing decoded from the wire (protobuf, ProtoJSON, the service) or from a
provider payload (every ``from_x``, the seed forms, the stream parsers) opens
a local file or fetches a URL, whatever its strings say: ``file:/etc/passwd``,
``file:///etc/passwd``, ``http://`` URLs and ``data:`` URLs stay strings (a
URL stays a URL; a data URL is decoded in memory). Two nets catch an attempt:

- an audit hook (``sys.addaudithook``) on ``open``, ``os.*`` file access,
  ``socket.connect``/``getaddrinfo``, ``urllib.Request`` and
  ``http.client.connect`` — it sees C-level opens too (Pillow's, sqlite's
  Python entry points);
- ``builtins.open``, ``io.open``, ``pathlib.Path.read_bytes/read_text/open``,
  ``urllib.request.urlopen`` and ``socket.socket.connect`` replaced by
  functions that raise.

Both raise :class:`LocalIOAttempt` (a BaseException: no decoder's ``except``
can swallow it) and record what was tried. A control case proves the nets
work: ``AudioContent("file:<path>")``, the library-side convenience, is caught.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import pathlib
import socket
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ServerThread
from fuzzing import Target, get, paths, run, targets

import agentmsg as am
from agentmsg.service import Client
from agentmsg.v1 import content_pb2, message_pb2

HOSTILE = [
    "file:/etc/passwd",
    "file:///etc/passwd",
    "file://localhost/etc/passwd",
    "http://127.0.0.1:9/x.png",
    "https://example.invalid/a.pdf",
    "data:image/png;base64,iVBORw0KGgo=",
    "/etc/passwd",
    "../../etc/passwd",
]
WATCHED_EVENTS = (
    "open",
    "os.listdir",
    "os.scandir",
    "os.chdir",
    "socket.connect",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "urllib.Request",
    "http.client.connect",
    "subprocess.Popen",
)


class LocalIOAttempt(BaseException):
    """Untrusted input tried to reach the disk or the network."""


class Guard:
    """Records and refuses file and network access while active (an audit hook, installed once)."""

    def __init__(self) -> None:
        self.active = False
        self.seen: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active and event in WATCHED_EVENTS:
            self.refuse(event, args)

    def refuse(self, what: str, args: Any) -> None:
        self.seen.append((what, repr(args)[:200]))
        raise LocalIOAttempt(f"{what} {args!r:.200}")

    @contextlib.contextmanager
    def watching(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        def refusing(name: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                self.refuse(name, args)

            return call

        with monkeypatch.context() as patch:
            for owner, name in (
                (builtins, "open"),
                (io, "open"),
                (pathlib.Path, "read_bytes"),
                (pathlib.Path, "read_text"),
                (pathlib.Path, "open"),
                (urllib.request, "urlopen"),
                (socket.socket, "connect"),
                (socket, "create_connection"),
            ):
                patch.setattr(owner, name, refusing(f"{getattr(owner, '__name__', owner)}.{name}"))
            self.active = True
            try:
                yield
            finally:
                self.active = False


_GUARD: Guard | None = None


@pytest.fixture(scope="module")
def warm() -> list[Target]:
    """Run every decoder once first, so lazy imports (Pillow's plugins...) are done before watching."""
    from PIL import Image

    Image.init()
    found = targets()
    for target in found:
        for seed in target.seeds:
            run(target, seed)
    return found


@pytest.fixture
def guard(warm: list[Target]) -> Guard:
    global _GUARD  # noqa: PLW0603 - one audit hook per process: hooks cannot be removed
    if _GUARD is None:
        _GUARD = Guard()
    _GUARD.seen.clear()
    return _GUARD


def test_the_guard_catches_a_read(guard: Guard, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The control: the library-side convenience ``"file:<path>"`` does read, and the guard sees it."""
    clip = tmp_path / "clip.wav"
    clip.write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28))
    assert am.AudioContent(f"file:{clip}").media_type == "audio/wav"  # unguarded, it reads
    with guard.watching(monkeypatch), pytest.raises(LocalIOAttempt):
        am.AudioContent(f"file:{clip}")
    assert guard.seen
    guard.seen.clear()
    with guard.watching(monkeypatch), pytest.raises(LocalIOAttempt):
        am.AudioContent.from_file(clip)
    with guard.watching(monkeypatch), pytest.raises(LocalIOAttempt):
        urllib.request.urlopen("http://127.0.0.1:9/")


def _string_paths(value: Any) -> list[tuple[Any, ...]]:
    return [path for path in paths(value) if path and isinstance(get(value, path), str)]


def test_hostile_strings_in_every_decoder_touch_nothing(
    guard: Guard, monkeypatch: pytest.MonkeyPatch, warm: list[Target]
) -> None:
    """Every string of every golden payload, replaced by a hostile string (each in turn), through its decoder."""
    calls = 0
    with guard.watching(monkeypatch):
        for target in warm:
            if target.kind not in ("json", "events"):
                continue
            for seed in target.seeds:
                for path in _string_paths(seed):
                    payload = json.loads(json.dumps(seed))
                    get(payload, path[:-1])[path[-1]] = HOSTILE[calls % len(HOSTILE)]
                    run(target, payload)
                    calls += 1
    assert guard.seen == []
    assert calls > 2_000


def _decoders(url: str) -> dict[str, Callable[[], Any]]:
    """Each format's reading of a media block at ``url``."""
    from agentmsg import dict_form
    from agentmsg.providers import adaline, anthropic, gemini, openai_chat, openai_responses

    image = {"type": "image", "source": {"type": "url", "url": url}}
    adaline_image = {"modality": "image", "detail": "auto", "value": {"type": "url", "url": url}}
    cases: dict[str, Callable[[], Any]] = {
        "openai_chat": lambda: openai_chat.from_openai_chat(
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
        ),
        "openai_responses": lambda: openai_responses.from_openai_responses(
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_url": url}]}]}
        ),
        "anthropic": lambda: anthropic.from_anthropic({"messages": [{"role": "user", "content": [image]}]}),
        "gemini": lambda: gemini.from_gemini(
            {"contents": [{"role": "user", "parts": [{"fileData": {"mimeType": "audio/wav", "fileUri": url}}]}]}
        ),
        "adaline": lambda: adaline.from_adaline([{"role": "user", "content": [adaline_image]}]),
        "AudioContent.from_url": lambda: am.AudioContent.from_url(url),
    }
    if not url.startswith("file:"):  # seed-1 refuses "file:" media strings outright (see the next test)
        seed1 = [{"type": "audio", "audio": [url]}, {"type": "document", "url": url}]
        cases["seed-1"] = lambda: dict_form.messages_from_dicts([{"role": "user", "contents": seed1}])
    return cases


def test_urls_stay_urls(guard: Guard, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[tuple[str, str, Any]] = []
    with guard.watching(monkeypatch):
        for url in ("file:///etc/passwd", "http://127.0.0.1:9/x.png"):
            decoded.extend((name, url, call()) for name, call in _decoders(url).items())
    assert guard.seen == []
    assert len(decoded) == 13
    for name, url, value in decoded:
        blocks = [value] if isinstance(value, am.ContentBase) else [b for m in value for b in m.contents]
        media = [b for b in blocks if isinstance(b, am.ImageContent | am.AudioContent | am.DocumentContent)]
        assert media, name
        for block in media:
            assert block.data is None, (name, block)  # nothing was read into bytes
            assert block.url == url, (name, block)


def test_seed_1_file_paths_are_refused(guard: Guard, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmsg import dict_form

    with guard.watching(monkeypatch):
        for kind, key in (("audio", "audio"), ("image", "images")):
            with pytest.raises(am.ValidationError, match="'file:' paths are not read from decoded data"):
                dict_form.messages_from_dicts(
                    [{"role": "user", "contents": [{"type": kind, key: ["file:/etc/passwd"]}]}]
                )
    assert guard.seen == []


def _hostile_message() -> am.UserMessage:
    """A user message whose media point at local files and a loopback URL (built on the proto: no reads)."""
    pb = message_pb2.Message(id="hostile-1")
    pb.timestamp.FromSeconds(1_700_000_000)
    pb.user.content.add().text.text = "look at these"
    pb.user.content.add().image.CopyFrom(content_pb2.ImageContent(url="file:///etc/passwd"))
    pb.user.content.add().audio.CopyFrom(content_pb2.AudioContent(url="file:/etc/passwd"))
    pb.user.content.add().document.CopyFrom(content_pb2.DocumentContent(url="http://127.0.0.1:9/secret.pdf"))
    message = am.BaseMessage.from_proto(pb, validate=True)
    assert isinstance(message, am.UserMessage)
    return message


def test_the_service_keeps_urls_and_reads_nothing(
    server: ServerThread, guard: Guard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proto holds bytes or a URL (no 'file:' strings): a file: URL is stored and served back as a URL.

    The in-thread server, its store and the client decode all run in this process, under the guard.
    """
    message = _hostile_message()
    with Client(server.target, timeout=10) as client:
        client.sessions()  # the channel is connected before watching
        with guard.watching(monkeypatch):
            assert client.append("hostile", message) == 1
            (logged,) = list(client.history("hostile"))
            stream = client.subscribe("hostile", timeout=5)
            subscribed = next(stream)
            stream.close()
            context = client.build_context("hostile")
    assert guard.seen == []
    for got in (logged.message, subscribed.message, context[0]):  # type: ignore[union-attr]
        assert got == message
        urls = [block.url for block in got.contents if not isinstance(block, am.TextContent)]
        assert urls == ["file:///etc/passwd", "file:/etc/passwd", "http://127.0.0.1:9/secret.pdf"]
        assert all(block.data is None for block in got.contents if not isinstance(block, am.TextContent))
