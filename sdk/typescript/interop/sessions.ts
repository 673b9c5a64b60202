// The session calls of the TypeScript client against the Python server, for the cross-language tests: append and
// appendMany (again, to show idempotence), listMessages page by page, branch, compact, buildContext, listSessions,
// and the typed errors of bad tree operations. Prints one JSON report.
//
//   node dist/interop/sessions.js <target>

import { create } from "@bufbuild/protobuf";
import {
  assistantText,
  Client,
  type JsonObject,
  type Message,
  messageToDict,
  ProviderStateSchema,
  userText,
} from "../src/index.js";

const [target] = process.argv.slice(2);
if (target === undefined) throw new Error("usage: sessions.js <target>");

const user = (id: string): Message => userText(id, { id, timestamp: 1000 });
const assistant = (id: string): Message => assistantText(id, { id, timestamp: 1000, stopReason: "stop" });

async function error(run: () => Promise<unknown>): Promise<JsonObject> {
  try {
    await run();
    return { error: null };
  } catch (e) {
    const err = e as Error & { violations?: { ruleId: string }[] };
    return { error: err.name, rules: (err.violations ?? []).map((v) => v.ruleId) };
  }
}

const client = new Client(target, { timeoutMs: 10_000 });
const report: JsonObject = {};
try {
  const batch = [user("u1"), assistant("a1"), user("u2"), assistant("a2")];
  report.appendMany = (await client.appendMany("tree", batch)).map(String);
  report.appendManyAgain = (await client.appendMany("tree", batch)).map(String);
  report.appendAgain = String(await client.append("tree", user("u1")));
  const pages: string[] = [];
  for await (const logged of client.listMessages("tree", { pageSize: 3 }))
    pages.push(`${logged.offset}:${logged.message.id}`);
  report.listed = pages;
  const branched = await client.branch("tree", "a1", "u2 went nowhere", { entryId: "b1" });
  report.branched = { offset: String(branched.offset), dict: messageToDict(branched.message) };
  await client.append("tree", user("u3"));
  report.context = (await client.buildContext("tree")).map((m) => m.id);
  report.contextAtA2 = (await client.buildContext("tree", { leaf: "a2" })).map((m) => m.id);
  const compacted = await client.compact("tree", "all of it", {
    firstKeptEntryId: "u3",
    tokensBefore: 500,
    entryId: "k1",
    providerState: create(ProviderStateSchema, {
      provider: "openai",
      data: "ENC",
      api: "openai-responses",
      type: "compaction",
    }),
  });
  report.compacted = { offset: String(compacted.offset), dict: messageToDict(compacted.message) };
  report.contextAfterCompaction = (await client.buildContext("tree")).map((m) => m.id);
  report.sessions = (await client.listSessions({ pageSize: 1 })).map((s) => [s.sessionId, String(s.lastOffset)]);
  report.branchGhost = await error(() => client.branch("tree", "ghost", "x"));
  report.compactBadKeep = await error(() => client.compact("tree", "s", { firstKeptEntryId: "nope" }));
  report.contextGhost = await error(() => client.buildContext("tree", { leaf: "ghost" }));
  report.conflict = await error(() => client.append("tree", userText("other text", { id: "u1", timestamp: 1000 })));
  report.badSession = await error(() => client.append("not a session id!", user("x1")));
  // Delete: whole, idempotent, reads NOT_FOUND after, the id (and message ids) reusable.
  await client.appendMany("doomed", [user("d1"), user("d2")]);
  const deleted = await client.deleteSession("doomed");
  report.deleted = [deleted.deleted, String(deleted.deletedMessages)];
  const again = await client.deleteSession("doomed");
  report.deletedAgain = [again.deleted, String(again.deletedMessages)];
  report.listDeleted = await error(async () => {
    for await (const _ of client.listMessages("doomed")) {
      // a deleted session has no pages to read
    }
  });
  report.contextDeleted = await error(() => client.buildContext("doomed"));
  report.contextNever = await error(() => client.buildContext("never-written"));
  report.reused = String(await client.append("doomed", user("d2")));
  report.badDelete = await error(() => client.deleteSession("not a session id!"));
} finally {
  client.close();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
