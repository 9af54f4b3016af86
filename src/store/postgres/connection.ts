import postgres, { type Sql } from 'postgres';
import { type Clock, systemClock } from '../../domain/clock.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import { StoreWriteError, WriteHealth, type WriteProblemListener } from '../write-health.ts';

export interface PostgresStoreOptions {
  /**
   * Connections in all; default 10. Two of them (one below 4) load and replace the dataset and
   * migrate; the others serve requests (at least one).
   */
  poolSize?: number;
  /**
   * Deadline of every call that serves requests (keys, accounts, usage, dataset version, ping),
   * in ms; default 2000 (extended at most twice while the process itself is busy). The server's
   * statement_timeout is four times as long, so the client always gives up first.
   */
  callTimeoutMs?: number;
  /** The time of dataset refreshes, migrations and usage batch ids; default: the system clock. */
  clock?: Clock;
  /** While PostgreSQL is unreachable, how often it is tried again (ms); default 500. */
  probeIntervalMs?: number;
}

/** Error codes of Node sockets and postgres.js that mean the connection, not the query, failed. */
const CONNECTION_ERRORS = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean the server cannot serve now: connection exceptions (class 08), shutting
 * down or starting (57P01-57P03), too many connections (53300), and a statement cancelled by
 * statement_timeout (57014: the server was too slow; its connection may have been mid-answer).
 */
function unavailableState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '53300' ||
    code === '57014'
  );
}

/** `err` as a StoreUnavailableError when it means PostgreSQL cannot be reached (or did not answer), else null. */
function asUnavailable(err: unknown): StoreUnavailableError | null {
  if (err instanceof StoreUnavailableError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  const connectionFailed =
    err instanceof postgres.PostgresError ? unavailableState(code) : CONNECTION_ERRORS.has(code);
  if (!connectionFailed) return null;
  return new StoreUnavailableError(`PostgreSQL unavailable: ${(err as Error).message}`, { cause: err });
}

/**
 * SQLSTATEs of a server that answers but lacks what the statement needs: disk_full (53100: a
 * table, index or WAL segment cannot grow, or a sort cannot spill to disk) and out_of_memory
 * (53200). The store goes on serving what it can; what needs the statement is answered 503 with
 * Retry-After, as on a full disk of the embedded store. Too many connections (53300) is a
 * connection refused: the store is unavailable (see unavailableState).
 */
const RESOURCE_STATES = new Set(['53100', '53200']);

/** Whether `err` is PostgreSQL refusing a statement for want of disk or memory (RESOURCE_STATES). */
export function isPostgresResourceError(err: unknown): boolean {
  return err instanceof postgres.PostgresError && RESOURCE_STATES.has(err.code);
}

/** The share of a deadline the event loop spent running code, above which the deadline is extended. */
const BUSY_UTILIZATION = 0.5;

/** `p`, or a StoreUnavailableError after `ms` (up to three times `ms` while the process is busy). */
async function withDeadline<T>(p: PromiseLike<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const arm = (extensions: number) => {
      const since = performance.eventLoopUtilization();
      timer = setTimeout(() => {
        // The process itself was busy most of the time (compiling its routes at start, a long
        // computation): an answer may wait unread in the socket, and the database was not
        // given its time. It gets it again, at most twice.
        if (extensions > 0 && performance.eventLoopUtilization(since).utilization > BUSY_UTILIZATION)
          return arm(extensions - 1);
        reject(new StoreUnavailableError(`PostgreSQL did not answer within ${ms} ms`));
      }, ms);
    };
    arm(2);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A postgres.js pool that is never reused after a failure: `replace()` swaps in a fresh pool
 * and ends every connection of the old one at once. Ended connections stop reading their
 * socket, so an answer that arrives late (after a deadline, or once a blackholed link heals)
 * is never read at all, let alone handed to the next query on the connection.
 */
class ReplaceablePool {
  #sql: Sql;
  readonly #open: () => Sql;

  constructor(open: () => Sql) {
    this.#open = open;
    this.#sql = open();
  }

  get sql(): Sql {
    return this.#sql;
  }

  /** Replaces the pool, if `failed` is still the current one (several callers may see one failure). */
  replace(failed: Sql): void {
    if (failed !== this.#sql) return;
    this.#sql = this.#open();
    failed.end({ timeout: 0 }).catch(() => {});
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

/**
 * The PostgreSQL store's connections, shared by its ports: a pool that serves requests and a
 * pool for bulk work, and whether the database can be reached.
 *
 * Calls that serve requests (serve()) are bounded in time and fail fast while the database is
 * unreachable, always with a StoreUnavailableError (503 over HTTP):
 * - each has a deadline (`callTimeoutMs`, extended at most twice when the process itself kept
 *   its event loop busy for most of it); the server's statement_timeout and
 *   idle_in_transaction_session_timeout, four times as long, end its work if the client is gone;
 * - a deadline missed or a connection failure marks the store down and replaces the serving
 *   pool (see ReplaceablePool: no connection that failed or may still receive an answer is
 *   ever used again). While down, calls fail at once; a probe (`SELECT 1`, every
 *   `probeIntervalMs`, each on a fresh pool) brings the store back up.
 * Queries are never cancelled with postgres.js's `query.cancel()`: in 3.4.9 cancelling a query
 * that waits pipelined behind another makes the connection skip it while the server still
 * answers it, so every later query on that connection gets the answer meant for the one
 * before (and its cached prepared statement the wrong columns, for the connection's life).
 *
 * Bulk work (bulk(): migrations, loading and replacing the dataset, appending, pruning and
 * counting history) has a pool of its own, without deadlines or statement_timeout (it may
 * legitimately take minutes, or wait on another instance's lock); it is replaced after a
 * connection failure too. History and source reads serve requests: they are bounded like any other.
 */
export class PostgresConnection {
  readonly clock: Clock;
  /** The deadline of every call that serves requests (ms). */
  readonly #callTimeoutMs: number;
  readonly #serving: ReplaceablePool;
  readonly #bulk: ReplaceablePool;
  readonly #probeIntervalMs: number;
  /** Why the store is down, or null while it serves. */
  #down: StoreUnavailableError | null = null;
  /** Whether statements go through (a full disk or memory refuses them while the server answers). */
  readonly #writes = new WriteHealth();
  #probe: NodeJS.Timeout | null = null;
  #closed = false;

  /** `url`: a postgres:// URL; query parameters not known to postgres.js (e.g. search_path) become session settings. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.clock = options.clock ?? systemClock();
    const poolSize = options.poolSize ?? 10;
    const bulkSize = poolSize >= 4 ? 2 : 1;
    this.#callTimeoutMs = options.callTimeoutMs ?? 2000;
    this.#probeIntervalMs = options.probeIntervalMs ?? 500;
    // Longer than the client waits at most (three deadlines): the client always gives up first.
    const serverTimeout = this.#callTimeoutMs * 4;
    this.#serving = new ReplaceablePool(() =>
      postgres(url, {
        max: Math.max(1, poolSize - bulkSize),
        onnotice: () => {},
        connect_timeout: Math.max(1, (this.#callTimeoutMs * 2) / 1000),
        idle_timeout: 60,
        connection: {
          application_name: 'lrds',
          statement_timeout: serverTimeout,
          idle_in_transaction_session_timeout: serverTimeout,
        },
      }),
    );
    this.#bulk = new ReplaceablePool(() =>
      postgres(url, {
        max: bulkSize,
        onnotice: () => {},
        connect_timeout: 10,
        idle_timeout: 10,
        connection: { application_name: 'lrds' },
      }),
    );
  }

  /** 'down' from a failed call until a probe gets an answer again. */
  state(): 'up' | 'down' {
    return this.#down ? 'down' : 'up';
  }

  /**
   * Runs a call that serves requests: at once StoreUnavailableError while down, else `run` on
   * the serving pool within `timeoutMs`. A missed deadline or a connection failure takes the
   * store down; errors of the query itself (a constraint, a bug) pass through unchanged.
   */
  async serve<T>(run: (sql: Sql) => PromiseLike<T>, timeoutMs = this.#callTimeoutMs): Promise<T> {
    if (this.#closed) throw new StoreUnavailableError('the store is closed');
    if (this.#down) throw new StoreUnavailableError(`PostgreSQL unreachable: ${this.#down.message}`);
    const sql = this.#serving.sql;
    try {
      return await withDeadline(run(sql), timeoutMs);
    } catch (err) {
      this.#throwIfRefused(err);
      const unavailable = asUnavailable(err);
      if (!unavailable) throw err;
      this.#goDown(sql, unavailable);
      throw unavailable;
    }
  }

  /** Bulk work: no deadline; a connection failure replaces the bulk pool. */
  async bulk<T>(run: (sql: Sql) => PromiseLike<T>): Promise<T> {
    const sql = this.#bulk.sql;
    try {
      return await run(sql);
    } catch (err) {
      this.#throwIfRefused(err);
      const unavailable = asUnavailable(err);
      if (!unavailable) throw err;
      this.#bulk.replace(sql);
      throw unavailable;
    }
  }

  /**
   * A statement refused for want of disk or memory is thrown as StoreWriteError, and the write
   * health says so (its listeners hear it once, when statements start failing).
   */
  #throwIfRefused(err: unknown): void {
    if (!isPostgresResourceError(err)) return;
    const { code, message } = err as { code: string; message: string };
    const error = new StoreWriteError(`the store cannot write to PostgreSQL: ${message} (${code})`, err);
    this.#writes.failed(error.message, this.clock.now());
    throw error;
  }

  writeProblem() {
    return this.#writes.problem;
  }

  watchWrites(listener: WriteProblemListener): () => void {
    return this.#writes.watch(listener);
  }

  /**
   * While statements are refused for want of disk or memory, a probe write (a counter set to its
   * own value) within `timeoutMs`: writes count as working again once one goes through
   * WRITES_CLEAR_AFTER_MS after the last refusal. Nothing to do while they work. Never throws.
   */
  async probeWrites(timeoutMs = this.#callTimeoutMs): Promise<void> {
    if (!this.#writes.problem) return;
    try {
      await this.serve(
        (sql) => sql`UPDATE counters SET value = value WHERE name = 'keys_version'`,
        timeoutMs,
      );
      this.#writes.succeeded(this.clock.now());
    } catch {
      // still refused (writeProblem() says why), or the store is down
    }
  }

  #goDown(failed: Sql, why: StoreUnavailableError): void {
    if (this.#closed) return;
    this.#serving.replace(failed);
    if (this.#down) return;
    this.#down = why;
    this.#scheduleProbe();
  }

  #scheduleProbe(): void {
    if (this.#probe || this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = null;
      void this.#tryAgain();
    }, this.#probeIntervalMs);
    // A process with nothing else to do (the CLI) exits even while the database is down.
    this.#probe.unref();
  }

  async #tryAgain(): Promise<void> {
    const sql = this.#serving.sql;
    try {
      await withDeadline(sql`SELECT 1`, this.#callTimeoutMs);
      if (sql === this.#serving.sql) {
        this.#down = null;
        return;
      }
    } catch {
      if (this.#closed) return;
      // A fresh pool for the next attempt: no half-open socket, no reconnection back-off.
      this.#serving.replace(sql);
    }
    this.#scheduleProbe();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#probe) clearTimeout(this.#probe);
    this.#probe = null;
    await Promise.all([this.#serving.close(), this.#bulk.close()]);
  }

  /**
   * True when the database answers `SELECT 1` within `timeoutMs` (default: the call deadline);
   * false at once while the store is down. Never throws. A ping that times out takes the store
   * down like any call: the query is never cancelled, its pool is replaced.
   */
  async ping(timeoutMs = this.#callTimeoutMs): Promise<boolean> {
    try {
      await this.serve((sql) => sql`SELECT 1`, timeoutMs);
      return true;
    } catch {
      return false;
    }
  }
}
