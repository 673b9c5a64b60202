// The helpers: constructors check the contract and name the field; readers, narrowing, codecs, the fold's replay,
// the dict form's errors, the status table, and the runner's handling of one call.

import assert from "node:assert/strict";
import { test } from "node:test";
import { create, equals } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import {
  asKind,
  assistantMessage,
  assistantText,
  CancelledError,
  type Content,
  citation,
  DEFAULT_GRACE_MS,
  DecodeError,
  decodeBinary,
  decodeJson,
  encodeBinary,
  encodeJson,
  eventsFromMessage,
  fold,
  fromCallError,
  HostedToolKind,
  hostedToolCall,
  hostedToolCalls,
  hostedToolKindName,
  hostedToolResult,
  hostedToolResults,
  hostedToolResultText,
  image,
  isHostedToolCall,
  isHostedToolResult,
  isText,
  isToolCall,
  MessageSchema,
  messageFromDict,
  messagesFromDicts,
  messageToDict,
  NotFoundError,
  StopReason,
  StoreFullError,
  systemMessage,
  systemText,
  ToolArgumentsError,
  ToolCallContentSchema,
  ToolRunner,
  text,
  textContent,
  thinking,
  thinkingBlock,
  tokenLogprob,
  toolCall,
  toolCallArgs,
  toolCallArgumentsError,
  toolCalls,
  toolMessage,
  toolResult,
  toolResultText,
  UnavailableError,
  userText,
  ValidationError,
} from "../src/index.js";

function violationsOf(run: () => unknown): [string, string][] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ValidationError, `not a ValidationError: ${String(error)}`);
    return error.violations.map((v) => [v.field, v.ruleId]);
  }
  assert.fail("no ValidationError");
}

test("constructors build valid messages with ids and timestamps", () => {
  const message = userText("hi");
  assert.equal(message.role.case, "user");
  assert.match(message.id, /^[0-9a-f-]{36}$/);
  assert.ok(message.timestamp !== undefined);
  assert.equal(textContent(message), "hi");
  assert.equal(textContent(systemText("be brief", { id: "s1" })), "be brief");
  const answer = assistantMessage(
    [thinkingBlock("hmm", "sig"), text("Paris. "), toolCall("c1", "search", { q: "x" })],
    {
      usage: { inputTokens: 5, outputTokens: 2, cost: { total: 0.01 } },
      stopReason: "tool_calls",
    },
  );
  assert.equal(textContent(answer), "Paris. ");
  assert.deepEqual(
    thinking(answer).map((t) => [t.text, t.signature]),
    [["hmm", "sig"]],
  );
  assert.deepEqual(
    toolCalls(answer).map((c) => [c.id, c.name, toolCallArgs(c)]),
    [["c1", "search", { q: "x" }]],
  );
  const body = answer.role.case === "assistant" ? answer.role.value : undefined;
  assert.equal(body?.stopReason, StopReason.TOOL_CALLS);
  assert.equal(body?.usage?.inputTokens, 5n);
  assert.equal(body?.usage?.reasoningTokens, undefined, "a count not given stays unknown");
});

test("constructors refuse what the contract refuses, naming the field and the rule", () => {
  assert.deepEqual(
    violationsOf(() => systemMessage([image({ url: "https://example.com/a.png" })])),
    [["system.content[0]", "system.content.kind"]],
  );
  assert.deepEqual(
    violationsOf(() => toolCall("", "search", {})),
    [["tool_call.id", "string.min_len"]],
  );
  assert.deepEqual(
    violationsOf(() => image({ url: "not a url" })),
    [["image.url", "string.uri"]],
  );
  assert.deepEqual(
    violationsOf(() => assistantMessage([], { stopReason: "stop" })),
    [["assistant", "assistant.content.required"]],
  );
  assert.deepEqual(
    violationsOf(() => assistantText("x", { usage: { inputTokens: -1 } })),
    [["input_tokens", "int64.gte"]],
  );
  assert.throws(() => assistantText("x", { stopReason: "nope" as never }), ValidationError);
  assert.throws(() => toolCall("c", "n", { a: 1 }, { arguments: "{}" }), ValidationError);
});

test("tool results and tool messages", () => {
  const result = toolResult("c1", "14°C", { isError: false, name: "weather" });
  const message = toolMessage(result);
  assert.equal(message.role.case, "tool");
  const inner = asKind(result, "toolResult");
  assert.ok(inner);
  assert.equal(toolResultText(inner), "14°C");
  const blocks = asKind(toolResult("c2", [text("a"), text("b")], { isError: true }), "toolResult");
  assert.equal(blocks?.isError, true);
  assert.equal(toolResultText(blocks ?? assert.fail()), "ab");
  assert.deepEqual(
    violationsOf(() => toolResult("c3", [thinkingBlock("no")])),
    [["tool_result.content[0]", "tool_result.content.kind"]],
  );
});

test("narrowing helpers follow the union", () => {
  const blocks: Content[] = [text("a"), toolCall("c", "n", {})];
  assert.deepEqual(blocks.map(isText), [true, false]);
  assert.deepEqual(blocks.map(isToolCall), [false, true]);
  const first = blocks[0];
  assert.ok(first && isText(first));
  assert.equal(first.kind.value.text, "a");
  assert.equal(asKind(first, "toolCall"), undefined);
});

test("argument text that is not a JSON object is kept and reported", () => {
  const call = create(ToolCallContentSchema, { id: "c", name: "n", arguments: "[1]" });
  assert.equal(toolCallArgumentsError(call), "a JSON array is not an object");
  assert.throws(() => toolCallArgs(call), ToolArgumentsError);
  assert.deepEqual(toolCallArgs(create(ToolCallContentSchema, { id: "c", name: "n", arguments: "" })), {});
});

test("ProtoJSON and binary round trips; bad input is a typed error", () => {
  const message = assistantText("hello", { usage: { outputTokens: 1 }, stopReason: "stop" });
  const json = encodeJson(MessageSchema, message);
  assert.ok(equals(MessageSchema, decodeJson(MessageSchema, json), message));
  assert.ok(equals(MessageSchema, decodeJson(MessageSchema, JSON.stringify(json)), message));
  assert.ok(equals(MessageSchema, decodeBinary(MessageSchema, encodeBinary(MessageSchema, message)), message));
  assert.throws(() => decodeBinary(MessageSchema, new Uint8Array([0xff, 0xff, 0xff])), DecodeError);
  assert.throws(() => decodeJson(MessageSchema, "{not json"), DecodeError);
  assert.throws(() => decodeJson(MessageSchema, { id: "x" }), ValidationError);
  assert.equal(decodeJson(MessageSchema, { id: "x" }, { validate: false }).id, "x");
});

test("a message replayed as events folds back into itself", () => {
  const message = assistantMessage(
    [thinkingBlock("think", "c2ln"), text("Hello there"), toolCall("c1", "f", undefined, { arguments: '{"a": 1}' })],
    { usage: { inputTokens: 3 }, stopReason: "tool_calls", provenance: { provider: "p", model: "m" } },
  );
  for (const chunkSize of [undefined, 1, 4]) {
    assert.ok(equals(MessageSchema, fold(eventsFromMessage(message, { chunkSize })), message));
  }
  const failed = assistantMessage([text("part")], { error: "boom", stopReason: "error", stopReasonRaw: "overloaded" });
  assert.ok(equals(MessageSchema, fold(eventsFromMessage(failed)), failed));
  assert.throws(() => eventsFromMessage(userText("x")), ValidationError);
});

test("the dict form round-trips and names the path of bad input", () => {
  const message = assistantMessage([text("a"), toolCall("c1", "f", { x: 1 }, { kind: "read" })], {
    usage: { inputTokens: 1 },
    stopReason: "tool_calls",
  });
  const dict = messageToDict(message);
  assert.equal(dict.role, "assistant");
  assert.equal(dict.stop_reason, "tool_calls");
  assert.ok(equals(MessageSchema, messageFromDict(dict), message));
  try {
    messagesFromDicts([
      { role: "user", contents: [{ type: "text", content: "fine" }] },
      { role: "user", contents: [{ type: "image", images: ["!!not base64"] }] },
      { role: "nobody" },
      { role: "system", contents: [{ type: "image", images: ["https://example.com/a.png"] }] },
    ]);
    assert.fail("no error");
  } catch (error) {
    assert.ok(error instanceof ValidationError);
    assert.deepEqual(
      error.violations.map((v) => [v.field, v.ruleId]),
      [
        ["[1].contents[0].images[0]", "media"],
        ["[2].role", "enum"],
        ["[3].contents[0]", "system.content.kind"],
      ],
    );
  }
});

test("failed calls become the classes the server names, with violations", () => {
  const invalid = new ConnectError(
    "invalid request: session_id: bad [string.pattern]",
    Code.InvalidArgument,
    undefined,
    [
      { desc: ErrorInfoSchema, value: { reason: "ValidationError", domain: "agentmsg" } },
      {
        desc: BadRequestSchema,
        value: { fieldViolations: [{ field: "session_id", reason: "string.pattern", description: "bad" }] },
      },
    ],
  );
  const error = fromCallError(invalid);
  assert.ok(error instanceof ValidationError);
  assert.deepEqual(error.violations, [{ field: "session_id", ruleId: "string.pattern", message: "bad" }]);
  const full = fromCallError(
    new ConnectError("disk full", Code.ResourceExhausted, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "StoreFullError", domain: "agentmsg" } },
    ]),
  );
  assert.ok(full instanceof StoreFullError);
  assert.ok(fromCallError(new ConnectError("gone", Code.Unavailable)) instanceof UnavailableError);
  assert.ok(fromCallError(new ConnectError("no tool", Code.NotFound)) instanceof NotFoundError);
  assert.ok(fromCallError(new ConnectError("stop", Code.Canceled)) instanceof CancelledError);
  const bare = fromCallError(new ConnectError("no details", Code.InvalidArgument));
  assert.ok(bare instanceof ValidationError);
  assert.deepEqual(
    bare.violations.map((v) => v.ruleId),
    ["invalid_argument"],
  );
});

test("the runner turns each kind of handler outcome into a result", async () => {
  const runner = new ToolRunner("127.0.0.1:1")
    .tool("json", { type: "object" }, () => ({ ok: true, n: 2 }))
    .tool("blocks", { type: "object" }, () => [text("x")])
    .tool("throws", { type: "object" }, () => {
      throw new TypeError("bad");
    })
    .tool("cyclic", { type: "object" }, () => {
      const value: Record<string, unknown> = {};
      value.self = value;
      return value as never;
    });
  const call = (name: string, args = "{}") =>
    runner.call(create(ToolCallContentSchema, { id: `id-${name}`, name, arguments: args }));
  const json = await call("json");
  assert.deepEqual([json.id, toolResultText(json), json.isError], ["id-json", '{"ok":true,"n":2}', false]);
  assert.equal(toolResultText(await call("blocks")), "x");
  const thrown = await call("throws");
  assert.deepEqual([toolResultText(thrown), thrown.isError], ["TypeError: bad", true]);
  const cyclic = await call("cyclic");
  assert.equal(cyclic.isError, true);
  assert.match(toolResultText(cyclic), /^the tool's return value cannot be sent: /);
  const missing = await call("nope");
  assert.deepEqual([toolResultText(missing), missing.isError], ["this runner has no tool 'nope'", true]);
  const bad = await call("json", "[]");
  assert.deepEqual([toolResultText(bad), bad.isError], ["invalid arguments: a JSON array is not an object", true]);
  assert.throws(() => runner.tool("json", {}, () => ""), ValidationError);
  await assert.rejects(new ToolRunner("127.0.0.1:1").serve(), ValidationError);
});

test("the runner's grace: checked, 10 s by default; drain() and an aborted signal before serving", async () => {
  assert.equal(new ToolRunner("127.0.0.1:1").graceMs, DEFAULT_GRACE_MS);
  assert.equal(DEFAULT_GRACE_MS, 10_000);
  assert.equal(new ToolRunner("127.0.0.1:1", { graceMs: 0 }).graceMs, 0);
  for (const graceMs of [-1, Number.NaN]) {
    assert.throws(
      () => new ToolRunner("127.0.0.1:1", { graceMs }),
      (error: unknown) => {
        assert.ok(error instanceof ValidationError);
        assert.deepEqual(
          error.violations.map((v) => v.field),
          ["graceMs"],
        );
        return true;
      },
    );
  }
  const runner = new ToolRunner("127.0.0.1:1").tool("t", { type: "object" }, () => "");
  await runner.drain();
  await assert.rejects(runner.drain(-5), ValidationError);
  await runner.serve({ signal: AbortSignal.abort() }); // stopped before it started: it returns, connecting nowhere
});

test("v1.1 content: hosted tools, citations, logprobs, usage details, stop sequence", () => {
  const call = hostedToolCall("srv_1", "web_search", {
    kind: "web_search",
    args: { query: "paris" },
    status: "completed",
  });
  const result = hostedToolResult("srv_1", "Paris: rain", {
    kind: "web_search",
    searchResults: { results: [{ url: "https://example.com", title: "Example" }], queries: ["paris"] },
  });
  const cited = text("Rain in Paris.", {
    citations: [
      citation({ startIndex: 0, endIndex: 4, source: { case: "web", value: { url: "https://example.com" } } }),
    ],
    logprobs: [tokenLogprob({ token: "Rain", logprob: -0.1 })],
  });
  const message = assistantMessage([call, result, cited], {
    usage: { inputTokens: 10, cacheWrite5mTokens: 3, hostedToolRequests: { web_search: 1 } },
    stopReason: "stop",
    stopSequence: "END",
  });
  assert.deepEqual(
    hostedToolCalls(message).map((c) => [c.name, c.input, c.kind === HostedToolKind.WEB_SEARCH]),
    [["web_search", '{"query":"paris"}', true]],
  );
  const [found] = hostedToolResults(message);
  assert.ok(found);
  assert.equal(hostedToolResultText(found), "Paris: rain");
  assert.equal(found.body.case, "searchResults");
  assert.ok(isHostedToolCall(call) && isHostedToolResult(result));
  for (const chunkSize of [undefined, 3]) {
    assert.ok(equals(MessageSchema, fold(eventsFromMessage(message, { chunkSize })), message));
  }
  const dict = messageToDict(message);
  assert.equal(dict.stop_sequence, "END");
  assert.deepEqual((dict.usage as { hosted_tool_requests: unknown }).hosted_tool_requests, { web_search: 1 });
  assert.ok(equals(MessageSchema, messageFromDict(dict), message));

  assert.deepEqual(
    violationsOf(() => citation({ startIndex: 5, endIndex: 1, citedText: "x" })),
    [
      ["", "citation.source"],
      ["", "citation.span"],
    ],
  );
  assert.deepEqual(
    violationsOf(() => assistantText("x", { usage: { hostedToolRequests: { "Web Search": 1 } } })),
    [["hosted_tool_requests['Web Search']", "string.pattern"]],
  );
  assert.deepEqual(
    violationsOf(() => hostedToolResult("srv_1", [thinkingBlock("no")])),
    [["hosted_tool_result.content[0]", "hosted_tool_result.content.kind"]],
  );
  assert.throws(() => hostedToolCall("s", "n", { kind: "teleport" as never }), ValidationError);
  assert.throws(
    () => hostedToolResult("s", [], { webFetch: { url: "u" }, codeExecution: { stdout: "x" } }),
    ValidationError,
  );
  assert.equal(hostedToolKindName(99 as HostedToolKind), "other");
});
