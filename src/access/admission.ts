import { nextUtcMidnight, nextUtcMonthStart, utcDay, utcMonth } from '../domain/periods.ts';
import type { UsageEvent } from '../domain/records/usage.ts';
import { BackendUnavailableError } from '../domain/unavailable.ts';
import type { UsageStore } from '../store/ports/usage.ts';
import { newUsageBatchId } from '../store/usage.ts';
import { type AccountQuota, accountQuotas, QuotaCounters, type QuotaUsage } from './quota.ts';
import { type RateState, SlidingWindowLimiter } from './sliding-window.ts';
import type { Tier } from './tiers.ts';

export { BackendUnavailableError };

export interface AdmissionRequest {
  keyId: string;
  /**
   * The key's account: counted requests are also held to the account's quota bound (its keys
   * of the tier together; see accountQuotas()). Without it, only the key's own quotas apply.
   */
  accountId?: string;
  tier: Tier;
  /** Route pattern, for per-endpoint usage. */
  endpoint: string;
  /** False for routes that are rate limited but not counted toward quotas (`/client/*`). */
  counted: boolean;
  nowMs: number;
}

/** A key's counts of the current UTC day and month, this request included (counted requests). */
export interface QuotaCounts {
  dayUsed: number;
  monthUsed: number;
}

/**
 * Expected outcomes of the limiter and quota checks (docs/decisions.md "Order of checks and what counts"), as values. `counts` comes
 * with every counted request the window let through (the RateLimit headers of "Quotas in headers" (docs/decisions.md) use it).
 */
export type AdmissionResult =
  | { ok: true; rate: RateState; counts?: QuotaCounts }
  | { ok: false; reason: 'RATE_LIMITED'; rate: RateState; retryAfterMs: number }
  | {
      ok: false;
      reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA';
      /** Present when the account's bound refused it: limit and used are then the account's. */
      scope?: 'account';
      rate: RateState;
      limit: number;
      used: number;
      counts?: QuotaCounts;
    };

export interface QuotaStatus {
  day: string;
  dayUsed: number;
  dayResetAt: number;
  month: string;
  monthUsed: number;
  monthResetAt: number;
  rate: RateState;
}

/**
 * Rate limit, daily and monthly quota in one step, per key. Implementations: in-process with
 * counts made durable in the store (this file), and Redis (one atomic script per request).
 */
export interface Admission {
  readonly backend: 'memory' | 'redis';
  /** Whether the backend's shared state is reachable ('down': enforcing locally). Default 'up'. */
  state?(): 'up' | 'down';
  admit(req: AdmissionRequest): Promise<AdmissionResult>;
  /** Current counts and limiter state, without counting anything. */
  status(keyId: string, tier: Tier, nowMs: number): Promise<QuotaStatus>;
  close(): Promise<void>;
}

/** The dashboard view of a key's counters and limiter state at `nowMs`. */
export function quotaStatus(u: QuotaUsage, rate: RateState, nowMs: number): QuotaStatus {
  return {
    day: u.day,
    dayUsed: u.dayUsed,
    dayResetAt: nextUtcMidnight(nowMs),
    month: u.month,
    monthUsed: u.monthUsed,
    monthResetAt: nextUtcMonthStart(nowMs),
    rate,
  };
}

/**
 * The account bound a counted request is decided against, if it has one: the counters of the
 * account's keys of the request's tier (live and test together), with the tier's limits.
 */
export function accountQuotaOf(
  req: Pick<AdmissionRequest, 'accountId' | 'tier'>,
): (AccountQuota & { accountId: string }) | undefined {
  if (req.accountId === undefined) return undefined;
  const limits = accountQuotas(req.tier);
  if (limits.daily === null && limits.monthly === null) return undefined;
  return { id: accountCountersId(req.accountId, req.tier.id), accountId: req.accountId, limits };
}

/** The id of an account bound's counters: never a key id (those start with `key_`). */
export function accountCountersId(accountId: string, tier: string): string {
  return `account:${accountId}:${tier}`;
}

/**
 * Group commit of usage events: every event recorded during one turn of the event loop is
 * written in ONE store call at the end of that turn, and each caller's promise settles only
 * once its event is durable. Under load many requests share a commit; alone, a request
 * waits one turn. A caller that proceeds only after `record()` resolves never answers a
 * request whose count could still be lost.
 *
 * When a write fails the batch is kept in memory and written again every second until the
 * store answers (callers are not held up: serving goes on, counting goes on in memory);
 * `durable` is false meanwhile. Only a crash during such an outage loses counts. A failed
 * write may still have been applied (its COMMIT sent, the answer lost), so it is written
 * again as the same batch, under the id it got when it was formed (Store.recordUsage skips
 * an id already applied), never merged with newer events: those wait, and form the next
 * batch once it is through.
 */
export class GroupCommit {
  private readonly store: UsageStore;
  private readonly onError: ((err: unknown) => void) | undefined;
  /** Recorded, not yet taken by a write. */
  private pending: UsageEvent[] = [];
  /** A batch whose write failed: written again, as itself, before anything else. */
  private failed: { id: string; events: UsageEvent[] } | null = null;
  /** The end of the write queue: one write at a time, each taking what waits when it starts. */
  private writes: Promise<void> = Promise.resolve();
  private turn: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  /** The last write failed: the outage was told to `onError`. */
  private failing = false;

  /** `onError`: told the error when writes start failing, and null once one goes through again. */
  constructor(store: UsageStore, onError?: (err: unknown) => void) {
    this.store = store;
    this.onError = onError;
  }

  /** False while counts wait in memory for an unreachable store. */
  get durable(): boolean {
    return this.failed === null;
  }

  /**
   * Resolves once a write took the event, or waited behind a failed batch that is still not
   * through (the event is durable unless `durable` says otherwise).
   */
  record(event: UsageEvent): Promise<void> {
    this.pending.push(event);
    if (!this.turn) {
      this.turn = new Promise<void>((resolve) => {
        setImmediate(() => {
          this.turn = null;
          this.enqueue().then(resolve);
        });
      });
    }
    return this.turn;
  }

  /** Queues one write after the ones already queued; it never rejects. */
  private enqueue(): Promise<void> {
    const write = this.writes.then(() => this.writeWaiting());
    this.writes = write;
    return write;
  }

  private async writeWaiting(): Promise<void> {
    if (this.failed) {
      if (!(await this.write(this.failed))) return;
      this.failed = null;
    }
    if (this.pending.length === 0) return;
    const batch = { id: newUsageBatchId(), events: this.pending };
    this.pending = [];
    if (!(await this.write(batch))) this.failed = batch;
  }

  /** One attempt at `batch`; false (retry scheduled) when it failed. */
  private async write(batch: { id: string; events: UsageEvent[] }): Promise<boolean> {
    try {
      await this.store.recordUsage(batch.events, batch.id);
      if (this.failing) this.onError?.(null);
      this.failing = false;
      return true;
    } catch (err) {
      // Told once per outage (and once when it ends), however many retries it takes.
      if (!this.failing) this.onError?.(err);
      this.failing = true;
      this.scheduleRetry();
      return false;
    }
  }

  private scheduleRetry(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.failed) void this.enqueue();
    }, 1000);
    this.retry.unref();
  }

  /** Writes whatever still waits (shutdown); throws if the store still refuses it. */
  async close(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.turn) await this.turn;
    await this.enqueue();
    const left = (this.failed?.events.length ?? 0) + this.pending.length;
    if (left > 0) throw new Error(`${left} usage counts could not be written`);
  }
}

/**
 * The embedded backend: an exact sliding window and quota counters in memory; every counted
 * request is made durable in the store (group commit, above) before its answer goes out, so
 * a restart or a kill -9 loses no count of an answered request. Counts are seeded from the
 * store the first time a key is seen.
 */
export class LocalAdmission implements Admission {
  readonly backend = 'memory' as const;
  private readonly store: UsageStore;
  private readonly limiter = new SlidingWindowLimiter();
  private readonly quotas = new QuotaCounters();
  private readonly loading = new Map<string, Promise<void>>();
  /** The account counters each key last counted toward (see admit: a moved key). */
  private readonly keyAccount = new Map<string, string>();
  private readonly usage: GroupCommit;
  private lastSweepDay = '';

  constructor(store: UsageStore, options: { onStoreError?: (err: unknown) => void } = {}) {
    this.store = store;
    this.usage = new GroupCommit(store, options.onStoreError);
  }

  /** 'down' while counts cannot be written to the store (they wait in memory). */
  state(): 'up' | 'down' {
    return this.usage.durable ? 'up' : 'down';
  }

  /** Seeds the counters of an account bound from the store (its keys' counts), once. */
  private async ensureAccountLoaded(
    accountId: string,
    tier: Tier,
    account: AccountQuota,
    nowMs: number,
  ): Promise<void> {
    const day = utcDay(nowMs);
    await this.loadOnce(account.id, nowMs, () =>
      this.store.accountUsageTotals({ accountId, tier: tier.id }, day, {
        daily: tier.dailyQuota,
        monthly: tier.monthlyQuota,
      }),
    );
  }

  private async ensureLoaded(keyId: string, nowMs: number): Promise<void> {
    const day = utcDay(nowMs);
    if (day !== this.lastSweepDay) {
      this.quotas.evictExpired(nowMs);
      this.lastSweepDay = day;
    }
    await this.loadOnce(keyId, nowMs, () => this.store.usageTotals(keyId, day));
  }

  /** Seeds counters `id` with what `read` gets from the store, unless they are held already. */
  private async loadOnce(
    keyId: string,
    nowMs: number,
    read: () => Promise<{ dayUsed: number; monthUsed: number }>,
  ): Promise<void> {
    const day = utcDay(nowMs);
    if (this.quotas.has(keyId)) return;
    let pending = this.loading.get(keyId);
    if (!pending) {
      pending = read().then(
        (totals) => {
          if (this.quotas.has(keyId)) return;
          this.quotas.load(keyId, {
            day,
            dayUsed: totals.dayUsed,
            month: utcMonth(nowMs),
            monthUsed: totals.monthUsed,
          });
        },
        (err: unknown) => {
          // Without its counts a key cannot be held to its quota: refuse rather than guess.
          throw new BackendUnavailableError(`usage counts unavailable: ${(err as Error).message}`);
        },
      );
      this.loading.set(keyId, pending);
      pending.finally(() => this.loading.delete(keyId)).catch(() => {});
    }
    await pending;
  }

  async admit(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier, nowMs } = req;
    const account = req.counted ? accountQuotaOf(req) : undefined;
    if (req.counted) await this.ensureLoaded(keyId, nowMs);
    if (account) {
      // A key moved to another account or tier: both accounts' counters are read again from the
      // store, which states the move (its use leaves the old account and joins the new one).
      const before = this.keyAccount.get(keyId);
      if (before !== account.id) {
        if (this.keyAccount.size >= 100_000) this.keyAccount.clear();
        this.keyAccount.set(keyId, account.id);
        if (before !== undefined) {
          this.quotas.forget(before);
          this.quotas.forget(account.id);
        }
      }
      await this.ensureAccountLoaded(account.accountId, tier, account, nowMs);
    }
    const rate = this.limiter.hit(keyId, tier.ratePerSecond, nowMs);
    const state: RateState = { limit: rate.limit, remaining: rate.remaining, resetAt: rate.resetAt };
    if (!rate.ok) return { ok: false, reason: 'RATE_LIMITED', rate: state, retryAfterMs: rate.retryAfterMs };
    if (!req.counted) return { ok: true, rate: state };
    const q = this.quotas.consume(
      keyId,
      { daily: tier.dailyQuota, monthly: tier.monthlyQuota },
      nowMs,
      account,
    );
    const u = this.quotas.usage(keyId, nowMs);
    const counts = { dayUsed: u.dayUsed, monthUsed: u.monthUsed };
    await this.usage.record({ keyId, day: q.day, endpoint: req.endpoint, countedMonthly: q.countedMonthly });
    if (q.ok) return { ok: true, rate: state, counts };
    // Refused with 429: the request takes no slot of the window (docs/decisions.md "Order of checks and what counts").
    this.limiter.release(keyId);
    const after = this.limiter.peek(keyId, tier.ratePerSecond, nowMs);
    return {
      ok: false,
      reason: q.reason,
      ...(q.scope ? { scope: q.scope } : {}),
      rate: after,
      limit: q.limit,
      used: q.used,
      counts,
    };
  }

  async status(keyId: string, tier: Tier, nowMs: number): Promise<QuotaStatus> {
    await this.ensureLoaded(keyId, nowMs);
    return quotaStatus(
      this.quotas.usage(keyId, nowMs),
      this.limiter.peek(keyId, tier.ratePerSecond, nowMs),
      nowMs,
    );
  }

  async close(): Promise<void> {
    await this.usage.close();
  }
}
