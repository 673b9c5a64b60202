// A TypeScript publisher for the cross-language tests: streams an assistant message live with publishStream, a
// few characters an event, and prints the message its own fold gives, the message the server logged, and the
// offset, as ProtoJSON.
//
//   node dist/interop/publisher.js <target> <session>

import {
  assistantMessage,
  Client,
  citation,
  encodeJson,
  eventsFromMessage,
  fold,
  hostedToolCall,
  hostedToolResult,
  MessageSchema,
  type StreamEvent,
  text,
  thinkingBlock,
  tokenLogprob,
  toolCall,
} from "../src/index.js";

const [target, session] = process.argv.slice(2);
if (target === undefined || session === undefined) throw new Error("usage: publisher.js <target> <session>");

const message = assistantMessage(
  [
    thinkingBlock("The user wants the weather; ask the tool.", "c2lnbmVkIGJ5IHRoZSBtb2RlbA=="),
    hostedToolCall("srvtoolu_1", "web_search", { kind: "web_search", args: { query: "Paris weather" } }),
    hostedToolResult("srvtoolu_1", [], {
      kind: "web_search",
      searchResults: { results: [{ url: "https://example.com/paris", title: "Paris forecast" }] },
    }),
    text("Let me check the weather in Paris. ", {
      citations: [
        citation({
          citedText: "Paris",
          source: { case: "web", value: { url: "https://example.com/paris", title: "Paris forecast" } },
        }),
      ],
      logprobs: [tokenLogprob({ token: "Let", logprob: -0.25 })],
    }),
    toolCall("call_ts_1", "get_weather", undefined, { arguments: '{"city": "Paris", "unit": "C"}', kind: "web" }),
  ],
  {
    id: "ts-streamed-1",
    timestamp: Date.UTC(2026, 0, 2, 3, 4, 5),
    usage: { inputTokens: 42, outputTokens: 17, hostedToolRequests: { web_search: 1 }, cost: { total: 0.0012 } },
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
