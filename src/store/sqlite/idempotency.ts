import type { IdempotencyClaim, IdempotencyClaimResult } from '../../domain/records/idempotency.ts';
import {
  CLAIM_SQL,
  claimParameters,
  IDEMPOTENCY_PRUNE_PER_CLAIM,
  type IdempotencyRow,
  refusedClaim,
} from '../idempotency.ts';
import type { IdempotencyStore } from '../ports/idempotency.ts';
import type { SqliteConnection } from './connection.ts';

/** CLAIM_SQL with SQLite's numbered parameters (?1, ?2…). */
const SQLITE_CLAIM_SQL = CLAIM_SQL.replace(/\$(\d)/g, '?$1');

/** Idempotency claims in the SQLite file (the answer is stored by SqliteKeys.createKeyWithin). */
export class SqliteIdempotency implements IdempotencyStore {
  readonly #db: SqliteConnection;

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  /** One transaction under the write lock: a few expired records pruned, then the claim (CLAIM_SQL). */
  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    return this.#db.transaction((): IdempotencyClaimResult => {
      this.#db
        .stmt(
          'DELETE FROM idempotency_keys WHERE id IN (SELECT id FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)',
        )
        .run(claim.now, IDEMPOTENCY_PRUNE_PER_CLAIM);
      if (this.#db.stmt(SQLITE_CLAIM_SQL).get(...claimParameters(claim))) return { ok: true };
      const row = this.#db
        .stmt('SELECT fingerprint, locked_until, status, response FROM idempotency_keys WHERE id = ?')
        .get(claim.id) as unknown as IdempotencyRow;
      return refusedClaim(row, claim);
    });
  }

  async releaseIdempotencyKey(id: string, token: string): Promise<void> {
    this.#db.transaction(() =>
      this.#db
        .stmt('DELETE FROM idempotency_keys WHERE id = ? AND token = ? AND status IS NULL')
        .run(id, token),
    );
  }
}
