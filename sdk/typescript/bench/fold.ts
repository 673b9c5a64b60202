// The TypeScript half of bench/typescript.py: times the SDK on the streams and the vector Python times, and prints
// nanoseconds per operation as JSON (median of repeats, each repeat calibrated to about `target` seconds).
//
//   node dist/bench/fold.js <length-delimited StreamEvent files...> --vector <Conversation .binpb> [--quick]

import fs from "node:fs";
import { fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { sizeDelimitedDecodeStream } from "@bufbuild/protobuf/wire";
import { ConversationSchema, decodeBinary, fold, registry, type StreamEvent, StreamEventSchema } from "../src/index.js";

async function readEvents(path: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of sizeDelimitedDecodeStream(StreamEventSchema, fs.createReadStream(path))) events.push(event);
  return events;
}

function run(fn: () => unknown, loops: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < loops; i++) fn();
  return Number(process.hrtime.bigint() - start);
}

/** Median nanoseconds per call: calibrate a loop count to about `target` seconds, then time `repeats` repeats. */
function measure(fn: () => unknown, target: number, repeats: number): { ns: number; samples: number[] } {
  let loops = 1;
  let elapsed = run(fn, loops); // also the warm-up
  while (elapsed < (target * 1e9) / 10 && loops < 100_000) {
    loops *= elapsed < (target * 1e9) / 100 ? 10 : 2;
    elapsed = run(fn, loops);
  }
  loops = Math.max(1, Math.round((loops * target * 1e9) / Math.max(elapsed, 1)));
  const samples = Array.from({ length: repeats }, () => run(fn, loops) / loops).sort((a, b) => a - b);
  return { ns: samples[Math.floor(samples.length / 2)] ?? 0, samples };
}

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const vectorAt = args.indexOf("--vector");
const vector = args[vectorAt + 1];
if (vectorAt < 0 || vector === undefined) throw new Error("usage: fold.js <events files...> --vector <file> [--quick]");
const files = args.filter((a, i) => !a.startsWith("--") && i !== vectorAt + 1);
const [target, repeats] = quick ? [0.05, 3] : [0.2, 7];

const results: Record<string, { ns: number; samples: number[] }> = {};
for (const file of files) {
  const events = await readEvents(file);
  results[`fold ${file.split("/").pop()}`] = measure(() => fold(events), target, repeats);
}
const bytes = new Uint8Array(fs.readFileSync(vector));
const conversation = fromBinary(ConversationSchema, bytes);
results["decode + validate"] = measure(() => decodeBinary(ConversationSchema, bytes), target, repeats);
results["encode binary"] = measure(() => toBinary(ConversationSchema, conversation), target, repeats);
results["encode ProtoJSON text"] = measure(
  () => toJsonString(ConversationSchema, conversation, { registry }),
  target,
  repeats,
);
process.stdout.write(`${JSON.stringify({ node: process.version, results })}\n`);
