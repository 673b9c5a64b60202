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


class ToolDefinition(ProtoWrapper[tool_pb2.ToolDefinition]):
    """A tool a model may call: name, description, JSON-Schema parameters, kind.

    ``parameters`` is a JSON Schema object, given as a dict (written as compact
    JSON) or as text (kept verbatim, for stable prompt caching).
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
    ) -> None:
        if not isinstance(description, str):
            raise ValidationError.single("description", "type", f"expected str, got {type(description).__name__}")
        if not isinstance(name, str):
            raise ValidationError.single("name", "type", f"expected str, got {type(name).__name__}")
        if parameters is None:
            text = ""
        elif isinstance(parameters, str):
            text = parameters
            if parse_json_object(text)[0] is None:
                reason = parse_json_object(text)[1]
                raise ValidationError.single("parameters", "json", f"the JSON Schema must be a JSON object: {reason}")
        else:
            text = dump_arguments(parameters, "parameters")
        self._pb = tool_pb2.ToolDefinition(name=name, description=description, parameters=text, kind=kind_to_pb(kind))
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
    def kind(self) -> ToolKind | None:
        """What the tool does: None when not stated, ``UNKNOWN`` for a newer peer's kind."""
        return kind_from_pb(self._pb.kind)

    def __repr__(self) -> str:
        schema = json.dumps(self._pb.parameters)[:60]
        return (
            f"ToolDefinition(name={self.name!r}, kind={self.kind.value if self.kind else None!r}, parameters={schema})"
        )
