// The seed-1 dict form of every valid Message vector (tests/vectors), for tests/interop/test_ts_sdk.py to compare
// with Python's message_to_dict; and whether messageFromDict gives each message back.
//
//   node dist/interop/dict_form.js <vectors dir>

import fs from "node:fs";
import path from "node:path";
import { equals, fromBinary, type JsonObject } from "@bufbuild/protobuf";
import { ConversationSchema, type Message, MessageSchema, messageFromDict, messageToDict } from "../src/index.js";

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error("usage: dict_form.js <vectors dir>");
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) as {
  vectors: { name: string; type: string; binary: string; violations: unknown[] }[];
};
const report: JsonObject = {};
for (const vector of manifest.vectors) {
  if (vector.violations.length > 0) continue;
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, vector.binary)));
  let messages: Message[];
  if (vector.type === "agentmsg.v1.Message") messages = [fromBinary(MessageSchema, bytes)];
  else if (vector.type === "agentmsg.v1.Conversation") messages = fromBinary(ConversationSchema, bytes).messages;
  else continue;
  const dicts = messages.map(messageToDict);
  const back = dicts.map((d) => messageFromDict(d));
  report[vector.name] = {
    dicts,
    roundTrip: back.every((m, i) => equals(MessageSchema, m, messages[i] as Message)),
  };
}
process.stdout.write(`${JSON.stringify(report)}\n`);
