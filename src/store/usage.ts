import { randomBytes } from 'node:crypto';
import type {
  AccountScope,
  ReservedUsage,
  UsageEvent,
  UsageReservation,
  UsageTotals,
} from '../domain/records/usage.ts';

/** 16 random bytes per process: what makes batch ids unique across processes and restarts. */
const BATCH_PREFIX = randomBytes(16).toString('base64url');
let batches = 0;

/**
 * The id of a new batch of usage writes (Store.recordUsage, Store.reserveUsage): the process's
 * random prefix and a counter (no CSPRNG call per batch, and ids that follow each other in the
 * stores' indexes). Taken once when the batch is formed; every retry of the batch reuses it.
 */
export function newUsageBatchId(): string {
  batches++;
  return `${BATCH_PREFIX}.${batches.toString(36)}`;
}

/**
 * How long the store remembers the id of an applied batch (ms): a batch retried within this
 * time is applied once. Retries happen within an outage (a write whose answer was lost when the
 * network to PostgreSQL was cut), so a day is plenty. SQLite commits synchronously, so a write
 * there is never of unknown outcome and its retries follow within seconds: 10 minutes.
 */
export const USAGE_BATCH_RETENTION_MS = 24 * 3600_000;
export const SQLITE_USAGE_BATCH_RETENTION_MS = 10 * 60_000;
/**
 * Expired ids each write deletes, in its own transaction. Every write adds one id, so the table
 * stays at what the retention holds, and no write ever deletes a backlog at once (an hourly
 * DELETE of a day of ids stalled the process for seconds).
 */
export const USAGE_BATCH_PRUNE_PER_WRITE = 32;
/**
 * The embedded store prunes on one write in this many while it finds no backlog (a prune that
 * deleted fewer than USAGE_BATCH_PRUNE_PER_WRITE ids), and on every write while it does. A write
 * adds one id, so pruning up to 32 every 8 writes keeps up; the DELETE was a third of the CPU of
 * a usage write (the group commit of each event-loop turn under load).
 */
export const SQLITE_USAGE_BATCH_PRUNE_EVERY = 8;

export interface UsageIncrement {
  keyId: string;
  day: string;
  endpoint: string;
  requests: number;
  monthly: number;
}

/** Folds a batch of events into one increment per (key, day, endpoint), in first-seen order. */
export function aggregateUsage(events: readonly UsageEvent[]): UsageIncrement[] {
  const rows = new Map<string, UsageIncrement>();
  for (const e of events) {
    const id = `${e.keyId}\u0000${e.day}\u0000${e.endpoint}`;
    let row = rows.get(id);
    if (!row) {
      row = { keyId: e.keyId, day: e.day, endpoint: e.endpoint, requests: 0, monthly: 0 };
      rows.set(id, row);
    }
    row.requests++;
    if (e.countedMonthly) row.monthly++;
  }
  return [...rows.values()];
}

/** The (key, day) pairs of a batch of reservations, each once, in first-seen order. */
export function reservationDays(requests: readonly UsageReservation[]): { keyId: string; day: string }[] {
  const seen = new Map<string, { keyId: string; day: string }>();
  for (const r of requests) {
    const id = `${r.keyId}\u0000${r.day}`;
    if (!seen.has(id)) seen.set(id, { keyId: r.keyId, day: r.day });
  }
  return [...seen.values()];
}

/** The id of an account bound's totals of a day in the maps below. */
export function accountDayId(scope: AccountScope, day: string): string {
  return `${scope.accountId}\u0000${scope.tier}\u0000${day}`;
}

/** The (account bound, day) pairs of a batch of reservations, each once, with the key quotas that cap them. */
export function reservationAccountDays(
  requests: readonly UsageReservation[],
): { scope: AccountScope; day: string; daily: number | null; monthly: number | null }[] {
  const seen = new Map<
    string,
    { scope: AccountScope; day: string; daily: number | null; monthly: number | null }
  >();
  for (const r of requests) {
    if (!r.account) continue;
    const id = accountDayId(r.account, r.day);
    if (!seen.has(id)) {
      seen.set(id, {
        scope: { accountId: r.account.accountId, tier: r.account.tier },
        day: r.day,
        daily: r.daily,
        monthly: r.monthly,
      });
    }
  }
  return [...seen.values()];
}

/**
 * The answers to a reservation batch already applied (its id recorded): nothing is counted
 * again; each request gets its key's stored totals of its day (`totals`, as reservationDays()
 * lists them), which include it, and countedMonthly says whether that day is within its
 * daily quota. An account bound is not decided again: a replayed request the bound refused
 * is answered as its key's counts say.
 */
export function replayedReservations(
  requests: readonly UsageReservation[],
  totals: ReadonlyMap<string, UsageTotals>,
): ReservedUsage[] {
  return requests.map((r) => {
    const stored = totals.get(`${r.keyId}\u0000${r.day}`) ?? { dayUsed: 0, monthUsed: 0 };
    return {
      dayUsed: stored.dayUsed,
      monthUsed: stored.monthUsed,
      countedMonthly: r.daily === null || stored.dayUsed <= r.daily,
    };
  });
}

/**
 * Decides reservations in order (docs/decisions.md "Order of checks and what counts") from the stored totals of each (key, day) of the
 * batch (`totals`, as reservationDays() lists them), and returns the events to record with them.
 */
export function decideReservations(
  requests: readonly UsageReservation[],
  totals: ReadonlyMap<string, UsageTotals>,
  accountTotals: ReadonlyMap<string, UsageTotals> = new Map(),
): { results: ReservedUsage[]; events: UsageEvent[] } {
  const days = new Map<string, number>();
  const months = new Map<string, number>();
  const results: ReservedUsage[] = [];
  const events: UsageEvent[] = [];
  for (const r of requests) {
    const dayId = `${r.keyId}\u0000${r.day}`;
    const monthId = `${r.keyId}\u0000${r.day.slice(0, 7)}`;
    const stored = totals.get(dayId) ?? { dayUsed: 0, monthUsed: 0 };
    const dayUsed = (days.get(dayId) ?? stored.dayUsed) + 1;
    days.set(dayId, dayUsed);
    let monthUsed = months.get(monthId) ?? stored.monthUsed;
    // The order of QuotaCounters.consume: key day, account day, key month, account month.
    let countedMonthly = r.daily === null || dayUsed <= r.daily;
    let byAccount: ReservedUsage['byAccount'];
    const a = r.account;
    const aDayId = a && `\u0001${accountDayId(a, r.day)}`;
    const aMonthId = a && `\u0001${accountDayId(a, r.day.slice(0, 7))}`;
    const aStored = (a && accountTotals.get(accountDayId(a, r.day))) ?? { dayUsed: 0, monthUsed: 0 };
    if (a && aDayId && countedMonthly) {
      const used = (days.get(aDayId) ?? aStored.dayUsed) + 1;
      days.set(aDayId, used);
      if (a.daily !== null && used > a.daily) {
        countedMonthly = false;
        byAccount = { reason: 'DAILY_QUOTA', limit: a.daily, used };
      }
    }
    if (countedMonthly) {
      monthUsed++;
      if (a && aMonthId && (r.monthly === null || monthUsed <= r.monthly)) {
        const used = (months.get(aMonthId) ?? aStored.monthUsed) + 1;
        months.set(aMonthId, used);
        if (a.monthly !== null && used > a.monthly)
          byAccount = { reason: 'MONTHLY_QUOTA', limit: a.monthly, used };
      }
    }
    months.set(monthId, monthUsed);
    results.push(
      byAccount ? { dayUsed, monthUsed, countedMonthly, byAccount } : { dayUsed, monthUsed, countedMonthly },
    );
    events.push({ keyId: r.keyId, day: r.day, endpoint: r.endpoint, countedMonthly });
  }
  return { results, events };
}
