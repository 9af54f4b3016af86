/**
 * Credit ratings of lending markets and vaults, methodology version RATING_METHODOLOGY_VERSION.
 * Pure functions: figures in (read by the caller from the read model and the stored history),
 * scores out. No I/O and no clock: the instant a figure is of is the caller's business.
 *
 * A market's rating is a 0-100 score, the weighted sum of five component scores (each 0-100,
 * with a one-line explanation), and the grade of that score on the AAA..D scale:
 *
 * | component | weight | what it measures |
 * |---|---|---|
 * | `oracle` | 0.25 | the oracle's provider and type, composition, warnings and feed freshness now |
 * | `lltvBuffer` | 0.25 | the buffer 1 - lltv against a 3-sigma one-day move of the collateral/loan price ratio |
 * | `liquidity` | 0.20 | utilization and the liquidity available to withdraw |
 * | `concentration` | 0.15 | the top-10 share and Herfindahl index of the borrowers' debt |
 * | `liquidations` | 0.15 | liquidations and bad debt over the last 90 days, relative to the borrow |
 *
 * A vault's rating is 0.8 x the supply-weighted mean of its markets' scores plus 0.2 x its
 * diversification (100 x (1 - the Herfindahl index of its allocation shares)).
 *
 * Scores are served to 2 decimal places; the overall score is computed from the component
 * scores as served, and the grade from the overall score as served, so the figures of an
 * answer agree with each other exactly.
 */
import type { AssetFamily } from './asset-family.ts';
import type { OracleProvider, OracleType } from './enums.ts';
import { points } from './precision.ts';
import type { Concentration } from './stress.ts';

/** Version of the methodology: a change of any formula, weight or threshold is a new version. */
export const RATING_METHODOLOGY_VERSION = '2.0.0';

/**
 * Default size floor (USD): a market supplying less, or a vault holding less, is not graded
 * (grade NR). A setting (RATING_SIZE_FLOOR_USD).
 */
export const DEFAULT_RATING_SIZE_FLOOR_USD = 100_000;

/** Days of history the volatility and the liquidation record are read over. */
export const RATING_WINDOW_DAYS = 90;

/**
 * A new rating is recorded in the rating history when its grade differs from the last recorded
 * one, its score differs by at least this many points, or the methodology version changed.
 */
export const RATING_CHANGE_TOLERANCE = 2;

/**
 * Whether a rating differs from the last recorded one enough to be recorded. Between two graded
 * ratings: another grade, another methodology version, or a score at least
 * RATING_CHANGE_TOLERANCE points away (scores as served, 2 decimals; the difference is compared
 * to 2 decimals too). A rating not graded (NR, score null) is a change from a graded one and the
 * reverse; NR after NR is no change, whatever its reason (the reason states figures, such as
 * the supply below the size floor, that move every day) or its methodology version (there is no
 * score whose meaning the version changes).
 */
export function ratingChanged(
  last: { grade: string; score: number | null; methodology: string },
  now: { grade: string; score: number | null; methodology: string },
): boolean {
  if (last.score === null || now.score === null) return (last.score === null) !== (now.score === null);
  return (
    last.grade !== now.grade ||
    last.methodology !== now.methodology ||
    points(Math.abs(last.score - now.score)) >= RATING_CHANGE_TOLERANCE
  );
}

/**
 * Score a component whose data is unknown (no borrower positions known, no stored history) is
 * shown with; a market with such a component is not graded (NR), so no grade rests on it.
 */
export const UNKNOWN_SCORE = 50;

/** The grade of what is not graded: below the size floor, or a component without its data. */
export const NOT_RATED = 'NR';
export type RatedGrade = Grade | typeof NOT_RATED;

// ---- grades ---------------------------------------------------------------------------------

export const GRADES = ['AAA', 'AA', 'A', 'BBB', 'BB', 'B', 'CCC', 'CC', 'C', 'D'] as const;
export type Grade = (typeof GRADES)[number];

/** Each grade's lowest score (inclusive), best first; D is everything below 10. */
export const GRADE_SCALE: readonly { grade: Grade; minScore: number; meaning: string }[] = [
  { grade: 'AAA', minScore: 90, meaning: 'Minimal risk: every component strong.' },
  { grade: 'AA', minScore: 80, meaning: 'Very low risk.' },
  { grade: 'A', minScore: 70, meaning: 'Low risk; one component weaker.' },
  { grade: 'BBB', minScore: 60, meaning: 'Moderate risk: adequate, sensitive to adverse moves.' },
  { grade: 'BB', minScore: 50, meaning: 'Elevated risk.' },
  { grade: 'B', minScore: 40, meaning: 'High risk.' },
  { grade: 'CCC', minScore: 30, meaning: 'Very high risk: several weak components.' },
  { grade: 'CC', minScore: 20, meaning: 'Severe risk.' },
  { grade: 'C', minScore: 10, meaning: 'Near failure on most components.' },
  { grade: 'D', minScore: 0, meaning: 'Failing: stale or missing oracle, no buffer, bad debt.' },
];

/** The grade of a 0-100 score: the first grade of GRADE_SCALE whose minScore it reaches (NaN: D). */
export function gradeOf(score: number): Grade {
  for (const g of GRADE_SCALE) if (score >= g.minScore) return g.grade;
  return 'D';
}

/** A component's score (0 to 100) and why, in one line. */
export interface ComponentScore {
  score: number;
  explanation: string;
  /** Set when the component could not be computed from data (its score is then UNKNOWN_SCORE): why. */
  unknown?: string;
}

const clamp01 = (x: number) => (x <= 0 ? 0 : x >= 1 ? 1 : x);
const clamp100 = (x: number) => (x <= 0 ? 0 : x >= 100 ? 100 : x);
/** A linear ramp: 0 at or below `zero`, 1 at or above `full` (zero < full). */
const ramp = (x: number, zero: number, full: number) => clamp01((x - zero) / (full - zero));
const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)} %`;
/** Whole dollars with thousands separators: `$1,234,567`. */
const dollars = (x: number) => `$${String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;

// ---- 1. oracle ------------------------------------------------------------------------------

/** Base score of an oracle by its provider (before penalties). */
export const PROVIDER_SCORES: Readonly<Record<OracleProvider, number>> = Object.freeze({
  Chainlink: 90,
  Chronicle: 85,
  Redstone: 80,
  Pyth: 80,
  API3: 75,
  Pendle: 75,
  Uniswap: 60,
  Unknown: 40,
});

/** Points taken off an oracle's base score. */
export const ORACLE_PENALTIES = Object.freeze({
  /** Type `Custom`: bespoke contract logic, not a known adapter. */
  customType: 10,
  /** A price composed from several feeds: more parts that can fail. */
  composite: 5,
  /** Per warning the oracle carries, at most maxWarnings in all. */
  perWarning: 10,
  maxWarnings: 30,
  /** Stale (stalest feed past its heartbeat, "Oracle health" (docs/decisions.md)): staleMin, growing to staleMax at two heartbeats. */
  staleMin: 25,
  staleMax: 50,
  /** An oracle whose feeds' freshness is unknown (no feed listed). */
  noFeedData: 10,
});

export interface OracleFacts {
  provider: OracleProvider;
  type: OracleType;
  isComposite: boolean;
  /** Feeds listed. */
  feeds: number;
  /** Warnings the oracle carries. */
  warnings: number;
  /** secondsSinceUpdate / heartbeat of the stalest feed now (docs/decisions.md "Oracle health"); null without feed data. */
  stalenessRatio: number | null;
}

/**
 * Oracle quality and freshness: PROVIDER_SCORES[provider], less 10 for a `Custom` type, 5 for
 * a composite, 10 per warning (at most 30), and, when the stalest feed is past its heartbeat
 * (stalenessRatio s > 1), 25 + 25 x min(1, s - 1); 10 when no feed's freshness is known.
 * Clamped to 0-100. No oracle at all: 0.
 */
export function oracleScore(o: OracleFacts | null): ComponentScore {
  if (o === null) return { score: 0, explanation: 'No oracle data: the price source is unknown.' };
  const p = ORACLE_PENALTIES;
  let score = PROVIDER_SCORES[o.provider] ?? PROVIDER_SCORES.Unknown;
  const notes: string[] = [];
  if (o.type === 'Custom') score -= p.customType;
  if (o.isComposite) score -= p.composite;
  score -= Math.min(p.maxWarnings, p.perWarning * Math.max(0, o.warnings));
  const s = o.stalenessRatio;
  if (s === null) {
    score -= p.noFeedData;
    notes.push('no feed freshness data');
  } else if (s > 1) {
    score -= p.staleMin + (p.staleMax - p.staleMin) * Math.min(1, s - 1);
    notes.push(`STALE: stalest feed ${s.toFixed(2)} heartbeats since its last update`);
  } else {
    notes.push(`stalest feed at ${s.toFixed(2)} of its heartbeat`);
  }
  const shape = `${o.feeds} feed${o.feeds === 1 ? '' : 's'}${o.isComposite ? ', composite' : ''}`;
  const warnings = o.warnings === 0 ? 'no warning' : `${o.warnings} warning${o.warnings === 1 ? '' : 's'}`;
  return {
    score: clamp100(score),
    explanation: `${o.provider} ${o.type} (${shape}), ${warnings}; ${notes.join('; ')}.`,
  };
}

// ---- 2. LLTV buffer against volatility ---------------------------------------------------------

/**
 * Annualized volatility against USD assumed per asset family when no price history is stored
 * (src/domain/asset-family.ts).
 */
export const FAMILY_VOLATILITY: Readonly<Record<AssetFamily, number>> = Object.freeze({
  usd: 0.03,
  'usd-yield': 0.04,
  eur: 0.08,
  gold: 0.15,
  pt: 0.1,
  eth: 0.75,
  'eth-lst': 0.75,
  btc: 0.6,
  major: 0.9,
  other: 1.2,
});

/** Annualized volatility of the price ratio of two assets of one peg (both families in the group). */
export const PEGGED_VOLATILITY: readonly {
  peg: string;
  families: readonly AssetFamily[];
  volatility: number;
}[] = [
  { peg: 'usd', families: ['usd', 'usd-yield'], volatility: 0.03 },
  { peg: 'eth', families: ['eth', 'eth-lst'], volatility: 0.06 },
  { peg: 'btc', families: ['btc'], volatility: 0.04 },
  { peg: 'eur', families: ['eur'], volatility: 0.03 },
  { peg: 'gold', families: ['gold'], volatility: 0.05 },
];

/**
 * The default annualized volatility of a collateral/loan price ratio: the peg's when both
 * families share one (PEGGED_VOLATILITY), else the larger of the two families' own
 * (FAMILY_VOLATILITY: the more volatile leg dominates the ratio).
 */
export function familyVolatility(collateral: AssetFamily, loan: AssetFamily): number {
  const peg = PEGGED_VOLATILITY.find((p) => p.families.includes(collateral) && p.families.includes(loan));
  if (peg) return peg.volatility;
  return Math.max(FAMILY_VOLATILITY[collateral], FAMILY_VOLATILITY[loan]);
}

/** Parameters of the LLTV buffer component. */
export const BUFFER = Object.freeze({
  /** The move the buffer is held against: kSigma standard deviations... */
  kSigma: 3,
  /** ...over the time a liquidation may take, in days. */
  horizonDays: 1,
  /** Coverage (buffer / move) scoring 0, and 100. */
  coverageZero: 0.5,
  coverageFull: 2.5,
  /** Fewest daily returns for a volatility measured from history (else the family default). */
  minReturns: 7,
});

const DAY_MS = 86_400_000;

/** A token's last USD price of a UTC day; `day` = floor(epoch ms / 86,400,000). */
export interface DailyClose {
  day: number;
  price: number;
}

/**
 * The last price of each UTC day from prices in ascending time (epoch ms); non-positive and
 * non-finite prices are ignored.
 */
export function dailyCloses(prices: Iterable<{ at: number; priceUsd: number }>): DailyClose[] {
  const out: DailyClose[] = [];
  for (const p of prices) {
    if (!(p.priceUsd > 0) || !Number.isFinite(p.priceUsd)) continue;
    const day = Math.floor(p.at / DAY_MS);
    const last = out.at(-1);
    if (last?.day === day) last.price = p.priceUsd;
    else out.push({ day, price: p.priceUsd });
  }
  return out;
}

/**
 * Daily log returns of the ratio collateral / loan: ln(R_d / R_(d-1)) for every day d such
 * that both tokens closed on d and on d - 1 (a gap skips the return rather than spanning it).
 * Both series ascending by day.
 */
export function ratioLogReturns(collateral: readonly DailyClose[], loan: readonly DailyClose[]): number[] {
  const loanByDay = new Map(loan.map((c) => [c.day, c.price]));
  const out: number[] = [];
  let prev: { day: number; ratio: number } | null = null;
  for (const c of collateral) {
    const l = loanByDay.get(c.day);
    if (l === undefined) {
      prev = null;
      continue;
    }
    const ratio = c.price / l;
    if (prev !== null && prev.day === c.day - 1) out.push(Math.log(ratio / prev.ratio));
    prev = { day: c.day, ratio };
  }
  return out;
}

/**
 * Annualized volatility of daily log returns: their sample standard deviation (n - 1) times
 * sqrt(365). Precondition: at least two returns (else RangeError).
 */
export function annualizedVolatility(returns: readonly number[]): number {
  const n = returns.length;
  if (n < 2) throw new RangeError(`need at least two returns, got ${n}`);
  let mean = 0;
  for (const r of returns) mean += r;
  mean /= n;
  let ss = 0;
  for (const r of returns) ss += (r - mean) ** 2;
  return Math.sqrt(ss / (n - 1)) * Math.sqrt(365);
}

/** The volatility a market is rated with, and where it comes from. */
export interface VolatilityEstimate {
  /** Annualized volatility of the collateral/loan price ratio. */
  annualized: number;
  /** `history`: measured from the stored daily returns; `family`: the family default. */
  source: 'history' | 'family';
  /** Daily returns measured (0 for the family default). */
  returns: number;
  /** The families of the collateral and the loan token. */
  families: readonly [AssetFamily, AssetFamily];
}

/**
 * The volatility of a pair: measured from `returns` when there are at least BUFFER.minReturns,
 * else familyVolatility of the two families.
 */
export function estimateVolatility(
  returns: readonly number[],
  collateral: AssetFamily,
  loan: AssetFamily,
): VolatilityEstimate {
  const families = [collateral, loan] as const;
  if (returns.length >= BUFFER.minReturns)
    return {
      annualized: annualizedVolatility(returns),
      source: 'history',
      returns: returns.length,
      families,
    };
  return { annualized: familyVolatility(collateral, loan), source: 'family', returns: 0, families };
}

export interface BufferScore extends ComponentScore {
  /** The kSigma move over the horizon, relative (0.11 = 11 %). */
  move: number;
  /** (1 - lltv) / move; Infinity when the move is 0. */
  coverage: number;
}

/**
 * LLTV buffer against volatility: a borrower at the LLTV is liquidated; lenders lose only if
 * the collateral/loan price ratio falls by more than the buffer 1 - lltv before the
 * liquidation completes. The move held against it is kSigma x sigma_daily x sqrt(horizonDays),
 * sigma_daily = annualized / sqrt(365); coverage = buffer / move, scored 100 x
 * (coverage - 0.5) / (2.5 - 0.5), clamped to 0-100.
 */
export function lltvBufferScore(lltv: number, vol: VolatilityEstimate): BufferScore {
  const buffer = 1 - lltv;
  const move = BUFFER.kSigma * (vol.annualized / Math.sqrt(365)) * Math.sqrt(BUFFER.horizonDays);
  const coverage = buffer <= 0 ? 0 : move > 0 ? buffer / move : Number.POSITIVE_INFINITY;
  const score = 100 * ramp(coverage, BUFFER.coverageZero, BUFFER.coverageFull);
  const source =
    vol.source === 'history'
      ? `measured over ${vol.returns} daily returns`
      : `no stored price history: ${vol.families[0]}/${vol.families[1]} family default`;
  const covered = Number.isFinite(coverage) ? `${coverage.toFixed(2)}x` : 'unbounded';
  return {
    score,
    move,
    coverage,
    explanation:
      `LLTV ${pct(lltv)}: buffer ${pct(buffer)} against a ${BUFFER.kSigma}-sigma ${BUFFER.horizonDays}-day move of ` +
      `${pct(move, 2)} (volatility ${pct(vol.annualized)}/yr, ${source}); coverage ${covered}.`,
  };
}

// ---- 3. liquidity and utilization ---------------------------------------------------------------

export const LIQUIDITY = Object.freeze({
  /** Utilization up to which the utilization part scores 100; it falls linearly to 0 at 100 %. */
  fullUtilization: 0.85,
  /** Available liquidity (USD) scoring 0 and 100 on a log10 scale between. */
  depthZeroUsd: 10_000,
  depthFullUsd: 10_000_000,
  utilizationWeight: 0.6,
  depthWeight: 0.4,
});

/**
 * Liquidity and utilization: 0.6 x U + 0.4 x A, where U = 100 up to 85 % utilization, falling
 * linearly to 0 at 100 %, and A = 100 x (log10(available) - 4) / 3, clamped (USD 10,000 of
 * available liquidity scores 0, USD 10,000,000 scores 100).
 */
export function liquidityScore(utilization: number, availableUsd: number | null): ComponentScore {
  const L = LIQUIDITY;
  const u = 100 * (1 - ramp(utilization, L.fullUtilization, 1));
  if (availableUsd === null)
    return {
      score: L.utilizationWeight * u + L.depthWeight * UNKNOWN_SCORE,
      explanation: `Utilization ${pct(utilization)}; the depth is scored as unknown (no USD price of the loan token).`,
      unknown: 'the liquidity available has no USD value (no USD price of the loan token)',
    };
  const depth =
    availableUsd > 0
      ? 100 * ramp(Math.log10(availableUsd), Math.log10(L.depthZeroUsd), Math.log10(L.depthFullUsd))
      : 0;
  return {
    score: L.utilizationWeight * u + L.depthWeight * depth,
    explanation: `Utilization ${pct(utilization)}, ${dollars(Math.max(0, availableUsd))} available to withdraw.`,
  };
}

// ---- 4. borrower concentration --------------------------------------------------------------------

/**
 * Concentration of the borrowers' debt (src/domain/stress.ts `concentration`): 100 x (1 -
 * (top10Share + herfindahl) / 2). No borrower with debt: 100 when the market has no borrow,
 * UNKNOWN_SCORE when it has borrow but none of its borrowers is known.
 */
export function concentrationScore(c: Concentration, marketBorrowUsd: number | null): ComponentScore {
  if (c.borrowers === 0) {
    if (marketBorrowUsd === null)
      return {
        score: UNKNOWN_SCORE,
        explanation: 'No borrower position served without a USD price of both tokens: scored as unknown.',
        unknown: 'no borrower position is served without a USD price of both tokens',
      };
    return marketBorrowUsd > 0
      ? {
          score: UNKNOWN_SCORE,
          explanation: `No borrower position known for ${dollars(marketBorrowUsd)} of borrow: scored as unknown.`,
          unknown: `no borrower position is known for its ${dollars(marketBorrowUsd)} of borrow`,
        }
      : { score: 100, explanation: 'No debt: no borrower to be concentrated.' };
  }
  const top = Math.min(10, c.borrowers);
  return {
    score: 100 * (1 - (c.top10Share + c.herfindahl) / 2),
    explanation:
      `${c.borrowers} borrower${c.borrowers === 1 ? '' : 's'}: the largest ${top} owe ${pct(c.top10Share)} of ` +
      `the debt, Herfindahl index ${c.herfindahl.toFixed(3)}.`,
  };
}

// ---- 5. liquidations and bad debt ---------------------------------------------------------------------

/** A market's liquidations over the window. */
export interface LiquidationRecord {
  count: number;
  /** Debt repaid by liquidators, USD; null when one of them has no known USD value (docs/decisions.md "Real sources"). */
  repaidUsd: number | null;
  badDebtUsd: number | null;
}

export const LIQUIDATION_PENALTIES = Object.freeze({
  /** Debt repaid by liquidations over the window, as a share of the borrow, that takes repaidMax off. */
  repaidShareFull: 0.25,
  repaidMax: 30,
  /** Bad debt over the window, as a share of the borrow, that takes badDebtMax off. */
  badDebtShareFull: 0.01,
  badDebtMax: 70,
});

/**
 * Liquidation and bad-debt record over the window: 100, less 30 x min(1, (repaid / borrow) /
 * 0.25) and 70 x min(1, (bad debt / borrow) / 0.01). Null record (no stored history for the
 * dataset), or liquidations against a borrow or of amounts of no known USD value: UNKNOWN_SCORE.
 */
export function liquidationScore(h: LiquidationRecord | null, borrowUsd: number | null): ComponentScore {
  if (h === null)
    return {
      score: UNKNOWN_SCORE,
      explanation: `No stored liquidation history for this dataset: scored as unknown.`,
      unknown: 'the dataset has no stored liquidation history',
    };
  if (borrowUsd === null && h.count > 0)
    return {
      score: UNKNOWN_SCORE,
      explanation: `${h.count} liquidation${h.count === 1 ? '' : 's'} in the last ${RATING_WINDOW_DAYS} days, against a borrow of no known USD amount: scored as unknown.`,
      unknown: 'its borrow has no USD value to set its liquidations against',
    };
  if (h.repaidUsd === null || h.badDebtUsd === null)
    return {
      score: UNKNOWN_SCORE,
      explanation: `${h.count} liquidation${h.count === 1 ? '' : 's'} in the last ${RATING_WINDOW_DAYS} days, some whose debt has no known USD value (the loan token had no USD price): scored as unknown.`,
      unknown: 'some of its liquidations have no USD value',
    };
  const P = LIQUIDATION_PENALTIES;
  const share = (x: number) =>
    x <= 0 ? 0 : borrowUsd !== null && borrowUsd > 0 ? x / borrowUsd : Number.POSITIVE_INFINITY;
  const repaid = share(h.repaidUsd);
  const bad = share(h.badDebtUsd);
  const score =
    100 -
    P.repaidMax * Math.min(1, repaid / P.repaidShareFull) -
    P.badDebtMax * Math.min(1, bad / P.badDebtShareFull);
  const of = (x: number) => (Number.isFinite(x) ? `${pct(x, 2)} of borrow` : 'no borrow left');
  return {
    score: clamp100(score),
    explanation:
      h.count === 0
        ? `No liquidation in the last ${RATING_WINDOW_DAYS} days.`
        : `${h.count} liquidation${h.count === 1 ? '' : 's'} in the last ${RATING_WINDOW_DAYS} days repaid ` +
          `${dollars(h.repaidUsd)} (${of(repaid)}); bad debt ${dollars(h.badDebtUsd)} (${of(bad)}).`,
  };
}

// ---- 6-8. size, usage, history ---------------------------------------------------------------------

export const TRACK_RECORD = Object.freeze({
  /** Assets (USD) scoring 100 on the size scale (the size floor scores 0, log10 between). */
  sizeFullUsd: 1_000_000_000,
  /** Borrowers with debt scoring 100 (one scores 0, log10 between). */
  usageFullBorrowers: 1000,
  /** Days of stored price history of the pair scoring 100 (linear from 0). */
  historyFullDays: RATING_WINDOW_DAYS,
});

/**
 * Size: 100 x (log10(assets) - log10(floor)) / (log10(sizeFullUsd) - log10(floor)), clamped:
 * the size floor scores 0, USD 1,000,000,000 scores 100. `what` names the amount ("supplied",
 * "held").
 */
export function sizeScore(assetsUsd: number, floorUsd: number, what: string): ComponentScore {
  const T = TRACK_RECORD;
  const score =
    assetsUsd > 0 ? 100 * ramp(Math.log10(assetsUsd), Math.log10(floorUsd), Math.log10(T.sizeFullUsd)) : 0;
  return {
    score,
    explanation: `${dollars(assetsUsd)} ${what} (the floor of ${dollars(floorUsd)} scores 0, ${dollars(T.sizeFullUsd)} scores 100).`,
  };
}

/** Usage: 100 x log10(borrowers) / log10(usageFullBorrowers), clamped: one borrower scores 0, 1,000 score 100. */
export function usageScore(borrowers: number): ComponentScore {
  const score =
    borrowers > 0 ? 100 * ramp(Math.log10(borrowers), 0, Math.log10(TRACK_RECORD.usageFullBorrowers)) : 0;
  return {
    score,
    explanation: `${borrowers} borrower${borrowers === 1 ? '' : 's'} with debt (1,000 score 100).`,
  };
}

/**
 * History: 100 x min(1, days / historyFullDays), days = the UTC days of the window with a stored
 * price of both tokens. Null `days` (the dataset has no stored history): unknown.
 */
export function historyScore(days: number | null): ComponentScore {
  if (days === null)
    return {
      score: UNKNOWN_SCORE,
      explanation: 'No stored price history for this dataset: scored as unknown.',
      unknown: 'the dataset has no stored price history',
    };
  return {
    score: 100 * clamp01(days / TRACK_RECORD.historyFullDays),
    explanation: `${days} day${days === 1 ? '' : 's'} of stored prices of both tokens in the last ${RATING_WINDOW_DAYS}.`,
  };
}

// ---- the market and the vault ------------------------------------------------------------------

export const MARKET_WEIGHTS = Object.freeze({
  oracle: 0.2,
  lltvBuffer: 0.2,
  liquidity: 0.15,
  concentration: 0.1,
  liquidations: 0.1,
  size: 0.1,
  usage: 0.05,
  history: 0.1,
});
export type MarketComponent = keyof typeof MARKET_WEIGHTS;

export const VAULT_WEIGHTS = Object.freeze({ markets: 0.7, diversification: 0.15, size: 0.15 });
export type VaultComponent = keyof typeof VAULT_WEIGHTS;

/**
 * The overall score of component scores as served (2 decimals): sum of weight x score, to 2
 * decimals, clamped to 0-100. Every component of `weights` must be in `scores`.
 */
export function overallScore<K extends string>(
  scores: Readonly<Record<K, number>>,
  weights: Readonly<Record<K, number>>,
): number {
  let s = 0;
  for (const k of Object.keys(weights) as K[]) s += weights[k] * scores[k];
  return clamp100(points(s));
}

/** A vault's allocation: its USD now, and its market's score (null when the market is not rated). */
export interface VaultAllocationFacts {
  usd: number;
  score: number | null;
}

export interface VaultScores {
  markets: ComponentScore;
  diversification: ComponentScore;
  /** Herfindahl index of the rated allocations' shares (0 when none). */
  herfindahl: number;
  /** The largest rated allocation's share (0 when none). */
  largestShare: number;
  /** Allocations to a rated market. */
  rated: number;
}

/**
 * A vault's components from its allocations. Shares are each rated allocation's USD over
 * their sum (equal shares when that sum is 0). markets = sum of share x market score;
 * diversification = 100 x (1 - sum of share^2). No rated allocation: both 0.
 */
export function vaultScores(allocations: readonly VaultAllocationFacts[]): VaultScores {
  const rated = allocations.filter((a): a is { usd: number; score: number } => a.score !== null);
  if (rated.length === 0) {
    const none = {
      score: 0,
      explanation: 'No allocation to a graded market.',
      unknown: 'it has no allocation to a graded market',
    };
    return { markets: none, diversification: none, herfindahl: 0, largestShare: 0, rated: 0 };
  }
  const total = rated.reduce((s, a) => s + Math.max(0, a.usd), 0);
  let markets = 0;
  let hhi = 0;
  let largest = 0;
  for (const a of rated) {
    const s = total > 0 ? Math.max(0, a.usd) / total : 1 / rated.length;
    markets += s * a.score;
    hhi += s * s;
    largest = Math.max(largest, s);
  }
  const effective = hhi > 0 ? 1 / hhi : 0;
  return {
    markets: {
      score: clamp100(markets),
      explanation: `Supply-weighted score of its ${rated.length} graded market${rated.length === 1 ? '' : 's'} (${dollars(total)} allocated): ${markets.toFixed(2)}.`,
    },
    diversification: {
      score: clamp100(100 * (1 - hhi)),
      explanation:
        `Largest allocation ${pct(largest)} of assets; Herfindahl index ${hhi.toFixed(3)} ` +
        `(${effective.toFixed(1)} markets' worth of diversification).`,
    },
    herfindahl: hhi,
    largestShare: largest,
    rated: rated.length,
  };
}

// ---- the methodology, as served ---------------------------------------------------------------

export interface MethodologyComponent {
  name: string;
  weight: number;
  formula: string;
  parameters: Record<string, number>;
}

export interface RatingMethodology {
  version: string;
  scale: { min: number; max: number; decimals: number };
  grades: { grade: Grade; minScore: number; meaning: string }[];
  markets: MethodologyComponent[];
  vaults: MethodologyComponent[];
  windowDays: number;
  changeTolerance: number;
  unknownScore: number;
  /** Assets (USD) below which a market or vault is not graded. */
  sizeFloorUsd: number;
  notRated: string;
  schedule: string;
}

/** The methodology as the API serves it, from the very constants the formulas use. */
export function ratingMethodology(sizeFloorUsd = DEFAULT_RATING_SIZE_FLOOR_USD): RatingMethodology {
  const familyParameters = Object.fromEntries(
    Object.entries(FAMILY_VOLATILITY).map(([f, v]) => [`familyVolatility.${f}`, v]),
  );
  const pegParameters = Object.fromEntries(
    PEGGED_VOLATILITY.map((p) => [`peggedVolatility.${p.peg}`, p.volatility]),
  );
  return {
    version: RATING_METHODOLOGY_VERSION,
    scale: { min: 0, max: 100, decimals: 2 },
    grades: GRADE_SCALE.map((g) => ({ ...g })),
    markets: [
      {
        name: 'oracle',
        weight: MARKET_WEIGHTS.oracle,
        formula:
          "The provider's base score (provider.*), less customType for a Custom oracle, composite for a price " +
          'composed from several feeds, perWarning per warning (at most maxWarnings), noFeedData when no feed is ' +
          'listed, and, when the stalest feed is past its heartbeat (stalenessRatio s > 1: its last update is older than its heartbeat), ' +
          'staleMin + (staleMax - staleMin) x min(1, s - 1). No oracle: 0. Clamped to 0-100.',
        parameters: {
          ...Object.fromEntries(Object.entries(PROVIDER_SCORES).map(([p, s]) => [`provider.${p}`, s])),
          ...ORACLE_PENALTIES,
        },
      },
      {
        name: 'lltvBuffer',
        weight: MARKET_WEIGHTS.lltvBuffer,
        formula:
          'Volatility sigma of the collateral/loan price ratio: the sample standard deviation of its daily log ' +
          `returns over the last ${RATING_WINDOW_DAYS} days (last stored hourly price of each UTC day, consecutive ` +
          'days only) times sqrt(365), when there are at least minReturns; else the default of the two asset ' +
          "families: the peg's (peggedVolatility.*) when both share one, else the larger familyVolatility.*. " +
          'move = kSigma x sigma / sqrt(365) x sqrt(horizonDays); coverage = (1 - lltv) / move; score = 100 x ' +
          '(coverage - coverageZero) / (coverageFull - coverageZero), clamped to 0-100.',
        parameters: { ...BUFFER, ...familyParameters, ...pegParameters },
      },
      {
        name: 'liquidity',
        weight: MARKET_WEIGHTS.liquidity,
        formula:
          'utilizationWeight x U + depthWeight x A. U = 100 up to fullUtilization, falling linearly to 0 at 100 % ' +
          'utilization. A = 100 x (log10(available USD) - log10(depthZeroUsd)) / (log10(depthFullUsd) - ' +
          'log10(depthZeroUsd)), clamped to 0-100.',
        parameters: { ...LIQUIDITY },
      },
      {
        name: 'concentration',
        weight: MARKET_WEIGHTS.concentration,
        formula:
          "Over the borrowers' debts now: 100 x (1 - (top10Share + herfindahl) / 2), top10Share the share of the " +
          'debt owed by the 10 largest borrowers, herfindahl the sum of squared shares. No debt: 100; borrow but ' +
          'no borrower known: not graded.',
        parameters: { unknownScore: UNKNOWN_SCORE },
      },
      {
        name: 'liquidations',
        weight: MARKET_WEIGHTS.liquidations,
        formula:
          `Over the liquidations of the last ${RATING_WINDOW_DAYS} days: 100 - repaidMax x min(1, (repaid USD / borrow) / ` +
          'repaidShareFull) - badDebtMax x min(1, (bad debt USD / borrow) / badDebtShareFull), clamped to 0-100. ' +
          'No stored history for the dataset: not graded.',
        parameters: { ...LIQUIDATION_PENALTIES, windowDays: RATING_WINDOW_DAYS, unknownScore: UNKNOWN_SCORE },
      },
      {
        name: 'size',
        weight: MARKET_WEIGHTS.size,
        formula:
          '100 x (log10(supply USD) - log10(sizeFloorUsd)) / (log10(sizeFullUsd) - log10(sizeFloorUsd)), clamped to ' +
          '0-100. Supply below sizeFloorUsd, or of no USD value: not graded.',
        parameters: { sizeFloorUsd, sizeFullUsd: TRACK_RECORD.sizeFullUsd },
      },
      {
        name: 'usage',
        weight: MARKET_WEIGHTS.usage,
        formula: '100 x log10(borrowers with debt) / log10(usageFullBorrowers), clamped to 0-100 (none: 0).',
        parameters: { usageFullBorrowers: TRACK_RECORD.usageFullBorrowers },
      },
      {
        name: 'history',
        weight: MARKET_WEIGHTS.history,
        formula:
          `100 x min(1, days / historyFullDays), days = the UTC days of the last ${RATING_WINDOW_DAYS} with a stored ` +
          'price of both tokens. No stored history for the dataset: not graded.',
        parameters: { historyFullDays: TRACK_RECORD.historyFullDays },
      },
    ],
    vaults: [
      {
        name: 'markets',
        weight: VAULT_WEIGHTS.markets,
        formula:
          "Sum over the vault's allocations to graded markets of share x market score, share = the allocation's USD " +
          'now over the sum of them (equal shares when that sum is 0). No allocation to a graded market: not graded.',
        parameters: {},
      },
      {
        name: 'diversification',
        weight: VAULT_WEIGHTS.diversification,
        formula: "100 x (1 - the sum of the graded allocations' squared shares).",
        parameters: {},
      },
      {
        name: 'size',
        weight: VAULT_WEIGHTS.size,
        formula:
          '100 x (log10(total assets USD) - log10(sizeFloorUsd)) / (log10(sizeFullUsd) - log10(sizeFloorUsd)), ' +
          'clamped to 0-100. Below sizeFloorUsd: not graded.',
        parameters: { sizeFloorUsd, sizeFullUsd: TRACK_RECORD.sizeFullUsd },
      },
    ],
    windowDays: RATING_WINDOW_DAYS,
    changeTolerance: RATING_CHANGE_TOLERANCE,
    unknownScore: UNKNOWN_SCORE,
    sizeFloorUsd,
    notRated:
      'Grade NR, score null, with the reason: a market supplying less than sizeFloorUsd (or of no USD value), or ' +
      'one of whose components has no data to be computed from (no stored history, borrow without a known ' +
      'borrower, amounts of no USD value); a vault holding less than sizeFloorUsd, or with no allocation to a ' +
      'graded market. Such a component is shown with unknownScore, and no grade rests on it.',
    schedule:
      'Computed at start-up, daily at 00:00 UTC and when the dataset is replaced; a new rating is recorded in the ' +
      'history when its grade changes, its score moves by changeTolerance points or more, the version changes, or ' +
      'it stops or starts being graded (NR, with its reason); NR after NR is no change, whatever its reason.',
  };
}
