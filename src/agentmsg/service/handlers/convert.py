"""``agentmsg.v1.ConvertService``'s logic: the converters of :mod:`agentmsg.formats`, for any transport's caller.

``ToProvider`` writes messages (given, or a session's context through
:meth:`~agentmsg.service.handlers.sessions.SessionHandler.context`) as a format's JSON text, exactly as
:func:`agentmsg.formats.dumps` writes the Python converter's output, with the converter's
:class:`~agentmsg.providers.ConversionReport`; ``FromProvider`` reads a format's JSON text. A strict conversion
that would lose something is INVALID_ARGUMENT with one field violation per loss (rule ``conversion.strict``),
naming the loss's place in the request (``input.messages.messages[2].contents[0]``) or in the session's context
(``context[2].contents[0]``). Converting given messages needs any valid token; a session's context needs the
session in the token's scope.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agentmsg import formats
from agentmsg.errors import ResourceExhaustedError, ValidationError, Violation
from agentmsg.messages import AgentMessage, message_from_proto
from agentmsg.providers._common import ConversionError, ConversionReport, Loss
from agentmsg.service.handlers import Caller
from agentmsg.service.handlers.sessions import SessionHandler
from agentmsg.service.rpc import _check, check_messages
from agentmsg.v1 import convert_service_pb2

__all__ = ["CONVERT_SERVICE", "FORMAT_NAMES", "ConvertHandler"]

CONVERT_SERVICE = "agentmsg.v1.ConvertService"

# ConversionFormat value -> the format's name in agentmsg.formats (and `agentmsg convert`).
FORMAT_NAMES: dict[int, str] = {value: name for name, value in formats.WIRE_FORMATS.items()}
MESSAGES_FIELD = "input.messages.messages"
# Fields of a converter's refusal that name the request's own options, not a place in the messages converted.
OPTION_FIELDS = ("format", "response")
T = TypeVar("T")


def _losses(losses: Sequence[Loss]) -> list[convert_service_pb2.ConversionLoss]:
    return [convert_service_pb2.ConversionLoss(path=x.path, what=x.what, reason=x.reason) for x in losses]


def _format(value: int) -> str:
    name = FORMAT_NAMES.get(value)
    if name is None:  # validation refuses it first; a newer client's value still gets a clear answer
        raise ValidationError.single("format", "enum.defined_only", f"unknown conversion format {value}")
    return name


def _under(prefix: str, path: str) -> str:
    """A converter's path in its own input (``[2].contents[0]``) as a place in the request or context."""
    if not path:
        return prefix
    return f"{prefix}{path}" if path.startswith("[") else f"{prefix}.{path}"


def _prefixed(error: ValidationError, prefix: str) -> ValidationError:
    """``error`` with each violation's field under ``prefix``."""
    found = [Violation(_under(prefix, v.field), v.rule_id, v.message) for v in error.violations]
    return ValidationError(found, "conversion")


def _strict(error: ConversionError, prefix: str) -> ValidationError:
    """A strict conversion's refusal as field violations, one per loss, each naming where it is."""
    found = [
        Violation(
            _under(prefix, loss.path), "conversion.strict", f"{error.target} cannot hold {loss.what}: {loss.reason}"
        )
        for loss in error.losses
    ]
    return ValidationError(found, "conversion")


def _parse(text: str) -> Any:
    """The request's JSON text, or INVALID_ARGUMENT naming ``json`` (no NaN or Infinity: not JSON)."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=constant)
    except RecursionError:
        raise ValidationError.single("json", "json", "nested too deeply to read") from None
    except ValueError as exc:
        raise ValidationError.single("json", "json", f"not JSON: {exc}") from None


class ConvertHandler:
    """``agentmsg.v1.ConvertService``'s logic; a session's context is read through the session handler."""

    def __init__(self, sessions: SessionHandler) -> None:
        self.sessions = sessions

    async def _run(self, convert: Callable[[], T]) -> T:
        """A conversion off the event loop: a large one never holds the other calls up."""
        return await asyncio.to_thread(convert)

    async def ToProvider(  # noqa: N802 - the RPC's name
        self, request: convert_service_pb2.ToProviderRequest, caller: Caller
    ) -> convert_service_pb2.ToProviderResponse:
        source = request.input.WhichOneof("source")
        access = self.sessions.access
        messages: Sequence[AgentMessage]
        if source == "messages":
            if access.enabled:
                access.require(caller.metadata)
            given = request.input.messages.messages
            shell = convert_service_pb2.ToProviderRequest(format=request.format)
            shell.input.messages.SetInParent()
            _check(shell)
            try:
                self.sessions.limits.check_messages(given, "messages")
                await check_messages(request.input.messages, "messages")
            except ValidationError as exc:
                raise _prefixed(exc, "input.messages") from None
            messages = [message_from_proto(m) for m in given]
            prefix = MESSAGES_FIELD
        else:
            if source == "session" and access.enabled:
                access.check_session(caller.metadata, request.input.session.session_id)
            elif access.enabled:
                access.require(caller.metadata)
            _check(request)  # no input at all is refused here
            session = request.input.session
            messages = await self.sessions.context(caller, session.session_id, session.leaf_entry_id)
            prefix = "context"
        name = _format(request.format)
        report = ConversionReport()

        def convert() -> str:
            try:
                payload = formats.write(name, messages, response=request.response, strict=request.strict, report=report)
            except ConversionError as exc:
                raise _strict(exc, prefix) from None
            except ValidationError as exc:
                if exc.violations and exc.violations[0].field in OPTION_FIELDS:
                    raise
                raise _prefixed(exc, prefix) from None
            return formats.dumps(payload)

        text = await self._run(convert)
        self._fits(len(text.encode()), "the converted payload")
        return convert_service_pb2.ToProviderResponse(json=text, losses=_losses(report.losses), id_map=report.id_map)

    async def FromProvider(  # noqa: N802 - the RPC's name
        self, request: convert_service_pb2.FromProviderRequest, caller: Caller
    ) -> convert_service_pb2.FromProviderResponse:
        if self.sessions.access.enabled:
            self.sessions.access.require(caller.metadata)
        _check(request)
        name = _format(request.format)
        pass_through = request.pass_through_unknown if request.HasField("pass_through_unknown") else None
        report = ConversionReport()

        def convert() -> list[AgentMessage]:
            data = _parse(request.json)
            return formats.read(
                name,
                data,
                response=request.response,
                pass_through_unknown=pass_through,
                id_map=dict(request.id_map),
                report=report,
            )

        messages = await self._run(convert)
        response = convert_service_pb2.FromProviderResponse(
            messages=[m.pb for m in messages], losses=_losses(report.losses)
        )
        self._fits(response.ByteSize(), "the messages read")
        return response

    def _fits(self, size: int, what: str) -> None:
        if size > self.sessions.budget:
            raise ResourceExhaustedError(
                f"{what} come to {size} bytes; a reply carries at most {self.sessions.budget} "
                "(the server's maximum message size less room for framing)"
            )
