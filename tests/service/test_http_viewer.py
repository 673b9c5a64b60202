"""The viewer's files on the HTTP port (service/http/viewer.py), as ASGI: what is served, with which headers, and
the 404 that names ``make viewer`` when the bundle is not built. The page itself: tests/interop/test_viewer.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentmsg.service.http.viewer import NOT_BUILT, ViewerApp


def _get(app: ViewerApp, path: str, method: str = "GET") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app({"type": "http", "method": method, "path": path}, receive, send))
    start, body = sent
    return start["status"], dict(start["headers"]), body["body"]


def _built(tmp_path: Path) -> Path:
    (tmp_path / "viewer").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>v</title>")
    (tmp_path / "viewer" / "viewer.js").write_text("export {};")
    return tmp_path


def test_the_page_and_its_script_are_served_with_their_types_and_policy(tmp_path: Path) -> None:
    app = ViewerApp(_built(tmp_path))
    status, headers, body = _get(app, "/")
    assert (status, headers[b"content-type"], body) == (
        200,
        b"text/html; charset=utf-8",
        b"<!doctype html><title>v</title>",
    )
    assert b"script-src 'self'" in headers[b"content-security-policy"]
    assert headers[b"x-content-type-options"] == b"nosniff"
    status, headers, body = _get(app, "/viewer/viewer.js")
    assert (status, headers[b"content-type"], body) == (200, b"text/javascript; charset=utf-8", b"export {};")
    status, headers, body = _get(app, "/", method="HEAD")
    assert (status, headers[b"content-length"], body) == (200, b"31", b"")


def test_other_paths_and_methods_are_refused(tmp_path: Path) -> None:
    app = ViewerApp(_built(tmp_path))
    assert _get(app, "/viewer/../index.html")[0] == 404
    assert _get(app, "/viewer/other.js")[0] == 404
    status, headers, _ = _get(app, "/", method="POST")
    assert (status, headers[b"allow"]) == (405, b"GET, HEAD")


def test_an_unbuilt_viewer_answers_404_naming_the_command(tmp_path: Path) -> None:
    status, _, body = _get(ViewerApp(tmp_path / "absent"), "/")
    assert (status, body) == (404, NOT_BUILT)
    assert b"make viewer" in body
