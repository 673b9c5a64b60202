// A TypeScript subscriber for the cross-language tests: follows a session from the start, printing one JSON line
// per logged message and per reconnect, and exits after `count` messages (or when the subscription fails, printing
// the error's name: a deleted session's subscription ends with NotFoundError).
//
//   node dist/interop/subscriber.js <target> <session> <count>

import { Client, textContent } from "../src/index.js";

const [target, session, count] = process.argv.slice(2);
if (target === undefined || session === undefined || count === undefined) {
  throw new Error("usage: subscriber.js <target> <session> <count>");
}

function print(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const client = new Client(target);
const stop = new AbortController();
let seen = 0;
print({ subscribed: session });
try {
  for await (const item of client.subscribe(session, {
    signal: stop.signal,
    reconnect: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 100 },
    onReconnect: (after, error) => print({ reconnect: String(after), error: (error as Error).name }),
  })) {
    if (item.kind !== "logged") continue;
    print({ offset: String(item.offset), id: item.message.id, text: textContent(item.message) });
    seen += 1;
    if (seen >= Number(count)) stop.abort();
  }
} catch (error) {
  print({ ended: (error as Error).name }); // the subscription ended with an error (its session deleted)
}
client.close();
print({ done: seen });
