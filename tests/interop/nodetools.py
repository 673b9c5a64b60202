"""Running the Node side of the cross-language tests: find node and the npm packages, or skip saying why
(fail under CI: see tests/gates.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gates import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "interop"
PROTO = ROOT / "proto"
NODE_MODULES = ROOT / "node_modules"
VALIDATE_PROTO = PROTO / "buf" / "validate" / "validate.proto"
TIMEOUT = 60  # seconds for one node process; each takes about a second


def require_node(*packages: str) -> str:
    """The path of ``node``, or skip the test (fail it under CI): node, npm packages or validate.proto missing."""
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is not installed: the Node interop tests need Node 20+ (CI has it)")
    missing = [p for p in packages if not (NODE_MODULES / p / "package.json").is_file()]
    if missing:
        skip_or_fail(f"node is installed but node_modules lacks {', '.join(missing)}: run `npm install` (or make deps)")
    if not VALIDATE_PROTO.is_file():
        skip_or_fail("proto/buf/validate/validate.proto is missing: run `make deps`")
    return node


def run_node(node: str, script: str, *args: str, timeout: float = TIMEOUT) -> Any:
    """Run ``tests/interop/<script>`` and return the JSON it prints; fail with its stderr if it fails."""
    try:
        done = subprocess.run(
            [node, str(HERE / script), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        pytest.fail(f"node {script} did not finish in {timeout} s; stderr:\n{stderr}")
    if done.returncode != 0:
        pytest.fail(f"node {script} exited with {done.returncode}; stderr:\n{done.stderr}")
    return json.loads(done.stdout)
