"""``agentmsg serve`` under cProfile: ``python bench/profiled_server.py OUT.prof serve --port 0 --memory ...``.

The server runs as the CLI runs it. The profile covers the main thread (the
asyncio loop every handler runs on) between SIGUSR1 (start) and SIGUSR2
(stop, then ``OUT.prof`` is written), so start-up, imports and warm-up stay
out of it; ``bench/service.py`` sends them around the profiled workload and
waits for the file. SIGTERM stops the server as usual.
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
from typing import Any

from agentmsg.cli import main


def run(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, args = argv[0], argv[1:]
    profiler = cProfile.Profile()

    def start(signum: int, frame: Any) -> None:
        profiler.enable()

    def stop(signum: int, frame: Any) -> None:
        profiler.disable()
        profiler.dump_stats(out + ".tmp")  # renamed when complete: the benchmark waits for the final name
        os.replace(out + ".tmp", out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    return main(args)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
