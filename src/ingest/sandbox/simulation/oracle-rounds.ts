/**
 * Oracle rounds a push feed (Chainlink style) would have posted over a simulated price path:
 * a round when the price moved more than the deviation threshold since the last answer, and
 * at least one per heartbeat, except while the feed is down.
 *
 * The heartbeat rule is kept on a fixed per-feed grid: a round is posted at every grid point
 * (phase + k * heartbeat, the phase a whole minute from the seed), and between two grid points
 * the price is checked every minute against the last answer. Rounds are therefore never more
 * than a heartbeat apart and never let the price stray beyond the threshold at a checked minute,
 * like a real feed; unlike a real feed, a heartbeat round can come sooner than a heartbeat after
 * a deviation round. That is the price of locality: the rounds of one grid cell depend on that
 * cell alone, so the latest round at any time is found by replaying at most one heartbeat (plus
 * the cells of an outage), never the year before.
 *
 * Outages: a few times a year per feed (FEED_OUTAGES) the feed posts nothing for 1 to 12 hours;
 * the first check after it posts a `recovery` round, whatever the price did meanwhile.
 */
import { HOUR_MS, hashAt, MINUTE_MS, PoissonEvents, streamId } from './noise.ts';
import type { PriceModel } from './price-model.ts';

/** A feed to simulate. */
export interface FeedSpec {
  /** Unique feed id (chain and address, say): outages and the grid phase hang off it. */
  key: string;
  /** Asset key in the price model whose price the feed reports. */
  asset: string;
  /** Optional asset key to divide by (an X / ETH feed); the answer is then asset / quote. */
  quote?: string;
  /** Deviation threshold as a fraction: 0.005 posts when the price moves more than 0.5 %. */
  deviation: number;
  /** Heartbeat, seconds. */
  heartbeatSec: number;
}

export interface OracleRound {
  /**
   * Increases strictly with time but is not consecutive: (grid cell index << 24) + the round's
   * position in its cell, so it can be computed without counting every earlier round.
   */
  roundId: bigint;
  answer: number;
  /** Time of the round, ms since the epoch. */
  updatedAtMs: number;
  /** `heartbeat`: a grid point; `deviation`: the threshold was crossed; `recovery`: first round after an outage. */
  reason: 'heartbeat' | 'deviation' | 'recovery';
}

/** A time the feed posted nothing: [startMs, endMs). */
export interface StaleWindow {
  startMs: number;
  endMs: number;
}

/** Feed outages: 3 a year per feed on average (Poisson), each 1 to 12 hours, in whole minutes. */
export const FEED_OUTAGES = {
  ratePerYear: 3,
  minDurationMs: HOUR_MS,
  maxDurationMs: 12 * HOUR_MS,
  minDepth: 0,
  maxDepth: 0,
} as const;

/** How often the price is compared with the last answer between heartbeat rounds. */
export const CHECK_STEP_MS = MINUTE_MS;

export interface OracleSimulator {
  /** Rounds with fromMs <= updatedAtMs <= toMs, in time order (none before the model's start). */
  rounds(feed: FeedSpec, fromMs: number, toMs: number): OracleRound[];
  /** The last round at or before tMs, null if none; replays at most a heartbeat plus any outage. */
  latestRound(feed: FeedSpec, tMs: number): OracleRound | null;
  /** The feed's outages overlapping [fromMs, toMs], in start order (they may overlap each other). */
  staleWindows(feed: FeedSpec, fromMs: number, toMs: number): StaleWindow[];
}

interface FeedState {
  phaseMs: number;
  periodMs: number;
  outages: PoissonEvents;
}

/** Oracle rounds over a price model; per-feed state is memoized by feed key. */
export function createOracleSimulator(model: PriceModel): OracleSimulator {
  const states = new Map<string, FeedState>();

  function stateOf(feed: FeedSpec): FeedState {
    if (!(feed.heartbeatSec > 0) || !Number.isFinite(feed.heartbeatSec)) {
      throw new RangeError(`feed ${feed.key}: heartbeat must be a positive number of seconds`);
    }
    if (!(feed.deviation >= 0) || !Number.isFinite(feed.deviation)) {
      throw new RangeError(`feed ${feed.key}: deviation must be a fraction >= 0`);
    }
    if (!model.has(feed.asset) || (feed.quote !== undefined && !model.has(feed.quote))) {
      throw new RangeError(`feed ${feed.key}: unknown asset`);
    }
    let s = states.get(feed.key);
    if (!s || s.periodMs !== feed.heartbeatSec * 1000) {
      const stream = streamId(model.seed, `feed|${feed.key}`);
      const periodMs = feed.heartbeatSec * 1000;
      const minutes = Math.max(1, Math.floor(periodMs / MINUTE_MS));
      s = {
        phaseMs: (hashAt(stream, 0) % minutes) * MINUTE_MS,
        periodMs,
        outages: new PoissonEvents(streamId(model.seed, `outage|${feed.key}`), FEED_OUTAGES),
      };
      states.set(feed.key, s);
    }
    return s;
  }

  function answerAt(feed: FeedSpec, tMs: number): number {
    const p = model.priceAt(feed.asset, tMs);
    return feed.quote === undefined ? p : p / model.priceAt(feed.quote, tMs);
  }

  function cellOf(s: FeedState, tMs: number): number {
    return Math.floor((tMs - s.phaseMs) / s.periodMs);
  }

  /** Rounds of grid cell k up to untilMs; none for a cell starting before the model's start. */
  function cellRounds(feed: FeedSpec, s: FeedState, k: number, untilMs: number): OracleRound[] {
    const start = s.phaseMs + k * s.periodMs;
    const end = start + s.periodMs;
    const out: OracleRound[] = [];
    if (start < model.startMs) return out;
    const outages = s.outages.between(start, end);
    const times: number[] = [];
    for (let t = start; t < end && t <= untilMs; t += CHECK_STEP_MS) times.push(t);
    const ends = outages.map((o) => o.endMs).filter((e) => e > start && e < end && e <= untilMs);
    if (ends.length > 0) {
      times.push(...ends);
      times.sort((a, b) => a - b);
    }
    const base = BigInt(k) << 24n;
    let last = Number.NaN;
    let have = false;
    let previous = Number.NaN;
    for (const t of times) {
      if (t === previous) continue;
      previous = t;
      if (outages.some((o) => o.startMs <= t && t < o.endMs)) {
        have = false;
        continue;
      }
      const p = answerAt(feed, t);
      let reason: OracleRound['reason'] | null = null;
      if (!have) reason = t === start ? 'heartbeat' : 'recovery';
      else if (Math.abs(p / last - 1) > feed.deviation) reason = 'deviation';
      if (reason) {
        out.push({ roundId: base + BigInt(out.length), answer: p, updatedAtMs: t, reason });
        last = p;
        have = true;
      }
    }
    return out;
  }

  return {
    rounds(feed, fromMs, toMs) {
      const s = stateOf(feed);
      const from = Math.max(fromMs, model.startMs);
      const out: OracleRound[] = [];
      if (!(toMs >= from)) return out;
      for (let k = cellOf(s, from), last = cellOf(s, toMs); k <= last; k++) {
        for (const r of cellRounds(feed, s, k, toMs)) if (r.updatedAtMs >= from) out.push(r);
      }
      return out;
    },
    latestRound(feed, tMs) {
      const s = stateOf(feed);
      if (!(tMs >= model.startMs)) return null;
      for (let k = cellOf(s, tMs); s.phaseMs + k * s.periodMs >= model.startMs; k--) {
        const rounds = cellRounds(feed, s, k, tMs);
        const last = rounds[rounds.length - 1];
        if (last) return last;
      }
      return null;
    },
    staleWindows(feed, fromMs, toMs) {
      return stateOf(feed)
        .outages.between(fromMs, toMs)
        .map((o) => ({ startMs: o.startMs, endMs: o.endMs }));
    },
  };
}
