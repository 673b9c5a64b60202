// The OpenTelemetry SDK an application registers, for the traced interop programs (traced_runner.ts,
// traced_engine.ts): a tracer provider whose finished spans are printed on stdout, one JSON object a line, the
// async-hooks context manager and the W3C propagators.

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
  BatchSpanProcessor,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { JsonObject } from "../src/index.js";

export function report(line: JsonObject): void {
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

/**
 * Register the SDK (what an application does once, before it traces). With `batchDelayMs`, spans are exported in
 * batches that wait that long (as a production SDK's do), else each as it ends.
 */
export function registerPrintingSdk(batchDelayMs?: number): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const processor =
    batchDelayMs === undefined
      ? new SimpleSpanProcessor(new Printing())
      : new BatchSpanProcessor(new Printing(), { scheduledDelayMillis: batchDelayMs });
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [processor] }));
}
