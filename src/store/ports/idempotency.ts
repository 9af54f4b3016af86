import type { IdempotencyClaim, IdempotencyClaimResult } from '../../domain/records/idempotency.ts';

/**
 * Idempotency keys of self-service writes (Stripe's `Idempotency-Key`): claimed atomically
 * across processes, answered in the transaction of the work, forgotten after `expiresAt`.
 */
export interface IdempotencyStore {
  /**
   * Claims `claim.id` unless another request holds it or answered it, atomically with respect
   * to every process. Each claim also deletes a few expired records (IDEMPOTENCY_PRUNE_PER_CLAIM).
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult>;
  /** Drops claim `id` if `token` still holds it unanswered (its request failed: a retry runs afresh). */
  releaseIdempotencyKey(id: string, token: string): Promise<void>;
}
