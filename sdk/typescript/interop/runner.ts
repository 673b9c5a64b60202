// A TypeScript tool runner for the cross-language tests (tests/interop/test_ts_sdk.py): serves five tools through
// an agentmsg server and reports on stdout, one JSON object a line, when it registers and when a call is cancelled.
//
//   node dist/interop/runner.js <target> [token]
//
// It runs until SIGTERM, then stops serving and exits 0.

import { type JsonObject, ToolRunner, text, toolResult } from "../src/index.js";

function report(line: JsonObject): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const [target, token] = process.argv.slice(2);
if (target === undefined) throw new Error("usage: runner.js <target> [token]");

const runner = new ToolRunner(target, { name: "ts-runner", token, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
runner
  .tool(
    "ts_add",
    { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    ({ a, b }) => Number(a) + Number(b),
    { description: "Add two numbers.", kind: "execute", title: "Adder", readOnlyHint: true, idempotentHint: true },
  )
  .tool(
    "ts_describe",
    { type: "object", properties: { subject: { type: "string" } } },
    ({ subject }, { call }) => [text(`call ${call.id} about ${String(subject)}`), text(" from TypeScript")],
    { description: "Answer with two text blocks." },
  )
  .tool(
    "ts_result",
    { type: "object", properties: { note: { type: "string" } } },
    ({ note }, { call }) => toolResult(call.id, `noted: ${String(note)}`, { isError: true, metadata: { by: "ts" } }),
    { description: "Answer with a tool result made by toolResult(...)." },
  )
  .tool("ts_fail", { type: "object" }, () => {
    throw new RangeError("the tool failed on purpose");
  })
  .tool(
    "ts_wait",
    { type: "object" },
    (_args, { call, signal }) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          report({ cancelled: call.id, reason: String((signal.reason as Error)?.message ?? signal.reason) });
          reject(signal.reason);
        });
      }),
    { description: "Wait until cancelled." },
  );

const stop = new AbortController();
process.on("SIGTERM", () => stop.abort());
const serving = runner.serve({ signal: stop.signal });
void (async () => {
  while (!stop.signal.aborted) {
    await runner.registered();
    report({ registered: runner.runnerId ?? "" });
    // Wait for the next registration (after a reconnect) or the end.
    while (runner.runnerId !== undefined && !stop.signal.aborted) await new Promise((r) => setTimeout(r, 20));
  }
})();
await serving;
report({ stopped: true });
