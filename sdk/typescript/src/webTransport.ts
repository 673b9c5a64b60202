// The browser transport: the Connect protocol (binary or JSON) or gRPC-Web, over `fetch`, through
// @connectrpc/connect-web. It needs no Node built-in, so it runs in any browser (and in Node, Deno, Bun and edge
// runtimes, which have fetch). It speaks to `agentmsg serve --http PORT`, the service's HTTP port. The server's
// message-size limit holds as over gRPC; fetch has no client-side limit to set.

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { bearerInterceptor, type Connection } from "./connection.js";
import { tracingInterceptor } from "./tracing.js";

export interface WebConnectionOptions {
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /** `connect` (the Connect protocol, the default) or `grpc-web`. */
  protocol?: "connect" | "grpc-web";
  /** `binary` (protobuf, the default) or `json` (ProtoJSON, readable in the browser's network panel). */
  format?: "binary" | "json";
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

// fetch rejects with a TypeError when it reaches no server (refused, reset, offline) and Connect reports that as
// UNKNOWN; it is what gRPC calls UNAVAILABLE, so the client retries and resumes it as it does over gRPC.
const unreachable: Interceptor = (next) => async (request) => {
  try {
    return await next(request);
  } catch (error) {
    const cause = error instanceof ConnectError ? error.cause : error;
    if (cause instanceof TypeError && !request.signal.aborted) {
      throw new ConnectError(`the server cannot be reached: ${cause.message}`, Code.Unavailable, undefined, [], cause);
    }
    throw error;
  }
};

/** A signal that aborts when `a` or `b` does (AbortSignal.any, where older browsers lack it). */
function either(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (a.aborted) return a;
  if (b.aborted) return b;
  const both = new AbortController();
  const abort = (source: AbortSignal) => () => {
    a.removeEventListener("abort", fromA);
    b.removeEventListener("abort", fromB);
    both.abort(source.reason);
  };
  const fromA = abort(a);
  const fromB = abort(b);
  a.addEventListener("abort", fromA, { once: true });
  b.addEventListener("abort", fromB, { once: true });
  return both.signal;
}

/** A transport to the service's HTTP port at `baseUrl` (`http://host:port`, or `host:port`). */
export function connectWeb(baseUrl: string, options: WebConnectionOptions = {}): Connection {
  const url = /^https?:\/\//.test(baseUrl) ? baseUrl : `http://${baseUrl}`;
  // close() aborts every call in flight and every later one, as closing the Node client's HTTP/2 session does.
  const closed = new AbortController();
  const closing: Interceptor = (next) => (request) =>
    next({ ...request, signal: either(request.signal, closed.signal) });
  const interceptors: Interceptor[] = [closing, unreachable, tracingInterceptor, ...bearerInterceptor(options.token)];
  const common = {
    baseUrl: url,
    interceptors,
    useBinaryFormat: (options.format ?? "binary") === "binary",
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
  const transport =
    (options.protocol ?? "connect") === "connect"
      ? createConnectTransport({ ...common, useHttpGet: true })
      : createGrpcWebTransport(common);
  return { transport, close: () => closed.abort() };
}
