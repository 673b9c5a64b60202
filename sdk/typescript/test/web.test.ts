// The browser entry (@agentmsg/sdk/web): the same API as the Node entry but the transport, its Client over fetch
// (run here with Node's fetch against small local HTTP servers), and the bundle check that keeps Node built-ins out.
// The browser itself runs it against the Python server in tests/interop/test_browser.py.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { BadRequestSchema, ErrorInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import * as node from "../src/index.js";
import * as web from "../src/web.js";
import { ROOT } from "./paths.js";

const SDK = join(ROOT, "sdk", "typescript");
// What only Node can give: the runner (a bidi stream), the gRPC transport, and tracing's environment and flush.
const NODE_ONLY = [
  "CAPTURE_ENV",
  "DEFAULT_GRACE_MS",
  "ToolRunner",
  "connect",
  "contentCapture",
  "flushTracing",
  "traceToolCall",
];

test("the web entry exports everything the Node entry does, the same objects, but the Node-only ones", () => {
  const nodeNames = Object.keys(node);
  const webNames = new Set(Object.keys(web));
  assert.deepEqual(
    nodeNames.filter((name) => !webNames.has(name)),
    NODE_ONLY,
  );
  assert.deepEqual(
    [...webNames].filter((name) => !(name in node)),
    ["connectWeb"],
  );
  const differ = nodeNames.filter(
    (name) => webNames.has(name) && (node as Record<string, unknown>)[name] !== (web as Record<string, unknown>)[name],
  );
  assert.deepEqual(differ, ["Client"]);
});

function methods(cls: { prototype: object }): string[] {
  const names = new Set<string>();
  for (let proto = cls.prototype; proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) if (name !== "constructor") names.add(name);
  }
  return [...names].sort();
}

test("the web Client has every call of the Node Client but publishStream, from the same BaseClient", () => {
  assert.equal(Object.getPrototypeOf(web.Client), web.BaseClient);
  assert.equal(Object.getPrototypeOf(node.Client), node.BaseClient);
  assert.deepEqual(
    methods(web.Client),
    methods(node.Client).filter((name) => name !== "publishStream"),
  );
  assert.ok(methods(web.Client).includes("subscribe") && methods(web.Client).includes("callTool"));
});

// A local HTTP server whose handler the test sets; every request it gets is recorded.
let server: Server;
let baseUrl = "";
let handler: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void = () => {};
const seen: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];

before(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
      handler(request, Buffer.concat(chunks), response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

test("a Connect error's ErrorInfo and BadRequest become the ValidationError the server raised, with its violations", async () => {
  const info = create(ErrorInfoSchema, { reason: "ValidationError", domain: "agentmsg" });
  const bad = create(BadRequestSchema, {
    fieldViolations: [
      { field: "message.id", reason: "string.min_len", description: "value length must be at least 1" },
    ],
  });
  handler = (_request, _body, response) => {
    response.writeHead(400, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        code: "invalid_argument",
        message: "invalid message",
        details: [
          { type: "google.rpc.ErrorInfo", value: base64Encode(toBinary(ErrorInfoSchema, info), "std_raw") },
          { type: "google.rpc.BadRequest", value: base64Encode(toBinary(BadRequestSchema, bad), "std_raw") },
        ],
      }),
    );
  };
  seen.length = 0;
  const client = new web.Client(baseUrl, { token: "t0ken" });
  try {
    await assert.rejects(client.append("s1", node.userMessage([node.text("hi")])), (error: unknown) => {
      assert.ok(error instanceof web.ValidationError);
      assert.equal(error.message, "invalid message");
      assert.deepEqual(error.violations, [
        { field: "message.id", ruleId: "string.min_len", message: "value length must be at least 1" },
      ]);
      return true;
    });
  } finally {
    client.close();
  }
  assert.equal(seen.length, 1); // a validation error is not retried
  assert.equal(seen[0]?.url, "/agentmsg.v1.SessionService/AppendMessage");
  assert.equal(seen[0]?.headers.authorization, "Bearer t0ken");
  assert.equal(seen[0]?.headers["content-type"], "application/proto");
});

test("gRPC-Web and JSON are chosen by options", async () => {
  handler = (_request, _body, response) => {
    response.writeHead(503, { "content-type": "text/plain" });
    response.end("down");
  };
  for (const [options, contentType] of [
    [{ protocol: "grpc-web", format: "binary" }, "application/grpc-web+proto"],
    [{ protocol: "grpc-web", format: "json" }, "application/grpc-web+json"],
    [{ protocol: "connect", format: "json" }, "application/json"],
  ] as const) {
    seen.length = 0;
    const client = new web.Client(baseUrl, { ...options, retry: { maxAttempts: 1 } });
    await assert.rejects(client.append("s1", node.userMessage([node.text("hi")])), web.ServiceError);
    client.close();
    assert.equal(seen[0]?.headers["content-type"], contentType);
  }
});

test("no server at the address is UnavailableError (retried first), as over gRPC", async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const client = new web.Client(`127.0.0.1:${port}`, { retry: { maxAttempts: 2, initialDelayMs: 1 } });
  try {
    await assert.rejects(client.append("s1", node.userMessage([node.text("hi")])), web.UnavailableError);
  } finally {
    client.close();
  }
});

test("an aborted signal and close() both end a call in flight with CancelledError", async () => {
  let arrived: () => void = () => {};
  handler = () => arrived(); // never answers
  const client = new web.Client(baseUrl);
  const call = { tool: "add", id: "c1" };
  const aborted = new AbortController();
  let waiting = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const first = client.callTool(node.toolCall(call.id, call.tool, { a: 1 }), { signal: aborted.signal });
  await waiting;
  aborted.abort();
  await assert.rejects(first, web.CancelledError);
  waiting = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const second = client.callTool(node.toolCall("c2", call.tool, { a: 2 }));
  await waiting;
  client.close();
  await assert.rejects(second, web.CancelledError);
  await assert.rejects(client.callTool(node.toolCall("c3", call.tool, {})), web.CancelledError);
});

function bundle(entry: string, out: string): { status: number | null; stdout: string; stderr: string } {
  const done = spawnSync(process.execPath, [join(SDK, "scripts", "bundle-web.mjs"), entry, out], {
    cwd: SDK,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

test("the bundle check passes the web entry and fails an entry that imports Node built-ins, naming each", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentmsg-bundle-"));
  try {
    const good = bundle(join(SDK, "dist", "src", "web.js"), join(dir, "web.js"));
    assert.equal(good.status, 0, good.stderr);
    assert.doesNotMatch(readFileSync(join(dir, "web.js"), "utf8"), /["']node:/);
    const entry = join(dir, "entry.mjs");
    writeFileSync(
      entry,
      'import { readFileSync } from "node:fs";\nimport http2 from "http2";\nexport { readFileSync, http2 };\n',
    );
    const bad = bundle(entry, join(dir, "bad.js"));
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /entry\.mjs imports node:fs/);
    assert.match(bad.stderr, /entry\.mjs imports http2/);
    const nodeEntry = bundle(join(SDK, "dist", "src", "index.js"), join(dir, "node.js"));
    assert.equal(nodeEntry.status, 1);
    assert.match(nodeEntry.stderr, /connect-node\/.* imports node:http2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
