import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
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
  toLiquidationFromArray,
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
import {
  accountDayId,
  aggregateUsage,
  decideReservations,
  replayedReservations,
  reservationAccountDays,
  reservationDays,
  SQLITE_USAGE_BATCH_RETENTION_MS,
  USAGE_BATCH_PRUNE_PER_WRITE,
} from '../usage.ts';
import {
  isSqliteDiskError,
  StoreWriteError,
  WriteHealth,
  type WriteProblemListener,
} from '../write-health.ts';
import { SqliteEventStore } from './event-store.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';

/** A row of history_markets: its id, and the chain and protocol its snapshots have unless they say otherwise. */
interface MarketDimension {
  id: number;
  chainId: number;
  protocol: string;
}

/** Dimension ids found or inserted by the transaction in progress, cached once it commits. */
interface PendingIds {
  markets: Map<string, MarketDimension>;
  addresses: Map<string, number>;
}

/** CLAIM_SQL with SQLite's numbered parameters (?1, ?2…). */
const SQLITE_CLAIM_SQL = CLAIM_SQL.replace(/\$(\d)/g, '?$1');

/**
 * The embedded store: one SQLite file (node:sqlite) in WAL mode. Every statement is
 * synchronous; a committed write is in the WAL before the call returns, so it survives the
 * process being killed (synchronous=NORMAL trades only power-loss durability for speed).
 * Several processes (server, CLI) may open the same file; writers wait up to 5 s for the lock.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  /** Committed ids of history_markets by market key, and of history_addresses by `chainId:address`. */
  private readonly marketIds = new Map<string, MarketDimension>();
  private readonly addressIds = new Map<string, number>();
  private readonly clock: Clock;
  /** Whether writes go through (a full disk refuses them while reads go on). */
  private readonly writes = new WriteHealth();
  readonly events: EventStore;

  /** `clock`: the time of dataset refreshes, migrations and usage batch ids (default: the system clock). */
  constructor(path: string, options: { clock?: Clock } = {}) {
    this.path = path;
    this.clock = options.clock ?? systemClock();
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path, { timeout: 5000 });
    try {
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = NORMAL');
      // The WAL is copied into the database (and both fsynced) once it holds 10,000 pages (40 MB)
      // rather than SQLite's 1,000: a history append dirties pages all over the liquidation
      // indexes, and checkpointing ten times as often made the seed's history appends 20-35 %
      // slower. A checkpoint then takes longer (tens of ms, on this connection's commit).
      this.db.exec('PRAGMA wal_autocheckpoint = 10000');
      this.db.exec('PRAGMA foreign_keys = ON');
    } catch (err) {
      this.db.close();
      throw isSqliteDiskError(err) ? this.writeError(err) : err;
    }
    this.events = new SqliteEventStore(this.db);
  }

  /** The error a write refused by the disk is thrown as: it names the file and SQLite's reason. */
  private writeError(err: unknown): StoreWriteError {
    const reason = (err as { errstr?: string }).errstr ?? (err as Error).message;
    return new StoreWriteError(`the store cannot write to ${this.path}: ${reason}`, err);
  }

  writeProblem() {
    return this.writes.problem;
  }

  watchWrites(listener: WriteProblemListener): () => void {
    return this.writes.watch(listener);
  }

  /** A prepared statement, cached by its SQL; `arrays`: rows as arrays (in column order). */
  private stmt(sql: string, options?: { arrays: true }): StatementSync {
    const key = options?.arrays ? `arrays:${sql}` : sql;
    let s = this.statements.get(key);
    if (!s) {
      s = this.db.prepare(sql);
      if (options?.arrays) s.setReturnArrays(true);
      this.statements.set(key, s);
    }
    return s;
  }

  /**
   * Runs `fn` in one write transaction (BEGIN IMMEDIATE: the write lock first). On an error the
   * transaction is rolled back unless SQLite already did (it does on a full disk), and the error
   * thrown is the one that happened: a disk refusing the write as StoreWriteError (and the
   * store's write health says so until a write goes through again), anything else as it is.
   */
  private transaction<T>(fn: () => T): T {
    try {
      this.db.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = fn();
        this.db.exec('COMMIT');
      } catch (err) {
        if (this.db.isTransaction) {
          try {
            this.db.exec('ROLLBACK');
          } catch {
            // The error to report is the one that made the transaction fail.
          }
        }
        throw err;
      }
      this.writes.succeeded(this.clock.now());
      return result;
    } catch (err) {
      if (!isSqliteDiskError(err)) throw err;
      const error = this.writeError(err);
      this.writes.failed(error.message, this.clock.now());
      throw error;
    }
  }

  async migrate(): Promise<void> {
    // A migration may renumber the dimensions (version 7 creates them from the rows there).
    this.marketIds.clear();
    this.addressIds.clear();
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    for (const m of SQLITE_MIGRATIONS) {
      this.transaction(() => {
        // Checked inside the write transaction so two processes starting at once apply it once.
        const done = this.db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
        if (done) return;
        this.db.exec(m.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, new Date(this.clock.now()).toISOString());
      });
    }
  }

  async close(): Promise<void> {
    this.statements.clear();
    if (this.db.isOpen) this.db.close();
  }

  /**
   * Whether the file answers. While writes fail, a probe write (a counter set to its own value)
   * is tried first, so the write health clears once the disk has room again even when nothing
   * else writes.
   */
  async ping(): Promise<boolean> {
    if (!this.db.isOpen) return false;
    if (this.writes.problem) {
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

  async datasetInfo(): Promise<DatasetInfo | null> {
    const row = this.stmt('SELECT * FROM dataset WHERE id = 1').get() as
      | {
          kind: string;
          profile: string;
          seed: number | null;
          refreshed_at: number;
          market_count: number;
          position_count: number;
          version: number;
          change_seq: number;
        }
      | undefined;
    if (!row) return null;
    return {
      kind: row.kind as DatasetInfo['kind'],
      profile: row.profile,
      seed: row.seed,
      refreshedAt: row.refreshed_at,
      marketCount: row.market_count,
      positionCount: row.position_count,
      version: row.version,
      changeSeq: row.change_seq,
    };
  }

  async replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo> {
    const total = input.markets.length + input.positionCount;
    // Gathered and sorted before the write transaction, so the lock is held only for the writes.
    const columns = columnsOf(input.markets, input.positions, input.positionCount);
    const written = this.transaction((): DatasetInfo | null => {
      const previous = this.db.prepare('SELECT version FROM dataset WHERE id = 1').get() as
        | { version: number }
        | undefined;
      if (previous && input.onlyIfEmpty) return null;
      this.db.exec(
        'DELETE FROM position_blocks; DELETE FROM position_changes; DELETE FROM market_changes; DELETE FROM vaults; DELETE FROM markets; DELETE FROM dataset;',
      );
      const insertVault = this.db.prepare(
        'INSERT INTO vaults (ord, chain_id, address, doc) VALUES (?, ?, ?, ?)',
      );
      (input.vaults ?? []).forEach((v, ord) => {
        insertVault.run(ord, v.chainId, v.address, JSON.stringify(v));
      });
      const insertMarket = this.db.prepare(
        'INSERT INTO markets (ord, unique_key, protocol, chain_id, doc) VALUES (?, ?, ?, ?, ?)',
      );
      input.markets.forEach((m, ord) => {
        insertMarket.run(ord, m.uniqueKey, m.protocol, m.chainId, JSON.stringify(m));
      });
      let done = input.markets.length;
      onProgress?.(done, total);
      const insertBlock = this.db.prepare(
        `INSERT INTO position_blocks (block, count, market_index, users, collateral_usd, borrow_usd, supply_usd, health_factor)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const b of encodeBlocks(columns)) {
        insertBlock.run(
          b.block,
          b.count,
          b.marketIndex,
          b.users,
          b.collateralUsd,
          b.borrowUsd,
          b.supplyUsd,
          b.healthFactor,
        );
        done += b.count;
        onProgress?.(done, total);
      }
      const result: DatasetInfo = {
        kind: input.kind,
        profile: input.profile,
        seed: input.seed,
        refreshedAt: Math.floor(input.refreshedAt ?? this.clock.now()),
        marketCount: input.markets.length,
        positionCount: columns.count,
        version: (previous?.version ?? 0) + 1,
        changeSeq: 0,
      };
      this.db
        .prepare(
          'INSERT INTO dataset (id, kind, profile, seed, refreshed_at, market_count, position_count, version) VALUES (1, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          result.kind,
          result.profile,
          result.seed,
          result.refreshedAt,
          result.marketCount,
          result.positionCount,
          result.version,
        );
      return result;
    });
    return written ?? (await this.datasetInfo())!;
  }

  async loadMarkets(): Promise<MarketRecord[]> {
    const rows = this.stmt('SELECT doc FROM markets ORDER BY ord').all() as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as MarketRecord);
  }

  async loadVaults(): Promise<VaultRecord[]> {
    const rows = this.stmt('SELECT doc FROM vaults ORDER BY ord').all() as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as VaultRecord);
  }

  async loadPositions(onBlock: (block: PositionColumns) => void): Promise<void> {
    const stmt = this.stmt(
      'SELECT count, market_index, users, collateral_usd, borrow_usd, supply_usd, health_factor FROM position_blocks ORDER BY block',
    );
    for (const raw of stmt.iterate()) {
      const r = raw as {
        count: number;
        market_index: Uint8Array;
        users: Uint8Array;
        collateral_usd: Uint8Array;
        borrow_usd: Uint8Array;
        supply_usd: Uint8Array;
        health_factor: Uint8Array;
      };
      onBlock(
        decodeBlock({
          count: r.count,
          marketIndex: r.market_index,
          users: r.users,
          collateralUsd: r.collateral_usd,
          borrowUsd: r.borrow_usd,
          supplyUsd: r.supply_usd,
          healthFactor: r.health_factor,
        }),
      );
    }
  }

  /**
   * Inside a change's transaction: the feed's last sequence number, and whether the change was
   * computed from the dataset version stored (`datasetVersion`; undefined: any).
   */
  private changeBase(what: string, datasetVersion?: number): { change_seq: number; current: boolean } {
    const ds = this.db.prepare('SELECT version, change_seq FROM dataset WHERE id = 1').get() as
      | { version: number; change_seq: number }
      | undefined;
    if (!ds) throw new RangeError(`no dataset: ${what} cannot change`);
    return {
      change_seq: ds.change_seq,
      current: datasetVersion === undefined || ds.version === datasetVersion,
    };
  }

  /** Refuses a change naming a market the dataset does not hold. */
  private requireMarkets(keys: readonly string[], what: string): void {
    const known = this.stmt('SELECT 1 FROM markets WHERE unique_key = ?');
    for (const k of keys) if (!known.get(k)) throw new RangeError(`${what} unknown market ${k}`);
  }

  /** One transaction under the write lock: each change checked against its stored version, then upserted. */
  async applyPositionChanges(
    source: string,
    changes: readonly PositionChange[],
    datasetVersion?: number,
  ): Promise<AppliedPositionChanges> {
    checkPositionChanges(changes);
    return this.transaction((): AppliedPositionChanges => {
      const ds = this.changeBase('positions', datasetVersion);
      if (!ds.current) return { applied: [], changeSeq: ds.change_seq };
      this.requireMarkets(
        changes.map((c) => c.marketKey),
        'position of',
      );
      const stored = this.stmt('SELECT seq FROM position_changes WHERE market_key = ? AND user = ?');
      const upsert = this.stmt(
        `INSERT INTO position_changes (market_key, user, source, seq, collateral_usd, borrow_usd, supply_usd, health_factor)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (market_key, user) DO UPDATE SET source = excluded.source, seq = excluded.seq,
           collateral_usd = excluded.collateral_usd, borrow_usd = excluded.borrow_usd,
           supply_usd = excluded.supply_usd, health_factor = excluded.health_factor`,
      );
      let seq = ds.change_seq;
      const applied: PositionChange[] = [];
      for (const c of changes) {
        if (c.basedOn !== undefined) {
          const row = stored.get(c.marketKey, c.user) as { seq: number } | undefined;
          if ((row?.seq ?? 0) !== c.basedOn) continue;
        }
        seq++;
        upsert.run(
          c.marketKey,
          c.user,
          source,
          seq,
          c.collateralUsd,
          c.borrowUsd,
          c.supplyUsd,
          c.healthFactor,
        );
        applied.push(c);
      }
      if (seq !== ds.change_seq) this.stmt('UPDATE dataset SET change_seq = ? WHERE id = 1').run(seq);
      return { applied, changeSeq: seq };
    });
  }

  async positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]> {
    const rows = this.stmt(
      `SELECT ${POSITION_CHANGE_COLUMNS.join(', ')} FROM position_changes WHERE seq > ? ORDER BY seq LIMIT ?`,
    ).all(after, limit) as Record<string, unknown>[];
    return rows.map(storedPositionChange);
  }

  /** One transaction under the write lock: every record's market must be the dataset's. */
  async applyMarketChanges(
    source: string,
    records: readonly MarketRecord[],
    datasetVersion?: number,
  ): Promise<number> {
    checkMarketChanges(records);
    return this.transaction((): number => {
      const ds = this.changeBase('markets', datasetVersion);
      if (!ds.current) return ds.change_seq;
      this.requireMarkets(
        records.map((m) => m.uniqueKey),
        'change of',
      );
      const upsert = this.stmt(
        `INSERT INTO market_changes (market_key, source, seq, doc) VALUES (?, ?, ?, ?)
         ON CONFLICT (market_key) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`,
      );
      let seq = ds.change_seq;
      for (const m of records) upsert.run(m.uniqueKey, source, ++seq, JSON.stringify(m));
      if (seq !== ds.change_seq) this.stmt('UPDATE dataset SET change_seq = ? WHERE id = 1').run(seq);
      return seq;
    });
  }

  async marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]> {
    const rows = this.stmt(
      'SELECT source, seq, doc FROM market_changes WHERE seq > ? ORDER BY seq LIMIT ?',
    ).all(after, limit) as Record<string, unknown>[];
    return rows.map(storedMarketChange);
  }

  async createAccount(account: AccountRecord): Promise<void> {
    this.transaction(() =>
      this.stmt('INSERT INTO accounts (id, name, email, created_at) VALUES (?, ?, ?, ?)').run(
        account.id,
        account.name,
        account.email,
        account.createdAt,
      ),
    );
  }

  async findAccountByName(name: string): Promise<AccountRecord | null> {
    return this.account(this.stmt('SELECT * FROM accounts WHERE name = ?').get(name));
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    return this.account(this.stmt('SELECT * FROM accounts WHERE id = ?').get(id));
  }

  private account(row: unknown): AccountRecord | null {
    if (!row) return null;
    const r = row as { id: string; name: string; email: string | null; created_at: string };
    return { id: r.id, name: r.name, email: r.email, createdAt: r.created_at };
  }

  /** Bumps the keys version and stamps key `id` with the new one, so keyChangesSince() names it. */
  private keyChanged(id: string): void {
    this.stmt("UPDATE counters SET value = value + 1 WHERE name = 'keys_version'").run();
    this.stmt(
      "UPDATE api_keys SET changed_in = (SELECT value FROM counters WHERE name = 'keys_version') WHERE id = ?",
    ).run(id);
  }

  async createKey(key: KeyRecord): Promise<void> {
    this.transaction(() => this.insertKey(key));
  }

  async createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation> {
    // BEGIN IMMEDIATE takes the write lock first: processes sharing the file check one at a time.
    return this.transaction((): KeyCreation => {
      if (
        answer &&
        !this.stmt('SELECT 1 FROM idempotency_keys WHERE id = ? AND token = ? AND status IS NULL').get(
          answer.id,
          answer.token,
        )
      ) {
        return { ok: false, reason: 'CLAIM_LOST' };
      }
      if (limits.maxActive !== null) {
        const { n } = this.stmt(
          'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND tier = ? AND mode = ? AND revoked_at IS NULL',
        ).get(key.accountId, key.tier, key.mode) as { n: number };
        if (n >= limits.maxActive) return { ok: false, reason: 'TOO_MANY_KEYS', active: n };
      }
      if (limits.creations !== null) {
        const { since, max } = limits.creations;
        const { n } = this.stmt(
          'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND mode = ? AND created_at > ?',
        ).get(key.accountId, key.mode, since) as { n: number };
        if (n >= max) {
          // A place frees when the (n - max + 1)-th oldest creation of the window leaves it.
          const { at } = this.stmt(
            'SELECT created_at AS at FROM api_keys WHERE account_id = ? AND mode = ? AND created_at > ? ORDER BY created_at LIMIT 1 OFFSET ?',
          ).get(key.accountId, key.mode, since, n - max) as { at: string };
          return { ok: false, reason: 'TOO_MANY_CREATIONS', created: n, freedBy: at };
        }
      }
      this.insertKey(key);
      if (answer) {
        this.stmt('UPDATE idempotency_keys SET status = ?, response = ?, token = NULL WHERE id = ?').run(
          answer.status,
          answer.response,
          answer.id,
        );
      }
      return { ok: true };
    });
  }

  /** One transaction under the write lock: a few expired records pruned, then the claim (CLAIM_SQL). */
  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    return this.transaction((): IdempotencyClaimResult => {
      this.stmt(
        'DELETE FROM idempotency_keys WHERE id IN (SELECT id FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)',
      ).run(claim.now, IDEMPOTENCY_PRUNE_PER_CLAIM);
      if (this.stmt(SQLITE_CLAIM_SQL).get(...claimParameters(claim))) return { ok: true };
      const row = this.stmt(
        'SELECT fingerprint, locked_until, status, response FROM idempotency_keys WHERE id = ?',
      ).get(claim.id) as unknown as IdempotencyRow;
      return refusedClaim(row, claim);
    });
  }

  async releaseIdempotencyKey(id: string, token: string): Promise<void> {
    this.transaction(() =>
      this.stmt('DELETE FROM idempotency_keys WHERE id = ? AND token = ? AND status IS NULL').run(id, token),
    );
  }

  private insertKey(key: KeyRecord): void {
    this.stmt(
      'INSERT INTO api_keys (id, account_id, hash, prefix, mode, tier, name, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
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
    const row = this.stmt('SELECT * FROM api_keys WHERE hash = ?').get(hash) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = this.stmt('SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const rows = (accountId === undefined
      ? this.stmt('SELECT * FROM api_keys ORDER BY created_at, id').all()
      : this.stmt('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id').all(
          accountId,
        )) as unknown as KeyRow[];
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return this.transaction(() => {
      const r = this.stmt('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(
        at,
        id,
      );
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async setKeyTier(id: string, tier: string): Promise<boolean> {
    return this.transaction(() => {
      const r = this.stmt('UPDATE api_keys SET tier = ? WHERE id = ?').run(tier, id);
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async moveKey(id: string, accountId: string): Promise<boolean> {
    return this.transaction(() => {
      const r = this.stmt('UPDATE api_keys SET account_id = ? WHERE id = ?').run(accountId, id);
      if (r.changes === 0) return false;
      this.keyChanged(id);
      return true;
    });
  }

  async keysVersion(): Promise<number> {
    const row = this.stmt("SELECT value FROM counters WHERE name = 'keys_version'").get() as {
      value: number;
    };
    return row.value;
  }

  async keyChangesSince(since: number): Promise<KeyChanges> {
    // One statement, one snapshot (another process may be writing the file).
    const row = this.stmt(
      `SELECT (SELECT value FROM counters WHERE name = 'keys_version') AS version,
              (SELECT json_group_array(hash) FROM (SELECT hash FROM api_keys WHERE changed_in > ? ORDER BY hash)) AS hashes`,
    ).get(since) as { version: number; hashes: string };
    return { version: row.version, hashes: JSON.parse(row.hashes) as string[] };
  }

  /** One transaction: the batch id claimed, then the counts, unless the id was already there. */
  async recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void> {
    if (events.length === 0) return;
    const upsert = this.stmt(
      `INSERT INTO usage (key_id, day, endpoint, requests, monthly) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, endpoint) DO UPDATE
         SET requests = requests + excluded.requests, monthly = monthly + excluded.monthly`,
    );
    const rows = aggregateUsage(events);
    this.transaction(() => {
      if (!this.claimBatch(batchId)) return;
      for (const r of rows) upsert.run(r.keyId, r.day, r.endpoint, r.requests, r.monthly);
    });
  }

  /**
   * Records usage batch `id` as applied (inside the caller's write transaction); false when it
   * already was. Deletes a few ids past their retention first (USAGE_BATCH_PRUNE_PER_WRITE).
   */
  private claimBatch(id: string): boolean {
    const now = Math.floor(this.clock.now());
    this.stmt(
      'DELETE FROM usage_batches WHERE id IN (SELECT id FROM usage_batches WHERE applied_at < ? LIMIT ?)',
    ).run(now - SQLITE_USAGE_BATCH_RETENTION_MS, USAGE_BATCH_PRUNE_PER_WRITE);
    const r = this.stmt(
      'INSERT INTO usage_batches (id, applied_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING',
    ).run(id, now);
    return r.changes === 1;
  }

  async usageTotals(keyId: string, day: string): Promise<UsageTotals> {
    return this.totalsOf(keyId, day);
  }

  async accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals> {
    return this.accountTotalsOf(scope, day, keyQuotas);
  }

  private accountTotalsOf(scope: AccountScope, day: string, keyQuotas: QuotaCaps): UsageTotals {
    const month = day.slice(0, 7);
    const row = this.stmt(
      `SELECT COALESCE(SUM(MIN(d, ?)), 0) AS day_used, COALESCE(SUM(MIN(m, ?)), 0) AS month_used
         FROM (SELECT SUM(CASE WHEN u.day = ? THEN u.requests ELSE 0 END) AS d, SUM(u.monthly) AS m
                 FROM api_keys k JOIN usage u ON u.key_id = k.id
                WHERE k.account_id = ? AND k.tier = ? AND u.day >= ? AND u.day <= ?
                GROUP BY k.id)`,
    ).get(
      keyQuotas.daily ?? Number.MAX_SAFE_INTEGER,
      keyQuotas.monthly ?? Number.MAX_SAFE_INTEGER,
      day,
      scope.accountId,
      scope.tier,
      `${month}-01`,
      `${month}-31`,
    ) as { day_used: number; month_used: number };
    return { dayUsed: row.day_used, monthUsed: row.month_used };
  }

  /**
   * One transaction under the write lock (BEGIN IMMEDIATE): the totals read and the counts
   * written cannot interleave with another reservation, from this process or another one
   * sharing the file.
   */
  async reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]> {
    if (requests.length === 0) return [];
    const upsert = this.stmt(
      `INSERT INTO usage (key_id, day, endpoint, requests, monthly) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, endpoint) DO UPDATE
         SET requests = requests + excluded.requests, monthly = monthly + excluded.monthly`,
    );
    return this.transaction(() => {
      const fresh = this.claimBatch(batchId);
      const totals = new Map<string, UsageTotals>();
      for (const { keyId, day } of reservationDays(requests)) {
        totals.set(`${keyId}\u0000${day}`, this.totalsOf(keyId, day));
      }
      if (!fresh) return replayedReservations(requests, totals);
      const accountTotals = new Map<string, UsageTotals>();
      for (const a of reservationAccountDays(requests)) {
        accountTotals.set(accountDayId(a.scope, a.day), this.accountTotalsOf(a.scope, a.day, a));
      }
      const { results, events } = decideReservations(requests, totals, accountTotals);
      for (const r of aggregateUsage(events)) upsert.run(r.keyId, r.day, r.endpoint, r.requests, r.monthly);
      return results;
    });
  }

  private totalsOf(keyId: string, day: string): UsageTotals {
    const month = day.slice(0, 7);
    const row = this.stmt(
      `SELECT COALESCE(SUM(CASE WHEN day = ? THEN requests ELSE 0 END), 0) AS day_used,
              COALESCE(SUM(monthly), 0) AS month_used
         FROM usage WHERE key_id = ? AND day >= ? AND day <= ?`,
    ).get(day, keyId, `${month}-01`, `${month}-31`) as { day_used: number; month_used: number };
    return { dayUsed: row.day_used, monthUsed: row.month_used };
  }

  async usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows = this.stmt(
      'SELECT day, endpoint, requests FROM usage WHERE key_id = ? AND day >= ? AND day <= ? ORDER BY day, endpoint',
    ).all(keyId, fromDay, toDay) as unknown as UsageRow[];
    return rows.map((r) => ({ day: r.day, endpoint: r.endpoint, requests: r.requests }));
  }

  // ---- history ------------------------------------------------------------------------------
  // Market keys and (chain, address) pairs are stored once, in history_markets and
  // history_addresses (migration 7); the history tables hold their integer ids. Ids are cached
  // here: a dimension row is never deleted nor changed, so a committed id stays right for the
  // life of the file, whichever process wrote it. An id found or inserted in a transaction is
  // cached only once it commits: an insert rolled back frees its id for another key.

  /** One transaction for the whole batch: atomic, one commit however many rows, ids cached after it. */
  private appendHistory<T>(rows: readonly T[], insert: (row: T, ids: PendingIds) => number): number {
    if (rows.length === 0) return 0;
    const ids: PendingIds = { markets: new Map(), addresses: new Map() };
    const added = this.transaction(() => {
      let n = 0;
      for (const r of rows) n += insert(r, ids);
      return n;
    });
    for (const [k, v] of ids.markets) this.marketIds.set(k, v);
    for (const [k, v] of ids.addresses) this.addressIds.set(k, v);
    return added;
  }

  /** The market of `key` (inside the write transaction), inserted with `chainId` and `protocol` if new. */
  private marketOf(key: string, chainId: number, protocol: string, ids: PendingIds): MarketDimension {
    let m = this.marketIds.get(key) ?? ids.markets.get(key);
    if (m) return m;
    const row = this.stmt('SELECT id, chain_id, protocol FROM history_markets WHERE market_key = ?').get(
      key,
    ) as { id: number; chain_id: number; protocol: string } | undefined;
    m = row
      ? { id: row.id, chainId: row.chain_id, protocol: row.protocol }
      : {
          id: Number(
            this.stmt('INSERT INTO history_markets (market_key, chain_id, protocol) VALUES (?, ?, ?)').run(
              key,
              chainId,
              protocol,
            ).lastInsertRowid,
          ),
          chainId,
          protocol,
        };
    ids.markets.set(key, m);
    return m;
  }

  /** The id of (chainId, address) (inside the write transaction), inserted if new. */
  private addressOf(chainId: number, address: string, ids: PendingIds): number {
    const key = `${chainId}:${address}`;
    let id = this.addressIds.get(key) ?? ids.addresses.get(key);
    if (id !== undefined) return id;
    const row = this.stmt('SELECT id FROM history_addresses WHERE chain_id = ? AND address = ?').get(
      chainId,
      address,
    ) as { id: number } | undefined;
    id =
      row?.id ??
      Number(
        this.stmt('INSERT INTO history_addresses (chain_id, address) VALUES (?, ?)').run(chainId, address)
          .lastInsertRowid,
      );
    ids.addresses.set(key, id);
    return id;
  }

  async appendMarketSnapshots(rows: readonly MarketSnapshot[]): Promise<number> {
    checkMarketSnapshots(rows);
    const insert = this.stmt(
      `INSERT INTO market_snapshots (market_id, granularity, at, supply_usd, borrow_usd, utilization, supply_apy,
         borrow_apy, collateral_price_usd, loan_price_usd, oracle_price, chain_id, protocol)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    return this.appendHistory(rows, (r, ids) => {
      const m = this.marketOf(r.marketKey, r.chainId, r.protocol, ids);
      return Number(
        insert.run(
          m.id,
          r.granularity,
          r.at,
          r.supplyUsd,
          r.borrowUsd,
          r.utilization,
          r.supplyApy,
          r.borrowApy,
          r.collateralPriceUsd,
          r.loanPriceUsd,
          r.oraclePrice,
          r.chainId === m.chainId ? null : r.chainId,
          r.protocol === m.protocol ? null : r.protocol,
        ).changes,
      );
    });
  }

  async appendAssetPrices(rows: readonly AssetPrice[]): Promise<number> {
    checkAssetPrices(rows);
    const insert = this.stmt(
      'INSERT INTO asset_prices (token_id, at, price_usd) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    return this.appendHistory(rows, (r, ids) =>
      Number(insert.run(this.addressOf(r.chainId, r.token, ids), r.at, r.priceUsd).changes),
    );
  }

  async appendOracleRounds(rows: readonly OracleRound[]): Promise<number> {
    checkOracleRounds(rows);
    const insert = this.stmt(
      `INSERT INTO oracle_rounds (feed_id, round_id, answer, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.appendHistory(rows, (r, ids) =>
      Number(insert.run(this.addressOf(r.chainId, r.feed, ids), r.roundId, r.answer, r.updatedAt).changes),
    );
  }

  async appendLiquidations(rows: readonly LiquidationEvent[]): Promise<number> {
    checkLiquidations(rows);
    const insert = this.stmt(
      `INSERT INTO liquidations (chain_id, tx_hash, log_index, at, block, market_id, protocol, borrower, liquidator,
         collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    return this.appendHistory(rows, (r, ids) =>
      Number(
        insert.run(
          r.chainId,
          r.txHash,
          r.logIndex,
          r.at,
          r.block,
          this.marketOf(r.marketKey, r.chainId, r.protocol, ids).id,
          r.protocol,
          r.borrower,
          r.liquidator,
          r.collateralSeized,
          r.collateralSeizedUsd,
          r.debtRepaid,
          r.debtRepaidUsd,
          r.badDebt,
          r.badDebtUsd,
        ).changes,
      ),
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
    const rows = this.stmt(
      `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m JOIN market_snapshots s ON s.market_id = m.id
        WHERE m.market_key = ? AND s.granularity = ? AND s.at >= ? AND s.at < ? ORDER BY s.at LIMIT ?`,
    ).all(marketKey, granularity, from, toMs, limit);
    return rows.map(toSnapshot);
  }

  async latestMarketSnapshot(
    marketKey: string,
    granularity: SnapshotGranularity,
  ): Promise<MarketSnapshot | null> {
    const row = this.stmt(
      `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m JOIN market_snapshots s ON s.market_id = m.id
        WHERE m.market_key = ? AND s.granularity = ? ORDER BY s.at DESC LIMIT 1`,
    ).get(marketKey, granularity);
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
    const rows = this.stmt(
      `SELECT a.chain_id, a.address AS token, p.at, p.price_usd
         FROM history_addresses a JOIN asset_prices p ON p.token_id = a.id
        WHERE a.chain_id = ? AND a.address = ? AND p.at >= ? AND p.at < ? ORDER BY p.at LIMIT ?`,
    ).all(chainId, token.toLowerCase(), from, toMs, limit);
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
    const select = `SELECT a.chain_id, a.address AS feed, r.round_id, r.answer, r.updated_at
        FROM history_addresses a JOIN oracle_rounds r ON r.feed_id = a.id
       WHERE a.chain_id = ? AND a.address = ? AND r.updated_at >= ? AND r.updated_at < ?`;
    const order = 'ORDER BY r.updated_at, r.round_id LIMIT ?';
    // The cursor's time as a range bound (the index seeks to it), its round as the tie-break.
    const rows = after
      ? this.stmt(`${select} AND r.updated_at >= ? AND (r.updated_at > ? OR r.round_id > ?) ${order}`).all(
          chainId,
          feed.toLowerCase(),
          fromMs,
          toMs,
          after.updatedAt,
          after.updatedAt,
          after.roundId,
          limit,
        )
      : this.stmt(`${select} ${order}`).all(chainId, feed.toLowerCase(), fromMs, toMs, limit);
    return rows.map(toOracleRound);
  }

  async dailyMarketTotals(fromMs: number, toMs: number): Promise<DailyMarketTotal[]> {
    checkRead(1, fromMs, toMs);
    // One seek per market of the primary key (market, granularity, at): no scan of other days.
    // CROSS JOIN keeps that order (SQLite would otherwise scan every snapshot: 10x slower).
    const rows = this.stmt(
      `SELECT s.at, COALESCE(s.protocol, m.protocol) AS protocol, COALESCE(s.chain_id, m.chain_id) AS chain_id,
              COUNT(*) AS markets, SUM(s.supply_usd) AS supply_usd, SUM(s.borrow_usd) AS borrow_usd
         FROM history_markets m CROSS JOIN market_snapshots s
           ON s.market_id = m.id AND s.granularity = 'day' AND s.at >= ? AND s.at < ?
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    ).all(fromMs, toMs);
    return rows.map(toDailyMarketTotal);
  }

  async dailyLiquidationTotals(fromMs: number, toMs: number): Promise<DailyLiquidationTotal[]> {
    checkRead(1, fromMs, toMs);
    const rows = this.stmt(
      `SELECT (at / ${DAY_MS}) * ${DAY_MS} AS at, protocol, chain_id, COUNT(*) AS liquidations,
              COUNT(*) FILTER (WHERE collateral_seized_usd IS NULL OR debt_repaid_usd IS NULL OR bad_debt_usd IS NULL)
                AS unpriced_liquidations,
              SUM(debt_repaid_usd) AS debt_repaid_usd, SUM(collateral_seized_usd) AS collateral_seized_usd,
              SUM(bad_debt_usd) AS bad_debt_usd
         FROM liquidations WHERE at >= ? AND at < ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    ).all(fromMs, toMs);
    return rows.map(toDailyLiquidationTotal);
  }

  async liquidations(
    filter: LiquidationFilter,
    limit: number,
    after?: LiquidationCursor,
  ): Promise<LiquidationEvent[]> {
    checkRead(limit, filter.fromMs, filter.toMs);
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    const add = (condition: string, ...values: SQLInputValue[]) => {
      where.push(condition);
      params.push(...values);
    };
    // One index serves the read: that of the most selective filter given (a borrower has few
    // liquidations, a chain many); the others are written `+column` so that the planner, which
    // has no statistics to tell them apart, cannot pick theirs. Without any, the index by time.
    const indexed: [string, SQLInputValue][] = [];
    if (filter.borrower !== undefined) indexed.push(['l.borrower = ?', filter.borrower.toLowerCase()]);
    if (filter.marketKey !== undefined)
      indexed.push(['l.market_id = (SELECT id FROM history_markets WHERE market_key = ?)', filter.marketKey]);
    if (filter.liquidator !== undefined) indexed.push(['l.liquidator = ?', filter.liquidator.toLowerCase()]);
    if (filter.chainId !== undefined) indexed.push(['l.chain_id = ?', filter.chainId]);
    for (const [i, [condition, value]] of indexed.entries())
      add(i === 0 ? condition : `+${condition}`, value);
    if (filter.protocol !== undefined) add('l.protocol = ?', filter.protocol);
    if (filter.fromMs !== undefined) add('l.at >= ?', filter.fromMs);
    if (filter.toMs !== undefined) add('l.at < ?', filter.toMs);
    if (after) {
      // Newest first: older rows, or rows of the cursor's time after it in the tie-break. The
      // `at <= ?` bound lets the index seek to the cursor instead of skipping newer rows.
      add(
        'l.at <= ? AND (l.at < ? OR (l.chain_id, l.tx_hash, l.log_index) > (?, ?, ?))',
        after.at,
        after.at,
        after.chainId,
        after.txHash,
        after.logIndex,
      );
    }
    // (The planner would rather sort the whole table than sort each time's few rows from it.)
    const byTime = indexed.length === 0;
    const rows = this.stmt(
      `SELECT ${LIQUIDATION_COLUMNS} FROM liquidations l ${byTime ? 'INDEXED BY liquidations_at' : ''}
         JOIN history_markets m ON m.id = l.market_id
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY l.at DESC, l.chain_id, l.tx_hash, l.log_index LIMIT ?`,
      { arrays: true },
    ).all(...params, limit) as unknown as unknown[][];
    return rows.map(toLiquidationFromArray);
  }

  async dropOracleRoundsFrom(chainId: number, fromMs: number): Promise<number> {
    checkRead(0, fromMs);
    return this.transaction(() =>
      Number(
        this.stmt(
          'DELETE FROM oracle_rounds WHERE feed_id IN (SELECT id FROM history_addresses WHERE chain_id = ?) AND updated_at >= ?',
        ).run(chainId, fromMs).changes,
      ),
    );
  }

  async dropLiquidationsFrom(chainId: number, block: number): Promise<number> {
    checkRead(0, block);
    return this.transaction(() =>
      Number(
        this.stmt('DELETE FROM liquidations WHERE chain_id = ? AND block >= ?').run(chainId, block).changes,
      ),
    );
  }

  async pruneHistory(before: HistoryCutoffs): Promise<HistoryCounts> {
    // By age, through the primary keys: one seek per market, token or feed (`IN (SELECT id ...)`).
    const deletes: [keyof HistoryCutoffs, string][] = [
      [
        'hourlySnapshots',
        "DELETE FROM market_snapshots WHERE market_id IN (SELECT id FROM history_markets) AND granularity = 'hour' AND at < ?",
      ],
      [
        'dailySnapshots',
        "DELETE FROM market_snapshots WHERE market_id IN (SELECT id FROM history_markets) AND granularity = 'day' AND at < ?",
      ],
      [
        'assetPrices',
        'DELETE FROM asset_prices WHERE token_id IN (SELECT id FROM history_addresses) AND at < ?',
      ],
      [
        'oracleRounds',
        'DELETE FROM oracle_rounds WHERE feed_id IN (SELECT id FROM history_addresses) AND updated_at < ?',
      ],
      ['liquidations', 'DELETE FROM liquidations WHERE at < ?'],
    ];
    for (const [, cutoff] of Object.entries(before)) checkRead(0, cutoff);
    return this.transaction(() => {
      const deleted = noHistory();
      for (const [kind, sql] of deletes) {
        const cutoff = before[kind];
        if (cutoff !== undefined) deleted[kind] = Number(this.stmt(sql).run(cutoff).changes);
      }
      return deleted;
    });
  }

  async historyCounts(): Promise<HistoryCounts> {
    return toCounts(
      this.stmt(
        `SELECT (SELECT count(*) FROM market_snapshots WHERE granularity = 'hour') AS hourly_snapshots,
                (SELECT count(*) FROM market_snapshots WHERE granularity = 'day') AS daily_snapshots,
                (SELECT count(*) FROM asset_prices) AS asset_prices,
                (SELECT count(*) FROM oracle_rounds) AS oracle_rounds,
                (SELECT count(*) FROM liquidations) AS liquidations`,
      ).get()!,
    );
  }

  // ---- rating changes -----------------------------------------------------------------------

  async appendRatingChanges(rows: readonly RatingChange[]): Promise<number> {
    checkRatingChanges(rows);
    if (rows.length === 0) return 0;
    const insert = this.stmt(
      `INSERT INTO rating_changes (${RATING_CHANGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.transaction(() => {
      let added = 0;
      for (const r of rows) {
        added += Number(
          insert.run(
            r.kind,
            r.subject,
            r.chainId,
            r.at,
            r.methodology,
            r.grade,
            r.score,
            r.previousGrade,
            r.previousScore,
            JSON.stringify(r.components),
          ).changes,
        );
      }
      return added;
    });
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
    return this.stmt(
      `SELECT ${RATING_CHANGE_COLUMNS} FROM rating_changes
        WHERE kind = ? AND subject = ? AND at >= ? AND at < ? ORDER BY at LIMIT ?`,
    )
      .all(kind, subject, from, toMs, limit)
      .map(toRatingChange);
  }

  async ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]> {
    checkRead(limit, fromMs, toMs);
    return this.stmt(
      `SELECT ${RATING_CHANGE_COLUMNS} FROM rating_changes WHERE at >= ? AND at < ?
        ORDER BY at, kind, subject LIMIT ?`,
    )
      .all(fromMs, toMs, limit)
      .map(toRatingChange);
  }

  async daySnapshots(dayMs: number): Promise<MarketSnapshot[]> {
    checkRead(1, dayMs, dayMs + 1);
    // One seek per market of the primary key (market, granularity, at), in that order (CROSS JOIN).
    return this.stmt(
      `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m CROSS JOIN market_snapshots s
         ON s.market_id = m.id AND s.granularity = 'day' AND s.at = ?`,
    )
      .all(dayMs)
      .map(toSnapshot);
  }

  async appendResearchReports(rows: readonly ResearchReportRow[]): Promise<number> {
    checkResearchReports(rows);
    if (rows.length === 0) return 0;
    const insert = this.stmt(
      `INSERT INTO research_reports (id, day, protocol, generated_at, body) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.transaction(() => {
      let added = 0;
      for (const r of rows)
        added += Number(insert.run(r.id, r.day, r.protocol, r.generatedAt, r.body).changes);
      return added;
    });
  }

  async researchReports(
    filter: { protocol?: string | undefined; fromMs: number; toMs: number },
    limit: number,
    after?: ResearchReportCursor,
  ): Promise<ResearchReportRow[]> {
    checkRead(limit, filter.fromMs, filter.toMs);
    const where = ['day >= ?', 'day < ?'];
    const params: SQLInputValue[] = [filter.fromMs, filter.toMs];
    if (filter.protocol !== undefined) {
      where.push('protocol = ?');
      params.push(filter.protocol);
    }
    if (after) {
      where.push('(day < ? OR (day = ? AND id < ?))');
      params.push(after.day, after.day, after.id);
    }
    return this.stmt(
      `SELECT id, day, protocol, generated_at, body FROM research_reports WHERE ${where.join(' AND ')}
        ORDER BY day DESC, id DESC LIMIT ?`,
    )
      .all(...params, limit)
      .map(toResearchReport);
  }

  async researchReport(id: string): Promise<ResearchReportRow | null> {
    const row = this.stmt(
      'SELECT id, day, protocol, generated_at, body FROM research_reports WHERE id = ?',
    ).get(id);
    return row ? toResearchReport(row) : null;
  }

  async lastResearchDay(): Promise<number | null> {
    const row = this.stmt('SELECT max(day) AS day FROM research_reports').get() as
      | { day: number | null }
      | undefined;
    return row?.day ?? null;
  }

  async latestRatingChanges(
    kind: RatingSubjectKind,
    limit: number,
    afterSubject = '',
  ): Promise<RatingChange[]> {
    checkRead(limit);
    // The primary key in order from the subject after the cursor; SQLite takes the bare columns
    // of a group from the row holding its max(at).
    return this.stmt(
      `SELECT ${RATING_CHANGE_COLUMNS}, max(at) FROM rating_changes
        WHERE kind = ? AND subject > ? GROUP BY subject ORDER BY subject LIMIT ?`,
    )
      .all(kind, afterSubject, limit)
      .map(toRatingChange);
  }

  // ---- sources ------------------------------------------------------------------------------

  async saveSource(state: SourceState): Promise<void> {
    checkSource(state);
    this.transaction(() =>
      this.stmt(
        `INSERT INTO sources (id, kind, chain_ids, refreshed_at, last_block, consecutive_failures, last_error, updated_at, cursor, head)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, chain_ids = excluded.chain_ids,
         refreshed_at = excluded.refreshed_at, last_block = excluded.last_block,
         consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error,
         updated_at = excluded.updated_at, cursor = excluded.cursor, head = excluded.head`,
      ).run(
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
      ),
    );
  }

  async listSources(): Promise<SourceState[]> {
    return this.stmt('SELECT * FROM sources ORDER BY id').all().map(toSource);
  }

  async claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const taken = this.transaction(() =>
      this.stmt(
        `INSERT INTO ingest_lease (id, holder, expires_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE ingest_lease.holder = excluded.holder OR ingest_lease.expires_at <= ?`,
      ).run(holder, nowMs + leaseMs, nowMs),
    );
    return Number(taken.changes) === 1;
  }

  async releaseIngestion(holder: string): Promise<void> {
    this.transaction(() => this.stmt('UPDATE ingest_lease SET expires_at = 0 WHERE holder = ?').run(holder));
  }
}

// Every call of its ports timed and its failures counted (METRICS_PORT).
measureStoreCalls(SqliteStore, 'sqlite');
