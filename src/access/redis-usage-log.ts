/**
 * The durability of the Redis admission backend's counts (see redis-admission.ts): every
 * counted request is buffered as a usage event and written to the store in batches, and the
 * quota decisions made in the store (reservations) are grouped, one transaction at a time.
 */

import { must } from '../domain/must.ts';
import { monthOfDay } from '../domain/periods.ts';
import type { ReservedUsage, UsageEvent, UsageReservation } from '../domain/records/usage.ts';
import type { UsageStore } from '../store/ports/usage.ts';
import { newUsageBatchId } from '../store/usage.ts';
import { inner, type WarnLogger } from './redis-link.ts';

/** A counted request waiting for its reservation in the store (local fallback). */
interface PendingReservation {
  r: UsageReservation;
  resolve: (u: ReservedUsage) => void;
  reject: (err: unknown) => void;
}

/** Usage events and the id they are written under, on every attempt (Store.recordUsage). */
interface UsageBatch {
  id: string;
  events: UsageEvent[];
}

/**
 * This instance's counted requests on their way to the store, and its reservations there.
 * Writes, reservations and the reads of store totals that must not overlap a write run one at
 * a time (`exclusive`).
 */
export class UsageLog {
  readonly #store: UsageStore;
  readonly #logger: WarnLogger;
  #buffer: UsageEvent[] = [];
  /**
   * Batches written before the buffer, each as itself (its id), since a failed write may have
   * been applied: ones whose write failed, and the local counts of a failed reservation.
   */
  #batches: UsageBatch[] = [];
  /** Requests of a failed reservation: the batch (the reservation's id) their local counts go to. */
  readonly #unsure = new WeakMap<UsageReservation, { batch: UsageBatch; waiting: number }>();
  /** Unflushed events per key and day (buffered or being written): n counted, m counted monthly. */
  readonly #pending = new Map<string, Map<string, { n: number; m: number }>>();
  /** Serializes flushes and the reads of store totals that must not overlap one. */
  #chain: Promise<unknown> = Promise.resolve();
  #reservations: PendingReservation[] = [];
  #reserveState: 'idle' | 'scheduled' | 'running' = 'idle';

  constructor(store: UsageStore, logger: WarnLogger) {
    this.#store = store;
    this.#logger = logger;
  }

  /** Writes the buffered usage events to the store. */
  flush(): Promise<void> {
    return this.exclusive(async () => {
      await this.#flushOnce();
    });
  }

  /** Buffers a counted request; `failed`: the reservation it had, which failed (see #unsure). */
  record(
    keyId: string,
    day: string,
    endpoint: string,
    countedMonthly: boolean,
    failed?: UsageReservation,
  ): void {
    const event = { keyId, day, endpoint, countedMonthly };
    const group = failed && this.#unsure.get(failed);
    if (group) {
      group.batch.events.push(event);
      if (--group.waiting === 0) this.#batches.push(group.batch);
    } else this.#buffer.push(event);
    const byDay = inner(this.#pending, keyId);
    const p = byDay.get(day);
    if (p) {
      p.n++;
      if (countedMonthly) p.m++;
    } else byDay.set(day, { n: 1, m: countedMonthly ? 1 : 0 });
  }

  /** Unflushed events of a key: counted on `day`, and counted monthly in `day`'s month. */
  pendingFor(keyId: string, day: string): { n: number; m: number } {
    const byDay = this.#pending.get(keyId);
    if (!byDay) return { n: 0, m: 0 };
    const month = monthOfDay(day);
    let m = 0;
    for (const [d, p] of byDay) if (monthOfDay(d) === month) m += p.m;
    return { n: byDay.get(day)?.n ?? 0, m };
  }

  /** Runs `fn` once the flushes and reads queued before it are done, none beside it. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Events not written to the store yet. */
  unwritten(): number {
    return this.#batches.reduce((n, b) => n + b.events.length, this.#buffer.length);
  }

  /**
   * Reserves one counted request in the store. One reservation transaction at a time: the
   * requests that arrive meanwhile share the next one, so under load the batches grow instead
   * of queueing up behind each other (a request waits at most for the one under way and its own).
   */
  reserve(r: UsageReservation): Promise<ReservedUsage> {
    return new Promise((resolve, reject) => {
      this.#reservations.push({ r, resolve, reject });
      this.#scheduleReservations();
    });
  }

  #scheduleReservations(): void {
    if (this.#reserveState !== 'idle' || this.#reservations.length === 0) return;
    this.#reserveState = 'scheduled';
    // The rest of this event-loop turn joins the batch.
    setImmediate(() => this.#runReservations());
  }

  #runReservations(): void {
    this.#reserveState = 'running';
    const batch = this.#reservations;
    this.#reservations = [];
    const id = newUsageBatchId();
    // After this instance's buffered events, so the store's totals include them.
    this.exclusive(async () => {
      // The store decides on its totals: they must hold this instance's counts (else the
      // reservation fails, and the requests are decided on this instance's own counters).
      if (!(await this.#flushOnce())) throw new Error("this instance's usage counts could not be written");
      return this.#store.reserveUsage(
        batch.map((b) => b.r),
        id,
      );
    })
      .then(
        (results) => {
          batch.forEach((b, i) => {
            const result = results[i];
            if (result === undefined) b.reject(new Error('internal error: a reservation has no result'));
            else b.resolve(result);
          });
        },
        (err: unknown) => {
          // It may have been applied (its COMMIT sent, the answer lost): the counts its requests
          // get locally are written under its id, so the store applies them only if it was not.
          const group = { batch: { id, events: [] as UsageEvent[] }, waiting: batch.length };
          for (const b of batch) {
            this.#unsure.set(b.r, group);
            b.reject(err);
          }
        },
      )
      .finally(() => {
        this.#reserveState = 'idle';
        this.#scheduleReservations();
      });
  }

  /**
   * Writes what is unwritten, in order: formed batches first, then the buffer as a new batch;
   * false when a write failed (it and the rest stay for later).
   */
  async #flushOnce(): Promise<boolean> {
    for (let first = this.#batches[0]; first !== undefined; first = this.#batches[0]) {
      if (!(await this.#write(first))) return false;
      this.#batches.shift();
    }
    if (this.#buffer.length === 0) return true;
    const batch = { id: newUsageBatchId(), events: this.#buffer };
    this.#buffer = [];
    this.#batches.push(batch);
    if (!(await this.#write(batch))) return false;
    this.#batches.splice(this.#batches.indexOf(batch), 1);
    return true;
  }

  /** One attempt at `batch`; false when it failed (it stays in #batches). */
  async #write(batch: UsageBatch): Promise<boolean> {
    try {
      await this.#store.recordUsage(batch.events, batch.id);
    } catch (err) {
      this.#logger.warn({ err, events: this.unwritten() }, 'usage events not written to the store yet');
      return false;
    }
    for (const e of batch.events) {
      const byDay = must(this.#pending.get(e.keyId), `pending usage of ${e.keyId}`);
      const p = must(byDay.get(e.day), `pending usage of ${e.keyId} on ${e.day}`);
      p.n--;
      if (e.countedMonthly) p.m--;
      if (p.n === 0) byDay.delete(e.day);
      if (byDay.size === 0) this.#pending.delete(e.keyId);
    }
    return true;
  }
}
