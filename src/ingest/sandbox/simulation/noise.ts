/**
 * Random numbers addressed by position instead of drawn from a stream: every number is a hash
 * of (stream, index, sub-index). A price path built from these can be evaluated at any hour,
 * in any order, and gives the same value each time, which a sequential PRNG cannot offer once
 * the path must keep growing with the wall clock.
 */
import { hash32, mix32 } from '../rng.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** 365.25 days: annualized rates and volatilities are per this year. */
export const YEAR_MS = 31_557_600_000;
export const HOURS_PER_YEAR = YEAR_MS / HOUR_MS;

/** A 32-bit stream id for a named source of randomness under a seed. */
export function streamId(seed: number, name: string): number {
  return hash32(`${seed >>> 0}|sim|${name}`);
}

const SUB_SALT = 0x632be5ab;

/** First half of hashAt: depends on (stream, a) only, so draws with several sub-indices share it. */
function baseHash(stream: number, a: number): number {
  return mix32(stream ^ mix32(a | 0));
}

/** Second half of hashAt for sub-index b. */
function subHash(base: number, b: number): number {
  return mix32(base ^ mix32((b + SUB_SALT) | 0));
}

/** mix32 of the first few sub-indices, precomputed for the hot paths (the same values subHash computes). */
const SUB = Array.from({ length: 4 }, (_, b) => mix32((b + SUB_SALT) | 0));

function toUnit(h: number): number {
  return (h + 0.5) / 4294967296;
}

/** A uint32 determined by (stream, a, b); `a` and `b` are integers (negative ones are fine). */
export function hashAt(stream: number, a: number, b = 0): number {
  return subHash(baseHash(stream, a), b);
}

/** Uniform in the open interval (0, 1): never 0, so it is safe under a logarithm. */
export function unitAt(stream: number, a: number, b = 0): number {
  return toUnit(hashAt(stream, a, b));
}

function boxMuller(u1: number, u2: number): number {
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Standard normal from (stream, a) and the sub-indices 2b, 2b+1 (Box-Muller). */
export function normalAt(stream: number, a: number, b = 0): number {
  const base = baseHash(stream, a);
  return boxMuller(toUnit(subHash(base, 2 * b)), toUnit(subHash(base, 2 * b + 1)));
}

/** Probability that a shock is drawn from the wide regime of fatNormalAt. */
const TAIL_PROBABILITY = 0.04;
/** How much wider the wide regime is. */
const TAIL_SCALE = 2.5;
/** Brings the mixture back to unit variance. */
const TAIL_NORM = 1 / Math.sqrt(1 - TAIL_PROBABILITY + TAIL_PROBABILITY * TAIL_SCALE * TAIL_SCALE);

/**
 * A unit-variance shock with slightly fat tails: a normal, 2.5 times wider with probability
 * 4 % (excess kurtosis about 2), so multi-sigma hours happen more often than under a normal.
 */
export function fatNormalAt(stream: number, a: number): number {
  // Same numbers as normalAt(stream, a, 0) and unitAt(stream, a, 2), with the shared half of
  // the hash computed once: this is the innermost loop of every path.
  const base = baseHash(stream, a);
  const z = boxMuller(toUnit(mix32(base ^ (SUB[0] as number))), toUnit(mix32(base ^ (SUB[1] as number))));
  return (toUnit(mix32(base ^ (SUB[2] as number))) < TAIL_PROBABILITY ? z * TAIL_SCALE : z) * TAIL_NORM;
}

/**
 * Smooth noise in [-1, 1]: a uniform value at every multiple of `knotMs` (absolute time),
 * joined by smoothstep, so it drifts slowly and has no kinks at the knots.
 */
export function valueNoise(stream: number, tMs: number, knotMs: number): number {
  const x = tMs / knotMs;
  const k = Math.floor(x);
  const f = x - k;
  const a = 2 * unitAt(stream, k) - 1;
  const b = 2 * unitAt(stream, k + 1) - 1;
  const s = f * f * (3 - 2 * f);
  return a + (b - a) * s;
}

/**
 * valueNoise at `count` times fromMs + i * stepMs, hashing each knot once (the same numbers as
 * calling valueNoise at each time, computed the same way).
 */
export function valueNoiseSeries(
  stream: number,
  fromMs: number,
  stepMs: number,
  count: number,
  knotMs: number,
): Float64Array {
  const out = new Float64Array(count);
  let k = Number.NaN;
  let a = 0;
  let b = 0;
  for (let i = 0; i < count; i++) {
    const x = (fromMs + i * stepMs) / knotMs;
    const ki = Math.floor(x);
    if (ki !== k) {
      a = ki === k + 1 ? b : 2 * unitAt(stream, ki) - 1;
      b = 2 * unitAt(stream, ki + 1) - 1;
      k = ki;
    }
    const f = x - ki;
    const s = f * f * (3 - 2 * f);
    out[i] = a + (b - a) * s;
  }
  return out;
}

/** A window of time with a size, placed by a PoissonEvents source. */
export interface EventWindow {
  startMs: number;
  endMs: number;
  /** Fraction (a depeg depth, for instance); 0 when the source has no size. */
  depth: number;
}

export interface PoissonEventsSpec {
  /** Expected events per year. */
  ratePerYear: number;
  /** Length of an event, ms; drawn uniformly, rounded to whole minutes. */
  minDurationMs: number;
  maxDurationMs: number;
  /** Size of an event, drawn log-uniformly (0 and 0 for none). */
  minDepth: number;
  maxDepth: number;
}

/** Time is cut into blocks this long; an event starts in a block and must end before the next ends. */
const EVENT_BLOCK_MS = 30 * DAY_MS;
/** Cap on events per block (the Poisson tail beyond it is negligible at the rates used). */
const MAX_EVENTS_PER_BLOCK = 4;

/**
 * Rare events (depegs, feed outages) placed by a Poisson process in absolute time: the number
 * of events starting in each 30-day block, and their start, length and depth, are hashes of
 * the block index. Looking up the events around any time therefore needs two blocks only.
 */
export class PoissonEvents {
  readonly #stream: number;
  readonly #spec: PoissonEventsSpec;
  readonly #mean: number;
  /** Recently generated blocks; a lookup touches two neighbouring blocks, so a few suffice. */
  readonly #cache = new Map<number, readonly EventWindow[]>();

  constructor(stream: number, spec: PoissonEventsSpec) {
    if (spec.maxDurationMs > EVENT_BLOCK_MS) throw new RangeError('event longer than an event block');
    this.#stream = stream;
    this.#spec = spec;
    this.#mean = (spec.ratePerYear * EVENT_BLOCK_MS) / YEAR_MS;
  }

  /** Events starting in block `b`, in start order. */
  block(b: number): readonly EventWindow[] {
    const hit = this.#cache.get(b);
    if (hit) return hit;
    const s = this.#spec;
    // Inverse CDF of the Poisson count from one uniform.
    const u = unitAt(this.#stream, b, 0);
    let count = 0;
    let p = Math.exp(-this.#mean);
    let cdf = p;
    while (u > cdf && count < MAX_EVENTS_PER_BLOCK) {
      count++;
      p *= this.#mean / count;
      cdf += p;
    }
    const events: EventWindow[] = [];
    for (let i = 0; i < count; i++) {
      const startMs =
        b * EVENT_BLOCK_MS +
        Math.floor(unitAt(this.#stream, b, 1 + 3 * i) * (EVENT_BLOCK_MS / MINUTE_MS)) * MINUTE_MS;
      const span = s.minDurationMs + unitAt(this.#stream, b, 2 + 3 * i) * (s.maxDurationMs - s.minDurationMs);
      const durationMs = Math.max(MINUTE_MS, Math.round(span / MINUTE_MS) * MINUTE_MS);
      const depth =
        s.maxDepth > 0 ? s.minDepth * (s.maxDepth / s.minDepth) ** unitAt(this.#stream, b, 3 + 3 * i) : 0;
      events.push({ startMs, endMs: startMs + durationMs, depth });
    }
    events.sort((x, y) => x.startMs - y.startMs);
    if (this.#cache.size >= 8) this.#cache.clear();
    this.#cache.set(b, events);
    return events;
  }

  /** Events whose window [startMs, endMs) overlaps [fromMs, toMs], in start order. */
  between(fromMs: number, toMs: number): EventWindow[] {
    const out: EventWindow[] = [];
    const last = Math.floor(toMs / EVENT_BLOCK_MS);
    for (let b = Math.floor(fromMs / EVENT_BLOCK_MS) - 1; b <= last; b++) {
      for (const e of this.block(b)) if (e.endMs > fromMs && e.startMs <= toMs) out.push(e);
    }
    return out;
  }

  /** Index of the block holding `tMs`; events covering `tMs` start in it or in the one before. */
  static blockIndex(tMs: number): number {
    return Math.floor(tMs / EVENT_BLOCK_MS);
  }

  /** Events whose window contains `tMs`. */
  at(tMs: number): EventWindow[] {
    return this.between(tMs, tMs).filter((e) => e.startMs <= tMs && tMs < e.endMs);
  }
}
