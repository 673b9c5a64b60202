"""``agentmsg serve`` that reports its store's group-commit counters: ``python bench/counted_server.py OUT serve ...``.

The server runs as the CLI runs it. On SIGUSR1 it writes ``{"commits": N, "appends": M}`` to ``OUT`` (the
transactions its store's appends committed, and the append calls they acknowledged: the store's own
counters, as ``/metrics`` shows them), so ``bench/group_commit.py`` reads them without turning on the metrics
endpoint (and the telemetry that comes with it) in the server it measures.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from agentmsg.cli import main
from agentmsg.service.stores import base

_stores: list[base.Store] = []


def run(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, args = argv[0], argv[1:]
    original_init = base.Store.__init__

    def init(self: base.Store) -> None:
        original_init(self)
        _stores.append(self)

    base.Store.__init__ = init  # type: ignore[method-assign]

    def report(signum: int, frame: Any) -> None:
        counts = {"commits": sum(s.commits for s in _stores), "appends": sum(s.committed_appends for s in _stores)}
        with open(out + ".tmp", "w") as file:
            json.dump(counts, file)
        os.replace(out + ".tmp", out)  # renamed when complete: the benchmark waits for the final name

    signal.signal(signal.SIGUSR1, report)
    return main(args)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
