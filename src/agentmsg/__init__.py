"""agentmsg: the schema-first message contract for LLM agents.

The model is defined once in ``proto/agentmsg/v1/*.proto``; the generated
code lives in :mod:`agentmsg.v1`; this package wraps it in typed classes.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import Any

from agentmsg import _validation
from agentmsg._wrapper import ProtoWrapper
from agentmsg.content import (
    AudioContent,
    Citation,
    CodeExecutionFile,
    CodeExecutionOutput,
    Content,
    ContentBase,
    DocumentContent,
    HostedToolCallContent,
    HostedToolKind,
    HostedToolResultContent,
    HostedToolStatus,
    ImageContent,
    ImageDetail,
    ProviderContent,
    RedactedThinkingContent,
    SearchResult,
    TextContent,
    ThinkingContent,
    TokenLogprob,
    ToolApprovalContent,
    ToolApprovalDecision,
    ToolCallContent,
    ToolKind,
    ToolResultContent,
    UnknownContent,
    WebFetchOutput,
    content_from_proto,
)
from agentmsg.errors import (
    AgentMsgError,
    CancelledError,
    ConflictError,
    DeadlineExceededError,
    DecodeError,
    MediaError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    ServiceError,
    StoreError,
    StoreFullError,
    ToolArgumentsError,
    UnauthenticatedError,
    UnavailableError,
    ValidationError,
    Violation,
)
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    Blocks,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    Conversation,
    CustomMessage,
    LLMMessage,
    Provenance,
    ProviderState,
    Role,
    SessionMessage,
    StopReason,
    SystemMessage,
    ToolMessage,
    UnknownMessage,
    UserMessage,
    message_from_proto,
)
from agentmsg.providers.otel_genai import to_otel_messages
from agentmsg.tools import ToolDefinition
from agentmsg.usage import Usage, UsageCost

try:
    # pyproject.toml's [project] version, the one source (scripts/version.py stamps it into the npm package)
    __version__ = _metadata.version("agentmsg")
except _metadata.PackageNotFoundError:  # the sources on sys.path without an install (not even an editable one)
    __version__ = "0+unknown"

__all__ = [
    "AgentMessage",
    "AgentMsgError",
    "AssistantMessage",
    "AudioContent",
    "BaseMessage",
    "Blocks",
    "BranchSummaryMessage",
    "CancelledError",
    "Citation",
    "CodeExecutionFile",
    "CodeExecutionOutput",
    "CompactionSummaryMessage",
    "ConflictError",
    "Content",
    "ContentBase",
    "Conversation",
    "CustomMessage",
    "DeadlineExceededError",
    "DecodeError",
    "DocumentContent",
    "HostedToolCallContent",
    "HostedToolKind",
    "HostedToolResultContent",
    "HostedToolStatus",
    "ImageContent",
    "ImageDetail",
    "LLMMessage",
    "MediaError",
    "NotFoundError",
    "PermissionDeniedError",
    "ProtoWrapper",
    "Provenance",
    "ProviderContent",
    "ProviderState",
    "RedactedThinkingContent",
    "ResourceExhaustedError",
    "Role",
    "SearchResult",
    "ServiceError",
    "SessionMessage",
    "StopReason",
    "StoreError",
    "StoreFullError",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "TokenLogprob",
    "ToolApprovalContent",
    "ToolApprovalDecision",
    "ToolArgumentsError",
    "ToolCallContent",
    "ToolDefinition",
    "ToolKind",
    "ToolMessage",
    "ToolResultContent",
    "UnauthenticatedError",
    "UnavailableError",
    "UnknownContent",
    "UnknownMessage",
    "Usage",
    "UsageCost",
    "UserMessage",
    "ValidationError",
    "Violation",
    "WebFetchOutput",
    "__version__",
    "content_from_proto",
    "message_from_proto",
    "to_otel_messages",
    "validate",
    "violations",
]


def violations(value: Any) -> list[Violation]:
    """Every contract rule ``value`` breaks (empty when valid).

    ``value`` is a wrapper, a generated ``agentmsg.v1`` message, or an iterable
    of those (paths are then prefixed with ``[i]``).
    """
    if isinstance(value, ProtoWrapper):
        return _validation.violations_of(value.pb)
    if hasattr(value, "DESCRIPTOR") and hasattr(value, "SerializeToString"):
        return _validation.violations_of(value)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"cannot validate a {type(value).__name__}: pass a message, a content block or a list of them")
    found: list[Violation] = []
    for i, item in enumerate(value):
        for v in violations(item):
            found.append(Violation(f"[{i}].{v.field}" if v.field else f"[{i}]", v.rule_id, v.message))
    return found


def validate(value: Any) -> None:
    """Check ``value`` against the contract's rules (the protovalidate rules in the proto).

    Raises :class:`ValidationError` listing every violation: field path, rule
    id, message.
    """
    found = violations(value)
    if found:
        raise ValidationError(found, type(value).__name__)
