"""`agentmsg demo`: the contract layer end to end on one conversation."""

from __future__ import annotations

import io
import json
from typing import TextIO

import agentmsg as am
from agentmsg import dict_form


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 120, 200)).save(buffer, "PNG")
    return buffer.getvalue()


def build_conversation() -> am.Conversation:
    """A conversation with every role and every content kind."""
    png = _png()
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
    call = am.ToolCallContent("toolu_01", "read_file", arguments='{"path": "notes.txt", "limit": 20}', kind="read")
    return am.Conversation(
        [
            am.SystemMessage.text("You are a careful coding agent."),
            am.UserMessage(
                [
                    am.TextContent("What do the screenshot, the recording and the spec say?"),
                    am.ImageContent(png, detail="high"),
                    am.AudioContent(wav),
                    am.DocumentContent.from_text("Spec: be brief.", filename="spec.txt"),
                ]
            ),
            am.AssistantMessage(
                [
                    am.ThinkingContent("The notes file will explain.", signature="EqQBCgIYAhIk"),
                    am.RedactedThinkingContent("EmwKAhgBEgy3va3pzix"),
                    am.TextContent("Let me read the notes."),
                    call,
                ],
                usage=am.Usage(input_tokens=812, output_tokens=64, cache_read_tokens=0, cache_write_tokens=812),
                stop_reason=am.StopReason.TOOL_CALLS,
                stop_reason_raw="tool_use",
                provenance=am.Provenance("anthropic", "anthropic-messages", "claude-sonnet-4-5", "msg_01"),
            ),
            am.ToolMessage.from_result(
                am.ToolResultContent(call.id, "be brief", name=call.name, metadata={"bytes": 8}, terminate=False)
            ),
            am.AssistantMessage.text("They all say: be brief.", stop_reason="stop"),
            am.CustomMessage("bash_execution", [am.TextContent("$ wc -c notes.txt\n8")], details={"exit_code": 0}),
            am.BranchSummaryMessage("Tried grep first; it found nothing.", from_id="m-earlier"),
            am.CompactionSummaryMessage("The user asked what three attachments say.", tokens_before=48_213),
        ]
    )


def run(out: TextIO) -> int:
    conversation = build_conversation()
    am.validate(conversation)
    kinds = sorted({block.type or "unknown" for message in conversation for block in message.contents})
    roles = [message.role.value for message in conversation if message.role]
    out.write(f"conversation: {len(conversation)} messages, roles {', '.join(roles)}\n")
    out.write(f"content kinds: {', '.join(kinds)}\n")
    out.write("validated: every protovalidate rule in proto/agentmsg/v1 holds\n\n")

    binary = conversation.to_bytes()
    protojson = conversation.to_json()
    seed1 = json.dumps(conversation.to_dicts())
    checks = [
        ("protobuf", len(binary), am.Conversation.from_bytes(binary, validate=True) == conversation),
        ("ProtoJSON", len(protojson.encode()), am.Conversation.from_json(protojson, validate=True) == conversation),
        ("seed-1 dicts", len(seed1.encode()), dict_form.messages_from_dicts(json.loads(seed1)) == list(conversation)),
    ]
    seed2_note = ""
    try:
        from agentmsg.providers import adaline
    except ImportError:  # pragma: no cover - the module ships with the package
        adaline = None  # type: ignore[assignment]
    if adaline is not None:
        # Seed 2 has no audio, no non-PDF documents and no session-only roles: it carries the rest.
        portable = [m for m in conversation if m.role and m.role.value in {"system", "user", "assistant", "tool"}]
        portable = [_without(m, ("audio", "document")) for m in portable]
        seed2 = adaline.to_adaline_json(portable)
        checks.append(("seed-2 JSON", len(seed2.encode()), adaline.from_adaline_json(seed2) == portable))
        seed2_note = f" (seed 2: the {len(portable)} LLM messages, without audio and the text document)"
    out.write(f"{'form':<14}{'bytes':>8}  {'vs protobuf':>11}  round trip\n")
    for name, size, ok in checks:
        out.write(f"{name:<14}{size:>8}  {size / len(binary):>10.2f}x  {'exact' if ok else 'DIFFERS'}\n")
    if seed2_note:
        out.write(seed2_note.strip() + "\n")

    out.write("\nrejected, as the contract says:\n")
    for attempt, build in (
        ("a system message with an image", lambda: am.SystemMessage([am.ImageContent(_png())])),  # type: ignore[list-item]
        ("a tool call with no id", lambda: am.ToolCallContent("", "read_file")),
        ("an image that is not one", lambda: am.ImageContent(b"definitely not an image")),
    ):
        try:
            build()
        except am.AgentMsgError as exc:
            out.write(f"  {attempt}: {exc}\n")
    broken = am.ToolCallContent("toolu_02", "search", arguments='{"query": "cats", ')
    out.write(f"  kept, not lost: invalid tool arguments {broken.arguments!r} -> {broken.arguments_error}\n")
    return 0 if all(ok for _, _, ok in checks) else 1


def _without(message: am.AgentMessage, kinds: tuple[str, ...]) -> am.AgentMessage:
    if not any(block.type in kinds for block in message.contents):
        return message
    copy = message.copy()
    body = getattr(copy.pb, copy.pb.WhichOneof("role") or "")
    keep = [block for block in body.content if block.WhichOneof("kind") not in kinds]
    del body.content[:]
    body.content.extend(keep)
    return copy
