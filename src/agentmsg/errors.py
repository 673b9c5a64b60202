"""One error vocabulary for the library (and, later, the wire).

Every error agentmsg raises is an :class:`AgentMsgError`. Errors about bad
values also subclass :class:`ValueError`, so code written against the seeds'
plain exceptions keeps working.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

__all__ = [
    "AgentMsgError",
    "CancelledError",
    "ConflictError",
    "DeadlineExceededError",
    "DecodeError",
    "MediaError",
    "NotFoundError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "ServiceError",
    "StoreError",
    "StoreFullError",
    "ToolArgumentsError",
    "UnauthenticatedError",
    "UnavailableError",
    "ValidationError",
    "Violation",
]


class AgentMsgError(Exception):
    """Base class of every error agentmsg raises."""


_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel = 3
_PREVIEW.maxstring = 80
_PREVIEW.maxother = 80
_PREVIEW.maxlong = 40


def preview(value: object) -> str:
    """A bounded ``repr`` of an untrusted value for an error message.

    Plain ``repr`` of a payload value recurses (a value nested 100,000 deep
    raises ``RecursionError``) and has no size limit; this one stops at three
    levels and about 80 characters a part.
    """
    return _PREVIEW.repr(value)


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where, which rule, and what is wrong.

    ``field`` is a path into the message (``user.content[1].image.media_type``)
    or, for the JSON import forms, into the payload (``[0].content[2].detail``).
    ``rule_id`` is the protovalidate rule id (``string.min_len``,
    ``system.content.kind``) or an agentmsg one (``type``, ``json``).
    """

    field: str
    rule_id: str
    message: str

    def __str__(self) -> str:
        where = self.field or "<message>"
        return f"{where}: {self.message} [{self.rule_id}]"


class ValidationError(AgentMsgError, ValueError):
    """A value breaks the contract's rules. Carries every violation found."""

    def __init__(self, violations: list[Violation], what: str = "message") -> None:
        self.violations: tuple[Violation, ...] = tuple(violations)
        lines = "; ".join(str(v) for v in self.violations)
        super().__init__(f"invalid {what}: {lines}")

    @classmethod
    def single(cls, field: str, rule_id: str, message: str, what: str = "value") -> ValidationError:
        """An error with one violation."""
        return cls([Violation(field, rule_id, message)], what)


class DecodeError(AgentMsgError, ValueError):
    """Bytes or JSON that are not a well-formed encoding of the expected type."""


class MediaError(AgentMsgError, ValueError):
    """Media that cannot be used: unknown format, bad base64, unreadable file, a decompression bomb."""


class ToolArgumentsError(AgentMsgError, ValueError):
    """A tool call's argument text is not a JSON object.

    The text itself is kept on the call (``ToolCallContent.arguments``); this
    error is raised only when the parsed form (``args``) is asked for.
    """

    def __init__(self, call_id: str, name: str, reason: str, arguments: str) -> None:
        self.call_id = call_id
        self.name = name
        self.reason = reason
        self.arguments = arguments
        preview = arguments if len(arguments) <= 80 else arguments[:77] + "..."
        super().__init__(
            f"tool call {call_id!r} ({name}): arguments are not a JSON object: {reason}; text: {preview!r}"
        )


class ServiceError(AgentMsgError):
    """An error from the agentmsg service (or raised by it): each subclass is one gRPC status."""


class NotFoundError(ServiceError, LookupError):
    """No such tool (or other named thing)."""


class ConflictError(ServiceError):
    """The request clashes with what is stored: a message id reused for different content, a tool name taken."""


class UnauthenticatedError(ServiceError):
    """No bearer token, or a wrong one."""


class PermissionDeniedError(ServiceError):
    """The caller's token does not allow this session or operation."""


class UnavailableError(ServiceError):
    """The service cannot be reached, or is shutting down."""


class DeadlineExceededError(ServiceError, TimeoutError):
    """The call's deadline passed."""


class CancelledError(ServiceError):
    """The call was cancelled."""


class ResourceExhaustedError(ServiceError):
    """A limit was hit: message size, concurrent calls, disk space."""


class StoreError(ServiceError):
    """The store could not write or read (a read-only or full disk, a broken file)."""


class StoreFullError(StoreError, ResourceExhaustedError):
    """The store refused a write because its disk (or database size limit) is full: RESOURCE_EXHAUSTED."""
