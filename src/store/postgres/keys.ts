import type { TransactionSql } from 'postgres';
import { must } from '../../domain/must.ts';
import type { IdempotentAnswer } from '../../domain/records/idempotency.ts';
import type {
  AccountRecord,
  KeyChanges,
  KeyCreation,
  KeyLimits,
  KeyRecord,
} from '../../domain/records/keys.ts';
import type { KeyStore } from '../ports/keys.ts';
import { type KeyRow, toKey } from '../rows.ts';
import type { PostgresConnection } from './connection.ts';
import { LOCK_ACCOUNT_KEYS } from './locks.ts';

function toAccount(row: Record<string, unknown> | undefined): AccountRecord | null {
  if (!row) return null;
  const r = row as { id: string; name: string; email: string | null; created_at: string };
  return { id: r.id, name: r.name, email: r.email, createdAt: r.created_at };
}

/** Keys and accounts in PostgreSQL; every key change bumps the keys version (keyChangesSince). */
export class PostgresKeys implements KeyStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  async createAccount(account: AccountRecord): Promise<void> {
    await this.#db.serve(
      (sql) => sql`
        INSERT INTO accounts (id, name, email, created_at)
        VALUES (${account.id}, ${account.name}, ${account.email}, ${account.createdAt})`,
    );
  }

  async findAccountByName(name: string): Promise<AccountRecord | null> {
    const [row] = await this.#db.serve((sql) => sql`SELECT * FROM accounts WHERE name = ${name}`);
    return toAccount(row);
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const [row] = await this.#db.serve((sql) => sql`SELECT * FROM accounts WHERE id = ${id}`);
    return toAccount(row);
  }

  /**
   * Bumps the keys version and stamps key `id` with the new one, so keyChangesSince() names it.
   * The counter's row lock serializes key changes: versions commit in the order they are taken.
   */
  private async keyChanged(tx: TransactionSql, id: string): Promise<void> {
    await tx`
      WITH bumped AS (UPDATE counters SET value = value + 1 WHERE name = 'keys_version' RETURNING value)
      UPDATE api_keys SET changed_in = (SELECT value FROM bumped) WHERE id = ${id}`;
  }

  async createKey(key: KeyRecord): Promise<void> {
    await this.#db.serve((sql) => sql.begin((tx) => this.insertKey(tx, key)));
  }

  async createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation> {
    return this.#db.serve((sql) =>
      sql.begin(async (tx): Promise<KeyCreation> => {
        // Creations by one account wait for each other, so two cannot both pass a cap.
        await tx`SELECT pg_advisory_xact_lock(${LOCK_ACCOUNT_KEYS}, hashtext(${key.accountId}))`;
        if (answer) {
          // Still this request's claim, and locked until the commit: no other takes it over meanwhile.
          const held = await tx`
            SELECT 1 FROM idempotency_keys
            WHERE id = ${answer.id} AND token = ${answer.token} AND status IS NULL FOR UPDATE`;
          if (held.length === 0) return { ok: false, reason: 'CLAIM_LOST' };
        }
        if (limits.maxActive !== null) {
          const [row] = await tx<{ n: number }[]>`
            SELECT count(*)::int AS n FROM api_keys
            WHERE account_id = ${key.accountId} AND tier = ${key.tier} AND mode = ${key.mode}
              AND revoked_at IS NULL`;
          const n = row?.n ?? 0;
          if (n >= limits.maxActive) return { ok: false, reason: 'TOO_MANY_KEYS', active: n };
        }
        if (limits.creations !== null) {
          const { since, max } = limits.creations;
          const [row] = await tx<{ n: number }[]>`
            SELECT count(*)::int AS n FROM api_keys
            WHERE account_id = ${key.accountId} AND mode = ${key.mode} AND created_at > ${since}`;
          const n = row?.n ?? 0;
          if (n >= max) {
            // A place frees when the (n - max + 1)-th oldest creation of the window leaves it.
            const [freed] = await tx<{ at: string }[]>`
              SELECT created_at AS at FROM api_keys
              WHERE account_id = ${key.accountId} AND mode = ${key.mode} AND created_at > ${since}
              ORDER BY created_at LIMIT 1 OFFSET ${n - max}`;
            return {
              ok: false,
              reason: 'TOO_MANY_CREATIONS',
              created: n,
              freedBy: must(freed, 'the creation that frees a place').at,
            };
          }
        }
        await this.insertKey(tx, key);
        if (answer) {
          await tx`
            UPDATE idempotency_keys SET status = ${answer.status}, response = ${answer.response}, token = NULL
            WHERE id = ${answer.id}`;
        }
        return { ok: true };
      }),
    );
  }

  private async insertKey(tx: TransactionSql, key: KeyRecord): Promise<void> {
    await tx`
      INSERT INTO api_keys (id, account_id, hash, prefix, mode, tier, name, created_at, revoked_at)
      VALUES (${key.id}, ${key.accountId}, ${key.hash}, ${key.prefix}, ${key.mode}, ${key.tier},
              ${key.name}, ${key.createdAt}, ${key.revokedAt})`;
    await this.keyChanged(tx, key.id);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.#db.serve((sql) => sql<KeyRow[]>`SELECT * FROM api_keys WHERE hash = ${hash}`);
    return row ? toKey(row) : null;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.#db.serve((sql) => sql<KeyRow[]>`SELECT * FROM api_keys WHERE id = ${id}`);
    return row ? toKey(row) : null;
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const rows = await this.#db.serve((sql) =>
      accountId === undefined
        ? sql<KeyRow[]>`SELECT * FROM api_keys ORDER BY created_at, id`
        : sql<KeyRow[]>`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`,
    );
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return this.#db.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async setKeyTier(id: string, tier: string): Promise<boolean> {
    return this.#db.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET tier = ${tier} WHERE id = ${id}`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async moveKey(id: string, accountId: string): Promise<boolean> {
    return this.#db.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET account_id = ${accountId} WHERE id = ${id}`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async keysVersion(): Promise<number> {
    const [row] = await this.#db.serve((sql) => sql`SELECT value FROM counters WHERE name = 'keys_version'`);
    return Number(row?.value);
  }

  async keyChangesSince(since: number): Promise<KeyChanges> {
    // One statement, one snapshot: the version and the keys stamped after `since` agree.
    const [row] = await this.#db.serve(
      (sql) => sql<{ version: string; hashes: string[] }[]>`
        SELECT (SELECT value FROM counters WHERE name = 'keys_version') AS version,
               ARRAY(SELECT hash FROM api_keys WHERE changed_in > ${since}::bigint ORDER BY hash) AS hashes`,
    );
    const { version, hashes } = must(row, 'the keys version');
    return { version: Number(version), hashes };
  }
}
