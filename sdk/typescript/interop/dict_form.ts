// The seed-1 dict form of every valid Message vector (tests/vectors), for tests/interop/test_ts_sdk.py to compare
// with Python's message_to_dict; and what messageFromDict makes of each dict (binary, base64), to compare with
// Python's message_from_dict (the import guesses a URL's media type from its path, in both languages, so a URL that
// had none does not come back as it was).
//
//   node dist/interop/dict_form.js <vectors dir>

import fs from "node:fs";
import path from "node:path";
import { fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import {
  ConversationSchema,
  encodeBase64,
  type Message,
  MessageSchema,
  messageFromDict,
  messageToDict,
} from "../src/index.js";

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
    back: back.map((m) => encodeBase64(toBinary(MessageSchema, m))),
  };
}
process.stdout.write(`${JSON.stringify(report)}\n`);
