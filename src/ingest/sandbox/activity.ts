/**
 * Borrowers coming and going in the running sandbox: on every whole minute, some positions open
 * and some close, as many of each on average, so the population holds steady while it renews
 * (without this, liquidations thin the positions near health factor 1 week after week).
 *
 * Method, per minute m (a function of the seed, m and the positions held, which every process
 * holds alike: they apply the same change feed in the same order):
 * - Rate: OPENINGS_PER_POSITION x positions / 365 days, per minute; the count of a minute is
 *   the whole part plus one with the probability of the fraction. Closings: the same count.
 * - An opening draws a held position with debt and opens beside it, in its market: a new
 *   borrower (a synthetic address), a debt of that position's times e^(1.2 z - 0.72) (mean 1)
 *   times riskWeight of its health factor (smaller close to 1) over riskWeight's mean (so an
 *   opening adds as much debt as a closing takes away, on average, and a market's borrow holds
 *   steady), and a health factor at the current prices of 1.04 plus an exponential of mean
 *   HF_SPREAD (the history's borrowers, simulation/market-history.ts), so markets with more
 *   positions get more openings and new positions look like the market's. None opens in a
 *   market winding down (`windDowns`: a PT it holds matured, wind-down.ts).
 * - A closing draws a held position with debt and repays it whole: the position is written with
 *   no collateral and no debt (it leaves every list: "Positions at risk" (docs/decisions.md)). The positions of winding-down markets
 *   also close, each at its own instant of the window (windDownClosings).
 * The changes are written as this source's, checked against the version they were computed
 * from (basedOn), so two processes writing the same minute write it once.
 */
import { healthFactor } from '../../domain/metrics.ts';
import type { PositionChange } from '../../domain/records/dataset.ts';
import { HF_SPREAD, hexOf, OPENINGS_PER_POSITION, riskWeight } from './simulation/market-history.ts';
import { MINUTE_MS, normalAt, streamId, unitAt } from './simulation/noise.ts';
import { type HeldPositions, type WindDown, windDownClosings } from './wind-down.ts';

/**
 * A position as the read model holds it: its amounts in its market record's prices (debt at the
 * borrow index it was stated at), its market's price factors and borrow index now, and the change
 * sequence number it is at (0: as loaded).
 */
export interface PositionState {
  /** Its market's position in the catalog. */
  ord: number;
  user: string;
  collateralUsd: number;
  borrowUsd: number;
  supplyUsd: number;
  healthFactor: number;
  collateralFactor: number;
  loanFactor: number;
  debtIndex: number;
  seq: number;
}

/** What the openings and closings read of the read model (the service hands it its own). */
export interface ActivityModel extends HeldPositions {
  risk: Omit<HeldPositions['risk'], 'stateOf'> & {
    /** Positions held. */
    readonly size: number;
    stateOf(i: number): PositionState;
  };
  catalog: HeldPositions['catalog'] & { recordAt(ord: number): { uniqueKey: string; lltv: number } };
}

/** The source id of the changes it writes (in /health with the others). */
export const ACTIVITY_SOURCE_ID = 'sandbox-activity';
/** Minutes of openings and closings caught up at most after a stop (older ones are skipped). */
export const MAX_CATCH_UP_MINUTES = 7 * 24 * 60;

const MINUTES_PER_YEAR = 365 * 24 * 60;

/**
 * The mean of riskWeight(hf) over the openings' health factors, hf = 1.04 + X with X exponential
 * of mean HF_SPREAD: riskWeight is 0.1 below hf 1.06, (hf - 1) / 0.6 up to 1.6, then 1.
 */
export const MEAN_OPENING_WEIGHT = (() => {
  const l = 1 / HF_SPREAD;
  const p = 0.02;
  const q = 0.56;
  // E[(0.04 + X) / 0.6 ; p <= X < q]: the integral of (0.04 + x) l e^(-l x) over [p, q].
  const part = (x: number) => -(0.04 + x + 1 / l) * Math.exp(-l * x);
  return 0.1 * -Math.expm1(-l * p) + (part(q) - part(p)) / 0.6 + Math.exp(-l * q);
})();

export class SandboxActivity {
  readonly #seed: number;
  /** The markets that wind down (a PT they hold matures), by uniqueKey (SandboxSimulation.windDowns). */
  readonly #windDowns: ReadonlyMap<string, WindDown>;

  constructor(seed: number, windDowns: ReadonlyMap<string, WindDown> = new Map()) {
    this.#seed = seed;
    this.#windDowns = windDowns;
  }

  /**
   * The openings and closings of the whole minutes in (afterMinute, toMinute] (minutes since
   * the epoch) on the positions `model` holds (pure: nothing written). A minute's draws that
   * land on a position without debt, or on one already changed this run, are skipped.
   */
  plan(model: ActivityModel, afterMinute: number, toMinute: number): PositionChange[] {
    const { risk, catalog } = model;
    const changes: PositionChange[] = [];
    const held = risk.size;
    if (held === 0) return changes;
    const from = Math.max(afterMinute + 1, toMinute - MAX_CATCH_UP_MINUTES + 1);
    const perMinute = (OPENINGS_PER_POSITION * held) / MINUTES_PER_YEAR;
    const whole = Math.floor(perMinute);
    const touched = new Set<string>();
    // Winding-down markets: every position whose closing instant has come (however long ago).
    changes.push(...windDownClosings(model, this.#windDowns, this.#seed, toMinute * MINUTE_MS, touched));
    for (let minute = from; minute <= toMinute; minute++) {
      const stream = streamId(this.#seed, `activity|${minute}`);
      const n = whole + (unitAt(stream, 0, 0) < perMinute - whole ? 1 : 0);
      for (let k = 0; k < n; k++) {
        // A closing: a held position with debt repays it.
        const c = risk.stateOf(Math.floor(unitAt(stream, k, 1) * held));
        const closing = catalog.recordAt(c.ord).uniqueKey;
        if (c.borrowUsd > 0 && !touched.has(`${closing}/${c.user}`)) {
          touched.add(`${closing}/${c.user}`);
          changes.push({
            marketKey: closing,
            user: c.user,
            collateralUsd: 0,
            borrowUsd: 0,
            supplyUsd: c.supplyUsd,
            healthFactor: Number.POSITIVE_INFINITY,
            basedOn: c.seq,
          });
        }
        // An opening, beside a held position with debt.
        const o = risk.stateOf(Math.floor(unitAt(stream, k, 2) * held));
        const m = catalog.recordAt(o.ord);
        if (!(o.borrowUsd > 0) || !(m.lltv > 0)) continue;
        const windDown = this.#windDowns.get(m.uniqueKey);
        if (windDown && minute * MINUTE_MS >= windDown.startMs) continue;
        const user = hexOf(stream, k, 3, 5);
        if (touched.has(`${m.uniqueKey}/${user}`)) continue;
        touched.add(`${m.uniqueKey}/${user}`);
        // Current debt and health factor, then stated at the record's prices and the loaded
        // borrow index like every position (RiskIndex): debt / (loan x index), collateral / price.
        const debtFactor = o.loanFactor * o.debtIndex;
        const hfNow = 1.04 - Math.log(unitAt(stream, k, 5)) * HF_SPREAD;
        const debtNow =
          (o.borrowUsd * debtFactor * riskWeight(hfNow) * Math.exp(1.2 * normalAt(stream, k, 4) - 0.72)) /
          MEAN_OPENING_WEIGHT;
        const borrowUsd = debtNow / debtFactor;
        const collateralUsd = (hfNow * debtNow) / m.lltv / o.collateralFactor;
        changes.push({
          marketKey: m.uniqueKey,
          user,
          collateralUsd,
          borrowUsd,
          supplyUsd: 0,
          healthFactor: healthFactor(collateralUsd, m.lltv, borrowUsd),
          basedOn: 0,
        });
      }
    }
    return changes;
  }
}

/** The whole minute (since the epoch) an instant falls in. */
export const minuteOf = (tMs: number): number => Math.floor(tMs / MINUTE_MS);
