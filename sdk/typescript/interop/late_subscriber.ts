// A TypeScript live subscriber for the catch-up test: follows a session with live events, prints {"joined"} once
// it has read offset 1 (the server registers a subscription before it reads the log), and at the logged message
// at offset 2 prints the message its own fold of the live events gives, the logged message (ProtoJSON) and the
// sequence numbers it got.
//
//   node dist/interop/late_subscriber.js <target> <session>

import { Client, encodeJson, MessageSchema, StreamAccumulator, type StreamEvent } from "../src/index.js";

const [target, session] = process.argv.slice(2);
if (target === undefined || session === undefined) throw new Error("usage: late_subscriber.js <target> <session>");

function print(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const client = new Client(target);
const stop = new AbortController();
const live: StreamEvent[] = [];
try {
  for await (const item of client.subscribe(session, { signal: stop.signal, liveEvents: true })) {
    if (item.kind === "live") {
      live.push(item.event);
      continue;
    }
    if (item.offset === 1n) print({ joined: true });
    if (item.offset === 2n) {
      const folded = new StreamAccumulator();
      for (const event of live) folded.add(event);
      print({
        live: live.length,
        sequences: live.map((event) => (event.sequence === undefined ? null : Number(event.sequence))),
        folded: live.length > 0 ? encodeJson(MessageSchema, folded.finish()) : null,
        logged: encodeJson(MessageSchema, item.message),
      });
      stop.abort();
    }
  }
} finally {
  client.close();
}
