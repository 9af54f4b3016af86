import { type AccountTotals, accountPoolOf, type TokenExposure } from '../../domain/accounts.ts';
import type { Protocol } from '../../domain/enums.ts';
import { ADDRESS_BYTES } from '../../domain/position-columns.ts';
import { NO_POSITIONS, type PositionSums } from '../../domain/stress.ts';
import type { Catalog } from '../catalog.ts';
import { grown } from '../typed-arrays.ts';
import type { MarketFactors } from './factors.ts';
import type { MarketLists } from './market-lists.ts';
import type { Positions } from './positions.ts';
import type { RiskQuery } from './types.ts';

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
  /**
   * Per pooled market (by ord): the accounts holding a position in it, `byMarket[marketStart[ord]]`
   * to `byMarket[marketStart[ord + 1]]`; rebuilt with `flat`.
   */
  marketStart: Int32Array;
  byMarket: Int32Array;
  /**
   * Per entry of `flat` (read in that order, not by position number): its position's market,
   * collateral, collateral at its threshold and debt as stated, and 1 when it is listed (debt and
   * a finite health factor); kept up to date by `restated`. `slot`: per position, its entry.
   */
  slotOrd: Int32Array;
  slotCollateral: Float64Array;
  slotWeighted: Float64Array;
  slotDebt: Float64Array;
  slotListed: Uint8Array;
  slot: Int32Array;
  /** The accounts the last computation took again: those changed after `since` (null: all), up to `version`. */
  lastChanged: { since: number; version: number; ids: number[] | null } | null;
  /** Per account: the call of `holding` that last took it (each account once per call). */
  taken: Uint32Array;
  takenNo: number;
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

/**
 * The accounts of the pooled protocols (Aave, Spark, Compound, Euler: src/domain/accounts.ts):
 * a wallet's positions in one pool (comet, Euler controller vault) form an account, and every
 * one of them shows the account's health factor, sum(collateral_i x threshold_i) / sum(debt_i)
 * at current prices, which no single market's factor scales. The accounts are built on first
 * use; after a price or position change the health factors of the accounts holding a changed
 * market are recomputed (O(their positions); all of them after a join), and a query takes the
 * accounts below its threshold, sorted. A
 * position's collateral counts at the threshold its source stated it at: its stored health
 * factor x its debt (the source's own account health, e-mode included) or, without debt, its
 * market's lltv.
 */
export class AccountBook {
  /** Per market (by ord): 1 when its positions belong to accounts (pooled protocols). */
  pooled: Uint8Array;
  /** Per market (by ord): the number of its pool (comet, Euler controller vault), -1 for isolated markets. */
  private poolOf: Int32Array;
  /** Per market (by ord): its lltv (what a debt-free position's collateral counts at). */
  private lltvOf: Float64Array;
  /** Per market (by ord): its place among the markets by key (an account's positions are summed in it). */
  private keyRank: Int32Array = new Int32Array(0);
  /** The pools' numbers, by `<protocol>-<chainId>-<pool>`. */
  private readonly pools = new Map<string, number>();
  /** The accounts, built on first use (see ensure). */
  private accounts: Accounts | null = null;
  /** Accounts below a threshold, sorted, for the price version they were computed at. */
  private accountsBelow: { version: number; threshold: number; ids: Uint32Array } | null = null;
  private readonly catalog: Catalog;
  private readonly positions: Positions;
  private readonly lists: MarketLists;
  private readonly factors: MarketFactors;

  constructor(catalog: Catalog, positions: Positions, lists: MarketLists, factors: MarketFactors) {
    this.catalog = catalog;
    this.positions = positions;
    this.lists = lists;
    this.factors = factors;
    this.pooled = new Uint8Array(0);
    this.poolOf = new Int32Array(0);
    this.lltvOf = new Float64Array(0);
    this.grow();
  }

  /**
   * The markets from the last known to the catalog's size: their pools and lltvs. Accounts
   * already built are flattened again on their next use (as after a join).
   */
  grow(): void {
    const from = this.pooled.length;
    const size = this.catalog.size;
    if (size === from) return;
    this.pooled = grown(this.pooled, size);
    this.poolOf = grown(this.poolOf, size, -1);
    this.lltvOf = grown(this.lltvOf, size);
    for (let ord = from; ord < size; ord++) {
      const m = this.catalog.recordAt(ord);
      this.lltvOf[ord] = m.lltv;
      const pool = accountPoolOf(m.protocol, m.uniqueKey);
      if (pool === null) continue;
      this.pooled[ord] = 1;
      const key = `${m.protocol}-${m.chainId}-${pool}`;
      let id = this.pools.get(key);
      if (id === undefined) {
        id = this.pools.size;
        this.pools.set(key, id);
      }
      this.poolOf[ord] = id;
    }
    const byKey = Array.from({ length: size }, (_, ord) => ord);
    const keys = byKey.map((ord) => this.catalog.keyAt(ord));
    byKey.sort((x, y) => (keys[x]! < keys[y]! ? -1 : keys[x]! > keys[y]! ? 1 : 0));
    this.keyRank = new Int32Array(size);
    byKey.forEach((ord, rank) => {
      this.keyRank[ord] = rank;
    });
    if (this.accounts) {
      this.accounts.flat = null;
      this.accounts.version = -1;
    }
  }

  /** A position just added: it joins its account when the accounts are built and its market is pooled. */
  added(i: number): void {
    if (this.accounts && this.pooled[this.positions.cols.marketIndex[i]!]) this.join(this.accounts, i);
  }

  /** The accounts, built on first use and brought to the current price version. */
  private ensure(): Accounts {
    let a = this.accounts;
    if (!a) {
      a = {
        ids: new Map(),
        nextSameHash: [],
        members: [],
        flat: null,
        start: new Int32Array(1),
        marketStart: new Int32Array(this.catalog.size + 1),
        slotOrd: new Int32Array(0),
        slotCollateral: new Float64Array(0),
        slotWeighted: new Float64Array(0),
        slotDebt: new Float64Array(0),
        slotListed: new Uint8Array(0),
        slot: new Int32Array(0),
        byMarket: new Int32Array(0),
        lastChanged: null,
        taken: new Uint32Array(0),
        takenNo: 0,
        protocol: [],
        chainId: [],
        of: new Int32Array(Math.max(16, this.positions.cols.marketIndex.length)).fill(-1),
        version: -1,
        collateral: new Float64Array(0),
        weighted: new Float64Array(0),
        debt: new Float64Array(0),
        hf: new Float64Array(0),
      };
      this.accounts = a;
      const c = this.positions.cols;
      for (let i = 0; i < c.count; i++) if (this.pooled[c.marketIndex[i]!]) this.join(a, i);
    }
    if (a.version !== this.factors.version) this.compute(a);
    return a;
  }

  /** Puts position i (of a pooled market) into its account, creating the account if new. */
  private join(a: Accounts, i: number): void {
    if (i >= a.of.length) {
      const of = new Int32Array(Math.max(i + 1, a.of.length * 2)).fill(-1);
      of.set(a.of);
      a.of = of;
    }
    const { marketIndex: mi, users: u } = this.positions.cols;
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
      if (this.poolOf[mi[j]!] === pool && this.positions.sameUser(i, j)) break;
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
    // An account's positions in the order of their markets' keys, whatever order they came in:
    // its sums (totals, exposures, health) are then the same to the last digit on every server
    // (one that followed the store's changes and one that loaded it). (Markets added later keep
    // the order of those before.)
    const members = a.members[id]!;
    const rank = this.keyRank[ord]!;
    let at = members.length;
    while (at > 0 && this.keyRank[mi[members[at - 1]!]!]! > rank) at--;
    members.splice(at, 0, i);
    a.of[i] = id;
    a.version = -1;
    a.flat = null;
  }

  /**

   * its stored health factor x its debt (the threshold its source stated the position at), or
   * without debt its collateral x its market's lltv.
   */
  private statedWeighted(i: number, ord: number): number {
    const c = this.positions.cols;
    const hf = c.healthFactor[i]!;
    const debt = c.borrowUsd[i]!;
    if (debt > 0 && Number.isFinite(hf)) return hf * debt;
    return c.collateralUsd[i]! * this.lltvOf[ord]!;
  }

  /**
   * The accounts' totals and health factors at the current prices. After a price or position
   * change only the accounts holding a market changed since they were last computed are
   * computed again (a price move of a few tokens touches the accounts holding them, not all);
   * after a join, or when most accounts hold a changed market, every one (one pass over flat
   * arrays). An account's figures are the same whichever way they were computed.
   */
  private compute(a: Accounts): void {
    const n = a.members.length;
    let since = a.version;
    if (!a.flat) {
      this.flatten(a);
      since = -1;
    }
    if (a.hf.length < n) {
      const grow = (x: Float64Array) => {
        const y = new Float64Array(Math.max(n, x.length * 2));
        y.set(x);
        return y;
      };
      a.collateral = grow(a.collateral);
      a.weighted = grow(a.weighted);
      a.debt = grow(a.debt);
      a.hf = grow(a.hf);
      since = -1;
    }
    const ids = since < 0 ? null : this.holding(a, this.changedPooledSince(since));
    if (ids === null || ids.length > n / 2) for (let id = 0; id < n; id++) this.computeOne(a, id);
    else for (const id of ids) this.computeOne(a, id);
    a.version = this.factors.version;
    a.lastChanged = { since, version: a.version, ids };
  }

  /** The flat arrays of the accounts' positions and, per pooled market, of the accounts holding it. */
  private flatten(a: Accounts): void {
    const n = a.members.length;
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
    // Per market, its accounts (a wallet holds one position per market, so each account once).
    const mi = this.positions.cols.marketIndex;
    const size = this.catalog.size;
    const marketStart = new Int32Array(size + 1);
    for (let j = 0; j < total; j++) marketStart[mi[flat[j]!]! + 1]!++;
    for (let ord = 0; ord < size; ord++) marketStart[ord + 1]! += marketStart[ord]!;
    const fill = marketStart.slice(0, size);
    const byMarket = new Int32Array(total);
    for (let id = 0; id < n; id++)
      for (let j = start[id]!, end = start[id + 1]!; j < end; j++) byMarket[fill[mi[flat[j]!]!]!++] = id;
    a.marketStart = marketStart;
    a.byMarket = byMarket;
    a.slotOrd = new Int32Array(total);
    a.slotCollateral = new Float64Array(total);
    a.slotWeighted = new Float64Array(total);
    a.slotDebt = new Float64Array(total);
    a.slotListed = new Uint8Array(total);
    a.slot = new Int32Array(this.positions.cols.count).fill(-1);
    for (let j = 0; j < total; j++) {
      a.slot[flat[j]!] = j;
      this.fillSlot(a, j);
    }
    if (a.taken.length < n) a.taken = new Uint32Array(Math.max(n, a.taken.length * 2));
  }

  /** Pooled markets (ords, ascending) whose factors or positions (`changedAt`) changed after `version`. */
  private changedPooledSince(version: number, changedAt = this.factors.changedAt): number[] {
    const out: number[] = [];
    for (let ord = 0; ord < this.pooled.length; ord++)
      if (this.pooled[ord] && changedAt[ord]! > version) out.push(ord);
    return out;
  }

  /**
   * The accounts holding a position in any of the markets `ords`, each once; null for every
   * account (when those markets' positions are as many as the accounts).
   */
  private holding(a: Accounts, ords: readonly number[]): number[] | null {
    const { taken, marketStart, byMarket } = a;
    let entries = 0;
    for (const ord of ords) if (this.pooled[ord]) entries += marketStart[ord + 1]! - marketStart[ord]!;
    if (entries >= a.members.length) return null;
    const out: number[] = [];
    const no = ++a.takenNo;
    for (const ord of ords) {
      if (!this.pooled[ord]) continue;
      for (let j = marketStart[ord]!, end = marketStart[ord + 1]!; j < end; j++) {
        const id = byMarket[j]!;
        if (taken[id] === no) continue;
        taken[id] = no;
        out.push(id);
      }
    }
    return out;
  }

  /** Entry j of `flat` as its position is stated now. */
  private fillSlot(a: Accounts, j: number): void {
    const { marketIndex: mi, collateralUsd: cu, borrowUsd: bu, healthFactor: hf0 } = this.positions.cols;
    const i = a.flat![j]!;
    const ord = mi[i]!;
    const c = cu[i]!;
    const b = bu[i]!;
    const h = hf0[i]!;
    a.slotOrd[j] = ord;
    a.slotCollateral[j] = c;
    // As statedWeighted: hf x debt, or collateral x lltv without debt.
    a.slotWeighted[j] = b > 0 && h < Number.POSITIVE_INFINITY ? h * b : c * this.lltvOf[ord]!;
    a.slotDebt[j] = b;
    a.slotListed[j] = b > 0 && Number.isFinite(h) ? 1 : 0;
  }

  /** Position i's amounts were restated (a change of positions): its entry follows. */
  restated(i: number): void {
    const a = this.accounts;
    if (!a?.flat || i >= a.slot.length) return;
    const j = a.slot[i]!;
    if (j >= 0) this.fillSlot(a, j);
  }

  /** One account's totals and health factor at the current prices (its entries, in order). */
  private computeOne(a: Accounts, id: number): void {
    const cf = this.factors.collateralFactor;
    const df = this.factors.debtFactor;
    const { slotOrd, slotCollateral, slotWeighted, slotDebt } = a;
    let collateral = 0;
    let weighted = 0;
    let debt = 0;
    for (let k = a.start[id]!, end = a.start[id + 1]!; k < end; k++) {
      const ord = slotOrd[k]!;
      const f = cf[ord]!;
      collateral += slotCollateral[k]! * f;
      weighted += slotWeighted[k]! * f;
      debt += slotDebt[k]! * df[ord]!;
    }
    a.collateral[id] = collateral;
    a.weighted[id] = weighted;
    a.debt[id] = debt;
    a.hf[id] = debt > 0 ? weighted / debt : Number.POSITIVE_INFINITY;
  }

  /**
   * For the risk events' matcher (src/events/matcher.ts): the accounts holding a position in a
   * pooled market changed after `version` (each once; null: every account, 0 to start.length - 2;
   * `version` -1: every account), the ones the accounts' last computation took when it was from
   * that version to now; their positions (`flat[start[id]]` to
   * `flat[start[id + 1]]`) and health factors at current prices. Valid until the next change.
   */
  changedSince(version: number): {
    ids: readonly number[] | null;
    flat: Int32Array;
    start: Int32Array;
    hf: Float64Array;
    /** Per entry of flat: its position's market, and 1 when the position is listed. */
    ord: Int32Array;
    listed: Uint8Array;
  } {
    const a = this.ensure();
    const last = a.lastChanged;
    let ids: number[] | null;
    if (version < 0) ids = null;
    else if (last && last.since === version && last.version === this.factors.version) ids = last.ids;
    else ids = this.holding(a, this.changedPooledSince(version));
    return {
      ids,
      flat: a.flat!,
      start: a.start,
      hf: a.hf,
      ord: a.slotOrd,
      listed: a.slotListed,
    };
  }

  /**
   * The accounts holding a position in a pooled market whose positions changed (added,
   * restated, emptied) after `version`, each once; null for every account. For the matcher: an
   * account whose members changed is read whatever its health factor.
   */
  positionsChangedSince(version: number): readonly number[] | null {
    return this.holding(this.ensure(), this.changedPooledSince(version, this.factors.positionsChangedAt));
  }

  /** The health factor position i shows now: its account's (pooled), else its own; Infinity without debt. */
  healthOf(i: number, ord: number): number {
    if (this.pooled[ord]) {
      const a = this.ensure();
      return a.hf[a.of[i]!]!;
    }
    const c = this.positions.cols;
    return c.borrowUsd[i]! > 0 ? c.healthFactor[i]! * this.factors.hfFactor[ord]! : Number.POSITIVE_INFINITY;
  }

  /**
   * The account of position i at current prices: its positions, totals and health factor; null
   * for a position of an isolated market (Morpho, Fluid: the position is the account).
   */
  accountOf(i: number): AccountView | null {
    if (!this.pooled[this.positions.cols.marketIndex[i]!]) return null;
    const a = this.ensure();
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

   * its own collateral or debt when it is that token.
   */
  exposureOf(i: number, token: string): TokenExposure {
    const account = this.accountOf(i);
    const members = account ? account.members : [i];
    let weightedCollateralUsd = 0;
    let debtUsd = 0;
    const c = this.positions.cols;
    for (const j of members) {
      const ord = c.marketIndex[j]!;
      const m = this.catalog.recordAt(ord);
      if (m.collateralAddress.toLowerCase() === token)
        weightedCollateralUsd += this.statedWeighted(j, ord) * this.factors.collateralFactor[ord]!;
      if (m.loanAddress.toLowerCase() === token) debtUsd += c.borrowUsd[j]! * this.factors.debtFactor[ord]!;
    }
    return { weightedCollateralUsd, debtUsd };
  }

  /** Accounts with debt below `threshold` now, by health factor ascending (then id). */
  private idsBelow(threshold: number): Uint32Array {
    const a = this.ensure();
    const cached = this.accountsBelow;
    let ids: Uint32Array;
    if (cached && cached.version === this.factors.version && cached.threshold >= threshold) ids = cached.ids;
    else {
      const found: number[] = [];
      for (let id = 0; id < a.members.length; id++) if (a.hf[id]! < threshold) found.push(id);
      ids = Uint32Array.from(found);
      ids.sort((x, y) => a.hf[x]! - a.hf[y]! || x - y);
      this.accountsBelow = { version: this.factors.version, threshold, ids };
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
  query(q: RiskQuery): number[] {
    const out: number[] = [];
    const a = this.ensure();
    const c = this.positions.cols;
    const chains = q.chainIds === undefined ? null : new Set(q.chainIds);
    for (const id of this.idsBelow(q.healthFactorThreshold)) {
      if (q.protocol !== undefined && a.protocol[id] !== q.protocol) continue;
      if (chains && !chains.has(a.chainId[id]!)) continue;
      const picked = a.members[id]!.filter(
        (i) =>
          this.positions.isIndexed(i) &&
          c.borrowUsd[i]! * this.factors.debtFactor[c.marketIndex[i]!]! >= q.minBorrowUsd,
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
  riskBefore(x: number, y: number): number {
    const c = this.positions.cols;
    const ox = c.marketIndex[x]!;
    const oy = c.marketIndex[y]!;
    return (
      this.healthOf(x, ox) - this.healthOf(y, oy) ||
      c.borrowUsd[y]! * this.factors.debtFactor[oy]! - c.borrowUsd[x]! * this.factors.debtFactor[ox]! ||
      x - y
    );
  }

  /** One pooled market: its positions whose account is below the threshold, in risk order. */
  queryMarket(q: RiskQuery, ord: number): number[] {
    const list = this.lists.byMarket[ord];
    if (!list) return [];
    const m = this.catalog.recordAt(ord);
    if (q.protocol !== undefined && m.protocol !== q.protocol) return [];
    if (q.chainIds !== undefined && !q.chainIds.includes(m.chainId)) return [];
    const borrow0 = this.positions.cols.borrowUsd;
    const df = this.factors.debtFactor[ord]!;
    const found: number[] = [];
    for (const i of list)
      if (this.healthOf(i, ord) < q.healthFactorThreshold && borrow0[i]! * df >= q.minBorrowUsd)
        found.push(i);
    found.sort((x, y) => this.riskBefore(x, y));
    return found.slice(0, q.limit);
  }

  /**
   * Positions with debt in pooled market ord that are liquidatable below `bound` after token
   * prices move, with their collateral and debt in USD now (before the moves): `moveOf(ord)`
   * gives the relative moves of a market's collateral and loan tokens. Each position by its
   * account's health factor after the moves of every token it holds (its other positions'
   * tokens included), O(positions x account size).
   */
  belowMoved(ord: number, moveOf: (ord: number) => { c: number; l: number }, bound: number): PositionSums {
    const list = this.lists.byMarket[ord];
    if (!list) return NO_POSITIONS;
    const a = this.ensure();
    const c = this.positions.cols;
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
          w += this.statedWeighted(j, o) * this.factors.collateralFactor[o]! * (1 + mv.c);
          d += c.borrowUsd[j]! * this.factors.debtFactor[o]! * (1 + mv.l);
        }
        hf = d > 0 ? w / d : Number.POSITIVE_INFINITY;
        after.set(id, hf);
      }
      if (!(hf < bound)) continue;
      positions++;
      collateralUsd += c.collateralUsd[i]! * this.factors.collateralFactor[ord]!;
      debtUsd += c.borrowUsd[i]! * this.factors.debtFactor[ord]!;
    }
    return positions === 0 ? NO_POSITIONS : { positions, collateralUsd, debtUsd };
  }

  /**
   * Positions with debt in pooled market ord whose account's health factor is below `bound` at
   * current prices, with their collateral and debt in USD now.
   */
  below(ord: number, bound: number): PositionSums {
    const list = this.lists.byMarket[ord];
    if (!list) return NO_POSITIONS;
    // At current prices: each position by its account's health factor (computed once per move).
    const a = this.ensure();
    const c = this.positions.cols;
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
      collateralUsd: collateralUsd * this.factors.collateralFactor[ord]!,
      debtUsd: debtUsd * this.factors.debtFactor[ord]!,
    };
  }
}
