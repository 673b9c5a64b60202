// The exported helpers no other test calls (issue 34): each is called here for what it promises, so a change that
// breaks one fails here. Found by comparing src/index.ts's exports with what test/, interop/ and examples/ use.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import {
  AgentMsgError,
  asAssistant,
  assistantMessage,
  audio,
  backoffDelay,
  blockStart,
  blockStop,
  branchSummary,
  ConflictError,
  citation,
  citationDelta,
  compactionSummary,
  contentFromDict,
  contentKind,
  contentsOf,
  contentToDict,
  customMessage,
  DEFAULT_MAX_MESSAGE_BYTES,
  DeadlineExceededError,
  DOMAIN,
  document,
  fold,
  fromCallError,
  HostedToolKind,
  HostedToolStatus,
  hostedToolKind,
  hostedToolStatus,
  hostedToolStatusName,
  image,
  isAudio,
  isDocument,
  isImage,
  isKind,
  isProvider,
  isRedactedThinking,
  isThinking,
  isToolResult,
  isTransient,
  logprobsDelta,
  MediaError,
  messageStart,
  messageStop,
  messagesToDicts,
  messageToDict,
  PermissionDeniedError,
  parseJsonObject,
  ResourceExhaustedError,
  redactedThinking,
  roleOf,
  type ServiceError,
  StoreError,
  StoreFullError,
  signatureDelta,
  sniffAudio,
  sniffImage,
  ToolKind,
  text,
  textDelta,
  thinking,
  thinkingBlock,
  thinkingDelta,
  tokenLogprob,
  toolKind,
  toolKindName,
  toolMessage,
  toolResult,
  toolResults,
  UnauthenticatedError,
  UnavailableError,
  userMessage,
  ValidationError,
} from "../src/index.js";

const bytes = (...values: number[]) => new Uint8Array(values);
const ascii = (textValue: string) => new TextEncoder().encode(textValue);

test("the kind guards say which arm a block holds", () => {
  const blocks = [
    image({ data: bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), mediaType: "image/png" }),
    audio({ url: "https://example.com/a.mp3", mediaType: "audio/mpeg" }),
    document({ fileId: "file-1", mediaType: "application/pdf" }),
    thinkingBlock("hmm", "sig"),
    redactedThinking("opaque"),
    toolResult("c1", [text("ok")]),
  ];
  assert.deepEqual(blocks.map(contentKind), [
    "image",
    "audio",
    "document",
    "thinking",
    "redactedThinking",
    "toolResult",
  ]);
  const guards = [isImage, isAudio, isDocument, isThinking, isRedactedThinking, isToolResult];
  guards.forEach((guard, i) => {
    assert.deepEqual(
      blocks.map((block) => guard(block)),
      blocks.map((_, j) => j === i),
    );
  });
  const [imageBlock, audioBlock, , , redacted] = blocks;
  assert.ok(imageBlock !== undefined && !isProvider(imageBlock));
  assert.ok(redacted !== undefined && isKind(redacted, "redactedThinking"));
  assert.ok(audioBlock !== undefined && isAudio(audioBlock));
  assert.equal(audioBlock.kind.value.source.case, "url");
});

test("tool and hosted-tool kinds go by name both ways, and an unknown name names the field", () => {
  assert.equal(toolKind("execute"), ToolKind.EXECUTE);
  assert.equal(toolKind(undefined), ToolKind.UNSPECIFIED);
  assert.equal(toolKindName(ToolKind.READ), "read");
  assert.equal(toolKindName(ToolKind.UNSPECIFIED), undefined);
  assert.throws(
    () => toolKind("explode" as never, "tools[0].kind"),
    (error: unknown) => error instanceof ValidationError && error.violations[0]?.field === "tools[0].kind",
  );
  assert.equal(hostedToolKind("web_search"), HostedToolKind.WEB_SEARCH);
  assert.equal(hostedToolStatus("failed"), HostedToolStatus.FAILED);
  assert.equal(hostedToolStatus(undefined), HostedToolStatus.UNSPECIFIED);
  assert.equal(hostedToolStatusName(HostedToolStatus.COMPLETED), "completed");
  assert.throws(() => hostedToolStatus("lost" as never), ValidationError);
});

test("parseJsonObject takes an object (or nothing) and says why anything else is not one", () => {
  assert.deepEqual(parseJsonObject(""), [{}, undefined]);
  assert.deepEqual(parseJsonObject('{"a": 1, "b": [true]}'), [{ a: 1, b: [true] }, undefined]);
  const [notObject, why] = parseJsonObject("[1, 2]");
  assert.equal(notObject, undefined);
  assert.match(why ?? "", /object/);
  const [broken, reason] = parseJsonObject('{"a": ');
  assert.equal(broken, undefined);
  assert.ok(reason !== undefined && reason.length > 0);
});

test("the dict form of a content block and of messages round-trips", () => {
  for (const block of [text("hi"), thinkingBlock("t", "s"), redactedThinking("r"), toolResult("c1", [text("x")])]) {
    assert.deepEqual(contentFromDict(contentToDict(block)), block);
  }
  const messages = [userMessage([text("q")], { id: "u1" }), assistantMessage([text("a")], { id: "a1" })];
  assert.deepEqual(messagesToDicts(messages), messages.map(messageToDict));
  assert.throws(
    () => contentFromDict(5, "contents[0]"),
    (error: unknown) => error instanceof ValidationError && error.violations[0]?.field === "contents[0]",
  );
});

test("media types are sniffed from the leading bytes", () => {
  assert.equal(sniffImage(bytes(0xff, 0xd8, 0xff, 0xe0)), "image/jpeg");
  assert.equal(sniffImage(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)), "image/png");
  assert.equal(sniffImage(ascii("GIF89a....")), "image/gif");
  assert.equal(sniffImage(ascii("RIFF\0\0\0\0WEBPVP8 ")), "image/webp");
  assert.equal(sniffImage(ascii("plain text")), undefined);
  assert.equal(sniffAudio(ascii("ID3\x04")), "audio/mpeg");
  assert.equal(sniffAudio(ascii("OggS\0")), "audio/ogg");
  assert.equal(sniffAudio(ascii("fLaC\0")), "audio/flac");
  assert.equal(sniffAudio(ascii("RIFF\0\0\0\0WAVEfmt ")), "audio/wav");
  assert.equal(sniffAudio(ascii("????")), "audio/mpeg"); // the seed's default
});

test("the session-only messages and the message readers", () => {
  const custom = customMessage("note", [text("kept")], { id: "c1", toModel: true });
  assert.equal(roleOf(custom), "custom");
  assert.deepEqual(contentsOf(custom).map(contentKind), ["text"]);
  const branch = branchSummary("tried another way", "a2", { id: "b1" });
  assert.equal(roleOf(branch), "branchSummary");
  assert.equal(branch.role.case === "branchSummary" && branch.role.value.fromId, "a2");
  const compaction = compactionSummary("so far", { id: "k1", tokensBefore: 1200, firstKeptId: "u3" });
  assert.ok(compaction.role.case === "compactionSummary");
  assert.equal(compaction.role.value.tokensBefore, 1200n);
  assert.equal(compaction.role.value.firstKeptId, "u3");
  assert.deepEqual(contentsOf(compaction), []);
  const tool = toolMessage([toolResult("c1", [text("one")]), toolResult("c2", [text("two")])]);
  assert.deepEqual(
    toolResults(tool).map((r) => r.id),
    ["c1", "c2"],
  );
  const answer = assistantMessage([text("a")]);
  assert.equal(asAssistant(answer)?.content.length, 1);
  assert.equal(asAssistant(tool), undefined);
});

test("thinking, signature, citation and logprob deltas fold into the blocks they belong to", () => {
  const cited = citation({ startIndex: 0, endIndex: 4, source: { case: "web", value: { url: "https://x.test" } } });
  const message = fold([
    messageStart("m1"),
    blockStart(0, thinkingBlock("")),
    thinkingDelta(0, "let me "),
    thinkingDelta(0, "think"),
    signatureDelta(0, "sig-1"),
    blockStop(0),
    blockStart(1, text("")),
    textDelta(1, "Rain today"),
    citationDelta(1, cited),
    logprobsDelta(1, [tokenLogprob({ token: "Rain", logprob: -0.25 })]),
    blockStop(1),
    messageStop("stop"),
  ]);
  assert.deepEqual(
    thinking(message).map((t) => [t.text, t.signature]),
    [["let me think", "sig-1"]],
  );
  const block = contentsOf(message)[1];
  assert.ok(block !== undefined && block.kind.case === "text");
  assert.equal(block.kind.value.text, "Rain today");
  assert.deepEqual(
    block.kind.value.citations.map((c) => [c.startIndex, c.endIndex]),
    [[0, 4]],
  );
  assert.deepEqual(
    block.kind.value.logprobs.map((l) => [l.token, l.logprob]),
    [["Rain", -0.25]],
  );
});

test("every error class a status names comes back from fromCallError, and only UNAVAILABLE is transient", () => {
  const byCode: [Code, new (message: string) => ServiceError][] = [
    [Code.AlreadyExists, ConflictError],
    [Code.Unauthenticated, UnauthenticatedError],
    [Code.PermissionDenied, PermissionDeniedError],
    [Code.DeadlineExceeded, DeadlineExceededError],
    [Code.ResourceExhausted, ResourceExhaustedError],
  ];
  for (const [code, cls] of byCode) {
    const error = fromCallError(new ConnectError("x", code));
    assert.ok(error instanceof cls, `${Code[code]} -> ${cls.name}`);
    assert.ok(error instanceof AgentMsgError);
    assert.equal(isTransient(error), false);
  }
  const media = fromCallError(
    new ConnectError("bad image", Code.InvalidArgument, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "MediaError", domain: DOMAIN } },
    ]),
  );
  assert.ok(media instanceof MediaError);
  const store = fromCallError(
    new ConnectError("read-only", Code.Unavailable, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "StoreError", domain: DOMAIN } },
    ]),
  );
  assert.ok(store instanceof StoreError);
  assert.equal(isTransient(store), true); // retried, as the Python client retries UNAVAILABLE
  assert.equal(isTransient(new UnavailableError("gone")), true);
  assert.equal(isTransient(new StoreFullError("full")), false); // RESOURCE_EXHAUSTED
  const foreign = fromCallError(
    new ConnectError("x", Code.AlreadyExists, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "MediaError", domain: "someone.else" } },
    ]),
  );
  assert.ok(foreign instanceof ConflictError); // another domain's reason is not ours: the code decides
});

test("backoff doubles from the initial delay up to the cap, with jitter in its upper half", () => {
  for (let i = 0; i < 50; i++) {
    const first = backoffDelay(1, { initialDelayMs: 100, maxDelayMs: 1000 });
    assert.ok(first >= 50 && first <= 100, `attempt 1: ${first}`);
    const third = backoffDelay(3, { initialDelayMs: 100, maxDelayMs: 1000 });
    assert.ok(third >= 200 && third <= 400, `attempt 3: ${third}`);
    const capped = backoffDelay(20, { initialDelayMs: 100, maxDelayMs: 1000 });
    assert.ok(capped >= 500 && capped <= 1000, `attempt 20: ${capped}`);
  }
  const byDefault = backoffDelay(1);
  assert.ok(byDefault >= 50 && byDefault <= 100);
  assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 32 * 1024 * 1024); // the Python server's default
});
