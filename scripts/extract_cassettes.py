"""Extract real provider traffic from recorded HTTP cassettes into ``tests/corpus/``.

Reads every vcrpy YAML cassette (``*.yaml`` under a ``cassettes`` folder) of a
git snapshot of a public repository, keeps the interactions with an official
endpoint of one of the four formats agentmsg converts, and writes their bodies
as data, each with its source in ``tests/corpus/manifest.json``:

==========================  ==============================================================
format                      endpoint
==========================  ==============================================================
``openai_chat``             ``api.openai.com/v1/chat/completions``
``openai_responses``        ``api.openai.com/v1/responses``
``anthropic``               ``api.anthropic.com/v1/messages``
``gemini``                  ``generativelanguage.googleapis.com`` / ``*aiplatform.googleapis.com``
                            ``:generateContent`` and ``:streamGenerateContent``
==========================  ==============================================================

Only exchanges the provider accepted (HTTP 200) are kept. A request body is one
``request`` case; a JSON response body one ``response`` case; a streamed body
(server-sent events, or Gemini's JSON array without ``alt=sse``) one ``stream``
case, stored as the raw text (``.sse``) or the array (``.json``). Identical
bodies are stored once. Cassettes hold the bodies either verbatim
(``body.string``) or parsed into YAML (pydantic-ai's ``parsed_body``); the
parsed form is written back as JSON. Nothing is removed from a body except
base64 data over ``--max-blob`` characters, which is cut to a valid prefix and
named in the case's manifest note. Headers are not kept (no keys leak).

Usage::

    python scripts/extract_cassettes.py GIT_DIR OWNER/NAME [--out tests/corpus] [--under tests/] [--skip PART]...

The corpus was made from ``pydantic/pydantic-ai`` with ``--skip`` for its three
cassettes whose responses were written by hand (``"status": "complete"``, a
value the API never sends): ``test_openai_previous_response_id.yaml``,
``test_openai_previous_response_id_auto_mode.yaml`` and
``test_openai_responses_verbosity.yaml``.

``GIT_DIR`` is a bare clone or ``.git`` directory; ``HEAD`` is read. Needs PyYAML, which the dev extra brings
(through ``langchain-core``). Running it again adds new cases and keeps the
manifest sorted; cases already listed are left as they are.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

_BASE64 = re.compile(r"^[A-Za-z0-9+/=_\s-]+$")  # standard and URL-safe alphabets


def _format(uri: str) -> str | None:
    match = re.match(r"https?://([^/]+)(/[^?]*)", uri)
    if match is None:
        return None
    host, path = match.groups()
    if host == "api.openai.com" and path.endswith("/v1/chat/completions"):
        return "openai_chat"
    if host == "api.openai.com" and path.endswith("/v1/responses"):
        return "openai_responses"
    if host == "api.anthropic.com" and path.endswith("/v1/messages"):
        return "anthropic"
    google = host == "generativelanguage.googleapis.com" or host.endswith("aiplatform.googleapis.com")
    if google and (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")):
        return "gemini"
    return None


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _body(side: dict[str, Any]) -> tuple[Any, str | None]:
    """(parsed JSON or None, raw text or None) of a request or response side."""
    if "parsed_body" in side:
        return side["parsed_body"], None
    body = side.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    text = _text(body)
    if text is None:
        return None, None
    try:
        return json.loads(text), text
    except ValueError:
        return None, text


def _is_sse(text: str) -> bool:
    return bool(re.match(r"\s*(event|data):", text))


def _shrink(value: Any, limit: int, cut: list[str], path: str = "") -> Any:
    """Cut base64 strings longer than ``limit`` to a valid base64 prefix; record each path."""
    if isinstance(value, dict):
        return {k: _shrink(v, limit, cut, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink(v, limit, cut, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str) and len(value) > limit:
        head, comma, data = value.partition(",")
        if not (comma and head.startswith("data:") and head.endswith(";base64")):
            head, comma, data = "", "", value
        if not _BASE64.match(data):
            return value
        data = re.sub(r"\s", "", data)
        prefix = head + comma + data[: limit - limit % 4]
        cut.append(f"{path} ({len(data)} base64 chars cut to {len(prefix) - len(head) - len(comma)})")
        return prefix
    return value


def _slug(path: str) -> str:
    stem = Path(path).with_suffix("").as_posix()
    stem = re.sub(r"^(tests/)?(models/)?", "", stem)
    stem = stem.replace("cassettes/", "").replace("/", ".")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem)


class Corpus:
    """The corpus folder and its manifest: cases added once each (by content), the manifest kept sorted."""

    def __init__(self, out: Path, *, max_blob: int, max_file: int) -> None:
        self.out = out
        self.max_blob = max_blob
        self.max_file = max_file
        self.path = out / "manifest.json"
        manifest = json.loads(self.path.read_text()) if self.path.exists() else {"cases": []}
        self.cases: list[dict[str, Any]] = manifest["cases"]
        self.ids = {case["id"] for case in self.cases}
        self.seen = {case["sha256"] for case in self.cases}

    def add(self, case_id: str, fmt: str, kind: str, recorded: Any, source: dict[str, Any], note: str) -> bool:
        """Store one body (a dict, a list of stream events, or raw SSE text); False when left out."""
        cut: list[str] = []
        body = recorded if isinstance(recorded, str) else _shrink(recorded, self.max_blob, cut)
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, indent=1) + "\n"
        digest = hashlib.sha256(text.encode()).hexdigest()
        if len(text.encode()) > self.max_file:
            print(f"skipped {case_id}: {len(text.encode())} bytes", file=sys.stderr)
            return False
        if digest in self.seen or case_id in self.ids:
            return False
        self.seen.add(digest)
        self.ids.add(case_id)
        file = f"{case_id}{'.sse' if isinstance(body, str) else '.json'}"
        (self.out / file).parent.mkdir(parents=True, exist_ok=True)
        (self.out / file).write_text(text)
        if cut:
            note += "; base64 data cut to keep the file small: " + "; ".join(cut)
        self.cases.append(
            {"id": case_id, "format": fmt, "kind": kind, "file": file, "source": source, "sha256": digest, "note": note}
        )
        return True

    def save(self) -> None:
        self.cases.sort(key=lambda case: case["id"])
        lines = ",\n".join(json.dumps(case, ensure_ascii=False) for case in self.cases)
        self.path.write_text('{"cases": [\n' + lines + "\n]}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("repo", help="owner/name, as GitHub spells it")
    parser.add_argument("--out", default="tests/corpus")
    parser.add_argument("--under", default="", help="only cassettes under this folder")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="leave out cassettes whose path contains this (hand-written ones, not recorded traffic); repeatable",
    )
    parser.add_argument("--max-blob", type=int, default=200_000, help="base64 strings longer than this are cut")
    parser.add_argument("--max-file", type=int, default=150_000, help="cases still larger than this are skipped")
    args = parser.parse_args()
    corpus = Corpus(Path(args.out), max_blob=args.max_blob, max_file=args.max_file)
    commit = _git(args.git_dir, "rev-parse", "HEAD").strip()
    files = [
        f
        for f in _git(args.git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        if "cassettes/" in f
        and f.endswith((".yaml", ".yml"))
        and f.startswith(args.under)
        and not any(skip in f for skip in args.skip)
    ]
    added = 0
    for name in files:
        try:
            cassette = yaml.safe_load(_git(args.git_dir, "show", f"HEAD:{name}"))
        except (yaml.YAMLError, subprocess.CalledProcessError) as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        if not isinstance(cassette, dict):
            continue
        for n, interaction in enumerate(cassette.get("interactions") or []):
            request, response = interaction.get("request") or {}, interaction.get("response") or {}
            fmt = _format(str(request.get("uri", "")))
            if fmt is None or (response.get("status") or {}).get("code") != 200:
                continue
            request_body, _ = _body(request)
            response_body, response_text = _body(response)
            if not isinstance(request_body, dict):
                continue
            if response_text is not None and _is_sse(response_text):
                stream: Any = response_text
            elif isinstance(response_body, list) and fmt == "gemini":
                stream = response_body
            else:
                stream = None
            parts: list[tuple[str, Any]] = [("request", request_body)]
            if stream is not None:
                parts.append(("stream", stream))
            elif isinstance(response_body, dict):
                parts.append(("response", response_body))
            source = {"repo": args.repo, "path": name, "commit": commit, "interaction": n}
            note = f"interaction {n}, {request.get('method', 'POST')} {request.get('uri')}"
            for kind, recorded in parts:
                added += corpus.add(f"{fmt}/{_slug(name)}.{n}.{kind}", fmt, kind, recorded, source, note)
    corpus.save()
    print(f"{added} cases added from {args.repo}@{commit[:12]}; {len(corpus.cases)} in the manifest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
