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
import type { SqliteConnection } from './connection.ts';

/**
 * The keys version and the hashes of the keys changed after `?`, in one statement: one snapshot
 * (another process may be writing the file). By the changed_in index, a seek to the few keys
 * changed since: left to itself, SQLite walks the hash index for the ORDER BY and reads every
 * key, and the key cache asks every 250 ms (a core kept busy at 1,000,000 keys).
 */
export const KEY_CHANGES_SQL = `SELECT (SELECT value FROM counters WHERE name = 'keys_version') AS version,
  (SELECT json_group_array(hash) FROM
    (SELECT hash FROM api_keys INDEXED BY api_keys_changed WHERE changed_in > ? ORDER BY hash)) AS hashes`;

/** Keys and accounts in the SQLite file; every key change bumps the keys version (keyChangesSince). */
export class SqliteKeys implements KeyStore {
  readonly #db: SqliteConnection;

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  async createAccount(account: AccountRecord): Promise<void> {
    this.#db.transaction(() =>
      this.#db
        .stmt('INSERT INTO accounts (id, name, email, created_at) VALUES (?, ?, ?, ?)')
        .run(account.id, account.name, account.email, account.createdAt),
    );
  }

  async findAccountByName(name: string): Promise<AccountRecord | null> {
    return this.account(this.#db.stmt('SELECT * FROM accounts WHERE name = ?').get(name));
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    return this.account(this.#db.stmt('SELECT * FROM accounts WHERE id = ?').get(id));
  }

  private account(row: unknown): AccountRecord | null {
    if (!row) return null;
    const r = row as { id: string; name: string; email: string | null; created_at: string };
    return { id: r.id, name: r.name, email: r.email, createdAt: r.created_at };
  }

  /** Bumps the keys version and stamps key `id` with the new one, so keyChangesSince() names it. */
  private keyChanged(id: string): void {
    this.#db.stmt("UPDATE counters SET value = value + 1 WHERE name = 'keys_version'").run();
    this.#db
      .stmt(
        "UPDATE api_keys SET changed_in = (SELECT value FROM counters WHERE name = 'keys_version') WHERE id = ?",
      )
      .run(id);
  }

  async createKey(key: KeyRecord): Promise<void> {
    this.#db.transaction(() => this.insertKey(key));
  }

  async createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation> {
    // BEGIN IMMEDIATE takes the write lock first: processes sharing the file check one at a time.
    return this.#db.transaction((): KeyCreation => {
      if (
        answer &&
        !this.#db
          .stmt('SELECT 1 FROM idempotency_keys WHERE id = ? AND token = ? AND status IS NULL')
          .get(answer.id, answer.token)
      ) {
        return { ok: false, reason: 'CLAIM_LOST' };
      }
      if (limits.maxActive !== null) {
        const { n } = this.#db
          .stmt(
            'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND tier = ? AND mode = ? AND revoked_at IS NULL',
          )
          .get(key.accountId, key.tier, key.mode) as { n: number };
        if (n >= limits.maxActive) return { ok: false, reason: 'TOO_MANY_KEYS', active: n };
      }
      if (limits.creations !== null) {
        const { since, max } = limits.creations;
        const { n } = this.#db
          .stmt('SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND mode = ? AND created_at > ?')
          .get(key.accountId, key.mode, since) as { n: number };
        if (n >= max) {
          // A place frees when the (n - max + 1)-th oldest creation of the window leaves it.
          const { at } = this.#db
            .stmt(
              'SELECT created_at AS at FROM api_keys WHERE account_id = ? AND mode = ? AND created_at > ? ORDER BY created_at LIMIT 1 OFFSET ?',
            )
            .get(key.accountId, key.mode, since, n - max) as { at: string };
          return { ok: false, reason: 'TOO_MANY_CREATIONS', created: n, freedBy: at };
        }
      }
      this.insertKey(key);
      if (answer) {
        this.#db
          .stmt('UPDATE idempotency_keys SET status = ?, response = ?, token = NULL WHERE id = ?')
          .run(answer.status, answer.response, answer.id);
      }
      return { ok: true };
    });
  }

  private insertKey(key: KeyRecord): void {
    this.#db
      .stmt(
        'INSERT INTO api_keys (id, account_id, hash, prefix, mode, tier, name, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        key.id,
        key.accountId,
        key.hash,
        key.prefix,
        key.mode,
        key.tier,
        key.name,
        key.createdAt,
        key.revokedAt,
      );
    this.keyChanged(key.id);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    const row = this.#db.stmt('SELECT * FROM api_keys WHERE hash = ?').get(hash) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = this.#db.stmt('SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const rows = (accountId === undefined
      ? this.#db.stmt('SELECT * FROM api_keys ORDER BY created_at, id').all()
      : this.#db
          .stmt('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id')
          .all(accountId)) as unknown as KeyRow[];
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return this.#db.transaction(() => {
      const r = this.#db
        .stmt('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(at, id);
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async setKeyTier(id: string, tier: string): Promise<boolean> {
    return this.#db.transaction(() => {
      const r = this.#db.stmt('UPDATE api_keys SET tier = ? WHERE id = ?').run(tier, id);
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async moveKey(id: string, accountId: string): Promise<boolean> {
    return this.#db.transaction(() => {
      const r = this.#db.stmt('UPDATE api_keys SET account_id = ? WHERE id = ?').run(accountId, id);
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async keysVersion(): Promise<number> {
    const row = this.#db.stmt("SELECT value FROM counters WHERE name = 'keys_version'").get() as {
      value: number;
    };
    return row.value;
  }

  async keyChangesSince(since: number): Promise<KeyChanges> {
    const row = this.#db.stmt(KEY_CHANGES_SQL).get(since) as { version: number; hashes: string };
    return { version: row.version, hashes: JSON.parse(row.hashes) as string[] };
  }
}
