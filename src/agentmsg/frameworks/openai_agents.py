"""The OpenAI Agents SDK (``openai-agents``): its items both ways, and its ``Session`` over the agentmsg service.

The SDK's history is a list of Responses API input items (``TResponseInputItem``), and its run items
(``MessageOutputItem``, ``ToolCallItem``, ``ReasoningItem``, ``HandoffCallItem``...) wrap Responses output items.
So :func:`from_openai_agents` and :func:`to_openai_agents` are agentmsg's Responses converter
(:mod:`agentmsg.providers.openai_responses`) with the SDK's own forms on top:

- reading takes plain item dicts, the SDK's pydantic item models (dumped as the SDK dumps them,
  ``model_dump(exclude_unset=True)``) and its ``RunItem`` objects (``to_input_item()``);
- writing gives the plain dicts the SDK keeps in a session; a system, developer or user message of one text block
  is written in the short form ``{"role", "content": str}`` the SDK writes for a string input (both forms read the
  same: one text part).

Everything else is the Responses converter's: items read from this API go back exactly from their envelopes (ids,
statuses, reasoning ``encrypted_content``), hosted tool items as hosted calls and results, other item types kept
verbatim.

Approval: an MCP server's ``mcp_approval_request`` / ``mcp_approval_response`` items (the SDK's
``MCPApprovalRequestItem`` / ``MCPApprovalResponseItem``) map both ways. A function tool's approval has no input item:
the SDK's ``ToolApprovalItem`` (a run's interruption) is never input (its ``to_input_item`` raises) and the decision
lives in the ``RunState`` (``approve`` / ``reject``). Reading one marks the call it wraps ``requires_approval`` (the
call read from it when the items do not hold it); writing, an approval block on an application's call is reported.

Writing follows the replay rule (:func:`~agentmsg.providers._common.may_replay`): reasoning signed by another
provider or API (Anthropic thinking, Gemini thought signatures) is sent as its text without the signature, redacted
reasoning is left out, and both are reported in the :class:`~agentmsg.providers._common.ConversionReport`.

:class:`AgentmsgSession` implements the SDK's ``Session`` protocol over an agentmsg session on the service, so a run's
history is durable, shared across processes, and readable in any other format (``client.build_context`` then
``to_anthropic``, ``to_gemini``, ``to_pydantic_ai``...). Needs ``openai-agents``
(``pip install 'agentmsg[openai-agents]'``); written against 0.24.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from agentmsg.errors import NotFoundError, ValidationError
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    CustomMessage,
    message_from_dict,
    message_to_dict,
)
from agentmsg.providers._common import ConversionReport, SessionPolicy
from agentmsg.providers.openai_responses import from_openai_responses, to_openai_responses

if TYPE_CHECKING:
    from agents.memory.session_settings import SessionSettings

    from agentmsg.service.client import AsyncClient

__all__ = ["POP_MARKER", "AgentmsgSession", "from_openai_agents", "to_openai_agents"]

POP_MARKER: Final = "openai_agents.pop"
"""The ``custom_type`` of the entry :meth:`AgentmsgSession.pop_item` leaves when it takes a whole message back."""
_SHORT_ROLES: Final = frozenset({"user", "system", "developer"})


def _plain(item: Any, path: str) -> dict[str, Any]:
    """An item as the dict the SDK keeps: a dict as it is, a pydantic model dumped, a ``RunItem`` as its input item."""
    if isinstance(item, Mapping):
        return dict(item)
    to_input = getattr(item, "to_input_item", None)
    if callable(to_input):
        return _plain(to_input(), path)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump(exclude_unset=True, mode="json")
        if isinstance(dumped, dict):
            return dumped
    raise ValidationError.single(path, "type", f"expected an Agents SDK item, got {type(item).__name__}")


def from_openai_agents(items: Iterable[Any], *, id_map: Mapping[str, str] | None = None) -> list[AgentMessage]:
    """The SDK's items (input item dicts, item models or ``RunItem`` objects) as agentmsg messages."""
    if isinstance(items, (str, bytes, Mapping)):
        raise ValidationError.single("", "type", "expected a list of items")
    plain: list[dict[str, Any]] = []
    asking: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) and getattr(item, "type", None) == "tool_approval_item":
            raw = _plain(getattr(item, "raw_item", None), f"[{i}].raw_item")
            call_id = raw.get("call_id") or raw.get("id")
            if isinstance(call_id, str) and call_id:
                asking.add(call_id)
                if not any(p.get("call_id") == call_id for p in plain):
                    plain.append(raw)
            continue
        plain.append(_plain(item, f"[{i}]"))
    messages = from_openai_responses(plain, id_map=id_map)
    return [_asking(m, asking) if isinstance(m, AssistantMessage) and asking else m for m in messages]


def _asking(message: AssistantMessage, asking: set[str]) -> AgentMessage:
    """The message with its calls in ``asking`` marked ``requires_approval`` (a ``ToolApprovalItem`` named them)."""
    data = message_to_dict(message)
    for block in data.get("contents", []):
        if block.get("type") == "tool_call" and block.get("id") in asking:
            block["requires_approval"] = True
    return message_from_dict(data)


def to_openai_agents(
    messages: Iterable[BaseMessage],
    *,
    strict: bool = False,
    report: ConversionReport | None = None,
    session_messages: SessionPolicy = "project",
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Agentmsg messages as the SDK's input items (what ``Session.get_items`` returns).

    ``model`` is the model the items are for: reasoning of another model is not sent back. What the items cannot
    hold is reported (``report=``), raised (``strict=True``) or warned about.
    """
    payload = to_openai_responses(
        messages, strict=strict, report=report, session_messages=session_messages, model=model
    )
    return [_short(item) for item in payload["input"]]


def _short(item: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "message", "role", "content": [one input_text]}`` as the SDK's ``{"content": text, "role"}``."""
    if set(item) != {"type", "role", "content"} or item["type"] != "message" or item["role"] not in _SHORT_ROLES:
        return item
    content = item["content"]
    one_text = isinstance(content, list) and len(content) == 1 and set(content[0]) == {"type", "text"}
    if one_text and content[0]["type"] == "input_text":
        return {"content": content[0]["text"], "role": item["role"]}
    return item


class AgentmsgSession:
    """The Agents SDK's ``Session`` protocol over an agentmsg session on the service.

    ``Runner.run(agent, "question", session=AgentmsgSession("chat-1", client))`` reads the history from the service
    and appends the run's items to it; another process (or language) with the same session id continues the
    conversation, and every other reader sees the same log.

    - :meth:`add_items` converts the items (:func:`from_openai_agents`) and appends them in one call;
    - :meth:`get_items` is the session's context (``BuildContext``: the path to the leaf, compactions and branches
      applied) as items (:func:`to_openai_agents`); ``limit`` keeps the latest items;
    - :meth:`pop_item` takes the last item back: the log is append-only, so the message holding it is replaced on a
      branch from its parent by the same message without that item, or, when it was the message's only item, the
      branch starts with a :data:`POP_MARKER` entry (session-only, never in the context). Popping the only item of
      a session clears it;
    - :meth:`clear_session` deletes the session on the service.

    ``client`` is an :class:`~agentmsg.service.client.AsyncClient`; ``model`` is the model the items are for (the
    replay rule). :attr:`report` holds what the last :meth:`get_items` (or :meth:`pop_item`) left out: a new
    :class:`~agentmsg.providers._common.ConversionReport` each call, so a long conversation does not pile them up.
    """

    def __init__(
        self,
        session_id: str,
        client: AsyncClient,
        *,
        model: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValidationError.single("session_id", "string.min_len", "a session needs a non-empty id")
        self.session_id = session_id
        self.client = client
        self.model = model
        self.report = ConversionReport()
        self.session_settings = session_settings

    async def _context(self) -> list[AgentMessage]:
        try:
            return await self.client.build_context(self.session_id)
        except NotFoundError:
            return []

    def _items(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        self.report = ConversionReport()
        return to_openai_agents(messages, report=self.report, model=self.model)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's history as input items, oldest first; the latest ``limit`` items when given."""
        items = self._items(await self._context())
        if limit is None:
            return items
        if limit <= 0:
            return []
        return items[-limit:]

    async def add_items(self, items: list[Any]) -> None:
        """Append the items (converted to agentmsg messages, in one ``AppendMessages`` call)."""
        messages = from_openai_agents(items)
        if messages:
            await self.client.append_many(self.session_id, messages)

    async def pop_item(self) -> Any | None:
        """Take the most recent item back and return it; None when the session is empty."""
        context = await self._context()
        if not context:
            return None
        last = context[-1]
        items = self._items([last])
        if not items:
            return None
        popped = items[-1]
        parent = context[-2].id if len(context) > 1 else ""
        kept = from_openai_agents(items[:-1])
        if not parent and not kept:
            await self.client.delete_session(self.session_id)
            return popped
        if not parent:
            # The first message loses an item: the session restarts with what is left of it.
            await self.client.delete_session(self.session_id)
            await self.client.append_many(self.session_id, kept)
            return popped
        if kept:
            replacement = [kept[0].with_parent(parent), *kept[1:]]
        else:
            replacement = [CustomMessage(POP_MARKER, details={"popped": last.id}, parent_id=parent)]
        await self.client.append_many(self.session_id, replacement)
        return popped

    async def clear_session(self) -> None:
        """Delete the session and all its entries on the service."""
        await self.client.delete_session(self.session_id)
