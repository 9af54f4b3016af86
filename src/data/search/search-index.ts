import { LRUCache } from 'lru-cache';
import type { MarketRecord } from '../../domain/types.ts';
import { rankedIntersection, rankedSingle } from './ranking.ts';
import {
  buildTermMatch,
  type Scratch,
  TERM_CACHE_BYTES,
  TERM_CACHE_ENTRIES,
  type TermMatch,
  termMatchBytes,
} from './term-match.ts';
import { buildVocabulary, marketTokens, searchTerms, type Vocabulary } from './vocabulary.ts';
import type { SearchWork } from './work.ts';

/**
 * A catalog's search index: the token index of its markets, the term cache and the ranking.
 * It numbers markets by their rank in the catalog (by supply): the catalog maps ranks to its
 * ords, and renumbers the postings when it re-ranks (reorder).
 */
export class SearchIndex {
  private readonly vocab: Vocabulary;
  private readonly termCache = new LRUCache<string, TermMatch>({
    max: TERM_CACHE_ENTRIES,
    maxSize: TERM_CACHE_BYTES,
    sizeCalculation: termMatchBytes,
  });
  /** While a term is built: best tier per market (all zero between builds) and the markets marked. */
  private readonly scratch: Scratch;

  /** The index of `records`, each ranked by its place in the list. */
  constructor(records: readonly MarketRecord[]) {
    const n = records.length;
    this.vocab = buildVocabulary(records.map(marketTokens));
    this.scratch = { mark: new Uint8Array(n), touched: new Int32Array(n) };
  }

  /**
   * Search per docs/decisions.md "Search": every term must match; a market's score is the sum over terms of
   * its best tier for that term (exact symbol 3, word prefix 2, substring 1); results by score
   * descending, then supply descending (ord ascending).
   *
   * One term: its markets are read in rank order (tier, then ord) until `limit` are in scope.
   * Several terms: the markets of the term matching fewest are walked in ord order; each other
   * term gives its tier for the market (a lookup, or a gallop through its ascending list) or
   * drops it; each score keeps its first `limit` markets, and the walk stops early once the
   * highest reachable score has `limit`. Work is linear in the distinct terms, whatever they
   * are: at most about 6 reads per term per market of the catalog, plus, for each term not in
   * the term cache, the postings of the tokens containing it. `work`, when given, receives the
   * counts.
   *
   * Here a market's number is its rank; `accept` tells which ranks are in scope.
   */
  search(query: string, limit: number, accept: (rank: number) => boolean, work?: SearchWork): number[] {
    const terms = searchTerms(query);
    if (work) work.terms += terms.length;
    if (terms.length === 0 || limit <= 0) return [];
    const matches: TermMatch[] = [];
    for (const term of terms) {
      const m = this.termMatch(term, work);
      if (m.size === 0) return [];
      matches.push(m);
    }
    return matches.length === 1
      ? rankedSingle(matches[0]!, limit, accept, work)
      : rankedIntersection(matches, this.scratch.mark.length, limit, accept, work);
  }

  /**
   * The catalog re-ranked: `renumber` rewrites a list of old ranks as the new ranks, ascending;
   * every posting list goes through it and the term cache empties.
   */
  reorder(renumber: (list: Int32Array) => void): void {
    for (const l of this.vocab.postings) renumber(l);
    for (const l of this.vocab.symbolPostings.values()) renumber(l);
    this.termCache.clear();
  }

  /** Entries and bytes of the term cache (at most TERM_CACHE_ENTRIES and TERM_CACHE_BYTES). */
  termCacheStats(): { entries: number; bytes: number } {
    return { entries: this.termCache.size, bytes: this.termCache.calculatedSize };
  }

  /** Sizes of the index: markets, distinct tokens, postings (token-market pairs). */
  stats(): { markets: number; tokens: number; postings: number } {
    return {
      markets: this.scratch.mark.length,
      tokens: this.vocab.tokens.length,
      postings: this.vocab.postingCount,
    };
  }

  /** Markets matching a term with their best tier; cached per catalog in a bounded LRU. */
  private termMatch(term: string, work?: SearchWork): TermMatch {
    const cached = this.termCache.get(term);
    if (cached) return cached;
    const match = buildTermMatch(this.vocab, this.scratch, term, work);
    this.termCache.set(term, match);
    return match;
  }
}
