import type { Protocol } from '../domain/enums.ts';
import { available, maxLeverage, utilization } from '../domain/metrics.ts';
import { oracleHealth } from '../domain/oracle.ts';
import { classifyStrategy } from '../domain/strategy.ts';
import type { MarketRecord, OracleHealth, OracleRecord, StrategyInfo } from '../domain/types.ts';
import { groupIndexes, walkMerged } from './sorted-lists.ts';

/** The API's Market (SPEC.md) as served: primary facts plus the derived fields. */
export interface MarketView {
  uniqueKey: string;
  protocol: Protocol;
  chainId: number;
  label: string | null;
  collateral: string;
  loan: string;
  collateralAddress: string;
  loanAddress: string;
  collateralPrice: number;
  loanPrice: number;
  supply: number;
  borrow: number;
  available: number;
  utilization: number;
  supplyApy: number;
  borrowApy: number;
  supplyRewardsApy: number;
  borrowRewardsApy: number;
  rewardTokens: string[];
  lltv: number;
  maxLeverage: number;
  strategyType: string;
  strategyInfo: StrategyInfo;
  vaultSymbol: string | null;
  vaultAddress: string | null;
  governor: string | null;
  oracle: OracleRecord | null;
  oracleHealth: OracleHealth | null;
}

/** A market view whose oracle health is recomputed at most once per second of the clock. */
interface Entry {
  view: MarketView;
  healthAtSec: number;
}

export function toMarketView(m: MarketRecord, nowSec: number): MarketView {
  const strategy = classifyStrategy(m.collateral, m.loan);
  return {
    uniqueKey: m.uniqueKey,
    protocol: m.protocol,
    chainId: m.chainId,
    label: m.label,
    collateral: m.collateral,
    loan: m.loan,
    collateralAddress: m.collateralAddress,
    loanAddress: m.loanAddress,
    collateralPrice: m.collateralPrice,
    loanPrice: m.loanPrice,
    supply: m.supply,
    borrow: m.borrow,
    available: available(m.supply, m.borrow),
    utilization: utilization(m.supply, m.borrow),
    supplyApy: m.supplyApy,
    borrowApy: m.borrowApy,
    supplyRewardsApy: m.supplyRewardsApy,
    borrowRewardsApy: m.borrowRewardsApy,
    rewardTokens: m.rewardTokens,
    lltv: m.lltv,
    maxLeverage: maxLeverage(m.lltv),
    strategyType: strategy.type,
    strategyInfo: strategy,
    vaultSymbol: m.vaultSymbol,
    vaultAddress: m.vaultAddress,
    governor: m.governor,
    oracle: m.oracle,
    oracleHealth: oracleHealth(m.oracle, nowSec),
  };
}

export interface MarketFilter {
  protocol?: Protocol | undefined;
  /** Chains in scope; undefined = every chain. */
  chainIds?: readonly number[] | undefined;
}

export interface SearchHit {
  market: MarketView;
}

const WORD_SPLIT = /[^\p{L}\p{N}.+]+/u;

function normalize(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}

/** Search tiers of D4: exact symbol > word prefix > substring. */
const EXACT = 3;
const PREFIX = 2;
const SUBSTRING = 1;

interface Vocabulary {
  /** Distinct tokens and, for each, the ascending market ords it appears in. */
  tokens: string[];
  postings: Int32Array[];
  /** Whether a token is a symbol (collateral, loan, vault symbol or pair) of the market. */
  symbolPostings: Map<string, Int32Array>;
}

/**
 * The market catalog: markets ordered by supply descending (their "ord"), lookups by key,
 * filter lists by protocol and chain, and a token index for search (DECISIONS D4).
 */
export class Catalog {
  private readonly entries: Entry[];
  private readonly byKey = new Map<string, number>();
  private readonly byProtocol: Map<string, Int32Array>;
  private readonly byChain: Map<string, Int32Array>;
  private readonly byProtocolChain: Map<string, Int32Array>;
  private readonly all: Int32Array;
  private readonly vocab: Vocabulary;
  /** Per market: its symbols and words, for checking further terms of a multi-term query. */
  private readonly marketTokens: { symbols: string[]; words: string[] }[];
  readonly protocols: readonly Protocol[];
  readonly chainIds: readonly number[];

  constructor(records: readonly MarketRecord[], nowSec: number) {
    const sorted = [...records].sort((a, b) => b.supply - a.supply || (a.uniqueKey < b.uniqueKey ? -1 : 1));
    this.entries = sorted.map((m) => ({ view: toMarketView(m, nowSec), healthAtSec: nowSec }));
    this.entries.forEach((e, ord) => {
      this.byKey.set(e.view.uniqueKey, ord);
    });
    const n = this.entries.length;
    this.all = Int32Array.from({ length: n }, (_, i) => i);
    this.byProtocol = groupIndexes(n, (i) => this.entries[i]!.view.protocol);
    this.byChain = groupIndexes(n, (i) => String(this.entries[i]!.view.chainId));
    this.byProtocolChain = groupIndexes(n, (i) => {
      const v = this.entries[i]!.view;
      return `${v.protocol}:${v.chainId}`;
    });
    this.protocols = [...this.byProtocol.keys()].sort() as Protocol[];
    this.chainIds = [...this.byChain.keys()].map(Number).sort((a, b) => a - b);
    this.marketTokens = sorted.map((m) => marketTokens(m));
    this.vocab = buildVocabulary(this.marketTokens);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Records in supply order, for re-persisting or rebuilding. */
  views(): readonly MarketView[] {
    return this.entries.map((e) => e.view);
  }

  private viewAt(ord: number, nowSec: number): MarketView {
    const e = this.entries[ord]!;
    if (e.healthAtSec !== nowSec) {
      e.view.oracleHealth = oracleHealth(e.view.oracle, nowSec);
      e.healthAtSec = nowSec;
    }
    return e.view;
  }

  /** Case-insensitive lookup of a uniqueKey (keys are stored lowercase). */
  get(uniqueKey: string, nowSec: number): MarketView | undefined {
    const ord = this.byKey.get(uniqueKey.toLowerCase());
    return ord === undefined ? undefined : this.viewAt(ord, nowSec);
  }

  ordOf(uniqueKey: string): number | undefined {
    return this.byKey.get(uniqueKey.toLowerCase());
  }

  recordAt(ord: number): MarketView {
    return this.entries[ord]!.view;
  }

  /** The ord lists that together cover exactly the filter's scope. */
  private scopeLists(filter: MarketFilter): Int32Array[] {
    const { protocol, chainIds } = filter;
    if (chainIds === undefined) {
      if (protocol === undefined) return [this.all];
      const l = this.byProtocol.get(protocol);
      return l ? [l] : [];
    }
    const lists: Int32Array[] = [];
    for (const c of new Set(chainIds)) {
      const l =
        protocol === undefined ? this.byChain.get(String(c)) : this.byProtocolChain.get(`${protocol}:${c}`);
      if (l) lists.push(l);
    }
    return lists;
  }

  private inScope(ord: number, filter: MarketFilter): boolean {
    const v = this.entries[ord]!.view;
    if (filter.protocol !== undefined && v.protocol !== filter.protocol) return false;
    if (filter.chainIds !== undefined && !filter.chainIds.includes(v.chainId)) return false;
    return true;
  }

  /** Markets in scope, supply descending. Cost O(offset + limit), never a scan of the catalog. */
  list(filter: MarketFilter, offset: number, limit: number, nowSec: number): MarketView[] {
    const out: MarketView[] = [];
    if (limit <= 0) return out;
    let skipped = 0;
    walkMerged(this.scopeLists(filter), (ord) => {
      if (skipped < offset) {
        skipped++;
        return true;
      }
      out.push(this.viewAt(ord, nowSec));
      return out.length < limit;
    });
    return out;
  }

  /** Number of markets in scope (for pagination metadata). */
  count(filter: MarketFilter): number {
    let n = 0;
    for (const l of this.scopeLists(filter)) n += l.length;
    return n;
  }

  /**
   * Search per DECISIONS D4. Returns at most `limit` markets ordered by match tier then supply.
   * Single-term queries merge the postings of the matching tokens tier by tier and stop at
   * `limit`; multi-term queries score the candidates of their most selective term.
   */
  search(query: string, filter: MarketFilter, limit: number, nowSec: number): MarketView[] {
    const terms = normalize(query).split(/\s+/).filter(Boolean);
    if (terms.length === 0 || limit <= 0) return [];
    const matches = terms.map((t) => this.matchTerm(t));
    if (matches.some((m) => m.size === 0)) return [];
    const filtered = filter.protocol !== undefined || filter.chainIds !== undefined;
    if (terms.length === 1) {
      const byTier = matches[0]!.byTier;
      const out: MarketView[] = [];
      const seen = new Set<number>();
      for (const tier of [EXACT, PREFIX, SUBSTRING]) {
        const lists = byTier[tier]!;
        if (lists.length === 0) continue;
        walkMerged(lists, (ord) => {
          if (seen.has(ord)) return true;
          seen.add(ord);
          if (filtered && !this.inScope(ord, filter)) return true;
          out.push(this.viewAt(ord, nowSec));
          return out.length < limit;
        });
        if (out.length >= limit) break;
      }
      return out;
    }
    // Multi-term: drive from the term with the fewest candidates, score the others per market.
    let driver = 0;
    for (let i = 1; i < matches.length; i++) if (matches[i]!.size < matches[driver]!.size) driver = i;
    const scored: { ord: number; score: number }[] = [];
    walkMerged(matches[driver]!.byTier.flat(), (ord) => {
      if (filtered && !this.inScope(ord, filter)) return true;
      let score = 0;
      for (const term of terms) {
        const t = termTier(term, this.marketTokens[ord]!);
        if (t === 0) return true;
        score += t;
      }
      scored.push({ ord, score });
      return true;
    });
    scored.sort((a, b) => b.score - a.score || a.ord - b.ord);
    return scored.slice(0, limit).map((s) => this.viewAt(s.ord, nowSec));
  }

  private matchTerm(term: string): { byTier: Int32Array[][]; size: number } {
    const byTier: Int32Array[][] = [[], [], [], []];
    let size = 0;
    const { tokens, postings, symbolPostings } = this.vocab;
    const exact = symbolPostings.get(term);
    if (exact) {
      byTier[EXACT]!.push(exact);
      size += exact.length;
    }
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      const at = token.indexOf(term);
      if (at < 0) continue;
      const tier = at === 0 ? PREFIX : SUBSTRING;
      byTier[tier]!.push(postings[i]!);
      size += postings[i]!.length;
    }
    return { byTier, size };
  }
}

function marketTokens(m: MarketRecord): { symbols: string[]; words: string[] } {
  const symbols = [m.collateral, m.loan, `${m.collateral}/${m.loan}`];
  if (m.vaultSymbol) symbols.push(m.vaultSymbol);
  const normalizedSymbols = [...new Set(symbols.map(normalize))];
  const words = new Set<string>(normalizedSymbols);
  for (const text of [m.collateralName, m.loanName, m.label ?? '', m.vaultSymbol ?? '']) {
    for (const w of normalize(text).split(WORD_SPLIT)) if (w) words.add(w);
  }
  return { symbols: normalizedSymbols, words: [...words] };
}

function termTier(term: string, tokens: { symbols: string[]; words: string[] }): number {
  if (tokens.symbols.includes(term)) return EXACT;
  let best = 0;
  for (const w of tokens.words) {
    const at = w.indexOf(term);
    if (at === 0) return PREFIX;
    if (at > 0) best = SUBSTRING;
  }
  return best;
}

function buildVocabulary(perMarket: readonly { symbols: string[]; words: string[] }[]): Vocabulary {
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
  return {
    tokens,
    postings: tokens.map((t) => Int32Array.from(words.get(t)!)),
    symbolPostings: new Map([...symbols].map(([s, l]) => [s, Int32Array.from(l)])),
  };
}
