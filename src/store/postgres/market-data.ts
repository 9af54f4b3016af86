import type { TransactionSql } from 'postgres';
import { must } from '../../domain/must.ts';
import type { PositionColumns } from '../../domain/position-columns.ts';
import type {
  AppliedPositionChanges,
  DatasetChanges,
  DatasetInfo,
  DatasetInput,
  PositionChange,
  StoredMarketChange,
  StoredPositionChange,
  StoredVaultChange,
} from '../../domain/records/dataset.ts';
import type { MarketRecord, PositionRecord, VaultRecord } from '../../domain/types.ts';
import type { MarketDataStore, ProgressFn } from '../ports/market-data.ts';
import { columnsOf, decodeBlock, encodeBlocks } from '../position-blocks.ts';
import {
  checkDatasetChanges,
  checkMarketChanges,
  checkPositionChanges,
  POSITION_CHANGE_COLUMNS,
  storedMarketChange,
  storedPositionChange,
  storedVaultChange,
} from '../position-changes.ts';
import type { PostgresConnection } from './connection.ts';
import { copyChunks, copyIn } from './copy.ts';
import { LOCK_DATASET } from './locks.ts';

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

/** The dataset, its markets, vaults and positions, and their change feed, in PostgreSQL. */
export class PostgresMarketData implements MarketDataStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  async datasetInfo(): Promise<DatasetInfo | null> {
    const [row] = await this.#db.serve((sql) => sql`SELECT * FROM dataset WHERE id = 1`);
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
    const written = await this.#db.bulk((sql) =>
      sql.begin(async (tx): Promise<DatasetInfo | null> => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_DATASET}, hashtext(current_schema()))`);
        const [previous] = await tx`SELECT version FROM dataset WHERE id = 1`;
        if (previous && input.onlyIfEmpty) return null;
        // DELETE, not TRUNCATE: TRUNCATE would block every reader until the commit.
        await tx.unsafe(
          'DELETE FROM position_blocks; DELETE FROM position_changes; DELETE FROM market_changes; DELETE FROM vault_changes; DELETE FROM vaults; DELETE FROM markets; DELETE FROM dataset;',
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
          refreshedAt: Math.floor(input.refreshedAt ?? this.#db.clock.now()),
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
    return written ?? must(await this.datasetInfo(), 'the dataset');
  }

  async loadMarkets(keys?: readonly string[]): Promise<MarketRecord[]> {
    const rows = await this.#db.bulk((sql) =>
      keys === undefined
        ? sql`SELECT doc FROM markets ORDER BY ord`.values()
        : sql`SELECT doc FROM markets WHERE unique_key = ANY(${keys as string[]}::text[]) ORDER BY ord`.values(),
    );
    return rows.map((r) => JSON.parse(r[0] as string) as MarketRecord);
  }

  async loadVaults(): Promise<VaultRecord[]> {
    const rows = await this.#db.bulk((sql) => sql`SELECT doc FROM vaults ORDER BY ord`.values());
    return rows.map((r) => JSON.parse(r[0] as string) as VaultRecord);
  }

  /** One query (one snapshot), read one block at a time through a cursor. */
  async loadPositions(onBlock: (block: PositionColumns) => void): Promise<void> {
    await this.#db.bulk(async (sql) => {
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
    return this.#db.serve((sql) =>
      sql.begin(async (tx): Promise<AppliedPositionChanges> => {
        const ds = await changeBase(tx, 'positions', datasetVersion);
        if (!ds.current) return { applied: [], changeSeq: ds.seq };
        const stored = new Map<string, number>();
        const conditional = changes.filter((c) => c.basedOn !== undefined);
        if (conditional.length > 0) {
          const rows = await tx`
            SELECT c.market_key, c."user", c.seq FROM position_changes c
              JOIN unnest(${conditional.map((c) => c.marketKey)}::text[], ${conditional.map((c) => c.user)}::text[])
                AS w(market_key, "user") ON c.market_key = w.market_key AND c."user" = w."user"`;
          for (const r of rows) stored.set(`${r.market_key}\n${r.user}`, Number(r.seq));
        }
        const applied = changes.filter(
          (c) => c.basedOn === undefined || (stored.get(`${c.marketKey}\n${c.user}`) ?? 0) === c.basedOn,
        );
        const seq = await upsertPositions(tx, source, applied, ds.seq);
        if (seq !== ds.seq) await tx`UPDATE dataset SET change_seq = ${seq} WHERE id = 1`;
        return { applied, changeSeq: seq };
      }),
    );
  }

  async positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]> {
    const rows = await this.#db.serve(
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
    return this.#db.serve((sql) =>
      sql.begin(async (tx): Promise<number> => {
        const ds = await changeBase(tx, 'markets', datasetVersion);
        if (!ds.current) return ds.seq;
        const seq = await upsertMarkets(tx, source, records, ds.seq);
        if (seq !== ds.seq) await tx`UPDATE dataset SET change_seq = ${seq} WHERE id = 1`;
        return seq;
      }),
    );
  }

  async marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]> {
    const rows = await this.#db.serve(
      (sql) =>
        sql`SELECT source, seq, doc FROM market_changes WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(storedMarketChange);
  }

  /** One transaction holding the dataset row's lock: markets, positions, vaults, then the refresh time. */
  async applyChanges(
    source: string,
    changes: DatasetChanges,
    basedOn: { version: number; changeSeq: number },
  ): Promise<number | null> {
    checkDatasetChanges(changes);
    return this.#db.serve((sql) =>
      sql.begin(async (tx): Promise<number | null> => {
        const ds = await changeBase(tx, 'the dataset', basedOn.version);
        if (!ds.current || ds.seq !== basedOn.changeSeq) return null;
        const added = changes.added ?? { markets: [], vaults: [] };
        await addRecords(tx, added);
        let seq = await upsertMarkets(tx, source, [...added.markets, ...changes.markets], ds.seq);
        seq = await upsertPositions(tx, source, changes.positions, seq);
        seq = await upsertVaults(tx, source, [...added.vaults, ...changes.vaults], seq);
        await tx`UPDATE dataset SET change_seq = ${seq}, refreshed_at = ${Math.floor(changes.refreshedAt)} WHERE id = 1`;
        return seq;
      }),
    );
  }

  async vaultChangesSince(after: number, limit: number): Promise<StoredVaultChange[]> {
    const rows = await this.#db.serve(
      (sql) =>
        sql`SELECT source, seq, doc FROM vault_changes WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(storedVaultChange);
  }
}

/** Inside a transaction: markets and vaults appended to the dataset's (none it holds). */
async function addRecords(tx: TransactionSql, added: NonNullable<DatasetChanges['added']>): Promise<void> {
  const { markets, vaults } = added;
  if (markets.length > 0) {
    const keys = markets.map((m) => m.uniqueKey);
    const [held] = await tx`SELECT unique_key FROM markets WHERE unique_key = ANY(${keys}::text[]) LIMIT 1`;
    if (held) throw new RangeError(`market ${held.unique_key} added twice`);
    await tx`
      INSERT INTO markets (ord, unique_key, protocol, chain_id, doc)
      SELECT (SELECT COALESCE(MAX(ord), -1) FROM markets) + w.n, w.unique_key, w.protocol, w.chain_id, w.doc
      FROM unnest(${keys}::text[], ${markets.map((m) => m.protocol)}::text[],
        ${markets.map((m) => m.chainId)}::bigint[], ${markets.map((m) => JSON.stringify(m))}::text[])
        WITH ORDINALITY AS w(unique_key, protocol, chain_id, doc, n)`;
    await tx`UPDATE dataset SET market_count = market_count + ${markets.length} WHERE id = 1`;
  }
  if (vaults.length > 0) {
    const [held] = await tx`
      SELECT v.chain_id, v.address FROM vaults v
        JOIN unnest(${vaults.map((r) => r.chainId)}::bigint[], ${vaults.map((r) => r.address)}::text[])
          AS w(chain_id, address) ON v.chain_id = w.chain_id AND v.address = w.address LIMIT 1`;
    if (held) throw new RangeError(`vault ${held.chain_id}:${held.address} added twice`);
    await tx`
      INSERT INTO vaults (ord, chain_id, address, doc)
      SELECT (SELECT COALESCE(MAX(ord), -1) FROM vaults) + w.n, w.chain_id, w.address, w.doc
      FROM unnest(${vaults.map((r) => r.chainId)}::bigint[], ${vaults.map((r) => r.address)}::text[],
        ${vaults.map((r) => JSON.stringify(r))}::text[]) WITH ORDINALITY AS w(chain_id, address, doc, n)`;
  }
}

/** Inside a transaction: the positions upserted from sequence number `seq` on; returns the last one. */
async function upsertPositions(
  tx: TransactionSql,
  source: string,
  changes: readonly PositionRecord[],
  seq: number,
): Promise<number> {
  if (changes.length === 0) return seq;
  await requireMarkets(
    tx,
    changes.map((c) => c.marketKey),
    'position of',
  );
  await tx`
    INSERT INTO position_changes (market_key, "user", source, seq, collateral_usd, borrow_usd, supply_usd, health_factor)
    SELECT w.market_key, w."user", ${source}, ${seq} + w.n, w.c, w.b, w.s, w.h FROM unnest(
      ${changes.map((c) => c.marketKey)}::text[],
      ${changes.map((c) => c.user)}::text[],
      ${changes.map((c) => c.collateralUsd)}::float8[],
      ${changes.map((c) => c.borrowUsd)}::float8[],
      ${changes.map((c) => c.supplyUsd)}::float8[],
      ${changes.map((c) => c.healthFactor)}::float8[]) WITH ORDINALITY AS w(market_key, "user", c, b, s, h, n)
    ON CONFLICT (market_key, "user") DO UPDATE SET source = excluded.source, seq = excluded.seq,
      collateral_usd = excluded.collateral_usd, borrow_usd = excluded.borrow_usd,
      supply_usd = excluded.supply_usd, health_factor = excluded.health_factor`;
  return seq + changes.length;
}

/** Inside a transaction: the markets upserted from sequence number `seq` on; returns the last one. */
async function upsertMarkets(
  tx: TransactionSql,
  source: string,
  records: readonly MarketRecord[],
  seq: number,
): Promise<number> {
  if (records.length === 0) return seq;
  const keys = records.map((m) => m.uniqueKey);
  await requireMarkets(tx, keys, 'change of');
  await tx`
    INSERT INTO market_changes (market_key, source, seq, doc)
    SELECT w.market_key, ${source}, ${seq} + w.n, w.doc FROM unnest(
      ${keys}::text[], ${records.map((m) => JSON.stringify(m))}::text[]) WITH ORDINALITY AS w(market_key, doc, n)
    ON CONFLICT (market_key) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`;
  return seq + records.length;
}

/** Inside a transaction: the vaults upserted from sequence number `seq` on; returns the last one. */
async function upsertVaults(
  tx: TransactionSql,
  source: string,
  records: readonly VaultRecord[],
  seq: number,
): Promise<number> {
  if (records.length === 0) return seq;
  const known = await tx`
    SELECT v.chain_id, v.address FROM vaults v
      JOIN unnest(${records.map((r) => r.chainId)}::bigint[], ${records.map((r) => r.address)}::text[])
        AS w(chain_id, address) ON v.chain_id = w.chain_id AND v.address = w.address`;
  const have = new Set(known.map((r) => `${r.chain_id}:${r.address}`));
  const unknown = records.find((r) => !have.has(`${r.chainId}:${r.address}`));
  if (unknown) throw new RangeError(`change of unknown vault ${unknown.chainId}:${unknown.address}`);
  await tx`
    INSERT INTO vault_changes (chain_id, address, source, seq, doc)
    SELECT w.chain_id, w.address, ${source}, ${seq} + w.n, w.doc FROM unnest(
      ${records.map((r) => r.chainId)}::bigint[], ${records.map((r) => r.address)}::text[],
      ${records.map((r) => JSON.stringify(r))}::text[]) WITH ORDINALITY AS w(chain_id, address, doc, n)
    ON CONFLICT (chain_id, address) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`;
  return seq + records.length;
}
