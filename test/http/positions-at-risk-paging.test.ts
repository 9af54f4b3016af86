import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PAGE_SNAPSHOT_TTL_MS } from '../../src/data/page-snapshots.ts';
import { applyPrices, type ReadModel } from '../../src/data/read-model.ts';
import { RedisPageSnapshots } from '../../src/data/redis-page-snapshots.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
  tiersWith,
} from '../helpers.ts';
import { REDIS_URL, redisReachable } from '../redis-helpers.ts';

// Two markets on two chains; 30 positions at risk in each, health factors 0.90 to 1.09.
const m1 = makeMarket({ lltv: 0.8 });
const m2 = makeMarket({
  protocol: 'aave',
  chainId: 42161,
  uniqueKey: 'aave-42161-0xpool_0xcollateral_0xloan',
  lltv: 0.8,
});
const positionsOf = (m: typeof m1, shift: number) =>
  Array.from({ length: 30 }, (_, i) => {
    const hf = 0.9 + i * 0.0065 + shift;
    return makePosition(m, { collateralUsd: (hf * 10_000) / 0.8, borrowUsd: 10_000 + i });
  });
const all = [...positionsOf(m1, 0), ...positionsOf(m2, 0.003)];

type Page = {
  data: { user: { address: string }; market: { uniqueKey: string }; healthFactor: number }[];
  meta: { total?: number; nextCursor?: string; asOf: string };
};
const keyOf = (p: Page['data'][number]) => `${p.market.uniqueKey}/${p.user.address}`;

/** Moves m1's collateral (chain 1) by `ratio`: every m1 position's health factor follows. */
function moveM1(model: ReadModel, ratio: number, atMs: number) {
  applyPrices(model, [{ chainId: 1, token: m1.collateralAddress, ratio }], atMs);
}

describe('GET /risk/positions-at-risk: paging the whole set', () => {
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  let t: TestApp;
  let model: ReadModel;
  let pro: string;

  before(async () => {
    model = modelOf([m1, m2], all, clock);
    // A result cap of 50 for the pro tier (the route's own maximum is 200).
    const tiers = tiersWith((all) => {
      for (const tier of Object.values(all)) tier.ratePerSecond = 1_000_000;
      all.pro!.resultCap = 50;
    });
    t = await createTestApp({ clock, tiers, live: model });
    pro = await t.key('pro');
  });
  after(() => t.close());

  const page = async (qs: string) => {
    const res = await t.get(`/api/v1/risk/positions-at-risk?${qs}`, pro);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Page;
  };
  /** The whole set now, paged by 50 (the tier's cap). */
  const whole = async () => {
    let p = await page('limit=50');
    const keys = p.data.map(keyOf);
    while (p.meta.nextCursor) {
      p = await page(`limit=50&cursor=${p.meta.nextCursor}`);
      keys.push(...p.data.map(keyOf));
    }
    return keys;
  };

  test('default: limit bounds a page, the cursor walks the whole set, meta.total on every page', async () => {
    const first = await page('limit=25');
    assert.equal(first.data.length, 25);
    assert.equal(first.meta.total, 60);
    assert.ok(first.meta.nextCursor);
    const seen = first.data.map(keyOf);
    let cursor: string | undefined = first.meta.nextCursor;
    let pages = 1;
    while (cursor) {
      const next = await page(`limit=25&cursor=${cursor}`);
      assert.equal(next.meta.total, 60);
      assert.equal(next.meta.asOf, first.meta.asOf);
      seen.push(...next.data.map(keyOf));
      cursor = next.meta.nextCursor;
      pages++;
    }
    assert.equal(pages, 3);
    assert.equal(seen.length, 60);
    assert.equal(new Set(seen).size, 60);
    // Health factor ascending, then debt descending.
    const hfs: number[] = [];
    for (const k of seen) {
      const p = all.find((x) => `${x.marketKey}/${x.user}` === k)!;
      hfs.push(p.healthFactor);
    }
    assert.deepEqual(
      hfs,
      [...hfs].sort((x, y) => x - y),
    );
  });

  test('behavior: prices moving between pages neither repeat nor skip a position', async () => {
    clock.advance(2_000);
    const first = await page('limit=20');
    const firstSet = await whole();
    // m1's positions fall below every m2 position, some drop out of the set, others join it.
    clock.advance(1_000);
    moveM1(model, 0.9, clock.now());
    const moved = await whole();
    assert.notDeepEqual(moved, firstSet);
    const seen = first.data.map(keyOf);
    let cursor: string | undefined = first.meta.nextCursor;
    while (cursor) {
      clock.advance(60_000);
      moveM1(model, 1.15 - (seen.length % 3) * 0.1, clock.now());
      const next = await page(`limit=20&cursor=${cursor}`);
      assert.equal(next.meta.total, firstSet.length);
      assert.equal(next.meta.asOf, first.meta.asOf);
      seen.push(...next.data.map(keyOf));
      cursor = next.meta.nextCursor;
    }
    assert.deepEqual(seen, firstSet);
    moveM1(model, 1, clock.now());
  });

  test('error: a cursor is refused 10 minutes after its first page, naming when it expired', async () => {
    clock.advance(2_000);
    const first = await page('limit=10');
    const expiry = new Date(clock.now() + PAGE_SNAPSHOT_TTL_MS).toISOString();
    clock.advance(PAGE_SNAPSHOT_TTL_MS - 1);
    assert.equal((await page(`limit=10&cursor=${first.meta.nextCursor}`)).data.length, 10);
    clock.advance(1);
    const res = await t.get(`/api/v1/risk/positions-at-risk?limit=10&cursor=${first.meta.nextCursor}`, pro);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'INVALID_PARAMETER');
    assert.match(res.json().message, new RegExp(`expired at ${expiry.replace(/\./g, '\\.')}`));
  });

  test('error: a cursor with other parameters, or not a cursor, is refused', async () => {
    clock.advance(2_000);
    const first = await page('limit=10');
    const other = await t.get(
      `/api/v1/risk/positions-at-risk?limit=10&healthFactorThreshold=1.05&cursor=${first.meta.nextCursor}`,
      pro,
    );
    assert.equal(other.statusCode, 400);
    assert.match(other.json().message, /other parameters/);
    const bogus = await t.get('/api/v1/risk/positions-at-risk?cursor=abc', pro);
    assert.equal(bogus.statusCode, 400);
    assert.equal(bogus.json().error, 'INVALID_PARAMETER');
  });

  test("behavior: the tier's result cap bounds each page, not the set", async () => {
    clock.advance(2_000);
    const first = await page('limit=1000');
    assert.equal(first.data.length, 50);
    assert.equal(first.meta.total, 60);
    const second = await page(`limit=1000&cursor=${first.meta.nextCursor}`);
    assert.equal(second.data.length, 10);
    assert.equal(second.meta.nextCursor, undefined);
  });

  test('behavior: the MCP tool pages the same set', async () => {
    clock.advance(2_000);
    const enterprise = await t.key('enterprise');
    const call = async (args: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/agent/mcp',
        headers: {
          authorization: `Bearer ${enterprise}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'positions_at_risk', arguments: args },
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().result.structuredContent as Page;
    };
    const first = await call({ limit: 40 });
    assert.equal(first.meta.total, 60);
    const second = await call({ limit: 40, cursor: first.meta.nextCursor });
    assert.equal(second.meta.nextCursor, undefined);
    const seen = [...first.data, ...second.data].map(keyOf);
    assert.deepEqual(seen, await whole());
  });
});

describe('GET /risk/positions-at-risk: pages served by two instances (Redis)', async () => {
  const reachable = await redisReachable();
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const prefix = `lrds-test-paging-${process.pid}-${Date.now()}:`;
  let a: TestApp;
  let b: TestApp;
  let snapsA: RedisPageSnapshots;
  let snapsB: RedisPageSnapshots;
  let modelB: ReadModel;

  before(async () => {
    if (!reachable) return;
    snapsA = new RedisPageSnapshots(REDIS_URL, { prefix });
    snapsB = new RedisPageSnapshots(REDIS_URL, { prefix });
    a = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      live: modelOf([m1, m2], all, clock),
      pageSnapshots: snapsA,
    });
    modelB = modelOf([m1, m2], all, clock);
    b = await createTestApp({ clock, tiers: GENEROUS_TIERS, live: modelB, pageSnapshots: snapsB });
  });
  after(async () => {
    if (!reachable) return;
    await a.close();
    await b.close();
    await snapsA.close();
    await snapsB.close();
  });

  test('default: a later page from the other instance continues the set its first page took', {
    skip: !reachable && 'no Redis at 127.0.0.1:6379',
  }, async () => {
    const get = async (app: TestApp, qs: string) => {
      const key = await app.key('pro');
      const res = await app.get(`/api/v1/risk/positions-at-risk?${qs}`, key);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Page;
    };
    const first = await get(a, 'limit=50');
    const whole = (await get(a, 'limit=200')).data.map(keyOf);
    // Instance b's market has moved since: its own first page would differ.
    clock.advance(1_000);
    moveM1(modelB, 0.9, clock.now());
    assert.notDeepEqual((await get(b, 'limit=200')).data.map(keyOf), whole);
    const second = await get(b, `limit=50&cursor=${first.meta.nextCursor}`);
    assert.equal(second.meta.total, 60);
    assert.equal(second.meta.asOf, first.meta.asOf);
    assert.deepEqual([...first.data, ...second.data].map(keyOf), whole);
    clock.advance(PAGE_SNAPSHOT_TTL_MS);
    const res = await b.get(
      `/api/v1/risk/positions-at-risk?limit=50&cursor=${first.meta.nextCursor}`,
      await b.key('pro'),
    );
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /expired at/);
  });
});

describe('GET /risk/positions-at-risk: the snapshot store unreachable', () => {
  test('error: a page that needs the shared snapshots answers 503, a page that fits answers', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    // Nothing listens on port 1.
    const snaps = new RedisPageSnapshots('redis://127.0.0.1:1', { prefix: 'lrds-test-down:' });
    const t = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      live: modelOf([m1, m2], all, clock),
      pageSnapshots: snaps,
    });
    try {
      const key = await t.key('pro');
      const res = await t.get('/api/v1/risk/positions-at-risk?limit=10', key);
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error, 'SERVICE_UNAVAILABLE');
      const whole = await t.get('/api/v1/risk/positions-at-risk?limit=200', key);
      assert.equal(whole.statusCode, 200);
      assert.equal(whole.json().meta.total, 60);
    } finally {
      await t.close();
      await snaps.close();
    }
  });
});
