import { LRUCache } from 'lru-cache';
import {
  type AccountTotals,
  accountHealth,
  accountPoolOf,
  evcOwnerPrefix,
  type TokenExposure,
} from '../domain/accounts.ts';
import type { Protocol } from '../domain/enums.ts';
import { distanceToLiq, leverage } from '../domain/metrics.ts';
import {
  ADDRESS_BYTES,
  addressAt,
  isRiskSorted,
  type PositionColumns,
  riskOrderBefore,
  writeAddress,
} from '../domain/position-columns.ts';
import { fraction, significant, significantOrNull, usd } from '../domain/precision.ts';
import { NO_POSITIONS, type PositionSums } from '../domain/stress.ts';
import type { PositionRecord, PriceChange } from '../domain/types.ts';
import type { Catalog, MarketView } from './catalog.ts';

/** The API's PositionAtRisk (SPEC.md, DECISIONS D5). */
export interface PositionAtRiskView {
  protocol: Protocol;
  chainId: number;
  user: { address: string };
  healthFactor: number;
  state: { collateralUsd: number; borrowAssetsUsd: number; supplyAssetsUsd: number };
  market: {
    uniqueKey: string;
    collateralAsset: { symbol: string };
    loanAsset: { symbol: string };
    lltv: number;
  };
  leverage: number | null;
  distanceToLiq: number;
}

export interface RiskQuery {
  /** Positions with healthFactor strictly below this are returned (0 < x <= 10). */
  healthFactorThreshold: number;
  protocol?: Protocol | undefined;
  /** Chains in scope; undefined = every chain. */
  chainIds?: readonly number[] | undefined;
  /** Market ord in the catalog. */
  marketOrd?: number | undefined;
  minBorrowUsd: number;
  limit: number;
}

/**
 * Bounds of the serialized-positions cache, by entries and by bytes (each entry is its bytes
 * plus a fixed overhead; a position is about 0.5 KB, so 20,000 of them fit in 16 MiB).
 */
export const JSON_CACHE_ENTRIES = 20_000;
export const JSON_CACHE_BYTES = 16 * 1024 * 1024;
const JSON_ENTRY_OVERHEAD_BYTES = 100;

/** The accounts of the pooled protocols' positions, and their figures at one price version. */
interface Accounts {
  /** A 30-bit hash of the pool's number and the user's 20 bytes, to the first account of that hash. */
  ids: Map<number, number>;
  /** Per account: the next account of the same hash (-1: none). */
  nextSameHash: number[];
  /** Per account: its positions. */
  members: number[][];
  /** The same flattened (account by account; `start[id]` to `start[id + 1]`), rebuilt after a join. */
  flat: Int32Array | null;
  start: Int32Array;
  protocol: Protocol[];
  chainId: number[];
  /** Per position: its account, -1 for an isolated one (grows with the columns). */
  of: Int32Array;
  /** The price version the figures below are at (-1: never computed). */
  version: number;
  /** Per account, USD now: collateral, collateral at its thresholds, debt; and the health factor. */
  collateral: Float64Array;
  weighted: Float64Array;
  debt: Float64Array;
  hf: Float64Array;
}

/** A position's account: its positions and totals now (USD). */
export interface AccountView {
  id: number;
  members: readonly number[];
  totals: AccountTotals;
  healthFactor: number;
}

/** Scope arrays of market ords, kept sorted by each market's current lowest health factor. */
interface ScopeMarkets {
  ords: Uint32Array;
  /** The price version the order was computed at (re-sorted lazily on the next query). */
  sortedAt: number;
}

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
 * and every one of them shows the account's health factor, sum(collateral_i x threshold_i) /
 * sum(debt_i) at current prices, which no single market's factor scales. Their positions are
 * grouped into accounts (built on first use); the accounts' health factors are recomputed in one
 * pass after a price or position change (O(positions of accounts)), and a query takes the
 * accounts below its threshold, sorted, merged with the isolated markets' answers. A position's
 * collateral counts at the threshold its source stated it at: its stored health factor x its
 * debt (the source's own account health, e-mode included) or, without debt, its market's lltv.
 */
export class RiskIndex {
  /** The positions; replaced by a larger copy when a change adds positions past its room. */
  private cols: PositionColumns;
  /** Per market (by ord): every position number, debt-free ones too; built on the first change. */
  private members: Map<number, number[]> | null = null;
  /** Per wallet (lower-case address): its position numbers, every market; built on the first wallet query. */
  private byUser: Map<string, number[]> | null = null;
  /** The change sequence number of each position changed since the load (0 for the others). */
  private readonly seqs = new Map<number, number>();
  /** Positions with debt in each market (by ord), by (hf0 asc, debt desc, number). */
  private readonly byMarket: (Uint32Array | undefined)[];
  private readonly scopes = new Map<string, ScopeMarkets>();
  private readonly catalog: Catalog;
  private indexedCount: number;
  /**
   * Per market: price factors of its collateral and loan tokens, its borrow index over the one
   * its positions' debt is stated at, debt = loan x index, and k = collateral / debt.
   */
  private readonly collateralFactor: Float64Array;
  private readonly loanFactor: Float64Array;
  private readonly debtIndex: Float64Array;
  private readonly debtFactor: Float64Array;
  private readonly hfFactor: Float64Array;
  /** Per market: bumped whenever its factors change (cached JSON of its positions is stale). */
  private readonly marketVersion: Uint32Array;
  /** Bumped by every price move that changed a factor. */
  private priceVersion = 0;
  /** Per market: the price version at which its factors last changed. */
  private readonly changedAt: Int32Array;
  /** Per market: its lowest health factor when its scopes were last ordered. */
  private readonly heads: Float64Array;
  /**
   * Prefix sums of collateral and debt along each market's list, by the list itself: lists are
   * replaced (never edited) when a position enters or leaves, so a replaced list's sums go with it.
   */
  private readonly prefixes = new WeakMap<Uint32Array, { collateral: Float64Array; debt: Float64Array }>();
  /** Per market (by ord): 1 when its positions belong to accounts (pooled protocols). */
  private readonly pooled: Uint8Array;
  /** Per market (by ord): the number of its pool (comet, Euler controller vault), -1 for isolated markets. */
  private readonly poolOf: Int32Array;
  /** Per market (by ord): its lltv (what a debt-free position's collateral counts at). */
  private readonly lltvOf: Float64Array;
  /** The accounts, built on first use (see ensureAccounts). */
  private accounts: Accounts | null = null;
  /** Per Euler owner group (first 19 bytes): its Euler positions; built with byUser. */
  private byOwner: Map<string, number[]> | null = null;
  /** Accounts below a threshold, sorted, for the price version they were computed at. */
  private accountsBelow: { version: number; threshold: number; ids: Uint32Array } | null = null;
  private readonly jsonCache = new LRUCache<number, { version: number; json: Uint8Array }>({
    max: JSON_CACHE_ENTRIES,
    maxSize: JSON_CACHE_BYTES,
    sizeCalculation: (e) => e.json.byteLength + JSON_ENTRY_OVERHEAD_BYTES,
  });

  constructor(catalog: Catalog, cols: PositionColumns) {
    this.catalog = catalog;
    this.cols = cols;
    const { count, healthFactor: hf, borrowUsd } = cols;
    // Debt-free positions are never at risk (D5): they are left out of every list.
    let atRisk = 0;
    for (let i = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) atRisk++;
    const order = new Uint32Array(atRisk);
    for (let i = 0, j = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) order[j++] = i;
    // Stores keep positions in risk order already; anything else is sorted here.
    if (!isRiskSorted(cols)) order.sort((a, b) => riskOrderBefore(cols, a, b));
    this.indexedCount = atRisk;
    // Bucket the global order by market; appending in global order keeps each list sorted.
    const size = catalog.size;
    const counts = new Uint32Array(size);
    for (let j = 0; j < order.length; j++) counts[cols.marketIndex[order[j]!]!]!++;
    this.byMarket = Array.from(counts, (c) => (c > 0 ? new Uint32Array(c) : undefined));
    // With each list, its prefix sums of collateral and debt (stress tests read them), filled in
    // the same pass: a first stress test then costs no pass over the positions.
    const sums = Array.from(counts, (c) =>
      c > 0 ? { collateral: new Float64Array(c + 1), debt: new Float64Array(c + 1) } : undefined,
    );
    const fill = new Uint32Array(size);
    for (let j = 0; j < order.length; j++) {
      const i = order[j]!;
      const ord = cols.marketIndex[i]!;
      const at = fill[ord]!++;
      this.byMarket[ord]![at] = i;
      const s = sums[ord]!;
      s.collateral[at + 1] = s.collateral[at]! + cols.collateralUsd[i]!;
      s.debt[at + 1] = s.debt[at]! + cols.borrowUsd[i]!;
    }
    for (let ord = 0; ord < size; ord++) if (sums[ord]) this.prefixes.set(this.byMarket[ord]!, sums[ord]!);
    this.collateralFactor = new Float64Array(size).fill(1);
    this.loanFactor = new Float64Array(size).fill(1);
    this.debtIndex = new Float64Array(size).fill(1);
    this.debtFactor = new Float64Array(size).fill(1);
    this.hfFactor = new Float64Array(size).fill(1);
    this.marketVersion = new Uint32Array(size);
    this.changedAt = new Int32Array(size);
    this.heads = new Float64Array(size);
    this.pooled = new Uint8Array(size);
    this.poolOf = new Int32Array(size).fill(-1);
    this.lltvOf = new Float64Array(size);
    const pools = new Map<string, number>();
    for (let ord = 0; ord < size; ord++) {
      const m = catalog.recordAt(ord);
      this.lltvOf[ord] = m.lltv;
      const pool = accountPoolOf(m.protocol, m.uniqueKey);
      if (pool === null) continue;
      this.pooled[ord] = 1;
      const key = `${m.protocol}-${m.chainId}-${pool}`;
      let id = pools.get(key);
      if (id === undefined) {
        id = pools.size;
        pools.set(key, id);
      }
      this.poolOf[ord] = id;
    }
    this.buildScopes();
  }

  /** Each scope's isolated markets with debt (ordered on their first query; accounts are queried apart). */
  private buildScopes(): void {
    const members = new Map<string, number[]>();
    const join = (k: string, ord: number) => {
      const l = members.get(k);
      if (l) l.push(ord);
      else members.set(k, [ord]);
    };
    for (let ord = 0; ord < this.catalog.size; ord++) {
      const m = this.catalog.recordAt(ord);
      if (!this.byMarket[ord] || this.pooled[ord]) continue;
      join('all', ord);
      join(`p:${m.protocol}`, ord);
      join(`c:${m.chainId}`, ord);
      join(`pc:${m.protocol}:${m.chainId}`, ord);
    }
    this.scopes.clear();
    for (const [k, ords] of members) this.scopes.set(k, { ords: Uint32Array.from(ords), sortedAt: -1 });
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
    const version = this.priceVersion + 1;
    let changed = 0;
    let scopesChanged = false;
    const members = this.membersByMarket();
    const key = new Uint8Array(ADDRESS_BYTES);
    for (const ch of changes) {
      const ord = ch.ord;
      if (!(ord >= 0 && ord < this.catalog.size)) continue;
      writeAddress(key, 0, ch.user);
      const list = members.get(ord) ?? [];
      let i = list.find((j) => this.userIs(j, key)) ?? -1;
      const wasListed = i >= 0 && this.isIndexed(i);
      if (wasListed) scopesChanged = this.unlist(i, ord) || scopesChanged;
      if (i < 0) {
        i = this.addPosition(ord, key);
        list.push(i);
        members.set(ord, list);
        if (this.accounts && this.pooled[ord]) this.join(this.accounts, i);
      }
      const c = this.cols;
      c.collateralUsd[i] = ch.collateralUsd;
      c.borrowUsd[i] = ch.borrowUsd;
      c.supplyUsd[i] = ch.supplyUsd;
      c.healthFactor[i] = ch.healthFactor;
      if (ch.seq !== undefined) this.seqs.set(i, ch.seq);
      if (this.isIndexed(i)) scopesChanged = this.list(i, ord) || scopesChanged;
      this.indexedCount += (this.isIndexed(i) ? 1 : 0) - (wasListed ? 1 : 0);
      this.changedAt[ord] = version;
      this.marketVersion[ord]!++;
      changed++;
    }
    if (changed > 0) this.priceVersion = version;
    if (scopesChanged) this.buildScopes();
    return changed;
  }

  /**
   * Position i as stored (amounts in its market record's prices, debt at the borrow index it
   * was stated at), with the price factors and borrow index of its market now and the change
   * sequence number it is at (0: as loaded).
   */
  stateOf(i: number) {
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    return {
      ord,
      user: addressAt(c.users, i),
      collateralUsd: c.collateralUsd[i]!,
      borrowUsd: c.borrowUsd[i]!,
      supplyUsd: c.supplyUsd[i]!,
      healthFactor: c.healthFactor[i]!,
      collateralFactor: this.collateralFactor[ord]!,
      loanFactor: this.loanFactor[ord]!,
      debtIndex: this.debtIndex[ord]!,
      seq: this.seqs.get(i) ?? 0,
    };
  }

  /** Whether position i can be at risk: it has debt and a finite health factor (D5). */
  private isIndexed(i: number): boolean {
    return this.cols.borrowUsd[i]! > 0 && Number.isFinite(this.cols.healthFactor[i]!);
  }

  private userIs(i: number, key: Uint8Array): boolean {
    const u = this.cols.users;
    const at = i * ADDRESS_BYTES;
    for (let b = 0; b < ADDRESS_BYTES; b++) if (u[at + b] !== key[b]) return false;
    return true;
  }

  private membersByMarket(): Map<number, number[]> {
    if (!this.members) {
      this.members = new Map();
      const mi = this.cols.marketIndex;
      for (let i = 0; i < this.cols.count; i++) {
        const l = this.members.get(mi[i]!);
        if (l) l.push(i);
        else this.members.set(mi[i]!, [i]);
      }
    }
    return this.members;
  }

  /** Takes position i out of its market's list; true when the list became empty. */
  private unlist(i: number, ord: number): boolean {
    const l = this.byMarket[ord]!;
    const at = l.indexOf(i);
    if (at < 0) return false;
    const next = new Uint32Array(l.length - 1);
    next.set(l.subarray(0, at));
    next.set(l.subarray(at + 1), at);
    this.byMarket[ord] = next.length > 0 ? next : undefined;
    return next.length === 0;
  }

  /** Puts position i into its market's list at its place; true when the list was empty. */
  private list(i: number, ord: number): boolean {
    const l = this.byMarket[ord] ?? new Uint32Array(0);
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (riskOrderBefore(this.cols, l[mid]!, i) < 0) lo = mid + 1;
      else hi = mid;
    }
    const next = new Uint32Array(l.length + 1);
    next.set(l.subarray(0, lo));
    next[lo] = i;
    next.set(l.subarray(lo), lo + 1);
    this.byMarket[ord] = next;
    return l.length === 0;
  }

  /** A new position of market ord, user `key`, with no amounts yet: the columns grow by doubling when full. */
  private addPosition(ord: number, key: Uint8Array): number {
    const c = this.cols;
    const i = c.count;
    if (i >= c.marketIndex.length) {
      const cap = Math.max(16, c.marketIndex.length * 2);
      const grow = <T extends Float64Array | Uint32Array | Uint8Array>(a: T, n: number): T => {
        const b = new (a.constructor as new (n: number) => T)(n);
        b.set(a);
        return b;
      };
      this.cols = {
        count: i,
        marketIndex: grow(c.marketIndex, cap),
        users: grow(c.users, cap * ADDRESS_BYTES),
        collateralUsd: grow(c.collateralUsd, cap),
        borrowUsd: grow(c.borrowUsd, cap),
        supplyUsd: grow(c.supplyUsd, cap),
        healthFactor: grow(c.healthFactor, cap),
      };
    }
    const n = this.cols;
    n.count = i + 1;
    n.marketIndex[i] = ord;
    n.users.set(key, i * ADDRESS_BYTES);
    if (this.byUser) {
      const user = addressAt(n.users, i);
      const list = this.byUser.get(user);
      if (list) list.push(i);
      else this.byUser.set(user, [i]);
      this.noteOwner(i, user);
    }
    return i;
  }

  /**
   * A wallet's positions (numbers), in every market, debt-free and emptied ones too. The index
   * by wallet is built on the first call (one pass over the positions) and then kept up to date.
   */
  positionsOf(address: string): readonly number[] {
    if (!this.byUser) {
      const byUser = new Map<string, number[]>();
      this.byOwner = new Map();
      const c = this.cols;
      for (let i = 0; i < c.count; i++) {
        const user = addressAt(c.users, i);
        const list = byUser.get(user);
        if (list) list.push(i);
        else byUser.set(user, [i]);
        this.noteOwner(i, user);
      }
      this.byUser = byUser;
    }
    const a = address.toLowerCase();
    const own = this.byUser.get(a) ?? [];
    // Euler: the positions of the address's EVC sub-accounts (the addresses sharing its first
    // 19 bytes) are its own too; each still names its sub-account.
    const group = this.byOwner!.get(evcOwnerPrefix(a));
    if (!group) return own;
    const linked = group.filter((i) => !this.userIsAddress(i, a));
    return linked.length === 0 ? own : [...own, ...linked];
  }

  /** Files an Euler position under its owner group. */
  private noteOwner(i: number, user: string): void {
    if (!this.byOwner || this.catalog.recordAt(this.cols.marketIndex[i]!).protocol !== 'euler') return;
    const k = evcOwnerPrefix(user);
    const l = this.byOwner.get(k);
    if (l) l.push(i);
    else this.byOwner.set(k, [i]);
  }

  private userIsAddress(i: number, address: string): boolean {
    return addressAt(this.cols.users, i) === address;
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
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    const borrowUsd = c.borrowUsd[i]! * this.debtFactor[ord]!;
    return {
      ord,
      collateralUsd: c.collateralUsd[i]! * this.collateralFactor[ord]!,
      borrowUsd,
      supplyUsd: c.supplyUsd[i]! * this.loanFactor[ord]!,
      healthFactor: this.healthOf(i, ord),
    };
  }

  // ---- accounts (pooled protocols) ---------------------------------------------------------

  /** The accounts, built on first use and brought to the current price version. */
  private ensureAccounts(): Accounts {
    let a = this.accounts;
    if (!a) {
      a = {
        ids: new Map(),
        nextSameHash: [],
        members: [],
        flat: null,
        start: new Int32Array(1),
        protocol: [],
        chainId: [],
        of: new Int32Array(Math.max(16, this.cols.marketIndex.length)).fill(-1),
        version: -1,
        collateral: new Float64Array(0),
        weighted: new Float64Array(0),
        debt: new Float64Array(0),
        hf: new Float64Array(0),
      };
      this.accounts = a;
      for (let i = 0; i < this.cols.count; i++) if (this.pooled[this.cols.marketIndex[i]!]) this.join(a, i);
    }
    if (a.version !== this.priceVersion) this.computeAccounts(a);
    return a;
  }

  /** Puts position i (of a pooled market) into its account, creating the account if new. */
  private join(a: Accounts, i: number): void {
    if (i >= a.of.length) {
      const of = new Int32Array(Math.max(i + 1, a.of.length * 2)).fill(-1);
      of.set(a.of);
      a.of = of;
    }
    const { marketIndex: mi, users: u } = this.cols;
    const ord = mi[i]!;
    const pool = this.poolOf[ord]!;
    // FNV-1a over the pool's number and the owner's 20 bytes; equal hashes are told apart by
    // comparing with the account's first position.
    let h = Math.imul(0x811c9dc5 ^ pool, 0x01000193);
    for (let b = i * ADDRESS_BYTES, end = b + ADDRESS_BYTES; b < end; b++)
      h = Math.imul(h ^ u[b]!, 0x01000193);
    h &= 0x3fffffff; // a small integer key (fast in a Map)
    let id = a.ids.get(h) ?? -1;
    while (id >= 0) {
      const j = a.members[id]![0]!;
      if (this.poolOf[mi[j]!] === pool && this.sameUser(i, j)) break;
      id = a.nextSameHash[id]!;
    }
    if (id < 0) {
      const m = this.catalog.recordAt(ord);
      id = a.members.length;
      a.nextSameHash.push(a.ids.get(h) ?? -1);
      a.ids.set(h, id);
      a.members.push([]);
      a.protocol.push(m.protocol);
      a.chainId.push(m.chainId);
    }
    a.members[id]!.push(i);
    a.of[i] = id;
    a.version = -1;
    a.flat = null;
  }

  /**
   * Position i's collateral at its liquidation threshold, in the USD its amounts are stated in:
   * its stored health factor x its debt (the threshold its source stated the position at), or
   * without debt its collateral x its market's lltv.
   */
  private statedWeighted(i: number, ord: number): number {
    const c = this.cols;
    const hf = c.healthFactor[i]!;
    const debt = c.borrowUsd[i]!;
    if (debt > 0 && Number.isFinite(hf)) return hf * debt;
    return c.collateralUsd[i]! * this.lltvOf[ord]!;
  }

  /** Whether positions i and j have the same owner. */
  private sameUser(i: number, j: number): boolean {
    const u = this.cols.users;
    const x = i * ADDRESS_BYTES;
    const y = j * ADDRESS_BYTES;
    for (let b = 0; b < ADDRESS_BYTES; b++) if (u[x + b] !== u[y + b]) return false;
    return true;
  }

  /** Every account's totals and health factor at the current prices (one pass over flat arrays). */
  private computeAccounts(a: Accounts): void {
    const n = a.members.length;
    if (!a.flat) {
      let total = 0;
      for (const m of a.members) total += m.length;
      const flat = new Int32Array(total);
      const start = new Int32Array(n + 1);
      let k = 0;
      for (let id = 0; id < n; id++) {
        start[id] = k;
        for (const i of a.members[id]!) flat[k++] = i;
      }
      start[n] = k;
      a.flat = flat;
      a.start = start;
    }
    if (a.hf.length < n) {
      a.collateral = new Float64Array(n);
      a.weighted = new Float64Array(n);
      a.debt = new Float64Array(n);
      a.hf = new Float64Array(n);
    }
    const { marketIndex: mi, collateralUsd: cu, borrowUsd: bu, healthFactor: hf0 } = this.cols;
    const cf = this.collateralFactor;
    const df = this.debtFactor;
    const lt = this.lltvOf;
    const { flat, start } = a;
    for (let id = 0; id < n; id++) {
      let collateral = 0;
      let weighted = 0;
      let debt = 0;
      for (let k = start[id]!, end = start[id + 1]!; k < end; k++) {
        const i = flat[k]!;
        const ord = mi[i]!;
        const f = cf[ord]!;
        const c = cu[i]!;
        const b = bu[i]!;
        const h = hf0[i]!;
        collateral += c * f;
        // As statedWeighted: hf x debt, or collateral x lltv without debt.
        weighted += (b > 0 && h < Number.POSITIVE_INFINITY ? h * b : c * lt[ord]!) * f;
        debt += b * df[ord]!;
      }
      a.collateral[id] = collateral;
      a.weighted[id] = weighted;
      a.debt[id] = debt;
      a.hf[id] = debt > 0 ? weighted / debt : Number.POSITIVE_INFINITY;
    }
    a.version = this.priceVersion;
  }

  /** The health factor position i shows now: its account's (pooled), else its own; Infinity without debt. */
  private healthOf(i: number, ord: number): number {
    if (this.pooled[ord]) {
      const a = this.ensureAccounts();
      return a.hf[a.of[i]!]!;
    }
    return this.cols.borrowUsd[i]! > 0 ? this.hfOf(i, ord) : Number.POSITIVE_INFINITY;
  }

  /**
   * The account of position i at current prices: its positions, totals and health factor; null
   * for a position of an isolated market (Morpho, Fluid: the position is the account).
   */
  accountOf(i: number): AccountView | null {
    if (!this.pooled[this.cols.marketIndex[i]!]) return null;
    const a = this.ensureAccounts();
    const id = a.of[i]!;
    return {
      id,
      members: a.members[id]!,
      totals: {
        collateralUsd: a.collateral[id]!,
        weightedCollateralUsd: a.weighted[id]!,
        debtUsd: a.debt[id]!,
      },
      healthFactor: a.hf[id]!,
    };
  }

  /**
   * What the account of position i holds of a token (its chain's lower-case address) at current
   * prices: the collateral in it at its thresholds and the debt in it. For an isolated position,
   * its own collateral or debt when it is that token.
   */
  exposureOf(i: number, token: string): TokenExposure {
    const account = this.accountOf(i);
    const members = account ? account.members : [i];
    let weightedCollateralUsd = 0;
    let debtUsd = 0;
    const c = this.cols;
    for (const j of members) {
      const ord = c.marketIndex[j]!;
      const m = this.catalog.recordAt(ord);
      if (m.collateralAddress.toLowerCase() === token)
        weightedCollateralUsd += this.statedWeighted(j, ord) * this.collateralFactor[ord]!;
      if (m.loanAddress.toLowerCase() === token) debtUsd += c.borrowUsd[j]! * this.debtFactor[ord]!;
    }
    return { weightedCollateralUsd, debtUsd };
  }

  /** Accounts with debt below `threshold` now, by health factor ascending (then id). */
  private accountIdsBelow(threshold: number): Uint32Array {
    const a = this.ensureAccounts();
    const cached = this.accountsBelow;
    let ids: Uint32Array;
    if (cached && cached.version === this.priceVersion && cached.threshold >= threshold) ids = cached.ids;
    else {
      const found: number[] = [];
      for (let id = 0; id < a.members.length; id++) if (a.hf[id]! < threshold) found.push(id);
      ids = Uint32Array.from(found);
      ids.sort((x, y) => a.hf[x]! - a.hf[y]! || x - y);
      this.accountsBelow = { version: this.priceVersion, threshold, ids };
    }
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a.hf[ids[mid]!]! < threshold) lo = mid + 1;
      else hi = mid;
    }
    return ids.subarray(0, lo);
  }

  /** Positions of accounts matching the query, in risk order (account health factor, then debt desc). */
  private queryAccounts(q: RiskQuery): number[] {
    const out: number[] = [];
    const a = this.ensureAccounts();
    const c = this.cols;
    const chains = q.chainIds === undefined ? null : new Set(q.chainIds);
    for (const id of this.accountIdsBelow(q.healthFactorThreshold)) {
      if (q.protocol !== undefined && a.protocol[id] !== q.protocol) continue;
      if (chains && !chains.has(a.chainId[id]!)) continue;
      const picked = a.members[id]!.filter(
        (i) => this.isIndexed(i) && c.borrowUsd[i]! * this.debtFactor[c.marketIndex[i]!]! >= q.minBorrowUsd,
      );
      picked.sort((x, y) => this.riskBefore(x, y));
      for (const i of picked) {
        out.push(i);
        if (out.length >= q.limit) return out;
      }
    }
    return out;
  }

  /** Risk order at current prices: health factor shown ascending, debt descending, position number. */
  private riskBefore(x: number, y: number): number {
    const c = this.cols;
    const ox = c.marketIndex[x]!;
    const oy = c.marketIndex[y]!;
    return (
      this.healthOf(x, ox) - this.healthOf(y, oy) ||
      c.borrowUsd[y]! * this.debtFactor[oy]! - c.borrowUsd[x]! * this.debtFactor[ox]! ||
      x - y
    );
  }

  /** One pooled market: its positions whose account is below the threshold, in risk order. */
  private queryPooledMarket(q: RiskQuery, ord: number): number[] {
    const list = this.byMarket[ord];
    if (!list) return [];
    const m = this.catalog.recordAt(ord);
    if (q.protocol !== undefined && m.protocol !== q.protocol) return [];
    if (q.chainIds !== undefined && !q.chainIds.includes(m.chainId)) return [];
    const df = this.debtFactor[ord]!;
    const found: number[] = [];
    for (const i of list)
      if (this.healthOf(i, ord) < q.healthFactorThreshold && this.cols.borrowUsd[i]! * df >= q.minBorrowUsd)
        found.push(i);
    found.sort((x, y) => this.riskBefore(x, y));
    return found.slice(0, q.limit);
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
    if (!this.pooled[ord]) return this.below(ord, (1 + own.c) / (1 + own.l), bound);
    const list = this.byMarket[ord];
    if (!list) return NO_POSITIONS;
    const a = this.ensureAccounts();
    const c = this.cols;
    const after = new Map<number, number>();
    const moves = new Map<number, { c: number; l: number }>();
    const moveAt = (o: number) => {
      let mv = moves.get(o);
      if (!mv) {
        mv = moveOf(o);
        moves.set(o, mv);
      }
      return mv;
    };
    let positions = 0;
    let collateralUsd = 0;
    let debtUsd = 0;
    for (const i of list) {
      const id = a.of[i]!;
      let hf = after.get(id);
      if (hf === undefined) {
        let w = 0;
        let d = 0;
        for (const j of a.members[id]!) {
          const o = c.marketIndex[j]!;
          const mv = moveAt(o);
          w += this.statedWeighted(j, o) * this.collateralFactor[o]! * (1 + mv.c);
          d += c.borrowUsd[j]! * this.debtFactor[o]! * (1 + mv.l);
        }
        hf = d > 0 ? w / d : Number.POSITIVE_INFINITY;
        after.set(id, hf);
      }
      if (!(hf < bound)) continue;
      positions++;
      collateralUsd += c.collateralUsd[i]! * this.collateralFactor[ord]!;
      debtUsd += c.borrowUsd[i]! * this.debtFactor[ord]!;
    }
    return positions === 0 ? NO_POSITIONS : { positions, collateralUsd, debtUsd };
  }

  /** Positions held, debt-free ones included. */
  get size(): number {
    return this.cols.count;
  }

  /** Positions with debt, the ones any query can return. */
  get indexed(): number {
    return this.indexedCount;
  }

  /** Bytes held by the columns, the ordering lists and their prefix sums. */
  byteSize(): number {
    const c = this.cols;
    let bytes =
      c.marketIndex.byteLength +
      c.collateralUsd.byteLength +
      c.borrowUsd.byteLength +
      c.supplyUsd.byteLength +
      c.healthFactor.byteLength +
      c.users.byteLength +
      this.collateralFactor.byteLength * 6 +
      this.marketVersion.byteLength +
      this.changedAt.byteLength;
    for (const l of this.byMarket)
      if (l) bytes += l.byteLength + (this.prefixes.has(l) ? 16 * (l.length + 1) : 0);
    for (const s of this.scopes.values()) bytes += s.ords.byteLength;
    return bytes;
  }

  /**
   * Applies new token prices (relative to the snapshot prices of the catalog's markets): only
   * the factors of the markets holding each token change, O(markets touched). Unknown tokens
   * and markets whose snapshot price is not positive are left alone. Returns the markets touched.
   */
  applyPrices(changes: Iterable<PriceChange>): number {
    // Markets changed by this move are stamped with the version it creates.
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const ch of changes) {
      const t = this.catalog.holding(ch.chainId, ch.token);
      if (!t || !(ch.ratio > 0) || !Number.isFinite(ch.ratio)) continue;
      for (const ord of t.c) {
        const p0 = this.catalog.basePrices(ord).collateral;
        if (p0 !== null && p0 > 0) touched += this.setFactors(ord, ch.ratio, this.loanFactor[ord]!, version);
      }
      for (const ord of t.l) {
        const p0 = this.catalog.basePrices(ord).loan;
        if (p0 !== null && p0 > 0)
          touched += this.setFactors(ord, this.collateralFactor[ord]!, ch.ratio, version);
      }
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  /**
   * Markets restated by their source: each market's token prices over the dataset's (what its
   * positions' amounts are stated at), replacing its price factors. Returns the markets touched.
   */
  applyMarketFactors(changes: Iterable<{ ord: number; collateral: number; loan: number }>): number {
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const { ord, collateral, loan } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(collateral > 0 && loan > 0)) continue;
      if (!Number.isFinite(collateral) || !Number.isFinite(loan)) continue;
      touched += this.setFactors(ord, collateral, loan, version);
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  /**
   * Interest accrued on debt: each market's borrow index now, relative to the one its positions'
   * debt is stated at (1 as loaded). Debt and health factors of the market's positions scale by
   * it (one factor per market, like prices: no re-sort). Non-positive or non-finite indexes and
   * unknown ords are ignored. Returns the markets touched.
   */
  applyDebtIndexes(changes: Iterable<{ ord: number; index: number }>): number {
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const { ord, index } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(index > 0) || !Number.isFinite(index)) continue;
      touched += this.setFactors(ord, this.collateralFactor[ord]!, this.loanFactor[ord]!, version, index);
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  private setFactors(
    ord: number,
    collateral: number,
    loan: number,
    version: number,
    index = this.debtIndex[ord]!,
  ): number {
    if (
      this.collateralFactor[ord] === collateral &&
      this.loanFactor[ord] === loan &&
      this.debtIndex[ord] === index
    )
      return 0;
    this.changedAt[ord] = version;
    this.collateralFactor[ord] = collateral;
    this.loanFactor[ord] = loan;
    this.debtIndex[ord] = index;
    this.debtFactor[ord] = loan * index;
    this.hfFactor[ord] = collateral / (loan * index);
    this.marketVersion[ord]!++;
    return 1;
  }

  /** What market ord's positions' stated health factors are multiplied by now (prices and borrow index). */
  hfFactorOf(ord: number): number {
    return this.hfFactor[ord]!;
  }

  /**
   * The health factor position `i` has now, as `view(i)` serves it but unrounded: what risk
   * events compare with their thresholds (src/events/matcher.ts).
   */
  healthFactorOf(i: number): number {
    const account = this.accountOf(i);
    return account ? accountHealth(account.totals).healthFactor : this.hfOf(i, this.cols.marketIndex[i]!);
  }

  /** Current health factor of position `i` (market `ord`). */
  private hfOf(i: number, ord: number): number {
    return this.cols.healthFactor[i]! * this.hfFactor[ord]!;
  }

  /** Current lowest health factor of a market with debt. */
  private headOf(ord: number): number {
    return this.hfOf(this.byMarket[ord]![0]!, ord);
  }

  /**
   * A scope's markets, ordered by current lowest health factor. After a price move only the
   * markets it touched are sorted again, then merged with the others (still in order, their
   * health factors unchanged).
   */
  private scopeOrds(key: string): Uint32Array | undefined {
    const s = this.scopes.get(key);
    if (!s) return undefined;
    if (s.sortedAt !== this.priceVersion) {
      const heads = this.heads;
      const before = (a: number, b: number) => heads[a]! - heads[b]! || a - b;
      const moved: number[] = [];
      const kept: number[] = [];
      for (const ord of s.ords) {
        if (this.changedAt[ord]! > s.sortedAt || s.sortedAt < 0) {
          heads[ord] = this.headOf(ord);
          moved.push(ord);
        } else kept.push(ord);
      }
      moved.sort(before);
      let a = 0;
      let b = 0;
      for (let j = 0; j < s.ords.length; j++) {
        s.ords[j] =
          b >= moved.length || (a < kept.length && before(kept[a]!, moved[b]!) < 0)
            ? kept[a++]!
            : moved[b++]!;
      }
      s.sortedAt = this.priceVersion;
    }
    return s.ords;
  }

  private scopeKeys(q: RiskQuery): string[] {
    if (q.chainIds === undefined) return [q.protocol === undefined ? 'all' : `p:${q.protocol}`];
    return [...new Set(q.chainIds)].map((c) =>
      q.protocol === undefined ? `c:${c}` : `pc:${q.protocol}:${c}`,
    );
  }

  /**
   * Position numbers matching the query, in (healthFactor asc, borrowUsd desc) order, at current
   * prices: the isolated markets' positions and the accounts' positions, merged.
   */
  query(q: RiskQuery): number[] {
    if (q.limit <= 0) return [];
    if (q.marketOrd !== undefined)
      return this.pooled[q.marketOrd]
        ? this.queryPooledMarket(q, q.marketOrd)
        : this.queryMarket(q, q.marketOrd);
    const isolated = this.queryIsolated(q);
    const pooled = this.queryAccounts(q);
    if (pooled.length === 0) return isolated;
    if (isolated.length === 0) return pooled;
    const out: number[] = [];
    let x = 0;
    let y = 0;
    while (out.length < q.limit && (x < isolated.length || y < pooled.length)) {
      if (y >= pooled.length || (x < isolated.length && this.riskBefore(isolated[x]!, pooled[y]!) < 0))
        out.push(isolated[x++]!);
      else out.push(pooled[y++]!);
    }
    return out;
  }

  /** The isolated markets' positions matching the query, merged from their ordered lists. */
  private queryIsolated(q: RiskQuery): number[] {
    const out: number[] = [];
    const borrow0 = this.cols.borrowUsd;
    const debtFactor = this.debtFactor;
    const T = q.healthFactorThreshold;
    const scopes: Uint32Array[] = [];
    for (const k of this.scopeKeys(q)) {
      const ords = this.scopeOrds(k);
      if (ords) scopes.push(ords);
    }
    const next = new Int32Array(scopes.length);
    // The open markets: a min-heap of cursors by (hf, debt desc, number).
    const heap = new CursorHeap();
    const cursorPos = new Map<number, number>();
    for (;;) {
      // The scope whose next unopened market has the lowest health factor.
      let best = -1;
      let bestHead = Number.POSITIVE_INFINITY;
      for (let s = 0; s < scopes.length; s++) {
        if (next[s]! >= scopes[s]!.length) continue;
        const h = this.headOf(scopes[s]![next[s]!]!);
        if (h < bestHead) {
          best = s;
          bestHead = h;
        }
      }
      // Open it while it could hold the next answer (ties opened too, for the debt order).
      if (best >= 0 && bestHead < T && (heap.size === 0 || bestHead <= heap.topHf())) {
        const ord = scopes[best]![next[best]!++]!;
        const i = this.byMarket[ord]![0]!;
        cursorPos.set(ord, 0);
        heap.push(this.hfOf(i, ord), borrow0[i]! * debtFactor[ord]!, i, ord);
        continue;
      }
      if (heap.size === 0) break;
      const hf = heap.topHf();
      if (hf >= T) break;
      const { i, ord } = heap.pop();
      if (borrow0[i]! * debtFactor[ord]! >= q.minBorrowUsd) {
        out.push(i);
        if (out.length >= q.limit) break;
      }
      const list = this.byMarket[ord]!;
      const pos = cursorPos.get(ord)! + 1;
      if (pos < list.length) {
        cursorPos.set(ord, pos);
        const j = list[pos]!;
        heap.push(this.hfOf(j, ord), borrow0[j]! * debtFactor[ord]!, j, ord);
      }
    }
    return out;
  }

  /** One market: a binary search for the threshold, then its list in order. */
  private queryMarket(q: RiskQuery, ord: number): number[] {
    const out: number[] = [];
    const list = this.byMarket[ord];
    if (!list) return out;
    const m = this.catalog.recordAt(ord);
    if (q.protocol !== undefined && m.protocol !== q.protocol) return out;
    if (q.chainIds !== undefined && !q.chainIds.includes(m.chainId)) return out;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.hfOf(list[mid]!, ord) < q.healthFactorThreshold) lo = mid + 1;
      else hi = mid;
    }
    const borrow0 = this.cols.borrowUsd;
    const df = this.debtFactor[ord]!;
    for (let j = 0; j < lo && out.length < q.limit; j++) {
      if (borrow0[list[j]!]! * df >= q.minBorrowUsd) out.push(list[j]!);
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
    const list = this.byMarket[ord];
    if (!list || !(scale > 0)) return NO_POSITIONS;
    if (this.pooled[ord]) {
      if (scale !== 1) return this.belowMoved(ord, () => ({ c: scale - 1, l: 0 }), bound);
      // At current prices: each position by its account's health factor (computed once per move).
      const a = this.ensureAccounts();
      const c = this.cols;
      let positions = 0;
      let collateralUsd = 0;
      let debtUsd = 0;
      for (const i of list) {
        if (!(a.hf[a.of[i]!]! < bound)) continue;
        positions++;
        collateralUsd += c.collateralUsd[i]!;
        debtUsd += c.borrowUsd[i]!;
      }
      if (positions === 0) return NO_POSITIONS;
      return {
        positions,
        collateralUsd: collateralUsd * this.collateralFactor[ord]!,
        debtUsd: debtUsd * this.debtFactor[ord]!,
      };
    }
    // hf0 x hfFactor x scale < bound  <=>  hf0 < bound / (hfFactor x scale)
    const limit = bound / (this.hfFactor[ord]! * scale);
    const hf0 = this.cols.healthFactor;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hf0[list[mid]!]! < limit) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return NO_POSITIONS;
    const sums = this.prefixSums(list);
    return {
      positions: lo,
      collateralUsd: sums.collateral[lo]! * this.collateralFactor[ord]!,
      debtUsd: sums.debt[lo]! * this.debtFactor[ord]!,
    };
  }

  /** Cumulative collateral and debt (as stated) along a market's list; entry n sums its first n. */
  private prefixSums(list: Uint32Array): { collateral: Float64Array; debt: Float64Array } {
    let sums = this.prefixes.get(list);
    if (!sums) {
      const collateral = new Float64Array(list.length + 1);
      const debt = new Float64Array(list.length + 1);
      const c = this.cols;
      for (let j = 0; j < list.length; j++) {
        collateral[j + 1] = collateral[j]! + c.collateralUsd[list[j]!]!;
        debt[j + 1] = debt[j]! + c.borrowUsd[list[j]!]!;
      }
      sums = { collateral, debt };
      this.prefixes.set(list, sums);
    }
    return sums;
  }

  /** The debt of market ord's positions as stated (USD at its record's prices, borrow index 1), summed. */
  statedDebtOf(ord: number): number {
    const list = this.byMarket[ord];
    return list ? this.prefixSums(list).debt[list.length]! : 0;
  }

  /** Positions with debt in market ord, and their collateral and debt in USD now. */
  withDebt(ord: number): PositionSums {
    return this.below(ord, 1, Number.POSITIVE_INFINITY);
  }

  /** The debt in USD now of each position with debt in market ord (one per borrower: a market holds one position per wallet). */
  debtsOf(ord: number): Float64Array {
    const list = this.byMarket[ord];
    if (!list) return new Float64Array(0);
    const out = new Float64Array(list.length);
    const df = this.debtFactor[ord]!;
    for (let j = 0; j < list.length; j++) out[j] = this.cols.borrowUsd[list[j]!]! * df;
    return out;
  }

  /** Positions held in market ord, debt-free ones included. */
  positionsIn(ord: number): number {
    return this.membersByMarket().get(ord)?.length ?? 0;
  }

  /** The protocol of a position's market. */
  protocolOf(i: number): Protocol {
    return this.catalog.recordAt(this.cols.marketIndex[i]!).protocol;
  }

  /**
   * A position's JSON by `serialize`, cached in a bounded LRU until its market's prices move:
   * answers mostly come from the few positions nearest liquidation.
   */
  json<T extends Uint8Array>(i: number, serialize: (view: PositionAtRiskView) => T): T {
    // A pooled position moves with every market of its account: any change may move it.
    const ord = this.cols.marketIndex[i]!;
    const version = this.pooled[ord] ? this.priceVersion : this.marketVersion[ord]!;
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
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    const m: MarketView = this.catalog.recordAt(ord);
    const collateralUsd = c.collateralUsd[i]! * this.collateralFactor[ord]!;
    const borrowUsd = c.borrowUsd[i]! * this.debtFactor[ord]!;
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
        supplyAssetsUsd: usd(c.supplyUsd[i]! * this.loanFactor[ord]!),
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

function swapIn(arr: number[], a: number, b: number): void {
  const t = arr[a]!;
  arr[a] = arr[b]!;
  arr[b] = t;
}

/**
 * A binary min-heap of market cursors ordered like answers: health factor ascending, then debt
 * descending, then position number. Parallel arrays, reused across pushes.
 */
class CursorHeap {
  private hf: number[] = [];
  private debt: number[] = [];
  private pos: number[] = [];
  private ord: number[] = [];
  size = 0;

  private before(a: number, b: number): boolean {
    const ha = this.hf[a]!;
    const hb = this.hf[b]!;
    if (ha !== hb) return ha < hb;
    const da = this.debt[a]!;
    const db = this.debt[b]!;
    if (da !== db) return da > db;
    return this.pos[a]! < this.pos[b]!;
  }

  private swap(a: number, b: number): void {
    swapIn(this.hf, a, b);
    swapIn(this.debt, a, b);
    swapIn(this.pos, a, b);
    swapIn(this.ord, a, b);
  }

  topHf(): number {
    return this.hf[0]!;
  }

  push(hf: number, debt: number, i: number, ord: number): void {
    let n = this.size++;
    this.hf[n] = hf;
    this.debt[n] = debt;
    this.pos[n] = i;
    this.ord[n] = ord;
    while (n > 0) {
      const parent = (n - 1) >> 1;
      if (!this.before(n, parent)) break;
      this.swap(n, parent);
      n = parent;
    }
  }

  pop(): { i: number; ord: number } {
    const top = { i: this.pos[0]!, ord: this.ord[0]! };
    const last = --this.size;
    if (last > 0) {
      this.hf[0] = this.hf[last]!;
      this.debt[0] = this.debt[last]!;
      this.pos[0] = this.pos[last]!;
      this.ord[0] = this.ord[last]!;
      let n = 0;
      for (;;) {
        const l = 2 * n + 1;
        const r = l + 1;
        let m = n;
        if (l < last && this.before(l, m)) m = l;
        if (r < last && this.before(r, m)) m = r;
        if (m === n) break;
        this.swap(n, m);
        n = m;
      }
    }
    return top;
  }
}
