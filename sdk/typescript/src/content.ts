// Content blocks: constructors for every arm of `agentmsg.v1.Content`, narrowing helpers for the union, and the
// tool-call argument parser. A block is the generated `Content` message itself (protobuf-es v2 plain objects), so
// `switch (block.kind.case)` narrows too; these helpers add the contract's defaults and checks.

import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ToolArgumentsError, ValidationError } from "./errors.js";
import {
  type AudioContent,
  type Content,
  ContentSchema,
  type DocumentContent,
  type ImageContent,
  ImageDetail,
  type ProviderContent,
  type RedactedThinkingContent,
  type TextContent,
  type ThinkingContent,
  type ToolCallContent,
  ToolKind,
  type ToolResultContent,
} from "./gen/agentmsg/v1/content_pb.js";
import { validate } from "./validation.js";

/** The names of the content arms (`Content.kind.case`). */
export type ContentKind = NonNullable<Content["kind"]["case"]>;

/** A content block known to hold arm `K`: `block.kind.value` is then that arm's message. */
export type ContentOf<K extends ContentKind> = Content & { kind: Extract<Content["kind"], { case: K }> };

/** The message of arm `K` (`ArmValue<"text">` is `TextContent`). */
export type ArmValue<K extends ContentKind> =
  Extract<Content["kind"], { case: K }> extends { value: infer V } ? V : never;

/** The arm a block holds, or undefined for a block from a newer peer whose arm this version does not know. */
export function contentKind(block: Content): ContentKind | undefined {
  return block.kind.case;
}

/** True when `block` holds arm `kind` (narrows `block.kind.value`). */
export function isKind<K extends ContentKind>(block: Content, kind: K): block is ContentOf<K> {
  return block.kind.case === kind;
}

export const isText = (block: Content): block is ContentOf<"text"> => isKind(block, "text");
export const isImage = (block: Content): block is ContentOf<"image"> => isKind(block, "image");
export const isAudio = (block: Content): block is ContentOf<"audio"> => isKind(block, "audio");
export const isDocument = (block: Content): block is ContentOf<"document"> => isKind(block, "document");
export const isThinking = (block: Content): block is ContentOf<"thinking"> => isKind(block, "thinking");
export const isRedactedThinking = (block: Content): block is ContentOf<"redactedThinking"> =>
  isKind(block, "redactedThinking");
export const isToolCall = (block: Content): block is ContentOf<"toolCall"> => isKind(block, "toolCall");
export const isToolResult = (block: Content): block is ContentOf<"toolResult"> => isKind(block, "toolResult");
export const isProvider = (block: Content): block is ContentOf<"provider"> => isKind(block, "provider");

/** The arm's message when `block` holds arm `kind`, else undefined. */
export function asKind<K extends ContentKind>(block: Content, kind: K): ArmValue<K> | undefined {
  if (block.kind.case !== kind) return undefined;
  return (block.kind as { value: unknown }).value as ArmValue<K>;
}

function checked(block: Content): Content {
  validate(ContentSchema, block);
  return block;
}

/** A text block (`TextContent`); `signature` is a provider's opaque signature on it (Gemini). */
export function text(value: string, options: { signature?: string } = {}): Content {
  return create(ContentSchema, { kind: { case: "text", value: { text: value, signature: options.signature ?? "" } } });
}

/** Image detail by name: `"low"`, `"medium"`, `"high"`, `"auto"`. */
export type ImageDetailName = "low" | "medium" | "high" | "auto";
const IMAGE_DETAIL: Record<ImageDetailName, ImageDetail> = {
  low: ImageDetail.LOW,
  medium: ImageDetail.MEDIUM,
  high: ImageDetail.HIGH,
  auto: ImageDetail.AUTO,
};

function imageDetail(detail: ImageDetailName | undefined): ImageDetail {
  if (detail === undefined) return ImageDetail.UNSPECIFIED;
  const found = IMAGE_DETAIL[detail];
  if (found === undefined) {
    throw ValidationError.single(
      "detail",
      "enum",
      `unknown image detail '${String(detail)}'; one of low, medium, high, auto`,
    );
  }
  return found;
}

/** The source of a media block: inline bytes (with their MIME type), a URL, or a provider's file id. */
export type MediaSource =
  | { data: Uint8Array; mediaType: string }
  | { url: string; mediaType?: string }
  | { fileId: string; mediaType?: string };

function source(
  from: MediaSource,
): { case: "data"; value: Uint8Array } | { case: "url"; value: string } | { case: "fileId"; value: string } {
  if ("data" in from) return { case: "data", value: from.data };
  if ("url" in from) return { case: "url", value: from.url };
  return { case: "fileId", value: from.fileId };
}

/** An image block (`ImageContent`). */
export function image(from: MediaSource, options: { detail?: ImageDetailName } = {}): Content {
  return checked(
    create(ContentSchema, {
      kind: {
        case: "image",
        value: { source: source(from), mediaType: from.mediaType ?? "", detail: imageDetail(options.detail) },
      },
    }),
  );
}

/** An audio block (`AudioContent`). */
export function audio(from: MediaSource): Content {
  return checked(
    create(ContentSchema, {
      kind: { case: "audio", value: { source: source(from), mediaType: from.mediaType ?? "" } },
    }),
  );
}

/** A document block (`DocumentContent`): a PDF, a text file... */
export function document(from: MediaSource, options: { filename?: string; title?: string } = {}): Content {
  return checked(
    create(ContentSchema, {
      kind: {
        case: "document",
        value: {
          source: source(from),
          mediaType: from.mediaType ?? "",
          filename: options.filename ?? "",
          title: options.title ?? "",
        },
      },
    }),
  );
}

/** A reasoning block (`ThinkingContent`) with its provider signature (`thinking(message)` reads them back). */
export function thinkingBlock(value: string, signature = ""): Content {
  return create(ContentSchema, { kind: { case: "thinking", value: { text: value, signature } } });
}

/** Reasoning a provider returned encrypted (`RedactedThinkingContent`). */
export function redactedThinking(data: string): Content {
  return checked(create(ContentSchema, { kind: { case: "redactedThinking", value: { data } } }));
}

/** Tool kinds by name (`"read"`, `"execute"`...), as the Python library names them. */
export type ToolKindName =
  | "read"
  | "edit"
  | "write"
  | "execute"
  | "web"
  | "cron"
  | "agent"
  | "workflow"
  | "plan"
  | "automation"
  | "mcp";
const TOOL_KINDS: Record<ToolKindName, ToolKind> = {
  read: ToolKind.READ,
  edit: ToolKind.EDIT,
  write: ToolKind.WRITE,
  execute: ToolKind.EXECUTE,
  web: ToolKind.WEB,
  cron: ToolKind.CRON,
  agent: ToolKind.AGENT,
  workflow: ToolKind.WORKFLOW,
  plan: ToolKind.PLAN,
  automation: ToolKind.AUTOMATION,
  mcp: ToolKind.MCP,
};

/** The `ToolKind` for a name; throws a ValidationError naming the field for an unknown one. */
export function toolKind(name: ToolKindName | undefined, field = "kind"): ToolKind {
  if (name === undefined) return ToolKind.UNSPECIFIED;
  const found = TOOL_KINDS[name];
  if (found === undefined) throw ValidationError.single(field, "enum", `unknown tool kind '${String(name)}'`);
  return found;
}

/** The name of a `ToolKind` (undefined when not stated, or unknown to this version). */
export function toolKindName(kind: ToolKind): ToolKindName | undefined {
  for (const [name, value] of Object.entries(TOOL_KINDS)) if (value === kind) return name as ToolKindName;
  return undefined;
}

export interface ToolCallOptions {
  /** The argument text, kept verbatim (give this or `args`). */
  arguments?: string;
  kind?: ToolKindName;
  index?: number;
  signature?: string;
  serverName?: string;
  metadata?: JsonObject;
}

/**
 * A request to run a tool (`ToolCallContent`). `args` is written as compact JSON; give `options.arguments` instead
 * to keep a model's text byte for byte.
 */
export function toolCall(id: string, name: string, args?: JsonObject, options: ToolCallOptions = {}): Content {
  if (args !== undefined && options.arguments !== undefined) {
    throw ValidationError.single("arguments", "exclusive", "give args or arguments, not both");
  }
  const argumentText = options.arguments ?? (args === undefined ? "{}" : JSON.stringify(args));
  return checked(
    create(ContentSchema, {
      kind: {
        case: "toolCall",
        value: {
          id,
          name,
          arguments: argumentText,
          kind: toolKind(options.kind),
          index: options.index ?? 0,
          signature: options.signature ?? "",
          serverName: options.serverName ?? "",
          metadata: options.metadata,
        },
      },
    }),
  );
}

export interface ToolResultOptions {
  isError?: boolean;
  name?: string;
  metadata?: JsonObject;
  terminate?: boolean;
  terminateMessage?: string;
  index?: number;
}

/** The outcome of a tool run (`ToolResultContent`): text, or text / image / audio / document blocks. */
export function toolResult(id: string, content: string | Content[], options: ToolResultOptions = {}): Content {
  const blocks = typeof content === "string" ? (content === "" ? [] : [text(content)]) : content;
  return checked(
    create(ContentSchema, {
      kind: {
        case: "toolResult",
        value: {
          id,
          name: options.name ?? "",
          content: blocks,
          isError: options.isError ?? false,
          metadata: options.metadata,
          terminate: options.terminate ?? false,
          terminateMessage: options.terminateMessage ?? "",
          index: options.index ?? 0,
        },
      },
    }),
  );
}

/** A provider's own block kept verbatim (`ProviderContent`): its JSON text, for an exact round trip. */
export function providerContent(provider: string, type: string, json: string): Content {
  return checked(create(ContentSchema, { kind: { case: "provider", value: { provider, type, json } } }));
}

/** Parse JSON object text: `[value, undefined]` or `[undefined, the reason it is not one]` (blank text is `{}`). */
export function parseJsonObject(value: string): [JsonObject, undefined] | [undefined, string] {
  if (value.trim() === "") return [{}, undefined];
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(value) as JsonValue;
  } catch (error) {
    return [undefined, `invalid JSON: ${(error as Error).message}`];
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const type = parsed === null ? "null" : Array.isArray(parsed) ? "array" : typeof parsed;
    return [undefined, `a JSON ${type} is not an object`];
  }
  return [parsed, undefined];
}

/** A tool call's parsed arguments; throws {@link ToolArgumentsError} when the text is not a JSON object. */
export function toolCallArgs(call: ToolCallContent): JsonObject {
  const [value, error] = parseJsonObject(call.arguments);
  if (error !== undefined) throw new ToolArgumentsError(call.id, call.name, error, call.arguments);
  return value as JsonObject;
}

/** Why a tool call's argument text is not a JSON object, or undefined when it is one. */
export function toolCallArgumentsError(call: ToolCallContent): string | undefined {
  return parseJsonObject(call.arguments)[1];
}

/** The text blocks of a tool result, joined (the seed's `content` string). */
export function toolResultText(result: ToolResultContent): string {
  return result.content.map((block) => (block.kind.case === "text" ? block.kind.value.text : "")).join("");
}

export type {
  AudioContent,
  Content,
  DocumentContent,
  ImageContent,
  ProviderContent,
  RedactedThinkingContent,
  TextContent,
  ThinkingContent,
  ToolCallContent,
  ToolResultContent,
};
export { ContentSchema, ImageDetail, ToolKind };
