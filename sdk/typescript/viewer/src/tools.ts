// The tool runners connected now: ListTools, read each time the panel opens and on its refresh button. Tool names,
// titles and runner names come from runners: untrusted text, shown as text.

import { type Client, type RegisteredTool, ToolKind } from "@agentmsg/sdk/web";
import { el } from "./render.js";

/** `TOOL_KIND_EXECUTE` → `execute`; an unknown number (a newer contract) as itself. */
function kindName(kind: ToolKind): string {
  const name = ToolKind[kind] as string | undefined;
  if (name === undefined) return String(kind);
  return name === "UNSPECIFIED" ? "unspecified" : name.toLowerCase().replace(/_/g, " ");
}

/** A button for the page's top bar and the panel it opens. */
export class ToolsPanel {
  readonly button = el("button", "tools-toggle", "tools");
  readonly root = el("section", "tools");
  private readonly body = el("div", "tools-body");
  private controller: AbortController | undefined;

  constructor(private readonly client: () => Client) {
    this.button.type = "button";
    this.button.title = "the tools the connected runners serve now";
    this.button.addEventListener("click", () => {
      this.root.hidden = !this.root.hidden;
      if (this.root.hidden) this.controller?.abort();
      else void this.refresh();
    });
    const refresh = el("button", "refresh", "refresh");
    refresh.type = "button";
    refresh.addEventListener("click", () => void this.refresh());
    const close = el("button", "close", "close");
    close.type = "button";
    close.addEventListener("click", () => {
      this.controller?.abort();
      this.root.hidden = true;
    });
    this.root.append(el("div", "tools-head", el("strong", "", "Tools connected now"), refresh, close), this.body);
    this.root.hidden = true;
  }

  async refresh(): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.body.replaceChildren(el("p", "muted", "asking the service…"));
    let tools: RegisteredTool[];
    try {
      tools = await this.client().listTools({ signal: controller.signal });
    } catch (error) {
      if (!controller.signal.aborted)
        this.body.replaceChildren(
          el("p", "error", error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
        );
      return;
    }
    if (controller.signal.aborted) return;
    const when = new Date().toISOString().slice(11, 19);
    if (tools.length === 0) {
      this.body.replaceChildren(el("p", "muted", `no runner serves a tool (as of ${when} UTC)`));
      return;
    }
    const table = el("table", "tool-list");
    table.append(el("thead", "", el("tr", "", el("th", "", "tool"), el("th", "", "kind"), el("th", "", "runner"))));
    const rows = el("tbody");
    for (const registered of tools) {
      const tool = registered.tool;
      const name = el("td", "name", el("code", "", tool.name));
      if (tool.title !== "") name.append(el("span", "muted", ` ${tool.title}`));
      if (tool.requiresApproval) name.append(" ", el("span", "badge", "needs approval"));
      const runner = el("td", "runner", registered.runnerName);
      if (registered.runnerId !== "") runner.append(el("span", "muted", ` ${registered.runnerId}`));
      const row = el("tr", "tool", name, el("td", "kind", kindName(tool.kind)), runner);
      row.dataset.name = tool.name;
      row.dataset.kind = kindName(tool.kind);
      row.dataset.runner = registered.runnerName;
      row.dataset.runnerId = registered.runnerId;
      if (tool.description !== "") row.title = tool.description;
      rows.append(row);
    }
    table.append(rows);
    const count = `${tools.length} ${tools.length === 1 ? "tool" : "tools"} (as of ${when} UTC)`;
    this.body.replaceChildren(el("p", "muted", count), table);
  }
}
