/**
 * Liquidations in the running sandbox: at each simulation step, every served position whose
 * health factor the prices of that instant put below 1 is liquidated: an isolated position
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

import type { ReadModel } from '../../data/read-model.ts';
import { closeFactorOf, eulerLiquidationBonus } from '../../domain/accounts.ts';
import type { Protocol } from '../../domain/enums.ts';
import {
  absorbAccount,
  FULL_CLOSE_HF,
  type LiquidationOutcome,
  liquidateAccount,
} from '../../domain/liquidation.ts';
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

  /**
   * The liquidations the prices of `model` now call for (pure: nothing written): each
   * liquidatable isolated position, and each liquidatable account once, all its positions
   * together by its protocol's rules (see liquidateAccount, absorbAccount, closeFactorOf).
   */
  plan(model: ReadModel, atMs: number): { events: PricedLiquidationEvent[]; changes: PositionChange[] } {
    const { risk, catalog } = model;
    const events: PricedLiquidationEvent[] = [];
    const changes: PositionChange[] = [];
    const due = risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: this.#maxPerStep });
    const doneAccounts = new Set<number>();
    for (const i of due) {
      const account = risk.accountOf(i);
      if (account) {
        if (doneAccounts.has(account.id)) continue;
        doneAccounts.add(account.id);
      }
      const legs = (account ? account.members : [i]).flatMap((j) => {
        const leg = this.#legOf(model, j);
        return leg ? [leg] : [];
      });
      if (legs.length === 0) continue;
      const hf = account ? account.healthFactor : legs[0]!.hfNow;
      const protocol = catalog.recordAt(legs[0]!.p.ord).protocol;
      const outcome = this.#liquidate(protocol, hf, legs);
      legs.forEach((leg, k) => {
        const out = outcome.legs[k]!;
        if (!(out.repaid > 0 || out.seized > 0 || out.badDebt > 0) && !(outcome.surplus > 0)) return;
        const { p, m, base, collateral, debt, cp, lp } = leg;
        // The stored ratio scaled (the threshold the position is stated at is kept).
        const hfLeft =
          out.debtLeft > 0 && collateral > 0
            ? (p.healthFactor * (out.collateralLeft / collateral)) / (out.debtLeft / debt)
            : out.debtLeft > 0
              ? 0
              : Number.POSITIVE_INFINITY;
        // Compound credits what the collateral was worth over the debt as supply (on the first
        // leg), stated like every amount at the market record's price.
        const credit = k === 0 ? outcome.surplus * base.loan : 0;
        changes.push({
          marketKey: m.uniqueKey,
          user: p.user,
          collateralUsd: out.collateralLeft * base.collateral,
          // Stated at the loaded borrow index, like every position of the model.
          borrowUsd: (out.debtLeft * base.loan) / p.debtIndex,
          supplyUsd: p.supplyUsd + credit,
          healthFactor: hfLeft,
          basedOn: p.seq,
        });
        if (!(out.repaid > 0 || out.seized > 0 || out.badDebt > 0)) return;
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
      });
    }
    return { events, changes };
  }

  /** Position j in tokens at the model's prices now; null without its market's terms or prices. */
  #legOf(model: ReadModel, j: number) {
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
      hfNow: (p.healthFactor * p.collateralFactor) / (p.loanFactor * p.debtIndex),
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
