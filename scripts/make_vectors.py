"""Write the golden vectors in tests/vectors/: every message kind as binary protobuf and ProtoJSON.

    .venv/bin/python scripts/make_vectors.py [--out tests/vectors]

Each vector is written as ``<name>.binpb`` (deterministic binary encoding) and ``<name>.json`` (ProtoJSON,
indented), and listed in ``manifest.json`` with its message type and the violations protovalidate must report
(``[{field, rule_id}]``, empty for a valid vector). The vectors are defined below as ProtoJSON with fixed ids,
timestamps and bytes, so the output is the same on every run. The expected violations are written by hand and
checked against Python's protovalidate before anything is written.

The vectors were generated once and are committed: they pin the v1 wire format. Tests in both languages decode
them, re-encode them to the same bytes and JSON, and validate them with the same verdicts. Add vectors for new
fields and messages; never regenerate or edit an existing vector to make a test pass — a vector that no longer
decodes to the same thing means the contract broke its compatibility promise (proto/README.md).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pool, json_format, message_factory

import agentmsg
from agentmsg.v1 import (  # noqa: F401  (registers every agentmsg.v1 type in the default pool)
    content_pb2,
    message_pb2,
    stream_pb2,
    tool_pb2,
    usage_pb2,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors"
PACKAGE = "agentmsg.v1."

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c49444154789c63f8cfc000"
    "0003010100c9fe92ef0000000049454e44ae426082"
)  # a 1x1 red PNG
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
PDF = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
TS = "2026-01-02T03:04:05.678901Z"  # microseconds, as the Python wrappers make them


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class Vector:
    name: str
    type: str  # without the package
    json: dict[str, Any]
    violations: list[tuple[str, str]] = field(default_factory=list)  # (field path, rule id)
    # (seconds, nanos) set on `timestamp` after parsing: a value ProtoJSON cannot print, so the vector is
    # binary only (its manifest entry has "json": null).
    timestamp: tuple[int, int] | None = None


def message(message_id: str, role: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": message_id, "timestamp": TS, role: body, **extra}


def text(value: str) -> dict[str, Any]:
    return {"text": {"text": value}}


TOOL_CALL = {
    "id": "call_01",
    "name": "get_weather",
    "kind": "TOOL_KIND_WEB",
    "arguments": '{"city": "Paris", "days": 3}',
    "index": 1,
    "signature": "sig-call",
    "serverName": "weather-mcp",
    "metadata": {"approved": True, "attempt": 2, "tags": ["a", "b"], "none": None, "nested": {"ms": 12.5}},
}
TOOL_RESULT = {
    "id": "call_01",
    "name": "get_weather",
    "content": [text("14°C and light rain"), {"image": {"url": "https://example.test/rain.png"}}],
    "metadata": {"source": "cache"},
    "terminate": True,
    "terminateMessage": "done for now",
    "index": 1,
}
USAGE = {
    "inputTokens": "812",
    "outputTokens": "64",
    "cacheReadTokens": "0",  # known to be zero: presence keeps it apart from unknown
    "cacheWriteTokens": "1024",
    "reasoningTokens": "20",
    "totalTokens": "1900",
    "cost": {"input": 0.002436, "output": 0.00096, "cacheRead": 0, "cacheWrite": 0.00384, "total": 0.007236},
}
PROVENANCE = {
    "provider": "anthropic",
    "api": "anthropic-messages",
    "model": "claude-sonnet-4-5",
    "responseId": "msg_01",
}

VALID = [
    # Content, one vector per arm (and per media source)
    Vector("content_text", "Content", {"text": {"text": "Hello, 世界", "signature": "sig-text"}}),
    Vector("content_text_empty", "Content", {"text": {}}),
    Vector(
        "content_image_data",
        "Content",
        {"image": {"data": b64(PNG), "mediaType": "image/png", "detail": "IMAGE_DETAIL_HIGH"}},
    ),
    Vector(
        "content_image_url", "Content", {"image": {"url": "https://example.test/cat.jpg", "detail": "IMAGE_DETAIL_LOW"}}
    ),
    # field 5 (file_id) before field 3 (media_type) in the .proto: encoders must write by field number
    Vector("content_image_file_id", "Content", {"image": {"fileId": "file-img-1", "mediaType": "image/jpeg"}}),
    Vector("content_audio_data", "Content", {"audio": {"data": b64(WAV), "mediaType": "audio/wav"}}),
    Vector("content_audio_file_id", "Content", {"audio": {"fileId": "file-audio-1"}}),
    Vector(
        "content_image_several",
        "Content",
        {
            "image": {
                "data": b64(PNG),
                "mediaType": "image/png",
                "detail": "IMAGE_DETAIL_AUTO",
                "moreImages": [
                    {"url": "https://example.test/b.jpg"},
                    {"fileId": "file-img-2", "mediaType": "image/gif"},
                ],
            }
        },
    ),
    Vector(
        "content_audio_several",
        "Content",
        {"audio": {"data": b64(WAV), "mediaType": "audio/wav", "moreClips": [{"url": "https://example.test/b.mp3"}]}},
    ),
    Vector(
        "content_document_data",
        "Content",
        {"document": {"data": b64(PDF), "mediaType": "application/pdf", "filename": "spec.pdf", "title": "Spec"}},
    ),
    Vector(
        "content_document_url",
        "Content",
        {"document": {"url": "https://example.test/d.txt", "mediaType": "text/plain"}},
    ),
    Vector("content_thinking", "Content", {"thinking": {"text": "The user wants weather.", "signature": "EqQBCgIYAh"}}),
    Vector("content_redacted_thinking", "Content", {"redactedThinking": {"data": "ENCRYPTED=="}}),
    Vector("content_tool_call", "Content", {"toolCall": TOOL_CALL}),
    Vector("content_tool_result", "Content", {"toolResult": TOOL_RESULT}),
    Vector(
        "content_tool_result_error",
        "Content",
        {"toolResult": {"id": "call_02", "content": [text("timeout")], "isError": True}},
    ),
    Vector(
        "content_provider",
        "Content",
        {
            "provider": {
                "provider": "anthropic",
                "type": "server_tool_use",
                "json": '{"type":"server_tool_use","id":"s1"}',
            }
        },
    ),
    # Message, one vector per role
    Vector("message_system", "Message", message("msg-system", "system", {"content": [text("You are terse.")]})),
    Vector(
        "message_user",
        "Message",
        message(
            "msg-user",
            "user",
            {
                "content": [
                    text("What is in these?"),
                    {"image": {"data": b64(PNG), "mediaType": "image/png"}},
                    {"audio": {"url": "https://example.test/a.mp3"}},
                    {"document": {"fileId": "file-doc-1"}},
                    {"toolResult": {"id": "call_00", "content": [text("ok")]}},
                ]
            },
            name="alice",
        ),
    ),
    Vector(
        "message_assistant",
        "Message",
        message(
            "msg-assistant",
            "assistant",
            {
                "content": [
                    {"thinking": {"text": "Need the weather.", "signature": "sig-1"}},
                    {"redactedThinking": {"data": "opaque=="}},
                    text("Let me check."),
                    {"toolCall": TOOL_CALL},
                ],
                "usage": USAGE,
                "stopReason": "STOP_REASON_TOOL_CALLS",
                "stopReasonRaw": "tool_use",
                "provenance": PROVENANCE,
            },
        ),
    ),
    Vector(
        "message_assistant_error",
        "Message",
        message(
            "msg-assistant-error",
            "assistant",
            {"stopReason": "STOP_REASON_ERROR", "error": "overloaded", "provenance": PROVENANCE},
        ),
    ),
    Vector("message_tool", "Message", message("msg-tool", "tool", {"content": [{"toolResult": TOOL_RESULT}]})),
    Vector(
        "message_custom",
        "Message",
        message(
            "msg-custom",
            "custom",
            {
                "customType": "bash_execution",
                "content": [text("$ ls\nREADME.md")],
                "details": {"exitCode": 0, "command": "ls", "files": ["README.md"], "truncated": False},
            },
        ),
    ),
    Vector(
        "message_branch_summary",
        "Message",
        message("msg-branch", "branchSummary", {"summary": "Tried the other tool first.", "fromId": "msg-assistant"}),
    ),
    Vector(
        "message_compaction_summary",
        "Message",
        message("msg-compaction", "compactionSummary", {"summary": "Earlier: greetings.", "tokensBefore": "48000"}),
    ),
    # Usage, ToolDefinition
    Vector("usage", "Usage", USAGE),
    Vector("usage_unknown", "Usage", {"outputTokens": "0"}),
    Vector(
        "tool_definition",
        "ToolDefinition",
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}',
            "kind": "TOOL_KIND_WEB",
        },
    ),
    Vector(
        "tool_definition_mcp",
        "ToolDefinition",
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
            "kind": "TOOL_KIND_MCP",
            "title": "Weather",
            "outputSchema": '{"type":"object","properties":{"celsius":{"type":"number"}}}',
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": True,
            "strict": False,
        },
    ),
    # StreamEvent, one vector per event (and per delta)
    Vector(
        "stream_message_start",
        "StreamEvent",
        {"sequence": "0", "messageStart": {"messageId": "msg-stream", "timestamp": TS, "provenance": PROVENANCE}},
    ),
    Vector(
        "stream_block_start",
        "StreamEvent",
        {
            "sequence": "1",
            "blockStart": {"index": 0, "content": {"toolCall": {"id": "call_01", "name": "get_weather"}}},
        },
    ),
    Vector(
        "stream_block_delta_text",
        "StreamEvent",
        {"sequence": "2", "blockDelta": {"index": 1, "text": {"text": "It is"}}},
    ),
    Vector("stream_block_delta_thinking", "StreamEvent", {"blockDelta": {"index": 2, "thinking": {"text": "Hmm"}}}),
    Vector(
        "stream_block_delta_signature", "StreamEvent", {"blockDelta": {"index": 2, "signature": {"signature": "sig"}}}
    ),
    Vector(
        "stream_block_delta_tool_call",
        "StreamEvent",
        {"blockDelta": {"index": 0, "toolCall": {"arguments": '{"city": '}}},
    ),
    Vector("stream_block_stop", "StreamEvent", {"blockStop": {"index": 0}}),
    Vector("stream_usage", "StreamEvent", {"usage": {"usage": {"inputTokens": "812", "outputTokens": "64"}}}),
    Vector(
        "stream_message_stop",
        "StreamEvent",
        {"messageStop": {"stopReason": "STOP_REASON_TOOL_CALLS", "stopReasonRaw": "tool_use", "responseId": "msg_01"}},
    ),
    Vector(
        "stream_error",
        "StreamEvent",
        {"error": {"message": "overloaded", "stopReason": "STOP_REASON_ERROR", "code": "overloaded_error"}},
    ),
    # Conversation
    Vector(
        "conversation",
        "Conversation",
        {
            "messages": [
                message("c-1", "system", {"content": [text("Use tools for facts.")]}),
                message("c-2", "user", {"content": [text("Weather in Paris?")]}),
                message(
                    "c-3",
                    "assistant",
                    {"content": [{"toolCall": TOOL_CALL}], "stopReason": "STOP_REASON_TOOL_CALLS", "usage": USAGE},
                ),
                message("c-4", "tool", {"content": [{"toolResult": TOOL_RESULT}]}),
                message(
                    "c-5", "assistant", {"content": [text("14°C and light rain.")], "stopReason": "STOP_REASON_STOP"}
                ),
            ]
        },
    ),
]

INVALID = [
    Vector("invalid_content_no_kind", "Content", {}, [("kind", "required")]),
    Vector(
        "invalid_content_image_no_media_type",
        "Content",
        {"image": {"data": b64(PNG)}},
        [("image", "image.media_type_for_data")],
    ),
    Vector("invalid_content_image_url", "Content", {"image": {"url": "not a url"}}, [("image.url", "string.uri")]),
    Vector(
        "invalid_content_image_media_type",
        "Content",
        {"image": {"data": b64(PNG), "mediaType": "text/plain"}},
        [("image.media_type", "string.pattern")],
    ),
    Vector(
        "invalid_content_audio_no_media_type",
        "Content",
        {"audio": {"data": b64(WAV)}},
        [("audio", "audio.media_type_for_data")],
    ),
    Vector(
        "invalid_content_image_more_images",
        "Content",
        {
            "image": {
                "url": "https://example.test/a.png",
                "moreImages": [{"data": b64(PNG)}, {"mediaType": "image/png"}, {"url": "not a url"}],
            }
        },
        [
            ("image.more_images[0]", "image.media_type_for_data"),
            ("image.more_images[1].source", "required"),
            ("image.more_images[2].url", "string.uri"),
        ],
    ),
    Vector(
        "invalid_content_audio_more_clips",
        "Content",
        {"audio": {"url": "https://example.test/a.mp3", "moreClips": [{"data": b64(WAV), "mediaType": "video/mp4"}]}},
        [("audio.more_clips[0].media_type", "string.pattern")],
    ),
    Vector(
        "invalid_content_document_media_type",
        "Content",
        {"document": {"data": b64(PDF), "mediaType": "pdf"}},
        [("document.media_type", "string.pattern")],
    ),
    Vector(
        "invalid_content_redacted_thinking_empty",
        "Content",
        {"redactedThinking": {}},
        [("redacted_thinking.data", "string.min_len")],
    ),
    Vector(
        "invalid_content_tool_call",
        "Content",
        {"toolCall": {"arguments": "{}", "index": -1}},
        [("tool_call.id", "string.min_len"), ("tool_call.name", "string.min_len"), ("tool_call.index", "int32.gte")],
    ),
    Vector(
        "invalid_content_tool_result_thinking",
        "Content",
        {"toolResult": {"id": "call_01", "content": [{"thinking": {"text": "no"}}]}},
        [("tool_result.content[0]", "tool_result.content.kind")],
    ),
    Vector(
        "invalid_content_provider",
        "Content",
        {"provider": {"provider": "anthropic", "json": "x"}},
        [("provider.type", "string.min_len"), ("provider.json", "string.min_len")],
    ),
    Vector(
        "invalid_message_empty",
        "Message",
        {},
        [("id", "string.min_len"), ("timestamp", "required"), ("role", "required")],
    ),
    Vector(
        "invalid_message_timestamp_before_year_1",
        "Message",
        message("m-ts1", "user", {"content": [text("hi")]}),
        [("timestamp", "timestamp.gte_lte")],
        timestamp=(-(2**62), 0),
    ),
    Vector(
        "invalid_message_timestamp_year_10000",
        "Message",
        message("m-ts2", "user", {"content": [text("hi")]}),
        [("timestamp", "timestamp.gte_lte")],
        timestamp=(253_402_300_800, 0),
    ),
    Vector(
        "invalid_message_system_image",
        "Message",
        message("m-1", "system", {"content": [text("ok"), {"image": {"url": "https://example.test/a.png"}}]}),
        [("system.content[1]", "system.content.kind")],
    ),
    Vector(
        "invalid_message_user_empty", "Message", message("m-2", "user", {}), [("user.content", "repeated.min_items")]
    ),
    Vector(
        "invalid_message_user_thinking",
        "Message",
        message("m-3", "user", {"content": [{"thinking": {"text": "no"}}]}),
        [("user.content[0]", "user.content.kind")],
    ),
    Vector(
        "invalid_message_assistant_empty",
        "Message",
        message("m-4", "assistant", {"stopReason": "STOP_REASON_STOP"}),
        [("assistant", "assistant.content.required")],
    ),
    Vector(
        "invalid_message_assistant_image_and_stop_reason",
        "Message",
        message("m-5", "assistant", {"content": [{"image": {"url": "https://example.test/a.png"}}], "stopReason": 99}),
        [("assistant.content[0]", "assistant.content.kind"), ("assistant.stop_reason", "enum.defined_only")],
    ),
    Vector(
        "invalid_message_tool_text",
        "Message",
        message("m-6", "tool", {"content": [text("not a result")]}),
        [("tool.content[0]", "tool.content.kind")],
    ),
    Vector(
        "invalid_message_custom",
        "Message",
        message("m-7", "custom", {"content": [{"toolCall": {"id": "c", "name": "n"}}]}),
        [("custom.custom_type", "string.min_len"), ("custom.content[0]", "custom.content.kind")],
    ),
    Vector(
        "invalid_message_branch_summary_empty",
        "Message",
        message("m-8", "branchSummary", {}),
        [("branch_summary.summary", "string.min_len")],
    ),
    Vector(
        "invalid_message_compaction_summary",
        "Message",
        message("m-9", "compactionSummary", {"summary": "s", "tokensBefore": "-1"}),
        [("compaction_summary.tokens_before", "int64.gte")],
    ),
    Vector(
        "invalid_usage",
        "Usage",
        {"inputTokens": "-1", "cost": {"input": "Infinity", "output": -0.5, "total": "NaN"}},
        [
            ("input_tokens", "int64.gte"),
            ("cost.input", "double.finite"),
            ("cost.output", "double.gte"),
            ("cost.total", "double.gte"),
            ("cost.total", "double.finite"),
        ],
    ),
    Vector("invalid_tool_definition", "ToolDefinition", {"description": "no name"}, [("name", "string.min_len")]),
    Vector("invalid_stream_event_empty", "StreamEvent", {}, [("event", "required")]),
    Vector(
        "invalid_stream_block_start",
        "StreamEvent",
        {"sequence": "-1", "blockStart": {"index": -1}},
        [("sequence", "int64.gte"), ("block_start.index", "int32.gte"), ("block_start.content", "required")],
    ),
    Vector(
        "invalid_stream_block_delta_empty",
        "StreamEvent",
        {"blockDelta": {"index": 0}},
        [("block_delta.delta", "required")],
    ),
    Vector(
        "invalid_stream_message_start",
        "StreamEvent",
        {"messageStart": {}},
        [("message_start.message_id", "string.min_len")],
    ),
    Vector("invalid_stream_usage_empty", "StreamEvent", {"usage": {}}, [("usage.usage", "required")]),
    Vector("invalid_stream_error_empty", "StreamEvent", {"error": {}}, [("error.message", "string.min_len")]),
    Vector(
        "invalid_conversation",
        "Conversation",
        {
            "messages": [
                message("ok", "user", {"content": [text("hi")]}),
                message("", "system", {"content": [{"audio": {"fileId": "f"}}]}),
            ]
        },
        [("messages[1].id", "string.min_len"), ("messages[1].system.content[0]", "system.content.kind")],
    ),
]


# Contract v1.1: hosted tools, citations, logprobs, stop sequence, usage details.
def original(provider: str, block: dict[str, Any]) -> dict[str, Any]:
    return {"provider": provider, "type": block["type"], "json": json.dumps(block, separators=(",", ":"))}


WEB_CITATION = {
    "type": "web_search_result_location",
    "url": "https://example.test/paris",
    "title": "Paris",
    "encrypted_index": "EpMBCioIBhgC",
    "cited_text": "Paris is the capital of France.",
}
CITATIONS = [
    {
        "citedText": "Paris is the capital of France.",
        "web": {"url": "https://example.test/paris", "title": "Paris"},
        "original": original("anthropic", WEB_CITATION),
    },
    {
        "startIndex": 0,
        "endIndex": 5,
        "web": {"url": "https://example.test/g", "title": "G", "resultIndex": 2},
        "confidence": 0.75,
    },
    {"citedText": "capital", "document": {"documentIndex": 1, "title": "Atlas", "chars": {"start": "3", "end": "40"}}},
    {"citedText": "p. 2", "document": {"pages": {"start": "2", "end": "3"}, "fileId": "file-pdf-1"}},
    {"citedText": "row", "document": {"documentIndex": 2, "blocks": {"start": "0", "end": "1"}}},
    {
        "citedText": "result text",
        "searchResult": {
            "searchResultIndex": 0,
            "source": "https://kb.example.test/1",
            "title": "KB",
            "blocks": {"end": "1"},
        },
    },
    {"startIndex": 12, "endIndex": 12, "file": {"fileId": "file-1", "filename": "notes.md"}},
    {"startIndex": 3, "endIndex": 9, "file": {"fileId": "cfile-1", "filename": "plot.png", "containerId": "cntr_1"}},
    {"original": original("openai", {"type": "future_citation", "x": 1})},
]
LOGPROBS = [
    {
        "token": "Par",
        "logprob": -0.0125,
        "bytes": b64(b"Par"),
        "topLogprobs": [{"token": "Par", "logprob": -0.0125}, {"token": "Rome", "logprob": -4.5, "tokenId": 4321}],
    },
    {"token": "is", "logprob": -9999.0, "bytes": ""},
]
SERVER_TOOL_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "capital of France"},
}
HOSTED_CALL = {
    "id": "srvtoolu_01",
    "name": "web_search",
    "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
    "input": '{"query": "capital of France"}',
    "status": "HOSTED_TOOL_STATUS_COMPLETED",
    "statusRaw": "completed",
    "original": original("anthropic", SERVER_TOOL_USE),
}
SEARCH_RESULT_BLOCK = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.test/paris",
            "title": "Paris",
            "encrypted_content": "EqgfCioIARgB",
            "page_age": "April 30, 2025",
        }
    ],
}
HOSTED_SEARCH_RESULT = {
    "callId": "srvtoolu_01",
    "kind": "HOSTED_TOOL_KIND_WEB_SEARCH",
    "searchResults": {
        "results": [
            {
                "url": "https://example.test/paris",
                "title": "Paris",
                "pageAge": "April 30, 2025",
                "encryptedContent": "EqgfCioIARgB",
            },
            {"title": "report.pdf", "snippet": "Revenue grew.", "fileId": "file-9", "score": 0.5},
        ],
        "queries": ["capital of France"],
    },
    "original": original("anthropic", SEARCH_RESULT_BLOCK),
}
HOSTED_CODE_RESULT = {
    "callId": "srvtoolu_02",
    "name": "code_execution",
    "kind": "HOSTED_TOOL_KIND_CODE_EXECUTION",
    "codeExecution": {
        "stdout": "4\n",
        "stderr": "",
        "returnCode": 0,
        "files": [{"fileId": "file-out-1"}, {"url": "https://example.test/plot.png"}],
    },
    "content": [{"image": {"url": "https://example.test/plot.png"}}],
    "status": "HOSTED_TOOL_STATUS_COMPLETED",
    "statusRaw": "OUTCOME_OK",
}
HOSTED_FETCH_RESULT = {
    "callId": "srvtoolu_03",
    "kind": "HOSTED_TOOL_KIND_WEB_FETCH",
    "webFetch": {"url": "https://example.test/page", "retrievedAt": "2026-01-02T03:04:05Z"},
    "content": [{"document": {"data": b64(b"hello page"), "mediaType": "text/plain", "title": "Page"}}],
}
HOSTED_MCP_ERROR = {
    "callId": "mcptoolu_01",
    "name": "search_issues",
    "kind": "HOSTED_TOOL_KIND_MCP",
    "isError": True,
    "error": {"code": "unavailable", "message": "the server did not answer"},
    "content": [text("server down")],
    "status": "HOSTED_TOOL_STATUS_FAILED",
}
TOOL_REFERENCE = {"type": "tool_reference", "tool_name": "get_weather"}
USAGE_DETAILS = {
    "inputTokens": "20",
    "outputTokens": "300",
    "cacheWriteTokens": "1500",
    "cacheWrite5mTokens": "1000",
    "cacheWrite1hTokens": "500",
    "hostedToolRequests": {"web_search": "2", "web_fetch": "0", "code_execution": "1"},
}

VALID += [
    Vector("content_text_citations", "Content", {"text": {"text": "Paris is the capital.", "citations": CITATIONS}}),
    Vector("content_text_logprobs", "Content", {"text": {"text": "Paris", "logprobs": LOGPROBS}}),
    Vector("content_hosted_tool_call", "Content", {"hostedToolCall": HOSTED_CALL}),
    Vector(
        "content_hosted_tool_call_mcp",
        "Content",
        {
            "hostedToolCall": {
                "id": "mcp_01",
                "name": "search_issues",
                "kind": "HOSTED_TOOL_KIND_MCP",
                "input": '{"q":"bug"}',
                "server": "github",
                "status": "HOSTED_TOOL_STATUS_AWAITING_APPROVAL",
                "signature": "sig-part",
            }
        },
    ),
    Vector("content_hosted_tool_call_minimal", "Content", {"hostedToolCall": {}}),
    Vector(
        "content_document_context",
        "Content",
        {
            "document": {
                "data": b64(b"The sky is blue."),
                "mediaType": "text/plain",
                "title": "Sky",
                "context": "A note.",
            }
        },
    ),
    Vector(
        "content_tool_call_provider_extra",
        "Content",
        {
            "toolCall": {
                "id": "toolu_01",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
                "providerExtra": original(
                    "anthropic",
                    {"type": "tool_use", "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}},
                ),
            }
        },
    ),
    Vector("content_hosted_tool_result_search", "Content", {"hostedToolResult": HOSTED_SEARCH_RESULT}),
    Vector("content_hosted_tool_result_code", "Content", {"hostedToolResult": HOSTED_CODE_RESULT}),
    Vector(
        "content_hosted_tool_result_encrypted_code",
        "Content",
        {
            "hostedToolResult": {
                "callId": "srvtoolu_04",
                "kind": "HOSTED_TOOL_KIND_CODE_EXECUTION",
                "codeExecution": {"returnCode": 1, "stderr": "boom", "encryptedStdout": "EqQB"},
            }
        },
    ),
    Vector("content_hosted_tool_result_web_fetch", "Content", {"hostedToolResult": HOSTED_FETCH_RESULT}),
    Vector("content_hosted_tool_result_mcp_error", "Content", {"hostedToolResult": HOSTED_MCP_ERROR}),
    Vector(
        "content_hosted_tool_result_tool_search",
        "Content",
        {
            "hostedToolResult": {
                "callId": "srvtoolu_05",
                "kind": "HOSTED_TOOL_KIND_TOOL_SEARCH",
                "content": [{"provider": original("anthropic", TOOL_REFERENCE)}],
            }
        },
    ),
    Vector(
        "content_tool_result_tool_reference",
        "Content",
        {"toolResult": {"id": "toolu_9", "content": [{"provider": original("anthropic", TOOL_REFERENCE)}]}},
    ),
    Vector(
        "message_assistant_hosted_tools",
        "Message",
        message(
            "msg-hosted",
            "assistant",
            {
                "content": [
                    {"hostedToolCall": HOSTED_CALL},
                    {"hostedToolResult": HOSTED_SEARCH_RESULT},
                    {"text": {"text": "Paris.", "citations": CITATIONS[:1]}},
                ],
                "usage": USAGE_DETAILS,
                "stopReason": "STOP_REASON_STOP",
                "stopReasonRaw": "stop_sequence",
                "provenance": PROVENANCE,
                "stopSequence": "\n\nHuman:",
            },
        ),
    ),
    Vector(
        "message_system_provider",
        "Message",
        message(
            "msg-system-provider",
            "system",
            {
                "content": [
                    text("Use the tools."),
                    {"provider": original("anthropic", {"type": "tool_addition", "tool": TOOL_REFERENCE})},
                ]
            },
        ),
    ),
    Vector("usage_details", "Usage", USAGE_DETAILS),
    Vector(
        "stream_block_start_hosted_tool_call",
        "StreamEvent",
        {"blockStart": {"index": 1, "content": {"hostedToolCall": {"id": "srvtoolu_01", "name": "web_search"}}}},
    ),
    Vector(
        "stream_block_delta_citation",
        "StreamEvent",
        {"blockDelta": {"index": 2, "citation": {"citation": CITATIONS[0]}}},
    ),
    Vector(
        "stream_block_delta_logprobs", "StreamEvent", {"blockDelta": {"index": 2, "logprobs": {"logprobs": LOGPROBS}}}
    ),
    Vector(
        "stream_message_stop_stop_sequence",
        "StreamEvent",
        {"messageStop": {"stopReason": "STOP_REASON_STOP", "stopReasonRaw": "stop_sequence", "stopSequence": "END"}},
    ),
]

INVALID += [
    Vector(
        "invalid_citation",
        "Content",
        {
            "text": {
                "citations": [
                    {"citedText": "no source"},
                    {"startIndex": 9, "endIndex": 3, "web": {"url": "u"}, "confidence": 1.5},
                    {"startIndex": -1, "document": {"documentIndex": -1, "chars": {"start": "5", "end": "2"}}},
                    {"searchResult": {"searchResultIndex": -2, "blocks": {"start": "-1", "end": "0"}}},
                    {"original": {"provider": "", "type": "", "json": "{"}},
                ]
            }
        },
        [
            ("text.citations[0]", "citation.source"),
            ("text.citations[1]", "citation.span"),
            ("text.citations[1].confidence", "double.gte_lte"),
            ("text.citations[2].start_index", "int32.gte"),
            ("text.citations[2].document.document_index", "int32.gte"),
            ("text.citations[2].document.chars", "index_range.order"),
            ("text.citations[3].search_result.search_result_index", "int32.gte"),
            ("text.citations[3].search_result.blocks.start", "int64.gte"),
            ("text.citations[4].original.provider", "string.min_len"),
            ("text.citations[4].original.type", "string.min_len"),
            ("text.citations[4].original.json", "string.min_len"),
        ],
    ),
    Vector(
        "invalid_hosted_tool_result",
        "Content",
        {
            "hostedToolResult": {
                "error": {"code": "max_uses_exceeded"},
                "searchResults": {"results": [{"score": "NaN"}]},
                "content": [{"toolCall": {"id": "c", "name": "n"}}, {"hostedToolCall": {}}],
            }
        },
        [
            ("hosted_tool_result", "hosted_tool_result.error"),
            ("hosted_tool_result.search_results.results[0].score", "double.finite"),
            ("hosted_tool_result.content[0]", "hosted_tool_result.content.kind"),
            ("hosted_tool_result.content[1]", "hosted_tool_result.content.kind"),
        ],
    ),
    Vector(
        "invalid_hosted_tool_call_original",
        "Content",
        {"hostedToolCall": {"id": "x", "original": {"provider": "anthropic", "type": "server_tool_use"}}},
        [("hosted_tool_call.original.json", "string.min_len")],
    ),
    Vector(
        "invalid_tool_call_provider_extra",
        "Content",
        {"toolCall": {"id": "t", "name": "n", "providerExtra": {"provider": "anthropic", "json": "{}"}}},
        [("tool_call.provider_extra.type", "string.min_len")],
    ),
    Vector(
        "invalid_usage_details",
        "Usage",
        {"cacheWrite5mTokens": "-1", "cacheWrite1hTokens": "-2", "hostedToolRequests": {"Web-Search": "1", "ok": "-3"}},
        [
            ("cache_write_5m_tokens", "int64.gte"),
            ("cache_write_1h_tokens", "int64.gte"),
            ("hosted_tool_requests['Web-Search']", "string.pattern"),
            ("hosted_tool_requests['ok']", "int64.gte"),
        ],
    ),
    Vector(
        "invalid_message_user_hosted_tool",
        "Message",
        message("m-10", "user", {"content": [{"hostedToolCall": {}}, {"hostedToolResult": {}}]}),
        [("user.content[0]", "user.content.kind"), ("user.content[1]", "user.content.kind")],
    ),
    Vector(
        "invalid_message_tool_result_hosted",
        "Message",
        message("m-11", "tool", {"content": [{"toolResult": {"id": "c", "content": [{"hostedToolResult": {}}]}}]}),
        [("tool.content[0].tool_result.content[0]", "tool_result.content.kind")],
    ),
    Vector(
        "invalid_message_system_hosted_tool",
        "Message",
        message("m-12", "system", {"content": [{"hostedToolCall": {}}]}),
        [("system.content[0]", "system.content.kind")],
    ),
    Vector(
        "invalid_stream_citation_delta_empty",
        "StreamEvent",
        {"blockDelta": {"index": 0, "citation": {}}},
        [("block_delta.citation.citation", "required")],
    ),
]


# Contract v1.1: the response keys no field holds (AssistantMessage.provider_extra), MessageStop's model.
RESPONSE_EXTRA = original(
    "anthropic",
    {
        "type": "message",
        "container": {"id": "container_011CaNRhtVsGiXZx1CgSETLH", "expires_at": "2026-04-24T11:19:38.758845Z"},
        "stop_details": {"type": "refusal", "category": "cyber", "explanation": None},
        "usage": {"iterations": [{"type": "compaction", "input_tokens": 60385, "output_tokens": 592}]},
    },
)

VALID += [
    Vector(
        "message_assistant_provider_extra",
        "Message",
        message(
            "msg-provider-extra",
            "assistant",
            {
                "content": [text("I can't help with that.")],
                "stopReason": "STOP_REASON_CONTENT_FILTER",
                "stopReasonRaw": "refusal",
                "provenance": PROVENANCE,
                "providerExtra": RESPONSE_EXTRA,
            },
        ),
    ),
    Vector(
        "stream_message_stop_provider_extra",
        "StreamEvent",
        {
            "messageStop": {
                "stopReason": "STOP_REASON_STOP",
                "stopReasonRaw": "end_turn",
                "providerExtra": RESPONSE_EXTRA,
                "model": "claude-opus-4-8",
            }
        },
    ),
]

INVALID += [
    Vector(
        "invalid_message_assistant_provider_extra",
        "Message",
        message("msg-bad-extra", "assistant", {"content": [text("hi")], "providerExtra": {"json": "{}"}}),
        [("assistant.provider_extra.provider", "string.min_len"), ("assistant.provider_extra.type", "string.min_len")],
    ),
]

# Contract v1.2: tool approval.
MCP_APPROVAL = {"type": "mcp_approval_response", "approval_request_id": "mcpr_01", "approve": False, "reason": "no"}
VALID += [
    Vector(
        "content_tool_call_requires_approval",
        "Content",
        {
            "toolCall": {
                "id": "call_9",
                "name": "delete_file",
                "arguments": '{"path":"/tmp/x"}',
                "requiresApproval": True,
            }
        },
    ),
    Vector(
        "content_approval",
        "Content",
        {
            "approval": {
                "callId": "call_9",
                "decision": "TOOL_APPROVAL_DECISION_APPROVED",
                "decidedBy": "ann@example.com",
            }
        },
    ),
    Vector(
        "message_user_approval",
        "Message",
        message(
            "msg-approval",
            "user",
            {
                "content": [
                    {
                        "approval": {
                            "callId": "call_9",
                            "decision": "TOOL_APPROVAL_DECISION_DENIED",
                            "reason": "not on this machine",
                            "decidedBy": "ann@example.com",
                            "decidedAt": "2026-01-02T03:04:05.678Z",
                        }
                    },
                    {
                        "approval": {
                            "callId": "mcpr_01",
                            "decision": "TOOL_APPROVAL_DECISION_DENIED",
                            "reason": "no",
                            "original": original("openai-responses", MCP_APPROVAL),
                        }
                    },
                ]
            },
        ),
    ),
]

INVALID += [
    Vector(
        "invalid_message_user_approval",
        "Message",
        message(
            "msg-bad-approval", "user", {"content": [{"approval": {"decision": "TOOL_APPROVAL_DECISION_UNSPECIFIED"}}]}
        ),
        [("user.content[0].approval.call_id", "string.min_len"), ("user.content[0].approval.decision", "enum.not_in")],
    ),
    Vector(
        "invalid_message_assistant_approval",
        "Message",
        message(
            "msg-bad-approval-role",
            "assistant",
            {"content": [{"approval": {"callId": "c", "decision": "TOOL_APPROVAL_DECISION_APPROVED"}}]},
        ),
        [("assistant.content[0]", "assistant.content.kind")],
    ),
]


def message_class(type_name: str) -> Any:
    return message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(PACKAGE + type_name))


def build(vector: Vector) -> Any:
    pb = message_class(vector.type)()
    json_format.ParseDict(vector.json, pb)
    if vector.timestamp is not None:
        pb.timestamp.seconds, pb.timestamp.nanos = vector.timestamp
    return pb


JSON_VALUES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _ordered(descriptor: Any, value: dict[str, Any]) -> dict[str, Any]:
    """ProtoJSON ``value`` of ``descriptor`` with fields in field order and map and Struct keys sorted."""
    result: dict[str, Any] = {}
    for key, item in value.items():
        field_ = descriptor.fields_by_camelcase_name[key]
        kind = field_.message_type
        if kind is None:
            result[key] = item
        elif kind.full_name in JSON_VALUES or kind.GetOptions().map_entry:
            result[key] = _sorted(item)  # map and Struct keys have no order of their own: sort, as the binary does
        elif field_.is_repeated:
            result[key] = [_ordered(kind, element) for element in item]
        else:
            result[key] = _ordered(kind, item) if isinstance(item, dict) else item  # well-known types print as scalars
    return result


def to_json(pb: Any) -> str:
    """Deterministic ProtoJSON text (json_format prints map and Struct keys in hash order)."""
    return json.dumps(_ordered(pb.DESCRIPTOR, json_format.MessageToDict(pb)), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the directory to write (default: tests/vectors)")
    out: Path = parser.parse_args().out
    names = [v.name for v in (*VALID, *INVALID)]
    if len(set(names)) != len(names):
        sys.exit("vector names repeat")
    built = [(vector, build(vector)) for vector in (*VALID, *INVALID)]
    wrong = []
    for vector, pb in built:
        found = sorted((v.field, v.rule_id) for v in agentmsg.violations(pb))
        if found != sorted(vector.violations):
            wrong.append(f"{vector.name}: expected {sorted(vector.violations)}, protovalidate reports {found}")
    if wrong:
        sys.exit("the expected violations are wrong:\n" + "\n".join(wrong))
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for vector, pb in built:
        (out / f"{vector.name}.binpb").write_bytes(pb.SerializeToString(deterministic=True))
        if vector.timestamp is None:
            (out / f"{vector.name}.json").write_text(to_json(pb), encoding="utf-8")
        entries.append(
            {
                "name": vector.name,
                "type": PACKAGE + vector.type,
                "binary": f"{vector.name}.binpb",
                "json": f"{vector.name}.json" if vector.timestamp is None else None,
                "violations": [{"field": f, "rule_id": r} for f, r in vector.violations],
            }
        )
    manifest = {
        "about": "Golden vectors of the agentmsg.v1 contract, written by scripts/make_vectors.py. Each vector is "
        "<name>.binpb (binary) and <name>.json (ProtoJSON) of message type `type` (json null: a value ProtoJSON "
        "cannot print, binary only); `violations` are what protovalidate must report for it, [] when it is valid.",
        "vectors": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} vectors to {out}")


if __name__ == "__main__":
    main()
