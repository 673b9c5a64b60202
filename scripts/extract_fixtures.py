"""Extract recorded provider responses and streams from SDK test fixtures into ``tests/corpus/``.

Some projects keep what the providers' APIs answered as fixture files rather
than HTTP cassettes: the Vercel AI SDK records a response body as
``<name>.json`` and a stream as ``<name>.chunks.txt`` (one decoded event or
chunk per line) under ``packages/<provider>/src/**/__fixtures__/``. This reads
every such file of a git snapshot under the folders given, keeps the ones in
one of the four formats agentmsg converts, recognised by their content (not
by their folder):

- a response: ``"type": "message"`` (Anthropic), ``"object": "chat.completion"``
  (Chat), ``"object": "response"`` (Responses), ``candidates`` or
  ``promptFeedback`` (Gemini);
- a stream: first event ``message_start`` (Anthropic), a
  ``chat.completion.chunk`` (Chat), ``response.*`` events (Responses), chunks
  with ``candidates`` (Gemini); stored as a JSON list of the events.

Error bodies and other APIs' fixtures (embeddings, images, Gemini's
Interactions API) do not match and are left out. Cases go into the same
manifest as :mod:`extract_cassettes` writes, with their source.

Usage::

    python scripts/extract_fixtures.py GIT_DIR OWNER/NAME --under packages/anthropic/ [--under ...] [--skip PART]...

The corpus took ``vercel/ai``'s ``packages/anthropic/``, ``packages/openai/``
and ``packages/google/`` with ``--skip`` for the fixtures written by hand to
test edge cases (made-up ids such as ``msg_dup``, ``resp_parallel``,
``resp_delete_001``, or another service): ``duplicate-message-start``,
``spliced-message-start``, ``github-copilot-id-rotation``,
``parallel-tool-call-wrapper``, ``openai-apply-patch-tool-delete`` and
``openai-shell-container.1.chunks`` (a stream with made-up ids whose text
deltas do not add up to the final text; its response body is recorded).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from extract_cassettes import Corpus, _git


def _response_format(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    if body.get("type") == "message" and body.get("role") == "assistant":
        return "anthropic"
    if body.get("object") == "chat.completion":
        return "openai_chat"
    if body.get("object") == "response":
        return "openai_responses"
    if "candidates" in body or "promptFeedback" in body:
        return "gemini"
    return None


def _stream_format(events: list[Any]) -> str | None:
    first = events[0] if events and isinstance(events[0], dict) else {}
    if first.get("type") == "message_start":
        return "anthropic"
    if first.get("object") == "chat.completion.chunk":
        return "openai_chat"
    if str(first.get("type", "")).startswith("response."):
        return "openai_responses"
    if "candidates" in first and "type" not in first:
        return "gemini"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("repo", help="owner/name, as GitHub spells it")
    parser.add_argument("--out", default="tests/corpus")
    parser.add_argument("--under", action="append", required=True, help="a folder to read fixtures from; repeatable")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="leave out fixtures whose path contains this (hand-written ones, not recorded traffic); repeatable",
    )
    parser.add_argument("--max-blob", type=int, default=200_000, help="base64 strings longer than this are cut")
    parser.add_argument("--max-file", type=int, default=150_000, help="cases still larger than this are skipped")
    args = parser.parse_args()
    corpus = Corpus(Path(args.out), max_blob=args.max_blob, max_file=args.max_file)
    commit = _git(args.git_dir, "rev-parse", "HEAD").strip()
    slug = args.repo.split("/")[1]
    added = 0
    for name in _git(args.git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if "__fixtures__/" not in name or not name.startswith(tuple(args.under)):
            continue
        if not name.endswith((".json", ".chunks.txt")) or any(skip in name for skip in args.skip):
            continue
        try:
            text = _git(args.git_dir, "show", f"HEAD:{name}")
        except subprocess.CalledProcessError:  # a file the snapshot lacks (4 MiB and more)
            print(f"skipped {name}: not in the snapshot", file=sys.stderr)
            continue
        try:
            if name.endswith(".chunks.txt"):
                body: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
                fmt, kind = _stream_format(body), "stream"
            else:
                body = json.loads(text)
                fmt, kind = _response_format(body), "response"
        except ValueError:
            continue
        if fmt is None:
            continue
        stem = Path(name).name.removesuffix(".chunks.txt").removesuffix(".json")
        package = name.split("/")[1] if name.startswith("packages/") else ""
        case_id = f"{fmt}/{slug}.{package}.{stem}.{kind}"
        source = {"repo": args.repo, "path": name, "commit": commit}
        note = "a recorded API response body" if kind == "response" else "recorded stream events, one per list item"
        added += corpus.add(case_id, fmt, kind, body, source, note)
    corpus.save()
    print(f"{added} cases added from {args.repo}@{commit[:12]}; {len(corpus.cases)} in the manifest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
