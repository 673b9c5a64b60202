// Streaming: `agentmsg.v1.StreamEvent` constructors and the one fold that turns events into an assistant message.
//
// The fold has exactly the Python library's semantics (src/agentmsg/streaming.py); tests/vectors/fold/ holds the
// language-neutral vectors both languages run. The rules:
//
// 1. Order. A stream is message_start, then block events, usage anywhere, and one message_stop or error last. An
//    event before message_start or after the end is a StreamProtocolError.
// 2. Blocks by index. block_start(i) opens block i with its initial content; block_delta(i) appends to it;
//    block_stop(i) closes it. The message holds the blocks in index order (gaps allowed). A delta for a block never
//    started, already stopped, or of the wrong kind is an error naming the block.
// 3. Appending. Text, thinking text, signatures and argument fragments concatenate in arrival order; a signature
//    delta may go to a text, thinking, tool-call or hosted-tool-call block; argument fragments go to a tool call
//    (its arguments) or a hosted tool call (its input). Citation and logprob deltas go to text blocks, appended
//    after the citations and tokens the block started with. Hosted tool results and provider blocks arrive whole.
// 4. Tool-call arguments (and hosted tool call input) are parsed when their block stops; text that is not a JSON
//    object is kept verbatim and listed in `issues`.
// 5. Usage. Each count a usage event sets replaces the one held so far (running totals); unset counts keep theirs.
// 6. Duplicates. Numbered events at or below the last one applied are ignored; a number past a gap is an error.
//    Unnumbered exact repeats of message_start, block_start, block_stop or message_stop/error are ignored.
// 7. Finishing. finish() needs the stream to have ended. After message_stop an open block is an
//    IncompleteStreamError naming it; after error, open blocks are kept as far as they got and listed in `issues`.
//    The message must meet the contract (a normal stop with no block breaks `assistant.content.required`).
// 8. The end names the rest. message_stop gives the stop reason, raw reason and stop sequence; its responseId and
//    model, when set, replace the provenance's; its providerExtra is the message's.

import { clone, create, equals } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate, timestampFromMs, timestampNow } from "@bufbuild/protobuf/wkt";
import {
  type Citation,
  CitationSchema,
  type Content,
  ContentSchema,
  parseJsonObject,
  type TokenLogprob,
} from "./content.js";
import { IncompleteStreamError, StreamProtocolError, ValidationError } from "./errors.js";
import { type ProviderContent, ProviderContentSchema } from "./gen/agentmsg/v1/content_pb.js";
import {
  AssistantMessageSchema,
  type Message,
  MessageSchema,
  type Provenance,
  ProvenanceSchema,
  StopReason,
} from "./gen/agentmsg/v1/message_pb.js";
import {
  type BlockDelta,
  type BlockStart,
  type MessageStart,
  MessageStartSchema,
  type StreamEvent,
  StreamEventSchema,
} from "./gen/agentmsg/v1/stream_pb.js";
import { type Usage, UsageCostSchema, UsageSchema } from "./gen/agentmsg/v1/usage_pb.js";
import { usage as makeUsage, type StopReasonName, stopReason, type UsageInit } from "./messages.js";
import { validate } from "./validation.js";

const INT32_MAX = 2 ** 31 - 1;

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > INT32_MAX) {
    throw ValidationError.single("index", "int32.gte", `a block index is an int32 >= 0, got ${String(index)}`);
  }
}

function event(value: StreamEvent["event"]): StreamEvent {
  return create(StreamEventSchema, { event: value });
}

/** The first event; `messageId` defaults to a new UUID4, `timestamp` to now. */
export function messageStart(
  messageId?: string,
  options: { provenance?: Partial<Omit<Provenance, "$typeName">>; timestamp?: Timestamp | Date | number } = {},
): StreamEvent {
  if (messageId === "") throw ValidationError.single("message_id", "string.min_len", "the message id is empty");
  const at = options.timestamp;
  return event({
    case: "messageStart",
    value: create(MessageStartSchema, {
      messageId: messageId ?? crypto.randomUUID(),
      timestamp:
        at === undefined
          ? timestampNow()
          : at instanceof Date
            ? timestampFromDate(at)
            : typeof at === "number"
              ? timestampFromMs(at)
              : at,
      provenance: options.provenance === undefined ? undefined : create(ProvenanceSchema, options.provenance),
    }),
  });
}

/** Open block `index` with its initial content. */
export function blockStart(index: number, content: Content): StreamEvent {
  checkIndex(index);
  return event({ case: "blockStart", value: { $typeName: "agentmsg.v1.BlockStart", index, content } });
}

function delta(index: number, value: BlockDelta["delta"]): StreamEvent {
  checkIndex(index);
  return event({ case: "blockDelta", value: { $typeName: "agentmsg.v1.BlockDelta", index, delta: value } });
}

/** Append text to text block `index`. */
export function textDelta(index: number, text: string): StreamEvent {
  return delta(index, { case: "text", value: { $typeName: "agentmsg.v1.TextDelta", text } });
}

/** Append reasoning text to thinking block `index`. */
export function thinkingDelta(index: number, text: string): StreamEvent {
  return delta(index, { case: "thinking", value: { $typeName: "agentmsg.v1.ThinkingDelta", text } });
}

/** Append signature text to block `index` (text, thinking or tool call). */
export function signatureDelta(index: number, signature: string): StreamEvent {
  return delta(index, { case: "signature", value: { $typeName: "agentmsg.v1.SignatureDelta", signature } });
}

/** Append a fragment of tool call `index`'s argument text. */
export function argumentsDelta(index: number, fragment: string): StreamEvent {
  return delta(index, { case: "toolCall", value: { $typeName: "agentmsg.v1.ToolCallDelta", arguments: fragment } });
}

/** Close block `index`. */
export function blockStop(index: number): StreamEvent {
  checkIndex(index);
  return event({ case: "blockStop", value: { $typeName: "agentmsg.v1.BlockStop", index } });
}

/** Report token counts so far. */
export function usageUpdate(value: UsageInit | Usage): StreamEvent {
  return event({ case: "usage", value: { $typeName: "agentmsg.v1.UsageUpdate", usage: makeUsage(value) } });
}

/** Add a citation to text block `index`. */
export function citationDelta(index: number, citation: Citation): StreamEvent {
  return delta(index, { case: "citation", value: { $typeName: "agentmsg.v1.CitationDelta", citation } });
}

/** Append token log probabilities to text block `index`. */
export function logprobsDelta(index: number, logprobs: TokenLogprob[]): StreamEvent {
  return delta(index, { case: "logprobs", value: { $typeName: "agentmsg.v1.LogprobsDelta", logprobs } });
}

/** The last event of a complete message (`stopSequence`: the stop sequence that ended it). */
export function messageStop(
  reason?: StopReasonName | StopReason,
  options: {
    stopReasonRaw?: string;
    responseId?: string;
    stopSequence?: string;
    /** The response's keys no field holds, for the message (`AssistantMessage.provider_extra`). */
    providerExtra?: ProviderContent;
    /** The model that finished the message, when not the one message_start named (a fallback). */
    model?: string;
  } = {},
): StreamEvent {
  return event({
    case: "messageStop",
    value: {
      $typeName: "agentmsg.v1.MessageStop",
      stopReason: stopReason(reason),
      stopReasonRaw: options.stopReasonRaw ?? "",
      responseId: options.responseId ?? "",
      stopSequence: options.stopSequence ?? "",
      providerExtra: options.providerExtra,
      model: options.model ?? "",
    },
  });
}

/** The last event of a failed message (`aborted`: the stop reason is ABORT, else ERROR). */
export function streamError(message: string, options: { code?: string; aborted?: boolean } = {}): StreamEvent {
  if (message === "") throw ValidationError.single("message", "string.min_len", "the error message is empty");
  return event({
    case: "error",
    value: {
      $typeName: "agentmsg.v1.StreamError",
      message,
      code: options.code ?? "",
      stopReason: options.aborted ? StopReason.ABORT : StopReason.ERROR,
    },
  });
}

/** A copy of `value` numbered `sequence`. */
export function withSequence(value: StreamEvent, sequence: number | bigint): StreamEvent {
  const copy = clone(StreamEventSchema, value);
  copy.sequence = BigInt(sequence);
  return copy;
}

type BlockKind = NonNullable<Content["kind"]["case"]>;
type DeltaKind = NonNullable<BlockDelta["delta"]["case"]>;

const BLOCK_KINDS: ReadonlySet<string> = new Set([
  "text",
  "thinking",
  "redactedThinking",
  "toolCall",
  "provider",
  "hostedToolCall",
  "hostedToolResult",
]);
// Which delta kinds each block kind takes.
const DELTAS: Readonly<Record<string, ReadonlySet<DeltaKind>>> = {
  text: new Set<DeltaKind>(["text", "signature", "citation", "logprobs"]),
  thinking: new Set<DeltaKind>(["thinking", "signature"]),
  toolCall: new Set<DeltaKind>(["toolCall", "signature"]),
  hostedToolCall: new Set<DeltaKind>(["toolCall", "signature"]),
  redactedThinking: new Set<DeltaKind>(),
  provider: new Set<DeltaKind>(),
  hostedToolResult: new Set<DeltaKind>(),
};

/** A proto arm name as the Python library prints it (`toolCall` -> `tool_call`). */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A block being built: its initial content plus appended fragments. */
class Block {
  readonly kind: BlockKind | "";
  readonly parts: string[] = [];
  readonly signature: string[] = [];
  readonly citations: Citation[] = [];
  readonly logprobs: TokenLogprob[] = [];
  open = true;

  constructor(readonly content: Content) {
    this.kind = content.kind.case ?? "";
  }

  build(): Content {
    const out = clone(ContentSchema, this.content);
    const joined = this.parts.join("");
    const signature = this.signature.join("");
    const kind = out.kind;
    if (kind.case === "text") {
      kind.value.text += joined;
      kind.value.signature += signature;
      kind.value.citations.push(...this.citations.map((c) => clone(CitationSchema, c)));
      kind.value.logprobs.push(...this.logprobs);
    } else if (kind.case === "thinking") {
      kind.value.text += joined;
      kind.value.signature += signature;
    } else if (kind.case === "toolCall") {
      kind.value.arguments += joined;
      kind.value.signature += signature;
    } else if (kind.case === "hostedToolCall") {
      kind.value.input += joined;
      kind.value.signature += signature;
    }
    return out;
  }

  describe(index: number): string {
    if (this.content.kind.case === "toolCall") {
      const call = this.content.kind.value;
      return `block ${index} (tool call '${call.name}', id '${call.id}')`;
    }
    if (this.content.kind.case === "hostedToolCall") {
      const call = this.content.kind.value;
      return `block ${index} (hosted tool call '${call.name}', id '${call.id}')`;
    }
    return `block ${index} (${snake(this.kind)})`;
  }
}

/** Set every count (and cost amount) `update` reports on `target`: the replace-what-is-reported rule. */
function mergeUsage(target: Usage, update: Usage): void {
  for (const key of [
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "reasoningTokens",
    "totalTokens",
    "cacheWrite5mTokens",
    "cacheWrite1hTokens",
  ] as const) {
    const value = update[key];
    if (value !== undefined) target[key] = value;
  }
  // A map merges key by key: a tool's count replaces the one held; tools the update leaves out keep theirs.
  Object.assign(target.hostedToolRequests, update.hostedToolRequests);
  if (update.cost !== undefined) {
    target.cost ??= create(UsageCostSchema);
    for (const key of ["input", "output", "cacheRead", "cacheWrite", "total"] as const) {
      const value = update.cost[key];
      if (value !== undefined) target.cost[key] = value;
    }
  }
}

/**
 * Folds stream events into an assistant message (the rules at the top of this module). `issues` lists what the
 * fold kept but flags (argument text that is not a JSON object, blocks cut short by an error).
 */
export class StreamAccumulator {
  private start: MessageStart | undefined;
  private readonly blocks = new Map<number, Block>();
  private usage: Usage | undefined;
  private end: StreamEvent | undefined;
  private lastSequence: bigint | undefined;
  readonly issues: string[] = [];
  duplicates = 0;

  /** True once message_start was applied. */
  get started(): boolean {
    return this.start !== undefined;
  }

  /** True once message_stop or error was applied. */
  get done(): boolean {
    return this.end !== undefined;
  }

  /** The id from message_start. */
  get messageId(): string | undefined {
    return this.start?.messageId;
  }

  /** Apply one event. */
  add(ev: StreamEvent): void {
    if (ev.sequence !== undefined) {
      const sequence = ev.sequence;
      const last = this.lastSequence;
      if (last !== undefined && sequence <= last) {
        this.duplicates += 1;
        return;
      }
      const expected = last === undefined ? 0n : last + 1n;
      if (sequence !== expected) {
        throw new StreamProtocolError(
          `event ${sequence} arrived after ${last ?? "None"}: events ${expected}..${sequence - 1n} are missing`,
        );
      }
      this.lastSequence = sequence;
    }
    const e = ev.event;
    switch (e.case) {
      case "blockDelta":
        this.delta(e.value);
        return;
      case "blockStart":
        this.blockStart(e.value);
        return;
      case "blockStop":
        this.blockStop(e.value.index);
        return;
      case "messageStart":
        this.messageStart(e.value);
        return;
      case "usage":
        this.requireOpen("usage");
        this.usage ??= create(UsageSchema);
        if (e.value.usage !== undefined) mergeUsage(this.usage, e.value.usage);
        return;
      case "messageStop":
      case "error":
        if (this.end !== undefined && equals(StreamEventSchema, this.end, ev)) {
          this.duplicates += 1;
          return;
        }
        this.requireOpen(snake(e.case));
        this.end = ev;
        return;
      default: {
        const unknown = (e as { case?: string }).case;
        throw new StreamProtocolError(`unknown stream event ${unknown === undefined ? "None" : `'${unknown}'`}`);
      }
    }
  }

  /** Apply events in order; returns this. */
  extend(events: Iterable<StreamEvent>): this {
    for (const ev of events) this.add(ev);
    return this;
  }

  private requireOpen(what: string): void {
    if (this.start === undefined) throw new StreamProtocolError(`${what} before message_start`);
    if (this.end !== undefined) {
      throw new StreamProtocolError(`${what} after the stream ended (${snake(this.end.event.case ?? "")})`);
    }
  }

  private messageStart(start: MessageStart): void {
    if (this.start !== undefined) {
      if (equals(MessageStartSchema, this.start, start)) {
        this.duplicates += 1;
        return;
      }
      throw new StreamProtocolError("a second message_start in one stream");
    }
    this.start = start;
  }

  private blockStart(start: BlockStart): void {
    const index = start.index;
    this.requireOpen(`block_start for block ${index}`);
    const content = start.content ?? create(ContentSchema);
    const existing = this.blocks.get(index);
    if (existing !== undefined) {
      const fresh =
        existing.parts.length === 0 &&
        existing.signature.length === 0 &&
        existing.citations.length === 0 &&
        existing.logprobs.length === 0;
      if (equals(ContentSchema, existing.content, content) && fresh) {
        this.duplicates += 1;
        return;
      }
      throw new StreamProtocolError(`block ${index} started twice`);
    }
    const kind = content.kind.case;
    if (kind === undefined || !BLOCK_KINDS.has(kind)) {
      throw new StreamProtocolError(
        `block ${index}: an assistant message cannot carry ${kind === undefined ? "unset" : snake(kind)} content`,
      );
    }
    this.blocks.set(index, new Block(clone(ContentSchema, content)));
  }

  private delta(d: BlockDelta): void {
    const block = this.blocks.get(d.index);
    if (block === undefined) {
      this.requireOpen("block_delta");
      throw new StreamProtocolError(`delta for block ${d.index} before its block_start`);
    }
    if (!block.open) throw new StreamProtocolError(`delta for ${block.describe(d.index)} after its block_stop`);
    if (this.end !== undefined) throw new StreamProtocolError(`delta for block ${d.index} after the stream ended`);
    const kind = d.delta.case;
    if (kind === undefined || !(DELTAS[block.kind]?.has(kind) ?? false)) {
      throw new StreamProtocolError(
        `a ${kind === undefined ? "unset" : snake(kind)} delta cannot go to ${block.describe(d.index)}`,
      );
    }
    switch (d.delta.case) {
      case "text":
      case "thinking":
        block.parts.push(d.delta.value.text);
        break;
      case "toolCall":
        block.parts.push(d.delta.value.arguments);
        break;
      case "signature":
        block.signature.push(d.delta.value.signature);
        break;
      case "citation":
        block.citations.push(d.delta.value.citation ?? create(CitationSchema));
        break;
      case "logprobs":
        block.logprobs.push(...d.delta.value.logprobs);
        break;
    }
  }

  private blockStop(index: number): void {
    const block = this.blocks.get(index);
    if (block === undefined) {
      this.requireOpen("block_stop");
      throw new StreamProtocolError(`block_stop for block ${index}, which never started`);
    }
    if (!block.open) {
      this.duplicates += 1;
      return;
    }
    this.requireOpen(`block_stop for block ${index}`);
    block.open = false;
    if (block.content.kind.case === "toolCall") {
      const argumentText = block.content.kind.value.arguments + block.parts.join("");
      const [, error] = parseJsonObject(argumentText);
      if (error !== undefined) {
        this.issues.push(`${block.describe(index)}: arguments kept verbatim, not a JSON object: ${error}`);
      }
    } else if (block.content.kind.case === "hostedToolCall") {
      const [, error] = parseJsonObject(block.content.kind.value.input + block.parts.join(""));
      if (error !== undefined) {
        this.issues.push(`${block.describe(index)}: input kept verbatim, not a JSON object: ${error}`);
      }
    }
  }

  private openBlocks(): number[] {
    return this.sortedIndexes().filter((i) => this.blocks.get(i)?.open === true);
  }

  private sortedIndexes(): number[] {
    return [...this.blocks.keys()].sort((a, b) => a - b);
  }

  /** The finished message (rule 7): throws IncompleteStreamError when it is not finished. */
  finish(): Message {
    if (this.start === undefined) throw new IncompleteStreamError("the stream never started (no message_start)", []);
    if (this.end === undefined) {
      throw new IncompleteStreamError("the stream has not ended (no message_stop or error)", this.openBlocks());
    }
    const open = this.openBlocks();
    const failed = this.end.event.case === "error";
    if (open.length > 0 && !failed) {
      const names = open.map((i) => this.blocks.get(i)?.describe(i)).join(", ");
      throw new IncompleteStreamError(`the message stopped with ${names} still open (no block_stop)`, open);
    }
    for (const i of open) {
      this.issues.push(`${this.blocks.get(i)?.describe(i)} was cut short by the error and kept as far as it got`);
    }
    return this.build(true);
  }

  /** The message so far, open blocks included, unvalidated (for live display). */
  snapshot(): Message {
    return this.build(false);
  }

  private build(check: boolean): Message {
    const start = this.start;
    const out = create(MessageSchema, {
      id: start?.messageId ?? crypto.randomUUID(),
      timestamp: start?.timestamp ?? timestampNow(),
    });
    const body = create(AssistantMessageSchema);
    if (start?.provenance !== undefined) body.provenance = clone(ProvenanceSchema, start.provenance);
    body.content = this.sortedIndexes().map((i) => (this.blocks.get(i) as Block).build());
    if (this.usage !== undefined) body.usage = clone(UsageSchema, this.usage);
    const end = this.end?.event;
    if (end?.case === "messageStop") {
      body.stopReason = end.value.stopReason;
      body.stopReasonRaw = end.value.stopReasonRaw;
      body.stopSequence = end.value.stopSequence;
      if (end.value.responseId !== "") {
        body.provenance ??= create(ProvenanceSchema);
        body.provenance.responseId = end.value.responseId;
      }
      if (end.value.model !== "") {
        body.provenance ??= create(ProvenanceSchema);
        body.provenance.model = end.value.model;
      }
      if (end.value.providerExtra !== undefined)
        body.providerExtra = clone(ProviderContentSchema, end.value.providerExtra);
    } else if (end?.case === "error") {
      body.stopReason = end.value.stopReason || StopReason.ERROR;
      body.stopReasonRaw = end.value.code;
      body.error = end.value.message;
    }
    out.role = { case: "assistant", value: body };
    if (check) validate(MessageSchema, out);
    return out;
  }
}

/** Fold a whole stream into its message (see {@link StreamAccumulator}). */
export function fold(events: Iterable<StreamEvent>): Message {
  return new StreamAccumulator().extend(events).finish();
}

function split(value: string, size: number | undefined): string[] {
  if (value === "") return [];
  if (size === undefined) return [value];
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size) pieces.push(value.slice(i, i + size));
  return pieces;
}

/**
 * Replay a finished assistant message as the events that build it (to relay it to a live viewer). Text, reasoning
 * and arguments go in pieces of `chunkSize` characters (whole when undefined); `fold(eventsFromMessage(m))` equals m.
 */
export function eventsFromMessage(msg: Message, options: { chunkSize?: number } = {}): StreamEvent[] {
  if (msg.role.case !== "assistant") {
    throw ValidationError.single("message", "type", `expected an assistant message, got ${msg.role.case ?? "none"}`);
  }
  const size = options.chunkSize;
  if (size !== undefined && !(Number.isInteger(size) && size >= 1)) {
    throw ValidationError.single("chunk_size", "gte", "chunk_size must be at least 1");
  }
  const body = msg.role.value;
  const events: StreamEvent[] = [
    event({
      case: "messageStart",
      value: create(MessageStartSchema, {
        messageId: msg.id,
        timestamp: msg.timestamp,
        provenance: body.provenance === undefined ? undefined : clone(ProvenanceSchema, body.provenance),
      }),
    }),
  ];
  body.content.forEach((content, index) => {
    const opening = clone(ContentSchema, content);
    const pieces: StreamEvent[] = [];
    let signature = "";
    const k = opening.kind;
    if (k.case === "text") {
      signature = k.value.signature;
      pieces.push(...split(k.value.text, size).map((t) => textDelta(index, t)));
      if (k.value.logprobs.length > 0) pieces.push(logprobsDelta(index, k.value.logprobs));
      pieces.push(...k.value.citations.map((c) => citationDelta(index, c)));
      k.value.text = "";
      k.value.signature = "";
      k.value.citations = [];
      k.value.logprobs = [];
    } else if (k.case === "thinking") {
      signature = k.value.signature;
      pieces.push(...split(k.value.text, size).map((t) => thinkingDelta(index, t)));
      k.value.text = "";
      k.value.signature = "";
    } else if (k.case === "toolCall") {
      signature = k.value.signature;
      pieces.push(...split(k.value.arguments, size).map((t) => argumentsDelta(index, t)));
      k.value.arguments = "";
      k.value.signature = "";
    } else if (k.case === "hostedToolCall") {
      signature = k.value.signature;
      pieces.push(...split(k.value.input, size).map((t) => argumentsDelta(index, t)));
      k.value.input = "";
      k.value.signature = "";
    }
    if (signature !== "") pieces.push(signatureDelta(index, signature));
    events.push(blockStart(index, opening), ...pieces, blockStop(index));
  });
  if (body.usage !== undefined) events.push(usageUpdate(body.usage));
  if (body.error !== "") {
    events.push(
      event({
        case: "error",
        value: {
          $typeName: "agentmsg.v1.StreamError",
          message: body.error,
          stopReason: body.stopReason,
          code: body.stopReasonRaw,
        },
      }),
    );
  } else {
    events.push(
      event({
        case: "messageStop",
        value: {
          $typeName: "agentmsg.v1.MessageStop",
          stopReason: body.stopReason,
          stopReasonRaw: body.stopReasonRaw,
          responseId: "",
          stopSequence: body.stopSequence,
          providerExtra: body.providerExtra,
          model: "",
        },
      }),
    );
  }
  return events;
}

export type { StreamEvent };
