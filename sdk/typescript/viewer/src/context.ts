// "What the model sees from here": the context for a leaf (BuildContext), as agentmsg messages or as a provider
// request converted by the server (ConvertService's ToProvider, the Python converters), with every loss the
// conversion reports listed beside it.

import type { Client, ConversionFormatName, ToolResultContent } from "@agentmsg/sdk/web";
import { el, messageRow } from "./render.js";

export const FORMATS: readonly { readonly name: "agentmsg" | ConversionFormatName; readonly label: string }[] = [
  { name: "agentmsg", label: "agentmsg (BuildContext)" },
  { name: "openai-chat", label: "OpenAI Chat" },
  { name: "openai-responses", label: "OpenAI Responses" },
  { name: "anthropic", label: "Anthropic" },
  { name: "gemini", label: "Gemini" },
];

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

/** The side panel: a format picker and what the model sees for the chosen leaf in that format. */
export class ContextPanel {
  readonly root = el("aside", "context");
  private readonly body = el("div", "context-body");
  private readonly picker = el("select", "format");
  private leaf: { id: string; label: string } | undefined;
  private controller: AbortController | undefined;

  constructor(
    private readonly client: Client,
    private readonly sessionId: string,
    private readonly lookup: (callId: string) => ToolResultContent | undefined,
  ) {
    for (const format of FORMATS) {
      const option = el("option", "", format.label);
      option.value = format.name;
      this.picker.append(option);
    }
    this.picker.addEventListener("change", () => void this.show());
    const close = el("button", "close", "close");
    close.type = "button";
    close.addEventListener("click", () => {
      this.controller?.abort();
      this.root.hidden = true;
    });
    this.root.append(el("div", "context-head", el("strong", "", "What the model sees"), this.picker, close), this.body);
    this.root.hidden = true;
  }

  /** Show the context for the path to `leafId`. */
  open(leafId: string, label: string): void {
    this.leaf = { id: leafId, label };
    this.root.hidden = false;
    void this.show();
  }

  private async show(): Promise<void> {
    const leaf = this.leaf;
    if (leaf === undefined) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const format = this.picker.value as (typeof FORMATS)[number]["name"];
    this.body.replaceChildren(el("p", "muted", `loading the context to ${leaf.label}…`));
    try {
      if (format === "agentmsg") {
        const messages = await this.client.buildContext(this.sessionId, { leaf: leaf.id, signal: controller.signal });
        if (controller.signal.aborted) return;
        const note = el("p", "muted", `${messages.length} messages to ${leaf.label}`);
        const rows = messages.map((m) => {
          const row = messageRow(m, undefined, this.lookup);
          row.dataset.id = m.id;
          return row;
        });
        this.body.replaceChildren(note, ...rows);
        return;
      }
      const converted = await this.client.convertTo(
        format,
        { sessionId: this.sessionId, leaf: leaf.id },
        { signal: controller.signal },
      );
      if (controller.signal.aborted) return;
      const losses = el("ul", "losses");
      for (const loss of converted.losses) {
        losses.append(
          el(
            "li",
            "loss",
            el("code", "path", loss.path || "<input>"),
            " ",
            el("span", "what", loss.what),
            ": ",
            el("span", "reason", loss.reason),
          ),
        );
      }
      const heading = el(
        "p",
        converted.losses.length > 0 ? "lossy" : "muted",
        converted.losses.length === 0
          ? "no loss"
          : converted.losses.length === 1
            ? "1 loss"
            : `${converted.losses.length} losses`,
      );
      this.body.replaceChildren(heading, losses, el("pre", "preview", pretty(converted.json)));
    } catch (error) {
      if (!controller.signal.aborted) {
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        this.body.replaceChildren(el("p", "error", text));
      }
    }
  }
}
