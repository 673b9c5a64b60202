// Tracing of a runner's calls through the OpenTelemetry API (@opentelemetry/api), as the Python runner does
// (src/agentmsg/service/telemetry.py, tool_execution): each call the service sends is an `execute_tool {name}`
// span, the child of the server's span, whose context arrives in RunToolCall.trace_context (W3C `traceparent`,
// `tracestate`, `baggage`, read by the application's registered propagator). The API records nothing until the
// application registers an SDK (a NodeSDK, a tracer provider); then the runner's spans join the caller's trace.
//
// Attributes follow the GenAI semantic conventions: gen_ai.operation.name `execute_tool`, gen_ai.tool.name,
// gen_ai.tool.call.id, gen_ai.tool.type; an `isError` result sets error.type `tool_error` and an error status.
// The call's arguments and result are recorded only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// is `true` (or `1`, `span_only`, `span_and_event`), as gen_ai.tool.call.arguments / gen_ai.tool.call.result.

import { type Attributes, context, propagation, ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";
import { type Content, type ToolCallContent, type ToolResultContent, toolResultText } from "./content.js";

/** The environment variable that turns content capture on (the GenAI conventions' setting). */
export const CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
const CAPTURE_ON = new Set(["true", "1", "span_only", "span_and_event"]);
const TRACER = "agentmsg";

/** Whether tool arguments and results may be recorded on spans (off unless the user opts in). */
export function contentCapture(): boolean {
  return CAPTURE_ON.has((process.env[CAPTURE_ENV] ?? "").trim().toLowerCase());
}

/**
 * Run `execute` inside the call's `execute_tool {name}` span, the child of the context in `carrier`
 * (RunToolCall.trace_context); the span is current while it runs and ends with its result.
 */
export async function traceToolCall(
  call: ToolCallContent,
  carrier: Readonly<Record<string, string>>,
  execute: () => Promise<ToolResultContent>,
): Promise<ToolResultContent> {
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  const capture = contentCapture();
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name,
    "gen_ai.tool.call.id": call.id,
    "gen_ai.tool.type": "function",
  };
  if (capture) attributes["gen_ai.tool.call.arguments"] = call.arguments;
  const span = trace.getTracer(TRACER).startSpan(`execute_tool ${call.name}`, { attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), execute);
    if (result.isError) {
      span.setAttribute("error.type", "tool_error");
      span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool returned an error" });
    }
    if (capture) span.setAttribute("gen_ai.tool.call.result", JSON.stringify(otelResponse(result)));
    return result;
  } finally {
    span.end();
  }
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A tool result as the conventions' `tool_call_response.response`: its text, or its parts when not all text. */
export function otelResponse(result: ToolResultContent): Json {
  const blocks = result.content;
  if (blocks.every((block) => block.kind.case === "text")) return toolResultText(result);
  return blocks.map(otelPart);
}

function otelPart(block: Content): Json {
  const kind = block.kind;
  switch (kind.case) {
    case "text":
      return { type: "text", content: kind.value.text };
    case "image":
    case "audio":
    case "document": {
      const modality = kind.case;
      const mime = kind.value.mediaType || null;
      const source = kind.value.source;
      if (source.case === "data") {
        return { type: "blob", modality, mime_type: mime, content: Buffer.from(source.value).toString("base64") };
      }
      if (source.case === "url") return { type: "uri", modality, mime_type: mime, uri: source.value };
      return { type: "file", modality, mime_type: mime, file_id: source.value ?? "" };
    }
    case "provider": {
      let parsed: Json;
      try {
        parsed = JSON.parse(kind.value.json) as Json;
      } catch {
        parsed = kind.value.json;
      }
      return { type: "provider", provider: kind.value.provider, block: parsed };
    }
    default:
      return { type: kind.case ?? "unknown" };
  }
}
