import type { SourceState } from '../../domain/records/sources.ts';
import { checkSource, toSource } from '../history.ts';
import type { SourceStore } from '../ports/sources.ts';
import type { PostgresConnection } from './connection.ts';

/** Source checkpoints and the ingestion lease in PostgreSQL. */
export class PostgresSources implements SourceStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  async saveSource(state: SourceState): Promise<void> {
    checkSource(state);
    await this.#db.serve(
      (sql) => sql`
      INSERT INTO sources (id, kind, chain_ids, refreshed_at, last_block, consecutive_failures, last_error, updated_at, cursor, head, sync)
      VALUES (${state.id}, ${state.kind}, ${JSON.stringify(state.chainIds)}, ${state.refreshedAt},
              ${JSON.stringify(state.lastBlock)}, ${state.consecutiveFailures}, ${state.lastError}, ${state.updatedAt},
              ${state.cursor}, ${state.head === undefined ? null : JSON.stringify(state.head)},
              ${state.sync === undefined ? null : JSON.stringify(state.sync)})
      ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, chain_ids = excluded.chain_ids,
        refreshed_at = excluded.refreshed_at, last_block = excluded.last_block,
        consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error,
        updated_at = excluded.updated_at, cursor = excluded.cursor, head = excluded.head, sync = excluded.sync`,
    );
  }

  async listSources(): Promise<SourceState[]> {
    const rows = await this.#db.serve((sql) => sql`SELECT * FROM sources ORDER BY id`);
    return rows.map(toSource);
  }

  async claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const rows = await this.#db.serve(
      (sql) => sql`
      INSERT INTO ingest_lease (id, holder, expires_at) VALUES (1, ${holder}, ${nowMs + leaseMs})
      ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
      WHERE ingest_lease.holder = excluded.holder OR ingest_lease.expires_at <= ${nowMs}
      RETURNING holder`,
    );
    return rows.length === 1;
  }

  async releaseIngestion(holder: string): Promise<void> {
    await this.#db.serve((sql) => sql`UPDATE ingest_lease SET expires_at = 0 WHERE holder = ${holder}`);
  }

  async ingestionHolder(nowMs: number): Promise<string | null> {
    const rows = await this.#db.serve(
      (sql) => sql`SELECT holder FROM ingest_lease WHERE id = 1 AND expires_at > ${nowMs}`,
    );
    return (rows[0]?.['holder'] as string | undefined) ?? null;
  }
}
