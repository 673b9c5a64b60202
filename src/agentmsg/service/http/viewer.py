"""The session viewer's files on the HTTP port: ``/`` (its page) and ``/viewer/*`` (its script and style).

The viewer is a TypeScript application on the SDK's browser entry (``sdk/typescript/viewer``), bundled by
``make viewer`` into this package's ``static/`` directory: it calls the services over Connect on the same origin
and loads nothing from elsewhere. The files are served as they are, read once from the package, with a
Content-Security-Policy that allows scripts and styles from this origin only (no inline script, no ``eval``), so
nothing a message carries can run. Without the built files (a source checkout before ``make viewer``), ``/``
answers 404 naming the command that builds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["VIEWER_PATHS", "ViewerApp"]

# The page and the files it loads; any other path under /viewer/ is 404.
VIEWER_PATHS = {
    "/": ("index.html", b"text/html; charset=utf-8"),
    "/viewer/viewer.js": ("viewer/viewer.js", b"text/javascript; charset=utf-8"),
    "/viewer/viewer.css": ("viewer/viewer.css", b"text/css; charset=utf-8"),
    "/viewer/favicon.svg": ("viewer/favicon.svg", b"image/svg+xml"),
}
CSP = (
    b"default-src 'self'; img-src 'self' blob: http: https:; media-src 'self' blob:; style-src 'self'; "
    b"script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
NOT_BUILT = b"the viewer is not built in this installation: `make viewer` bundles it (sdk/typescript/viewer)"

Send = Callable[[dict[str, Any]], Awaitable[None]]


class ViewerApp:
    """ASGI: GET or HEAD of the viewer's files; 405 for other methods.

    ``root``: the directory of the built files (default: this package's ``static/``).
    """

    def __init__(self, root: Traversable | None = None) -> None:
        self._root = root if root is not None else resources.files(__package__) / "static"
        self._files: dict[str, bytes] = {}

    def handles(self, path: str) -> bool:
        return path == "/" or path.startswith("/viewer/")

    def _read(self, name: str) -> bytes | None:
        if name not in self._files:
            try:
                self._files[name] = self._root.joinpath(*name.split("/")).read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                return None
        return self._files[name]

    async def __call__(self, scope: Any, receive: Any, send: Send) -> None:
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            await _respond(send, 405, b"text/plain", b"the viewer is read with GET", [(b"allow", b"GET, HEAD")])
            return
        entry = VIEWER_PATHS.get(scope["path"])
        if entry is None:
            await _respond(
                send, 404, b"text/plain", b"not found: the viewer serves /, /viewer/viewer.js, .css and favicon.svg"
            )
            return
        name, content_type = entry
        body = self._read(name)
        if body is None:
            await _respond(send, 404, b"text/plain", NOT_BUILT)
            return
        headers = [
            (b"content-security-policy", CSP),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"cache-control", b"no-cache"),
        ]
        await _respond(send, 200, content_type, b"" if method == "HEAD" else body, headers, len(body))


async def _respond(
    send: Send,
    code: int,
    content_type: bytes,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    length: int | None = None,
) -> None:
    head = [(b"content-type", content_type), (b"content-length", str(len(body) if length is None else length).encode())]
    await send({"type": "http.response.start", "status": code, "headers": head + (headers or [])})
    await send({"type": "http.response.body", "body": body})
