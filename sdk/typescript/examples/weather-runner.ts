// A tool runner in TypeScript: serves `get_weather` through an agentmsg server until Ctrl-C (or SIGTERM).
//
//   node sdk/typescript/dist/examples/weather-runner.js [host:port]   (default 127.0.0.1:50051, `make serve`)

import { ToolRunner } from "../src/index.js";

const FORECASTS: Record<string, string> = { Paris: "14°C and light rain", Oslo: "-3°C and snow" };

/** The runner: one tool, `get_weather(city)`, answered from a table (no network). */
export function weatherRunner(target: string): ToolRunner {
  return new ToolRunner(target, { name: "weather-runner-ts" }).tool(
    "get_weather",
    { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    async ({ city }, { signal }) => {
      // A real tool would fetch here and pass `signal` on, so a cancelled call stops its work.
      await new Promise((resolve) => setTimeout(resolve, 50));
      signal.throwIfAborted();
      return FORECASTS[String(city)] ?? "unknown";
    },
    { description: "Current weather for a city (scripted).", kind: "web" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = process.argv[2] ?? "127.0.0.1:50051";
  const runner = weatherRunner(target);
  // Ctrl-C or SIGTERM drains it: no new call, the calls in flight finish (10 s at most), then it unregisters.
  const serving = runner.serve({ handleSignals: true });
  await runner.registered();
  console.log(`serving get_weather on ${target} as runner ${runner.runnerId}`);
  await serving;
}
