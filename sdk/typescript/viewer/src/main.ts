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
  NotFoundError,
  PermissionDeniedError,
  type SessionInfo,
  StreamAccumulator,
  type StreamEvent,
  type ToolResultContent,
  UnauthenticatedError,
} from "@agentmsg/sdk/web";
import { ContextPanel } from "./context.js";
import { el, messageRow, UsageTotals } from "./render.js";
import { ToolsPanel } from "./tools.js";
import { TreeView } from "./tree.js";
import { VirtualList } from "./virtual.js";

const PAGE_SIZE = 200;

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

function say(text: string, error = false): void {
  status.textContent = text;
  status.className = error ? "status error" : "status";
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The token form, after the server refused the call for want of a (better) token. */
function askForToken(error: unknown): void {
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

/** One session's view: the rows (logged and in flight), the tool results by call id, the virtualised list. */
class SessionView {
  private readonly rows: Row[] = [];
  private readonly results = new Map<string, ToolResultContent>();
  private readonly callRows = new Map<string, number>();
  private readonly liveRows = new Map<string, number>();
  private readonly list: VirtualList;
  private lastOffset = 0n;
  private pages: AsyncGenerator<Logged> | undefined;
  private loading: Promise<void> | undefined;
  private following = false;
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
    private readonly target?: bigint,
  ) {
    const scroller = el("div", "scroller");
    scroller.id = "messages";
    const title = el("h1", "", el("a", "back", "Sessions"), " / ", el("span", "session-id", sessionId));
    (title.firstChild as HTMLAnchorElement).href = "#/";
    const exporter = el("button", "export", "export JSONL");
    exporter.type = "button";
    exporter.title = "the whole log, one message a line in the dict form";
    exporter.addEventListener("click", () => void this.export(exporter));
    title.append(" ", exporter, " ", this.tree.toggle);
    this.context = new ContextPanel(client, sessionId, (id) => this.results.get(id));
    this.usage.textContent = this.totals.describe();
    app.replaceChildren(title, this.usage, el("div", "session", this.tree.root, scroller, this.context.root));
    scroller.addEventListener("click", (event) => this.clicked(event));
    document.title = `agentmsg · ${sessionId}`;
    this.list = new VirtualList(scroller, (index) => this.renderRow(index), signal);
    this.list.onNearEnd = () => void this.loadPage().catch(askForToken);
    this.pages = client.listMessages(sessionId, { pageSize: PAGE_SIZE, signal });
  }

  private renderRow(index: number): HTMLElement {
    const row = this.rows[index];
    const lookup = (id: string): ToolResultContent | undefined => this.results.get(id);
    if (row === undefined) return el("div");
    if (row.kind === "live") return messageRow(row.fold.snapshot(), undefined, lookup, true);
    if (!this.tree.shows(row.message.id)) return el("div", "off-path"); // not on the path shown
    const node = messageRow(row.message, row.offset, lookup);
    node.dataset.id = row.message.id;
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

  private addLogged(logged: Logged): void {
    if (logged.offset <= this.lastOffset) return;
    this.lastOffset = logged.offset;
    if (logged.message.role.case === "assistant") {
      this.totals.add(logged.message.role.value.usage);
      this.usage.textContent = this.totals.describe();
    }
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
      return;
    }
    this.rows.push(row);
    this.index(logged.message, this.rows.length - 1);
    this.list.grow(1);
    if (moved) this.reshow();
  }

  private addLive(streamId: string, event: StreamEvent): void {
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

  /** The pages up to the target entry (a deep link), then the target scrolled to the top. */
  async open(): Promise<void> {
    await this.loadPage();
    const target = this.target;
    if (target === undefined) return;
    while (this.lastOffset < target && this.pages !== undefined && !this.signal.aborted) await this.loadPage();
    const index = this.rows.findIndex((row) => row.kind === "logged" && row.offset === target);
    if (index < 0) say(`session ${this.sessionId} has no entry #${target}`, true);
    else {
      const row = this.rows[index];
      if (row?.kind === "logged") this.tree.reveal(row.message.id); // an entry off the current path: a path to it
      this.list.scrollToIndex(index);
    }
  }

  /** The next page of the log (the one being read, if any); once the log is read, follow the session live. */
  loadPage(): Promise<void> {
    if (this.loading === undefined && this.pages !== undefined) {
      this.loading = this.readPage().finally(() => {
        this.loading = undefined;
      });
    }
    return this.loading ?? Promise.resolve();
  }

  private async readPage(): Promise<void> {
    if (this.pages === undefined) return;
    try {
      let count = 0;
      while (count < PAGE_SIZE) {
        const next = await this.pages.next();
        if (next.done === true) {
          this.pages = undefined;
          break;
        }
        this.addLogged(next.value);
        count++;
      }
      say(`${this.rows.length} messages${this.pages === undefined ? "" : " (scroll for more)"}`);
    } catch (error) {
      this.pages = undefined;
      if (error instanceof UnauthenticatedError || error instanceof PermissionDeniedError) throw error;
      if (error instanceof NotFoundError && this.rows.length === 0) {
        // No entry yet: follow it, so a page opened before the session starts shows it from its first entry.
        say("no entries yet: waiting for the first");
      } else {
        if (!this.signal.aborted) say(`could not read the session: ${describe(error)}`, true);
        return;
      }
    }
    if (this.pages === undefined && !this.following) void this.follow();
  }

  private async follow(): Promise<void> {
    this.following = true;
    try {
      for await (const item of client.subscribe(this.sessionId, {
        after: this.lastOffset,
        liveEvents: true,
        signal: this.signal,
      })) {
        const end = this.list.atEnd();
        if (item.kind === "logged") this.addLogged(item);
        else this.addLive(item.streamId, item.event);
        if (end) this.list.scrollToEnd();
        say(`${this.rows.length} messages · live`);
      }
    } catch (error) {
      if (!this.signal.aborted) say(`the live subscription ended: ${describe(error)}`, true);
    }
  }
}

async function route(): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const match = /^#\/sessions\/([^/]+)(?:\/(\d+))?$/.exec(window.location.hash);
  try {
    if (match === null) await showSessions(controller.signal);
    else {
      const target = match[2] === undefined ? undefined : BigInt(match[2]);
      await new SessionView(decodeURIComponent(match[1] ?? ""), controller.signal, target).open();
    }
  } catch (error) {
    if (controller.signal.aborted) return;
    say(describe(error), true);
    if (error instanceof UnauthenticatedError || error instanceof PermissionDeniedError) askForToken(error);
  }
}

window.addEventListener("hashchange", () => void route());
void route();
