// The Node transport: gRPC (HTTP/2, @connectrpc/connect-node) with bearer-token auth, TLS / mTLS, the service's
// message-size limit, and a session manager the client can close. Shared by the Node Client and ToolRunner; the
// browser's transport is webTransport.ts.

import type { Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { bearerInterceptor, type Connection, DEFAULT_MAX_MESSAGE_BYTES } from "./connection.js";
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
  const interceptors: Interceptor[] = [tracingInterceptor, ...bearerInterceptor(options.token)];
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
