"""The golden vectors in Node: @agentmsg/sdk (protobuf-es, protovalidate-es) agrees with the files and Python.

``node tests/interop/vectors.mjs`` imports the TypeScript SDK (its checked-in protoc-gen-es code, compiled by
tsc), decodes every vector, encodes it again, prints it as ProtoJSON and validates it. Each vector must come back
as the same bytes and the same JSON, and break the same rules (same field paths, same rule ids) as the manifest
says — which tests/test_vectors.py checks for Python. The SDK's own tests (sdk/typescript/test/vectors.test.ts)
run the same vectors under ``node --test``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from nodetools import ROOT, run_node
from tstools import built_sdk

VECTORS = ROOT / "tests" / "vectors"
MANIFEST: list[dict[str, Any]] = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]


@pytest.fixture(scope="module")
def node_report() -> dict[str, Any]:
    node = built_sdk()
    report: dict[str, Any] = run_node(node, "vectors.mjs", str(VECTORS))
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
