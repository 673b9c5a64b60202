"""Tool definitions: ``agentmsg.v1.ToolDefinition``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentmsg import _validation
from agentmsg._wrapper import ProtoWrapper
from agentmsg.content import ToolKind, dump_arguments, kind_from_pb, kind_to_pb, parse_json_object
from agentmsg.errors import ValidationError
from agentmsg.v1 import tool_pb2

__all__ = ["ToolDefinition"]


_HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint", "strict")


def _schema_text(value: Mapping[str, Any] | str | None, field: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        parsed, reason = parse_json_object(value)
        if parsed is None:
            raise ValidationError.single(field, "json", f"the JSON Schema must be a JSON object: {reason}")
        return value
    if not isinstance(value, Mapping):
        raise ValidationError.single(
            field, "type", f"expected a JSON Schema (dict or text), got {type(value).__name__}"
        )
    return dump_arguments(value, field)


class ToolDefinition(ProtoWrapper[tool_pb2.ToolDefinition]):
    """A tool a model may call: name, description, JSON-Schema parameters, kind,
    and what MCP adds (title, output schema, behaviour hints).

    ``parameters`` and ``output_schema`` are JSON Schema objects, given as a
    dict (written as compact JSON) or as text (kept verbatim, for stable prompt
    caching). The hints are None when not stated (``agentmsg.v1.ToolDefinition``).
    """

    __slots__ = ()
    _PB = tool_pb2.ToolDefinition

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: Mapping[str, Any] | str | None = None,
        *,
        kind: ToolKind | str | None = None,
        title: str = "",
        output_schema: Mapping[str, Any] | str | None = None,
        read_only_hint: bool | None = None,
        destructive_hint: bool | None = None,
        idempotent_hint: bool | None = None,
        open_world_hint: bool | None = None,
        strict: bool | None = None,
        requires_approval: bool = False,
    ) -> None:
        for field, value in (("name", name), ("description", description), ("title", title)):
            if not isinstance(value, str):
                raise ValidationError.single(field, "type", f"expected str, got {type(value).__name__}")
        self._pb = tool_pb2.ToolDefinition(
            name=name,
            description=description,
            parameters=_schema_text(parameters, "parameters"),
            kind=kind_to_pb(kind),
            title=title,
            output_schema=_schema_text(output_schema, "output_schema"),
        )
        if not isinstance(requires_approval, bool):
            raise ValidationError.single(
                "requires_approval", "type", f"expected bool, got {type(requires_approval).__name__}"
            )
        self._pb.requires_approval = requires_approval
        hints = (read_only_hint, destructive_hint, idempotent_hint, open_world_hint, strict)
        for field, hint in zip(_HINTS, hints, strict=True):
            if hint is None:
                continue
            if not isinstance(hint, bool):
                raise ValidationError.single(field, "type", f"expected bool or None, got {type(hint).__name__}")
            setattr(self._pb, field, hint)
        _validation.ensure(self._pb)

    @property
    def name(self) -> str:
        """The tool name."""
        return self._pb.name

    @property
    def description(self) -> str:
        """What the tool does."""
        return self._pb.description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (``{}`` when there are none)."""
        value, reason = parse_json_object(self._pb.parameters)
        if value is None:
            raise ValidationError.single("parameters", "json", f"the JSON Schema is not a JSON object: {reason}")
        return value

    @property
    def parameters_json(self) -> str:
        """The JSON Schema text, verbatim."""
        return self._pb.parameters

    @property
    def title(self) -> str:
        """A name for people (MCP ``title``); empty when none."""
        return self._pb.title

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the structured result, or None when the tool declares none."""
        if not self._pb.output_schema:
            return None
        value, reason = parse_json_object(self._pb.output_schema)
        if value is None:
            raise ValidationError.single("output_schema", "json", f"the JSON Schema is not a JSON object: {reason}")
        return value

    @property
    def output_schema_json(self) -> str:
        """The output JSON Schema text, verbatim (empty when none)."""
        return self._pb.output_schema

    def _hint(self, field: str) -> bool | None:
        return getattr(self._pb, field) if self._pb.HasField(field) else None  # type: ignore[arg-type]

    @property
    def read_only_hint(self) -> bool | None:
        """The tool does not change its environment (MCP ``readOnlyHint``); None when not stated."""
        return self._hint("read_only_hint")

    @property
    def destructive_hint(self) -> bool | None:
        """The tool may destroy data (MCP ``destructiveHint``); None when not stated."""
        return self._hint("destructive_hint")

    @property
    def idempotent_hint(self) -> bool | None:
        """Repeating a call has no further effect (MCP ``idempotentHint``); None when not stated."""
        return self._hint("idempotent_hint")

    @property
    def open_world_hint(self) -> bool | None:
        """The tool reaches outside entities (MCP ``openWorldHint``); None when not stated."""
        return self._hint("open_world_hint")

    @property
    def strict(self) -> bool | None:
        """Arguments must follow the schema exactly (OpenAI / Anthropic ``strict``); None when not stated."""
        return self._hint("strict")

    @property
    def requires_approval(self) -> bool:
        """A call of the tool waits for a person's decision before it runs (see ``ToolRunner.tool``)."""
        return self._pb.requires_approval

    @property
    def kind(self) -> ToolKind | None:
        """What the tool does: None when not stated, ``UNKNOWN`` for a newer peer's kind."""
        return kind_from_pb(self._pb.kind)

    def __repr__(self) -> str:
        schema = json.dumps(self._pb.parameters)[:60]
        return (
            f"ToolDefinition(name={self.name!r}, kind={self.kind.value if self.kind else None!r}, parameters={schema})"
        )
