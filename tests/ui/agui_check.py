"""Checking dicts against AG-UI's own pydantic models (``ag-ui-protocol`` 1.0): each must validate, use only
fields the model declares (the models keep unknown keys, so a misspelt key would pass validation alone),
and be exactly what the model dumps back."""

from __future__ import annotations

from typing import Any

from ag_ui.core import Event, Message
from pydantic import BaseModel, TypeAdapter

MESSAGE = TypeAdapter(Message)
EVENT = TypeAdapter(Event)


def _no_extras(model: Any, path: str) -> None:
    if isinstance(model, BaseModel):
        extra = model.model_extra or {}
        assert not extra, f"{path}: fields AG-UI does not declare: {sorted(extra)}"
        for name in type(model).model_fields:
            if name != "metadata":  # metadata is the application's, open by key
                _no_extras(getattr(model, name), f"{path}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            _no_extras(item, f"{path}[{i}]")


def check_message(data: dict[str, Any]) -> Any:
    """The AG-UI model of ``data``, after checking it declares every key and dumps back to ``data``."""
    model = MESSAGE.validate_python(data)
    _no_extras(model, data.get("role", "?"))
    assert model.model_dump(by_alias=True, mode="json") == data
    return model


def check_event(data: dict[str, Any]) -> Any:
    """The same for an event."""
    model = EVENT.validate_python(data)
    _no_extras(model, data.get("type", "?"))
    assert model.model_dump(by_alias=True, mode="json") == data
    return model
