/**
 * Walks several ascending Int32Array/Uint32Array lists in merged ascending order, without
 * duplicates, calling `visit` until it returns false. k-way merge over a tiny heap: cost
 * O(visited x log k), so a caller that stops after `limit` items never pays for the rest.
 */
export function walkMerged(lists: readonly ArrayLike<number>[], visit: (value: number) => boolean): void {
  if (lists.length === 1) {
    const list = lists[0]!;
    for (let i = 0; i < list.length; i++) if (!visit(list[i]!)) return;
    return;
  }
  const pos = new Int32Array(lists.length);
  // heap of list indexes ordered by their current head value
  const heap: number[] = [];
  const head = (li: number) => lists[li]![pos[li]!]!;
  const less = (a: number, b: number) => head(a) < head(b);
  const push = (li: number) => {
    heap.push(li);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let li = 0; li < lists.length; li++) if (lists[li]!.length > 0) push(li);
  let last = -1;
  while (heap.length > 0) {
    const li = heap[0]!;
    const value = head(li);
    pos[li]!++;
    if (pos[li]! < lists[li]!.length) siftDown();
    else {
      const tail = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = tail;
        siftDown();
      }
    }
    if (value === last) continue;
    last = value;
    if (!visit(value)) return;
  }
}

/** Groups 0..n-1 by a key into ascending Int32Arrays (input order is ascending already). */
export function groupIndexes(n: number, keyOf: (i: number) => string): Map<string, Int32Array> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const k = keyOf(i);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const lists = new Map<string, Int32Array>();
  const fill = new Map<string, number>();
  for (const [k, c] of counts) {
    lists.set(k, new Int32Array(c));
    fill.set(k, 0);
  }
  for (let i = 0; i < n; i++) {
    const k = keyOf(i);
    const at = fill.get(k)!;
    lists.get(k)![at] = i;
    fill.set(k, at + 1);
  }
  return lists;
}
