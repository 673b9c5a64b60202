"""A session as an AG-UI event stream and as a Vercel AI SDK UI message stream, on the HTTP port.

Routes (server-sent events, ``text/event-stream``; ``{id}`` is the session id):

=====================================  ==============================================================================
``POST /ag-ui/sessions/{id}``          an AG-UI ``RunAgentInput``: its user messages are appended (idempotent by
                                       id), then the run's events: ``RUN_STARTED``, ``MESSAGES_SNAPSHOT`` (the log),
                                       each message as it is generated (the live relay's deltas) or logged, a
                                       closing ``MESSAGES_SNAPSHOT`` when anything was logged, ``RUN_FINISHED``
``GET /ag-ui/sessions/{id}``           the same run without input (``?runId=`` names it)
``POST /ai-sdk/sessions/{id}``         an AI SDK chat request (``{id, messages, trigger, messageId}``): its user
                                       messages are appended, then the UI message stream of the assistant turn
                                       that answers (``start`` ... ``finish``, ``[DONE]``)
``GET /ai-sdk/sessions/{id}/stream``   the AI SDK's resumable-stream GET: the turn in progress (from its start, or
                                       from ``Last-Event-ID``), or ``204 No Content`` when none is
``GET /ai-sdk/sessions/{id}/messages`` the session as ``UIMessage[]`` (JSON: hydration for ``useChat``)
=====================================  ==============================================================================

A stream ends when the session is at rest: its last entry is an assistant message that does not stop for tool
calls, and no message is being generated. Every SSE event carries ``id:``, the position in the log it brings the
client to: the offset of the last entry it has seen, and, while a message is being generated, how much of each of
its blocks it has (``<offset>.<base64url JSON>``). A client that reconnects with ``Last-Event-ID`` (any route)
gets the rest from there, nothing lost or repeated: entries after the offset, and of a message still in flight
(rebuilt through the live relay's catch-up) or finished since, only what the client had not received.

Errors before the stream starts get an HTTP status (400 bad input, 401 no or bad token, 403 a token without the
session in its scope, 404 no such session, 503 store unavailable) and the protocol's error form as the body
(AG-UI: a ``RUN_ERROR`` event; AI SDK: an ``error`` chunk); an error once the stream runs ends it with the same.
Bearer tokens and scopes are those of every other transport (``Authorization: Bearer ...``).
"""

from __future__ import annotations

import abc
import base64
import binascii
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, Router

from agentmsg.errors import AgentMsgError, ValidationError
from agentmsg.messages import AgentMessage, AssistantMessage, StopReason, ToolMessage, UserMessage, message_from_proto
from agentmsg.service import budgets, status
from agentmsg.service.access import Access
from agentmsg.service.handlers import Caller
from agentmsg.service.handlers.sessions import SessionHandler, missing_session
from agentmsg.service.rpc import DEFAULT_MAX_MESSAGE_BYTES
from agentmsg.streaming import StreamEvent, events_from_message
from agentmsg.ui import ConversionReport, ag_ui, ai_sdk
from agentmsg.v1 import message_pb2, session_service_pb2, stream_pb2

__all__ = ["UI_PREFIXES", "create_ui_app"]

UI_PREFIXES = ("/ag-ui/", "/ai-sdk/")

_HTTP = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429,
    "DEADLINE_EXCEEDED": 504,
    "UNAVAILABLE": 503,
    "CANCELLED": 499,
}
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
# The header the AI SDK's DefaultChatTransport expects on a UI message stream.
_AI_SDK_HEADERS = {**_SSE_HEADERS, "x-vercel-ai-ui-message-stream": "v1"}
_DELTA_ARMS = {"text": "text", "thinking": "text", "tool_call": "arguments"}


def _http_status(error: AgentMsgError) -> tuple[int, str]:
    name = status.code_for(error).name
    return _HTTP.get(name, 500), name


# --- positions: the SSE id --------------------------------------------------------------------------------------


@dataclass
class _Progress:
    """How much of one message in flight a client has: per block index, characters delivered and whether ended."""

    blocks: dict[int, list[int]] = field(default_factory=dict)  # index -> [characters, ended (0/1)]
    ended: bool = False

    def to_json(self) -> list[Any]:
        return [int(self.ended), {str(k): v for k, v in sorted(self.blocks.items())}]

    @classmethod
    def from_json(cls, value: Any) -> _Progress:
        ended, blocks = value
        if not isinstance(blocks, dict):
            raise TypeError("blocks")
        parsed = {int(k): [int(v[0]), int(v[1])] for k, v in blocks.items()}
        return cls(parsed, bool(ended))


@dataclass
class _Position:
    """The log offset a client has seen, and its progress through each message in flight (by message id)."""

    offset: int = 0
    flight: dict[str, _Progress] = field(default_factory=dict)

    def event_id(self) -> str:
        if not self.flight:
            return str(self.offset)
        raw = json.dumps({m: p.to_json() for m, p in self.flight.items()}, separators=(",", ":")).encode()
        return f"{self.offset}.{base64.urlsafe_b64encode(raw).decode('ascii').rstrip('=')}"

    @classmethod
    def parse(cls, text: str) -> _Position:
        head, _, tail = text.strip().partition(".")
        try:
            offset = int(head)
            if offset < 0:
                raise ValueError("negative")
            flight: dict[str, _Progress] = {}
            if tail:
                raw = base64.urlsafe_b64decode(tail + "=" * (-len(tail) % 4))
                data = json.loads(raw)
                if not isinstance(data, dict):
                    raise TypeError("not an object")
                flight = {str(m): _Progress.from_json(p) for m, p in data.items()}
        except (ValueError, TypeError, KeyError, IndexError, binascii.Error, UnicodeError):
            raise ValidationError.single(
                "Last-Event-ID", "ui.last_event_id", f"{text!r} is not an event id this server gave"
            ) from None
        return cls(offset, flight)


# --- the session as agentmsg events ------------------------------------------------------------------------------


class _Rows:
    """Subscribe's batches as the stored rows, parsed: ``("rows", [(offset, message)])``."""

    def full(self, session_id: str, after: int, limit: int) -> None:
        return None

    def encode(
        self, session_id: str, after: int, limit: int, rows: Sequence[tuple[int, bytes | memoryview]]
    ) -> list[tuple[str, list[tuple[int, AgentMessage]]]]:
        return [("rows", [(offset, message_from_proto(_parse(body))) for offset, body in rows])]


def _parse(body: bytes | memoryview) -> message_pb2.Message:
    return message_pb2.Message.FromString(body)  # type: ignore[arg-type]


def _piece(pb: stream_pb2.StreamEvent) -> tuple[int, str] | None:
    """The block index and the characters a text, thinking or argument delta adds (None for any other event)."""
    if pb.WhichOneof("event") != "block_delta":
        return None
    delta = pb.block_delta
    arm = delta.WhichOneof("delta")
    if arm not in _DELTA_ARMS:
        return None
    return delta.index, getattr(getattr(delta, arm), _DELTA_ARMS[arm])


def _with_piece(pb: stream_pb2.StreamEvent, text: str) -> stream_pb2.StreamEvent:
    copy = stream_pb2.StreamEvent()
    copy.CopyFrom(pb)
    delta = copy.block_delta
    arm = delta.WhichOneof("delta")
    setattr(getattr(delta, str(arm)), _DELTA_ARMS[str(arm)], text)
    return copy


class _Flight:
    """One message being generated, as this client's stream sends it: its events split into those the client
    already has (fed to the protocol's converter only) and those it gets, with its progress kept up to date."""

    def __init__(self, message_id: str, had: _Progress | None) -> None:
        self.message_id = message_id
        self.had = had  # what the client had when it resumed (None: nothing)
        self.progress = _Progress()
        self.open = True

    def split(self, pb: stream_pb2.StreamEvent) -> tuple[stream_pb2.StreamEvent | None, stream_pb2.StreamEvent | None]:
        """(the part of the event the client has, the part it gets): either may be None."""
        kind = pb.WhichOneof("event")
        had = self.had
        piece = _piece(pb)
        if piece is not None:
            index, text = piece
            done = self.progress.blocks.setdefault(index, [0, 0])
            skip = 0
            if had is not None and index in had.blocks:
                skip = max(0, had.blocks[index][0] - done[0])
            done[0] += len(text)
            if skip >= len(text):
                return pb, None
            if skip:
                return _with_piece(pb, text[:skip]), _with_piece(pb, text[skip:])
            return None, pb
        if kind == "block_start":
            self.progress.blocks.setdefault(pb.block_start.index, [0, 0])
            return (pb, None) if had is not None and pb.block_start.index in had.blocks else (None, pb)
        if kind == "block_stop":
            index = pb.block_stop.index
            self.progress.blocks.setdefault(index, [0, 0])[1] = 1
            ended = had is not None and had.blocks.get(index, [0, 0])[1] == 1
            return (pb, None) if ended else (None, pb)
        if kind == "message_start":
            return (pb, None) if had is not None else (None, pb)
        if kind in ("message_stop", "error"):
            self.open = False
            self.progress.ended = True
            return (pb, None) if had is not None and had.ended else (None, pb)
        if kind == "block_delta":  # signatures, citations, logprobs: the converters keep them until the block ends
            index = pb.block_delta.index
            ended = had is not None and had.blocks.get(index, [0, 0])[1] == 1
            return (pb, None) if ended else (None, pb)
        return None, pb


def _event(pb: stream_pb2.StreamEvent) -> StreamEvent:
    copy = stream_pb2.StreamEvent()
    copy.CopyFrom(pb)
    copy.ClearField("sequence")  # the relay keeps the order; converters see an unnumbered stream
    return StreamEvent.from_proto(copy)


# --- the protocols ------------------------------------------------------------------------------------------------


class _Protocol(abc.ABC):
    """What one protocol sends for the session's entries and live events (a dict per SSE event)."""

    one_turn = False  # whether a stream holds one assistant turn (the AI SDK's: one UIMessage), or the whole log

    def __init__(self) -> None:
        self.turn: list[AgentMessage] = []  # the assistant turn in progress (assistant and tool messages)

    @abc.abstractmethod
    def converter(self) -> Any:
        """A fresh converter of one message being generated (its ``feed`` takes stream events)."""

    @abc.abstractmethod
    def opened(self, log: list[AgentMessage], resumed: bool) -> list[dict[str, Any]]:
        """The events a stream opens with (``log``: the session so far; ``resumed``: the client had a position)."""

    @abc.abstractmethod
    def logged(self, message: AgentMessage, streamed: bool) -> list[dict[str, Any]]:
        """The events of an entry appended (``streamed``: its events went out live already)."""

    @abc.abstractmethod
    def closed(self, log: list[AgentMessage], changed: bool) -> list[dict[str, Any]]:
        """The events a stream ends with when the session is at rest (``changed``: entries were appended)."""

    @abc.abstractmethod
    def failed(self, message: str, code: str) -> dict[str, Any]:
        """The protocol's error event."""

    def live(self, message_id: str, *, resumed: bool) -> list[dict[str, Any]]:
        """What goes before a message generated live (``resumed``: the client has its beginning)."""
        return []

    def note(self, message: AgentMessage) -> None:
        if isinstance(message, (AssistantMessage, ToolMessage)):
            self.turn.append(message)
        else:
            self.turn = []


class _AGUI(_Protocol):
    def __init__(self, thread_id: str, run_id: str) -> None:
        super().__init__()
        self.thread_id = thread_id
        self.run_id = run_id

    def converter(self) -> Any:
        return ag_ui.AGUIEventStream()

    def opened(self, log: list[AgentMessage], resumed: bool) -> list[dict[str, Any]]:
        out = [ag_ui.run_started(self.thread_id, self.run_id)]
        if not resumed:
            out.append(ag_ui.messages_snapshot(log, report=ConversionReport()))
        return out

    def logged(self, message: AgentMessage, streamed: bool) -> list[dict[str, Any]]:
        if streamed:
            return []
        return ag_ui.message_events(message, report=ConversionReport())

    def closed(self, log: list[AgentMessage], changed: bool) -> list[dict[str, Any]]:
        out = [ag_ui.messages_snapshot(log, report=ConversionReport())] if changed else []
        run = [m for m in self.turn if isinstance(m, AssistantMessage)]
        return [*out, ag_ui.run_finished(self.thread_id, self.run_id, messages=run)]

    def failed(self, message: str, code: str) -> dict[str, Any]:
        return ag_ui.run_error(message, code=code)


class _AISDK(_Protocol):
    one_turn = True

    def __init__(self) -> None:
        super().__init__()
        self.started = False

    def converter(self) -> Any:
        return ai_sdk.UIMessageStream()

    def opened(self, log: list[AgentMessage], resumed: bool) -> list[dict[str, Any]]:
        return []

    def _start(self, message: AgentMessage | str) -> list[dict[str, Any]]:
        if self.started or self.turn:
            self.started = True
            return []
        self.started = True
        message_id = message if isinstance(message, str) else message.id
        return [{"type": "start", "messageId": message_id}]

    def live(self, message_id: str, *, resumed: bool) -> list[dict[str, Any]]:
        if resumed:
            self.started = True
            return []
        return self._start(message_id)

    def logged(self, message: AgentMessage, streamed: bool) -> list[dict[str, Any]]:
        if isinstance(message, AssistantMessage):
            out = [] if streamed else self._start(message)
            if not streamed:
                stream = ai_sdk.UIMessageStream()
                for event in events_from_message(message):
                    out += stream.feed(event)
            return out
        if isinstance(message, ToolMessage) and self.turn:
            out = self._start(message)
            turns = ai_sdk.to_ui_messages([*self.turn, message], report=ConversionReport())
            parts = {p["toolCallId"]: p for p in turns[-1]["parts"] if "toolCallId" in p}
            for block in message.contents:
                part = parts.get(getattr(block, "id", ""))
                if part is not None and part["state"] in ("output-available", "output-error"):
                    out.append(ai_sdk.output_chunk(part))
            return out
        return []

    def closed(self, log: list[AgentMessage], changed: bool) -> list[dict[str, Any]]:
        if not self.started:
            return []
        last = next((m for m in reversed(self.turn) if isinstance(m, AssistantMessage)), None)
        finish: dict[str, Any] = {
            "type": "finish",
            "finishReason": ai_sdk.finish_reason(last.stop_reason if last else None),
        }
        if self.turn:
            turns = ai_sdk.to_ui_messages(self.turn, report=ConversionReport())
            if turns and "metadata" in turns[0]:
                finish["messageMetadata"] = turns[0]["metadata"]
        return [finish]

    def failed(self, message: str, code: str) -> dict[str, Any]:
        return {"type": "error", "errorText": f"{code}: {message}" if code else message}


def _at_rest(last: AgentMessage | None) -> bool:
    """Whether an assistant turn is over: the last entry is an assistant message that does not stop for tools."""
    return isinstance(last, AssistantMessage) and last.stop_reason is not StopReason.TOOL_CALLS


def _turn_start(rows: Sequence[tuple[int, AgentMessage]]) -> int:
    """The offset the assistant turn at the end of the log follows (its last entry that is not of the turn)."""
    for offset, message in reversed(rows):
        if not isinstance(message, (AssistantMessage, ToolMessage)):
            return offset
    return 0


class _Run:
    """One client's stream: the log up to its position, then the session followed (live events and appends) until
    it is at rest."""

    def __init__(
        self, handler: SessionHandler, caller: Caller, session_id: str, protocol: _Protocol, position: _Position
    ) -> None:
        self.handler = handler
        self.caller = caller
        self.session_id = session_id
        self.protocol = protocol
        self.position = position
        self.resumed = position.offset > 0 or bool(position.flight)
        self.rows: list[tuple[int, AgentMessage]] = []
        self.log: list[AgentMessage] = []
        self.flights: dict[str, _Flight] = {}  # stream id -> its message being generated
        self.converters: dict[str, Any] = {}  # stream id -> the protocol's converter of it
        self.streamed: dict[str, str] = {}  # message id -> stream id, for streams ended but not yet logged

    async def open(self) -> None:
        """Read the log (the caller must be allowed to read the session, and the session must exist)."""
        last = await self.handler.last_offset(self.caller, self.session_id)
        if last == 0:
            raise missing_session(self.session_id)
        if self.position.offset > last:
            raise ValidationError.single(
                "Last-Event-ID",
                "ui.last_event_id",
                f"the session has no offset {self.position.offset} (its last is {last})",
            )
        after = 0
        while after < last:
            page = await self.handler.store.read(self.session_id, after, 256)
            if not page:
                break
            self.rows += [(offset, message_from_proto(_parse(body))) for offset, body in page if offset <= last]
            after = page[-1][0]
        if not self.resumed:
            self.position.offset = last

    def resume_turn(self) -> bool:
        """For the AI SDK's resume GET: start at the turn at the end of the log; False when it is over (at rest)."""
        if _at_rest(self.rows[-1][1]):
            return False
        self.position.offset = _turn_start(self.rows)
        self.resumed = True
        return True

    async def events(self) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        """(SSE id, the protocol's events) in order; ends when the session is at rest."""
        seen = [(o, m) for o, m in self.rows if o <= self.position.offset]
        self.log = [m for _, m in self.rows]
        for _, message in seen:
            self.protocol.note(message)
        last = seen[-1][1] if seen else None
        yield self.position.event_id(), self.protocol.opened(self.log, self.resumed)
        self.log = [m for _, m in seen]
        changed = False
        if not self.position.flight and _at_rest(last):
            yield self.position.event_id(), self.protocol.closed(self.log, changed)
            return
        request = session_service_pb2.SubscribeRequest(
            session_id=self.session_id, after_offset=self.position.offset, live_events=True
        )
        subscription = self.handler.Subscribe(request, self.caller, _Rows())
        try:
            async for item in subscription:
                out: list[dict[str, Any]] = []
                if isinstance(item, tuple):
                    for offset, message in item[1]:
                        self.position.offset = offset
                        out += self._logged(message)
                        self.log.append(message)
                        changed = True  # the client lacks it: a closing snapshot brings its envelope
                        last = message
                        if self.protocol.one_turn and not self.flights and not self.streamed and _at_rest(last):
                            break  # the turn is over: the rest of the log is the next turn's
                else:
                    out = self._live(item.live_event)
                if out:
                    yield self.position.event_id(), out
                if not self.flights and not self.streamed and _at_rest(last):
                    yield self.position.event_id(), self.protocol.closed(self.log, changed)
                    return
        finally:
            await subscription.aclose()  # type: ignore[attr-defined]

    def _live(self, live: session_service_pb2.LiveEvent) -> list[dict[str, Any]]:
        pb = live.event
        kind = pb.WhichOneof("event")
        out: list[dict[str, Any]] = []
        if kind == "message_start":
            message_id = pb.message_start.message_id
            had = self.position.flight.get(message_id)
            self.flights[live.stream_id] = _Flight(message_id, had)
            self.converters[live.stream_id] = self.protocol.converter()
            out += self.protocol.live(message_id, resumed=had is not None)
        flight = self.flights.get(live.stream_id)
        if flight is None:
            return out  # a stream this client did not see start (its catch-up was refused: it gets the message)
        out += _feed(self.converters[live.stream_id], flight, [pb])
        self.position.flight[flight.message_id] = flight.progress
        if kind == "message_stop":
            del self.flights[live.stream_id]
            self.streamed[flight.message_id] = live.stream_id
        elif kind == "error":  # nothing will be logged: the client saw the error
            del self.flights[live.stream_id]
            del self.converters[live.stream_id]
            self.position.flight.pop(flight.message_id, None)
        return out

    def _logged(self, message: AgentMessage) -> list[dict[str, Any]]:
        stream_id = self.streamed.pop(message.id, None)
        had = self.position.flight.pop(message.id, None)
        if stream_id is not None:
            del self.converters[stream_id]
            out = self.protocol.logged(message, streamed=True)
        elif had is not None and isinstance(message, AssistantMessage):
            # The client had part of it live, and it finished while the client was away: the rest, from the entry.
            out = self.protocol.live(message.id, resumed=True)
            out += _feed(
                self.protocol.converter(), _Flight(message.id, had), [e.pb for e in events_from_message(message)]
            )
            out += self.protocol.logged(message, streamed=True)
        else:
            out = self.protocol.logged(message, streamed=False)
        self.protocol.note(message)
        return out


def _feed(converter: Any, flight: _Flight, events: Sequence[stream_pb2.StreamEvent]) -> list[dict[str, Any]]:
    """The converter's output for what the client does not have of ``events`` (what it has is fed, not sent)."""
    out: list[dict[str, Any]] = []
    for pb in events:
        kept, sent = flight.split(pb)
        if kept is not None:
            converter.feed(_event(kept))
        if sent is not None:
            out += converter.feed(_event(sent))
    return out


# --- HTTP ---------------------------------------------------------------------------------------------------------


def _caller(request: Request) -> Caller:
    return Caller.within([(key.lower(), value) for key, value in request.headers.items()], None)


def _position(request: Request) -> _Position:
    given = request.headers.get("last-event-id", "")
    return _Position.parse(given) if given.strip() else _Position()


async def _json_body(request: Request, limit: int) -> Mapping[str, Any]:
    """The request's JSON object; refused, unread past ``limit`` bytes, when larger (as gRPC's maximum message size)."""
    raw = bytearray()
    async for piece in request.stream():
        raw += piece
        if len(raw) > limit:
            raise ValidationError.single(
                "", "ui.body_size", f"the request body is larger than {limit} bytes (the server's maximum message size)"
            )
    try:
        body = json.loads(bytes(raw))
    except (ValueError, UnicodeError) as exc:
        raise ValidationError.single("", "ui.json", f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValidationError.single("", "ui.json", "the request body must be a JSON object")
    return body


async def _append_users(
    handler: SessionHandler, caller: Caller, session_id: str, messages: Sequence[AgentMessage]
) -> None:
    """Append the user messages among ``messages`` (idempotent by id: the history a client sends back is not
    appended twice)."""
    for message in messages:
        if isinstance(message, UserMessage):
            request = session_service_pb2.AppendMessageRequest(session_id=session_id)
            request.message.CopyFrom(message.pb)
            await handler.AppendMessage(request, caller)


class _Endpoints:
    def __init__(self, handler: SessionHandler, budgeting: tuple[Access, budgets.Ledger] | None, max_body: int) -> None:
        self.handler = handler
        self.budgeting = budgeting
        self.max_body = max_body

    def _counted(self, caller: Caller) -> Callable[[], None]:
        """Count one long-lived stream against the server's budgets (gRPC's and Connect's ledger): what gives it back.

        Refused RESOURCE_EXHAUSTED (429) when one more would break a budget."""
        if self.budgeting is None:
            return lambda: None
        access, ledger = self.budgeting
        tenant = budgets.tenant_for(access, caller.metadata)
        over = ledger.over(budgets.STREAMS, tenant)
        if over is not None:
            raise budgets.refusal(budgets.STREAMS, *over)[0]
        ledger.take(budgets.STREAMS, tenant)
        return lambda: ledger.give(budgets.STREAMS, tenant)

    async def ag_ui(self, request: Request) -> Response:
        protocol: _AGUI | None = None
        try:
            session_id = request.path_params["session_id"]
            caller = _caller(request)
            position = _position(request)
            run_id = request.query_params.get("runId", "")
            if request.method == "POST":
                body = await _json_body(request, self.max_body)
                thread = body.get("threadId", session_id)
                if thread != session_id:
                    raise ValidationError.single(
                        "threadId", "ui.thread", f"the run is for thread {session_id!r}, not {thread!r}"
                    )
                run_id = body.get("runId", "")
                if not isinstance(run_id, str):
                    raise ValidationError.single("runId", "ui.run", "expected a string")
                messages = ag_ui.from_ag_ui(body.get("messages", []), report=ConversionReport())
                await _append_users(self.handler, caller, session_id, messages)
            protocol = _AGUI(session_id, run_id or str(uuid.uuid4()))
            run = _Run(self.handler, caller, session_id, protocol, position)
            await run.open()
            give = self._counted(caller)
        except AgentMsgError as error:
            code, name = _http_status(error)
            return JSONResponse(ag_ui.run_error(str(error), code=name), status_code=code)
        return _sse(run.events(), protocol, give, done=False)

    async def ai_sdk_chat(self, request: Request) -> Response:
        protocol = _AISDK()
        try:
            session_id = request.path_params["session_id"]
            caller = _caller(request)
            body = await _json_body(request, self.max_body)
            chat = body.get("id", session_id)
            if chat != session_id:
                raise ValidationError.single("id", "ui.chat", f"the chat is session {session_id!r}, not {chat!r}")
            messages = ai_sdk.from_ui_messages(body, report=ConversionReport())
            await _append_users(self.handler, caller, session_id, messages)
            run = _Run(self.handler, caller, session_id, protocol, _position(request))
            await run.open()
            give = self._counted(caller)
        except AgentMsgError as error:
            return _ai_sdk_error(error)
        return _sse(run.events(), protocol, give, done=True)

    async def ai_sdk_stream(self, request: Request) -> Response:
        protocol = _AISDK()
        try:
            position = _position(request)
            resumed = position.offset > 0
            caller = _caller(request)
            run = _Run(self.handler, caller, request.path_params["session_id"], protocol, position)
            await run.open()
            if not resumed and not run.resume_turn():
                return Response(status_code=204)
            give = self._counted(caller)
        except AgentMsgError as error:
            return _ai_sdk_error(error)
        return _sse(run.events(), protocol, give, done=True)

    async def ai_sdk_messages(self, request: Request) -> Response:
        try:
            run = _Run(self.handler, _caller(request), request.path_params["session_id"], _AISDK(), _Position())
            await run.open()
        except AgentMsgError as error:
            return _ai_sdk_error(error)
        messages = ai_sdk.to_ui_messages([m for _, m in run.rows], report=ConversionReport())
        return JSONResponse(messages, headers={"x-agentmsg-offset": str(run.position.offset)})


def _ai_sdk_error(error: AgentMsgError) -> Response:
    code, name = _http_status(error)
    return JSONResponse({"type": "error", "errorText": f"{name}: {error}"}, status_code=code)


def _frame(event_id: str, group: Sequence[dict[str, Any]]) -> bytes:
    """The SSE events of one group; the last carries the id (the position once the client has them all)."""
    lines = []
    for k, item in enumerate(group):
        head = f"id: {event_id}\n" if event_id and k == len(group) - 1 else ""
        lines.append(f"{head}data: {json.dumps(item, separators=(',', ':'), ensure_ascii=False)}\n\n")
    return "".join(lines).encode()


def _sse(
    events: AsyncIterator[tuple[str, list[dict[str, Any]]]],
    protocol: _Protocol,
    give: Callable[[], None],
    *,
    done: bool,
) -> Response:
    async def body() -> AsyncIterator[bytes]:
        try:
            async for event_id, group in events:
                if group:
                    yield _frame(event_id, group)
            if done:
                yield b"data: [DONE]\n\n"
        except AgentMsgError as error:
            status.report(error)
            yield _frame("", [protocol.failed(str(error), status.code_for(error).name)])
        finally:
            give()

    headers = _AI_SDK_HEADERS if isinstance(protocol, _AISDK) else _SSE_HEADERS
    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


def create_ui_app(
    handler: SessionHandler,
    budgeting: tuple[Access, budgets.Ledger] | None = None,
    *,
    max_body: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Callable[[Any, Any, Any], Awaitable[None]]:
    """The ASGI application of the agent-UI routes (see the module docstring); each stream counts as a long-lived
    call against ``budgeting``'s ledger (the gRPC server's), when given; request bodies may be ``max_body`` bytes."""
    endpoints = _Endpoints(handler, budgeting, max_body)
    return Router(
        [
            Route("/ag-ui/sessions/{session_id}", endpoints.ag_ui, methods=["GET", "POST"]),
            Route("/ai-sdk/sessions/{session_id}", endpoints.ai_sdk_chat, methods=["POST"]),
            Route("/ai-sdk/sessions/{session_id}/stream", endpoints.ai_sdk_stream, methods=["GET"]),
            Route("/ai-sdk/sessions/{session_id}/messages", endpoints.ai_sdk_messages, methods=["GET"]),
        ]
    )
