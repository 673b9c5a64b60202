// `make run-ts`: the service demo with the tool runner and an observer in TypeScript.
//
// Starts an agentmsg server (Python, embedded SQLite in a temporary directory), then:
// - a TypeScript ToolRunner serving `get_weather` (examples/weather-runner.ts), in this process;
// - a TypeScript observer following the session live: it folds the live stream events of each message being
//   generated with the SDK's StreamAccumulator, and checks the fold against the message the server logs;
// - the Python engine of `make run` (`python -m agentmsg.service.demo engine`): one agent turn with a scripted
//   model, a tool call answered by the TypeScript runner, and a streamed final answer.
// Every line says who printed it; everything stops cleanly, the server last (SIGTERM: graceful shutdown).
//
//   AGENTMSG_PYTHON=.venv/bin/python node sdk/typescript/dist/examples/demo.js

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { equals } from "@bufbuild/protobuf";
import {
  Client,
  MessageSchema,
  StopReason,
  StreamAccumulator,
  stopReasonName,
  textContent,
  toolCalls,
} from "../src/index.js";
import { weatherRunner } from "./weather-runner.js";

const SESSION = "demo-session";
const PYTHON = process.env.AGENTMSG_PYTHON ?? "python3";

function say(name: string, line: string): void {
  process.stdout.write(`[${name.padStart(6)}] ${line}\n`);
}

function pump(name: string, child: ChildProcess): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) readline.createInterface({ input: stream }).on("line", (line) => say(name, line));
  }
}

/** `agentmsg serve` on a free port; resolves with the process and its address. */
function startServer(db: string): Promise<{ server: ChildProcess; target: string }> {
  const server = spawn(PYTHON, ["-m", "agentmsg", "serve", "--port", "0", "--db", db], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: server.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => reject(new Error("the server did not start in 30 s")), 30_000);
    lines.on("line", (line) => {
      say("server", line);
      const found = /serving on (\S+)/.exec(line);
      if (found?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ server, target: found[1] });
      }
    });
    if (server.stderr) readline.createInterface({ input: server.stderr }).on("line", (line) => say("server", line));
    server.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
}

/** Follow the session: fold each live stream, print each logged message, stop after the final answer. */
async function observe(target: string, signal: AbortSignal): Promise<number> {
  const client = new Client(target);
  const streams = new Map<string, StreamAccumulator>();
  const folded = new Map<string, ReturnType<StreamAccumulator["finish"]>>();
  let mismatches = 0;
  try {
    for await (const item of client.subscribe(SESSION, { liveEvents: true, signal })) {
      if (item.kind === "live") {
        let fold = streams.get(item.streamId);
        if (fold === undefined) {
          fold = new StreamAccumulator();
          streams.set(item.streamId, fold);
        }
        fold.add(item.event);
        if (fold.done) {
          const message = fold.finish();
          folded.set(message.id, message);
          streams.delete(item.streamId);
          say("ts-obs", `live stream ${item.streamId.slice(0, 8)} folded: ${describe(message)}`);
        }
        continue;
      }
      const message = item.message;
      say("ts-obs", `#${item.offset} ${message.role.case}: ${describe(message)}`);
      const live = folded.get(message.id);
      if (live !== undefined) {
        const same = equals(MessageSchema, live, message);
        say("ts-obs", `  the live fold ${same ? "equals" : "DIFFERS FROM"} the logged message`);
        if (!same) mismatches += 1;
      }
      const body = message.role.case === "assistant" ? message.role.value : undefined;
      if (body?.stopReason === StopReason.STOP) break;
    }
  } finally {
    client.close();
  }
  return mismatches;
}

function describe(message: ReturnType<StreamAccumulator["finish"]>): string {
  const calls = toolCalls(message).map((c) => `${c.name}(${c.arguments})`);
  const body = message.role.case === "assistant" ? message.role.value : undefined;
  const text = textContent(message);
  const result =
    message.role.case === "tool"
      ? message.role.value.content.flatMap((c) => (c.kind.case === "toolResult" ? c.kind.value.content : []))
      : [];
  const resultText = result.map((c) => (c.kind.case === "text" ? c.kind.value.text : "")).join("");
  return [
    text && JSON.stringify(text),
    resultText && `result ${JSON.stringify(resultText)}`,
    calls.length > 0 && `calls ${calls.join(", ")}`,
    body && `stop ${stopReasonName(body.stopReason) ?? "unspecified"}`,
  ]
    .filter(Boolean)
    .join("; ");
}

async function main(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentmsg-ts-demo-"));
  const { server, target } = await startServer(path.join(dir, "demo.db"));
  const stop = new AbortController();
  let code = 0;
  try {
    const runner = weatherRunner(target);
    const serving = runner.serve({ signal: stop.signal });
    await runner.registered();
    say("ts-run", `serving get_weather as runner ${runner.runnerId}`);
    const observing = observe(target, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the observer subscribes before the turn starts
    const engine = spawn(PYTHON, ["-m", "agentmsg.service.demo", "engine", target], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    pump("engine", engine);
    const engineCode = await new Promise<number>((resolve) => engine.on("exit", (c) => resolve(c ?? 1)));
    const timeout = setTimeout(() => stop.abort(), 15_000);
    const mismatches = await observing;
    clearTimeout(timeout);
    stop.abort();
    await serving;
    code = engineCode !== 0 || mismatches > 0 ? 1 : 0;
  } finally {
    stop.abort();
    server.kill("SIGTERM");
    await new Promise((resolve) => server.on("exit", resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  say("demo", `TypeScript demo ${code === 0 ? "finished" : "FAILED"}: server, engine, runner and observer all exited`);
  return code;
}

process.exitCode = await main();
