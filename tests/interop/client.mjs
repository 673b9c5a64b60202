// A Node gRPC client of the agentmsg service: @grpc/grpc-js + @grpc/proto-loader, loading proto/ at run time.
//
//   node tests/interop/client.mjs <target> <input.json> <proto dir> <google/rpc include dir>
//
// The input (written by tests/interop/test_node_interop.py) holds a session id, messages as ProtoJSON, an
// invalid message and a tool call. The client appends the messages (AppendMessage, a retried AppendMessage,
// AppendMessages), subscribes and reads them back, lists and calls the tool, appends the invalid message and
// decodes the rich error from `grpc-status-details-bin`. It prints one JSON report on stdout, messages as
// ProtoJSON, for the Python test to compare with what it sent. Every call has a deadline.
//
// proto-loader converts with protobufjs's fromObject/toObject, whose plain objects are ProtoJSON except for the
// well-known types; `convert` below walks the schema (a protobufjs Root of the same files) and gives Timestamp,
// Struct, Value and ListValue their ProtoJSON forms, so that messages go in and come out exactly as ProtoJSON.

import fs from "node:fs";
import path from "node:path";

import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const DEADLINE_MS = 10_000;
const MAX_MESSAGE = 32 * 1024 * 1024;

// --- ProtoJSON for the well-known types ------------------------------------------------------

function timestampToJson(seconds, nanos) {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new Error(`timestamp out of range: ${seconds}s`);
  const base = date.toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
  if (nanos === 0) return `${base}Z`;
  // As every ProtoJSON printer: 3, 6 or 9 fractional digits, the fewest that are exact.
  const digits = nanos % 1_000_000 === 0 ? 3 : nanos % 1_000 === 0 ? 6 : 9;
  return `${base}.${String(nanos).padStart(9, "0").slice(0, digits)}Z`;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

function timestampFromJson(text) {
  const m = TIMESTAMP.exec(text);
  if (m === null) throw new Error(`not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
  const date = new Date(0);
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  date.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  let seconds = date.getTime() / 1000;
  if (m[8] !== "Z" && m[8] !== "z") {
    const sign = m[8][0] === "-" ? -1 : 1;
    seconds -= sign * (Number(m[8].slice(1, 3)) * 3600 + Number(m[8].slice(4, 6)) * 60);
  }
  return { seconds: String(seconds), nanos: Number((m[7] ?? "").padEnd(9, "0")) };
}

const WKT = {
  ".google.protobuf.Timestamp": {
    fromJson: (json) => timestampFromJson(json),
    toJson: (object) => timestampToJson(Number(object.seconds ?? 0), object.nanos ?? 0),
  },
  ".google.protobuf.Struct": {
    fromJson: (json) => ({ fields: mapValues(json, (v) => valueFromJson(v)) }),
    toJson: (object) => mapValues(object.fields ?? {}, (v) => valueToJson(v)),
  },
  ".google.protobuf.ListValue": {
    fromJson: (json) => ({ values: json.map((v) => valueFromJson(v)) }),
    toJson: (object) => (object.values ?? []).map((v) => valueToJson(v)),
  },
  ".google.protobuf.Value": {
    fromJson: (json) => valueFromJson(json),
    toJson: (object) => valueToJson(object),
  },
};

function mapValues(object, convert) {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, convert(value)]));
}

function valueFromJson(value) {
  if (value === null) return { nullValue: "NULL_VALUE" };
  if (Array.isArray(value)) return { listValue: WKT[".google.protobuf.ListValue"].fromJson(value) };
  switch (typeof value) {
    case "number":
      return { numberValue: value };
    case "string":
      return { stringValue: value };
    case "boolean":
      return { boolValue: value };
    case "object":
      return { structValue: WKT[".google.protobuf.Struct"].fromJson(value) };
    default:
      throw new Error(`not a JSON value: ${typeof value}`);
  }
}

function valueToJson(object) {
  if ("nullValue" in object) return null;
  if ("numberValue" in object) return object.numberValue;
  if ("stringValue" in object) return object.stringValue;
  if ("boolValue" in object) return object.boolValue;
  if ("structValue" in object) return WKT[".google.protobuf.Struct"].toJson(object.structValue);
  if ("listValue" in object) return WKT[".google.protobuf.ListValue"].toJson(object.listValue);
  throw new Error("a google.protobuf.Value with no kind");
}

/**
 * Walk a value of `type` (a protobufjs Type), converting the well-known types with `direction`
 * ("fromJson": ProtoJSON to protobufjs objects, "toJson": the reverse). Everything else is already the same
 * in both forms (with the loader options below): names, enums, int64 strings, base64 bytes.
 */
function convert(type, value, direction) {
  const wkt = WKT[type.fullName];
  if (wkt !== undefined) return wkt[direction](value);
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    const field = type.fields[key];
    if (field === undefined) throw new Error(`${type.fullName} has no field ${key}`);
    const fieldType = field.resolve().resolvedType;
    if (!(fieldType instanceof protobuf.Type)) out[key] = item;
    else if (field.map) out[key] = mapValues(item, (v) => convert(fieldType, v, direction));
    else if (field.repeated) out[key] = item.map((v) => convert(fieldType, v, direction));
    else out[key] = convert(fieldType, item, direction);
  }
  return out;
}

// --- helpers ---------------------------------------------------------------------------------

function deadline() {
  return new Date(Date.now() + DEADLINE_MS);
}

function unary(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: deadline() }, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

/** Read a session's log from the start until `count` messages have arrived. */
function subscribe(client, sessionId, count) {
  return new Promise((resolve, reject) => {
    const received = [];
    let done = false;
    const call = client.Subscribe({ sessionId, afterOffset: "0" }, { deadline: deadline() });
    call.on("data", (response) => {
      for (const logged of response.messages ?? []) received.push({ offset: Number(logged.offset), message: logged.message });
      if (!done && received.length >= count) {
        done = true;
        call.cancel();
        resolve(received);
      }
    });
    call.on("error", (error) => {
      if (!done) reject(error);
    });
    call.on("end", () => {
      if (!done) reject(new Error(`the subscription ended after ${received.length} of ${count} messages`));
    });
  });
}

/** A protobufjs Root of `files`, found in `includeDir` (google/protobuf/*.proto: protobufjs's bundled copies). */
function loadRoot(includeDir, files) {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    const local = path.join(includeDir, target);
    return fs.existsSync(local) ? local : target;
  };
  root.loadSync(files, { keepCase: false });
  root.resolveAll();
  return root;
}

function loadRpcTypes(includeDir) {
  const root = loadRoot(includeDir, ["google/rpc/status.proto", "google/rpc/error_details.proto"]);
  return {
    Status: root.lookupType("google.rpc.Status"),
    BadRequest: root.lookupType("google.rpc.BadRequest"),
    ErrorInfo: root.lookupType("google.rpc.ErrorInfo"),
  };
}

/** The status code, message and google.rpc details of a failed call. */
function richError(error, rpc) {
  const report = { code: grpc.status[error.code], message: error.details, errorInfo: null, fieldViolations: null };
  const [raw] = error.metadata?.get("grpc-status-details-bin") ?? [];
  if (raw === undefined) return report;
  const status = rpc.Status.decode(raw);
  report.statusCode = status.code;
  for (const detail of status.details) {
    const typeName = detail.type_url.slice(detail.type_url.lastIndexOf("/") + 1);
    if (typeName === "google.rpc.BadRequest") {
      const bad = rpc.BadRequest.decode(detail.value);
      report.fieldViolations = bad.fieldViolations.map((v) => ({ field: v.field, reason: v.reason, description: v.description }));
    } else if (typeName === "google.rpc.ErrorInfo") {
      const info = rpc.ErrorInfo.decode(detail.value);
      report.errorInfo = { reason: info.reason, domain: info.domain };
    }
  }
  return report;
}

// --- the run ---------------------------------------------------------------------------------

async function main() {
  const [target, inputPath, protoDir, rpcIncludeDir] = process.argv.slice(2);
  if (rpcIncludeDir === undefined) {
    throw new Error("usage: node client.mjs <target> <input.json> <proto dir> <google/rpc include dir>");
  }
  const files = ["agentmsg/v1/session_service.proto", "agentmsg/v1/tool_service.proto"];
  const definition = protoLoader.loadSync(files, {
    includeDirs: [protoDir],
    keepCase: false, // lowerCamelCase, as ProtoJSON
    longs: String,
    enums: String,
    bytes: String, // base64, as ProtoJSON
    defaults: false,
    arrays: false,
    oneofs: false,
    json: true,
  });
  const v1 = grpc.loadPackageDefinition(definition).agentmsg.v1;
  const options = { "grpc.max_receive_message_length": MAX_MESSAGE, "grpc.max_send_message_length": MAX_MESSAGE };
  const credentials = grpc.credentials.createInsecure();
  const sessions = new v1.SessionService(target, credentials, options);
  const tools = new v1.ToolService(target, credentials, options);
  const rpc = loadRpcTypes(rpcIncludeDir);
  // The same schema as a protobufjs Root, to convert the well-known types to and from ProtoJSON.
  const schema = loadRoot(protoDir, files);
  const fromJson = (typeName, json) => convert(schema.lookupType(typeName), json, "fromJson");
  const toJson = (typeName, object) => convert(schema.lookupType(typeName), object, "toJson");

  const input = JSON.parse(fs.readFileSync(inputPath, "utf8"));
  const sessionId = input.sessionId;
  const messages = input.messages.map((json) => fromJson("agentmsg.v1.Message", json));
  const report = {};
  try {
    // One by one, a retry of the first (idempotent on the id), then the rest as one atomic batch.
    const half = Math.ceil(messages.length / 2);
    report.appended = [];
    for (const message of messages.slice(0, half)) {
      const response = await unary(sessions, "AppendMessage", { sessionId, message });
      report.appended.push({ offset: Number(response.offset), duplicate: Boolean(response.duplicate) });
    }
    const retried = await unary(sessions, "AppendMessage", { sessionId, message: messages[0] });
    report.retried = { offset: Number(retried.offset), duplicate: Boolean(retried.duplicate) };
    const batch = await unary(sessions, "AppendMessages", { sessionId, messages: messages.slice(half) });
    for (const [i, offset] of (batch.offsets ?? []).entries()) {
      report.appended.push({ offset: Number(offset), duplicate: Boolean(batch.duplicates?.[i]) });
    }

    const subscribed = await subscribe(sessions, sessionId, messages.length);
    report.subscribed = subscribed.map(({ offset, message }) => ({ offset, message: toJson("agentmsg.v1.Message", message) }));

    const listed = await unary(tools, "ListTools", {});
    report.tools = (listed.tools ?? []).map((tool) => toJson("agentmsg.v1.RegisteredTool", tool));
    const call = fromJson("agentmsg.v1.ToolCallContent", input.toolCall);
    const called = await unary(tools, "CallTool", { call });
    report.toolResult = toJson("agentmsg.v1.ToolResultContent", called.result);

    try {
      const invalid = fromJson("agentmsg.v1.Message", input.invalid);
      await unary(sessions, "AppendMessage", { sessionId, message: invalid });
      report.invalid = { code: "OK" };
    } catch (error) {
      report.invalid = richError(error, rpc);
    }
  } finally {
    sessions.close();
    tools.close();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
