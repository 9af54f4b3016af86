/**
 * Daily and monthly quota counters per API key, in process (docs/decisions.md "Order of checks and what counts").
 *
 * Every request that passed the rate limiter goes through consume():
 *   1. the key's daily counter is incremented; above the daily quota the request is refused
 *      (DAILY_QUOTA) and the monthly counter is NOT touched;
 *   2. otherwise the monthly counter is incremented; above the monthly quota the request is
 *      refused (MONTHLY_QUOTA);
 *   3. otherwise it is admitted.
 * A null quota is unlimited, yet still counted. Refused requests stay counted, so `used`
 * keeps growing past the limit, as the DAILY_QUOTA_EXCEEDED body shows.
 *
 * Periods are UTC: the day rolls over at 00:00 UTC, the month at 00:00 UTC on the 1st.
 * The counters live in memory; the caller makes them durable by recording, for every
 * consume(), the tuple (keyId, result.day, result.countedMonthly), and seeds them back with
 * load() when a key is first seen (see has()). Per key, time never runs backwards: an
 * instant before the key's current day is counted in that day.
 */

import {
  DAY_MS,
  dayStartMs,
  monthOfDay,
  monthStartMs,
  nextUtcMonthStart,
  utcDay,
  utcMonth,
} from '../domain/periods.ts';

/** Quota limits of a key's tier, in requests; null = unlimited. */
export interface QuotaLimits {
  daily: number | null;
  monthly: number | null;
}

/**
 * The quota bound of an account (docs/keys-and-accounts.md): its keys of one tier, both modes,
 * revoked ones included, get together at most the tier's quota times the keys the account may
 * hold at once: `maxKeysPerAccount` live plus as many test keys. Null (unlimited) when the
 * quota or `maxKeysPerAccount` is. So revoking a spent key and creating another regains nothing
 * beyond what the keys the account may hold would have had.
 */
export function accountQuotas(tier: {
  dailyQuota: number | null;
  monthlyQuota: number | null;
  maxKeysPerAccount: number | null;
}): QuotaLimits {
  const keys = tier.maxKeysPerAccount === null ? null : tier.maxKeysPerAccount * 2;
  return {
    daily: tier.dailyQuota === null || keys === null ? null : tier.dailyQuota * keys,
    monthly: tier.monthlyQuota === null || keys === null ? null : tier.monthlyQuota * keys,
  };
}

/** The counters of an account bound a request is also decided against (see consume()). */
export interface AccountQuota {
  /** The counters' id (e.g. `account:<accountId>:<tier>`), distinct from every key id. */
  id: string;
  limits: QuotaLimits;
}

/** One quota period after an admitted request. */
export interface QuotaPeriodState {
  /** Requests counted in the period, this one included. */
  used: number;
  /** The quota; null = unlimited. */
  limit: number | null;
  /** Epoch ms at which the period ends and the counter restarts at 0. */
  resetAt: number;
}

export type QuotaResult =
  | {
      ok: true;
      /** Day ('YYYY-MM-DD', UTC) the request was counted in: persist (keyId, day, countedMonthly). */
      day: string;
      countedMonthly: true;
      daily: QuotaPeriodState;
      monthly: QuotaPeriodState;
    }
  | {
      ok: false;
      reason: 'DAILY_QUOTA';
      /** Present when the account's bound refused it (limit and used are then the account's). */
      scope?: 'account';
      limit: number;
      /** Daily count including this request; always > limit. */
      used: number;
      /** Epoch ms of the next 00:00 UTC, when the daily quota resets. */
      resetAt: number;
      day: string;
      countedMonthly: false;
    }
  | {
      ok: false;
      reason: 'MONTHLY_QUOTA';
      scope?: 'account';
      limit: number;
      /** Monthly count including this request; always > limit. */
      used: number;
      /** Epoch ms of 00:00 UTC on the next 1st, when the monthly quota resets. */
      resetAt: number;
      day: string;
      countedMonthly: true;
    };

/** Persisted usage of a key, to seed the counters. */
export interface PersistedUsage {
  /** 'YYYY-MM-DD' (UTC) that dayUsed counts. */
  day: string;
  /** Requests counted on `day` (refused ones included). */
  dayUsed: number;
  /** 'YYYY-MM' (UTC) that monthUsed counts: the month of `day`, or a later one when `day` is stale. */
  month: string;
  /** Requests counted toward the monthly quota in `month`. */
  monthUsed: number;
}

/** Current counts of a key, for a dashboard. Zeros for a key with nothing counted in the current periods. */
export interface QuotaUsage {
  day: string;
  dayUsed: number;
  month: string;
  monthUsed: number;
}

interface KeyCounters {
  day: string;
  /** Epoch ms when `day` ends. */
  dayEnd: number;
  dayUsed: number;
  month: string;
  /** Epoch ms when `month` ends. */
  monthEnd: number;
  monthUsed: number;
}

/** The UTC day and month containing an instant, with their bounds. */
interface Period {
  dayStart: number;
  day: string;
  dayEnd: number;
  month: string;
  monthEnd: number;
}

/** Computed once per UTC day seen (see QuotaCounters.#periodAt), not per request. */
function periodOf(nowMs: number): Period {
  const dayStart = dayStartMs(nowMs);
  return {
    dayStart,
    day: utcDay(nowMs),
    dayEnd: dayStart + DAY_MS,
    month: utcMonth(nowMs),
    monthEnd: nextUtcMonthStart(nowMs),
  };
}

function assertCount(name: string, n: number): void {
  if (!(Number.isSafeInteger(n) && n >= 0))
    throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

export class QuotaCounters {
  readonly #keys = new Map<string, KeyCounters>();
  /** The period of the last instant seen, reused while instants stay within its day. */
  #period: Period | null = null;
  /** Start of the latest day seen, so that a clock stepping back and forth sweeps once per day. */
  #latestDayStart = Number.NEGATIVE_INFINITY;

  /** Number of keys holding counters. */
  get size(): number {
    return this.#keys.size;
  }

  /** Drops a key's counters: the next use seeds them again from persisted usage. */
  forget(keyId: string): void {
    this.#keys.delete(keyId);
  }

  /** Whether counters are held for the key (if not, seed them with load() before consume()). */
  has(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  /**
   * Seeds a key's counters from persisted usage. Loading into a key that already has
   * counters keeps, per period, the later period, and for the same period the larger count,
   * so a late load never lowers what memory already counted.
   * Throws a RangeError for malformed days, months or counts, or a month before `day`'s.
   */
  load(keyId: string, usage: PersistedUsage): void {
    const dayEnd = dayStartMs(usage.day) + DAY_MS;
    const monthEnd = nextUtcMonthStart(monthStartMs(usage.month));
    if (usage.month < monthOfDay(usage.day)) {
      throw new RangeError(`month '${usage.month}' is before the month of day '${usage.day}'`);
    }
    assertCount('dayUsed', usage.dayUsed);
    assertCount('monthUsed', usage.monthUsed);

    const cur = this.#keys.get(keyId);
    if (cur === undefined) {
      this.#keys.set(keyId, {
        day: usage.day,
        dayEnd,
        dayUsed: usage.dayUsed,
        month: usage.month,
        monthEnd,
        monthUsed: usage.monthUsed,
      });
      return;
    }
    if (dayEnd > cur.dayEnd) {
      cur.day = usage.day;
      cur.dayEnd = dayEnd;
      cur.dayUsed = usage.dayUsed;
    } else if (dayEnd === cur.dayEnd && usage.dayUsed > cur.dayUsed) {
      cur.dayUsed = usage.dayUsed;
    }
    if (monthEnd > cur.monthEnd) {
      cur.month = usage.month;
      cur.monthEnd = monthEnd;
      cur.monthUsed = usage.monthUsed;
    } else if (monthEnd === cur.monthEnd && usage.monthUsed > cur.monthUsed) {
      cur.monthUsed = usage.monthUsed;
    }
  }

  /**
   * Counts one request of `keyId` at `nowMs` and decides it against `limits` ("Order of checks and what counts" (docs/decisions.md) order:
   * daily, then monthly). O(1); a new UTC day additionally triggers one sweep of keys whose
   * counters have all expired.
   *
   * With `account`, the request is also decided against the account's bound, held in these
   * counters under `account.id` (seed it with load() like a key). Order: the key's day; the
   * account's day (only a request within its key's daily quota counts there); the key's month
   * (only a request within both daily bounds); the account's month (only a request within its
   * key's monthly quota). So the account's counts are, per period, the sum over its keys of
   * each key's count capped at the key's quota: what Store.accountUsageTotals reads back.
   */
  consume(keyId: string, limits: QuotaLimits, nowMs: number, account?: AccountQuota): QuotaResult {
    const c = this.#current(keyId, nowMs);
    const a = account && this.#current(account.id, nowMs);

    c.dayUsed++;
    if (limits.daily !== null && c.dayUsed > limits.daily) {
      return this.#refused('DAILY_QUOTA', 'key', limits.daily, c.dayUsed, c.dayEnd, c.day);
    }
    if (a) {
      a.dayUsed++;
      const daily = account.limits.daily;
      if (daily !== null && a.dayUsed > daily) {
        return this.#refused('DAILY_QUOTA', 'account', daily, a.dayUsed, c.dayEnd, c.day);
      }
    }
    c.monthUsed++;
    if (limits.monthly !== null && c.monthUsed > limits.monthly) {
      return this.#refused('MONTHLY_QUOTA', 'key', limits.monthly, c.monthUsed, c.monthEnd, c.day);
    }
    if (a) {
      a.monthUsed++;
      const monthly = account.limits.monthly;
      if (monthly !== null && a.monthUsed > monthly) {
        return this.#refused('MONTHLY_QUOTA', 'account', monthly, a.monthUsed, c.monthEnd, c.day);
      }
    }
    return {
      ok: true,
      day: c.day,
      countedMonthly: true,
      daily: { used: c.dayUsed, limit: limits.daily, resetAt: c.dayEnd },
      monthly: { used: c.monthUsed, limit: limits.monthly, resetAt: c.monthEnd },
    };
  }

  #refused(
    reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA',
    scope: 'key' | 'account',
    limit: number,
    used: number,
    resetAt: number,
    day: string,
  ): QuotaResult {
    const whose = scope === 'account' ? { scope } : {};
    return reason === 'DAILY_QUOTA'
      ? { ok: false, reason, ...whose, limit, used, resetAt, day, countedMonthly: false }
      : { ok: false, reason, ...whose, limit, used, resetAt, day, countedMonthly: true };
  }

  /** The key's counts in the periods current at `nowMs`, without counting anything. */
  usage(keyId: string, nowMs: number): QuotaUsage {
    const p = this.#periodAt(nowMs);
    const c = this.#keys.get(keyId);
    const dayLive = c !== undefined && nowMs < c.dayEnd;
    const monthLive = c !== undefined && nowMs < c.monthEnd;
    return {
      day: dayLive ? c.day : p.day,
      dayUsed: dayLive ? c.dayUsed : 0,
      month: monthLive ? c.month : p.month,
      monthUsed: monthLive ? c.monthUsed : 0,
    };
  }

  /**
   * Removes keys whose day and month have both ended at `nowMs`, or whose day has ended
   * with nothing counted in a month still running: their counters would restart at zero, so
   * forgetting them changes nothing. Runs by itself once per new UTC day. Returns the number removed.
   */
  evictExpired(nowMs: number): number {
    let removed = 0;
    for (const [keyId, c] of this.#keys) {
      if (nowMs >= c.dayEnd && (nowMs >= c.monthEnd || c.monthUsed === 0)) {
        this.#keys.delete(keyId);
        removed++;
      }
    }
    return removed;
  }

  /** The period containing nowMs; the first instant of a later day than any seen sweeps expired keys. */
  #periodAt(nowMs: number): Period {
    const p = this.#period;
    if (p !== null && nowMs >= p.dayStart && nowMs < p.dayEnd) return p;
    const next = periodOf(nowMs);
    this.#period = next;
    if (next.dayStart > this.#latestDayStart) {
      if (this.#latestDayStart !== Number.NEGATIVE_INFINITY) this.evictExpired(nowMs);
      this.#latestDayStart = next.dayStart;
    }
    return next;
  }

  /** The key's counters rolled over to the periods current at nowMs; created if missing. */
  #current(keyId: string, nowMs: number): KeyCounters {
    const p = this.#periodAt(nowMs);
    const c = this.#keys.get(keyId);
    if (c === undefined) {
      const fresh = {
        day: p.day,
        dayEnd: p.dayEnd,
        dayUsed: 0,
        month: p.month,
        monthEnd: p.monthEnd,
        monthUsed: 0,
      };
      this.#keys.set(keyId, fresh);
      return fresh;
    }
    if (nowMs >= c.dayEnd) {
      c.day = p.day;
      c.dayEnd = p.dayEnd;
      c.dayUsed = 0;
    }
    if (nowMs >= c.monthEnd) {
      c.month = p.month;
      c.monthEnd = p.monthEnd;
      c.monthUsed = 0;
    }
    return c;
  }
}
