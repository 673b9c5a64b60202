// A page that uses @agentmsg/sdk/web as an application would: the bundle `make ts-bundle` builds
// (dist/browser/agentmsg-web.js), served beside this file by tests/interop/test_browser.py, which drives the page in
// Chromium through `window.harness`. The query string says where the service's HTTP port is and how to speak to it:
// ?server=http://127.0.0.1:PORT&session=ID&protocol=connect|grpc-web&format=binary|json&live=1

import {
  CancelledError,
  Client,
  encodeJson,
  fold,
  MessageSchema,
  ServiceError,
  text,
  textContent,
  toolCall,
  toolResultText,
  userMessage,
} from "./agentmsg-web.js";

const query = new URLSearchParams(location.search);
const server = query.get("server") ?? "";
const session = query.get("session") ?? "browser";
const client = new Client(server, {
  protocol: query.get("protocol") === "grpc-web" ? "grpc-web" : "connect",
  format: query.get("format") === "json" ? "json" : "binary",
  retry: { initialDelayMs: 50, maxDelayMs: 500, maxAttempts: 20 },
});

// What the page has seen, for the test to read: the subscription's logged messages (offset and text), the kinds of
// the live stream events it relayed (with live=1), each reconnect (the offset it resumed after and why), and the
// error that ended the subscription, if one did.
const state = { received: [], live: [], reconnects: [], ended: null };
const liveEvents = [];
const logged = [];
const following = new AbortController();
const pending = new Map();

document.getElementById("session").textContent = session;
document.getElementById("server").textContent = server;

function show(status) {
  document.getElementById("status").textContent = status;
}

function failure(error) {
  return {
    error: error instanceof Error ? error.name : String(error),
    message: error instanceof Error ? error.message : String(error),
    violations: error?.violations ?? [],
    service: error instanceof ServiceError,
  };
}

async function follow() {
  show("following");
  try {
    const items = client.subscribe(session, {
      signal: following.signal,
      liveEvents: query.get("live") === "1",
      reconnect: { initialDelayMs: 50, maxDelayMs: 500, maxAttempts: 200 },
      onReconnect: (after, error) => {
        state.reconnects.push({ after: Number(after), error: error?.name ?? String(error) });
        show(`reconnecting after offset ${after}`);
      },
    });
    for await (const item of items) {
      if (item.kind === "live") {
        liveEvents.push(item.event);
        state.live.push(item.event.event.case);
        continue;
      }
      logged.push(item.message);
      const entry = { offset: Number(item.offset), id: item.message.id, text: textContent(item.message) };
      state.received.push(entry);
      const line = document.createElement("li");
      line.value = entry.offset;
      line.textContent = entry.text;
      document.getElementById("log").append(line);
      show("following");
    }
    show("stopped");
  } catch (error) {
    state.ended = failure(error);
    show(`ended: ${state.ended.error}`);
  }
}

window.harness = {
  state,
  /** Append a user message with `value`; its offset, or the failure. */
  async append(value, sessionId = session) {
    try {
      return { offset: Number(await client.append(sessionId, userMessage([text(value)]))) };
    } catch (error) {
      return failure(error);
    }
  },
  /** Call a tool and wait for its result: its text and error flag, or the failure. */
  async callTool(name, args, callId) {
    try {
      const result = await client.callTool(toolCall(callId, name, args));
      return { text: toolResultText(result), isError: result.isError };
    } catch (error) {
      return failure(error);
    }
  },
  /** Start a tool call that `abort(callId)` cancels; `settled(callId)` waits for how it ended. */
  startTool(name, args, callId) {
    const controller = new AbortController();
    const call = client
      .callTool(toolCall(callId, name, args), { signal: controller.signal })
      .then((result) => ({ text: toolResultText(result) }))
      .catch((error) => ({ ...failure(error), cancelled: error instanceof CancelledError }));
    pending.set(callId, { controller, call });
  },
  abort(callId) {
    pending.get(callId)?.controller.abort();
  },
  settled(callId) {
    return pending.get(callId)?.call;
  },
  /** The live events relayed so far, folded by the SDK: the message's text, and whether it equals the last logged one. */
  foldLive() {
    const folded = fold(liveEvents);
    const last = logged.at(-1);
    const json = (message) => JSON.stringify(encodeJson(MessageSchema, message));
    return { text: textContent(folded), same: last !== undefined && json(folded) === json(last) };
  },
  /** The tools the runners serve now, by name. */
  async tools() {
    return (await client.listTools()).map((registered) => registered.tool.name);
  },
  stop() {
    following.abort();
    client.close();
  },
};

follow();
