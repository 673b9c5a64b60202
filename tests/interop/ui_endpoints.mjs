// The protocols' own clients against agentmsg's agent-UI endpoints: @ag-ui/client's HttpAgent and the AI SDK's
// DefaultChatTransport + readUIMessageStream (npm `ai` 7).
// argv: <mode> <base URL> <session id> [JSON argument]. Prints one JSON result on stdout; writes "started" on
// stderr once a live run's request is accepted (the test's engine publishes only then).
//   ag-ui         hydrate with a run of no input: {messages}
//   ag-ui-run     hydrate, add the user message (argument: an AG-UI message), run: {messages, events}
//   ai-sdk        GET .../messages through validateUIMessages: {messages}
//   ai-sdk-turn   the resumable-stream GET with Last-Event-ID (argument: the id), read to a UIMessage: {message}
//   ai-sdk-chat   send the user message (argument: a UIMessage) through the transport: {message, chunks}
//   ai-sdk-drop   send it, go away after the first text delta, reconnect as useChat's resume does
//                 (reconnectToStream; "dropped" on stderr once it is answered): {before, message}, the chunks
//                 before and the message resumed
import { HttpAgent } from "@ag-ui/client";
import { DefaultChatTransport, readUIMessageStream, validateUIMessages } from "ai";

const [mode, base, session, argument] = process.argv.slice(2);
const out = (value) => process.stdout.write(JSON.stringify(value));

function agent() {
  return new HttpAgent({ url: `${base}/ag-ui/sessions/${encodeURIComponent(session)}`, threadId: session });
}

function transport(lastEventId) {
  return new DefaultChatTransport({
    api: `${base}/ai-sdk/sessions`,
    prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
      api: `${base}/ai-sdk/sessions/${encodeURIComponent(id)}`,
      body: { id, messages, trigger, messageId },
    }),
    prepareReconnectToStreamRequest: () => ({ headers: lastEventId ? { "last-event-id": lastEventId } : {} }),
  });
}

async function read(stream) {
  let last = null;
  for await (const message of readUIMessageStream({
    stream,
    terminateOnError: true,
    onError: (error) => {
      throw error;
    },
  })) {
    last = message;
  }
  return last;
}

if (mode === "ag-ui") {
  const a = agent();
  await a.runAgent({ runId: "hydrate" });
  out({ messages: a.messages });
} else if (mode === "ag-ui-run") {
  const a = agent();
  await a.runAgent({ runId: "hydrate" });
  a.addMessage(JSON.parse(argument));
  // the live run: its RUN_STARTED comes once the server has appended the user's message
  const events = [];
  await a.runAgent(
    { runId: "live" },
    {
      onEvent({ event }) {
        events.push(event);
        if (event.type === "RUN_STARTED") process.stderr.write("started\n");
      },
    },
  );
  out({ messages: a.messages, events });
} else if (mode === "ai-sdk") {
  const response = await fetch(`${base}/ai-sdk/sessions/${encodeURIComponent(session)}/messages`);
  out({ messages: await validateUIMessages({ messages: await response.json() }) });
} else if (mode === "ai-sdk-turn") {
  const stream = await transport(argument).reconnectToStream({ chatId: session });
  out({ message: stream === null ? null : await read(stream) });
} else if (mode === "ai-sdk-chat") {
  const user = JSON.parse(argument);
  const stream = await transport().sendMessages({
    chatId: session,
    messages: [user],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  process.stderr.write("started\n");
  const [counted, folded] = stream.tee();
  const chunks = [];
  const counting = (async () => {
    for await (const chunk of counted) chunks.push(chunk);
  })();
  const message = await read(folded);
  await counting;
  out({ message, chunks });
} else if (mode === "ai-sdk-drop") {
  const abort = new AbortController();
  const stream = await transport().sendMessages({
    chatId: session,
    messages: [JSON.parse(argument)],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: abort.signal,
  });
  process.stderr.write("started\n");
  const before = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    before.push(value);
    if (value.type === "text-delta") break;
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  const resumed = await transport().reconnectToStream({ chatId: session });
  process.stderr.write("dropped\n"); // and reconnected: the server answered the resume
  out({ before, message: resumed === null ? null : await read(resumed) });
} else {
  throw new Error(`unknown mode ${mode}`);
}
