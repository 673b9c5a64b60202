// A TypeScript engine for the cross-language tests: calls tools a Python runner serves through a Python server,
// with deadlines and an AbortSignal, and prints one JSON report.
//
//   node dist/interop/engine.js <target>

import { create } from "@bufbuild/protobuf";
import { Client, type JsonObject, ToolCallContentSchema, toolCall, toolResultText } from "../src/index.js";

const [target] = process.argv.slice(2);
if (target === undefined) throw new Error("usage: engine.js <target>");

async function outcome(run: () => Promise<JsonObject>): Promise<JsonObject> {
  try {
    return await run();
  } catch (error) {
    const e = error as Error & { violations?: { field: string; ruleId: string }[] };
    return { error: e.name, message: e.message, violations: (e.violations ?? []).map((v) => [v.field, v.ruleId]) };
  }
}

const client = new Client(target, { timeoutMs: 10_000 });
const report: JsonObject = {};
try {
  const tools = await client.listTools();
  report.tools = tools.map((t) => [t.tool.name, t.runnerName]);
  report.shout = await outcome(async () => {
    const result = await client.callTool(toolCall("ts_call_1", "shout", { text: "from node", times: 2 }));
    return { id: result.id, text: toolResultText(result), isError: result.isError };
  });
  report.deadline = await outcome(async () => {
    await client.callTool(toolCall("ts_call_2", "sleep", { seconds: 30 }), { timeoutMs: 300 });
    return { finished: true };
  });
  report.abort = await outcome(async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    await client.callTool(toolCall("ts_call_3", "sleep", { seconds: 30 }), { signal: controller.signal });
    return { finished: true };
  });
  report.missing = await outcome(async () => {
    await client.callTool(toolCall("ts_call_4", "no_such_tool", {}));
    return { finished: true };
  });
  report.invalid = await outcome(async () => {
    // Built past the helpers (which refuse an empty id): the server's rules must refuse it too.
    await client.callTool(create(ToolCallContentSchema, { id: "", name: "shout", arguments: "{}" }));
    return { finished: true };
  });
} finally {
  client.close();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
