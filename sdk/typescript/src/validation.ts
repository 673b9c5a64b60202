// The contract's rules through @bufbuild/protovalidate: the rules live in the proto (buf.validate annotations), this
// runs them and reports violations with the same field paths and rule ids as the Python library.

import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { createValidator, violationsToProto } from "@bufbuild/protovalidate";
import { ValidationError, type Violation } from "./errors.js";

// One shared validator: it caches the compiled rules per message type.
const validator = createValidator();

/** A field path as the Python library writes it: `system.content[0]`, `map['key']`. */
function fieldPath(violation: {
  field?: { elements: { fieldName: string; subscript: { case: string | undefined; value?: unknown } }[] };
}): string {
  return (violation.field?.elements ?? [])
    .map((element) => {
      const { case: kind, value } = element.subscript;
      if (kind === undefined) return element.fieldName;
      if (kind === "stringKey") return `${element.fieldName}['${String(value)}']`;
      if (kind === "boolKey") return `${element.fieldName}[${value ? "True" : "False"}]`;
      return `${element.fieldName}[${String(value)}]`;
    })
    .join(".");
}

/** Every contract rule `message` breaks (empty when valid). */
export function violations<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Violation[] {
  const result = validator.validate(schema, message);
  if (result.kind === "valid") return [];
  if (result.kind === "error") throw result.error;
  const [proto] = violationsToProto(result.violations);
  return proto.violations.map((v) => ({ field: fieldPath(v), ruleId: v.ruleId, message: v.message }));
}

/** Check `message` against the contract's rules; throws {@link ValidationError} listing every violation. */
export function validate<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void {
  const found = violations(schema, message);
  if (found.length > 0) throw new ValidationError(found, schema.name);
}
