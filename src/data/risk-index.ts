import { LRUCache } from 'lru-cache';
import { accountHealth, type TokenExposure } from '../domain/accounts.ts';
import type { Protocol } from '../domain/enums.ts';
import { distanceToLiq, leverage } from '../domain/metrics.ts';
import { ADDRESS_BYTES, addressAt, type PositionColumns, writeAddress } from '../domain/position-columns.ts';
import { fraction, significant, significantOrNull, usd } from '../domain/precision.ts';
import { NO_POSITIONS, type PositionSums } from '../domain/stress.ts';
import type { PositionRecord, PriceChange } from '../domain/types.ts';
import type { Catalog, MarketView } from './catalog.ts';
import { AccountBook, type AccountView } from './risk/accounts.ts';
import { MarketFactors } from './risk/factors.ts';
import { MarketLists } from './risk/market-lists.ts';
import { Positions } from './risk/positions.ts';
import { ScopeOrder } from './risk/scope-order.ts';
import type { PositionAtRiskView, RiskQuery } from './risk/types.ts';

export type { AccountView } from './risk/accounts.ts';
export type { PositionAtRiskView, RiskQuery } from './risk/types.ts';

/**
 * Bounds of the serialized-positions cache, by entries and by bytes (each entry is its bytes
 * plus a fixed overhead; a position is about 0.5 KB, so 20,000 of them fit in 16 MiB).
 */
export const JSON_CACHE_ENTRIES = 20_000;
export const JSON_CACHE_BYTES = 16 * 1024 * 1024;
const JSON_ENTRY_OVERHEAD_BYTES = 100;
/** Changes applied at once from which each changed market's list is rebuilt once, not edited per change. */
const BATCH_REBUILD = 256;

/**
 * Positions ordered by health factor, while prices move.
 *
 * Every market here is isolated: a position's collateral and debt are one token each, so its
 * health factor is collateral x price_c x lltv / (debt x price_l) = hf0 x k, where hf0 is its
 * health factor at the snapshot prices and k = (price_c / price_c0) / (price_l / price_l0) is
 * one number per market. So inside a market the order by health factor never changes with
 * prices: each market keeps its positions sorted once, by (hf0 asc, debt desc), and a price
 * move only updates the factors of the markets that hold the token (applyPrices: no sort, no
 * rebuild). USD amounts move the same way: collateral x (price_c / price_c0), debt and supply x
 * (price_l / price_l0).
 *
 * A query merges markets: each scope (everything, one protocol, one chain, one protocol on one
 * chain) keeps its markets ordered by their current lowest health factor, re-sorted on the first
 * query after a price move (one sort of the scope's markets, not of its positions); a query
 * walks that order, opening a market only once its lowest health factor could be next, and
 * merges the open ones with a small heap: O((k + m) log m) for k answers from m markets, with
 * nothing that grows with the number of positions but the binary search of a single-market
 * query. Storage: the columns (56 bytes a position) plus one list per market (4 bytes).
 *
 * Markets of the pooled protocols (Aave, Spark, Compound, Euler: src/domain/accounts.ts) are not
 * isolated: a wallet's positions in one pool (comet, Euler controller vault) form an account,
 * and every one of them shows the account's health factor, which no single market's factor
 * scales (AccountBook). A query takes the accounts below its threshold, sorted, merged with the
 * isolated markets' answers.
 *
 * Its parts, in src/data/risk/: the positions' columns and their lists by market and wallet
 * (positions.ts), each market's risk order and prefix sums (market-lists.ts), the per-market
 * price factors and borrow index (factors.ts), the order across isolated markets and its paging
 * (scope-order.ts, cursor-heap.ts) and the accounts of the pooled protocols (accounts.ts). This
 * class applies the changes to them and answers the queries.
 */
export class RiskIndex {
  private readonly catalog: Catalog;
  private readonly positions: Positions;
  private readonly lists: MarketLists;
  private readonly factors: MarketFactors;
  private readonly accounts: AccountBook;
  private readonly scopes: ScopeOrder;
  private indexedCount: number;
  private readonly jsonCache = new LRUCache<number, { version: number; json: Uint8Array }>({
    max: JSON_CACHE_ENTRIES,
    maxSize: JSON_CACHE_BYTES,
    sizeCalculation: (e) => e.json.byteLength + JSON_ENTRY_OVERHEAD_BYTES,
  });

  constructor(catalog: Catalog, cols: PositionColumns) {
    this.catalog = catalog;
    this.positions = new Positions(catalog, cols);
    this.lists = new MarketLists(catalog.size, cols);
    this.indexedCount = this.lists.listed;
    this.factors = new MarketFactors(catalog);
    this.accounts = new AccountBook(catalog, this.positions, this.lists, this.factors);
    this.scopes = new ScopeOrder(catalog, this.positions, this.lists, this.factors, this.accounts.pooled);
  }

  /**
   * Markets the catalog added (Catalog.addMarkets): room for them in every per-market structure,
   * with no position yet (their positions come as changes). O(markets), and the pooled accounts
   * are flattened again on their next use.
   */
  marketsAdded(): void {
    this.lists.grow(this.catalog.size);
    this.factors.grow();
    this.accounts.grow();
    this.scopes.grow(this.accounts.pooled);
  }

  /**
   * Applies positions as their source now sees them (amounts in the USD of their market
   * record's prices, like the loaded ones): each replaces the position of the same market and
   * user, or is added. Only the markets named change: a position leaves its market's ordered
   * list and re-enters it at its new place (a binary search and a copy of that one list), the
   * market's cached JSON and scope order are invalidated. Returns the positions changed.
   */
  applyPositionChanges(
    changes: Iterable<{ ord: number; seq?: number } & Omit<PositionRecord, 'marketKey'>>,
  ): number {
    const version = this.factors.version + 1;
    let changed = 0;
    let scopesChanged = false;
    const positions = this.positions;
    const key = new Uint8Array(ADDRESS_BYTES);
    // A large batch (a start catching up with the change feed) rebuilds each changed market's
    // list once at the end, rather than copying it per change.
    const batch = Array.isArray(changes) && changes.length >= BATCH_REBUILD;
    const rebuilt = new Map<number, Set<number>>();
    for (const ch of changes) {
      const ord = ch.ord;
      if (!(ord >= 0 && ord < this.catalog.size)) continue;
      writeAddress(key, 0, ch.user);
      let i = positions.find(ord, key);
      const wasListed = i >= 0 && positions.isIndexed(i);
      if (wasListed && !batch) scopesChanged = this.lists.unlist(i, ord) || scopesChanged;
      if (i < 0) {
        i = positions.add(ord, key);
        this.accounts.added(i);
      }
      const c = positions.cols;
      c.collateralUsd[i] = ch.collateralUsd;
      c.borrowUsd[i] = ch.borrowUsd;
      c.supplyUsd[i] = ch.supplyUsd;
      c.healthFactor[i] = ch.healthFactor;
      this.accounts.restated(i);
      if (ch.seq !== undefined) positions.seqs.set(i, ch.seq);
      if (batch) {
        const set = rebuilt.get(ord);
        if (set) set.add(i);
        else rebuilt.set(ord, new Set([i]));
      } else if (positions.isIndexed(i)) scopesChanged = this.lists.list(c, i, ord) || scopesChanged;
      this.indexedCount += (positions.isIndexed(i) ? 1 : 0) - (wasListed ? 1 : 0);
      this.factors.touch(ord, version);
      changed++;
    }
    const listed = (i: number) => positions.isIndexed(i);
    for (const [ord, set] of rebuilt)
      scopesChanged = this.lists.rebuild(positions.cols, ord, set, listed) || scopesChanged;
    if (changed > 0) this.factors.version = version;
    if (scopesChanged) this.scopes.build();
    return changed;
  }

  /**
   * Position i as stored (amounts in its market record's prices, debt at the borrow index it
   * was stated at), with the price factors and borrow index of its market now and the change
   * sequence number it is at (0: as loaded).
   */
  stateOf(i: number) {
    const c = this.positions.cols;
    const f = this.factors;
    const ord = c.marketIndex[i]!;
    return {
      ord,
      user: addressAt(c.users, i),
      collateralUsd: c.collateralUsd[i]!,
      borrowUsd: c.borrowUsd[i]!,
      supplyUsd: c.supplyUsd[i]!,
      healthFactor: c.healthFactor[i]!,
      collateralFactor: f.collateralFactor[ord]!,
      loanFactor: f.loanFactor[ord]!,
      debtIndex: f.debtIndex[ord]!,
      seq: this.positions.seqs.get(i) ?? 0,
    };
  }

  /**
   * A wallet's positions (numbers), in every market, debt-free and emptied ones too. The index
   * by wallet is built on the first call (one pass over the positions) and then kept up to date.
   */
  positionsOf(address: string): readonly number[] {
    return this.positions.ofWallet(address);
  }

  /**
   * Position i at current prices and borrow index, unrounded: its market (ord), USD amounts and
   * health factor (Infinity without debt).
   */
  amountsOf(i: number): {
    ord: number;
    collateralUsd: number;
    borrowUsd: number;
    supplyUsd: number;
    healthFactor: number;
  } {
    const c = this.positions.cols;
    const f = this.factors;
    const ord = c.marketIndex[i]!;
    const borrowUsd = c.borrowUsd[i]! * f.debtFactor[ord]!;
    return {
      ord,
      collateralUsd: c.collateralUsd[i]! * f.collateralFactor[ord]!,
      borrowUsd,
      supplyUsd: c.supplyUsd[i]! * f.loanFactor[ord]!,
      healthFactor: this.accounts.healthOf(i, ord),
    };
  }

  /**
   * The account of position i at current prices: its positions, totals and health factor; null
   * for a position of an isolated market (Morpho, Fluid: the position is the account).
   */
  accountOf(i: number): AccountView | null {
    return this.accounts.accountOf(i);
  }

  /**
   * What the account of position i holds of a token (its chain's lower-case address) at current
   * prices: the collateral in it at its thresholds and the debt in it. For an isolated position,
   * its own collateral or debt when it is that token.
   */
  exposureOf(i: number, token: string): TokenExposure {
    return this.accounts.exposureOf(i, token);
  }

  /**
   * Positions with debt in market ord that are liquidatable below `bound` after token prices
   * move, with their collateral and debt in USD now (before the moves): `moveOf(ord)` gives the
   * relative moves of a market's collateral and loan tokens. Isolated markets: below() with the
   * market's scale. Pooled markets: each position's account health factor after the moves of
   * every token it holds (its other positions' tokens included), O(positions x account size).
   */
  belowMoved(ord: number, moveOf: (ord: number) => { c: number; l: number }, bound: number): PositionSums {
    const own = moveOf(ord);
    if (!this.accounts.pooled[ord]) return this.below(ord, (1 + own.c) / (1 + own.l), bound);
    return this.accounts.belowMoved(ord, moveOf, bound);
  }

  /** Positions held, debt-free ones included. */
  get size(): number {
    return this.positions.cols.count;
  }

  /** Positions with debt, the ones any query can return. */
  get indexed(): number {
    return this.indexedCount;
  }

  /** Bytes held by the columns, the ordering lists and their prefix sums. */
  byteSize(): number {
    return (
      this.positions.byteSize() + this.factors.byteSize() + this.lists.byteSize() + this.scopes.byteSize()
    );
  }

  /**
   * Applies new token prices (relative to the snapshot prices of the catalog's markets): only
   * the factors of the markets holding each token change, O(markets touched). Unknown tokens
   * and markets whose snapshot price is not positive are left alone. Returns the markets touched.
   */
  applyPrices(changes: Iterable<PriceChange>): number {
    return this.factors.applyPrices(changes);
  }

  /**
   * Markets restated by their source: each market's token prices over the dataset's (what its
   * positions' amounts are stated at), replacing its price factors, and its borrow index over
   * the dataset's when given. Returns the markets touched.
   */
  applyMarketFactors(
    changes: Iterable<{ ord: number; collateral: number; loan: number; debtIndex?: number }>,
  ): number {
    return this.factors.applyMarketFactors(changes);
  }

  /**
   * Interest accrued on debt: each market's borrow index now, relative to the one its positions'
   * debt is stated at (1 as loaded). Debt and health factors of the market's positions scale by
   * it (one factor per market, like prices: no re-sort). Non-positive or non-finite indexes and
   * unknown ords are ignored. Returns the markets touched.
   */
  applyDebtIndexes(changes: Iterable<{ ord: number; index: number }>): number {
    return this.factors.applyDebtIndexes(changes);
  }

  /** What market ord's positions' stated health factors are multiplied by now (prices and borrow index). */
  hfFactorOf(ord: number): number {
    return this.factors.hfFactor[ord]!;
  }

  /**
   * The health factor position `i` has now, as `view(i)` serves it but unrounded: what risk
   * events compare with their thresholds (src/events/matcher.ts).
   */
  healthFactorOf(i: number): number {
    const account = this.accountOf(i);
    return account
      ? accountHealth(account.totals).healthFactor
      : this.hfOf(i, this.positions.cols.marketIndex[i]!);
  }

  /** Current health factor of position `i` (market `ord`). */
  private hfOf(i: number, ord: number): number {
    return this.positions.cols.healthFactor[i]! * this.factors.hfFactor[ord]!;
  }

  /**
   * What the risk events' matcher (src/events/matcher.ts) reads to look only at what changed:
   * the change version (bumped by every price move that changed a factor and every change of
   * positions), the markets changed after a version, and for a market its positions with debt
   * in risk order and their stated health factors (isolated markets: hf = stated x the market's
   * factor), or the accounts holding it (pooled markets).
   */
  get changeVersion(): number {
    return this.factors.version;
  }

  /** Markets (ords, ascending) whose factors or positions changed after `version`. */
  marketsChangedSince(version: number): number[] {
    const out: number[] = [];
    const changedAt = this.factors.changedAt;
    for (let ord = 0; ord < changedAt.length; ord++) if (changedAt[ord]! > version) out.push(ord);
    return out;
  }

  /** Whether market ord's positions changed (added, restated, emptied) after `version`. */
  positionsChangedAfter(ord: number, version: number): boolean {
    return this.factors.positionsChangedAt[ord]! > version;
  }

  /** The accounts holding a pooled market whose positions changed after `version` (null: every account). */
  accountsWithPositionChangesSince(version: number): readonly number[] | null {
    return this.accounts.positionsChangedSince(version);
  }

  /** Whether market ord's positions belong to accounts (pooled protocols). */
  isPooled(ord: number): boolean {
    return this.accounts.pooled[ord] === 1;
  }

  /** Market ord's positions with debt, in risk order (stated health factor asc, debt desc, number). */
  marketList(ord: number): Uint32Array | undefined {
    return this.lists.byMarket[ord];
  }

  /** Each position's health factor as stated (before its market's factor), by position number. */
  statedHealthFactors(): Float64Array {
    return this.positions.cols.healthFactor;
  }

  /** The wallet holding position i (lower-case address, as its view shows it). */
  walletOf(i: number): string {
    return addressAt(this.positions.cols.users, i);
  }

  /**
   * The accounts holding a position in a pooled market changed after `version` (each once;
   * null: every account; `version` -1: every account), their positions and their health factors
   * at current prices (AccountBook.changedSince).
   */
  accountsChangedSince(version: number) {
    return this.accounts.changedSince(version);
  }

  /** Risk order of two positions at current prices: health factor shown ascending, debt descending, number. */
  riskBefore(x: number, y: number): number {
    return this.accounts.riskBefore(x, y);
  }

  /**
   * Position numbers matching the query, in (healthFactor asc, borrowUsd desc) order, at current
   * prices: the isolated markets' positions and the accounts' positions, merged.
   */
  query(q: RiskQuery): number[] {
    if (q.limit <= 0) return [];
    if (q.marketOrd !== undefined)
      return this.accounts.pooled[q.marketOrd]
        ? this.accounts.queryMarket(q, q.marketOrd)
        : this.scopes.queryMarket(q, q.marketOrd);
    const isolated = this.scopes.query(q);
    const pooled = this.accounts.query(q);
    if (pooled.length === 0) return isolated;
    if (isolated.length === 0) return pooled;
    const out: number[] = [];
    let x = 0;
    let y = 0;
    while (out.length < q.limit && (x < isolated.length || y < pooled.length)) {
      if (
        y >= pooled.length ||
        (x < isolated.length && this.accounts.riskBefore(isolated[x]!, pooled[y]!) < 0)
      )
        out.push(isolated[x++]!);
      else out.push(pooled[y++]!);
    }
    return out;
  }

  /**
   * Positions with debt in market ord whose health factor times `scale` is below `bound`, with
   * their collateral and debt in USD now (before the scale): a binary search of the market's
   * list (ordered by health factor) and two prefix sums, O(log n) once the sums are built (one
   * pass over the list, kept until the list changes).
   */
  below(ord: number, scale: number, bound: number): PositionSums {
    const list = this.lists.byMarket[ord];
    if (!list || !(scale > 0)) return NO_POSITIONS;
    if (this.accounts.pooled[ord]) {
      if (scale !== 1) return this.belowMoved(ord, () => ({ c: scale - 1, l: 0 }), bound);
      return this.accounts.below(ord, bound);
    }
    const f = this.factors;
    // hf0 x hfFactor x scale < bound  <=>  hf0 < bound / (hfFactor x scale)
    const limit = bound / (f.hfFactor[ord]! * scale);
    const c = this.positions.cols;
    const hf0 = c.healthFactor;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hf0[list[mid]!]! < limit) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return NO_POSITIONS;
    const sums = this.lists.prefixSums(c, list);
    return {
      positions: lo,
      collateralUsd: sums.collateral[lo]! * f.collateralFactor[ord]!,
      debtUsd: sums.debt[lo]! * f.debtFactor[ord]!,
    };
  }

  /** The debt of market ord's positions as stated (USD at its record's prices, borrow index 1), summed. */
  statedDebtOf(ord: number): number {
    const list = this.lists.byMarket[ord];
    return list ? this.lists.prefixSums(this.positions.cols, list).debt[list.length]! : 0;
  }

  /** Positions with debt in market ord, and their collateral and debt in USD now. */
  withDebt(ord: number): PositionSums {
    return this.below(ord, 1, Number.POSITIVE_INFINITY);
  }

  /** The debt in USD now of each position with debt in market ord (one per borrower: a market holds one position per wallet). */
  debtsOf(ord: number): Float64Array {
    const list = this.lists.byMarket[ord];
    if (!list) return new Float64Array(0);
    const out = new Float64Array(list.length);
    const df = this.factors.debtFactor[ord]!;
    const borrow0 = this.positions.cols.borrowUsd;
    for (let j = 0; j < list.length; j++) out[j] = borrow0[list[j]!]! * df;
    return out;
  }

  /** Positions held in market ord, debt-free ones included. */
  positionsIn(ord: number): number {
    return this.positions.countIn(ord);
  }

  /** The protocol of a position's market. */
  protocolOf(i: number): Protocol {
    return this.catalog.recordAt(this.positions.cols.marketIndex[i]!).protocol;
  }

  /**
   * A position's JSON by `serialize`, cached in a bounded LRU until its market's prices move:
   * answers mostly come from the few positions nearest liquidation.
   */
  json<T extends Uint8Array>(i: number, serialize: (view: PositionAtRiskView) => T): T {
    // A pooled position moves with every market of its account: any change may move it.
    const ord = this.positions.cols.marketIndex[i]!;
    const version = this.accounts.pooled[ord] ? this.factors.version : this.factors.marketVersion[ord]!;
    const hit = this.jsonCache.get(i);
    if (hit && hit.version === version) return hit.json as T;
    const json = serialize(this.view(i));
    this.jsonCache.set(i, { version, json });
    return json;
  }

  /** Entries and bytes of the serialized-positions cache (at most JSON_CACHE_ENTRIES and JSON_CACHE_BYTES). */
  jsonCacheStats(): { entries: number; bytes: number } {
    return { entries: this.jsonCache.size, bytes: this.jsonCache.calculatedSize };
  }

  /** The API view of one position, at current prices. */
  view(i: number): PositionAtRiskView {
    const c = this.positions.cols;
    const f = this.factors;
    const ord = c.marketIndex[i]!;
    const m: MarketView = this.catalog.recordAt(ord);
    const collateralUsd = c.collateralUsd[i]! * f.collateralFactor[ord]!;
    const borrowUsd = c.borrowUsd[i]! * f.debtFactor[ord]!;
    const account = this.accountOf(i);
    // A pooled position shows its account's health, leverage and distance (the account's totals).
    const health = account
      ? accountHealth(account.totals)
      : { healthFactor: this.hfOf(i, ord), leverage: leverage(collateralUsd, borrowUsd) };
    const hf = health.healthFactor;
    // Served figures are rounded once, here (src/domain/precision.ts); the index orders on the
    // unrounded ones.
    return {
      protocol: m.protocol,
      chainId: m.chainId,
      user: { address: addressAt(c.users, i) },
      healthFactor: significant(hf),
      state: {
        collateralUsd: usd(collateralUsd),
        borrowAssetsUsd: usd(borrowUsd),
        supplyAssetsUsd: usd(c.supplyUsd[i]! * f.loanFactor[ord]!),
      },
      market: {
        uniqueKey: m.uniqueKey,
        collateralAsset: { symbol: m.collateral },
        loanAsset: { symbol: m.loan },
        lltv: m.lltv,
      },
      leverage: significantOrNull(health.leverage),
      distanceToLiq: fraction(distanceToLiq(hf)),
    };
  }
}
