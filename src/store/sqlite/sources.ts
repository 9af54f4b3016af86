import type { SourceState } from '../../domain/records/sources.ts';
import { checkSource, toSource } from '../history.ts';
import type { SourceStore } from '../ports/sources.ts';
import type { SqliteConnection } from './connection.ts';

/** Source checkpoints and the ingestion lease in the SQLite file. */
export class SqliteSources implements SourceStore {
  readonly #db: SqliteConnection;

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  async saveSource(state: SourceState): Promise<void> {
    checkSource(state);
    this.#db.transaction(() =>
      this.#db
        .stmt(
          `INSERT INTO sources (id, kind, chain_ids, refreshed_at, last_block, consecutive_failures, last_error, updated_at, cursor, head, sync)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, chain_ids = excluded.chain_ids,
         refreshed_at = excluded.refreshed_at, last_block = excluded.last_block,
         consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error,
         updated_at = excluded.updated_at, cursor = excluded.cursor, head = excluded.head, sync = excluded.sync`,
        )
        .run(
          state.id,
          state.kind,
          JSON.stringify(state.chainIds),
          state.refreshedAt,
          JSON.stringify(state.lastBlock),
          state.consecutiveFailures,
          state.lastError,
          state.updatedAt,
          state.cursor,
          state.head === undefined ? null : JSON.stringify(state.head),
          state.sync === undefined ? null : JSON.stringify(state.sync),
        ),
    );
  }

  async listSources(): Promise<SourceState[]> {
    return this.#db.stmt('SELECT * FROM sources ORDER BY id').all().map(toSource);
  }

  async claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const taken = this.#db.transaction(() =>
      this.#db
        .stmt(
          `INSERT INTO ingest_lease (id, holder, expires_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE ingest_lease.holder = excluded.holder OR ingest_lease.expires_at <= ?`,
        )
        .run(holder, nowMs + leaseMs, nowMs),
    );
    return Number(taken.changes) === 1;
  }

  async releaseIngestion(holder: string): Promise<void> {
    this.#db.transaction(() =>
      this.#db.stmt('UPDATE ingest_lease SET expires_at = 0 WHERE holder = ?').run(holder),
    );
  }

  async ingestionHolder(nowMs: number): Promise<string | null> {
    const row = this.#db.stmt('SELECT holder FROM ingest_lease WHERE id = 1 AND expires_at > ?').get(nowMs);
    return (row?.['holder'] as string | undefined) ?? null;
  }
}
