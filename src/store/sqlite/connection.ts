import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Clock } from '../../domain/clock.ts';
import {
  isSqliteDiskError,
  StoreWriteError,
  WriteHealth,
  type WriteProblemListener,
} from '../write-health.ts';

/** How long a statement waits for another connection's lock (ms). */
const BUSY_TIMEOUT_MS = 5000;

/** Whether SQLite refused because another connection holds a lock (SQLITE_BUSY, SQLITE_LOCKED). */
export function isSqliteBusy(err: unknown): boolean {
  const code = Number((err as { errcode?: unknown } | null)?.errcode) & 0xff;
  return code === 5 || code === 6;
}

/** `fn` with a busy timeout of 0: a lock another connection holds is refused at once (isSqliteBusy). */
export function withoutWaiting<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('PRAGMA busy_timeout = 0');
  try {
    return fn();
  } finally {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

/**
 * Puts a connection in WAL mode. A new file's first switch takes a lock SQLite does not wait
 * for (its busy timeout does not apply): two processes opening one new store at once (a
 * server starting while `lrds keys create` runs) would have one refused. It is tried again
 * until the busy timeout has passed.
 */
function walMode(db: DatabaseSync): void {
  const until = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      if (!isSqliteBusy(err) || Date.now() >= until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * The SQLite store's file, shared by its ports: one connection (node:sqlite) in WAL mode, its
 * prepared statements, its write transactions, and whether writes go through. Every statement
 * is synchronous; a committed write is in the WAL before the call returns, so it survives the
 * process being killed (synchronous=NORMAL trades only power-loss durability for speed).
 */
export class SqliteConnection {
  readonly path: string;
  /** The connection itself, for statements run once (not cached by stmt()). */
  readonly sqlite: DatabaseSync;
  readonly clock: Clock;
  readonly #statements = new Map<string, StatementSync>();
  /** Whether writes go through (a full disk refuses them while reads go on). */
  readonly #writes = new WriteHealth();

  /** `clock`: the time of dataset refreshes, migrations, usage batch ids and the write health. */
  constructor(path: string, clock: Clock) {
    this.path = path;
    this.clock = clock;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.sqlite = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      walMode(this.sqlite);
      this.sqlite.exec('PRAGMA synchronous = NORMAL');
      // The WAL is copied into the database (and both fsynced) once it holds 10,000 pages (40 MB)
      // rather than SQLite's 1,000: a history append dirties pages all over the liquidation
      // indexes, and checkpointing ten times as often made the seed's history appends 20-35 %
      // slower. A checkpoint then takes longer (tens of ms, on this connection's commit).
      this.sqlite.exec('PRAGMA wal_autocheckpoint = 10000');
      // Once a checkpoint has copied it all, the log is cut back to 4 MB when it starts over:
      // the folder does not keep the log's high-water mark (a seed's, a backfill's).
      this.sqlite.exec('PRAGMA journal_size_limit = 4194304');
      this.sqlite.exec('PRAGMA foreign_keys = ON');
    } catch (err) {
      this.sqlite.close();
      throw isSqliteDiskError(err) ? this.#writeError(err) : err;
    }
  }

  /** The error a write refused by the disk is thrown as: it names the file and SQLite's reason. */
  #writeError(err: unknown): StoreWriteError {
    const reason = (err as { errstr?: string }).errstr ?? (err as Error).message;
    return new StoreWriteError(`the store cannot write to ${this.path}: ${reason}`, err);
  }

  writeProblem() {
    return this.#writes.problem;
  }

  watchWrites(listener: WriteProblemListener): () => void {
    return this.#writes.watch(listener);
  }

  /** A prepared statement, cached by its SQL; `arrays`: rows as arrays (in column order). */
  stmt(sql: string, options?: { arrays: true }): StatementSync {
    const key = options?.arrays ? `arrays:${sql}` : sql;
    let s = this.#statements.get(key);
    if (!s) {
      s = this.sqlite.prepare(sql);
      if (options?.arrays) s.setReturnArrays(true);
      this.#statements.set(key, s);
    }
    return s;
  }

  /**
   * Runs `fn` in one write transaction (BEGIN IMMEDIATE: the write lock first). On an error the
   * transaction is rolled back unless SQLite already did (it does on a full disk), and the error
   * thrown is the one that happened: a disk refusing the write as StoreWriteError (and the
   * store's write health says so until a write goes through again), anything else as it is.
   */
  transaction<T>(fn: () => T): T {
    try {
      this.sqlite.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = fn();
        this.sqlite.exec('COMMIT');
      } catch (err) {
        if (this.sqlite.isTransaction) {
          try {
            this.sqlite.exec('ROLLBACK');
          } catch {
            // The error to report is the one that made the transaction fail.
          }
        }
        throw err;
      }
      this.#writes.succeeded(this.clock.now());
      return result;
    } catch (err) {
      if (!isSqliteDiskError(err)) throw err;
      const error = this.#writeError(err);
      this.#writes.failed(error.message, this.clock.now());
      throw error;
    }
  }

  /**
   * Copies the write-ahead log into the file and truncates it (a TRUNCATE checkpoint: it waits for
   * the writer, up to the busy timeout). A busy file, or one a reader still needs the log of, is
   * left for the next call.
   */
  truncateLog(): void {
    if (this.path === ':memory:' || !this.sqlite.isOpen) return;
    try {
      // First the copy, which waits for no one; then, only if it copied every frame, the
      // truncation without waiting either (a busy timeout of 0): writers of other connections
      // (the server's) are held for the truncation only, never for the copy.
      const copied = this.sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as
        | { busy: number; log: number; checkpointed: number }
        | undefined;
      if (copied?.busy !== 0 || copied.checkpointed !== copied.log) return;
      withoutWaiting(this.sqlite, () => this.sqlite.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get());
    } catch (err) {
      // SQLITE_BUSY, SQLITE_LOCKED: left for the next call.
      if (!isSqliteBusy(err)) throw isSqliteDiskError(err) ? this.#writeError(err) : err;
    }
  }

  close(): void {
    this.#statements.clear();
    if (this.sqlite.isOpen) this.sqlite.close();
  }

  /**
   * Whether the file answers. While writes fail, a probe write (a counter set to its own value)
   * is tried first, so the write health clears once the disk has room again even when nothing
   * else writes.
   */
  ping(): boolean {
    if (!this.sqlite.isOpen) return false;
    if (this.#writes.problem) {
      try {
        this.transaction(() =>
          this.stmt("UPDATE counters SET value = value WHERE name = 'keys_version'").run(),
        );
      } catch {
        // still failing: writeProblem() says why
      }
    }
    return true;
  }
}
