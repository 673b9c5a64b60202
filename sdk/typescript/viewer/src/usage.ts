// Usage and cost summed over a path (the assistant messages from the root to a leaf): each count and each part of the
// cost over the messages that reported it, "not reported" when none did (never 0 for what nobody counted).

import type { Message, Usage } from "@agentmsg/sdk/web";
import { el } from "./render.js";

const COUNTS = [
  ["in", "in", (u: Usage) => u.inputTokens],
  ["out", "out", (u: Usage) => u.outputTokens],
  ["cache-read", "cache read", (u: Usage) => u.cacheReadTokens],
  ["cache-write", "cache write", (u: Usage) => u.cacheWriteTokens],
] as const;

const COSTS = [
  ["cost", "cost", (u: Usage) => u.cost?.total],
  ["cost-input", "in", (u: Usage) => u.cost?.input],
  ["cost-output", "out", (u: Usage) => u.cost?.output],
  ["cost-cache-read", "cache read", (u: Usage) => u.cost?.cacheRead],
  ["cost-cache-write", "cache write", (u: Usage) => u.cost?.cacheWrite],
] as const;

/** The sums over one path's assistant messages. */
export class PathUsage {
  messages = 0;
  /** Assistant messages with no usage at all. */
  unreported = 0;
  /** Assistant messages with no total cost. */
  uncosted = 0;
  readonly counts = new Map<string, bigint>();
  readonly costs = new Map<string, number>();

  static of(path: readonly Message[]): PathUsage {
    const sums = new PathUsage();
    for (const message of path) if (message.role.case === "assistant") sums.add(message.role.value.usage);
    return sums;
  }

  add(usage: Usage | undefined): void {
    this.messages++;
    if (usage?.cost?.total === undefined) this.uncosted++;
    if (usage === undefined) {
      this.unreported++;
      return;
    }
    for (const [key, , get] of COUNTS) {
      const value = get(usage);
      if (value !== undefined) this.counts.set(key, (this.counts.get(key) ?? 0n) + value);
    }
    for (const [key, , get] of COSTS) {
      const value = get(usage);
      if (value !== undefined) this.costs.set(key, (this.costs.get(key) ?? 0) + value);
    }
  }

  /** The sums as a line, each also as a data attribute (absent when not reported). */
  element(className: string): HTMLElement {
    const box = el("div", `${className} muted`);
    box.dataset.messages = String(this.messages);
    box.dataset.unreported = String(this.unreported);
    if (this.messages === 0) {
      box.textContent = "no assistant message on this path";
      return box;
    }
    const parts: string[] = [];
    for (const [key, label] of COUNTS) {
      const sum = this.counts.get(key);
      if (sum !== undefined) box.dataset[dataKey(key)] = String(sum);
      parts.push(sum === undefined ? `${label} not reported` : `${label} ${sum}`);
    }
    const total = this.costs.get("cost");
    const pieces: string[] = [];
    for (const [key, label, ,] of COSTS) {
      const sum = this.costs.get(key);
      if (sum === undefined) continue;
      box.dataset[dataKey(key)] = String(sum);
      if (key !== "cost") pieces.push(`${label} ${round(sum)}`);
    }
    const cost = total === undefined ? "cost not reported" : `cost ${round(total)}`;
    parts.push(pieces.length > 0 ? `${cost} (${pieces.join(", ")})` : cost);
    const gaps = [
      this.unreported > 0 ? `${this.unreported} without usage` : "",
      this.uncosted > 0 && this.uncosted < this.messages ? `${this.uncosted} without cost` : "",
    ].filter((gap) => gap !== "");
    const n = `${this.messages} assistant ${this.messages === 1 ? "message" : "messages"}`;
    box.textContent = `${n}: ${parts.join(" · ")}${gaps.length > 0 ? ` (${gaps.join(", ")})` : ""}`;
    return box;
  }
}

function round(value: number): number {
  return Number(value.toFixed(6));
}

/** `cache-read` → `cacheRead`, the name under which `dataset` writes `data-cache-read`. */
function dataKey(key: string): string {
  return key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
