// Model text as a small, safe subset of Markdown, built with DOM nodes only: every character of the text ends up in
// a Text node (textContent), never parsed as HTML. Links keep only http:, https: and mailto: targets; any other
// (javascript:, data:, vbscript:...) is shown as plain text.
//
// The subset: fenced code blocks, headings (#..######), bullet and numbered list items, blank-line paragraphs, and
// inline `code`, **bold**, *emphasis* and [label](url).

const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/** The URL when it is absolute and its protocol is http, https or mailto; undefined otherwise. */
export function safeUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : undefined;
}

/** A link that opens in a new tab without giving it this page (noopener), or plain text when the URL is unsafe. */
export function link(label: string, raw: string): Node {
  const href = safeUrl(raw);
  if (href === undefined) return document.createTextNode(label === raw ? label : `${label} (${raw})`);
  const a = document.createElement("a");
  a.href = href;
  a.rel = "noopener noreferrer nofollow";
  a.target = "_blank";
  a.textContent = label;
  return a;
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*)|(\[[^\]\n]+\]\([^)\s]+\))/g;

function inline(parent: HTMLElement, text: string): void {
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    if (at > last) parent.append(text.slice(last, at));
    const token = match[0];
    if (match[1] !== undefined) {
      const code = document.createElement("code");
      code.textContent = token.slice(1, -1);
      parent.append(code);
    } else if (match[2] !== undefined) {
      const strong = document.createElement("strong");
      strong.textContent = token.slice(2, -2);
      parent.append(strong);
    } else if (match[3] !== undefined) {
      const em = document.createElement("em");
      em.textContent = token.slice(1, -1);
      parent.append(em);
    } else {
      const close = token.indexOf("](");
      parent.append(link(token.slice(1, close), token.slice(close + 2, -1)));
    }
    last = at + token.length;
  }
  if (last < text.length) parent.append(text.slice(last));
}

/** `text` rendered as the Markdown subset into a new element. */
export function markdown(text: string): HTMLElement {
  const root = document.createElement("div");
  root.className = "md";
  const lines = text.split("\n");
  let paragraph: string[] = [];
  let list: HTMLElement | undefined;
  const flush = (): void => {
    if (paragraph.length > 0) {
      const p = document.createElement("p");
      inline(p, paragraph.join("\n"));
      root.append(p);
      paragraph = [];
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.startsWith("```")) {
      flush();
      list = undefined;
      const body: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? "").startsWith("```"); i++) body.push(lines[i] ?? "");
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = body.join("\n");
      pre.append(code);
      root.append(pre);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*]|\d+[.)])\s+(.*)$/.exec(line);
    if (heading !== null) {
      flush();
      list = undefined;
      const h = document.createElement(`h${Math.min(6, (heading[1] ?? "#").length + 2)}`);
      inline(h, heading[2] ?? "");
      root.append(h);
    } else if (item !== null) {
      flush();
      if (list === undefined) {
        list = document.createElement("ul");
        root.append(list);
      }
      const li = document.createElement("li");
      inline(li, item[1] ?? "");
      list.append(li);
    } else if (line.trim() === "") {
      flush();
      list = undefined;
    } else {
      list = undefined;
      paragraph.push(line);
    }
  }
  flush();
  return root;
}
