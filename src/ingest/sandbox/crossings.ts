/**
 * When the sandbox's served positions crossed health factor 1 between two liquidation steps.
 * A position's health factor at an instant t is its stated one (at its market record's prices
 * and borrow index 1) times its market's factor
 *   f(t) = collateral ratio(t) / (loan ratio(t) x borrow index(t)),
 * the ratios being the symbols' price paths over the snapshot (live.ts) and the borrow index
 * the market clock's (simulation/market-history.ts): the same numbers the running server
 * prices its positions with. So a step that comes hours or weeks after the last one (the first
 * start after the snapshot, a restart) finds, for each position, the first whole hour its
 * health factor was below 1 and liquidates it there, at that hour's prices, as a liquidator
 * watching the chain would have: the catch-up replays the liquidations at the times the prices
 * crossed instead of stamping them all at the instant the server caught up.
 */
import { must } from '../../domain/must.ts';
import type { SandboxSimulation } from './history.ts';
import { HOUR_MS } from './simulation/noise.ts';

/** One market's factors over the whole hours of a window, and at its end. */
export interface MarketFactors {
  /** The whole hours strictly inside (fromMs, toMs), ascending. */
  readonly hours: readonly number[];
  /** f at each of `hours`. */
  readonly f: Float64Array;
  /** The collateral and loan price ratios and the borrow index at each of `hours`. */
  readonly collateral: Float64Array;
  readonly loan: Float64Array;
  readonly index: Float64Array;
  /** The lowest f over the hours (Infinity when there are none). */
  readonly min: number;
}

/** The whole hours strictly inside (fromMs, toMs). */
export function hoursBetween(fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let t = Math.floor(fromMs / HOUR_MS) * HOUR_MS + HOUR_MS; t < toMs; t += HOUR_MS) out.push(t);
  return out;
}

/**
 * Factors of the simulation's markets over a window: `factors(i)` is computed on first use and
 * kept for the window (a window is the span since the last complete liquidation step).
 */
export class CrossingWindow {
  readonly fromMs: number;
  readonly toMs: number;
  readonly hours: readonly number[];
  readonly #sim: SandboxSimulation;
  readonly #byMarket = new Map<number, MarketFactors>();
  readonly #ratios = new Map<string, Float64Array>();

  constructor(sim: SandboxSimulation, fromMs: number, toMs: number) {
    this.#sim = sim;
    this.fromMs = fromMs;
    this.toMs = toMs;
    this.hours = hoursBetween(fromMs, toMs);
  }

  #ratiosOf(symbol: string): Float64Array {
    let r = this.#ratios.get(symbol);
    if (!r) {
      const first = this.hours[0];
      const last = this.hours.at(-1);
      r =
        first === undefined || last === undefined
          ? new Float64Array(0)
          : this.#sim.basis.hourlyRatios(symbol, first, last);
      this.#ratios.set(symbol, r);
    }
    return r;
  }

  /** Market `index`'s factors over the window's hours. */
  factors(index: number): MarketFactors {
    let out = this.#byMarket.get(index);
    if (out) return out;
    const m = must(this.#sim.dataset.markets[index], `sandbox market ${index}`);
    const n = this.hours.length;
    const collateral = this.#ratiosOf(m.collateral);
    const loan = this.#ratiosOf(m.loan);
    const index_ = new Float64Array(n);
    const f = new Float64Array(n);
    let min = Number.POSITIVE_INFINITY;
    const asOfMs = this.#sim.dataset.asOf * 1000;
    for (const [k, t] of this.hours.entries()) {
      const c = collateral[k];
      const l = loan[k];
      if (c === undefined || l === undefined) throw new Error(`internal error: no price ratio at hour ${k}`);
      const idx = t >= asOfMs ? Math.exp(this.#sim.history.stateAt(index, t).logIndex) : 1;
      index_[k] = idx;
      const v = c / (l * idx);
      f[k] = v;
      if (v < min) min = v;
    }
    out = { hours: this.hours, f, collateral, loan, index: index_, min };
    this.#byMarket.set(index, out);
    return out;
  }
}
