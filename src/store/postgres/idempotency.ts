import { must } from '../../domain/must.ts';
import type { IdempotencyClaim, IdempotencyClaimResult } from '../../domain/records/idempotency.ts';
import {
  CLAIM_SQL,
  claimParameters,
  IDEMPOTENCY_PRUNE_PER_CLAIM,
  type IdempotencyRow,
  refusedClaim,
} from '../idempotency.ts';
import type { IdempotencyStore } from '../ports/idempotency.ts';
import type { PostgresConnection } from './connection.ts';

/** Idempotency claims in PostgreSQL (the answer is stored by PostgresKeys.createKeyWithin). */
export class PostgresIdempotency implements IdempotencyStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  /**
   * One transaction: a few expired records pruned (rows another claim is pruning skipped), then
   * the claim (CLAIM_SQL). A conflict that claims nothing still locks the row, so the record read
   * after it is the one that refused the claim.
   */
  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    return this.#db.serve((sql) =>
      sql.begin(async (tx): Promise<IdempotencyClaimResult> => {
        await tx`
          DELETE FROM idempotency_keys WHERE id IN (
            SELECT id FROM idempotency_keys WHERE expires_at <= ${claim.now}
            LIMIT ${IDEMPOTENCY_PRUNE_PER_CLAIM} FOR UPDATE SKIP LOCKED)`;
        const claimed = await tx.unsafe(CLAIM_SQL, claimParameters(claim));
        if (claimed.length > 0) return { ok: true };
        const [row] = await tx<IdempotencyRow[]>`
          SELECT fingerprint, locked_until, status, response FROM idempotency_keys WHERE id = ${claim.id}`;
        return refusedClaim(must(row, `idempotency key ${claim.id}`), claim);
      }),
    );
  }

  async releaseIdempotencyKey(id: string, token: string): Promise<void> {
    await this.#db.serve(
      (sql) => sql`DELETE FROM idempotency_keys WHERE id = ${id} AND token = ${token} AND status IS NULL`,
    );
  }
}
