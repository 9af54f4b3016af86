import type { ReadModel } from '../data/read-model.ts';
import type { EventRecord, EventType } from '../domain/records/events.ts';
import type { LiquidationEvent } from '../domain/records/history.ts';
import { getOracle, listOracles, type OracleDetailView } from '../queries/assets.ts';
import { liquidationView } from '../queries/history.ts';
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
    protocol: a.protocols.length === 1 ? a.protocols[0]! : null,
    marketKey: a.marketKeys.length === 1 ? a.marketKeys[0]! : null,
    wallet: a.wallet,
    threshold: a.threshold,
  });
  for (const s of subs) if (s.kind === 'webhook') out.deliveries.push({ eventId: id, webhookId: s.id });
}

/**
 * Health-factor crossings of one read model, incrementally. For each position it keeps one
 * number, `armed`: the thresholds at or below it are armed (a crossing below them fires), those
 * above are not (the position crossed below them and has not been back above them by 1 %
 * since, or was below them when they were first watched). Each pass reads the positions below
 * the highest threshold x 1.01 from the risk index (ordered by health factor, O(log n + k)) and,
 * for each, fires the thresholds in (hf, armed], then sets armed = max(min(armed, hf), hf / 1.01).
 * Positions above that bound are armed for every threshold and are not held. So a pass costs
 * the positions near a threshold, and a crossing the binary search of the threshold list and
 * the subscribers filed under the position's wallet, market, chain and protocol.
 */
export class HealthCrossings {
  private model: ReadModel | null = null;
  /** Per position number: its armed level while held, NaN when not held. */
  private armed = new Float64Array(0);
  /** Per position number: the pass that last held it. */
  private stamp = new Uint32Array(0);
  private passNo = 0;
  /** Positions held after the last pass. */
  private heldList: number[] = [];
  /** The highest threshold of the last pass: positions not held were armed up to it. */
  private lastMax = 0;
  private revision = -1;
  private indexSeen: SubscriptionIndex | null = null;

  /** Forgets everything (the next pass observes without firing). */
  reset(): void {
    this.model = null;
    this.armed = new Float64Array(0);
    this.stamp = new Uint32Array(0);
    this.heldList = [];
    this.lastMax = 0;
    this.revision = -1;
  }

  /** Positions held (below the highest threshold x 1.01, or not armed for some threshold). */
  get held(): number {
    return this.heldList.length;
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
    this.ensure(risk.size);
    const armedOf = this.armed;
    const stamp = this.stamp;
    const passNo = ++this.passNo;
    const next: number[] = [];
    if (max > 0) {
      const ths = index.thresholds;
      const lastMax = this.lastMax;
      const matched: Subscriber[] = [];
      const q = {
        healthFactorThreshold: max * REARM_FACTOR,
        minBorrowUsd: 0,
        limit: Number.MAX_SAFE_INTEGER,
        marketOrd: 0,
      };
      // Market by market: each one's positions below the bound are a prefix of its list (a
      // binary search), with no merge across markets (the order across them does not matter here).
      for (let ord = 0; ord < catalog.size; ord++) {
        q.marketOrd = ord;
        for (const i of risk.query(q)) {
          const h = risk.healthFactorOf(i);
          const held = armedOf[i]!;
          // Not held: armed up to the last pass's highest threshold (above it, unknown: not armed).
          let armed = Number.isNaN(held) ? Math.max(lastMax, h) : held;
          if (h < armed) {
            let from = index.firstAbove(h);
            if (from < ths.length && ths[from]! <= armed) {
              const view = risk.view(i);
              const a: EventAttributes = {
                type: 'position.health_factor_below',
                chainId: view.chainId,
                protocols: [view.protocol],
                marketKeys: [view.market.uniqueKey],
                wallet: view.user.address,
                threshold: 0,
              };
              for (; from < ths.length && ths[from]! <= armed; from++) {
                const t = ths[from]!;
                a.threshold = t;
                matched.length = 0;
                index.byThreshold.get(t)!.match(a, matched);
                const id = `evt_${hash24(`${mode}:hf:${t}:${view.market.uniqueKey}:${view.user.address}:${model.asOf}`)}`;
                emit(out, mode, id, { ...a }, nowMs, view, matched);
              }
            }
            armed = h;
          }
          armed = Math.max(armed, h / REARM_FACTOR);
          if (armed < max) {
            armedOf[i] = armed;
            stamp[i] = passNo;
            next.push(i);
          } else armedOf[i] = Number.NaN;
        }
      }
    }
    // Held before, not below the bound now: armed for every threshold again.
    for (const i of this.heldList) if (stamp[i] !== passNo) armedOf[i] = Number.NaN;
    this.heldList = next;
    this.lastMax = max;
  }
}

/** The key of an oracle: `<chainId>:<address>`. */
const oracleKey = (o: { chainId: number; address: string }) => `${o.chainId}:${o.address}`;

function oracleAttributes(type: EventType, o: OracleDetailView): EventAttributes {
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
  private model: ReadModel | null = null;
  /** Stale oracles of the last pass, with the update their staleness dates from. */
  private stale = new Map<string, number>();

  pass(
    model: ReadModel,
    subs: readonly Subscriber[],
    mode: 'live' | 'test',
    nowMs: number,
    out: Matched,
  ): void {
    const now = new Map<string, number>();
    for (const o of listOracles(model, { stale: true, limit: Number.MAX_SAFE_INTEGER }, nowMs).items)
      now.set(oracleKey(o), o.health?.lastUpdateTimestamp ?? 0);
    if (model !== this.model) {
      this.model = model;
      this.stale = now;
      return;
    }
    const fire = (type: EventType, key: string, since: number) => {
      if (subs.length === 0) return;
      const [chain, address] = key.split(':');
      const o = getOracle(model, Number(chain), address!, nowMs).items[0];
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
  if (f.marketIds && a.marketKeys.length > 0 && !a.marketKeys.some((m) => f.marketIds!.includes(m)))
    return false;
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
  private since: number | null = null;
  private readonly seen = new Map<string, number>();

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
      emit(out, mode, `evt_${hash24(`${mode}:liq:${key}`)}`, a, nowMs, liquidationView(model, l), wanted);
    }
    // The next read overlaps by a minute: a source writing a little late is still read.
    this.since = Math.max(from, newest - 60_000);
    for (const [k, at] of this.seen) if (at < this.since - LIQUIDATION_LOOKBACK_MS) this.seen.delete(k);
  }
}
