"""Render the contract's proto comments as Markdown: `make docs` writes docs/proto.md.

    .venv/bin/python scripts/proto_docs.py [--out docs/proto.md]
    .venv/bin/python scripts/proto_docs.py --check      # fail when docs/proto.md is not what the protos give

Reads a descriptor set with source info, made by the pinned protoc (``python -m grpc_tools.protoc
--include_source_info``) over proto/agentmsg/v1/*.proto, and lists every file, service and method (request,
response, streaming), message and field (number, type, label, oneof, protovalidate rules) and enum and value,
each with its comment. The output depends only on the protos, so it is the same on every machine.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

from buf.validate import validate_pb2  # registers the buf.validate option extensions for parsing

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
SOURCES = "agentmsg/v1"
OUT = ROOT / "docs" / "proto.md"
PACKAGE = "agentmsg.v1"
WKT_DOCS = "https://protobuf.dev/reference/protobuf/google.protobuf/"

# descriptor.proto field numbers, for SourceCodeInfo paths
FILE_PACKAGE, FILE_MESSAGE, FILE_ENUM, FILE_SERVICE, FILE_SYNTAX = 2, 4, 5, 6, 12
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE = 2
SERVICE_METHOD = 2

FDP = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    FDP.TYPE_DOUBLE: "double",
    FDP.TYPE_FLOAT: "float",
    FDP.TYPE_INT64: "int64",
    FDP.TYPE_UINT64: "uint64",
    FDP.TYPE_INT32: "int32",
    FDP.TYPE_FIXED64: "fixed64",
    FDP.TYPE_FIXED32: "fixed32",
    FDP.TYPE_BOOL: "bool",
    FDP.TYPE_STRING: "string",
    FDP.TYPE_BYTES: "bytes",
    FDP.TYPE_UINT32: "uint32",
    FDP.TYPE_SFIXED32: "sfixed32",
    FDP.TYPE_SFIXED64: "sfixed64",
    FDP.TYPE_SINT32: "sint32",
    FDP.TYPE_SINT64: "sint64",
}


def descriptor_set() -> descriptor_pb2.FileDescriptorSet:
    """Our files (not their imports), compiled by the pinned protoc with comments kept."""
    protos = sorted(p.relative_to(PROTO).as_posix() for p in (PROTO / SOURCES).glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "agentmsg.binpb"
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO}", "--include_source_info",
             f"--descriptor_set_out={out}", *protos],
            cwd=ROOT,
            check=True,
        )  # fmt: skip
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


class Comments:
    """The comments of one file, by SourceCodeInfo path."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        self._by_path = {tuple(loc.path): loc for loc in file.source_code_info.location}

    def block(self, *path: int) -> str:
        """The element's comment as Markdown paragraphs (detached comments before it included)."""
        loc = self._by_path.get(path)
        if loc is None:
            return ""
        parts = [*loc.leading_detached_comments, loc.leading_comments, loc.trailing_comments]
        return "\n\n".join(text for text in (_dedent(p) for p in parts) if text)

    def line(self, *path: int) -> str:
        """The comment on one line, for a table cell."""
        return cell(" ".join(self.block(*path).split()))


def _dedent(comment: str) -> str:
    lines = [line[1:] if line.startswith(" ") else line for line in comment.strip("\n").split("\n")]
    return "\n".join(lines).strip()


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def anchor(name: str) -> str:
    """GitHub's anchor for a heading `` `name` ``."""
    return re.sub(r"[^a-z0-9_-]", "", name.lower())


def type_link(type_name: str) -> str:
    name = type_name.lstrip(".")
    if name.startswith(PACKAGE + "."):
        short = name[len(PACKAGE) + 1 :]
        return f"[`{short}`](#{anchor(short)})"
    if name.startswith("google.protobuf."):
        return f"[`{name}`]({WKT_DOCS}#{name.rsplit('.', 1)[1].lower()})"
    return f"`{name}`"


def rules_text(rules: Any, prefix: str = "") -> Iterator[str]:
    """protovalidate rules as short ``path = value`` items; CEL rules by their id."""
    for field, value in rules.ListFields():
        path = f"{prefix}{field.name}"
        if field.name == "cel":
            for rule in value:
                yield f"`{rule.id}`: {rule.message}" if rule.message else f"`{rule.id}`"
        elif field.message_type is not None:
            yield from rules_text(value, path + ".")
        elif field.enum_type is not None:
            yield f"`{path} = {field.enum_type.values_by_number[value].name}`"
        else:
            yield f"`{path} = {_literal(value)}`"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (int, bytes)):
        return repr(value)
    return "[" + ", ".join(_literal(v) for v in value) + "]"


def field_type(field: descriptor_pb2.FieldDescriptorProto, maps: dict[str, descriptor_pb2.DescriptorProto]) -> str:
    if field.type_name.lstrip(".") in maps:
        entry = maps[field.type_name.lstrip(".")]
        key, value = entry.field[0], entry.field[1]
        return f"map<{field_type(key, maps)}, {field_type(value, maps)}>"
    base = SCALARS.get(field.type) or type_link(field.type_name)
    if field.label == FDP.LABEL_REPEATED:
        return f"repeated {base}"
    if field.proto3_optional:
        return f"optional {base}"
    return base


def render_message(
    out: list[str],
    comments: Comments,
    message: descriptor_pb2.DescriptorProto,
    path: tuple[int, ...],
    scope: str,
    maps: dict[str, descriptor_pb2.DescriptorProto],
) -> None:
    name = f"{scope}{message.name}"
    out += [f"#### `{name}`", ""]
    if text := comments.block(*path):
        out += [text, ""]
    if message.options.HasExtension(validate_pb2.message):
        out += [f"Rule: {item}" for item in rules_text(message.options.Extensions[validate_pb2.message])]
        out.append("")
    real_oneofs = {
        i
        for i, _ in enumerate(message.oneof_decl)
        if any(f.HasField("oneof_index") and f.oneof_index == i and not f.proto3_optional for f in message.field)
    }
    for i, oneof in enumerate(message.oneof_decl):
        if i not in real_oneofs:
            continue
        arms = ", ".join(f"`{f.name}`" for f in message.field if f.HasField("oneof_index") and f.oneof_index == i)
        required = ""
        if oneof.options.HasExtension(validate_pb2.oneof) and oneof.options.Extensions[validate_pb2.oneof].required:
            required = " (required: exactly one)"
        description = comments.line(*path, MESSAGE_ONEOF, i)
        out += [f"- oneof `{oneof.name}`{required}: {arms}. {description}".rstrip(), ""]
    if message.field:
        out += ["| field | number | type | description | rules |", "|---|---|---|---|---|"]
        for i, field in enumerate(message.field):
            kind = field_type(field, maps)
            if field.HasField("oneof_index") and field.oneof_index in real_oneofs:
                kind += f" (oneof `{message.oneof_decl[field.oneof_index].name}`)"
            if field.options.deprecated:
                kind += " (deprecated)"
            rules = ""
            if field.options.HasExtension(validate_pb2.field):
                rules = "; ".join(rules_text(field.options.Extensions[validate_pb2.field]))
            description = comments.line(*path, MESSAGE_FIELD, i)
            out.append(f"| `{field.name}` | {field.number} | {kind} | {description} | {cell(rules)} |")
        out.append("")
    else:
        out += ["No fields.", ""]
    reserved = [
        str(r.start) if r.end - r.start == 1 else f"{r.start} to {r.end - 1}" for r in message.reserved_range
    ] + [f"`{n}`" for n in message.reserved_name]
    if reserved:
        out += [f"Reserved: {', '.join(reserved)}.", ""]
    for i, nested in enumerate(message.nested_type):
        if not nested.options.map_entry:
            render_message(out, comments, nested, (*path, MESSAGE_NESTED, i), f"{name}.", maps)
    for i, enum in enumerate(message.enum_type):
        render_enum(out, comments, enum, (*path, MESSAGE_ENUM, i), f"{name}.")


def render_enum(
    out: list[str], comments: Comments, enum: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...], scope: str
) -> None:
    out += [f"#### `{scope}{enum.name}`", ""]
    if text := comments.block(*path):
        out += [text, ""]
    out += ["| value | number | description |", "|---|---|---|"]
    for i, value in enumerate(enum.value):
        out.append(f"| `{value.name}` | {value.number} | {comments.line(*path, ENUM_VALUE, i)} |")
    out.append("")


def render_service(
    out: list[str], comments: Comments, service: descriptor_pb2.ServiceDescriptorProto, path: tuple[int, ...]
) -> None:
    out += [f"#### `{service.name}`", ""]
    if text := comments.block(*path):
        out += [text, ""]
    out += ["| method | request | response | description |", "|---|---|---|---|"]
    for i, method in enumerate(service.method):
        request = ("stream " if method.client_streaming else "") + type_link(method.input_type)
        response = ("stream " if method.server_streaming else "") + type_link(method.output_type)
        description = comments.line(*path, SERVICE_METHOD, i)
        out.append(f"| `{method.name}` | {request} | {response} | {description} |")
    out.append("")


def map_entries(files: Sequence[descriptor_pb2.FileDescriptorProto]) -> dict[str, descriptor_pb2.DescriptorProto]:
    entries: dict[str, descriptor_pb2.DescriptorProto] = {}

    def walk(message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        for nested in message.nested_type:
            if nested.options.map_entry:
                entries[f"{scope}.{message.name}.{nested.name}"] = nested
            walk(nested, f"{scope}.{message.name}")

    for file in files:
        for message in file.message_type:
            walk(message, file.package)
    return entries


def render(files: Sequence[descriptor_pb2.FileDescriptorProto]) -> str:
    maps = map_entries(files)
    out = [
        f"# `{PACKAGE}` reference",
        "",
        "<!-- Generated by `make docs` (scripts/proto_docs.py) from the comments in proto/agentmsg/v1/*.proto."
        " Do not edit: change the proto comments and run `make docs`. -->",
        "",
        # The repository's files are named, not linked: this page is also the documentation site's, built from
        # docs/ alone, where a link out of docs/ would be broken.
        "The agentmsg contract, from the comments in the repository's `proto/agentmsg/v1/*.proto`. Rules are"
        " [protovalidate](https://github.com/bufbuild/protovalidate) constraints, enforced by every language's"
        " protovalidate and by the service (a violation is `INVALID_ARGUMENT`). What may change within v1 is in"
        " the repository's `proto/README.md`.",
        "",
    ]
    for file in files:
        summary = Comments(file).line(FILE_SYNTAX) or Comments(file).line(FILE_PACKAGE)
        summary = summary.split(". ")[0].rstrip(".")
        out.append(f"- [`{file.name}`](#{anchor(file.name)}): {summary}")
    out.append("")
    for file in files:
        comments = Comments(file)
        out += [f"## `{file.name}`", ""]
        if text := comments.block(FILE_SYNTAX) or comments.block(FILE_PACKAGE):
            out += [text, ""]
        imports = ", ".join(f"`{d}`" for d in file.dependency)
        out += [f"Package `{file.package}`; imports {imports}.", ""]
        if file.service:
            out += ["### Services", ""]
            for i, service in enumerate(file.service):
                render_service(out, comments, service, (FILE_SERVICE, i))
        if file.message_type:
            out += ["### Messages", ""]
            for i, message in enumerate(file.message_type):
                render_message(out, comments, message, (FILE_MESSAGE, i), "", maps)
        if file.enum_type:
            out += ["### Enums", ""]
            for i, enum in enumerate(file.enum_type):
                render_enum(out, comments, enum, (FILE_ENUM, i), "")
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default: docs/proto.md)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args()
    if not (PROTO / "buf" / "validate" / "validate.proto").is_file():
        sys.exit("proto/buf/validate/validate.proto is missing: run `make deps`")
    text = render(list(descriptor_set().file))
    out: Path = args.out.resolve()
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    if args.check:
        current = out.read_text(encoding="utf-8") if out.is_file() else ""
        if current != text:
            diff = difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True), str(out), "regenerated"
            )
            sys.stdout.writelines(list(diff)[:200])
            sys.exit(f"{shown} is stale: run `make docs` and commit it")
        print(f"{shown} is current")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")


if __name__ == "__main__":
    main()
