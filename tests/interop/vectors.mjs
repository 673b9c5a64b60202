// The golden vectors in Node: @bufbuild/protobuf (code from protoc-gen-es) and @bufbuild/protovalidate.
//
//   node tests/interop/vectors.mjs <generated code dir> <vectors dir>
//
// For every vector in manifest.json: decode the binary and encode it again, print it as ProtoJSON, parse the
// ProtoJSON file and encode that, and validate. Prints one JSON report, by vector name, for
// tests/interop/test_node_vectors.py to compare with the files and the manifest.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { createRegistry, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { createValidator, violationsToProto } from "@bufbuild/protovalidate";

/** Every file descriptor the generated modules under `dir` export. */
async function loadFiles(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { recursive: true }).sort()) {
    if (!entry.endsWith("_pb.js")) continue;
    const module = await import(pathToFileURL(path.join(dir, entry)).href);
    files.push(...Object.values(module).filter((value) => value?.kind === "file"));
  }
  return files;
}

/** A violation's field path as the Python library writes it: `system.content[0]`, `map['key']`. */
function fieldPath(violation) {
  return violation.field.elements
    .map((element) => {
      const { case: kind, value } = element.subscript;
      if (kind === undefined) return element.fieldName;
      if (kind === "stringKey") return `${element.fieldName}['${value}']`;
      if (kind === "boolKey") return `${element.fieldName}[${value ? "True" : "False"}]`;
      return `${element.fieldName}[${value}]`;
    })
    .join(".");
}

function base64(bytes) {
  return Buffer.from(bytes).toString("base64");
}

async function main() {
  const [genDir, vectorsDir] = process.argv.slice(2);
  if (vectorsDir === undefined) throw new Error("usage: node vectors.mjs <generated code dir> <vectors dir>");
  const registry = createRegistry(...(await loadFiles(genDir)));
  const validator = createValidator();
  const manifest = JSON.parse(fs.readFileSync(path.join(vectorsDir, "manifest.json"), "utf8"));
  const report = {};
  for (const vector of manifest.vectors) {
    const schema = registry.getMessage(vector.type);
    if (schema === undefined) {
      report[vector.name] = { error: `no generated schema for ${vector.type}` };
      continue;
    }
    const decoded = fromBinary(schema, fs.readFileSync(path.join(vectorsDir, vector.binary)));
    // A vector with no JSON file holds a value ProtoJSON cannot print (an out-of-range timestamp): binary only.
    const parsed =
      vector.json === null
        ? null
        : fromJson(schema, JSON.parse(fs.readFileSync(path.join(vectorsDir, vector.json), "utf8")), { registry });
    const result = validator.validate(schema, decoded);
    report[vector.name] = {
      binary: base64(toBinary(schema, decoded)),
      json: parsed === null ? null : toJson(schema, decoded, { registry }),
      jsonBinary: parsed === null ? null : base64(toBinary(schema, parsed)),
      violations:
        result.kind === "invalid"
          ? violationsToProto(result.violations)[0].violations.map((v) => ({ field: fieldPath(v), rule_id: v.ruleId }))
          : [],
      error: result.kind === "error" ? String(result.error) : null,
    };
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
