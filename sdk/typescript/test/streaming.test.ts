// The event constructors and the accumulator's live view (the fold itself is proven by the shared vectors in
// fold.test.ts).

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  argumentsDelta,
  blockStart,
  blockStop,
  fold,
  messageStart,
  messageStop,
  StopReason,
  StreamAccumulator,
  StreamProtocolError,
  streamError,
  text,
  textContent,
  textDelta,
  toolCall,
  toolCallArgs,
  toolCalls,
  usageUpdate,
  ValidationError,
  withSequence,
} from "../src/index.js";

test("event constructors refuse bad indexes and empty ids", () => {
  assert.throws(() => textDelta(-1, "x"), ValidationError);
  assert.throws(() => blockStop(1.5), ValidationError);
  assert.throws(() => blockStart(2 ** 31, text("")), ValidationError);
  assert.throws(() => messageStart(""), ValidationError);
  assert.throws(() => streamError(""), ValidationError);
  assert.throws(() => usageUpdate({ outputTokens: -5 }), ValidationError);
});

test("numbered events fold once each, in any resend pattern", () => {
  const events = [
    messageStart("m", { timestamp: 0 }),
    blockStart(0, toolCall("c", "f", undefined, { arguments: "" })),
    argumentsDelta(0, '{"a":'),
    argumentsDelta(0, " 1}"),
    blockStop(0),
    messageStop("tool_calls"),
  ].map((event, i) => withSequence(event, i));
  const resent = [...events.slice(0, 3), ...events.slice(1, 4), ...events.slice(2)];
  const accumulator = new StreamAccumulator().extend(resent);
  assert.equal(accumulator.duplicates, 4); // 1 and 2 once, 2 and 3 again
  const message = accumulator.finish();
  assert.deepEqual(toolCallArgs(toolCalls(message)[0] ?? assert.fail()), { a: 1 });
  assert.throws(() => fold([events[0], events[2]].filter((e) => e !== undefined)), StreamProtocolError);
});

test("snapshot shows a message while it streams; finish needs the end", () => {
  const accumulator = new StreamAccumulator();
  accumulator.extend([messageStart("live-1"), blockStart(0, text("")), textDelta(0, "Hel"), textDelta(0, "lo")]);
  assert.equal(accumulator.started, true);
  assert.equal(accumulator.done, false);
  assert.equal(accumulator.messageId, "live-1");
  assert.equal(textContent(accumulator.snapshot()), "Hello");
  accumulator.add(streamError("cut", { aborted: true }));
  const message = accumulator.finish();
  const body = message.role.case === "assistant" ? message.role.value : assert.fail();
  assert.equal(body.stopReason, StopReason.ABORT);
  assert.equal(body.error, "cut");
  assert.equal(accumulator.issues.length, 1);
});
