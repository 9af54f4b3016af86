import postgres, { type Sql, type TransactionSql } from 'postgres';
import type { PositionColumns } from '../../domain/position-columns.ts';
import type { MarketRecord } from '../../domain/types.ts';
import { columnsOf, decodeBlock, encodeBlocks } from '../position-blocks.ts';
import { type KeyRow, toKey } from '../rows.ts';
import type {
  AccountRecord,
  DatasetInfo,
  DatasetInput,
  KeyRecord,
  ProgressFn,
  Store,
  UsageEvent,
  UsageRow,
  UsageTotals,
} from '../types.ts';
import { aggregateUsage } from '../usage.ts';
import { copyChunks, copyIn } from './copy.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';

/**
 * First key of the advisory locks this store takes; the second is a hash of the schema, so
 * stores in different schemas of one database (tests) do not wait for each other.
 */
const LOCK_MIGRATE = 0x4c52_4401;
const LOCK_DATASET = 0x4c52_4402;

export interface PostgresStoreOptions {
  /** Connections in the pool; default 10. */
  poolSize?: number;
}

function toAccount(row: Record<string, unknown> | undefined): AccountRecord | null {
  if (!row) return null;
  const r = row as { id: string; name: string; email: string | null; created_at: string };
  return { id: r.id, name: r.name, email: r.email, createdAt: r.created_at };
}

/**
 * The scaled store: PostgreSQL through a pool of postgres.js connections, shared by any number
 * of service instances. Dataset replacement and migrations serialize on advisory locks held
 * for their transaction; usage counts are single-statement upserts, so concurrent writers
 * never lose an increment.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly sql: Sql;

  /** `url`: a postgres:// URL; query parameters not known to postgres.js (e.g. search_path) become session settings. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.sql = postgres(url, {
      max: options.poolSize ?? 10,
      onnotice: () => {},
      connection: { application_name: 'lrds' },
    });
  }

  async migrate(): Promise<void> {
    for (const m of POSTGRES_MIGRATIONS) {
      await this.sql.begin(async (tx) => {
        // Under the lock, so concurrent starts neither race on CREATE TABLE nor apply a version twice.
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_MIGRATE}, hashtext(current_schema()))`);
        await tx.unsafe(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
        );
        const done = await tx`SELECT 1 FROM schema_migrations WHERE version = ${m.version}`;
        if (done.length > 0) return;
        await tx.unsafe(m.sql);
        await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date().toISOString()})`;
      });
    }
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }

  /** True when the database answers `SELECT 1` within `timeoutMs` (default 2000). */
  async ping(timeoutMs = 2000): Promise<boolean> {
    const query = this.sql`SELECT 1`;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => {
        query.cancel();
        resolve(false);
      }, timeoutMs);
    });
    try {
      return await Promise.race([query.then(() => true), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async datasetInfo(): Promise<DatasetInfo | null> {
    const [row] = await this.sql`SELECT * FROM dataset WHERE id = 1`;
    if (!row) return null;
    return {
      kind: row.kind as DatasetInfo['kind'],
      profile: row.profile as string,
      seed: row.seed === null ? null : Number(row.seed),
      refreshedAt: Number(row.refreshed_at),
      marketCount: row.market_count as number,
      positionCount: row.position_count as number,
      version: Number(row.version),
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
    const written = await this.sql.begin(async (tx): Promise<DatasetInfo | null> => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_DATASET}, hashtext(current_schema()))`);
      const [previous] = await tx`SELECT version FROM dataset WHERE id = 1`;
      if (previous && input.onlyIfEmpty) return null;
      // DELETE, not TRUNCATE: TRUNCATE would block every reader until the commit.
      await tx.unsafe('DELETE FROM position_blocks; DELETE FROM markets; DELETE FROM dataset;');
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
        refreshedAt: Date.now(),
        marketCount: input.markets.length,
        positionCount: columns.count,
        version: (previous ? Number(previous.version) : 0) + 1,
      };
      await tx`
        INSERT INTO dataset (id, kind, profile, seed, refreshed_at, market_count, position_count, version)
        VALUES (1, ${info.kind}, ${info.profile}, ${info.seed}, ${info.refreshedAt}, ${info.marketCount},
                ${info.positionCount}, ${info.version})`;
      return info;
    });
    return written ?? (await this.datasetInfo())!;
  }

  async loadMarkets(): Promise<MarketRecord[]> {
    const rows = await this.sql`SELECT doc FROM markets ORDER BY ord`.values();
    return rows.map((r) => JSON.parse(r[0] as string) as MarketRecord);
  }

  /** One query (one snapshot), read one block at a time through a cursor. */
  async loadPositions(onBlock: (block: PositionColumns) => void): Promise<void> {
    const cursor = this.sql`
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
  }

  async createAccount(account: AccountRecord): Promise<void> {
    await this.sql`
      INSERT INTO accounts (id, name, email, created_at)
      VALUES (${account.id}, ${account.name}, ${account.email}, ${account.createdAt})`;
  }

  async findAccountByName(name: string): Promise<AccountRecord | null> {
    const [row] = await this.sql`SELECT * FROM accounts WHERE name = ${name}`;
    return toAccount(row);
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const [row] = await this.sql`SELECT * FROM accounts WHERE id = ${id}`;
    return toAccount(row);
  }

  private async bumpKeysVersion(tx: TransactionSql): Promise<void> {
    await tx`UPDATE counters SET value = value + 1 WHERE name = 'keys_version'`;
  }

  async createKey(key: KeyRecord): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`
        INSERT INTO api_keys (id, account_id, hash, prefix, mode, tier, name, created_at, revoked_at)
        VALUES (${key.id}, ${key.accountId}, ${key.hash}, ${key.prefix}, ${key.mode}, ${key.tier},
                ${key.name}, ${key.createdAt}, ${key.revokedAt})`;
      await this.bumpKeysVersion(tx);
    });
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<KeyRow[]>`SELECT * FROM api_keys WHERE hash = ${hash}`;
    return row ? toKey(row) : null;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<KeyRow[]>`SELECT * FROM api_keys WHERE id = ${id}`;
    return row ? toKey(row) : null;
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const rows =
      accountId === undefined
        ? await this.sql<KeyRow[]>`SELECT * FROM api_keys ORDER BY created_at, id`
        : await this.sql<KeyRow[]>`
            SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const r = await tx`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
      if (r.count === 0) return false;
      await this.bumpKeysVersion(tx);
      return true;
    });
  }

  async setKeyTier(id: string, tier: string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const r = await tx`UPDATE api_keys SET tier = ${tier} WHERE id = ${id}`;
      if (r.count === 0) return false;
      await this.bumpKeysVersion(tx);
      return true;
    });
  }

  async keysVersion(): Promise<number> {
    const [row] = await this.sql`SELECT value FROM counters WHERE name = 'keys_version'`;
    return Number(row?.value);
  }

  /**
   * One upsert statement for the whole batch (atomic), after folding repeated
   * (key, day, endpoint) events into one increment each. Rows go in a fixed order so two
   * concurrent batches touching the same rows cannot deadlock.
   */
  async recordUsage(events: readonly UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rows = aggregateUsage(events).sort(
      (a, b) => compare(a.keyId, b.keyId) || compare(a.day, b.day) || compare(a.endpoint, b.endpoint),
    );
    await this.sql`
      INSERT INTO usage (key_id, day, endpoint, requests, monthly)
      SELECT * FROM unnest(
        ${rows.map((r) => r.keyId)}::text[],
        ${rows.map((r) => r.day)}::text[],
        ${rows.map((r) => r.endpoint)}::text[],
        ${rows.map((r) => r.requests)}::bigint[],
        ${rows.map((r) => r.monthly)}::bigint[])
      ON CONFLICT (key_id, day, endpoint) DO UPDATE
        SET requests = usage.requests + excluded.requests, monthly = usage.monthly + excluded.monthly`;
  }

  async usageTotals(keyId: string, day: string): Promise<UsageTotals> {
    const month = day.slice(0, 7);
    const [row] = await this.sql`
      SELECT COALESCE(SUM(CASE WHEN day = ${day} THEN requests ELSE 0 END), 0)::bigint AS day_used,
             COALESCE(SUM(monthly), 0)::bigint AS month_used
        FROM usage WHERE key_id = ${keyId} AND day >= ${`${month}-01`} AND day <= ${`${month}-31`}`;
    return { dayUsed: Number(row?.day_used), monthUsed: Number(row?.month_used) };
  }

  async usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows = await this.sql`
      SELECT day, endpoint, requests FROM usage
       WHERE key_id = ${keyId} AND day >= ${fromDay} AND day <= ${toDay}
       ORDER BY day, endpoint`;
    return rows.map((r) => ({
      day: r.day as string,
      endpoint: r.endpoint as string,
      requests: Number(r.requests),
    }));
  }
}

/** Byte-order comparison, the order of COLLATE "C" keys. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
