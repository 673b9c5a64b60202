// What every transport shares, in Node and in the browser: the connection a client or runner holds, bearer-token
// auth, the service's message-size limit, backoff and an abortable sleep. The transports themselves live apart:
// transport.ts (gRPC over HTTP/2, Node) and webTransport.ts (Connect or gRPC-Web over fetch, any browser).

import type { Interceptor, Transport } from "@connectrpc/connect";

/** The service's default limit on one message (src/agentmsg/service/server.py DEFAULT_MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** An open connection; `close()` ends it (and every call on it). */
export interface Connection {
  readonly transport: Transport;
  close(): void;
}

/** The interceptor that sends `authorization: Bearer <token>` on every call; none for no token. */
export function bearerInterceptor(token: string | undefined): Interceptor[] {
  if (token === undefined || token === "") return [];
  return [
    (next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    },
  ];
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
