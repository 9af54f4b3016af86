/**
 * Requests decided through Redis by the Redis admission backend (see redis-admission.ts): one
 * admit script per request (sliding window, the key's quotas and its account bound), the
 * seeds of missing hashes, and the hand-over to the store while an instance has no live lease
 * (STATUS.IN_STORE, then SETTLE_LUA).
 */

import { must } from '../domain/must.ts';
import { DAY_MS, monthOfDay } from '../domain/periods.ts';
import { redisCall, timed } from '../metrics.ts';
import {
  type AdmissionRequest,
  type AdmissionResult,
  accountQuotaOf,
  type QuotaStatus,
  quotaStatus,
} from './admission.ts';
import { dayNumber, dayOfNumber, newGeneration, type RedisLink } from './redis-link.ts';
import type { LocalFallback } from './redis-local.ts';
import type { OutageCounts } from './redis-outage.ts';
import type { QuotaHashes } from './redis-quota-hashes.ts';
import { STATUS } from './redis-scripts.ts';
import type { UsageLog } from './redis-usage-log.ts';
import type { RateState } from './sliding-window.ts';
import type { Tier } from './tiers.ts';

const SEED_ATTEMPTS = 3;
/**
 * A quota decision the store makes for a request Redis admitted (STATUS.IN_STORE) holds the
 * key's quotas in the store until it is settled in Redis, or at most this long (ms; the store's
 * calls are bounded well below it).
 */
const IN_STORE_MS = 5000;
/**
 * The store decides a key's quota only this long (ms) after Redis last decided one of its
 * counted requests: the counts Redis decided are in the instances' usage buffers until their
 * next flush (flushIntervalMs + one store write), and a store decision must see them all.
 */
const IN_STORE_AFTER_REDIS_MS = 1000;
/**
 * Once every instance is back on Redis, a request to a key whose decisions made in the store
 * are still being added to Redis waits for them (polling this often, ms), at most this long
 * (ms) before it is decided in the store too.
 */
const SETTLING_POLL_MS = 5;
const SETTLING_WAIT_MS = 200;

export interface RedisDecisionsDeps {
  link: RedisLink;
  usage: UsageLog;
  hashes: QuotaHashes;
  outage: OutageCounts;
  local: LocalFallback;
  /** Whether Redis serves the requests (it may be lost while a request retries). */
  serving(): boolean;
  /** Redis failed: the requests go to the local fallback. */
  goDown(err: unknown): void;
}

export class RedisDecisions {
  readonly #link: RedisLink;
  readonly #usage: UsageLog;
  readonly #hashes: QuotaHashes;
  readonly #outage: OutageCounts;
  readonly #local: LocalFallback;
  readonly #serving: () => boolean;
  readonly #goDown: (err: unknown) => void;
  /** Numbers this instance's requests (tokens of quota decisions made in the store). */
  #tokens = 0;

  constructor(deps: RedisDecisionsDeps) {
    this.#link = deps.link;
    this.#usage = deps.usage;
    this.#hashes = deps.hashes;
    this.#outage = deps.outage;
    this.#local = deps.local;
    this.#serving = deps.serving;
    this.#goDown = deps.goDown;
  }

  async admit(req: AdmissionRequest): Promise<AdmissionResult> {
    const link = this.#link;
    const { keyId, tier } = req;
    const { w, q, s } = link.keys(keyId);
    // The account bound: decided in the same script, on the account's own hash.
    const account = req.counted ? accountQuotaOf(req) : undefined;
    const a = link.accountKey(account ? account.id : '');
    if (account) {
      const moved = this.#hashes.trackAccount(keyId, account.id, a);
      if (moved) await moved;
    }
    const token = `${link.id}.${++this.#tokens}`;
    const waitUntil = performance.now() + SETTLING_WAIT_MS;
    for (let seeds = 0; ; ) {
      // Lost meanwhile (a retry after a seed or a wait): nothing more is sent to Redis.
      if (!this.#serving()) throw new Error('Redis lost during the request');
      const call = this.#local.admitSent(link.time.now() + link.commandTimeoutMs);
      let r: unknown[];
      try {
        r = await timed(
          redisCall('admit'),
          performance.now(),
          link.scripts.lrdsAdmit(
            w,
            q,
            link.leasesKey,
            s,
            a,
            link.nowArg(),
            tier.ratePerSecond,
            req.counted ? '1' : '0',
            tier.dailyQuota ?? -1,
            tier.monthlyQuota ?? -1,
            link.windowTtlMs,
            link.instances,
            token,
            IN_STORE_MS,
            link.clock ? 60_000 : IN_STORE_MS + IN_STORE_AFTER_REDIS_MS + 1000,
            performance.now() < waitUntil ? '1' : '0',
            IN_STORE_AFTER_REDIS_MS,
            account ? String(account.limits.daily ?? -1) : '',
            account?.limits.monthly ?? -1,
          ),
        ).catch((err: unknown) => {
          // Its token may have joined the key's decisions under way: removed once back.
          if (req.counted && link.instances > 1) this.#outage.unsettled(keyId, token);
          throw err;
        });
      } finally {
        // Settled: an admission it made is recorded in `own` below, before any other task runs.
        this.#local.admitSettled(call);
      }
      const status = Number(r[0]);
      if (status === STATUS.NEEDS_SEED) {
        if (++seeds >= SEED_ATTEMPTS) throw new Error(`quota counters of ${keyId} could not be seeded`);
        await this.#hashes.seed(keyId, Number(r[5]));
        continue;
      }
      if (status === STATUS.NEEDS_ACCOUNT_SEED && account) {
        if (++seeds >= SEED_ATTEMPTS) throw new Error(`quota counters of ${account.id} could not be seeded`);
        await this.#hashes.seedAccount(account.accountId, tier, account.id, a, Number(r[5]));
        continue;
      }
      if (status === STATUS.SETTLING) {
        await new Promise((resolve) => setTimeout(resolve, SETTLING_POLL_MS));
        continue;
      }
      const rate: RateState = {
        limit: tier.ratePerSecond,
        remaining: Number(r[1]),
        resetAt: Number(r[2]) / 1000,
      };
      if (status === STATUS.RATE_LIMITED) {
        return { ok: false, reason: 'RATE_LIMITED', rate, retryAfterMs: Number(r[3]) / 1000 };
      }
      if (status === STATUS.IN_STORE) return this.#admitInStore(req, r, token, rate);
      // One instance: its own admissions of the last second seed the fallback at a failover.
      if (link.instances === 1 && (status === STATUS.OK || !req.counted)) {
        this.#local.own.record(keyId, tier.ratePerSecond, link.time.now());
      }
      if (!req.counted) return { ok: true, rate };
      const d = Number(r[5]);
      const du = Number(r[6]);
      const mu = Number(r[7]);
      this.#hashes.remember(keyId, { g: String(r[8]), d, du, mu });
      this.#usage.record(keyId, dayOfNumber(d), req.endpoint, status !== STATUS.DAILY_QUOTA);
      const byAccount = String(r[9]) === 'a' && account !== undefined;
      if (status === STATUS.DAILY_QUOTA) {
        return {
          ok: false,
          reason: 'DAILY_QUOTA',
          ...(byAccount ? { scope: 'account' as const } : {}),
          rate,
          limit: must(byAccount ? account.limits.daily : tier.dailyQuota, 'the daily quota refusing'),
          used: byAccount ? Number(r[10]) : du,
          counts: { dayUsed: du, monthUsed: mu },
        };
      }
      if (status === STATUS.MONTHLY_QUOTA) {
        return {
          ok: false,
          reason: 'MONTHLY_QUOTA',
          ...(byAccount ? { scope: 'account' as const } : {}),
          rate,
          limit: must(byAccount ? account.limits.monthly : tier.monthlyQuota, 'the monthly quota refusing'),
          used: byAccount ? Number(r[11]) : mu,
          counts: { dayUsed: du, monthUsed: mu },
        };
      }
      return { ok: true, rate, counts: { dayUsed: du, monthUsed: mu } };
    }
  }

  async status(keyId: string, tier: Tier): Promise<QuotaStatus> {
    const link = this.#link;
    const { w, q } = link.keys(keyId);
    for (let attempt = 1; ; attempt++) {
      const r = await timed(
        redisCall('status'),
        performance.now(),
        link.scripts.lrdsStatus(w, q, link.leasesKey, link.nowArg(), tier.ratePerSecond, link.instances),
      );
      if (Number(r[0]) === STATUS.NEEDS_SEED) {
        if (attempt >= SEED_ATTEMPTS) throw new Error(`quota counters of ${keyId} could not be seeded`);
        await this.#hashes.seed(keyId, Number(r[4]));
        continue;
      }
      const nowMs = Number(r[3]) / 1000;
      const d = Number(r[4]);
      const today = Math.floor(nowMs / DAY_MS);
      const dayLive = d >= today;
      const storedMonth = monthOfDay(dayOfNumber(d));
      const currentMonth = monthOfDay(dayOfNumber(today));
      const monthLive = storedMonth >= currentMonth;
      const usage = {
        day: dayOfNumber(dayLive ? d : today),
        dayUsed: dayLive ? Number(r[5]) : 0,
        month: monthLive ? storedMonth : currentMonth,
        monthUsed: monthLive ? Number(r[6]) : 0,
      };
      const rate = { limit: tier.ratePerSecond, remaining: Number(r[1]), resetAt: Number(r[2]) / 1000 };
      return quotaStatus(usage, rate, nowMs);
    }
  }

  /**
   * A counted request the window admitted while the quotas are the store's to decide (see
   * ADMIT_LUA): decided by the store like a local one, then settled in Redis (its count added,
   * its token removed, its slot given back if refused). If the settle fails, Redis is treated
   * as lost, and the count goes to the next reconciliation as floors (the settle may have been
   * applied; the store or this instance's buffer holds the request).
   */
  async #admitInStore(
    req: AdmissionRequest,
    r: unknown[],
    token: string,
    rate: RateState,
  ): Promise<AdmissionResult> {
    const link = this.#link;
    const { keyId } = req;
    const { w, q: quotaKey, s } = link.keys(keyId);
    const gen = String(r[8]);
    const member = String(r[9]);
    // Decided by Redis moments ago (a lease just lapsed): wait for those counts to be written.
    // At most the full wait, whatever Redis's clock did (its token's deadline includes the wait).
    const waitMs = Math.min(
      IN_STORE_AFTER_REDIS_MS,
      (Number(r[10]) - Number(r[4])) / 1000 + IN_STORE_AFTER_REDIS_MS,
    );
    if (waitMs > 0) await this.#waitFor(waitMs);
    const q = await this.#local.quota(req, Number(r[4]) / 1000);
    const account = req.counted ? accountQuotaOf(req) : undefined;
    if (account && req.accountId !== undefined)
      this.#hashes.decidedInStore(account.id, req.accountId, req.tier);
    try {
      const settled = await timed(
        redisCall('settle'),
        performance.now(),
        link.scripts.lrdsSettle(
          quotaKey,
          w,
          s,
          link.nowArg(),
          token,
          q.ok ? '' : member,
          gen,
          dayNumber(q.day),
          1,
          q.countedMonthly ? 1 : 0,
          newGeneration(),
          q.after.du,
          q.after.mu,
        ),
      );
      if (String(settled[3]) !== '') this.#hashes.rememberMerge(keyId, settled);
    } catch (err) {
      this.#outage.add(keyId, q.day, q.countedMonthly, '');
      this.#outage.unsettled(keyId, token);
      this.#goDown(err);
    }
    const counts = { dayUsed: q.after.du, monthUsed: q.after.mu };
    if (q.ok) return { ok: true, rate, counts };
    const after = { ...rate, remaining: rate.remaining + 1 };
    const scope = q.byAccount ? { scope: 'account' as const } : {};
    return { ok: false, reason: q.reason, ...scope, rate: after, limit: q.limit, used: q.used, counts };
  }

  /** Waits `ms` of real time; with an injected clock, until it has advanced by `ms` (tests move it). */
  async #waitFor(ms: number): Promise<void> {
    if (!this.#link.clock) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return;
    }
    const end = this.#link.time.now() + ms;
    for (let left = ms; left > 0; left = end - this.#link.time.now()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, 20)));
    }
  }
}
