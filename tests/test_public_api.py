"""The public surface is curated: this test changes only with a deliberate API change."""

from __future__ import annotations

import agentmsg

PUBLIC = {
    "AgentMessage", "AgentMsgError", "AssistantMessage", "AudioContent", "BaseMessage", "Blocks",
    "BranchSummaryMessage", "CompactionSummaryMessage", "Content", "ContentBase", "Conversation", "CustomMessage",
    "DecodeError",
    "DocumentContent", "ImageContent", "ImageDetail", "LLMMessage", "MediaError", "Provenance", "ProtoWrapper",
    "ProviderContent", "ProviderState",
    "RedactedThinkingContent", "Role", "SessionMessage", "StopReason", "SystemMessage", "TextContent",
    "ThinkingContent", "ToolArgumentsError", "ToolCallContent", "ToolDefinition", "ToolKind", "ToolMessage",
    "ToolResultContent", "UnknownContent", "UnknownMessage", "Usage", "UsageCost", "UserMessage", "ValidationError",
    "Violation", "__version__", "content_from_proto", "message_from_proto", "validate", "violations",
    "to_otel_messages",
    "CancelledError", "ConflictError", "DeadlineExceededError", "NotFoundError", "PermissionDeniedError",
    "ResourceExhaustedError", "ServiceError", "StoreError", "StoreFullError", "UnauthenticatedError",
    "UnavailableError",
    "Citation", "CodeExecutionFile", "CodeExecutionOutput", "HostedToolCallContent", "HostedToolKind",
    "HostedToolResultContent", "HostedToolStatus", "SearchResult", "TokenLogprob", "WebFetchOutput",
    "ToolApprovalContent", "ToolApprovalDecision",
}  # fmt: skip


def test_all_is_locked() -> None:
    assert set(agentmsg.__all__) == PUBLIC
    assert len(agentmsg.__all__) == len(PUBLIC)


def test_every_public_name_resolves() -> None:
    for name in agentmsg.__all__:
        assert getattr(agentmsg, name) is not None, name


def test_seed_enum_values() -> None:
    assert [r.value for r in agentmsg.Role] == [
        "system", "user", "assistant", "tool", "custom", "branch_summary", "compaction_summary",
    ]  # fmt: skip
    assert [s.value for s in agentmsg.StopReason] == [
        "stop",
        "length",
        "tool_calls",
        "content_filter",
        "abort",
        "error",
    ]
    assert {k.value for k in agentmsg.ToolKind} == {
        "read", "edit", "write", "execute", "web", "cron", "agent", "workflow", "plan", "automation", "mcp", "unknown",
    }  # fmt: skip


def test_generated_code_imports_cleanly() -> None:
    from agentmsg.v1 import content_pb2, message_pb2, tool_pb2, usage_pb2

    for module, name in ((content_pb2, "content"), (message_pb2, "message"), (tool_pb2, "tool"), (usage_pb2, "usage")):
        assert module.DESCRIPTOR.package == "agentmsg.v1"
        assert module.DESCRIPTOR.name == f"agentmsg/v1/{name}.proto"
