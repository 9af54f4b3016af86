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
 *
 * Followed forward (OracleSimulator.cursor), a feed keeps the state of its current cell, so a
 * caller asking every few seconds (a server's ticks) makes each minute's check once; a caller
 * scanning long windows may hand in each asset's prices on the minute grid (RoundPrices.
 * checkPrices), and a cell without outage is then scanned over those arrays. The rounds are the
 * same whichever way they are asked for.
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
  /**
   * A stop of the feed besides its random outages: it posts nothing in [startMs, endMs), then
   * posts a recovery round (a feed the dataset shows as stopped at the snapshot, resuming).
   */
  stop?: StaleWindow;
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

/** An asset's prices at every check of a window: prices[j] is its price at fromMs + j * CHECK_STEP_MS. */
export interface CheckPrices {
  fromMs: number;
  prices: Float64Array;
}

/** The prices the simulator reads: a price model, or anything answering like one. */
export interface RoundPrices extends Pick<PriceModel, 'seed' | 'startMs' | 'has' | 'priceAt'> {
  /**
   * Optional, for scans of long windows: an asset's prices on a grid of checks the caller
   * holds already, each equal to priceAt at its time (null when it has none). A cell without
   * outage is then scanned over the arrays instead of asking priceAt check by check.
   */
  checkPrices?(key: string): CheckPrices | null;
}

export interface OracleSimulator {
  /** Rounds with fromMs <= updatedAtMs <= toMs, in time order (none before the model's start). */
  rounds(feed: FeedSpec, fromMs: number, toMs: number): OracleRound[];
  /** The last round at or before tMs, null if none; replays at most a heartbeat plus any outage. */
  latestRound(feed: FeedSpec, tMs: number): OracleRound | null;
  /** The feed's outages overlapping [fromMs, toMs], in start order (they may overlap each other). */
  staleWindows(feed: FeedSpec, fromMs: number, toMs: number): StaleWindow[];
  /** A cursor that follows the feed forward in time (see RoundCursor). */
  cursor(feed: FeedSpec): RoundCursor;
}

/**
 * One feed followed forward in time, for callers that ask again and again a little later (a
 * server's ticks, a generator writing a year window by window): it keeps the state of the
 * current grid cell, so each check is made once, whatever the number of calls. Rounds are
 * those of OracleSimulator.rounds, exactly.
 */
export interface RoundCursor {
  /** The time the cursor stands at (ms): every check up to it is made; NaN before the first call. */
  readonly at: number;
  /**
   * Stands at tMs and returns the last round at or before it (null if none). Forward by at most
   * a heartbeat from `at`, only the checks in between are made; otherwise (first call, a jump,
   * time going back) the current cell is replayed like latestRound.
   */
  latestAt(tMs: number): OracleRound | null;
  /**
   * Moves forward to tMs (>= at; the first call seeks like latestAt) and appends the rounds
   * with at < updatedAtMs <= tMs to `out`, in time order. Returns the last round at or before tMs.
   */
  advance(tMs: number, out: OracleRound[]): OracleRound | null;
}

/** The windows a feed posts nothing in, overlapping a range, in start order. */
interface Outages {
  between(fromMs: number, toMs: number): { startMs: number; endMs: number }[];
}

interface FeedState {
  phaseMs: number;
  periodMs: number;
  outages: Outages;
  stop: StaleWindow | undefined;
}

/** Random outages, plus the feed's stop if it has one. */
function outagesOf(random: PoissonEvents, stop: StaleWindow | undefined): Outages {
  if (!stop || !(stop.endMs > stop.startMs)) return random;
  return {
    between(fromMs, toMs) {
      const out: { startMs: number; endMs: number }[] = random.between(fromMs, toMs);
      if (stop.startMs <= toMs && stop.endMs > fromMs) {
        out.push({ startMs: stop.startMs, endMs: stop.endMs });
        out.sort((a, b) => a.startMs - b.startMs);
      }
      return out;
    },
  };
}

/**
 * The checks of one grid cell, made in time order and resumable: check times are the whole
 * minutes from the cell's start (CHECK_STEP_MS) plus the end of any outage inside the cell.
 * A check inside an outage posts nothing and forgets the last answer; otherwise the first
 * check with no answer posts (`heartbeat` at the cell's start, else `recovery`), and a later
 * one posts when the answer moved more than the deviation since the last posted.
 */
class CellScan {
  readonly k: number;
  readonly start: number;
  readonly end: number;
  readonly #feed: FeedSpec;
  readonly #answer: (feed: FeedSpec, tMs: number) => number;
  readonly #prices: RoundPrices;
  /** Cells starting before the model's start post nothing. */
  readonly #dead: boolean;
  readonly #outages: readonly { startMs: number; endMs: number }[];
  /** Ends of outages strictly inside the cell, ascending. */
  readonly #ends: number[];
  #endAt = 0;
  #grid: number;
  #last = Number.NaN;
  #have = false;
  #posted = 0;
  readonly #base: bigint;

  constructor(
    feed: FeedSpec,
    s: FeedState,
    k: number,
    prices: RoundPrices,
    answer: (feed: FeedSpec, tMs: number) => number,
  ) {
    this.k = k;
    this.start = s.phaseMs + k * s.periodMs;
    this.end = this.start + s.periodMs;
    this.#feed = feed;
    this.#answer = answer;
    this.#prices = prices;
    this.#dead = this.start < prices.startMs;
    this.#outages = this.#dead ? [] : s.outages.between(this.start, this.end);
    this.#ends = this.#outages
      .map((o) => o.endMs)
      .filter((e) => e > this.start && e < this.end)
      .sort((a, b) => a - b);
    this.#grid = this.start;
    this.#base = BigInt(k) << 24n;
  }

  /** Time of the next check, Infinity once the cell's checks are made. */
  next(): number {
    if (this.#dead) return Number.POSITIVE_INFINITY;
    const g = this.#grid < this.end ? this.#grid : Number.POSITIVE_INFINITY;
    const e =
      this.#endAt < this.#ends.length ? (this.#ends[this.#endAt] as number) : Number.POSITIVE_INFINITY;
    return g < e ? g : e;
  }

  #post(t: number, p: number, reason: OracleRound['reason'], out: OracleRound[] | null): OracleRound {
    const round = { roundId: this.#base + BigInt(this.#posted), answer: p, updatedAtMs: t, reason };
    this.#posted++;
    this.#last = p;
    this.#have = true;
    out?.push(round);
    return round;
  }

  /**
   * The grid checks of a cell without outage that the caller's check prices cover, made over
   * the arrays (the rules of `run`, the same numbers). Returns the last round posted.
   */
  #runOnArrays(untilMs: number, out: OracleRound[] | null): OracleRound | null {
    const feed = this.#feed;
    const a = this.#prices.checkPrices?.(feed.asset);
    if (!a) return null;
    const q = feed.quote === undefined ? null : this.#prices.checkPrices?.(feed.quote);
    if (q === undefined || (q !== null && (q.fromMs !== a.fromMs || q.prices.length !== a.prices.length)))
      return null;
    let j = (this.#grid - a.fromMs) / CHECK_STEP_MS;
    if (!(j >= 0 && Number.isInteger(j))) return null;
    const last = Math.min(
      a.prices.length - 1,
      Math.floor((Math.min(untilMs, this.end - 1) - a.fromMs) / CHECK_STEP_MS),
    );
    const ap = a.prices;
    const qp = q?.prices;
    const deviation = feed.deviation;
    let latest: OracleRound | null = null;
    for (; j <= last; j++) {
      const p = qp ? (ap[j] as number) / (qp[j] as number) : (ap[j] as number);
      if (!this.#have) {
        const t = a.fromMs + j * CHECK_STEP_MS;
        latest = this.#post(t, p, t === this.start ? 'heartbeat' : 'recovery', out);
      } else if (Math.abs(p / this.#last - 1) > deviation) {
        latest = this.#post(a.fromMs + j * CHECK_STEP_MS, p, 'deviation', out);
      }
    }
    if (j * CHECK_STEP_MS + a.fromMs > this.#grid) this.#grid = a.fromMs + j * CHECK_STEP_MS;
    return latest;
  }

  /** Makes the checks up to untilMs; appends the rounds posted to `out` (when given) and returns the last. */
  run(untilMs: number, out: OracleRound[] | null): OracleRound | null {
    let latest: OracleRound | null = null;
    if (!this.#dead && this.#outages.length === 0 && this.#prices.checkPrices)
      latest = this.#runOnArrays(untilMs, out);
    for (let t = this.next(); t <= untilMs && t < this.end; t = this.next()) {
      if (this.#grid === t) this.#grid += CHECK_STEP_MS;
      while (this.#endAt < this.#ends.length && (this.#ends[this.#endAt] as number) <= t) this.#endAt++;
      if (this.#outages.length > 0 && this.#outages.some((o) => o.startMs <= t && t < o.endMs)) {
        this.#have = false;
        continue;
      }
      const p = this.#answer(this.#feed, t);
      let reason: OracleRound['reason'] | null = null;
      if (!this.#have) reason = t === this.start ? 'heartbeat' : 'recovery';
      else if (Math.abs(p / this.#last - 1) > this.#feed.deviation) reason = 'deviation';
      if (reason) latest = this.#post(t, p, reason, out);
    }
    return latest;
  }
}

/** Oracle rounds over a price model; per-feed state is memoized by feed key. */
export function createOracleSimulator(model: RoundPrices): OracleSimulator {
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
    if (!s || s.periodMs !== feed.heartbeatSec * 1000 || s.stop !== feed.stop) {
      const stream = streamId(model.seed, `feed|${feed.key}`);
      const periodMs = feed.heartbeatSec * 1000;
      const minutes = Math.max(1, Math.floor(periodMs / MINUTE_MS));
      s = {
        phaseMs: (hashAt(stream, 0) % minutes) * MINUTE_MS,
        periodMs,
        outages: outagesOf(
          new PoissonEvents(streamId(model.seed, `outage|${feed.key}`), FEED_OUTAGES),
          feed.stop,
        ),
        stop: feed.stop,
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

  function scan(feed: FeedSpec, s: FeedState, k: number): CellScan {
    return new CellScan(feed, s, k, model, answerAt);
  }

  /** The last round of the cells before k (back to the model's start), null if none. */
  function latestBefore(feed: FeedSpec, s: FeedState, k: number): OracleRound | null {
    for (let j = k - 1; s.phaseMs + j * s.periodMs >= model.startMs; j--) {
      const last = scan(feed, s, j).run(Number.POSITIVE_INFINITY, null);
      if (last) return last;
    }
    return null;
  }

  return {
    rounds(feed, fromMs, toMs) {
      const s = stateOf(feed);
      const from = Math.max(fromMs, model.startMs);
      const out: OracleRound[] = [];
      if (!(toMs >= from)) return out;
      const cell: OracleRound[] = [];
      for (let k = cellOf(s, from), last = cellOf(s, toMs); k <= last; k++) {
        cell.length = 0;
        scan(feed, s, k).run(toMs, cell);
        for (const r of cell) if (r.updatedAtMs >= from) out.push(r);
      }
      return out;
    },
    latestRound(feed, tMs) {
      const s = stateOf(feed);
      if (!(tMs >= model.startMs)) return null;
      const k = cellOf(s, tMs);
      return scan(feed, s, k).run(tMs, null) ?? latestBefore(feed, s, k);
    },
    staleWindows(feed, fromMs, toMs) {
      return stateOf(feed)
        .outages.between(fromMs, toMs)
        .map((o) => ({ startMs: o.startMs, endMs: o.endMs }));
    },
    cursor(feed) {
      const s = stateOf(feed);
      let cell: CellScan | null = null;
      let latest: OracleRound | null = null;
      let at = Number.NaN;
      const seek = (tMs: number): OracleRound | null => {
        at = tMs;
        if (!(tMs >= model.startMs)) {
          // Before the model's start: the cell holding the start, none of its checks made.
          cell = scan(feed, s, cellOf(s, model.startMs));
          latest = null;
          return null;
        }
        const k = cellOf(s, tMs);
        cell = scan(feed, s, k);
        latest = cell.run(tMs, null) ?? latestBefore(feed, s, k);
        return latest;
      };
      const forward = (tMs: number, out: OracleRound[] | null): OracleRound | null => {
        if (cell === null) return seek(tMs);
        at = tMs;
        for (;;) {
          const r = cell.run(tMs, out);
          if (r) latest = r;
          if (cell.end > tMs) return latest;
          cell = scan(feed, s, cell.k + 1);
        }
      };
      return {
        get at() {
          return at;
        },
        latestAt(tMs) {
          if (!(tMs >= at && tMs - at <= s.periodMs)) return seek(tMs);
          return forward(tMs, null);
        },
        advance(tMs, out) {
          if (Number.isNaN(at)) return seek(tMs);
          if (!(tMs >= at)) throw new RangeError('a cursor only moves forward');
          return forward(tMs, out);
        },
      };
    },
  };
}
