// @agentmsg/sdk: agentmsg for TypeScript. The contract's generated types live under `@agentmsg/sdk` too (every
// schema and enum of agentmsg.v1), so one import gives the model, its rules, the fold, the client and the runner.
// This is the Node entry (gRPC over HTTP/2); `@agentmsg/sdk/web` (web.ts) is the browser's, with the same API but
// the runner and PublishStream, over Connect or gRPC-Web.

export type { JsonObject, JsonValue } from "@bufbuild/protobuf";
export * from "./client.js";
export * from "./clientCore.js";
export * from "./codec.js";
export * from "./connection.js";
export * from "./content.js";
export * from "./dictForm.js";
export * from "./errors.js";
// The generated contract: every schema, type and enum of agentmsg.v1.
export * from "./gen/agentmsg/v1/content_pb.js";
// The conversion service's messages, by module (its ConversionLoss differs from the client's).
export * as convertServicePb from "./gen/agentmsg/v1/convert_service_pb.js";
export { ConversionFormat, ConvertService } from "./gen/agentmsg/v1/convert_service_pb.js";
export * from "./gen/agentmsg/v1/message_pb.js";
// The services' request and response messages, by module (their SessionInfo / RegisteredTool differ from the client's).
export * as sessionServicePb from "./gen/agentmsg/v1/session_service_pb.js";
export { SessionService } from "./gen/agentmsg/v1/session_service_pb.js";
export * from "./gen/agentmsg/v1/stream_pb.js";
export * from "./gen/agentmsg/v1/tool_pb.js";
export * as toolServicePb from "./gen/agentmsg/v1/tool_service_pb.js";
export { ToolService } from "./gen/agentmsg/v1/tool_service_pb.js";
export * from "./gen/agentmsg/v1/usage_pb.js";
export * from "./media.js";
export * from "./messages.js";
export * from "./runner.js";
export * from "./status.js";
export * from "./streaming.js";
export {
  CAPTURE_ENV,
  contentCapture,
  flushTracing,
  otelResponse,
  traceToolCall,
  tracingInterceptor,
} from "./tracing.js";
export * from "./transport.js";
export * from "./validation.js";
