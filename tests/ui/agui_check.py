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


def fold_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an AG-UI client builds from events (text, reasoning, tool calls and results, activity)."""
    messages: dict[str, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for event in events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            messages.setdefault(event["messageId"], {"id": event["messageId"], "role": event["role"], "content": ""})
        elif kind == "TEXT_MESSAGE_CONTENT":
            messages[event["messageId"]]["content"] += event["delta"]
        elif kind == "REASONING_MESSAGE_START":
            messages[event["messageId"]] = {"id": event["messageId"], "role": "reasoning", "content": ""}
        elif kind == "REASONING_MESSAGE_CONTENT":
            messages[event["messageId"]]["content"] += event["delta"]
        elif kind == "REASONING_ENCRYPTED_VALUE":
            target = messages.get(event["entityId"]) or calls[event["entityId"]]
            target["encryptedValue"] = event["encryptedValue"]
        elif kind == "TOOL_CALL_START":
            parent = messages.setdefault(
                event["parentMessageId"], {"id": event["parentMessageId"], "role": "assistant"}
            )
            call = {
                "id": event["toolCallId"],
                "type": "function",
                "function": {"name": event["toolCallName"], "arguments": ""},
            }
            calls[event["toolCallId"]] = call
            parent.setdefault("toolCalls", []).append(call)
        elif kind == "TOOL_CALL_ARGS":
            calls[event["toolCallId"]]["function"]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT":
            messages[event["messageId"]] = {
                "id": event["messageId"],
                "role": "tool",
                "toolCallId": event["toolCallId"],
                "content": event["content"],
            }
        elif kind == "ACTIVITY_SNAPSHOT":
            messages[event["messageId"]] = {
                "id": event["messageId"],
                "role": "activity",
                "activityType": event["activityType"],
                "content": event["content"],
            }
    return list(messages.values())


def without_metadata(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        kept = {k: v for k, v in message.items() if k not in ("metadata", "error")}
        if "toolCalls" in kept:
            kept["toolCalls"] = [{k: v for k, v in c.items() if k != "metadata"} for c in kept["toolCalls"]]
        out.append(kept)
    return out
