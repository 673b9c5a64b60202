"""Media helpers: MIME sniffing from magic bytes, strict base64, data URLs, files.

Pillow is imported lazily: only the image factories need it.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
import re
import struct
import urllib.parse
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmsg.errors import MediaError

if TYPE_CHECKING:
    from PIL import Image

_WHITESPACE = re.compile(rb"\s+")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DATA_URL = re.compile(r"^(?i:data):(?P<mime>[^;,]*)(?P<params>(;[^;,]*)*?)(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL)


def sniff_image(data: bytes) -> str | None:
    """The image MIME type the magic bytes announce (JPEG, PNG, GIF, WEBP), or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def sniff_audio(data: bytes) -> str:
    """The audio MIME type the magic bytes announce; ``audio/mpeg`` when unknown."""
    if data.startswith(b"ID3") or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if data.startswith(b"OggS"):
        return "audio/ogg"
    if data.startswith(b"fLaC"):
        return "audio/flac"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    return "audio/mpeg"


def sniff_document(data: bytes) -> str | None:
    """``application/pdf`` for PDF magic, ``text/plain`` for UTF-8 text, else None."""
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text/plain"


def decode_base64(text: str | bytes, what: str) -> bytes:
    """Strict base64 (standard alphabet, padding required; line breaks allowed)."""
    raw = text.encode("ascii", "replace") if isinstance(text, str) else text
    raw = _WHITESPACE.sub(b"", raw)
    if not raw:
        raise MediaError(f"invalid base64 for {what}: the text is empty")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MediaError(f"invalid base64 for {what}: {exc}") from None


def encode_base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def parse_data_url(url: str, what: str) -> tuple[str, bytes]:
    """Split a ``data:`` URL into (media type, bytes)."""
    match = _DATA_URL.match(url)
    if match is None:
        raise MediaError(f"malformed data URL for {what}")
    payload = match.group("data")
    if not payload:
        raise MediaError(f"the data URL for {what} holds no data")
    if match.group("b64"):
        data = decode_base64(payload, what)
    else:
        from urllib.parse import unquote_to_bytes

        data = unquote_to_bytes(payload)
    return match.group("mime").lower(), data


def read_file(path: str | Path, what: str) -> bytes:
    """Read a local file for a factory; any OS error becomes a :class:`MediaError`."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise MediaError(f"cannot read {what} file {str(path)!r}: {exc.strerror or exc}") from None


def inspect_image(data: bytes, media_type: str | None, hint: str | None = None) -> str:
    """Check image bytes and return their media type.

    The header is read with Pillow (no pixel decoding): an image larger than
    Pillow's ``Image.MAX_IMAGE_PIXELS`` is refused as a decompression bomb.
    ``media_type`` (the caller's word) wins over what the bytes say; ``hint``
    (a type declared in a data URL) is used only when Pillow cannot tell.
    """
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise MediaError("image data is empty")
    try:
        # Pillow reports odd headers (corrupt EXIF, ...) as warnings: the bomb warning
        # becomes an error, the rest are not ours to show.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                fmt = image.format
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise MediaError(f"image refused as a decompression bomb: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError, struct.error) as exc:
        if media_type or hint:
            return media_type or hint or ""
        sniffed = sniff_image(data)
        reason = f"the bytes look like {sniffed} but Pillow cannot read them" if sniffed else "unknown image format"
        raise MediaError(f"{reason} ({type(exc).__name__}); pass media_type to override") from None
    if media_type:
        return media_type
    mime = Image.MIME.get(fmt or "") or sniff_image(data)
    if not mime:
        raise MediaError(f"image format {fmt} has no known media type; pass media_type")
    if not mime.startswith("image/"):
        raise MediaError(f"the bytes are {fmt} ({mime}), not an image")
    return mime


# A private table: the module-level mimetypes functions read /etc/mime.types,
# which differs between machines.
_TYPES = mimetypes.MimeTypes()
_PREFERRED = {"audio/x-wav": "audio/wav", "audio/x-flac": "audio/flac"}


def guess_from_path(path: str, prefix: str) -> str:
    """The media type a file name or URL path suggests, if it starts with ``prefix``."""
    if _URL_SCHEME.match(path):
        path = urllib.parse.urlsplit(path).path
    guessed, _ = _TYPES.guess_type(path, strict=False)
    guessed = _PREFERRED.get(guessed or "", guessed)
    return guessed if guessed and guessed.startswith(prefix) else ""


def encode_pil(image: Image.Image) -> tuple[bytes, str]:
    """Encode a PIL image in its own format (PNG when it has none)."""
    from PIL import Image as PILImage

    fmt = image.format or "PNG"
    buffer = io.BytesIO()
    try:
        image.save(buffer, format=fmt)
    except (OSError, ValueError, KeyError) as exc:
        raise MediaError(f"cannot encode the PIL image as {fmt}: {exc}") from None
    mime = PILImage.MIME.get(fmt, "image/png")
    return buffer.getvalue(), mime


def is_pil_image(value: Any) -> bool:
    """True for a PIL image, without importing Pillow when it is not loaded."""
    import sys

    module = sys.modules.get("PIL.Image")
    return module is not None and isinstance(value, module.Image)
