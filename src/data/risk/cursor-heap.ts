function swapIn(arr: number[], a: number, b: number): void {
  const t = arr[a]!;
  arr[a] = arr[b]!;
  arr[b] = t;
}

/**
 * A binary min-heap of market cursors ordered like answers: health factor ascending, then debt
 * descending, then position number. Parallel arrays, reused across pushes.
 */
export class CursorHeap {
  private hf: number[] = [];
  private debt: number[] = [];
  private pos: number[] = [];
  private ord: number[] = [];
  size = 0;

  private before(a: number, b: number): boolean {
    const ha = this.hf[a]!;
    const hb = this.hf[b]!;
    if (ha !== hb) return ha < hb;
    const da = this.debt[a]!;
    const db = this.debt[b]!;
    if (da !== db) return da > db;
    return this.pos[a]! < this.pos[b]!;
  }

  private swap(a: number, b: number): void {
    swapIn(this.hf, a, b);
    swapIn(this.debt, a, b);
    swapIn(this.pos, a, b);
    swapIn(this.ord, a, b);
  }

  topHf(): number {
    return this.hf[0]!;
  }

  push(hf: number, debt: number, i: number, ord: number): void {
    let n = this.size++;
    this.hf[n] = hf;
    this.debt[n] = debt;
    this.pos[n] = i;
    this.ord[n] = ord;
    while (n > 0) {
      const parent = (n - 1) >> 1;
      if (!this.before(n, parent)) break;
      this.swap(n, parent);
      n = parent;
    }
  }

  pop(): { i: number; ord: number } {
    const top = { i: this.pos[0]!, ord: this.ord[0]! };
    const last = --this.size;
    if (last > 0) {
      this.hf[0] = this.hf[last]!;
      this.debt[0] = this.debt[last]!;
      this.pos[0] = this.pos[last]!;
      this.ord[0] = this.ord[last]!;
      let n = 0;
      for (;;) {
        const l = 2 * n + 1;
        const r = l + 1;
        let m = n;
        if (l < last && this.before(l, m)) m = l;
        if (r < last && this.before(r, m)) m = r;
        if (m === n) break;
        this.swap(n, m);
        n = m;
      }
    }
    return top;
  }
}
