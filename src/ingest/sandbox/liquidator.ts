/**
 * Liquidations in the running sandbox: at each simulation step, every served position whose
 * health factor went below 1 since the last complete step is liquidated, at the first whole hour
 * it was below 1 (at that hour's prices), or now if it went below 1 only now: an isolated position
 * (Morpho, Fluid) by itself, a position of an account (Aave, Spark, Compound, Euler) with its
 * whole account, by the protocol's rules (src/domain/accounts.ts, src/domain/liquidation.ts:
 * close factor, bonus per reserve, Aave's full liquidation of small positions, Compound's absorb,
 * Euler's discount; bad debt when no collateral is left to cover the debt). The liquidation is appended to the history and the
 * position, as it is left, is written to the store as a change of this source; every process
 * serving the dataset (this one included) applies it from the store's change feed.
 *
 * Several processes may run this on one store: a change is written only if the position is
 * still at the version it was computed from (the store's basedOn check), and the event's
 * natural key (its synthetic transaction hash) is a function of the position and that version,
 * so a liquidation is recorded once whichever process computed it.
 */

import { closeFactorOf, eulerLiquidationBonus } from '../../domain/accounts.ts';
import type { Protocol } from '../../domain/enums.ts';
import {
  absorbAccount,
  FULL_CLOSE_HF,
  type LiquidationOutcome,
  liquidateAccount,
} from '../../domain/liquidation.ts';
import { must } from '../../domain/must.ts';
import { significant, usd } from '../../domain/precision.ts';
import type { PositionChange } from '../../domain/records/dataset.ts';
import type { PricedLiquidationEvent } from '../../domain/records/history.ts';
import type { HistoryStore } from '../../store/ports/history.ts';
import type { MarketDataStore } from '../../store/ports/market-data.ts';
import type { SourceStore } from '../../store/ports/sources.ts';
import { ACTIVITY_SOURCE_ID, type PositionState } from './activity.ts';
import { CrossingWindow, hoursBetween } from './crossings.ts';
import type { MarketTerms } from './economics.ts';
import { type SandboxSimulation, sandboxSimulation } from './history.ts';
import { generateSandbox, SANDBOX_AS_OF, type SandboxProfile } from './index.ts';
import { blockAt, hexOf, liquidatorAddress } from './simulation/market-history.ts';
import { HOUR_MS, hashAt, MINUTE_MS, streamId, unitAt } from './simulation/noise.ts';

/** The source id of the changes it writes (in /health with the others). */
export const LIQUIDATIONS_SOURCE_ID = 'sandbox-liquidations';
/** The longest a catch-up's factors hold the event loop at a time (ms). */
const WARM_SLICE_MS = 5;
/** Positions liquidated at most per step (the most at risk first); the rest wait for the next. */
export const MAX_LIQUIDATIONS_PER_STEP = 500;

export interface LiquidationStep {
  /** The liquidations recorded (appended to the history). */
  events: PricedLiquidationEvent[];
  /** Position changes the store took (others were already changed by another process). */
  applied: number;
  /** The window the step liquidated: from the last complete step (or the snapshot) to its instant. */
  fromMs: number;
  /** Whether it took every position due (else the next step goes on from the same fromMs). */
  complete: boolean;
  /** Positions (or accounts) it took: 0 when none could be taken yet (see Taken). */
  took: number;
}

type Store = Pick<MarketDataStore, 'applyPositionChanges'> &
  Pick<HistoryStore, 'appendLiquidations'> &
  Partial<Pick<SourceStore, 'listSources'>>;

/** What a plan computed: the events, the positions left, and whether every position due was taken. */
export interface LiquidationPlan {
  events: PricedLiquidationEvent[];
  changes: PositionChange[];
  /** False when MAX per step cut the list: the next step goes on from the same instant. */
  complete: boolean;
}

/** A market as the liquidations name it. */
interface MarketOf {
  uniqueKey: string;
  protocol: Protocol;
  chainId: number;
  /** What the collateral of a position without debt counts at (the risk index's weighting). */
  lltv: number;
}

/**
 * What the liquidations read of the read model (the service hands it its own): the positions by
 * health factor, their accounts, their markets and the prices those are stated at.
 */
export interface LiquidatorModel {
  risk: {
    stateOf(i: number): PositionState;
    /** Positions below the health factor threshold, lowest first (in one market with `marketOrd`). */
    query(q: {
      healthFactorThreshold: number;
      minBorrowUsd: number;
      limit: number;
      marketOrd?: number;
    }): number[];
    positionsIn(ord: number): number;
    /** What a market's positions' stated health factors are multiplied by now. */
    hfFactorOf(ord: number): number;
    /** Position i's account (null: a position of an isolated market, its own account). */
    accountOf(i: number): { id: number; members: readonly number[] } | null;
  };
  catalog: {
    readonly size: number;
    recordAt(ord: number): MarketOf;
    /** A market's uniqueKey (its view is not derived for it). */
    keyAt(ord: number): string;
    /** The dataset's prices of a market's tokens (its positions' amounts are stated at them). */
    basePrices(ord: number): { collateral: number | null; loan: number | null };
  };
  dataset: { version: number };
  /** Moves on whenever prices or positions change. */
  revision: number;
}

/** The positions due over a catch-up's window, lowest health factor now first; its steps take them in order. */
interface DueList {
  window: CrossingWindow;
  version: number;
  list: number[];
  /** What the window's steps took. */
  taken: Taken;
}

/** A position a window's step took: the step's instant, its version then, and whether the step changed it. */
interface TakenPosition {
  at: number;
  seq: number;
  changed: boolean;
}

/**
 * Positions (an account's members with it) and accounts a step took, with the instant of the
 * step that took them, over those its window's earlier steps took (`before`); commit() adds them
 * to those. A position of the window's due list is taken once in the window; one below 1 now,
 * once at each instant, and again at a later one only once the model shows what the earlier
 * step wrote of it (its version moved), and then only at that instant (its past hours were
 * gone through when it was first taken).
 */
class Taken {
  readonly #positions = new Map<number, TakenPosition>();
  readonly #accounts = new Map<number, number>();
  readonly #before: Taken | null;
  readonly #atMs: number;

  constructor(before: Taken | null, atMs: number) {
    this.#before = before;
    this.#atMs = atMs;
  }

  /** Position i as the window's steps took it; undefined when they did not. */
  positionAt(i: number): TakenPosition | undefined {
    return this.#positions.get(i) ?? this.#before?.positionAt(i);
  }

  /** The instant account `id` was taken at in the window; undefined when it was not. */
  accountAt(id: number): number | undefined {
    return this.#accounts.get(id) ?? this.#before?.accountAt(id);
  }

  /**
   * Takes account `id` with its members (null: isolated position `members[0]` alone), `seqOf`
   * giving each member's version now: 'first' when the window had not taken it, 'again' when an
   * earlier instant's step did (one below 1 now, `belowNow`, whose changes the model shows), null
   * when it may not be taken.
   */
  take(
    id: number | null,
    members: readonly number[],
    belowNow: boolean,
    seqOf: (j: number) => number,
  ): 'first' | 'again' | null {
    const at = id === null ? this.positionAt(members[0] ?? -1)?.at : this.accountAt(id);
    if (at !== undefined) {
      if (!belowNow || at === this.#atMs) return null;
      for (const j of members) {
        const p = this.positionAt(j);
        if (p?.changed && p.seq === seqOf(j)) return null;
      }
    }
    if (id !== null) this.#accounts.set(id, this.#atMs);
    for (const j of members) this.#positions.set(j, { at: this.#atMs, seq: seqOf(j), changed: false });
    return at === undefined ? 'first' : 'again';
  }

  /**
   * Whether position i, below 1 now at version `seq`, may not be taken at this step's instant:
   * taken at it already, or taken earlier with a change the model does not show yet.
   */
  heldBack(i: number, seq: number): boolean {
    const p = this.positionAt(i);
    return p !== undefined && (p.at === this.#atMs || (p.changed && p.seq === seq));
  }

  /** The step writes a change of position j (taken by it). */
  changed(j: number): void {
    const p = this.#positions.get(j);
    if (p) p.changed = true;
  }

  commit(): void {
    const before = this.#before;
    if (!before) return;
    for (const [i, p] of this.#positions) before.#positions.set(i, p);
    for (const [id, at] of this.#accounts) before.#accounts.set(id, at);
  }
}

/** A leg's state through the liquidations of one step (see plan). */
interface LegState {
  collateralUsd: number;
  borrowUsd: number;
  hfStated: number;
  supplyUsd: number;
  /** 0 while untouched; then one more than the liquidation events written for it. */
  k: number;
}

/** Price ratios to a position's record (collateral, loan) and the borrow index, at one instant. */
interface Ratios {
  c: number;
  l: number;
  index: number;
}

/** A position in tokens at a set of prices (now, or an hour of the catch-up window). */
interface Leg {
  p: PositionState;
  m: MarketOf;
  terms: MarketTerms;
  base: { collateral: number; loan: number };
  collateral: number;
  debt: number;
  cp: number;
  lp: number;
  /** The borrow index the debt is at. */
  index: number;
}

export class SandboxLiquidator {
  readonly #store: Store;
  readonly #seed: number;
  readonly #profile: SandboxProfile;
  readonly #terms: ReadonlyMap<string, MarketTerms>;
  readonly #index: ReadonlyMap<string, number>;
  readonly #maxPerStep: number;
  #sim: SandboxSimulation | null = null;
  /** The window of the last plan (its factors are kept while the next steps work through it). */
  #window: CrossingWindow | null = null;
  /** The due list of the last window with whole hours (see #dueOf). */
  #due: DueList | null = null;
  /**
   * The instant every liquidation before which is done, and for which dataset version: the
   * last complete step, else the activity's checkpoint (written after every step), else the
   * snapshot instant.
   */
  #from: { version: number; ms: number } | null = null;

  constructor(store: Store, profile: SandboxProfile, seed: number, maxPerStep = MAX_LIQUIDATIONS_PER_STEP) {
    this.#store = store;
    this.#seed = seed;
    this.#profile = profile;
    const ds = generateSandbox({ profile, seed });
    this.#terms = new Map(ds.markets.map((m, i) => [m.uniqueKey, must(ds.terms[i], 'market terms')]));
    this.#index = new Map(ds.markets.map((m, i) => [m.uniqueKey, i]));
    this.#maxPerStep = maxPerStep;
  }

  /** The instant the next step catches up from (see #from). */
  async #fromFor(version: number): Promise<number> {
    if (this.#from?.version === version) return this.#from.ms;
    let ms = SANDBOX_AS_OF * 1000;
    const cursor = (await this.#store.listSources?.())?.find((x) => x.id === ACTIVITY_SOURCE_ID)?.cursor;
    const [v, minute] = (cursor ?? '').split(':').map(Number);
    if (v === version && minute !== undefined && Number.isSafeInteger(minute)) {
      ms = Math.max(ms, minute * MINUTE_MS);
    }
    this.#from = { version, ms };
    return ms;
  }

  /** Computes the factors plan() reads over (fromMs, atMs), a slice at a time. */
  async #warm(model: LiquidatorModel, fromMs: number, atMs: number, signal?: AbortSignal): Promise<void> {
    const window = this.#windowOf(fromMs, atMs);
    if (window.hours.length === 0) return;
    let since = performance.now();
    for (let ord = 0; ord < model.catalog.size && !signal?.aborted; ord++) {
      const i = this.#index.get(model.catalog.keyAt(ord));
      if (i === undefined || model.risk.positionsIn(ord) === 0) continue;
      window.factors(i);
      if (performance.now() - since > WARM_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        since = performance.now();
      }
    }
  }

  /**
   * The crossing window (fromMs, atMs), reused while its whole hours are the same: its factors
   * depend on those alone, so the steps of a catch-up cut by the cap per step (the same fromMs,
   * each at a later instant) compute them once per hour, not once per step.
   */
  #windowOf(fromMs: number, atMs: number): CrossingWindow {
    const w = this.#window;
    if (w && w.fromMs === fromMs && (w.toMs === atMs || w.hours.length === hoursBetween(fromMs, atMs).length))
      return w;
    this.#sim ??= sandboxSimulation(this.#profile, this.#seed);
    this.#window = new CrossingWindow(this.#sim, fromMs, atMs);
    return this.#window;
  }

  /**
   * The liquidations due between `fromMs` and `atMs` on the positions of `model` (pure: nothing
   * written): each isolated position, and each account once with all its positions together, by
   * its protocol's rules (see liquidateAccount, absorbAccount, closeFactorOf). One whose health
   * factor (its account's) went below 1 at a whole hour inside the window is liquidated at the
   * first such hour, at that hour's prices and borrow index; one below 1 at `atMs` only, at
   * `atMs`. Default `fromMs`: `atMs` (only what is below 1 now).
   */
  plan(model: LiquidatorModel, atMs: number, fromMs = atMs): LiquidationPlan {
    const window = fromMs < atMs ? this.#windowOf(fromMs, atMs) : null;
    const { candidates, below, complete, taken } = this.#candidates(model, atMs, window);
    const events: PricedLiquidationEvent[] = [];
    const changes: PositionChange[] = [];
    candidates.forEach((i, k) => {
      this.#liquidateCandidate(model, i, atMs, fromMs, window, taken, k < below, events, changes);
    });
    return { events, changes, complete };
  }

  /**
   * The positions a step takes, at most the cap: those below 1 now (the first `below` of the
   * list); over a window (a catch-up, or a step after a whole hour), then the window's due list.
   * A window's steps skip what its earlier steps took (see Taken): a position of the due list is
   * taken once, liquidated or not, so a catch-up ends once its list is taken.
   */
  #candidates(
    model: LiquidatorModel,
    atMs: number,
    window: CrossingWindow | null,
  ): { candidates: number[]; below: number; complete: boolean; taken: Taken } {
    const { risk } = model;
    const max = this.#maxPerStep;
    if (!window) {
      const candidates = risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: max + 1 });
      const complete = candidates.length <= max;
      if (!complete) candidates.length = max;
      return { candidates, below: candidates.length, complete, taken: new Taken(null, atMs) };
    }
    const due = this.#dueOf(model, window);
    const taken = new Taken(due.taken, atMs);
    const picked: number[] = [];
    const seen = new Set<number>();
    let below = 0;
    const result = (complete: boolean) => ({ candidates: picked, below, complete, taken });
    // Below 1 now first (lowest first), so the served list clears fastest.
    for (const i of risk.query({
      healthFactorThreshold: 1,
      minBorrowUsd: 0,
      limit: Number.MAX_SAFE_INTEGER,
    })) {
      if (taken.heldBack(i, risk.stateOf(i).seq) || seen.has(i)) continue;
      if (picked.length === max) return result(false);
      picked.push(i);
      seen.add(i);
      below++;
    }
    for (const i of due.list) {
      if (taken.positionAt(i) !== undefined || seen.has(i)) continue;
      if (picked.length === max) return result(false);
      picked.push(i);
      seen.add(i);
    }
    return result(true);
  }

  /**
   * The positions whose health factor the window's hours may have put below 1, lowest health
   * factor now first: in each market, those below 1 now and those whose market's lowest factor
   * in the window would have put them below 1. Computed once per window (and dataset version);
   * the window's steps take it in order.
   */
  #dueOf(model: LiquidatorModel, window: CrossingWindow): DueList {
    const version = model.dataset.version;
    if (this.#due?.window === window && this.#due.version === version) return this.#due;
    const { risk, catalog } = model;
    const due: number[] = [];
    // (A window with no whole hour lists nothing: only what is below 1 now is due.)
    for (let ord = 0; ord < catalog.size && window.hours.length > 0; ord++) {
      const i = this.#index.get(catalog.keyAt(ord));
      if (i === undefined || risk.positionsIn(ord) === 0) continue;
      const f = window.factors(i);
      const now = risk.hfFactorOf(ord);
      // stated hf x min f < 1  <=>  hf now < f now / min f
      const threshold = Math.max(1, f.min > 0 ? now / f.min : 1) * (1 + 1e-12);
      for (const j of risk.query({
        healthFactorThreshold: threshold,
        minBorrowUsd: 0,
        limit: Number.MAX_SAFE_INTEGER,
        marketOrd: ord,
      }))
        due.push(j);
    }
    const hfNow = (i: number) => {
      const p = risk.stateOf(i);
      return (p.healthFactor * p.collateralFactor) / (p.loanFactor * p.debtIndex);
    };
    const keyed = due.map((i) => ({ i, hf: hfNow(i) }));
    keyed.sort((a, b) => a.hf - b.hf || a.i - b.i);
    this.#due = { window, version, list: keyed.map((x) => x.i), taken: new Taken(null, window.toMs) };
    return this.#due;
  }

  /**
   * Liquidates candidate i (with its account, unless the account was taken already) over the
   * window's hours and now; its events and the changes of its positions are added to the lists.
   * False when it could not be taken (see Taken.take).
   */
  #liquidateCandidate(
    model: LiquidatorModel,
    i: number,
    atMs: number,
    fromMs: number,
    window: CrossingWindow | null,
    taken: Taken,
    belowNow: boolean,
    events: PricedLiquidationEvent[],
    changes: PositionChange[],
  ): boolean {
    const { risk, catalog } = model;
    const hours = window?.hours.length ?? 0;
    const account = risk.accountOf(i);
    const taking = taken.take(
      account?.id ?? null,
      account ? account.members : [i],
      belowNow,
      (j) => risk.stateOf(j).seq,
    );
    if (taking === null) return false;
    // Each leg with its state as it evolves through the liquidations of this step, stated like
    // the model's (collateral at the record's price, debt at borrow index 1), and its market's
    // factors over the window (null without a window of whole hours, or without its market).
    const legs = (account ? account.members : [i]).flatMap((j) => {
      const leg = this.#legOf(model, j);
      if (!leg) return [];
      const mi = window && hours > 0 ? this.#index.get(leg.m.uniqueKey) : undefined;
      const s: LegState = {
        collateralUsd: leg.p.collateralUsd,
        borrowUsd: leg.p.borrowUsd,
        hfStated: leg.p.healthFactor,
        supplyUsd: leg.p.supplyUsd,
        k: 0,
      };
      return [{ ...leg, i: j, s, f: window && mi !== undefined ? window.factors(mi) : null }];
    });
    const first = legs[0];
    if (first === undefined) return true;
    type TrackedLeg = (typeof legs)[number];
    const protocol = catalog.recordAt(first.p.ord).protocol;
    const byHour = legs.every((l) => l.f !== null);
    // The health factor (the account's: its legs' debt-weighted) at each leg's ratios to the records.
    const healthAt = (ratios: (l: TrackedLeg) => Ratios) => {
      let weighted = 0;
      let debt = 0;
      for (const l of legs) {
        const r = ratios(l);
        debt += l.s.borrowUsd * r.l * r.index;
        // Weighted as the risk index weighs it: hf x debt as stated, or, without debt (a leg
        // that only holds collateral, as a liquidation that repaid its debt leaves it),
        // collateral x lltv; then at the leg's collateral price.
        const stated =
          l.s.borrowUsd > 0 && Number.isFinite(l.s.hfStated)
            ? l.s.hfStated * l.s.borrowUsd
            : l.s.collateralUsd * l.m.lltv;
        weighted += stated * r.c;
      }
      return debt > 0 ? weighted / debt : Number.POSITIVE_INFINITY;
    };
    const liquidateAt = (at: number, hf: number, ratios: (l: TrackedLeg) => Ratios) => {
      const at_ = legs.map((l) => {
        const r = ratios(l);
        const { s } = l;
        return {
          ...l,
          collateral: s.collateralUsd / l.base.collateral,
          debt: (s.borrowUsd * r.index) / l.base.loan,
          cp: l.base.collateral * r.c,
          lp: l.base.loan * r.l,
          index: r.index,
        };
      });
      const outcome = this.#liquidate(protocol, hf, at_);
      let open = false;
      at_.forEach((leg, k) => {
        const out = must(outcome.legs[k], 'the outcome of a liquidated leg');
        const { s } = leg;
        const credit = k === 0 ? outcome.surplus * leg.base.loan : 0;
        if (out.repaid > 0 || out.seized > 0 || out.badDebt > 0 || credit > 0) {
          // The stored ratio scaled (the threshold the position is stated at is kept).
          s.hfStated =
            out.debtLeft > 0 && leg.collateral > 0
              ? (s.hfStated * (out.collateralLeft / leg.collateral)) / (out.debtLeft / leg.debt)
              : out.debtLeft > 0
                ? 0
                : Number.POSITIVE_INFINITY;
          s.collateralUsd = out.collateralLeft * leg.base.collateral;
          s.borrowUsd = (out.debtLeft * leg.base.loan) / leg.index;
          // Compound credits what the collateral was worth over the debt as supply.
          s.supplyUsd += credit;
          s.k = Math.max(s.k, 1);
        }
        if (out.badDebt === 0 && out.debtLeft > 0 && out.collateralLeft > 0) open = true;
        if (!(out.repaid > 0 || out.seized > 0 || out.badDebt > 0)) return;
        const { p, m } = leg;
        const n = s.k++ - 1;
        const stream = streamId(this.#seed, `live-liq|${m.uniqueKey}|${p.user}`);
        events.push({
          protocol: m.protocol,
          chainId: m.chainId,
          txHash: hexOf(stream, p.seq, n, 8),
          logIndex: hashAt(stream, p.seq, 1 + 16 * n) % 400,
          block: blockAt(m.chainId, at),
          at,
          marketKey: m.uniqueKey,
          borrower: p.user,
          liquidator: liquidatorAddress(
            streamId(this.#seed, `liquidators|${m.chainId}`),
            hashAt(stream, p.seq, 2 + 16 * n),
          ),
          collateralSeized: significant(out.seized),
          collateralSeizedUsd: usd(out.seized * leg.cp),
          debtRepaid: significant(out.repaid),
          debtRepaidUsd: usd(out.repaid * leg.lp),
          badDebt: significant(out.badDebt),
          badDebtUsd: usd(out.badDebt * leg.lp),
        });
      });
      return open;
    };
    let open = true;
    // (Taken again at a later instant: its hours were gone through when it was first taken.)
    if (window && byHour && taking === 'first') {
      // Each whole hour of the window at which it was below 1: liquidated there, at that hour's
      // prices (again at a later hour if a partial liquidation left it below 1).
      const stream = streamId(this.#seed, `live-liq|${first.m.uniqueKey}|${first.p.user}`);
      for (const [h, hourMs] of window.hours.entries()) {
        if (!open) break;
        const ratios = (l: TrackedLeg): Ratios => {
          const c = l.f?.collateral[h];
          const loan = l.f?.loan[h];
          const index = l.f?.index[h];
          if (c === undefined || loan === undefined || index === undefined) {
            throw new Error(`internal error: the factors of ${l.m.uniqueKey} at hour ${h} are missing`);
          }
          return { c, l: loan, index };
        };
        const hf = healthAt(ratios);
        if (!(hf < 1)) continue;
        const lo = Math.max(fromMs + 1, hourMs - HOUR_MS);
        const at = Math.floor(lo + unitAt(stream, first.p.seq, 3 + 16 * h) * (hourMs - lo));
        open = liquidateAt(at, hf, ratios);
      }
    }
    // Now, at the model's prices.
    const nowRatios = ({ p }: TrackedLeg): Ratios => ({
      c: p.collateralFactor,
      l: p.loanFactor,
      index: p.debtIndex,
    });
    const hfNow = healthAt(nowRatios);
    if (open && hfNow < 1) liquidateAt(atMs, hfNow, nowRatios);
    for (const leg of legs) {
      const { s } = leg;
      if (s.k === 0) continue;
      taken.changed(leg.i);
      changes.push({
        marketKey: leg.m.uniqueKey,
        user: leg.p.user,
        collateralUsd: s.collateralUsd,
        borrowUsd: s.borrowUsd,
        supplyUsd: s.supplyUsd,
        healthFactor: s.hfStated,
        basedOn: leg.p.seq,
      });
    }
    return true;
  }

  /** Position j in tokens at the model's prices now; null without its market's terms or prices. */
  #legOf(model: LiquidatorModel, j: number): Leg | null {
    const { risk, catalog } = model;
    const p = risk.stateOf(j);
    const m = catalog.recordAt(p.ord);
    const terms = this.#terms.get(m.uniqueKey);
    const stated = catalog.basePrices(p.ord);
    if (!terms || stated.collateral === null || stated.loan === null) return null;
    const base = { collateral: stated.collateral, loan: stated.loan };
    if (!(base.collateral > 0) || !(base.loan > 0)) return null;
    return {
      p,
      m,
      terms,
      base,
      collateral: p.collateralUsd / base.collateral,
      // Debt with the interest accrued since it was stated (the market's borrow index).
      debt: (p.borrowUsd * p.debtIndex) / base.loan,
      cp: base.collateral * p.collateralFactor,
      lp: base.loan * p.loanFactor,
      index: p.debtIndex,
    };
  }

  /**
   * The protocol's liquidation of an account (or an isolated position, a one-leg account) at
   * health factor `hf`: Compound absorbs it whole; Aave and Spark repay each debt up to the close
   * factor (closeFactorOf: half, all below 0.95 or, on Aave, for a leg under $2,000) at the
   * collateral's bonus; Euler repays it whole at its discount (1 - hf, at most the vault's
   * maximum, here the market's bonus as a discount); Morpho and Fluid whole at their bonus.
   */
  #liquidate(
    protocol: Protocol,
    hf: number,
    legs: readonly { collateral: number; debt: number; cp: number; lp: number; terms: MarketTerms }[],
  ): { legs: LiquidationOutcome[]; surplus: number } {
    const toLeg = (l: (typeof legs)[number], closeFactor: number, liquidationBonus: number) => ({
      collateral: l.collateral,
      debt: l.debt,
      collateralPrice: l.cp,
      loanPrice: l.lp,
      closeFactor,
      liquidationBonus,
    });
    if (protocol === 'compound') return absorbAccount(legs.map((l) => toLeg(l, 1, l.terms.liquidationBonus)));
    const out = liquidateAccount(
      legs.map((l) => {
        if (protocol === 'euler') {
          const maxDiscount = 1 - 1 / (1 + l.terms.liquidationBonus);
          return toLeg(l, 1, eulerLiquidationBonus(hf, maxDiscount));
        }
        const closeFactor =
          protocol === 'aave' || protocol === 'spark'
            ? closeFactorOf(protocol, hf, l.debt * l.lp, l.collateral * l.cp)
            : hf < FULL_CLOSE_HF
              ? 1
              : l.terms.closeFactor;
        return toLeg(l, closeFactor, l.terms.liquidationBonus);
      }),
    );
    return { legs: out, surplus: 0 };
  }

  /**
   * Liquidates what happened since the last complete step, up to `atMs`: the events are appended
   * first (idempotent), then the positions written, so a failure between the two loses nothing
   * (the next step computes the same event again, under the same transaction hash).
   *
   * A catch-up over weeks (the first start after the snapshot) computes its markets' factors
   * first, in slices of WARM_SLICE_MS yielding to the event loop; `signal` aborted meanwhile
   * ends the step with nothing written (the next one catches up from the same instant).
   */
  async step(model: LiquidatorModel, atMs: number, signal?: AbortSignal): Promise<LiquidationStep> {
    const version = model.dataset.version;
    const fromMs = Math.min(atMs, await this.#fromFor(version));
    const nothing = { events: [], applied: 0, fromMs, complete: false, took: 0 };
    if (fromMs < atMs) await this.#warm(model, fromMs, atMs, signal);
    if (signal?.aborted) return nothing;
    const window = fromMs < atMs ? this.#windowOf(fromMs, atMs) : null;
    const revision = model.revision;
    const picked = this.#candidates(model, atMs, window);
    const { taken, below } = picked;
    let complete = picked.complete;
    const events: PricedLiquidationEvent[] = [];
    const changes: PositionChange[] = [];
    // In slices of WARM_SLICE_MS; if the model moved meanwhile (a tick, changes applied), the
    // step ends with what it computed at the prices it started from (the next takes the rest).
    let since = performance.now();
    let took = 0;
    for (const [k, i] of picked.candidates.entries()) {
      if (performance.now() - since > WARM_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        if (signal?.aborted) return nothing;
        since = performance.now();
        if (model.revision !== revision) {
          complete = false;
          break;
        }
      }
      if (this.#liquidateCandidate(model, i, atMs, fromMs, window, taken, k < below, events, changes)) took++;
    }
    let applied = 0;
    if (changes.length > 0) {
      await this.#store.appendLiquidations(events);
      applied = (await this.#store.applyPositionChanges(LIQUIDATIONS_SOURCE_ID, changes, version)).applied
        .length;
    }
    taken.commit();
    if (complete) {
      this.#from = { version, ms: atMs };
      this.#due = null;
    }
    return { events: changes.length > 0 ? events : [], applied, fromMs, complete, took };
  }
}
