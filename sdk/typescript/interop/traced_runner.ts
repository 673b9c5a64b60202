// A TypeScript tool runner inside an application that traces (tests/interop/test_ts_sdk.py): an OpenTelemetry SDK
// is registered (otel_sdk.ts) and every finished span is printed on stdout, one JSON object a line, next to the
// runner's own reports.
//
//   node dist/interop/traced_runner.js <target>
//
// Tools: ts_weather (its handler makes a span of its own, `lookup`) and ts_fail (throws). Runs until SIGTERM.

import { trace } from "@opentelemetry/api";
import { ToolRunner } from "../src/index.js";
import { registerPrintingSdk, report } from "./otel_sdk.js";

registerPrintingSdk();

const [target] = process.argv.slice(2);
if (target === undefined) throw new Error("usage: traced_runner.js <target>");

const runner = new ToolRunner(target, { name: "ts-traced-runner" });
runner
  .tool("ts_weather", { type: "object", properties: { city: { type: "string" } } }, async ({ city }) => {
    // The handler's own span: the child of the runner's execute_tool span, which is current while it runs.
    await trace.getTracer("weather-tool").startActiveSpan("lookup", async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      span.end();
    });
    return `sleet in ${String(city)}`;
  })
  .tool("ts_fail", { type: "object" }, () => {
    throw new RangeError("the tool failed on purpose");
  });

const stop = new AbortController();
process.on("SIGTERM", () => stop.abort());
const serving = runner.serve({ signal: stop.signal });
await runner.registered();
report({ registered: runner.runnerId ?? "" });
await serving;
report({ stopped: true });
