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
import type { SqliteConnection } from './connection.ts';

/** The dataset, its markets, vaults and positions, and their change feed, in the SQLite file. */
export class SqliteMarketData implements MarketDataStore {
  readonly #db: SqliteConnection;

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  async datasetInfo(): Promise<DatasetInfo | null> {
    const row = this.#db.stmt('SELECT * FROM dataset WHERE id = 1').get() as
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
    const written = this.#db.transaction((): DatasetInfo | null => {
      const previous = this.#db.sqlite.prepare('SELECT version FROM dataset WHERE id = 1').get() as
        | { version: number }
        | undefined;
      if (previous && input.onlyIfEmpty) return null;
      this.#db.sqlite.exec(
        'DELETE FROM position_blocks; DELETE FROM position_changes; DELETE FROM market_changes; DELETE FROM vault_changes; DELETE FROM vaults; DELETE FROM markets; DELETE FROM dataset;',
      );
      const insertVault = this.#db.sqlite.prepare(
        'INSERT INTO vaults (ord, chain_id, address, doc) VALUES (?, ?, ?, ?)',
      );
      (input.vaults ?? []).forEach((v, ord) => {
        insertVault.run(ord, v.chainId, v.address, JSON.stringify(v));
      });
      const insertMarket = this.#db.sqlite.prepare(
        'INSERT INTO markets (ord, unique_key, protocol, chain_id, doc) VALUES (?, ?, ?, ?, ?)',
      );
      input.markets.forEach((m, ord) => {
        insertMarket.run(ord, m.uniqueKey, m.protocol, m.chainId, JSON.stringify(m));
      });
      let done = input.markets.length;
      onProgress?.(done, total);
      const insertBlock = this.#db.sqlite.prepare(
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
        refreshedAt: Math.floor(input.refreshedAt ?? this.#db.clock.now()),
        marketCount: input.markets.length,
        positionCount: columns.count,
        version: (previous?.version ?? 0) + 1,
        changeSeq: 0,
      };
      this.#db.sqlite
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
    return written ?? must(await this.datasetInfo(), 'the dataset');
  }

  async loadMarkets(keys?: readonly string[]): Promise<MarketRecord[]> {
    const rows = (
      keys === undefined
        ? this.#db.stmt('SELECT doc FROM markets ORDER BY ord').all()
        : this.#db
            .stmt('SELECT doc FROM markets WHERE unique_key IN (SELECT value FROM json_each(?)) ORDER BY ord')
            .all(JSON.stringify(keys))
    ) as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as MarketRecord);
  }

  async loadVaults(): Promise<VaultRecord[]> {
    const rows = this.#db.stmt('SELECT doc FROM vaults ORDER BY ord').all() as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as VaultRecord);
  }

  async loadPositions(onBlock: (block: PositionColumns) => void): Promise<void> {
    const stmt = this.#db.stmt(
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
    const ds = this.#db.sqlite.prepare('SELECT version, change_seq FROM dataset WHERE id = 1').get() as
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
    const known = this.#db.stmt('SELECT 1 FROM markets WHERE unique_key = ?');
    for (const k of keys) if (!known.get(k)) throw new RangeError(`${what} unknown market ${k}`);
  }

  /** One transaction under the write lock: each change checked against its stored version, then upserted. */
  async applyPositionChanges(
    source: string,
    changes: readonly PositionChange[],
    datasetVersion?: number,
  ): Promise<AppliedPositionChanges> {
    checkPositionChanges(changes);
    return this.#db.transaction((): AppliedPositionChanges => {
      const ds = this.changeBase('positions', datasetVersion);
      if (!ds.current) return { applied: [], changeSeq: ds.change_seq };
      const stored = this.#db.stmt('SELECT seq FROM position_changes WHERE market_key = ? AND user = ?');
      const applied = changes.filter((c) => {
        if (c.basedOn === undefined) return true;
        const row = stored.get(c.marketKey, c.user) as { seq: number } | undefined;
        return (row?.seq ?? 0) === c.basedOn;
      });
      const seq = this.upsertPositions(source, applied, ds.change_seq);
      this.setChangeSeq(ds.change_seq, seq);
      return { applied, changeSeq: seq };
    });
  }

  /** Inside a transaction: the positions upserted from sequence number `seq` on; returns the last one. */
  private upsertPositions(source: string, changes: readonly PositionRecord[], seq: number): number {
    this.requireMarkets(
      changes.map((c) => c.marketKey),
      'position of',
    );
    const upsert = this.#db.stmt(
      `INSERT INTO position_changes (market_key, user, source, seq, collateral_usd, borrow_usd, supply_usd, health_factor)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (market_key, user) DO UPDATE SET source = excluded.source, seq = excluded.seq,
         collateral_usd = excluded.collateral_usd, borrow_usd = excluded.borrow_usd,
         supply_usd = excluded.supply_usd, health_factor = excluded.health_factor`,
    );
    for (const c of changes)
      upsert.run(
        c.marketKey,
        c.user,
        source,
        ++seq,
        c.collateralUsd,
        c.borrowUsd,
        c.supplyUsd,
        c.healthFactor,
      );
    return seq;
  }

  /** Inside a transaction: the markets upserted from sequence number `seq` on; returns the last one. */
  private upsertMarkets(source: string, records: readonly MarketRecord[], seq: number): number {
    this.requireMarkets(
      records.map((m) => m.uniqueKey),
      'change of',
    );
    const upsert = this.#db.stmt(
      `INSERT INTO market_changes (market_key, source, seq, doc) VALUES (?, ?, ?, ?)
       ON CONFLICT (market_key) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`,
    );
    for (const m of records) upsert.run(m.uniqueKey, source, ++seq, JSON.stringify(m));
    return seq;
  }

  /** Inside a transaction: markets and vaults appended to the dataset's (none it holds). */
  private addRecords(added: NonNullable<DatasetChanges['added']>): void {
    if (added.markets.length > 0) {
      const held = this.#db.stmt('SELECT 1 FROM markets WHERE unique_key = ?');
      for (const m of added.markets)
        if (held.get(m.uniqueKey)) throw new RangeError(`market ${m.uniqueKey} added twice`);
      const next = this.#db.stmt('SELECT COALESCE(MAX(ord), -1) + 1 AS n FROM markets').get() as {
        n: number;
      };
      const insert = this.#db.stmt(
        'INSERT INTO markets (ord, unique_key, protocol, chain_id, doc) VALUES (?, ?, ?, ?, ?)',
      );
      added.markets.forEach((m, i) => {
        insert.run(next.n + i, m.uniqueKey, m.protocol, m.chainId, JSON.stringify(m));
      });
      this.#db
        .stmt('UPDATE dataset SET market_count = market_count + ? WHERE id = 1')
        .run(added.markets.length);
    }
    if (added.vaults.length > 0) {
      const held = this.#db.stmt('SELECT 1 FROM vaults WHERE chain_id = ? AND address = ?');
      for (const v of added.vaults)
        if (held.get(v.chainId, v.address))
          throw new RangeError(`vault ${v.chainId}:${v.address} added twice`);
      const next = this.#db.stmt('SELECT COALESCE(MAX(ord), -1) + 1 AS n FROM vaults').get() as { n: number };
      const insert = this.#db.stmt('INSERT INTO vaults (ord, chain_id, address, doc) VALUES (?, ?, ?, ?)');
      added.vaults.forEach((v, i) => {
        insert.run(next.n + i, v.chainId, v.address, JSON.stringify(v));
      });
    }
  }

  /** Inside a transaction: the vaults upserted from sequence number `seq` on; returns the last one. */
  private upsertVaults(source: string, records: readonly VaultRecord[], seq: number): number {
    const known = this.#db.stmt('SELECT 1 FROM vaults WHERE chain_id = ? AND address = ?');
    for (const v of records)
      if (!known.get(v.chainId, v.address))
        throw new RangeError(`change of unknown vault ${v.chainId}:${v.address}`);
    const upsert = this.#db.stmt(
      `INSERT INTO vault_changes (chain_id, address, source, seq, doc) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (chain_id, address) DO UPDATE SET source = excluded.source, seq = excluded.seq, doc = excluded.doc`,
    );
    for (const v of records) upsert.run(v.chainId, v.address, source, ++seq, JSON.stringify(v));
    return seq;
  }

  private setChangeSeq(before: number, seq: number): void {
    if (seq !== before) this.#db.stmt('UPDATE dataset SET change_seq = ? WHERE id = 1').run(seq);
  }

  async positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]> {
    const rows = this.#db
      .stmt(
        `SELECT ${POSITION_CHANGE_COLUMNS.join(', ')} FROM position_changes WHERE seq > ? ORDER BY seq LIMIT ?`,
      )
      .all(after, limit) as Record<string, unknown>[];
    return rows.map(storedPositionChange);
  }

  /** One transaction under the write lock: every record's market must be the dataset's. */
  async applyMarketChanges(
    source: string,
    records: readonly MarketRecord[],
    datasetVersion?: number,
  ): Promise<number> {
    checkMarketChanges(records);
    return this.#db.transaction((): number => {
      const ds = this.changeBase('markets', datasetVersion);
      if (!ds.current) return ds.change_seq;
      const seq = this.upsertMarkets(source, records, ds.change_seq);
      this.setChangeSeq(ds.change_seq, seq);
      return seq;
    });
  }

  async marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]> {
    const rows = this.#db
      .stmt('SELECT source, seq, doc FROM market_changes WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(after, limit) as Record<string, unknown>[];
    return rows.map(storedMarketChange);
  }

  /** One transaction under the write lock: markets, positions, vaults, then the refresh time. */
  async applyChanges(
    source: string,
    changes: DatasetChanges,
    basedOn: { version: number; changeSeq: number },
  ): Promise<number | null> {
    checkDatasetChanges(changes);
    return this.#db.transaction((): number | null => {
      const ds = this.changeBase('the dataset', basedOn.version);
      if (!ds.current || ds.change_seq !== basedOn.changeSeq) return null;
      const added = changes.added ?? { markets: [], vaults: [] };
      this.addRecords(added);
      let seq = this.upsertMarkets(source, [...added.markets, ...changes.markets], ds.change_seq);
      seq = this.upsertPositions(source, changes.positions, seq);
      seq = this.upsertVaults(source, [...added.vaults, ...changes.vaults], seq);
      this.#db
        .stmt('UPDATE dataset SET change_seq = ?, refreshed_at = ? WHERE id = 1')
        .run(seq, Math.floor(changes.refreshedAt));
      return seq;
    });
  }

  async vaultChangesSince(after: number, limit: number): Promise<StoredVaultChange[]> {
    const rows = this.#db
      .stmt('SELECT source, seq, doc FROM vault_changes WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(after, limit) as Record<string, unknown>[];
    return rows.map(storedVaultChange);
  }
}
