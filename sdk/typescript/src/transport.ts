// The connection: a gRPC transport (HTTP/2, @connectrpc/connect-node) with bearer-token auth, TLS / mTLS, the
// service's message-size limit, and a session manager the client can close. Shared by Client and ToolRunner.

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { tracingInterceptor } from "./tracing.js";

/** PEM material for TLS: `ca` to trust the server, `cert` + `key` for mTLS. */
export interface TlsOptions {
  ca?: string | Uint8Array;
  cert?: string | Uint8Array;
  key?: string | Uint8Array;
  /** The name the server certificate must carry, when it differs from the target's host. */
  serverName?: string;
}

export interface ConnectionOptions {
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /** Turns on TLS (the target then defaults to https://). */
  tls?: TlsOptions;
  /** The largest message sent or received; the server's default is 32 MiB. */
  maxMessageBytes?: number;
}

/** The service's default limit on one message (src/agentmsg/service/server.py DEFAULT_MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** An open connection; `close()` ends its HTTP/2 session (and every call on it). */
export interface Connection {
  readonly transport: Transport;
  close(): void;
}

function baseUrl(target: string, tls: boolean): string {
  if (/^https?:\/\//.test(target)) return target;
  return `${tls ? "https" : "http"}://${target}`;
}

function pem(value: string | Uint8Array | undefined): string | Buffer | undefined {
  if (value === undefined || typeof value === "string") return value;
  return Buffer.from(value);
}

/** A transport to `target` (`host:port` or a URL). */
export function connect(target: string, options: ConnectionOptions = {}): Connection {
  const url = baseUrl(target, options.tls !== undefined);
  const tls = options.tls;
  const manager = new Http2SessionManager(
    url,
    { idleConnectionTimeoutMs: 60_000 },
    tls === undefined
      ? {}
      : {
          ca: pem(tls.ca),
          cert: pem(tls.cert),
          key: pem(tls.key),
          ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
        },
  );
  // The trace context travels on every call (a no-op until the application registers an OpenTelemetry SDK).
  const interceptors: Interceptor[] = [tracingInterceptor];
  const token = options.token;
  if (token !== undefined && token !== "") {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    });
  }
  const limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const transport = createGrpcTransport({
    baseUrl: url,
    sessionManager: manager,
    interceptors,
    readMaxBytes: limit,
    writeMaxBytes: limit,
  });
  return { transport, close: () => manager.abort() };
}

/** Wait `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Exponential backoff with jitter: the delay before attempt `attempt` (1-based). */
export interface Backoff {
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Consecutive failed attempts before giving up. */
  maxAttempts?: number;
}

export function backoffDelay(attempt: number, backoff: Backoff = {}): number {
  const initial = backoff.initialDelayMs ?? 100;
  const max = backoff.maxDelayMs ?? 5_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}
