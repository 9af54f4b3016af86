import type { ReadModel } from '../data/read-model.ts';
import type { PositionAtRiskView } from '../data/risk-index.ts';
import { must, mustSlice } from '../domain/must.ts';
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

/** A position that crossed below some thresholds in a pass: fired once the pass has read all. */
interface Crossing {
  i: number;
  ord: number;
  /** Its place in its market's list (isolated markets), -1 for a pooled position. */
  at: number;
  h: number;
  /** Its armed level before the crossing: the thresholds in (h, armed] fire. */
  armed: number;
}

/**
 * Health-factor crossings of one read model, incrementally. For each position it keeps one
 * number, `armed`: the thresholds at or below it are armed (a crossing below them fires), those
 * above are not (the position crossed below them and has not been back above them by 1 %
 * since, or was below them when they were first watched). A position read fires the thresholds
 * in (hf, armed], then sets armed = max(min(armed, hf), hf / 1.01); it is held while armed is
 * below the highest threshold, and a position not held is armed up to the last pass's highest
 * threshold (above it, as high as its health factor).
 *
 * After a pass a held position's armed level lies in [hf / 1.01, hf], so reading it again at the
 * same health factor fires nothing and changes nothing, whatever thresholds were added or
 * removed below the highest one; and a position not held is at or above the highest threshold.
 * So a pass reads only the positions whose health factor may have changed since the last one:
 * in each isolated market whose factors or positions changed, the positions below the highest
 * threshold x 1.01 (a binary search of the market's list, by health factor) and those it held
 * there; in the pooled markets, the positions of the accounts holding a changed market. Every
 * position below the bound is read again only when the highest threshold changes (or on the
 * first pass, which observes without firing). The crossings found are fired in the order of
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
  /** Per isolated market (by ord): its positions held after the last pass that read it. */
  private heldIn: (Uint32Array | undefined)[] = [];
  /** Per account (pooled markets): 1 while some of its positions are held. */
  private accountHeld = new Uint8Array(0);
  /** The highest threshold of the last pass: positions not held were armed up to it. */
  private lastMax = 0;
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
    this.heldIn = [];
    this.accountHeld = new Uint8Array(0);
    this.lastMax = 0;
    this.revision = -1;
    this.seenVersion = -1;
  }

  /** Positions held (below the highest threshold x 1.01, or not armed for some threshold). */
  get held(): number {
    return this.heldCount;
  }

  /** Room for position numbers below n (positions added by changes get higher numbers). */
  private ensure(n: number): void {
    if (n <= this.armed.length) return;
    const size = Math.max(n, this.armed.length * 2);
    const armed = new Float64Array(size).fill(Number.NaN);
    armed.set(this.armed);
    const stamp = new Uint32Array(size);
    stamp.set(this.stamp);
    this.armed = armed;
    this.stamp = stamp;
  }

  /**
   * One pass over `model` as it is now. `nowMs`: the events' time. Nothing is done when neither
   * the model nor the subscriptions changed since the last pass.
   */
  pass(model: ReadModel, index: SubscriptionIndex, mode: 'live' | 'test', nowMs: number, out: Matched): void {
    if (model !== this.model) {
      this.reset();
      this.model = model;
    }
    if (model.revision === this.revision && index === this.indexSeen) return;
    this.revision = model.revision;
    this.indexSeen = index;
    const max = index.maxThreshold;
    const { risk, catalog } = model;
    const since = this.seenVersion;
    this.seenVersion = risk.changeVersion;
    if (!(max > 0)) {
      // Nothing watched: every position armed again.
      this.armed.fill(Number.NaN);
      this.heldCount = 0;
      this.heldIn = [];
      this.accountHeld.fill(0);
      this.lastMax = 0;
      return;
    }
    this.ensure(risk.size);
    // A new highest threshold (or the first pass) reads every market; otherwise the changed ones.
    const all = max !== this.lastMax;
    const ords = all
      ? Array.from({ length: catalog.size }, (_, ord) => ord)
      : risk.marketsChangedSince(since);
    const passNo = ++this.passNo;
    const bound = max * REARM_FACTOR;
    const crossings: Crossing[] = [];
    const pooled: number[] = [];
    const hf0 = risk.statedHealthFactors();
    for (const ord of ords) {
      if (risk.isPooled(ord)) {
        pooled.push(ord);
        continue;
      }
      // Isolated: the prefix of the market's list below the bound, then what it held and no longer does.
      const list = risk.marketList(ord);
      const held: number[] = [];
      if (list) {
        const k = risk.hfFactorOf(ord);
        let lo = 0;
        let hi = list.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if ((hf0[list[mid] ?? 0] ?? Number.NaN) * k < bound) lo = mid + 1;
          else hi = mid;
        }
        for (let j = 0; j < lo; j++) {
          const i = list[j] ?? 0;
          if (this.read(i, (hf0[i] ?? Number.NaN) * k, max, passNo, ord, j, index, crossings)) held.push(i);
        }
      }
      const before = this.heldIn[ord];
      if (before) for (const i of before) if (this.stamp[i] !== passNo) this.release(i);
      this.heldIn[ord] = held.length > 0 ? Uint32Array.from(held) : undefined;
    }
    if (pooled.length > 0) {
      // Pooled: every position of the accounts holding a changed market (their health factor is the account's).
      // An account at or above the bound with nothing held is skipped.
      const { ids, flat, start, hf, ord, listed } = risk.accountsChangedSince(all ? -1 : since);
      if (this.accountHeld.length < start.length) {
        const grown = new Uint8Array(Math.max(start.length, this.accountHeld.length * 2));
        grown.set(this.accountHeld);
        this.accountHeld = grown;
      }
      const accountHeld = this.accountHeld;
      const count = ids === null ? start.length - 1 : ids.length;
      for (let n = 0; n < count; n++) {
        const id = ids === null ? n : (ids[n] ?? 0);
        const h = hf[id] ?? Number.NaN;
        if (!(h < bound) && accountHeld[id] === 0) continue;
        let any = 0;
        for (let k = start[id] ?? 0, end = start[id + 1] ?? 0; k < end; k++) {
          const i = flat[k] ?? 0;
          if (h < bound && listed[k] === 1) {
            if (this.read(i, h, max, passNo, ord[k] ?? 0, -1, index, crossings)) any = 1;
          } else this.release(i);
        }
        accountHeld[id] = any;
      }
    }
    this.lastMax = max;
    if (crossings.length > 0) this.fire(model, index, mode, nowMs, crossings, out);
  }

  /** Reads position i at health factor h: notes its crossing, updates its armed level; true when held. */
  private read(
    i: number,
    h: number,
    max: number,
    passNo: number,
    ord: number,
    at: number,
    index: SubscriptionIndex,
    crossings: Crossing[],
  ): boolean {
    const prev = this.armed[i] ?? Number.NaN;
    const wasHeld = !Number.isNaN(prev);
    // Not held: armed up to the last pass's highest threshold (above it, unknown: not armed).
    let armed = wasHeld ? prev : Math.max(this.lastMax, h);
    if (h < armed) {
      const t = index.thresholds[index.firstAbove(h)];
      if (t !== undefined && t <= armed) crossings.push({ i, ord, at, h, armed });
      armed = h;
    }
    armed = Math.max(armed, h / REARM_FACTOR);
    this.stamp[i] = passNo;
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
   * The pass's crossings as events: by market, then in each market's risk order, each's
   * thresholds ascending. Each crossing is matched first; only those some subscriber wants are
   * ordered and get a view and ids (most crossings, of positions nobody watches, cost a match).
   */
  private fire(
    model: ReadModel,
    index: SubscriptionIndex,
    mode: 'live' | 'test',
    nowMs: number,
    crossings: Crossing[],
    out: Matched,
  ): void {
    const { risk, catalog } = model;
    const ths = index.thresholds;
    const wanted: { c: Crossing; a: EventAttributes; subs: Subscriber[] }[] = [];
    for (const c of crossings) {
      const m = catalog.recordAt(c.ord);
      let wallet: string | null = null;
      for (let from = index.firstAbove(c.h); from < ths.length; from++) {
        const t = ths[from];
        if (t === undefined || t > c.armed) break;
        wallet ??= risk.walletOf(c.i);
        const a: EventAttributes = {
          type: 'position.health_factor_below',
          chainId: m.chainId,
          protocols: [m.protocol],
          marketKeys: [m.uniqueKey],
          wallet,
          threshold: t,
        };
        const subs = must(index.byThreshold.get(t), `the subscribers of threshold ${t}`).match(a, []);
        if (subs.length > 0) wanted.push({ c, a, subs });
      }
    }
    if (wanted.length === 0) return;
    // (A crossing's thresholds are pushed ascending; the sort is stable.)
    wanted.sort(
      (x, y) => x.c.ord - y.c.ord || (x.c.at >= 0 ? x.c.at - y.c.at : risk.riskBefore(x.c.i, y.c.i)),
    );
    let viewOf = -1;
    let view: PositionAtRiskView | null = null;
    for (const { c, a, subs } of wanted) {
      if (viewOf !== c.i || view === null) {
        view = risk.view(c.i);
        viewOf = c.i;
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
