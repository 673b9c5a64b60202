"""The real-traffic corpus itself: every case listed exists, is what it says, and names its source."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
CASES = json.loads((CORPUS / "manifest.json").read_text())["cases"]
FORMATS = {"openai_chat", "openai_responses", "anthropic", "gemini"}
KINDS = {"request", "response", "stream"}


def test_every_case_has_its_file_and_source() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "case ids repeat"
    for case in CASES:
        assert case["format"] in FORMATS, case["id"]
        assert case["kind"] in KINDS, case["id"]
        assert case["id"].startswith(case["format"] + "/"), case["id"]
        assert case["id"].endswith("." + case["kind"]), case["id"]
        path = CORPUS / case["file"]
        assert path.is_file(), f"{case['id']}: {case['file']} is missing"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == case["sha256"], f"{case['id']}: the file changed"
        source = case["source"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", source["repo"]), case["id"]
        assert source["path"], case["id"]
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), case["id"]
        assert case["note"], case["id"]


def test_files_are_well_formed() -> None:
    for case in CASES:
        text = (CORPUS / case["file"]).read_text()
        if case["file"].endswith(".sse"):
            assert case["kind"] == "stream", case["id"]
            assert re.match(r"\s*(event|data):", text), case["id"]
        else:
            body = json.loads(text)
            expected = list if case["kind"] == "stream" else dict
            assert isinstance(body, expected), case["id"]


def test_no_stray_files() -> None:
    listed = {case["file"] for case in CASES} | {"manifest.json"}
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()}
    assert on_disk == listed


def test_no_credentials() -> None:
    # a key standing alone (not a stretch of some base64 blob that happens to spell "sk-")
    pattern = re.compile(r"(?<![\w+/=-])(sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35})(?![\w+/=-])")
    for case in CASES:
        assert not pattern.search((CORPUS / case["file"]).read_text()), case["id"]


def test_the_floors_are_met() -> None:
    kinds = Counter(case["kind"] for case in CASES)
    assert kinds["request"] + kinds["response"] >= 400
    assert kinds["stream"] >= 60
    by_format = Counter((case["format"], case["kind"]) for case in CASES)
    for fmt in FORMATS:
        for kind in KINDS:
            assert by_format[fmt, kind] >= 10, f"only {by_format[fmt, kind]} {fmt} {kind} cases"
