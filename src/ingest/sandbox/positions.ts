/**
 * Synthetic borrower positions, streamed: only per-market counts are kept in memory; each
 * market's positions are drawn from a stream keyed by its uniqueKey when iterated.
 *
 * - Every market with debt holds at least one position; the rest go to markets in proportion
 *   to their borrow (largest-remainder rounding, so the total is exact).
 * - A market's positions are its borrowers: their debts add up to its borrow to the cent
 *   (log-normal weights, floored to cents, the cents left to the largest).
 * - Health factors at the snapshot: none below 1 (a liquidatable position is liquidated within
 *   blocks on chain), 5.5 % in [1, 1.1), 7.5 % in [1.1, 1.2), 80 % in [1.2, 3), 7 % in [3, 8].
 *   Positions closer to 1 weigh less in the debt split (riskWeight). collateralUsd = hf x borrowUsd /
 *   lltv, then the stored healthFactor is recomputed with domain healthFactor() from the
 *   rounded amounts.
 * - Users come from a pool of about 0.4 per position, so most users hold several positions;
 *   within a market a stride permutation of the pool keeps (market, user) unique.
 * - Accounts (Aave and Spark per pool, Compound per comet, Euler per controller vault: see
 *   src/domain/accounts.ts): a wallet's positions in one pool are one account, so its health
 *   factor is drawn once per account (a stream keyed by the pool and the wallet) and every
 *   position of the account is sized to it: the account's health factor at the snapshot is the
 *   one drawn. On Euler a wallet borrows from each controller vault through its own EVC
 *   sub-account (its address with the last byte XOR a number 1 to 255 of the vault), as the
 *   Euler app does.
 */
import { accountPoolOf, evcSubAccount } from '../../domain/accounts.ts';
import { healthFactor } from '../../domain/metrics.ts';
import type { PositionRecord, PricedMarketRecord } from '../../domain/types.ts';
import { hash32, mix32, type Rng, rngFor, roundTo } from './rng.ts';
import { riskWeight } from './simulation/market-history.ts';

const USERS_PER_POSITION = 0.4;
const SUPPLYING_SHARE = 0.12;

interface PositionPlan {
  seed: number;
  markets: readonly PricedMarketRecord[];
  /** Positions per market, aligned with `markets`. */
  counts: Uint32Array;
  total: number;
  userPool: number;
}

/** Splits `total` positions over markets: one to each market with debt, the rest in proportion to borrow. */
export function planPositions(
  seed: number,
  markets: readonly PricedMarketRecord[],
  total: number,
): PositionPlan {
  const counts = new Uint32Array(markets.length);
  let weightSum = 0;
  let withDebt = 0;
  for (const m of markets)
    if (m.borrow > 0) {
      weightSum += m.borrow;
      withDebt++;
    }
  if (total > 0 && weightSum === 0) throw new RangeError('no market has enough borrow to hold positions');
  // One position per market with debt first (when the total allows), the rest by borrow.
  const floor = total >= withDebt ? 1 : 0;
  const spread = total - floor * withDebt;
  const fractions: { i: number; frac: number }[] = [];
  let assigned = 0;
  markets.forEach((m, i) => {
    if (!(m.borrow > 0) || weightSum === 0) return;
    const quota = (spread * m.borrow) / weightSum;
    const base = Math.floor(quota) + floor;
    counts[i] = base;
    assigned += base;
    fractions.push({ i, frac: quota - Math.floor(quota) });
  });
  fractions.sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (let k = 0; assigned < total; k = (k + 1) % fractions.length) {
    const f = fractions[k];
    if (!f) break;
    counts[f.i] = (counts[f.i] ?? 0) + 1;
    assigned++;
  }
  let max = 0;
  for (const c of counts) max = Math.max(max, c);
  const userPool = Math.max(Math.ceil(total * USERS_PER_POSITION), max, 1);
  return { seed, markets, counts, total, userPool };
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** 8 hex digits of a uint32 (a lookup table: Number#toString(16) is several times slower). */
function hex32(x: number): string {
  return (
    (HEX_BYTE[x >>> 24] as string) +
    (HEX_BYTE[(x >>> 16) & 255] as string) +
    (HEX_BYTE[(x >>> 8) & 255] as string) +
    (HEX_BYTE[x & 255] as string)
  );
}

/** The wallet of user `index`: 0x + 40 lowercase hex, distinct for distinct indexes under a seed. */
function userAddress(seed: number, index: number): string {
  const first = mix32((index + Math.imul(seed, 0x9e3779b9)) >>> 0);
  let out = `0x${hex32(first)}`;
  let x = first;
  for (let k = 1; k < 5; k++) {
    x = mix32(x ^ Math.imul(k, 0x85ebca6b) ^ seed);
    out += hex32(x);
  }
  return out;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function drawHealthFactor(rng: Rng): number {
  const r = rng.next();
  // Density rising from 0 at 1 (a position reaching 1 is liquidated, so few sit just above it).
  if (r < 0.055) return 1 + 0.1 * Math.sqrt(rng.next());
  if (r < 0.13) return rng.float(1.1, 1.2);
  if (r < 0.93) return 1.2 + 1.8 * rng.next() ** 1.3;
  return rng.float(3, 8);
}

/** Iterates the positions of a plan, market by market; the same plan always yields the same sequence. */
export function* iteratePositions(plan: PositionPlan): Generator<PositionRecord> {
  const { seed, markets, counts, userPool } = plan;
  for (let i = 0; i < markets.length; i++) {
    const n = counts[i] ?? 0;
    const market = markets[i];
    if (n === 0 || !market) continue;
    const rng = rngFor(seed, `positions|${market.uniqueKey}`);
    // The market's borrowers: a stride permutation of the user pool (a stream of its own).
    const users = rngFor(seed, `borrowers|${market.uniqueKey}`);
    const start = users.int(0, userPool - 1);
    let step = users.int(1, userPool);
    while (gcd(step, userPool) !== 1) step++;
    const pool = accountPoolOf(market.protocol, market.uniqueKey);
    // Euler: the sub-account this controller vault is borrowed from (1 to 255).
    const subAccount = market.protocol === 'euler' && pool !== null ? 1 + (hash32(`evc|${pool}`) % 255) : 0;
    const owners: string[] = new Array(n);
    const weights = new Float64Array(n);
    const hfs = new Float64Array(n);
    const supplied = new Float64Array(n);
    let sum = 0;
    for (let k = 0; k < n; k++) {
      const wallet = userAddress(seed, (start + k * step) % userPool);
      const user = subAccount > 0 ? evcSubAccount(wallet, subAccount) : wallet;
      owners[k] = user;
      const drawn = drawHealthFactor(rng);
      // One health factor per account: drawn from the account's own stream.
      hfs[k] =
        pool === null ? drawn : drawHealthFactor(rngFor(seed, `account|${market.chainId}|${pool}|${user}`));
      supplied[k] = rng.chance(SUPPLYING_SHARE) ? rng.float(0.05, 1.5) : 0;
      const w = Math.exp(1.5 * rng.normal()) * riskWeight(hfs[k] as number);
      weights[k] = w;
      sum += w;
    }
    // Debts in cents adding up to the market's borrow: a cent each, floors of the weighted
    // rest, then the cents left to the largest.
    const cents = Math.round(market.borrow * 100);
    const each = cents >= n ? 1 : 0;
    const debts = new Float64Array(n);
    let given = 0;
    let largest = 0;
    for (let k = 0; k < n; k++) {
      debts[k] = each + Math.floor(((cents - each * n) * (weights[k] as number)) / sum);
      given += debts[k] as number;
      if ((debts[k] as number) > (debts[largest] as number)) largest = k;
    }
    debts[largest] = (debts[largest] as number) + (cents - given);
    for (let k = 0; k < n; k++) {
      const borrowUsd = (debts[k] as number) / 100;
      const collateralUsd = roundTo(((hfs[k] as number) * borrowUsd) / market.lltv, 2);
      const share = supplied[k] as number;
      const supplyUsd = share > 0 ? roundTo(borrowUsd * share, 2) : 0;
      yield {
        marketKey: market.uniqueKey,
        user: owners[k] as string,
        collateralUsd,
        borrowUsd,
        supplyUsd,
        healthFactor: healthFactor(collateralUsd, market.lltv, borrowUsd),
      };
    }
  }
}
