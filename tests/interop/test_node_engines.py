"""The Node the README promises runs the whole toolchain the lock installs (issue 33): no package in
package-lock.json declares an `engines.node` this Node does not meet (protoc-gen-es 2.14+ wants Node 22, so it is
pinned to 2.13.0, whose generated code is the same but for its header line).

One exception, named here and in the README: `ai` (the Vercel AI SDK v7, every release of which declares Node 22)
is not part of the toolchain but a third-party reader the UI-stream tests hold agentmsg's output against; those
tests run it on Node 20 and pass. The check removes it (and what only it pulls in) and checks the rest."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from nodetools import ROOT, require_node

PROMISED_MAJOR = 20  # the README's and sdk/typescript's "engines": {"node": ">=20"}
ORACLES = {"ai"}  # test-only readers of agentmsg's output that declare a newer Node (see the docstring)


def test_the_sdk_promises_the_node_the_readme_names() -> None:
    sdk = json.loads((ROOT / "sdk" / "typescript" / "package.json").read_text())
    assert sdk["engines"]["node"] == f">={PROMISED_MAJOR}"
    assert f"Node {PROMISED_MAJOR}" in (ROOT / "README.md").read_text()


def test_every_locked_package_runs_on_this_node(tmp_path: Path) -> None:
    node = require_node()
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    # The lock's engines are checked against the Node that runs the check; on the promised major it is the promise.
    for name in ("package.json", "package-lock.json", "sdk/typescript/package.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    manifest = json.loads((tmp_path / "package.json").read_text())
    for name in ORACLES:
        manifest["devDependencies"].pop(name)
    (tmp_path / "package.json").write_text(json.dumps(manifest, indent=2))
    npm = shutil.which("npm")
    assert npm is not None
    done = subprocess.run(
        [npm, "install", "--package-lock-only", "--engine-strict", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"on Node {version}:\n{done.stderr}"
    # Only the oracles, and what they alone pull in, left the lock; nothing else changed.
    before = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    after = json.loads((tmp_path / "package-lock.json").read_text())["packages"]
    gone = set(before) - set(after)
    assert {f"node_modules/{name}" for name in ORACLES} <= gone
    assert all(after[key] == before[key] for key in after if key)  # "" is the root manifest, oracles removed
    assert not any(before[key].get("dev") is not True for key in gone)  # a test package only
