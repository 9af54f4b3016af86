import {
  assetsOf,
  currentOracle,
  type FeedEntry,
  type OracleEntry,
  type TokenEntry,
} from '../data/assets.ts';
import type { Catalog } from '../data/catalog.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { OracleProvider, OracleType, Protocol } from '../domain/enums.ts';
import { must } from '../domain/must.ts';
import { feedHealth, oracleHealth } from '../domain/oracle.ts';
import { significant, usd } from '../domain/precision.ts';
import type { OracleFeedRecord, OracleHealth } from '../domain/types.ts';
import { chainAddressPage, decodeCursor, encodeCursor } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { Found, HistoryReader, Scope } from './types.ts';

/**
 * Tokens and oracles: plain functions of the read model (and, for oracle rounds, the history).
 * Lists are in (chainId, address) order, which no data change moves, and page by cursor.
 */

/** A feed as served: its identity, its promises (heartbeat, deviation) and its freshness now (docs/decisions.md "Oracle health"). */
export interface FeedView {
  address: string;
  description: string;
  pair: string;
  heartbeatSeconds: number;
  deviationThreshold: number | null;
  lastUpdateTimestamp: number;
  secondsSinceUpdate: number;
  isStale: boolean;
  stalenessRatio: number;
}

export interface PriceSource {
  kind: 'feed' | 'oracle' | 'api';
  address: string | null;
  description: string;
}

export interface TokenView {
  chainId: number;
  address: string;
  symbol: string;
  name: string;
  decimals: number | null;
  priceUsd: number | null;
  priceSource: PriceSource | null;
  collateralMarkets: number;
  loanMarkets: number;
  /** Null when a market lending it has no USD price of it (docs/decisions.md "Real sources"). */
  supplyUsd: number | null;
  borrowUsd: number | null;
}

export interface TokenMarketView {
  uniqueKey: string;
  protocol: Protocol;
  role: 'collateral' | 'loan';
  supply: number | null;
  borrow: number | null;
}

export interface TokenDetailView extends TokenView {
  feeds: FeedView[];
  markets: TokenMarketView[];
}

export interface OracleView {
  chainId: number;
  address: string;
  type: OracleType;
  provider: OracleProvider;
  isComposite: boolean;
  warnings: string[] | null;
  health: OracleHealth | null;
  feeds: FeedView[];
  marketCount: number;
  /** Null when a market it prices has no USD amounts (docs/decisions.md "Real sources"). */
  supplyAtStakeUsd: number | null;
  borrowAtStakeUsd: number | null;
}

export interface OracleMarketView {
  uniqueKey: string;
  protocol: Protocol;
  collateral: string;
  loan: string;
  supply: number | null;
  borrow: number | null;
}

export interface OracleDetailView extends OracleView {
  markets: OracleMarketView[];
}

/**
 * The USD supply and borrow summed over markets, each rounded to the cent; null when one of the
 * markets has none (no USD price of its loan token: a sum without it would understate, "Real sources" (docs/decisions.md)).
 */
function sumUsd(catalog: Catalog, ords: readonly number[]): { supply: number | null; borrow: number | null } {
  let supply = 0;
  let borrow = 0;
  for (const ord of ords) {
    const v = catalog.recordAt(ord);
    if (v.supply === null || v.borrow === null) return { supply: null, borrow: null };
    supply += v.supply;
    borrow += v.borrow;
  }
  return { supply: usd(supply), borrow: usd(borrow) };
}

/** Largest USD supply first, markets without one last, then by key. */
function bySupply(
  a: { supply: number | null; uniqueKey: string },
  b: { supply: number | null; uniqueKey: string },
) {
  return (b.supply ?? -1) - (a.supply ?? -1) || (a.uniqueKey < b.uniqueKey ? -1 : 1);
}

/** A list's page: its items, what meta needs, and the cursor of the next page (none on the last). */
export type Page<T> = Found<T>;

function feedView(f: OracleFeedRecord, nowSec: number): FeedView {
  const h = feedHealth(f, nowSec);
  return {
    address: f.address,
    description: f.description,
    pair: f.pair,
    heartbeatSeconds: f.heartbeatSeconds,
    deviationThreshold: f.deviationThreshold ?? null,
    lastUpdateTimestamp: h.lastUpdateTimestamp,
    secondsSinceUpdate: h.secondsSinceUpdate,
    isStale: h.isStale,
    stalenessRatio: significant(h.stalenessRatio),
  };
}

function inChains(chainIds: readonly number[] | undefined, chainId: number): boolean {
  return chainIds === undefined || chainIds.includes(chainId);
}

function protocolsOf(catalog: Catalog, ords: readonly number[]): Protocol[] {
  return [...new Set(ords.map((o) => catalog.recordAt(o).protocol))];
}

// ---- tokens -------------------------------------------------------------------------------

/**
 * A token as served. priceUsd: its USD price in the largest market (by supply now) that holds
 * it. priceSource: where that market's price of it comes from, as its source recorded it (a
 * feed, the market's oracle, an API); for data that records none (the sandbox), the USD-quoted
 * feed on its chain whose base is the token (or the asset it wraps), else the oracle of its
 * largest collateral market, else null ("Real sources" (docs/decisions.md)'s order).
 * supplyUsd and borrowUsd: the sums over the markets that lend it.
 */
function tokenView(model: ReadModel, t: TokenEntry, nowSec: number): TokenView {
  const { catalog } = model;
  // The largest market with a price of the token (a market without one states none).
  let biggest: { ord: number; supply: number; side: 'collateral' | 'loan'; price: number } | null = null;
  for (const [side, ords] of [
    ['loan', t.loanOrds],
    ['collateral', t.collateralOrds],
  ] as const) {
    for (const ord of ords) {
      const v = catalog.recordAt(ord);
      const price = side === 'loan' ? v.loanPrice : v.collateralPrice;
      if (price === null || !(price > 0)) continue;
      const supply = v.supply ?? -1;
      if (!biggest || supply > biggest.supply) biggest = { ord, supply, side, price };
    }
  }
  const sums = sumUsd(catalog, t.loanOrds);
  const recorded = recordedSource(model, biggest);
  const priceUsd = biggest ? significant(biggest.price) : null;
  return {
    chainId: t.chainId,
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
    priceUsd,
    // No market states a price of it: no source to name either.
    priceSource:
      biggest === null ? null : recorded !== undefined ? recorded : priceSourceOf(model, t, nowSec),
    collateralMarkets: t.collateralOrds.length,
    loanMarkets: t.loanOrds.length,
    supplyUsd: sums.supply,
    borrowUsd: sums.borrow,
  };
}

/** The price source a market's record gives for one of its tokens; undefined when it records none. */
function recordedSource(
  model: ReadModel,
  at: { ord: number; side: 'collateral' | 'loan' } | null,
): PriceSource | null | undefined {
  if (!at) return undefined;
  const record = model.catalog.baseRecord(at.ord);
  const source = at.side === 'loan' ? record.loanPriceSource : record.collateralPriceSource;
  if (source === undefined || source === null) return source;
  return { kind: source.kind, address: source.address, description: source.description };
}

function priceSourceOf(model: ReadModel, t: TokenEntry, nowSec: number): PriceSource | null {
  const usdFeed = assetsOf(model.catalog)
    .feedsOf(t)
    .find((f) => f.quote === 'USD');
  if (usdFeed) {
    const record = feedRecord(model.catalog, usdFeed, nowSec);
    return { kind: 'feed', address: usdFeed.address, description: record?.description ?? usdFeed.pair };
  }
  let best: number | null = null;
  for (const ord of t.collateralOrds) {
    const v = model.catalog.recordAt(ord);
    if (v.oracle && (best === null || (v.supply ?? -1) > (model.catalog.recordAt(best).supply ?? -1)))
      best = ord;
  }
  if (best === null) return null;
  const oracle = must(model.catalog.recordAt(best).oracle, 'the oracle of the market chosen');
  return { kind: 'oracle', address: oracle.address, description: `${oracle.type} (${oracle.provider})` };
}

/** The feed's record as an oracle listing it sees it now. */
function feedRecord(catalog: Catalog, f: FeedEntry, nowSec: number): OracleFeedRecord | undefined {
  const holder = f.oracles[0];
  if (!holder) return undefined;
  return catalog.viewAt(holder.ord, nowSec).oracle?.feeds.find((x) => x.address.toLowerCase() === f.address);
}

export interface TokenListParams extends Pick<Scope, 'chainIds'> {
  /** Only tokens with this symbol (case-insensitive). */
  symbol?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Tokens held by the markets in scope, by (chainId, address). */
export function listTokens(model: ReadModel, p: TokenListParams, nowMs: number): Page<TokenView> {
  const nowSec = Math.floor(nowMs / 1000);
  const symbol = p.symbol?.trim().toUpperCase();
  const index = assetsOf(model.catalog);
  const page = chainAddressPage(
    'tokens',
    index.tokens,
    (t) => inChains(p.chainIds, t.chainId) && (symbol === undefined || t.symbol.toUpperCase() === symbol),
    p.cursor,
    p.limit,
    (t) => tokenView(model, t, nowSec),
    (t) => t,
  );
  return {
    items: page.items,
    itemProtocols: page.entries.flatMap((t) =>
      protocolsOf(model.catalog, [...t.collateralOrds, ...t.loanOrds]),
    ),
    scopeProtocols: model.catalog.protocolsIn({ chainIds: p.chainIds }),
    total: page.total,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** One token with its feeds and every market holding it (largest supply first). */
export function getToken(
  model: ReadModel,
  chainId: number,
  address: string,
  nowMs: number,
): Found<TokenDetailView> {
  const nowSec = Math.floor(nowMs / 1000);
  const index = assetsOf(model.catalog);
  const t = index.token(chainId, address);
  if (!t) throw QueryError.notFound('token', chainId, address.toLowerCase());
  const { catalog } = model;
  const markets: TokenMarketView[] = [];
  for (const [role, ords] of [
    ['collateral', t.collateralOrds],
    ['loan', t.loanOrds],
  ] as const) {
    for (const ord of ords) {
      const v = catalog.recordAt(ord);
      markets.push({
        uniqueKey: v.uniqueKey,
        protocol: v.protocol,
        role,
        supply: v.supply,
        borrow: v.borrow,
      });
    }
  }
  markets.sort(bySupply);
  const feeds: FeedView[] = [];
  for (const f of index.feedsOf(t)) {
    const record = feedRecord(catalog, f, nowSec);
    if (record) feeds.push(feedView(record, nowSec));
  }
  const protocols = protocolsOf(catalog, [...t.collateralOrds, ...t.loanOrds]);
  return {
    items: [{ ...tokenView(model, t, nowSec), feeds, markets }],
    itemProtocols: protocols,
    scopeProtocols: protocols,
  };
}

// ---- oracles ------------------------------------------------------------------------------

function oracleView(model: ReadModel, o: OracleEntry, nowSec: number): OracleView {
  const { catalog } = model;
  const oracle = currentOracle(catalog, o, nowSec);
  const sums = sumUsd(catalog, o.ords);
  const health = oracleHealth(oracle, nowSec);
  return {
    chainId: o.chainId,
    address: o.address,
    type: oracle.type,
    provider: oracle.provider,
    isComposite: oracle.isComposite,
    warnings: oracle.warnings,
    health: health && { ...health, stalenessRatio: significant(health.stalenessRatio) },
    feeds: oracle.feeds.map((f) => feedView(f, nowSec)),
    marketCount: o.ords.length,
    supplyAtStakeUsd: sums.supply,
    borrowAtStakeUsd: sums.borrow,
  };
}

export interface OracleListParams extends Pick<Scope, 'chainIds'> {
  provider?: OracleProvider | undefined;
  type?: OracleType | undefined;
  /** true: only oracles whose stalest feed is past its heartbeat; false: only the others. */
  stale?: boolean | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Oracles of the markets in scope, by (chainId, address), with their feeds' freshness now. */
export function listOracles(model: ReadModel, p: OracleListParams, nowMs: number): Page<OracleView> {
  const nowSec = Math.floor(nowMs / 1000);
  const { catalog } = model;
  const page = chainAddressPage(
    'oracles',
    assetsOf(catalog).oracles,
    (o) => {
      if (!inChains(p.chainIds, o.chainId)) return false;
      if (p.provider === undefined && p.type === undefined && p.stale === undefined) return true;
      const oracle = currentOracle(catalog, o, nowSec);
      if (p.provider !== undefined && oracle.provider !== p.provider) return false;
      if (p.type !== undefined && oracle.type !== p.type) return false;
      if (p.stale !== undefined && (oracleHealth(oracle, nowSec)?.isStale ?? false) !== p.stale) return false;
      return true;
    },
    p.cursor,
    p.limit,
    (o) => oracleView(model, o, nowSec),
    (o) => o,
  );
  return {
    items: page.items,
    itemProtocols: page.entries.flatMap((o) => protocolsOf(catalog, o.ords)),
    scopeProtocols: catalog.protocolsIn({ chainIds: p.chainIds }),
    total: page.total,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** One oracle with the markets it prices (largest supply first). */
export function getOracle(
  model: ReadModel,
  chainId: number,
  address: string,
  nowMs: number,
): Found<OracleDetailView> {
  const nowSec = Math.floor(nowMs / 1000);
  const { catalog } = model;
  const o = assetsOf(catalog).oracle(chainId, address);
  if (!o) throw QueryError.notFound('oracle', chainId, address.toLowerCase());
  const markets = o.ords
    .map((ord) => {
      const v = catalog.recordAt(ord);
      return {
        uniqueKey: v.uniqueKey,
        protocol: v.protocol,
        collateral: v.collateral,
        loan: v.loan,
        supply: v.supply,
        borrow: v.borrow,
      };
    })
    .sort(bySupply);
  const protocols = protocolsOf(catalog, o.ords);
  return {
    items: [{ ...oracleView(model, o, nowSec), markets }],
    itemProtocols: protocols,
    scopeProtocols: protocols,
  };
}

export interface RoundView {
  feed: string;
  roundId: string;
  answer: number;
  /** Unix seconds ("Units" (docs/decisions.md): oracle timestamps). */
  updatedAt: number;
}

export interface RoundsParams {
  chainId: number;
  address: string;
  /** Only this feed of the oracle (lower-case address). */
  feed?: string | undefined;
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

/**
 * The rounds of an oracle's feeds in [fromMs, toMs), oldest first, in (updatedAt, feed,
 * roundId) order: each feed's rounds are read from the history after the cursor and merged.
 * A model whose history is not in the store (the test keys' sandbox when the store holds
 * another dataset) has none.
 */
export async function oracleRounds(
  model: ReadModel,
  history: HistoryReader,
  p: RoundsParams,
  nowMs: number,
): Promise<Page<RoundView>> {
  const found = must(getOracle(model, p.chainId, p.address, nowMs).items[0], `oracle ${p.address}`);
  const protocols = [...new Set(found.markets.map((m) => m.protocol))];
  let feeds = found.feeds.map((f) => f.address.toLowerCase());
  if (p.feed !== undefined) {
    const feed = p.feed.toLowerCase();
    if (!feeds.includes(feed)) throw QueryError.invalid('feed', `is not a feed of oracle ${found.address}`);
    feeds = [feed];
  }
  feeds = [...new Set(feeds)].sort();
  const after = decodeCursor(p.cursor, 'rounds', ['number', 'string', 'string']);
  const rows: (RoundView & { at: number })[] = [];
  // The store reads whole ms: [from, to) widened to them.
  const fromMs = Math.floor(p.fromMs);
  const toMs = Math.ceil(p.toMs);
  if (model.stored && fromMs < toMs) {
    for (const feed of feeds) {
      let from = fromMs;
      let cursor: { updatedAt: number; roundId: string } | undefined;
      if (after) {
        const [at, afterFeed, roundId] = after;
        // Strictly after (at, afterFeed, roundId) in (updatedAt, feed, roundId) order.
        if (feed < afterFeed) from = Math.max(from, at + 1);
        else if (feed > afterFeed) from = Math.max(from, at);
        else cursor = { updatedAt: at, roundId };
      }
      if (from >= toMs) continue;
      const list = await history.oracleRounds(p.chainId, feed, from, toMs, p.limit + 1, cursor);
      for (const r of list)
        rows.push({
          feed,
          roundId: r.roundId,
          answer: r.answer,
          updatedAt: Math.floor(r.updatedAt / 1000),
          at: r.updatedAt,
        });
    }
  }
  rows.sort(
    (a, b) =>
      a.at - b.at || (a.feed < b.feed ? -1 : a.feed > b.feed ? 1 : 0) || compareRound(a.roundId, b.roundId),
  );
  const page = rows.slice(0, p.limit);
  const last = page.at(-1);
  return {
    items: page.map(({ at: _at, ...r }) => ({ ...r, answer: significant(r.answer) })),
    itemProtocols: page.length > 0 ? protocols : [],
    scopeProtocols: protocols,
    ...(last && rows.length > p.limit
      ? { nextCursor: encodeCursor('rounds', [last.at, last.feed, last.roundId]) }
      : {}),
  };
}

/** Round ids in the store's order: as text. */
function compareRound(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
