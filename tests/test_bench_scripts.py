"""The measuring scripts of ``bench/`` that ``make bench`` does not run, run small: each still measures what it says.

``bench/calltool_path.py``, ``bench/mcp_percall.py`` and ``bench/event_loop.py`` are run by hand, to find where a
figure of ``make bench`` comes from; nothing else runs them, so a change to what they stand in for (a renamed class,
the servers' default loop) broke two of them unseen once. Each runs here with a few calls and writes its JSON; the
tests check what the figures are made of (both sides measured, the loop counted), never how large they are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from gates import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"


def run_script(name: str, tmp_path: Path, *args: str) -> Any:
    out = tmp_path / f"{name}.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{name}.py"), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


def need_everything() -> None:
    if not EVERYTHING.exists():
        skip_or_fail(f"{EVERYTHING.relative_to(ROOT)} is missing: run make deps")


def test_calltool_path_measures_both_ends_against_their_raw_paths(tmp_path: Path) -> None:
    figures = run_script("calltool_path", tmp_path, "--calls", "50", "--repeats", "1")
    assert set(figures) == {"server agentmsg", "server raw", "client agentmsg", "client raw"}
    assert all(side["median_us"] > 0 for side in figures.values())


def test_mcp_percall_counts_both_servers_event_loops(tmp_path: Path) -> None:
    need_everything()
    figures = run_script("mcp_percall", tmp_path, "--calls", "20", "--rounds", "1")
    for side in ("hosted", "relay"):
        per_call = figures[side]
        assert per_call["p50_us"] > 0, side
        assert per_call["server_cpu_us"] > 0, side
        # The counts wrap asyncio's loop: a server on another loop would count nothing (a call takes several turns).
        assert per_call["server_turns"] >= 1, (side, per_call)
        assert per_call["server_callbacks"] >= 1, (side, per_call)
        assert per_call["client_turns"] >= 1, (side, per_call)


def test_event_loop_runs_a_server_on_each_loop(tmp_path: Path) -> None:
    need_everything()
    figures = run_script("event_loop", tmp_path, "--rounds", "1")
    assert set(figures["p50_ms"]) == {"uvloop", "asyncio"}
    assert all(len(rounds) == 1 for rounds in figures["rounds_p50_ms"].values())
    assert figures["ratio"] > 0
