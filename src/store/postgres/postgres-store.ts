import { ComposedStore } from '../composed-store.ts';
import { measureStoreCalls } from '../measure.ts';
import type { WriteProblem, WriteProblemListener } from '../write-health.ts';
import { PostgresConnection, type PostgresStoreOptions } from './connection.ts';
import { PostgresEventStore } from './event-store.ts';
import { PostgresHistory } from './history.ts';
import { PostgresIdempotency } from './idempotency.ts';
import { PostgresKeys } from './keys.ts';
import { LOCK_MIGRATE } from './locks.ts';
import { PostgresMarketData } from './market-data.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';
import { PostgresSources } from './sources.ts';
import { PostgresUsage } from './usage.ts';

/**
 * The scaled store: PostgreSQL through pools of postgres.js connections, shared by any number
 * of service instances. Dataset replacement and migrations serialize on advisory locks held
 * for their transaction; usage counts are single-statement upserts, so concurrent writers
 * never lose an increment. Calls that serve requests are bounded in time and fail fast while
 * the database is unreachable (PostgresConnection says how). Each port has its implementation
 * in a file of this folder; all of them share the store's connections.
 */
export class PostgresStore extends ComposedStore {
  readonly kind = 'postgres' as const;
  private readonly db: PostgresConnection;
  private readonly history: PostgresHistory;

  /** `url`: a postgres:// URL; query parameters not known to postgres.js (e.g. search_path) become session settings. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    const db = new PostgresConnection(url, options);
    const history = new PostgresHistory(db);
    super({
      marketData: new PostgresMarketData(db),
      keys: new PostgresKeys(db),
      usage: new PostgresUsage(db),
      history,
      sources: new PostgresSources(db),
      idempotency: new PostgresIdempotency(db),
      events: new PostgresEventStore((run) => db.serve(run)),
    });
    this.db = db;
    this.history = history;
  }

  /** 'down' from a failed call until a probe gets an answer again. */
  state(): 'up' | 'down' {
    return this.db.state();
  }

  async migrate(): Promise<void> {
    // A migration may renumber the dimensions (version 7 creates them from the rows there).
    this.history.forgetIds();
    for (const m of POSTGRES_MIGRATIONS) {
      await this.db.bulk((sql) =>
        sql.begin(async (tx) => {
          // Under the lock, so concurrent starts neither race on CREATE TABLE nor apply a version twice.
          await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_MIGRATE}, hashtext(current_schema()))`);
          await tx.unsafe(
            'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
          );
          const done = await tx`SELECT 1 FROM schema_migrations WHERE version = ${m.version}`;
          if (done.length > 0) return;
          await tx.unsafe(m.sql);
          await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date(this.db.clock.now()).toISOString()})`;
        }),
      );
    }
  }

  async compact(): Promise<void> {
    // Nothing to give back: PostgreSQL's autovacuum and WAL recycling do it.
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /**
   * True when the database answers `SELECT 1` within `timeoutMs` (default: the call deadline);
   * false at once while the store is down. Never throws. While writes are refused (a full disk),
   * a probe write is tried too, so the write health clears once the server has room again even
   * when nothing else writes.
   */
  async ping(timeoutMs?: number): Promise<boolean> {
    if (!(await this.db.ping(timeoutMs))) return false;
    await this.db.probeWrites(timeoutMs);
    return true;
  }

  /** Writes refused now (a full disk, no memory): since when and PostgreSQL's error; null while they work. */
  writeProblem(): WriteProblem | null {
    return this.db.writeProblem();
  }

  watchWrites(listener: WriteProblemListener): () => void {
    return this.db.watchWrites(listener);
  }
}

// Every call of its ports timed and its failures counted (METRICS_PORT).
measureStoreCalls(PostgresStore, 'postgres');
