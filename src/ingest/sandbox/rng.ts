/**
 * Seeded randomness for the sandbox generator. Everything random in the dataset comes from
 * here; nothing reads Math.random or the clock, so a seed and a key always give the same
 * numbers. Streams are keyed (`rngFor(seed, key)`), so one market's numbers do not depend
 * on how many other markets were generated before it.
 */

/** A 32-bit bijective integer mixer (the "lowbias32" finalizer). Distinct inputs give distinct outputs. */
export function mix32(value: number): number {
  let x = value >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** 32-bit FNV-1a hash of a string, finished by mix32 for better avalanche. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** A uniform number in [0, 1) determined by the seed and the key alone. */
export function unitHash(seed: number, key: string): number {
  return hash32(`${seed}|${key}`) / 4294967296;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  float(min: number, max: number): number;
  /** Integer uniform in [min, max] (both included). */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: a small, fast 32-bit PRNG with a 2^32 period; plenty for a sandbox dataset. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    float: (min, max) => min + (max - min) * next(),
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    normal: () => {
      const u = 1 - next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    },
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty array');
      return item;
    },
  };
}

/** An independent stream for one key (a market, a token, a feed) under one seed. */
export function rngFor(seed: number, key: string): Rng {
  return createRng(hash32(`${seed}|${key}`));
}

/** Rounds to a number of decimals (USD cents: 2). */
export function roundTo(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/** Rounds down to a number of decimals (keeps sums of parts at or below their total). */
export function floorTo(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.floor(value * f) / f;
}

/** Rounds to significant digits (prices). */
export function roundSignificant(value: number, digits: number): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  return Number(value.toPrecision(digits));
}
