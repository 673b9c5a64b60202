// The golden vectors (tests/vectors/, scripts/make_vectors.py) through the SDK: every vector decodes from its
// binary and its ProtoJSON file, encodes back to the same bytes and JSON, and breaks exactly the rules (field paths
// and rule ids) manifest.json lists, the verdicts tests/test_vectors.py checks for Python.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import {
  decodeBinary,
  decodeJson,
  encodeBinary,
  encodeJson,
  registry,
  ValidationError,
  violations,
} from "../src/index.js";
import { VECTORS } from "./paths.js";

interface Entry {
  name: string;
  type: string;
  binary: string;
  /** null for a binary-only vector: a value ProtoJSON cannot print (an out-of-range timestamp). */
  json: string | null;
  violations: { field: string; rule_id: string }[];
}

const manifest = JSON.parse(fs.readFileSync(path.join(VECTORS, "manifest.json"), "utf8")) as { vectors: Entry[] };

test("the manifest has valid and invalid vectors", () => {
  assert.ok(manifest.vectors.some((v) => v.violations.length === 0));
  assert.ok(manifest.vectors.some((v) => v.violations.length > 0));
});

for (const entry of manifest.vectors) {
  test(`golden vector ${entry.name}`, () => {
    const schema = registry.getMessage(entry.type) as DescMessage | undefined;
    assert.ok(schema, `no generated schema for ${entry.type}`);
    const bytes = new Uint8Array(fs.readFileSync(path.join(VECTORS, entry.binary)));
    const decoded = decodeBinary(schema, bytes, { validate: false });
    assert.deepEqual(encodeBinary(schema, decoded), bytes, "re-encoded bytes differ");
    if (entry.json === null) {
      assert.throws(() => encodeJson(schema, decoded), "ProtoJSON printed a value it cannot hold");
    } else {
      const json = JSON.parse(fs.readFileSync(path.join(VECTORS, entry.json), "utf8")) as JsonValue;
      assert.deepEqual(encodeJson(schema, decoded), json, "ProtoJSON differs from the file");
      const parsed = decodeJson(schema, json, { validate: false });
      assert.deepEqual(encodeBinary(schema, parsed), bytes, "the JSON file encodes to other bytes");
    }
    const found = violations(schema, decoded).map((v) => ({ field: v.field, rule_id: v.ruleId }));
    const key = (v: { field: string; rule_id: string }): string => `${v.field} ${v.rule_id}`;
    assert.deepEqual(found.map(key).sort(), entry.violations.map(key).sort());
    if (entry.violations.length > 0) {
      assert.throws(() => decodeBinary(schema, bytes), ValidationError);
    } else {
      decodeBinary(schema, bytes);
    }
  });
}
