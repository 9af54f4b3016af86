import assert from 'node:assert/strict';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { LiquidationEvent, MarketSnapshot, OracleRound } from '../../src/domain/records/history.ts';
import { LIQUIDATION_PAGE } from '../../src/queries/history.ts';
import { StoreUnavailableError } from '../../src/store/unavailable.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';

/**
 * The history routes over the store's history: GET /markets/{id}/history, GET /liquidations
 * (JSON and NDJSON, streamed), GET /oracles/{chainId}/{address}/rounds. Windows, clamps, cursors.
 */

const NOW = Date.parse('2026-11-22T12:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const clock = new ManualClock(NOW);
const m = makeMarket();
const mb = makeMarket({ chainId: 8453, protocol: 'aave', uniqueKey: 'aave-8453-0xpool_0xc_0xl' });
const feed = m.oracle!.feeds[0]!.address;

function snapshot(at: number, granularity: 'hour' | 'day', n: number): MarketSnapshot {
  return {
    marketKey: m.uniqueKey,
    chainId: 1,
    protocol: 'morpho',
    at,
    granularity,
    supplyUsd: 1_000_000 + n,
    borrowUsd: 500_000,
    utilization: 0.5,
    supplyApy: 0.02,
    borrowApy: 0.04,
    collateralPriceUsd: 4000,
    loanPriceUsd: 3300,
    oraclePrice: 1.2121212,
  };
}

const midnight = Math.floor(NOW / DAY) * DAY;
// Daily points for the 100 days before today; hourly for the last 48 hours and one 35 days ago.
const daily = Array.from({ length: 100 }, (_, i) => snapshot(midnight - (100 - i) * DAY, 'day', i));
const hourly = [
  snapshot(midnight - 35 * DAY, 'hour', -1),
  ...Array.from({ length: 48 }, (_, i) => snapshot(NOW - (48 - i) * HOUR, 'hour', i)),
];

const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
// 30 liquidations, one every 2 days back from now: even ones on Ethereum, odd ones on Base.
const liquidations: LiquidationEvent[] = Array.from({ length: 30 }, (_, i) => ({
  protocol: i % 2 ? 'aave' : 'morpho',
  chainId: i % 2 ? 8453 : 1,
  txHash: `0x${hex(i + 1, 64)}`,
  logIndex: 0,
  block: 1_000 + i,
  at: NOW - i * 2 * DAY - HOUR,
  marketKey: i % 2 ? mb.uniqueKey : m.uniqueKey,
  borrower: `0x${hex(i % 3, 40)}`,
  liquidator: `0x${hex(0xff, 40)}`,
  collateralSeized: 1.5,
  collateralSeizedUsd: 6000,
  debtRepaid: 1000 * (i + 1),
  debtRepaidUsd: 1000 * (i + 1),
  badDebt: 0,
  badDebtUsd: 0,
}));
const rounds: OracleRound[] = Array.from({ length: 10 }, (_, i) => ({
  chainId: 1,
  feed,
  roundId: String(100 + i),
  answer: 3300 + i,
  updatedAt: NOW - (10 - i) * HOUR,
}));

let t: TestApp;
let pro: string;
let free: string;
let proTest: string;

before(async () => {
  const live = modelOf([m, mb], [makePosition(m)], clock);
  live.stored = true;
  t = await createTestApp({ clock, tiers: GENEROUS_TIERS, live, sandbox: modelOf([m, mb], [], clock) });
  await t.store.appendMarketSnapshots([...daily, ...hourly]);
  await t.store.appendLiquidations(liquidations);
  await t.store.appendOracleRounds(rounds);
  pro = await t.key('pro');
  free = await t.key('free');
  proTest = await t.key('pro', 'test');
});
after(() => t.close());

const iso = (ms: number) => new Date(ms).toISOString();

describe('GET /markets/{marketId}/history', () => {
  test('default: daily points of the tier window, oldest first, paged by cursor', async () => {
    const first = (await t.get(`/api/v1/markets/${m.uniqueKey}/history`, pro)).json();
    // Pro: 90 days back from now (2026-08-24T12:00Z): the first whole day is 08-25.
    assert.equal(first.data[0].at, '2026-08-25T00:00:00.000Z');
    assert.equal(first.data.length, 50);
    assert.deepEqual(first.data[0], {
      at: '2026-08-25T00:00:00.000Z',
      supply: 1_000_011,
      borrow: 500_000,
      utilization: 0.5,
      supplyApy: 0.02,
      borrowApy: 0.04,
      collateralPrice: 4000,
      loanPrice: 3300,
      oraclePrice: 1.2121212,
    });
    assert.equal(first.meta.clamped, undefined, 'the default window is not a clamp');
    const second = (
      await t.get(`/api/v1/markets/${m.uniqueKey}/history?cursor=${first.meta.nextCursor}`, pro)
    ).json();
    assert.equal(second.data.length, 39); // 08-25 .. 11-21: 89 days
    assert.equal(second.data.at(-1).at, '2026-11-21T00:00:00.000Z');
    assert.equal(second.meta.nextCursor, undefined);
  });

  test('behavior: startDate raised to the tier window (clamped); endDate includes its day', async () => {
    const res = (
      await t.get(`/api/v1/markets/${m.uniqueKey}/history?startDate=2026-01-01&endDate=2026-10-25`, free)
    ).json();
    assert.deepEqual(res.meta.clamped, {
      startDate: { requested: '2026-01-01T00:00:00.000Z', applied: iso(NOW - 30 * DAY) },
    });
    assert.deepEqual(
      res.data.map((p: { at: string }) => p.at.slice(0, 10)),
      ['2026-10-24', '2026-10-25'],
    );
  });

  test('behavior: hourly points of the last 30 days only', async () => {
    const res = (
      await t.get(`/api/v1/markets/${m.uniqueKey}/history?interval=hour&startDate=2026-10-01&limit=100`, pro)
    ).json();
    assert.equal(res.data.length, 48);
    assert.equal(res.data[0].at, iso(NOW - 48 * HOUR));
    assert.deepEqual(res.meta.clamped.startDate, {
      requested: '2026-10-01T00:00:00.000Z',
      applied: iso(NOW - 30 * DAY),
    });
  });

  test('error: endDate before startDate, unknown market, bad interval; test keys get no stored history', async () => {
    const bad = await t.get(
      `/api/v1/markets/${m.uniqueKey}/history?startDate=2026-11-10&endDate=2026-11-09`,
      pro,
    );
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json().details, [{ parameter: 'endDate', problem: 'must not be before startDate' }]);
    const unknown = await t.get(`/api/v1/markets/morpho-1-0x${'9'.repeat(64)}/history`, pro);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'MARKET_NOT_FOUND');
    assert.equal((await t.get(`/api/v1/markets/${m.uniqueKey}/history?interval=week`, pro)).statusCode, 400);
    const sandbox = (await t.get(`/api/v1/markets/${m.uniqueKey}/history`, proTest)).json();
    assert.deepEqual(sandbox.data, []);
  });
});

describe('GET /liquidations', () => {
  const hashes = (body: { data: { txHash: string }[] }) =>
    body.data.map((l) => Number.parseInt(l.txHash, 16) - 1);

  test('default: newest first over the tier window, every field', async () => {
    const res = await t.get('/api/v1/liquidations', pro);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers.etag, undefined);
    const body = res.json();
    // Pro: 90 days: i = 0..29 are all within (the oldest 58 days and 1 hour back).
    assert.deepEqual(
      hashes(body),
      Array.from({ length: 30 }, (_, i) => i),
    );
    assert.deepEqual(body.data[1], {
      protocol: 'aave',
      chainId: 8453,
      txHash: `0x${hex(2, 64)}`,
      logIndex: 0,
      block: 1001,
      timestamp: iso(NOW - 2 * DAY - HOUR),
      marketId: mb.uniqueKey,
      collateral: 'wstETH',
      loan: 'WETH',
      borrower: `0x${hex(1, 40)}`,
      liquidator: `0x${hex(0xff, 40)}`,
      collateralSeized: 1.5,
      collateralSeizedUsd: 6000,
      debtRepaid: 2000,
      debtRepaidUsd: 2000,
      badDebt: 0,
      badDebtUsd: 0,
    });
    assert.equal(body.meta.source, 'aave,morpho');
    assert.equal(body.meta.nextCursor, undefined);
  });

  test('behavior: filters by chain, protocol, borrower, market, amount and dates', async () => {
    const get = async (qs: string, key = pro) =>
      hashes((await t.get(`/api/v1/liquidations?${qs}`, key)).json());
    const all = Array.from({ length: 30 }, (_, i) => i);
    assert.deepEqual(
      await get('chainIds=8453'),
      all.filter((i) => i % 2),
    );
    assert.deepEqual(
      await get('protocol=morpho'),
      all.filter((i) => i % 2 === 0),
    );
    assert.deepEqual(
      await get(`borrower=0x${hex(2, 40)}`),
      all.filter((i) => i % 3 === 2),
    );
    assert.deepEqual(
      await get(`marketId=${mb.uniqueKey.toUpperCase()}`),
      all.filter((i) => i % 2),
    );
    assert.deepEqual(await get('minRepaidUsd=25000'), [24, 25, 26, 27, 28, 29]);
    // endDate 11-18 includes the whole day: i = 2 (11-18 11:00) and older
    assert.deepEqual(await get('startDate=2026-11-10&endDate=2026-11-18'), [2, 3, 4, 5, 6]);
    // Free: Ethereum, 30 days (i * 2 days + 1 h <= 30 days: i <= 14)
    assert.deepEqual(
      await get('', free),
      all.filter((i) => i % 2 === 0 && i <= 14),
    );
    // a test key is served the sandbox, which has no stored history here
    assert.deepEqual(await get('', proTest), []);
  });

  test('behavior: limit and cursor walk every liquidation once', async () => {
    const seen: number[] = [];
    let cursor = '';
    for (let n = 0; n < 10; n++) {
      const body = (
        await t.get(`/api/v1/liquidations?limit=7${cursor ? `&cursor=${cursor}` : ''}`, pro)
      ).json();
      seen.push(...hashes(body));
      if (!body.meta.nextCursor) break;
      cursor = body.meta.nextCursor;
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 30 }, (_, i) => i),
    );
  });

  test('behavior: NDJSON on request: one liquidation per line, then the meta', async () => {
    const res = await t.get('/api/v1/liquidations?limit=3&chainIds=1', pro, {
      accept: 'application/x-ndjson',
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
    const lines = res.body.split('\n');
    assert.equal(lines.at(-1), '');
    const values = lines.slice(0, -1).map((l) => JSON.parse(l));
    assert.equal(values.length, 4);
    assert.deepEqual(
      values.slice(0, 3).map((v) => v.chainId),
      [1, 1, 1],
    );
    assert.equal(values[3].meta.source, 'morpho');
    assert.ok(values[3].meta.nextCursor);
    // Compressed as it is written when the client accepts it.
    const gz = await t.get('/api/v1/liquidations?chainIds=1', pro, {
      accept: 'application/x-ndjson',
      'accept-encoding': 'gzip',
    });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    const lines2 = gunzipSync(gz.rawPayload).toString('utf8').trim().split('\n');
    assert.equal(lines2.length, 16); // 15 on Ethereum, then the meta
  });

  test("behavior: the limit is clamped to the tier's result cap and reported", async () => {
    const body = (await t.get('/api/v1/liquidations?limit=100000&chainIds=1', free)).json();
    assert.deepEqual(body.meta.clamped.limit, { requested: 100_000, applied: 100 });
  });

  test('error: a bad cursor or date is 400 before anything is streamed', async () => {
    for (const qs of [
      'cursor=bm90LWEtY3Vyc29y',
      'startDate=2026-02-30',
      'limit=0',
      'minRepaidUsd=-1',
      'borrower=0x1',
    ]) {
      const res = await t.get(`/api/v1/liquidations?${qs}`, pro);
      assert.equal(res.statusCode, 400, qs);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
    }
  });
});

describe('GET /oracles/{chainId}/{address}/rounds', () => {
  test('default: the rounds of its feeds, oldest first, paged', async () => {
    const path = `/api/v1/oracles/1/${m.oracle!.address}/rounds`;
    const first = (await t.get(`${path}?limit=4`, pro)).json();
    assert.deepEqual(first.data[0], {
      feed,
      roundId: '100',
      answer: 3300,
      updatedAt: (NOW - 10 * HOUR) / 1000,
    });
    const ids: string[] = first.data.map((r: { roundId: string }) => r.roundId);
    let cursor = first.meta.nextCursor;
    while (cursor) {
      const page = (await t.get(`${path}?limit=4&cursor=${cursor}`, pro)).json();
      ids.push(...page.data.map((r: { roundId: string }) => r.roundId));
      cursor = page.meta.nextCursor;
    }
    assert.deepEqual(
      ids,
      rounds.map((r) => r.roundId),
    );
    const recent = (await t.get(`${path}?startDate=${iso(NOW - 3 * HOUR)}`, pro)).json();
    assert.deepEqual(
      recent.data.map((r: { roundId: string }) => r.roundId),
      ['107', '108', '109'],
    );
  });

  test('error: a feed the oracle does not list is 400', async () => {
    const res = await t.get(`/api/v1/oracles/1/${m.oracle!.address}/rounds?feed=0x${'3'.repeat(40)}`, pro);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().details[0].parameter, 'feed');
  });
});

describe('GET /liquidations: cost and faults', () => {
  test('behavior: a filter nothing matches reads the history a bounded page at a time', async () => {
    const reads: number[] = [];
    const counting = {
      marketSnapshots: t.store.marketSnapshots.bind(t.store),
      oracleRounds: t.store.oracleRounds.bind(t.store),
      dailyMarketTotals: t.store.dailyMarketTotals.bind(t.store),
      dailyLiquidationTotals: t.store.dailyLiquidationTotals.bind(t.store),
      researchReports: t.store.researchReports.bind(t.store),
      researchReport: t.store.researchReport.bind(t.store),
      liquidations: async (...args: Parameters<typeof t.store.liquidations>) => {
        reads.push(args[1]);
        return t.store.liquidations(...args);
      },
    };
    const live = modelOf([m, mb], [], clock);
    live.stored = true;
    const app = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      live,
      store: t.store,
      history: counting,
    });
    const key = await app.key('enterprise', 'live', 'cost');
    const res = await app.get('/api/v1/liquidations?minRepaidUsd=1000000000&limit=500000', key);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().data, []);
    assert.ok(reads.length >= 1 && reads.every((n) => n <= LIQUIDATION_PAGE), String(reads));
    await app.app.close();
  });

  test('error: a history that cannot answer is a 503 before the stream; a failure later cuts it without its meta', async () => {
    let calls = 0;
    const failing = (failAt: number) => ({
      marketSnapshots: t.store.marketSnapshots.bind(t.store),
      oracleRounds: t.store.oracleRounds.bind(t.store),
      dailyMarketTotals: t.store.dailyMarketTotals.bind(t.store),
      dailyLiquidationTotals: t.store.dailyLiquidationTotals.bind(t.store),
      researchReports: t.store.researchReports.bind(t.store),
      researchReport: t.store.researchReport.bind(t.store),
      liquidations: async (...args: Parameters<typeof t.store.liquidations>) => {
        if (++calls >= failAt) throw new StoreUnavailableError('history store down');
        // a full read, so the stream reads again
        const one = (await t.store.liquidations(...args))[0]!;
        return Array.from({ length: LIQUIDATION_PAGE }, (_, i) => ({ ...one, logIndex: i }));
      },
    });
    const live = modelOf([m, mb], [], clock);
    live.stored = true;
    for (const failAt of [1, 2]) {
      calls = 0;
      const app = await createTestApp({
        clock,
        tiers: GENEROUS_TIERS,
        live,
        store: t.store,
        history: failing(failAt),
      });
      const key = await app.key('enterprise', 'live', `fault-${failAt}`);
      if (failAt === 1) {
        const res = await app.get('/api/v1/liquidations', key);
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error, 'SERVICE_UNAVAILABLE');
      } else {
        // Over a socket: the body is cut after the first read's lines, with no meta line (a
        // client knows the answer is incomplete).
        await app.app.listen({ port: 0, host: '127.0.0.1' });
        const { port } = app.app.server.address() as AddressInfo;
        const res = await new Promise<string>((resolve) => {
          let body = '';
          get(
            `http://127.0.0.1:${port}/api/v1/liquidations?limit=5000`,
            { headers: { authorization: `Bearer ${key}`, accept: 'application/x-ndjson' } },
            (r) => {
              r.setEncoding('utf8');
              r.on('data', (d: string) => {
                body += d;
              });
              r.on('end', () => resolve(body));
              r.on('error', () => resolve(body));
              r.on('aborted', () => resolve(body));
            },
          ).on('error', () => resolve(body));
          setTimeout(() => resolve(`${body}\nTIMED OUT`), 5000).unref();
        });
        assert.ok(!res.endsWith('TIMED OUT'), 'the connection is ended, not left hanging');
        assert.equal(res.split('\n').filter((l) => l.includes('"txHash"')).length, LIQUIDATION_PAGE);
        assert.ok(!res.includes('"meta"'), res.slice(-300));
      }
      await app.app.close();
    }
  });
});
