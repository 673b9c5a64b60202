// The session viewer: a small, typed client of the public API (@agentmsg/sdk/web over Connect, same origin).
//
//   #/                     the sessions (ListSessions)
//   #/sessions/<id>        one session: its log paged by ListMessages into a virtualised list, then followed live
//                          (Subscribe with live events: a message being generated shows as it streams, and is
//                          replaced by the logged message once appended)
//   #/sessions/<id>/<n>    the same, scrolled to the entry at offset n and marked (each entry's #n links here)

import {
  Client,
  type Logged,
  type Message,
  messageToDict,
  PermissionDeniedError,
  type SessionInfo,
  StreamAccumulator,
  type StreamEvent,
  type ToolResultContent,
  UnauthenticatedError,
} from "@agentmsg/sdk/web";
import { ContextPanel } from "./context.js";
import { el, media, messageRow, UsageTotals } from "./render.js";
import { ToolsPanel } from "./tools.js";
import { TreeView } from "./tree.js";
import { VirtualList } from "./virtual.js";

const PAGE_SIZE = 200;
/** A Performance mark set once the first logged row of a session view has been painted. */
const FIRST_ROW_MARK = "agentmsg:first-row";

// A server started with --token wants a bearer token: asked for on a 401 or 403, kept for this tab only.
const TOKEN_KEY = "agentmsg.viewer.token";
let client = connect();

function connect(): Client {
  const token = window.sessionStorage.getItem(TOKEN_KEY) ?? "";
  return new Client(window.location.origin, token === "" ? {} : { token });
}
const app = document.getElementById("app") as HTMLElement;
const status = document.getElementById("status") as HTMLElement;

// The tools panel (tools.ts): a button in the top bar, on every page.
const tools = new ToolsPanel(() => client);
status.before(tools.button);
app.before(tools.root);
let current: AbortController | undefined;
let view: SessionView | undefined; // the session on screen (a hash change within it scrolls, not re-reads)

function say(text: string, error = false): void {
  status.textContent = text;
  status.className = error ? "status error" : "status";
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The token form, after the server refused the call for want of a (better) token. */
function askForToken(error: unknown): void {
  current?.abort(); // the view is left: the form replaces it
  view = undefined;
  const form = el("form", "token");
  const input = el("input");
  input.type = "password";
  input.name = "token";
  input.placeholder = "bearer token";
  input.autocomplete = "off";
  const submit = el("button", "", "use this token");
  submit.type = "submit";
  form.append(el("p", "error", describe(error)), input, " ", submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    window.sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    client.close();
    client = connect();
    void route();
  });
  app.replaceChildren(form);
  input.focus();
}

function sessionHref(id: string): string {
  return `#/sessions/${encodeURIComponent(id)}`;
}

async function showSessions(signal: AbortSignal): Promise<void> {
  document.title = "agentmsg sessions";
  say("loading sessions…");
  const sessions: SessionInfo[] = await client.listSessions({ signal });
  if (signal.aborted) return;
  const list = el("ul", "sessions");
  for (const info of sessions) {
    const a = el("a", "", info.sessionId);
    a.href = sessionHref(info.sessionId);
    const when = info.updateTime?.toISOString().replace("T", " ").slice(0, 19) ?? "";
    list.append(el("li", "", a, el("span", "muted", ` ${info.lastOffset} entries · ${when}`)));
  }
  app.replaceChildren(el("h1", "", "Sessions"), sessions.length > 0 ? list : el("p", "muted", "No sessions yet."));
  say(`${sessions.length} sessions`);
}

type Row =
  | { kind: "logged"; offset: bigint; message: Message }
  | { kind: "live"; streamId: string; fold: StreamAccumulator };

/**
 * One session's view. The rows are, first, the `head` entries the log held when the view opened (row i is offset
 * i + 1; a page of them is read by `ListMessages` when one of its rows is drawn), then whatever the subscription
 * brought since, in arrival order: logged messages and messages in flight. The subscription starts at once from
 * the head's last offset, so the view is live from its first paint whatever the session's length.
 */
class SessionView {
  private readonly rows: (Row | undefined)[] = [];
  private readonly results = new Map<string, ToolResultContent>();
  private readonly callRows = new Map<string, number>();
  private readonly liveRows = new Map<string, number>();
  private readonly pages = new Map<number, Promise<void>>();
  private readonly list: VirtualList;
  private head = 0;
  private read = 0;
  private lastOffset = 0n;
  private live = false;
  private fresh = 0;
  private painted = false;
  private readonly freshButton = el("button", "fresh");
  private readonly context: ContextPanel;
  private readonly totals = new UsageTotals();
  private readonly usage = el("p", "usage muted");
  // The tree (tree.ts): the list shows the path to its chosen leaf.
  private readonly tree = new TreeView({
    chosen: () => this.reshow(),
    context: (id, label) => this.context.open(id, label),
  });

  constructor(
    readonly sessionId: string,
    private readonly signal: AbortSignal,
    private target?: bigint,
  ) {
    const scroller = el("div", "scroller");
    scroller.id = "messages";
    const title = el("h1", "", el("a", "back", "Sessions"), " / ", el("span", "session-id", sessionId));
    (title.firstChild as HTMLAnchorElement).href = "#/";
    const exporter = el("button", "export", "export JSONL");
    exporter.type = "button";
    exporter.title = "the whole log, one message a line in the dict form";
    exporter.addEventListener("click", () => void this.export(exporter));
    this.freshButton.type = "button";
    this.freshButton.hidden = true;
    this.freshButton.title = "entries that arrived below the view: go to the end";
    this.freshButton.addEventListener("click", () => this.list.scrollToEnd());
    title.append(" ", exporter, " ", this.tree.toggle, " ", this.freshButton);
    this.context = new ContextPanel(client, sessionId, (id) => this.results.get(id));
    this.usage.textContent = this.totals.describe();
    app.replaceChildren(title, this.usage, el("div", "session", this.tree.root, scroller, this.context.root));
    scroller.addEventListener("click", (event) => this.clicked(event));
    scroller.addEventListener("scroll", () => this.seen(), { passive: true, signal });
    document.title = `agentmsg · ${sessionId}`;
    this.list = new VirtualList(scroller, (index) => this.renderRow(index), signal);
    this.list.onRendered = () => media.sweep();
    // Leaving the view (another session, the list, a token prompt) frees every blob: URL it made.
    signal.addEventListener("abort", () => media.revokeAll(), { once: true });
  }

  private renderRow(index: number): HTMLElement {
    const row = this.rows[index];
    const lookup = (id: string): ToolResultContent | undefined => this.results.get(id);
    if (row === undefined) {
      void this.page(index);
      return el("article", "msg placeholder", el("span", "offset", `#${index + 1}`), " loading…");
    }
    if (row.kind === "live") {
      // A stream that ended in an error (its own, or the server's when the publisher went away or the stream was
      // refused: then no message is logged to replace the row) is no longer generating: its error is shown.
      const message = row.fold.snapshot();
      const failed = row.fold.done && message.role.case === "assistant" && message.role.value.error !== "";
      const node = messageRow(message, undefined, lookup, !failed);
      if (failed) {
        node.classList.add("failed");
        node.querySelector("header")?.append(el("span", "badge bad", "stream failed"));
      }
      return node;
    }
    if (!this.tree.shows(row.message.id)) return el("div", "off-path"); // not on the path shown: drawn empty
    const node = messageRow(row.message, row.offset, lookup);
    node.dataset.id = row.message.id;
    if (!this.painted) {
      // The first logged row drawn: marked in the frame after the one it is drawn in (bench/viewer.py reads it).
      this.painted = true;
      requestAnimationFrame(() => performance.mark(FIRST_ROW_MARK));
    }
    const offset = node.querySelector("header .offset");
    if (offset !== null) {
      const here = el("a", "offset", `#${row.offset}`);
      here.href = `${sessionHref(this.sessionId)}/${row.offset}`;
      offset.replaceWith(here);
    }
    if (row.offset === this.target) node.classList.add("target");
    const button = el("button", "ctx", "what the model sees");
    button.type = "button";
    button.title = "the context for the path to this message, as agentmsg or a provider request";
    node.querySelector("header")?.append(button);
    return node;
  }

  private clicked(event: Event): void {
    const target = event.target;
    if (!(target instanceof HTMLButtonElement) || !target.classList.contains("ctx")) return;
    const index = Number(target.closest("article")?.dataset.row);
    const row = this.rows[index];
    if (row?.kind === "logged") this.context.open(row.message.id, `#${row.offset}`);
  }

  /** The path shown changed: every logged row is drawn again (those off the path as empty). */
  private reshow(): void {
    for (let i = 0; i < this.rows.length; i++) if (this.rows[i]?.kind === "logged") this.list.invalidate(i);
  }

  private index(message: Message, at: number): void {
    const role = message.role;
    if (role.case === "assistant") {
      for (const part of role.value.content)
        if (part.kind.case === "toolCall") this.callRows.set(part.kind.value.id, at);
    } else if (role.case === "tool" || role.case === "user") {
      for (const part of role.value.content) {
        if (part.kind.case !== "toolResult") continue;
        this.results.set(part.kind.value.id, part.kind.value);
        const call = this.callRows.get(part.kind.value.id);
        if (call !== undefined) this.list.invalidate(call);
      }
    }
  }

  private count(message: Message): void {
    this.read++;
    if (message.role.case === "assistant") {
      this.totals.add(message.role.value.usage);
      this.usage.textContent = this.totals.describe();
    }
  }

  /** The page of the head holding row `index`, read once (the same promise while it is being read). */
  private page(index: number): Promise<void> {
    const number = Math.floor(index / PAGE_SIZE);
    let reading = this.pages.get(number);
    if (reading === undefined) {
      reading = this.readPage(number).catch((error: unknown) => {
        this.pages.delete(number); // drawn again, it is asked for again
        if (this.signal.aborted) return;
        if (error instanceof UnauthenticatedError || error instanceof PermissionDeniedError) askForToken(error);
        else say(`could not read the session: ${describe(error)}`, true);
      });
      this.pages.set(number, reading);
    }
    return reading;
  }

  private async readPage(number: number): Promise<void> {
    const after = BigInt(number * PAGE_SIZE);
    const last = BigInt(Math.min(this.head, (number + 1) * PAGE_SIZE));
    let end: boolean | undefined; // at the end when the page came: kept there once its rows have their heights
    let moved = false; // the tree's path shown changed beyond the rows read here
    for await (const logged of client.listMessages(this.sessionId, {
      after,
      pageSize: PAGE_SIZE,
      signal: this.signal,
    })) {
      if (logged.offset > last) break;
      end ??= this.list.atEnd();
      const at = Number(logged.offset) - 1;
      if (this.rows[at] !== undefined) continue;
      this.rows[at] = { kind: "logged", offset: logged.offset, message: logged.message };
      if (this.tree.add(logged.offset, logged.message)) moved = true; // pages come in any order: the tree takes it
      this.index(logged.message, at);
      this.count(logged.message);
      this.list.invalidate(at);
      if (logged.offset === last) break;
    }
    if (moved) this.reshow();
    if (end === true) this.list.scrollToEnd();
    this.describeState();
  }

  private describeState(): void {
    const total = this.rows.length;
    const unread = total - this.read - this.liveRows.size;
    say(`${total} messages${unread > 0 ? ` (${unread} not read yet)` : ""}${this.live ? " · live" : ""}`);
  }

  /** New rows below the view are counted, and the count cleared once the end is in view. */
  private seen(): void {
    if (this.fresh > 0 && this.list.atEnd()) {
      this.fresh = 0;
      this.freshButton.hidden = true;
    }
  }

  private arrived(end: boolean): void {
    if (end) {
      this.list.scrollToEnd();
      return;
    }
    this.fresh++;
    this.freshButton.textContent = `${this.fresh} new ↓`;
    this.freshButton.hidden = false;
  }

  /** A message from the subscription (after the head): it takes its live row's place, or is appended. */
  private addLogged(logged: Logged, end: boolean): void {
    if (logged.offset <= this.lastOffset) return;
    this.lastOffset = logged.offset;
    this.count(logged.message);
    const row: Row = { kind: "logged", offset: logged.offset, message: logged.message };
    const moved = this.tree.add(logged.offset, logged.message);
    const live = this.liveRows.get(logged.message.id);
    if (live !== undefined) {
      // The message that was streaming is now in the log: it takes its live row's place.
      this.liveRows.delete(logged.message.id);
      this.rows[live] = row;
      this.index(logged.message, live);
      this.list.invalidate(live);
      if (moved) this.reshow();
      if (logged.offset === this.target) this.reached(logged.message.id, live);
      return;
    }
    this.rows.push(row);
    this.index(logged.message, this.rows.length - 1);
    this.list.grow(1);
    if (moved) this.reshow();
    if (logged.offset === this.target) this.reached(logged.message.id, this.rows.length - 1);
    else this.arrived(end);
  }

  private addLive(streamId: string, event: StreamEvent, end: boolean): void {
    const start = event.event.case === "messageStart";
    let at = [...this.liveRows.values()].find((i) => {
      const row = this.rows[i];
      return row?.kind === "live" && row.streamId === streamId;
    });
    if (at === undefined || start) {
      const fold = new StreamAccumulator();
      if (at === undefined) {
        this.rows.push({ kind: "live", streamId, fold });
        at = this.rows.length - 1;
        this.list.grow(1);
        this.arrived(end);
      } else {
        this.rows[at] = { kind: "live", streamId, fold };
      }
    }
    const row = this.rows[at];
    if (row?.kind !== "live") return;
    try {
      row.fold.add(event);
    } catch (error) {
      say(`a live event could not be applied: ${describe(error)}`, true);
      return;
    }
    const id = row.fold.messageId;
    if (id !== undefined) this.liveRows.set(id, at);
    this.list.invalidate(at);
  }

  /** The whole log as JSONL (each message's dict form, one a line), read page by page, saved as a download. */
  private async export(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const lines: string[] = [];
      for await (const logged of client.listMessages(this.sessionId, { pageSize: 500, signal: this.signal })) {
        lines.push(`${JSON.stringify(messageToDict(logged.message))}\n`);
      }
      const url = URL.createObjectURL(new Blob(lines, { type: "application/x-ndjson" }));
      const a = el("a");
      a.href = url;
      a.download = `${this.sessionId}.jsonl`;
      a.click();
      window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
      say(`exported ${lines.length} messages`);
    } catch (error) {
      if (!this.signal.aborted) say(`the export failed: ${describe(error)}`, true);
    } finally {
      button.disabled = false;
    }
  }

  /** The session's last offset now (`ListSessions`), 0 when it does not exist yet. */
  private async lastOffsetNow(): Promise<number> {
    const sessions = await client.listSessions({ pageSize: 1000, signal: this.signal });
    return Number(sessions.find((info) => info.sessionId === this.sessionId)?.lastOffset ?? 0n);
  }

  /** The head's rows (unread: each page is read when drawn), the subscription from its end, the target shown. */
  async open(): Promise<void> {
    this.head = await this.lastOffsetNow();
    if (this.signal.aborted) return;
    this.rows.length = this.head;
    this.lastOffset = BigInt(this.head);
    this.list.grow(this.head);
    if (this.head === 0) say("no entries yet: waiting for the first");
    else this.describeState();
    void this.follow();
    await this.goTo(this.target);
  }

  /** Scroll entry `target` to the top and mark it (reading its page if it is not read yet). */
  async goTo(target: bigint | undefined): Promise<void> {
    const before = this.rowOf(this.target);
    this.target = target;
    if (before !== undefined) this.list.invalidate(before);
    if (target === undefined) return;
    if (target >= 1n && target <= BigInt(this.head)) await this.page(Number(target) - 1);
    if (this.signal.aborted || this.target !== target) return;
    const index = this.rowOf(target);
    if (index === undefined) {
      // Not logged yet: marked and scrolled to when it arrives.
      if (target <= this.lastOffset) say(`session ${this.sessionId} has no entry #${target}`, true);
      return;
    }
    this.list.invalidate(index);
    const row = this.rows[index];
    if (row?.kind === "logged") this.reached(row.message.id, index);
    else this.list.scrollToIndex(index); // its page could not be read: its placeholder asks again when drawn
  }

  /** The target entry is read: a path through it is shown (the newest leaf below it, if off the path), scrolled to. */
  private reached(id: string, index: number): void {
    this.tree.reveal(id);
    this.list.scrollToIndex(index);
  }

  private rowOf(offset: bigint | undefined): number | undefined {
    if (offset === undefined) return undefined;
    if (offset >= 1n && offset <= BigInt(this.head)) return Number(offset) - 1;
    const index = this.rows.findIndex((row) => row?.kind === "logged" && row.offset === offset);
    return index < 0 ? undefined : index;
  }

  private async follow(): Promise<void> {
    try {
      for await (const item of client.subscribe(this.sessionId, {
        after: this.lastOffset,
        liveEvents: true,
        signal: this.signal,
      })) {
        this.live = true;
        const end = this.list.atEnd();
        if (item.kind === "logged") this.addLogged(item, end);
        else this.addLive(item.streamId, item.event, end);
        this.describeState();
      }
    } catch (error) {
      if (!this.signal.aborted) say(`the live subscription ended: ${describe(error)}`, true);
    }
  }
}

async function route(): Promise<void> {
  const match = /^#\/sessions\/([^/]+)(?:\/(\d+))?$/.exec(window.location.hash);
  const sessionId = match === null ? undefined : decodeURIComponent(match[1] ?? "");
  const target = match?.[2] === undefined ? undefined : BigInt(match[2]);
  if (view !== undefined && view.sessionId === sessionId && current?.signal.aborted === false) {
    // Another entry of the session on screen: scroll to it, nothing is read again.
    await view.goTo(target);
    return;
  }
  current?.abort();
  view = undefined;
  const controller = new AbortController();
  current = controller;
  try {
    if (sessionId === undefined) await showSessions(controller.signal);
    else {
      view = new SessionView(sessionId, controller.signal, target);
      await view.open();
    }
  } catch (error) {
    if (controller.signal.aborted) return;
    say(describe(error), true);
    if (error instanceof UnauthenticatedError || error instanceof PermissionDeniedError) askForToken(error);
  }
}

window.addEventListener("hashchange", () => void route());
void route();
