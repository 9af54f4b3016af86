/** Usage counts and quota decisions, as stored (src/store/ports/usage.ts). */

/** One durable count of an admitted request (docs/decisions.md "Order of checks and what counts"). */
export interface UsageEvent {
  keyId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Route pattern, e.g. `GET /api/v1/markets/:marketId`. */
  endpoint: string;
  /** False when the request was refused by the daily quota (the monthly counter is not touched). */
  countedMonthly: boolean;
}

/** The keys that share one account quota bound: an account's keys of one tier, both modes. */
export interface AccountScope {
  accountId: string;
  tier: string;
}

/** Daily and monthly quotas of a key's tier, in requests; null = unlimited. */
export interface QuotaCaps {
  daily: number | null;
  monthly: number | null;
}

export interface UsageTotals {
  dayUsed: number;
  monthUsed: number;
}

/** A counted request to decide against its quotas in the store itself (see Store.reserveUsage). */
export interface UsageReservation extends Omit<UsageEvent, 'countedMonthly'> {
  /** Daily and monthly quotas of the key's tier; null = unlimited. */
  daily: number | null;
  monthly: number | null;
  /** The account bound the request is also decided against (see accountUsageTotals), if any. */
  account?: AccountBound;
}

/** An account bound: the keys of `scope` together, within `daily` and `monthly` (null = unlimited). */
export interface AccountBound extends AccountScope {
  daily: number | null;
  monthly: number | null;
}

/** The counts after a reservation: the request included (in the month only if countedMonthly). */
export interface ReservedUsage {
  dayUsed: number;
  monthUsed: number;
  /** False when the daily quota refused it (docs/decisions.md "Order of checks and what counts": the month is then not counted). */
  countedMonthly: boolean;
  /** Set when the account bound refused it: which, and the account's count with it. */
  byAccount?: { reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA'; limit: number; used: number };
}

export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
}
