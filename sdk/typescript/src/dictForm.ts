// The seed-1 dict form (src/agentmsg/dict_form.py): the shape of the seed's dataclasses as plain JSON objects, so
// histories kept in it load into agentmsg and go back out unchanged. `messageToDict` gives exactly what the Python
// library's `message_to_dict` gives (tests/interop/test_ts_dict_form.py compares them); `messageFromDict` reads it
// back, naming the path of anything wrong (`[3].contents[1].images[0]`).
//
//   {"role": "user", "id": "...", "timestamp": 1700000000.123456,
//    "contents": [{"type": "text", "content": "hi"},
//                 {"type": "image", "images": ["<base64>"], "media_type": "image/png"}]}

import {
  create,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageShape,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { type Timestamp, TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  audio,
  type Content,
  ContentSchema,
  type HostedToolKindName,
  type HostedToolStatusName,
  hostedToolKind,
  hostedToolKindName,
  hostedToolStatus,
  hostedToolStatusName,
  type ImageDetailName,
  image,
  type MediaSource,
  parseJsonObject,
  type ToolKindName,
  toolKind,
  toolKindName,
  toolResultText,
} from "./content.js";
import { MediaError, ValidationError, type Violation } from "./errors.js";
import {
  type AudioContent,
  AudioSourceSchema,
  CitationSchema,
  CodeExecutionOutputSchema,
  type ImageContent,
  ImageDetail,
  ImageSourceSchema,
  type ProviderContent,
  ProviderContentSchema,
  SearchResultsSchema,
  TokenLogprobSchema,
  ToolApprovalDecision,
  WebFetchOutputSchema,
} from "./gen/agentmsg/v1/content_pb.js";
import { type Message, MessageSchema, StopReason } from "./gen/agentmsg/v1/message_pb.js";
import type { Usage } from "./gen/agentmsg/v1/usage_pb.js";
import { type StopReasonName, stopReason, stopReasonName } from "./messages.js";
import { violations } from "./validation.js";

type Dict = JsonObject;

const DETAIL_NAMES: Record<number, ImageDetailName> = {
  [ImageDetail.LOW]: "low",
  [ImageDetail.MEDIUM]: "medium",
  [ImageDetail.HIGH]: "high",
  [ImageDetail.AUTO]: "auto",
};

/** A nested v1.1 message (citation, token logprob, hosted tool body) as ProtoJSON with proto field names. */
function pbDict<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Dict {
  return toJson(schema, message, { useProtoFieldName: true }) as Dict;
}

function b64(data: Uint8Array): string {
  return base64Encode(data);
}

type Source = { case: "data"; value: Uint8Array } | { case: "url"; value: string } | { case: "fileId"; value: string };

function sourceItem(source: Source | { case: undefined }): JsonValue {
  if (source.case === "data") return b64(source.value);
  if (source.case === "url") return source.value;
  return { file_id: source.case === "fileId" ? source.value : "" };
}

// An image or audio block: one item, or several (the block's first plus `more_images` / `more_clips`).
function mediaDict(
  type: "image" | "audio",
  key: "images" | "audio",
  first: { source: Source | { case: undefined }; mediaType: string },
  more: { source: Source | { case: undefined }; mediaType: string }[],
): Dict {
  const out: Dict = { type };
  if (more.length > 0) {
    const all = [first, ...more];
    out[key] = all.map((piece) => sourceItem(piece.source));
    if (all.some((piece) => piece.mediaType !== "")) out.media_types = all.map((piece) => piece.mediaType);
    return out;
  }
  const source = first.source;
  if (source.case === "data") out[key] = [b64(source.value)];
  else if (source.case === "url") out[key] = [source.value];
  else {
    out[key] = [];
    out.file_id = source.case === "fileId" ? source.value : "";
  }
  if (first.mediaType !== "") out.media_type = first.mediaType;
  return out;
}

const DECISIONS = new Map<string, ToolApprovalDecision>([
  ["approved", ToolApprovalDecision.APPROVED],
  ["denied", ToolApprovalDecision.DENIED],
]);
const DECISION_NAMES = new Map([...DECISIONS].map(([name, value]) => [value, name]));

/** One content block as its seed-1 dict. */
export function contentToDict(block: Content): Dict {
  const k = block.kind;
  switch (k.case) {
    case "text": {
      const out: Dict = { type: "text", content: k.value.text };
      if (k.value.signature !== "") out.signature = k.value.signature;
      if (k.value.citations.length > 0) out.citations = k.value.citations.map((c) => pbDict(CitationSchema, c));
      if (k.value.logprobs.length > 0) out.logprobs = k.value.logprobs.map((t) => pbDict(TokenLogprobSchema, t));
      return out;
    }
    case "hostedToolCall": {
      const call = k.value;
      const out: Dict = { type: "hosted_tool_call", id: call.id, name: call.name, input: call.input };
      const kind = hostedToolKindName(call.kind);
      if (kind !== undefined) out.kind = kind;
      const status = hostedToolStatusName(call.status);
      if (status !== undefined) out.status = status;
      if (call.server !== "") out.server = call.server;
      if (call.statusRaw !== "") out.status_raw = call.statusRaw;
      if (call.signature !== "") out.signature = call.signature;
      if (call.original !== undefined) out.original = pbDict(ProviderContentSchema, call.original);
      return out;
    }
    case "hostedToolResult": {
      const result = k.value;
      const out: Dict = { type: "hosted_tool_result", call_id: result.callId, is_error: result.isError };
      if (result.name !== "") out.name = result.name;
      const kind = hostedToolKindName(result.kind);
      if (kind !== undefined) out.kind = kind;
      const status = hostedToolStatusName(result.status);
      if (status !== undefined) out.status = status;
      if (result.statusRaw !== "") out.status_raw = result.statusRaw;
      if (result.error !== undefined) out.error = { code: result.error.code, message: result.error.message };
      const body = result.body;
      if (body.case === "searchResults") out.search_results = pbDict(SearchResultsSchema, body.value);
      else if (body.case === "codeExecution") out.code_execution = pbDict(CodeExecutionOutputSchema, body.value);
      else if (body.case === "webFetch") out.web_fetch = pbDict(WebFetchOutputSchema, body.value);
      if (result.content.length > 0) out.content = result.content.map(contentToDict);
      if (result.original !== undefined) out.original = pbDict(ProviderContentSchema, result.original);
      return out;
    }
    case "image": {
      const out = mediaDict("image", "images", k.value, k.value.moreImages);
      const detail = DETAIL_NAMES[k.value.detail];
      if (detail !== undefined) out.detail = detail;
      return out;
    }
    case "audio":
      return mediaDict("audio", "audio", k.value, k.value.moreClips);
    case "document": {
      const out: Dict = { type: "document" };
      const source = k.value.source;
      if (source.case === "data") out.data = b64(source.value);
      else if (source.case === "url") out.url = source.value;
      else out.file_id = source.case === "fileId" ? source.value : "";
      if (k.value.mediaType !== "") out.media_type = k.value.mediaType;
      if (k.value.filename !== "") out.filename = k.value.filename;
      if (k.value.title !== "") out.title = k.value.title;
      if (k.value.context !== "") out.context = k.value.context;
      return out;
    }
    case "thinking":
      return { type: "thinking", content: k.value.text, signature: k.value.signature };
    case "redactedThinking":
      return { type: "redacted_thinking", data: k.value.data };
    case "toolCall": {
      const call = k.value;
      const out: Dict = {
        type: "tool_call",
        id: call.id,
        name: call.name,
        kind: toolKindName(call.kind) ?? null,
        arguments: call.arguments,
        metadata: call.metadata ?? {},
      };
      const [args] = parseJsonObject(call.arguments);
      if (args !== undefined) out.args = args;
      if (call.index !== 0) out.index = call.index;
      if (call.signature !== "") out.signature = call.signature;
      if (call.serverName !== "") out.server_name = call.serverName;
      if (call.requiresApproval) out.requires_approval = true;
      if (call.providerExtra !== undefined) out.provider_extra = pbDict(ProviderContentSchema, call.providerExtra);
      return out;
    }
    case "approval": {
      const approval = k.value;
      const decision = DECISION_NAMES.get(approval.decision);
      if (decision === undefined) throw fail("decision", "enum", `unknown decision ${approval.decision}`);
      const out: Dict = { type: "approval", call_id: approval.callId, decision };
      if (approval.reason !== "") out.reason = approval.reason;
      if (approval.decidedBy !== "") out.decided_by = approval.decidedBy;
      if (approval.decidedAt !== undefined) out.decided_at = toJson(TimestampSchema, approval.decidedAt);
      if (approval.original !== undefined) out.original = pbDict(ProviderContentSchema, approval.original);
      return out;
    }
    case "toolResult": {
      const result = k.value;
      const parts = result.content;
      const only = parts[0];
      // The seed's plain string holds no blocks ("") or one non-empty, unsigned text block.
      const plain =
        parts.length === 0 ||
        (parts.length === 1 &&
          only?.kind.case === "text" &&
          only.kind.value.text !== "" &&
          only.kind.value.signature === "");
      const out: Dict = {
        type: "tool_result",
        id: result.id,
        content: plain ? toolResultText(result) : parts.map(contentToDict),
        is_error: result.isError,
        metadata: result.metadata ?? {},
        terminate: result.terminate,
      };
      if (result.name !== "") out.name = result.name;
      if (result.terminateMessage !== "") out.terminate_message = result.terminateMessage;
      if (result.index !== 0) out.index = result.index;
      return out;
    }
    case "provider":
      return { type: "provider", provider: k.value.provider, block_type: k.value.type, json: k.value.json };
    default:
      return { type: "unknown", proto: b64(toBinary(ContentSchema, block)) };
  }
}

function usageDict(usage: Usage): Dict {
  const out: Dict = {};
  const tokens = [
    ["input_tokens", usage.inputTokens],
    ["output_tokens", usage.outputTokens],
    ["cache_read_tokens", usage.cacheReadTokens],
    ["cache_write_tokens", usage.cacheWriteTokens],
    ["reasoning_tokens", usage.reasoningTokens],
    ["total_tokens", usage.totalTokens],
    ["cache_write_5m_tokens", usage.cacheWrite5mTokens],
    ["cache_write_1h_tokens", usage.cacheWrite1hTokens],
  ] as const;
  for (const [key, value] of tokens) if (value !== undefined) out[key] = Number(value);
  const requests = Object.entries(usage.hostedToolRequests);
  if (requests.length > 0) out.hosted_tool_requests = Object.fromEntries(requests.map(([k, v]) => [k, Number(v)]));
  if (usage.cost !== undefined) {
    const cost: Dict = {};
    const c = usage.cost;
    const amounts = [
      ["input", c.input],
      ["output", c.output],
      ["cache_read", c.cacheRead],
      ["cache_write", c.cacheWrite],
      ["total", c.total],
    ] as const;
    for (const [key, value] of amounts) if (value !== undefined) cost[key] = value;
    out.cost = cost;
  }
  return out;
}

function seconds(ts: Timestamp | undefined): number {
  return ts === undefined ? 0 : Number(ts.seconds) + ts.nanos / 1e9;
}

/** One message as its seed-1 dict. */
export function messageToDict(msg: Message): Dict {
  const role = msg.role;
  const out: Dict = {
    role:
      role.case === undefined
        ? "unknown"
        : role.case === "branchSummary"
          ? "branch_summary"
          : role.case === "compactionSummary"
            ? "compaction_summary"
            : role.case,
  };
  switch (role.case) {
    case "system":
    case "user":
    case "tool":
      out.contents = role.value.content.map(contentToDict);
      break;
    case "assistant": {
      const body = role.value;
      out.contents = body.content.map(contentToDict);
      if (body.usage !== undefined) out.usage = usageDict(body.usage);
      out.stop_reason = stopReasonName(body.stopReason) ?? null;
      out.error = body.error;
      if (body.stopReasonRaw !== "") out.stop_reason_raw = body.stopReasonRaw;
      if (body.stopSequence !== "") out.stop_sequence = body.stopSequence;
      if (body.providerExtra !== undefined) out.provider_extra = pbDict(ProviderContentSchema, body.providerExtra);
      if (body.provenance !== undefined) {
        const p = body.provenance;
        out.provenance = { provider: p.provider, api: p.api, model: p.model, response_id: p.responseId };
      }
      break;
    }
    case "custom":
      out.custom_type = role.value.customType;
      out.contents = role.value.content.map(contentToDict);
      out.details = role.value.details === undefined ? null : toJson(ValueSchema, role.value.details);
      if (role.value.toModel) out.to_model = true;
      break;
    case "branchSummary":
      out.summary = role.value.summary;
      out.from_id = role.value.fromId;
      break;
    case "compactionSummary": {
      const body = role.value;
      out.summary = body.summary;
      out.tokens_before = body.tokensBefore === undefined ? null : Number(body.tokensBefore);
      if (body.firstKeptId !== "") out.first_kept_id = body.firstKeptId;
      const state = body.providerState;
      if (state !== undefined) {
        out.provider_state = { provider: state.provider, api: state.api, type: state.type, data: state.data };
      }
      break;
    }
    default:
      out.proto = b64(toBinary(MessageSchema, msg));
      return out;
  }
  out.id = msg.id;
  out.timestamp = seconds(msg.timestamp);
  if (msg.name !== "") out.name = msg.name;
  if (msg.parentId !== "") out.parent_id = msg.parentId;
  return out;
}

/** Messages as seed-1 dicts. */
export function messagesToDicts(messages: Iterable<Message>): Dict[] {
  return [...messages].map(messageToDict);
}

// --- import -------------------------------------------------------------------------------------------------------

class PayloadError extends ValidationError {}

function fail(path: string, ruleId: string, message: string): PayloadError {
  return new PayloadError([{ field: path, ruleId, message }], "seed-1 dict");
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "dict";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  return typeof value;
}

type Kind = "str" | "int" | "bool" | "list" | "dict" | "number";

function is(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "str":
      return typeof value === "string";
    case "int":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "bool":
      return typeof value === "boolean";
    case "list":
      return Array.isArray(value);
    case "dict":
      return typeof value === "object" && value !== null && !Array.isArray(value);
  }
}

function get<T>(data: Dict, key: string, kind: Kind, path: string, fallback?: T): T | undefined {
  const value = data[key];
  if (value === undefined || value === null) return fallback;
  if (!is(value, kind)) throw fail(`${path}.${key}`, "type", `expected ${kind}, got ${typeName(value)}`);
  return value as T;
}

function need<T>(data: Dict, key: string, kind: Kind, path: string): T {
  const value = get<T>(data, key, kind, path);
  if (value === undefined) throw fail(`${path}.${key}`, "required", "value is required");
  return value;
}

function decodeBase64(text: string, path: string, what: string): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (compact === "" || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    throw fail(path, "media", `invalid base64 for ${what}`);
  }
  return base64Decode(compact);
}

// One image / audio item: a URL, a data: URL, base64, or {"file_id": ...}; strings by the helpers' rules (`image`,
// `audio`: the type sniffed, a URL's guessed from its path), their errors at the item's path, as Python's import.
function mediaItem(item: JsonValue, mediaType: string | undefined, kind: "image" | "audio", path: string): MediaSource {
  if (is(item, "dict")) {
    const fileId = need<string>(item as Dict, "file_id", "str", path);
    return { fileId, mediaType: mediaType ?? "" };
  }
  if (typeof item !== "string") throw fail(path, "type", `expected str or dict, got ${typeName(item)}`);
  if (item.startsWith("file:")) {
    throw fail(path, "media", `${kind} 'file:' paths are not read from decoded data`);
  }
  let block: Content;
  try {
    block = kind === "image" ? image(item, { mediaType }) : audio(item, { mediaType });
  } catch (error) {
    if (error instanceof MediaError) throw fail(path, "media", error.message);
    if (error instanceof ValidationError) {
      throw new PayloadError(
        error.violations.map((v) => ({ ...v, field: v.field === "" ? path : `${path}.${v.field}` })),
        "seed-1 dict",
      );
    }
    throw error;
  }
  const { source, mediaType: found } = block.kind.value as ImageContent | AudioContent;
  if (source.case === "data") return { data: source.value, mediaType: found };
  return { url: source.value as string, mediaType: found };
}

function sourceOf(from: MediaSource): Source {
  if ("data" in from) return { case: "data", value: from.data };
  if ("url" in from) return { case: "url", value: from.url };
  return { case: "fileId", value: from.fileId };
}

function mediaFromDict(data: Dict, kind: "image" | "audio", path: string): Content {
  const key = kind === "image" ? "images" : "audio";
  const fileId = get<string>(data, "file_id", "str", path);
  const mediaType = get<string>(data, "media_type", "str", path) || undefined;
  let pieces: MediaSource[];
  if (fileId !== undefined) {
    pieces = [{ fileId, mediaType: mediaType ?? "" }];
  } else {
    const items = get<JsonValue[]>(data, key, "list", path, []) ?? [];
    if (items.length === 0) {
      throw fail(
        `${path}.${key}`,
        "required",
        `the dict needs at least ${kind === "image" ? "an image" : "a clip"} in ${key}`,
      );
    }
    const types = get<JsonValue[]>(data, "media_types", "list", path);
    if (types !== undefined && (types.length !== items.length || !types.every((t) => typeof t === "string"))) {
      throw fail(`${path}.media_types`, "type", `expected ${items.length} strings, one for each item of ${key}`);
    }
    pieces = items.map((item, i) =>
      mediaItem(
        item,
        types === undefined ? mediaType : (types[i] as string) || undefined,
        kind,
        `${path}.${key}[${i}]`,
      ),
    );
  }
  const [first, ...more] = pieces as [MediaSource, ...MediaSource[]];
  if (kind === "image") {
    const detail = get<string>(data, "detail", "str", path);
    const names: Record<string, ImageDetail> = {
      low: ImageDetail.LOW,
      medium: ImageDetail.MEDIUM,
      high: ImageDetail.HIGH,
      auto: ImageDetail.AUTO,
    };
    const detailValue = detail === undefined ? ImageDetail.UNSPECIFIED : names[detail];
    if (detailValue === undefined) throw fail(`${path}.detail`, "enum", `unknown image detail '${detail}'`);
    return create(ContentSchema, {
      kind: {
        case: "image",
        value: {
          source: sourceOf(first),
          mediaType: first.mediaType ?? "",
          detail: detailValue,
          moreImages: more.map((p) => create(ImageSourceSchema, { source: sourceOf(p), mediaType: p.mediaType ?? "" })),
        },
      },
    });
  }
  return create(ContentSchema, {
    kind: {
      case: "audio",
      value: {
        source: sourceOf(first),
        mediaType: first.mediaType ?? "",
        moreClips: more.map((p) => create(AudioSourceSchema, { source: sourceOf(p), mediaType: p.mediaType ?? "" })),
      },
    },
  });
}

// A nested message from its ProtoJSON dict (proto or JSON field names), checked against the contract's rules.
function parsePb<Desc extends DescMessage>(
  schema: Desc,
  data: JsonValue | undefined,
  path: string,
): MessageShape<Desc> {
  if (!is(data, "dict")) throw fail(path, "type", `expected a dict, got ${typeName(data)}`);
  let message: MessageShape<Desc>;
  try {
    message = fromJson(schema, data as JsonValue);
  } catch (error) {
    throw fail(path, "json", `not a valid ${schema.name}: ${(error as Error).message}`);
  }
  const found = violations(schema, message);
  if (found.length > 0) {
    throw new PayloadError(
      found.map((v) => ({ ...v, field: v.field === "" ? path : `${path}.${v.field}` })),
      "seed-1 dict",
    );
  }
  return message;
}

function originalOf(data: Dict, path: string, key = "original"): ProviderContent | undefined {
  const value = data[key];
  return value === undefined || value === null ? undefined : parsePb(ProviderContentSchema, value, `${path}.${key}`);
}

function hostedNames(
  data: Dict,
  path: string,
): { kind: ReturnType<typeof hostedToolKind>; status: ReturnType<typeof hostedToolStatus> } {
  return {
    kind: hostedToolKind(get<string>(data, "kind", "str", path) as HostedToolKindName | undefined, `${path}.kind`),
    status: hostedToolStatus(
      get<string>(data, "status", "str", path) as HostedToolStatusName | undefined,
      `${path}.status`,
    ),
  };
}

/** One block from its seed-1 dict (unchecked: the message it goes into is validated). */
export function contentFromDict(data: JsonValue, path = ""): Content {
  if (!is(data, "dict")) throw fail(path, "type", `expected a content dict, got ${typeName(data)}`);
  const d = data as Dict;
  const type = d.type;
  switch (type) {
    case "text": {
      const citations = get<JsonValue[]>(d, "citations", "list", path, []) ?? [];
      const logprobs = get<JsonValue[]>(d, "logprobs", "list", path, []) ?? [];
      return create(ContentSchema, {
        kind: {
          case: "text",
          value: {
            text: get<string>(d, "content", "str", path, "") ?? "",
            signature: get<string>(d, "signature", "str", path, "") ?? "",
            citations: citations.map((c, i) => parsePb(CitationSchema, c, `${path}.citations[${i}]`)),
            logprobs: logprobs.map((t, i) => parsePb(TokenLogprobSchema, t, `${path}.logprobs[${i}]`)),
          },
        },
      });
    }
    case "hosted_tool_call":
      return create(ContentSchema, {
        kind: {
          case: "hostedToolCall",
          value: {
            id: get<string>(d, "id", "str", path, "") ?? "",
            name: get<string>(d, "name", "str", path, "") ?? "",
            input: get<string>(d, "input", "str", path, "") ?? "",
            ...hostedNames(d, path),
            server: get<string>(d, "server", "str", path, "") ?? "",
            statusRaw: get<string>(d, "status_raw", "str", path, "") ?? "",
            signature: get<string>(d, "signature", "str", path, "") ?? "",
            original: originalOf(d, path),
          },
        },
      });
    case "hosted_tool_result": {
      const error = get<Dict>(d, "error", "dict", path);
      const ep = `${path}.error`;
      const items = get<JsonValue[]>(d, "content", "list", path, []) ?? [];
      const body =
        d.search_results !== undefined && d.search_results !== null
          ? {
              case: "searchResults" as const,
              value: parsePb(SearchResultsSchema, d.search_results, `${path}.search_results`),
            }
          : d.code_execution !== undefined && d.code_execution !== null
            ? {
                case: "codeExecution" as const,
                value: parsePb(CodeExecutionOutputSchema, d.code_execution, `${path}.code_execution`),
              }
            : d.web_fetch !== undefined && d.web_fetch !== null
              ? { case: "webFetch" as const, value: parsePb(WebFetchOutputSchema, d.web_fetch, `${path}.web_fetch`) }
              : { case: undefined };
      return create(ContentSchema, {
        kind: {
          case: "hostedToolResult",
          value: {
            callId: get<string>(d, "call_id", "str", path, "") ?? "",
            name: get<string>(d, "name", "str", path, "") ?? "",
            ...hostedNames(d, path),
            isError: get<boolean>(d, "is_error", "bool", path, false) ?? false,
            error:
              error === undefined
                ? undefined
                : {
                    code: get<string>(error, "code", "str", ep, "") ?? "",
                    message: get<string>(error, "message", "str", ep, "") ?? "",
                  },
            body,
            content: items.map((item, i) => contentFromDict(item, `${path}.content[${i}]`)),
            statusRaw: get<string>(d, "status_raw", "str", path, "") ?? "",
            original: originalOf(d, path),
          },
        },
      });
    }
    case "image":
    case "audio":
      return mediaFromDict(d, type, path);
    case "document": {
      const mediaType = get<string>(d, "media_type", "str", path, "") ?? "";
      let source: Source;
      if ("file_id" in d) source = { case: "fileId", value: need<string>(d, "file_id", "str", path) };
      else if ("url" in d) source = { case: "url", value: need<string>(d, "url", "str", path) };
      else
        source = {
          case: "data",
          value: decodeBase64(need<string>(d, "data", "str", path), `${path}.data`, "document"),
        };
      return create(ContentSchema, {
        kind: {
          case: "document",
          value: {
            source,
            mediaType,
            filename: get<string>(d, "filename", "str", path, "") ?? "",
            title: get<string>(d, "title", "str", path, "") ?? "",
            context: get<string>(d, "context", "str", path, "") ?? "",
          },
        },
      });
    }
    case "thinking":
      return create(ContentSchema, {
        kind: {
          case: "thinking",
          value: {
            text: get<string>(d, "content", "str", path, "") ?? "",
            signature: get<string>(d, "signature", "str", path, "") ?? "",
          },
        },
      });
    case "redacted_thinking":
      return create(ContentSchema, {
        kind: { case: "redactedThinking", value: { data: need<string>(d, "data", "str", path) } },
      });
    case "tool_call": {
      const text = get<string>(d, "arguments", "str", path);
      const args = text === undefined ? (get<Dict>(d, "args", "dict", path, {}) ?? {}) : undefined;
      const kindName = get<string>(d, "kind", "str", path);
      const metadata = get<Dict>(d, "metadata", "dict", path);
      return create(ContentSchema, {
        kind: {
          case: "toolCall",
          value: {
            id: need<string>(d, "id", "str", path),
            name: need<string>(d, "name", "str", path),
            arguments: text ?? JSON.stringify(args),
            kind: toolKind(kindName as ToolKindName | undefined, `${path}.kind`),
            index: get<number>(d, "index", "int", path, 0) ?? 0,
            signature: get<string>(d, "signature", "str", path, "") ?? "",
            serverName: get<string>(d, "server_name", "str", path, "") ?? "",
            metadata: metadata !== undefined && Object.keys(metadata).length > 0 ? metadata : undefined,
            providerExtra: originalOf(d, path, "provider_extra"),
            requiresApproval: get<boolean>(d, "requires_approval", "bool", path, false) ?? false,
          },
        },
      });
    }
    case "approval": {
      const name = need<string>(d, "call_id", "str", path);
      const decisionName = need<string>(d, "decision", "str", path);
      const decision = DECISIONS.get(decisionName);
      if (decision === undefined)
        throw fail(`${path}.decision`, "enum", `${JSON.stringify(decisionName)} is not one of: approved, denied`);
      const at = get<string>(d, "decided_at", "str", path);
      let decidedAt: Timestamp | undefined;
      if (at !== undefined) {
        try {
          decidedAt = fromJson(TimestampSchema, at);
        } catch (error) {
          throw fail(`${path}.decided_at`, "timestamp", `not an RFC 3339 time: ${(error as Error).message}`);
        }
      }
      return create(ContentSchema, {
        kind: {
          case: "approval",
          value: {
            callId: name,
            decision,
            reason: get<string>(d, "reason", "str", path, "") ?? "",
            decidedBy: get<string>(d, "decided_by", "str", path, "") ?? "",
            decidedAt,
            original: originalOf(d, path),
          },
        },
      });
    }
    case "tool_result": {
      const raw = d.content ?? "";
      let content: Content[];
      if (typeof raw === "string") {
        content = raw === "" ? [] : [create(ContentSchema, { kind: { case: "text", value: { text: raw } } })];
      } else if (Array.isArray(raw)) {
        content = raw.map((item, i) => contentFromDict(item, `${path}.content[${i}]`));
      } else {
        throw fail(`${path}.content`, "type", `expected str or a list of content dicts, got ${typeName(raw)}`);
      }
      const metadata = get<Dict>(d, "metadata", "dict", path);
      return create(ContentSchema, {
        kind: {
          case: "toolResult",
          value: {
            id: need<string>(d, "id", "str", path),
            content,
            isError: get<boolean>(d, "is_error", "bool", path, false) ?? false,
            name: get<string>(d, "name", "str", path, "") ?? "",
            metadata: metadata !== undefined && Object.keys(metadata).length > 0 ? metadata : undefined,
            terminate: get<boolean>(d, "terminate", "bool", path, false) ?? false,
            terminateMessage: get<string>(d, "terminate_message", "str", path, "") ?? "",
            index: get<number>(d, "index", "int", path, 0) ?? 0,
          },
        },
      });
    }
    case "provider":
      return create(ContentSchema, {
        kind: {
          case: "provider",
          value: {
            provider: need<string>(d, "provider", "str", path),
            type: need<string>(d, "block_type", "str", path),
            json: need<string>(d, "json", "str", path),
          },
        },
      });
    case "unknown":
      return fromBinary(ContentSchema, decodeBase64(need<string>(d, "proto", "str", path), path, "unknown content"));
    default:
      throw fail(`${path}.type`, "enum", `unknown content type ${JSON.stringify(type ?? null)}`);
  }
}

function requestsOf(usage: Dict | null | undefined, path: string): Record<string, bigint> {
  const data =
    usage === null || usage === undefined ? undefined : get<Dict>(usage, "hosted_tool_requests", "dict", path);
  const out: Record<string, bigint> = {};
  for (const [tool, count] of Object.entries(data ?? {})) {
    if (!is(count, "int")) {
      throw fail(`${path}.hosted_tool_requests['${tool}']`, "type", `expected int, got ${typeName(count)}`);
    }
    out[tool] = BigInt(count as number);
  }
  return out;
}

function blocks(data: Dict, path: string): Content[] {
  const items = get<JsonValue[]>(data, "contents", "list", path, []) ?? [];
  return items.map((item, i) => contentFromDict(item, `${path}.contents[${i}]`));
}

function timestampOf(data: Dict, path: string): Timestamp {
  const value = data.timestamp;
  const now = Date.now() / 1000;
  if (value !== undefined && value !== null && typeof value !== "number") {
    throw fail(`${path}.timestamp`, "type", `expected epoch seconds, got ${typeName(value)}`);
  }
  const at = typeof value === "number" ? value : now;
  // Microsecond precision, as the seed's floats carry.
  const micros = Math.round(at * 1e6);
  const secs = Math.floor(micros / 1e6);
  return {
    $typeName: "google.protobuf.Timestamp",
    seconds: BigInt(secs),
    nanos: (micros - secs * 1e6) * 1000,
  };
}

const BODY_CONTENT = /^(system|user|assistant|tool|custom)\.content/;

// Violations of the built message, with paths into the dict (`user.content[0]` -> `contents[0]`).
function checked(msg: Message, path: string): Message {
  const found = violations(MessageSchema, msg);
  if (found.length === 0) return msg;
  throw new PayloadError(
    found.map((v): Violation => {
      const field = v.field.replace(BODY_CONTENT, "contents");
      return { ...v, field: field === "" ? path : path === "" ? field : `${path}.${field}` };
    }),
    "seed-1 dict",
  );
}

/** One message from its seed-1 dict; a ValidationError names the path of everything wrong. */
export function messageFromDict(data: JsonValue, path = ""): Message {
  if (!is(data, "dict")) throw fail(path, "type", `expected a message dict, got ${typeName(data)}`);
  const d = data as Dict;
  const common = {
    id: get<string>(d, "id", "str", path) ?? crypto.randomUUID(),
    timestamp: timestampOf(d, path),
    name: get<string>(d, "name", "str", path, "") ?? "",
    parentId: get<string>(d, "parent_id", "str", path, "") ?? "",
  };
  const role = d.role;
  let msg: Message;
  switch (role) {
    case "system":
    case "user":
    case "tool":
      msg = create(MessageSchema, { ...common, role: { case: role, value: { content: blocks(d, path) } } });
      break;
    case "assistant": {
      const usage = d.usage;
      if (usage !== undefined && usage !== null && !is(usage, "dict")) {
        throw fail(`${path}.usage`, "type", `expected a usage dict, got ${typeName(usage)}`);
      }
      const u = usage as Dict | null | undefined;
      const count = (key: string): bigint | undefined => {
        const v = u === null || u === undefined ? undefined : get<number>(u, key, "int", `${path}.usage`);
        return v === undefined ? undefined : BigInt(v);
      };
      const costData = u?.cost;
      const amount = (key: string): number | undefined =>
        is(costData, "dict") ? get<number>(costData as Dict, key, "number", `${path}.usage.cost`) : undefined;
      const provenance = get<Dict>(d, "provenance", "dict", path);
      const str = (obj: Dict, key: string): string => get<string>(obj, key, "str", `${path}.provenance`, "") ?? "";
      const reason = get<string>(d, "stop_reason", "str", path);
      let stop: StopReason;
      try {
        stop = stopReason(reason as StopReasonName | undefined);
      } catch {
        throw fail(`${path}.stop_reason`, "enum", `unknown stop reason ${JSON.stringify(reason)}`);
      }
      msg = create(MessageSchema, {
        ...common,
        role: {
          case: "assistant",
          value: {
            content: blocks(d, path),
            usage:
              u === null || u === undefined
                ? undefined
                : {
                    inputTokens: count("input_tokens"),
                    outputTokens: count("output_tokens"),
                    cacheReadTokens: count("cache_read_tokens"),
                    cacheWriteTokens: count("cache_write_tokens"),
                    reasoningTokens: count("reasoning_tokens"),
                    totalTokens: count("total_tokens"),
                    cacheWrite5mTokens: count("cache_write_5m_tokens"),
                    cacheWrite1hTokens: count("cache_write_1h_tokens"),
                    hostedToolRequests: requestsOf(u, `${path}.usage`),
                    cost: is(costData, "dict")
                      ? {
                          input: amount("input"),
                          output: amount("output"),
                          cacheRead: amount("cache_read"),
                          cacheWrite: amount("cache_write"),
                          total: amount("total"),
                        }
                      : undefined,
                  },
            stopReason: stop,
            stopReasonRaw: get<string>(d, "stop_reason_raw", "str", path, "") ?? "",
            stopSequence: get<string>(d, "stop_sequence", "str", path, "") ?? "",
            providerExtra: originalOf(d, path, "provider_extra"),
            error: get<string>(d, "error", "str", path, "") ?? "",
            provenance:
              provenance === undefined
                ? undefined
                : {
                    provider: str(provenance, "provider"),
                    api: str(provenance, "api"),
                    model: str(provenance, "model"),
                    responseId: str(provenance, "response_id"),
                  },
          },
        },
      });
      break;
    }
    case "custom": {
      const details = d.details;
      msg = create(MessageSchema, {
        ...common,
        role: {
          case: "custom",
          value: {
            customType: need<string>(d, "custom_type", "str", path),
            content: blocks(d, path),
            details: details === undefined || details === null ? undefined : fromJson(ValueSchema, details),
            toModel: get<boolean>(d, "to_model", "bool", path, false) ?? false,
          },
        },
      });
      break;
    }
    case "branch_summary":
      msg = create(MessageSchema, {
        ...common,
        role: {
          case: "branchSummary",
          value: {
            summary: need<string>(d, "summary", "str", path),
            fromId: get<string>(d, "from_id", "str", path, "") ?? "",
          },
        },
      });
      break;
    case "compaction_summary": {
      const state = get<Dict>(d, "provider_state", "dict", path);
      const tokens = get<number>(d, "tokens_before", "int", path);
      const sp = `${path}.provider_state`;
      msg = create(MessageSchema, {
        ...common,
        role: {
          case: "compactionSummary",
          value: {
            summary: need<string>(d, "summary", "str", path),
            tokensBefore: tokens === undefined ? undefined : BigInt(tokens),
            firstKeptId: get<string>(d, "first_kept_id", "str", path, "") ?? "",
            providerState:
              state === undefined
                ? undefined
                : {
                    provider: get<string>(state, "provider", "str", sp, "") ?? "",
                    api: get<string>(state, "api", "str", sp, "") ?? "",
                    type: get<string>(state, "type", "str", sp, "") ?? "",
                    data: get<string>(state, "data", "str", sp, "") ?? "",
                  },
          },
        },
      });
      break;
    }
    case "unknown":
      return fromBinary(MessageSchema, decodeBase64(need<string>(d, "proto", "str", path), path, "unknown message"));
    default:
      throw fail(`${path}.role`, "enum", `unknown role ${JSON.stringify(role ?? null)}`);
  }
  return checked(msg, path);
}

/** Messages from seed-1 dicts; every error is collected, each naming its path (`[3].contents[1].images[0]`). */
export function messagesFromDicts(data: JsonValue): Message[] {
  if (!Array.isArray(data)) throw fail("", "type", `expected a list of message dicts, got ${typeName(data)}`);
  const out: Message[] = [];
  const found: Violation[] = [];
  data.forEach((item, i) => {
    try {
      out.push(messageFromDict(item, `[${i}]`));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      found.push(...error.violations);
    }
  });
  if (found.length > 0) throw new ValidationError(found, "seed-1 dicts");
  return out;
}

export { StopReason };
