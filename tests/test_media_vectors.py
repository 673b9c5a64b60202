"""The media and shortcut vectors (tests/vectors/helpers/, scripts/make_media_vectors.py) in Python.

``media.json`` makes image, audio and document blocks from real small files, base64, data URLs, URLs, bytes no
sniffer knows and decompression-bomb headers, directly and through the seed-1 dict import; ``shortcuts.json`` calls
the citation and hosted-tool shortcuts. Each case names the block's ProtoJSON or the error. The TypeScript SDK runs
the same files (sdk/typescript/test/media.test.ts), so both languages sniff, refuse and build alike.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmsg import (
    AudioContent,
    Citation,
    CodeExecutionFile,
    CodeExecutionOutput,
    DocumentContent,
    HostedToolCallContent,
    HostedToolResultContent,
    ImageContent,
    MediaError,
    ProviderContent,
    SearchResult,
    ValidationError,
    WebFetchOutput,
)
from agentmsg.dict_form import content_from_dict

ROOT = Path(__file__).resolve().parents[1]
HELPERS = ROOT / "tests" / "vectors" / "helpers"
MEDIA: dict[str, Any] = json.loads((HELPERS / "media.json").read_text(encoding="utf-8"))
SHORTCUTS: dict[str, Any] = json.loads((HELPERS / "shortcuts.json").read_text(encoding="utf-8"))
FILES = {name: base64.b64decode(text) for name, text in MEDIA["files"].items()}


def media_input(spec: dict[str, Any]) -> Any:
    if "list" in spec:
        return [media_input(item) for item in spec["list"]]
    if "dict" in spec:
        return spec["dict"]
    if "file" in spec:
        return FILES[spec["file"]] if spec["file"] is not None else b""
    return spec["text"]


MAKERS: dict[str, Callable[..., Any]] = {
    "image": lambda value, **options: (
        ImageContent(images=value, **options) if isinstance(value, list) else ImageContent(value, **options)
    ),
    "audio": lambda value, **options: (
        AudioContent(audio=value, **options) if isinstance(value, list) else AudioContent(value, **options)
    ),
    "document": DocumentContent,
    "text_document": DocumentContent.from_text,
    "dict": content_from_dict,
}

CALLS: dict[str, Callable[..., Any]] = {
    "citation.web": Citation.web,
    "citation.document": Citation.document,
    "citation.search_result": Citation.search_result,
    "citation.file": Citation.file,
    "search_result": SearchResult,
    "code_execution_output": CodeExecutionOutput,
    "code_execution_file": CodeExecutionFile,
    "web_fetch_output": WebFetchOutput,
    "hosted_tool_call": HostedToolCallContent,
    "hosted_tool_result": HostedToolResultContent,
    "provider_content": ProviderContent,
}


def evaluate(value: Any) -> Any:
    """A vector value with its nested {call, args, kwargs} made."""
    if isinstance(value, dict) and "call" in value:
        args = [evaluate(a) for a in value["args"]]
        return CALLS[value["call"]](*args, **{k: evaluate(v) for k, v in value.get("kwargs", {}).items()})
    if isinstance(value, list):
        return [evaluate(item) for item in value]
    return value


def outcome(make: Callable[[], Any], expect: dict[str, Any]) -> dict[str, Any]:
    """What Python makes of a case, in the vectors' terms (a MediaError's message cut to the expected length)."""
    try:
        return {"json": make().to_json_dict()}
    except MediaError as exc:
        return {"error": "MediaError", "message": str(exc)[: len(expect.get("message", ""))]}
    except ValidationError as exc:
        violations = [{"field": v.field, "rule_id": v.rule_id} for v in exc.violations]
        return {"error": "ValidationError", "violations": violations}


def test_the_vectors_match_their_cases() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_media_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_vectors_cover_every_outcome_and_file() -> None:
    expected = [case["expect"] for case in MEDIA["cases"]]
    assert {e.get("error", "json") for e in expected} == {"json", "MediaError", "ValidationError"}
    used = {case["input"].get("file") for case in MEDIA["cases"]} | {
        item.get("file") for case in MEDIA["cases"] for item in case["input"].get("list", [])
    }
    assert set(FILES) <= used
    assert {case["call"] for case in SHORTCUTS["cases"]} | {"provider_content", "code_execution_file"} == set(CALLS)
    names = [case["name"] for case in MEDIA["cases"] + SHORTCUTS["cases"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", MEDIA["cases"], ids=[case["name"] for case in MEDIA["cases"]])
def test_python_makes_the_media_block_the_vector_says(case: dict[str, Any]) -> None:
    value = media_input(case["input"])
    make = MAKERS[case["make"]]
    assert outcome(lambda: make(value, **case["options"]), case["expect"]) == case["expect"]


@pytest.mark.parametrize("case", SHORTCUTS["cases"], ids=[case["name"] for case in SHORTCUTS["cases"]])
def test_python_shortcut_gives_what_the_vector_says(case: dict[str, Any]) -> None:
    call = {"call": case["call"], "args": case["args"], "kwargs": case["kwargs"]}
    made = outcome(lambda: evaluate(call), case["expect"])
    assert made == case["expect"]
    if "json" in made:
        assert evaluate(call).pb.DESCRIPTOR.full_name == case["type"]
