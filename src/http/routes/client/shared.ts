import { Type } from '@fastify/type-provider-typebox';
import type { Clamped } from '../../../access/clamp.ts';
import type { KeyRecord } from '../../../store/types.ts';
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

export const KeySummarySchema = Type.Object({
  id: Type.String({ examples: ['key_3kTMd9WQx1nB7cVz2LpA'] }),
  prefix: Type.String({ description: 'First 14 characters of the key.', examples: ['lrds_live_AbCd'] }),
  mode: Type.Unsafe<'live' | 'test'>({ type: 'string', enum: ['live', 'test'] }),
  tier: Type.String({ examples: ['pro'] }),
  name: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
  createdAt: Type.String({ description: 'ISO 8601 UTC.' }),
  revokedAt: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    description: 'ISO 8601 UTC; null while active.',
  }),
});

/**
 * Whether the calling key may see and revoke `target`: a key of its own account, and a test key
 * only test keys (it can neither list nor revoke the account's live keys).
 */
export function manages(caller: KeyRecord, target: KeyRecord): boolean {
  return target.accountId === caller.accountId && (caller.mode === 'live' || target.mode === 'test');
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

export const PeriodSchema = Type.Object({
  limit: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  used: Type.Integer(),
  remaining: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  resetAt: Type.String({ description: 'ISO 8601 UTC instant when the counter restarts at 0.' }),
});

/** Bearer auth, on every client route. */
export const SECURITY = [{ bearerAuth: [] }];
