/**
 * What a pass of the real sources writes: only what changed since the dataset the store holds.
 *
 * The ingesting process keeps the live dataset as it wrote it (WrittenDataset): each market's
 * record, the prices and indexes its positions are stated at (the dataset's record of it), each
 * position as stated, each vault. A pass compares what its sources read with it and writes the
 * difference in one transaction (MarketDataStore.applyChanges), which every server's read model
 * follows in place. Nothing is read back from the store for a routine pass.
 *
 * Positions are stated at their market's dataset prices and indexes: a source reads a position
 * at today's prices and indexes, and it is restated by the ratios (collateral × dataset price /
 * price now × dataset collateral index / index now; debt × dataset price / price now × dataset
 * borrow index / index now; the health factor with them). A price move or accrued interest is
 * then one market change (the read model multiplies its positions back by the ratios), and a
 * position is written only when its own amounts moved: by more than 1 part in 100,000 (0.001 %)
 * from what is stored, or by more than 1 part in 10 million when it is near liquidation (health
 * factor below 1.1), so a drift the market's ratios do not carry (collateral earning interest
 * where the market records no collateral index) is written as it builds up. A market or vault is
 * written when one of its figures (prices and indexes included) moved by more than 1 part in 10
 * million. A served figure is therefore within 0.001 % of what the source read, and a health
 * factor near liquidation within 0.00005 %.
 *
 * A market or vault new to the dataset is added to it (DatasetChanges.added): its positions are
 * stated at its record as added. What cannot be a change rewrites the dataset: a market or vault
 * gone, a market whose positions cannot be restated (a price or an index unknown on one side), a
 * dataset another process wrote over.
 */

import { accountPoolOf } from '../domain/accounts.ts';
import { changeRounds } from '../domain/change-feed.ts';
import { positionAt } from '../domain/position-columns.ts';
import type { DatasetChanges, DatasetInfo } from '../domain/records/dataset.ts';
import {
  isPriced,
  type MarketRecord,
  type PositionRecord,
  type StatedAt,
  statedAt,
  type VaultRecord,
} from '../domain/types.ts';
import type { MarketDataStore } from '../store/ports/market-data.ts';
import { append } from './append.ts';

/** Relative change of a position's figure written when it is not near liquidation. */
export const POSITION_TOLERANCE = 1e-5;
/** ... and when it is (health factor now below NEAR_LIQUIDATION). */
export const NEAR_TOLERANCE = 1e-7;
export const NEAR_LIQUIDATION = 1.1;
/** Relative change of a market's or vault's figure written. */
export const RECORD_TOLERANCE = 1e-7;

/** The records of a pass, as its sources read them (positions at today's prices). */
export interface PassRecords {
  markets: readonly MarketRecord[];
  positions: readonly PositionRecord[];
  vaults: readonly VaultRecord[];
  /**
   * The markets whose positions are handed in part (those read again, an emptied one at zero):
   * the stored positions of these not handed stay as they are. Every other market's positions
   * are handed whole (one stored and not handed is gone).
   */
  partial?: ReadonlySet<string>;
}

/** Positions by market key, then by user. */
export type PositionsByMarket = Map<string, Map<string, PositionRecord>>;

/** Adds a position to its market's (`positions` by market, then user). */
export function hold(positions: PositionsByMarket, p: PositionRecord): void {
  const users = positions.get(p.marketKey);
  if (users) users.set(p.user, p);
  else positions.set(p.marketKey, new Map([[p.user, p]]));
}

export const positionKey = (p: { marketKey: string; user: string }) => `${p.marketKey}\n${p.user}`;
const EMPTY_MARKET: ReadonlyMap<string, PositionRecord> = new Map();
const UNSTATED: StatedAt = { collateral: null, loan: null, borrowIndex: null, collateralIndex: null };
const vaultKey = (v: { chainId: number; address: string }) => `${v.chainId}:${v.address}`;

/** Multipliers from a market's figures now to the dataset's statement of them; null: none. */
function statingRatios(
  now: MarketRecord,
  stated: StatedAt,
): { collateral: number; loan: number; debt: number } | null {
  const { collateralPrice: pc, loanPrice: pl } = now;
  if (pc === null || pl === null || stated.collateral === null || stated.loan === null) return null;
  if (!(pc > 0 && pl > 0 && stated.collateral > 0 && stated.loan > 0)) return null;
  // The read model scales by an index only when both have one: a dataset index without one now,
  // or one now without one in the dataset, cannot be followed.
  const debtIndex = indexRatio(stated.borrowIndex, now.borrowIndex ?? null);
  const collateralIndex = indexRatio(stated.collateralIndex, now.collateralIndex ?? null);
  if (debtIndex === null || collateralIndex === null) return null;
  const loan = stated.loan / pl;
  return { collateral: (stated.collateral / pc) * collateralIndex, loan, debt: loan * debtIndex };
}

/**
 * An index as stated over the index now: 1 when neither has one, null when only one has (the
 * dataset is written again, stated at the index now: a market that comes to carry an index, say
 * after an upgrade of this service, has its positions follow it from then on).
 */
function indexRatio(stated: number | null, now: number | null): number | null {
  if (stated === null) return now === null ? 1 : null;
  return now !== null && now > 0 ? stated / now : null;
}

/** A position read today, stated at its market's dataset prices and index (`r`: statingRatios). */
function stated(p: PositionRecord, r: { collateral: number; loan: number; debt: number }): PositionRecord {
  return {
    marketKey: p.marketKey,
    user: p.user,
    collateralUsd: p.collateralUsd * r.collateral,
    borrowUsd: p.borrowUsd * r.debt,
    supplyUsd: p.supplyUsd * r.loan,
    healthFactor:
      p.healthFactor === Number.POSITIVE_INFINITY ? p.healthFactor : (p.healthFactor * r.collateral) / r.debt,
  };
}

/** A stored position at its market's figures now (the inverse of `stated`). */
function atToday(p: PositionRecord, r: { collateral: number; loan: number; debt: number }): PositionRecord {
  return {
    marketKey: p.marketKey,
    user: p.user,
    collateralUsd: p.collateralUsd / r.collateral,
    borrowUsd: p.borrowUsd / r.debt,
    supplyUsd: p.supplyUsd / r.loan,
    healthFactor:
      p.healthFactor === Number.POSITIVE_INFINITY ? p.healthFactor : (p.healthFactor * r.debt) / r.collateral,
  };
}

/** Whether two numbers differ by more than `tol` of the larger (infinities equal only to themselves). */
function moved(a: number, b: number, tol: number): boolean {
  if (a === b) return false;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return true;
  return Math.abs(a - b) > tol * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Whether a record's number changed: integers (timestamps, blocks, counts) at all, others by
 * more than `tol` of the larger; NaN is NaN.
 */
function numberMoved(a: number, b: number, tol: number): boolean {
  if (Object.is(a, b)) return false;
  if (Number.isInteger(a) && Number.isInteger(b)) return true;
  return moved(a, b, tol);
}

/**
 * Whether two records differ: a number by more than `tol` of the larger (an integer, a time or
 * a block, at all), anything else at all.
 */
export function recordMoved(a: unknown, b: unknown, tol: number): boolean {
  if (typeof a === 'number' && typeof b === 'number') return numberMoved(a, b, tol);
  if (a === b) return false;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return true;
  if (Array.isArray(a) !== Array.isArray(b)) return true;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return true;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return true;
    if (recordMoved((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], tol)) return true;
  }
  return false;
}

function positionMoved(next: PositionRecord, last: PositionRecord, hfNow: number): boolean {
  const tol = hfNow < NEAR_LIQUIDATION ? NEAR_TOLERANCE : POSITION_TOLERANCE;
  return (
    moved(next.collateralUsd, last.collateralUsd, tol) ||
    moved(next.borrowUsd, last.borrowUsd, tol) ||
    moved(next.supplyUsd, last.supplyUsd, tol) ||
    moved(next.healthFactor, last.healthFactor, tol)
  );
}

export const isEmpty = (p: PositionRecord) => p.collateralUsd === 0 && p.borrowUsd === 0 && p.supplyUsd === 0;

/** The live dataset as the store holds it, as this process wrote (or loaded) it. */
export class WrittenDataset {
  /** The dataset version and change sequence number it reflects. */
  version: number;
  changeSeq: number;
  private readonly markets: Map<string, MarketRecord>;
  private readonly stated: Map<string, StatedAt>;
  /** Positions as stated (at their market's dataset prices and index), empty ones included. */
  private readonly positions: PositionsByMarket;
  private readonly vaults: Map<string, VaultRecord>;
  private readonly pools = new Map<string, string | null>();

  private constructor(
    info: Pick<DatasetInfo, 'version' | 'changeSeq'>,
    base: readonly MarketRecord[],
    markets: Map<string, MarketRecord>,
    positions: PositionsByMarket,
    vaults: Map<string, VaultRecord>,
  ) {
    this.version = info.version;
    this.changeSeq = info.changeSeq;
    this.stated = new Map(base.map((m) => [m.uniqueKey, statedAt(m)]));
    this.markets = markets;
    this.positions = positions;
    this.vaults = vaults;
  }

  /** What a dataset just written holds (its positions are stated at its own markets' prices). */
  static written(info: DatasetInfo, records: PassRecords): WrittenDataset {
    const positions: PositionsByMarket = new Map();
    for (const p of records.positions) hold(positions, p);
    return new WrittenDataset(
      info,
      records.markets,
      new Map(records.markets.map((m) => [m.uniqueKey, m])),
      positions,
      new Map(records.vaults.map((v) => [vaultKey(v), v])),
    );
  }

  /**
   * The store's dataset with its change feed applied, read whole (once per process, or after
   * another process wrote). Null when it changed while being read.
   */
  static async load(store: MarketDataStore, info: DatasetInfo): Promise<WrittenDataset | null> {
    const base = await store.loadMarkets();
    const markets = new Map(base.map((m) => [m.uniqueKey, m]));
    const positions: PositionsByMarket = new Map();
    await store.loadPositions((c) => {
      for (let i = 0; i < c.count; i++) {
        const { marketIndex, ...p } = positionAt(c, i);
        const m = base[marketIndex];
        if (m) hold(positions, { marketKey: m.uniqueKey, ...p });
      }
    });
    const vaults = new Map((await store.loadVaults()).map((v) => [vaultKey(v), v]));
    for await (const round of changeRounds(store, 0, info.changeSeq)) {
      // Each row is its record's last change: every row once, in any order.
      for (const c of round.markets)
        if (markets.has(c.record.uniqueKey)) markets.set(c.record.uniqueKey, c.record);
      for (const c of round.positions) {
        const { seq: _seq, source: _source, ...p } = c;
        if (markets.has(p.marketKey)) hold(positions, p);
      }
      for (const c of round.vaults)
        if (vaults.has(vaultKey(c.record))) vaults.set(vaultKey(c.record), c.record);
    }
    const now = await store.datasetInfo();
    if (now?.version !== info.version || now.changeSeq !== info.changeSeq) return null;
    return new WrittenDataset(info, base, markets, positions, vaults);
  }

  /** The dataset's records as a source would read them now (positions at today's prices; none empty). */
  records(): PassRecords {
    const positions: PositionRecord[] = [];
    for (const [key, m] of this.markets) append(positions, this.held(key, m));
    return { markets: [...this.markets.values()], positions, vaults: [...this.vaults.values()] };
  }

  /**
   * A market's positions held (none empty), at the figures of `now` (a record of the market: its
   * prices and index); as stated when they cannot be restated to it.
   */
  held(marketKey: string, now: MarketRecord): PositionRecord[] {
    const r = statingRatios(now, this.#stated(marketKey));
    const out: PositionRecord[] = [];
    for (const p of (this.positions.get(marketKey) ?? EMPTY_MARKET).values())
      if (!isEmpty(p)) out.push(r ? atToday(p, r) : p);
    return out;
  }

  #stated(key: string): StatedAt {
    return this.stated.get(key) ?? UNSTATED;
  }

  /**
   * What a pass's records change in the dataset, or null when they cannot be written as changes
   * (the dataset is to be written again: see the module comment). Positions of markets without
   * both prices are not served (they are handed none).
   */
  changes(next: PassRecords, refreshedAt: number): DatasetChanges | null {
    const added = {
      markets: next.markets.filter((m) => !this.markets.has(m.uniqueKey)),
      vaults: next.vaults.filter((v) => !this.vaults.has(vaultKey(v))),
    };
    // (A market or vault gone: the dataset is written again.)
    if (next.markets.length - added.markets.length !== this.markets.size) return null;
    if (next.vaults.length - added.vaults.length !== this.vaults.size) return null;
    const adding = new Map(added.markets.map((m) => [m.uniqueKey, m]));
    const marketOf = (key: string) => this.markets.get(key) ?? adding.get(key);
    const markets: MarketRecord[] = [];
    const ratios = new Map<string, { collateral: number; loan: number; debt: number }>();
    for (const m of added.markets) {
      const r = statingRatios(m, statedAt(m));
      if (r) ratios.set(m.uniqueKey, r);
      else if (isPriced(m)) return null;
    }
    for (const m of next.markets) {
      const last = this.markets.get(m.uniqueKey);
      if (!last) continue;
      const stated = this.#stated(m.uniqueKey);
      const r = statingRatios(m, stated);
      // Served positions follow a market only while it can restate them: one priced in the
      // dataset and not now (or now and not then) is written again.
      if ((r === null) !== (statingRatios(last, stated) === null) || (r === null && isPriced(m))) return null;
      if (r) ratios.set(m.uniqueKey, r);
      if (recordMoved(m, last, RECORD_TOLERANCE)) markets.push(m);
    }
    const vaults: VaultRecord[] = [];
    for (const v of next.vaults) {
      const last = this.vaults.get(vaultKey(v));
      if (last && recordMoved(v, last, RECORD_TOLERANCE)) vaults.push(v);
    }
    const positions: PositionRecord[] = [];
    const partial = next.partial ?? new Set<string>();
    const seen = new Set<string>();
    // Accounts of the pooled protocols, by pool and user: their positions stated, this pass's
    // and the last written.
    const accounts = new Map<string, { next: PositionRecord[]; last: PositionRecord[]; hfNow: number }>();
    const accountOf = (p: PositionRecord): string | null => {
      const pool = this.#poolOf(p.marketKey, marketOf);
      return pool === null ? null : `${pool}\n${p.user}`;
    };
    for (const p of next.positions) {
      const r = ratios.get(p.marketKey);
      if (!r) continue;
      const key = positionKey(p);
      seen.add(key);
      const s = stated(p, r);
      const account = accountOf(p);
      if (account !== null) {
        const a = accounts.get(account) ?? { next: [], last: [], hfNow: Number.POSITIVE_INFINITY };
        accounts.set(account, a);
        a.next.push(s);
        a.hfNow = Math.min(a.hfNow, p.healthFactor);
        // In a market handed in part, the account's position there as stored (its source hands
        // at zero each pair the account held and no longer does).
        const last = partial.has(p.marketKey) ? this.positions.get(p.marketKey)?.get(p.user) : undefined;
        if (last && !isEmpty(last)) a.last.push(last);
        continue;
      }
      const last = this.positions.get(p.marketKey)?.get(p.user);
      // (One handed empty is written only over one that was not.)
      if (last ? positionMoved(s, last, p.healthFactor) : !isEmpty(s)) positions.push(s);
    }
    const emptied = (p: PositionRecord): PositionRecord => ({
      ...p,
      collateralUsd: 0,
      borrowUsd: 0,
      supplyUsd: 0,
      healthFactor: Number.POSITIVE_INFINITY,
    });
    // The stored positions of the markets handed whole (one not handed is gone).
    for (const [marketKey, users] of this.positions) {
      if (partial.has(marketKey)) continue;
      for (const last of users.values()) {
        if (isEmpty(last)) continue;
        const account = accountOf(last);
        if (account !== null) {
          const a = accounts.get(account);
          if (a) a.last.push(last);
          else accounts.set(account, { next: [], last: [last], hfNow: Number.POSITIVE_INFINITY });
        } else if (!seen.has(positionKey(last))) positions.push(emptied(last));
      }
    }
    // An account is written whole (its pairs as split now, those gone emptied) when its own
    // figures moved: its collateral or weighted collateral in a token, its debt or supply in one.
    // A price move alone shifts how it is split among its pairs, which its totals do not see.
    // (A pair handed at zero counts for nothing: the account no longer holds it.)
    for (const a of accounts.values()) {
      const tol = a.hfNow < NEAR_LIQUIDATION ? NEAR_TOLERANCE : POSITION_TOLERANCE;
      const held = a.next.filter((p) => !isEmpty(p));
      const now = this.#legs(held, marketOf);
      const before = this.#legs(a.last, marketOf);
      let changed = now.size !== before.size;
      for (const [k, x] of now) if (changed || moved(x, before.get(k) ?? Number.NaN, tol)) changed = true;
      if (!changed) continue;
      append(positions, held);
      const kept = new Set(held.map(positionKey));
      for (const p of a.last) if (!kept.has(positionKey(p))) positions.push(emptied(p));
    }
    const out: DatasetChanges = { markets, positions, vaults, refreshedAt };
    return added.markets.length + added.vaults.length > 0 ? { ...out, added } : out;
  }

  /**
   * The pool of a pooled protocol's market (`<protocol>-<chainId>-<pool>`), null for an isolated
   * one; found once per market (the markets are this dataset's for its life).
   */
  #poolOf(marketKey: string, marketOf: (key: string) => MarketRecord | undefined): string | null {
    let pool = this.pools.get(marketKey);
    if (pool === undefined) {
      const m = marketOf(marketKey);
      if (!m) return null;
      const id = accountPoolOf(m.protocol, m.uniqueKey);
      pool = id !== null ? `${m.protocol}-${m.chainId}-${id}` : null;
      this.pools.set(marketKey, pool);
    }
    return pool;
  }

  /**
   * An account's own figures as stated, per token: collateral and collateral at its threshold
   * (health factor x debt, or collateral x lltv without debt) per collateral token, debt and
   * supply per loan token.
   */
  #legs(
    positions: readonly PositionRecord[],
    marketOf: (key: string) => MarketRecord | undefined,
  ): Map<string, number> {
    const legs = new Map<string, number>();
    const add = (k: string, x: number) => legs.set(k, (legs.get(k) ?? 0) + x);
    for (const p of positions) {
      const m = marketOf(p.marketKey);
      if (!m) continue;
      const weighted = p.borrowUsd > 0 ? p.healthFactor * p.borrowUsd : p.collateralUsd * m.lltv;
      add(`c:${m.collateralAddress}`, p.collateralUsd);
      add(`w:${m.collateralAddress}`, weighted);
      add(`d:${m.loanAddress}`, p.borrowUsd);
      add(`s:${m.loanAddress}`, p.supplyUsd);
    }
    return legs;
  }

  /** The changes were written, the feed's sequence number now `changeSeq`. */
  committed(changes: DatasetChanges, changeSeq: number): void {
    for (const m of changes.added?.markets ?? []) {
      this.markets.set(m.uniqueKey, m);
      this.stated.set(m.uniqueKey, statedAt(m));
    }
    for (const v of changes.added?.vaults ?? []) this.vaults.set(vaultKey(v), v);
    for (const m of changes.markets) this.markets.set(m.uniqueKey, m);
    for (const p of changes.positions) hold(this.positions, p);
    for (const v of changes.vaults) this.vaults.set(vaultKey(v), v);
    this.changeSeq = changeSeq;
  }
}
