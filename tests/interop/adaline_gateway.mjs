// The seed-2 output checked by the Adaline gateway's own code (npm @adaline/types, @adaline/openai,
// @adaline/anthropic): the zod Message schema, and the OpenAI and Anthropic chat models turning a gateway
// request into the provider's request body (getCompleteChatData: a pure transform, nothing is sent).
//
// Usage: node adaline_gateway.mjs CASES.json, where the file is [{"name", "messages", "metadata": bool}].
// Prints {name: {"schema": {"ok", "error"?}, "openai": {"ok", "body"?, "error"?}, "anthropic": {...}}}.
// With "metadata": true the schema is Message() with every metadata slot z.record(z.any()) (the stock
// Message() takes no metadata, and neither do the providers, which are then not run).
import { readFileSync } from "node:fs";
import { Anthropic } from "@adaline/anthropic";
import { OpenAI } from "@adaline/openai";
import { Message } from "@adaline/types";
import { z } from "zod";

const OPENAI_MODEL = "gpt-4o";
const ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929";
const anyMeta = z.record(z.any()).optional();
const withMetadata = Message(undefined, anyMeta, anyMeta, anyMeta, anyMeta, anyMeta, anyMeta, anyMeta);
const stock = Message();

function problem(error) {
  const cause = error && error.cause ? `: ${error.cause.message ?? error.cause}` : "";
  return `${error && error.message ? error.message : String(error)}${cause}`;
}

async function transform(model, config, messages) {
  try {
    return { ok: true, body: await model.getCompleteChatData(config, messages, []) };
  } catch (error) {
    return { ok: false, error: problem(error) };
  }
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const openai = new OpenAI().chatModel({ modelName: OPENAI_MODEL, apiKey: "not-used" });
const anthropic = new Anthropic().chatModel({ modelName: ANTHROPIC_MODEL, apiKey: "not-used" });
const out = {};
for (const { name, messages, metadata } of cases) {
  const schema = metadata ? withMetadata : stock;
  const failures = messages
    .map((message, i) => [i, schema.safeParse(message)])
    .filter(([, parsed]) => !parsed.success)
    .map(([i, parsed]) => `[${i}] ${JSON.stringify(parsed.error.issues)}`);
  const result = { schema: failures.length ? { ok: false, error: failures.join("; ") } : { ok: true } };
  if (!metadata) {
    result.openai = await transform(openai, {}, messages);
    result.anthropic = await transform(anthropic, { maxTokens: 1024 }, messages);
  }
  out[name] = result;
}
process.stdout.write(JSON.stringify(out));
