// The stream-fold vectors (tests/vectors/fold/, written by scripts/make_fold_vectors.py from hand-written cases):
// the TypeScript fold must give what each vector says, as tests/test_fold_vectors.py checks for Python.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import {
  IncompleteStreamError,
  MessageSchema,
  registry,
  StreamAccumulator,
  type StreamEvent,
  StreamEventSchema,
  StreamProtocolError,
  ValidationError,
} from "../src/index.js";
import { VECTORS } from "./paths.js";

interface Expect {
  message?: JsonValue;
  issues?: { block: number; kind: string }[];
  duplicates?: number;
  error?: string;
  at?: number | "finish";
  open_blocks?: number[];
  violations?: { field: string; rule_id: string }[];
}

function issue(text: string): { block: number; kind: string } {
  const found = /^block (\d+) /.exec(text);
  assert.ok(found, `an issue that names no block: ${text}`);
  const kind = text.includes("arguments kept verbatim")
    ? "arguments"
    : text.includes("input kept verbatim")
      ? "input"
      : text.includes("cut short")
        ? "cut_short"
        : text;
  return { block: Number(found[1]), kind };
}

const dir = path.join(VECTORS, "fold");
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort();

test("there are fold vectors", () => {
  assert.ok(files.length >= 30, `only ${files.length} fold vectors in ${dir}`);
});

for (const file of files) {
  const vector = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as {
    name: string;
    events: JsonValue[];
    expect: Expect;
  };
  test(`fold vector ${vector.name}`, () => {
    const expect = vector.expect;
    const events: StreamEvent[] = vector.events.map((e) => fromJson(StreamEventSchema, e, { registry }));
    const accumulator = new StreamAccumulator();
    let at: number | "finish" = "finish";
    try {
      for (const [i, event] of events.entries()) {
        at = i;
        accumulator.add(event);
      }
      at = "finish";
      const message = accumulator.finish();
      assert.equal(
        expect.error,
        undefined,
        `the fold gave a message; the vector expects ${expect.error} at ${expect.at}`,
      );
      assert.deepEqual(toJson(MessageSchema, message, { registry }), expect.message);
      assert.deepEqual(accumulator.issues.map(issue), expect.issues);
      assert.equal(accumulator.duplicates, expect.duplicates);
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      assert.ok(expect.error !== undefined, `the fold failed at ${at}: ${String(error)}`);
      const known = [StreamProtocolError, IncompleteStreamError, ValidationError];
      assert.ok(
        known.some((cls) => error instanceof cls),
        `not a fold error: ${String(error)}`,
      );
      assert.deepEqual([(error as Error).name, at], [expect.error, expect.at], String(error));
      if (error instanceof IncompleteStreamError) assert.deepEqual([...error.openBlocks], expect.open_blocks);
      if (error instanceof ValidationError) {
        assert.deepEqual(
          error.violations.map((v) => ({ field: v.field, rule_id: v.ruleId })),
          expect.violations,
        );
      }
    }
  });
}
