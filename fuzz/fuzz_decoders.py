"""Coverage-guided fuzzing of every agentmsg decoder with atheris (``make fuzz``; not part of ``make test``).

The targets are the ones the hypothesis tests use (``tests/fuzzing.py``): protobuf bytes, ProtoJSON,
the seed-1 dicts, seed-2 JSON, every provider ``from_x`` / ``from_x_response``, every stream parser
over decoded events and raw SSE lines. Each input picks a target and either mutates one of its golden
payloads (the choices come from the fuzzer's bytes, so coverage guides them deep) or feeds raw data.

A crash is anything but a value or an :class:`agentmsg.AgentMsgError` (``fuzzing.run`` lets the
others through), an invalid "value", or a hang (``-timeout``). Run::

    make fuzz                                   # FUZZ_SECONDS=60 by default
    .venv/bin/python fuzz/fuzz_decoders.py -max_total_time=600 .cache/fuzz-corpus
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

with atheris.instrument_imports(include=["agentmsg"]):
    import fuzzing

sys.setrecursionlimit(1000)  # the default: recursion past it must be handled, not crash the fuzzer
TARGETS = fuzzing.targets()


def _json(fdp: atheris.FuzzedDataProvider, depth: int = 0) -> Any:
    """A JSON value drawn from the fuzzer's bytes."""
    kind = fdp.ConsumeIntInRange(0, 7 if depth < 6 else 4)
    if kind == 0:
        return fdp.PickValueInList(fuzzing.ODD_VALUES)
    if kind == 1:
        return fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 40))
    if kind == 2:
        return fdp.ConsumeInt(8)
    if kind == 3:
        return fdp.ConsumeRegularFloat()
    if kind == 4:
        return fdp.ConsumeBool()
    if kind == 5:
        return [_json(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    keys = KEYS
    return {fdp.PickValueInList(keys): _json(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 5))}


KEYS = fuzzing.json_keys()


def _payload(target: fuzzing.Target, fdp: atheris.FuzzedDataProvider) -> Any:
    mutate = target.seeds and fdp.ConsumeBool()
    if target.kind == "bytes":
        if mutate:
            choices = [
                (fdp.ConsumeIntInRange(0, 4), fdp.ConsumeIntInRange(0, 1 << 20), fdp.ConsumeIntInRange(0, 255))
                for _ in range(fdp.ConsumeIntInRange(1, 6))
            ]
            return fuzzing.mutate_bytes(fdp.PickValueInList(list(target.seeds)), iter(choices))
        return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
    if target.kind == "text":
        return fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 4096))
    if target.kind == "lines":
        if mutate:
            lines = fuzzing.ODD_LINES
            choices = [
                (fdp.ConsumeIntInRange(0, 3), fdp.ConsumeIntInRange(0, 1 << 20), fdp.PickValueInList(lines))
                for _ in range(fdp.ConsumeIntInRange(1, 4))
            ]
            return fuzzing.mutate_lines(fdp.PickValueInList(list(target.seeds)), iter(choices))
        return [fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 200)) + "\n" for _ in range(fdp.ConsumeIntInRange(0, 8))]
    if mutate:
        choices = [
            (
                fdp.ConsumeIntInRange(0, 1 << 20),
                fdp.PickValueInList(list(fuzzing.OPS)),
                fdp.ConsumeIntInRange(0, 1 << 20),
                fdp.PickValueInList(fuzzing.ODD_VALUES),
            )
            for _ in range(fdp.ConsumeIntInRange(1, 5))
        ]
        value = fuzzing.mutate(fdp.PickValueInList(list(target.seeds)), iter(choices))
    elif fdp.ConsumeBool():
        try:
            value = json.loads(fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 2048)))
        except (ValueError, RecursionError):
            value = None
    else:
        value = _json(fdp)
    if target.kind == "events" and not isinstance(value, list):
        value = [value]
    return value


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    target = TARGETS[fdp.ConsumeIntInRange(0, len(TARGETS) - 1)]
    fuzzing.run(target, _payload(target, fdp))


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
