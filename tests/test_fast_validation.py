"""The constructors' compiled checker and the media-blind full pass give protovalidate's verdicts.

The checker (``agentmsg._validation.ensure``) may only say "valid" when protovalidate finds nothing; when it
says "not valid", protovalidate runs and its violations are raised, so a refused message carries exactly
protovalidate's fields, rule ids and messages. The full pass swaps large media bytes for a placeholder; the
verdicts must be the ones protovalidate gives on the message itself.

The expected verdicts come from protovalidate alone (its field paths read as ``buf.validate.FieldPath`` and
written out here) and from the hand-written vector manifest; the one rule agentmsg adds (a Timestamp's nanos
in range, which protovalidate cannot see) is expected where a mutation put it, by hand. Nothing here computes
an expectation with the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import protovalidate
import pytest
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

import agentmsg as am
from agentmsg import _validation
from agentmsg.v1 import content_pb2, message_pb2
from buf.validate import validate_pb2

VECTORS = Path(__file__).parent / "vectors"
MANIFEST: list[dict[str, Any]] = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
PLAIN = protovalidate.Validator()  # protovalidate itself, nothing swapped


def decoded(entry: dict[str, Any]) -> Message:
    cls = message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(entry["type"]))
    message: Message = cls.FromString((VECTORS / entry["binary"]).read_bytes())
    return message


def plain_violations(pb: Message) -> list[tuple[str, str, str]]:
    """protovalidate on the message itself, nothing swapped: (field path, rule id, message) in its order."""
    return [(field_path(v), v.proto.rule_id, v.proto.message) for v in PLAIN.collect_violations(pb)]


def field_path(violation: protovalidate.Violation) -> str:
    """protovalidate's ``buf.validate.FieldPath`` as agentmsg spells a path: ``a.b[2].c``, ``m['key']``."""
    if violation.proto.field is None:
        return ""  # a rule of the validated message itself
    path = validate_pb2.FieldPath.FromString(violation.proto.field.to_binary())
    parts = []
    for element in path.elements:
        kind = element.WhichOneof("subscript")
        if kind is None:
            parts.append(element.field_name)
        elif kind == "string_key":
            parts.append(f"{element.field_name}[{element.string_key!r}]")
        else:
            parts.append(f"{element.field_name}[{getattr(element, kind)}]")
    return ".".join(parts)


def nanos_violation(path: str, nanos: int) -> tuple[str, str, str]:
    """The Timestamp rule agentmsg adds to protovalidate's, as message.proto states it."""
    return (path, "timestamp.nanos", f"nanos must be 0 to 999,999,999, got {nanos}")


def ensure_outcome(pb: Message) -> list[tuple[str, str, str]]:
    try:
        _validation.ensure(pb)
    except am.ValidationError as exc:
        return [(v.field, v.rule_id, v.message) for v in exc.violations]
    return []


def mutations(pb: Message) -> Iterator[Message]:
    """Copies of ``pb`` each with one field emptied, negated or cleared, anywhere in the tree."""
    for mutant, _ in expected_mutations(pb):
        yield mutant


def expected_mutations(pb: Message) -> Iterator[tuple[Message, list[tuple[str, str, str]]]]:
    """Each mutation of ``pb`` with the verdict it must get: protovalidate's, and the nanos rule where it broke it."""
    for mutant, path, fd, change in _mutations(pb):
        expected = plain_violations(mutant)
        if fd.containing_type.full_name == "google.protobuf.Timestamp" and fd.name == "nanos" and change == "negative":
            expected.append(nanos_violation(_spelled(path), -1))
        yield mutant, expected


def _spelled(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")


def _mutations(pb: Message) -> Iterator[tuple[Message, tuple[str | int, ...], Any, str]]:
    for path, fd in _fields(pb):
        for change in ("clear", "empty", "negative"):
            copy = type(pb)()
            copy.CopyFrom(pb)
            holder: Any = copy
            for step in path:
                holder = holder[step] if isinstance(step, int) else getattr(holder, step)
            if change == "clear":
                holder.ClearField(fd.name)
            elif fd.is_repeated:
                continue
            elif change == "empty" and fd.type == FieldDescriptor.TYPE_STRING:
                setattr(holder, fd.name, "")
            elif change == "negative" and fd.type in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64):
                setattr(holder, fd.name, -1)
            elif change == "negative" and fd.type == FieldDescriptor.TYPE_DOUBLE:
                setattr(holder, fd.name, float("nan"))
            elif change == "empty" and fd.type == FieldDescriptor.TYPE_ENUM:
                setattr(holder, fd.name, 99)
            else:
                continue
            yield copy, path, fd, change


def _fields(pb: Message, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    for fd, value in pb.ListFields():
        yield path, fd
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry:
                continue
            if fd.is_repeated:
                for i, item in enumerate(value):
                    yield from _fields(item, (*path, fd.name, i))
            else:
                yield from _fields(value, (*path, fd.name))


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_a_vector_gets_protovalidates_verdict_from_the_constructors_check(entry: dict[str, Any]) -> None:
    pb = decoded(entry)
    expected = sorted((v["field"], v["rule_id"]) for v in entry["violations"])  # written by hand
    assert sorted((f, r) for f, r, _ in ensure_outcome(pb)) == expected
    assert sorted((f, r) for f, r, _ in plain_violations(pb)) == expected  # the paths are spelled alike
    assert ensure_outcome(pb) == plain_violations(pb)  # and the messages are protovalidate's, in its order
    assert _validation.is_valid(pb) == (not expected)


def swapped_by_hand(pb: Message) -> Message:
    """``pb`` copied whole, then every inline ``data`` set to the placeholder: what the blind copy must equal."""
    copy = type(pb)()
    copy.CopyFrom(pb)

    def visit(message: Any) -> None:
        for fd, value in message.ListFields():
            if fd.name == "data" and fd.type == FieldDescriptor.TYPE_BYTES and fd.containing_oneof is not None:
                message.data = b"\x00"
            elif fd.type == FieldDescriptor.TYPE_MESSAGE and not fd.message_type.GetOptions().map_entry:
                for item in value if fd.is_repeated else [value]:
                    visit(item)

    visit(copy)
    return copy


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_the_blind_copy_is_the_message_with_only_its_media_bytes_swapped(entry: dict[str, Any]) -> None:
    for pb in [decoded(entry), *mutations(decoded(entry))]:
        blind = _validation._media_blind(pb)
        expected = swapped_by_hand(pb)
        if blind is None:
            assert expected == pb
        else:
            assert blind == expected
            assert blind != pb


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_every_one_field_mutation_of_a_vector_gets_protovalidates_verdict(entry: dict[str, Any]) -> None:
    checked = 0
    for mutant, expected in expected_mutations(decoded(entry)):
        assert ensure_outcome(mutant) == expected, mutant
        assert _validation.violations_of(mutant) == [am.Violation(*v) for v in expected]
        checked += 1
    assert checked or not decoded(entry).ListFields()


def timestamped(seconds: int, nanos: int, message_id: str = "m1") -> message_pb2.Message:
    pb = message_pb2.Message(
        id=message_id,
        user=message_pb2.UserMessage(content=[content_pb2.Content(text=content_pb2.TextContent(text="hi"))]),
    )
    pb.timestamp.seconds, pb.timestamp.nanos = seconds, nanos
    return pb


@pytest.mark.parametrize("nanos", [-1, -999_999_999, 1_000_000_000, 2**31 - 1])
def test_a_timestamp_whose_nanos_are_out_of_range_is_refused_where_it_is(nanos: int) -> None:
    """protovalidate reads such a Timestamp normalised (and passes it); agentmsg's rule names the field."""
    pb = timestamped(1_700_000_000, nanos)
    assert plain_violations(pb) == []
    assert ensure_outcome(pb) == [nanos_violation("timestamp", nanos)]
    assert _validation.violations_of(pb) == [am.Violation(*nanos_violation("timestamp", nanos))]
    conversation = message_pb2.Conversation(messages=[timestamped(1, 0), timestamped(2, nanos, "m2")])
    assert ensure_outcome(conversation) == [nanos_violation("messages[1].timestamp", nanos)]
    for edge in (0, 999_999_999):
        assert ensure_outcome(timestamped(1_700_000_000, edge)) == []


FIRST_USE_IN_THREADS = """
import sys, threading
import agentmsg as am

sys.setswitchinterval(1e-6)  # switch threads as often as possible: they meet the compiler mid-way
barrier = threading.Barrier(8)
errors = []

def build(i):
    barrier.wait()
    try:
        am.UserMessage.text(f"m{i}", id=f"m{i}", timestamp=1)
        am.AssistantMessage.text("a", stop_reason="stop", id=f"a{i}")
    except BaseException as exc:
        errors.append(repr(exc)[:200])

threads = [threading.Thread(target=build, args=(i,)) for i in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors)
"""


def test_threads_that_build_their_first_messages_at_once_all_get_the_finished_checker() -> None:
    """Checkers are compiled on first use; a thread arriving while another compiles waits for it (a fresh
    process each time: this one's checkers are compiled already). Four writer threads of test_faults once
    met a half-built entry and recursed until RecursionError."""
    # three processes at once: each races its own threads, and the machine's cores share their start-ups
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_USE_IN_THREADS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    try:
        outputs = [process.communicate(timeout=120) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr
        assert stdout.strip() == "[]"


def test_the_checker_is_compiled_for_the_hot_types_and_defers_for_media() -> None:
    """The types a text or tool-call message is made of never reach protovalidate when they are valid."""
    for pb_type in (message_pb2.Message, message_pb2.UserMessage, message_pb2.AssistantMessage, content_pb2.Content):
        assert _validation._checker(pb_type.DESCRIPTOR) is not _validation._by_protovalidate
    assert _validation._checker(content_pb2.ToolCallContent.DESCRIPTOR) is not _validation._by_protovalidate
    # URI and pattern rules are protovalidate's own: media go to it (with their bytes swapped out).
    assert _validation._checker(content_pb2.ImageContent.DESCRIPTOR) is _validation._by_protovalidate


def big_image_message(*, media_type: str, more: int = 0, size: int = 64 * 1024) -> message_pb2.Message:
    image = content_pb2.ImageContent(data=b"\x89PNG" + bytes(size), media_type=media_type)
    for i in range(more):
        image.more_images.add(data=bytes(size + i), media_type=media_type)
    pb = message_pb2.Message(
        id="m1",
        user=message_pb2.UserMessage(
            content=[content_pb2.Content(text=content_pb2.TextContent(text="look")), content_pb2.Content(image=image)]
        ),
    )
    pb.timestamp.seconds = 1
    return pb


@pytest.mark.parametrize("media_type", ["image/png", "", "text/plain"])
@pytest.mark.parametrize("more", [0, 2])
def test_large_media_get_the_verdicts_protovalidate_gives_with_the_bytes_in(media_type: str, more: int) -> None:
    pb = big_image_message(media_type=media_type, more=more)
    before = pb.SerializeToString()
    expected = [am.Violation(*v) for v in plain_violations(pb)]
    assert _validation.violations_of(pb) == expected
    assert ensure_outcome(pb) == [(v.field, v.rule_id, v.message) for v in expected]
    assert (media_type == "image/png") == (not expected)
    assert pb.SerializeToString() == before  # the caller's message is never touched
    conversation = message_pb2.Conversation(messages=[pb, pb])
    assert _validation.violations_of(conversation) == [am.Violation(*v) for v in plain_violations(conversation)]


def test_the_full_pass_swaps_the_bytes_only_where_no_rule_reads_them() -> None:
    assert "data" in _validation._BLIND  # every rule asks only has(this.data)
    logprob = content_pb2.TextContent.DESCRIPTOR.fields_by_name["logprobs"].message_type.fields_by_name["bytes"]
    assert not _validation.swappable(logprob)  # an optional field's bytes are not media: never swapped
    pb = big_image_message(media_type="image/png", more=1)
    blind = _validation._media_blind(pb)
    assert blind is not None
    assert blind.user.content[1].image.data == b"\x00"
    assert blind.user.content[1].image.more_images[0].data == b"\x00"
    small = big_image_message(media_type="image/png", size=10)
    assert _validation._media_blind(small).user.content[1].image.data == b"\x00"  # type: ignore[union-attr]
    assert _validation._media_blind(message_pb2.Message(id="x", user=message_pb2.UserMessage())) is None
    assert _validation._only_presence("!has(this.data) || this.media_type != ''", "data")
    assert not _validation._only_presence("size(this.data) > 0", "data")
    assert not _validation._only_presence("has(this.image) && this.image.data != b''", "data")


@pytest.mark.parametrize(
    "rule",
    [
        lambda r: r.cel.add(id="x.cel", expression="this != ''"),
        lambda r: setattr(r.string, "pattern", "^a$"),
        lambda r: setattr(r.string, "uri", True),
        lambda r: setattr(r, "ignore", 1),
    ],
)
def test_a_rule_the_checker_does_not_know_leaves_the_type_to_protovalidate(rule: Any) -> None:
    from google.protobuf import descriptor_pb2

    from buf.validate import validate_pb2

    options = descriptor_pb2.FieldOptions()
    rule(options.Extensions[validate_pb2.field])  # type: ignore[attr-defined]

    class Field:
        name = "x"
        type = FieldDescriptor.TYPE_STRING
        is_repeated = False
        containing_oneof = None
        has_presence = False
        message_type = None

        def GetOptions(self) -> descriptor_pb2.FieldOptions:  # noqa: N802 - the descriptor's API
            return options

    assert _validation._field_rules(Field()) is None
