// ToolRunner: serve TypeScript functions as tools through the agentmsg service, the protocol of the Python runner
// (src/agentmsg/service/runner.py): open ToolService.ServeTools, send RegisterTools, then answer each RunToolCall
// with a ToolCallOutcome carrying the call's handle; a CancelToolCall (the caller cancelled, or its deadline
// passed) aborts the handler's AbortSignal. When the connection drops, the runner reconnects with backoff and
// registers again. Each call is an OpenTelemetry span (`execute_tool {name}`, see tracing.ts), the child of the
// server's span, once the application registers an OpenTelemetry SDK.
//
//   const runner = new ToolRunner("127.0.0.1:50051", { name: "files" });
//   runner.tool("read_file", { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
//     async ({ path }, { signal }) => readFile(String(path), { encoding: "utf8", signal }));
//   await runner.serve({ signal });

import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
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
import { traceToolCall } from "./tracing.js";
import { type Backoff, backoffDelay, type ConnectionOptions, connect, sleep } from "./transport.js";
import { validate } from "./validation.js";

/** What a handler gets besides its arguments: the call, and a signal aborted when the call is cancelled. */
export interface ToolContext {
  readonly call: ToolCallContent;
  readonly signal: AbortSignal;
}

/**
 * What a handler returns: a string (the result's text), a content block or a list of blocks, a ToolResultContent,
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
}

export interface RunnerOptions extends ConnectionOptions {
  /** The runner's name, shown by ListTools. */
  name?: string;
  /** Reconnecting after the connection drops; `maxAttempts` consecutive failures end serve() with the error. */
  reconnect?: Backoff;
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
  private readonly options: RunnerOptions;
  private registeredWaiters: (() => void)[] = [];

  constructor(
    readonly target: string,
    options: RunnerOptions = {},
  ) {
    this.name = options.name ?? "typescript-runner";
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
   * Connect, register, and answer calls until `signal` aborts. A dropped connection is reconnected with backoff
   * (and the tools registered again); a refused registration (a name taken, a bad token) throws.
   */
  async serve(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.tools.size === 0) {
      throw ValidationError.single("tools", "required", "register at least one tool before serving");
    }
    const signal = options.signal;
    const backoff = this.options.reconnect ?? {};
    const attempts = backoff.maxAttempts ?? 20;
    let failures = 0;
    while (!signal?.aborted) {
      let failure: unknown;
      const registeredBefore = this.runnerId;
      try {
        await this.session(signal);
        failure = new UnavailableError("the server ended the ServeTools stream");
      } catch (error) {
        if (signal?.aborted) return;
        failure = fromCallError(error);
        if (!isTransient(failure)) throw failure;
      }
      if (signal?.aborted) return;
      // A session that registered was healthy: count failures from it afresh.
      if (registeredBefore === undefined && this.runnerId !== undefined) failures = 0;
      this.runnerId = undefined;
      failures += 1;
      if (failures > attempts) throw failure;
      await sleep(backoffDelay(failures, backoff), signal);
    }
  }

  // One ServeTools stream: register, then run calls until the stream ends.
  private async session(signal: AbortSignal | undefined): Promise<void> {
    const connection = connect(this.target, this.options);
    const client = createClient(ToolService, connection.transport);
    const outbox = new Outbox<ServeToolsRequest>();
    const running = new Map<string, AbortController>();
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    outbox.push(
      create(ServeToolsRequestSchema, {
        kind: { case: "register", value: { runnerName: this.name, tools: this.definitions } },
      }),
    );
    try {
      for await (const response of client.serveTools(outbox, { signal: stop.signal })) {
        const kind = response.kind;
        if (kind.case === "registered") {
          this.runnerId = kind.value.runnerId;
          for (const wake of this.registeredWaiters.splice(0)) wake();
        } else if (kind.case === "run" && kind.value.call !== undefined) {
          const call = kind.value.call;
          const handle = kind.value.handle;
          // The service's handle names the call: call ids are the model's, and two callers may share one.
          // (A server older than handles sends none: the call id names it.)
          const slot = handle || call.id;
          const controller = new AbortController();
          running.set(slot, controller);
          // The call's span is the child of the server's (RunToolCall.trace_context); a no-op unless the
          // application registered an OpenTelemetry SDK.
          const execute = (): Promise<ToolResultContent> => this.call(call, controller.signal);
          void traceToolCall(call, kind.value.traceContext, execute).then((result) => {
            if (running.get(slot) === controller) running.delete(slot);
            if (controller.signal.aborted) return; // cancelled: the service no longer waits for it
            outbox.push(
              create(ServeToolsRequestSchema, {
                kind: { case: "outcome", value: { callId: call.id, result, handle } },
              }),
            );
          });
        } else if (kind.case === "cancel") {
          const slot = kind.value.handle || kind.value.callId;
          running.get(slot)?.abort(new Error(kind.value.reason || "cancelled by the service"));
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      for (const controller of running.values()) controller.abort(new Error("the runner's connection ended"));
      outbox.close();
      connection.close();
    }
  }
}
