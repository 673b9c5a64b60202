// Content blocks: constructors for every arm of `agentmsg.v1.Content`, narrowing helpers for the union, and the
// tool-call argument parser. A block is the generated `Content` message itself (protobuf-es v2 plain objects), so
// `switch (block.kind.case)` narrows too; these helpers add the contract's defaults and checks.

import { create, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ToolArgumentsError, ValidationError } from "./errors.js";
import {
  type AudioContent,
  type Citation,
  CitationSchema,
  type CodeExecutionOutput,
  CodeExecutionOutputSchema,
  type Content,
  ContentSchema,
  type DocumentContent,
  type HostedToolCallContent,
  HostedToolKind,
  type HostedToolResultContent,
  HostedToolStatus,
  type ImageContent,
  ImageDetail,
  type ProviderContent,
  type RedactedThinkingContent,
  type SearchResult,
  SearchResultSchema,
  type TextContent,
  type ThinkingContent,
  type TokenLogprob,
  TokenLogprobSchema,
  type ToolApprovalContent,
  ToolApprovalDecision,
  type ToolCallContent,
  ToolKind,
  type ToolResultContent,
  type WebFetchOutput,
  WebFetchOutputSchema,
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
export const isApproval = (block: Content): block is ContentOf<"approval"> => isKind(block, "approval");
export const isHostedToolCall = (block: Content): block is ContentOf<"hostedToolCall"> =>
  isKind(block, "hostedToolCall");
export const isHostedToolResult = (block: Content): block is ContentOf<"hostedToolResult"> =>
  isKind(block, "hostedToolResult");

/** The arm's message when `block` holds arm `kind`, else undefined. */
export function asKind<K extends ContentKind>(block: Content, kind: K): ArmValue<K> | undefined {
  if (block.kind.case !== kind) return undefined;
  return (block.kind as { value: unknown }).value as ArmValue<K>;
}

function checked(block: Content): Content {
  validate(ContentSchema, block);
  return block;
}

/**
 * A text block (`TextContent`); `signature` is a provider's opaque signature on it (Gemini); `citations` the sources
 * it cites (see {@link citation}); `logprobs` its tokens' log probabilities.
 */
export function text(
  value: string,
  options: { signature?: string; citations?: Citation[]; logprobs?: TokenLogprob[] } = {},
): Content {
  const block = create(ContentSchema, {
    kind: {
      case: "text",
      value: {
        text: value,
        signature: options.signature ?? "",
        citations: options.citations ?? [],
        logprobs: options.logprobs ?? [],
      },
    },
  });
  return options.citations === undefined && options.logprobs === undefined ? block : checked(block);
}

/** A citation on text (`Citation`): a web page, a document, a search result or a file, and the span it covers. */
export function citation(init: MessageInitShape<typeof CitationSchema>): Citation {
  const built = create(CitationSchema, init);
  validate(CitationSchema, built);
  return built;
}

/** One token's log probability (`TokenLogprob`), with the most likely alternatives. */
export function tokenLogprob(init: MessageInitShape<typeof TokenLogprobSchema>): TokenLogprob {
  return create(TokenLogprobSchema, init);
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
export function document(
  from: MediaSource,
  options: { filename?: string; title?: string; context?: string } = {},
): Content {
  return checked(
    create(ContentSchema, {
      kind: {
        case: "document",
        value: {
          source: source(from),
          mediaType: from.mediaType ?? "",
          filename: options.filename ?? "",
          title: options.title ?? "",
          context: options.context ?? "",
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
  /** The provider's block when it carries more than the typed fields hold (kept for an exact round trip). */
  providerExtra?: ProviderContent;
  /** The call waits for a person's decision (an `approval` block) before it runs. */
  requiresApproval?: boolean;
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
          providerExtra: options.providerExtra,
          requiresApproval: options.requiresApproval ?? false,
        },
      },
    }),
  );
}

/** Hosted tool kinds by name, as the Python library's `HostedToolKind` values (also `Usage.hostedToolRequests` keys). */
export type HostedToolKindName =
  | "web_search"
  | "web_fetch"
  | "code_execution"
  | "file_search"
  | "image_generation"
  | "mcp"
  | "computer_use"
  | "tool_search"
  | "other";
const HOSTED_KINDS: Record<HostedToolKindName, HostedToolKind> = {
  web_search: HostedToolKind.WEB_SEARCH,
  web_fetch: HostedToolKind.WEB_FETCH,
  code_execution: HostedToolKind.CODE_EXECUTION,
  file_search: HostedToolKind.FILE_SEARCH,
  image_generation: HostedToolKind.IMAGE_GENERATION,
  mcp: HostedToolKind.MCP,
  computer_use: HostedToolKind.COMPUTER_USE,
  tool_search: HostedToolKind.TOOL_SEARCH,
  other: HostedToolKind.OTHER,
};

/** Hosted tool statuses by name, as the Python library's `HostedToolStatus` values. */
export type HostedToolStatusName = "in_progress" | "completed" | "incomplete" | "failed" | "awaiting_approval";
const HOSTED_STATUSES: Record<HostedToolStatusName, HostedToolStatus> = {
  in_progress: HostedToolStatus.IN_PROGRESS,
  completed: HostedToolStatus.COMPLETED,
  incomplete: HostedToolStatus.INCOMPLETE,
  failed: HostedToolStatus.FAILED,
  awaiting_approval: HostedToolStatus.AWAITING_APPROVAL,
};

function byName<N extends string, V>(table: Record<N, V>, name: N | undefined, none: V, field: string): V {
  if (name === undefined) return none;
  const found = table[name];
  if (found === undefined) throw ValidationError.single(field, "enum", `unknown ${field} '${String(name)}'`);
  return found;
}

function nameOf<N extends string, V>(table: Record<N, V>, value: V): N | undefined {
  for (const [name, v] of Object.entries(table)) if (v === value) return name as N;
  return undefined;
}

/** The name of a `HostedToolKind`: undefined when not stated, `"other"` for a kind this version does not know. */
export function hostedToolKindName(kind: HostedToolKind): HostedToolKindName | undefined {
  if (kind === HostedToolKind.UNSPECIFIED) return undefined;
  return nameOf(HOSTED_KINDS, kind) ?? "other";
}

/** The name of a `HostedToolStatus` (undefined when not stated, or unknown to this version). */
export function hostedToolStatusName(status: HostedToolStatus): HostedToolStatusName | undefined {
  return nameOf(HOSTED_STATUSES, status);
}

/** The `HostedToolKind` / `HostedToolStatus` for a name; throws a ValidationError naming the field when unknown. */
export function hostedToolKind(name: HostedToolKindName | undefined, field = "kind"): HostedToolKind {
  return byName(HOSTED_KINDS, name, HostedToolKind.UNSPECIFIED, field);
}
export function hostedToolStatus(name: HostedToolStatusName | undefined, field = "status"): HostedToolStatus {
  return byName(HOSTED_STATUSES, name, HostedToolStatus.UNSPECIFIED, field);
}

export interface HostedToolCallOptions {
  kind?: HostedToolKindName;
  /** The input as the provider gave it, kept verbatim (give this or `args`). */
  input?: string;
  args?: JsonObject;
  server?: string;
  status?: HostedToolStatusName;
  statusRaw?: string;
  signature?: string;
  /** The provider's block, verbatim. */
  original?: ProviderContent;
}

/** A tool the provider ran itself (`HostedToolCallContent`): web search, code execution, a remote MCP call... */
export function hostedToolCall(id: string, name: string, options: HostedToolCallOptions = {}): Content {
  if (options.args !== undefined && options.input !== undefined) {
    throw ValidationError.single("input", "exclusive", "give args or input, not both");
  }
  return checked(
    create(ContentSchema, {
      kind: {
        case: "hostedToolCall",
        value: {
          id,
          name,
          kind: hostedToolKind(options.kind),
          input: options.input ?? (options.args === undefined ? "" : JSON.stringify(options.args)),
          server: options.server ?? "",
          status: hostedToolStatus(options.status),
          statusRaw: options.statusRaw ?? "",
          signature: options.signature ?? "",
          original: options.original,
        },
      },
    }),
  );
}

export interface HostedToolResultOptions {
  name?: string;
  kind?: HostedToolKindName;
  isError?: boolean;
  error?: { code?: string; message?: string };
  /** One typed body at most: search results, code execution output, or a fetched page. */
  searchResults?: { results: MessageInitShape<typeof SearchResultSchema>[]; queries?: string[] };
  codeExecution?: MessageInitShape<typeof CodeExecutionOutputSchema>;
  webFetch?: MessageInitShape<typeof WebFetchOutputSchema>;
  status?: HostedToolStatusName;
  statusRaw?: string;
  original?: ProviderContent;
}

/** What a hosted tool gave back (`HostedToolResultContent`): a typed body, content blocks, or an error. */
export function hostedToolResult(
  callId: string,
  content: string | Content[] = [],
  options: HostedToolResultOptions = {},
): Content {
  const bodies = [options.searchResults, options.codeExecution, options.webFetch].filter((b) => b !== undefined);
  if (bodies.length > 1) {
    throw ValidationError.single("body", "oneof", "give one of searchResults, codeExecution and webFetch");
  }
  const body: HostedToolResultContent["body"] | undefined =
    options.searchResults !== undefined
      ? {
          case: "searchResults",
          value: {
            $typeName: "agentmsg.v1.SearchResults",
            results: options.searchResults.results.map((r) => create(SearchResultSchema, r)),
            queries: options.searchResults.queries ?? [],
          },
        }
      : options.codeExecution !== undefined
        ? { case: "codeExecution", value: create(CodeExecutionOutputSchema, options.codeExecution) }
        : options.webFetch !== undefined
          ? { case: "webFetch", value: create(WebFetchOutputSchema, options.webFetch) }
          : undefined;
  return checked(
    create(ContentSchema, {
      kind: {
        case: "hostedToolResult",
        value: {
          callId,
          name: options.name ?? "",
          kind: hostedToolKind(options.kind),
          isError: options.isError ?? options.error !== undefined,
          error:
            options.error === undefined
              ? undefined
              : { code: options.error.code ?? "", message: options.error.message ?? "" },
          body: body ?? { case: undefined },
          content: typeof content === "string" ? (content === "" ? [] : [text(content)]) : content,
          status: hostedToolStatus(options.status),
          statusRaw: options.statusRaw ?? "",
          original: options.original,
        },
      },
    }),
  );
}

/** The text blocks of a hosted tool result, joined. */
export function hostedToolResultText(result: HostedToolResultContent): string {
  return result.content.map((block) => (block.kind.case === "text" ? block.kind.value.text : "")).join("");
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

export interface ApprovalOptions {
  /** Why, in the person's words. */
  reason?: string;
  /** Who decided: a user or principal name. */
  decidedBy?: string;
  /** When the decision was made (default: now). */
  decidedAt?: Date;
}

/**
 * A person's decision on a tool call that waits for approval (`ToolApprovalContent`, the `approval` arm), for a
 * user message: `approve(callId)` or `deny(callId, { reason })`. Appended to the call's session, it lets the service
 * run the call or answer it with a denial.
 */
export function toolApproval(callId: string, approved: boolean, options: ApprovalOptions = {}): Content {
  return checked(
    create(ContentSchema, {
      kind: {
        case: "approval",
        value: {
          callId,
          decision: approved ? ToolApprovalDecision.APPROVED : ToolApprovalDecision.DENIED,
          reason: options.reason ?? "",
          decidedBy: options.decidedBy ?? "",
          decidedAt: timestampFromDate(options.decidedAt ?? new Date()),
        },
      },
    }),
  );
}

/** An approval of the call `callId` (see `toolApproval`). */
export function approve(callId: string, options: ApprovalOptions = {}): Content {
  return toolApproval(callId, true, options);
}

/** A denial of the call `callId` (see `toolApproval`); the model reads the reason in the call's error result. */
export function deny(callId: string, options: ApprovalOptions = {}): Content {
  return toolApproval(callId, false, options);
}

/** Whether a decision approves its call. */
export function isApproved(approval: ToolApprovalContent): boolean {
  return approval.decision === ToolApprovalDecision.APPROVED;
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
  Citation,
  CodeExecutionOutput,
  Content,
  DocumentContent,
  HostedToolCallContent,
  HostedToolResultContent,
  ImageContent,
  ProviderContent,
  RedactedThinkingContent,
  SearchResult,
  TextContent,
  ThinkingContent,
  TokenLogprob,
  ToolCallContent,
  ToolResultContent,
  WebFetchOutput,
};
export { CitationSchema, ContentSchema, HostedToolKind, HostedToolStatus, ImageDetail, TokenLogprobSchema, ToolKind };
