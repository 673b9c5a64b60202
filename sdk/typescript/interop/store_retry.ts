// One append to a server whose store refuses writes, for the cross-language tests: prints the error the append
// ended with once its retries ran out, as JSON. A StoreError (UNAVAILABLE) is retried as the Python client retries
// it; a StoreFullError (RESOURCE_EXHAUSTED) is not.
//
//   node dist/interop/store_retry.js <target> <maxAttempts> <textLength>

import { Client, userText } from "../src/index.js";

const [target, attempts, length] = process.argv.slice(2);
if (target === undefined || attempts === undefined || length === undefined) {
  throw new Error("usage: store_retry.js <target> <maxAttempts> <textLength>");
}

const client = new Client(target, {
  timeoutMs: 10_000,
  retry: { maxAttempts: Number(attempts), initialDelayMs: 10, maxDelayMs: 20 },
});
try {
  await client.append("refused", userText("r".repeat(Number(length)), { id: "r1" }));
  process.stdout.write(`${JSON.stringify({ error: null })}\n`);
} catch (error) {
  const failed = error as Error;
  process.stdout.write(`${JSON.stringify({ error: failed.name, message: failed.message })}\n`);
} finally {
  client.close();
}
