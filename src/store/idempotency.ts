import type { IdempotencyClaim, IdempotencyClaimResult } from '../domain/records/idempotency.ts';

/**
 * Expired idempotency records each claim deletes, in its own transaction: every claim adds at
 * most one, so the table holds what a day of claims holds, and no claim deletes a backlog.
 */
export const IDEMPOTENCY_PRUNE_PER_CLAIM = 32;

/** A stored record, as both stores read it. */
export interface IdempotencyRow {
  fingerprint: string;
  locked_until: number | string | bigint;
  status: number | null;
  response: string | null;
}

/**
 * The statement both stores claim with (PostgreSQL and SQLite share the syntax): inserts the
 * claim, or takes the stored record over when it expired, or when it is the same request left
 * unanswered past its lease; returns a row only when it claimed. Parameters, in order: id,
 * fingerprint, token, lockedUntil, now (created_at), expiresAt, now.
 */
export const CLAIM_SQL = `
  INSERT INTO idempotency_keys (id, fingerprint, token, locked_until, status, response, created_at, expires_at)
  VALUES ($1, $2, $3, $4, NULL, NULL, $5, $6)
  ON CONFLICT (id) DO UPDATE SET
    fingerprint = excluded.fingerprint, token = excluded.token, locked_until = excluded.locked_until,
    status = NULL, response = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= $7
     OR (idempotency_keys.fingerprint = excluded.fingerprint AND idempotency_keys.status IS NULL
         AND idempotency_keys.locked_until <= $7)
  RETURNING id`;

/** The parameters of CLAIM_SQL. */
export function claimParameters(
  c: IdempotencyClaim,
): [string, string, string, number, number, number, number] {
  return [c.id, c.fingerprint, c.token, c.lockedUntil, c.now, c.expiresAt, c.now];
}

/** Why a claim did not take `row`, the live record of its key (CLAIM_SQL returned nothing). */
export function refusedClaim(row: IdempotencyRow, claim: IdempotencyClaim): IdempotencyClaimResult {
  if (row.fingerprint !== claim.fingerprint) return { ok: false, reason: 'MISMATCH' };
  if (row.status !== null) {
    return { ok: false, reason: 'ANSWERED', status: Number(row.status), response: row.response ?? '' };
  }
  return { ok: false, reason: 'IN_FLIGHT', lockedUntil: Number(row.locked_until) };
}
