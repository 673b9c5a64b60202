// Content blocks: constructors for every arm of `agentmsg.v1.Content`, narrowing helpers for the union, and the
// tool-call argument parser. A block is the generated `Content` message itself (protobuf-es v2 plain objects), so
// `switch (block.kind.case)` narrows too; these helpers add the contract's defaults and checks.

import { create, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MediaError, ToolArgumentsError, ValidationError } from "./errors.js";
import {
  type AudioContent,
  AudioSourceSchema,
  type Citation,
  CitationSchema,
  CodeExecutionFileSchema,
  type CodeExecutionOutput,
  CodeExecutionOutputSchema,
  type Content,
  ContentSchema,
  DocumentCitationSourceSchema,
  type DocumentContent,
  FileCitationSourceSchema,
  type HostedToolCallContent,
  HostedToolKind,
  type HostedToolResultContent,
  HostedToolStatus,
  type ImageContent,
  ImageDetail,
  ImageSourceSchema,
  IndexRangeSchema,
  type ProviderContent,
  type RedactedThinkingContent,
  type SearchResult,
  SearchResultCitationSourceSchema,
  SearchResultSchema,
  SearchResultsSchema,
  type TextContent,
  type ThinkingContent,
  type TokenLogprob,
  TokenLogprobSchema,
  type ToolApprovalContent,
  ToolApprovalDecision,
  type ToolCallContent,
  ToolKind,
  type ToolResultContent,
  WebCitationSourceSchema,
  type WebFetchOutput,
  WebFetchOutputSchema,
} from "./gen/agentmsg/v1/content_pb.js";
import {
  decodeBase64,
  guessFromPath,
  inspectImage,
  isDataUrl,
  parseDataUrl,
  sniffAudio,
  sniffDocument,
  URL_PATTERN,
} from "./media.js";
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

/** What every citation may say besides its source: the quoted text, the span of the block it supports, and more. */
export interface CitationOptions {
  /** The quoted source text. */
  citedText?: string;
  /** Where the supported span of the block's text starts (code points); unset: the whole block. */
  startIndex?: number;
  /** Where it ends (exclusive). */
  endIndex?: number;
  /** The provider's confidence, 0 to 1. */
  confidence?: number;
  /** The provider's citation object, verbatim (a `providerContent(...)` block or its `ProviderContent`). */
  original?: Content | ProviderContent;
}

/** A `[start, end)` range: characters and blocks count from 0, pages from 1. */
export type IndexRangeTuple = readonly [number, number];

// An optional integer field checked as the Python library checks it (same field name and rule id).
function optionalInt(value: number | undefined, field: string, bits: 32 | 64 = 32, minimum: number | null = 0) {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw ValidationError.single(
      field,
      "type",
      `expected int, got ${typeof value === "number" ? value : typeof value}`,
    );
  }
  if (minimum !== null && value < minimum) {
    throw ValidationError.single(field, `int${bits}.gte`, `must be at least ${minimum}, got ${value}`);
  }
  if (bits === 32 && (value < -(2 ** 31) || value > 2 ** 31 - 1)) {
    throw ValidationError.single(field, "int32.range", `${value} does not fit in an int32`);
  }
  return value;
}

function originalOf(original: Content | ProviderContent | undefined, field = "original"): ProviderContent | undefined {
  if (original === undefined) return undefined;
  if (isContent(original)) {
    if (original.kind.case !== "provider") {
      throw ValidationError.single(
        field,
        "type",
        `expected a provider block, got ${original.kind.case ?? "an empty block"}`,
      );
    }
    return original.kind.value;
  }
  return original;
}

function rangeOf(value: IndexRangeTuple, field: string): { start: bigint; end: bigint } {
  if (!Array.isArray(value) || value.length !== 2) {
    throw ValidationError.single(field, "type", "expected a [start, end] pair");
  }
  const start = optionalInt(value[0], `${field}.start`, 64) ?? 0;
  const end = optionalInt(value[1], `${field}.end`, 64) ?? 0;
  return { start: BigInt(start), end: BigInt(end) };
}

function citationWith(source: Citation["source"], options: CitationOptions): Citation {
  return citation({
    citedText: options.citedText ?? "",
    startIndex: optionalInt(options.startIndex, "start_index"),
    endIndex: optionalInt(options.endIndex, "end_index"),
    confidence: options.confidence,
    original: originalOf(options.original),
    source,
  });
}

/** A web page cited (Anthropic `web_search_result_location`, OpenAI `url_citation`, a Gemini web chunk). */
export function webCitation(
  url: string,
  title = "",
  options: CitationOptions & { resultIndex?: number } = {},
): Citation {
  const resultIndex = optionalInt(options.resultIndex, "result_index");
  return citationWith({ case: "web", value: create(WebCitationSourceSchema, { url, title, resultIndex }) }, options);
}

/**
 * A document of the request cited, at `chars`, `pages` or `blocks` `[start, end)` (one of them at most; Anthropic
 * `char_location`, `page_location`, `content_block_location`).
 */
export function documentCitation(
  documentIndex: number,
  options: CitationOptions & {
    title?: string;
    fileId?: string;
    chars?: IndexRangeTuple;
    pages?: IndexRangeTuple;
    blocks?: IndexRangeTuple;
  } = {},
): Citation {
  const index = optionalInt(documentIndex, "document_index") ?? 0;
  const given = (["chars", "pages", "blocks"] as const).filter((name) => options[name] !== undefined);
  if (given.length > 1) throw ValidationError.single("location", "exclusive", "give one of chars, pages or blocks");
  const [unit] = given;
  const location =
    unit === undefined
      ? { case: undefined }
      : { case: unit, value: create(IndexRangeSchema, rangeOf(options[unit] as IndexRangeTuple, unit)) };
  const source = create(DocumentCitationSourceSchema, {
    documentIndex: index,
    title: options.title ?? "",
    fileId: options.fileId ?? "",
    location,
  });
  return citationWith({ case: "document", value: source }, options);
}

/** A search result of the request cited (Anthropic `search_result_location`, Gemini `retrievedContext`). */
export function searchResultCitation(
  source: string,
  options: CitationOptions & { title?: string; searchResultIndex?: number; blocks?: IndexRangeTuple } = {},
): Citation {
  const value = create(SearchResultCitationSourceSchema, {
    source,
    title: options.title ?? "",
    searchResultIndex: optionalInt(options.searchResultIndex, "search_result_index"),
    blocks: options.blocks === undefined ? undefined : rangeOf(options.blocks, "blocks"),
  });
  return citationWith({ case: "searchResult", value }, options);
}

/** A provider file cited (OpenAI `file_citation`, `container_file_citation`, `file_path`). */
export function fileCitation(
  fileId: string,
  options: CitationOptions & { filename?: string; containerId?: string } = {},
): Citation {
  const value = create(FileCitationSourceSchema, {
    fileId,
    filename: options.filename ?? "",
    containerId: options.containerId ?? "",
  });
  return citationWith({ case: "file", value }, options);
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

/**
 * Where one image, clip or document is: inline bytes, a URL, or a provider's file id. `mediaType` is optional: bytes
 * without one have it sniffed from their magic bytes, a URL without one has it guessed from its path.
 */
export type MediaSource =
  | { data: Uint8Array; mediaType?: string }
  | { url: string; mediaType?: string }
  | { fileId: string; mediaType?: string };

/**
 * One image or clip as {@link image} and {@link audio} take it: bytes (the type sniffed), a string (an absolute URL is
 * kept as a URL, a `data:` URL and any other string, read as base64, are decoded), a {@link MediaSource}, or a block of
 * the same kind (its items, in order).
 */
export type MediaInput = Uint8Array | string | MediaSource | Content;

type Source = { case: "data"; value: Uint8Array } | { case: "url"; value: string } | { case: "fileId"; value: string };
type Piece = { source: Source; mediaType: string };
type MediaKind = "image" | "audio";

function isContent(value: unknown): value is Content {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { $typeName?: string }).$typeName === ContentSchema.typeName
  );
}

// The items of an image or audio block, first and more, in order.
function piecesOf(block: Content, kind: MediaKind): Piece[] {
  if (block.kind.case !== kind) {
    throw ValidationError.single(kind, "type", `expected a ${kind} block, got ${block.kind.case ?? "an empty block"}`);
  }
  const arm = block.kind.value as ImageContent | AudioContent;
  const more = "moreImages" in arm ? arm.moreImages : arm.moreClips;
  return [arm, ...more].map((item) => ({ source: item.source as Source, mediaType: item.mediaType }));
}

function bytesPiece(data: Uint8Array, kind: MediaKind, mediaType: string | undefined, hint?: string): Piece {
  if (kind === "image")
    return { source: { case: "data", value: data }, mediaType: inspectImage(data, mediaType, hint) };
  if (data.length === 0) throw new MediaError("audio data is empty");
  return { source: { case: "data", value: data }, mediaType: mediaType || hint || sniffAudio(data) };
}

function urlPiece(url: string, kind: MediaKind, mediaType: string | undefined): Piece {
  return { source: { case: "url", value: url }, mediaType: mediaType ?? guessFromPath(url, `${kind}/`) };
}

// One item, by the Python library's rules (src/agentmsg/content.py `_image_source`, `_audio_source`).
function mediaPieces(item: MediaInput, kind: MediaKind, mediaType: string | undefined): Piece[] {
  if (item instanceof Uint8Array) return [bytesPiece(item, kind, mediaType)];
  if (typeof item === "string") {
    if (isDataUrl(item)) {
      const parsed = parseDataUrl(item, kind);
      const declared = parsed.mediaType.startsWith(`${kind}/`) ? parsed.mediaType : undefined;
      return [bytesPiece(parsed.data, kind, mediaType, declared)];
    }
    if (URL_PATTERN.test(item)) return [urlPiece(item, kind, mediaType)];
    if (kind === "audio" && item.startsWith("file:")) {
      throw new MediaError("audio 'file:' paths are not read by the TypeScript SDK: pass the file's bytes");
    }
    return [bytesPiece(decodeBase64(item, kind), kind, mediaType)];
  }
  if (isContent(item)) return piecesOf(item, kind);
  if (typeof item === "object" && item !== null) {
    const own = item.mediaType ?? mediaType;
    if ("data" in item && item.data instanceof Uint8Array) return [bytesPiece(item.data, kind, own)];
    if ("url" in item && typeof item.url === "string") return [urlPiece(item.url, kind, own)];
    if ("fileId" in item && typeof item.fileId === "string") {
      return [{ source: { case: "fileId", value: item.fileId }, mediaType: own ?? "" }];
    }
  }
  const got = item === null ? "null" : typeof item;
  throw ValidationError.single(kind, "type", `expected bytes, a URL, a base64 string or a source, got ${got}`);
}

// The items of a block given one item or a list; an error about an item of a list names it (`images[2]`).
function collect(input: MediaInput | MediaInput[], kind: MediaKind, mediaType: string | undefined): Piece[] {
  const field = kind === "image" ? "images" : "audio";
  if (!Array.isArray(input)) return mediaPieces(input, kind, mediaType);
  if (input.length === 0) {
    throw ValidationError.single(field, "min_items", `the block needs at least one item in ${field}`);
  }
  return input.flatMap((item, index) => {
    try {
      return mediaPieces(item, kind, mediaType);
    } catch (error) {
      const where = `${field}[${index}]`;
      if (error instanceof MediaError) throw new MediaError(`${where}: ${error.message}`);
      if (error instanceof ValidationError) {
        throw new ValidationError(
          error.violations.map((v) => ({
            ...v,
            field: v.field === "" || v.field === kind ? where : `${where}.${v.field}`,
          })),
          "value",
        );
      }
      throw error;
    }
  });
}

/**
 * An image block (`ImageContent`) of one image or several (a list; `image.moreImages` holds all but the first).
 * Bytes must be JPEG, PNG, GIF or WEBP (sniffed) unless `mediaType` says what they are; `mediaType` applies to every
 * inline image, `detail` to every image. Unknown bytes and bad base64 throw {@link MediaError}.
 */
export function image(
  input: MediaInput | MediaInput[],
  options: { detail?: ImageDetailName; mediaType?: string } = {},
): Content {
  const detail = imageDetail(options.detail); // checked first, as Python does
  const [first, ...more] = collect(input, "image", options.mediaType) as [Piece, ...Piece[]];
  return checked(
    create(ContentSchema, {
      kind: {
        case: "image",
        value: {
          source: first.source,
          mediaType: first.mediaType,
          detail,
          moreImages: more.map((p) => create(ImageSourceSchema, p)),
        },
      },
    }),
  );
}

/**
 * An audio block (`AudioContent`) of one clip or several (a list; `audio.moreClips` holds all but the first). The
 * type of bytes is sniffed (MP3, Ogg, FLAC, WAV; `audio/mpeg` when unknown, as in the seed) unless `mediaType` says.
 */
export function audio(input: MediaInput | MediaInput[], options: { mediaType?: string } = {}): Content {
  const [first, ...more] = collect(input, "audio", options.mediaType) as [Piece, ...Piece[]];
  return checked(
    create(ContentSchema, {
      kind: {
        case: "audio",
        value: {
          source: first.source,
          mediaType: first.mediaType,
          moreClips: more.map((p) => create(AudioSourceSchema, p)),
        },
      },
    }),
  );
}

/** What a document block says about its document besides where it is. */
export interface DocumentOptions {
  /** The MIME type; sniffed from bytes (PDF, else UTF-8 text) and guessed from a URL's path when not given. */
  mediaType?: string;
  filename?: string;
  title?: string;
  /** Text about the document, given to the model with it (Anthropic `context`). */
  context?: string;
}

function documentSource(from: Uint8Array | string | MediaSource, mediaType: string | undefined): Piece {
  let data: Uint8Array;
  let type = mediaType;
  if (from instanceof Uint8Array) {
    data = from;
  } else if (typeof from === "string") {
    if (isDataUrl(from)) {
      const parsed = parseDataUrl(from, "document");
      data = parsed.data;
      type = type || parsed.mediaType || undefined;
    } else if (URL_PATTERN.test(from)) {
      return { source: { case: "url", value: from }, mediaType: type ?? guessFromPath(from, "") };
    } else {
      throw ValidationError.single(
        "document",
        "type",
        "a string must be a URL or a data: URL; use textDocument for text, decodeBase64 for base64",
      );
    }
  } else if ("data" in from && from.data instanceof Uint8Array) {
    data = from.data;
    type = from.mediaType ?? type;
  } else if ("url" in from && typeof from.url === "string") {
    return documentSource(from.url, from.mediaType ?? type);
  } else if ("fileId" in from && typeof from.fileId === "string") {
    return { source: { case: "fileId", value: from.fileId }, mediaType: from.mediaType ?? type ?? "" };
  } else {
    throw ValidationError.single("document", "type", `expected bytes, a URL or a source, got ${typeof from}`);
  }
  if (data.length === 0) throw new MediaError("document data is empty");
  const sniffed = type || sniffDocument(data);
  if (!sniffed) throw new MediaError("unknown document format (neither PDF nor UTF-8 text); pass mediaType");
  return { source: { case: "data", value: data }, mediaType: sniffed };
}

/**
 * A document block (`DocumentContent`): bytes (PDF by its magic bytes, else UTF-8 text; pass `mediaType` for anything
 * else), a URL or `data:` URL, or a {@link MediaSource}. Use {@link textDocument} for text.
 */
export function document(from: Uint8Array | string | MediaSource, options: DocumentOptions = {}): Content {
  const piece = documentSource(from, options.mediaType);
  return checked(
    create(ContentSchema, {
      kind: {
        case: "document",
        value: {
          source: piece.source,
          mediaType: piece.mediaType,
          filename: options.filename ?? "",
          title: options.title ?? "",
          context: options.context ?? "",
        },
      },
    }),
  );
}

/** A text document (`DocumentContent` of the text's UTF-8 bytes, `text/plain` unless `mediaType` says). */
export function textDocument(value: string, options: DocumentOptions = {}): Content {
  return document(new TextEncoder().encode(value), { ...options, mediaType: options.mediaType || "text/plain" });
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
  /** The input: JSON object text as the provider gave it (kept verbatim), or an object (written as compact JSON). */
  input?: string | JsonObject;
  /** The input as an object (the same as giving `input` an object). */
  args?: JsonObject;
  server?: string;
  status?: HostedToolStatusName;
  statusRaw?: string;
  signature?: string;
  /** The provider's block, verbatim (a `providerContent(...)` block or its `ProviderContent`). */
  original?: Content | ProviderContent;
}

/** A tool the provider ran itself (`HostedToolCallContent`): web search, code execution, a remote MCP call... */
export function hostedToolCall(id: string, name: string, options: HostedToolCallOptions = {}): Content {
  if (options.args !== undefined && options.input !== undefined) {
    throw ValidationError.single("input", "exclusive", "give args or input, not both");
  }
  const input = options.input ?? options.args ?? "";
  return checked(
    create(ContentSchema, {
      kind: {
        case: "hostedToolCall",
        value: {
          id,
          name,
          kind: hostedToolKind(options.kind),
          input: typeof input === "string" ? input : JSON.stringify(input),
          server: options.server ?? "",
          status: hostedToolStatus(options.status),
          statusRaw: options.statusRaw ?? "",
          signature: options.signature ?? "",
          original: originalOf(options.original),
        },
      },
    }),
  );
}

/** One result of a hosted search (`SearchResult`): a web page (`url`) or a file (`fileId`). */
export function searchResult(
  url = "",
  title = "",
  snippet = "",
  options: { pageAge?: string; encryptedContent?: string; fileId?: string; score?: number } = {},
): SearchResult {
  const built = create(SearchResultSchema, {
    url,
    title,
    snippet,
    pageAge: options.pageAge ?? "",
    encryptedContent: options.encryptedContent ?? "",
    fileId: options.fileId ?? "",
    score: options.score,
  });
  validate(SearchResultSchema, built);
  return built;
}

/** What hosted code printed and wrote (`CodeExecutionOutput`); `files` are file ids or `{ fileId, url }`. */
export function codeExecutionOutput(
  stdout = "",
  stderr = "",
  returnCode?: number,
  options: { files?: (string | { fileId?: string; url?: string })[]; encryptedStdout?: string } = {},
): CodeExecutionOutput {
  return create(CodeExecutionOutputSchema, {
    stdout,
    stderr,
    returnCode: optionalInt(returnCode, "return_code", 32, null),
    files: (options.files ?? []).map((file) =>
      create(CodeExecutionFileSchema, typeof file === "string" ? { fileId: file } : file),
    ),
    encryptedStdout: options.encryptedStdout ?? "",
  });
}

/** A page a hosted fetch read (`WebFetchOutput`); its content is the result's blocks. */
export function webFetchOutput(url: string, retrievedAt = ""): WebFetchOutput {
  return create(WebFetchOutputSchema, { url, retrievedAt });
}

export interface HostedToolResultOptions {
  name?: string;
  kind?: HostedToolKindName;
  /** The tool failed (also implied by `error`). */
  isError?: boolean;
  /** The provider's error code and message. */
  error?: { code?: string; message?: string };
  /**
   * One typed body at most: search results (built with {@link searchResult} or as plain objects) and the queries run,
   * code execution output ({@link codeExecutionOutput}), or a fetched page ({@link webFetchOutput}).
   */
  searchResults?: { results?: MessageInitShape<typeof SearchResultSchema>[]; queries?: string[] };
  codeExecution?: MessageInitShape<typeof CodeExecutionOutputSchema>;
  webFetch?: MessageInitShape<typeof WebFetchOutputSchema>;
  status?: HostedToolStatusName;
  statusRaw?: string;
  /** The provider's block, verbatim (a `providerContent(...)` block or its `ProviderContent`). */
  original?: Content | ProviderContent;
}

/** What a hosted tool gave back (`HostedToolResultContent`): a typed body, content blocks, or an error. */
export function hostedToolResult(
  callId: string,
  content: string | Content[] = [],
  options: HostedToolResultOptions = {},
): Content {
  const bodies = (["searchResults", "codeExecution", "webFetch"] as const).filter((b) => options[b] !== undefined);
  if (bodies.length > 1) {
    throw ValidationError.single(
      "body",
      "exclusive",
      `give one of searchResults, codeExecution or webFetch, not ${bodies.join(" and ")}`,
    );
  }
  const body: HostedToolResultContent["body"] | undefined =
    options.searchResults !== undefined
      ? {
          case: "searchResults",
          value: create(SearchResultsSchema, {
            results: (options.searchResults.results ?? []).map((r) => create(SearchResultSchema, r)),
            queries: options.searchResults.queries ?? [],
          }),
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
          isError: (options.isError ?? false) || options.error !== undefined,
          error:
            options.error === undefined
              ? undefined
              : { code: options.error.code ?? "", message: options.error.message ?? "" },
          body: body ?? { case: undefined },
          content: typeof content === "string" ? (content === "" ? [] : [text(content)]) : content,
          status: hostedToolStatus(options.status),
          statusRaw: options.statusRaw ?? "",
          original: originalOf(options.original),
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
