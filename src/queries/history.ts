import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { must } from '../domain/must.ts';
import { fraction, significant, significantOrNull, usd, usdOrNull } from '../domain/precision.ts';
import type {
  LiquidationCursor,
  LiquidationEvent,
  LiquidationFilter,
  SnapshotGranularity,
} from '../domain/records/history.ts';
import type { Page } from './assets.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { HistoryReader, Scope } from './types.ts';

/**
 * History: a market's snapshots and the liquidations, read from the store's append-only history
 * by time range and keyset cursor. A model whose history is not in the store (the test keys'
 * sandbox while the store holds another dataset) has none: its answers are empty.
 */

export interface SnapshotView {
  /** ISO 8601 UTC: the hour or the day (00:00) the point is of. */
  at: string;
  supply: number;
  borrow: number;
  utilization: number;
  supplyApy: number;
  borrowApy: number;
  collateralPrice: number | null;
  loanPrice: number | null;
  /** The market oracle's price of the collateral in loan units. */
  oraclePrice: number | null;
}

export interface MarketHistoryParams {
  /** The market's uniqueKey, lower-case. */
  key: string;
  interval: SnapshotGranularity;
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

/** A market's points of one granularity in [fromMs, toMs), oldest first. */
export async function marketHistory(
  model: ReadModel,
  history: HistoryReader,
  p: MarketHistoryParams,
): Promise<Page<SnapshotView>> {
  const ord = model.catalog.ordOf(p.key);
  if (ord === undefined) throw QueryError.marketNotFound(p.key);
  const record = model.catalog.recordAt(ord);
  const protocol = [record.protocol];
  const after = decodeCursor(p.cursor, `history:${p.interval}`, ['number']);
  // The store reads whole ms: [from, to) widened to them.
  const fromMs = Math.floor(p.fromMs);
  const toMs = Math.ceil(p.toMs);
  const rows =
    model.stored && fromMs < toMs
      ? await history.marketSnapshots(
          p.key,
          p.interval,
          fromMs,
          toMs,
          p.limit + 1,
          after ? { at: after[0] } : undefined,
        )
      : [];
  const page = rows.slice(0, p.limit);
  const last = page.at(-1);
  return {
    items: page.map((s) => ({
      at: new Date(s.at).toISOString(),
      supply: usd(s.supplyUsd),
      borrow: usd(s.borrowUsd),
      utilization: fraction(s.utilization),
      supplyApy: fraction(s.supplyApy),
      borrowApy: fraction(s.borrowApy),
      collateralPrice: significantOrNull(s.collateralPriceUsd),
      loanPrice: significantOrNull(s.loanPriceUsd),
      oraclePrice: significantOrNull(s.oraclePrice),
    })),
    itemProtocols: page.length > 0 ? protocol : [],
    scopeProtocols: protocol,
    chains: [record.chainId],
    ...(last && rows.length > p.limit
      ? { nextCursor: encodeCursor(`history:${p.interval}`, [last.at]) }
      : {}),
  };
}

export interface LiquidationView {
  protocol: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  block: number;
  /** ISO 8601 UTC time of the block. */
  timestamp: string;
  marketId: string;
  /** Symbols of the market's tokens; null when the market is not in the current data. */
  collateral: string | null;
  loan: string | null;
  borrower: string;
  liquidator: string;
  collateralSeized: number;
  /** Null when the token had no USD price (a market served without one). */
  collateralSeizedUsd: number | null;
  debtRepaid: number;
  debtRepaidUsd: number | null;
  badDebt: number;
  badDebtUsd: number | null;
}

export interface LiquidationsParams extends Scope {
  /** A market's uniqueKey, lower-case. */
  market?: string | undefined;
  borrower?: string | undefined;
  liquidator?: string | undefined;
  minRepaidUsd?: number | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Rows read from the store per query while a list is streamed: memory stays about one page. */
export const LIQUIDATION_PAGE = 1_000;

/** How a streamed list of liquidations ended: the cursor of the next page, if any. */
export interface StreamEnd {
  nextCursor?: string;
}

/** A stored liquidation as served: its market's token symbols when the market is in the current data. */
export function liquidationView(model: ReadModel, l: LiquidationEvent): LiquidationView {
  const ord = model.catalog.ordOf(l.marketKey);
  const m = ord === undefined ? undefined : model.catalog.recordAt(ord);
  return {
    protocol: l.protocol,
    chainId: l.chainId,
    txHash: l.txHash,
    logIndex: l.logIndex,
    block: l.block,
    timestamp: new Date(l.at).toISOString(),
    marketId: l.marketKey,
    collateral: m?.collateral ?? null,
    loan: m?.loan ?? null,
    borrower: l.borrower,
    liquidator: l.liquidator,
    collateralSeized: significant(l.collateralSeized),
    collateralSeizedUsd: usdOrNull(l.collateralSeizedUsd),
    debtRepaid: significant(l.debtRepaid),
    debtRepaidUsd: usdOrNull(l.debtRepaidUsd),
    badDebt: significant(l.badDebt),
    badDebtUsd: usdOrNull(l.badDebtUsd),
  };
}

/**
 * The liquidations matching the filters, newest first (time descending, then chain, tx hash,
 * log index), up to `limit`, as pages (of the matches among LIQUIDATION_PAGE rows read; possibly
 * empty) read one at a time when the consumer asks for the next: a caller writing them out holds
 * one page, whatever the limit. Returns the cursor of the next page when more may match.
 */
export function liquidations(
  model: ReadModel,
  history: HistoryReader,
  p: LiquidationsParams,
): AsyncGenerator<LiquidationView[], StreamEnd, undefined> {
  // Checked now (INVALID_PARAMETER before anything is read or sent), not on the first read.
  const decoded = decodeCursor(p.cursor, 'liquidations', ['number', 'number', 'string', 'number']);
  const after: LiquidationCursor | undefined = decoded && {
    at: decoded[0],
    chainId: decoded[1],
    txHash: decoded[2],
    logIndex: decoded[3],
  };
  return readLiquidations(model, history, p, after);
}

async function* readLiquidations(
  model: ReadModel,
  history: HistoryReader,
  p: LiquidationsParams,
  start: LiquidationCursor | undefined,
): AsyncGenerator<LiquidationView[], StreamEnd, undefined> {
  if (!model.stored || (p.fromMs !== undefined && p.toMs !== undefined && p.fromMs >= p.toMs)) return {};
  const chains = p.chainIds === undefined ? undefined : [...new Set(p.chainIds)];
  if (chains?.length === 0) return {};
  // The store is asked for what its indexes serve (market, borrower, liquidator, one chain,
  // time); protocol, several chains and the amount are checked here. So one read scans
  // LIQUIDATION_PAGE rows at most, whatever the filters: a rare combination (an amount no
  // liquidation reaches) costs many short reads, each a page yielded (empty or not) between
  // which the caller gives the event loop a turn, never one read of the whole history.
  const onlyChain = chains?.length === 1 ? chains[0] : undefined;
  const filter: LiquidationFilter = {
    ...(onlyChain !== undefined ? { chainId: onlyChain } : {}),
    ...(p.market !== undefined ? { marketKey: p.market } : {}),
    ...(p.borrower !== undefined ? { borrower: p.borrower } : {}),
    ...(p.liquidator !== undefined ? { liquidator: p.liquidator } : {}),
    ...(p.fromMs !== undefined ? { fromMs: Math.floor(p.fromMs) } : {}),
    ...(p.toMs !== undefined ? { toMs: Math.ceil(p.toMs) } : {}),
  };
  const matches = (l: LiquidationEvent) =>
    (chains === undefined || chains.includes(l.chainId)) &&
    (p.protocol === undefined || l.protocol === p.protocol) &&
    // (A repayment of no known USD value is not known to reach the amount: not matched.)
    (p.minRepaidUsd === undefined || (l.debtRepaidUsd !== null && l.debtRepaidUsd >= p.minRepaidUsd));
  const keyOf = (l: LiquidationEvent): LiquidationCursor => ({
    at: l.at,
    chainId: l.chainId,
    txHash: l.txHash,
    logIndex: l.logIndex,
  });
  let after = start;
  let left = p.limit;
  for (;;) {
    // What the next read needs is taken from this one before its page is handed out: the rows
    // are not held while the caller writes the page (a long time, for a slow reader), so they
    // die young rather than being promoted to the old generation, which grew the process by
    // 100 to 400 MB over a 500,000-row answer before a full collection.
    let end: StreamEnd | null = null;
    const views: LiquidationView[] = [];
    {
      const rows = await history.liquidations(filter, LIQUIDATION_PAGE, after);
      let i = 0;
      let last: LiquidationEvent | undefined;
      for (const l of rows) {
        if (views.length >= left) break;
        i++;
        if (!matches(l)) continue;
        views.push(liquidationView(model, l));
        last = l;
      }
      left -= views.length;
      const full = rows.length === LIQUIDATION_PAGE;
      if (left <= 0) {
        // More may match: later in this read, or past it when the read was full.
        const more = full || rows.slice(i).some(matches);
        end =
          more && last
            ? {
                nextCursor: encodeCursor('liquidations', [last.at, last.chainId, last.txHash, last.logIndex]),
              }
            : {};
      } else if (!full) end = {};
      else after = keyOf(must(rows.at(-1), 'the last row read'));
    }
    yield views;
    if (end) return end;
  }
}

/** The protocols a liquidations query covers when it finds nothing (meta.source). */
export function liquidationScope(model: ReadModel, p: Scope): Protocol[] {
  return model.catalog.protocolsIn(p);
}
