/**
 * Liquidations in the running sandbox: at each simulation step, every served position whose
 * health factor the prices of that instant put below 1 is liquidated by the rules the history
 * uses (domain/liquidation.ts: the protocol's close factor and bonus, bad debt when the
 * collateral no longer covers the debt). The liquidation is appended to the history and the
 * position, as it is left, is written to the store as a change of this source; every process
 * serving the dataset (this one included) applies it from the store's change feed.
 *
 * Several processes may run this on one store: a change is written only if the position is
 * still at the version it was computed from (the store's basedOn check), and the event's
 * natural key (its synthetic transaction hash) is a function of the position and that version,
 * so a liquidation is recorded once whichever process computed it.
 */

import type { ReadModel } from '../../data/read-model.ts';
import { liquidate } from '../../domain/liquidation.ts';
import { significant, usd } from '../../domain/precision.ts';
import type {
  HistoryStore,
  MarketDataStore,
  PositionChange,
  PricedLiquidationEvent,
  SourceStore,
} from '../../store/types.ts';
import { ACTIVITY_SOURCE_ID } from './activity.ts';
import { CrossingWindow } from './crossings.ts';
import type { MarketTerms } from './economics.ts';
import { type SandboxSimulation, sandboxSimulation } from './history.ts';
import { generateSandbox, SANDBOX_AS_OF, type SandboxProfile } from './index.ts';
import { blockAt, hexOf, liquidatorAddress } from './simulation/market-history.ts';
import { HOUR_MS, hashAt, MINUTE_MS, streamId, unitAt } from './simulation/noise.ts';

/** The source id of the changes it writes (in /health with the others). */
export const LIQUIDATIONS_SOURCE_ID = 'sandbox-liquidations';
/** Positions liquidated at most per step (the most at risk first); the rest wait for the next. */
export const MAX_LIQUIDATIONS_PER_STEP = 500;

export interface LiquidationStep {
  /** The liquidations recorded (appended to the history). */
  events: PricedLiquidationEvent[];
  /** Position changes the store took (others were already changed by another process). */
  applied: number;
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
    this.#terms = new Map(ds.markets.map((m, i) => [m.uniqueKey, ds.terms[i]!]));
    this.#index = new Map(ds.markets.map((m, i) => [m.uniqueKey, i]));
    this.#maxPerStep = maxPerStep;
  }

  /** The instant the next step catches up from (see #from). */
  async #fromFor(version: number): Promise<number> {
    if (this.#from?.version === version) return this.#from.ms;
    let ms = SANDBOX_AS_OF * 1000;
    const cursor = (await this.#store.listSources?.())?.find((x) => x.id === ACTIVITY_SOURCE_ID)?.cursor;
    const [v, minute] = (cursor ?? '').split(':').map(Number);
    if (v === version && Number.isSafeInteger(minute)) ms = Math.max(ms, minute! * MINUTE_MS);
    this.#from = { version, ms };
    return ms;
  }

  /** The crossing window (fromMs, atMs), reused while it is the same. */
  #windowOf(fromMs: number, atMs: number): CrossingWindow {
    const w = this.#window;
    if (w && w.fromMs === fromMs && w.toMs === atMs) return w;
    this.#sim ??= sandboxSimulation(this.#profile, this.#seed);
    this.#window = new CrossingWindow(this.#sim, fromMs, atMs);
    return this.#window;
  }

  /**
   * The liquidations due between `fromMs` and `atMs` on the positions of `model`, priced at
   * `atMs` (pure: nothing written). A position whose health factor went below 1 at a whole hour
   * inside the window is liquidated at the first such hour, at that hour's prices and borrow
   * index (again at the next hour it is below 1 if a partial liquidation left it so); one below
   * 1 at `atMs` only, at `atMs`. Default `fromMs`: `atMs` (only what is below 1 now).
   */
  plan(model: ReadModel, atMs: number, fromMs = atMs): LiquidationPlan {
    const { risk, catalog } = model;
    const events: PricedLiquidationEvent[] = [];
    const changes: PositionChange[] = [];
    const window = fromMs < atMs ? this.#windowOf(fromMs, atMs) : null;
    const hours = window?.hours.length ?? 0;
    // The positions due: below 1 now, and (over a window of whole hours) those whose market's
    // lowest factor in the window would have put them below 1.
    let due: number[];
    let complete = true;
    if (window && hours > 0) {
      due = [];
      for (let ord = 0; ord < catalog.size; ord++) {
        const i = this.#index.get(catalog.recordAt(ord).uniqueKey);
        if (i === undefined || risk.positionsIn(ord) === 0) continue;
        const f = window.factors(i);
        const now = risk.hfFactorOf(ord);
        // stated hf x min f < 1  <=>  hf now < f now / min f
        const threshold = Math.max(1, f.min > 0 ? now / f.min : 1) * (1 + 1e-12);
        due.push(
          ...risk.query({
            healthFactorThreshold: threshold,
            minBorrowUsd: 0,
            limit: Number.MAX_SAFE_INTEGER,
            marketOrd: ord,
          }),
        );
      }
      // Those below 1 now first (lowest first), so the served list clears fastest.
      const hfNow = (i: number) => {
        const p = risk.stateOf(i);
        return (p.healthFactor * p.collateralFactor) / (p.loanFactor * p.debtIndex);
      };
      const keyed = due.map((i) => ({ i, hf: hfNow(i) }));
      keyed.sort((a, b) => a.hf - b.hf || a.i - b.i);
      due = keyed.map((x) => x.i);
      if (due.length > this.#maxPerStep) {
        due = due.slice(0, this.#maxPerStep);
        complete = false;
      }
    } else {
      due = risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: this.#maxPerStep + 1 });
      if (due.length > this.#maxPerStep) {
        due.length = this.#maxPerStep;
        complete = false;
      }
    }
    for (const i of due) {
      const p = risk.stateOf(i);
      const m = catalog.recordAt(p.ord);
      const terms = this.#terms.get(m.uniqueKey);
      const mi = this.#index.get(m.uniqueKey);
      const stated = catalog.basePrices(p.ord);
      if (!terms || mi === undefined || stated.collateral === null || stated.loan === null) continue;
      const base = { collateral: stated.collateral, loan: stated.loan };
      if (!(base.collateral > 0) || !(base.loan > 0)) continue;
      // Stated amounts (at the record's prices and borrow index 1) and health factor.
      let collateralUsd = p.collateralUsd;
      let borrowUsd = p.borrowUsd;
      let hfStated = p.healthFactor;
      const stream = streamId(this.#seed, `live-liq|${m.uniqueKey}|${p.user}`);
      let k = 0;
      const liquidateAt = (at: number, cRatio: number, lRatio: number, index: number, hf: number) => {
        const cp = base.collateral * cRatio;
        const lp = base.loan * lRatio;
        const collateral = collateralUsd / base.collateral;
        const debt = (borrowUsd * index) / base.loan;
        const out = liquidate(collateral, debt, hf, cp, lp, terms);
        hfStated =
          out.debtLeft > 0 && collateral > 0
            ? (hfStated * (out.collateralLeft / collateral)) / (out.debtLeft / debt)
            : out.debtLeft > 0
              ? 0
              : Number.POSITIVE_INFINITY;
        collateralUsd = out.collateralLeft * base.collateral;
        borrowUsd = (out.debtLeft * base.loan) / index;
        const block = blockAt(m.chainId, at);
        events.push({
          protocol: m.protocol,
          chainId: m.chainId,
          txHash: hexOf(stream, p.seq, k, 8),
          logIndex: hashAt(stream, p.seq, 1 + 16 * k) % 400,
          block,
          at,
          marketKey: m.uniqueKey,
          borrower: p.user,
          liquidator: liquidatorAddress(
            streamId(this.#seed, `liquidators|${m.chainId}`),
            hashAt(stream, p.seq, 2 + 16 * k),
          ),
          collateralSeized: significant(out.seized),
          collateralSeizedUsd: usd(out.seized * cp),
          debtRepaid: significant(out.repaid),
          debtRepaidUsd: usd(out.repaid * lp),
          badDebt: significant(out.badDebt),
          badDebtUsd: usd(out.badDebt * lp),
        });
        k++;
        return out.badDebt === 0 && out.debtLeft > 0 && out.collateralLeft > 0;
      };
      let open = true;
      if (window && hours > 0) {
        const f = window.factors(mi);
        for (let h = 0; h < hours && open; h++) {
          const hf = hfStated * f.f[h]!;
          if (!(hf < 1)) continue;
          // A block in the hour before the one it is seen at (not before the window).
          const hourMs = f.hours[h]!;
          const lo = Math.max(fromMs + 1, hourMs - HOUR_MS);
          const at = Math.floor(lo + unitAt(stream, p.seq, 3 + 16 * k) * (hourMs - lo));
          open = liquidateAt(at, f.collateral[h]!, f.loan[h]!, f.index[h]!, hf);
        }
      }
      // Now, at the model's prices.
      const hfNow = (hfStated * p.collateralFactor) / (p.loanFactor * p.debtIndex);
      if (open && hfNow < 1) liquidateAt(atMs, p.collateralFactor, p.loanFactor, p.debtIndex, hfNow);
      if (k === 0) continue;
      changes.push({
        marketKey: m.uniqueKey,
        user: p.user,
        collateralUsd,
        // Stated at the loaded borrow index, like every position of the model.
        borrowUsd: (borrowUsd * 1) / p.debtIndex,
        supplyUsd: p.supplyUsd,
        healthFactor: hfStated,
        basedOn: p.seq,
      });
    }
    return { events, changes, complete };
  }

  /**
   * Liquidates what the prices since the last complete step call for, at the times they did
   * (see plan): the events are appended first (idempotent), then the positions written, so a
   * failure between the two loses nothing (the next step computes the same event again, under
   * the same transaction hash).
   */
  async step(model: ReadModel, atMs: number): Promise<LiquidationStep> {
    const version = model.dataset.version;
    const fromMs = Math.min(atMs, await this.#fromFor(version));
    const { events, changes, complete } = this.plan(model, atMs, fromMs);
    if (changes.length > 0) {
      await this.#store.appendLiquidations(events);
      const { applied } = await this.#store.applyPositionChanges(LIQUIDATIONS_SOURCE_ID, changes, version);
      if (complete) this.#from = { version, ms: atMs };
      return { events, applied: applied.length };
    }
    if (complete) this.#from = { version, ms: atMs };
    return { events: [], applied: 0 };
  }
}
