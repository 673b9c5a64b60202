// The client of the agentmsg service (SessionService, ToolService and ConvertService) over any transport: BaseClient holds every
// call, and each entry gives it its connection: client.ts the Node one (gRPC over HTTP/2, plus PublishStream, a
// client stream), webClient.ts the browser's (Connect or gRPC-Web over fetch). Every failure is thrown as the
// agentmsg error class the server raised (ValidationError with its violations, NotFoundError...), or the class of
// the status the transport itself produced (DeadlineExceededError, UnavailableError, CancelledError for an aborted
// signal).

import type { JsonValue } from "@bufbuild/protobuf";
import { type CallOptions, type Client as ConnectClient, createClient } from "@connectrpc/connect";
import { type Backoff, backoffDelay, type Connection, sleep } from "./connection.js";
import {
  type ApprovalOptions,
  type Content,
  type ToolCallContent,
  type ToolResultContent,
  toolApproval,
} from "./content.js";
import { CancelledError, ServiceError, UnavailableError, ValidationError } from "./errors.js";
import {
  ConversionFormat,
  type ConversionLoss as ConversionLossPb,
  ConvertService,
} from "./gen/agentmsg/v1/convert_service_pb.js";
import type { Message, ProviderState } from "./gen/agentmsg/v1/message_pb.js";
import { type SessionInfo as SessionInfoPb, SessionService } from "./gen/agentmsg/v1/session_service_pb.js";
import type { StreamEvent } from "./gen/agentmsg/v1/stream_pb.js";
import type { ToolDefinition } from "./gen/agentmsg/v1/tool_pb.js";
import { ToolService } from "./gen/agentmsg/v1/tool_service_pb.js";
import { userMessage } from "./messages.js";
import { fromCallError, isTransient } from "./status.js";

/** A message from a session's log, with its offset. */
export interface Logged {
  readonly kind: "logged";
  readonly offset: bigint;
  readonly message: Message;
}

/** A stream event of a message being generated, relayed live (not logged). */
export interface Live {
  readonly kind: "live";
  readonly streamId: string;
  readonly event: StreamEvent;
}

/** A session: its id, last offset and first / last append times. */
export interface SessionInfo {
  readonly sessionId: string;
  readonly lastOffset: bigint;
  readonly createTime: Date | undefined;
  readonly updateTime: Date | undefined;
}

/** What `deleteSession` did: whether the session existed, and how many messages it held. */
export interface DeletedSession {
  readonly deleted: boolean;
  readonly deletedMessages: bigint;
}

/** A tool and the runner serving it. */
export interface RegisteredTool {
  readonly tool: ToolDefinition;
  readonly runnerName: string;
  readonly runnerId: string;
}

/** Per-call options: a deadline and an AbortSignal (aborting cancels the call; it throws CancelledError). */
export interface CallControl {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What every client takes, whatever its transport. */
export interface ClientDefaults {
  /** The default deadline of every unary call, in milliseconds (30 s). */
  timeoutMs?: number;
  /** Retries of appends and reads while the service is unavailable (an append is idempotent: its message id dedupes it). */
  retry?: Backoff;
}

export interface SubscribeOptions {
  /** Start after this offset (0: from the beginning). */
  after?: bigint | number;
  /** Also relay the live stream events of messages being generated. */
  liveEvents?: boolean;
  maxBatch?: number;
  signal?: AbortSignal;
  /** How to reconnect when the connection drops (the subscription resumes after the last offset it gave). */
  reconnect?: Backoff;
  /** Called before each reconnect with the offset it resumes after. */
  onReconnect?: (after: bigint, error: unknown) => void;
}

/** A format's name, as `agentmsg convert` and the Python client's `convert_to` / `convert_from` take it. */
export type ConversionFormatName =
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "gemini"
  | "adaline"
  | "seed1"
  | "langchain"
  | "ag-ui"
  | "ai-sdk";

const CONVERSION_FORMATS: Record<ConversionFormatName, ConversionFormat> = {
  "openai-chat": ConversionFormat.OPENAI_CHAT,
  "openai-responses": ConversionFormat.OPENAI_RESPONSES,
  anthropic: ConversionFormat.ANTHROPIC,
  gemini: ConversionFormat.GEMINI,
  adaline: ConversionFormat.ADALINE,
  seed1: ConversionFormat.SEED1,
  langchain: ConversionFormat.LANGCHAIN,
  "ag-ui": ConversionFormat.AG_UI,
  "ai-sdk": ConversionFormat.AI_SDK,
};

/** One thing a conversion left out (the Python `Loss`): where in the input, what, and why. */
export interface ConversionLoss {
  readonly path: string;
  readonly what: string;
  readonly reason: string;
}

/**
 * Messages the server converted (`convertTo`): the payload as JSON text, exactly as the Python converter's output is
 * written (`json.dumps(payload, ensure_ascii=False, separators=(",", ":"))`: its key order, its numbers), what the
 * format could not hold, and the tool-call ids it rewrote (written id to original; give it to `convertFrom`).
 */
export interface Converted {
  readonly json: string;
  readonly losses: ConversionLoss[];
  readonly idMap: Record<string, string>;
}

/** A payload the server read (`convertFrom`): the messages, and what they could not hold. */
export interface ConvertedMessages {
  readonly messages: Message[];
  readonly losses: ConversionLoss[];
}

/** What `convertTo` converts: messages as given, or a session's context for a leaf (default: its last entry). */
export type ConversionSource = Message[] | { sessionId: string; leaf?: string };

function conversionFormat(format: ConversionFormatName | ConversionFormat): ConversionFormat {
  if (typeof format === "number") return format;
  const value = CONVERSION_FORMATS[format];
  if (value === undefined) {
    const names = Object.keys(CONVERSION_FORMATS).join(", ");
    throw ValidationError.single("format", "format", `${JSON.stringify(format)} is not one of: ${names}`);
  }
  return value;
}

function lossesOf(losses: ConversionLossPb[]): ConversionLoss[] {
  return losses.map((loss) => ({ path: loss.path, what: loss.what, reason: loss.reason }));
}

function date(ts: { seconds: bigint; nanos: number } | undefined): Date | undefined {
  return ts === undefined ? undefined : new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
}

function callOf(call: Content | ToolCallContent): ToolCallContent {
  if ("$typeName" in call && call.$typeName === "agentmsg.v1.ToolCallContent") return call;
  const content = call as Content;
  if (content.kind.case !== "toolCall") {
    throw ValidationError.single("call", "type", `expected a tool call, got ${content.kind.case ?? "empty"} content`);
  }
  return content.kind.value;
}

// The reasons a subscription resumes on a new connection instead of failing: the server went away or restarted
// (UNAVAILABLE), cancelled the stream as it shut down (CANCELLED), or the stream broke with no status of the
// service's (UNKNOWN / INTERNAL from a reset connection: a plain ServiceError). Bad requests, auth and limits fail.
function resumable(error: unknown): boolean {
  if (isTransient(error) || error instanceof CancelledError) return true;
  return error instanceof ServiceError && error.constructor === ServiceError;
}

/**
 * The agentmsg service client over `connection` (see the module comment): what `Client` is in Node and in the
 * browser, each with its own transport. `close()` when done.
 */
export class BaseClient {
  readonly timeoutMs: number;
  protected readonly sessions: ConnectClient<typeof SessionService>;
  protected readonly tools: ConnectClient<typeof ToolService>;
  protected readonly conversions: ConnectClient<typeof ConvertService>;
  private readonly connection: Connection;
  private readonly retry: Backoff;

  constructor(connection: Connection, options: ClientDefaults = {}) {
    this.connection = connection;
    this.sessions = createClient(SessionService, this.connection.transport);
    this.tools = createClient(ToolService, this.connection.transport);
    this.conversions = createClient(ConvertService, this.connection.transport);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retry = options.retry ?? { maxAttempts: 4 };
  }

  /** Close the connection (ends every call on it). */
  close(): void {
    this.connection.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  protected options(control: CallControl = {}): CallOptions {
    return { timeoutMs: control.timeoutMs ?? this.timeoutMs, signal: control.signal };
  }

  protected async unary<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw fromCallError(error);
    }
  }

  // An idempotent call (an append, whose message id dedupes it, or a read), retried with backoff while the service
  // is unavailable.
  private async retried<T>(run: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    const attempts = this.retry.maxAttempts ?? 4;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.unary(run);
      } catch (error) {
        if (!isTransient(error) || attempt >= attempts || signal?.aborted) throw error;
        await sleep(backoffDelay(attempt, this.retry), signal);
      }
    }
  }

  /** Append a message; its offset (the same offset again when the message was already appended). */
  async append(sessionId: string, message: Message, control: CallControl = {}): Promise<bigint> {
    const response = await this.retried(
      () => this.sessions.appendMessage({ sessionId, message }, this.options(control)),
      control.signal,
    );
    return response.offset;
  }

  /** Append messages atomically, in order; their offsets. */
  async appendMany(sessionId: string, messages: Message[], control: CallControl = {}): Promise<bigint[]> {
    const response = await this.retried(
      () => this.sessions.appendMessages({ sessionId, messages }, this.options(control)),
      control.signal,
    );
    return response.offsets;
  }
  /**
   * Decide on a tool call that waits for approval: append a user message holding the decision (`approve` /
   * `deny`) to the call's session. The service refuses a decision on a call the session does not hold.
   */
  async decide(
    sessionId: string,
    callId: string,
    approved: boolean,
    options: ApprovalOptions = {},
    control: CallControl = {},
  ): Promise<bigint> {
    return this.append(sessionId, userMessage([toolApproval(callId, approved, options)]), control);
  }

  /** Every logged message after `after`, page by page. */
  async *listMessages(
    sessionId: string,
    options: { after?: bigint | number; pageSize?: number } & CallControl = {},
  ): AsyncGenerator<Logged> {
    let after = BigInt(options.after ?? 0);
    for (;;) {
      const response = await this.retried(
        () =>
          this.sessions.listMessages(
            { sessionId, afterOffset: after, pageSize: options.pageSize ?? 100 },
            this.options(options),
          ),
        options.signal,
      );
      for (const logged of response.messages) {
        if (logged.message !== undefined) yield { kind: "logged", offset: logged.offset, message: logged.message };
      }
      if (response.nextAfterOffset === 0n) return;
      after = response.nextAfterOffset;
    }
  }

  /**
   * The log after `after`, then live, until `signal` aborts. When the connection drops (the server restarts, the
   * network breaks) it reconnects with backoff and resumes after the last offset it gave: nothing is lost or
   * repeated. With `liveEvents`, a subscription (new or reconnected) starts with the events that rebuild each message
   * still being generated (live catch-up): after a reconnect, a stream you were folding starts again with its
   * `messageStart`, so fold it afresh (`onReconnect` tells you when).
   */
  async *subscribe(sessionId: string, options: SubscribeOptions = {}): AsyncGenerator<Logged | Live> {
    let after = BigInt(options.after ?? 0);
    const signal = options.signal;
    const reconnect = options.reconnect ?? {};
    const attempts = reconnect.maxAttempts ?? 20;
    let failures = 0;
    for (;;) {
      let failure: unknown;
      try {
        const stream = this.sessions.subscribe(
          { sessionId, afterOffset: after, liveEvents: options.liveEvents ?? false, maxBatch: options.maxBatch ?? 0 },
          { signal },
        );
        for await (const response of stream) {
          failures = 0;
          for (const logged of response.messages) {
            after = logged.offset;
            if (logged.message !== undefined) yield { kind: "logged", offset: logged.offset, message: logged.message };
          }
          const live = response.liveEvent;
          if (live?.event !== undefined) yield { kind: "live", streamId: live.streamId, event: live.event };
        }
        failure = new UnavailableError("the server ended the subscription");
      } catch (error) {
        if (signal?.aborted) return;
        failure = fromCallError(error);
        if (!resumable(failure)) throw failure;
      }
      if (signal?.aborted) return;
      failures += 1;
      if (failures > attempts) throw failure;
      await sleep(backoffDelay(failures, reconnect), signal);
      if (signal?.aborted) return;
      options.onReconnect?.(after, failure);
    }
  }

  /** Go back to `fromEntryId`, leaving `summary` of the branch being left; the summary entry. */
  async branch(
    sessionId: string,
    fromEntryId: string,
    summary: string,
    options: { entryId?: string } & CallControl = {},
  ): Promise<Logged> {
    const response = await this.unary(() =>
      this.sessions.branchSession(
        { sessionId, fromEntryId, summary, entryId: options.entryId ?? "" },
        this.options(options),
      ),
    );
    return { kind: "logged", offset: response.offset, message: response.entry as Message };
  }

  /** Compact the history up to the session's leaf; the compaction entry. */
  async compact(
    sessionId: string,
    summary: string,
    options: {
      firstKeptEntryId?: string;
      tokensBefore?: bigint | number;
      providerState?: Omit<ProviderState, "$typeName">;
      entryId?: string;
    } & CallControl = {},
  ): Promise<Logged> {
    const response = await this.unary(() =>
      this.sessions.compactSession(
        {
          sessionId,
          summary,
          firstKeptEntryId: options.firstKeptEntryId ?? "",
          tokensBefore: options.tokensBefore === undefined ? undefined : BigInt(options.tokensBefore),
          providerState: options.providerState,
          entryId: options.entryId ?? "",
        },
        this.options(options),
      ),
    );
    return { kind: "logged", offset: response.offset, message: response.entry as Message };
  }

  /**
   * The messages a model sees for the path to `leaf` (default: the last entry). A context too large for one reply
   * comes in parts (each pinned to the same leaf); they are all read here.
   */
  async buildContext(sessionId: string, options: { leaf?: string } & CallControl = {}): Promise<Message[]> {
    const found: Message[] = [];
    let pageToken = "";
    for (;;) {
      const response = await this.retried(
        () =>
          this.sessions.buildContext({ sessionId, leafEntryId: options.leaf ?? "", pageToken }, this.options(options)),
        options.signal,
      );
      found.push(...response.messages);
      pageToken = response.nextPageToken;
      if (pageToken === "") return found;
    }
  }

  /**
   * Delete a session and all its messages, in one step (whole or gone). Deleting a session that does not exist is
   * not an error: `deleted` is false. Its subscribers end with `NotFoundError`; the id may be used again (a new
   * session from offset 1). Retried while the service is unavailable, like the other idempotent calls: a retry
   * after a delete that did happen answers `deleted: false`.
   */
  async deleteSession(sessionId: string, control: CallControl = {}): Promise<DeletedSession> {
    const response = await this.retried(
      () => this.sessions.deleteSession({ sessionId }, this.options(control)),
      control.signal,
    );
    return { deleted: response.deleted, deletedMessages: response.deletedMessages };
  }

  /** Every session, ordered by id. */
  async listSessions(options: { pageSize?: number } & CallControl = {}): Promise<SessionInfo[]> {
    const found: SessionInfo[] = [];
    let pageToken = "";
    for (;;) {
      const response = await this.retried(
        () => this.sessions.listSessions({ pageSize: options.pageSize ?? 100, pageToken }, this.options(options)),
        options.signal,
      );
      found.push(
        ...response.sessions.map((info: SessionInfoPb) => ({
          sessionId: info.sessionId,
          lastOffset: info.lastOffset,
          createTime: date(info.createTime),
          updateTime: date(info.updateTime),
        })),
      );
      pageToken = response.nextPageToken;
      if (pageToken === "") return found;
    }
  }

  /**
   * Messages, or a session's context for a leaf, in `format` (`"anthropic"`, `"openai-chat"`...), converted by the
   * server as the Python converters convert in-process: the same JSON text and losses. `strict`: a ValidationError
   * (one violation per loss, rule `conversion.strict`) instead of any loss; `response`: the provider's response
   * object for one assistant message. Retried while the service is unavailable, like the other reads.
   */
  async convertTo(
    format: ConversionFormatName | ConversionFormat,
    source: ConversionSource,
    options: { strict?: boolean; response?: boolean } & CallControl = {},
  ): Promise<Converted> {
    const input = Array.isArray(source)
      ? { source: { case: "messages" as const, value: { messages: source } } }
      : {
          source: { case: "session" as const, value: { sessionId: source.sessionId, leafEntryId: source.leaf ?? "" } },
        };
    const request = {
      format: conversionFormat(format),
      input,
      strict: options.strict ?? false,
      response: options.response ?? false,
    };
    const response = await this.retried(
      () => this.conversions.toProvider(request, this.options(options)),
      options.signal,
    );
    return { json: response.json, losses: lossesOf(response.losses), idMap: { ...response.idMap } };
  }

  /**
   * A `format` payload (JSON text, or a value written as JSON) read by the server as agentmsg messages, as the Python
   * readers read it. `idMap`: a `convertTo` answer's, to restore the tool-call ids it rewrote; `passThroughUnknown`:
   * keep (true) or refuse provider blocks agentmsg has no type for (not given: the reader's default, kept).
   */
  async convertFrom(
    format: ConversionFormatName | ConversionFormat,
    payload: string | JsonValue,
    options: { response?: boolean; idMap?: Record<string, string>; passThroughUnknown?: boolean } & CallControl = {},
  ): Promise<ConvertedMessages> {
    const request = {
      format: conversionFormat(format),
      json: typeof payload === "string" ? payload : JSON.stringify(payload),
      response: options.response ?? false,
      idMap: options.idMap ?? {},
      passThroughUnknown: options.passThroughUnknown,
    };
    const response = await this.retried(
      () => this.conversions.fromProvider(request, this.options(options)),
      options.signal,
    );
    return { messages: response.messages, losses: lossesOf(response.losses) };
  }

  /** The tools runners serve now. */
  async listTools(control: CallControl = {}): Promise<RegisteredTool[]> {
    const response = await this.retried(() => this.tools.listTools({}, this.options(control)), control.signal);
    return response.tools.flatMap((t) =>
      t.tool === undefined ? [] : [{ tool: t.tool, runnerName: t.runnerName, runnerId: t.runnerId }],
    );
  }

  /**
   * Run a tool call on its runner, within `timeoutMs` (DeadlineExceededError past it); aborting `signal` cancels
   * the call, and the service tells the runner to stop. `control.sessionId` names the session the call belongs to:
   * a tool that requires approval waits there for a person's decision (the token needs the session's scope), and
   * is refused without one.
   */
  async callTool(
    call: Content | ToolCallContent,
    control: CallControl & { sessionId?: string } = {},
  ): Promise<ToolResultContent> {
    const request = { call: callOf(call), sessionId: control.sessionId ?? "" };
    const response = await this.unary(() => this.tools.callTool(request, this.options(control)));
    if (response.result === undefined) throw new ValidationError([], "response", "the server returned no result");
    return response.result;
  }
}
