import type { Protocol } from '../domain/enums.ts';
import { available, maxLeverage, utilization } from '../domain/metrics.ts';
import { oracleHealth } from '../domain/oracle.ts';
import { classifyStrategy } from '../domain/strategy.ts';
import type { MarketRecord, OracleHealth, OracleRecord, StrategyInfo } from '../domain/types.ts';
import { groupIndexes, lowerBound, walkMerged } from './sorted-lists.ts';

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

/**
 * A market view whose oracle health is recomputed at most once per second of the clock, and
 * its serialized form, cached under the same rule (forever for a market without oracle).
 */
interface Entry {
  view: MarketView;
  healthAtSec: number;
  json: Uint8Array | null;
  jsonAtSec: number;
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
  private readonly termCache = new Map<string, TermMatch>();
  private termCacheOrds = 0;
  readonly protocols: readonly Protocol[];
  readonly chainIds: readonly number[];

  constructor(records: readonly MarketRecord[], nowSec: number) {
    const sorted = [...records].sort((a, b) => b.supply - a.supply || (a.uniqueKey < b.uniqueKey ? -1 : 1));
    this.entries = sorted.map((m) => ({
      view: toMarketView(m, nowSec),
      healthAtSec: nowSec,
      json: null,
      jsonAtSec: -1,
    }));
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
    this.vocab = buildVocabulary(sorted.map(marketTokens));
  }

  get size(): number {
    return this.entries.length;
  }

  /** Records in supply order, for re-persisting or rebuilding. */
  views(): readonly MarketView[] {
    return this.entries.map((e) => e.view);
  }

  /** The market serialized by `serialize` (JSON bytes), cached while its oracle health stays the same. */
  json<T extends Uint8Array>(ord: number, nowSec: number, serialize: (view: MarketView) => T): T {
    const e = this.entries[ord]!;
    if (e.json === null || (e.jsonAtSec !== nowSec && e.view.oracle !== null)) {
      e.json = serialize(this.viewAt(ord, nowSec));
      e.jsonAtSec = nowSec;
    }
    return e.json as T;
  }

  viewAt(ord: number, nowSec: number): MarketView {
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

  /** Ords of the markets in scope, supply descending. Cost O(offset + limit), never a scan of the catalog. */
  list(filter: MarketFilter, offset: number, limit: number): number[] {
    const out: number[] = [];
    if (limit <= 0) return out;
    let skipped = 0;
    walkMerged(this.scopeLists(filter), (ord) => {
      if (skipped < offset) {
        skipped++;
        return true;
      }
      out.push(ord);
      return out.length < limit;
    });
    return out;
  }

  /** The protocols that have markets in the filter's scope (sorted): meta.source of an empty answer. */
  protocolsIn(filter: MarketFilter): Protocol[] {
    // A protocol the query names is its scope, whether or not it has markets there.
    if (filter.protocol !== undefined) return [filter.protocol];
    const chains = filter.chainIds;
    if (chains === undefined) return [...this.protocols];
    return this.protocols.filter((p) => chains.some((c) => this.byProtocolChain.has(`${p}:${c}`)));
  }

  /** Number of markets in scope (for pagination metadata). */
  count(filter: MarketFilter): number {
    let n = 0;
    for (const l of this.scopeLists(filter)) n += l.length;
    return n;
  }

  /**
   * Search per DECISIONS D4: every term must match; a market's score is the sum over terms of
   * its best tier for that term (exact symbol 3, word prefix 2, substring 1); results by score
   * descending, then supply descending (ord ascending). Score levels are walked from the top;
   * at each level the terms' tier lists are intersected in ord order and the walk stops once
   * `limit` markets are found, so the cost follows the answers, not the catalog.
   */
  search(query: string, filter: MarketFilter, limit: number): number[] {
    const terms = [...new Set(normalize(query).split(/\s+/).filter(Boolean))];
    if (terms.length === 0 || limit <= 0) return [];
    const matches = terms.map((t) => this.termMatch(t));
    if (matches.some((m) => m.size === 0)) return [];
    const filtered = filter.protocol !== undefined || filter.chainIds !== undefined;
    const accept = filtered ? (ord: number) => this.inScope(ord, filter) : () => true;
    const out: number[] = [];
    for (const combos of combosByScore(matches)) {
      const need = limit - out.length;
      const level: number[] = [];
      for (const lists of combos) level.push(...intersect(lists, need, accept));
      level.sort((a, b) => a - b);
      for (let i = 0; i < level.length && out.length < limit; i++) out.push(level[i]!);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Markets matching a term, split by their best tier; cached per catalog (bounded). */
  private termMatch(term: string): TermMatch {
    const cached = this.termCache.get(term);
    if (cached) {
      this.termCache.delete(term);
      this.termCache.set(term, cached);
      return cached;
    }
    const { tokens, postings, symbolPostings } = this.vocab;
    const exact = symbolPostings.get(term) ?? new Int32Array(0);
    const prefixLists: Int32Array[] = [];
    const substringLists: Int32Array[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const at = tokens[i]!.indexOf(term);
      if (at === 0) prefixLists.push(postings[i]!);
      else if (at > 0) substringLists.push(postings[i]!);
    }
    const taken = new Set<number>(exact);
    const remaining = (lists: Int32Array[]) => {
      const out: number[] = [];
      walkMerged(lists, (ord) => {
        if (!taken.has(ord)) out.push(ord);
        return true;
      });
      for (const ord of out) taken.add(ord);
      return Int32Array.from(out);
    };
    const prefix = remaining(prefixLists);
    const substring = remaining(substringLists);
    const match: TermMatch = { tiers: [exact, prefix, substring], size: taken.size };
    this.termCacheOrds += match.size;
    this.termCache.set(term, match);
    for (const [k, v] of this.termCache) {
      if (this.termCacheOrds <= TERM_CACHE_ORDS) break;
      this.termCache.delete(k);
      this.termCacheOrds -= v.size;
    }
    return match;
  }
}

/** A term's matching market ords, ascending, by best tier: [exact symbol, prefix, substring]. */
interface TermMatch {
  tiers: [Int32Array, Int32Array, Int32Array];
  size: number;
}

/** Bound of the term cache, in cached market ords (4 bytes each). */
const TERM_CACHE_ORDS = 4_000_000;
const TIER_SCORES = [EXACT, PREFIX, SUBSTRING];

/**
 * The combinations of one tier per term, grouped by total score, highest first; combinations
 * with an empty list are left out (they match nothing).
 */
function combosByScore(matches: readonly TermMatch[]): Int32Array[][][] {
  const byScore = new Map<number, Int32Array[][]>();
  const walk = (i: number, lists: Int32Array[], score: number) => {
    if (i === matches.length) {
      const level = byScore.get(score);
      if (level) level.push(lists);
      else byScore.set(score, [lists]);
      return;
    }
    matches[i]!.tiers.forEach((list, t) => {
      if (list.length > 0) walk(i + 1, [...lists, list], score + TIER_SCORES[t]!);
    });
  };
  walk(0, [], 0);
  return [...byScore.entries()].sort((a, b) => b[0] - a[0]).map(([, combos]) => combos);
}

/**
 * The first `need` accepted values present in every list (all ascending), walking the shortest
 * list and galloping through the others.
 */
function intersect(lists: readonly Int32Array[], need: number, accept: (ord: number) => boolean): number[] {
  const out: number[] = [];
  if (need <= 0) return out;
  const sorted = [...lists].sort((a, b) => a.length - b.length);
  const base = sorted[0]!;
  const pos = new Int32Array(sorted.length);
  outer: for (let i = 0; i < base.length; i++) {
    const v = base[i]!;
    for (let j = 1; j < sorted.length; j++) {
      const l = sorted[j]!;
      let p = pos[j]!;
      // gallop to the first element >= v
      let step = 1;
      while (p + step < l.length && l[p + step]! < v) {
        p += step;
        step *= 2;
      }
      p = lowerBound(l, v, p, Math.min(l.length, p + step + 1));
      pos[j] = p;
      if (p >= l.length) break outer;
      if (l[p] !== v) continue outer;
    }
    if (accept(v)) {
      out.push(v);
      if (out.length >= need) break;
    }
  }
  return out;
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
