// Appends while the server is away, for the cross-language tests: prints "trying", then the offset the append got
// once the server came back (it retries with backoff), as JSON.
//
//   node dist/interop/retry.js <target>

import { Client, userText } from "../src/index.js";

const [target] = process.argv.slice(2);
if (target === undefined) throw new Error("usage: retry.js <target>");

const client = new Client(target, {
  timeoutMs: 2_000,
  retry: { maxAttempts: 30, initialDelayMs: 50, maxDelayMs: 300 },
});
process.stdout.write(`${JSON.stringify({ trying: true })}\n`);
try {
  const message = userText("sent while the server was away", { id: "retried-1" });
  const offset = await client.append("retried", message);
  const again = await client.append("retried", message); // the same message again: the same offset
  process.stdout.write(`${JSON.stringify({ offset: String(offset), again: String(again) })}\n`);
} finally {
  client.close();
}
