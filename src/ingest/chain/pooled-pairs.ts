/**
 * A pooled protocol's pools (an Aave or Spark pool, a comet) handed in part: the accounts read
 * this pass, the others as they were handed (docs/real-data.md "How a pass is written to the
 * store").
 *
 * An account lends against all its collateral at once; the service shows it as one position per
 * collateral and loan pair, its debt shared among its collaterals by their value at their
 * thresholds. A pair's borrow is its accounts' shares of debt. A pool handed in part sums them
 * without walking every account: each account's debt per pair is kept (in loan tokens over the
 * loan's borrow index, so that it accrues with the index), and a pass takes the accounts it
 * read out of the pairs' totals and puts them in again.
 *
 * What an adapter keeps of a pool (`HandedPools`) is made current when its pass succeeds, and
 * dropped when the process forgets what it read: a pool is then handed whole again.
 */
import type { PositionRecord } from '../../domain/types.ts';
import type { AccountReads } from './account-reads.ts';
import { ORACLE_DRIFT } from './protocol.ts';

/** An account's debt per pair: pair key → loan tokens over the loan's borrow index. */
export type PairDebts = ReadonlyMap<string, number>;

/** A pool's pairs as its accounts hold them: each pair's debt (as PairDebts) and holders. */
export type PairTotals = ReadonlyMap<string, { scaled: number; holders: number }>;

/**
 * What a pool handed in part is assembled from: the accounts read this pass, and the pairs'
 * totals and each account's debts as the last pass left them.
 */
export interface PoolPart<A> {
  accounts: Iterable<[string, A | null]>;
  pairs: PairTotals;
  owed: ReadonlyMap<string, PairDebts>;
}

/**
 * The positions of a pool's accounts: every account (`all`), or (`part`) those read this pass,
 * each also handing at zero the pairs it held and no longer does. `each` gives an account's
 * positions and debts per pair (an account holding nothing: none). Returns the positions, each
 * account's debts (`owed`) and the pairs' totals now.
 */
export function accountPairs<A>(
  all: Iterable<[string, A | null]>,
  part: PoolPart<A> | undefined,
  each: (user: string, account: A | null) => { positions: PositionRecord[]; debts: PairDebts },
): { positions: PositionRecord[]; owed: Map<string, PairDebts>; totals: PairTotals } {
  const positions: PositionRecord[] = [];
  const owed = new Map<string, PairDebts>();
  const totals = new Map(part ? [...part.pairs].map(([k, t]) => [k, { ...t }]) : []);
  for (const [user, account] of part?.accounts ?? all) {
    const mine = each(user, account);
    for (const p of mine.positions) positions.push(p);
    const was = part?.owed.get(user);
    if (was) {
      addDebts(totals, was, -1);
      for (const k of was.keys())
        if (!mine.debts.has(k))
          positions.push({
            marketKey: k,
            user,
            collateralUsd: 0,
            borrowUsd: 0,
            supplyUsd: 0,
            healthFactor: Number.POSITIVE_INFINITY,
          });
    }
    addDebts(totals, mine.debts, 1);
    owed.set(user, mine.debts);
  }
  return { positions, owed, totals };
}

/** Pairs' totals with an account's debts taken out (`sign` -1) or put in (1). */
function addDebts(
  pairs: Map<string, { scaled: number; holders: number }>,
  debts: PairDebts,
  sign: 1 | -1,
): void {
  for (const [k, scaled] of debts) {
    const t = pairs.get(k) ?? { scaled: 0, holders: 0 };
    t.scaled += sign * scaled;
    t.holders += sign;
    // (No holder left: exactly none, whatever the rounding of the sums.)
    if (t.holders <= 0) pairs.delete(k);
    else pairs.set(k, t);
  }
}

/**
 * What an adapter keeps of a pool it handed priced whole: what its health factors follow besides
 * prices and indexes (`shape`: settings, thresholds, code), and each price its protocol's oracle
 * gives over the record's USD price (`ratios`), as when it was last handed whole; its pairs'
 * totals and each account's debts as last handed.
 */
interface Handed {
  shape: string;
  ratios: ReadonlyMap<string, number>;
  pairs: PairTotals;
  owed: Map<string, PairDebts>;
}

/** A pooled adapter's pools as handed, between passes. */
export class HandedPools {
  private readonly handed = new Map<string, Handed>();
  /** What the pass under way hands, once it assembles (null: it reads no state, or not yet). */
  private next: Map<string, Handed & { whole: boolean }> | null = null;
  /** Whether a pass has read the state since the process last forgot (it then keeps every holder). */
  holdersKept = false;
  /**
   * The accounts read since a pass last handed its pools (per pool, its users): a pass that read
   * an account and then failed is not stored, and the account, read again by no later pass (its
   * logs named it no more, or it was a retry), is still handed by the next.
   */
  private readonly unsettled = new Map<string, Set<string>>();

  /** A pass begins: what a pass before it left unsettled goes. */
  begin(): void {
    this.next = null;
  }

  /** The pass read these accounts (`${pool}:${user}`). */
  read(keys: Iterable<string>): void {
    for (const key of keys) {
      const cut = key.indexOf(':');
      const pool = key.slice(0, cut);
      const users = this.unsettled.get(pool) ?? new Set<string>();
      this.unsettled.set(pool, users.add(key.slice(cut + 1)));
    }
  }

  /** The accounts of `pool` read since a pass last handed it, as last read (`accounts`). */
  readIn<A>(pool: string, accounts: AccountReads<A>): [string, A | null][] {
    return [...(this.unsettled.get(pool) ?? [])].map((user) => [user, accounts.get(pool, user) ?? null]);
  }

  /** The pass assembles its records: its pools are handed from now on, or not at all. */
  assembling(): void {
    this.next = new Map();
  }

  /**
   * What `pool` may be handed in part against, or null (handed whole): it was handed priced
   * whole, its shape is the same, and its oracle's prices moved together with its records' since:
   * each of its prices over its record's USD price (`ratios`) moved by the same factor, to within
   * ORACLE_DRIFT. (A health factor is a ratio of values at the oracle's prices: a factor common
   * to all of them, a unit of account or base currency other than USD moving, changes none.)
   */
  partOf(pool: string, shape: string, ratios: ReadonlyMap<string, number>): Handed | null {
    const was = this.handed.get(pool);
    if (!was || was.shape !== shape || was.ratios.size !== ratios.size) return null;
    let low = Number.POSITIVE_INFINITY;
    let high = 0;
    for (const [k, ratio] of ratios) {
      const before = was.ratios.get(k);
      const moved = before === undefined ? Number.NaN : ratio / before;
      if (!(moved > 0 && Number.isFinite(moved))) return null;
      low = Math.min(low, moved);
      high = Math.max(high, moved);
    }
    return ratios.size === 0 || high / low - 1 <= ORACLE_DRIFT ? was : null;
  }

  /**
   * The pass serves `pool`'s records, whole (`was` null) or in part against `was` (its markets
   * join `partial`); priced whole (`now`: the debts of the accounts it assembled and the pairs'
   * totals now), it is what the next pass hands against. A pool the pass does not hand priced
   * whole (not served, or served without every price) is handed whole next.
   */
  hand(
    pool: string,
    was: Handed | null,
    records: { markets: readonly { uniqueKey: string }[]; partial: Set<string> },
    now: {
      shape: string;
      ratios: ReadonlyMap<string, number>;
      owed: Map<string, PairDebts>;
      pairs: PairTotals;
    } | null,
  ): void {
    if (was) for (const m of records.markets) records.partial.add(m.uniqueKey);
    if (!this.next || !now) return;
    this.next.set(pool, {
      shape: now.shape,
      // (The oracle's drift is measured from the pool's last whole hand.)
      ratios: was ? was.ratios : now.ratios,
      pairs: now.pairs,
      owed: was ? now.owed : new Map([...now.owed].filter(([, d]) => d.size > 0)),
      whole: was === null,
    });
  }

  /** The pass succeeded: what it handed is current (the pools it did not hand so go). */
  settle(): void {
    const next = this.next;
    this.next = null;
    if (!next) return;
    this.unsettled.clear();
    for (const pool of new Set([...this.handed.keys(), ...next.keys()])) {
      const n = next.get(pool);
      const h = this.handed.get(pool);
      if (!n) this.handed.delete(pool);
      else if (n.whole || !h) this.handed.set(pool, n);
      else {
        h.pairs = n.pairs;
        for (const [user, debts] of n.owed)
          if (debts.size > 0) h.owed.set(user, debts);
          else h.owed.delete(user);
      }
    }
    this.holdersKept = true;
  }

  forget(): void {
    this.handed.clear();
    this.unsettled.clear();
    this.next = null;
    this.holdersKept = false;
  }
}
