"""One table from agentmsg errors to gRPC statuses, and back.

The server aborts with a ``google.rpc.Status`` carrying an ``ErrorInfo``
(reason = the error class, or its nearest base in the table; domain ``agentmsg``) and, for validation errors, a
``BadRequest`` with one field violation per broken rule. The client reads the
details and raises the same class, with the same violations.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from agentmsg import errors
from agentmsg.errors import AgentMsgError, ValidationError, Violation

DOMAIN = "agentmsg"

log = logging.getLogger("agentmsg.service")

# error class -> status code; the ErrorInfo reason is the class's name (the nearest one in this table).
_CODES: dict[type[AgentMsgError], grpc.StatusCode] = {
    errors.ValidationError: grpc.StatusCode.INVALID_ARGUMENT,
    errors.DecodeError: grpc.StatusCode.INVALID_ARGUMENT,
    errors.MediaError: grpc.StatusCode.INVALID_ARGUMENT,
    errors.ToolArgumentsError: grpc.StatusCode.INVALID_ARGUMENT,
    errors.NotFoundError: grpc.StatusCode.NOT_FOUND,
    errors.ConflictError: grpc.StatusCode.ALREADY_EXISTS,
    errors.UnauthenticatedError: grpc.StatusCode.UNAUTHENTICATED,
    errors.PermissionDeniedError: grpc.StatusCode.PERMISSION_DENIED,
    errors.UnavailableError: grpc.StatusCode.UNAVAILABLE,
    errors.DeadlineExceededError: grpc.StatusCode.DEADLINE_EXCEEDED,
    errors.CancelledError: grpc.StatusCode.CANCELLED,
    errors.ResourceExhaustedError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    errors.StoreError: grpc.StatusCode.UNAVAILABLE,
    errors.StoreFullError: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
# status code -> the class a client raises when the details name no agentmsg class
# (statuses gRPC itself produces: deadlines, size limits, unreachable servers).
_BY_CODE: dict[grpc.StatusCode, type[AgentMsgError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: errors.ValidationError,
    grpc.StatusCode.NOT_FOUND: errors.NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: errors.ConflictError,
    grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
    grpc.StatusCode.UNAVAILABLE: errors.UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: errors.DeadlineExceededError,
    grpc.StatusCode.CANCELLED: errors.CancelledError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: errors.ResourceExhaustedError,
}
_BY_NAME: dict[str, type[AgentMsgError]] = {cls.__name__: cls for cls in _CODES}


def _vocabulary_class(error: AgentMsgError) -> type[AgentMsgError]:
    """The class of the error vocabulary ``error`` is (itself, or its nearest base in the table): a private
    subclass goes out as the public class clients know, never as its own name."""
    for cls in type(error).__mro__:
        if cls in _CODES:
            return cls
    return type(error)


def code_for(error: AgentMsgError) -> grpc.StatusCode:
    """The gRPC status code for an agentmsg error (INTERNAL for anything unmapped)."""
    return _CODES.get(_vocabulary_class(error), grpc.StatusCode.INTERNAL)


def to_status(
    error: AgentMsgError, *, extra: Sequence[Message] = (), metadata: Mapping[str, str] | None = None
) -> grpc.Status:
    """A rich status for ``error``: ErrorInfo always (with ``metadata``), BadRequest for violations, then
    the ``extra`` details (a ``QuotaFailure``, say)."""
    code = code_for(error)
    packed = packed_details(error, extra=extra, metadata=metadata)
    status = status_pb2.Status(code=code.value[0], message=str(error), details=packed)
    rich: grpc.Status = rpc_status.to_status(status)
    return rich


def packed_details(
    error: AgentMsgError, *, extra: Sequence[Message] = (), metadata: Mapping[str, str] | None = None
) -> list[any_pb2.Any]:
    """The details every transport sends with ``error``, packed: ``google.rpc.ErrorInfo`` (reason: the error
    class; domain ``agentmsg``), ``google.rpc.BadRequest`` for a validation error, then ``extra``."""
    info = error_details_pb2.ErrorInfo(reason=_vocabulary_class(error).__name__, domain=DOMAIN, metadata=metadata or {})
    details: list[Message] = [info]
    if isinstance(error, ValidationError):
        details.append(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.message, reason=v.rule_id)
                    for v in error.violations
                ]
            )
        )
    details.extend(extra)
    packed = []
    for detail in details:
        holder = any_pb2.Any()
        holder.Pack(detail)
        packed.append(holder)
    return packed


def report(error: AgentMsgError) -> None:
    """Log what a store's failure keeps from clients (its notes: the database's path, the driver's message)."""
    if isinstance(error, errors.StoreError):
        notes = "; ".join(getattr(error, "__notes__", ()))
        log.warning("store error answered %s: %s%s", code_for(error).name, error, f" ({notes})" if notes else "")


async def abort(context: grpc.aio.ServicerContext, error: AgentMsgError) -> NoReturn:  # type: ignore[type-arg]
    """End the call with ``error`` as a rich status.

    A store's failure is logged here with what it keeps from clients (its notes: the database's path, the
    driver's message); the client gets the error's message alone.
    """
    report(error)
    await context.abort_with_status(to_status(error))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


def from_rpc_error(error: grpc.RpcError) -> AgentMsgError:
    """The agentmsg error a failed call stands for (the same class the server raised)."""
    code: grpc.StatusCode = error.code()
    message: str = error.details() or code.name
    status = rpc_status.from_call(error)
    reason = ""
    violations: list[Violation] = []
    if status is not None:
        message = status.message or message
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain == DOMAIN:
                    reason = info.reason
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations = [Violation(v.field, v.reason, v.description) for v in bad.field_violations]
    cls = _BY_NAME.get(reason) or _BY_CODE.get(code, errors.ServiceError)
    if issubclass(cls, ValidationError):
        if not violations:
            violations = [Violation("", code.name.lower(), message)]
        result: AgentMsgError = cls(violations, "request")
        result.args = (message,)
        return result
    if cls is errors.ToolArgumentsError:  # its constructor wants the call: report it as the violation it is
        return ValidationError([Violation("arguments", "json", message)], "request")
    return cls(message)
