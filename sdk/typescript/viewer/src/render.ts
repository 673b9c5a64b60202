// One message as DOM, block by block. Everything from a message (text, tool output, file names, ids, custom
// payloads) is untrusted: it reaches the page only as textContent, through markdown() (itself textContent only) or
// as a link whose URL passed safeUrl(). Images and documents carried as bytes are shown from blob: URLs of their
// own declared type; an image by URL is shown only when the URL is http(s).

import type { Citation, Content, JsonObject, Message, TextContent, ToolResultContent, Usage } from "@agentmsg/sdk/web";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { link, markdown, safeUrl } from "./markdown.js";
import { runLine } from "./run.js";

/** Finds the result of a tool call by its id (results arrive in later tool messages). */
export type ResultLookup = (callId: string) => ToolResultContent | undefined;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = "",
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== "") node.className = className;
  node.append(...children);
  return node;
}

function badge(text: string, className = "badge"): HTMLElement {
  return el("span", className, text);
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function jsonBlock(value: JsonObject | undefined | string, className = "json"): HTMLElement {
  const text = typeof value === "string" ? pretty(value) : JSON.stringify(value ?? {}, null, 2);
  return el("pre", className, text);
}

/**
 * The blob: URLs of media bytes, one per block (keyed by its bytes), made when a row showing it is drawn. `sweep()`
 * revokes those no element of the page uses any more (their rows left the virtual list's window, or the panel was
 * redrawn), `revokeAll()` every one (the view is left): a 5 MiB image's copy is not kept alive after it is gone.
 */
export class MediaUrls {
  private readonly urls = new Map<Uint8Array, string>();

  url(data: Uint8Array, mediaType: string): string {
    let url = this.urls.get(data);
    if (url === undefined) {
      url = URL.createObjectURL(new Blob([data as BlobPart], { type: mediaType }));
      this.urls.set(data, url);
    }
    return url;
  }

  get size(): number {
    return this.urls.size;
  }

  sweep(): void {
    if (this.urls.size === 0) return;
    const used = new Set<string>();
    for (const node of document.querySelectorAll<HTMLElement>('[src^="blob:"], [href^="blob:"]'))
      used.add(node.getAttribute("src") ?? node.getAttribute("href") ?? "");
    for (const [data, url] of this.urls) {
      if (used.has(url)) continue;
      URL.revokeObjectURL(url);
      this.urls.delete(data);
    }
  }

  revokeAll(): void {
    for (const url of this.urls.values()) URL.revokeObjectURL(url);
    this.urls.clear();
  }
}

/** The page's media URLs (the session view sweeps them after each draw and revokes them all when it is left). */
export const media = new MediaUrls();

function blobUrl(data: Uint8Array, mediaType: string): string {
  return media.url(data, mediaType);
}

/** An http(s) URL, or undefined (a citation's source links only to the web). */
function webUrl(raw: string): string | undefined {
  const url = safeUrl(raw);
  return url?.startsWith("http:") === true || url?.startsWith("https:") === true ? url : undefined;
}

/** A [start, end) range shown inclusive: "pages 3-4" for pages (3, 5), "pages 3" for (3, 4). */
function range(name: string, value: { start: bigint; end: bigint }): string {
  const last = value.end - 1n;
  return last <= value.start ? `${name} ${value.start}` : `${name} ${value.start}-${last}`;
}

/** A citation's source as a list item: its kind, title, link (http(s) only, else the URL as text), quote. */
function citationSource(citation: Citation, number: number): HTMLElement {
  const item = el("li", "cite-source");
  item.dataset.cite = String(number);
  item.append(el("span", "cite-number", `[${number}] `));
  const source = citation.source;
  switch (source.case) {
    case "web": {
      const title = source.value.title || source.value.url;
      const href = webUrl(source.value.url);
      if (href === undefined) item.append(badge("web"), ` ${title} `, el("span", "muted unsafe", source.value.url));
      else {
        const a = el("a", "", title);
        a.href = href;
        a.rel = "noopener noreferrer nofollow";
        a.target = "_blank";
        item.append(badge("web"), " ", a);
      }
      break;
    }
    case "document": {
      const doc = source.value;
      const where =
        doc.location.case === undefined
          ? ""
          : `, ${range(doc.location.case === "chars" ? "characters" : doc.location.case, doc.location.value)}`;
      item.append(badge("document"), ` #${doc.documentIndex}${doc.title === "" ? "" : ` ${doc.title}`}${where}`);
      break;
    }
    case "searchResult": {
      const result = source.value;
      const href = webUrl(result.source);
      item.append(badge("search result"), ` ${result.title || result.source} `);
      if (href !== undefined && result.title !== "") item.append(link(result.source, href));
      break;
    }
    case "file":
      item.append(badge("file"), ` ${source.value.filename || source.value.fileId}`);
      break;
    default:
      item.append(badge("citation"), ` ${citation.original?.provider ?? ""} ${citation.original?.type ?? ""}`);
  }
  if (citation.citedText !== "") item.append(el("q", "cited", citation.citedText));
  return item;
}

/**
 * A text block with its citations: each cited span of the text marked and numbered after the sources it cites,
 * the sources listed below. Spans are in code points of the block's text; a block with spans is shown as its plain
 * text (a span's bounds are positions in the Markdown source, not in rendered Markdown); a block whose citations
 * cover it whole (no span) keeps its Markdown and is marked as a whole.
 */
function citedText(value: TextContent): HTMLElement {
  const box = el("div", "block text cited");
  const citations = value.citations;
  const chars = Array.from(value.text);
  // A span in code points, clamped to the text; a start without an end runs to the end of the text.
  const spans = citations.map((c, i) => ({
    number: i + 1,
    start: c.startIndex === undefined ? undefined : Math.min(c.startIndex, chars.length),
    end:
      c.startIndex === undefined
        ? undefined
        : Math.min(Math.max(c.endIndex ?? chars.length, c.startIndex), chars.length),
  }));
  const whole = spans.filter((span) => span.start === undefined).map((span) => span.number);
  const spanned = spans.filter((span) => span.start !== undefined);
  const refs = (numbers: number[]): HTMLElement => el("sup", "cite-ref", numbers.map((n) => `[${n}]`).join(""));
  if (spanned.length === 0) {
    box.append(markdown(value.text));
  } else {
    const text = el("div", "cited-text");
    const cuts = new Set<number>([0, chars.length]);
    for (const span of spanned) {
      cuts.add(span.start ?? 0);
      cuts.add(span.end ?? chars.length);
    }
    const points = [...cuts].sort((a, b) => a - b);
    const atPoint = (p: number): number[] =>
      spanned.filter((span) => span.start === p && span.end === p).map((span) => span.number);
    if (atPoint(0).length > 0) text.append(refs(atPoint(0)));
    for (let i = 0; i + 1 < points.length; i++) {
      const from = points[i] ?? 0;
      const to = points[i + 1] ?? from;
      const covering = spanned
        .filter((span) => (span.start ?? 0) <= from && to <= (span.end ?? chars.length))
        .map((span) => span.number);
      const piece = chars.slice(from, to).join("");
      if (covering.length === 0) text.append(piece);
      else {
        const mark = el("mark", "cite-span", piece);
        mark.dataset.cites = covering.join(" ");
        mark.title = covering.map((n) => `[${n}]`).join(" ");
        text.append(mark);
      }
      // The numbers of the spans ending here, and of the point citations (start = end) here, follow the text.
      const ending = spanned.filter((span) => span.end === to && (span.start ?? 0) < to).map((span) => span.number);
      const here = [...ending, ...atPoint(to)];
      if (here.length > 0) text.append(refs(here));
    }
    box.append(text);
  }
  if (whole.length > 0) {
    box.classList.add("cited-whole");
    box.dataset.cites = whole.join(" ");
    box.append(refs(whole));
  }
  box.append(el("ol", "cite-sources", ...citations.map((c, i) => citationSource(c, i + 1))));
  return box;
}

function image(value: Extract<Content["kind"], { case: "image" }>["value"]): HTMLElement {
  const figure = el("figure", "block image");
  const source = value.source;
  if (source.case === "data") {
    const img = el("img");
    img.alt = `image (${value.mediaType})`;
    img.decoding = "async";
    img.loading = "lazy";
    img.src = blobUrl(source.value, value.mediaType || "application/octet-stream");
    figure.append(img);
  } else if (source.case === "url" && safeUrl(source.value)?.startsWith("http") === true) {
    const img = el("img");
    img.alt = "image";
    img.loading = "lazy";
    img.referrerPolicy = "no-referrer";
    img.src = safeUrl(source.value) ?? "";
    figure.append(img);
  } else {
    figure.append(el("span", "muted", `image ${source.case ?? "without source"}: ${String(source.value ?? "")}`));
  }
  return figure;
}

function document_(value: Extract<Content["kind"], { case: "document" }>["value"]): HTMLElement {
  const box = el("div", "block document");
  const name = value.filename || value.title || "document";
  box.append(badge("document"), " ");
  const source = value.source;
  if (source.case === "data") {
    const a = el("a");
    a.href = blobUrl(source.value, "application/octet-stream");
    a.download = name;
    a.textContent = `${name} (${value.mediaType}, ${source.value.byteLength} bytes)`;
    box.append(a);
  } else if (source.case === "url") {
    box.append(link(name, source.value));
  } else {
    box.append(`${name} (${source.case ?? "no source"}: ${String(source.value ?? "")})`);
  }
  return box;
}

function toolResultBody(result: ToolResultContent, lookup: ResultLookup): HTMLElement {
  const box = el("div", result.isError ? "tool-result error" : "tool-result");
  box.append(badge(result.isError ? "error" : "result", result.isError ? "badge bad" : "badge ok"));
  const run = runLine(result.metadata); // latency and runner, as CallTool recorded them (run.ts)
  if (run !== undefined) box.append(run);
  for (const part of result.content) box.append(block(part, lookup));
  if (result.metadata !== undefined && Object.keys(result.metadata).length > 0) {
    box.append(
      el("details", "meta", el("summary", "", "metadata (not sent to the model)"), jsonBlock(result.metadata)),
    );
  }
  return box;
}

/** One content block. */
export function block(content: Content, lookup: ResultLookup, signer = "", live = false): HTMLElement {
  const kind = content.kind;
  switch (kind.case) {
    case "text":
      if (kind.value.citations.length > 0) return citedText(kind.value);
      return el("div", "block text", markdown(kind.value.text));
    case "thinking": {
      const details = el("details", "block thinking");
      details.open = live; // open while it streams, collapsed once logged
      const summary = el("summary", "", badge("thinking"), " ");
      if (kind.value.signature !== "")
        summary.append(badge(signer === "" ? "signed" : `signed: replays to ${signer}`, "badge sig"));
      details.append(summary, el("div", "thinking-text", kind.value.text));
      return details;
    }
    case "redactedThinking":
      return el("div", "block redacted", badge("redacted thinking"), ` opaque, ${kind.value.data.length} characters`);
    case "toolCall": {
      const call = kind.value;
      const box = el("div", "block tool-call");
      box.dataset.callId = call.id;
      box.append(
        el(
          "div",
          "tool-head",
          badge("tool call"),
          " ",
          el("strong", "", call.name),
          el("span", "muted", ` ${call.id}`),
        ),
      );
      box.append(jsonBlock(call.arguments));
      const result = lookup(call.id);
      if (result !== undefined) box.append(toolResultBody(result, lookup));
      else box.append(el("div", "muted pending", "waiting for the result"));
      return box;
    }
    case "toolResult": {
      const result = kind.value;
      const box = el("div", "block tool-result-ref");
      box.append(
        badge(result.isError ? "error" : "result", result.isError ? "badge bad" : "badge ok"),
        ` ${result.name} `,
      );
      box.append(el("span", "muted", result.id));
      box.append(el("details", "", el("summary", "", "output"), ...result.content.map((part) => block(part, lookup))));
      return box;
    }
    case "image":
      return image(kind.value);
    case "audio": {
      const box = el("div", "block audio", badge("audio"), ` ${kind.value.mediaType} `);
      const source = kind.value.source;
      if (source.case === "data") {
        const audio = el("audio");
        audio.controls = true;
        audio.preload = "none";
        audio.src = blobUrl(source.value, kind.value.mediaType || "application/octet-stream");
        box.append(audio);
      } else if (source.case === "url") {
        box.append(link("audio", source.value));
      } else {
        box.append(`${source.case ?? "no source"}: ${String(source.value ?? "")}`);
      }
      return box;
    }
    case "document":
      return document_(kind.value);
    case "hostedToolCall":
      return el("div", "block hosted", badge("hosted tool call"), ` ${kind.value.name} `, jsonBlock(kind.value.input));
    case "hostedToolResult": {
      const box = el(
        "div",
        "block hosted",
        badge(kind.value.isError ? "hosted tool error" : "hosted tool result"),
        ` ${kind.value.name}`,
      );
      for (const part of kind.value.content) box.append(block(part, lookup));
      return box;
    }
    case "approval":
      return el("div", "block approval", badge("approval"), ` ${JSON.stringify(kind.value)}`);
    case "provider":
      return el("div", "block provider", badge("provider block"), ` ${kind.value.provider} ${kind.value.type}`);
    default:
      return el("div", "block unknown", badge("unknown block"));
  }
}

/** Usage as a line: each count, or "not reported" (never 0 for a count the provider did not give). */
export function usageLine(usage: Usage | undefined): string {
  if (usage === undefined) return "usage not reported";
  const part = (name: string, value: bigint | undefined): string =>
    value === undefined ? `${name} not reported` : `${name} ${value}`;
  const cost = usage.cost?.total;
  return [
    part("in", usage.inputTokens),
    part("out", usage.outputTokens),
    part("cache read", usage.cacheReadTokens),
    part("cache write", usage.cacheWriteTokens),
    cost === undefined ? "cost not reported" : `cost ${cost}`,
  ].join(" · ");
}

/** Usage summed over assistant messages: each count over the messages that reported it, "not reported" when none. */
export class UsageTotals {
  messages = 0;
  unreported = 0;
  private readonly sums = new Map<string, bigint>();
  private costs = 0;
  private cost = 0;

  add(usage: Usage | undefined): void {
    this.messages++;
    if (usage === undefined) {
      this.unreported++;
      return;
    }
    const counts: [string, bigint | undefined][] = [
      ["in", usage.inputTokens],
      ["out", usage.outputTokens],
      ["cache read", usage.cacheReadTokens],
      ["cache write", usage.cacheWriteTokens],
    ];
    for (const [name, value] of counts) {
      if (value !== undefined) this.sums.set(name, (this.sums.get(name) ?? 0n) + value);
    }
    if (usage.cost?.total !== undefined) {
      this.costs++;
      this.cost += usage.cost.total;
    }
  }

  describe(): string {
    if (this.messages === 0) return "no assistant message read yet";
    const parts = ["in", "out", "cache read", "cache write"].map((name) => {
      const sum = this.sums.get(name);
      return sum === undefined ? `${name} not reported` : `${name} ${sum}`;
    });
    parts.push(this.costs === 0 ? "cost not reported" : `cost ${Number(this.cost.toFixed(6))}`);
    const gaps = [
      this.unreported > 0 ? `${this.unreported} without usage` : "",
      this.costs > 0 && this.costs < this.messages ? `${this.messages - this.costs} without cost` : "",
    ].filter((gap) => gap !== "");
    const tail = gaps.length > 0 ? ` (${gaps.join(", ")})` : "";
    return `${this.messages} assistant messages read: ${parts.join(" · ")}${tail}`;
  }
}

/** A message as a row: its role, its blocks, and for an assistant the provider, model, stop reason and usage. */
export function messageRow(
  message: Message,
  offset: bigint | undefined,
  lookup: ResultLookup,
  live = false,
): HTMLElement {
  const role = message.role;
  const row = el("article", `msg role-${role.case ?? "unknown"}${live ? " live" : ""}`);
  const head = el("header", "msg-head", badge(role.case ?? "unknown", "badge role"));
  if (offset !== undefined) head.append(el("span", "offset", `#${offset}`));
  if (live) head.append(badge("generating", "badge live"));
  if (message.name !== "") head.append(el("span", "muted", ` ${message.name}`));
  row.append(head);
  switch (role.case) {
    case "system":
    case "user":
    case "tool":
      for (const part of role.value.content) row.append(block(part, lookup));
      break;
    case "assistant": {
      const value = role.value;
      const provenance = value.provenance;
      const signer = provenance === undefined ? "" : `${provenance.provider} ${provenance.model}`.trim();
      if (signer !== "") head.append(badge(signer, "badge model"));
      for (const part of value.content) row.append(block(part, lookup, signer, live));
      if (value.error !== "") row.append(el("div", "block error", value.error));
      if (!live) {
        const stop = value.stopReasonRaw !== "" ? value.stopReasonRaw : "";
        row.append(el("footer", "msg-foot", `${usageLine(value.usage)}${stop !== "" ? ` · stop ${stop}` : ""}`));
      }
      break;
    }
    case "custom":
      head.append(badge(role.value.customType, "badge"));
      for (const part of role.value.content) row.append(block(part, lookup));
      if (role.value.details !== undefined)
        row.append(jsonBlock(JSON.stringify(toJson(ValueSchema, role.value.details))));
      break;
    case "branchSummary":
      row.append(el("div", "block summary", badge("branch summary"), markdown(role.value.summary)));
      break;
    case "compactionSummary":
      row.append(el("div", "block summary", badge("compaction"), markdown(role.value.summary)));
      break;
    default:
      row.append(el("div", "muted", "a message of a role this viewer does not know"));
  }
  return row;
}
