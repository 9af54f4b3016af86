import type { Clamped } from '../../../access/clamp.ts';
import type { KeyRecord } from '../../../domain/records/keys.ts';
import { latencyMs } from '../../envelope.ts';

/** Client routes answer from the account's own records, read now: always `live`. */
export function clientMeta(request: Parameters<typeof latencyMs>[0], clamped?: Clamped) {
  return {
    latencyMs: latencyMs(request),
    freshness: 'live' as const,
    source: 'account',
    ...(clamped ? { clamped } : {}),
  };
}

export const ACCESS = { category: null, counted: false } as const;

/** Tiers in rising order: a key manages keys of its own tier and below. */
const TIER_RANK: Readonly<Record<string, number>> = { free: 0, pro: 1, enterprise: 2 };

/**
 * Whether the calling key may see and revoke `target` (docs/keys-and-accounts.md, "Which keys a
 * key manages"): always itself; otherwise a key of its own account, of its own tier or a lower
 * one, and for a test key only test keys. A key it does not manage is absent from its listing
 * and 404 to its revocation, exactly like a key of another account: its existence is not shown.
 */
export function manages(caller: KeyRecord, target: KeyRecord): boolean {
  if (target.id === caller.id) return true;
  if (target.accountId !== caller.accountId) return false;
  if (caller.mode === 'test' && target.mode === 'live') return false;
  const callerRank = TIER_RANK[caller.tier];
  const targetRank = TIER_RANK[target.tier];
  return callerRank !== undefined && targetRank !== undefined && targetRank <= callerRank;
}

export function keySummary(k: KeyRecord) {
  return {
    id: k.id,
    prefix: k.prefix,
    mode: k.mode,
    tier: k.tier,
    name: k.name,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
  };
}
