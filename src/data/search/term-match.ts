import type { Vocabulary } from './vocabulary.ts';
import type { SearchWork } from './work.ts';

/** Search tiers of "Search" (docs/decisions.md): exact symbol > word prefix > substring. */
const EXACT = 3;
export const PREFIX = 2;
export const SUBSTRING = 1;

/**
 * A term's matching markets with their best tier, in one of two forms. Sparse: the markets
 * ascending (`all`) with their tiers, and the same markets by tier then ord (`ranked`), 9 bytes a
 * market. Dense, for a term matching a large share of the catalog: the tier of every market by
 * ord (0: no match), 1 byte a market of the catalog, and the exact-symbol markets ascending.
 */
export type TermMatch = SparseMatch | DenseMatch;

export interface SparseMatch {
  dense: false;
  size: number;
  /** Best tier of any market: the most this term adds to a score. */
  maxTier: number;
  all: Int32Array;
  tiers: Uint8Array;
  ranked: Int32Array;
}

interface DenseMatch {
  dense: true;
  size: number;
  maxTier: number;
  byOrd: Uint8Array;
  exact: Int32Array;
}

const EMPTY = new Int32Array(0);
const NO_MATCH: TermMatch = {
  dense: false,
  size: 0,
  maxTier: 0,
  all: EMPTY,
  tiers: new Uint8Array(0),
  ranked: EMPTY,
};

/** A term matching more than 1/DENSE_DIVISOR of the markets is kept dense (1 byte a market). */
const DENSE_DIVISOR = 8;

/**
 * Bounds of a catalog's term cache, by entries and by bytes (key, arrays and a fixed overhead
 * per entry). The largest entry is a dense term: one byte a market (100 KB on 100,000 markets);
 * a sparse term is at most 9 bytes for each of n/8 markets; an unmatched term costs its key and
 * the overhead. 32 MiB holds every common term of a 20,000-market catalog many times over; the
 * entry bound keeps unmatched terms (typos, adversaries) to about 3 MB.
 */
export const TERM_CACHE_ENTRIES = 10_000;
export const TERM_CACHE_BYTES = 32 * 1024 * 1024;
const ENTRY_OVERHEAD_BYTES = 300;

export function termMatchBytes(match: TermMatch, term: string): number {
  const arrays = match.dense
    ? match.byOrd.byteLength
    : match.all.byteLength + match.tiers.byteLength + match.ranked.byteLength;
  return ENTRY_OVERHEAD_BYTES + 2 * term.length + arrays;
}

/** Raises mark[ord] to `tier` for every ord of the list, appending first-seen ords to `touched`. */
function markPostings(
  list: Int32Array,
  tier: number,
  mark: Uint8Array,
  touched: Int32Array,
  count: number,
): number {
  let c = count;
  for (let k = 0; k < list.length; k++) {
    const ord = list[k]!;
    const had = mark[ord]!;
    if (had < tier) {
      if (had === 0) touched[c++] = ord;
      mark[ord] = tier;
    }
  }
  return c;
}

/** The sparse form from the ascending matching ords and their marked tiers (marks reset to 0). */
function sparseMatch(all: Int32Array, mark: Uint8Array, maxTier: number): SparseMatch {
  const size = all.length;
  let exact = 0;
  let prefix = 0;
  for (let k = 0; k < size; k++) {
    const t = mark[all[k]!]!;
    if (t === EXACT) exact++;
    else if (t === PREFIX) prefix++;
  }
  // offsets in `ranked`: exact, then prefix, then substring
  let atExact = 0;
  let atPrefix = exact;
  let atSubstring = exact + prefix;
  const tiers = new Uint8Array(size);
  const ranked = new Int32Array(size);
  for (let k = 0; k < size; k++) {
    const ord = all[k]!;
    const t = mark[ord]!;
    tiers[k] = t;
    if (t === EXACT) ranked[atExact++] = ord;
    else if (t === PREFIX) ranked[atPrefix++] = ord;
    else ranked[atSubstring++] = ord;
    mark[ord] = 0;
  }
  return { dense: false, size, maxTier, all, tiers, ranked };
}

/** What a term is built in: best tier per market (all zero between builds) and the markets marked. */
export interface Scratch {
  mark: Uint8Array;
  touched: Int32Array;
}

/**
 * A term's matches from the token index, never a k-way merge. The tokens containing the term
 * are found by native substring search in the vocabulary text (jumping to the next token
 * after each hit); their postings raise each market's best tier in a scratch array. A term
 * matching more than 1/DENSE_DIVISOR of the catalog keeps a copy of that array (n bytes,
 * smaller than its lists); any other is read back in ord order, by sorting the markets
 * touched or by one pass over the catalog, whichever is less. Cost: the vocabulary text
 * (native), the postings of the matching tokens, and at most one pass over the catalog.
 */
export function buildTermMatch(
  vocab: Vocabulary,
  scratch: Scratch,
  term: string,
  work?: SearchWork,
): TermMatch {
  const { text, starts, tokenAt, postings, symbolPostings } = vocab;
  const { mark, touched } = scratch;
  const n = mark.length;
  let count = 0;
  let read = 0;
  let tokens = 0;
  let maxTier = 0;
  const exact = symbolPostings.get(term) ?? EMPTY;
  if (exact.length > 0) {
    count = markPostings(exact, EXACT, mark, touched, count);
    read += exact.length;
    maxTier = EXACT;
  }
  for (let at = text.indexOf(term); at >= 0; ) {
    const ti = tokenAt[at]!;
    const tier = at === starts[ti] ? PREFIX : SUBSTRING;
    const list = postings[ti]!;
    count = markPostings(list, tier, mark, touched, count);
    read += list.length;
    tokens++;
    if (tier > maxTier) maxTier = tier;
    // a later hit can only count in a later token
    at = text.indexOf(term, starts[ti + 1]!);
  }
  if (work) {
    work.misses++;
    work.tokens += tokens;
    work.postings += read;
  }
  if (count === 0) return NO_MATCH;
  if (count * DENSE_DIVISOR > n) {
    const byOrd = mark.slice(0, n);
    mark.fill(0);
    if (work) work.build += n;
    return { dense: true, size: count, maxTier, byOrd, exact };
  }
  let all: Int32Array;
  if (count * Math.ceil(Math.log2(count + 1)) <= n) {
    all = touched.slice(0, count).sort();
    if (work) work.build += count;
  } else {
    all = new Int32Array(count);
    for (let ord = 0, j = 0; ord < n; ord++) if (mark[ord] !== 0) all[j++] = ord;
    if (work) work.build += n;
  }
  return sparseMatch(all, mark, maxTier);
}
