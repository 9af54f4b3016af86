/**
 * The local fallback of the Redis admission backend (see redis-admission.ts for the
 * guarantees): while Redis is unreachable, each instance admits floor(rate / instances) per key
 * in its own sliding window, and quotas are decided by the store (one batched reservation at a
 * time), or by this instance's counters if the store fails too.
 */

import { must } from '../domain/must.ts';
import { DAY_MS, monthOfDay } from '../domain/periods.ts';
import type { ReservedUsage, UsageReservation } from '../domain/records/usage.ts';
import { redisCall, timed } from '../metrics.ts';
import {
  type AdmissionRequest,
  type AdmissionResult,
  accountQuotaOf,
  type QuotaStatus,
  quotaStatus,
} from './admission.ts';
import { QuotaCounters } from './quota.ts';
import { dayOfNumber, LEASE_MS, type RedisLink, type WarnLogger } from './redis-link.ts';
import type { OutageCounts } from './redis-outage.ts';
import type { QuotaHashes } from './redis-quota-hashes.ts';
import type { UsageLog } from './redis-usage-log.ts';
import { type RateState, SlidingWindowLimiter, WINDOW_MS } from './sliding-window.ts';
import type { Tier } from './tiers.ts';

/** The fallback counters of one outage (for the dashboard, and for quotas if the store fails too). */
interface LocalState {
  quotas: QuotaCounters;
  /** The store refused a reservation (warned once per outage). */
  warned: boolean;
  /** Real time (ms) each key's counts were last loaded. */
  loadedAt: Map<string, number>;
  loading: Map<string, Promise<void>>;
}

/** The quota decision of a request admitted locally. */
type LocalQuota = (
  | { ok: true; day: string; countedMonthly: true }
  | {
      ok: false;
      reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA';
      /** The account bound refused it (limit and used are the account's). */
      byAccount?: true;
      limit: number;
      used: number;
      day: string;
      countedMonthly: boolean;
    }
) & {
  /** The key's counts of `day` and its month after the request, as the deciding side knows them. */
  after: { du: number; mu: number };
};

/** During an outage, a key's local counts are refreshed from the store this often (ms). */
const OUTAGE_RELOAD_MS = 1000;

export class LocalFallback {
  readonly #link: RedisLink;
  readonly #usage: UsageLog;
  readonly #hashes: QuotaHashes;
  readonly #outage: OutageCounts;
  readonly #logger: WarnLogger;
  /**
   * This instance's own admissions of the last second, per key: every local one, and (one
   * instance only) every one made through Redis. The local limiter of the fallback.
   */
  readonly own = new SlidingWindowLimiter();
  /** No local admission before this local time (start-up). */
  readonly #localFrom: number;
  /**
   * Admit calls sent to Redis and not settled yet, each with the local time by which it times
   * out: with one instance, local admissions wait for them (see the class comment of RedisAdmission).
   */
  readonly #admitsOpen = new Map<number, number>();
  #admitCalls = 0;
  /** Local admissions under way (the switch back to Redis waits for them). */
  #inFlight = 0;
  #settled: (() => void)[] = [];
  #local: LocalState | null = null;

  constructor(
    link: RedisLink,
    usage: UsageLog,
    hashes: QuotaHashes,
    outage: OutageCounts,
    logger: WarnLogger,
  ) {
    this.#link = link;
    this.#usage = usage;
    this.#hashes = hashes;
    this.#outage = outage;
    this.#logger = logger;
    this.#localFrom = link.time.now() + WINDOW_MS + (link.instances > 1 ? LEASE_MS : 0);
  }

  /** An admit call is sent to Redis, timing out at this local time: returns its number for admitSettled. */
  admitSent(timesOutAt: number): number {
    const call = ++this.#admitCalls;
    this.#admitsOpen.set(call, timesOutAt);
    return call;
  }

  /** The admit call is answered (and what it admitted recorded in `own`) or failed. */
  admitSettled(call: number): void {
    this.#admitsOpen.delete(call);
  }

  /** Forgets the counters of the outage (Redis serves, or a new outage begins). */
  reset(): void {
    this.#local = null;
  }

  async admit(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier } = req;
    const share = this.#share(tier);
    const now = this.#link.time.now();
    const from = this.#localFromAt(now);
    if (share === 0 || now < from) {
      const resetAt = share === 0 ? now + WINDOW_MS : from;
      return {
        ok: false,
        reason: 'RATE_LIMITED',
        rate: { limit: share, remaining: 0, resetAt },
        retryAfterMs: resetAt - now,
      };
    }
    this.#inFlight++;
    try {
      const rate = this.own.hit(keyId, share, now);
      const state: RateState = { limit: rate.limit, remaining: rate.remaining, resetAt: rate.resetAt };
      if (!rate.ok)
        return { ok: false, reason: 'RATE_LIMITED', rate: state, retryAfterMs: rate.retryAfterMs };
      if (!req.counted) return { ok: true, rate: state };
      const at = must(this.own.newest(keyId), 'the admitted timestamp');
      // The generation before the decision: a hash of it was built before this count existed.
      const gen = this.#hashes.generation(keyId);
      const q = await this.quota(req, now);
      this.#outage.add(keyId, q.day, q.countedMonthly, gen);
      const counts = { dayUsed: q.after.du, monthUsed: q.after.mu };
      if (q.ok) return { ok: true, rate: state, counts };
      // Refused with 429: the request takes no slot of the window (docs/decisions.md "Order of checks and what counts").
      this.own.remove(keyId, at);
      const after = this.own.peek(keyId, share, now);
      const scope = q.byAccount ? { scope: 'account' as const } : {};
      return { ok: false, reason: q.reason, ...scope, rate: after, limit: q.limit, used: q.used, counts };
    } finally {
      if (--this.#inFlight === 0) for (const wake of this.#settled.splice(0)) wake();
    }
  }

  /**
   * The quota decision of a locally admitted request: made by the store (reserveUsage), the
   * authority shared by every instance; if the store fails, by this instance's counters.
   */
  async quota(req: AdmissionRequest, nowMs: number): Promise<LocalQuota> {
    const { keyId, tier } = req;
    const day = dayOfNumber(Math.floor(nowMs / DAY_MS));
    const local = this.#localState();
    let u: ReservedUsage;
    const account = accountQuotaOf(req);
    const r: UsageReservation = {
      keyId,
      day,
      endpoint: req.endpoint,
      daily: tier.dailyQuota,
      monthly: tier.monthlyQuota,
      ...(account
        ? {
            account: {
              accountId: account.accountId,
              tier: tier.id,
              daily: account.limits.daily,
              monthly: account.limits.monthly,
            },
          }
        : {}),
    };
    try {
      u = await this.#usage.reserve(r);
    } catch (err) {
      if (!local.warned) {
        local.warned = true;
        this.#logger.warn({ err, keyId }, 'quotas not reserved in the store: decided on local counts');
      }
      await this.#ensureLocalLoaded(local, keyId, nowMs);
      const q = local.quotas.consume(keyId, { daily: tier.dailyQuota, monthly: tier.monthlyQuota }, nowMs);
      this.#usage.record(keyId, q.day, req.endpoint, q.countedMonthly, r);
      const counts = local.quotas.usage(keyId, nowMs);
      const after = { du: counts.dayUsed, mu: counts.monthUsed };
      return q.ok
        ? { ok: true, day: q.day, countedMonthly: true, after }
        : {
            ok: false,
            reason: q.reason,
            limit: q.limit,
            used: q.used,
            day: q.day,
            countedMonthly: q.countedMonthly,
            after,
          };
    }
    const after = { du: u.dayUsed, mu: u.monthUsed };
    // load() keeps the larger counts: what the dashboard shows meanwhile.
    local.quotas.load(keyId, { day, dayUsed: u.dayUsed, month: monthOfDay(day), monthUsed: u.monthUsed });
    if (u.byAccount) {
      return {
        ok: false,
        reason: u.byAccount.reason,
        byAccount: true,
        limit: u.byAccount.limit,
        used: u.byAccount.used,
        day,
        countedMonthly: u.countedMonthly,
        after,
      };
    }
    if (!u.countedMonthly) {
      return {
        ok: false,
        reason: 'DAILY_QUOTA',
        limit: must(tier.dailyQuota, 'the daily quota refusing'),
        used: u.dayUsed,
        day,
        countedMonthly: false,
        after,
      };
    }
    if (tier.monthlyQuota !== null && u.monthUsed > tier.monthlyQuota) {
      return {
        ok: false,
        reason: 'MONTHLY_QUOTA',
        limit: tier.monthlyQuota,
        used: u.monthUsed,
        day,
        countedMonthly: true,
        after,
      };
    }
    return { ok: true, day, countedMonthly: true, after };
  }

  async status(keyId: string, tier: Tier): Promise<QuotaStatus> {
    const local = this.#localState();
    const now = this.#link.time.now();
    await this.#ensureLocalLoaded(local, keyId, now);
    const share = this.#share(tier);
    const rate =
      share === 0 ? { limit: 0, remaining: 0, resetAt: now + WINDOW_MS } : this.own.peek(keyId, share, now);
    return quotaStatus(local.quotas.usage(keyId, now), rate, now);
  }

  /** Resolves once no local admission is under way; rejects after `timeoutMs` (a store that hangs). */
  settled(timeoutMs: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('local admissions still under way')), timeoutMs);
      this.#settled.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Pushes this instance's admissions of the last second into the keys' Redis windows (PUSH_LUA). */
  async pushOwn(): Promise<void> {
    const now = this.#link.time.now();
    const calls: Promise<unknown>[] = [];
    for (const [keyId, stamps] of this.own.inWindow(now)) {
      const args: string[] = [];
      let rank = 0;
      let previous: number | undefined;
      for (const t of stamps) {
        // One member per admission, the same in a retried push (which then moves it, never adds
        // it twice): instance, microsecond, and rank among equal stamps (a clock that stood
        // still); ending in 9 digits like the script's own members.
        rank = t === previous ? rank + 1 : 0;
        previous = t;
        args.push(
          `l${this.#link.id}.${Math.round(t * 1000)}.${rank}:000000000`,
          String(Math.max(0, Math.floor((now - t) * 1000))),
        );
      }
      calls.push(
        timed(
          redisCall('push'),
          performance.now(),
          this.#link.scripts.lrdsPush(
            this.#link.keys(keyId).w,
            this.#link.nowArg(),
            this.#link.windowTtlMs,
            ...args,
          ),
        ),
      );
    }
    await Promise.all(calls);
  }

  /**
   * The first local time a local admission may happen (see the class comment of
   * RedisAdmission), as known at `now`: with one instance, not before every admit call sent to
   * Redis has settled (at the latest when the last one times out; after `now` in any case while
   * one is open).
   */
  #localFromAt(now: number): number {
    let from = Math.max(
      this.#localFrom,
      this.#link.instances > 1 ? this.#link.leaseSentAt + LEASE_MS + WINDOW_MS : Number.NEGATIVE_INFINITY,
    );
    if (this.#link.instances === 1 && this.#admitsOpen.size > 0) {
      from = Math.max(from, now + 1);
      for (const timesOutAt of this.#admitsOpen.values()) from = Math.max(from, timesOutAt);
    }
    return from;
  }

  /** What one instance may admit per key on its own: floor, so that N instances never pass the rate. */
  #share(tier: Tier): number {
    return Math.floor(tier.ratePerSecond / this.#link.instances);
  }

  #localState(): LocalState {
    this.#local ??= {
      quotas: new QuotaCounters(),
      warned: false,
      loadedAt: new Map(),
      loading: new Map(),
    };
    return this.#local;
  }

  /** Seeds a key's local counters on first use in an outage, and refreshes them every second after. */
  async #ensureLocalLoaded(local: LocalState, keyId: string, nowMs: number): Promise<void> {
    const real = performance.now();
    if (local.quotas.has(keyId)) {
      const at = local.loadedAt.get(keyId) ?? 0;
      if (real - at >= OUTAGE_RELOAD_MS && !local.loading.has(keyId)) {
        local.loadedAt.set(keyId, real);
        this.#loadLocal(local, keyId, nowMs).catch((err) =>
          this.#logger.warn({ err, keyId }, 'reload failed'),
        );
      }
      return;
    }
    let pending = local.loading.get(keyId);
    if (!pending) {
      local.loadedAt.set(keyId, real);
      pending = this.#loadLocal(local, keyId, nowMs);
      local.loading.set(keyId, pending);
      pending.finally(() => local.loading.delete(keyId)).catch(() => {});
    }
    await pending;
  }

  async #loadLocal(local: LocalState, keyId: string, nowMs: number): Promise<void> {
    const dayNum = Math.floor(nowMs / DAY_MS);
    const floors = await this.#hashes.floors(keyId, dayNum);
    const day = dayOfNumber(dayNum);
    // load() keeps the larger count of a period, so a late or repeated load never lowers one.
    local.quotas.load(keyId, { day, dayUsed: floors.du, month: monthOfDay(day), monthUsed: floors.mu });
  }
}
