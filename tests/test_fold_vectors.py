"""The stream-fold vectors (tests/vectors/fold/, scripts/make_fold_vectors.py) in Python.

The same files are run by the TypeScript SDK's tests (sdk/typescript/test/fold.test.ts): both folds must give the
same message, the same issues and the same count of ignored repeats, or fail with the same error class at the same
event.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from agentmsg import ValidationError
from agentmsg.streaming import IncompleteStreamError, StreamAccumulator, StreamProtocolError
from agentmsg.v1 import stream_pb2

ROOT = Path(__file__).resolve().parents[1]
FOLD = ROOT / "tests" / "vectors" / "fold"
VECTORS = sorted(FOLD.glob("*.json"))
ISSUE = re.compile(r"^block (\d+) ")


def issue(text: str) -> dict[str, Any]:
    """An issue as the vectors write it: the block and what is wrong with it."""
    found = ISSUE.match(text)
    assert found is not None, f"an issue that names no block: {text!r}"
    kind = "arguments" if "arguments kept verbatim" in text else "input" if "input kept verbatim" in text else text
    kind = "cut_short" if "cut short" in text else kind
    return {"block": int(found.group(1)), "kind": kind}


def test_the_vectors_match_their_cases() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_fold_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_there_are_vectors_for_every_outcome() -> None:
    outcomes = {json.loads(p.read_text(encoding="utf-8"))["expect"].get("error", "message") for p in VECTORS}
    assert outcomes == {"message", "StreamProtocolError", "IncompleteStreamError", "ValidationError"}


def outcome(events: list[Any]) -> dict[str, Any]:
    """What the Python fold makes of ``events``, in the vectors' terms."""
    accumulator = StreamAccumulator()
    at: int | str = "finish"
    try:
        for i, event in enumerate(events):
            at = i
            accumulator.add(json_format.ParseDict(event, stream_pb2.StreamEvent()))
        at = "finish"
        message = accumulator.finish()
    except IncompleteStreamError as exc:
        return {"error": type(exc).__name__, "at": at, "open_blocks": list(exc.open_blocks)}
    except ValidationError as exc:
        violations = [{"field": v.field, "rule_id": v.rule_id} for v in exc.violations]
        return {"error": type(exc).__name__, "at": at, "violations": violations}
    except StreamProtocolError as exc:
        return {"error": type(exc).__name__, "at": at}
    return {
        "message": json_format.MessageToDict(message.pb),
        "issues": [issue(text) for text in accumulator.issues],
        "duplicates": accumulator.duplicates,
    }


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_the_python_fold_gives_what_the_vector_says(path: Path) -> None:
    vector = json.loads(path.read_text(encoding="utf-8"))
    assert outcome(vector["events"]) == vector["expect"]
