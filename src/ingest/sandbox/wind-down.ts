/**
 * Markets that wind down because a Pendle PT they hold matures. A matured PT is redeemed at par
 * (its price path is its underlying's from its maturity on: simulation/price-model.ts), so its
 * lenders and borrowers leave: as the seed does for PTs already matured at the snapshot
 * (economics.ts listingShare), a PT market winds down linearly over the PT_WIND_DOWN_DAYS after
 * the maturity and is empty after them. For a PT maturing after the snapshot the running
 * simulation does the same: the market's balances follow the share left (market-history.ts),
 * and each of its positions is closed, repaid whole by its owner, at its own instant of the
 * window (a hash of the market and the borrower), so the positions left follow the same line.
 * A PT matured before the snapshot whose market is still winding down at it goes on from the
 * snapshot to the end of its window.
 */
import { assetFamily } from '../../domain/asset-family.ts';
import type { PositionChange } from '../../domain/records/dataset.ts';
import { maturityFromSymbol } from './prices.ts';
import { DAY_MS, streamId, unitAt } from './simulation/noise.ts';

/** Days after a PT's maturity over which its markets wind down (linearly) to empty. */
export const PT_WIND_DOWN_DAYS = 30;

/** The window over which a market winds down, epoch ms: full before startMs, empty from endMs on. */
export interface WindDown {
  startMs: number;
  endMs: number;
}

/**
 * The wind-down of a market holding `collateral` and `loan`, or null when neither is a PT with a
 * maturity. `maturityOf`: a PT's maturity as its price path has it (the symbol's date, or one
 * derived from the snapshot's discount), null when unknown.
 */
export function ptWindDown(
  collateral: string,
  loan: string,
  maturityOf: (symbol: string) => number | null,
  asOfMs: number,
): WindDown | null {
  let out: WindDown | null = null;
  for (const symbol of [collateral, loan]) {
    if (assetFamily(symbol) !== 'pt') continue;
    const dated = maturityFromSymbol(symbol);
    // Matured by the snapshot: the seed sized the market by the share left; it goes on from there.
    const w =
      dated !== null && dated <= asOfMs
        ? { startMs: asOfMs, endMs: Math.max(asOfMs, dated + PT_WIND_DOWN_DAYS * DAY_MS) }
        : windowFrom(maturityOf(symbol) ?? dated);
    if (w && (!out || w.endMs < out.endMs)) out = w;
  }
  return out;
}

const windowFrom = (maturityMs: number | null): WindDown | null =>
  maturityMs === null ? null : { startMs: maturityMs, endMs: maturityMs + PT_WIND_DOWN_DAYS * DAY_MS };

/** The share of its snapshot size a market keeps at tMs: 1 before the window, 0 after, linear in it. */
export function windDownShare(w: WindDown | null | undefined, tMs: number): number {
  if (!w || tMs <= w.startMs) return 1;
  if (tMs >= w.endMs) return 0;
  return (w.endMs - tMs) / (w.endMs - w.startMs);
}

/** The instant a borrower of a winding-down market repays and leaves: uniform over the window. */
export function closingAt(seed: number, w: WindDown, marketKey: string, user: string): number {
  return w.startMs + unitAt(streamId(seed, `wind-down|${marketKey}|${user}`), 0) * (w.endMs - w.startMs);
}

/** What the closings read of the positions held (the read model of the running service). */
export interface HeldPositions {
  readonly catalog: { ordOf(marketKey: string): number | undefined };
  readonly risk: {
    query(q: {
      healthFactorThreshold: number;
      minBorrowUsd: number;
      limit: number;
      marketOrd?: number;
    }): number[];
    stateOf(i: number): { user: string; supplyUsd: number; seq: number };
  };
}

/**
 * The positions of winding-down markets whose closing instant is at or before tMs and that still
 * hold debt: each repaid whole (no collateral, no debt left; it leaves every list), based on the
 * version it was read at. Positions named in `touched` (`<marketKey>/<user>`) are left alone and
 * those closed are added to it.
 */
export function windDownClosings(
  model: HeldPositions,
  windDowns: ReadonlyMap<string, WindDown>,
  seed: number,
  tMs: number,
  touched: Set<string> = new Set(),
): PositionChange[] {
  const changes: PositionChange[] = [];
  for (const [marketKey, w] of windDowns) {
    if (tMs < w.startMs) continue;
    const ord = model.catalog.ordOf(marketKey);
    if (ord === undefined) continue;
    const held = model.risk.query({
      healthFactorThreshold: Number.POSITIVE_INFINITY,
      minBorrowUsd: 0,
      limit: Number.MAX_SAFE_INTEGER,
      marketOrd: ord,
    });
    for (const i of held) {
      const p = model.risk.stateOf(i);
      const key = `${marketKey}/${p.user}`;
      if (touched.has(key) || closingAt(seed, w, marketKey, p.user) > tMs) continue;
      touched.add(key);
      changes.push({
        marketKey,
        user: p.user,
        collateralUsd: 0,
        borrowUsd: 0,
        supplyUsd: p.supplyUsd,
        healthFactor: Number.POSITIVE_INFINITY,
        basedOn: p.seq,
      });
    }
  }
  return changes;
}
