// The conversion service from TypeScript, for the cross-language tests: converts a conversation (an
// agentmsg.v1.Conversation in binary, from a file) to every format through the Node client (gRPC) and the web client
// (Connect binary, Connect JSON, gRPC-Web over fetch), reads each payload back, converts a session's context for a
// leaf, and tries a strict conversion. Prints what each client got as JSON (messages as base64 binary).
//
//   node dist/interop/convert.js <grpc target> <http base url> <conversation file> <session> <leaf>

import { readFileSync } from "node:fs";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type BaseClient,
  Client,
  ConversationSchema,
  type ConversionFormatName,
  type Message,
  MessageSchema,
  ValidationError,
} from "../src/index.js";
import { Client as WebClient } from "../src/web.js";

const [target, baseUrl, file, session, leaf] = process.argv.slice(2);
if (
  target === undefined ||
  baseUrl === undefined ||
  file === undefined ||
  session === undefined ||
  leaf === undefined
) {
  throw new Error("usage: convert.js <grpc target> <http base url> <conversation file> <session> <leaf>");
}
const sessionId: string = session;
const leafId: string = leaf;
const { messages } = fromBinary(ConversationSchema, readFileSync(file));
const FORMATS: ConversionFormatName[] = [
  "openai-chat",
  "openai-responses",
  "anthropic",
  "gemini",
  "adaline",
  "seed1",
  "langchain",
  "ag-ui",
  "ai-sdk",
];
const RESPONSES: ConversionFormatName[] = ["openai-chat", "openai-responses", "anthropic", "gemini"];
const fifth = messages[4];
if (fifth === undefined) throw new Error("the conversation needs a fifth message (an assistant answer)");
const answer: Message = fifth;

async function script(client: BaseClient): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const format of FORMATS) {
    const converted = await client.convertTo(format, messages);
    const read = await client.convertFrom(format, converted.json, { idMap: converted.idMap });
    out[format] = {
      ...converted,
      read: read.messages.map((m) => Buffer.from(toBinary(MessageSchema, m)).toString("base64")),
      readLosses: read.losses,
    };
  }
  for (const format of RESPONSES) {
    out[`${format} response`] = await client.convertTo(format, [answer], { response: true });
  }
  out.session = await client.convertTo("anthropic", { sessionId, leaf: leafId });
  try {
    await client.convertTo("openai-chat", messages, { strict: true });
    out.strict = "converted";
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    out.strict = error.violations.map((v) => [v.field, v.ruleId]);
  }
  return out;
}

const clients: Record<string, BaseClient> = {
  grpc: new Client(target, { timeoutMs: 20_000 }),
  "connect-binary": new WebClient(baseUrl, { timeoutMs: 20_000 }),
  "connect-json": new WebClient(baseUrl, { timeoutMs: 20_000, format: "json" }),
  "grpc-web": new WebClient(baseUrl, { timeoutMs: 20_000, protocol: "grpc-web" }),
};
const report: Record<string, unknown> = {};
try {
  for (const [name, client] of Object.entries(clients)) report[name] = await script(client);
  process.stdout.write(`${JSON.stringify(report)}\n`);
} finally {
  for (const client of Object.values(clients)) client.close();
}
