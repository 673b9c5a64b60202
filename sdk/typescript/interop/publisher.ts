// A TypeScript publisher for the cross-language tests: streams an assistant message live with publishStream, a
// few characters an event, and prints the message its own fold gives, the message the server logged, and the
// offset, as ProtoJSON.
//
//   node dist/interop/publisher.js <target> <session>

import {
  assistantMessage,
  Client,
  encodeJson,
  eventsFromMessage,
  fold,
  MessageSchema,
  type StreamEvent,
  text,
  thinkingBlock,
  toolCall,
} from "../src/index.js";

const [target, session] = process.argv.slice(2);
if (target === undefined || session === undefined) throw new Error("usage: publisher.js <target> <session>");

const message = assistantMessage(
  [
    thinkingBlock("The user wants the weather; ask the tool.", "c2lnbmVkIGJ5IHRoZSBtb2RlbA=="),
    text("Let me check the weather in Paris. "),
    toolCall("call_ts_1", "get_weather", undefined, { arguments: '{"city": "Paris", "unit": "C"}', kind: "web" }),
  ],
  {
    id: "ts-streamed-1",
    timestamp: Date.UTC(2026, 0, 2, 3, 4, 5),
    usage: { inputTokens: 42, outputTokens: 17, cost: { total: 0.0012 } },
    stopReason: "tool_calls",
    stopReasonRaw: "tool_use",
    provenance: { provider: "scripted", api: "typescript-demo", model: "scripted-1", responseId: "resp_ts_1" },
  },
);
const events = eventsFromMessage(message, { chunkSize: 5 });
const local = fold(events);

async function* live(): AsyncGenerator<StreamEvent> {
  for (const event of events) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    yield event;
  }
}

const client = new Client(target);
try {
  const { offset, message: logged } = await client.publishStream(session, live());
  process.stdout.write(
    `${JSON.stringify({
      offset: String(offset),
      events: events.length,
      local: encodeJson(MessageSchema, local),
      logged: encodeJson(MessageSchema, logged),
    })}\n`,
  );
} finally {
  client.close();
}
