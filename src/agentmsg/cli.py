"""The ``agentmsg`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import agentmsg as am
from agentmsg import dict_form


def _load(path: str, form: str) -> am.Conversation:
    raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    if form == "auto":
        form = "protojson" if raw.lstrip()[:1] == b"{" else "seed1" if raw.lstrip()[:1] == b"[" else "binpb"
    if form == "binpb":
        return am.Conversation.from_bytes(raw)
    if form == "protojson":
        return am.Conversation.from_json(raw)
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise am.DecodeError(f"{path}: not JSON: {exc}") from None
    return am.Conversation(dict_form.messages_from_dicts(data))


def _validate(args: argparse.Namespace) -> int:
    conversation = _load(args.file, args.format)
    found = am.violations(conversation)
    for violation in found:
        print(violation)
    print(f"{len(conversation)} messages, {len(found)} violations")
    return 1 if found else 0


def _demo(_: argparse.Namespace) -> int:
    from agentmsg._demo import run

    return run(sys.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentmsg", description="The schema-first message contract for LLM agents.")
    parser.add_argument("--version", action="version", version=f"agentmsg {am.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="every role and content kind: validated, round-tripped, sized")
    demo.set_defaults(handler=_demo)
    check = commands.add_parser("validate", help="check a conversation file against the contract's rules")
    check.add_argument("file", help="a Conversation as binary protobuf, ProtoJSON, or seed-1 dicts (- for stdin)")
    check.add_argument("--format", choices=["auto", "binpb", "protojson", "seed1"], default="auto")
    check.set_defaults(handler=_validate)
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except (am.AgentMsgError, OSError) as exc:
        print(f"agentmsg: {exc}", file=sys.stderr)
        return 2
    return code
