import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import type { EventFilters, EventType, StoredEvent, SubscriptionRecord } from '../domain/records/events.ts';
import { hash24 } from '../store/events.ts';
import type { EventStore, StreamSlot } from '../store/ports/events.ts';
import { type EventAttributes, matches } from './filters.ts';

/** A comment line is sent this often on an idle stream, so proxies keep it open. */
export const KEEP_ALIVE_MS = 15_000;
/** A stream whose reader lets this much pile up unsent is closed (its reader reconnects with Last-Event-ID). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** A stream's interest (what the matcher computes for it) outlives it this long, so a reconnect misses nothing. */
export const INTEREST_TTL_MS = 60 * 60_000;
/**
 * A stream's slot among its key's `maxStreamsPerKey` is held this long in the store and renewed
 * while the stream lives (every keep-alive once a third of it has passed): the slots of a
 * server that died are free again within this time.
 */
export const STREAM_SLOT_TTL_MS = 90_000;
const PAGE = 500;

/** What filters see of a stored event (an oracle event's markets are in its data). */
export function storedAttributes(e: StoredEvent): EventAttributes {
  if (e.type === 'oracle.stale' || e.type === 'oracle.recovered') {
    const data = (JSON.parse(e.body) as { data?: { markets?: { uniqueKey: string; protocol: string }[] } })
      .data;
    const markets = data?.markets ?? [];
    return {
      type: e.type,
      chainId: e.chainId,
      protocols: [...new Set(markets.map((m) => m.protocol))],
      marketKeys: markets.map((m) => m.uniqueKey),
      wallet: null,
      threshold: null,
    };
  }
  return {
    type: e.type,
    chainId: e.chainId,
    protocols: e.protocol === null ? [] : [e.protocol],
    marketKeys: e.marketKey === null ? [] : [e.marketKey],
    wallet: e.wallet,
    threshold: e.threshold,
  };
}

/** The socket side of one stream: `write` reports the bytes still unsent after it. */
export interface StreamSink {
  write(text: string): number;
  close(): void;
}

export interface StreamRequest {
  accountId: string;
  keyId: string;
  mode: 'live' | 'test';
  types: EventType[];
  filters: EventFilters;
  /** The Last-Event-ID the client sent: the stream replays what followed it. */
  lastEventId: string | null;
  /** The stream's slot among its key's (claimSlot), freed when it closes; null: no limit. */
  slot?: HeldSlot | null;
}

/** A slot claimed among the `limit` of its key. */
export interface HeldSlot extends StreamSlot {
  limit: number;
}

interface Connection {
  mode: 'live' | 'test';
  keyId: string;
  types: ReadonlySet<EventType>;
  filters: EventFilters;
  sink: StreamSink;
  lastSeq: number;
  interest: SubscriptionRecord;
  interestRenewedAt: number;
  slot: HeldSlot | null;
  timer: NodeJS.Timeout | null;
  closed: boolean;
  /** While the stream replays: what the polls brought meanwhile, written after the replay. */
  queue: StoredEvent[] | null;
}

/** Events a replaying stream holds from the polls at most (more: it is dropped, and reconnects). */
const MAX_QUEUED = 10_000;

/**
 * The event streams of this process: one poll of the store's event log for all of them (every
 * pollMs while any is open), each event written to the streams whose filters it matches. A
 * stream opened with a Last-Event-ID first replays the log after that event. A reader that
 * does not keep up (more than maxBufferedBytes unsent) is dropped, never buffered without end.
 */
export class StreamHub {
  private readonly store: Pick<
    EventStore,
    | 'eventsAfter'
    | 'eventSeq'
    | 'lastEventSeq'
    | 'touchStreamInterest'
    | 'claimStreamSlot'
    | 'renewStreamSlot'
    | 'releaseStreamSlot'
  >;
  private readonly clock: Clock;
  private readonly pollMs: number;
  private readonly keepAliveMs: number;
  private readonly maxBufferedBytes: number;
  private readonly connections = new Set<Connection>();
  private readonly perKey = new Map<string, number>();
  /** Slots being freed in the store (close() waits for them, a little). */
  private readonly releasing = new Set<Promise<void>>();
  private readonly cursor = new Map<'live' | 'test', number>();
  private poller: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private onError: (err: unknown) => void;

  constructor(o: {
    store: StreamHub['store'];
    clock: Clock;
    pollMs?: number;
    keepAliveMs?: number;
    maxBufferedBytes?: number;
    onError?: (err: unknown) => void;
  }) {
    this.store = o.store;
    this.clock = o.clock;
    this.pollMs = o.pollMs ?? 250;
    this.keepAliveMs = o.keepAliveMs ?? KEEP_ALIVE_MS;
    this.maxBufferedBytes = o.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.onError = o.onError ?? (() => {});
  }

  /** Streams open on this key in this process. */
  openOn(keyId: string): number {
    return this.perKey.get(keyId) ?? 0;
  }

  /**
   * A slot for a new stream of the key among the `limit` it may hold open on every server of the
   * store together; null when it holds them all. If the store cannot be reached, this process's
   * own streams decide (the slot is then not recorded).
   */
  async claimSlot(keyId: string, limit: number): Promise<HeldSlot | null> {
    const now = Math.floor(this.clock.now());
    const slot: HeldSlot = { id: `ss_${randomUUID()}`, keyId, expiresAt: now + STREAM_SLOT_TTL_MS, limit };
    try {
      return (await this.store.claimStreamSlot(slot, limit, now)) ? slot : null;
    } catch (err) {
      this.onError(err);
      return this.openOn(keyId) < limit ? slot : null;
    }
  }

  /** Streams open. */
  get size(): number {
    return this.connections.size;
  }

  /**
   * Opens a stream: registers its interest, replays the log after `lastEventId` (nothing when it
   * is not given; a comment says so when that event is no longer retained), then follows the log.
   */
  async open(req: StreamRequest, sink: StreamSink): Promise<() => void> {
    const now = Math.floor(this.clock.now());
    const interest: SubscriptionRecord = {
      id: `st_${hash24(JSON.stringify([req.accountId, req.mode, [...req.types].sort(), req.filters]))}`,
      accountId: req.accountId,
      mode: req.mode,
      kind: 'stream',
      url: null,
      events: req.types,
      filters: req.filters,
      sealedSecret: null,
      createdAt: now,
      expiresAt: now + INTEREST_TTL_MS,
    };
    const conn: Connection = {
      mode: req.mode,
      keyId: req.keyId,
      types: new Set(req.types),
      filters: req.filters,
      sink,
      lastSeq: 0,
      interest,
      interestRenewedAt: now,
      slot: req.slot ?? null,
      timer: null,
      closed: false,
      queue: [],
    };
    this.perKey.set(req.keyId, this.openOn(req.keyId) + 1);
    const close = () => this.drop(conn);
    try {
      await this.store.touchStreamInterest(interest);
      let from = await this.head(req.mode);
      if (req.lastEventId !== null) {
        const seq = await this.store.eventSeq(req.lastEventId);
        if (seq === null)
          sink.write(`: event ${req.lastEventId.slice(0, 64)} is not retained; following from now\n\n`);
        else from = seq;
      }
      conn.lastSeq = from;
      sink.write(`retry: 2000\n: connected\n\n`);
      // Followed at once (the polls' events queue up), then the log is replayed up to now, then
      // the queue is written: each event once, by its place in the log.
      this.connections.add(conn);
      this.ensurePolling();
      for (;;) {
        if (conn.closed) return close;
        const page = await this.store.eventsAfter(conn.lastSeq, req.mode, PAGE);
        for (const e of page) this.send(conn, e);
        if (page.length < PAGE) break;
      }
      const queued = conn.queue ?? [];
      conn.queue = null;
      for (const e of queued) this.send(conn, e);
      if (conn.closed) return close;
      conn.timer = setInterval(() => this.keepAlive(conn), this.keepAliveMs);
      conn.timer.unref();
      return close;
    } catch (err) {
      this.drop(conn);
      throw err;
    }
  }

  /** The log position streams of a mode follow from (read once, then moved by the polls). */
  private async head(mode: 'live' | 'test'): Promise<number> {
    let c = this.cursor.get(mode);
    if (c === undefined) {
      c = await this.store.lastEventSeq();
      if (!this.cursor.has(mode)) this.cursor.set(mode, c);
    }
    // Another call may have set it meanwhile: the first one set is kept.
    return this.cursor.get(mode) ?? c;
  }

  /** From the polls: written, or queued while the stream replays. */
  private dispatch(conn: Connection, e: StoredEvent): void {
    if (conn.queue === null) {
      this.send(conn, e);
      return;
    }
    conn.queue.push(e);
    if (conn.queue.length > MAX_QUEUED) this.drop(conn);
  }

  private send(conn: Connection, e: StoredEvent): void {
    if (conn.closed || e.seq <= conn.lastSeq) return;
    conn.lastSeq = e.seq;
    if (!matches(conn.types, conn.filters, storedAttributes(e))) return;
    const unsent = conn.sink.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${e.body}\n\n`);
    if (unsent > this.maxBufferedBytes) this.drop(conn);
  }

  private keepAlive(conn: Connection): void {
    const unsent = conn.sink.write(': keep-alive\n\n');
    if (unsent > this.maxBufferedBytes) {
      this.drop(conn);
      return;
    }
    const now = Math.floor(this.clock.now());
    if (conn.slot && conn.slot.expiresAt - now <= (STREAM_SLOT_TTL_MS * 2) / 3) {
      const slot: HeldSlot = { ...conn.slot, expiresAt: now + STREAM_SLOT_TTL_MS };
      conn.slot = slot;
      // A slot that lapsed (the store unreachable for its whole time) and was taken by another
      // stream is claimed again; when the key holds its limit meanwhile, this stream closes.
      this.store
        .renewStreamSlot(slot)
        .then(async (held) => {
          if (held || conn.closed) return;
          if (!(await this.store.claimStreamSlot(slot, slot.limit, now))) this.drop(conn);
        })
        .catch(this.onError);
    }
    if (now - conn.interestRenewedAt >= INTEREST_TTL_MS / 4) {
      conn.interestRenewedAt = now;
      conn.interest = { ...conn.interest, expiresAt: now + INTEREST_TTL_MS };
      this.store.touchStreamInterest(conn.interest).catch(this.onError);
    }
  }

  private drop(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    if (conn.timer) clearInterval(conn.timer);
    this.connections.delete(conn);
    const n = this.openOn(conn.keyId) - 1;
    if (n > 0) this.perKey.set(conn.keyId, n);
    else this.perKey.delete(conn.keyId);
    conn.sink.close();
    if (conn.slot) {
      const released = this.store.releaseStreamSlot(conn.slot.id).catch(this.onError);
      this.releasing.add(released);
      void released.finally(() => this.releasing.delete(released));
    }
    if (this.connections.size === 0 && this.poller) {
      clearInterval(this.poller);
      this.poller = null;
      // Unfollowed, the cursors would age: the next stream reads the log's end afresh.
      this.cursor.clear();
    }
  }

  private ensurePolling(): void {
    if (this.poller) return;
    this.poller = setInterval(() => void this.poll(), this.pollMs);
    this.poller.unref();
  }

  /** One read of the log per mode with open streams, written to them. */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        for (const mode of ['live', 'test'] as const) {
          if (![...this.connections].some((c) => c.mode === mode)) continue;
          for (;;) {
            const from = await this.head(mode);
            const page = await this.store.eventsAfter(from, mode, PAGE);
            const last = page.at(-1);
            if (last === undefined) break;
            this.cursor.set(mode, last.seq);
            for (const e of page)
              for (const c of [...this.connections]) if (c.mode === mode) this.dispatch(c, e);
            if (page.length < PAGE) break;
          }
        }
      } catch (err) {
        this.onError(err);
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  /** Closes every stream (the server is shutting down). */
  async close(): Promise<void> {
    for (const c of [...this.connections]) this.drop(c);
    await this.polling;
    // The slots go back to the store before the process goes (else they lapse after their
    // time), unless the store does not answer within 2 s.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.releasing]),
      new Promise((r) => {
        timer = setTimeout(r, 2000);
      }),
    ]);
    clearTimeout(timer);
  }
}
