// A TypeScript tool runner inside an application that traces (tests/interop/test_ts_sdk.py): an OpenTelemetry SDK
// is registered (a tracer provider, the async-hooks context manager, the W3C propagators) and every finished span
// is printed on stdout, one JSON object a line, next to the runner's own reports.
//
//   node dist/interop/traced_runner.js <target>
//
// Tools: ts_weather (its handler makes a span of its own, `lookup`) and ts_fail (throws). Runs until SIGTERM.

import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  type ExportResult,
  ExportResultCode,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { type JsonObject, ToolRunner } from "../src/index.js";

function report(line: JsonObject): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

class Printing implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      const own = span.spanContext();
      report({
        span: {
          name: span.name,
          kind: span.kind,
          traceId: own.traceId,
          spanId: own.spanId,
          parentSpanId: span.parentSpanContext?.spanId ?? "",
          status: span.status.code,
          attributes: span.attributes as JsonObject,
        },
      });
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(
  new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
);
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new Printing())] }));

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
