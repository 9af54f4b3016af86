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
} from '../../store/types.ts';
import type { MarketTerms } from './economics.ts';
import { generateSandbox, type SandboxProfile } from './index.ts';
import { blockAt, hexOf, liquidatorAddress } from './simulation/market-history.ts';
import { hashAt, streamId } from './simulation/noise.ts';

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

type Store = Pick<MarketDataStore, 'applyPositionChanges'> & Pick<HistoryStore, 'appendLiquidations'>;

export class SandboxLiquidator {
  readonly #store: Store;
  readonly #seed: number;
  readonly #terms: ReadonlyMap<string, MarketTerms>;
  readonly #maxPerStep: number;

  constructor(store: Store, profile: SandboxProfile, seed: number, maxPerStep = MAX_LIQUIDATIONS_PER_STEP) {
    this.#store = store;
    this.#seed = seed;
    const ds = generateSandbox({ profile, seed });
    this.#terms = new Map(ds.markets.map((m, i) => [m.uniqueKey, ds.terms[i]!]));
    this.#maxPerStep = maxPerStep;
  }

  /** The liquidations the prices of `model` now call for (pure: nothing written). */
  plan(model: ReadModel, atMs: number): { events: PricedLiquidationEvent[]; changes: PositionChange[] } {
    const { risk, catalog } = model;
    const events: PricedLiquidationEvent[] = [];
    const changes: PositionChange[] = [];
    const due = risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: this.#maxPerStep });
    for (const i of due) {
      const p = risk.stateOf(i);
      const m = catalog.recordAt(p.ord);
      const terms = this.#terms.get(m.uniqueKey);
      const stated = catalog.basePrices(p.ord);
      if (!terms || stated.collateral === null || stated.loan === null) continue;
      const base = { collateral: stated.collateral, loan: stated.loan };
      if (!(base.collateral > 0) || !(base.loan > 0)) continue;
      const collateral = p.collateralUsd / base.collateral;
      // Debt with the interest accrued since it was stated (the market's borrow index).
      const debt = (p.borrowUsd * p.debtIndex) / base.loan;
      const cp = base.collateral * p.collateralFactor;
      const lp = base.loan * p.loanFactor;
      const hf = (p.healthFactor * p.collateralFactor) / (p.loanFactor * p.debtIndex);
      const out = liquidate(collateral, debt, hf, cp, lp, terms);
      // The health factor left, by the position's own definition (its stored ratio scaled).
      const hfLeft =
        out.debtLeft > 0 && collateral > 0
          ? (p.healthFactor * (out.collateralLeft / collateral)) / (out.debtLeft / debt)
          : out.debtLeft > 0
            ? 0
            : Number.POSITIVE_INFINITY;
      changes.push({
        marketKey: m.uniqueKey,
        user: p.user,
        collateralUsd: out.collateralLeft * base.collateral,
        // Stated at the loaded borrow index, like every position of the model.
        borrowUsd: (out.debtLeft * base.loan) / p.debtIndex,
        supplyUsd: p.supplyUsd,
        healthFactor: hfLeft,
        basedOn: p.seq,
      });
      const stream = streamId(this.#seed, `live-liq|${m.uniqueKey}|${p.user}`);
      events.push({
        protocol: m.protocol,
        chainId: m.chainId,
        txHash: hexOf(stream, p.seq, 0, 8),
        logIndex: hashAt(stream, p.seq, 1) % 400,
        block: blockAt(m.chainId, atMs),
        at: atMs,
        marketKey: m.uniqueKey,
        borrower: p.user,
        liquidator: liquidatorAddress(
          streamId(this.#seed, `liquidators|${m.chainId}`),
          hashAt(stream, p.seq, 2),
        ),
        collateralSeized: significant(out.seized),
        collateralSeizedUsd: usd(out.seized * cp),
        debtRepaid: significant(out.repaid),
        debtRepaidUsd: usd(out.repaid * lp),
        badDebt: significant(out.badDebt),
        badDebtUsd: usd(out.badDebt * lp),
      });
    }
    return { events, changes };
  }

  /**
   * Liquidates what the model's prices at `atMs` call for: the events are appended first
   * (idempotent), then the positions written, so a failure between the two loses nothing (the
   * next step computes the same event again, under the same transaction hash).
   */
  async step(model: ReadModel, atMs: number): Promise<LiquidationStep> {
    const { events, changes } = this.plan(model, atMs);
    if (changes.length === 0) return { events: [], applied: 0 };
    await this.#store.appendLiquidations(events);
    const { applied } = await this.#store.applyPositionChanges(
      LIQUIDATIONS_SOURCE_ID,
      changes,
      model.dataset.version,
    );
    return { events, applied: applied.length };
  }
}
