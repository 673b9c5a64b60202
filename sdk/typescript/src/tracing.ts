// Tracing through the OpenTelemetry API (@opentelemetry/api), as the Python clients and runner do
// (src/agentmsg/service/telemetry.py). The API records nothing until the application registers an SDK (a NodeSDK,
// a tracer provider and propagator); then:
//
// - a runner's calls: each call the service sends is an `execute_tool {name}` span, the child of the server's
//   span, whose context arrives in RunToolCall.trace_context (W3C `traceparent`, `tracestate`, `baggage`, read by
//   the registered propagator), current while the handler runs;
// - a client's calls (every connection's interceptor): each call carries the active context in its headers, so
//   the server's span of a session call (an append, a read, a publish) is the child of the span the caller is in;
//   the unary tool calls (CallTool, ListTools), where the caller waits on work done elsewhere, get a CLIENT span.
//
// Attributes follow the GenAI semantic conventions: gen_ai.operation.name `execute_tool`, gen_ai.tool.name,
// gen_ai.tool.call.id, gen_ai.tool.type; an `isError` result sets error.type `tool_error` and an error status.
// The call's arguments and result are recorded only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// is `true` (or `1`, `span_only`, `span_and_event`), as gen_ai.tool.call.arguments / gen_ai.tool.call.result.

import { base64Encode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";
import { type Content, type ToolCallContent, type ToolResultContent, toolResultText } from "./content.js";

/** The environment variable that turns content capture on (the GenAI conventions' setting). */
export const CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
const CAPTURE_ON = new Set(["true", "1", "span_only", "span_and_event"]);
const TRACER = "agentmsg";

/** Whether tool arguments and results may be recorded on spans (off unless the user opts in). */
export function contentCapture(): boolean {
  // Read from the environment where there is one (Node); a browser has none, so it never captures.
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return CAPTURE_ON.has((env?.[CAPTURE_ENV] ?? "").trim().toLowerCase());
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
  const attributes = toolAttributes(call);
  if (capture) attributes["gen_ai.tool.call.arguments"] = call.arguments;
  const span = trace.getTracer(TRACER).startSpan(`execute_tool ${call.name}`, { attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), execute);
    recordResult(span, result, capture);
    if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool returned an error" });
    return result;
  } finally {
    span.end();
  }
}

/**
 * Export the spans the registered tracer provider still holds (a batch processor's, within its delay): what a
 * stopping runner does before its process exits. Nothing when no SDK is registered or its provider cannot flush.
 */
export async function flushTracing(): Promise<void> {
  // The API's global provider is a proxy; the SDK's provider the application registered is its delegate.
  const global = trace.getTracerProvider() as { getDelegate?: () => unknown };
  const provider = (global.getDelegate?.() ?? global) as { forceFlush?: () => Promise<void> };
  if (typeof provider.forceFlush === "function") await provider.forceFlush();
}

const TOOL_SERVICE = "agentmsg.v1.ToolService";

const HEADERS: TextMapSetter<Headers> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

function toolAttributes(call: ToolCallContent): Attributes {
  return {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name,
    "gen_ai.tool.call.id": call.id,
    "gen_ai.tool.type": "function",
  };
}

/** A tool's result on its span: `error.type` for an `isError` result, the result itself when captured. */
function recordResult(span: Span, result: ToolResultContent, capture: boolean): void {
  if (result.isError) span.setAttribute("error.type", "tool_error");
  if (capture) span.setAttribute("gen_ai.tool.call.result", JSON.stringify(otelResponse(result)));
}

/** A status code's name as gRPC spells it (`NOT_FOUND`), from Connect's (`NotFound`). */
function codeName(code: Code): string {
  if (code === Code.Canceled) return "CANCELLED";
  return (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/**
 * The interceptor every connection of the SDK uses (see the module comment): the active trace context in each
 * call's headers, and a CLIENT span around each unary ToolService call.
 */
export const tracingInterceptor: Interceptor = (next) => async (request) => {
  if (request.stream || request.service.typeName !== TOOL_SERVICE) {
    propagation.inject(context.active(), request.header, HEADERS);
    return next(request);
  }
  let name = `${TOOL_SERVICE}/${request.method.name}`;
  const attributes: Attributes = {
    "rpc.system": "grpc",
    "rpc.service": TOOL_SERVICE,
    "rpc.method": request.method.name,
  };
  const message = request.message as { $typeName?: string; call?: ToolCallContent };
  const call = message.$typeName === "agentmsg.v1.CallToolRequest" ? message.call : undefined;
  const capture = contentCapture();
  if (call !== undefined) {
    name = `${name} ${call.name}`;
    Object.assign(attributes, toolAttributes(call));
    if (capture) attributes["gen_ai.tool.call.arguments"] = call.arguments;
  }
  const span = trace.getTracer(TRACER).startSpan(name, { kind: SpanKind.CLIENT, attributes });
  // Not made current: nothing runs inside it but the call, whose headers get its context explicitly.
  propagation.inject(trace.setSpan(context.active(), span), request.header, HEADERS);
  try {
    const response = await next(request);
    span.setAttribute("rpc.grpc.status_code", 0); // OK
    const result = response.stream ? undefined : (response.message as { result?: ToolResultContent }).result;
    if (call !== undefined && result !== undefined) recordResult(span, result, capture);
    return response;
  } catch (error) {
    const code = ConnectError.from(error).code;
    span.setAttribute("rpc.grpc.status_code", code);
    span.setAttribute("error.type", codeName(code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: codeName(code) });
    throw error;
  } finally {
    span.end();
  }
};

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
        return { type: "blob", modality, mime_type: mime, content: base64Encode(source.value) };
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
