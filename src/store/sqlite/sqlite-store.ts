import { type Clock, systemClock } from '../../domain/clock.ts';
import { ComposedStore } from '../composed-store.ts';
import { measureStoreCalls } from '../measure.ts';
import type { WriteProblem, WriteProblemListener } from '../write-health.ts';
import { SqliteConnection } from './connection.ts';
import { SqliteEventStore } from './event-store.ts';
import { SqliteHistory } from './history.ts';
import { SqliteIdempotency } from './idempotency.ts';
import { SqliteKeys } from './keys.ts';
import { SqliteMarketData } from './market-data.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';
import { SqliteSources } from './sources.ts';
import { SqliteUsage } from './usage.ts';

/**
 * The embedded store: one SQLite file (node:sqlite) in WAL mode. Every statement is
 * synchronous; a committed write is in the WAL before the call returns, so it survives the
 * process being killed (synchronous=NORMAL trades only power-loss durability for speed).
 * Several processes (server, CLI) may open the same file; writers wait up to 5 s for the lock.
 * Each port has its implementation in a file of this folder; all of them share one connection
 * (SqliteConnection).
 */
export class SqliteStore extends ComposedStore {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  private readonly db: SqliteConnection;
  private readonly history: SqliteHistory;

  /** `clock`: the time of dataset refreshes, migrations and usage batch ids (default: the system clock). */
  constructor(path: string, options: { clock?: Clock } = {}) {
    const db = new SqliteConnection(path, options.clock ?? systemClock());
    const history = new SqliteHistory(db);
    super({
      marketData: new SqliteMarketData(db),
      keys: new SqliteKeys(db),
      usage: new SqliteUsage(db),
      history,
      sources: new SqliteSources(db),
      idempotency: new SqliteIdempotency(db),
      events: new SqliteEventStore(db.sqlite),
    });
    this.path = path;
    this.db = db;
    this.history = history;
  }

  writeProblem(): WriteProblem | null {
    return this.db.writeProblem();
  }

  watchWrites(listener: WriteProblemListener): () => void {
    return this.db.watchWrites(listener);
  }

  async migrate(): Promise<void> {
    // A migration may renumber the dimensions (version 7 creates them from the rows there).
    this.history.forgetIds();
    const { sqlite } = this.db;
    sqlite.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    for (const m of SQLITE_MIGRATIONS) {
      this.db.transaction(() => {
        // Checked inside the write transaction so two processes starting at once apply it once.
        const done = sqlite.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
        if (done) return;
        sqlite.exec(m.sql);
        sqlite
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, new Date(this.db.clock.now()).toISOString());
      });
    }
  }

  async compact(): Promise<void> {
    this.db.truncateLog();
  }

  async close(): Promise<void> {
    this.db.close();
  }

  /**
   * Whether the file answers. While writes fail, a probe write is tried first, so the write
   * health clears once the disk has room again even when nothing else writes.
   */
  async ping(): Promise<boolean> {
    return this.db.ping();
  }
}

// Every call of its ports timed and its failures counted (METRICS_PORT).
measureStoreCalls(SqliteStore, 'sqlite');
