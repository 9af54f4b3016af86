import type { SQLInputValue } from 'node:sqlite';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { must } from '../../domain/must.ts';
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
import {
  checkAssetPrices,
  checkLiquidations,
  checkMarketSnapshots,
  checkOracleRounds,
  checkRatingChanges,
  checkRead,
  checkResearchReports,
  DAY_MS,
  LIQUIDATION_COLUMNS,
  noHistory,
  RATING_CHANGE_COLUMNS,
  toAssetPrice,
  toCounts,
  toDailyLiquidationTotal,
  toDailyMarketTotal,
  toLiquidationFromArray,
  toOracleRound,
  toRatingChange,
  toResearchReport,
  toSnapshot,
} from '../history.ts';
import type { HistoryStore } from '../ports/history.ts';
import type { SqliteConnection } from './connection.ts';

/**
 * Market snapshots are stored compactly: a figure of fixed precision (USD amounts in cents,
 * fractions to 1e-8, as the sandbox history writes them) is stored as that integer scaled (SQLite
 * writes an integral REAL in 1 to 6 bytes instead of 8), when scaling it back gives exactly the
 * same number; `scaled` has one bit per column so scaled. Any other value is stored as it is.
 * About 14 bytes less per snapshot, a sixth of the table.
 */
const SCALED_COLUMNS = [
  { column: 'supply_usd', field: 'supplyUsd', scale: 100 },
  { column: 'borrow_usd', field: 'borrowUsd', scale: 100 },
  { column: 'utilization', field: 'utilization', scale: 1e8 },
  { column: 'supply_apy', field: 'supplyApy', scale: 1e8 },
  { column: 'borrow_apy', field: 'borrowApy', scale: 1e8 },
] as const;

/** The scaled integer of `value` when it gives it back exactly, else null. */
function scaledOf(value: number, scale: number): number | null {
  const n = Math.round(value * scale);
  return Number.isSafeInteger(n) && n / scale === value ? n : null;
}

/** A snapshot's columns as toSnapshot() reads them, scaled columns given back (`m`: history_markets, `s`: market_snapshots). */
const SNAPSHOT_COLUMNS = `m.market_key, coalesce(s.chain_id, m.chain_id) AS chain_id,
  coalesce(s.protocol, m.protocol) AS protocol, s.at, s.granularity, ${SCALED_COLUMNS.map(
    ({ column }) => `${unscaled(column)} AS ${column}`,
  ).join(', ')}, s.collateral_price_usd, s.loan_price_usd, s.oracle_price`;

/** SQL giving back a scaled column of market_snapshots `s` (the same division as scaledOf's check). */
function unscaled(column: (typeof SCALED_COLUMNS)[number]['column']): string {
  const k = SCALED_COLUMNS.findIndex((c) => c.column === column);
  const { scale } = must(SCALED_COLUMNS[k], `scaled column ${column}`);
  return `CASE WHEN s.scaled & ${1 << k} THEN s.${column} / ${scale.toFixed(1)} ELSE s.${column} END`;
}

/**
 * A research report's body is stored deflated (a BLOB, a third of the text); rows written before
 * hold the text itself.
 */
function toStoredReport(row: Record<string, unknown>): ResearchReportRow {
  const { body } = row;
  return toResearchReport({
    ...row,
    body: body instanceof Uint8Array ? inflateRawSync(body).toString() : body,
  });
}

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

/**
 * The append-only history in the SQLite file. Market keys and (chain, address) pairs are
 * stored once, in history_markets and history_addresses (migration 7); the history tables hold
 * their integer ids. Ids are cached here: a dimension row is never deleted nor changed, so a
 * committed id stays right for the life of the file, whichever process wrote it. An id found
 * or inserted in a transaction is cached only once it commits: an insert rolled back frees its
 * id for another key.
 */
/** Markets per read of a day across markets: a read takes a few milliseconds. */
const MARKETS_PER_READ = 500;

export class SqliteHistory implements HistoryStore {
  readonly #db: SqliteConnection;
  /** Committed ids of history_markets by market key, and of history_addresses by `chainId:address`. */
  private readonly marketIds = new Map<string, MarketDimension>();
  private readonly addressIds = new Map<string, number>();

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  /** Forgets the dimension ids cached (a migration may renumber them). */
  forgetIds(): void {
    this.marketIds.clear();
    this.addressIds.clear();
  }

  /** One transaction for the whole batch: atomic, one commit however many rows, ids cached after it. */
  private appendHistory<T>(rows: readonly T[], insert: (row: T, ids: PendingIds) => number): number {
    if (rows.length === 0) return 0;
    const ids: PendingIds = { markets: new Map(), addresses: new Map() };
    const added = this.#db.transaction(() => {
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
    const row = this.#db
      .stmt('SELECT id, chain_id, protocol FROM history_markets WHERE market_key = ?')
      .get(key) as { id: number; chain_id: number; protocol: string } | undefined;
    m = row
      ? { id: row.id, chainId: row.chain_id, protocol: row.protocol }
      : {
          id: Number(
            this.#db
              .stmt('INSERT INTO history_markets (market_key, chain_id, protocol) VALUES (?, ?, ?)')
              .run(key, chainId, protocol).lastInsertRowid,
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
    const row = this.#db
      .stmt('SELECT id FROM history_addresses WHERE chain_id = ? AND address = ?')
      .get(chainId, address) as { id: number } | undefined;
    id =
      row?.id ??
      Number(
        this.#db.stmt('INSERT INTO history_addresses (chain_id, address) VALUES (?, ?)').run(chainId, address)
          .lastInsertRowid,
      );
    ids.addresses.set(key, id);
    return id;
  }

  async appendMarketSnapshots(rows: readonly MarketSnapshot[]): Promise<number> {
    checkMarketSnapshots(rows);
    const insert = this.#db.stmt(
      `INSERT INTO market_snapshots (market_id, granularity, at, supply_usd, borrow_usd, utilization, supply_apy,
         borrow_apy, collateral_price_usd, loan_price_usd, oracle_price, chain_id, protocol, scaled)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    const values: number[] = [0, 0, 0, 0, 0];
    return this.appendHistory(rows, (r, ids) => {
      const m = this.marketOf(r.marketKey, r.chainId, r.protocol, ids);
      let scaled = 0;
      SCALED_COLUMNS.forEach(({ field, scale }, k) => {
        const n = scaledOf(r[field], scale);
        values[k] = n ?? r[field];
        if (n !== null) scaled |= 1 << k;
      });
      return Number(
        insert.run(
          m.id,
          r.granularity,
          r.at,
          ...values,
          r.collateralPriceUsd,
          r.loanPriceUsd,
          r.oraclePrice,
          r.chainId === m.chainId ? null : r.chainId,
          r.protocol === m.protocol ? null : r.protocol,
          scaled,
        ).changes,
      );
    });
  }

  async appendAssetPrices(rows: readonly AssetPrice[]): Promise<number> {
    checkAssetPrices(rows);
    const insert = this.#db.stmt(
      'INSERT INTO asset_prices (token_id, at, price_usd) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    return this.appendHistory(rows, (r, ids) =>
      Number(insert.run(this.addressOf(r.chainId, r.token, ids), r.at, r.priceUsd).changes),
    );
  }

  async appendOracleRounds(rows: readonly OracleRound[]): Promise<number> {
    checkOracleRounds(rows);
    const insert = this.#db.stmt(
      `INSERT INTO oracle_rounds (feed_id, round_id, answer, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.appendHistory(rows, (r, ids) =>
      Number(insert.run(this.addressOf(r.chainId, r.feed, ids), r.roundId, r.answer, r.updatedAt).changes),
    );
  }

  async appendLiquidations(rows: readonly LiquidationEvent[]): Promise<number> {
    checkLiquidations(rows);
    const insert = this.#db.stmt(
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
    const rows = this.#db
      .stmt(
        `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m JOIN market_snapshots s ON s.market_id = m.id
        WHERE m.market_key = ? AND s.granularity = ? AND s.at >= ? AND s.at < ? ORDER BY s.at LIMIT ?`,
      )
      .all(marketKey, granularity, from, toMs, limit);
    return rows.map(toSnapshot);
  }

  async latestMarketSnapshot(
    marketKey: string,
    granularity: SnapshotGranularity,
  ): Promise<MarketSnapshot | null> {
    const row = this.#db
      .stmt(
        `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m JOIN market_snapshots s ON s.market_id = m.id
        WHERE m.market_key = ? AND s.granularity = ? ORDER BY s.at DESC LIMIT 1`,
      )
      .get(marketKey, granularity);
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
    const rows = this.#db
      .stmt(
        `SELECT a.chain_id, a.address AS token, p.at, p.price_usd
         FROM history_addresses a JOIN asset_prices p ON p.token_id = a.id
        WHERE a.chain_id = ? AND a.address = ? AND p.at >= ? AND p.at < ? ORDER BY p.at LIMIT ?`,
      )
      .all(chainId, token.toLowerCase(), from, toMs, limit);
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
      ? this.#db
          .stmt(`${select} AND r.updated_at >= ? AND (r.updated_at > ? OR r.round_id > ?) ${order}`)
          .all(
            chainId,
            feed.toLowerCase(),
            fromMs,
            toMs,
            after.updatedAt,
            after.updatedAt,
            after.roundId,
            limit,
          )
      : this.#db.stmt(`${select} ${order}`).all(chainId, feed.toLowerCase(), fromMs, toMs, limit);
    return rows.map(toOracleRound);
  }

  async dailyMarketTotals(fromMs: number, toMs: number): Promise<DailyMarketTotal[]> {
    checkRead(1, fromMs, toMs);
    // One seek per market of the primary key (market, granularity, at): no scan of other days.
    // CROSS JOIN keeps that order (SQLite would otherwise scan every snapshot: 10x slower).
    // Read by ranges of markets (see #byMarkets), the ranges' sums added up by group.
    const stmt = this.#db.stmt(
      `SELECT s.at, COALESCE(s.protocol, m.protocol) AS protocol, COALESCE(s.chain_id, m.chain_id) AS chain_id,
            COUNT(*) AS markets, SUM(${unscaled('supply_usd')}) AS supply_usd,
            SUM(${unscaled('borrow_usd')}) AS borrow_usd
       FROM history_markets m CROSS JOIN market_snapshots s
         ON s.market_id = m.id AND s.granularity = 'day' AND s.at >= ? AND s.at < ?
      WHERE m.id BETWEEN ? AND ?
      GROUP BY 1, 2, 3`,
    );
    // The parts' sums added up with compensation (Neumaier), as SQLite's SUM adds the rows. A
    // part is a read of its own: a write between two parts (the hour's history, a retention
    // prune of the oldest day) can show in the later parts only.
    type Sum = { s: number; c: number };
    const add = (acc: Sum, x: number) => {
      const t = acc.s + x;
      acc.c += Math.abs(acc.s) >= Math.abs(x) ? acc.s - t + x : x - t + acc.s;
      acc.s = t;
    };
    const groups = new Map<string, { total: DailyMarketTotal; supply: Sum; borrow: Sum }>();
    for (const part of await this.#byMarkets((lo, hi) =>
      stmt.all(fromMs, toMs, lo, hi).map(toDailyMarketTotal),
    )) {
      const key = `${part.at}|${part.protocol}|${part.chainId}`;
      let g = groups.get(key);
      if (!g) {
        g = { total: { ...part, markets: 0 }, supply: { s: 0, c: 0 }, borrow: { s: 0, c: 0 } };
        groups.set(key, g);
      }
      g.total.markets += part.markets;
      add(g.supply, part.supplyUsd);
      add(g.borrow, part.borrowUsd);
    }
    for (const g of groups.values()) {
      g.total.supplyUsd = g.supply.s + g.supply.c;
      g.total.borrowUsd = g.borrow.s + g.borrow.c;
    }
    return [...groups.values()]
      .map((g) => g.total)
      .sort(
        (a, b) =>
          a.at - b.at ||
          (a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0) ||
          a.chainId - b.chainId,
      );
  }

  /**
   * The rows `read(lo, hi)` returns for market ids lo..hi, MARKETS_PER_READ markets at a time with
   * a turn of the event loop between reads: a read of one day of every market is a seek per
   * market (milliseconds per thousand), and the embedded store reads synchronously.
   */
  async #byMarkets<T>(read: (lo: number, hi: number) => T[]): Promise<T[]> {
    const last = Number(this.#db.stmt('SELECT MAX(id) AS id FROM history_markets').get()?.id ?? 0);
    const out: T[] = [];
    for (let lo = 1; lo <= last; lo += MARKETS_PER_READ) {
      if (lo > 1) await new Promise((resolve) => setImmediate(resolve));
      for (const row of read(lo, lo + MARKETS_PER_READ - 1)) out.push(row);
    }
    return out;
  }

  async dailyLiquidationTotals(fromMs: number, toMs: number): Promise<DailyLiquidationTotal[]> {
    checkRead(1, fromMs, toMs);
    const rows = this.#db
      .stmt(
        `SELECT (at / ${DAY_MS}) * ${DAY_MS} AS at, protocol, chain_id, COUNT(*) AS liquidations,
              COUNT(*) FILTER (WHERE collateral_seized_usd IS NULL OR debt_repaid_usd IS NULL OR bad_debt_usd IS NULL)
                AS unpriced_liquidations,
              SUM(debt_repaid_usd) AS debt_repaid_usd, SUM(collateral_seized_usd) AS collateral_seized_usd,
              SUM(bad_debt_usd) AS bad_debt_usd
         FROM liquidations WHERE at >= ? AND at < ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      )
      .all(fromMs, toMs);
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
    const rows = this.#db
      .stmt(
        `SELECT ${LIQUIDATION_COLUMNS} FROM liquidations l ${byTime ? 'INDEXED BY liquidations_at' : ''}
         JOIN history_markets m ON m.id = l.market_id
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY l.at DESC, l.chain_id, l.tx_hash, l.log_index LIMIT ?`,
        { arrays: true },
      )
      .all(...params, limit) as unknown as unknown[][];
    return rows.map(toLiquidationFromArray);
  }

  async dropOracleRoundsFrom(chainId: number, fromMs: number): Promise<number> {
    checkRead(0, fromMs);
    return this.#db.transaction(() =>
      Number(
        this.#db
          .stmt(
            'DELETE FROM oracle_rounds WHERE feed_id IN (SELECT id FROM history_addresses WHERE chain_id = ?) AND updated_at >= ?',
          )
          .run(chainId, fromMs).changes,
      ),
    );
  }

  async dropLiquidationsFrom(chainId: number, block: number): Promise<number> {
    checkRead(0, block);
    return this.#db.transaction(() =>
      Number(
        this.#db.stmt('DELETE FROM liquidations WHERE chain_id = ? AND block >= ?').run(chainId, block)
          .changes,
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
    return this.#db.transaction(() => {
      const deleted = noHistory();
      for (const [kind, sql] of deletes) {
        const cutoff = before[kind];
        if (cutoff !== undefined) deleted[kind] = Number(this.#db.stmt(sql).run(cutoff).changes);
      }
      return deleted;
    });
  }

  async historyCounts(): Promise<HistoryCounts> {
    return toCounts(
      must(
        this.#db
          .stmt(
            `SELECT (SELECT count(*) FROM market_snapshots WHERE granularity = 'hour') AS hourly_snapshots,
                (SELECT count(*) FROM market_snapshots WHERE granularity = 'day') AS daily_snapshots,
                (SELECT count(*) FROM asset_prices) AS asset_prices,
                (SELECT count(*) FROM oracle_rounds) AS oracle_rounds,
                (SELECT count(*) FROM liquidations) AS liquidations`,
          )
          .get(),
        'the history counts',
      ),
    );
  }

  // ---- rating changes -----------------------------------------------------------------------

  async appendRatingChanges(rows: readonly RatingChange[]): Promise<number> {
    checkRatingChanges(rows);
    if (rows.length === 0) return 0;
    const insert = this.#db.stmt(
      `INSERT INTO rating_changes (${RATING_CHANGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.#db.transaction(() => {
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
            r.reason,
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
    return this.#db
      .stmt(
        `SELECT ${RATING_CHANGE_COLUMNS} FROM rating_changes
        WHERE kind = ? AND subject = ? AND at >= ? AND at < ? ORDER BY at LIMIT ?`,
      )
      .all(kind, subject, from, toMs, limit)
      .map(toRatingChange);
  }

  async ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]> {
    checkRead(limit, fromMs, toMs);
    return this.#db
      .stmt(
        `SELECT ${RATING_CHANGE_COLUMNS} FROM rating_changes WHERE at >= ? AND at < ?
        AND score IS NOT NULL ORDER BY at, kind, subject LIMIT ?`,
      )
      .all(fromMs, toMs, limit)
      .map(toRatingChange);
  }

  async daySnapshots(dayMs: number): Promise<MarketSnapshot[]> {
    checkRead(1, dayMs, dayMs + 1);
    // One seek per market of the primary key (market, granularity, at), in that order (CROSS
    // JOIN), by ranges of markets (#byMarkets).
    const stmt = this.#db.stmt(
      `SELECT ${SNAPSHOT_COLUMNS} FROM history_markets m CROSS JOIN market_snapshots s
       ON s.market_id = m.id AND s.granularity = 'day' AND s.at = ? WHERE m.id BETWEEN ? AND ?`,
    );
    return this.#byMarkets((lo, hi) => stmt.all(dayMs, lo, hi).map(toSnapshot));
  }

  async appendResearchReports(rows: readonly ResearchReportRow[]): Promise<number> {
    checkResearchReports(rows);
    if (rows.length === 0) return 0;
    const insert = this.#db.stmt(
      `INSERT INTO research_reports (id, day, protocol, generated_at, body) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    return this.#db.transaction(() => {
      let added = 0;
      for (const r of rows)
        added += Number(insert.run(r.id, r.day, r.protocol, r.generatedAt, deflateRawSync(r.body)).changes);
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
    return this.#db
      .stmt(
        `SELECT id, day, protocol, generated_at, body FROM research_reports WHERE ${where.join(' AND ')}
        ORDER BY day DESC, id DESC LIMIT ?`,
      )
      .all(...params, limit)
      .map(toStoredReport);
  }

  async researchReport(id: string): Promise<ResearchReportRow | null> {
    const row = this.#db
      .stmt('SELECT id, day, protocol, generated_at, body FROM research_reports WHERE id = ?')
      .get(id);
    return row ? toStoredReport(row) : null;
  }

  async lastResearchDay(): Promise<number | null> {
    const row = this.#db.stmt('SELECT max(day) AS day FROM research_reports').get() as
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
    return this.#db
      .stmt(
        `SELECT ${RATING_CHANGE_COLUMNS}, max(at) FROM rating_changes
        WHERE kind = ? AND subject > ? GROUP BY subject ORDER BY subject LIMIT ?`,
      )
      .all(kind, afterSubject, limit)
      .map(toRatingChange);
  }
}
