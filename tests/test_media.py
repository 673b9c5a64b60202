"""The media content factories (image, audio, document) and what they do with bad input.

Every image here is made in the test with Pillow (a few pixels), every other
payload is a handful of literal bytes; nothing touches the network.
"""

from __future__ import annotations

import base64
import io
import re
import struct
import zlib
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PIL import Image

from agentmsg import (
    AgentMsgError,
    AudioContent,
    ContentBase,
    DecodeError,
    DocumentContent,
    ImageContent,
    ImageDetail,
    MediaError,
    ValidationError,
)

B = TypeVar("B", bound=ContentBase)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PDF = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
OGG = b"OggS\x00\x02" + bytes(20)


# --- helpers -------------------------------------------------------------------------------------------------------


def image_bytes(fmt: str, size: tuple[int, int] = (2, 2), mode: str = "RGB") -> bytes:
    """A tiny real image encoded by Pillow."""
    buffer = io.BytesIO()
    Image.new(mode, size, "red" if mode == "RGB" else None).save(buffer, format=fmt)
    return buffer.getvalue()


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG of signature + IHDR + IEND, no pixel data: enough for Pillow's header reader."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return PNG_MAGIC + png_chunk(b"IHDR", ihdr) + png_chunk(b"IEND", b"")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def round_trips(block: B) -> B:
    """Assert the block survives binary and JSON encoding unchanged, then return it."""
    cls = type(block)
    assert cls.from_bytes(block.to_bytes()) == block
    assert cls.from_json(block.to_json()) == block
    decoded = ContentBase.from_bytes(block.to_bytes())
    assert type(decoded) is cls
    assert decoded == block
    return block


def only_violation(exc: ValidationError) -> tuple[str, str]:
    assert len(exc.violations) == 1, exc.violations
    violation = exc.violations[0]
    return violation.field, violation.rule_id


@pytest.fixture
def png() -> bytes:
    return image_bytes("PNG")


@pytest.fixture
def jpeg() -> bytes:
    return image_bytes("JPEG")


# --- ImageContent: sources -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "mime", "magic"),
    [
        ("PNG", "image/png", PNG_MAGIC),
        ("JPEG", "image/jpeg", b"\xff\xd8\xff"),
        ("GIF", "image/gif", b"GIF8"),
        ("WEBP", "image/webp", b"RIFF"),
    ],
)
def test_image_bytes_sniff_media_type(fmt: str, mime: str, magic: bytes) -> None:
    data = image_bytes(fmt)
    assert data.startswith(magic)
    block = round_trips(ImageContent(data))
    assert block.type == "image"
    assert block.media_type == mime
    assert block.data == data
    assert block.url is None
    assert block.file_id is None
    assert block.detail is None


@pytest.mark.parametrize("wrap", [bytearray, memoryview])
def test_image_accepts_bytes_like(png: bytes, wrap: Any) -> None:
    block = round_trips(ImageContent(wrap(png)))
    assert block.data == png
    assert block.media_type == "image/png"


def test_image_base64_str(jpeg: bytes) -> None:
    block = round_trips(ImageContent(b64(jpeg)))
    assert block.data == jpeg
    assert block.media_type == "image/jpeg"


def test_image_base64_with_line_breaks(png: bytes) -> None:
    text = b64(png)
    wrapped = "\n".join(text[i : i + 16] for i in range(0, len(text), 16))
    assert ImageContent(wrapped).data == png


def test_image_data_url(png: bytes) -> None:
    block = round_trips(ImageContent(f"data:image/png;base64,{b64(png)}"))
    assert block.data == png
    assert block.url is None
    assert block.media_type == "image/png"


def test_image_data_url_non_image_declared_type_is_sniffed(png: bytes) -> None:
    block = round_trips(ImageContent(f"data:application/octet-stream;base64,{b64(png)}"))
    assert block.media_type == "image/png"


@pytest.mark.parametrize(
    ("url", "mime"),
    [
        ("https://example.test/cat.png", "image/png"),
        ("http://example.test/a/b/photo.jpg", "image/jpeg"),
        ("https://example.test/anim.gif", "image/gif"),
        ("https://example.test/cat.PNG", "image/png"),
        ("https://example.test/cat", ""),
        ("https://example.test/cat.qqzz", ""),
        ("https://example.test/paper.pdf", ""),  # a guess outside image/ is dropped
    ],
)
def test_image_url_kept_with_guessed_media_type(url: str, mime: str) -> None:
    for block in (ImageContent(url), ImageContent.from_url(url)):
        round_trips(block)
        assert block.url == url
        assert block.data is None
        assert block.media_type == mime


def test_image_url_explicit_media_type() -> None:
    block = round_trips(ImageContent.from_url("https://example.test/render", media_type="image/webp", detail="low"))
    assert block.media_type == "image/webp"
    assert block.detail is ImageDetail.LOW


def test_image_from_file(tmp_path: Path, png: bytes, jpeg: bytes) -> None:
    (tmp_path / "a.png").write_bytes(png)
    # The media type comes from the bytes, not the (wrong) extension.
    (tmp_path / "really_jpeg.png").write_bytes(jpeg)
    block = round_trips(ImageContent.from_file(tmp_path / "a.png", detail=ImageDetail.HIGH))
    assert block.data == png
    assert block.media_type == "image/png"
    assert block.detail is ImageDetail.HIGH
    other = round_trips(ImageContent.from_file(str(tmp_path / "really_jpeg.png")))
    assert other.media_type == "image/jpeg"


def test_image_from_base64(png: bytes) -> None:
    block = round_trips(ImageContent.from_base64(b64(png), detail="auto"))
    assert block.data == png
    assert block.media_type == "image/png"
    assert block.detail is ImageDetail.AUTO


def test_image_from_file_id() -> None:
    block = round_trips(ImageContent.from_file_id("file-abc", media_type="image/png", detail="medium"))
    assert block.file_id == "file-abc"
    assert block.data is None
    assert block.url is None
    assert block.media_type == "image/png"
    assert block.detail is ImageDetail.MEDIUM
    assert round_trips(ImageContent.from_file_id("file-xyz")).media_type == ""


def test_image_pil_keeps_its_own_format(jpeg: bytes) -> None:
    with Image.open(io.BytesIO(jpeg)) as opened:
        assert opened.format == "JPEG"
        block = round_trips(ImageContent(opened))
    assert block.media_type == "image/jpeg"
    assert block.data is not None
    assert block.data.startswith(b"\xff\xd8\xff")


def test_image_pil_gif_stays_gif() -> None:
    with Image.open(io.BytesIO(image_bytes("GIF"))) as opened:
        block = round_trips(ImageContent(opened))
    assert block.media_type == "image/gif"
    assert block.data is not None
    assert block.data.startswith(b"GIF8")


def test_image_pil_without_format_becomes_png() -> None:
    image = Image.new("RGBA", (3, 2), (0, 0, 255, 128))
    assert image.format is None
    block = round_trips(ImageContent(image))
    assert block.media_type == "image/png"
    assert block.data is not None
    assert block.data.startswith(PNG_MAGIC)
    with Image.open(io.BytesIO(block.data)) as decoded:
        assert decoded.size == (3, 2)
        assert decoded.mode == "RGBA"


def test_image_pil_explicit_media_type() -> None:
    block = round_trips(ImageContent(Image.new("L", (1, 1)), media_type="image/x-custom"))
    assert block.media_type == "image/x-custom"
    assert block.data is not None
    assert block.data.startswith(PNG_MAGIC)


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        (ImageDetail.LOW, ImageDetail.LOW),
        (ImageDetail.HIGH, ImageDetail.HIGH),
        ("low", ImageDetail.LOW),
        ("medium", ImageDetail.MEDIUM),
        ("high", ImageDetail.HIGH),
        ("auto", ImageDetail.AUTO),
        (None, None),
    ],
)
def test_image_detail_enum_or_string(
    png: bytes, detail: ImageDetail | str | None, expected: ImageDetail | None
) -> None:
    block = round_trips(ImageContent(png, detail=detail))
    assert block.detail is expected


@pytest.mark.parametrize("detail", ["bogus", "HIGH", "", "original"])
def test_image_invalid_detail_string(png: bytes, detail: str) -> None:
    with pytest.raises(ValidationError, match="is not one of: low, medium, high, auto") as info:
        ImageContent(png, detail=detail)
    assert only_violation(info.value) == ("detail", "enum")


def test_image_invalid_detail_on_other_factories() -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent.from_url("https://example.test/a.png", detail="max")
    assert only_violation(info.value) == ("detail", "enum")
    with pytest.raises(ValidationError) as info:
        ImageContent.from_file_id("file-1", detail="max")
    assert only_violation(info.value) == ("detail", "enum")


def test_image_explicit_media_type_overrides_sniffing(png: bytes) -> None:
    block = round_trips(ImageContent(png, media_type="image/jpeg"))
    assert block.media_type == "image/jpeg"
    # An override also lets through bytes Pillow cannot identify (SVG, a new format...).
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'
    assert round_trips(ImageContent(svg, media_type="image/svg+xml")).media_type == "image/svg+xml"


def test_image_empty_media_type_means_sniff(png: bytes) -> None:
    assert ImageContent(png, media_type="").media_type == "image/png"


def test_image_format_pillow_knows_beyond_the_magic_table() -> None:
    assert round_trips(ImageContent(image_bytes("BMP"))).media_type == "image/bmp"
    assert round_trips(ImageContent(image_bytes("TIFF"))).media_type == "image/tiff"


def test_image_to_base64(png: bytes) -> None:
    assert ImageContent(png).to_base64() == [(b64(png), "image/png")]
    assert base64.b64decode(ImageContent(png).to_base64()[0][0]) == png
    assert ImageContent("https://example.test/x.png").to_base64() == [("https://example.test/x.png", "")]


def test_image_to_base64_of_file_id_raises() -> None:
    with pytest.raises(MediaError, match=r"ImageContent refers to provider file 'file-9'.*no bytes"):
        ImageContent.from_file_id("file-9").to_base64()


def test_image_match_args(png: bytes) -> None:
    match ImageContent(png, detail="low"):
        case ImageContent(data, url, media_type, detail):
            assert (data, url, media_type, detail) == (png, None, "image/png", ImageDetail.LOW)
        case _:
            pytest.fail("ImageContent did not match its own pattern")


# --- ImageContent: bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not base64 at all!", "Only base64 data is allowed"),
        ("QUJ", "Incorrect padding"),
        ("iVBO-w0K_go=", "Only base64 data is allowed"),  # URL-safe alphabet is refused
        ("héllo==", "Only base64 data is allowed"),
        ("", "the text is empty"),
        ("   \n ", "the text is empty"),
    ],
)
def test_image_malformed_base64(text: str, reason: str) -> None:
    with pytest.raises(MediaError, match=f"invalid base64 for image: {reason}"):
        ImageContent(text)


def test_image_from_base64_malformed() -> None:
    with pytest.raises(MediaError, match="invalid base64 for image"):
        ImageContent.from_base64("%%%")


def test_image_data_url_malformed() -> None:
    with pytest.raises(MediaError, match="malformed data URL for image"):
        ImageContent("data:image/png")
    with pytest.raises(MediaError, match="invalid base64 for image"):
        ImageContent("data:image/png;base64,!!!")


@pytest.mark.parametrize("empty", [b"", bytearray(), "data:image/png;base64,"])
def test_image_empty_data(empty: bytes | str) -> None:
    with pytest.raises(MediaError, match=r"image data is empty|data URL for image holds no data"):
        ImageContent(empty)


def test_image_empty_data_even_with_media_type() -> None:
    with pytest.raises(MediaError, match="image data is empty"):
        ImageContent(b"", media_type="image/png")


@pytest.mark.parametrize("data", [b"hello world, not an image", b"\x00" * 64, PDF])
def test_image_unknown_format(data: bytes) -> None:
    with pytest.raises(MediaError, match=r"unknown image format .*pass media_type"):
        ImageContent(data)


@pytest.mark.parametrize(
    "data",
    [
        PNG_MAGIC,
        PNG_MAGIC + b"\x00" * 5,
        image_bytes("PNG")[:20],  # cut inside IHDR
        # A complete IHDR whose checksum is wrong.
        PNG_MAGIC + png_header_only(2, 2)[8:29] + b"\x00\x00\x00\x00",
        # An IHDR declaring zero width.
        png_header_only(0, 2),
    ],
)
def test_image_corrupt_png_header(data: bytes) -> None:
    assert data.startswith(PNG_MAGIC)
    with pytest.raises(MediaError, match=r"look like image/png but Pillow cannot read them"):
        ImageContent(data)


def test_image_corrupt_gif_header() -> None:
    with pytest.raises(MediaError, match=r"look like image/gif but Pillow cannot read them"):
        ImageContent(b"GIF89a\x00")


def test_image_header_only_png_is_accepted() -> None:
    # Only the header is read: a well-formed IHDR with no pixel data passes.
    assert round_trips(ImageContent(png_header_only(4, 4))).media_type == "image/png"


def test_image_format_without_media_type() -> None:
    # A Sun raster header: Pillow reads it but has no MIME type for it.
    sun = struct.pack(">8I", 0x59A66A95, 2, 2, 8, 4, 1, 0, 0) + bytes(4)
    with pytest.raises(MediaError, match="image format SUN has no known media type; pass media_type"):
        ImageContent(sun)
    assert round_trips(ImageContent(sun, media_type="image/x-sun-raster")).media_type == "image/x-sun-raster"


def test_image_pil_that_cannot_be_encoded() -> None:
    sun = struct.pack(">8I", 0x59A66A95, 2, 2, 8, 4, 1, 0, 0) + bytes(4)
    with Image.open(io.BytesIO(sun)) as opened:
        assert opened.format == "SUN"
        with pytest.raises(MediaError, match="cannot encode the PIL image as SUN"):
            ImageContent(opened)


@pytest.mark.parametrize("side", [4, 5])  # 16 px: Pillow warns; 25 px (> 2x limit): Pillow raises
def test_image_decompression_bomb_small_limit(monkeypatch: pytest.MonkeyPatch, side: int) -> None:
    data = image_bytes("PNG", (side, side))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)
    with pytest.raises(MediaError, match="decompression bomb"):
        ImageContent(data)
    with pytest.raises(MediaError, match="decompression bomb"):
        ImageContent(data, media_type="image/png")  # an override does not skip the check


def test_image_under_small_limit_is_fine(monkeypatch: pytest.MonkeyPatch) -> None:
    data = image_bytes("PNG", (3, 3))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)
    assert ImageContent(data).media_type == "image/png"


@pytest.mark.parametrize(
    ("width", "height"),
    [
        (10_000, 10_000),  # 1e8 px: over MAX_IMAGE_PIXELS (Pillow's warning)
        (100_000, 100_000),  # 1e10 px: over twice the limit (Pillow's error)
        (0x7FFFFFFF, 0x7FFFFFFF),
    ],
)
def test_image_decompression_bomb_crafted_header(width: int, height: int) -> None:
    assert width * height > Image.MAX_IMAGE_PIXELS
    bomb = png_header_only(width, height)
    assert len(bomb) < 100
    for source in (bomb, b64(bomb), f"data:image/png;base64,{b64(bomb)}"):
        with pytest.raises(MediaError, match=r"image refused as a decompression bomb: .*pixels"):
            ImageContent(source)


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_image_decompression_bomb_refused_even_when_the_warning_is_ignored() -> None:
    # 1e8 px is between the limit and twice it, where Pillow only warns: the check must not rely on the
    # application's warning filters.
    with pytest.raises(MediaError, match="decompression bomb"):
        ImageContent(png_header_only(10_000, 10_000))


def test_image_decompression_bomb_from_file_and_base64(tmp_path: Path) -> None:
    bomb = png_header_only(50_000, 50_000)
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb)
    with pytest.raises(MediaError, match="decompression bomb"):
        ImageContent.from_file(path)
    with pytest.raises(MediaError, match="decompression bomb"):
        ImageContent.from_base64(b64(bomb))


def test_image_from_file_missing(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "missing.png"
    with pytest.raises(MediaError, match=re.escape(f"cannot read image file {str(path)!r}")):
        ImageContent.from_file(path)


def test_image_from_file_directory(tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=re.escape(f"cannot read image file {str(tmp_path)!r}")):
        ImageContent.from_file(tmp_path)


def test_image_from_file_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.png"
    path.write_bytes(b"")
    with pytest.raises(MediaError, match="image data is empty"):
        ImageContent.from_file(path)


@pytest.mark.parametrize(("value", "type_name"), [(42, "int"), ({"url": "x"}, "dict"), (True, "bool")])
def test_image_wrong_type(value: Any, type_name: str) -> None:
    with pytest.raises(ValidationError, match=f"got {type_name}") as info:
        ImageContent(value)
    assert only_violation(info.value) == ("image", "type")


def test_image_list_items_are_checked_one_by_one(png: bytes) -> None:
    # A list given positionally is the seed's `images` list: the error names the item.
    with pytest.raises(ValidationError, match="got int") as info:
        ImageContent([png, 2])
    assert only_violation(info.value) == ("images[1]", "type")


def test_image_needs_an_image() -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent()
    assert only_violation(info.value) == ("images", "min_items")


def test_image_wrong_media_type_type(png: bytes) -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent(png, media_type=5)  # type: ignore[arg-type]
    assert only_violation(info.value) == ("media_type", "type")


@pytest.mark.parametrize("media_type", ["text/plain", "application/pdf", "image", "png", "image/"])
def test_image_media_type_not_image(png: bytes, media_type: str) -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent(png, media_type=media_type)
    assert only_violation(info.value) == ("image.media_type", "string.pattern")


def test_image_media_type_not_image_on_every_source(png: bytes) -> None:
    makers = [
        lambda: ImageContent.from_url("https://example.test/a.png", media_type="text/plain"),
        lambda: ImageContent.from_file_id("file-1", media_type="text/plain"),
        lambda: ImageContent(Image.new("RGB", (1, 1)), media_type="text/plain"),
        lambda: ImageContent.from_base64(b64(png), media_type="text/plain"),
    ]
    for make in makers:
        with pytest.raises(ValidationError) as info:
            make()
        assert only_violation(info.value) == ("image.media_type", "string.pattern")


@pytest.mark.parametrize("url", ["images/cat.png", "/abs/path.png", "example.test/cat.png", "//example.test/x.png"])
def test_image_from_url_relative(url: str) -> None:
    with pytest.raises(ValidationError, match="not an absolute URL") as info:
        ImageContent.from_url(url)
    assert only_violation(info.value) == ("url", "string.uri")


def test_image_from_url_malformed_absolute() -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent.from_url("https://exa mple.test/cat.png")
    assert only_violation(info.value) == ("image.url", "string.uri")


def test_image_from_url_wrong_type() -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent.from_url(b"https://example.test/x.png")  # type: ignore[arg-type]
    assert only_violation(info.value) == ("url", "type")


def test_image_from_file_id_empty() -> None:
    with pytest.raises(ValidationError) as info:
        ImageContent.from_file_id("")
    assert only_violation(info.value) == ("image.file_id", "string.min_len")


def test_image_errors_are_agentmsg_and_value_errors() -> None:
    for make in (lambda: ImageContent(b"junk"), lambda: ImageContent(3)):  # type: ignore[arg-type]
        with pytest.raises(AgentMsgError) as info:
            make()
        assert isinstance(info.value, ValueError)


# --- AudioContent --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg"),
        (b"\xff\xfb\x90\x64\x00", "audio/mpeg"),
        (b"\xff\xf3\x90\x64", "audio/mpeg"),
        (b"\xff\xf2\x90\x64", "audio/mpeg"),
        (OGG, "audio/ogg"),
        (b"fLaC\x00\x00\x00\x22", "audio/flac"),
        (b"RIFF\x00\x00\x00\x00WAVE", "audio/wav"),
        (WAV, "audio/wav"),
        (b"\x00\x01\x02\x03", "audio/mpeg"),  # unknown: the seed's default
        (b"RIFF\x00\x00\x00\x00AVI LIST", "audio/mpeg"),  # RIFF but not WAVE
        (b"RIFF", "audio/mpeg"),  # too short for the WAVE check
    ],
)
def test_audio_sniffing(data: bytes, mime: str) -> None:
    block = round_trips(AudioContent(data))
    assert block.type == "audio"
    assert block.data == data
    assert block.media_type == mime


def test_audio_base64_str() -> None:
    block = round_trips(AudioContent(b64(OGG)))
    assert block.data == OGG
    assert block.media_type == "audio/ogg"


def test_audio_data_url() -> None:
    block = round_trips(AudioContent(f"data:audio/x-custom;base64,{b64(OGG)}"))
    assert block.data == OGG
    assert block.media_type == "audio/x-custom"  # the declared type wins
    assert round_trips(AudioContent(f"data:;base64,{b64(OGG)}")).media_type == "audio/ogg"


def test_audio_file_prefix(tmp_path: Path) -> None:
    path = tmp_path / "clip.bin"
    path.write_bytes(WAV)
    block = round_trips(AudioContent(f"file:{path}"))
    assert block.data == WAV
    assert block.media_type == "audio/wav"


def test_audio_from_file(tmp_path: Path) -> None:
    path = tmp_path / "song.ogg"
    path.write_bytes(b"fLaC\x00\x00")  # bytes decide, not the extension
    block = round_trips(AudioContent.from_file(path))
    assert block.data == b"fLaC\x00\x00"
    assert block.media_type == "audio/flac"
    assert round_trips(AudioContent.from_file(str(path), media_type="audio/x-flac")).media_type == "audio/x-flac"


def test_audio_from_base64() -> None:
    assert round_trips(AudioContent.from_base64(b64(WAV))).media_type == "audio/wav"
    block = round_trips(AudioContent.from_base64(b64(WAV), "audio/x-wav"))
    assert block.data == WAV
    assert block.media_type == "audio/x-wav"
    assert AudioContent.from_base64(b64(WAV), "audio/x-wav", media_type="audio/wave").media_type == "audio/wave"


@pytest.mark.parametrize(
    ("url", "mime"),
    [
        ("https://example.test/a.mp3", "audio/mpeg"),
        ("https://example.test/a", ""),
        ("https://example.test/a.png", ""),  # a guess outside audio/ is dropped
    ],
)
def test_audio_from_url(url: str, mime: str) -> None:
    for block in (AudioContent.from_url(url), AudioContent(url)):
        round_trips(block)
        assert block.url == url
        assert block.data is None
        assert block.media_type == mime


def test_audio_from_url_explicit_media_type() -> None:
    assert AudioContent.from_url("https://example.test/stream", media_type="audio/ogg").media_type == "audio/ogg"


def test_audio_to_base64() -> None:
    assert AudioContent(OGG).to_base64() == [(b64(OGG), "audio/ogg")]
    assert AudioContent.from_url("https://example.test/a.mp3").to_base64() == [("https://example.test/a.mp3", "")]


def test_audio_explicit_media_type_overrides_sniffing() -> None:
    assert round_trips(AudioContent(OGG, media_type="audio/webm")).media_type == "audio/webm"


@pytest.mark.parametrize("text", ["***", "QUJ", "ogg data", "   "])
def test_audio_invalid_base64(text: str) -> None:
    with pytest.raises(MediaError, match="invalid base64 for audio"):
        AudioContent(text)
    with pytest.raises(MediaError, match="invalid base64 for audio"):
        AudioContent.from_base64(text)


def test_audio_file_prefix_missing(tmp_path: Path) -> None:
    path = tmp_path / "missing.mp3"
    with pytest.raises(MediaError, match=re.escape(f"cannot read audio file {str(path)!r}")):
        AudioContent(f"file:{path}")
    with pytest.raises(MediaError, match=re.escape(f"cannot read audio file {str(path)!r}")):
        AudioContent.from_file(path)


def test_audio_from_file_directory(tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=re.escape(f"cannot read audio file {str(tmp_path)!r}")):
        AudioContent.from_file(tmp_path)


def test_audio_empty_data(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp3"
    empty.write_bytes(b"")
    for make in (
        lambda: AudioContent(b""),
        lambda: AudioContent(bytearray()),
        lambda: AudioContent(b"", media_type="audio/mpeg"),
        lambda: AudioContent(f"file:{empty}"),
        lambda: AudioContent.from_file(empty),
    ):
        with pytest.raises(MediaError, match="audio data is empty"):
            make()
    # An empty data URL says so.
    with pytest.raises(MediaError, match="data URL for audio holds no data"):
        AudioContent("data:audio/wav;base64,")


@pytest.mark.parametrize(("value", "type_name"), [(7, "int"), ({"data": b"ID3"}, "dict"), (1.5, "float")])
def test_audio_wrong_type(value: Any, type_name: str) -> None:
    with pytest.raises(ValidationError, match=f"got {type_name}") as info:
        AudioContent(value)
    assert only_violation(info.value) == ("audio", "type")


def test_audio_needs_a_clip() -> None:
    with pytest.raises(ValidationError) as info:
        AudioContent()
    assert only_violation(info.value) == ("audio", "min_items")


def test_audio_factories_wrong_type() -> None:
    with pytest.raises(ValidationError) as info:
        AudioContent.from_base64(b64(OGG).encode())  # type: ignore[arg-type]
    assert only_violation(info.value) == ("data", "type")
    with pytest.raises(ValidationError) as info:
        AudioContent.from_url(None)  # type: ignore[arg-type]
    assert only_violation(info.value) == ("url", "type")
    with pytest.raises(ValidationError) as info:
        AudioContent(OGG, media_type=b"audio/ogg")  # type: ignore[arg-type]
    assert only_violation(info.value) == ("media_type", "type")


def test_audio_media_type_not_audio() -> None:
    with pytest.raises(ValidationError) as info:
        AudioContent(OGG, media_type="image/png")
    assert only_violation(info.value) == ("audio.media_type", "string.pattern")


def test_audio_from_url_relative() -> None:
    with pytest.raises(ValidationError, match="not an absolute URL") as info:
        AudioContent.from_url("clips/a.mp3")
    assert only_violation(info.value) == ("url", "string.uri")


# --- DocumentContent -----------------------------------------------------------------------------------------------


def test_document_pdf_bytes() -> None:
    block = round_trips(DocumentContent(PDF, filename="report.pdf", title="Q3 report"))
    assert block.type == "document"
    assert block.data == PDF
    assert block.media_type == "application/pdf"
    assert block.filename == "report.pdf"
    assert block.title == "Q3 report"


@pytest.mark.parametrize("data", [b"plain words", "naïve café ✓".encode(), b"a,b\n1,2\n"])
def test_document_utf8_bytes_are_text(data: bytes) -> None:
    block = round_trips(DocumentContent(data))
    assert block.media_type == "text/plain"
    assert block.text() == data.decode("utf-8")


def test_document_from_text() -> None:
    block = round_trips(DocumentContent.from_text("héllo ✓", filename="note.txt", title="Note"))
    assert block.data == "héllo ✓".encode()
    assert block.media_type == "text/plain"
    assert block.text() == "héllo ✓"
    assert (block.filename, block.title) == ("note.txt", "Note")
    md = round_trips(DocumentContent.from_text("# Title", media_type="text/markdown"))
    assert md.media_type == "text/markdown"
    assert md.text() == "# Title"


def test_document_from_file_pdf(tmp_path: Path) -> None:
    path = tmp_path / "paper.bin"  # the bytes decide
    path.write_bytes(PDF)
    block = round_trips(DocumentContent.from_file(path, title="Paper"))
    assert block.data == PDF
    assert block.media_type == "application/pdf"
    assert block.filename == "paper.bin"
    assert block.title == "Paper"


def test_document_from_file_txt(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("line one\nline two\n", encoding="utf-8")
    block = round_trips(DocumentContent.from_file(str(path)))
    assert block.media_type == "text/plain"
    assert block.filename == "notes.txt"
    assert block.text() == "line one\nline two\n"


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("table.csv", "café,prix\n".encode("latin-1"), "text/csv"),
        ("data.json", '{"k": "v"}'.encode("utf-16"), "application/json"),
        ("scan.png", image_bytes("PNG"), "image/png"),
    ],
)
def test_document_from_file_binary_uses_extension(tmp_path: Path, name: str, data: bytes, mime: str) -> None:
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    path = tmp_path / name
    path.write_bytes(data)
    block = round_trips(DocumentContent.from_file(path))
    assert block.data == data
    assert block.media_type == mime
    assert block.filename == name


def test_document_from_file_explicit_media_type(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b\n", encoding="utf-8")
    assert DocumentContent.from_file(path, media_type="text/csv").media_type == "text/csv"


def test_document_from_file_unknown_binary(tmp_path: Path) -> None:
    path = tmp_path / "blob.qqzz"
    path.write_bytes(b"\xff\xfe\xfd\x00\x81")
    with pytest.raises(MediaError, match="unknown document format"):
        DocumentContent.from_file(path)


def test_document_from_file_missing_and_directory(tmp_path: Path) -> None:
    missing = tmp_path / "gone.pdf"
    with pytest.raises(MediaError, match=re.escape(f"cannot read document file {str(missing)!r}")):
        DocumentContent.from_file(missing)
    with pytest.raises(MediaError, match=re.escape(f"cannot read document file {str(tmp_path)!r}")):
        DocumentContent.from_file(tmp_path)


@pytest.mark.parametrize(
    ("url", "mime"),
    [
        ("https://example.test/paper.pdf", "application/pdf"),
        ("https://example.test/table.csv", "text/csv"),
        ("https://example.test/doc", ""),
    ],
)
def test_document_from_url(url: str, mime: str) -> None:
    block = round_trips(DocumentContent.from_url(url, filename="f", title="t"))
    assert block.url == url
    assert block.data is None
    assert block.media_type == mime
    assert (block.filename, block.title) == ("f", "t")
    assert DocumentContent(url) == DocumentContent.from_url(url)


def test_document_data_url() -> None:
    block = round_trips(DocumentContent("data:application/json,%7B%22a%22%3A1%7D"))
    assert block.data == b'{"a":1}'
    assert block.media_type == "application/json"
    assert round_trips(DocumentContent(f"data:;base64,{b64(PDF)}")).media_type == "application/pdf"


def test_document_from_base64() -> None:
    block = round_trips(DocumentContent.from_base64(b64(PDF), filename="a.pdf"))
    assert block.data == PDF
    assert block.media_type == "application/pdf"
    assert block.filename == "a.pdf"
    xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    binary = round_trips(DocumentContent.from_base64(b64(b"PK\x03\x04\xff"), media_type=xlsx))
    assert binary.media_type == xlsx


def test_document_from_file_id() -> None:
    block = round_trips(
        DocumentContent.from_file_id("file-doc", media_type="application/pdf", filename="a.pdf", title="A")
    )
    assert block.file_id == "file-doc"
    assert block.data is None
    assert (block.media_type, block.filename, block.title) == ("application/pdf", "a.pdf", "A")


def test_document_to_base64() -> None:
    assert DocumentContent(PDF).to_base64() == [(b64(PDF), "application/pdf")]
    assert DocumentContent.from_url("https://example.test/a.pdf").to_base64() == [("https://example.test/a.pdf", "")]
    with pytest.raises(MediaError, match="DocumentContent refers to provider file 'file-doc'"):
        DocumentContent.from_file_id("file-doc").to_base64()


def test_document_undecodable_binary_without_media_type() -> None:
    with pytest.raises(MediaError, match=r"unknown document format \(neither PDF nor UTF-8 text\); pass media_type"):
        DocumentContent(b"\x89\xff\xfe binary")
    with pytest.raises(MediaError, match="unknown document format"):
        DocumentContent.from_base64(b64(b"\xc3\x28"))
    block = round_trips(DocumentContent(b"\x89\xff\xfe binary", media_type="application/octet-stream"))
    assert block.media_type == "application/octet-stream"


@pytest.mark.parametrize("text", ["just some words", "aGVsbG8=", "report.pdf", "/tmp/report.pdf"])
def test_document_plain_str_is_refused(text: str) -> None:
    with pytest.raises(ValidationError, match="a str must be a URL") as info:
        DocumentContent(text)
    assert only_violation(info.value) == ("document", "type")


@pytest.mark.parametrize(("value", "type_name"), [(1, "int"), ([b"%PDF"], "list"), (None, "NoneType")])
def test_document_wrong_type(value: Any, type_name: str) -> None:
    with pytest.raises(ValidationError, match=f"got {type_name}") as info:
        DocumentContent(value)
    assert only_violation(info.value) == ("document", "type")


def test_document_wrong_field_types() -> None:
    with pytest.raises(ValidationError) as info:
        DocumentContent(PDF, filename=None)  # type: ignore[arg-type]
    assert only_violation(info.value) == ("filename", "type")
    with pytest.raises(ValidationError) as info:
        DocumentContent.from_text(b"bytes")  # type: ignore[arg-type]
    assert only_violation(info.value) == ("text", "type")


def test_document_invalid_media_type() -> None:
    with pytest.raises(ValidationError) as info:
        DocumentContent(PDF, media_type="pdf")
    assert only_violation(info.value) == ("document.media_type", "string.pattern")


def test_document_from_url_relative() -> None:
    with pytest.raises(ValidationError) as info:
        DocumentContent.from_url("docs/a.pdf")
    assert only_violation(info.value) == ("url", "string.uri")


def test_document_invalid_base64() -> None:
    with pytest.raises(MediaError, match="invalid base64 for document"):
        DocumentContent.from_base64("%PDF-1.7")


def test_document_text_of_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("déjà vu".encode("latin-1"))
    block = round_trips(DocumentContent.from_file(path))
    assert block.media_type == "text/plain"  # from the extension
    with pytest.raises(MediaError, match=r"the document \(text/plain\) is not UTF-8 text"):
        block.text()


def test_document_text_of_reference() -> None:
    with pytest.raises(MediaError, match="is a reference"):
        DocumentContent.from_url("https://example.test/a.txt").text()
    with pytest.raises(MediaError, match="is a reference"):
        DocumentContent.from_file_id("file-1").text()


# --- decoding ------------------------------------------------------------------------------------------------------


def test_garbage_bytes_raise_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"not a valid agentmsg\.v1\.Content encoding"):
        ContentBase.from_bytes(b"\xff\xff garbage")
    with pytest.raises(DecodeError):
        ImageContent.from_bytes(b"\xff\xff garbage")


def test_decoding_as_the_wrong_class(png: bytes) -> None:
    with pytest.raises(DecodeError, match="expected AudioContent, got ImageContent"):
        AudioContent.from_bytes(ImageContent(png).to_bytes())
    with pytest.raises(DecodeError, match="expected DocumentContent, got ImageContent"):
        DocumentContent.from_json(ImageContent(png).to_json())


def test_media_blocks_compare_by_value(png: bytes) -> None:
    assert ImageContent(png) == ImageContent(b64(png))
    assert ImageContent(png) != ImageContent(png, detail="low")
    assert ImageContent(png) != ImageContent(png, media_type="image/apng")
    assert DocumentContent(PDF) != DocumentContent(PDF, filename="a.pdf")


def test_url_media_types_ignore_query_and_fragment() -> None:
    assert ImageContent.from_url("https://cdn.test/cat.png?w=200#x").media_type == "image/png"
    assert AudioContent.from_url("https://cdn.test/a.wav?sig=1").media_type == "audio/wav"


def test_wav_is_one_media_type_whatever_the_source() -> None:
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
    assert AudioContent(wav).media_type == AudioContent.from_url("https://x.test/a.wav").media_type == "audio/wav"


def test_document_file_type_from_extension_before_utf8(tmp_path: Path) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,2\n")
    assert DocumentContent.from_file(csv).media_type == "text/csv"
    plain = tmp_path / "notes"
    plain.write_text("no extension")
    assert DocumentContent.from_file(plain).media_type == "text/plain"


def test_empty_document_is_refused() -> None:
    with pytest.raises(MediaError, match="document data is empty"):
        DocumentContent(b"")


def test_non_image_formats_pillow_reads_are_refused_as_not_images() -> None:
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n"
    with pytest.raises(MediaError, match="not an image"):
        ImageContent(eps)


def test_pillow_warnings_do_not_escape() -> None:
    # A TIFF header with corrupt EXIF makes Pillow warn; the suite turns warnings into errors.
    with pytest.raises(MediaError):
        ImageContent(b"II*\x00\x08\x00\x00\x00")


def test_data_url_declared_type_yields_to_the_bytes() -> None:
    jpeg = image_bytes("JPEG")
    block = ImageContent("data:image/png;base64," + base64.b64encode(jpeg).decode())
    assert block.media_type == "image/jpeg"
    assert ImageContent("DATA:image/jpeg;base64," + base64.b64encode(jpeg).decode()).media_type == "image/jpeg"
    assert AudioContent.from_url("data:audio/ogg;base64,T2dnUw==").media_type == "audio/ogg"
