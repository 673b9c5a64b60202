// A person's decision on a tool call, from TypeScript, for the cross-language approval tests: appends an approval
// (or a denial) of `callId` to `session` with Client.decide and prints the offset, or the typed error the service
// answered (a refused decision), as JSON.
//
//   node dist/interop/approver.js <target> <session> <callId> approve|deny [reason] [token]

import { Client, ValidationError } from "../src/index.js";

const [target, session, callId, verdict, reason, token] = process.argv.slice(2);
if (target === undefined || session === undefined || callId === undefined || verdict === undefined) {
  throw new Error("usage: approver.js <target> <session> <callId> approve|deny [reason] [token]");
}
if (verdict !== "approve" && verdict !== "deny") throw new Error(`approve or deny, not ${verdict}`);
const client = new Client(target, { timeoutMs: 20_000, token });
try {
  const offset = await client.decide(session, callId, verdict === "approve", {
    reason: reason ?? "",
    decidedBy: "ts-reviewer",
  });
  process.stdout.write(`${JSON.stringify({ offset: Number(offset) })}\n`);
} catch (error) {
  const err = error as Error;
  const fields = error instanceof ValidationError ? error.violations.map((v) => [v.field, v.ruleId]) : [];
  process.stdout.write(`${JSON.stringify({ error: err.name, message: err.message, fields })}\n`);
} finally {
  client.close();
}
