// A TypeScript tool runner that stops gracefully (tests/interop/test_ts_draining.py). `ts_hold` reports that it
// started, then waits until the release file exists, ignoring its AbortSignal (the worst case: a handler that cannot
// be interrupted). Its spans go through a batch processor whose delay is ten minutes, printed on stdout when
// exported: only the runner's flush at its stop exports them before the test's wait ends.
//
//   node dist/interop/draining_runner.js <target> <name> <graceMs> <releaseFile>
//
// It serves with handleSignals: SIGTERM drains it; it reports `exited` once serve() resolved, and exits (the held
// handler's timer would keep node running).

import { existsSync } from "node:fs";
import { ToolRunner } from "../src/index.js";
import { registerPrintingSdk, report } from "./otel_sdk.js";

registerPrintingSdk(600_000);

const [target, name, graceMs, release] = process.argv.slice(2);
if (target === undefined || name === undefined || graceMs === undefined || release === undefined) {
  throw new Error("usage: draining_runner.js <target> <name> <graceMs> <releaseFile>");
}

const runner = new ToolRunner(target, { name, graceMs: Number(graceMs), reconnect: { maxDelayMs: 500 } });
runner.tool("ts_hold", { type: "object", properties: { tag: { type: "string" } } }, async ({ tag }) => {
  report({ started: String(tag) });
  for (let i = 0; i < 60_000 && !existsSync(release); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return `${String(tag)} done by ${name}`;
});

const serving = runner.serve({ handleSignals: true });
await Promise.race([runner.registered(), serving]);
report({ registered: runner.runnerId ?? "" });
await serving;
report({ exited: true });
process.exit(0);
