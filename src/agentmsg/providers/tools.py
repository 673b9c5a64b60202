"""Tool definitions in every format, both ways: pure dict transforms.

=====================  ==========================================================================
format                 one tool
=====================  ==========================================================================
OpenAI Chat            ``{"type": "function", "function": {name, description, parameters, strict}}``
OpenAI Responses       ``{"type": "function", name, description, parameters, strict}``
Anthropic              ``{name, description, input_schema, strict}``
Gemini                 ``{"functionDeclarations": [{name, description, parametersJsonSchema,``
                       ``responseJsonSchema}]}`` (one ``Tool`` holding every declaration)
MCP                    ``{name, title, description, inputSchema, outputSchema, annotations}``
                       (:mod:`agentmsg.providers.mcp`)
=====================  ==========================================================================

``from_x_tools(to_x_tools(d)) == d`` for what format x holds; what it does not
hold (kind, title, output schema, MCP hints, strict) is reported, as every
converter reports (:mod:`agentmsg.providers._common`). The JSON Schema keeps
its key order; its text is written compact.

Reading, a tool the format runs itself (OpenAI ``web_search``, Anthropic
server tools, Gemini ``googleSearch``...) is not a definition agentmsg can
hold: it is reported as dropped. Gemini's ``parameters`` / ``response``
(OpenAPI-style ``Schema``: upper-case types, ``nullable``) are read into JSON
Schema; ``parametersJsonSchema`` / ``responseJsonSchema`` are read as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from agentmsg.errors import ValidationError, preview
from agentmsg.providers import mcp
from agentmsg.providers._common import ConversionReport, PayloadErrors, Reporter, json_type
from agentmsg.providers.mcp import report_common_losses
from agentmsg.tools import ToolDefinition

__all__ = [
    "TOOL_FORMATS",
    "ToolFormat",
    "from_anthropic_tools",
    "from_gemini_tools",
    "from_openai_chat_tools",
    "from_openai_responses_tools",
    "from_tools",
    "to_anthropic_tools",
    "to_gemini_tools",
    "to_openai_chat_tools",
    "to_openai_responses_tools",
    "to_tools",
]

ToolFormat = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "mcp"]
TOOL_FORMATS: tuple[ToolFormat, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp")


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


def _function(definition: ToolDefinition, schema_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": definition.name}
    if definition.description:
        out["description"] = definition.description
    if definition.parameters_json:
        out[schema_key] = definition.parameters
    if definition.strict is not None:
        out["strict"] = definition.strict
    return out


def _write(
    target: str,
    definitions: Iterable[ToolDefinition],
    strict: bool,
    report: ConversionReport | None,
    holds: Sequence[str],
    one: Callable[[ToolDefinition], dict[str, Any]],
) -> list[dict[str, Any]]:
    reporter = Reporter(target, report, strict=strict)
    out = []
    for i, definition in enumerate(_definitions(definitions)):
        report_common_losses(definition, f"[{i}]", reporter, holds=holds)
        out.append(one(definition))
    reporter.finish()
    return out


def to_openai_chat_tools(
    definitions: Iterable[ToolDefinition], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Chat Completions ``tools``: ``{"type": "function", "function": {...}}`` each."""
    return _write(
        "OpenAI Chat",
        definitions,
        strict,
        report,
        ("strict",),
        lambda d: {"type": "function", "function": _function(d, "parameters")},
    )


def to_openai_responses_tools(
    definitions: Iterable[ToolDefinition], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Responses ``tools``: ``{"type": "function", "name": ..., ...}`` each."""
    return _write(
        "OpenAI Responses",
        definitions,
        strict,
        report,
        ("strict",),
        lambda d: {"type": "function", **_function(d, "parameters")},
    )


def to_anthropic_tools(
    definitions: Iterable[ToolDefinition], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Anthropic Messages ``tools`` (``input_schema``; a tool with no parameters gets ``{"type": "object"}``)."""

    def one(definition: ToolDefinition) -> dict[str, Any]:
        tool = _function(definition, "input_schema")
        tool.setdefault("input_schema", {"type": "object"})
        if "strict" in tool:
            tool["strict"] = tool.pop("strict")
        return tool

    return _write("Anthropic", definitions, strict, report, ("strict",), one)


def to_gemini_tools(
    definitions: Iterable[ToolDefinition], *, strict: bool = False, report: ConversionReport | None = None
) -> list[dict[str, Any]]:
    """Gemini ``tools``: one ``Tool`` with every ``functionDeclarations`` entry (JSON Schema fields)."""

    def one(definition: ToolDefinition) -> dict[str, Any]:
        declaration: dict[str, Any] = {"name": definition.name}
        if definition.description:
            declaration["description"] = definition.description
        if definition.parameters_json:
            declaration["parametersJsonSchema"] = definition.parameters
        if definition.output_schema_json:
            declaration["responseJsonSchema"] = definition.output_schema
        return declaration

    declarations = _write("Gemini", definitions, strict, report, ("output_schema",), one)
    return [{"functionDeclarations": declarations}] if declarations else []


# --- reading --------------------------------------------------------------------------------------------------


class _ToolReader:
    def __init__(self, what: str, report: ConversionReport | None) -> None:
        self.errors = PayloadErrors(what)
        self.reporter = Reporter(f"agentmsg (from {what})", report, strict=False)
        self.out: list[ToolDefinition] = []

    def each(self, payload: Any, what: str = "a tool object") -> Iterator[tuple[Mapping[str, Any], str]]:
        """Each tool object with its path, from a list or a request body holding ``tools``; anything else in
        the list is an error at its path."""
        prefix = ""
        if isinstance(payload, Mapping):
            prefix, payload = "tools", payload.get("tools", [])
        if not isinstance(payload, list):
            self.errors.add(prefix, "type", f"expected a list of tools, got {json_type(payload)}")
            return
        for i, tool in enumerate(payload):
            path = f"{prefix}[{i}]"
            if isinstance(tool, Mapping):
                yield tool, path
            else:
                self.errors.add(path, "type", f"expected {what}, got {json_type(tool)}")

    def schema(self, fields: Mapping[str, Any], key: str, path: str) -> Any:
        value = fields.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.errors.add(f"{path}.{key}", "type", f"the JSON Schema must be a JSON object, got {json_type(value)}")
            return None
        return value

    def definition(
        self,
        fields: Mapping[str, Any],
        path: str,
        schema_key: str,
        known: Iterable[str],
        *,
        parameters: Any = None,
        output: Any = None,
    ) -> None:
        name = fields.get("name")
        if not isinstance(name, str) or not name:
            self.errors.add(f"{path}.name", "required", f"a tool needs a non-empty name, got {json_type(name)}")
            return
        description = fields.get("description", "")
        if not isinstance(description, str):
            self.errors.add(f"{path}.description", "type", f"expected a string, got {json_type(description)}")
            return
        strict = fields.get("strict")
        if strict is not None and not isinstance(strict, bool):
            self.errors.add(f"{path}.strict", "type", f"expected a boolean, got {json_type(strict)}")
            return
        if parameters is None:
            parameters = self.schema(fields, schema_key, path)
        for key in fields:
            if key not in known:
                self.reporter.loss(f"{path}.{key}", preview(key), "agentmsg tool definitions have no field for it")
        with self.errors.building(path):
            self.out.append(ToolDefinition(name, description, parameters, output_schema=output, strict=strict))

    def hosted(self, tool: Any, path: str, kind: Any) -> None:
        self.reporter.loss(
            path, f"the {preview(kind)} tool", "a tool the provider runs itself has no agentmsg definition"
        )

    def finish(self) -> list[ToolDefinition]:
        self.errors.raise_if_any()
        self.reporter.finish()
        return self.out


def from_openai_chat_tools(
    payload: Sequence[Any] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[ToolDefinition]:
    """Definitions from Chat Completions ``tools`` (or a request body holding them)."""
    reader = _ToolReader("OpenAI Chat tools", report)
    for tool, path in reader.each(payload):
        if tool.get("type") != "function":
            reader.hosted(tool, path, tool.get("type"))
        elif not isinstance(tool.get("function"), Mapping):
            reader.errors.add(f"{path}.function", "type", f"expected an object, got {json_type(tool.get('function'))}")
        else:
            reader.definition(
                tool["function"], f"{path}.function", "parameters", ("name", "description", "parameters", "strict")
            )
    return reader.finish()


def from_openai_responses_tools(
    payload: Sequence[Any] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[ToolDefinition]:
    """Definitions from Responses ``tools`` (or a request body holding them)."""
    reader = _ToolReader("OpenAI Responses tools", report)
    for tool, path in reader.each(payload):
        if tool.get("type") != "function":
            reader.hosted(tool, path, tool.get("type"))
        else:
            reader.definition(tool, path, "parameters", ("type", "name", "description", "parameters", "strict"))
    return reader.finish()


def from_anthropic_tools(
    payload: Sequence[Any] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[ToolDefinition]:
    """Definitions from Anthropic ``tools`` (or a request body holding them)."""
    reader = _ToolReader("Anthropic tools", report)
    for tool, path in reader.each(payload):
        if tool.get("type") not in (None, "custom"):
            reader.hosted(tool, path, tool.get("type"))
        else:
            reader.definition(tool, path, "input_schema", ("type", "name", "description", "input_schema", "strict"))
    return reader.finish()


def _json_schema(schema: Any) -> Any:
    """A Gemini OpenAPI-style ``Schema`` as JSON Schema: lower-case types, ``nullable`` as a null type."""
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower() if value != "TYPE_UNSPECIFIED" else value
        elif key == "nullable":
            continue
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: _json_schema(item) for name, item in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = _json_schema(value)
        else:
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def from_gemini_tools(
    payload: Sequence[Any] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[ToolDefinition]:
    """Definitions from Gemini ``tools`` (a list of ``Tool``, or a request body holding them)."""
    reader = _ToolReader("Gemini tools", report)
    known = ("name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema")
    for tool, path in reader.each(payload, "a Tool object"):
        for key in tool:
            if key not in ("functionDeclarations", "function_declarations"):
                reader.hosted(tool, f"{path}.{key}", key)
        declarations = tool.get("functionDeclarations", tool.get("function_declarations", []))
        if not isinstance(declarations, list):
            reader.errors.add(f"{path}.functionDeclarations", "type", f"expected a list, got {json_type(declarations)}")
            continue
        for j, declaration in enumerate(declarations):
            where = f"{path}.functionDeclarations[{j}]"
            if not isinstance(declaration, Mapping):
                reader.errors.add(where, "type", f"expected a FunctionDeclaration, got {json_type(declaration)}")
                continue
            parameters = reader.schema(declaration, "parametersJsonSchema", where)
            if parameters is None and declaration.get("parameters") is not None:
                parameters = _json_schema(reader.schema(declaration, "parameters", where))
            output = reader.schema(declaration, "responseJsonSchema", where)
            if output is None and declaration.get("response") is not None:
                output = _json_schema(reader.schema(declaration, "response", where))
            reader.definition(declaration, where, "", known, parameters=parameters or None, output=output or None)
    return reader.finish()


_WRITERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "openai-chat": to_openai_chat_tools,
    "openai-responses": to_openai_responses_tools,
    "anthropic": to_anthropic_tools,
    "gemini": to_gemini_tools,
    "mcp": mcp.to_mcp_tools,
}
_READERS: dict[str, Callable[..., list[ToolDefinition]]] = {
    "openai-chat": from_openai_chat_tools,
    "openai-responses": from_openai_responses_tools,
    "anthropic": from_anthropic_tools,
    "gemini": from_gemini_tools,
    "mcp": mcp.from_mcp_tools,
}


def to_tools(
    target: ToolFormat,
    definitions: Iterable[ToolDefinition],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
) -> list[dict[str, Any]]:
    """Tool definitions in the format named ``target`` (one of :data:`TOOL_FORMATS`)."""
    if target not in _WRITERS:
        raise ValidationError.single(
            "target", "enum", f"unknown tool format {preview(target)}; one of {list(TOOL_FORMATS)}"
        )
    return _WRITERS[target](definitions, strict=strict, report=report)


def from_tools(
    source: ToolFormat, payload: Sequence[Any] | Mapping[str, Any], *, report: ConversionReport | None = None
) -> list[ToolDefinition]:
    """Tool definitions from the format named ``source`` (one of :data:`TOOL_FORMATS`)."""
    if source not in _READERS:
        raise ValidationError.single(
            "source", "enum", f"unknown tool format {preview(source)}; one of {list(TOOL_FORMATS)}"
        )
    return _READERS[source](payload, report=report)
