// The golden vectors in Node, through @agentmsg/sdk (its checked-in protoc-gen-es code and @bufbuild/protovalidate).
//
//   node tests/interop/vectors.mjs <vectors dir>
//
// For every vector in manifest.json: decode the binary and encode it again, print it as ProtoJSON, parse the
// ProtoJSON file and encode that, and validate. Prints one JSON report, by vector name, for
// tests/interop/test_node_vectors.py to compare with the files and the manifest.

import fs from "node:fs";
import path from "node:path";

import { decodeBinary, decodeJson, encodeBinary, encodeJson, registry, violations } from "@agentmsg/sdk";

function base64(bytes) {
  return Buffer.from(bytes).toString("base64");
}

function main() {
  const [vectorsDir] = process.argv.slice(2);
  if (vectorsDir === undefined) throw new Error("usage: node vectors.mjs <vectors dir>");
  const manifest = JSON.parse(fs.readFileSync(path.join(vectorsDir, "manifest.json"), "utf8"));
  const report = {};
  for (const vector of manifest.vectors) {
    const schema = registry.getMessage(vector.type);
    if (schema === undefined) {
      report[vector.name] = { error: `no generated schema for ${vector.type}` };
      continue;
    }
    const decoded = decodeBinary(schema, fs.readFileSync(path.join(vectorsDir, vector.binary)), { validate: false });
    // A vector with no JSON file holds a value ProtoJSON cannot print (an out-of-range timestamp): binary only.
    const parsed =
      vector.json === null
        ? null
        : decodeJson(schema, JSON.parse(fs.readFileSync(path.join(vectorsDir, vector.json), "utf8")), {
            validate: false,
          });
    let found = [];
    let error = null;
    try {
      found = violations(schema, decoded).map((v) => ({ field: v.field, rule_id: v.ruleId }));
    } catch (exc) {
      error = String(exc);
    }
    report[vector.name] = {
      binary: base64(encodeBinary(schema, decoded)),
      json: parsed === null ? null : encodeJson(schema, decoded),
      jsonBinary: parsed === null ? null : base64(encodeBinary(schema, parsed)),
      violations: found,
      error,
    };
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main();
