import { PREFIX, type SparseMatch, SUBSTRING, type TermMatch } from './term-match.ts';
import type { SearchWork } from './work.ts';

/**
 * One term: its markets in rank order until `limit` are in scope. Sparse: the ranked list.
 * Dense: the exact-symbol list, then one pass over the tiers per lower tier (at most 2n reads).
 */
export function rankedSingle(
  match: TermMatch,
  limit: number,
  accept: (ord: number) => boolean,
  work: SearchWork | undefined,
): number[] {
  const out: number[] = [];
  let reads = 0;
  if (!match.dense) {
    const { ranked } = match;
    for (; reads < ranked.length && out.length < limit; reads++)
      if (accept(ranked[reads]!)) out.push(ranked[reads]!);
  } else {
    const { exact, byOrd } = match;
    for (let k = 0; k < exact.length && out.length < limit; k++, reads++)
      if (accept(exact[k]!)) out.push(exact[k]!);
    for (const tier of [PREFIX, SUBSTRING]) {
      for (let ord = 0; ord < byOrd.length && out.length < limit; ord++, reads++)
        if (byOrd[ord] === tier && accept(ord)) out.push(ord);
    }
  }
  if (work) work.reads += reads;
  return out;
}

/**
 * Several terms: walk the markets of the term matching fewest in ord order (its list, or its
 * tier array when every term is dense), take each other term's tier (a lookup in a dense term,
 * a gallop in a sparse one: its list is ascending like the walk), and keep the first `limit`
 * markets of each score. See SearchIndex.search.
 */
export function rankedIntersection(
  matches: readonly TermMatch[],
  n: number,
  limit: number,
  accept: (ord: number) => boolean,
  work: SearchWork | undefined,
): number[] {
  const sorted = [...matches].sort((a, b) => a.size - b.size);
  const base = sorted[0]!;
  const terms = sorted.length;
  const sparse: SparseMatch[] = [];
  const dense: Uint8Array[] = [];
  for (const m of sorted.slice(1)) {
    if (m.dense) dense.push(m.byOrd);
    else sparse.push(m);
  }
  let maxScore = 0;
  for (const m of sorted) maxScore += m.maxTier;
  // buckets[s - terms] holds markets of score s in ord order, at most `limit` of them
  const buckets: number[][] = Array.from({ length: maxScore - terms + 1 }, () => []);
  const top = buckets[maxScore - terms]!;
  const pos = new Int32Array(sparse.length);
  let reads = 0;
  const baseLength = base.dense ? n : base.size;
  walk: for (let i = 0; i < baseLength; i++) {
    let ord: number;
    let score: number;
    reads++;
    if (base.dense) {
      score = base.byOrd[i]!;
      if (score === 0) continue;
      ord = i;
    } else {
      ord = base.all[i]!;
      score = base.tiers[i]!;
    }
    for (let j = 0; j < dense.length; j++) {
      const t = dense[j]![ord]!;
      reads++;
      if (t === 0) continue walk;
      score += t;
    }
    for (let j = 0; j < sparse.length; j++) {
      const list = sparse[j]!.all;
      const len = list.length;
      let p = pos[j]!;
      reads++;
      if (list[p]! < ord) {
        // gallop: list[lo] < ord; probe lo + 1, lo + 2, lo + 4, ... then binary search
        let lo = p;
        let step = 1;
        let hi = lo + 1;
        while (hi < len) {
          reads++;
          if (list[hi]! >= ord) break;
          lo = hi;
          step *= 2;
          hi = lo + step;
        }
        if (hi > len) hi = len;
        p = lo + 1;
        while (p < hi) {
          const mid = (p + hi) >>> 1;
          reads++;
          if (list[mid]! < ord) p = mid + 1;
          else hi = mid;
        }
        pos[j] = p;
        // no later market of the walk can be in this list
        if (p >= len) break walk;
        reads++;
      }
      if (list[p] !== ord) continue walk;
      score += sparse[j]!.tiers[p]!;
    }
    if (!accept(ord)) continue;
    const bucket = buckets[score - terms]!;
    if (bucket.length < limit) bucket.push(ord);
    if (top.length >= limit) break;
  }
  if (work) work.reads += reads;
  const out: number[] = [];
  for (let s = buckets.length - 1; s >= 0 && out.length < limit; s--) {
    const bucket = buckets[s]!;
    for (let k = 0; k < bucket.length && out.length < limit; k++) out.push(bucket[k]!);
  }
  return out;
}
