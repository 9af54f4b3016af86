/**
 * Market-wide crash days: the few days in the simulated year when ETH (and everything that
 * follows it) falls hard within hours. They are what later sets off liquidation waves, so
 * they are placed deterministically from the seed and listed by the price model.
 */
import { createRng } from '../rng.ts';
import { DAY_MS, HOUR_MS, streamId } from './noise.ts';

/** One crash, as ETH sees it. */
export interface CrashEvent {
  /** 00:00 UTC of the crash day, ms. */
  dayMs: number;
  /** When the fall starts, ms (06:00 to 14:00 UTC of that day). */
  startMs: number;
  /** When the trough is reached, ms (3 to 7 hours after the start, same UTC day). */
  troughMs: number;
  /** When the partial rebound is over, ms (36 to 72 hours after the trough). */
  reboundEndMs: number;
  /** ETH's fall from start to trough, as a fraction of the price (0.25 = -25 %), before the hourly noise. */
  ethDrop: number;
  /** Share of the fall (in log terms) won back by reboundEndMs (0.3 to 0.6). */
  rebound: number;
  /** True for the year's largest crash (ETH -25 % to -30 %); the others are -8 % to -18 %. */
  major: boolean;
}

/** Crashes per simulated year: 3 to 5. */
const MIN_CRASHES = 3;
const MAX_CRASHES = 5;
/** Minimum days between two crash days, so each wave can be told apart. */
const MIN_GAP_DAYS = 20;
/** No crash in the first days of the history (a path needs some past before a fall)... */
const LEAD_DAYS = 10;
/** ...nor in the last days, so the rebound is over before asOf and asOf is a calm time. */
const TAIL_DAYS = 5;

/**
 * The crash days in the `historyDays` days before `asOfMs` for a seed. The schedule depends
 * on (seed, asOf's UTC day, historyDays) only. A history too short for the spacing rules gets
 * fewer crashes (none under about 3 weeks).
 */
export function crashSchedule(seed: number, asOfMs: number, historyDays: number): CrashEvent[] {
  const firstDay = Math.floor(asOfMs / DAY_MS) - historyDays;
  const rng = createRng(streamId(seed, `crashes|${firstDay}|${historyDays}`));
  const wanted = rng.int(MIN_CRASHES, MAX_CRASHES);
  const lo = LEAD_DAYS;
  const hi = historyDays - TAIL_DAYS;
  const offsets: number[] = [];
  for (let attempt = 0; attempt < 200 && offsets.length < wanted && hi >= lo; attempt++) {
    const d = rng.int(lo, hi);
    if (offsets.every((o) => Math.abs(o - d) >= MIN_GAP_DAYS)) offsets.push(d);
  }
  const majorIndex = offsets.length > 0 ? rng.int(0, offsets.length - 1) : -1;
  const crashes = offsets.map((offset, i): CrashEvent => {
    const dayMs = (firstDay + offset) * DAY_MS;
    const major = i === majorIndex;
    const startMs = dayMs + rng.int(6, 14) * HOUR_MS;
    const troughMs = startMs + rng.int(3, 7) * HOUR_MS;
    return {
      dayMs,
      startMs,
      troughMs,
      reboundEndMs: troughMs + rng.int(36, 72) * HOUR_MS,
      ethDrop: major ? rng.float(0.25, 0.3) : rng.float(0.08, 0.18),
      rebound: rng.float(0.3, 0.6),
      major,
    };
  });
  return crashes.sort((a, b) => a.startMs - b.startMs);
}

/** log(1 - ethDrop), memoized: crashLog runs once per hour of every path. */
const LOG_DEPTH = new WeakMap<CrashEvent, number>();

function logDepth(c: CrashEvent): number {
  let d = LOG_DEPTH.get(c);
  if (d === undefined) {
    d = Math.log(1 - c.ethDrop);
    LOG_DEPTH.set(c, d);
  }
  return d;
}

/**
 * ETH's crash component of the log price at `tMs`: 0 before a crash, falling linearly (in
 * log) to log(1 - ethDrop) at the trough, then winning back `rebound` of that by
 * reboundEndMs, where it stays. Other assets take a multiple of it.
 */
export function crashLog(crashes: readonly CrashEvent[], tMs: number): number {
  let sum = 0;
  for (const c of crashes) {
    if (tMs <= c.startMs) continue;
    const depth = logDepth(c);
    if (tMs < c.troughMs) sum += (depth * (tMs - c.startMs)) / (c.troughMs - c.startMs);
    else if (tMs < c.reboundEndMs)
      sum += depth * (1 - (c.rebound * (tMs - c.troughMs)) / (c.reboundEndMs - c.troughMs));
    else sum += depth * (1 - c.rebound);
  }
  return sum;
}
