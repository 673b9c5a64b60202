// Validate ProtoJSON values against the contract's JSON Schema with ajv (draft 2020-12), for
// tests/interop/test_json_schema.py: the second validator beside Python's jsonschema.
//
//   node tests/interop/json_schema.mjs SCHEMA CASES
//
// SCHEMA is schema/agentmsg.v1.schema.json; CASES a JSON file holding [{type, value}], type a full message
// name (agentmsg.v1.Message). Prints [{valid, errors}] in the same order, errors as ajv's instancePath and
// message.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";

const [schemaPath, casesPath] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const cases = JSON.parse(readFileSync(casesPath, "utf8"));

// strict: the schema must use only keywords ajv knows (strictRequired off: a oneof arm is named by `required` in
// an alternative beside the `properties` that define it); formats are annotations (validateFormats off), as
// draft 2020-12's format-annotation vocabulary says and as Python's jsonschema treats them by default.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: false, validateFormats: false });
ajv.addSchema(schema);
const validators = new Map();
const results = cases.map(({ type, value }) => {
  let validate = validators.get(type);
  if (validate === undefined) {
    validate = ajv.getSchema(`${schema.$id}#/$defs/${type}`);
    if (validate === undefined) throw new Error(`no definition ${type} in ${schemaPath}`);
    validators.set(type, validate);
  }
  const valid = validate(value);
  return {
    valid,
    errors: valid ? [] : validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`),
  };
});
process.stdout.write(JSON.stringify(results));
