// Messages: constructors for every role of `agentmsg.v1.Message` (mirroring the Python names: UserMessage.text ->
// userText), readers (textContent, toolCalls, thinking), stop reasons and usage by name. Every constructor checks the
// contract's rules and throws a ValidationError naming the field; every message gets an id (a UUID4) and a timestamp.

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate, timestampFromMs, timestampNow } from "@bufbuild/protobuf/wkt";
import type {
  Content,
  HostedToolCallContent,
  HostedToolResultContent,
  ThinkingContent,
  ToolCallContent,
  ToolResultContent,
} from "./content.js";
import { text } from "./content.js";
import { ValidationError } from "./errors.js";
import type { ProviderContent } from "./gen/agentmsg/v1/content_pb.js";
import {
  type AssistantMessage,
  type Message,
  MessageSchema,
  type Provenance,
  ProvenanceSchema,
  type ProviderState,
  ProviderStateSchema,
  StopReason,
} from "./gen/agentmsg/v1/message_pb.js";
import { type Usage, UsageSchema } from "./gen/agentmsg/v1/usage_pb.js";
import { validate } from "./validation.js";

/** The names of the roles (`Message.role.case`). */
export type RoleName = NonNullable<Message["role"]["case"]>;

/** Stop reasons by name, as the Python library's `StopReason` values. */
export type StopReasonName = "stop" | "length" | "tool_calls" | "content_filter" | "abort" | "error";
const STOP_REASONS: Record<StopReasonName, StopReason> = {
  stop: StopReason.STOP,
  length: StopReason.LENGTH,
  tool_calls: StopReason.TOOL_CALLS,
  content_filter: StopReason.CONTENT_FILTER,
  abort: StopReason.ABORT,
  error: StopReason.ERROR,
};

/** The `StopReason` for a name (or the enum value itself); throws for an unknown name. */
export function stopReason(name: StopReasonName | StopReason | undefined): StopReason {
  if (name === undefined) return StopReason.UNSPECIFIED;
  if (typeof name === "number") return name;
  const found = STOP_REASONS[name];
  if (found === undefined) throw ValidationError.single("stop_reason", "enum", `unknown stop reason '${String(name)}'`);
  return found;
}

/** The name of a `StopReason` (undefined when unspecified or unknown to this version). */
export function stopReasonName(reason: StopReason): StopReasonName | undefined {
  for (const [name, value] of Object.entries(STOP_REASONS)) if (value === reason) return name as StopReasonName;
  return undefined;
}

/** When a message was made: a Timestamp, a Date, or epoch milliseconds. */
export type TimeInput = Timestamp | Date | number;

function timestamp(value: TimeInput | undefined): Timestamp {
  if (value === undefined) return timestampNow();
  if (value instanceof Date) return timestampFromDate(value);
  if (typeof value === "number") return timestampFromMs(value);
  return value;
}

/** What every message may set: its id (default a new UUID4), timestamp (default now), name and parent id. */
export interface MessageOptions {
  id?: string;
  timestamp?: TimeInput;
  name?: string;
  parentId?: string;
}

function message(role: MessageInitShape<typeof MessageSchema>["role"], options: MessageOptions): Message {
  const built = create(MessageSchema, {
    id: options.id ?? crypto.randomUUID(),
    timestamp: timestamp(options.timestamp),
    role,
    name: options.name ?? "",
    parentId: options.parentId ?? "",
  });
  validate(MessageSchema, built);
  return built;
}

/** A system message (text blocks only). */
export function systemMessage(content: Content[], options: MessageOptions = {}): Message {
  return message({ case: "system", value: { content } }, options);
}

/** A system message with one text block (Python `SystemMessage.text`). */
export function systemText(value: string, options: MessageOptions = {}): Message {
  return systemMessage([text(value)], options);
}

/** A user message: text, image, audio, document, tool result or provider blocks. */
export function userMessage(content: Content[], options: MessageOptions = {}): Message {
  return message({ case: "user", value: { content } }, options);
}

/** A user message with one text block (Python `UserMessage.text`). */
export function userText(value: string, options: MessageOptions = {}): Message {
  return userMessage([text(value)], options);
}

/** Token counts by name; numbers or bigints. A count left out is unknown (not zero). */
export interface UsageInit {
  inputTokens?: number | bigint;
  outputTokens?: number | bigint;
  cacheReadTokens?: number | bigint;
  cacheWriteTokens?: number | bigint;
  reasoningTokens?: number | bigint;
  totalTokens?: number | bigint;
  /** The parts of the cache writes to 5-minute and 1-hour entries (Anthropic). */
  cacheWrite5mTokens?: number | bigint;
  cacheWrite1hTokens?: number | bigint;
  /** Requests to each hosted tool, by HostedToolKind name (`web_search`...). */
  hostedToolRequests?: Record<string, number | bigint>;
  cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; total?: number };
}

const TOKEN_KEYS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "totalTokens",
  "cacheWrite5mTokens",
  "cacheWrite1hTokens",
] as const;

/** A `Usage` (tokens and cost); validated (counts and amounts are never negative). */
export function usage(init: UsageInit | Usage): Usage {
  if ("$typeName" in init) return init;
  const built = create(UsageSchema);
  for (const key of TOKEN_KEYS) {
    const value = init[key];
    if (value !== undefined) built[key] = BigInt(value);
  }
  if (init.cost !== undefined) built.cost = { $typeName: "agentmsg.v1.UsageCost", ...init.cost };
  for (const [tool, count] of Object.entries(init.hostedToolRequests ?? {})) {
    built.hostedToolRequests[tool] = BigInt(count);
  }
  validate(UsageSchema, built);
  return built;
}

export interface AssistantOptions extends MessageOptions {
  usage?: UsageInit | Usage;
  stopReason?: StopReasonName | StopReason;
  stopReasonRaw?: string;
  /** The stop sequence that ended the answer. */
  stopSequence?: string;
  error?: string;
  provenance?: Partial<Omit<Provenance, "$typeName">>;
  /** The provider response's keys no field holds (Anthropic `container`, `stop_details`), verbatim. */
  providerExtra?: ProviderContent;
}

/** A model's answer: text, thinking, redacted thinking, tool call and provider blocks. */
export function assistantMessage(content: Content[], options: AssistantOptions = {}): Message {
  return message(
    {
      case: "assistant",
      value: {
        content,
        usage: options.usage === undefined ? undefined : usage(options.usage),
        stopReason: stopReason(options.stopReason),
        stopReasonRaw: options.stopReasonRaw ?? "",
        stopSequence: options.stopSequence ?? "",
        error: options.error ?? "",
        provenance: options.provenance === undefined ? undefined : create(ProvenanceSchema, options.provenance),
        providerExtra: options.providerExtra,
      },
    },
    options,
  );
}

/** An assistant message with one text block (Python `AssistantMessage.text`). */
export function assistantText(value: string, options: AssistantOptions = {}): Message {
  return assistantMessage([text(value)], options);
}

/** A tool message carrying one or more results (Python `ToolMessage.from_result(s)`). */
export function toolMessage(results: Content | Content[], options: MessageOptions = {}): Message {
  return message({ case: "tool", value: { content: Array.isArray(results) ? results : [results] } }, options);
}

/** An application-defined session message (never sent to a model as such unless `toModel`). */
export function customMessage(
  customType: string,
  content: Content[] = [],
  options: MessageOptions & { toModel?: boolean } = {},
): Message {
  return message({ case: "custom", value: { customType, content, toModel: options.toModel ?? false } }, options);
}

/** The summary of a branch that was left. */
export function branchSummary(summary: string, fromId = "", options: MessageOptions = {}): Message {
  return message({ case: "branchSummary", value: { summary, fromId } }, options);
}

/** The summary of compacted history. */
export function compactionSummary(
  summary: string,
  options: MessageOptions & {
    tokensBefore?: number | bigint;
    firstKeptId?: string;
    providerState?: Omit<ProviderState, "$typeName">;
  } = {},
): Message {
  return message(
    {
      case: "compactionSummary",
      value: {
        summary,
        tokensBefore: options.tokensBefore === undefined ? undefined : BigInt(options.tokensBefore),
        firstKeptId: options.firstKeptId ?? "",
        providerState:
          options.providerState === undefined ? undefined : create(ProviderStateSchema, options.providerState),
      },
    },
    options,
  );
}

/** The role a message has (undefined for a role from a newer peer). */
export function roleOf(msg: Message): RoleName | undefined {
  return msg.role.case;
}

/** The content blocks of a message (empty for the summary roles). */
export function contentsOf(msg: Message): Content[] {
  switch (msg.role.case) {
    case "system":
    case "user":
    case "assistant":
    case "tool":
    case "custom":
      return msg.role.value.content;
    default:
      return [];
  }
}

/** The text blocks joined, as in the seed (summary messages: the summary). */
export function textContent(msg: Message): string {
  if (msg.role.case === "branchSummary" || msg.role.case === "compactionSummary") return msg.role.value.summary;
  return contentsOf(msg)
    .map((block) => (block.kind.case === "text" ? block.kind.value.text : ""))
    .join("");
}

/** The tool calls of a message, in order. */
export function toolCalls(msg: Message): ToolCallContent[] {
  return contentsOf(msg).flatMap((block) => (block.kind.case === "toolCall" ? [block.kind.value] : []));
}

/** The thinking blocks of a message, in order. */
export function thinking(msg: Message): ThinkingContent[] {
  return contentsOf(msg).flatMap((block) => (block.kind.case === "thinking" ? [block.kind.value] : []));
}

/** The hosted tool calls (tools the provider ran) of a message, in order. */
export function hostedToolCalls(msg: Message): HostedToolCallContent[] {
  return contentsOf(msg).flatMap((block) => (block.kind.case === "hostedToolCall" ? [block.kind.value] : []));
}

/** The hosted tool results of a message, in order. */
export function hostedToolResults(msg: Message): HostedToolResultContent[] {
  return contentsOf(msg).flatMap((block) => (block.kind.case === "hostedToolResult" ? [block.kind.value] : []));
}

/** The tool results of a message, in order. */
export function toolResults(msg: Message): ToolResultContent[] {
  return contentsOf(msg).flatMap((block) => (block.kind.case === "toolResult" ? [block.kind.value] : []));
}

/** The assistant body of a message, or undefined for another role. */
export function asAssistant(msg: Message): AssistantMessage | undefined {
  return msg.role.case === "assistant" ? msg.role.value : undefined;
}

export type { AssistantMessage, Message, Provenance, ProviderState, Usage };
export { StopReason };
