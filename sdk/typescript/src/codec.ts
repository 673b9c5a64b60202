// ProtoJSON and binary encoding of any agentmsg type, validated on the way in and out.
//
// ProtoJSON is the canonical JSON of the contract (the same bytes Python's `to_json` gives, parsed): 64-bit integers
// as strings, bytes as base64, enums by name, Timestamps as RFC 3339. The registry lets `google.protobuf.Any` and
// the well-known types print the same way in both languages.

import {
  createRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  type MessageShape,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { DecodeError } from "./errors.js";
import { file_agentmsg_v1_content } from "./gen/agentmsg/v1/content_pb.js";
import { file_agentmsg_v1_message } from "./gen/agentmsg/v1/message_pb.js";
import { file_agentmsg_v1_session_service } from "./gen/agentmsg/v1/session_service_pb.js";
import { file_agentmsg_v1_stream } from "./gen/agentmsg/v1/stream_pb.js";
import { file_agentmsg_v1_tool } from "./gen/agentmsg/v1/tool_pb.js";
import { file_agentmsg_v1_tool_service } from "./gen/agentmsg/v1/tool_service_pb.js";
import { file_agentmsg_v1_usage } from "./gen/agentmsg/v1/usage_pb.js";
import { file_google_rpc_error_details } from "./gen/google/rpc/error_details_pb.js";
import { file_google_rpc_status } from "./gen/google/rpc/status_pb.js";
import { validate } from "./validation.js";

/** Every message type of the contract (and google.rpc's error details), by full name. */
export const registry = createRegistry(
  file_agentmsg_v1_content,
  file_agentmsg_v1_message,
  file_agentmsg_v1_usage,
  file_agentmsg_v1_stream,
  file_agentmsg_v1_tool,
  file_agentmsg_v1_session_service,
  file_agentmsg_v1_tool_service,
  file_google_rpc_status,
  file_google_rpc_error_details,
);

/** Options of the decoders: `validate: false` skips the contract's rules (to inspect a bad message). */
export interface DecodeOptions {
  validate?: boolean;
}

/** The message as ProtoJSON (a JSON value; `JSON.stringify` it for text). */
export function encodeJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  return toJson(schema, message, { registry });
}

/** A message from ProtoJSON (a parsed value or text), validated unless `validate: false`. */
export function decodeJson<Desc extends DescMessage>(
  schema: Desc,
  json: JsonValue | string,
  options: DecodeOptions = {},
): MessageShape<Desc> {
  let message: MessageShape<Desc>;
  try {
    const value: JsonValue = typeof json === "string" ? (JSON.parse(json) as JsonValue) : json;
    message = fromJson(schema, value, { registry });
  } catch (error) {
    throw new DecodeError(`not ProtoJSON of ${schema.typeName}: ${(error as Error).message}`);
  }
  if (options.validate ?? true) validate(schema, message);
  return message;
}

/** The message in the protobuf binary format. */
export function encodeBinary<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  return toBinary(schema, message);
}

/** A message from the protobuf binary format, validated unless `validate: false`. */
export function decodeBinary<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
  options: DecodeOptions = {},
): MessageShape<Desc> {
  let message: MessageShape<Desc>;
  try {
    message = fromBinary(schema, bytes);
  } catch (error) {
    throw new DecodeError(`not a binary ${schema.typeName}: ${(error as Error).message}`);
  }
  if (options.validate ?? true) validate(schema, message);
  return message;
}
