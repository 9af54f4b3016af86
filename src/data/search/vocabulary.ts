import type { MarketRecord } from '../../domain/types.ts';

const WORD_SPLIT = /[^\p{L}\p{N}.+]+/u;

function normalize(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}

/**
 * The token index of a catalog's markets. Postings hold the markets' ranks in the catalog: their
 * ords when built, renumbered in place when the catalog re-ranks (SearchIndex.reorder).
 */
export interface Vocabulary {
  /** Distinct tokens and, for each, the ascending market ords it appears in. */
  tokens: string[];
  postings: Int32Array[];
  /** Sum of the postings' lengths. */
  postingCount: number;
  /**
   * The tokens joined by newlines (whitespace inside a token made a space: no term holds
   * whitespace, so no hit spans two tokens), and each token's start in it, then a sentinel.
   */
  text: string;
  starts: Int32Array;
  /** The token of each character of `text` (a separator counts with the token before it). */
  tokenAt: Int32Array;
  /** Whether a token is a symbol (collateral, loan, vault symbol or pair) of the market. */
  symbolPostings: Map<string, Int32Array>;
}

/**
 * Words of a search query as Catalog.search reads them: NFKC, lowercase, split on whitespace,
 * duplicates dropped (a repeated term changes neither the matches nor the ranking).
 */
export function searchTerms(query: string): string[] {
  return [...new Set(normalize(query).split(/\s+/).filter(Boolean))];
}

/** A market's search tokens: its symbols (the exact tier) and every word of its names, label and symbols. */
export function marketTokens(m: MarketRecord): { symbols: string[]; words: string[] } {
  const symbols = [m.collateral, m.loan, `${m.collateral}/${m.loan}`];
  if (m.vaultSymbol) symbols.push(m.vaultSymbol);
  const normalizedSymbols = [...new Set(symbols.map(normalize))];
  const words = new Set<string>(normalizedSymbols);
  for (const text of [m.collateralName, m.loanName, m.label ?? '', m.vaultSymbol ?? '']) {
    for (const w of normalize(text).split(WORD_SPLIT)) if (w) words.add(w);
  }
  return { symbols: normalizedSymbols, words: [...words] };
}

/** The token index of markets numbered by their place in `perMarket`. */
export function buildVocabulary(perMarket: readonly { symbols: string[]; words: string[] }[]): Vocabulary {
  const words = new Map<string, number[]>();
  const symbols = new Map<string, number[]>();
  perMarket.forEach((t, ord) => {
    for (const w of t.words) {
      const l = words.get(w);
      if (l) l.push(ord);
      else words.set(w, [ord]);
    }
    for (const s of t.symbols) {
      const l = symbols.get(s);
      if (l) l.push(ord);
      else symbols.set(s, [ord]);
    }
  });
  const tokens = [...words.keys()];
  const postings = tokens.map((t) => Int32Array.from(words.get(t)!));
  const starts = new Int32Array(tokens.length + 1);
  let at = 0;
  tokens.forEach((t, i) => {
    starts[i] = at;
    at += t.length + 1;
  });
  starts[tokens.length] = at;
  const tokenAt = new Int32Array(Math.max(0, at - 1));
  for (let i = 0; i < tokens.length; i++) tokenAt.fill(i, starts[i]!, starts[i + 1]!);
  return {
    tokens,
    postings,
    postingCount: postings.reduce((sum, l) => sum + l.length, 0),
    text: tokens.map((t) => t.replace(/\s/g, ' ')).join('\n'),
    starts,
    tokenAt,
    symbolPostings: new Map([...symbols].map(([s, l]) => [s, Int32Array.from(l)])),
  };
}
