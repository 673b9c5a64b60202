// The session as a tree. Each entry follows its `parentId`, or, when that is empty, the entry before it in the log
// (offsets are 1, 2, 3…; the first entry is the root): the rule of the Python `Session` and of the service's
// BuildContext. The session's current leaf is its last entry (what `Session.leaf_id` is for a session read back).
//
// The tree is drawn as branches: a branch is a run of entries each with one child, ending at a branch point (an
// entry with several children, whose branches are drawn under it) or at a tip (a leaf). Choosing a tip shows the
// path to it in the message list; by default the list follows the current leaf.
//
// Entries arrive in any order (the viewer reads a page of the log when one of its rows is drawn, and follows the
// session live meanwhile): an entry without a `parentId` whose predecessor is not read yet waits for it, children
// are kept in log order, and the current leaf is the entry with the highest offset read.

import type { Message } from "@agentmsg/sdk/web";
import { el } from "./render.js";
import { PathUsage } from "./usage.js";

/** One entry of the tree. */
export interface TreeEntry {
  readonly id: string;
  readonly offset: bigint;
  readonly message: Message;
  /** The parent's id; undefined for the root, and for an entry whose predecessor in the log is not read yet. */
  readonly parent: string | undefined;
}

/** An entry as the tree keeps it: its parent is set late when it is the entry before it in the log. */
type Node = { -readonly [K in keyof TreeEntry]: TreeEntry[K] };

/** A branch of the drawn tree: its entries in order, the entry it follows, the branches after its last entry. */
export interface Branch {
  readonly ids: string[];
  readonly parent: string | undefined;
  readonly children: Branch[];
}

const ROOT = "";

/** The entries of a session read so far, with their parents and children. */
export class SessionTree {
  private readonly byId = new Map<string, Node>();
  private readonly byOffset = new Map<bigint, string>();
  private readonly children = new Map<string, string[]>();
  /** Entries without a `parentId`, by offset, whose predecessor (their parent) is not read yet. */
  private readonly waiting = new Map<bigint, Node>();
  private last: TreeEntry | undefined;

  get size(): number {
    return this.byId.size;
  }

  /** The session's current leaf: the last entry of the log read so far. */
  get leafId(): string | undefined {
    return this.last?.id;
  }

  get(id: string): TreeEntry | undefined {
    return this.byId.get(id);
  }

  /** Every entry read, in the order taken (not log order when pages were read out of order). */
  entries(): IterableIterator<TreeEntry> {
    return this.byId.values();
  }

  /**
   * Take a logged entry, in any order; returns it, or undefined when its id or offset was already taken. The entry
   * after it in the log, if read and without a `parentId`, becomes its child now.
   */
  add(offset: bigint, message: Message): TreeEntry | undefined {
    if (this.byId.has(message.id) || this.byOffset.has(offset)) return undefined;
    const entry: Node = { id: message.id, offset, message, parent: undefined };
    this.byId.set(entry.id, entry);
    this.byOffset.set(offset, entry.id);
    // No parentId: the parent is the entry before it in the log (the first entry is the root).
    if (message.parentId !== "") this.link(entry, message.parentId);
    else if (offset <= 1n) this.link(entry, undefined);
    else {
      const before = this.byOffset.get(offset - 1n);
      if (before === undefined) this.waiting.set(offset, entry);
      else this.link(entry, before);
    }
    const next = this.waiting.get(offset + 1n);
    if (next !== undefined) {
      this.waiting.delete(offset + 1n);
      this.link(next, entry.id);
    }
    if (this.last === undefined || offset > this.last.offset) this.last = entry;
    return entry;
  }

  /** `entry`'s parent is `parent` (undefined: a root); children are kept in log order. */
  private link(entry: Node, parent: string | undefined): void {
    entry.parent = parent;
    const key = parent ?? ROOT;
    const siblings = this.children.get(key);
    if (siblings === undefined) {
      this.children.set(key, [entry.id]);
      return;
    }
    let at = siblings.length;
    while (at > 0 && (this.byId.get(siblings[at - 1] as string)?.offset ?? 0n) > entry.offset) at--;
    siblings.splice(at, 0, entry.id);
  }

  childrenOf(id: string | undefined): readonly string[] {
    return this.children.get(id ?? ROOT) ?? [];
  }

  /** The entries from the root to `leaf`, as far as they were read (a cycle from a damaged log ends the walk). */
  path(leaf: string): TreeEntry[] {
    const path: TreeEntry[] = [];
    const seen = new Set<string>();
    let entry = this.byId.get(leaf);
    while (entry !== undefined && !seen.has(entry.id)) {
      seen.add(entry.id);
      path.push(entry);
      entry = entry.parent === undefined ? undefined : this.byId.get(entry.parent);
    }
    return path.reverse();
  }

  /** The tip reached from `id` by following its latest child each time (the newest leaf below it). */
  tipFrom(id: string): string {
    let current = id;
    const seen = new Set<string>();
    for (;;) {
      seen.add(current);
      const kids = this.childrenOf(current);
      const next = kids[kids.length - 1];
      if (next === undefined || seen.has(next)) return current;
      current = next;
    }
  }

  /** The tree as branches, from the roots (entries whose parent was not read count as roots). */
  branches(): Branch[] {
    const roots = [...this.byId.values()]
      .filter((e) => e.parent === undefined || !this.byId.has(e.parent))
      .sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))
      .map((e) => e.id);
    const seen = new Set<string>();
    const grow = (start: string, parent: string | undefined): Branch => {
      const ids = [start];
      seen.add(start);
      let kids = this.childrenOf(start);
      while (kids.length === 1 && !seen.has(kids[0] as string)) {
        const next = kids[0] as string;
        ids.push(next);
        seen.add(next);
        kids = this.childrenOf(next);
      }
      const tail = ids[ids.length - 1];
      const children: Branch[] = [];
      if (kids.length > 1) for (const kid of kids) if (!seen.has(kid)) children.push(grow(kid, tail));
      return { ids, parent, children };
    };
    return roots.map((id) => grow(id, this.byId.get(id)?.parent));
  }
}

/** What the tree view asks of the session view. */
export interface TreeHooks {
  /** The chosen leaf changed: the message list shows the path to it. */
  chosen(): void;
  /** "What the model sees" for the path to this entry. */
  context(id: string, label: string): void;
}

/** The tree panel, and which entries the message list shows (the path to the chosen leaf). */
export class TreeView {
  readonly root = el("aside", "tree");
  readonly toggle = el("button", "tree-toggle", "tree");
  readonly tree = new SessionTree();
  private readonly body = el("div", "tree-body");
  private readonly follow = el("button", "follow", "follow the current leaf");
  private chosen: string | undefined; // undefined: the current leaf
  private onPath = new Set<string>();
  private pathLeaf: string | undefined;
  private pathTop: string | undefined; // the first entry of the path read (the root once its entries are all read)
  private scheduled = false;
  private opened = false; // opened once by itself when the session turns out to branch

  constructor(private readonly hooks: TreeHooks) {
    this.root.hidden = true;
    this.toggle.type = "button";
    this.toggle.title = "the session as a tree: branches, summaries, compactions, the path shown";
    this.toggle.addEventListener("click", () => this.show(this.root.hidden));
    this.follow.type = "button";
    this.follow.addEventListener("click", () => this.choose(undefined));
    this.root.append(el("div", "tree-head", el("strong", "", "Tree"), this.follow), this.body);
    this.body.addEventListener("click", (event) => this.clicked(event));
  }

  /** The leaf whose path the list shows. */
  get leaf(): string | undefined {
    return this.chosen ?? this.tree.leafId;
  }

  show(open: boolean): void {
    this.root.hidden = !open;
    this.opened = true;
    if (open) this.render();
  }

  /**
   * A logged entry, in any order. Returns whether rows other than this entry's changed (the path moved, or grew
   * above its first entry read).
   */
  add(offset: bigint, message: Message): boolean {
    const entry = this.tree.add(offset, message);
    if (entry === undefined) return false;
    let moved = false;
    const leaf = this.leaf;
    if (leaf !== this.pathLeaf) {
      if (leaf === entry.id && entry.parent !== undefined && entry.parent === this.pathLeaf) {
        this.onPath.add(entry.id); // the path grows by one at its end: nothing else changes
        this.pathLeaf = entry.id;
      } else {
        this.repath();
        moved = true;
      }
    } else if (this.pathTop !== undefined && this.tree.get(this.pathTop)?.parent === entry.id) {
      // The entry the path's first one follows was read (an earlier page): the path grows above it.
      const above = this.tree.path(entry.id);
      for (const e of above) this.onPath.add(e.id);
      this.pathTop = above[0]?.id;
      moved = true;
    }
    const branched = (id: string | undefined): boolean => this.tree.childrenOf(id).length > 1;
    if (!this.opened && (branched(entry.parent) || branched(entry.id))) this.show(true);
    this.schedule();
    return moved;
  }

  /** Whether the list shows this entry (on the path to the chosen leaf). */
  shows(id: string): boolean {
    return this.onPath.has(id);
  }

  /** Show the path to `leaf` (undefined: follow the current leaf). */
  choose(leaf: string | undefined): void {
    this.chosen = leaf;
    this.repath();
    this.render();
    this.hooks.chosen();
  }

  /** Show a path through `id` (for a deep link to an entry off the current path): the newest tip below it. */
  reveal(id: string): void {
    if (!this.onPath.has(id) && this.tree.get(id) !== undefined) this.choose(this.tree.tipFrom(id));
  }

  private repath(): void {
    const leaf = this.leaf;
    const path = leaf === undefined ? [] : this.tree.path(leaf);
    this.pathLeaf = leaf;
    this.pathTop = path[0]?.id;
    this.onPath = new Set(path.map((e) => e.id));
  }

  private clicked(event: Event): void {
    const button = event.target;
    if (!(button instanceof HTMLButtonElement)) return;
    const tip = button.closest<HTMLElement>("li.branch")?.dataset.tip;
    if (tip === undefined) return;
    if (button.classList.contains("choose")) this.choose(tip);
    else if (button.classList.contains("ctx")) this.hooks.context(tip, this.label(tip));
  }

  private label(id: string): string {
    const offset = this.tree.get(id)?.offset;
    return offset === undefined ? id : `#${offset}`;
  }

  private schedule(): void {
    if (this.scheduled || this.root.hidden) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.render();
    });
  }

  render(): void {
    if (this.root.hidden) return;
    const leaf = this.leaf;
    this.follow.disabled = this.chosen === undefined;
    this.follow.textContent = this.chosen === undefined ? "following the current leaf" : "follow the current leaf";
    // Branch summaries by the tip of the branch they summarise (their fromId).
    const summaries = new Map<string, TreeEntry>();
    for (const entry of this.tree.entries()) {
      const role = entry.message.role;
      if (role.case === "branchSummary" && role.value.fromId !== "") summaries.set(role.value.fromId, entry);
    }
    const list = el("ul", "branches");
    const draw = (branch: Branch, into: HTMLElement): void => {
      const item = this.branchItem(branch, leaf, summaries);
      into.append(item);
      if (branch.children.length > 0) {
        const sub = el("ul", "branches");
        for (const child of branch.children) draw(child, sub);
        item.append(sub);
      }
    };
    for (const branch of this.tree.branches()) draw(branch, list);
    const count = this.tree.size;
    this.body.replaceChildren(el("p", "muted", `${count} ${count === 1 ? "entry" : "entries"} read`), list);
  }

  private branchItem(branch: Branch, leaf: string | undefined, summaries: Map<string, TreeEntry>): HTMLElement {
    const first = branch.ids[0] as string;
    const tail = branch.ids[branch.ids.length - 1] as string;
    const item = el("li", "branch");
    item.dataset.ids = branch.ids.join(" ");
    if (branch.parent !== undefined) item.dataset.parent = branch.parent;
    if (branch.ids.some((id) => this.onPath.has(id))) item.classList.add("on-path");
    const range = branch.ids.length === 1 ? this.label(first) : `${this.label(first)}–${this.label(tail)}`;
    const head = el(
      "div",
      "branch-head",
      el("span", "range", range),
      el("span", "muted", ` · ${branch.ids.length} ${branch.ids.length === 1 ? "entry" : "entries"}`),
    );
    item.append(head);
    for (const id of branch.ids) {
      const note = this.note(id);
      if (note !== undefined) item.append(note);
    }
    const kids = this.tree.childrenOf(tail);
    if (kids.length > 1) {
      item.dataset.branchPoint = tail;
      head.append(" ", el("span", "badge fork", `branch point: ${kids.length} branches`));
    } else if (kids.length === 0) {
      item.dataset.tip = tail;
      if (tail === this.tree.leafId) head.append(" ", el("span", "badge current", "current leaf"));
      if (tail === leaf) {
        item.classList.add("chosen");
        head.append(" ", el("span", "badge chosen", "shown"));
      }
      const left = summaries.get(tail);
      const leftRole = left?.message.role;
      if (left !== undefined && leftRole?.case === "branchSummary") {
        const box = el(
          "div",
          "left-summary",
          el("span", "badge", `left; summarised at ${this.label(left.id)}`),
          " ",
          leftRole.value.summary,
        );
        box.dataset.summary = left.id;
        item.append(box);
      }
      const choose = el("button", "choose", "show this path");
      choose.type = "button";
      const context = el("button", "ctx", "what the model sees");
      context.type = "button";
      const usage = PathUsage.of(this.tree.path(tail).map((e) => e.message));
      item.append(el("div", "tip-actions", choose, " ", context), usage.element("path-usage"));
    }
    return item;
  }

  /** A branch summary or a compaction on a branch: what it summarises or keeps. */
  private note(id: string): HTMLElement | undefined {
    const entry = this.tree.get(id);
    const role = entry?.message.role;
    if (entry === undefined || role === undefined) return undefined;
    if (role.case === "branchSummary") {
      const from = role.value.fromId;
      const box = el(
        "div",
        "tree-note branch-summary",
        el("span", "badge", `${this.label(id)} branch summary`),
        " ",
        role.value.summary,
        el("span", "muted", from === "" ? "" : ` (of the branch left at ${this.label(from)})`),
      );
      box.dataset.id = id;
      box.dataset.from = from;
      return box;
    }
    if (role.case === "compactionSummary") {
      const kept = role.value.firstKeptId;
      const before = role.value.tokensBefore;
      const keeps = kept === "" ? "keeps nothing before it" : `keeps from ${this.label(kept)}`;
      const box = el(
        "div",
        "tree-note compaction",
        el("span", "badge", `${this.label(id)} compaction`),
        " ",
        role.value.summary,
        el("span", "muted", ` (${keeps}${before === undefined ? "" : `; ${before} tokens before`})`),
      );
      box.dataset.id = id;
      box.dataset.firstKept = kept;
      return box;
    }
    return undefined;
  }
}
