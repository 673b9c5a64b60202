// A virtualised list: only the rows in (and near) the viewport are in the DOM, whatever the number of rows. Row
// heights are measured once rendered and estimated before; spacers above and below stand for the rest.

const ESTIMATE = 96; // px, a row not yet measured
const OVERSCAN = 6; // rows rendered beyond each edge of the viewport

export class VirtualList {
  private readonly heights: number[] = [];
  private readonly top = document.createElement("div");
  private readonly bottom = document.createElement("div");
  private readonly body = document.createElement("div");
  private readonly rendered = new Map<number, HTMLElement>();
  private readonly stale = new Set<number>();
  private scheduled = false;
  /** At the end (scrolled there, or brought there): kept there while the rows drawn there change height. */
  private sticky = false;
  /** Called after each draw (rows may have left the DOM). */
  onRendered: () => void = () => {};

  constructor(
    readonly scroller: HTMLElement,
    private readonly renderRow: (index: number) => HTMLElement,
    signal?: AbortSignal,
  ) {
    this.body.className = "rows";
    scroller.replaceChildren(this.top, this.body, this.bottom);
    scroller.addEventListener(
      "scroll",
      () => {
        this.sticky = this.nearEnd();
        this.schedule();
      },
      { passive: true, signal },
    );
    window.addEventListener("resize", () => this.schedule(), { signal }); // removed when the view is left
  }

  get length(): number {
    return this.heights.length;
  }

  /** The number of rows now in the DOM. */
  get renderedCount(): number {
    return this.rendered.size;
  }

  /** Rows appended at the end. */
  grow(count: number): void {
    for (let i = 0; i < count; i++) this.heights.push(ESTIMATE);
    this.schedule();
  }

  /**
   * Row `index` changed: render it again when visible. Its node stays until the next draw replaces it (removed now,
   * the content would shrink at once and the browser would clamp the scroll position before the draw restores it).
   */
  invalidate(index: number): void {
    if (this.rendered.has(index)) this.stale.add(index);
    this.schedule();
  }

  /** Whether the viewport shows the end of the list, or is held there (to keep following it as rows arrive). */
  atEnd(): boolean {
    return this.sticky || this.nearEnd();
  }

  private nearEnd(): boolean {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 48;
  }

  /** Bring row `index` to the top of the viewport (twice: once its neighbours' heights are measured, again). */
  scrollToIndex(index: number): void {
    this.sticky = false;
    for (let pass = 0; pass < 2; pass++) {
      this.render(); // the spacers first: a scrollTop beyond the current height would be clamped
      let y = 0;
      for (let i = 0; i < index && i < this.heights.length; i++) y += this.heights[i] ?? ESTIMATE;
      this.scroller.scrollTop = y;
      this.render();
    }
  }

  /** Bring the end into view (again while the heights of the rows drawn there move it, a few times at most). */
  scrollToEnd(): void {
    this.sticky = true;
    this.render();
    for (let pass = 0; pass < 4; pass++) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.render();
      if (this.nearEnd()) break;
    }
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.render();
    });
  }

  render(): void {
    const viewTop = this.scroller.scrollTop;
    const viewBottom = viewTop + this.scroller.clientHeight;
    let y = 0;
    let first = 0;
    while (first < this.heights.length && y + (this.heights[first] ?? ESTIMATE) < viewTop) {
      y += this.heights[first] ?? ESTIMATE;
      first++;
    }
    let last = first;
    let end = y;
    while (last < this.heights.length && end < viewBottom) {
      end += this.heights[last] ?? ESTIMATE;
      last++;
    }
    const from = Math.max(0, first - OVERSCAN);
    const to = Math.min(this.heights.length, last + OVERSCAN);
    for (const [index, node] of this.rendered) {
      if (index < from || index >= to || this.stale.has(index)) {
        node.remove();
        this.rendered.delete(index);
      }
    }
    this.stale.clear();
    const nodes: HTMLElement[] = [];
    for (let i = from; i < to; i++) {
      let node = this.rendered.get(i);
      if (node === undefined) {
        node = this.renderRow(i);
        node.dataset.row = String(i);
        this.rendered.set(i, node);
      }
      nodes.push(node);
    }
    this.body.replaceChildren(...nodes);
    for (let i = from; i < to; i++) {
      const node = this.rendered.get(i);
      if (node !== undefined) this.heights[i] = node.offsetHeight;
    }
    let above = 0;
    for (let i = 0; i < from; i++) above += this.heights[i] ?? ESTIMATE;
    let below = 0;
    for (let i = to; i < this.heights.length; i++) below += this.heights[i] ?? ESTIMATE;
    this.top.style.height = `${above}px`;
    this.bottom.style.height = `${below}px`;
    if (this.sticky && !this.nearEnd()) {
      // Rows drawn at the end changed height: back to the end (drawn again at the next frame if that moved it).
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.schedule();
    }
    this.onRendered();
  }
}
