import postgres, { type Sql, type TransactionSql } from 'postgres';
import { type Clock, systemClock } from '../../domain/clock.ts';
import type { PositionColumns } from '../../domain/position-columns.ts';
import type {
  AppliedPositionChanges,
  DatasetInfo,
  DatasetInput,
  PositionChange,
  StoredMarketChange,
  StoredPositionChange,
} from '../../domain/records/dataset.ts';
import type {
  AssetPrice,
  AssetPriceCursor,
  DailyLiquidationTotal,
  DailyMarketTotal,
  HistoryCounts,
  HistoryCutoffs,
  LiquidationCursor,
  LiquidationEvent,
  LiquidationFilter,
  MarketSnapshot,
  OracleRound,
  OracleRoundCursor,
  RatingChange,
  RatingChangeCursor,
  RatingSubjectKind,
  ResearchReportCursor,
  ResearchReportRow,
  SnapshotCursor,
  SnapshotGranularity,
} from '../../domain/records/history.ts';
import type {
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotentAnswer,
} from '../../domain/records/idempotency.ts';
import type {
  AccountRecord,
  KeyChanges,
  KeyCreation,
  KeyLimits,
  KeyRecord,
} from '../../domain/records/keys.ts';
import type { SourceState } from '../../domain/records/sources.ts';
import type {
  AccountScope,
  QuotaCaps,
  ReservedUsage,
  UsageEvent,
  UsageReservation,
  UsageRow,
  UsageTotals,
} from '../../domain/records/usage.ts';
import type { MarketRecord, VaultRecord } from '../../domain/types.ts';
import {
  byLiquidationKey,
  byPriceKey,
  byRatingKey,
  byRoundKey,
  bySnapshotKey,
  checkAssetPrices,
  checkLiquidations,
  checkMarketSnapshots,
  checkOracleRounds,
  checkRatingChanges,
  checkRead,
  checkResearchReports,
  checkSource,
  DAY_MS,
  LIQUIDATION_COLUMNS,
  noHistory,
  RATING_CHANGE_COLUMNS,
  SNAPSHOT_COLUMNS,
  toAssetPrice,
  toCounts,
  toDailyLiquidationTotal,
  toDailyMarketTotal,
  toLiquidation,
  toOracleRound,
  toRatingChange,
  toResearchReport,
  toSnapshot,
  toSource,
} from '../history.ts';
import {
  CLAIM_SQL,
  claimParameters,
  IDEMPOTENCY_PRUNE_PER_CLAIM,
  type IdempotencyRow,
  refusedClaim,
} from '../idempotency.ts';
import { measureStoreCalls } from '../measure.ts';
import type { EventStore } from '../ports/events.ts';
import type { ProgressFn } from '../ports/market-data.ts';
import { columnsOf, decodeBlock, encodeBlocks } from '../position-blocks.ts';
import {
  checkMarketChanges,
  checkPositionChanges,
  POSITION_CHANGE_COLUMNS,
  storedMarketChange,
  storedPositionChange,
} from '../position-changes.ts';
import { type KeyRow, toKey } from '../rows.ts';
import type { Store } from '../types.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import {
  accountDayId,
  aggregateUsage,
  decideReservations,
  replayedReservations,
  reservationAccountDays,
  reservationDays,
  USAGE_BATCH_PRUNE_PER_WRITE,
  USAGE_BATCH_RETENTION_MS,
} from '../usage.ts';
import { copyChunks, copyIn } from './copy.ts';
import { PostgresEventStore } from './event-store.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';

/**
 * First key of the advisory locks this store takes; the second is a hash of the schema, so
 * stores in different schemas of one database (tests) do not wait for each other.
 */
const LOCK_MIGRATE = 0x4c52_4401;
const LOCK_DATASET = 0x4c52_4402;
/** First key of the per-key locks of usage reservations (the second: a hash of the key id). */
const LOCK_USAGE = 0x4c52_4404;
/** Key creation by an account (its caps), the second key a hash of the account id. */
const LOCK_ACCOUNT_KEYS = 0x4c52_4403;
/** Rows per INSERT of a history append (each column one array parameter). */
const APPEND_CHUNK_ROWS = 10_000;

/** A row of history_markets: its id, and the chain and protocol its snapshots have unless they say otherwise. */
interface MarketDimension {
  id: number;
  chainId: number;
  protocol: string;
}

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

function toAccount(row: Record<string, unknown> | undefined): AccountRecord | null {
  if (!row) return null;
  const r = row as { id: string; name: string; email: string | null; created_at: string };
  return { id: r.id, name: r.name, email: r.email, createdAt: r.created_at };
}

/**
 * Inside a change's transaction, holding the dataset row's lock (concurrent writers of changes,
 * and a dataset replacement, queue behind it): the feed's last sequence number, and whether the
 * change was computed from the dataset version stored (`datasetVersion`; undefined: any).
 */
async function changeBase(
  tx: TransactionSql,
  what: string,
  datasetVersion?: number,
): Promise<{ seq: number; current: boolean }> {
  const [ds] = await tx`SELECT version, change_seq FROM dataset WHERE id = 1 FOR UPDATE`;
  if (!ds) throw new RangeError(`no dataset: ${what} cannot change`);
  return {
    seq: Number(ds.change_seq),
    current: datasetVersion === undefined || Number(ds.version) === datasetVersion,
  };
}

/** Refuses a change naming a market the dataset does not hold. */
async function requireMarkets(tx: TransactionSql, keys: readonly string[], what: string): Promise<void> {
  const unique = [...new Set(keys)];
  const known = await tx`SELECT unique_key FROM markets WHERE unique_key = ANY(${unique}::text[])`;
  if (known.length === unique.length) return;
  const have = new Set(known.map((r) => r.unique_key as string));
  throw new RangeError(`${what} unknown market ${unique.find((k) => !have.has(k))}`);
}
/**
 * The scaled store: PostgreSQL through pools of postgres.js connections, shared by any number
 * of service instances. Dataset replacement and migrations serialize on advisory locks held
 * for their transaction; usage counts are single-statement upserts, so concurrent writers
 * never lose an increment.
 *
 * Calls that serve requests are bounded in time and fail fast while the database is
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
 * Bulk work (migrations, loading and replacing the dataset, appending, pruning and counting
 * history) has a pool of its own, without deadlines or statement_timeout (it may legitimately
 * take minutes, or wait on another instance's lock); it is replaced after a connection failure
 * too. History and source reads serve requests: they are bounded like any other.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly #serving: ReplaceablePool;
  readonly #bulk: ReplaceablePool;
  readonly #callTimeoutMs: number;
  readonly #probeIntervalMs: number;
  /** Why the store is down, or null while it serves. */
  #down: StoreUnavailableError | null = null;
  #probe: NodeJS.Timeout | null = null;
  #closed = false;
  readonly #clock: Clock;
  /** Committed history_markets rows by market key, and history_addresses ids by `chainId:address`. */
  readonly #marketIdCache = new Map<string, MarketDimension>();
  readonly #addressIdCache = new Map<string, number>();
  readonly events: EventStore = new PostgresEventStore((run) => this.serve(run));

  /** `url`: a postgres:// URL; query parameters not known to postgres.js (e.g. search_path) become session settings. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock();
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
  private async serve<T>(run: (sql: Sql) => PromiseLike<T>, timeoutMs = this.#callTimeoutMs): Promise<T> {
    if (this.#closed) throw new StoreUnavailableError('the store is closed');
    if (this.#down) throw new StoreUnavailableError(`PostgreSQL unreachable: ${this.#down.message}`);
    const sql = this.#serving.sql;
    try {
      return await withDeadline(run(sql), timeoutMs);
    } catch (err) {
      const unavailable = asUnavailable(err);
      if (!unavailable) throw err;
      this.#goDown(sql, unavailable);
      throw unavailable;
    }
  }

  /** Bulk work: no deadline; a connection failure replaces the bulk pool. */
  private async bulk<T>(run: (sql: Sql) => PromiseLike<T>): Promise<T> {
    const sql = this.#bulk.sql;
    try {
      return await run(sql);
    } catch (err) {
      const unavailable = asUnavailable(err);
      if (!unavailable) throw err;
      this.#bulk.replace(sql);
      throw unavailable;
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

  async migrate(): Promise<void> {
    // A migration may renumber the dimensions (version 7 creates them from the rows there).
    this.#marketIdCache.clear();
    this.#addressIdCache.clear();
    for (const m of POSTGRES_MIGRATIONS) {
      await this.bulk((sql) =>
        sql.begin(async (tx) => {
          // Under the lock, so concurrent starts neither race on CREATE TABLE nor apply a version twice.
          await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_MIGRATE}, hashtext(current_schema()))`);
          await tx.unsafe(
            'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
          );
          const done = await tx`SELECT 1 FROM schema_migrations WHERE version = ${m.version}`;
          if (done.length > 0) return;
          await tx.unsafe(m.sql);
          await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date(this.#clock.now()).toISOString()})`;
        }),
      );
    }
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

  async datasetInfo(): Promise<DatasetInfo | null> {
    const [row] = await this.serve((sql) => sql`SELECT * FROM dataset WHERE id = 1`);
    if (!row) return null;
    return {
      kind: row.kind as DatasetInfo['kind'],
      profile: row.profile as string,
      seed: row.seed === null ? null : Number(row.seed),
      refreshedAt: Number(row.refreshed_at),
      marketCount: row.market_count as number,
      positionCount: row.position_count as number,
      version: Number(row.version),
      changeSeq: Number(row.change_seq),
    };
  }

  /**
   * One transaction: deletes the old dataset and writes the new one (markets by COPY, positions
   * as column blocks), so readers see the old dataset until the commit and never a mix.
   * Concurrent replacements (several instances seeding) wait for each other on an advisory lock
   * and apply one after the other.
   */
  async replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo> {
    const total = input.markets.length + input.positionCount;
    // Gathered and sorted before the transaction, so the lock is held only for the writes.
    const columns = columnsOf(input.markets, input.positions, input.positionCount);
    const written = await this.bulk((sql) =>
      sql.begin(async (tx): Promise<DatasetInfo | null> => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_DATASET}, hashtext(current_schema()))`);
        const [previous] = await tx`SELECT version FROM dataset WHERE id = 1`;
        if (previous && input.onlyIfEmpty) return null;
        // DELETE, not TRUNCATE: TRUNCATE would block every reader until the commit.
        await tx.unsafe(
          'DELETE FROM position_blocks; DELETE FROM position_changes; DELETE FROM market_changes; DELETE FROM vaults; DELETE FROM markets; DELETE FROM dataset;',
        );
        if (input.vaults && input.vaults.length > 0) {
          await copyIn(
            tx,
            'COPY vaults (ord, chain_id, address, doc) FROM STDIN (FORMAT binary)',
            copyChunks(input.vaults.entries(), (rows, [ord, v]) => {
              rows.row(4);
              rows.int4(ord);
              rows.int8(v.chainId);
              rows.text(v.address);
              rows.text(JSON.stringify(v));
            }),
          );
        }
        await copyIn(
          tx,
          'COPY markets (ord, unique_key, protocol, chain_id, doc) FROM STDIN (FORMAT binary)',
          copyChunks(input.markets.entries(), (rows, [ord, m]) => {
            rows.row(5);
            rows.int4(ord);
            rows.text(m.uniqueKey);
            rows.text(m.protocol);
            rows.int8(m.chainId);
            rows.text(JSON.stringify(m));
          }),
        );
        let done = input.markets.length;
        onProgress?.(done, total);
        for (const b of encodeBlocks(columns)) {
          const buf = (a: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
          await tx`
          INSERT INTO position_blocks (block, count, market_index, users, collateral_usd, borrow_usd, supply_usd, health_factor)
          VALUES (${b.block}, ${b.count}, ${buf(b.marketIndex)}, ${buf(b.users)}, ${buf(b.collateralUsd)},
                  ${buf(b.borrowUsd)}, ${buf(b.supplyUsd)}, ${buf(b.healthFactor)})`;
          done += b.count;
          onProgress?.(done, total);
        }
        const info: DatasetInfo = {
          kind: input.kind,
          profile: input.profile,
          seed: input.seed,
          refreshedAt: Math.floor(input.refreshedAt ?? this.#clock.now()),
          marketCount: input.markets.length,
          positionCount: columns.count,
          version: (previous ? Number(previous.version) : 0) + 1,
          changeSeq: 0,
        };
        await tx`
        INSERT INTO dataset (id, kind, profile, seed, refreshed_at, market_count, position_count, version)
        VALUES (1, ${info.kind}, ${info.profile}, ${info.seed}, ${info.refreshedAt}, ${info.marketCount},
                ${info.positionCount}, ${info.version})`;
        return info;
      }),
    );
    return written ?? (await this.datasetInfo())!;
  }

  async loadMarkets(): Promise<MarketRecord[]> {
    const rows = await this.bulk((sql) => sql`SELECT doc FROM markets ORDER BY ord`.values());
    return rows.map((r) => JSON.parse(r[0] as string) as MarketRecord);
  }

  async loadVaults(): Promise<VaultRecord[]> {
    const rows = await this.bulk((sql) => sql`SELECT doc FROM vaults ORDER BY ord`.values());
    return rows.map((r) => JSON.parse(r[0] as string) as VaultRecord);
  }

  /** One query (one snapshot), read one block at a time through a cursor. */
  async loadPositions(onBlock: (block: PositionColumns) => void): Promise<void> {
    await this.bulk(async (sql) => {
      const cursor = sql`
        SELECT count, market_index, users, collateral_usd, borrow_usd, supply_usd, health_factor
          FROM position_blocks ORDER BY block`
        .values()
        .cursor(1);
      for await (const rows of cursor) {
        for (const r of rows) {
          onBlock(
            decodeBlock({
              count: r[0] as number,
              marketIndex: r[1] as Uint8Array,
              users: r[2] as Uint8Array,
              collateralUsd: r[3] as Uint8Array,
              borrowUsd: r[4] as Uint8Array,
              supplyUsd: r[5] as Uint8Array,
              healthFactor: r[6] as Uint8Array,
            }),
          );
        }
      }
    });
  }

  /**
   * One transaction holding the dataset row's lock (concurrent writers of changes, and a
   * dataset replacement, queue behind it): each change checked against its stored version,
   * then upserted with the next sequence number.
   */
  async applyPositionChanges(
    source: string,
    changes: readonly PositionChange[],
    datasetVersion?: number,
  ): Promise<AppliedPositionChanges> {
    checkPositionChanges(changes);
    return this.serve((sql) =>
      sql.begin(async (tx): Promise<AppliedPositionChanges> => {
        const ds = await changeBase(tx, 'positions', datasetVersion);
        if (!ds.current) return { applied: [], changeSeq: ds.seq };
        await requireMarkets(
          tx,
          changes.map((c) => c.marketKey),
          'position of',
        );
        const stored = new Map<string, number>();
        const conditional = changes.filter((c) => c.basedOn !== undefined);
        if (conditional.length > 0) {
          const rows = await tx`
            SELECT c.market_key, c."user", c.seq FROM position_changes c
              JOIN unnest(${conditional.map((c) => c.marketKey)}::text[], ${conditional.map((c) => c.user)}::text[])
                AS w(market_key, "user") ON c.market_key = w.market_key AND c."user" = w."user"`;
          for (const r of rows) stored.set(`${r.market_key}\n${r.user}`, Number(r.seq));
        }
        let seq = ds.seq;
        const first = seq + 1;
        const applied = changes.filter(
          (c) => c.basedOn === undefined || (stored.get(`${c.marketKey}\n${c.user}`) ?? 0) === c.basedOn,
        );
        if (applied.length > 0) {
          seq += applied.length;
          await tx`
            INSERT INTO position_changes (market_key, "user", source, seq, collateral_usd, borrow_usd, supply_usd, health_factor)
            SELECT w.market_key, w."user", ${source}, ${first} + w.n - 1, w.c, w.b, w.s, w.h FROM unnest(
              ${applied.map((c) => c.marketKey)}::text[],
              ${applied.map((c) => c.user)}::text[],
              ${applied.map((c) => c.collateralUsd)}::float8[],
              ${applied.map((c) => c.borrowUsd)}::float8[],
              ${applied.map((c) => c.supplyUsd)}::float8[],
              ${applied.map((c) => c.healthFactor)}::float8[]) WITH ORDINALITY AS w(market_key, "user", c, b, s, h, n)
            ON CONFLICT (market_key, "user") DO UPDATE SET source = excluded.source, seq = excluded.seq,
              collateral_usd = excluded.collateral_usd, borrow_usd = excluded.borrow_usd,
              supply_usd = excluded.supply_usd, health_factor = excluded.health_factor`;
          await tx`UPDATE dataset SET change_seq = ${seq} WHERE id = 1`;
        }
        return { applied, changeSeq: seq };
      }),
    );
  }

  async positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]> {
    const rows = await this.serve(
      (sql) => sql`
        SELECT ${sql(POSITION_CHANGE_COLUMNS)}
          FROM position_changes WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(storedPositionChange);
  }

  /** One transaction holding the dataset row's lock, as applyPositionChanges. */
  async applyMarketChanges(
    source: string,
    records: readonly MarketRecord[],
    datasetVersion?: number,
  ): Promise<number> {
    checkMarketChanges(records);
    return this.serve((sql) =>
      sql.begin(async (tx): Promise<number> => {
        const ds = await changeBase(tx, 'markets', datasetVersion);
        let seq = ds.seq;
        if (!ds.current || records.length === 0) return seq;
        const keys = records.map((m) => m.uniqueKey);
        await requireMarkets(tx, keys, 'change of');
        const first = seq + 1;
        seq += records.length;
        await tx`
          INSERT INTO market_changes (market_key, source, seq, doc)
          SELECT w.market_key, ${source}, ${first} + w.n - 1, w.doc FROM unnest(
            ${keys}::text[], ${records.map((m) => JSON.stringify(m))}::text[]) WITH ORDINALITY AS w(market_key, doc, n)
          ON CONFLICT (market_key) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`;
        await tx`UPDATE dataset SET change_seq = ${seq} WHERE id = 1`;
        return seq;
      }),
    );
  }

  async marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]> {
    const rows = await this.serve(
      (sql) =>
        sql`SELECT source, seq, doc FROM market_changes WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(storedMarketChange);
  }

  async createAccount(account: AccountRecord): Promise<void> {
    await this.serve(
      (sql) => sql`
        INSERT INTO accounts (id, name, email, created_at)
        VALUES (${account.id}, ${account.name}, ${account.email}, ${account.createdAt})`,
    );
  }

  async findAccountByName(name: string): Promise<AccountRecord | null> {
    const [row] = await this.serve((sql) => sql`SELECT * FROM accounts WHERE name = ${name}`);
    return toAccount(row);
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const [row] = await this.serve((sql) => sql`SELECT * FROM accounts WHERE id = ${id}`);
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
    await this.serve((sql) => sql.begin((tx) => this.insertKey(tx, key)));
  }

  async createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation> {
    return this.serve((sql) =>
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
            return { ok: false, reason: 'TOO_MANY_CREATIONS', created: n, freedBy: freed!.at };
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

  /**
   * One transaction: a few expired records pruned (rows another claim is pruning skipped), then
   * the claim (CLAIM_SQL). A conflict that claims nothing still locks the row, so the record read
   * after it is the one that refused the claim.
   */
  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    return this.serve((sql) =>
      sql.begin(async (tx): Promise<IdempotencyClaimResult> => {
        await tx`
          DELETE FROM idempotency_keys WHERE id IN (
            SELECT id FROM idempotency_keys WHERE expires_at <= ${claim.now}
            LIMIT ${IDEMPOTENCY_PRUNE_PER_CLAIM} FOR UPDATE SKIP LOCKED)`;
        const claimed = await tx.unsafe(CLAIM_SQL, claimParameters(claim));
        if (claimed.length > 0) return { ok: true };
        const [row] = await tx<IdempotencyRow[]>`
          SELECT fingerprint, locked_until, status, response FROM idempotency_keys WHERE id = ${claim.id}`;
        return refusedClaim(row!, claim);
      }),
    );
  }

  async releaseIdempotencyKey(id: string, token: string): Promise<void> {
    await this.serve(
      (sql) => sql`DELETE FROM idempotency_keys WHERE id = ${id} AND token = ${token} AND status IS NULL`,
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
    const [row] = await this.serve((sql) => sql<KeyRow[]>`SELECT * FROM api_keys WHERE hash = ${hash}`);
    return row ? toKey(row) : null;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.serve((sql) => sql<KeyRow[]>`SELECT * FROM api_keys WHERE id = ${id}`);
    return row ? toKey(row) : null;
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const rows = await this.serve((sql) =>
      accountId === undefined
        ? sql<KeyRow[]>`SELECT * FROM api_keys ORDER BY created_at, id`
        : sql<KeyRow[]>`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`,
    );
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async setKeyTier(id: string, tier: string): Promise<boolean> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET tier = ${tier} WHERE id = ${id}`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async moveKey(id: string, accountId: string): Promise<boolean> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`UPDATE api_keys SET account_id = ${accountId} WHERE id = ${id}`;
        if (r.count === 0) return false;
        await this.keyChanged(tx, id);
        return true;
      }),
    );
  }

  async keysVersion(): Promise<number> {
    const [row] = await this.serve((sql) => sql`SELECT value FROM counters WHERE name = 'keys_version'`);
    return Number(row?.value);
  }

  async keyChangesSince(since: number): Promise<KeyChanges> {
    // One statement, one snapshot: the version and the keys stamped after `since` agree.
    const [row] = await this.serve(
      (sql) => sql<{ version: string; hashes: string[] }[]>`
        SELECT (SELECT value FROM counters WHERE name = 'keys_version') AS version,
               ARRAY(SELECT hash FROM api_keys WHERE changed_in > ${since}::bigint ORDER BY hash) AS hashes`,
    );
    return { version: Number(row!.version), hashes: row!.hashes };
  }

  /**
   * One statement for the whole batch (atomic, one round trip): the batch id is inserted
   * (`ON CONFLICT DO NOTHING RETURNING`), and the counts are upserted only if it came back, so
   * a batch already applied, or being applied by a retry still under way on the server (the
   * insert waits for it), changes nothing. Repeated (key, day, endpoint) events are folded into
   * one increment each; rows go in a fixed order so two concurrent batches touching the same
   * rows cannot deadlock.
   */
  async recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void> {
    if (events.length === 0) return;
    const rows = aggregateUsage(events).sort(
      (a, b) => compare(a.keyId, b.keyId) || compare(a.day, b.day) || compare(a.endpoint, b.endpoint),
    );
    await this.serve(
      (sql) => sql`
      WITH pruned AS (${this.#pruneBatches(sql)}),
      batch AS (
        INSERT INTO usage_batches (id, applied_at) VALUES (${batchId}, ${Math.floor(this.#clock.now())})
        ON CONFLICT (id) DO NOTHING RETURNING id)
      INSERT INTO usage (key_id, day, endpoint, requests, monthly)
      SELECT * FROM unnest(
        ${rows.map((r) => r.keyId)}::text[],
        ${rows.map((r) => r.day)}::text[],
        ${rows.map((r) => r.endpoint)}::text[],
        ${rows.map((r) => r.requests)}::bigint[],
        ${rows.map((r) => r.monthly)}::bigint[])
      WHERE EXISTS (SELECT 1 FROM batch)
      ON CONFLICT (key_id, day, endpoint) DO UPDATE
        SET requests = usage.requests + excluded.requests, monthly = usage.monthly + excluded.monthly`,
    );
  }

  /**
   * A statement (for a data-modifying CTE or on its own) deleting a few usage batch ids past
   * their retention (USAGE_BATCH_PRUNE_PER_WRITE): every write prunes as it adds one, so there
   * is never a backlog to delete at once. Rows another writer is deleting are skipped.
   */
  #pruneBatches(sql: postgres.Sql | TransactionSql) {
    const before = Math.floor(this.#clock.now()) - USAGE_BATCH_RETENTION_MS;
    return sql`
      DELETE FROM usage_batches WHERE id IN (
        SELECT id FROM usage_batches WHERE applied_at < ${before}
        LIMIT ${USAGE_BATCH_PRUNE_PER_WRITE} FOR UPDATE SKIP LOCKED)`;
  }

  async usageTotals(keyId: string, day: string): Promise<UsageTotals> {
    const month = day.slice(0, 7);
    const [row] = await this.serve(
      (sql) => sql`
      SELECT COALESCE(SUM(CASE WHEN day = ${day} THEN requests ELSE 0 END), 0)::bigint AS day_used,
             COALESCE(SUM(monthly), 0)::bigint AS month_used
        FROM usage WHERE key_id = ${keyId} AND day >= ${`${month}-01`} AND day <= ${`${month}-31`}`,
    );
    return { dayUsed: Number(row?.day_used), monthUsed: Number(row?.month_used) };
  }

  async accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals> {
    return this.serve((sql) => this.#accountTotals(sql, scope, day, keyQuotas));
  }

  async #accountTotals(
    sql: Sql | TransactionSql,
    scope: AccountScope,
    day: string,
    keyQuotas: QuotaCaps,
  ): Promise<UsageTotals> {
    const month = day.slice(0, 7);
    const daily = keyQuotas.daily ?? Number.MAX_SAFE_INTEGER;
    const monthly = keyQuotas.monthly ?? Number.MAX_SAFE_INTEGER;
    const [row] = await sql`
      SELECT COALESCE(SUM(LEAST(d, ${daily}::bigint)), 0)::bigint AS day_used,
             COALESCE(SUM(LEAST(m, ${monthly}::bigint)), 0)::bigint AS month_used
        FROM (SELECT SUM(CASE WHEN u.day = ${day} THEN u.requests ELSE 0 END) AS d, SUM(u.monthly) AS m
                FROM api_keys k JOIN usage u ON u.key_id = k.id
               WHERE k.account_id = ${scope.accountId} AND k.tier = ${scope.tier}
                 AND u.day >= ${`${month}-01`} AND u.day <= ${`${month}-31`}
               GROUP BY k.id) per_key`;
    return { dayUsed: Number(row?.day_used), monthUsed: Number(row?.month_used) };
  }

  /**
   * One transaction: per-key advisory locks (taken in key order, so two batches cannot
   * deadlock), the batch id claimed (a batch already applied only reads), the totals of every
   * (key, day) of the batch in one query, the decisions, then one upsert. Reservations of one
   * key from any number of processes are serialized; plain recordUsage() batches (counts
   * already decided in Redis) are not held up by them.
   */
  async reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]> {
    if (requests.length === 0) return [];
    const days = reservationDays(requests);
    // Locks are taken in the order of their ids (hashes of the key ids, distinct): two batches
    // whose keys' hashes collide still lock in one order, so they cannot deadlock.
    const accountDays = reservationAccountDays(requests);
    // The account bounds are locked too (their reservations from any key serialize), in the same order.
    const keys = [
      ...new Set([
        ...days.map((d) => d.keyId),
        ...accountDays.map((a) => `account:${a.scope.accountId}:${a.scope.tier}`),
      ]),
    ];
    const results = await this.serve(
      (sql) =>
        sql.begin(async (tx) => {
          await tx`
        SELECT pg_advisory_xact_lock(${LOCK_USAGE}, h)
          FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest(${keys}::text[]) AS k ORDER BY h) AS ordered`;
          await this.#pruneBatches(tx);
          const claimed = await tx`
        INSERT INTO usage_batches (id, applied_at) VALUES (${batchId}, ${Math.floor(this.#clock.now())})
        ON CONFLICT (id) DO NOTHING RETURNING id`;
          const rows = await tx`
        SELECT d.k, d.d,
               COALESCE(SUM(CASE WHEN u.day = d.d THEN u.requests ELSE 0 END), 0)::bigint AS day_used,
               COALESCE(SUM(u.monthly), 0)::bigint AS month_used
          FROM unnest(${days.map((d) => d.keyId)}::text[], ${days.map((d) => d.day)}::text[]) AS d(k, d)
          LEFT JOIN usage u
            ON u.key_id = d.k AND u.day >= left(d.d, 7) || '-01' AND u.day <= left(d.d, 7) || '-31'
         GROUP BY d.k, d.d`;
          const totals = new Map<string, UsageTotals>();
          for (const r of rows) {
            totals.set(`${r.k}\u0000${r.d}`, {
              dayUsed: Number(r.day_used),
              monthUsed: Number(r.month_used),
            });
          }
          if (claimed.length === 0) return replayedReservations(requests, totals);
          const accountTotals = new Map<string, UsageTotals>();
          for (const a of accountDays) {
            accountTotals.set(accountDayId(a.scope, a.day), await this.#accountTotals(tx, a.scope, a.day, a));
          }
          const { results, events } = decideReservations(requests, totals, accountTotals);
          const inc = aggregateUsage(events).sort(
            (a, b) => compare(a.keyId, b.keyId) || compare(a.day, b.day) || compare(a.endpoint, b.endpoint),
          );
          await tx`
        INSERT INTO usage (key_id, day, endpoint, requests, monthly)
        SELECT * FROM unnest(
          ${inc.map((r) => r.keyId)}::text[],
          ${inc.map((r) => r.day)}::text[],
          ${inc.map((r) => r.endpoint)}::text[],
          ${inc.map((r) => r.requests)}::bigint[],
          ${inc.map((r) => r.monthly)}::bigint[])
        ON CONFLICT (key_id, day, endpoint) DO UPDATE
          SET requests = usage.requests + excluded.requests, monthly = usage.monthly + excluded.monthly`;
          return results;
        }) as Promise<ReservedUsage[]>,
    );
    return results;
  }

  async usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows = await this.serve(
      (sql) => sql`
      SELECT day, endpoint, requests FROM usage
       WHERE key_id = ${keyId} AND day >= ${fromDay} AND day <= ${toDay}
       ORDER BY day, endpoint`,
    );
    return rows.map((r) => ({
      day: r.day as string,
      endpoint: r.endpoint as string,
      requests: Number(r.requests),
    }));
  }

  // ---- history ------------------------------------------------------------------------------
  // Market keys and (chain, address) pairs are stored once, in history_markets and
  // history_addresses (migration 7); the history tables hold their integer ids, resolved in
  // the append's transaction, and cached once it commits: a dimension row is never deleted nor
  // changed, so a committed id stays right whichever instance wrote it (an id inserted by a
  // transaction that rolled back names nothing, hence nothing is cached before the commit).
  // Reads find the one market,
  // token or feed first, then its rows in a LATERAL subquery: a join would have the planner
  // read and sort all of that market's rows, as it cannot tell the join yields one market.

  /**
   * Appends rows (already checked and sorted by natural key) in one transaction on the bulk
   * pool: a backfill of any size may take longer than a request's deadline, and is atomic.
   * `ids` resolves the dimension ids first (`cache` keeps them once committed); then rows go APPEND_CHUNK_ROWS at a time as one
   * INSERT ... SELECT FROM unnest(arrays) ... ON CONFLICT DO NOTHING: a few round trips, a
   * handful of parameters per statement whatever the rows (numbers travel as their shortest
   * round-trip text, so doubles are exact).
   */
  async #append<T, I>(
    rows: readonly T[],
    ids: (tx: TransactionSql) => Promise<I>,
    insert: (tx: TransactionSql, chunk: readonly T[], ids: I) => PromiseLike<{ count: number }>,
    cache: (ids: I) => void,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const { added, resolved } = await this.bulk((sql) =>
      sql.begin(async (tx) => {
        const resolved = await ids(tx);
        let added = 0;
        for (let i = 0; i < rows.length; i += APPEND_CHUNK_ROWS) {
          added += (await insert(tx, rows.slice(i, i + APPEND_CHUNK_ROWS), resolved)).count;
        }
        return { added, resolved };
      }),
    );
    cache(resolved);
    return added;
  }

  #cacheMarkets = (ids: Map<string, MarketDimension>): void => {
    for (const [k, v] of ids) this.#marketIdCache.set(k, v);
  };

  #cacheAddresses = (ids: Map<string, number>): void => {
    for (const [k, v] of ids) this.#addressIdCache.set(k, v);
  };

  /**
   * The history_markets rows of the markets of `rows`, by key; a market not stored yet is
   * inserted with the chain and protocol of its first row. Keys are inserted in byte order,
   * so concurrent appends wait on each other's new keys in one order (no deadlock).
   */
  async #marketIds(
    tx: TransactionSql,
    rows: readonly Pick<MarketSnapshot, 'marketKey' | 'chainId' | 'protocol'>[],
  ): Promise<Map<string, MarketDimension>> {
    const first = new Map<string, Pick<MarketSnapshot, 'chainId' | 'protocol'>>();
    const found = new Map<string, MarketDimension>();
    for (const r of rows) {
      if (found.has(r.marketKey) || first.has(r.marketKey)) continue;
      const cached = this.#marketIdCache.get(r.marketKey);
      if (cached) found.set(r.marketKey, cached);
      else first.set(r.marketKey, r);
    }
    const read = async (keys: string[]) => {
      for (let i = 0; i < keys.length; i += APPEND_CHUNK_ROWS) {
        const chunk = keys.slice(i, i + APPEND_CHUNK_ROWS);
        const stored = await tx`
          SELECT id, market_key, chain_id, protocol FROM history_markets WHERE market_key = ANY(${chunk}::text[])`;
        for (const r of stored) {
          found.set(r.market_key as string, {
            id: r.id as number,
            chainId: Number(r.chain_id),
            protocol: r.protocol as string,
          });
        }
      }
    };
    await read([...first.keys()]);
    const missing = [...first.keys()].filter((k) => !found.has(k)).sort(compare);
    for (let i = 0; i < missing.length; i += APPEND_CHUNK_ROWS) {
      const chunk = missing.slice(i, i + APPEND_CHUNK_ROWS);
      await tx`
        INSERT INTO history_markets (market_key, chain_id, protocol)
        SELECT * FROM unnest(
          ${chunk}::text[],
          ${chunk.map((k) => first.get(k)!.chainId)}::bigint[],
          ${chunk.map((k) => first.get(k)!.protocol)}::text[])
        ON CONFLICT (market_key) DO NOTHING`;
    }
    // Read back rather than RETURNING: a key another append committed meanwhile is skipped by the insert.
    if (missing.length > 0) await read(missing);
    return found;
  }

  /** The history_addresses ids of (chainId, address) pairs, by `chainId:address`; new ones inserted in order. */
  async #addressIds(tx: TransactionSql, pairs: readonly [number, string][]): Promise<Map<string, number>> {
    const unique = new Map<string, [number, string]>();
    const found = new Map<string, number>();
    for (const p of pairs) {
      const key = `${p[0]}:${p[1]}`;
      const cached = this.#addressIdCache.get(key);
      if (cached !== undefined) found.set(key, cached);
      else unique.set(key, p);
    }
    const read = async (list: [number, string][]) => {
      for (let i = 0; i < list.length; i += APPEND_CHUNK_ROWS) {
        const chunk = list.slice(i, i + APPEND_CHUNK_ROWS);
        const stored = await tx`
          SELECT a.id, a.chain_id, a.address
            FROM unnest(${chunk.map((p) => p[0])}::bigint[], ${chunk.map((p) => p[1])}::text[]) AS k(chain_id, address)
            JOIN history_addresses a ON a.chain_id = k.chain_id AND a.address = k.address`;
        for (const r of stored) found.set(`${r.chain_id}:${r.address}`, r.id as number);
      }
    };
    await read([...unique.values()]);
    const missing = [...unique.entries()]
      .filter(([k]) => !found.has(k))
      .map(([, p]) => p)
      .sort((a, b) => a[0] - b[0] || compare(a[1], b[1]));
    for (let i = 0; i < missing.length; i += APPEND_CHUNK_ROWS) {
      const chunk = missing.slice(i, i + APPEND_CHUNK_ROWS);
      await tx`
        INSERT INTO history_addresses (chain_id, address)
        SELECT * FROM unnest(${chunk.map((p) => p[0])}::bigint[], ${chunk.map((p) => p[1])}::text[])
        ON CONFLICT (chain_id, address) DO NOTHING`;
    }
    if (missing.length > 0) await read(missing);
    return found;
  }

  async appendMarketSnapshots(rows: readonly MarketSnapshot[]): Promise<number> {
    checkMarketSnapshots(rows);
    const sorted = [...rows].sort(bySnapshotKey);
    return this.#append(
      sorted,
      (tx) => this.#marketIds(tx, sorted),
      (tx, c, markets) => {
        const m = c.map((r) => markets.get(r.marketKey)!);
        return tx`
        INSERT INTO market_snapshots (market_id, granularity, at, supply_usd, borrow_usd, utilization, supply_apy,
          borrow_apy, collateral_price_usd, loan_price_usd, oracle_price, chain_id, protocol)
        SELECT * FROM unnest(
          ${m.map((x) => x.id)}::integer[],
          ${c.map((r) => r.granularity)}::text[],
          ${c.map((r) => r.at)}::bigint[],
          ${c.map((r) => r.supplyUsd)}::float8[],
          ${c.map((r) => r.borrowUsd)}::float8[],
          ${c.map((r) => r.utilization)}::float8[],
          ${c.map((r) => r.supplyApy)}::float8[],
          ${c.map((r) => r.borrowApy)}::float8[],
          ${c.map((r) => r.collateralPriceUsd)}::float8[],
          ${c.map((r) => r.loanPriceUsd)}::float8[],
          ${c.map((r) => r.oraclePrice)}::float8[],
          ${c.map((r, i) => (r.chainId === m[i]!.chainId ? null : r.chainId))}::bigint[],
          ${c.map((r, i) => (r.protocol === m[i]!.protocol ? null : r.protocol))}::text[])
        ON CONFLICT DO NOTHING`;
      },
      this.#cacheMarkets,
    );
  }

  async appendAssetPrices(rows: readonly AssetPrice[]): Promise<number> {
    checkAssetPrices(rows);
    const sorted = [...rows].sort(byPriceKey);
    return this.#append(
      sorted,
      (tx) =>
        this.#addressIds(
          tx,
          sorted.map((r) => [r.chainId, r.token]),
        ),
      (tx, c, tokens) => tx`
      INSERT INTO asset_prices (token_id, at, price_usd)
      SELECT * FROM unnest(
        ${c.map((r) => tokens.get(`${r.chainId}:${r.token}`)!)}::integer[],
        ${c.map((r) => r.at)}::bigint[],
        ${c.map((r) => r.priceUsd)}::float8[])
      ON CONFLICT DO NOTHING`,
      this.#cacheAddresses,
    );
  }

  async appendOracleRounds(rows: readonly OracleRound[]): Promise<number> {
    checkOracleRounds(rows);
    const sorted = [...rows].sort(byRoundKey);
    return this.#append(
      sorted,
      (tx) =>
        this.#addressIds(
          tx,
          sorted.map((r) => [r.chainId, r.feed]),
        ),
      (tx, c, feeds) => tx`
      INSERT INTO oracle_rounds (feed_id, round_id, answer, updated_at)
      SELECT * FROM unnest(
        ${c.map((r) => feeds.get(`${r.chainId}:${r.feed}`)!)}::integer[],
        ${c.map((r) => r.roundId)}::text[],
        ${c.map((r) => r.answer)}::float8[],
        ${c.map((r) => r.updatedAt)}::bigint[])
      ON CONFLICT DO NOTHING`,
      this.#cacheAddresses,
    );
  }

  async appendLiquidations(rows: readonly LiquidationEvent[]): Promise<number> {
    checkLiquidations(rows);
    const sorted = [...rows].sort(byLiquidationKey);
    return this.#append(
      sorted,
      (tx) => this.#marketIds(tx, sorted),
      (tx, c, markets) => tx`
      INSERT INTO liquidations (chain_id, tx_hash, log_index, protocol, block, at, market_id, borrower, liquidator,
        collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd)
      SELECT * FROM unnest(
        ${c.map((r) => r.chainId)}::bigint[],
        ${c.map((r) => r.txHash)}::text[],
        ${c.map((r) => r.logIndex)}::integer[],
        ${c.map((r) => r.protocol)}::text[],
        ${c.map((r) => r.block)}::bigint[],
        ${c.map((r) => r.at)}::bigint[],
        ${c.map((r) => markets.get(r.marketKey)!.id)}::integer[],
        ${c.map((r) => r.borrower)}::text[],
        ${c.map((r) => r.liquidator)}::text[],
        ${c.map((r) => r.collateralSeized)}::float8[],
        ${c.map((r) => r.collateralSeizedUsd)}::float8[],
        ${c.map((r) => r.debtRepaid)}::float8[],
        ${c.map((r) => r.debtRepaidUsd)}::float8[],
        ${c.map((r) => r.badDebt)}::float8[],
        ${c.map((r) => r.badDebtUsd)}::float8[])
      ON CONFLICT DO NOTHING`,
      this.#cacheMarkets,
    );
  }

  async marketSnapshots(
    marketKey: string,
    granularity: SnapshotGranularity,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: SnapshotCursor,
  ): Promise<MarketSnapshot[]> {
    checkRead(limit, fromMs, toMs);
    // `at` is unique within a market and granularity, and an integer: "after the cursor" is at >= cursor + 1.
    const from = after ? Math.max(fromMs, after.at + 1) : fromMs;
    const rows = await this.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(SNAPSHOT_COLUMNS)} FROM history_markets m CROSS JOIN LATERAL (
          SELECT * FROM market_snapshots s
           WHERE s.market_id = m.id AND s.granularity = ${granularity} AND s.at >= ${from} AND s.at < ${toMs}
           ORDER BY s.at LIMIT ${limit}) s
       WHERE m.market_key = ${marketKey} ORDER BY s.at`,
    );
    return rows.map(toSnapshot);
  }

  async latestMarketSnapshot(
    marketKey: string,
    granularity: SnapshotGranularity,
  ): Promise<MarketSnapshot | null> {
    const [row] = await this.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(SNAPSHOT_COLUMNS)} FROM history_markets m CROSS JOIN LATERAL (
          SELECT * FROM market_snapshots s WHERE s.market_id = m.id AND s.granularity = ${granularity}
           ORDER BY s.at DESC LIMIT 1) s
       WHERE m.market_key = ${marketKey}`,
    );
    return row ? toSnapshot(row) : null;
  }

  async assetPrices(
    chainId: number,
    token: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: AssetPriceCursor,
  ): Promise<AssetPrice[]> {
    checkRead(limit, fromMs, toMs);
    const from = after ? Math.max(fromMs, after.at + 1) : fromMs;
    const rows = await this.serve(
      (sql) => sql`
      SELECT a.chain_id, a.address AS token, p.at, p.price_usd
        FROM history_addresses a CROSS JOIN LATERAL (
          SELECT at, price_usd FROM asset_prices p
           WHERE p.token_id = a.id AND p.at >= ${from} AND p.at < ${toMs} ORDER BY p.at LIMIT ${limit}) p
       WHERE a.chain_id = ${chainId} AND a.address = ${token.toLowerCase()} ORDER BY p.at`,
    );
    return rows.map(toAssetPrice);
  }

  async oracleRounds(
    chainId: number,
    feed: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: OracleRoundCursor,
  ): Promise<OracleRound[]> {
    checkRead(limit, fromMs, toMs);
    const rows = await this.serve(
      (sql) => sql`
      SELECT a.chain_id, a.address AS feed, r.round_id, r.answer, r.updated_at
        FROM history_addresses a CROSS JOIN LATERAL (
          SELECT round_id, answer, updated_at FROM oracle_rounds r
           WHERE r.feed_id = a.id AND r.updated_at >= ${fromMs} AND r.updated_at < ${toMs}
           ${
             // A row comparison, which the index (feed_id, updated_at, round_id) seeks to directly.
             after
               ? sql`AND (r.updated_at, r.round_id) > (${after.updatedAt}::bigint, ${after.roundId}::text)`
               : sql``
           }
           ORDER BY r.updated_at, r.round_id LIMIT ${limit}) r
       WHERE a.chain_id = ${chainId} AND a.address = ${feed.toLowerCase()} ORDER BY r.updated_at, r.round_id`,
    );
    return rows.map(toOracleRound);
  }

  async dailyMarketTotals(fromMs: number, toMs: number): Promise<DailyMarketTotal[]> {
    checkRead(1, fromMs, toMs);
    const rows = await this.serve(
      (sql) => sql`
      SELECT s.at, COALESCE(s.protocol, m.protocol) AS protocol, COALESCE(s.chain_id, m.chain_id) AS chain_id,
             COUNT(*) AS markets, SUM(s.supply_usd) AS supply_usd, SUM(s.borrow_usd) AS borrow_usd
        FROM history_markets m JOIN market_snapshots s
          ON s.market_id = m.id AND s.granularity = 'day' AND s.at >= ${fromMs} AND s.at < ${toMs}
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    return rows.map(toDailyMarketTotal);
  }

  async dailyLiquidationTotals(fromMs: number, toMs: number): Promise<DailyLiquidationTotal[]> {
    checkRead(1, fromMs, toMs);
    const rows = await this.serve(
      (sql) => sql`
      SELECT (at / ${DAY_MS}) * ${DAY_MS} AS at, protocol, chain_id, COUNT(*) AS liquidations,
             COUNT(*) FILTER (WHERE collateral_seized_usd IS NULL OR debt_repaid_usd IS NULL OR bad_debt_usd IS NULL)
               AS unpriced_liquidations,
             SUM(debt_repaid_usd) AS debt_repaid_usd, SUM(collateral_seized_usd) AS collateral_seized_usd,
             SUM(bad_debt_usd) AS bad_debt_usd
        FROM liquidations WHERE at >= ${fromMs} AND at < ${toMs} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    return rows.map(toDailyLiquidationTotal);
  }

  async liquidations(
    filter: LiquidationFilter,
    limit: number,
    after?: LiquidationCursor,
  ): Promise<LiquidationEvent[]> {
    checkRead(limit, filter.fromMs, filter.toMs);
    const rows = await this.serve((sql) => {
      const conditions = [
        filter.chainId !== undefined && sql`l.chain_id = ${filter.chainId}`,
        filter.marketKey !== undefined &&
          sql`l.market_id = (SELECT id FROM history_markets WHERE market_key = ${filter.marketKey})`,
        filter.borrower !== undefined && sql`l.borrower = ${filter.borrower.toLowerCase()}`,
        filter.liquidator !== undefined && sql`l.liquidator = ${filter.liquidator.toLowerCase()}`,
        filter.protocol !== undefined && sql`l.protocol = ${filter.protocol}`,
        filter.fromMs !== undefined && sql`l.at >= ${filter.fromMs}`,
        filter.toMs !== undefined && sql`l.at < ${filter.toMs}`,
        // Newest first: older rows, or rows of the cursor's time after it in the tie-break. The
        // `at <=` bound lets the index seek to the cursor instead of skipping newer rows.
        after &&
          sql`l.at <= ${after.at} AND (l.at < ${after.at} OR (l.chain_id, l.tx_hash, l.log_index) > (${after.chainId}::bigint, ${after.txHash}::text, ${after.logIndex}::integer))`,
      ].filter((c) => c !== false && c !== undefined);
      const where = conditions.reduce(
        (acc, c, i) => (i === 0 ? sql`WHERE ${c}` : sql`${acc} AND ${c}`),
        sql``,
      );
      return sql`
      SELECT ${sql.unsafe(LIQUIDATION_COLUMNS)} FROM liquidations l JOIN history_markets m ON m.id = l.market_id
       ${where}
       ORDER BY l.at DESC, l.chain_id, l.tx_hash, l.log_index LIMIT ${limit}`;
    });
    return rows.map(toLiquidation);
  }

  /**
   * One transaction on the bulk pool (a first prune of a long history may delete millions of
   * rows, longer than a request's deadline). Readers are not blocked: DELETE, not TRUNCATE.
   * By age through the primary keys, scanned once per market, token or feed.
   */
  async dropOracleRoundsFrom(chainId: number, fromMs: number): Promise<number> {
    checkRead(0, fromMs);
    return (
      await this.bulk(
        (sql) =>
          sql`DELETE FROM oracle_rounds WHERE feed_id = ANY (ARRAY(SELECT id FROM history_addresses WHERE chain_id = ${chainId})) AND updated_at >= ${fromMs}`,
      )
    ).count;
  }

  async dropLiquidationsFrom(chainId: number, block: number): Promise<number> {
    checkRead(0, block);
    return (
      await this.bulk(
        (sql) => sql`DELETE FROM liquidations WHERE chain_id = ${chainId} AND block >= ${block}`,
      )
    ).count;
  }

  async pruneHistory(before: HistoryCutoffs): Promise<HistoryCounts> {
    for (const cutoff of Object.values(before)) checkRead(0, cutoff);
    return this.bulk((sql) =>
      sql.begin(async (tx) => {
        const deleted = noHistory();
        const run = async (
          kind: keyof HistoryCutoffs,
          del: (cutoff: number) => PromiseLike<{ count: number }>,
        ) => {
          const cutoff = before[kind];
          if (cutoff !== undefined) deleted[kind] = (await del(cutoff)).count;
        };
        const markets = tx`market_id = ANY (ARRAY(SELECT id FROM history_markets))`;
        const addresses = tx`ANY (ARRAY(SELECT id FROM history_addresses))`;
        await run(
          'hourlySnapshots',
          (c) => tx`DELETE FROM market_snapshots WHERE ${markets} AND granularity = 'hour' AND at < ${c}`,
        );
        await run(
          'dailySnapshots',
          (c) => tx`DELETE FROM market_snapshots WHERE ${markets} AND granularity = 'day' AND at < ${c}`,
        );
        await run(
          'assetPrices',
          (c) => tx`DELETE FROM asset_prices WHERE token_id = ${addresses} AND at < ${c}`,
        );
        await run(
          'oracleRounds',
          (c) => tx`DELETE FROM oracle_rounds WHERE feed_id = ${addresses} AND updated_at < ${c}`,
        );
        await run('liquidations', (c) => tx`DELETE FROM liquidations WHERE at < ${c}`);
        return deleted;
      }),
    );
  }

  /** Full counts: on the bulk pool, as they may take longer than a request's deadline on a long history. */
  async historyCounts(): Promise<HistoryCounts> {
    const [row] = await this.bulk(
      (sql) => sql`
      SELECT (SELECT count(*) FROM market_snapshots WHERE granularity = 'hour') AS hourly_snapshots,
             (SELECT count(*) FROM market_snapshots WHERE granularity = 'day') AS daily_snapshots,
             (SELECT count(*) FROM asset_prices) AS asset_prices,
             (SELECT count(*) FROM oracle_rounds) AS oracle_rounds,
             (SELECT count(*) FROM liquidations) AS liquidations`,
    );
    return toCounts(row!);
  }

  // ---- rating changes -----------------------------------------------------------------------

  /** One transaction on the bulk pool, rows in key order (concurrent appends cannot deadlock). */
  async appendRatingChanges(rows: readonly RatingChange[]): Promise<number> {
    checkRatingChanges(rows);
    const sorted = [...rows].sort(byRatingKey);
    return this.#append(
      sorted,
      async () => null,
      (tx, c) => tx`
      INSERT INTO rating_changes (${tx.unsafe(RATING_CHANGE_COLUMNS)})
      SELECT * FROM unnest(
        ${c.map((r) => r.kind)}::text[],
        ${c.map((r) => r.subject)}::text[],
        ${c.map((r) => r.chainId)}::bigint[],
        ${c.map((r) => r.at)}::bigint[],
        ${c.map((r) => r.methodology)}::text[],
        ${c.map((r) => r.grade)}::text[],
        ${c.map((r) => r.score)}::float8[],
        ${c.map((r) => r.previousGrade)}::text[],
        ${c.map((r) => r.previousScore)}::float8[],
        ${c.map((r) => JSON.stringify(r.components))}::text[])
      ON CONFLICT DO NOTHING`,
      () => {},
    );
  }

  async ratingChanges(
    kind: RatingSubjectKind,
    subject: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: RatingChangeCursor,
  ): Promise<RatingChange[]> {
    checkRead(limit, fromMs, toMs);
    // `at` is unique per subject, and an integer: "after the cursor" is at >= cursor + 1.
    const from = after ? Math.max(fromMs, after.at + 1) : fromMs;
    const rows = await this.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes
       WHERE kind = ${kind} AND subject = ${subject} AND at >= ${from} AND at < ${toMs}
       ORDER BY at LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }

  async ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]> {
    checkRead(limit, fromMs, toMs);
    const rows = await this.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes WHERE at >= ${fromMs} AND at < ${toMs}
       ORDER BY at, kind, subject LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }

  async daySnapshots(dayMs: number): Promise<MarketSnapshot[]> {
    checkRead(1, dayMs, dayMs + 1);
    const rows = await this.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(SNAPSHOT_COLUMNS)} FROM history_markets m JOIN market_snapshots s
          ON s.market_id = m.id AND s.granularity = 'day' AND s.at = ${dayMs}`,
    );
    return rows.map(toSnapshot);
  }

  async appendResearchReports(rows: readonly ResearchReportRow[]): Promise<number> {
    checkResearchReports(rows);
    return this.#append(
      [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      async () => null,
      (tx, c) => tx`
      INSERT INTO research_reports (id, day, protocol, generated_at, body)
      SELECT * FROM unnest(
        ${c.map((r) => r.id)}::text[],
        ${c.map((r) => r.day)}::bigint[],
        ${c.map((r) => r.protocol)}::text[],
        ${c.map((r) => r.generatedAt)}::bigint[],
        ${c.map((r) => r.body)}::text[])
      ON CONFLICT DO NOTHING`,
      () => {},
    );
  }

  async researchReports(
    filter: { protocol?: string | undefined; fromMs: number; toMs: number },
    limit: number,
    after?: ResearchReportCursor,
  ): Promise<ResearchReportRow[]> {
    checkRead(limit, filter.fromMs, filter.toMs);
    const rows = await this.serve(
      (sql) => sql`
      SELECT id, day, protocol, generated_at, body FROM research_reports
       WHERE day >= ${filter.fromMs} AND day < ${filter.toMs}
         ${filter.protocol === undefined ? sql`` : sql`AND protocol = ${filter.protocol}`}
         ${after ? sql`AND (day < ${after.day} OR (day = ${after.day} AND id < ${after.id}))` : sql``}
       ORDER BY day DESC, id DESC LIMIT ${limit}`,
    );
    return rows.map(toResearchReport);
  }

  async researchReport(id: string): Promise<ResearchReportRow | null> {
    const [row] = await this.serve(
      (sql) => sql`SELECT id, day, protocol, generated_at, body FROM research_reports WHERE id = ${id}`,
    );
    return row ? toResearchReport(row) : null;
  }

  async lastResearchDay(): Promise<number | null> {
    const [row] = await this.serve((sql) => sql`SELECT max(day) AS day FROM research_reports`);
    return row?.day === null || row?.day === undefined ? null : Number(row.day);
  }

  /** The primary key in order from the subject after the cursor, each subject's newest row. */
  async latestRatingChanges(
    kind: RatingSubjectKind,
    limit: number,
    afterSubject = '',
  ): Promise<RatingChange[]> {
    checkRead(limit);
    const rows = await this.serve(
      (sql) => sql`
      SELECT DISTINCT ON (subject) ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes
       WHERE kind = ${kind} AND subject > ${afterSubject} ORDER BY subject, at DESC LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }

  // ---- sources ------------------------------------------------------------------------------

  async saveSource(state: SourceState): Promise<void> {
    checkSource(state);
    await this.serve(
      (sql) => sql`
      INSERT INTO sources (id, kind, chain_ids, refreshed_at, last_block, consecutive_failures, last_error, updated_at, cursor, head)
      VALUES (${state.id}, ${state.kind}, ${JSON.stringify(state.chainIds)}, ${state.refreshedAt},
              ${JSON.stringify(state.lastBlock)}, ${state.consecutiveFailures}, ${state.lastError}, ${state.updatedAt},
              ${state.cursor}, ${state.head === undefined ? null : JSON.stringify(state.head)})
      ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, chain_ids = excluded.chain_ids,
        refreshed_at = excluded.refreshed_at, last_block = excluded.last_block,
        consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error,
        updated_at = excluded.updated_at, cursor = excluded.cursor, head = excluded.head`,
    );
  }

  async listSources(): Promise<SourceState[]> {
    const rows = await this.serve((sql) => sql`SELECT * FROM sources ORDER BY id`);
    return rows.map(toSource);
  }

  async claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const rows = await this.serve(
      (sql) => sql`
      INSERT INTO ingest_lease (id, holder, expires_at) VALUES (1, ${holder}, ${nowMs + leaseMs})
      ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
      WHERE ingest_lease.holder = excluded.holder OR ingest_lease.expires_at <= ${nowMs}
      RETURNING holder`,
    );
    return rows.length === 1;
  }

  async releaseIngestion(holder: string): Promise<void> {
    await this.serve((sql) => sql`UPDATE ingest_lease SET expires_at = 0 WHERE holder = ${holder}`);
  }
}

/** Byte-order comparison, the order of COLLATE "C" keys. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Every call of its ports timed and its failures counted (METRICS_PORT).
measureStoreCalls(PostgresStore, 'postgres');
