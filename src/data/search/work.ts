/**
 * Elements read by searches, added to by Catalog.search: tests and benchmarks check that work
 * stays linear in the distinct terms whatever the query, without timing anything.
 */
export interface SearchWork {
  /** Distinct terms of the queries. */
  terms: number;
  /** Terms not in the term cache, built from the token index. */
  misses: number;
  /** Vocabulary tokens found to contain a missed term. */
  tokens: number;
  /** Posting entries read while building missed terms. */
  postings: number;
  /** Markets written or read back while building missed terms (touched ones, or the catalog). */
  build: number;
  /** Elements of term lists or tier arrays read while ranking. */
  reads: number;
}

export function newSearchWork(): SearchWork {
  return { terms: 0, misses: 0, tokens: 0, postings: 0, build: 0, reads: 0 };
}

/** Total elements read: the figure work budgets bound. */
export function totalWork(w: SearchWork): number {
  return w.tokens + w.postings + w.build + w.reads;
}
