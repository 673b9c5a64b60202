// Where and how long a tool call ran: what the service's CallTool records in the result's metadata under
// "agentmsg.run" (`runner`, `runner_id`, `latency_ms`). The log is untrusted: a value of the wrong type is not shown.

import type { JsonObject, JsonValue } from "@agentmsg/sdk/web";

export const RUN_METADATA_KEY = "agentmsg.run";

/** The run a result's metadata records, or undefined when it records none (a result not made through CallTool). */
export interface Run {
  readonly runner: string | undefined;
  readonly runnerId: string | undefined;
  readonly latencyMs: number | undefined;
}

function text(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function runOf(metadata: JsonObject | undefined): Run | undefined {
  const run = metadata?.[RUN_METADATA_KEY];
  if (run === null || typeof run !== "object" || Array.isArray(run)) return undefined;
  const latency = run.latency_ms;
  const latencyMs = typeof latency === "number" && Number.isFinite(latency) && latency >= 0 ? latency : undefined;
  const found = { runner: text(run.runner), runnerId: text(run.runner_id), latencyMs };
  return found.runner === undefined && found.latencyMs === undefined ? undefined : found;
}

/** "12.5 ms", "1.20 s". */
export function duration(ms: number): string {
  return ms < 1000 ? `${Number(ms.toFixed(1))} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** The run as a line in the result's head, or undefined. */
export function runLine(metadata: JsonObject | undefined): HTMLElement | undefined {
  const run = runOf(metadata);
  if (run === undefined) return undefined;
  const line = document.createElement("span");
  line.className = "run muted";
  const parts: string[] = [];
  if (run.latencyMs !== undefined) {
    parts.push(duration(run.latencyMs));
    line.dataset.latencyMs = String(run.latencyMs);
  }
  if (run.runner !== undefined) {
    parts.push(`by ${run.runner}`);
    line.dataset.runner = run.runner;
  }
  if (run.runnerId !== undefined) {
    line.dataset.runnerId = run.runnerId;
    line.title = `runner ${run.runnerId}`;
  }
  line.textContent = ` ${parts.join(" ")}`;
  return line;
}
