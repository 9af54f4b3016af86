import type { ReadModel } from '../data/read-model.ts';
import type { PositionAtRiskView } from '../data/risk-index.ts';
import { mustSlice } from '../domain/must.ts';
import type { EventRecord, EventType } from '../domain/records/events.ts';
import type { LiquidationEvent } from '../domain/records/history.ts';
import { hash24 } from '../store/events.ts';
import { type EventAttributes, REARM_FACTOR, type Subscriber, type SubscriptionIndex } from './filters.ts';

/** What a pass found: the events to store and the webhooks each goes to. */
export interface Matched {
  events: EventRecord[];
  deliveries: { eventId: string; webhookId: string }[];
}

/** An event as sent: `{ id, type, createdAt, data }`. */
export function eventBody(id: string, type: EventType, createdAtMs: number, data: unknown): string {
  return JSON.stringify({ id, type, createdAt: new Date(createdAtMs).toISOString(), data });
}

/** Adds an event and its deliveries to `out` when some subscriber wants it. */
function emit(
  out: Matched,
  mode: 'live' | 'test',
  id: string,
  a: EventAttributes,
  createdAt: number,
  data: unknown,
  subs: readonly Subscriber[],
): void {
  if (subs.length === 0) return;
  out.events.push({
    id,
    mode,
    type: a.type,
    createdAt,
    body: eventBody(id, a.type, createdAt, data),
    chainId: a.chainId,
    protocol: a.protocols.length === 1 ? (a.protocols[0] ?? null) : null,
    marketKey: a.marketKeys.length === 1 ? (a.marketKeys[0] ?? null) : null,
    wallet: a.wallet,
    threshold: a.threshold,
  });
  for (const s of subs) if (s.kind === 'webhook') out.deliveries.push({ eventId: id, webhookId: s.id });
}

/** A crossing some subscribers want: position i of market ord (at its place in its list, -1 when pooled). */
export interface WantedCrossing {
  i: number;
  ord: number;
  at: number;
  attributes: EventAttributes;
  subs: Subscriber[];
}

/** A position that crossed below some thresholds in a pass: fired once the pass has read all. */
interface Crossing {
  i: number;
  ord: number;
  /** Its place in its market's list (isolated markets), -1 for a pooled position. */
  at: number;
  h: number;
  /** Its armed level before the crossing: the thresholds in (h, armed] fire. */
  armed: number;
  /** Read in a pass whose thresholds changed: only those of the last pass fire. */
  before: boolean;
}

/** Levels (thresholds and their re-arm levels) up to which isolated markets are read in slices. */
const MAX_SLICED_LEVELS = 64;

/** A little over a float's rounding, to widen the slices a price move is read in. */
const SLICE_SLACK = 1e-12;

/** The first index at or after `from` whose value is at least x (`values` ascending): a galloping search. */
function lowerBound(values: Float64Array, x: number, from: number): number {
  const n = values.length;
  if (from >= n || (values[from] ?? Number.NaN) >= x) return from;
  // values[lo] < x; grow the step until values[hi] >= x (or the end), then halve.
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < n && (values[hi] ?? Number.NaN) < x) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > n) hi = n;
  lo++;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] ?? Number.NaN) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The least single-precision number at or above x. */
function singleAtLeast(x: number): number {
  const f = Math.fround(x);
  return f >= x ? f : nextSingle(f, 1);
}

/** The greatest single-precision number at or below x. */
function singleAtMost(x: number): number {
  const f = Math.fround(x);
  return f <= x ? f : nextSingle(f, -1);
}

const SINGLE = new Float32Array(1);
const SINGLE_BITS = new Int32Array(SINGLE.buffer);

/** The single-precision neighbour of a finite single f, upwards (1) or downwards (-1). */
function nextSingle(f: number, dir: 1 | -1): number {
  SINGLE[0] = f;
  if (f === 0) SINGLE_BITS[0] = dir > 0 ? 1 : 0x80000001 | 0;
  else SINGLE_BITS[0] = (SINGLE_BITS[0] as number) + (f > 0 ? dir : -dir);
  return SINGLE[0] as number;
}

/** A copy of `a` with room for `size` entries, the new ones `fill`. */
function grown<A extends Float64Array | Float32Array | Uint32Array>(a: A, size: number, fill: number): A {
  const b = new (a.constructor as new (n: number) => A)(size);
  b.fill(fill);
  b.set(a as ArrayLike<number>);
  return b;
}

/** Index of the first threshold above x in an ascending list. */
function firstAboveIn(ths: readonly number[], x: number): number {
  let lo = 0;
  let hi = ths.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ths[mid] ?? Number.NaN) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Whether two threshold lists are the same. */
function sameThresholds(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * Health-factor crossings of one read model, incrementally.
 *
 * The rule, per position: one number, `armed`. The thresholds at or below it are armed (a
 * crossing below them fires), those above are not (the position crossed below them and has not
 * been back above them by 1 % since, or was below them when they were first watched). A
 * position not held is armed for every threshold at or below its health factor. Reading a
 * position at health factor h changes nothing while h stays in its quiet interval: at or above
 * the highest threshold it is armed for, and below the next threshold x 1.01 (not held: at or
 * above the highest threshold). Out of it, the read fires the thresholds in (h, armed] and sets
 * armed = max(min(armed, h), h / 1.01); the position is held while armed is below the highest
 * threshold. So what a pass fires depends only on where health factors are against the
 * thresholds and their re-arm levels (threshold x 1.01), never on how many passes saw them in
 * between. A position at or above the highest threshold x 1.01 is armed for every threshold.
 * When the thresholds change, a pass reads positions with the last pass's thresholds (only those
 * of both fire); a held position left quiet then has its level brought into [h / 1.01, h]
 * (which changes nothing for those thresholds: none lies between), so a new threshold above its
 * health factor is not armed, and one 1 % or more below it is.
 *
 * So a pass reads only the positions that crossed one of those levels since the last pass:
 * - In an isolated market (Morpho, Fluid) a price move scales every health factor by the
 *   market's factor, so the order by health factor never changes, and the positions that
 *   crossed level L while the factor went from k0 to k are those with a stated health factor in
 *   [L / max(k0, k), L / min(k0, k)): one slice of the market's list per level, found by a
 *   galloping search of its stated health factors from the last slice. A market whose positions
 *   changed is read whole below the highest threshold x 1.01, with the positions it held.
 * - In a pooled market (Aave, Spark, Compound, Euler) positions show their account's health
 *   factor, which no market factor scales: each account holding a changed market is tested
 *   against its quiet interval (the intersection of its positions'), and read only out of it,
 *   or when its positions changed.
 * A new set of thresholds, or the first pass (which observes without firing), reads every
 * position below the highest threshold x 1.01. The crossings found are fired in the order of
 * the markets, then of each market's risk order, as a pass over every market would.
 */
export class HealthCrossings {
  private model: ReadModel | null = null;
  /** Per position number: its armed level while held, NaN when not held. */
  private armed = new Float64Array(0);
  /** Per position number: the pass that last read it. */
  private stamp = new Uint32Array(0);
  private passNo = 0;
  private heldCount = 0;
  /**
   * Per isolated market (by ord): the positions it held at its last whole read, and those it took
   * since (some may have been released since: release is idempotent).
   */
  private heldIn: (number[] | undefined)[] = [];
  /** Per isolated market: its health-factor factor when last read (NaN: never, read it whole). */
  private factorSeen = new Float64Array(0);
  /**
   * Per isolated market: the factors it can move to from the last read without any position
   * crossing a level, (low, high): a move inside them reads nothing (and touches no list).
   */
  private safeLow = new Float64Array(0);
  private safeHigh = new Float64Array(0);
  /** Per isolated market: the stated health factors of its list, in its order, as of its last whole read. */
  private statedIn: (Float64Array | undefined)[] = [];
  /**
   * Per account (pooled markets): its quiet interval [low, high) after the last read of it, in
   * single precision rounded inwards (a narrower interval only reads an account more often).
   */
  private quietLow = new Float32Array(0);
  private quietHigh = new Float32Array(0);
  /** Per account: the pass that took it to be read. */
  private takenAt = new Uint32Array(0);
  /** The thresholds of the last pass (a different set reads every position again). */
  private thresholdsSeen: readonly number[] = [];
  /** The highest threshold of the last pass: positions not held were armed up to it. */
  private lastMax = 0;
  /** This pass's highest threshold, thresholds and the crossings it has found so far. */
  private max = 0;
  private thresholdsNow: readonly number[] = [];
  private crossings: Crossing[] = [];
  /**
   * Whether this pass's thresholds differ from the last pass's; then those (`thresholdsBefore`)
   * are what positions were read with: only thresholds of both passes fire in it.
   */
  private thresholdsChanged = false;
  private thresholdsBefore: readonly number[] = [];
  private thresholdsBeforeSet: ReadonlySet<number> = new Set();
  /** This pass's highest threshold x 1.01: a position at or above it is armed for every threshold. */
  private bound = 0;
  private revision = -1;
  private indexSeen: SubscriptionIndex | null = null;
  /** The risk index's change version at the last pass. */
  private seenVersion = -1;

  /** Forgets everything (the next pass observes without firing). */
  reset(): void {
    this.model = null;
    this.armed = new Float64Array(0);
    this.stamp = new Uint32Array(0);
    this.heldCount = 0;
    this.forgetMarkets();
    this.revision = -1;
    this.seenVersion = -1;
  }

  /** Forgets what is kept per market and account (the next pass reads every one). */
  private forgetMarkets(): void {
    this.heldIn = [];
    this.factorSeen = new Float64Array(0);
    this.safeLow = new Float64Array(0);
    this.safeHigh = new Float64Array(0);
    this.statedIn = [];
    this.quietLow = new Float32Array(0);
    this.quietHigh = new Float32Array(0);
    this.takenAt = new Uint32Array(0);
    this.thresholdsSeen = [];
    this.lastMax = 0;
  }

  /** Positions held (below the highest threshold x 1.01, or not armed for some threshold). */
  get held(): number {
    return this.heldCount;
  }

  /** Room for position numbers below n (positions added by changes get higher numbers). */
  private ensure(n: number): void {
    if (n <= this.armed.length) return;
    const size = Math.max(n, this.armed.length * 2);
    this.armed = grown(this.armed, size, Number.NaN);
    this.stamp = grown(this.stamp, size, 0);
  }

  /** Room for n markets and m accounts (new accounts start out of any quiet interval). */
  private ensureMarkets(n: number, m: number): void {
    if (this.factorSeen.length < n) {
      this.factorSeen = grown(this.factorSeen, n, Number.NaN);
      this.safeLow = grown(this.safeLow, n, Number.NaN);
      this.safeHigh = grown(this.safeHigh, n, Number.NaN);
    }
    if (this.quietLow.length < m) {
      const size = Math.max(m, this.quietLow.length * 2);
      this.quietLow = grown(this.quietLow, size, Number.POSITIVE_INFINITY);
      this.quietHigh = grown(this.quietHigh, size, Number.NEGATIVE_INFINITY);
      this.takenAt = grown(this.takenAt, size, 0);
    }
  }

  /**
   * One pass over `model` as it is now. `nowMs`: the events' time. Nothing is done when neither
   * the model nor the subscriptions changed since the last pass.
   */
  pass(model: ReadModel, index: SubscriptionIndex, mode: 'live' | 'test', nowMs: number, out: Matched): void {
    this.events(model, mode, nowMs, this.match(model, index), out);
  }

  /**
   * The matching half of a pass: the crossings since the last pass that some subscriber wants,
   * in the order they fire, with their subscribers (`events` builds what is sent).
   */
  match(model: ReadModel, index: SubscriptionIndex): WantedCrossing[] {
    if (model !== this.model) {
      this.reset();
      this.model = model;
    }
    if (model.revision === this.revision && index === this.indexSeen) return [];
    this.revision = model.revision;
    this.indexSeen = index;
    const max = index.maxThreshold;
    const ths = index.thresholds;
    const { risk, catalog } = model;
    const since = this.seenVersion;
    this.seenVersion = risk.changeVersion;
    if (!(max > 0)) {
      // Nothing watched: every position armed again.
      this.armed.fill(Number.NaN);
      this.heldCount = 0;
      this.forgetMarkets();
      return [];
    }
    this.ensure(risk.size);
    // A new set of thresholds (or the first pass) reads every market; otherwise the changed ones.
    const all = !sameThresholds(ths, this.thresholdsSeen);
    this.thresholdsChanged = all;
    this.thresholdsBefore = this.thresholdsSeen;
    if (all) this.thresholdsBeforeSet = new Set(this.thresholdsSeen);
    if (all) {
      this.factorSeen = new Float64Array(0);
      this.safeLow = new Float64Array(0);
      this.safeHigh = new Float64Array(0);
      this.statedIn = [];
    }
    const ords = all
      ? Array.from({ length: catalog.size }, (_, ord) => ord)
      : risk.marketsChangedSince(since);
    ++this.passNo;
    this.max = max;
    this.bound = max * REARM_FACTOR;
    this.thresholdsNow = ths;
    const crossings: Crossing[] = [];
    this.crossings = crossings;
    const pooled: number[] = [];
    // The levels a health factor crosses to leave a quiet interval: each threshold and its re-arm level.
    const levels = Float64Array.from(new Set(ths.flatMap((t) => [t, t * REARM_FACTOR]))).sort();
    // Slices cost a search per level and market: with many distinct thresholds (subscribers
    // choose them freely) a market moved is read whole instead, as many positions as it holds
    // below the bound, whatever the number of thresholds.
    const sliced = levels.length <= MAX_SLICED_LEVELS;
    this.ensureMarkets(catalog.size, 0);
    for (const ord of ords) {
      if (risk.isPooled(ord)) pooled.push(ord);
      else if (
        !sliced ||
        !((this.factorSeen[ord] ?? Number.NaN) > 0) ||
        risk.positionsChangedAfter(ord, since)
      )
        this.readMarket(risk, ord, sliced ? levels : null);
      else {
        const k = risk.hfFactorOf(ord);
        // Inside its safe range: no position crossed a level.
        if (k > (this.safeLow[ord] ?? Number.NaN) && k < (this.safeHigh[ord] ?? Number.NaN))
          this.factorSeen[ord] = k;
        else this.readSlices(risk, ord, levels);
      }
    }
    if (pooled.length > 0) this.readAccounts(risk, all ? -1 : since);
    this.lastMax = max;
    this.thresholdsSeen = ths;
    this.crossings = [];
    return crossings.length > 0 ? this.wanted(model, index, crossings) : [];
  }

  /** Isolated market ord, whole: the prefix of its list below the bound, then what it held and no longer does. */
  private readMarket(risk: ReadModel['risk'], ord: number, levels: Float64Array | null): void {
    const { bound, passNo } = this;
    const list = risk.marketList(ord);
    const k = risk.hfFactorOf(ord);
    const held: number[] = [];
    if (list) {
      const hf0 = risk.statedHealthFactors();
      const stated = new Float64Array(list.length);
      for (let j = 0; j < list.length; j++) stated[j] = hf0[list[j] ?? 0] ?? Number.NaN;
      this.statedIn[ord] = stated;
      // hf0 x k < bound, as a read computes it
      let end = lowerBound(stated, bound / k, 0);
      while (end > 0 && (stated[end - 1] as number) * k >= bound) end--;
      while (end < stated.length && (stated[end] as number) * k < bound) end++;
      for (let j = 0; j < end; j++) {
        const i = list[j] ?? 0;
        if (this.read(i, (stated[j] ?? Number.NaN) * k, ord, j)) held.push(i);
      }
      if (levels) this.setSafeRange(ord, stated, k, levels);
    } else {
      this.statedIn[ord] = undefined;
      this.safeLow[ord] = 0;
      this.safeHigh[ord] = Number.POSITIVE_INFINITY;
    }
    const before = this.heldIn[ord];
    if (before) for (const i of before) if (this.stamp[i] !== passNo) this.release(i);
    this.heldIn[ord] = held.length > 0 ? held : undefined;
    this.factorSeen[ord] = k;
  }

  /**
   * The factors isolated market ord can move to from k with no position crossing a level: for
   * each level, the positions on either side of it (a little narrower, for rounding).
   */
  private setSafeRange(ord: number, stated: Float64Array, k: number, levels: Float64Array): void {
    let low = 0;
    let high = Number.POSITIVE_INFINITY;
    let at = 0;
    for (let l = 0; l < levels.length; l++) {
      const level = levels[l] as number;
      // The first position at or above the level as a read computes it (stated x k).
      at = lowerBound(stated, level / k, at);
      while (at > 0 && (stated[at - 1] as number) * k >= level) at--;
      while (at < stated.length && (stated[at] as number) * k < level) at++;
      const above = stated[at];
      const below = stated[at - 1];
      if (above !== undefined) low = Math.max(low, level / above);
      if (below !== undefined) high = Math.min(high, level / below);
    }
    this.safeLow[ord] = low * (1 + 4 * SLICE_SLACK);
    this.safeHigh[ord] = high * (1 - 4 * SLICE_SLACK);
  }

  /**
   * Isolated market ord after a move of its factor alone: the positions that crossed a level
   * (a threshold or its re-arm level) between the factor last read and now.
   */
  private readSlices(risk: ReadModel['risk'], ord: number, levels: Float64Array): void {
    const { passNo } = this;
    const k = risk.hfFactorOf(ord);
    const k0 = this.factorSeen[ord] ?? Number.NaN;
    this.factorSeen[ord] = k;
    const list = risk.marketList(ord);
    const stated = this.statedIn[ord];
    if (k === k0 || !list || !stated) return;
    // Stated health factors s with s x low < level <= s x high (a little wider), level by level.
    const overHigh = 1 / (Math.max(k, k0) * (1 + SLICE_SLACK));
    const overLow = 1 / (Math.min(k, k0) * (1 - SLICE_SLACK));
    const stamp = this.stamp;
    const n = stated.length;
    let from = 0;
    for (let l = 0; l < levels.length; l++) {
      const level = levels[l] as number;
      const bottom = level * overHigh;
      if (!((stated[from] as number) >= bottom)) from = lowerBound(stated, bottom, from);
      if (from >= n) break;
      const top = level * overLow;
      if (!((stated[from] as number) < top)) continue; // none crossed this level
      const to = lowerBound(stated, top, from + 1);
      for (let j = from; j < to; j++) {
        const i = list[j] ?? 0;
        if (stamp[i] === passNo) continue;
        const wasHeld = !Number.isNaN(this.armed[i] ?? Number.NaN);
        if (this.read(i, (stated[j] ?? Number.NaN) * k, ord, j) && !wasHeld) {
          const held = this.heldIn[ord];
          if (held) held.push(i);
          else this.heldIn[ord] = [i];
        }
      }
    }
    // Positions released since stay listed until the market's next whole read: keep the list short.
    this.setSafeRange(ord, stated, k, levels);
    const held = this.heldIn[ord];
    if (held && held.length > 2 * list.length + 16) {
      const now = [...new Set(held)].filter((i) => !Number.isNaN(this.armed[i] ?? Number.NaN));
      this.heldIn[ord] = now.length > 0 ? now : undefined;
    }
  }

  /**
   * Pooled markets: every account holding a changed market whose health factor left its quiet
   * interval, or whose positions changed, is read (its positions show its health factor).
   */
  private readAccounts(risk: ReadModel['risk'], since: number): void {
    const { max, bound, passNo } = this;
    const { ids, flat, start, hf, ord, listed } = risk.accountsChangedSince(since);
    this.ensureMarkets(0, start.length - 1);
    const { quietLow, quietHigh, takenAt } = this;
    // Accounts whose positions changed are read whatever their health factor (null: every account).
    const forced = since < 0 ? null : risk.accountsWithPositionChangesSince(since);
    const ths = this.thresholdsNow;
    // The accounts to read: those out of their quiet interval (a tight loop over typed arrays), then the forced ones.
    const toRead: number[] = [];
    const quiet = (id: number) => {
      const h = hf[id] as number;
      const high = quietHigh[id] as number;
      return h >= (quietLow[id] as number) && (h < high || high === Number.POSITIVE_INFINITY);
    };
    if (forced === null) {
      if (ids === null) for (let id = 0, n = start.length - 1; id < n; id++) toRead.push(id);
      else for (const id of ids) toRead.push(id);
    } else {
      if (ids === null) {
        for (let id = 0, n = start.length - 1; id < n; id++) if (!quiet(id)) toRead.push(id);
      } else for (const id of ids) if (!quiet(id)) toRead.push(id);
      for (const id of toRead) takenAt[id] = passNo;
      for (const id of forced) if (takenAt[id] !== passNo) toRead.push(id);
    }
    for (const id of toRead) {
      const h = hf[id] ?? Number.NaN;
      // The intersection of its listed positions' quiet intervals.
      let qLow = Number.NEGATIVE_INFINITY;
      let qHigh = Number.POSITIVE_INFINITY;
      for (let k = start[id] ?? 0, end = start[id + 1] ?? 0; k < end; k++) {
        const i = flat[k] ?? 0;
        if (listed[k] !== 1) {
          this.release(i);
          continue;
        }
        if (h < bound) this.read(i, h, ord[k] ?? 0, -1);
        else this.release(i);
        const a = this.armed[i] ?? Number.NaN;
        if (Number.isNaN(a)) {
          // Not held: quiet at or above the highest threshold.
          qLow = Math.max(qLow, max);
          continue;
        }
        const j = firstAboveIn(ths, a);
        const t = ths[j - 1];
        const next = ths[j];
        if (t !== undefined) qLow = Math.max(qLow, t);
        if (next !== undefined) qHigh = Math.min(qHigh, next * REARM_FACTOR);
      }
      quietLow[id] = singleAtLeast(qLow);
      quietHigh[id] = singleAtMost(qHigh);
    }
  }

  /** Reads position i at health factor h: notes its crossing, updates its armed level; true when held. */
  private read(i: number, h: number, ord: number, at: number): boolean {
    const { max, passNo, crossings } = this;
    const prev = this.armed[i] ?? Number.NaN;
    const wasHeld = !Number.isNaN(prev);
    this.stamp[i] = passNo;
    if (!(h < this.bound)) {
      // At or above the highest threshold x 1.01: armed for every threshold, not held.
      if (wasHeld) {
        this.armed[i] = Number.NaN;
        this.heldCount--;
      }
      return false;
    }
    // The thresholds it was last read with: the last pass's when they changed (only thresholds
    // of both passes fire in this one; a new one starts armed by the level it leaves).
    const changed = this.thresholdsChanged;
    const seen = changed ? this.thresholdsBefore : this.thresholdsNow;
    let armed: number;
    if (!wasHeld) {
      // Not held: armed up to the last pass's highest threshold (above it, as high as its health factor).
      armed = Math.max(this.lastMax, h);
    } else {
      // Quiet: at or above the highest threshold it is armed for, below the next one x 1.01.
      const j = firstAboveIn(seen, prev);
      const t = seen[j - 1];
      const next = seen[j];
      if ((t === undefined || h >= t) && next !== undefined && h < next * REARM_FACTOR) {
        if (!changed) return true;
        // New thresholds: the level brought into [h / 1.01, h] (no threshold of the last pass
        // lies between the two, so none of those changes), the new ones armed by it.
        armed = Math.min(Math.max(prev, h / REARM_FACTOR), h);
      } else armed = prev;
    }
    if (h < armed) {
      const t = seen[firstAboveIn(seen, h)];
      if (t !== undefined && t <= armed) crossings.push({ i, ord, at, h, armed, before: changed });
      armed = h;
    }
    armed = Math.max(armed, h / REARM_FACTOR);
    if (armed < max) {
      this.armed[i] = armed;
      if (!wasHeld) this.heldCount++;
      return true;
    }
    if (wasHeld) {
      this.armed[i] = Number.NaN;
      this.heldCount--;
    }
    return false;
  }

  /** Position i is no longer held (armed for every threshold again). */
  private release(i: number): void {
    if (Number.isNaN(this.armed[i] ?? Number.NaN)) return;
    this.armed[i] = Number.NaN;
    this.heldCount--;
  }

  /**
   * The crossings some subscriber wants: by market, then in each market's risk order, each's
   * thresholds ascending. Each crossing is looked up in the buckets it would be filed in first,
   * then matched against the filters of the subscribers there (most crossings are of positions
   * nobody watches).
   */
  private wanted(model: ReadModel, index: SubscriptionIndex, crossings: Crossing[]): WantedCrossing[] {
    const { risk, catalog } = model;
    const ths = index.thresholds;
    const wanted: WantedCrossing[] = [];
    for (const c of crossings) {
      const m = catalog.baseRecord(c.ord);
      let wallet: string | null = null;
      for (let from = index.firstAbove(c.h); from < ths.length; from++) {
        const t = ths[from];
        const buckets = index.thresholdBuckets[from];
        if (t === undefined || t > c.armed || buckets === undefined) break;
        if (c.before && !this.thresholdsBeforeSet.has(t)) continue;
        if (!buckets.filedFor(m.uniqueKey, m.chainId, m.protocol)) {
          if (!buckets.hasWallets) continue;
          wallet ??= risk.walletOf(c.i);
          if (!buckets.filedForWallet(wallet)) continue;
        }
        wallet ??= risk.walletOf(c.i);
        const a: EventAttributes = {
          type: 'position.health_factor_below',
          chainId: m.chainId,
          protocols: [m.protocol],
          marketKeys: [m.uniqueKey],
          wallet,
          threshold: t,
        };
        const subs = buckets.match(a, []);
        if (subs.length > 0) wanted.push({ i: c.i, ord: c.ord, at: c.at, attributes: a, subs });
      }
    }
    // (A crossing's thresholds are pushed ascending; the sort is stable.)
    wanted.sort((x, y) => x.ord - y.ord || (x.at >= 0 ? x.at - y.at : risk.riskBefore(x.i, y.i)));
    return wanted;
  }

  /**
   * The events of a pass's wanted crossings, as sent: each carries the position's view now, and
   * an id from its threshold, market, wallet and the model's time (the same crossing read twice
   * is stored once).
   */
  events(
    model: ReadModel,
    mode: 'live' | 'test',
    nowMs: number,
    wanted: readonly WantedCrossing[],
    out: Matched,
  ): void {
    let viewOf = -1;
    let view: PositionAtRiskView | null = null;
    for (const { i, attributes: a, subs } of wanted) {
      if (viewOf !== i || view === null) {
        view = model.risk.view(i);
        viewOf = i;
      }
      const key = a.marketKeys[0] ?? '';
      const id = `evt_${hash24(`${mode}:hf:${a.threshold}:${key}:${a.wallet}:${model.asOf}`)}`;
      emit(out, mode, id, a, nowMs, view, subs);
    }
  }
}

/** The key of an oracle: `<chainId>:<address>`. */
const oracleKey = (o: { chainId: number; address: string }) => `${o.chainId}:${o.address}`;

/** What the matcher reads of an oracle's view (the event's body is the whole view). */
export interface OracleEventView {
  chainId: number;
  address: string;
  health?: { lastUpdateTimestamp?: number | null } | null;
  markets: readonly { protocol: string; uniqueKey: string }[];
}

/**
 * The API's views an event carries as its body: an oracle as `GET /oracles/{chainId}/{address}`
 * serves it, a liquidation as `GET /liquidations` does. They are the query layer's; the
 * composition root hands them in (src/events/views.ts is kept out of the matcher's imports).
 */
export interface EventViews {
  /** Every oracle of the model past its heartbeat now. */
  staleOracles(model: ReadModel, nowMs: number): readonly Omit<OracleEventView, 'markets'>[];
  oracle(model: ReadModel, chainId: number, address: string, nowMs: number): OracleEventView | undefined;
  liquidation(model: ReadModel, l: LiquidationEvent): unknown;
}

function oracleAttributes(type: EventType, o: OracleEventView): EventAttributes {
  return {
    type,
    chainId: o.chainId,
    protocols: [...new Set(o.markets.map((m) => m.protocol))],
    marketKeys: o.markets.map((m) => m.uniqueKey),
    wallet: null,
    threshold: null,
  };
}

/**
 * Oracles crossing their heartbeat (oracle.stale) and updated again (oracle.recovered): the set
 * of stale oracles of the model now against the last pass's. The first pass of a model only
 * observes.
 */
export class OracleCrossings {
  private readonly views: EventViews;
  private model: ReadModel | null = null;
  /** Stale oracles of the last pass, with the update their staleness dates from. */
  private stale = new Map<string, number>();

  constructor(views: EventViews) {
    this.views = views;
  }

  pass(
    model: ReadModel,
    subs: readonly Subscriber[],
    mode: 'live' | 'test',
    nowMs: number,
    out: Matched,
  ): void {
    const now = new Map<string, number>();
    for (const o of this.views.staleOracles(model, nowMs))
      now.set(oracleKey(o), o.health?.lastUpdateTimestamp ?? 0);
    if (model !== this.model) {
      this.model = model;
      this.stale = now;
      return;
    }
    const fire = (type: EventType, key: string, since: number) => {
      if (subs.length === 0) return;
      const [chain, address] = mustSlice(key.split(':'), 0, 2, `the chain and address of oracle ${key}`);
      const o = this.views.oracle(model, Number(chain), address, nowMs);
      if (!o) return;
      const a = oracleAttributes(type, o);
      const wanted = subs.filter((s) => s.createdAt <= nowMs && matchesAll(s, a));
      emit(out, mode, `evt_${hash24(`${mode}:${type}:${key}:${since}`)}`, a, nowMs, o, wanted);
    };
    for (const [key, since] of now) if (!this.stale.has(key)) fire('oracle.stale', key, since);
    for (const [key, since] of this.stale) if (!now.has(key)) fire('oracle.recovered', key, since);
    this.stale = now;
  }
}

function matchesAll(s: Subscriber, a: EventAttributes): boolean {
  // (filters.ts `matches`, inlined for the oracle list: few subscribers, few events)
  if (!s.types.has(a.type)) return false;
  const f = s.filters;
  if (f.chainIds && a.chainId !== null && !f.chainIds.includes(a.chainId)) return false;
  if (
    f.protocols &&
    a.protocols.length > 0 &&
    !a.protocols.some((p) => (f.protocols as readonly string[]).includes(p))
  )
    return false;
  const marketIds = f.marketIds;
  if (marketIds && a.marketKeys.length > 0 && !a.marketKeys.some((m) => marketIds.includes(m))) return false;
  return true;
}

/** How far back liquidations are looked for at start-up and between passes (late writes of a source). */
export const LIQUIDATION_LOOKBACK_MS = 60 * 60_000;

/**
 * Liquidations recorded in the store's history, as position.liquidated events. Their ids come
 * from the liquidation (chain, transaction, log), so reading one twice (an overlap between passes,
 * a restart) stores it once.
 */
export class LiquidationFeed {
  private readonly views: EventViews;
  private since: number | null = null;
  private readonly seen = new Map<string, number>();

  constructor(views: EventViews) {
    this.views = views;
  }

  async pass(
    model: ReadModel,
    read: (fromMs: number) => Promise<LiquidationEvent[]>,
    index: SubscriptionIndex,
    mode: 'live' | 'test',
    nowMs: number,
    out: Matched,
  ): Promise<void> {
    const from = this.since ?? nowMs - LIQUIDATION_LOOKBACK_MS;
    const rows = await read(from);
    let newest = from;
    const matched: Subscriber[] = [];
    for (const l of rows) {
      newest = Math.max(newest, l.at);
      const key = `${l.chainId}:${l.txHash}:${l.logIndex}`;
      if (this.seen.has(key)) continue;
      this.seen.set(key, l.at);
      if (index.liquidations.size === 0) continue;
      const a: EventAttributes = {
        type: 'position.liquidated',
        chainId: l.chainId,
        protocols: [l.protocol],
        marketKeys: [l.marketKey],
        wallet: l.borrower,
        threshold: null,
      };
      matched.length = 0;
      index.liquidations.match(a, matched);
      const wanted = matched.filter((s) => s.createdAt <= l.at);
      emit(
        out,
        mode,
        `evt_${hash24(`${mode}:liq:${key}`)}`,
        a,
        nowMs,
        this.views.liquidation(model, l),
        wanted,
      );
    }
    // The next read overlaps by a minute: a source writing a little late is still read.
    this.since = Math.max(from, newest - 60_000);
    for (const [k, at] of this.seen) if (at < this.since - LIQUIDATION_LOOKBACK_MS) this.seen.delete(k);
  }
}
