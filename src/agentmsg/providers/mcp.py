"""Model Context Protocol: tool definitions and tool results, both ways.

Pure dict transforms over the MCP wire shapes (``tools/list`` entries and
``tools/call`` results, camelCase as on the wire), under the loss rules of
:mod:`agentmsg.providers._common`.

Tool definitions (``Tool``):

- ``name``, ``title``, ``description`` ↔ the same :class:`~agentmsg.ToolDefinition`
  fields; ``inputSchema`` / ``outputSchema`` ↔ ``parameters`` / ``output_schema``
  (JSON Schema, key order kept); ``annotations`` hints ↔ ``read_only_hint``,
  ``destructive_hint``, ``idempotent_hint``, ``open_world_hint``
  (``annotations.title`` is read when the tool has no ``title``).
- A definition with no parameters is written as ``{"type": "object"}`` (MCP
  requires a schema). ``kind`` and ``strict`` have no MCP field: reported.
  Reading, ``icons``, ``execution`` and ``_meta`` are reported as dropped.

Tool results (``CallToolResult``) become a :class:`~agentmsg.ToolResultContent`:

- ``text`` → :class:`~agentmsg.TextContent`; ``image`` / ``audio`` (base64) →
  :class:`~agentmsg.ImageContent` / :class:`~agentmsg.AudioContent` with the bytes;
  an embedded ``resource`` → a :class:`~agentmsg.DocumentContent` holding the
  resource's text (UTF-8) or blob bytes, its URI as ``filename`` (an empty
  resource, which no document can be, becomes an empty text block); a
  ``resource_link`` → a :class:`~agentmsg.DocumentContent` by URL (``url`` = the
  URI, ``filename`` = ``name``, ``title``, ``media_type`` = ``mimeType``).
- ``isError`` ↔ ``is_error``.
- The structured part (``structuredContent``) and whatever a block carries
  beyond what its agentmsg block holds (``annotations``, ``_meta``, a link's
  ``description`` and ``size``, text-or-blob) are kept in the result's
  ``metadata`` under :data:`METADATA_KEY`, so :func:`to_mcp_result` gives the
  MCP result back unchanged. Read the structured part with
  :func:`structured_content`. (MCP asks a server that returns structured
  content to return its JSON as text as well: that text block is what a model
  sees.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentmsg import _media, _validation
from agentmsg.content import (
    AudioContent,
    ContentBase,
    DocumentContent,
    ImageContent,
    TextContent,
    ToolKind,
    ToolResultContent,
)
from agentmsg.errors import ValidationError, preview
from agentmsg.providers._common import ConversionReport, PayloadErrors, Reporter, json_type, split_media
from agentmsg.tools import ToolDefinition
from agentmsg.v1 import content_pb2

__all__ = [
    "METADATA_KEY",
    "from_mcp_result",
    "from_mcp_tools",
    "structured_content",
    "to_mcp_result",
    "to_mcp_tools",
]

TARGET = "MCP"
METADATA_KEY = "mcp"
"""The key of a tool result's ``metadata`` holding what MCP carries beyond the blocks."""

_HINTS = (
    ("readOnlyHint", "read_only_hint"),
    ("destructiveHint", "destructive_hint"),
    ("idempotentHint", "idempotent_hint"),
    ("openWorldHint", "open_world_hint"),
)
_TOOL_KEYS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript", "application/yaml")


# --- tool definitions -----------------------------------------------------------------------------------------


def _definitions(definitions: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    if isinstance(definitions, ToolDefinition):
        raise ValidationError.single("", "type", "expected a list of tool definitions, got a single definition")
    out = list(definitions)
    for i, definition in enumerate(out):
        if not isinstance(definition, ToolDefinition):
            raise ValidationError.single(
                f"[{i}]", "type", f"expected a ToolDefinition, got {type(definition).__name__}"
            )
    return out


def report_common_losses(definition: ToolDefinition, path: str, reporter: Reporter, *, holds: Sequence[str]) -> None:
    """Report the definition fields a format without them drops (``holds`` names those it has)."""
    if definition.kind is not None and "kind" not in holds:
        reporter.loss(f"{path}.kind", f"kind {definition.kind.value!r}", f"{reporter.target} tools have no kind")
    if definition.title and "title" not in holds:
        reporter.loss(f"{path}.title", "the title", f"{reporter.target} tools have no title")
    if definition.output_schema_json and "output_schema" not in holds:
        reporter.loss(f"{path}.output_schema", "the output schema", f"{reporter.target} tools have no output schema")
    for _, field in _HINTS:
        if getattr(definition, field) is not None and "hints" not in holds:
            reporter.loss(f"{path}.{field}", field, f"{reporter.target} tools have no behaviour hints")
    if definition.strict is not None and "strict" not in holds:
        reporter.loss(f"{path}.strict", "strict", f"{reporter.target} tools have no strict flag")


def to_mcp_tools(
    definitions: Iterable[ToolDefinition], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Tool definitions as MCP ``Tool`` objects (the ``tools`` of a ``tools/list`` result)."""
    reporter = Reporter(TARGET, report, strict=strict)
    out = [_to_mcp_tool(d, f"[{i}]", reporter) for i, d in enumerate(_definitions(definitions))]
    reporter.finish()
    return out


def _to_mcp_tool(definition: ToolDefinition, path: str, reporter: Reporter) -> dict[str, Any]:
    report_common_losses(definition, path, reporter, holds=("title", "output_schema", "hints"))
    tool: dict[str, Any] = {"name": definition.name}
    if definition.title:
        tool["title"] = definition.title
    if definition.description:
        tool["description"] = definition.description
    tool["inputSchema"] = definition.parameters if definition.parameters_json else {"type": "object"}
    if definition.output_schema_json:
        tool["outputSchema"] = definition.output_schema
    annotations = {wire: getattr(definition, field) for wire, field in _HINTS if getattr(definition, field) is not None}
    if annotations:
        tool["annotations"] = annotations
    return tool


def from_mcp_tools(
    tools: Sequence[Any] | Mapping[str, Any],
    *,
    kind: ToolKind | str | None = None,
    report: ConversionReport | None = None,
) -> list[ToolDefinition]:
    """Tool definitions from MCP ``Tool`` objects (a list, or a ``tools/list`` result with ``tools``).

    ``kind`` is given to every definition (MCP has none; a runner bridging an
    MCP server passes ``ToolKind.MCP``). A schema that is not a JSON object,
    a missing name, a hint that is not a boolean: every problem is raised at
    once in one :class:`~agentmsg.ValidationError`, each at its path. Fields
    agentmsg has no place for are reported (``report=``, else a warning).
    """
    definitions, problems = read_mcp_tools(tools, kind=kind, report=report)
    if problems:
        raise ValidationError([v for found in problems.values() for v in found.found], "MCP tools")
    return definitions


def read_mcp_tools(
    tools: Sequence[Any] | Mapping[str, Any],
    *,
    kind: ToolKind | str | None = None,
    report: ConversionReport | None = None,
) -> tuple[list[ToolDefinition], dict[int, PayloadErrors]]:
    """Like :func:`from_mcp_tools`, but a bad tool is left out: (the good definitions, the problems by index).

    A bridge uses this to serve the tools that are well formed and say which are not.
    """
    prefix = ""
    if isinstance(tools, Mapping):
        prefix = "tools"
        tools = tools.get("tools")  # type: ignore[assignment]
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise ValidationError.single(prefix, "type", f"expected a list of tools, got {json_type(tools)}", "MCP tools")
    reporter = Reporter("agentmsg (from MCP)", report, strict=False)
    out: list[ToolDefinition] = []
    problems: dict[int, PayloadErrors] = {}
    for i, tool in enumerate(tools):
        errors = PayloadErrors("MCP tool")
        definition = _from_mcp_tool(tool, f"{prefix}[{i}]", kind, errors, reporter)
        if errors.found or definition is None:
            problems[i] = errors
        else:
            out.append(definition)
    reporter.finish()
    return out, problems


def _schema(tool: Mapping[str, Any], key: str, path: str, errors: PayloadErrors, *, required: bool) -> Any:
    value = tool.get(key)
    if value is None:
        if required:
            errors.add(f"{path}.{key}", "required", "an MCP tool needs an inputSchema (a JSON Schema object)")
        return None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            errors.add(f"{path}.{key}", "json", f"the JSON Schema is a string that is not JSON: {exc}")
            return None
        errors.add(
            f"{path}.{key}", "type", f"the JSON Schema must be a JSON object, got a string ({json_type(parsed)})"
        )
        return None
    if not isinstance(value, Mapping):
        errors.add(
            f"{path}.{key}", "type", f"the JSON Schema must be a JSON object, got {json_type(value, article=True)}"
        )
        return None
    return value


def _from_mcp_tool(
    tool: Any, path: str, kind: ToolKind | str | None, errors: PayloadErrors, reporter: Reporter
) -> ToolDefinition | None:
    if not isinstance(tool, Mapping):
        errors.add(path, "type", f"expected a tool object, got {json_type(tool)}")
        return None
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        errors.add(f"{path}.name", "required", f"a tool needs a non-empty name, got {json_type(name)}")
    texts: dict[str, str] = {}
    for key in ("title", "description"):
        value = tool.get(key)
        if value is not None and not isinstance(value, str):
            errors.add(f"{path}.{key}", "type", f"expected a string, got {json_type(value)}")
        texts[key] = value if isinstance(value, str) else ""
    parameters = _schema(tool, "inputSchema", path, errors, required=True)
    output = _schema(tool, "outputSchema", path, errors, required=False)
    hints: dict[str, bool] = {}
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, Mapping):
        errors.add(f"{path}.annotations", "type", f"expected an object, got {json_type(annotations)}")
    elif annotations:
        for wire, field in _HINTS:
            value = annotations.get(wire)
            if value is None:
                continue
            if not isinstance(value, bool):
                errors.add(f"{path}.annotations.{wire}", "type", f"expected a boolean, got {json_type(value)}")
            else:
                hints[field] = value
        title = annotations.get("title")
        if isinstance(title, str) and title and not texts["title"]:
            texts["title"] = title
        elif title not in (None, texts["title"]):
            reporter.loss(f"{path}.annotations.title", "the annotations title", "the tool's own title is kept")
        for key in annotations:
            if key != "title" and key not in dict(_HINTS):
                reporter.loss(f"{path}.annotations.{key}", f"annotation {preview(key)}", "agentmsg has no field for it")
    for key in tool:
        if key not in _TOOL_KEYS:
            reporter.loss(f"{path}.{key}", preview(key), "agentmsg tool definitions have no field for it")
    if errors.found:
        return None
    with errors.building(path):
        return ToolDefinition(
            name,  # type: ignore[arg-type]
            texts["description"],
            parameters,
            kind=kind,
            title=texts["title"],
            output_schema=output,
            **hints,
        )
    return None


# --- tool results ---------------------------------------------------------------------------------------------


def structured_content(result: ToolResultContent) -> dict[str, Any] | None:
    """The structured part of a result read from MCP (``structuredContent``), or None."""
    kept = result.metadata.get(METADATA_KEY)
    text = kept.get("structuredContent") if isinstance(kept, Mapping) else None
    if not isinstance(text, str):
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else None


def from_mcp_result(result: Mapping[str, Any], call_id: str, *, name: str = "", index: int = 0) -> ToolResultContent:
    """A ``tools/call`` result as the :class:`~agentmsg.ToolResultContent` answering ``call_id``.

    Bad input (a block without its data, base64 that does not decode, a
    ``structuredContent`` that is not an object...) raises one
    :class:`~agentmsg.ValidationError` naming every problem at its path.
    """
    plain = _plain_text_result(result, call_id, name, index)
    if plain is not None:
        return plain
    errors = PayloadErrors("MCP tool result")
    if not isinstance(result, Mapping):
        errors.add("", "type", f"expected a result object, got {json_type(result)}")
        errors.raise_if_any()
    content = result.get("content", [])
    if not isinstance(content, list):
        errors.add("content", "type", f"expected a list of content blocks, got {json_type(content)}")
        content = []
    is_error = result.get("isError", False)
    if not isinstance(is_error, bool):
        errors.add("isError", "type", f"expected a boolean, got {json_type(is_error)}")
    structured = result.get("structuredContent")
    if structured is not None and not isinstance(structured, Mapping):
        errors.add("structuredContent", "type", f"expected a JSON object, got {json_type(structured)}")
    blocks: list[Any] = []
    extras: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        path = f"content[{i}]"
        with errors.building(path):
            read = _from_block(block, path, errors)
            if read is not None:
                blocks.append(read[0])
                extras.append(read[1])
    kept: dict[str, Any] = {}
    if isinstance(structured, Mapping):
        # As JSON text: a Struct would not keep the object's key order.
        try:
            kept["structuredContent"] = json.dumps(
                structured, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            )
        except (TypeError, ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            errors.add("structuredContent", "json", f"not a JSON object agentmsg can keep: {reason}")
    errors.raise_if_any()
    if any(extras):
        kept["content"] = extras
    if result.get("_meta") is not None:
        kept["_meta"] = result["_meta"]
    with errors.building(""):
        return ToolResultContent(
            call_id,
            blocks,
            is_error=bool(is_error),
            metadata={METADATA_KEY: kept} if kept else None,
            name=name,
            index=index,
        )
    errors.raise_if_any()
    raise AssertionError("unreachable")  # pragma: no cover


_PLAIN_RESULT_KEYS = frozenset(("content", "isError"))
_RESULT_CHECK = _validation.checker(content_pb2.ToolResultContent.DESCRIPTOR)
_TEXT_BLOCK_KEYS = frozenset(("type", "text"))


def _plain_text_result(result: Any, call_id: str, name: str, index: int) -> ToolResultContent | None:
    """The commonest result, text blocks and nothing else, built straight into its message and checked once; None
    for any other result (or one that does not check), which :func:`from_mcp_result` then reads field by field."""
    if type(result) is not dict or not result.keys() <= _PLAIN_RESULT_KEYS:
        return None
    content, is_error = result.get("content", []), result.get("isError", False)
    if type(content) is not list or type(is_error) is not bool:
        return None
    pb = content_pb2.Content()
    arm = pb.tool_result
    try:
        arm.id, arm.name, arm.index, arm.is_error = call_id, name, index, is_error
        for block in content:
            if type(block) is not dict or block.keys() != _TEXT_BLOCK_KEYS or block["type"] != "text":
                return None
            text = block["text"]
            if type(text) is not str:
                return None
            arm.content.add().text.text = text
    except (TypeError, ValueError):  # not a value the message takes (a lone surrogate...): the full reading says why
        return None
    if not _RESULT_CHECK(arm):  # the result's own rules, not also the Content around it (its one arm)
        return None
    return ToolResultContent._wrap(pb)


def _string(block: Mapping[str, Any], key: str, path: str, errors: PayloadErrors, *, required: bool = True) -> str:
    value = block.get(key)
    if isinstance(value, str):
        return value
    if value is not None or required:
        errors.add(
            f"{path}.{key}", "type" if value is not None else "required", f"expected a string, got {json_type(value)}"
        )
    return ""


def _rest(block: Mapping[str, Any], used: Iterable[str]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in used}


def _from_block(block: Any, path: str, errors: PayloadErrors) -> tuple[ContentBase, dict[str, Any]] | None:
    if not isinstance(block, Mapping):
        errors.add(path, "type", f"expected a content block object, got {json_type(block)}")
        return None
    kind = block.get("type")
    if kind == "text":
        text = _string(block, "text", path, errors)
        rest = _rest(block, ("type", "text"))
        return (TextContent(text), {"type": kind, **rest} if rest else {}) if not errors.found else None
    if kind in ("image", "audio"):
        data = _string(block, "data", path, errors)
        mime = _string(block, "mimeType", path, errors)
        if errors.found:
            return None
        raw = _media.decode_base64(data, f"{path}.data")
        media: ContentBase = (
            ImageContent(raw, media_type=mime) if kind == "image" else AudioContent(raw, media_type=mime)
        )
        rest = _rest(block, ("type", "data", "mimeType"))
        return media, ({"type": kind, **rest} if rest else {})
    if kind == "resource_link":
        uri = _string(block, "uri", path, errors)
        link_name = _string(block, "name", path, errors)
        mime = _string(block, "mimeType", path, errors, required=False)
        title = _string(block, "title", path, errors, required=False)
        if errors.found:
            return None
        document = DocumentContent(uri, media_type=mime, filename=link_name, title=title)
        rest = _rest(block, ("type", "uri", "name", "mimeType", "title"))
        return document, {"type": kind, **rest}
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, Mapping):
            errors.add(f"{path}.resource", "type", f"expected a resource object, got {json_type(resource)}")
            return None
        where = f"{path}.resource"
        uri = _string(resource, "uri", where, errors)
        mime = _string(resource, "mimeType", where, errors, required=False)
        if "text" in resource:
            encoding, body = "text", _string(resource, "text", where, errors).encode("utf-8")
            mime = mime or "text/plain"
        elif "blob" in resource:
            encoding = "blob"
            blob = _string(resource, "blob", where, errors)
            body = _media.decode_base64(blob, f"{where}.blob") if not errors.found else b""
            mime = mime or "application/octet-stream"
        else:
            errors.add(where, "required", "an embedded resource needs its text or its blob")
            return None
        if errors.found:
            return None
        if not body:
            # An empty resource has no document to be: an empty text block stands for it, the resource kept whole.
            return TextContent(""), {"type": kind, "resource": dict(resource), **_rest(block, ("type", "resource"))}
        extras: dict[str, Any] = {"type": kind, "encoding": encoding, **_rest(block, ("type", "resource"))}
        if "mimeType" not in resource:
            extras["mimeType"] = None
        resource_rest = _rest(resource, ("uri", "mimeType", "text", "blob"))
        if resource_rest:
            extras["resource"] = resource_rest
        return DocumentContent(body, media_type=mime, filename=uri), extras
    errors.add(
        f"{path}.type",
        "enum",
        f"unknown MCP content type {preview(kind)} (text, image, audio, resource, resource_link)",
    )
    return None


def to_mcp_result(
    result: ToolResultContent, *, strict: bool = False, report: ConversionReport | None = None
) -> dict[str, Any]:
    """A :class:`~agentmsg.ToolResultContent` as an MCP ``tools/call`` result (a JSON-ready dict).

    What :func:`from_mcp_result` kept in ``metadata`` comes back. An image or
    clip by URL goes as a ``resource_link``; one by provider file id, which
    MCP cannot reach, is dropped and reported. ``terminate`` and the rest of
    ``metadata`` are for the application and never sent.
    """
    if not isinstance(result, ToolResultContent):
        raise ValidationError.single("", "type", f"expected a ToolResultContent, got {type(result).__name__}")
    reporter = Reporter(TARGET, report, strict=strict)
    kept = result.metadata.get(METADATA_KEY)
    kept = kept if isinstance(kept, Mapping) else {}
    listed = kept.get("content")
    extras: list[Any] = listed if isinstance(listed, list) else []
    content: list[dict[str, Any]] = []
    for i, block in enumerate(result.blocks):
        extra = extras[i] if i < len(extras) and isinstance(extras[i], Mapping) else {}
        for path, piece in split_media(block, f"content[{i}]", reporter):
            written = _to_block(piece, path, extra, reporter)
            if written is not None:
                content.append(written)
    out: dict[str, Any] = {"content": content}
    structured = structured_content(result)
    if structured is not None:
        out["structuredContent"] = structured
    if result.is_error:  # MCP reads a missing isError as false, and servers leave it out
        out["isError"] = True
    if kept.get("_meta") is not None:
        out["_meta"] = kept["_meta"]
    reporter.finish()
    return out


def _media_source(block: ImageContent | AudioContent | DocumentContent) -> tuple[str, Any]:
    if block.data is not None:
        return "data", block.data
    if block.url is not None:
        return "url", block.url
    return "file_id", block.file_id


def _overlay(base: dict[str, Any], extra: Mapping[str, Any], kind: str) -> dict[str, Any]:
    if extra.get("type") != kind:
        return base
    for key, value in extra.items():
        if key not in ("type", "encoding", "resource", "mimeType"):
            base[key] = copy.deepcopy(value)
    return base


def _to_block(block: Any, path: str, extra: Mapping[str, Any], reporter: Reporter) -> dict[str, Any] | None:
    if isinstance(block, TextContent):
        if extra.get("type") == "resource" and isinstance(extra.get("resource"), Mapping) and not block.content:
            empty = {"type": "resource", "resource": copy.deepcopy(dict(extra["resource"]))}
            return _overlay(empty, extra, "resource")
        return _overlay({"type": "text", "text": block.content}, extra, "text")
    if isinstance(block, (ImageContent, AudioContent)):
        kind = "image" if isinstance(block, ImageContent) else "audio"
        source, value = _media_source(block)
        if source == "data":
            return _overlay(
                {"type": kind, "data": _media.encode_base64(value), "mimeType": block.media_type}, extra, kind
            )
        if source == "url":
            reporter.loss(
                path, f"the {kind} block kind", f"MCP {kind} content is inline only: the URL goes as a resource_link"
            )
            linked: dict[str, Any] = {"type": "resource_link", "uri": value, "name": value.rsplit("/", 1)[-1] or value}
            if block.media_type:
                linked["mimeType"] = block.media_type
            return linked
        reporter.loss(path, f"{kind} {value!r} by provider file id", "an MCP client cannot fetch a provider's file")
        return None
    if isinstance(block, DocumentContent):
        source, value = _media_source(block)
        if source == "url":
            from_mcp = extra.get("type") == "resource_link"  # MCP's name, even empty; else the file's, or the URI
            name = block.filename if from_mcp else block.filename or value
            link: dict[str, Any] = {"type": "resource_link", "uri": value, "name": name}
            if block.title:
                link["title"] = block.title
            if block.media_type:
                link["mimeType"] = block.media_type
            return _overlay(link, extra, "resource_link")
        if source == "file_id":
            reporter.loss(
                path, f"document {value!r} by provider file id", "an MCP client cannot fetch a provider's file"
            )
            return None
        from_mcp = extra.get("type") == "resource"
        if from_mcp:
            encoding = extra.get("encoding")
        else:
            encoding = "text" if block.media_type.lower().startswith(_TEXT_TYPES) else "blob"
            if block.title:
                reporter.loss(f"{path}.title", "the document title", "MCP embedded resources have no title")
        uri = block.filename if "://" in block.filename or block.filename.startswith("urn:") else ""
        if not uri:
            uri = f"attachment:///{block.filename or f'document-{path}'}"
        resource: dict[str, Any] = {"uri": uri}
        if not (from_mcp and "mimeType" in extra and extra["mimeType"] is None):
            resource["mimeType"] = block.media_type
        try:
            text = value.decode("utf-8") if encoding == "text" else None
        except UnicodeDecodeError:
            text = None
        if text is not None:
            resource["text"] = text
        else:
            resource["blob"] = _media.encode_base64(value)
        if from_mcp and isinstance(extra.get("resource"), Mapping):
            resource.update(copy.deepcopy(dict(extra["resource"])))
        return _overlay({"type": "resource", "resource": resource}, extra, "resource")
    reporter.loss(path, f"a {type(block).__name__} block", "an MCP tool result holds text, images, audio and resources")
    return None
