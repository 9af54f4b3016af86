/**
 * Hourly USD price paths for the sandbox's assets: a year of history before asOf that ends at
 * each asset's snapshot price, continuing forward for as long as it is asked. Pure: no clock,
 * no I/O; every value is a function of (seed, asOf, historyDays, the asset) and the time asked.
 *
 * How a price is made. Every path is a log price relative to its value at asOf:
 *
 *   price(t) = priceUsd * exp(log(t) - log(asOf))
 *
 * so priceAt(asset, asOf) is the snapshot price exactly, whatever the randomness did before.
 * log(t) is a sum of parts that each family picks from:
 *
 * - Drivers: hourly log-random walks whose hour-h shock is a hash of (seed, driver, h), shared
 *   by every asset that follows them: ETH, BTC (correlated with ETH), EUR/USD and gold.
 * - Own walks for volatile tokens (hash of the symbol and the hour), partly loaded on ETH.
 * - Crash days (crashes.ts), added to ETH in full and to the others through their ETH loading.
 * - Smooth bounded noise (a basis, a peg wobble) and rare Poisson events (depegs), in absolute
 *   time, from hashes as well.
 *
 * Within an hour a walk is interpolated linearly between the hour's two values plus a small
 * Brownian-bridge-like wobble at 5-minute knots (zero at whole hours), so an oracle checking
 * every minute sees a path that moves within the hour, and hourly values are unchanged.
 *
 * Randomness depends on the symbol (and family), not on the key: the same token on several
 * chains moves identically, and adding or removing assets never changes another's path.
 */
import { type AssetFamily, assetFamily } from '../../../domain/asset-family.ts';
import { maturityFromSymbol, PriceBook, ptUnderlying } from '../prices.ts';
import { type CrashEvent, crashLog, crashSchedule } from './crashes.ts';
import {
  DAY_MS,
  type EventWindow,
  fatNormalAt,
  HOUR_MS,
  HOURS_PER_YEAR,
  normalAt,
  PoissonEvents,
  streamId,
  unitAt,
  valueNoise,
  YEAR_MS,
} from './noise.ts';
import { Walk } from './walk.ts';

/** An asset to simulate: `priceUsd` is its snapshot price at asOf (the PriceBook's price). */
export interface SimAsset {
  /** Unique among the assets given (a symbol, or chain and address). */
  key: string;
  symbol: string;
  family: AssetFamily;
  priceUsd: number;
}

export interface PriceModelOptions {
  /** Unsigned 32-bit seed (the dataset's seed). */
  seed: number;
  /** The dataset's asOf, ms since the epoch: every path equals its asset's priceUsd there. */
  asOfMs: number;
  /** Days of history before asOf; prices are defined from asOf - historyDays on. Default 365. */
  historyDays?: number;
}

/** Prices at whole hours: prices[i] is the price at fromMs + i * stepMs. */
export interface HourlyPrices {
  fromMs: number;
  stepMs: number;
  prices: Float64Array;
}

/** A depeg that shows in an asset's path (stables, LSTs, and a PT through its underlying). */
export interface PriceEvent {
  /** `depeg`: a random depeg (stables, LST basis); `crash-depeg`: an LST's extra fall on a crash day. */
  kind: 'depeg' | 'crash-depeg';
  startMs: number;
  endMs: number;
  /** Largest fall below the peg (or the LST's ETH ratio), as a fraction: 0.02 = -2 %. */
  depth: number;
}

/** Maturity of a Pendle PT and the implied rate its snapshot price stands for. */
export interface PtMaturity {
  maturityMs: number;
  /** `symbol`: the date in the symbol; `derived`: none usable (see PT_DERIVED_RATE), chosen from the seed. */
  source: 'symbol' | 'derived';
  /** Continuously compounded yearly rate r with price = underlying * exp(-r * yearsToMaturity) at asOf. */
  impliedRateAtAsOf: number;
  /** Key of the asset it converges to (the underlying's; a `~underlying|` key when it was not given). */
  underlyingKey: string;
}

export interface PriceModel {
  readonly seed: number;
  readonly asOfMs: number;
  /** First time a price is defined: asOfMs - historyDays days. */
  readonly startMs: number;
  /** The crash days of the history, in time order. */
  readonly crashes: readonly CrashEvent[];
  has(key: string): boolean;
  /** USD price of an asset at any time from startMs on (throws before, or for an unknown key). */
  priceAt(key: string, tMs: number): number;
  /** Prices at every whole hour in [fromMs, toMs] (fromMs >= startMs); much faster than priceAt per hour. */
  hourly(key: string, fromMs: number, toMs: number): HourlyPrices;
  /** Depeg windows of an asset overlapping [fromMs, toMs]; empty for families without any. */
  events(key: string, fromMs: number, toMs: number): PriceEvent[];
  /** Maturity of a PT asset, null for anything else. */
  maturity(key: string): PtMaturity | null;
}

// ---------------------------------------------------------------------------------------------
// Parameters. Volatilities are annualized standard deviations of the log price.

/** ETH's volatility: the main driver. Shocks have slightly fat tails (see fatNormalAt). */
export const ETH_VOL = 0.6;
/** BTC's volatility. */
export const BTC_VOL = 0.45;
/** Correlation of BTC's hourly shocks with ETH's. */
export const BTC_ETH_CORRELATION = 0.7;
/** Share (in log) of an ETH crash that BTC takes. */
export const BTC_CRASH_BETA = 0.7;
/** EUR/USD volatility: EUR stables follow it. */
export const EURUSD_VOL = 0.07;
/** Gold's volatility (PAXG, XAUT); gold ignores crypto crashes. */
export const GOLD_VOL = 0.15;
/**
 * Well-known tokens ('major'): each gets a loading on ETH (which carries ETH's crashes with it)
 * and a total volatility, both uniform in these ranges by a hash of the symbol; the rest of
 * the variance is the token's own walk (at least IDIO_MIN_VOL).
 */
export const MAJOR_ETH_BETA: readonly [number, number] = [0.5, 0.9];
export const MAJOR_VOL: readonly [number, number] = [0.7, 0.9];
/** Any other token ('other'): lower loading on ETH, higher volatility. */
export const OTHER_ETH_BETA: readonly [number, number] = [0.3, 0.8];
export const OTHER_VOL: readonly [number, number] = [1, 1.5];
/** Lowest volatility of a token's own walk. */
export const IDIO_MIN_VOL = 0.2;
/** Size of the within-hour wobble relative to one hour's standard deviation. */
export const WOBBLE_SCALE = 0.5;

/** Stables: the peg wobbles by up to +-10 bp, drifting over 6-hour knots. */
export const PEG_NOISE = 0.001;
const PEG_KNOT_MS = 6 * HOUR_MS;
/**
 * Stables' depegs: 0.05 a year per symbol (so about two a year across the sandbox's forty-odd
 * stable symbols), each 2 to 24 hours long, falling to -0.5 % to -5 % (log-uniform) in the first
 * quarter of the window and recovering linearly over the rest. EUR stables depeg against
 * EUR/USD. A depeg spanning asOf is dropped, so the snapshot price is never a depeg's.
 */
export const STABLE_DEPEGS = {
  ratePerYear: 0.05,
  minDurationMs: 2 * HOUR_MS,
  maxDurationMs: 24 * HOUR_MS,
  minDepth: 0.005,
  maxDepth: 0.05,
} as const;
/** Yield-bearing stables accrue (continuously) at a yearly rate in this range, by symbol. */
export const YIELD_APY: readonly [number, number] = [0.03, 0.12];

/** LSTs/LRTs: the basis to ETH drifts within +-5 bp over 3-day knots. */
export const LST_BASIS_NOISE = 0.0005;
const BASIS_KNOT_MS = 3 * DAY_MS;
/** LSTs: about once a year per symbol, the basis falls 1 % to 3 % for 12 to 36 hours (same shape as a stable depeg). */
export const LST_DEPEGS = {
  ratePerYear: 1,
  minDurationMs: 12 * HOUR_MS,
  maxDurationMs: 36 * HOUR_MS,
  minDepth: 0.01,
  maxDepth: 0.03,
} as const;
/**
 * LSTs on a crash day: on top of ETH's fall, the basis falls by 3 % to 10 % of ETH's drop (0.75
 * to 3 % on a -25 % day) from the crash's start to its trough, then recovers in 6 to 24 hours.
 */
export const LST_CRASH_EXTRA: readonly [number, number] = [0.03, 0.1];
/** BTC wrappers (anything in the btc family but BTC itself): basis within +-3 bp. */
export const BTC_BASIS_NOISE = 0.0003;
/** Gold tokens: basis within +-5 bp. */
export const GOLD_BASIS_NOISE = 0.0005;

/**
 * PTs: a symbol's maturity is used when it is after asOf, or before it with the snapshot
 * pricing the PT at par (matured); otherwise (no date, or matured while the snapshot still
 * prices it at a discount) a maturity is derived so the snapshot discount stands for a
 * plausible implied rate.
 */
/** Implied rate used to derive a maturity: uniform in this range by symbol. */
export const PT_DERIVED_RATE: readonly [number, number] = [0.05, 0.2];
/** Bounds of a derived time to maturity. */
export const PT_DERIVED_LIFE_MS: readonly [number, number] = [14 * DAY_MS, 730 * DAY_MS];
/** The implied rate wanders by up to +-30 % of itself (at least +-0.9 points) over 5-day knots. */
export const PT_RATE_WANDER = 0.3;
const PT_RATE_KNOT_MS = 5 * DAY_MS;

const WOBBLE_KNOTS = 12;

function hourlySigma(annual: number): number {
  return annual / Math.sqrt(HOURS_PER_YEAR);
}

function between(u: number, range: readonly [number, number]): number {
  return range[0] + (range[1] - range[0]) * u;
}

/** Depeg profile in [0, 1]: down to 1 over the first quarter of the window, back to 0 by its end. */
function depegShape(e: EventWindow, tMs: number): number {
  const frac = (tMs - e.startMs) / (e.endMs - e.startMs);
  return frac < 0.25 ? frac / 0.25 : (1 - frac) / 0.75;
}

/** The shared parts: drivers and the crash schedule. */
interface Market {
  seed: number;
  asOfMs: number;
  crashes: readonly CrashEvent[];
  eth: Walk;
  btc: Walk;
  eurusd: Walk;
  gold: Walk;
  ethWobble: number;
  btcWobble: number;
  originHour: number;
}

/** An uncalibrated log-price path. */
interface LogPath {
  /** Log price at any time (>= the origin). */
  logAt(tMs: number): number;
  /** Log prices at whole hours fromHour, fromHour + 1, ... into `out`. */
  logHours(fromHour: number, out: Float64Array): void;
  /** Depeg windows overlapping [fromMs, toMs]. */
  events(fromMs: number, toMs: number): PriceEvent[];
}

interface PathParts {
  walks: { walk: Walk; coef: number }[];
  /** Stream and hourly sigma of the within-hour wobble; null for none. */
  wobble: { stream: number; sigma: number } | null;
  /** Multiple of ETH's crash log. */
  crashBeta: number;
  /** Bounded smooth noise: amplitude (log) and knot spacing. */
  noise: { stream: number; amplitude: number; knotMs: number } | null;
  depegs: PoissonEvents | null;
  /** LSTs: extra depth and recovery time per crash (aligned with market.crashes). */
  crashDepegs: { depth: number; recoverMs: number }[] | null;
  /** Continuous yearly accrual (yield-bearing stables). */
  accrual: number;
}

/** A path made of parts (every family but PTs). */
class PartsPath implements LogPath {
  readonly #m: Market;
  readonly #p: PathParts;

  constructor(market: Market, parts: PathParts) {
    this.#m = market;
    this.#p = parts;
  }

  logAt(tMs: number): number {
    const h = Math.floor(tMs / HOUR_MS);
    const f = (tMs - h * HOUR_MS) / HOUR_MS;
    let acc = 0;
    for (const { walk, coef } of this.#p.walks) {
      const a = walk.at(h);
      acc += coef * (f === 0 ? a : a + f * (walk.at(h + 1) - a));
    }
    return acc + this.#rest(tMs, h, f);
  }

  logHours(fromHour: number, out: Float64Array): void {
    const walks = this.#p.walks;
    if (walks.length === 0) out.fill(0);
    walks.forEach(({ walk, coef }, i) => {
      walk.fill(fromHour, out, coef, i > 0);
    });
    for (let i = 0; i < out.length; i++) {
      const h = fromHour + i;
      out[i] = (out[i] as number) + this.#rest(h * HOUR_MS, h, 0);
    }
  }

  /** Everything but the walks' hourly values. */
  #rest(tMs: number, h: number, f: number): number {
    const p = this.#p;
    let x = 0;
    if (p.wobble && f > 0) x += this.#wobble(p.wobble.stream, p.wobble.sigma, h, f);
    if (p.crashBeta !== 0) x += p.crashBeta * crashLog(this.#m.crashes, tMs);
    if (p.noise) x += p.noise.amplitude * valueNoise(p.noise.stream, tMs, p.noise.knotMs);
    if (p.depegs) x += this.#depegLog(p.depegs, tMs);
    if (p.crashDepegs) x += this.#crashDepegLog(p.crashDepegs, tMs);
    if (p.accrual !== 0) x += (p.accrual * (tMs - this.#m.asOfMs)) / YEAR_MS;
    return x;
  }

  /** Bridge-like wobble: normal at 5-minute knots, scaled by sqrt(s(1-s)), linear in between. */
  #wobble(stream: number, sigma: number, h: number, f: number): number {
    const x = f * WOBBLE_KNOTS;
    const j = Math.floor(x);
    const knot = (k: number): number => {
      if (k <= 0 || k >= WOBBLE_KNOTS) return 0;
      const s = k / WOBBLE_KNOTS;
      return WOBBLE_SCALE * sigma * Math.sqrt(s * (1 - s)) * normalAt(stream, h, k);
    };
    const a = knot(j);
    return a + (x - j) * (knot(j + 1) - a);
  }

  #depegLog(source: PoissonEvents, tMs: number): number {
    const asOf = this.#m.asOfMs;
    const b = PoissonEvents.blockIndex(tMs);
    let x = 0;
    for (let k = b - 1; k <= b; k++) {
      for (const e of source.block(k)) {
        if (tMs < e.startMs || tMs >= e.endMs || (e.startMs <= asOf && asOf < e.endMs)) continue;
        x += Math.log1p(-e.depth * depegShape(e, tMs));
      }
    }
    return x;
  }

  #crashDepegLog(extra: readonly { depth: number; recoverMs: number }[], tMs: number): number {
    let x = 0;
    this.#m.crashes.forEach((c, i) => {
      const d = extra[i];
      if (!d || tMs <= c.startMs || tMs >= c.troughMs + d.recoverMs) return;
      const shape =
        tMs <= c.troughMs
          ? (tMs - c.startMs) / (c.troughMs - c.startMs)
          : 1 - (tMs - c.troughMs) / d.recoverMs;
      x += Math.log1p(-d.depth * shape);
    });
    return x;
  }

  events(fromMs: number, toMs: number): PriceEvent[] {
    const out: PriceEvent[] = [];
    const asOf = this.#m.asOfMs;
    if (this.#p.depegs) {
      for (const e of this.#p.depegs.between(fromMs, toMs)) {
        if (e.startMs <= asOf && asOf < e.endMs) continue;
        out.push({ kind: 'depeg', startMs: e.startMs, endMs: e.endMs, depth: e.depth });
      }
    }
    const extra = this.#p.crashDepegs;
    if (extra) {
      this.#m.crashes.forEach((c, i) => {
        const d = extra[i];
        if (!d) return;
        const endMs = c.troughMs + d.recoverMs;
        if (endMs > fromMs && c.startMs <= toMs)
          out.push({ kind: 'crash-depeg', startMs: c.startMs, endMs, depth: d.depth });
      });
    }
    return out.sort((a, b) => a.startMs - b.startMs);
  }
}

/**
 * A Pendle PT: underlying * exp(-r(t) * yearsToMaturity(t)), par from maturity on. r(t) is the
 * implied rate at asOf (from the snapshot discount) plus a smooth wander, never below
 * min(0, rate at asOf).
 */
class PtPath implements LogPath {
  readonly #u: LogPath;
  readonly #maturityMs: number;
  readonly #rate: number;
  readonly #stream: number;
  readonly #amplitude: number;
  readonly #noiseAtAsOf: number;

  constructor(underlying: LogPath, maturityMs: number, rateAtAsOf: number, stream: number, asOfMs: number) {
    this.#u = underlying;
    this.#maturityMs = maturityMs;
    this.#rate = rateAtAsOf;
    this.#stream = stream;
    this.#amplitude = PT_RATE_WANDER * Math.max(Math.abs(rateAtAsOf), 0.03);
    this.#noiseAtAsOf = valueNoise(stream, asOfMs, PT_RATE_KNOT_MS);
  }

  #discount(tMs: number): number {
    if (tMs >= this.#maturityMs) return 0;
    const wander = this.#amplitude * (valueNoise(this.#stream, tMs, PT_RATE_KNOT_MS) - this.#noiseAtAsOf);
    const rate = Math.max(Math.min(0, this.#rate), this.#rate + wander);
    return (rate * (this.#maturityMs - tMs)) / YEAR_MS;
  }

  logAt(tMs: number): number {
    return this.#u.logAt(tMs) - this.#discount(tMs);
  }

  logHours(fromHour: number, out: Float64Array): void {
    this.#u.logHours(fromHour, out);
    for (let i = 0; i < out.length; i++)
      out[i] = (out[i] as number) - this.#discount((fromHour + i) * HOUR_MS);
  }

  events(fromMs: number, toMs: number): PriceEvent[] {
    return this.#u.events(fromMs, toMs);
  }
}

interface Calibrated {
  path: LogPath;
  priceUsd: number;
  anchor: number;
  maturity: PtMaturity | null;
}

/**
 * Builds the price model over `assets` (validated: unique keys, positive finite prices).
 * Paths are built on first use, so creating the model is cheap whatever the number of assets.
 *
 * Families (the constants above hold the numbers):
 * - `eth`: the ETH driver, a log-random walk at ETH_VOL (60 %) with slightly fat-tailed hourly
 *   shocks, plus the crash days in full.
 * - `eth-lst`: ETH times a basis: +-5 bp of slow drift (LST_BASIS_NOISE), about one 1-3 % depeg
 *   a year lasting 12-36 h (LST_DEPEGS), and an extra 3-10 % of ETH's drop on crash days
 *   (LST_CRASH_EXTRA). Exchange-rate growth of wrapped LSTs is not modelled.
 * - `btc`: the BTC driver (BTC_VOL 45 %, correlation BTC_ETH_CORRELATION 0.7 with ETH's shocks,
 *   BTC_CRASH_BETA 0.7 of ETH's crashes); wrappers add a +-3 bp basis.
 * - `usd`, `usd-yield`, `eur`: the peg (EUR: the EUR/USD driver at EURUSD_VOL 7 %) with +-10 bp
 *   wobble and rare depegs (STABLE_DEPEGS); `usd-yield` also accrues at 3-12 % a year.
 * - `gold`: the gold driver (GOLD_VOL 15 %), +-5 bp basis, no crash exposure.
 * - `major`, `other`: a loading on ETH (crashes included) plus the token's own walk, total
 *   volatility 70-90 % (major) or 100-150 % (other).
 * - `pt`: the underlying (the asset with the symbol ptUnderlying gives, else a hidden one at the
 *   PriceBook's price) times exp(-r * years to maturity), par from maturity on. Maturity: the
 *   symbol's date when after asOf or matured at par, else derived (see PtMaturity). A PT
 *   whose underlying cannot be told is priced as `other`.
 */
export function createPriceModel(options: PriceModelOptions, assets: readonly SimAsset[]): PriceModel {
  const { seed, asOfMs } = options;
  const historyDays = options.historyDays ?? 365;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`bad seed ${seed}`);
  if (!Number.isFinite(asOfMs)) throw new RangeError('asOfMs must be finite');
  if (!Number.isInteger(historyDays) || historyDays < 1)
    throw new RangeError('historyDays must be a positive integer');
  const startMs = asOfMs - historyDays * DAY_MS;
  const originHour = Math.floor(startMs / HOUR_MS);

  const byKey = new Map<string, SimAsset>();
  const bySymbol = new Map<string, SimAsset>();
  for (const a of assets) {
    if (byKey.has(a.key)) throw new RangeError(`duplicate asset key ${a.key}`);
    if (!(a.priceUsd > 0) || !Number.isFinite(a.priceUsd)) throw new RangeError(`bad price for ${a.key}`);
    byKey.set(a.key, a);
    if (!bySymbol.has(a.symbol)) bySymbol.set(a.symbol, a);
  }

  const sEth = streamId(seed, 'eth');
  const sBtc = streamId(seed, 'btc');
  const sEur = streamId(seed, 'eurusd');
  const sGold = streamId(seed, 'gold');
  const ethSigma = hourlySigma(ETH_VOL);
  const btcSigma = hourlySigma(BTC_VOL);
  const ethInc = (h: number): number => ethSigma * fatNormalAt(sEth, h);
  const btcLoad = (BTC_ETH_CORRELATION * btcSigma) / ethSigma;
  const btcOwn = Math.sqrt(1 - BTC_ETH_CORRELATION ** 2) * btcSigma;
  const eurSigma = hourlySigma(EURUSD_VOL);
  const goldSigma = hourlySigma(GOLD_VOL);
  const market: Market = {
    seed,
    asOfMs,
    crashes: crashSchedule(seed, asOfMs, historyDays),
    eth: new Walk(ethInc, originHour, 1),
    btc: new Walk((h) => btcLoad * ethInc(h) + btcOwn * fatNormalAt(sBtc, h), originHour, 1),
    eurusd: new Walk((h) => eurSigma * fatNormalAt(sEur, h), originHour, 1),
    gold: new Walk((h) => goldSigma * fatNormalAt(sGold, h), originHour, 1),
    ethWobble: streamId(seed, 'wobble|eth'),
    btcWobble: streamId(seed, 'wobble|btc'),
    originHour,
  };

  /** Paths of non-PT assets by family and symbol: shared by every key with that symbol. */
  const shared = new Map<string, LogPath>();
  const calibrated = new Map<string, Calibrated>();
  let priceBook: PriceBook | null = null;

  function partsFor(symbol: string, family: AssetFamily): PathParts {
    const u = (i: number): number => unitAt(streamId(seed, `params|${symbol}`), i);
    const parts: PathParts = {
      walks: [],
      wobble: null,
      crashBeta: 0,
      noise: null,
      depegs: null,
      crashDepegs: null,
      accrual: 0,
    };
    const stables = (): void => {
      parts.noise = { stream: streamId(seed, `peg|${symbol}`), amplitude: PEG_NOISE, knotMs: PEG_KNOT_MS };
      parts.depegs = new PoissonEvents(streamId(seed, `depeg|${symbol}`), STABLE_DEPEGS);
    };
    switch (family) {
      case 'eth':
        parts.walks.push({ walk: market.eth, coef: 1 });
        parts.wobble = { stream: market.ethWobble, sigma: ethSigma };
        parts.crashBeta = 1;
        break;
      case 'eth-lst':
        parts.walks.push({ walk: market.eth, coef: 1 });
        parts.wobble = { stream: market.ethWobble, sigma: ethSigma };
        parts.crashBeta = 1;
        parts.noise = {
          stream: streamId(seed, `basis|${symbol}`),
          amplitude: LST_BASIS_NOISE,
          knotMs: BASIS_KNOT_MS,
        };
        parts.depegs = new PoissonEvents(streamId(seed, `depeg|${symbol}`), LST_DEPEGS);
        parts.crashDepegs = market.crashes.map((c, i) => ({
          depth: c.ethDrop * between(u(10 + 2 * i), LST_CRASH_EXTRA),
          recoverMs: Math.round(between(u(11 + 2 * i), [6, 24])) * HOUR_MS,
        }));
        break;
      case 'btc':
        parts.walks.push({ walk: market.btc, coef: 1 });
        parts.wobble = { stream: market.btcWobble, sigma: btcSigma };
        parts.crashBeta = BTC_CRASH_BETA;
        if (symbol.toUpperCase() !== 'BTC') {
          parts.noise = {
            stream: streamId(seed, `basis|${symbol}`),
            amplitude: BTC_BASIS_NOISE,
            knotMs: BASIS_KNOT_MS,
          };
        }
        break;
      case 'gold':
        parts.walks.push({ walk: market.gold, coef: 1 });
        parts.noise = {
          stream: streamId(seed, `basis|${symbol}`),
          amplitude: GOLD_BASIS_NOISE,
          knotMs: BASIS_KNOT_MS,
        };
        break;
      case 'usd':
        stables();
        break;
      case 'usd-yield':
        stables();
        parts.accrual = between(u(0), YIELD_APY);
        break;
      case 'eur':
        parts.walks.push({ walk: market.eurusd, coef: 1 });
        stables();
        break;
      default: {
        // 'major', 'other', and a PT this model cannot price as one.
        const major = family === 'major';
        const beta = between(u(0), major ? MAJOR_ETH_BETA : OTHER_ETH_BETA);
        const vol = between(u(1), major ? MAJOR_VOL : OTHER_VOL);
        const own = hourlySigma(
          Math.max(IDIO_MIN_VOL, Math.sqrt(Math.max(0, vol * vol - (beta * ETH_VOL) ** 2))),
        );
        const sOwn = streamId(seed, `own|${family}|${symbol}`);
        parts.walks.push({ walk: market.eth, coef: beta });
        parts.walks.push({ walk: new Walk((h) => own * fatNormalAt(sOwn, h), originHour, 24), coef: 1 });
        parts.wobble = { stream: streamId(seed, `wobble|${symbol}`), sigma: hourlySigma(vol) };
        parts.crashBeta = beta;
      }
    }
    return parts;
  }

  function sharedPath(symbol: string, family: AssetFamily): LogPath {
    const id = `${family}|${symbol}`;
    let p = shared.get(id);
    if (!p) {
      p = new PartsPath(market, partsFor(symbol, family));
      shared.set(id, p);
    }
    return p;
  }

  /** The underlying of a PT, from the assets given, else a hidden one priced by the PriceBook. */
  function underlyingOf(symbol: string): { key: string; asset: SimAsset } | null {
    const name = ptUnderlying(symbol);
    if (name === symbol) return null;
    const given = bySymbol.get(name);
    if (given) return given.family === 'pt' ? null : { key: given.key, asset: given };
    const family = assetFamily(name);
    if (family === 'pt') return null;
    priceBook ??= new PriceBook(seed, asOfMs);
    const key = `~underlying|${name}`;
    return { key, asset: { key, symbol: name, family, priceUsd: priceBook.price(name) } };
  }

  function build(asset: SimAsset): Calibrated {
    if (asset.family === 'pt') {
      const under = underlyingOf(asset.symbol);
      if (under) {
        const u = calibrate(under.key, under.asset);
        const ratio = asset.priceUsd / u.priceUsd;
        const fromSymbol = maturityFromSymbol(asset.symbol);
        let maturityMs: number;
        let source: PtMaturity['source'];
        let rate: number;
        if (fromSymbol !== null && (fromSymbol > asOfMs || Math.abs(ratio - 1) < 1e-6)) {
          // The symbol's date (matured by asOf: at par then, discounted at a plausible rate before).
          maturityMs = fromSymbol;
          source = 'symbol';
          rate =
            fromSymbol > asOfMs
              ? -Math.log(ratio) / ((maturityMs - asOfMs) / YEAR_MS)
              : between(unitAt(streamId(seed, `params|${asset.symbol}`), 20), PT_DERIVED_RATE);
        } else {
          const r0 = between(unitAt(streamId(seed, `params|${asset.symbol}`), 20), PT_DERIVED_RATE);
          const life = Math.min(
            PT_DERIVED_LIFE_MS[1],
            Math.max(PT_DERIVED_LIFE_MS[0], (-Math.log(ratio) / r0) * YEAR_MS),
          );
          maturityMs = Math.ceil((asOfMs + life) / DAY_MS) * DAY_MS;
          source = 'derived';
          rate = -Math.log(ratio) / ((maturityMs - asOfMs) / YEAR_MS);
        }
        const path = new PtPath(u.path, maturityMs, rate, streamId(seed, `ptrate|${asset.symbol}`), asOfMs);
        return {
          path,
          priceUsd: asset.priceUsd,
          anchor: path.logAt(asOfMs),
          maturity: { maturityMs, source, impliedRateAtAsOf: rate, underlyingKey: under.key },
        };
      }
    }
    const path = sharedPath(asset.symbol, asset.family);
    return { path, priceUsd: asset.priceUsd, anchor: path.logAt(asOfMs), maturity: null };
  }

  function calibrate(key: string, asset: SimAsset): Calibrated {
    let c = calibrated.get(key);
    if (!c) {
      c = build(asset);
      calibrated.set(key, c);
    }
    return c;
  }

  function get(key: string): Calibrated {
    const asset = byKey.get(key);
    if (asset) return calibrate(key, asset);
    const hidden = calibrated.get(key);
    if (hidden) return hidden;
    throw new RangeError(`unknown asset ${key}`);
  }

  function checkTime(tMs: number): void {
    if (!Number.isFinite(tMs)) throw new RangeError('time must be finite');
    if (tMs < startMs) throw new RangeError(`time ${tMs} is before the model's start ${startMs}`);
  }

  return {
    seed,
    asOfMs,
    startMs,
    crashes: market.crashes,
    has: (key) => byKey.has(key),
    priceAt(key, tMs) {
      checkTime(tMs);
      const c = get(key);
      return c.priceUsd * Math.exp(c.path.logAt(tMs) - c.anchor);
    },
    hourly(key, fromMs, toMs) {
      checkTime(fromMs);
      if (!Number.isFinite(toMs)) throw new RangeError('time must be finite');
      const c = get(key);
      const first = Math.ceil(fromMs / HOUR_MS);
      const n = Math.max(0, Math.floor(toMs / HOUR_MS) - first + 1);
      const prices = new Float64Array(n);
      c.path.logHours(first, prices);
      for (let i = 0; i < n; i++) prices[i] = c.priceUsd * Math.exp((prices[i] as number) - c.anchor);
      return { fromMs: first * HOUR_MS, stepMs: HOUR_MS, prices };
    },
    events(key, fromMs, toMs) {
      return get(key).path.events(fromMs, toMs);
    },
    maturity(key) {
      return get(key).maturity;
    },
  };
}
