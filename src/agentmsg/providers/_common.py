"""What every provider converter shares: loss reports, strict mode, tool-id
normalisation, the signature replay rule, session-message projection, and
path-naming errors for payloads.

The rules (written in docs/conversion.md as well):

1. ``from_x(to_x(m)) == m`` for everything format x can hold.
2. What x cannot hold is never dropped silently. Each converter records a
   :class:`Loss` per thing it leaves out; the caller gets them in a
   :class:`ConversionReport` it passes in (``report=``), as a
   :class:`ConversionError` with ``strict=True``, or, when it asked for
   neither, as one :class:`ConversionWarning` per call.
3. Signatures and redacted reasoning go back only to where they came from:
   :func:`may_replay` is true when the message's provenance names the target
   provider and API (and the target model, when the caller names one).
   Otherwise thinking keeps its text and loses its signature, and redacted
   reasoning is left out; both are reported.
4. Tool-call ids that break a provider's id pattern are rewritten by
   :class:`ToolIdMap`: the same id always maps to the same safe id (a
   readable prefix plus a hash), and the report keeps the map so
   ``from_x(..., id_map=report.id_map)`` restores the originals.
5. ``metadata``, ``terminate`` and ``terminate_message`` of tool results,
   and tool-call ``metadata``, never reach a provider payload.
6. Session-only messages are projected to user text by
   :func:`project_session_message` (templates below), or refused with
   ``session_messages="refuse"``.
7. A block of several images or clips goes out as one provider block per
   item (:func:`split_media`), each item's losses under its own path; the
   grouping, which no provider format holds, is reported.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agentmsg.content import AudioContent, ContentBase, ImageContent, TextContent
from agentmsg.errors import AgentMsgError, DecodeError, MediaError, ValidationError, Violation
from agentmsg.messages import (
    AgentMessage,
    AssistantMessage,
    BaseMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Provenance,
    UserMessage,
)

__all__ = [
    "BRANCH_SUMMARY_TEMPLATE",
    "COMPACTION_SUMMARY_TEMPLATE",
    "CUSTOM_MESSAGE_TEMPLATE",
    "ConversionError",
    "ConversionReport",
    "ConversionWarning",
    "Loss",
    "SessionPolicy",
    "ToolIdMap",
    "may_replay",
    "project_session_message",
    "report_response_extras",
    "split_media",
]

SessionPolicy = Literal["project", "refuse"]
B = TypeVar("B", bound=ContentBase)

COMPACTION_SUMMARY_TEMPLATE = (
    "The conversation history before this point was compacted into the following summary:\n\n"
    "<summary>\n{summary}\n</summary>"
)
BRANCH_SUMMARY_TEMPLATE = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{summary}\n</summary>"
)
CUSTOM_MESSAGE_TEMPLATE = '<custom type="{custom_type}">\n{text}\n</custom>'


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing a conversion left out: where (in the input), what, and why."""

    path: str
    what: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path or '<input>'}: {self.what} dropped: {self.reason}"


@dataclass
class ConversionReport:
    """What a conversion could not carry, and the tool ids it rewrote.

    Pass one in (``report=ConversionReport()``) to collect the losses instead
    of getting a warning. ``id_map`` maps each rewritten (provider-safe) id to
    the original; give it back to ``from_x(..., id_map=...)``.
    """

    losses: list[Loss] = field(default_factory=list)
    id_map: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.losses)

    def summary(self) -> str:
        """One line a loss, or ``"nothing lost"``."""
        return "\n".join(str(loss) for loss in self.losses) or "nothing lost"


class ConversionError(AgentMsgError, ValueError):
    """A strict conversion met something the target format cannot hold."""

    def __init__(self, target: str, losses: list[Loss]) -> None:
        self.target = target
        self.losses = tuple(losses)
        shown = "; ".join(str(loss) for loss in losses[:5])
        more = f" (and {len(losses) - 5} more)" if len(losses) > 5 else ""
        super().__init__(f"{target} cannot hold {len(losses)} item(s): {shown}{more}")


class ConversionWarning(UserWarning):
    """A conversion dropped something and the caller asked for no report."""


class Reporter:
    """Collects losses during one conversion and settles them at the end."""

    def __init__(self, target: str, report: ConversionReport | None, *, strict: bool) -> None:
        self.target = target
        self.report = report if report is not None else ConversionReport()
        self.strict = strict
        self._caller_has_report = report is not None
        self._start = len(self.report.losses)

    def loss(self, path: str, what: str, reason: str) -> None:
        """Record that ``what`` at ``path`` is left out, and why."""
        self.report.losses.append(Loss(path, what, reason))

    def finish(self) -> None:
        """Raise (strict), or warn when the caller kept no report; else leave it in the report."""
        new = self.report.losses[self._start :]
        if not new:
            return
        if self.strict:
            raise ConversionError(self.target, new)
        if not self._caller_has_report:
            warnings.warn(
                f"{self.target}: {len(new)} item(s) dropped (pass report= to collect them, strict=True to refuse): "
                + "; ".join(str(loss) for loss in new[:3]),
                ConversionWarning,
                stacklevel=3,
            )


class ToolIdMap:
    """Stable, reversible rewriting of tool-call ids to a provider's pattern.

    An id that already matches ``pattern`` (and fits ``max_length``) is kept.
    Any other id becomes its allowed characters (others replaced by ``_``),
    cut short, plus ``_`` and 10 hex digits of its SHA-256: the same id
    always gives the same result, in this conversation and the next, and
    distinct ids stay distinct. ``originals`` maps every rewritten id back.
    """

    def __init__(
        self, pattern: str = r"^[a-zA-Z0-9_-]+$", max_length: int = 64, report: ConversionReport | None = None
    ):
        self._pattern = re.compile(pattern)
        self._max = max_length
        self.originals: dict[str, str] = report.id_map if report is not None else {}

    def __call__(self, call_id: str) -> str:
        if self._pattern.match(call_id) and len(call_id) <= self._max:
            return call_id
        digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:10]
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[: max(1, self._max - 11)]
        safe = f"{stem}_{digest}"
        self.originals[safe] = call_id
        return safe


def restore_id(call_id: str, id_map: Mapping[str, str] | None) -> str:
    """The original id for a rewritten one (unchanged when it was not rewritten)."""
    return id_map.get(call_id, call_id) if id_map else call_id


def report_response_extras(message: AssistantMessage, reporter: Reporter, what: str) -> None:
    """Report the contract v1.1 response fields that ``what`` (a response format) has no place for.

    For writers whose responses hold none of them: the stop sequence that ended the answer,
    another provider's response keys (``provider_extra``), cache writes split by TTL and the
    hosted-tool request counts. A format that holds one of them writes it instead of calling this.
    """
    if message.stop_sequence:
        reporter.loss("stop_sequence", f"stop sequence {message.stop_sequence!r}", f"{what} has no stop sequence")
    extra = message.provider_extra
    if extra is not None:
        reporter.loss("provider_extra", f"{extra.provider} response keys", f"{what} has no place for them")
    usage = message.usage
    if usage is None:
        return
    for key in ("cache_write_5m_tokens", "cache_write_1h_tokens"):
        if key in usage.reported:
            reporter.loss(f"usage.{key}", key.replace("_", " "), f"{what} does not split cache writes by TTL")
    if "hosted_tool_requests" in usage.reported:
        reporter.loss("usage.hosted_tool_requests", "hosted tool request counts", f"{what} has no such counts")


def may_replay(provenance: Provenance | None, provider: str, api: str, model: str | None = None) -> bool:
    """May a message's signatures and redacted reasoning be sent to this target?

    True when the message was produced by the same provider through the same
    API, and (when ``model`` is given) by the same model. A message with no
    provenance never replays: nobody can vouch for its signatures.
    """
    if provenance is None:
        return False
    if provenance.provider != provider or provenance.api != api:
        return False
    return model is None or not provenance.model or provenance.model == model


def project_session_message(message: AgentMessage, policy: SessionPolicy, path: str) -> UserMessage | None:
    """The user message a session-only message stands for, or None for an LLM message.

    Templates: :data:`COMPACTION_SUMMARY_TEMPLATE`, :data:`BRANCH_SUMMARY_TEMPLATE`,
    :data:`CUSTOM_MESSAGE_TEMPLATE` (a custom message's non-text blocks follow
    its text). With ``policy="refuse"`` a session-only message raises
    :class:`~agentmsg.ValidationError`.
    """
    if not isinstance(message, (CustomMessage, BranchSummaryMessage, CompactionSummaryMessage)):
        return None
    if policy == "refuse":
        role = message.role.value if message.role else "unknown"
        raise ValidationError(
            [Violation(path, "session_message", f"a {role} message is session-only; project it or leave it out")],
            "conversion input",
        )
    common: dict[str, Any] = {"id": message.id, "timestamp": message.timestamp}
    if isinstance(message, CompactionSummaryMessage):
        return UserMessage.text(COMPACTION_SUMMARY_TEMPLATE.format(summary=message.summary), **common)
    if isinstance(message, BranchSummaryMessage):
        return UserMessage.text(BRANCH_SUMMARY_TEMPLATE.format(summary=message.summary), **common)
    text = CUSTOM_MESSAGE_TEMPLATE.format(custom_type=message.custom_type, text=message.text_content())
    others = [block for block in message.contents if not isinstance(block, TextContent)]
    return UserMessage([TextContent(text), *others], **common)  # type: ignore[list-item]


def llm_messages(messages: Iterable[BaseMessage], policy: SessionPolicy) -> Iterator[tuple[str, AgentMessage, bool]]:
    """Each message with its input path, session-only ones projected: (path, message, projected)."""
    if isinstance(messages, BaseMessage):
        raise ValidationError.single("", "type", "expected a list of messages, got a single message")
    for i, message in enumerate(messages):
        path = f"[{i}]"
        if not isinstance(message, BaseMessage):
            raise ValidationError.single(path, "type", f"expected a message, got {type(message).__name__}")
        projected = project_session_message(message, policy, path)  # type: ignore[arg-type]
        if projected is not None:
            yield path, projected, True
        else:
            yield path, message, False  # type: ignore[misc]


# --- reading payloads ---------------------------------------------------------


class PayloadErrors:
    """Collects every problem found in a provider payload, each with its JSON path."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.found: list[Violation] = []

    def add(self, path: str, rule: str, message: str) -> None:
        self.found.append(Violation(path, rule, message))

    def raise_if_any(self) -> None:
        if self.found:
            raise ValidationError(self.found, self.what)

    @contextmanager
    def building(self, path: str) -> Iterator[None]:
        """Turn an agentmsg error raised while building a value at ``path`` into a recorded problem.

        The violation's own field is appended to ``path``, and its rule id is
        kept: a contract rule (``string.min_len``) names the rule broken, which
        a format prefix would hide.
        """
        try:
            yield
        except ValidationError as exc:
            for violation in exc.violations:
                sep = "" if not path or not violation.field or violation.field.startswith("[") else "."
                where = f"{path}{sep}{violation.field}" if violation.field else path
                self.add(where, violation.rule_id, violation.message)
        except (MediaError, DecodeError) as exc:
            self.add(path, "media" if isinstance(exc, MediaError) else "decode", str(exc))


def unencodable(text: str) -> bool:
    """True when ``text`` cannot be UTF-8 (it holds an unpaired surrogate, as a JSON ``\\ud800`` escape gives)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_type(value: Any, *, article: bool = False) -> str:
    """The JSON name of a Python value's type, for error messages (``"an object"`` with ``article``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        name = "boolean"
    elif isinstance(value, (int, float)):
        name = "number"
    elif isinstance(value, str):
        name = "string"
    elif isinstance(value, Mapping):
        name = "object"
    elif isinstance(value, (list, tuple)):
        name = "array"
    else:
        return type(value).__name__
    if not article:
        return name
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def split_media(block: B, path: str, reporter: Reporter) -> list[tuple[str, B]]:
    """A block with its path, or, for a block of several images or clips, each as a one-item block.

    Provider formats hold one image (or clip) a block: the items are sent in
    order, each with its path in the input (``[0].contents[2].images[1]``),
    and the grouping, which does not come back, is reported.
    """
    if not isinstance(block, (ImageContent, AudioContent)) or block.count == 1:
        return [(path, block)]
    noun, field = ("images", "images") if isinstance(block, ImageContent) else ("clips", "audio")
    reporter.loss(
        path,
        f"the grouping of {block.count} {noun} in one block",
        f"{reporter.target} holds one {noun[:-1]} a block: they are sent as {block.count} blocks, "
        f"in order, and read back as {block.count} blocks",
    )
    pieces: list[Any] = block.split()
    return [(f"{path}.{field}[{j}]", piece) for j, piece in enumerate(pieces)]
