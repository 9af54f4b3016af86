import type { TransactionSql } from 'postgres';
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
} from '../history.ts';
import type { HistoryStore } from '../ports/history.ts';
import type { PostgresConnection } from './connection.ts';
import { APPEND_CHUNK_ROWS, HistoryDimensions } from './history-dimensions.ts';

/**
 * The append-only history in PostgreSQL. Market keys and (chain, address) pairs are stored
 * once, in history_markets and history_addresses (migration 7); the history tables hold their
 * integer ids, resolved in the append's transaction, and cached once it commits
 * (HistoryDimensions): a dimension row is never deleted nor changed, so a committed id stays
 * right whichever instance wrote it (an id inserted by a transaction that rolled back names
 * nothing, hence nothing is cached before the commit). Reads find the one market, token or
 * feed first, then its rows in a LATERAL subquery: a join would have the planner read and sort
 * all of that market's rows, as it cannot tell the join yields one market.
 */
export class PostgresHistory implements HistoryStore {
  readonly #db: PostgresConnection;
  readonly #ids = new HistoryDimensions();

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  /** Forgets the dimension ids cached (a migration may renumber them). */
  forgetIds(): void {
    this.#ids.clear();
  }

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
    const { added, resolved } = await this.#db.bulk((sql) =>
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

  async appendMarketSnapshots(rows: readonly MarketSnapshot[]): Promise<number> {
    checkMarketSnapshots(rows);
    const sorted = [...rows].sort(bySnapshotKey);
    return this.#append(
      sorted,
      (tx) => this.#ids.marketIds(tx, sorted),
      (tx, c, markets) => {
        const m = c.map((r) => ({
          r,
          market: must(markets.get(r.marketKey), `id of market ${r.marketKey}`),
        }));
        return tx`
        INSERT INTO market_snapshots (market_id, granularity, at, supply_usd, borrow_usd, utilization, supply_apy,
          borrow_apy, collateral_price_usd, loan_price_usd, oracle_price, chain_id, protocol)
        SELECT * FROM unnest(
          ${m.map((x) => x.market.id)}::integer[],
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
          ${m.map(({ r, market }) => (r.chainId === market.chainId ? null : r.chainId))}::bigint[],
          ${m.map(({ r, market }) => (r.protocol === market.protocol ? null : r.protocol))}::text[])
        ON CONFLICT DO NOTHING`;
      },
      this.#ids.cacheMarkets,
    );
  }

  async appendAssetPrices(rows: readonly AssetPrice[]): Promise<number> {
    checkAssetPrices(rows);
    const sorted = [...rows].sort(byPriceKey);
    return this.#append(
      sorted,
      (tx) =>
        this.#ids.addressIds(
          tx,
          sorted.map((r) => [r.chainId, r.token]),
        ),
      (tx, c, tokens) => tx`
      INSERT INTO asset_prices (token_id, at, price_usd)
      SELECT * FROM unnest(
        ${c.map((r) => must(tokens.get(`${r.chainId}:${r.token}`), `id of token ${r.chainId}:${r.token}`))}::integer[],
        ${c.map((r) => r.at)}::bigint[],
        ${c.map((r) => r.priceUsd)}::float8[])
      ON CONFLICT DO NOTHING`,
      this.#ids.cacheAddresses,
    );
  }

  async appendOracleRounds(rows: readonly OracleRound[]): Promise<number> {
    checkOracleRounds(rows);
    const sorted = [...rows].sort(byRoundKey);
    return this.#append(
      sorted,
      (tx) =>
        this.#ids.addressIds(
          tx,
          sorted.map((r) => [r.chainId, r.feed]),
        ),
      (tx, c, feeds) => tx`
      INSERT INTO oracle_rounds (feed_id, round_id, answer, updated_at)
      SELECT * FROM unnest(
        ${c.map((r) => must(feeds.get(`${r.chainId}:${r.feed}`), `id of feed ${r.chainId}:${r.feed}`))}::integer[],
        ${c.map((r) => r.roundId)}::text[],
        ${c.map((r) => r.answer)}::float8[],
        ${c.map((r) => r.updatedAt)}::bigint[])
      ON CONFLICT DO NOTHING`,
      this.#ids.cacheAddresses,
    );
  }

  async appendLiquidations(rows: readonly LiquidationEvent[]): Promise<number> {
    checkLiquidations(rows);
    const sorted = [...rows].sort(byLiquidationKey);
    return this.#append(
      sorted,
      (tx) => this.#ids.marketIds(tx, sorted),
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
        ${c.map((r) => must(markets.get(r.marketKey), `id of market ${r.marketKey}`).id)}::integer[],
        ${c.map((r) => r.borrower)}::text[],
        ${c.map((r) => r.liquidator)}::text[],
        ${c.map((r) => r.collateralSeized)}::float8[],
        ${c.map((r) => r.collateralSeizedUsd)}::float8[],
        ${c.map((r) => r.debtRepaid)}::float8[],
        ${c.map((r) => r.debtRepaidUsd)}::float8[],
        ${c.map((r) => r.badDebt)}::float8[],
        ${c.map((r) => r.badDebtUsd)}::float8[])
      ON CONFLICT DO NOTHING`,
      this.#ids.cacheMarkets,
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
    const rows = await this.#db.serve(
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
    const [row] = await this.#db.serve(
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
    const rows = await this.#db.serve(
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
    const rows = await this.#db.serve(
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
    const rows = await this.#db.serve(
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
    const rows = await this.#db.serve(
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
    const rows = await this.#db.serve((sql) => {
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

  async dropOracleRoundsFrom(chainId: number, fromMs: number): Promise<number> {
    checkRead(0, fromMs);
    return (
      await this.#db.bulk(
        (sql) =>
          sql`DELETE FROM oracle_rounds WHERE feed_id = ANY (ARRAY(SELECT id FROM history_addresses WHERE chain_id = ${chainId})) AND updated_at >= ${fromMs}`,
      )
    ).count;
  }

  async dropLiquidationsFrom(chainId: number, block: number): Promise<number> {
    checkRead(0, block);
    return (
      await this.#db.bulk(
        (sql) => sql`DELETE FROM liquidations WHERE chain_id = ${chainId} AND block >= ${block}`,
      )
    ).count;
  }

  /**
   * One transaction on the bulk pool (a first prune of a long history may delete millions of
   * rows, longer than a request's deadline). Readers are not blocked: DELETE, not TRUNCATE.
   * By age through the primary keys, scanned once per market, token or feed.
   */
  async pruneHistory(before: HistoryCutoffs): Promise<HistoryCounts> {
    for (const cutoff of Object.values(before)) checkRead(0, cutoff);
    return this.#db.bulk((sql) =>
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
    const [row] = await this.#db.bulk(
      (sql) => sql`
      SELECT (SELECT count(*) FROM market_snapshots WHERE granularity = 'hour') AS hourly_snapshots,
             (SELECT count(*) FROM market_snapshots WHERE granularity = 'day') AS daily_snapshots,
             (SELECT count(*) FROM asset_prices) AS asset_prices,
             (SELECT count(*) FROM oracle_rounds) AS oracle_rounds,
             (SELECT count(*) FROM liquidations) AS liquidations`,
    );
    return toCounts(must(row, 'the history counts'));
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
        ${c.map((r) => r.reason)}::text[],
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
    const rows = await this.#db.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes
       WHERE kind = ${kind} AND subject = ${subject} AND at >= ${from} AND at < ${toMs}
       ORDER BY at LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }

  async ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]> {
    checkRead(limit, fromMs, toMs);
    const rows = await this.#db.serve(
      (sql) => sql`
      SELECT ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes WHERE at >= ${fromMs} AND at < ${toMs}
       AND score IS NOT NULL ORDER BY at, kind, subject LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }

  async daySnapshots(dayMs: number): Promise<MarketSnapshot[]> {
    checkRead(1, dayMs, dayMs + 1);
    const rows = await this.#db.serve(
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
    const rows = await this.#db.serve(
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
    const [row] = await this.#db.serve(
      (sql) => sql`SELECT id, day, protocol, generated_at, body FROM research_reports WHERE id = ${id}`,
    );
    return row ? toResearchReport(row) : null;
  }

  async lastResearchDay(): Promise<number | null> {
    const [row] = await this.#db.serve((sql) => sql`SELECT max(day) AS day FROM research_reports`);
    return row?.day === null || row?.day === undefined ? null : Number(row.day);
  }

  /** The primary key in order from the subject after the cursor, each subject's newest row. */
  async latestRatingChanges(
    kind: RatingSubjectKind,
    limit: number,
    afterSubject = '',
  ): Promise<RatingChange[]> {
    checkRead(limit);
    const rows = await this.#db.serve(
      (sql) => sql`
      SELECT DISTINCT ON (subject) ${sql.unsafe(RATING_CHANGE_COLUMNS)} FROM rating_changes
       WHERE kind = ${kind} AND subject > ${afterSubject} ORDER BY subject, at DESC LIMIT ${limit}`,
    );
    return rows.map(toRatingChange);
  }
}
