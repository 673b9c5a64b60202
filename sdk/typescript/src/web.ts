// @agentmsg/sdk/web: the browser entry. Everything the Node entry (index.ts) gives, from the same modules, but the
// transport: its Client speaks Connect or gRPC-Web over fetch to the service's HTTP port (webClient.ts), and it
// imports no Node built-in (`make ts-bundle` bundles it for the browser and fails on any). Not here: the
// ToolRunner and PublishStream (client and bidi streams, which fetch cannot send) and the Node gRPC transport.

export type { JsonObject, JsonValue } from "@bufbuild/protobuf";
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
export * as sessionServicePb from "./gen/agentmsg/v1/session_service_pb.js";
export { SessionService } from "./gen/agentmsg/v1/session_service_pb.js";
export * from "./gen/agentmsg/v1/stream_pb.js";
export * from "./gen/agentmsg/v1/tool_pb.js";
export * as toolServicePb from "./gen/agentmsg/v1/tool_service_pb.js";
export { ToolService } from "./gen/agentmsg/v1/tool_service_pb.js";
export * from "./gen/agentmsg/v1/usage_pb.js";
export * from "./media.js";
export * from "./messages.js";
export * from "./status.js";
export * from "./streaming.js";
export { otelResponse, tracingInterceptor } from "./tracing.js";
export * from "./validation.js";
export * from "./webClient.js";
export * from "./webTransport.js";
