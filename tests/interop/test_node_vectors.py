"""The golden vectors in Node: @bufbuild/protobuf and @bufbuild/protovalidate agree with the files and Python.

The test generates ES code from proto/ with protoc-gen-es (``buf generate`` with a local plugin, offline) into
the git-ignored tests/interop/gen/, then runs ``node tests/interop/vectors.mjs``, which decodes every vector,
encodes it again, prints it as ProtoJSON and validates it. Each vector must come back as the same bytes and
the same JSON, and break the same rules (same field paths, same rule ids) as the manifest says — which
tests/test_vectors.py checks for Python.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from nodetools import HERE, NODE_MODULES, ROOT, require_node, run_node

VECTORS = ROOT / "tests" / "vectors"
MANIFEST: list[dict[str, Any]] = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
GEN = HERE / "gen"
PACKAGES = ("@bufbuild/buf", "@bufbuild/protobuf", "@bufbuild/protoc-gen-es", "@bufbuild/protovalidate")


def generate() -> None:
    """ES code for proto/ (and validate.proto) into tests/interop/gen/, as ES modules."""
    template = (HERE / "buf.gen.yaml").relative_to(ROOT)
    subprocess.run(
        [str(NODE_MODULES / ".bin" / "buf"), "generate", "--template", str(template)],
        cwd=ROOT,
        check=True,
        timeout=60,
    )
    (GEN / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")


@pytest.fixture(scope="module")
def node_report() -> dict[str, Any]:
    node = require_node(*PACKAGES)
    generate()
    report: dict[str, Any] = run_node(node, "vectors.mjs", str(GEN), str(VECTORS))
    return report


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_node_reads_a_vector_as_python_does(node_report: dict[str, Any], entry: dict[str, Any]) -> None:
    result = node_report[entry["name"]]
    assert result["error"] is None
    data = (VECTORS / entry["binary"]).read_bytes()
    assert base64.b64decode(result["binary"]) == data, "Node re-encoded the binary vector differently"
    if entry["json"] is None:  # binary only: a value ProtoJSON cannot print
        assert result["json"] is None
    else:
        assert base64.b64decode(result["jsonBinary"]) == data, "Node's encoding of the JSON vector differs"
        assert result["json"] == json.loads((VECTORS / entry["json"]).read_text(encoding="utf-8"))
    expected = sorted((v["field"], v["rule_id"]) for v in entry["violations"])
    assert sorted((v["field"], v["rule_id"]) for v in result["violations"]) == expected


def test_the_generated_code_is_ignored_by_git() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(Path("tests/interop/gen/agentmsg/v1/message_pb.js"))],
        cwd=ROOT,
        check=False,
    )
    assert ignored.returncode == 0, "add tests/interop/gen/ to .gitignore"
