// ToolRunner: serve TypeScript functions as tools through the agentmsg service, the protocol of the Python runner
// (src/agentmsg/service/runner.py): open ToolService.ServeTools, send RegisterTools, then answer each RunToolCall
// with a ToolCallOutcome carrying the call's handle; a CancelToolCall (the caller cancelled, or its deadline
// passed) aborts the handler's AbortSignal. When the connection drops, the runner reconnects with backoff and
// registers again. Each call is an OpenTelemetry span (`execute_tool {name}`, see tracing.ts), the child of the
// server's span, once the application registers an OpenTelemetry SDK.
//
// It stops gracefully (on SIGTERM or SIGINT with `handleSignals`, when `signal` aborts, or on drain()): it sends
// DrainTools (the service takes its tools off and sends no new call), gives the calls in flight `graceMs` (10 s by
// default), answers those still running as cancelled (their handlers' AbortSignal aborts), closes its side of the
// stream (which unregisters it), and flushes the registered tracer provider. A second signal ends the grace at once.
//
//   const runner = new ToolRunner("127.0.0.1:50051", { name: "files" });
//   runner.tool("read_file", { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
//     async ({ path }, { signal }) => readFile(String(path), { encoding: "utf8", signal }));
//   await runner.serve({ handleSignals: true });

import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { type Backoff, backoffDelay, sleep } from "./connection.js";
import {
  type Content,
  type ToolCallContent,
  type ToolKindName,
  type ToolResultContent,
  toolCallArgumentsError,
  toolKind,
  toolResult,
} from "./content.js";
import { UnavailableError, ValidationError } from "./errors.js";
import { type ToolDefinition, ToolDefinitionSchema } from "./gen/agentmsg/v1/tool_pb.js";
import { type ServeToolsRequest, ServeToolsRequestSchema, ToolService } from "./gen/agentmsg/v1/tool_service_pb.js";
import { fromCallError, isTransient } from "./status.js";
import { flushTracing, traceToolCall } from "./tracing.js";
import { type ConnectionOptions, connect } from "./transport.js";
import { validate } from "./validation.js";

/** What a handler gets besides its arguments: the call, and a signal aborted when the call is cancelled. */
export interface ToolContext {
  readonly call: ToolCallContent;
  readonly signal: AbortSignal;
}

/**
 * What a handler returns: a string (the result's text), a content block or a list of blocks, a ToolResultContent
 * (or the block `toolResult(...)` makes, sent as that result),
 * or any JSON value (sent as JSON text). A thrown error becomes an `isError` result with its message.
 */
export type ToolReturn = string | Content | Content[] | ToolResultContent | JsonValue;
export type ToolHandler = (args: JsonObject, context: ToolContext) => ToolReturn | Promise<ToolReturn>;

export interface ToolOptions {
  description?: string;
  kind?: ToolKindName;
  /** A human-readable name (MCP `title`). */
  title?: string;
  /** The JSON Schema of the tool's structured output. */
  outputSchema?: JsonObject;
  /** Hints for the caller (MCP tool annotations); left out means not stated. */
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  /** Ask providers to hold the model to the schema exactly. */
  strict?: boolean;
  /**
   * The service runs a call of the tool only after a person approves it (an `approval` block for the call appended
   * to the call's session); a denied call gets an error result naming who denied it and why, and the handler does
   * not run.
   */
  requiresApproval?: boolean;
}

export interface RunnerOptions extends ConnectionOptions {
  /** The runner's name, shown by ListTools. */
  name?: string;
  /** Reconnecting after the connection drops; `maxAttempts` consecutive failures end serve() with the error. */
  reconnect?: Backoff;
  /** How long a stopping runner gives its calls in flight before it answers them cancelled (default 10 000 ms). */
  graceMs?: number;
}

export interface ServeOptions {
  /** Aborting it stops the runner gracefully (as drain() does). */
  signal?: AbortSignal;
  /** SIGTERM and SIGINT stop the runner gracefully while it serves; a second one ends the grace at once. */
  handleSignals?: boolean;
}

/** The grace a runner gives its calls in flight when it stops, unless `RunnerOptions.graceMs` says otherwise. */
export const DEFAULT_GRACE_MS = 10_000;
const CLOSE_WAIT_MS = 5_000; // for the last outcomes to go out and the service to end the stream after a drain
const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

function checkedGrace(graceMs: number): number {
  if (typeof graceMs !== "number" || !(graceMs >= 0)) {
    throw ValidationError.single("graceMs", "gte", `must be a number of milliseconds >= 0, not ${String(graceMs)}`);
  }
  return graceMs;
}

/** A stop asked of a serving runner (one per serve()): its grace, which a later ask may shorten, never lengthen. */
class Stopping {
  asked = false;
  graceMs = 0;
  /** Aborted when the stop is asked (ends a backoff sleep). */
  readonly askedSignal: AbortSignal;
  readonly ended: Promise<void>;
  end!: () => void;
  private readonly askedController = new AbortController();
  private askedAt: number | undefined;
  private deadline: number | undefined;
  private wake: (() => void)[] = [];

  constructor() {
    this.askedSignal = this.askedController.signal;
    this.ended = new Promise((resolve) => {
      this.end = resolve;
    });
  }

  ask(graceMs: number): void {
    const now = Date.now();
    this.askedAt ??= now;
    const deadline = now + Math.max(graceMs, 0);
    if (this.deadline === undefined || deadline < this.deadline) {
      this.deadline = deadline;
      this.graceMs = deadline - this.askedAt; // what the calls in flight get, from the first ask
    }
    this.asked = true;
    this.askedController.abort();
    for (const wake of this.wake.splice(0)) wake();
  }

  /** Wait until `promise` settles or the grace ends (a later ask may end it sooner): whether it settled. */
  async until(promise: Promise<unknown>): Promise<boolean> {
    let settled = false;
    const watched = promise.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    while (!settled) {
      const remaining = (this.deadline ?? Date.now()) - Date.now();
      if (remaining <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const changed = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, remaining);
        this.wake.push(resolve);
      });
      await Promise.race([watched, changed]);
      clearTimeout(timer);
    }
    return true;
  }
}

/** A call the runner is running: its handler's controller, and whether a drain's grace ran out on it. */
interface Running {
  readonly controller: AbortController;
  /** Settles once the outcome is queued (or dropped, after the service's cancel). */
  finished: Promise<void>;
  /** Answer it cancelled now, and abort its handler. */
  cut: () => void;
  isCut: boolean;
}

interface Tool {
  readonly definition: ToolDefinition;
  readonly handler: ToolHandler;
}

function isContent(value: unknown): value is Content {
  return (
    typeof value === "object" && value !== null && (value as { $typeName?: string }).$typeName === "agentmsg.v1.Content"
  );
}

function isResult(value: unknown): value is ToolResultContent {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { $typeName?: string }).$typeName === "agentmsg.v1.ToolResultContent"
  );
}

function errorResult(call: ToolCallContent, message: string): ToolResultContent {
  return resultOf(toolResult(call.id, message, { isError: true, name: call.name }));
}

function resultOf(content: Content): ToolResultContent {
  if (content.kind.case !== "toolResult") throw new ValidationError([], "result", "not a tool result");
  return content.kind.value;
}

function toResult(call: ToolCallContent, value: ToolReturn): ToolResultContent {
  const options = { name: call.name, index: call.index };
  if (isResult(value)) return value.id === call.id ? value : { ...value, id: call.id };
  if (typeof value === "string") return resultOf(toolResult(call.id, value, options));
  // A block made by `toolResult(...)` is the result itself, not content to put inside a new one.
  if (isContent(value) && value.kind.case === "toolResult") return toResult(call, value.kind.value);
  if (isContent(value)) return resultOf(toolResult(call.id, [value], options));
  if (Array.isArray(value) && value.length > 0 && value.every(isContent)) {
    return resultOf(toolResult(call.id, value as Content[], options));
  }
  return resultOf(toolResult(call.id, JSON.stringify(value ?? null), options));
}

/** A simple push queue read as an async iterable: the requests of the ServeTools stream. */
class Outbox<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}

/** Serves TypeScript functions as tools through an agentmsg server (see the module comment). */
export class ToolRunner {
  readonly name: string;
  /** The id the service gave this runner at its last registration. */
  runnerId: string | undefined;
  private readonly tools = new Map<string, Tool>();
  /** How long a stopping runner gives its calls in flight (ms). */
  readonly graceMs: number;
  private readonly options: RunnerOptions;
  private registeredWaiters: (() => void)[] = [];
  private stopping: Stopping | undefined;

  constructor(
    readonly target: string,
    options: RunnerOptions = {},
  ) {
    this.name = options.name ?? "typescript-runner";
    this.graceMs = checkedGrace(options.graceMs ?? DEFAULT_GRACE_MS);
    this.options = options;
  }

  /** Register a tool: its name, its parameters' JSON Schema, and the function that runs it. Returns this. */
  tool(name: string, schema: JsonObject, handler: ToolHandler, options: ToolOptions = {}): this {
    if (this.tools.has(name)) throw ValidationError.single("name", "unique", `tool '${name}' is registered twice`);
    const definition = create(ToolDefinitionSchema, {
      name,
      description: options.description ?? "",
      parameters: JSON.stringify(schema),
      kind: toolKind(options.kind),
      title: options.title ?? "",
      outputSchema: options.outputSchema === undefined ? "" : JSON.stringify(options.outputSchema),
      readOnlyHint: options.readOnlyHint,
      destructiveHint: options.destructiveHint,
      idempotentHint: options.idempotentHint,
      openWorldHint: options.openWorldHint,
      strict: options.strict,
      requiresApproval: options.requiresApproval ?? false,
    });
    validate(ToolDefinitionSchema, definition);
    this.tools.set(name, { definition, handler });
    return this;
  }

  /** The registered tools. */
  get definitions(): ToolDefinition[] {
    return [...this.tools.values()].map((tool) => tool.definition);
  }

  /** Resolves once the service has accepted the runner's tools (after each reconnect too). */
  registered(): Promise<void> {
    if (this.runnerId !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.registeredWaiters.push(resolve));
  }

  /** Run one call locally (what the runner does for each call the service sends). */
  async call(call: ToolCallContent, signal: AbortSignal = new AbortController().signal): Promise<ToolResultContent> {
    const tool = this.tools.get(call.name);
    if (tool === undefined) return errorResult(call, `this runner has no tool '${call.name}'`);
    const reason = toolCallArgumentsError(call);
    if (reason !== undefined) return errorResult(call, `invalid arguments: ${reason}`);
    const args = (call.arguments.trim() === "" ? {} : JSON.parse(call.arguments)) as JsonObject;
    let value: ToolReturn;
    try {
      value = await tool.handler(args, { call, signal });
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      return errorResult(call, `${e.name}: ${e.message}`);
    }
    try {
      return toResult(call, value);
    } catch (error) {
      // A value the contract refuses (AgentMsgError) or JSON cannot hold (a BigInt, a cycle): the caller hears why.
      return errorResult(call, `the tool's return value cannot be sent: ${(error as Error).message}`);
    }
  }

  /**
   * Connect, register, and answer calls until stopped: `signal` aborting, SIGTERM or SIGINT with `handleSignals`,
   * or drain() stop it gracefully (see the module comment). A dropped connection is reconnected with backoff (and
   * the tools registered again); a refused registration (a name taken, a bad token) throws.
   */
  async serve(options: ServeOptions = {}): Promise<void> {
    if (this.tools.size === 0) {
      throw ValidationError.single("tools", "required", "register at least one tool before serving");
    }
    const stopping = new Stopping();
    this.stopping = stopping;
    const signal = options.signal;
    const onAbort = (): void => stopping.ask(this.graceMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const onSignal = (): void => stopping.ask(stopping.asked ? 0 : this.graceMs);
    if (options.handleSignals) for (const name of STOP_SIGNALS) process.on(name, onSignal);
    try {
      await this.serveUntilStopped(stopping);
      if (stopping.asked) await flushTracing();
    } finally {
      if (options.handleSignals) for (const name of STOP_SIGNALS) process.off(name, onSignal);
      signal?.removeEventListener("abort", onAbort);
      this.stopping = undefined;
      stopping.end();
    }
  }

  /**
   * Stop serving gracefully: no new call (the service takes the tools off at once: a new call goes to a runner that
   * registers them next, or is answered NOT_FOUND), `graceMs` (the runner's when left out) for the calls in flight,
   * those still running answered cancelled, then unregistered and the tracer provider flushed. Resolves once serve()
   * has ended; nothing happens when the runner is not serving.
   */
  async drain(graceMs?: number): Promise<void> {
    const grace = graceMs === undefined ? this.graceMs : checkedGrace(graceMs);
    const stopping = this.stopping;
    if (stopping === undefined) return;
    stopping.ask(grace);
    await stopping.ended;
  }

  private async serveUntilStopped(stopping: Stopping): Promise<void> {
    const backoff = this.options.reconnect ?? {};
    const attempts = backoff.maxAttempts ?? 20;
    let failures = 0;
    while (!stopping.asked) {
      let failure: unknown;
      const registeredBefore = this.runnerId;
      try {
        await this.session(stopping);
        failure = new UnavailableError("the server ended the ServeTools stream");
      } catch (error) {
        if (stopping.asked) return;
        failure = fromCallError(error);
        if (!isTransient(failure)) throw failure;
      }
      if (stopping.asked) return;
      // A session that registered was healthy: count failures from it afresh.
      if (registeredBefore === undefined && this.runnerId !== undefined) failures = 0;
      this.runnerId = undefined;
      failures += 1;
      if (failures > attempts) throw failure;
      await sleep(backoffDelay(failures, backoff), stopping.askedSignal);
    }
  }

  // One ServeTools stream: register, then run calls until the stream ends or the runner drained.
  private async session(stopping: Stopping): Promise<void> {
    const connection = connect(this.target, this.options);
    const client = createClient(ToolService, connection.transport);
    const outbox = new Outbox<ServeToolsRequest>();
    const running = new Map<string, Running>();
    const stop = new AbortController();
    let closed = false; // this side is closed: a call that still comes is left to the service
    let noMoreCalls: () => void = () => {};
    const last = new Promise<void>((resolve) => {
      noMoreCalls = resolve; // the service's Draining came, or the stream ended
    });
    outbox.push(
      create(ServeToolsRequestSchema, {
        kind: { case: "register", value: { runnerName: this.name, tools: this.definitions } },
      }),
    );
    const start = (call: ToolCallContent, handle: string, traceContext: Record<string, string>): void => {
      // The service's handle names the call: call ids are the model's, and two callers may share one.
      // (A server older than handles sends none: the call id names it.)
      const slot = handle || call.id;
      const controller = new AbortController();
      let answerCancelled: () => void = () => {};
      const cutOff = new Promise<ToolResultContent>((resolve) => {
        answerCancelled = () => resolve(cancelledResult(call, this.name, stopping.graceMs));
      });
      const entry: Running = {
        controller,
        finished: Promise.resolve(),
        isCut: false,
        cut: () => {
          entry.isCut = true;
          answerCancelled();
          controller.abort(new Error("the runner stopped before the call finished"));
        },
      };
      // The call's span is the child of the server's (RunToolCall.trace_context); a no-op unless the
      // application registered an OpenTelemetry SDK. A call cut off by a drain ends with its cancelled result.
      const execute = async (): Promise<ToolResultContent> => {
        const result = await Promise.race([this.call(call, controller.signal), cutOff]);
        return entry.isCut ? cancelledResult(call, this.name, stopping.graceMs) : result;
      };
      entry.finished = traceToolCall(call, traceContext, execute).then((result) => {
        if (running.get(slot) === entry) running.delete(slot);
        if (controller.signal.aborted && !entry.isCut) return; // the service's cancel: nobody waits for it
        const outcome = { callId: call.id, result, handle };
        outbox.push(create(ServeToolsRequestSchema, { kind: { case: "outcome", value: outcome } }));
      });
      running.set(slot, entry);
    };
    const reading = (async () => {
      try {
        for await (const response of client.serveTools(outbox, { signal: stop.signal })) {
          const kind = response.kind;
          if (kind.case === "registered") {
            this.runnerId = kind.value.runnerId;
            for (const wake of this.registeredWaiters.splice(0)) wake();
          } else if (kind.case === "run" && kind.value.call !== undefined) {
            if (!closed) start(kind.value.call, kind.value.handle, kind.value.traceContext);
          } else if (kind.case === "cancel") {
            const slot = kind.value.handle || kind.value.callId;
            running.get(slot)?.controller.abort(new Error(kind.value.reason || "cancelled by the service"));
          } else if (kind.case === "draining") {
            noMoreCalls();
          }
        }
      } finally {
        noMoreCalls();
      }
    })();
    let readingDone = false;
    const read = reading.then(
      () => {
        readingDone = true;
      },
      () => {
        readingDone = true;
      },
    );
    let resolveAsked: () => void = () => {};
    const asked = new Promise<void>((resolve) => {
      resolveAsked = resolve;
    });
    const onAsk = (): void => resolveAsked();
    if (stopping.asked) onAsk();
    else stopping.askedSignal.addEventListener("abort", onAsk, { once: true });
    try {
      await Promise.race([read, asked]);
      if (stopping.asked && !readingDone) {
        // Steps 1-4 of the module comment: no new call, the grace, the rest cancelled, this side closed.
        outbox.push(create(ServeToolsRequestSchema, { kind: { case: "drain", value: {} } }));
        await stopping.until(Promise.race([last, read]));
        while (running.size > 0 && !readingDone) {
          const everything = Promise.all([...running.values()].map((entry) => entry.finished));
          if (!(await stopping.until(Promise.race([everything, read])))) break;
        }
        const late = [...running.values()];
        for (const entry of late) entry.cut();
        await within(Promise.all(late.map((entry) => entry.finished)), CLOSE_WAIT_MS);
        closed = true;
        outbox.close();
        await within(read, CLOSE_WAIT_MS); // the service ends the stream once it read this side
        return;
      }
      await reading; // throws what ended the stream
    } finally {
      stopping.askedSignal.removeEventListener("abort", onAsk);
      stop.abort();
      await read;
      for (const entry of running.values()) entry.controller.abort(new Error("the runner's connection ended"));
      outbox.close();
      connection.close();
    }
  }
}

/** Wait for `promise`, `ms` at most (no timer is left behind to keep the process alive). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  const timeout = new AbortController();
  try {
    await Promise.race([promise, sleep(ms, timeout.signal)]);
  } finally {
    timeout.abort();
  }
}

/** What the caller of a call cut off by a drain's end gets. */
function cancelledResult(call: ToolCallContent, runner: string, graceMs: number): ToolResultContent {
  return errorResult(
    call,
    `cancelled: the tool runner '${runner}' stopped and the call did not finish within its grace (${graceMs / 1000} s)`,
  );
}
