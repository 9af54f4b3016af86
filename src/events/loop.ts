import type { ReadModel } from '../data/read-model.ts';
import { must } from '../domain/must.ts';
import { holderGone } from '../store/lease-holder.ts';
import type { EventStore } from '../store/ports/events.ts';
import type { HistoryStore } from '../store/ports/history.ts';
import { Deliverer, type DelivererOptions } from './deliverer.ts';
import { SubscriptionIndex } from './filters.ts';
import {
  type EventViews,
  HealthCrossings,
  LiquidationFeed,
  type Matched,
  OracleCrossings,
} from './matcher.ts';

/** Delivered and failed events are kept this long (EVENT_RETENTION_DAYS), streams replay from them. */
export const DEFAULT_EVENT_RETENTION_DAYS = 7;
const MODES = ['live', 'test'] as const;

export interface EventsLoopOptions extends Omit<DelivererOptions, 'store'> {
  store: EventStore;
  history: Pick<HistoryStore, 'liquidations'>;
  /** The read models events are derived from, by mode (null: not built). */
  models: { peek(mode: 'live' | 'test'): ReadModel | null };
  /** The API's views event bodies are (src/queries/event-views.ts). */
  views: EventViews;
  /** Events are kept this long once delivered (default 7 days). */
  retentionMs?: number;
  /** Pause between matching passes (default 250 ms) and delivery passes (default 250 ms). */
  matchEveryMs?: number;
  deliverEveryMs?: number;
  /** Oracles and liquidations are looked at no more often than this (default 1 s). */
  slowEveryMs?: number;
  /** The matching lease (default 15 s, renewed every pass). */
  leaseMs?: number;
  log?: { warn(obj: unknown, msg: string): void };
}

/**
 * The risk events' background work, in one place until a job runner schedules it: matching
 * (from the read models' changes to events in the outbox: one process at a time, the holder
 * of the store's matching lease), delivery (every process, each delivery claimed by one), and
 * retention. Times come from the injected clock; `start()` runs the passes on timers,
 * `matchPass()`, `deliverPass()` and `prunePass()` run one each (tests, the bench).
 */
export class EventsLoop {
  readonly deliverer: Deliverer;
  private readonly o: EventsLoopOptions;
  private readonly state: Map<
    'live' | 'test',
    { health: HealthCrossings; oracles: OracleCrossings; liquidations: LiquidationFeed }
  >;
  private indexes: Record<'live' | 'test', SubscriptionIndex> | null = null;
  private version = -1;
  private leader = false;
  private lastSlow = Number.NEGATIVE_INFINITY;
  private timers: NodeJS.Timeout[] = [];
  private stopped = true;
  private matching: Promise<number> | null = null;
  private delivering: Promise<number> | null = null;
  private lastPrune = Number.NEGATIVE_INFINITY;
  /** Milliseconds the last matching pass took in the health-factor matcher, per mode (the bench reads it). */
  readonly lastHealthPassMs: Record<'live' | 'test', number> = { live: 0, test: 0 };

  constructor(options: EventsLoopOptions) {
    this.o = options;
    this.state = new Map(
      MODES.map((m) => [
        m,
        {
          health: new HealthCrossings(),
          oracles: new OracleCrossings(options.views),
          liquidations: new LiquidationFeed(options.views),
        },
      ]),
    );
    this.deliverer = new Deliverer({ ...options, store: options.store });
  }

  /** Whether this process derived events at its last matching pass. */
  get isLeader(): boolean {
    return this.leader;
  }

  /** The subscription index of a mode (after a matching pass). */
  index(mode: 'live' | 'test'): SubscriptionIndex | null {
    return this.indexes?.[mode] ?? null;
  }

  /** One matching pass (joined if one is under way). Returns the events stored. */
  matchPass(): Promise<number> {
    this.matching ??= this.match().finally(() => {
      this.matching = null;
    });
    return this.matching;
  }

  private async match(): Promise<number> {
    const { store, clock } = this.o;
    // Whole milliseconds: events, leases and history reads are stamped in integer epoch ms.
    const now = Math.floor(clock.now());
    const claim = () => store.claimEventLease(this.o.holder, now, this.o.leaseMs ?? 15_000);
    this.leader = await claim();
    if (!this.leader) {
      // A holder that is gone (killed: a process of this host and PID namespace) is let go.
      const holder = await store.eventLeaseHolder(now);
      if (holder !== null && holderGone(holder)) {
        await store.releaseEventLease(holder);
        this.leader = await claim();
      }
    }
    if (!this.leader) {
      // Another process matches; taking over later starts from what is then (no stale state).
      for (const s of this.state.values()) s.health.reset();
      this.version = -1;
      return 0;
    }
    const version = await store.subscriptionsVersion();
    if (version !== this.version || this.indexes === null || this.hasExpiring) {
      const subs = await store.activeSubscriptions(now);
      this.indexes = {
        live: new SubscriptionIndex(subs.filter((s) => s.mode === 'live')),
        test: new SubscriptionIndex(subs.filter((s) => s.mode === 'test')),
      };
      this.expiresAt = Math.min(...subs.map((s) => s.expiresAt ?? Number.POSITIVE_INFINITY));
      this.version = version;
    }
    const out: Matched = { events: [], deliveries: [] };
    const slow = now - this.lastSlow >= (this.o.slowEveryMs ?? 1000);
    if (slow) this.lastSlow = now;
    for (const mode of MODES) {
      const model = this.o.models.peek(mode);
      const index = this.indexes[mode];
      if (!model) continue;
      const st = must(this.state.get(mode), `the state of mode ${mode}`);
      const t0 = performance.now();
      st.health.pass(model, index, mode, now, out);
      this.lastHealthPassMs[mode] = performance.now() - t0;
      if (slow) {
        st.oracles.pass(model, index.oracles, mode, now, out);
        // The store's liquidations are those of the dataset it holds (not of a sandbox built in memory).
        if (model.stored)
          await st.liquidations.pass(
            model,
            (fromMs) => this.o.history.liquidations({ fromMs }, 10_000),
            index,
            mode,
            now,
            out,
          );
      }
    }
    if (out.events.length === 0) return 0;
    const added = await store.appendEvents(out.events, out.deliveries);
    if (out.deliveries.length > 0) this.kick();
    return added;
  }

  private expiresAt = Number.POSITIVE_INFINITY;
  private get hasExpiring(): boolean {
    return this.o.clock.now() >= this.expiresAt;
  }

  /** One delivery pass: claims what is due and starts the attempts. */
  deliverPass(): Promise<number> {
    this.delivering ??= this.deliverer.pass().finally(() => {
      this.delivering = null;
    });
    return this.delivering;
  }

  /** Drops events older than the retention with nothing left to deliver (at most hourly on the timers). */
  async prunePass(): Promise<number> {
    const now = Math.floor(this.o.clock.now());
    this.lastPrune = now;
    return this.o.store.pruneEvents(now - (this.o.retentionMs ?? DEFAULT_EVENT_RETENTION_DAYS * 86_400_000));
  }

  /** A delivery pass soon (events were just stored). */
  kick(): void {
    if (this.stopped) return;
    const t = setTimeout(() => void this.safe(() => this.deliverPass(), 'webhook delivery pass failed'), 0);
    t.unref();
  }

  private failing = new Set<string>();
  private async safe(run: () => Promise<unknown>, msg: string): Promise<void> {
    try {
      await run();
      this.failing.delete(msg);
    } catch (err) {
      if (!this.failing.has(msg)) this.o.log?.warn({ err }, msg);
      this.failing.add(msg);
    }
  }

  /** Runs the passes on timers until `stop()`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.deliverer.resume();
    const every = (ms: number, run: () => Promise<unknown>, msg: string) => {
      const loop = () => {
        if (this.stopped) return;
        void this.safe(run, msg).finally(() => {
          if (this.stopped) return;
          const t = setTimeout(loop, ms);
          t.unref();
          this.timers.push(t);
          if (this.timers.length > 16) this.timers = this.timers.slice(-4);
        });
      };
      loop();
    };
    every(this.o.matchEveryMs ?? 250, () => this.matchPass(), 'risk event matching failed: retried');
    every(this.o.deliverEveryMs ?? 250, () => this.deliverPass(), 'webhook delivery pass failed: retried');
    every(
      60_000,
      async () => {
        if (this.o.clock.now() - this.lastPrune >= 3600_000) await this.prunePass();
      },
      'event retention pass failed: retried',
    );
  }

  /** Stops the timers, waits for the passes and attempts under way, and lets the matching lease go. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.deliverer.pause();
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    await this.matching?.catch(() => undefined);
    await this.delivering?.catch(() => undefined);
    await this.deliverer.idle();
    if (this.leader) await this.o.store.releaseEventLease(this.o.holder).catch(() => undefined);
    this.leader = false;
  }
}
