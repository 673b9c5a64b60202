"""Write the media and shortcut vectors in tests/vectors/helpers/: inputs in; a block's ProtoJSON or an error out.

    .venv/bin/python scripts/make_media_vectors.py [--check]

``media.json``: each case makes one image, audio or document block (or imports a seed-1 content dict) from real small
files (tests/vectors/helpers/files/: PNG, JPEG, GIF and WebP written by Pillow, WAV, FLAC, Ogg Vorbis and MP3 by
libsndfile, a PDF by Pillow; made once, kept as they are), base64, data URLs, URLs, bytes no sniffer knows, and
headers changed to declare a decompression bomb. ``shortcuts.json``: each case calls one citation or hosted-tool
shortcut. What each case must give is written by hand below from the rules of src/agentmsg/_media.py and
src/agentmsg/content.py, never computed by either library.

Both languages run every case: tests/test_media_vectors.py (Python) and sdk/typescript/test/media.test.ts (Node).
``--check`` fails when the files differ from the cases (tests/test_media_vectors.py runs it).
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors" / "helpers"
FILES = OUT / "files"

Json = dict[str, Any]

raw: dict[str, bytes] = {
    "png": (FILES / "image.png").read_bytes(),
    "jpeg": (FILES / "image.jpg").read_bytes(),
    "gif": (FILES / "image.gif").read_bytes(),
    "webp": (FILES / "image.webp").read_bytes(),
    "webp_lossless": (FILES / "image-lossless.webp").read_bytes(),
    "webp_alpha": (FILES / "image-alpha.webp").read_bytes(),
    "mp3": (FILES / "audio.mp3").read_bytes(),
    # An ID3v2.4 tag (no frames, size 0) before the same MPEG frames, as most MP3 files start.
    "mp3_id3": b"ID3\x04\x00\x00\x00\x00\x00\x00" + (FILES / "audio.mp3").read_bytes(),
    "wav": (FILES / "audio.wav").read_bytes(),
    "ogg": (FILES / "audio.ogg").read_bytes(),
    "flac": (FILES / "audio.flac").read_bytes(),
    "pdf": (FILES / "document.pdf").read_bytes(),
    "text": "Grüße, agentmsg\n".encode(),
    "unknown": b"\x00\x01\x02\x03 agentmsg \xfe\xff\x00",
}


def png_sized(width: int, height: int) -> bytes:
    """The real PNG with its IHDR declaring ``width`` x ``height`` (CRC fixed): a decompression bomb's header."""
    png = raw["png"]
    body = b"IHDR" + struct.pack(">II", width, height) + png[24:29]
    return png[:12] + body + struct.pack(">I", zlib.crc32(body)) + png[33:]


def jpeg_sized(width: int, height: int) -> bytes:
    """The real JPEG with its frame header (SOFn) declaring ``width`` x ``height``."""
    jpg = bytearray(raw["jpeg"])
    i = 2
    while True:
        marker, length = jpg[i + 1], struct.unpack(">H", jpg[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            jpg[i + 5 : i + 9] = struct.pack(">HH", height, width)
            return bytes(jpg)
        i += 2 + length


raw["png_bomb"] = png_sized(10000, 10000)
raw["png_at_the_limit"] = png_sized(89478485, 1)
raw["png_over_the_limit"] = png_sized(89478486, 1)
raw["gif_bomb"] = raw["gif"][:6] + struct.pack("<HH", 10000, 10000) + raw["gif"][10:]
raw["jpeg_bomb"] = jpeg_sized(10000, 10000)
raw["webp_bomb"] = raw["webp"][:26] + struct.pack("<HH", 10000, 10000) + raw["webp"][30:]

b64 = {k: base64.b64encode(v).decode() for k, v in raw.items()}


def B(name: str | None) -> Json:  # noqa: N802 - short names keep the cases readable
    """A file's bytes as input (None: no bytes)."""
    return {"file": name}


def T(text: str) -> Json:  # noqa: N802
    """A string as input, given as is."""
    return {"text": text}


def img(name: str, mt: str, **extra: str) -> Json:
    return {"image": {"data": b64[name], "mediaType": mt, **extra}}


def ok(json_value: Json) -> Json:
    return {"json": json_value}


def media_err(prefix: str) -> Json:
    return {"error": "MediaError", "message": prefix}


def val_err(*pairs: tuple[str, str]) -> Json:
    return {"error": "ValidationError", "violations": [{"field": f, "rule_id": r} for f, r in pairs]}


cases: list[Json] = []


def case(name: str, make: str, input_: Json, expect: Json, **options: str) -> None:
    cases.append({"name": name, "make": make, "input": input_, "options": options, "expect": expect})


for name, mt in [
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("webp_lossless", "image/webp"),
    ("webp_alpha", "image/webp"),
    ("png_at_the_limit", "image/png"),
]:
    case(f"image_{name}_bytes", "image", B(name), ok(img(name, mt)))
for name in ["png_bomb", "png_over_the_limit", "gif_bomb", "jpeg_bomb", "webp_bomb"]:
    case(f"image_{name}", "image", B(name), media_err("image refused as a decompression bomb"))
case(
    "image_bomb_with_media_type",
    "image",
    B("png_bomb"),
    media_err("image refused as a decompression bomb"),
    media_type="image/png",
)
case(
    "image_bomb_in_a_data_url",
    "image",
    T("data:image/png;base64," + b64["gif_bomb"]),
    media_err("image refused as a decompression bomb"),
)
case(
    "images_item_bomb",
    "image",
    {"list": [B("png"), B("jpeg_bomb")]},
    media_err("images[1]: image refused as a decompression bomb"),
)
case("image_png_base64", "image", T(b64["png"]), ok(img("png", "image/png")))
wrapped = "\n".join(b64["jpeg"][i : i + 76] for i in range(0, len(b64["jpeg"]), 76))
case("image_base64_with_line_breaks", "image", T(wrapped), ok(img("jpeg", "image/jpeg")))
case("image_data_url", "image", T("data:image/png;base64," + b64["png"]), ok(img("png", "image/png")))
case("image_data_url_upper_case_scheme", "image", T("DATA:image/gif;base64," + b64["gif"]), ok(img("gif", "image/gif")))
case(
    "image_data_url_declared_type_loses_to_the_bytes",
    "image",
    T("data:image/jpeg;base64," + b64["png"]),
    ok(img("png", "image/png")),
)
case(
    "image_media_type_overrides_sniffing",
    "image",
    B("png"),
    ok(img("png", "image/x-custom")),
    media_type="image/x-custom",
)
case("image_unknown_bytes", "image", B("unknown"), media_err("unknown image format"))
case(
    "image_unknown_bytes_with_media_type",
    "image",
    B("unknown"),
    ok(img("unknown", "image/bmp")),
    media_type="image/bmp",
)
case(
    "image_unknown_bytes_data_url_declares_the_type",
    "image",
    T("data:image/bmp;base64," + b64["unknown"]),
    ok(img("unknown", "image/bmp")),
)
case(
    "image_unknown_bytes_data_url_declares_no_image",
    "image",
    T("data:text/plain;base64," + b64["unknown"]),
    media_err("unknown image format"),
)
case("image_pdf_bytes", "image", B("pdf"), media_err("unknown image format"))
case("image_empty_bytes", "image", {"file": None}, media_err("image data is empty"))
case("image_bad_base64", "image", T("not base64!"), media_err("invalid base64 for image"))
case("image_base64_without_padding", "image", T(b64["png"].rstrip("=")), media_err("invalid base64 for image"))
case(
    "image_base64_non_ascii_space",
    "image",
    T(b64["png"][:8] + "\u00a0" + b64["png"][8:]),
    media_err("invalid base64 for image"),
)
case("image_base64_padding_inside", "image", T("iVBO=w0K"), media_err("invalid base64 for image"))
case("image_empty_string", "image", T(""), media_err("invalid base64 for image"))
case(
    "image_data_url_holds_no_data",
    "image",
    T("data:image/png;base64,"),
    media_err("the data URL for image holds no data"),
)
case("image_data_url_bad_base64", "image", T("data:image/png;base64,@@@@"), media_err("invalid base64 for image"))
case(
    "image_url_type_from_its_path",
    "image",
    T("https://example.com/cat.png?size=2#top"),
    ok({"image": {"url": "https://example.com/cat.png?size=2#top", "mediaType": "image/png"}}),
)
case(
    "image_url_jpg",
    "image",
    T("https://example.com/a/b.JPG"),
    ok({"image": {"url": "https://example.com/a/b.JPG", "mediaType": "image/jpeg"}}),
)
case("image_url_no_extension", "image", T("https://example.com/cat"), ok({"image": {"url": "https://example.com/cat"}}))
case(
    "image_url_not_an_image_path",
    "image",
    T("https://example.com/a.pdf"),
    ok({"image": {"url": "https://example.com/a.pdf"}}),
)
case(
    "image_url_with_media_type",
    "image",
    T("gs://bucket/cat"),
    ok({"image": {"url": "gs://bucket/cat", "mediaType": "image/webp"}}),
    media_type="image/webp",
)
case("image_detail", "image", B("png"), ok(img("png", "image/png", detail="IMAGE_DETAIL_HIGH")), detail="high")
case("image_detail_unknown", "image", B("png"), val_err(("detail", "enum")), detail="ultra")
case("image_detail_checked_before_the_bytes", "image", B("unknown"), val_err(("detail", "enum")), detail="ultra")
case(
    "image_media_type_not_an_image",
    "image",
    B("png"),
    val_err(("image.media_type", "string.pattern")),
    media_type="text/plain",
)
case(
    "images_several",
    "image",
    {"list": [B("png"), T(b64["jpeg"]), T("https://example.com/c.gif"), T("data:image/webp;base64," + b64["webp"])]},
    ok(
        {
            "image": {
                "data": b64["png"],
                "mediaType": "image/png",
                "detail": "IMAGE_DETAIL_LOW",
                "moreImages": [
                    {"data": b64["jpeg"], "mediaType": "image/jpeg"},
                    {"url": "https://example.com/c.gif", "mediaType": "image/gif"},
                    {"data": b64["webp"], "mediaType": "image/webp"},
                ],
            }
        }
    ),
    detail="low",
)
case("images_one_in_a_list", "image", {"list": [B("gif")]}, ok(img("gif", "image/gif")))
case("images_item_unknown", "image", {"list": [B("png"), B("unknown")]}, media_err("images[1]: unknown image format"))
case("images_item_bad_base64", "image", {"list": [B("png"), T("!!")]}, media_err("images[1]: invalid base64 for image"))
case("images_empty_list", "image", {"list": []}, val_err(("images", "min_items")))


def AUD(name: str, mt: str) -> Json:  # noqa: N802
    return {"audio": {"data": b64[name], "mediaType": mt}}


for name, mt in [
    ("mp3", "audio/mpeg"),
    ("mp3_id3", "audio/mpeg"),
    ("wav", "audio/wav"),
    ("ogg", "audio/ogg"),
    ("flac", "audio/flac"),
    ("unknown", "audio/mpeg"),
]:
    case(f"audio_{name}_bytes", "audio", B(name), ok(AUD(name, mt)))
case("audio_wav_base64", "audio", T(b64["wav"]), ok(AUD("wav", "audio/wav")))
case(
    "audio_data_url_declared_type_wins",
    "audio",
    T("data:audio/webm;base64," + b64["wav"]),
    ok(AUD("wav", "audio/webm")),
)
case(
    "audio_data_url_declares_no_audio",
    "audio",
    T("data:application/octet-stream;base64," + b64["flac"]),
    ok(AUD("flac", "audio/flac")),
)
case("audio_media_type_overrides_sniffing", "audio", B("wav"), ok(AUD("wav", "audio/L16")), media_type="audio/L16")
case("audio_empty_bytes", "audio", {"file": None}, media_err("audio data is empty"))
case("audio_bad_base64", "audio", T("%%%%"), media_err("invalid base64 for audio"))
case(
    "audio_url_mp3",
    "audio",
    T("https://example.com/a.mp3"),
    ok({"audio": {"url": "https://example.com/a.mp3", "mediaType": "audio/mpeg"}}),
)
case(
    "audio_url_wav",
    "audio",
    T("https://example.com/a.wav"),
    ok({"audio": {"url": "https://example.com/a.wav", "mediaType": "audio/wav"}}),
)
case(
    "audio_url_not_an_audio_path",
    "audio",
    T("https://example.com/a.png"),
    ok({"audio": {"url": "https://example.com/a.png"}}),
)
case(
    "audio_several",
    "audio",
    {"list": [B("wav"), B("flac"), T("https://example.com/b.mp3")]},
    ok(
        {
            "audio": {
                "data": b64["wav"],
                "mediaType": "audio/wav",
                "moreClips": [
                    {"data": b64["flac"], "mediaType": "audio/flac"},
                    {"url": "https://example.com/b.mp3", "mediaType": "audio/mpeg"},
                ],
            }
        }
    ),
)
case("audio_item_empty_text", "audio", {"list": [B("wav"), T("")]}, media_err("audio[1]: invalid base64 for audio"))
case("audio_empty_list", "audio", {"list": []}, val_err(("audio", "min_items")))


def DOC(name: str, mt: str, **extra: str) -> Json:  # noqa: N802
    return {"document": {"data": b64[name], "mediaType": mt, **extra}}


case("document_pdf_bytes", "document", B("pdf"), ok(DOC("pdf", "application/pdf")))
case("document_text_bytes", "document", B("text"), ok(DOC("text", "text/plain")))
case("document_unknown_bytes", "document", B("unknown"), media_err("unknown document format"))
case(
    "document_unknown_bytes_with_media_type",
    "document",
    B("unknown"),
    ok(DOC("unknown", "application/octet-stream")),
    media_type="application/octet-stream",
)
case("document_empty_bytes", "document", {"file": None}, media_err("document data is empty"))
case("document_data_url", "document", T("data:application/pdf;base64," + b64["pdf"]), ok(DOC("pdf", "application/pdf")))
case(
    "document_data_url_percent_encoded",
    "document",
    T("data:text/csv,a%2Cb%0A1%2C2"),
    ok({"document": {"data": base64.b64encode(b"a,b\n1,2").decode(), "mediaType": "text/csv"}}),
)
case("document_data_url_no_type", "document", T("data:;base64," + b64["pdf"]), ok(DOC("pdf", "application/pdf")))
case(
    "document_url_pdf",
    "document",
    T("https://example.com/report.pdf"),
    ok({"document": {"url": "https://example.com/report.pdf", "mediaType": "application/pdf"}}),
)
case(
    "document_url_csv",
    "document",
    T("https://example.com/t.csv"),
    ok({"document": {"url": "https://example.com/t.csv", "mediaType": "text/csv"}}),
)
case(
    "document_url_no_extension",
    "document",
    T("https://example.com/report"),
    ok({"document": {"url": "https://example.com/report"}}),
)
case("document_base64_string_refused", "document", T(b64["pdf"]), val_err(("document", "type")))
case(
    "document_filename_and_title",
    "document",
    B("pdf"),
    ok(DOC("pdf", "application/pdf", filename="report.pdf", title="Q3 report")),
    filename="report.pdf",
    title="Q3 report",
)
case("text_document", "text_document", T("Grüße, agentmsg\n"), ok(DOC("text", "text/plain")))
case(
    "text_document_media_type",
    "text_document",
    T("# Title\n"),
    ok({"document": {"data": base64.b64encode(b"# Title\n").decode(), "mediaType": "text/markdown"}}),
    media_type="text/markdown",
)


def D(data: Json) -> Json:  # noqa: N802
    """A seed-1 content dict, imported."""
    return {"dict": data}


case(
    "dict_image_url_type_guessed",
    "dict",
    D({"type": "image", "images": ["https://example.com/a.png"]}),
    ok({"image": {"url": "https://example.com/a.png", "mediaType": "image/png"}}),
)
case(
    "dict_image_data_url_declared_type_loses_to_the_bytes",
    "dict",
    D({"type": "image", "images": ["data:image/jpeg;base64," + b64["png"]], "detail": "auto"}),
    ok(img("png", "image/png", detail="IMAGE_DETAIL_AUTO")),
)
case(
    "dict_images_media_types",
    "dict",
    D({"type": "image", "images": [b64["unknown"], b64["gif"]], "media_types": ["image/bmp", ""]}),
    ok(
        {
            "image": {
                "data": b64["unknown"],
                "mediaType": "image/bmp",
                "moreImages": [{"data": b64["gif"], "mediaType": "image/gif"}],
            }
        }
    ),
)
case(
    "dict_image_unknown_bytes",
    "dict",
    D({"type": "image", "images": [b64["png"], b64["unknown"]]}),
    val_err((".images[1]", "media")),
)
case(
    "dict_image_media_type_not_an_image",
    "dict",
    D({"type": "image", "images": ["https://example.com/a.png"], "media_type": "text/plain"}),
    val_err((".images[0].image.media_type", "string.pattern")),
)
case(
    "dict_audio_data_url_declared_type_wins",
    "dict",
    D({"type": "audio", "audio": ["data:audio/webm;base64," + b64["wav"]]}),
    ok(AUD("wav", "audio/webm")),
)
case("dict_audio_sniffed", "dict", D({"type": "audio", "audio": [b64["ogg"]]}), ok(AUD("ogg", "audio/ogg")))
case("dict_audio_empty_text", "dict", D({"type": "audio", "audio": [""]}), val_err((".audio[0]", "media")))

media = {
    "about": (
        "Media vectors, written by scripts/make_media_vectors.py, run by tests/test_media_vectors.py (Python) and "
        "sdk/typescript/test/media.test.ts (TypeScript). `files` are small real files as base64 (files/: PNG, JPEG, "
        "GIF, WebP by Pillow; WAV, FLAC, Ogg Vorbis, MP3 by libsndfile; a PDF by Pillow), UTF-8 text, bytes no sniffer "
        "knows, and the real PNG, GIF, JPEG and WebP with their header's size changed (`*_bomb`: 100,000,000 pixels; "
        "`png_at_the_limit`: Pillow's limit, 89,478,485; `png_over_the_limit`: one more). A case makes one block: "
        "`make` is image, audio, document, text_document, or dict (the seed-1 content dict `input.dict` imported); "
        "`input` is {file: name} (the bytes; null: no bytes), {text: s} (a string, given as is) or {list: [inputs]}; "
        "`options` are the factory's keywords in Python's names (media_type, detail, filename, title). `expect` is "
        "{json: the block's ProtoJSON} or {error: MediaError, message: how the message starts} or {error: "
        "ValidationError, violations: [{field, rule_id}]}."
    ),
    "files": b64,
    "cases": cases,
}

H: list[Json] = []


def hcase(
    name: str, call: str, args: list[Any], kwargs: Json, expect: Json, type_: str = "agentmsg.v1.Citation"
) -> None:
    H.append({"name": name, "call": call, "args": args, "kwargs": kwargs, "type": type_, "expect": expect})


pc = {
    "call": "provider_content",
    "args": [
        "anthropic",
        "web_search_result_location",
        '{"type":"web_search_result_location","encrypted_index":"Eo8B"}',
    ],
}
hcase(
    "citation_web",
    "citation.web",
    ["https://example.com/paris", "Paris"],
    {"result_index": 2, "cited_text": "Paris is the capital", "start_index": 0, "end_index": 8, "confidence": 0.5},
    ok(
        {
            "startIndex": 0,
            "endIndex": 8,
            "citedText": "Paris is the capital",
            "web": {"url": "https://example.com/paris", "title": "Paris", "resultIndex": 2},
            "confidence": 0.5,
        }
    ),
)
hcase(
    "citation_web_url_only_with_original",
    "citation.web",
    ["https://example.com/"],
    {"original": pc},
    ok(
        {
            "web": {"url": "https://example.com/"},
            "original": {"provider": "anthropic", "type": "web_search_result_location", "json": pc["args"][2]},
        }
    ),
)
hcase(
    "citation_web_negative_result_index",
    "citation.web",
    ["https://example.com/"],
    {"result_index": -1},
    val_err(("result_index", "int32.gte")),
)
hcase(
    "citation_web_span_reversed",
    "citation.web",
    ["https://example.com/"],
    {"start_index": 9, "end_index": 3},
    val_err(("", "citation.span")),
)
hcase(
    "citation_web_negative_start",
    "citation.web",
    ["https://example.com/"],
    {"start_index": -1},
    val_err(("start_index", "int32.gte")),
)
hcase(
    "citation_confidence_above_one",
    "citation.web",
    ["https://example.com/"],
    {"confidence": 1.5},
    val_err(("confidence", "double.gte_lte")),
)
hcase(
    "citation_document_chars",
    "citation.document",
    [1],
    {"title": "Report", "file_id": "file-1", "chars": [3, 10], "cited_text": "the figure"},
    ok(
        {
            "citedText": "the figure",
            "document": {
                "documentIndex": 1,
                "title": "Report",
                "fileId": "file-1",
                "chars": {"start": "3", "end": "10"},
            },
        }
    ),
)
hcase(
    "citation_document_pages",
    "citation.document",
    [0],
    {"pages": [1, 2]},
    ok({"document": {"pages": {"start": "1", "end": "2"}}}),
)
hcase(
    "citation_document_blocks",
    "citation.document",
    [2],
    {"blocks": [0, 1]},
    ok({"document": {"documentIndex": 2, "blocks": {"end": "1"}}}),
)
hcase(
    "citation_document_two_locations",
    "citation.document",
    [0],
    {"chars": [0, 1], "pages": [1, 2]},
    val_err(("location", "exclusive")),
)
hcase("citation_document_negative_index", "citation.document", [-1], {}, val_err(("document_index", "int32.gte")))
hcase(
    "citation_document_negative_range",
    "citation.document",
    [0],
    {"chars": [-2, 1]},
    val_err(("chars.start", "int64.gte")),
)
hcase(
    "citation_document_range_reversed",
    "citation.document",
    [0],
    {"pages": [5, 2]},
    val_err(("document.pages", "index_range.order")),
)
hcase(
    "citation_search_result",
    "citation.search_result",
    ["https://kb.example/1"],
    {"title": "KB", "search_result_index": 0, "blocks": [0, 2]},
    ok(
        {
            "searchResult": {
                "source": "https://kb.example/1",
                "title": "KB",
                "searchResultIndex": 0,
                "blocks": {"end": "2"},
            }
        }
    ),
)
hcase(
    "citation_file",
    "citation.file",
    ["file-9"],
    {"filename": "data.csv", "container_id": "cntr_1", "start_index": 4, "end_index": 4},
    ok({"startIndex": 4, "endIndex": 4, "file": {"fileId": "file-9", "filename": "data.csv", "containerId": "cntr_1"}}),
)
SR = "agentmsg.v1.SearchResult"
hcase(
    "search_result",
    "search_result",
    ["https://example.com/paris", "Paris", "The capital of France"],
    {"page_age": "2 days ago", "score": 0.75, "encrypted_content": "EqoB"},
    ok(
        {
            "url": "https://example.com/paris",
            "title": "Paris",
            "snippet": "The capital of France",
            "pageAge": "2 days ago",
            "encryptedContent": "EqoB",
            "score": 0.75,
        }
    ),
    SR,
)
hcase(
    "search_result_file",
    "search_result",
    ["", "notes.txt"],
    {"file_id": "file-3", "score": 0},
    ok({"title": "notes.txt", "fileId": "file-3", "score": 0}),
    SR,
)
CE = "agentmsg.v1.CodeExecutionOutput"
hcase(
    "code_execution_output",
    "code_execution_output",
    ["4\n", "", 0],
    {
        "files": [
            "file-1",
            {"call": "code_execution_file", "args": [], "kwargs": {"url": "https://files.example/plot.png"}},
        ]
    },
    ok({"stdout": "4\n", "returnCode": 0, "files": [{"fileId": "file-1"}, {"url": "https://files.example/plot.png"}]}),
    CE,
)
hcase(
    "code_execution_output_failed",
    "code_execution_output",
    ["", "Traceback", -1],
    {},
    ok({"stderr": "Traceback", "returnCode": -1}),
    CE,
)
hcase(
    "code_execution_output_encrypted",
    "code_execution_output",
    [],
    {"encrypted_stdout": "ZW5j"},
    ok({"encryptedStdout": "ZW5j"}),
    CE,
)
hcase(
    "web_fetch_output",
    "web_fetch_output",
    ["https://example.com/", "2026-01-02T03:04:05Z"],
    {},
    ok({"url": "https://example.com/", "retrievedAt": "2026-01-02T03:04:05Z"}),
    "agentmsg.v1.WebFetchOutput",
)
C = "agentmsg.v1.Content"
hcase(
    "hosted_tool_call_input_object",
    "hosted_tool_call",
    ["srvtoolu_1", "web_search"],
    {"input": {"query": "paris", "max": 3}, "kind": "web_search", "status": "completed"},
    ok(
        {
            "hostedToolCall": {
                "id": "srvtoolu_1",
                "name": "web_search",
                "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                "input": '{"query":"paris","max":3}',
                "status": "HOSTED_TOOL_STATUS_COMPLETED",
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_call_input_verbatim",
    "hosted_tool_call",
    ["mcp_1", "lookup"],
    {"input": '{ "q" : 1 }', "kind": "mcp", "server": "kb", "status_raw": "calling", "signature": "sig"},
    ok(
        {
            "hostedToolCall": {
                "id": "mcp_1",
                "name": "lookup",
                "kind": "HOSTED_TOOL_KIND_MCP",
                "input": '{ "q" : 1 }',
                "server": "kb",
                "statusRaw": "calling",
                "signature": "sig",
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_call_unknown_kind", "hosted_tool_call", ["x", "y"], {"kind": "teleport"}, val_err(("kind", "enum")), C
)
hcase(
    "hosted_tool_result_search",
    "hosted_tool_result",
    ["srvtoolu_1"],
    {
        "kind": "web_search",
        "search_results": [
            {"call": "search_result", "args": ["https://example.com/paris", "Paris"], "kwargs": {}},
            {
                "call": "search_result",
                "args": ["https://example.com/lyon", "Lyon", "A city"],
                "kwargs": {"page_age": "1 day"},
            },
        ],
        "queries": ["paris"],
        "status": "completed",
    },
    ok(
        {
            "hostedToolResult": {
                "callId": "srvtoolu_1",
                "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                "searchResults": {
                    "results": [
                        {"url": "https://example.com/paris", "title": "Paris"},
                        {"url": "https://example.com/lyon", "title": "Lyon", "snippet": "A city", "pageAge": "1 day"},
                    ],
                    "queries": ["paris"],
                },
                "status": "HOSTED_TOOL_STATUS_COMPLETED",
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_result_queries_only",
    "hosted_tool_result",
    ["ws_1"],
    {"queries": ["weather paris"]},
    ok({"hostedToolResult": {"callId": "ws_1", "searchResults": {"queries": ["weather paris"]}}}),
    C,
)
hcase(
    "hosted_tool_result_code_execution",
    "hosted_tool_result",
    ["srvtoolu_2", "4"],
    {
        "name": "code_execution",
        "kind": "code_execution",
        "code_execution": {"call": "code_execution_output", "args": ["4\n", "", 0], "kwargs": {}},
    },
    ok(
        {
            "hostedToolResult": {
                "callId": "srvtoolu_2",
                "name": "code_execution",
                "kind": "HOSTED_TOOL_KIND_CODE_EXECUTION",
                "codeExecution": {"stdout": "4\n", "returnCode": 0},
                "content": [{"text": {"text": "4"}}],
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_result_web_fetch",
    "hosted_tool_result",
    ["srvtoolu_3", "Example Domain"],
    {"kind": "web_fetch", "web_fetch": {"call": "web_fetch_output", "args": ["https://example.com/"], "kwargs": {}}},
    ok(
        {
            "hostedToolResult": {
                "callId": "srvtoolu_3",
                "kind": "HOSTED_TOOL_KIND_WEB_FETCH",
                "webFetch": {"url": "https://example.com/"},
                "content": [{"text": {"text": "Example Domain"}}],
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_result_error",
    "hosted_tool_result",
    ["srvtoolu_4"],
    {"kind": "web_search", "error_code": "max_uses_exceeded", "status": "failed"},
    ok(
        {
            "hostedToolResult": {
                "callId": "srvtoolu_4",
                "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
                "isError": True,
                "error": {"code": "max_uses_exceeded"},
                "status": "HOSTED_TOOL_STATUS_FAILED",
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_result_error_message",
    "hosted_tool_result",
    ["mcp_2"],
    {
        "error_message": "server down",
        "original": {
            "call": "provider_content",
            "args": ["openai", "mcp_call", '{"type":"mcp_call","error":"server down"}'],
        },
    },
    ok(
        {
            "hostedToolResult": {
                "callId": "mcp_2",
                "isError": True,
                "error": {"message": "server down"},
                "original": {
                    "provider": "openai",
                    "type": "mcp_call",
                    "json": '{"type":"mcp_call","error":"server down"}',
                },
            }
        }
    ),
    C,
)
hcase(
    "hosted_tool_result_two_bodies",
    "hosted_tool_result",
    ["c"],
    {"queries": ["q"], "web_fetch": {"call": "web_fetch_output", "args": ["https://example.com/"], "kwargs": {}}},
    val_err(("body", "exclusive")),
    C,
)

helpers = {
    "about": (
        "Shortcut vectors, written by scripts/make_media_vectors.py, run by tests/test_media_vectors.py (Python) and "
        "sdk/typescript/test/media.test.ts (TypeScript): each case calls one citation or hosted-tool shortcut with "
        "`args` (positional) and `kwargs` (keywords, in Python's names; TypeScript takes them in its options, "
        "camelCase) and expects the ProtoJSON of the `type` it returns ({json}) or a ValidationError's violations. A "
        "value {call, args, kwargs} is itself a call. Calls: citation.web / .document / .search_result / .file "
        "(Python Citation.*; TypeScript webCitation, documentCitation, searchResultCitation, fileCitation), "
        "search_result, code_execution_output, code_execution_file, web_fetch_output, hosted_tool_call, "
        "hosted_tool_result, provider_content."
    ),
    "cases": H,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the files differ from the cases")
    options = parser.parse_args()
    wanted = {
        "media.json": json.dumps(media, indent=1, ensure_ascii=False) + "\n",
        "shortcuts.json": json.dumps(helpers, indent=1, ensure_ascii=False) + "\n",
    }
    stale = [
        name for name, text in wanted.items() if not (OUT / name).is_file() or (OUT / name).read_text("utf-8") != text
    ]
    if options.check:
        if stale:
            print(f"stale: {', '.join(stale)}; run scripts/make_media_vectors.py", file=sys.stderr)
            return 1
        return 0
    for name in stale:
        (OUT / name).write_text(wanted[name], encoding="utf-8")
    print(f"{len(media['cases'])} media cases, {len(helpers['cases'])} shortcut cases; wrote {stale or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
