import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type {
  AssetPrice,
  LiquidationEvent,
  MarketSnapshot,
  OracleRound,
  RatingChange,
} from '../../src/domain/records/history.ts';
import type { SourceState } from '../../src/domain/records/sources.ts';
import { DAY_MS, HOUR_MS, historyCutoffs, KEEP_ALL_HISTORY } from '../../src/store/history.ts';
import type { HistoryStore } from '../../src/store/ports/history.ts';
import type { SourceStore } from '../../src/store/ports/sources.ts';

export type HistoryContractStore = HistoryStore & SourceStore & { close(): Promise<void> };

/** History as schema version 5 held it (before market keys and addresses became ids). */
export interface Version5Rows {
  snapshots: readonly MarketSnapshot[];
  prices: readonly AssetPrice[];
  rounds: readonly OracleRound[];
  liquidations: readonly LiquidationEvent[];
  /** Without a cursor: version 5 had none. */
  sources: readonly Omit<SourceState, 'cursor'>[];
}

/** What a store's test gives the contract to reach into its database. */
export interface HistoryContractHooks {
  /** Another store on the database of `store`, migrated: what another process would open. */
  reopen(store: HistoryContractStore): Promise<HistoryContractStore>;
  /**
   * Makes the database refuse (a trigger raising an error) any market snapshot at `at`
   * appended through `store` from now on: the append fails after it wrote what came before.
   */
  refuseSnapshotsAt(store: HistoryContractStore, at: number): Promise<void>;
  /** A store whose schema stops at version 5, holding `rows` (see version5Inserts), then migrated. */
  migratedFromVersion5(rows: Version5Rows): Promise<HistoryContractStore>;
  /** A store whose schema stops at `version`, holding what `inserts` wrote, then migrated. */
  migratedFrom(version: number, inserts: readonly SqlInsert[]): Promise<HistoryContractStore>;
}

/** One INSERT statement with `?` placeholders and its parameters, in order. */
export interface SqlInsert {
  sql: string;
  params: (string | number | null)[];
}

/** INSERT statements (`?` placeholders, in order) writing `rows` into the version 5 tables. */
export function version5Inserts(rows: Version5Rows): SqlInsert[] {
  const out: SqlInsert[] = [];
  const values = (n: number) => `(${Array.from({ length: n }, () => '?').join(', ')})`;
  for (const r of rows.snapshots) {
    out.push({
      sql: `INSERT INTO market_snapshots (market_key, granularity, at, chain_id, protocol, supply_usd, borrow_usd,
              utilization, supply_apy, borrow_apy, collateral_price_usd, loan_price_usd, oracle_price) VALUES ${values(13)}`,
      params: [
        r.marketKey,
        r.granularity,
        r.at,
        r.chainId,
        r.protocol,
        r.supplyUsd,
        r.borrowUsd,
        r.utilization,
        r.supplyApy,
        r.borrowApy,
        r.collateralPriceUsd,
        r.loanPriceUsd,
        r.oraclePrice,
      ],
    });
  }
  for (const r of rows.prices) {
    out.push({
      sql: `INSERT INTO asset_prices (chain_id, token, at, price_usd) VALUES ${values(4)}`,
      params: [r.chainId, r.token, r.at, r.priceUsd],
    });
  }
  for (const r of rows.rounds) {
    out.push({
      sql: `INSERT INTO oracle_rounds (chain_id, feed, round_id, answer, updated_at) VALUES ${values(5)}`,
      params: [r.chainId, r.feed, r.roundId, r.answer, r.updatedAt],
    });
  }
  for (const r of rows.liquidations) {
    out.push({
      sql: `INSERT INTO liquidations (chain_id, tx_hash, log_index, protocol, block, at, market_key, borrower, liquidator,
              collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd) VALUES ${values(15)}`,
      params: [
        r.chainId,
        r.txHash,
        r.logIndex,
        r.protocol,
        r.block,
        r.at,
        r.marketKey,
        r.borrower,
        r.liquidator,
        r.collateralSeized,
        r.collateralSeizedUsd,
        r.debtRepaid,
        r.debtRepaidUsd,
        r.badDebt,
        r.badDebtUsd,
      ],
    });
  }
  for (const s of rows.sources) {
    out.push({
      sql: `INSERT INTO sources (id, kind, chain_ids, refreshed_at, last_block, consecutive_failures, last_error, updated_at)
              VALUES ${values(8)}`,
      params: [
        s.id,
        s.kind,
        JSON.stringify(s.chainIds),
        s.refreshedAt,
        JSON.stringify(s.lastBlock),
        s.consecutiveFailures,
        s.lastError,
        s.updatedAt,
      ],
    });
  }
  return out;
}

const T0 = Date.UTC(2026, 0, 1);
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function snapshot(over: Partial<MarketSnapshot> = {}): MarketSnapshot {
  return {
    marketKey: 'morpho-1-0xmarket',
    chainId: 1,
    protocol: 'morpho',
    at: T0,
    granularity: 'hour',
    supplyUsd: 1_000_000.25,
    borrowUsd: 800_000.5,
    utilization: 0.8,
    supplyApy: 0.031,
    borrowApy: 0.042,
    collateralPriceUsd: 3000.5,
    loanPriceUsd: 1,
    oraclePrice: 3000.25,
    ...over,
  };
}

function price(over: Partial<AssetPrice> = {}): AssetPrice {
  return { chainId: 1, token: addr(0xa), at: T0, priceUsd: 1.0001, ...over };
}

function round(over: Partial<OracleRound> = {}): OracleRound {
  return { chainId: 1, feed: addr(0xf), roundId: '1', answer: 3000.12345678, updatedAt: T0, ...over };
}

function liquidation(n: number, over: Partial<LiquidationEvent> = {}): LiquidationEvent {
  return {
    protocol: 'morpho',
    chainId: 1,
    txHash: txHash(n),
    logIndex: 0,
    block: 20_000_000 + n,
    at: T0 + n * 12_000,
    marketKey: 'morpho-1-0xmarket',
    borrower: addr(0xb0),
    liquidator: addr(0x10),
    collateralSeized: 1.5,
    collateralSeizedUsd: 4500.75,
    debtRepaid: 4000,
    debtRepaidUsd: 4000.01,
    badDebt: 0,
    badDebtUsd: 0,
    ...over,
  };
}

function rating(over: Partial<RatingChange> = {}): RatingChange {
  return {
    kind: 'market',
    subject: 'morpho-1-0xmarket',
    chainId: 1,
    at: T0,
    methodology: '1.0.0',
    grade: 'A',
    score: 74.35,
    reason: null,
    previousGrade: 'AA',
    previousScore: 80.1,
    // key order and doubles as written (0.1 + 0.2 is not 0.3)
    components: {
      oracle: 85,
      lltvBuffer: 0.1 + 0.2,
      liquidity: 63.47,
      concentration: 12.5,
      liquidations: 100,
    },
    ...over,
  };
}

function source(over: Partial<SourceState> = {}): SourceState {
  return {
    id: 'chain:1',
    kind: 'chain',
    chainIds: [1],
    refreshedAt: null,
    lastBlock: {},
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: T0,
    cursor: null,
    ...over,
  };
}

const noRows = { hourlySnapshots: 0, dailySnapshots: 0, assetPrices: 0, oracleRounds: 0, liquidations: 0 };

const liquidationKey = (l: LiquidationEvent) => `${l.chainId}/${l.txHash}/${l.logIndex}`;

/** Liquidations in the order reads return them: newest first, then chainId, txHash, logIndex. */
function newestFirst(rows: readonly LiquidationEvent[]): LiquidationEvent[] {
  return [...rows].sort(
    (a, b) =>
      b.at - a.at ||
      a.chainId - b.chainId ||
      (a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : 0) ||
      a.logIndex - b.logIndex,
  );
}

/** Deterministic shuffle, so append order never matches read order by accident. */
function shuffled<T>(rows: readonly T[], seed = 7): T[] {
  const out = [...rows];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The history and source-checkpoint contract: every HistoryStore and SourceStore
 * implementation must pass it. `open` returns a migrated, empty store; the suite closes what it
 * opens.
 */
export function historyContract(
  name: string,
  open: () => Promise<HistoryContractStore>,
  hooks?: HistoryContractHooks,
): void {
  describe(`History contract: ${name}`, () => {
    test('behavior: an empty store reads nothing', async () => {
      const store = await open();
      assert.deepEqual(await store.marketSnapshots('m', 'hour', 0, T0 * 2, 10), []);
      assert.equal(await store.latestMarketSnapshot('m', 'day'), null);
      assert.deepEqual(await store.assetPrices(1, addr(1), 0, T0 * 2, 10), []);
      assert.deepEqual(await store.oracleRounds(1, addr(1), 0, T0 * 2, 10), []);
      assert.deepEqual(await store.liquidations({}, 10), []);
      assert.deepEqual(await store.listSources(), []);
      assert.deepEqual(await store.historyCounts(), {
        hourlySnapshots: 0,
        dailySnapshots: 0,
        assetPrices: 0,
        oracleRounds: 0,
        liquidations: 0,
      });
      assert.equal(await store.appendMarketSnapshots([]), 0);
      await store.close();
    });

    test('behavior: appends are idempotent: a row whose natural key is stored is skipped, whatever its values', async () => {
      const store = await open();
      const a = snapshot();
      const b = snapshot({ at: T0 + HOUR_MS });
      const daily = snapshot({ granularity: 'day' }); // same market and time, the other granularity
      assert.equal(await store.appendMarketSnapshots([a, b, daily]), 3);
      assert.equal(await store.appendMarketSnapshots([a, b, daily]), 0);
      assert.equal(
        await store.appendMarketSnapshots([{ ...a, supplyUsd: 1 }, snapshot({ at: T0 + 2 * HOUR_MS })]),
        1,
      );
      // the same row twice in one batch is stored once
      const c = snapshot({ at: T0 + 3 * HOUR_MS });
      assert.equal(await store.appendMarketSnapshots([c, c]), 1);
      const hourly = await store.marketSnapshots(a.marketKey, 'hour', 0, T0 + DAY_MS, 100);
      assert.equal(hourly.length, 4);
      assert.deepEqual(hourly[0], a, 'the first write wins');

      const p = price();
      assert.equal(await store.appendAssetPrices([p, price({ chainId: 10 })]), 2);
      assert.equal(await store.appendAssetPrices([{ ...p, priceUsd: 2 }, p]), 0);
      assert.deepEqual(await store.assetPrices(1, p.token, 0, T0 + DAY_MS, 10), [p]);

      const r = round();
      assert.equal(await store.appendOracleRounds([r, round({ roundId: '2', updatedAt: T0 + 1 })]), 2);
      assert.equal(await store.appendOracleRounds([{ ...r, answer: 1, updatedAt: T0 + 5 }]), 0);
      assert.deepEqual((await store.oracleRounds(1, r.feed, 0, T0 + DAY_MS, 10))[0], r);

      const l = liquidation(1);
      assert.equal(await store.appendLiquidations([l, liquidation(1, { logIndex: 1 })]), 2);
      assert.equal(await store.appendLiquidations([{ ...l, debtRepaid: 1 }, l]), 0);
      assert.equal(
        await store.appendLiquidations([liquidation(1, { chainId: 10 })]),
        1,
        'chain is in the key',
      );
      assert.deepEqual(await store.liquidations({ chainId: 1, borrower: l.borrower }, 10), [
        l,
        liquidation(1, { logIndex: 1 }),
      ]);
      assert.deepEqual(await store.historyCounts(), {
        hourlySnapshots: 4,
        dailySnapshots: 1,
        assetPrices: 2,
        oracleRounds: 2,
        liquidations: 3,
      });
      await store.close();
    });

    test('behavior: reads come in order, within their half-open range and limit', async () => {
      const store = await open();
      const key = 'aave-1-0xpool';
      const hours = Array.from({ length: 48 }, (_, i) => snapshot({ marketKey: key, at: T0 + i * HOUR_MS }));
      const days = [0, 1, 2].map((d) =>
        snapshot({ marketKey: key, granularity: 'day', at: T0 + d * DAY_MS }),
      );
      const other = snapshot({ marketKey: 'other', at: T0 + HOUR_MS });
      await store.appendMarketSnapshots(shuffled([...hours, ...days, other]));
      assert.deepEqual(await store.marketSnapshots(key, 'hour', T0, T0 + DAY_MS, 100), hours.slice(0, 24));
      assert.deepEqual(
        await store.marketSnapshots(key, 'hour', T0 + HOUR_MS, T0 + 3 * HOUR_MS, 100),
        hours.slice(1, 3),
        'from inclusive, to exclusive',
      );
      assert.deepEqual(await store.marketSnapshots(key, 'hour', T0, T0 + DAY_MS, 5), hours.slice(0, 5));
      assert.deepEqual(await store.marketSnapshots(key, 'hour', T0, T0 + DAY_MS, 0), []);
      assert.deepEqual(await store.marketSnapshots(key, 'day', 0, T0 + 10 * DAY_MS, 100), days);
      assert.deepEqual(await store.latestMarketSnapshot(key, 'hour'), hours.at(-1));
      assert.deepEqual(await store.latestMarketSnapshot(key, 'day'), days.at(-1));
      assert.equal(await store.latestMarketSnapshot('nope', 'hour'), null);

      const token = addr(0xabc);
      const prices = Array.from({ length: 10 }, (_, i) =>
        price({ token, at: T0 + i * HOUR_MS, priceUsd: i + 0.5 }),
      );
      await store.appendAssetPrices(
        shuffled([...prices, price({ token, chainId: 8453 }), price({ at: T0 })]),
      );
      assert.deepEqual(
        await store.assetPrices(1, token, T0 + 2 * HOUR_MS, T0 + 5 * HOUR_MS, 10),
        prices.slice(2, 5),
      );
      assert.deepEqual(await store.assetPrices(8453, token, 0, T0 + DAY_MS, 10), [
        price({ token, chainId: 8453 }),
      ]);
      assert.deepEqual(
        await store.assetPrices(1, token.toUpperCase().replace('0X', '0x'), 0, T0 + DAY_MS, 2),
        prices.slice(0, 2),
        'the token is compared lower-cased',
      );

      // rounds by updatedAt; rounds updated at the same ms by roundId as text ('10' before '9')
      const feed = addr(0xfeed);
      const rounds = [
        round({ feed, roundId: '8', updatedAt: T0 }),
        round({ feed, roundId: '10', updatedAt: T0 + 1000 }),
        round({ feed, roundId: '9', updatedAt: T0 + 1000 }),
        round({ feed, roundId: '11', updatedAt: T0 + 2000 }),
        round({ feed, roundId: '18446744073709551617', updatedAt: T0 + 3000 }), // a later phase: > 2^64
      ];
      await store.appendOracleRounds(shuffled(rounds));
      assert.deepEqual(await store.oracleRounds(1, feed, 0, T0 + DAY_MS, 10), rounds);
      assert.deepEqual(await store.oracleRounds(1, feed, T0 + 1000, T0 + 3000, 10), rounds.slice(1, 4));
      assert.deepEqual(await store.oracleRounds(10, feed, 0, T0 + DAY_MS, 10), []);
      await store.close();
    });

    test('behavior: doubles round-trip exactly; nullable prices stay null', async () => {
      const store = await open();
      const odd = [
        0.1 + 0.2,
        Math.PI,
        1e-300,
        5e-324,
        Number.MAX_VALUE,
        -1.5e-7,
        2 ** 53 + 2,
        123_456_789.123_456_79,
        1 / 3,
        0,
      ];
      const snapshots = odd.map((x, i) =>
        snapshot({
          at: T0 + i * HOUR_MS,
          supplyUsd: x,
          borrowUsd: x / 7,
          utilization: 1 - x,
          supplyApy: x * 1e-10,
          borrowApy: x === 0 ? 0 : -x,
          collateralPriceUsd: i % 2 ? null : x,
          loanPriceUsd: i % 3 ? x / 3 : null,
          oraclePrice: i % 4 ? null : Math.sqrt(Math.abs(x)),
        }),
      );
      await store.appendMarketSnapshots(snapshots);
      assert.deepEqual(
        await store.marketSnapshots(snapshots[0]!.marketKey, 'hour', 0, T0 + DAY_MS, 100),
        snapshots,
      );
      const prices = odd.map((x, i) => price({ at: T0 + i * HOUR_MS, priceUsd: x }));
      await store.appendAssetPrices(prices);
      assert.deepEqual(await store.assetPrices(1, prices[0]!.token, 0, T0 + DAY_MS, 100), prices);
      const rounds = odd.map((x, i) => round({ roundId: String(100 + i), updatedAt: T0 + i, answer: x }));
      await store.appendOracleRounds(rounds);
      assert.deepEqual(await store.oracleRounds(1, rounds[0]!.feed, 0, T0 + DAY_MS, 100), rounds);
      const liquidations = odd.map((x, i) =>
        liquidation(i, {
          collateralSeized: x,
          collateralSeizedUsd: x / 3000.1,
          debtRepaid: x / 3,
          debtRepaidUsd: x + 1e-9,
          badDebt: x * 1e-3,
          badDebtUsd: x,
        }),
      );
      // A market without a USD price: its amounts' USD values are unknown, each on its own.
      liquidations.push(
        liquidation(odd.length, { collateralSeizedUsd: null, debtRepaidUsd: null, badDebtUsd: null }),
        liquidation(odd.length + 1, { collateralSeizedUsd: null, debtRepaidUsd: 2.5, badDebtUsd: 0 }),
      );
      await store.appendLiquidations(liquidations);
      assert.deepEqual(await store.liquidations({}, 100), newestFirst(liquidations));
      // -0 comes back as 0 (SQLite keeps no sign on zero; both stores agree)
      await store.appendAssetPrices([price({ token: addr(0x0), priceUsd: -0 })]);
      const [zero] = await store.assetPrices(1, addr(0x0), 0, T0 + DAY_MS, 1);
      assert.ok(Object.is(zero?.priceUsd, 0));
      await store.close();
    });

    test('behavior: cursors page without gaps or duplicates while rows are appended between pages', async () => {
      const store = await open();
      const key = 'morpho-1-0xpaged';
      const hour = (i: number) => snapshot({ marketKey: key, at: T0 + i * HOUR_MS, supplyUsd: i });
      await store.appendMarketSnapshots(Array.from({ length: 50 }, (_, i) => hour(i)));
      // hourly snapshots: the ingest appends newer hours while a client pages forward (for a while:
      // each page taking one row and one more arriving, the client would never catch up)
      const seen: MarketSnapshot[] = [];
      let next = 50;
      for (let page = await store.marketSnapshots(key, 'hour', 0, T0 + 365 * DAY_MS, 7); page.length > 0; ) {
        seen.push(...page);
        if (next < 60) await store.appendMarketSnapshots([hour(next++)]);
        page = await store.marketSnapshots(key, 'hour', 0, T0 + 365 * DAY_MS, 7, page.at(-1));
      }
      assert.deepEqual(
        seen.map((s) => s.supplyUsd),
        Array.from({ length: next }, (_, i) => i),
        'every row once, in order, the ones appended meanwhile included',
      );

      // prices: the same, by chain and token
      const token = addr(0x77);
      const p = (i: number) => price({ token, at: T0 + i * HOUR_MS, priceUsd: i });
      await store.appendAssetPrices(Array.from({ length: 20 }, (_, i) => p(i)));
      const prices: AssetPrice[] = [];
      let nextPrice = 20;
      for (let page = await store.assetPrices(1, token, 0, T0 + 365 * DAY_MS, 3); page.length > 0; ) {
        prices.push(...page);
        if (nextPrice < 25) await store.appendAssetPrices([p(nextPrice++)]);
        page = await store.assetPrices(1, token, 0, T0 + 365 * DAY_MS, 3, page.at(-1));
      }
      assert.deepEqual(
        prices.map((x) => x.priceUsd),
        Array.from({ length: nextPrice }, (_, i) => i),
      );

      // oracle rounds: several rounds share an updatedAt, so pages split ties
      const feed = addr(0x99);
      const r = (i: number) =>
        round({ feed, roundId: String(1000 + i), updatedAt: T0 + Math.floor(i / 4) * 1000 });
      await store.appendOracleRounds(shuffled(Array.from({ length: 30 }, (_, i) => r(i))));
      const rounds: OracleRound[] = [];
      let nextRound = 30;
      for (let page = await store.oracleRounds(1, feed, 0, T0 + DAY_MS, 3); page.length > 0; ) {
        rounds.push(...page);
        if (nextRound < 36) await store.appendOracleRounds([r(nextRound++)]);
        page = await store.oracleRounds(1, feed, 0, T0 + DAY_MS, 3, page.at(-1));
      }
      assert.deepEqual(
        rounds.map((x) => x.roundId),
        Array.from({ length: nextRound }, (_, i) => String(1000 + i)),
      );

      // liquidations, newest first: groups sharing a time (logs of one tx, several chains),
      // pages splitting them; newer liquidations arrive meanwhile and are not part of this listing
      const initial: LiquidationEvent[] = [];
      for (let t = 0; t < 12; t++) {
        for (const [chainId, logIndex] of [
          [1, 0],
          [1, 3],
          [10, 1],
          [1, 1],
        ] as const) {
          initial.push(liquidation(t, { at: T0 + t * 60_000, chainId, logIndex, block: t }));
        }
      }
      await store.appendLiquidations(shuffled(initial));
      const listed: LiquidationEvent[] = [];
      let newer = 0;
      for (let page = await store.liquidations({}, 5); page.length > 0; ) {
        listed.push(...page);
        await store.appendLiquidations([liquidation(100 + newer++, { at: T0 + DAY_MS + newer })]);
        page = await store.liquidations({}, 5, page.at(-1));
      }
      assert.deepEqual(listed, newestFirst(initial));
      assert.equal(new Set(listed.map(liquidationKey)).size, initial.length);
      // a filtered listing pages the same way
      const chain1: LiquidationEvent[] = [];
      for (let page = await store.liquidations({ chainId: 1, toMs: T0 + DAY_MS }, 4); page.length > 0; ) {
        chain1.push(...page);
        page = await store.liquidations({ chainId: 1, toMs: T0 + DAY_MS }, 4, page.at(-1));
      }
      assert.deepEqual(chain1, newestFirst(initial.filter((l) => l.chainId === 1)));
      await store.close();
    });

    test('behavior: liquidations filter by chain, market, borrower, liquidator, protocol and time', async () => {
      const store = await open();
      const rows = Array.from({ length: 40 }, (_, i) =>
        liquidation(i, {
          chainId: i % 2 ? 1 : 8453,
          marketKey: `m${i % 4}`,
          borrower: addr(0xb00 + (i % 5)),
          liquidator: addr(0x100 + (i % 3)),
          protocol: i % 8 === 0 ? 'aave' : 'morpho',
        }),
      );
      await store.appendLiquidations(shuffled(rows));
      const expect = (pick: (l: LiquidationEvent) => boolean) => newestFirst(rows.filter(pick));
      assert.deepEqual(
        await store.liquidations({}, 100),
        expect(() => true),
      );
      assert.deepEqual(
        await store.liquidations({ chainId: 8453 }, 100),
        expect((l) => l.chainId === 8453),
      );
      assert.deepEqual(
        await store.liquidations({ marketKey: 'm3' }, 100),
        expect((l) => l.marketKey === 'm3'),
      );
      assert.deepEqual(
        await store.liquidations({ borrower: addr(0xb02) }, 100),
        expect((l) => l.borrower === addr(0xb02)),
      );
      assert.deepEqual(
        await store.liquidations({ borrower: `0x${addr(0xb0c).slice(2).toUpperCase()}` }, 100),
        expect((l) => l.borrower === addr(0xb0c)),
        'addresses are compared lower-cased',
      );
      assert.deepEqual(
        await store.liquidations({ liquidator: addr(0x101) }, 100),
        expect((l) => l.liquidator === addr(0x101)),
      );
      assert.deepEqual(
        await store.liquidations({ protocol: 'aave' }, 100),
        expect((l) => l.protocol === 'aave'),
      );
      const from = rows[10]!.at;
      const to = rows[20]!.at;
      assert.deepEqual(
        await store.liquidations({ fromMs: from, toMs: to }, 100),
        expect((l) => l.at >= from && l.at < to),
      );
      assert.deepEqual(
        await store.liquidations(
          { chainId: 1, borrower: addr(0xb01), liquidator: addr(0x100), fromMs: from },
          100,
        ),
        expect(
          (l) =>
            l.chainId === 1 && l.borrower === addr(0xb01) && l.liquidator === addr(0x100) && l.at >= from,
        ),
      );
      assert.deepEqual(await store.liquidations({ borrower: addr(0xdead) }, 100), []);
      assert.deepEqual(
        await store.liquidations({ chainId: 8453 }, 3),
        expect((l) => l.chainId === 8453).slice(0, 3),
      );
      await store.close();
    });

    test('behavior: daily totals sum day snapshots and liquidations per day, protocol and chain, in range', async () => {
      const store = await open();
      const D = 86_400_000;
      await store.appendMarketSnapshots([
        snapshot({ granularity: 'day', at: T0, supplyUsd: 100, borrowUsd: 40 }),
        snapshot({ granularity: 'day', at: T0 + D, supplyUsd: 110, borrowUsd: 50 }),
        snapshot({
          marketKey: 'morpho-1-0xother',
          granularity: 'day',
          at: T0,
          supplyUsd: 0.5,
          borrowUsd: 0.25,
        }),
        snapshot({
          marketKey: 'aave-8453-0xpool',
          chainId: 8453,
          protocol: 'aave',
          granularity: 'day',
          at: T0,
          supplyUsd: 7,
          borrowUsd: 3,
        }),
        // hourly snapshots and days out of range are not summed
        snapshot({ granularity: 'hour', at: T0 + 3_600_000, supplyUsd: 1e9 }),
        snapshot({ granularity: 'day', at: T0 + 2 * D, supplyUsd: 1e9 }),
      ]);
      assert.deepEqual(await store.dailyMarketTotals(T0, T0 + 2 * D), [
        { at: T0, protocol: 'aave', chainId: 8453, markets: 1, supplyUsd: 7, borrowUsd: 3 },
        { at: T0, protocol: 'morpho', chainId: 1, markets: 2, supplyUsd: 100.5, borrowUsd: 40.25 },
        { at: T0 + D, protocol: 'morpho', chainId: 1, markets: 1, supplyUsd: 110, borrowUsd: 50 },
      ]);
      await store.appendLiquidations([
        liquidation(1, { debtRepaidUsd: 10, collateralSeizedUsd: 11, badDebtUsd: 0 }),
        liquidation(2, { debtRepaidUsd: 20, collateralSeizedUsd: 21, badDebtUsd: 1.5 }),
        liquidation(3, { at: T0 + D + 5, debtRepaidUsd: 30, collateralSeizedUsd: 31, badDebtUsd: 0 }),
        liquidation(4, {
          chainId: 8453,
          protocol: 'aave',
          marketKey: 'aave-8453-0xpool',
          debtRepaidUsd: 5,
          collateralSeizedUsd: 6,
          badDebtUsd: 0,
        }),
        liquidation(5, { at: T0 + 2 * D, debtRepaidUsd: 1e9 }),
        // Amounts of no known USD value: counted, not summed.
        liquidation(6, { at: T0 + D + 6, debtRepaidUsd: null, collateralSeizedUsd: null, badDebtUsd: null }),
        liquidation(7, { at: T0 + D + 7, debtRepaidUsd: 4, collateralSeizedUsd: null, badDebtUsd: 0 }),
      ]);
      assert.deepEqual(await store.dailyLiquidationTotals(T0, T0 + 2 * D), [
        {
          at: T0,
          protocol: 'aave',
          chainId: 8453,
          liquidations: 1,
          unpricedLiquidations: 0,
          debtRepaidUsd: 5,
          collateralSeizedUsd: 6,
          badDebtUsd: 0,
        },
        {
          at: T0,
          protocol: 'morpho',
          chainId: 1,
          liquidations: 2,
          unpricedLiquidations: 0,
          debtRepaidUsd: 30,
          collateralSeizedUsd: 32,
          badDebtUsd: 1.5,
        },
        {
          at: T0 + D,
          protocol: 'morpho',
          chainId: 1,
          liquidations: 3,
          unpricedLiquidations: 2,
          debtRepaidUsd: 34,
          collateralSeizedUsd: 31,
          badDebtUsd: 0,
        },
      ]);
      assert.deepEqual(await store.dailyMarketTotals(T0 + 3 * D, T0 + 4 * D), []);
      assert.deepEqual(await store.dailyLiquidationTotals(T0 + 3 * D, T0 + 4 * D), []);
      await store.close();
    });

    test('behavior: a day of 1,234 markets is read whole: its snapshots and its totals (read in parts by the embedded store)', async () => {
      const store = await open();
      const D = 86_400_000;
      const rows: MarketSnapshot[] = [];
      for (let i = 0; i < 1234; i++) {
        const aave = i % 3 === 0;
        const marketKey = aave ? `aave-1-0x${i.toString(16)}` : `morpho-1-0x${i.toString(16)}`;
        const protocol = aave ? 'aave' : 'morpho';
        // Every other market has no snapshot on the day read (ids of markets without rows).
        rows.push(
          snapshot({
            marketKey,
            protocol,
            granularity: 'day',
            at: T0 + (i % 2) * D,
            // Cents: not exact in binary, summed in parts by the embedded store.
            supplyUsd: i / 100,
            borrowUsd: 1,
          }),
        );
      }
      await store.appendMarketSnapshots(rows);
      const onDay = rows.filter((r) => r.at === T0);
      assert.deepEqual(
        (await store.daySnapshots(T0)).map((r) => r.marketKey).sort(),
        onDay.map((r) => r.marketKey).sort(),
      );
      const total = (protocol: string) => {
        const of = onDay.filter((r) => r.protocol === protocol);
        return {
          at: T0,
          protocol,
          chainId: 1,
          markets: of.length,
          supplyUsd: of.reduce((s, r) => s + r.supplyUsd, 0),
          borrowUsd: of.length,
        };
      };
      const totals = await store.dailyMarketTotals(T0, T0 + D);
      const expected = [total('aave'), total('morpho')];
      const cents = (t: { supplyUsd: number }) => ({ ...t, supplyUsd: Math.round(t.supplyUsd * 100) });
      assert.deepEqual(totals.map(cents), expected.map(cents));
      for (const [i, t] of totals.entries())
        assert.ok(Math.abs(t.supplyUsd - (expected[i]?.supplyUsd ?? 0)) < 1e-9, 'to far below a cent');
      assert.equal((await store.dailyMarketTotals(T0, T0 + 2 * D)).length, 4);
      await store.close();
    });

    test('behavior: research reports are kept as written, read newest first by protocol and cursor; day snapshots read one day', async () => {
      const store = await open();
      const D = 86_400_000;
      const report = (day: number, protocol: string) => ({
        id: `${new Date(day).toISOString().slice(0, 10)}-${protocol}`,
        day,
        protocol,
        generatedAt: day + D + 1,
        body: JSON.stringify({ day, protocol }),
      });
      assert.equal(await store.lastResearchDay(), null);
      assert.equal(
        await store.appendResearchReports([
          report(T0, 'morpho'),
          report(T0, 'aave'),
          report(T0 + D, 'morpho'),
        ]),
        3,
      );
      // kept as written: the same id again adds nothing, whatever its body
      assert.equal(await store.appendResearchReports([{ ...report(T0, 'aave'), body: '{"other":1}' }]), 0);
      assert.equal(await store.lastResearchDay(), T0 + D);
      const all = await store.researchReports({ fromMs: 0, toMs: T0 + 2 * D }, 10);
      assert.deepEqual(
        all.map((r) => r.id),
        ['2026-01-02-morpho', '2026-01-01-morpho', '2026-01-01-aave'],
      );
      assert.deepEqual(all[2], report(T0, 'aave'));
      const page = await store.researchReports({ fromMs: 0, toMs: T0 + 2 * D }, 2);
      const rest = await store.researchReports({ fromMs: 0, toMs: T0 + 2 * D }, 2, {
        day: page[1]!.day,
        id: page[1]!.id,
      });
      assert.deepEqual(
        rest.map((r) => r.id),
        ['2026-01-01-aave'],
      );
      assert.deepEqual(
        (await store.researchReports({ protocol: 'aave', fromMs: 0, toMs: T0 + 2 * D }, 10)).map((r) => r.id),
        ['2026-01-01-aave'],
      );
      assert.deepEqual(await store.researchReports({ fromMs: T0 + D, toMs: T0 + 2 * D }, 10), [
        report(T0 + D, 'morpho'),
      ]);
      assert.deepEqual(await store.researchReport('2026-01-02-morpho'), report(T0 + D, 'morpho'));
      assert.equal(await store.researchReport('nope'), null);
      await store.appendMarketSnapshots([
        snapshot({ granularity: 'day', at: T0, supplyUsd: 5 }),
        snapshot({ marketKey: 'aave-1-0xp', protocol: 'aave', granularity: 'day', at: T0, supplyUsd: 6 }),
        snapshot({ granularity: 'day', at: T0 + D }),
        snapshot({ granularity: 'hour', at: T0 }),
      ]);
      assert.deepEqual((await store.daySnapshots(T0)).map((r) => [r.marketKey, r.supplyUsd]).sort(), [
        ['aave-1-0xp', 6],
        ['morpho-1-0xmarket', 5],
      ]);
      assert.deepEqual(await store.daySnapshots(T0 + 5 * D), []);
      const change = (subject: string, at: number) => ({
        kind: 'market' as const,
        subject,
        chainId: 1,
        at,
        methodology: '1.0.0',
        grade: 'A',
        score: 71.5,
        reason: null,
        previousGrade: null,
        previousScore: null,
        components: { oracle: 80 },
      });
      await store.appendRatingChanges([
        change('b', T0 + 5),
        change('a', T0 + 5),
        change('a', T0 + D),
        change('c', T0 - 1),
      ]);
      assert.deepEqual(
        (await store.ratingChangesBetween(T0, T0 + D, 10)).map((c) => [c.subject, c.at]),
        [
          ['a', T0 + 5],
          ['b', T0 + 5],
        ],
      );
      await store.close();
    });

    test('behavior: pruneHistory deletes, per kind, only the rows older than its cutoff', async () => {
      const store = await open();
      await store.appendMarketSnapshots([
        ...Array.from({ length: 10 }, (_, i) => snapshot({ at: T0 + i * HOUR_MS })),
        ...Array.from({ length: 3 }, (_, i) => snapshot({ granularity: 'day', at: T0 + i * DAY_MS })),
      ]);
      await store.appendAssetPrices(Array.from({ length: 6 }, (_, i) => price({ at: T0 + i * HOUR_MS })));
      await store.appendOracleRounds(
        Array.from({ length: 5 }, (_, i) => round({ roundId: `${i + 1}`, updatedAt: T0 + i })),
      );
      await store.appendLiquidations(Array.from({ length: 4 }, (_, i) => liquidation(i)));
      // no cutoffs (the default retention): nothing deleted
      assert.deepEqual(historyCutoffs(KEEP_ALL_HISTORY, T0), {});
      assert.deepEqual(await store.pruneHistory(historyCutoffs(KEEP_ALL_HISTORY, T0)), {
        hourlySnapshots: 0,
        dailySnapshots: 0,
        assetPrices: 0,
        oracleRounds: 0,
        liquidations: 0,
      });
      const cutoffs = historyCutoffs(
        { ...KEEP_ALL_HISTORY, hourlySnapshots: 6 * HOUR_MS, assetPrices: 2 * HOUR_MS, oracleRounds: 2 },
        T0 + 10 * HOUR_MS,
      );
      assert.deepEqual(cutoffs, {
        hourlySnapshots: T0 + 4 * HOUR_MS,
        assetPrices: T0 + 8 * HOUR_MS,
        oracleRounds: T0 + 10 * HOUR_MS - 2,
      });
      assert.deepEqual(
        await store.pruneHistory({ ...cutoffs, oracleRounds: T0 + 3, liquidations: T0 + 12_000 }),
        {
          hourlySnapshots: 4,
          dailySnapshots: 0,
          assetPrices: 6,
          oracleRounds: 3,
          liquidations: 1,
        },
      );
      assert.deepEqual(
        (await store.marketSnapshots(snapshot().marketKey, 'hour', 0, T0 + DAY_MS, 100)).map((s) => s.at),
        Array.from({ length: 6 }, (_, i) => T0 + (i + 4) * HOUR_MS),
        'the cutoff itself is kept',
      );
      assert.equal(
        (await store.marketSnapshots(snapshot().marketKey, 'day', 0, T0 + 9 * DAY_MS, 100)).length,
        3,
      );
      assert.deepEqual(
        (await store.oracleRounds(1, round().feed, 0, T0 + DAY_MS, 10)).map((r) => r.roundId),
        ['4', '5'],
      );
      assert.deepEqual(await store.historyCounts(), {
        hourlySnapshots: 6,
        dailySnapshots: 3,
        assetPrices: 0,
        oracleRounds: 2,
        liquidations: 3,
      });
      // pruned rows may be appended again (a backfill after a retention change)
      assert.equal(await store.appendLiquidations([liquidation(0)]), 1);
      await store.close();
    });

    test("behavior: dropOracleRoundsFrom forgets one chain's rounds from a time on", async () => {
      const store = await open();
      await store.appendOracleRounds([
        round({ roundId: '1', updatedAt: T0 }),
        round({ roundId: '2', updatedAt: T0 + 1000 }),
        round({ roundId: '3', updatedAt: T0 + 2000 }),
        round({ roundId: '9', updatedAt: T0 + 1000, chainId: 10 }),
      ]);
      assert.equal(await store.dropOracleRoundsFrom(1, T0 + 1000), 2);
      assert.deepEqual(
        (await store.oracleRounds(1, round().feed, 0, T0 + DAY_MS, 10)).map((r) => r.roundId),
        ['1'],
      );
      assert.equal((await store.oracleRounds(10, round().feed, 0, T0 + DAY_MS, 10)).length, 1);
      await store.close();
    });

    test("behavior: dropLiquidationsFrom forgets one chain's liquidations from a block on", async () => {
      const store = await open();
      await store.appendLiquidations([
        liquidation(1, { block: 10 }),
        liquidation(2, { block: 11 }),
        liquidation(3, { block: 12 }),
        liquidation(4, { block: 11, chainId: 10 }),
      ]);
      assert.equal(await store.dropLiquidationsFrom(1, 11), 2);
      assert.deepEqual((await store.liquidations({}, 10)).map((l) => [l.chainId, l.block]).sort(), [
        [1, 10],
        [10, 11],
      ]);
      assert.equal(await store.dropLiquidationsFrom(1, 11), 0);
      // read again from the new chain: appended again
      assert.equal(await store.appendLiquidations([liquidation(2, { block: 11 })]), 1);
      await store.close();
    });

    test('error: a batch with an invalid row is refused whole, before anything is written', async () => {
      const store = await open();
      const good = snapshot();
      const refused = async (p: Promise<unknown>, message: RegExp) =>
        assert.rejects(p, (err: Error) => {
          assert.ok(err instanceof RangeError, String(err));
          assert.match(err.message, message);
          return true;
        });
      await refused(
        store.appendMarketSnapshots([good, snapshot({ at: T0 + 1 })]),
        /snapshot 1: at must be on the hour/,
      );
      await refused(
        store.appendMarketSnapshots([good, snapshot({ granularity: 'day', at: T0 + HOUR_MS })]),
        /00:00 UTC/,
      );
      await refused(store.appendMarketSnapshots([snapshot({ supplyUsd: Number.NaN })]), /supplyUsd/);
      await refused(
        store.appendMarketSnapshots([snapshot({ oraclePrice: Number.POSITIVE_INFINITY })]),
        /oraclePrice/,
      );
      await refused(store.appendAssetPrices([price({ token: '0xAbC' })]), /lower-case/);
      await refused(store.appendAssetPrices([price({ at: T0 + 60_000 })]), /on the hour/);
      await refused(store.appendOracleRounds([round({ roundId: '007' })]), /roundId/);
      await refused(store.appendOracleRounds([round({ roundId: (2n ** 80n).toString() })]), /uint80/);
      await refused(
        store.appendLiquidations([liquidation(1), liquidation(2, { at: 1.5 })]),
        /liquidation 1: at/,
      );
      await refused(store.appendLiquidations([liquidation(1, { borrower: '0xABC' })]), /borrower/);
      await refused(store.marketSnapshots('m', 'hour', 0, 10, -1), /limit/);
      await refused(store.liquidations({ fromMs: 0.5 }, 10), /times/);
      await refused(store.saveSource(source({ consecutiveFailures: -1 })), /consecutiveFailures/);
      assert.deepEqual(await store.historyCounts(), {
        hourlySnapshots: 0,
        dailySnapshots: 0,
        assetPrices: 0,
        oracleRounds: 0,
        liquidations: 0,
      });
      await store.close();
    });

    test('behavior: one holder at a time takes the ingestion lease; it is renewed, expires, and is let go', async () => {
      const store = await open();
      assert.equal(await store.ingestionHolder(T0), null, 'never taken');
      assert.equal(await store.claimIngestion('a', T0, 30_000), true);
      assert.equal(await store.ingestionHolder(T0 + 29_999), 'a');
      assert.equal(await store.ingestionHolder(T0 + 30_000), null, 'expired');
      assert.equal(await store.claimIngestion('b', T0 + 1000, 30_000), false, 'held by a');
      assert.equal(await store.claimIngestion('a', T0 + 20_000, 30_000), true, 'renewed to T0 + 50 s');
      assert.equal(await store.claimIngestion('b', T0 + 49_999, 30_000), false);
      assert.equal(await store.claimIngestion('b', T0 + 50_000, 30_000), true, 'expired: taken');
      assert.equal(await store.claimIngestion('a', T0 + 50_001, 30_000), false);
      await store.releaseIngestion('a'); // not a's: nothing
      assert.equal(await store.claimIngestion('a', T0 + 50_002, 30_000), false);
      await store.releaseIngestion('b');
      assert.equal(await store.ingestionHolder(T0 + 50_003), null, 'let go');
      assert.equal(await store.claimIngestion('a', T0 + 50_003, 30_000), true, 'let go: taken at once');
      await store.close();
    });

    test('behavior: sources are upserted by id and listed by id', async () => {
      const store = await open();
      const chain = source({ id: 'chain:1' });
      const api = source({
        id: 'morpho-api',
        kind: 'api',
        chainIds: [1, 8453, 42161],
        refreshedAt: T0 - 5000,
        lastBlock: { '1': 21_000_000, '8453': 25_000_000 },
        consecutiveFailures: 2,
        lastError: 'HTTP 502 from upstream: "bad gateway" \\ ünïcødé',
        updatedAt: T0 + 1,
        cursor: '{"untilMs":1790000000000}',
        head: { '1': 21_000_002, '8453': 25_000_010 },
      });
      await store.saveSource(chain);
      await store.saveSource(api);
      const syncing = source({
        id: 'chain:10',
        chainIds: [10],
        sync: {
          '10': { fromBlock: 0, throughBlock: 499_999, toBlock: 140_000_000, startedAt: T0, accounts: 1234 },
        },
      });
      await store.saveSource(syncing);
      assert.deepEqual(
        (await store.listSources()).map((s) => s.id),
        ['chain:1', 'chain:10', 'morpho-api'],
      );
      assert.deepEqual((await store.listSources())[2], api);
      assert.deepEqual((await store.listSources())[1], syncing, 'a sync under way round-trips');
      // Synced: saved without one, none is listed.
      const { sync: _, ...synced } = syncing;
      await store.saveSource(synced);
      assert.equal((await store.listSources())[1]!.sync, undefined);
      await assert.rejects(
        store.saveSource({
          ...syncing,
          sync: { '10': { ...syncing.sync!['10']!, throughBlock: 140_000_001 } },
        }),
        /sync must map chain ids/,
      );
      const refreshed = {
        ...chain,
        refreshedAt: T0 + 60_000,
        lastBlock: { '1': 21_000_100 },
        consecutiveFailures: 0,
        lastError: null,
        updatedAt: T0 + 60_000,
      };
      await store.saveSource(refreshed);
      const listed = await store.listSources();
      assert.equal(listed.length, 3);
      assert.deepEqual(listed[0], refreshed, 'the saved state replaces the stored one whole');
      await store.close();
    });

    test('behavior: rating changes round-trip exactly, append idempotently by (kind, subject, at), read oldest first in range', async () => {
      const store = await open();
      const a = [0, 1, 2].map((d) => rating({ at: T0 + d * DAY_MS, score: 70 + d }));
      const first = rating({
        subject: 'aave-1-0xpool',
        at: T0 + 5,
        previousGrade: null,
        previousScore: null,
      });
      const vault = rating({
        kind: 'vault',
        subject: `8453:${addr(0xa1)}`,
        chainId: 8453,
        components: { markets: 71.2, diversification: 44.44 },
      });
      assert.equal(await store.appendRatingChanges(shuffled([...a, first, vault])), 5);
      assert.equal(await store.appendRatingChanges([...a, first, vault]), 0);
      // the same key with other values is skipped: the first write wins
      assert.equal(await store.appendRatingChanges([{ ...a[0]!, grade: 'D', score: 1 }]), 0);
      assert.equal(await store.appendRatingChanges([]), 0);
      assert.deepEqual(await store.ratingChanges('market', a[0]!.subject, 0, T0 + 10 * DAY_MS, 10), a);
      assert.deepEqual(await store.ratingChanges('market', 'aave-1-0xpool', 0, T0 + DAY_MS, 10), [first]);
      assert.deepEqual(await store.ratingChanges('vault', vault.subject, 0, T0 + DAY_MS, 10), [vault]);
      // the kind is part of the key: no market has the vault's subject, nor the reverse
      assert.deepEqual(await store.ratingChanges('vault', a[0]!.subject, 0, T0 + 10 * DAY_MS, 10), []);
      assert.deepEqual(await store.ratingChanges('market', vault.subject, 0, T0 + DAY_MS, 10), []);
      // half-open ranges, limit and cursor
      assert.deepEqual(await store.ratingChanges('market', a[0]!.subject, T0 + DAY_MS, T0 + 2 * DAY_MS, 10), [
        a[1],
      ]);
      const page = await store.ratingChanges('market', a[0]!.subject, 0, T0 + 10 * DAY_MS, 2);
      assert.deepEqual(page, a.slice(0, 2));
      assert.deepEqual(
        await store.ratingChanges('market', a[0]!.subject, 0, T0 + 10 * DAY_MS, 2, page.at(-1)),
        [a[2]],
      );
      assert.deepEqual(
        Object.keys(a[0]!.components),
        Object.keys((await store.ratingChanges('market', a[0]!.subject, 0, T0 + 1, 1))[0]!.components),
      );
      // history pruning leaves the rating record alone
      await store.pruneHistory(
        historyCutoffs({ ...KEEP_ALL_HISTORY, liquidations: 0, oracleRounds: 0 }, T0 + 100 * DAY_MS),
      );
      assert.equal((await store.ratingChanges('market', a[0]!.subject, 0, T0 + 10 * DAY_MS, 10)).length, 3);
      await store.close();
    });

    test('behavior: latestRatingChanges is the last recorded change of each subject of a kind, paged by subject', async () => {
      const store = await open();
      assert.deepEqual(await store.latestRatingChanges('market', 10), []);
      const rows = [
        rating({ subject: 'm-a', at: T0 + 3 }),
        rating({ subject: 'm-a', at: T0 + 1 }),
        rating({ subject: 'm-a', at: T0 + 2 }),
        rating({ subject: 'm-b', at: T0 }),
        rating({ kind: 'vault', subject: `1:${addr(1)}`, at: T0 + 9 }),
      ];
      await store.appendRatingChanges(rows);
      assert.deepEqual(await store.latestRatingChanges('market', 10), [rows[0], rows[3]]);
      assert.deepEqual(await store.latestRatingChanges('vault', 10), [rows[4]]);
      // keyset pages by subject, in byte order
      const page = await store.latestRatingChanges('market', 1);
      assert.deepEqual(page, [rows[0]]);
      assert.deepEqual(await store.latestRatingChanges('market', 1, page[0]!.subject), [rows[3]]);
      assert.deepEqual(await store.latestRatingChanges('market', 1, 'm-b'), []);
      const upper = rating({ subject: 'M-z', at: T0 });
      await store.appendRatingChanges([upper]);
      assert.deepEqual(
        (await store.latestRatingChanges('market', 10)).map((r) => r.subject),
        ['M-z', 'm-a', 'm-b'],
        'byte order: upper case first',
      );
      await store.close();
    });

    test('behavior: a rating not graded (NR, score null, its reason) round-trips, and the one after it names NR before', async () => {
      const store = await open();
      const graded = rating({ at: T0 });
      const notGraded = rating({
        at: T0 + DAY_MS,
        grade: 'NR',
        score: null,
        reason: 'Not graded: $52,000 supplied, below the size floor of $100,000.',
        previousGrade: 'A',
        previousScore: 74.35,
      });
      const back = rating({ at: T0 + 2 * DAY_MS, score: 71.2, previousGrade: 'NR', previousScore: null });
      const firstNr = rating({
        subject: 'aave-1-0xpool',
        grade: 'NR',
        score: null,
        reason: 'Not graded: the liquidations component has no data.',
        previousGrade: null,
        previousScore: null,
      });
      assert.equal(await store.appendRatingChanges(shuffled([graded, notGraded, back, firstNr])), 4);
      assert.deepEqual(await store.ratingChanges('market', graded.subject, 0, T0 + 10 * DAY_MS, 10), [
        graded,
        notGraded,
        back,
      ]);
      assert.deepEqual(await store.ratingChanges('market', 'aave-1-0xpool', 0, T0 + DAY_MS, 10), [firstNr]);
      assert.deepEqual(await store.latestRatingChanges('market', 10), [firstNr, back]);
      assert.deepEqual(
        await store.ratingChangesBetween(T0 + DAY_MS, T0 + 2 * DAY_MS, 10),
        [],
        'graded changes only: a step into NR is none',
      );
      assert.deepEqual(await store.ratingChangesBetween(0, T0 + 10 * DAY_MS, 10), [graded, back]);
      await store.close();
    });

    test('behavior: a store migrated from before NR was recorded keeps its rating changes, and records NR after', {
      skip: hooks ? false : 'needs the store test hooks',
    }, async () => {
      const old = rating({ at: T0 });
      const store = await hooks!.migratedFrom(17, [
        {
          sql: `INSERT INTO rating_changes (kind, subject, at, chain_id, methodology, grade, score, previous_grade,
                  previous_score, components) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          params: [
            old.kind,
            old.subject,
            old.at,
            old.chainId,
            old.methodology,
            old.grade,
            old.score,
            old.previousGrade,
            old.previousScore,
            JSON.stringify(old.components),
          ],
        },
      ]);
      assert.deepEqual(await store.ratingChanges('market', old.subject, 0, T0 + DAY_MS, 10), [old]);
      const nr = rating({
        at: T0 + DAY_MS,
        grade: 'NR',
        score: null,
        reason: 'Not graded: $0 supplied.',
        previousGrade: 'A',
        previousScore: 74.35,
      });
      assert.equal(await store.appendRatingChanges([nr]), 1);
      assert.deepEqual(await store.latestRatingChanges('market', 10), [nr]);
      assert.deepEqual(await store.ratingChangesBetween(0, T0 + 2 * DAY_MS, 10), [old]);
      await store.close();
    });

    test('error: a rating change batch with an invalid row is refused whole, before anything is written', async () => {
      const store = await open();
      const bad: Partial<RatingChange>[] = [
        { kind: 'pool' as RatingChange['kind'] },
        { subject: '' },
        { at: 1.5 },
        { chainId: -1 },
        { score: Number.NaN },
        { grade: '' },
        { methodology: '' },
        { previousGrade: null },
        { previousScore: Number.POSITIVE_INFINITY },
        // not graded: grade NR, no score, a reason; graded: a score, no reason
        { grade: 'NR' },
        { grade: 'NR', score: null },
        { grade: 'NR', score: null, reason: '' },
        { score: null },
        { reason: 'Not graded: $0 held.' },
        { previousGrade: 'NR' },
        { previousGrade: 'NR', previousScore: Number.NaN },
        { components: { oracle: Number.NaN } },
        { components: [] as unknown as Record<string, number> },
      ];
      for (const over of bad) {
        await assert.rejects(
          store.appendRatingChanges([rating({ at: T0 + 1 }), rating(over)]),
          RangeError,
          JSON.stringify(over),
        );
      }
      assert.deepEqual(await store.ratingChanges('market', rating().subject, 0, T0 + DAY_MS, 10), []);
      await store.close();
    });

    test('behavior: concurrent appends of overlapping rows all complete, each row stored once', async () => {
      const store = await open();
      const rows = Array.from({ length: 3000 }, (_, i) =>
        liquidation(i % 1000, { logIndex: Math.floor(i / 1000) }),
      );
      const batches = [
        rows.slice(0, 2000),
        shuffled(rows.slice(1000), 3),
        shuffled(rows, 5),
        rows.slice(500, 2500).reverse(),
      ];
      const added = await Promise.all(batches.map((b) => store.appendLiquidations(b)));
      assert.equal(
        added.reduce((a, b) => a + b, 0),
        rows.length,
      );
      const snapshots = Array.from({ length: 2000 }, (_, i) =>
        snapshot({ marketKey: `m${i % 10}`, at: T0 + Math.floor(i / 10) * HOUR_MS }),
      );
      const addedSnapshots = await Promise.all([
        store.appendMarketSnapshots(snapshots),
        store.appendMarketSnapshots(shuffled(snapshots)),
        store.appendMarketSnapshots([...snapshots].reverse()),
      ]);
      assert.equal(
        addedSnapshots.reduce((a, b) => a + b, 0),
        snapshots.length,
      );
      const counts = await store.historyCounts();
      assert.equal(counts.liquidations, rows.length);
      assert.equal(counts.hourlySnapshots, snapshots.length);
      await store.close();
    });

    test('behavior: a 200,000-row append completes, and appending it again adds nothing', async () => {
      const store = await open();
      // 23 markets, a year of hours each (a backfill)
      const rows: MarketSnapshot[] = [];
      for (let i = 0; i < 200_000; i++) {
        const market = i % 23;
        rows.push(
          snapshot({
            marketKey: `morpho-1-0x${market.toString(16).padStart(64, '0')}`,
            at: T0 + Math.floor(i / 23) * HOUR_MS,
            supplyUsd: i * 1.000_1,
            borrowUsd: i / 3,
            utilization: (i % 1000) / 1000,
            collateralPriceUsd: i % 2 ? null : i + 0.5,
          }),
        );
      }
      assert.equal(await store.appendMarketSnapshots(rows), rows.length);
      assert.equal((await store.historyCounts()).hourlySnapshots, rows.length);
      assert.equal(await store.appendMarketSnapshots(rows.slice(100_000)), 0);
      const market7 = rows.filter((_, i) => i % 23 === 7);
      assert.deepEqual(
        await store.marketSnapshots(
          market7[0]!.marketKey,
          'hour',
          0,
          Number.MAX_SAFE_INTEGER,
          100,
          market7[999],
        ),
        market7.slice(1000, 1100),
      );
      assert.deepEqual(await store.latestMarketSnapshot(market7[0]!.marketKey, 'hour'), market7.at(-1));
      await store.close();
    });

    test("behavior: a source's cursor round-trips, null by default, and is replaced with the rest of the state", async () => {
      const store = await open();
      await store.saveSource(source());
      assert.equal((await store.listSources())[0]!.cursor, null);
      const cursor = '{"historyUntil":1767225600000,"note":"ünïcødé \\\\ \\"quoted\\""}';
      await store.saveSource(source({ cursor }));
      assert.deepEqual(await store.listSources(), [source({ cursor })]);
      await store.saveSource(source({ consecutiveFailures: 1, lastError: 'timeout', cursor: null }));
      assert.equal((await store.listSources())[0]!.cursor, null, 'a state without a cursor clears it');
      await assert.rejects(
        store.saveSource(source({ cursor: 5 as unknown as string })),
        (err: Error) => err instanceof RangeError && /cursor/.test(err.message),
      );
      await store.close();
    });

    test('behavior: every snapshot keeps the chain and protocol it was appended with, whatever its market had first', async () => {
      const store = await open();
      // The market is first named by a liquidation, with another chain and protocol.
      const l = liquidation(1, { marketKey: 'shared-key', chainId: 10, protocol: 'aave' });
      await store.appendLiquidations([l]);
      const rows = [
        snapshot({ marketKey: 'shared-key', at: T0 }),
        snapshot({ marketKey: 'shared-key', at: T0 + HOUR_MS, chainId: 10, protocol: 'aave' }),
        snapshot({ marketKey: 'shared-key', at: T0 + 2 * HOUR_MS, chainId: 8453 }),
        snapshot({ marketKey: 'shared-key', at: T0 + 3 * HOUR_MS, protocol: 'euler' }),
        snapshot({ marketKey: 'shared-key', granularity: 'day', at: T0, chainId: 10 }),
      ];
      assert.equal(await store.appendMarketSnapshots(shuffled(rows)), rows.length);
      assert.deepEqual(
        await store.marketSnapshots('shared-key', 'hour', 0, T0 + DAY_MS, 10),
        rows.slice(0, 4),
      );
      assert.deepEqual(await store.latestMarketSnapshot('shared-key', 'hour'), rows[3]);
      assert.deepEqual(await store.latestMarketSnapshot('shared-key', 'day'), rows[4]);
      assert.deepEqual(await store.liquidations({ marketKey: 'shared-key' }, 10), [l]);
      const other = liquidation(2, { marketKey: 'shared-key', chainId: 1, protocol: 'morpho' });
      await store.appendLiquidations([other]);
      assert.deepEqual(await store.liquidations({ marketKey: 'shared-key', protocol: 'morpho' }, 10), [
        other,
      ]);
      // one token address on two chains is two tokens; a feed may share a token's address
      const token = addr(0x5);
      await store.appendAssetPrices([
        price({ token, priceUsd: 1 }),
        price({ token, chainId: 10, priceUsd: 2 }),
      ]);
      await store.appendOracleRounds([round({ feed: token, chainId: 10 })]);
      assert.deepEqual(await store.assetPrices(10, token, 0, T0 + DAY_MS, 10), [
        price({ token, chainId: 10, priceUsd: 2 }),
      ]);
      assert.deepEqual(await store.oracleRounds(10, token, 0, T0 + DAY_MS, 10), [
        round({ feed: token, chainId: 10 }),
      ]);
      assert.deepEqual(await store.oracleRounds(1, token, 0, T0 + DAY_MS, 10), []);
      await store.close();
    });

    test('behavior: history pruned to nothing is appended again whole, under the same markets, tokens and feeds', async () => {
      const store = await open();
      const snapshots = [snapshot(), snapshot({ marketKey: 'm2', granularity: 'day' })];
      const prices = [price(), price({ token: addr(0xb) })];
      const rounds = [round(), round({ roundId: '2', updatedAt: T0 + 1 })];
      const liquidations = [liquidation(1), liquidation(2, { marketKey: 'm2' })];
      const appendAll = async () =>
        (await store.appendMarketSnapshots(snapshots)) +
        (await store.appendAssetPrices(prices)) +
        (await store.appendOracleRounds(rounds)) +
        (await store.appendLiquidations(liquidations));
      assert.equal(await appendAll(), 8);
      const all = Number.MAX_SAFE_INTEGER;
      assert.deepEqual(
        await store.pruneHistory({
          hourlySnapshots: all,
          dailySnapshots: all,
          assetPrices: all,
          oracleRounds: all,
          liquidations: all,
        }),
        { hourlySnapshots: 1, dailySnapshots: 1, assetPrices: 2, oracleRounds: 2, liquidations: 2 },
      );
      assert.equal(await store.latestMarketSnapshot('m2', 'day'), null);
      assert.equal(await appendAll(), 8);
      assert.equal(await appendAll(), 0);
      assert.deepEqual(await store.latestMarketSnapshot('m2', 'day'), snapshots[1]);
      assert.deepEqual(await store.assetPrices(1, addr(0xb), 0, T0 + DAY_MS, 10), [prices[1]]);
      assert.deepEqual(await store.oracleRounds(1, round().feed, 0, T0 + DAY_MS, 10), rounds);
      assert.deepEqual(await store.liquidations({ marketKey: 'm2' }, 10), [liquidations[1]]);
      await store.close();
    });

    test('behavior: an append the database refuses leaves no trace: the markets it named are named anew later', {
      skip: hooks ? false : 'needs the store test hooks',
    }, async () => {
      const store = await open();
      const refused = T0 + 100 * HOUR_MS;
      await hooks!.refuseSnapshotsAt(store, refused);
      const a = (at: number) => snapshot({ marketKey: 'market-a', chainId: 1, at });
      const b = (at: number) => snapshot({ marketKey: 'market-b', chainId: 8453, protocol: 'aave', at });
      // market-a is new: its id is taken, then given back by the rollback
      await assert.rejects(store.appendMarketSnapshots([a(T0), a(refused)]));
      assert.deepEqual(await store.historyCounts(), noRows);
      // market-b, new, may now get the id market-a had for a moment
      assert.equal(await store.appendMarketSnapshots([b(T0)]), 1);
      assert.equal(await store.appendMarketSnapshots([a(T0 + HOUR_MS)]), 1);
      assert.deepEqual(await store.marketSnapshots('market-a', 'hour', 0, T0 + DAY_MS, 10), [
        a(T0 + HOUR_MS),
      ]);
      assert.deepEqual(await store.marketSnapshots('market-b', 'hour', 0, T0 + DAY_MS, 10), [b(T0)]);
      // then liquidations: a new market, which may get the refused one's id, and the refused one
      await assert.rejects(store.appendMarketSnapshots([snapshot({ marketKey: 'market-c', at: refused })]));
      const d = liquidation(1, { marketKey: 'market-d' });
      const c = liquidation(2, { marketKey: 'market-c' });
      assert.equal(await store.appendLiquidations([d]), 1);
      assert.equal(await store.appendLiquidations([c]), 1);
      assert.deepEqual(await store.liquidations({ marketKey: 'market-c' }, 10), [c]);
      assert.deepEqual(await store.liquidations({ marketKey: 'market-d' }, 10), [d]);
      await store.close();
    });

    test("behavior: two stores on one database (two processes) append and read each other's markets, tokens and feeds", {
      skip: hooks ? false : 'needs the store test hooks',
    }, async () => {
      const first = await open();
      const second = await hooks!.reopen(first);
      await first.appendMarketSnapshots([snapshot({ marketKey: 'm1' })]);
      await second.appendMarketSnapshots([
        snapshot({ marketKey: 'm2' }),
        snapshot({ marketKey: 'm1', at: T0 + HOUR_MS }),
      ]);
      await first.appendMarketSnapshots([
        snapshot({ marketKey: 'm2', at: T0 + HOUR_MS }),
        snapshot({ marketKey: 'm1' }),
      ]);
      await second.appendAssetPrices([price()]);
      await first.appendAssetPrices([price(), price({ at: T0 + HOUR_MS })]);
      await first.appendOracleRounds([round()]);
      await second.appendOracleRounds([round(), round({ roundId: '2', updatedAt: T0 + 1 })]);
      await second.appendLiquidations([liquidation(1, { marketKey: 'm3' })]);
      await first.appendLiquidations([
        liquidation(2, { marketKey: 'm3' }),
        liquidation(3, { marketKey: 'm1' }),
      ]);
      for (const store of [first, second]) {
        for (const key of ['m1', 'm2']) {
          assert.deepEqual(await store.marketSnapshots(key, 'hour', 0, T0 + DAY_MS, 10), [
            snapshot({ marketKey: key }),
            snapshot({ marketKey: key, at: T0 + HOUR_MS }),
          ]);
        }
        assert.deepEqual(await store.assetPrices(1, price().token, 0, T0 + DAY_MS, 10), [
          price(),
          price({ at: T0 + HOUR_MS }),
        ]);
        assert.equal((await store.oracleRounds(1, round().feed, 0, T0 + DAY_MS, 10)).length, 2);
        assert.deepEqual(
          (await store.liquidations({ marketKey: 'm3' }, 10)).map((l) => l.txHash),
          [txHash(2), txHash(1)],
        );
        assert.deepEqual(await store.historyCounts(), {
          hourlySnapshots: 4,
          dailySnapshots: 0,
          assetPrices: 2,
          oracleRounds: 2,
          liquidations: 3,
        });
      }
      await second.close();
      await first.close();
    });

    test('behavior: a store migrated from schema version 5 keeps its history: the same reads, counts and natural keys', {
      skip: hooks ? false : 'needs the store test hooks',
    }, async () => {
      const key = (i: number) => `morpho-1-0x${i.toString(16).padStart(64, '0')}`;
      const snapshots = [
        ...Array.from({ length: 30 }, (_, i) =>
          snapshot({ marketKey: key(i % 3), at: T0 + Math.floor(i / 3) * HOUR_MS, supplyUsd: i + 0.1 }),
        ),
        ...[0, 1].map((d) => snapshot({ marketKey: key(0), granularity: 'day', at: T0 + d * DAY_MS })),
        // a row whose chain and protocol are not those of its market's other rows
        snapshot({ marketKey: key(1), at: T0 + 50 * HOUR_MS, chainId: 10, protocol: 'aave' }),
      ];
      const prices = [
        ...Array.from({ length: 5 }, (_, i) => price({ at: T0 + i * HOUR_MS, priceUsd: i })),
        price({ chainId: 8453 }),
      ];
      const rounds = [
        round({ roundId: '10', updatedAt: T0 + 5 }),
        round({ roundId: '9', updatedAt: T0 + 5 }),
        round({ roundId: '18446744073709551617', updatedAt: T0 + 9 }),
        round({ chainId: 10 }),
      ];
      const liquidations = [
        ...Array.from({ length: 6 }, (_, i) =>
          liquidation(i, { marketKey: key(i % 2), borrower: addr(0xb0 + (i % 3)), at: T0 + (i % 4) * 1000 }),
        ),
        // a market only liquidations name
        liquidation(7, { marketKey: 'aave-10-0xpool', chainId: 10, protocol: 'aave' }),
      ];
      const sources = [{ ...source(), refreshedAt: T0, lastBlock: { '1': 21_000_000 } }];
      const store = await hooks!.migratedFromVersion5({ snapshots, prices, rounds, liquidations, sources });
      assert.deepEqual(await store.historyCounts(), {
        hourlySnapshots: 31,
        dailySnapshots: 2,
        assetPrices: 6,
        oracleRounds: 4,
        liquidations: 7,
      });
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(
          await store.marketSnapshots(key(i), 'hour', 0, T0 + 10 * DAY_MS, 100),
          snapshots.filter((s) => s.marketKey === key(i) && s.granularity === 'hour'),
        );
      }
      assert.deepEqual(await store.latestMarketSnapshot(key(1), 'hour'), snapshots[32]);
      assert.deepEqual(await store.latestMarketSnapshot(key(0), 'day'), snapshots[31]);
      assert.deepEqual(await store.assetPrices(1, price().token, 0, T0 + DAY_MS, 10), prices.slice(0, 5));
      assert.deepEqual(await store.assetPrices(8453, price().token, 0, T0 + DAY_MS, 10), [prices[5]]);
      assert.deepEqual(await store.oracleRounds(1, round().feed, 0, T0 + DAY_MS, 10), rounds.slice(0, 3));
      assert.deepEqual(await store.oracleRounds(10, round().feed, 0, T0 + DAY_MS, 10), [rounds[3]]);
      assert.deepEqual(await store.liquidations({}, 100), newestFirst(liquidations));
      assert.deepEqual(
        await store.liquidations({ marketKey: key(1) }, 100),
        newestFirst(liquidations.filter((l) => l.marketKey === key(1))),
      );
      assert.deepEqual(
        await store.liquidations({ borrower: addr(0xb1) }, 100),
        newestFirst(liquidations.filter((l) => l.borrower === addr(0xb1))),
      );
      assert.deepEqual(await store.listSources(), [{ ...sources[0], cursor: null }]);
      // the natural keys still hold, and new markets, tokens and feeds get ids of their own
      assert.equal(await store.appendMarketSnapshots(snapshots), 0);
      assert.equal(await store.appendAssetPrices(prices), 0);
      assert.equal(await store.appendOracleRounds(rounds), 0);
      assert.equal(await store.appendLiquidations(liquidations), 0);
      const fresh = snapshot({ marketKey: key(9) });
      assert.equal(
        await store.appendMarketSnapshots([fresh, snapshot({ marketKey: key(0), at: T0 + DAY_MS })]),
        2,
      );
      assert.equal(await store.appendAssetPrices([price({ token: addr(0x99) })]), 1);
      assert.equal(await store.appendOracleRounds([round({ feed: addr(0x98) })]), 1);
      assert.deepEqual(await store.latestMarketSnapshot(key(9), 'hour'), fresh);
      assert.equal((await store.marketSnapshots(key(0), 'hour', 0, T0 + 10 * DAY_MS, 100)).length, 11);
      assert.deepEqual(await store.assetPrices(1, addr(0x99), 0, T0 + DAY_MS, 10), [
        price({ token: addr(0x99) }),
      ]);
      assert.deepEqual(await store.oracleRounds(1, addr(0x98), 0, T0 + DAY_MS, 10), [
        round({ feed: addr(0x98) }),
      ]);
      assert.deepEqual(await store.pruneHistory({ hourlySnapshots: T0 + HOUR_MS, liquidations: T0 + 1000 }), {
        hourlySnapshots: 4,
        dailySnapshots: 0,
        assetPrices: 0,
        oracleRounds: 0,
        liquidations: 2,
      });
      await store.close();
    });
  });
}
