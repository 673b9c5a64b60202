// A TypeScript engine inside an application that traces (tests/interop/test_ts_sdk.py): an OpenTelemetry SDK is
// registered (otel_sdk.ts) and every finished span is printed on stdout, one JSON object a line. Inside a `turn`
// span of its own it appends a message and calls `ts_weather` (served by traced_runner.ts), then a tool nobody serves.
//
//   node dist/interop/traced_engine.js <target> <session>

import { trace } from "@opentelemetry/api";
import { Client, NotFoundError, toolCall, toolResultText, userText } from "../src/index.js";
import { registerPrintingSdk, report } from "./otel_sdk.js";

registerPrintingSdk();

const [target, session] = process.argv.slice(2);
if (target === undefined || session === undefined) throw new Error("usage: traced_engine.js <target> <session>");

const client = new Client(target, { timeoutMs: 10_000 });
try {
  await trace.getTracer("engine").startActiveSpan("turn", async (turn) => {
    try {
      const offset = await client.append(session, userText("weather in Oslo?"));
      const weather = toolCall("call-31", "ts_weather", { city: "Oslo" });
      const result = await client.callTool(weather);
      let missing = "";
      try {
        await client.callTool(toolCall("call-32", "nobody_serves_this", {}));
      } catch (error) {
        missing = error instanceof NotFoundError ? "not found" : String(error);
      }
      report({ offset: String(offset), result: toolResultText(result), missing });
    } finally {
      turn.end();
    }
  });
} finally {
  client.close();
}
