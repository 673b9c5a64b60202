// A context larger than one reply, for the cross-language tests: appends `count` messages of `size` characters each
// and reads the context back with buildContext, which pages through the parts. Prints the ids it got as JSON.
//
//   node dist/interop/context.js <target> <count> <size>

import { Client, userText } from "../src/index.js";

const [target, count, size] = process.argv.slice(2);
if (target === undefined || count === undefined || size === undefined) {
  throw new Error("usage: context.js <target> <count> <size>");
}
const client = new Client(target, { timeoutMs: 20_000 });
try {
  for (let i = 0; i < Number(count); i++) {
    await client.append("big", userText(`${i}:`.padEnd(Number(size), "x"), { id: `big-${i}` }));
  }
  const context = await client.buildContext("big");
  process.stdout.write(`${JSON.stringify({ ids: context.map((m) => m.id) })}\n`);
} finally {
  client.close();
}
