import { nextUtcMidnight, nextUtcMonthStart } from '../domain/periods.ts';
import type { AdmissionResult } from './admission.ts';
import type { Category, Tier } from './tiers.ts';

/**
 * What the access rules refuse, as values in the API's error vocabulary (docs/decisions.md "Errors"): the
 * code, the message and the extra members of the error body, and for a 429 the whole seconds
 * to wait (Retry-After). The HTTP access pipeline answers them as errors, the MCP tools as
 * tool results; both say the same words.
 */
export interface Refusal {
  code:
    | 'RATE_LIMIT_EXCEEDED'
    | 'DAILY_QUOTA_EXCEEDED'
    | 'MONTHLY_QUOTA_EXCEEDED'
    | 'TIER_FORBIDDEN'
    | 'CHAIN_FORBIDDEN';
  message: string;
  extra: Record<string, unknown>;
  /** Seconds to wait before retrying, whole and at least 1 (the 429s only). */
  retryAfterSeconds?: number;
}

function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The refusal of a request the rate limiter or a quota turned away (docs/decisions.md "Errors", "Order of checks and what counts"). */
export function admissionRefusal(
  result: Exclude<AdmissionResult, { ok: true }>,
  tier: Tier,
  nowMs: number,
): Refusal {
  if (result.reason === 'RATE_LIMITED') {
    const seconds = Math.ceil(result.retryAfterMs) / 1000;
    return {
      code: 'RATE_LIMIT_EXCEEDED',
      message: `Rate limit of ${tier.ratePerSecond} requests per second exceeded; retry after ${seconds.toFixed(3)} s`,
      extra: { retryAfter: seconds },
      retryAfterSeconds: wholeSeconds(result.retryAfterMs),
    };
  }
  // A refusal by the account's bound says so (docs/keys-and-accounts.md); limit and used are the account's.
  if (result.reason === 'DAILY_QUOTA') {
    return {
      code: 'DAILY_QUOTA_EXCEEDED',
      message:
        result.scope === 'account'
          ? `Your account's daily quota of ${result.limit} requests (all its ${tier.name} keys together, revoked ones included) exceeded; it resets at 00:00 UTC.`
          : `Daily quota of ${result.limit} requests exceeded; it resets at 00:00 UTC.`,
      extra: { limit: result.limit, used: result.used },
      retryAfterSeconds: wholeSeconds(nextUtcMidnight(nowMs) - nowMs),
    };
  }
  return {
    code: 'MONTHLY_QUOTA_EXCEEDED',
    message:
      result.scope === 'account'
        ? `Your account's monthly quota of ${result.limit} requests (all its ${tier.name} keys together, revoked ones included) exceeded; it resets on the 1st at 00:00 UTC.`
        : `Monthly quota of ${result.limit} requests exceeded; it resets on the 1st at 00:00 UTC.`,
    extra: { limit: result.limit, used: result.used },
    retryAfterSeconds: wholeSeconds(nextUtcMonthStart(nowMs) - nowMs),
  };
}

/** The tier lacks the category of the endpoint (or tool) called (docs/decisions.md "Tiers and categories"). */
export function tierForbidden(tier: Tier, category: Category): Refusal {
  return {
    code: 'TIER_FORBIDDEN',
    message: `The ${tier.id} tier does not include the '${category}' endpoints.`,
    extra: { tier: tier.id, category },
  };
}

/** The one chain a request names is outside the tier (docs/decisions.md "Errors"). */
export function chainForbidden(tier: Tier, chainId: number): Refusal {
  return {
    code: 'CHAIN_FORBIDDEN',
    message: `The ${tier.id} tier does not include chain ${chainId}.`,
    extra: { tier: tier.id, chainId },
  };
}
