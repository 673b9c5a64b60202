// Tool approval in the SDK: the decision block and the call flag, checked by the contract, in both JSON forms, and on
// the runner's tool definition.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  approve,
  contentFromDict,
  contentToDict,
  decodeJson,
  deny,
  encodeJson,
  isApproval,
  isApproved,
  MessageSchema,
  ToolApprovalDecision,
  ToolRunner,
  toolApproval,
  toolCall,
  userMessage,
  ValidationError,
} from "../src/index.js";

test("approve and deny build the approval arm with who and when", () => {
  const at = new Date("2026-01-02T03:04:05.678Z");
  const yes = approve("call_1", { decidedBy: "ann", decidedAt: at });
  const no = deny("call_2", { reason: "too much", decidedBy: "bob", decidedAt: at });
  assert.ok(isApproval(yes) && isApproval(no));
  assert.ok(isApproved(yes.kind.value));
  assert.equal(no.kind.value.decision, ToolApprovalDecision.DENIED);
  assert.deepEqual(contentToDict(no), {
    type: "approval",
    call_id: "call_2",
    decision: "denied",
    reason: "too much",
    decided_by: "bob",
    decided_at: "2026-01-02T03:04:05.678Z",
  });
  assert.deepEqual(contentToDict(contentFromDict(contentToDict(no))), contentToDict(no));
  const message = userMessage([yes, no]);
  assert.deepEqual(decodeJson(MessageSchema, encodeJson(MessageSchema, message)), message);
  assert.ok(toolApproval("call_3", true).kind.case === "approval");
});

test("the contract refuses a decision with no call, and an unknown decision in the dict form", () => {
  assert.throws(() => approve(""), ValidationError);
  assert.throws(
    () => contentFromDict({ type: "approval", call_id: "c", decision: "maybe" }),
    (error: unknown) => error instanceof ValidationError && error.violations[0]?.field === ".decision",
  );
});

test("requiresApproval on a call and on a runner's tool", () => {
  const call = toolCall("c", "rm", { path: "x" }, { requiresApproval: true });
  assert.ok(call.kind.case === "toolCall" && call.kind.value.requiresApproval);
  assert.equal(contentToDict(call).requires_approval, true);
  const runner = new ToolRunner("127.0.0.1:1");
  runner.tool("rm", { type: "object" }, () => "ok", { requiresApproval: true });
  runner.tool("ls", { type: "object" }, () => "ok");
  assert.deepEqual(
    runner.definitions.map((d) => [d.name, d.requiresApproval]),
    [
      ["rm", true],
      ["ls", false],
    ],
  );
});
