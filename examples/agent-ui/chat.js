// A chat page on an agentmsg session through AG-UI: @ag-ui/client's HttpAgent against the server's
// /ag-ui/sessions/{id} endpoint. It hydrates the session (a run with no input), shows each message, sends what the
// user types (appended to the session's log by the server), and shows the answer's text as its deltas arrive; the
// engine, any agentmsg client with publish_stream, writes the answer.
import { HttpAgent } from "@ag-ui/client";

const query = new URLSearchParams(location.search);
const server = query.get("server") ?? "http://127.0.0.1:8080";
const session = query.get("session") ?? "chat-1";
const agent = new HttpAgent({ url: `${server}/ag-ui/sessions/${encodeURIComponent(session)}`, threadId: session });

// What the page has seen, for whoever drives it (the end-to-end test reads it).
const state = { messages: [], deltas: [], runs: 0, error: null };
window.chat = { state, ready: false };

function text(message) {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => part.text ?? `[${part.type}]`).join(" ");
  return message.toolCalls ? message.toolCalls.map((call) => `${call.function.name}(${call.function.arguments})`).join(" ") : "";
}

function render() {
  const list = document.getElementById("messages");
  list.replaceChildren(
    ...agent.messages.map((message) => {
      const item = document.createElement("li");
      item.dataset.role = message.role;
      item.textContent = `${message.role}: ${text(message)}`;
      return item;
    }),
  );
  state.messages = structuredClone(agent.messages);
}

async function run(runId) {
  const live = document.getElementById("live");
  live.textContent = "";
  try {
    await agent.runAgent(
      { runId },
      {
        onTextMessageContentEvent({ event }) {
          state.deltas.push(event.delta);
          live.textContent += event.delta;
        },
      },
    );
  } catch (error) {
    state.error = String(error);
  }
  state.runs += 1;
  render();
}

document.getElementById("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("text");
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: input.value });
  input.value = "";
  await run(crypto.randomUUID());
});

await run("hydrate");
window.chat.ready = true;
