import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResearchJob } from '../../src/data/research-job.ts';
import type { RatingChange, ResearchReportRow } from '../../src/domain/records/history.ts';
import { buildDigest } from '../../src/domain/research.ts';
import { listReports, SCAN_LIMIT } from '../../src/queries/research.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  daySnapshot,
  liquidationOf,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
  tiersWith,
} from '../helpers.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const DAY = 86_400_000;
const midnight = Math.floor(NOW / DAY) * DAY;
// A clock between two milliseconds, as the service's is (performance.now() based).
const clock = new ManualClock(NOW + 0.25);

const a = makeMarket({ lltv: 0.8, collateral: 'WETH', loan: 'USDC' });
const b = makeMarket({ chainId: 8453, lltv: 0.8, collateral: 'cbBTC', loan: 'USDC' });
const c = makeMarket({ protocol: 'aave', uniqueKey: 'aave-1-0xpool_0xc_0xl', lltv: 0.8 });

let t: TestApp;
let live: ReturnType<typeof modelOf>;
let pro: string;
let free: string;
const d3 = midnight - 3 * DAY;
const d2 = midnight - 2 * DAY;
const d1 = midnight - DAY;

before(async () => {
  // a position near liquidation (1.04) for the live section of yesterday's digest
  live = modelOf([a, b, c], [makePosition(a, { collateralUsd: 13_000, borrowUsd: 10_000 })], clock);
  live.stored = true;
  t = await createTestApp({
    clock,
    live,
    tiers: tiersWith((tiers) => {
      for (const tier of Object.values(tiers)) tier.ratePerSecond = 1_000_000;
      tiers.pro!.chains = [1];
    }),
  });
  await t.store.appendMarketSnapshots([
    daySnapshot(a, d3, 1_000, 500),
    daySnapshot(a, d2, 1_000, 700), // +20 points: a spike
    daySnapshot(b, d2, 2_000, 200),
    daySnapshot(c, d2, 500, 100),
    daySnapshot(a, d1, 1_000, 710),
    daySnapshot(c, midnight - 200 * DAY, 100, 10), // before the Pro window (90 days)
    daySnapshot(b, d1, 2_000, 300),
  ]);
  await t.store.appendLiquidations([
    liquidationOf(1, a, d2 + 3_600_000, 400, 10),
    liquidationOf(2, b, d2 + 60_000, 900),
    liquidationOf(3, a, d1 + 1, 50),
  ]);
  const job = new ResearchJob({ model: () => live, store: t.store, clock });
  await job.runDue();
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

describe('ResearchJob', () => {
  test('one digest per day and protocol with history; again writes nothing', async () => {
    const rows = await t.store.researchReports({ fromMs: 0, toMs: midnight }, 100);
    assert.deepEqual(
      rows.map((r) => r.id),
      ['2026-11-21-morpho', '2026-11-20-morpho', '2026-11-20-aave', '2026-11-19-morpho', '2026-05-06-aave'],
    );
    const job = new ResearchJob({ model: () => null, store: t.store, clock });
    assert.equal(await job.runDue(), 0);
    const again = new ResearchJob({ model: () => live, store: t.store, clock });
    assert.equal(await again.runDue(), 0);
  });

  test('the next day is written once it is over, with its live sections', async () => {
    const job = new ResearchJob({ model: () => live, store: t.store, clock });
    await t.store.appendMarketSnapshots([daySnapshot(a, midnight, 1_000, 720)]);
    // At 00:30 the day's last hour of history may not be written yet: not digested.
    clock.set(midnight + DAY + 30 * 60_000);
    assert.equal(await job.runDue(), 0);
    clock.set(NOW + DAY);
    assert.equal(await job.runDue(), 1);
    const r = JSON.parse((await t.store.researchReport('2026-11-22-morpho'))!.body);
    assert.equal(r.liveAsOf, new Date(Math.floor(NOW + DAY)).toISOString());
    clock.set(NOW);
  });
});

describe('ResearchJob and ratings not graded', () => {
  test("behavior: a day's step into NR (no score) is not among the digest's rating changes; a step out of it is", async () => {
    const change = (subject: string, at: number, over: Partial<RatingChange>): RatingChange => ({
      kind: 'market',
      subject,
      chainId: 1,
      at,
      methodology: '2.0.0',
      grade: 'A',
      score: 72,
      reason: null,
      previousGrade: 'AA',
      previousScore: 81,
      components: { oracle: 90 },
      ...over,
    });
    const written: ResearchReportRow[] = [];
    const store = {
      daySnapshots: t.store.daySnapshots.bind(t.store),
      liquidations: t.store.liquidations.bind(t.store),
      ratingChangesBetween: async (fromMs: number, toMs: number) =>
        [
          change(a.uniqueKey, d1 + 1, { grade: 'NR', score: null, reason: 'Not graded: $1,000 supplied.' }),
          change(b.uniqueKey, d1 + 2, { chainId: 8453, previousGrade: 'NR', previousScore: null }),
        ].filter((r) => r.at >= fromMs && r.at < toMs),
      appendResearchReports: async (rows: readonly ResearchReportRow[]) => {
        written.push(...rows);
        return rows.length;
      },
      lastResearchDay: async () => d2,
    };
    const job = new ResearchJob({ model: () => live, store, clock });
    await job.runDue();
    const report = written.find((r) => r.id === '2026-11-21-morpho');
    assert.ok(report, 'yesterday digest written');
    assert.deepEqual(
      JSON.parse(report.body).ratingChanges.map(
        (r: { subject: string; grade: string; previousGrade: string | null }) => [
          r.subject,
          r.grade,
          r.previousGrade,
        ],
      ),
      [[b.uniqueKey, 'A', 'NR']],
    );
  });
});

describe('ResearchJob when the store fails', () => {
  test('error: a failing read is reported, nothing is written, and the run is tried again a minute later', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    let failing = true;
    const store = {
      daySnapshots: async (day: number) => {
        calls++;
        if (failing) throw new Error('store down');
        return t.store.daySnapshots(day);
      },
      liquidations: t.store.liquidations.bind(t.store),
      ratingChangesBetween: t.store.ratingChangesBetween.bind(t.store),
      appendResearchReports: async (): Promise<number> => {
        if (failing) assert.fail('nothing is written while reads fail');
        return 0;
      },
      lastResearchDay: async () => null,
    };
    const job = new ResearchJob({ model: () => live, store, clock, onError: (e) => errors.push(e) });
    assert.equal(await job.runDue(), 0);
    assert.equal(errors.length, 1);
    const before = calls;
    assert.equal(await job.runDue(), 0); // within the minute: not tried
    assert.equal(calls, before);
    failing = false;
    clock.advance(60_000);
    assert.equal(await job.runDue(), 0); // tried again (every report is already stored: 0 added)
    assert.ok(calls > before);
    assert.equal(errors.length, 1);
    clock.advance(-60_000);
  });
});

describe('GET /research/reports', () => {
  test('newest first, narrowed to the tier chains (Pro here: Ethereum only), paged by cursor', async () => {
    const first = (await t.get('/api/v1/research/reports?limit=2', pro)).json();
    assert.deepEqual(
      first.data.map((r: { id: string; chainIds: number[] }) => [r.id, r.chainIds]),
      [
        ['2026-11-22-morpho', [1]],
        ['2026-11-21-morpho', [1]],
      ],
    );
    const next = (
      await t.get(`/api/v1/research/reports?limit=2&cursor=${first.meta.nextCursor}`, pro)
    ).json();
    assert.deepEqual(
      next.data.map((r: { id: string }) => r.id),
      ['2026-11-20-morpho', '2026-11-20-aave'],
    );
  });

  test('protocol filter; Free tier 403', async () => {
    const aave = (await t.get('/api/v1/research/reports?protocol=aave', pro)).json();
    assert.deepEqual(
      aave.data.map((r: { id: string }) => r.id),
      ['2026-11-20-aave'],
    );
    assert.equal((await t.get('/api/v1/research/reports', free)).statusCode, 403);
  });
});

describe('GET /research/reports/{id}', () => {
  test('the digest of a day, hand-checked, with its Markdown; Base left out for an Ethereum-only tier', async () => {
    const res = await t.get('/api/v1/research/reports/2026-11-20-morpho', pro);
    assert.equal(res.statusCode, 200);
    const r = res.json().data;
    assert.deepEqual(
      r.chains.map((x: { chainId: number }) => x.chainId),
      [1],
    );
    assert.deepEqual(r.chains[0], {
      chainId: 1,
      markets: 1,
      supplyUsd: 1_000,
      borrowUsd: 700,
      utilization: 0.7,
      supplyChange: 0,
      liquidations: 1,
      unpricedLiquidations: 0,
      liquidatedDebtUsd: 400,
      badDebtUsd: 10,
      utilizationSpikes: 1,
      staleOracles: null,
    });
    assert.deepEqual(
      r.utilizationSpikes.map((s: { marketId: string; change: number }) => [s.marketId, s.change]),
      [[a.uniqueKey, 0.2]],
    );
    assert.deepEqual(r.highlights.slice(0, 2), [
      'Liquidations left $10 of bad debt.',
      '1 liquidation repaid $400 of debt; the largest repaid $400 on Ethereum.',
    ]);
    assert.equal(r.positionsAtRisk, null);
    // the models of these tests are sandbox datasets: the report says so
    assert.match(
      r.markdown,
      /^# morpho daily risk digest, 2026-11-20 \(sandbox\)\n\n_Simulated sandbox data/,
    );
    assert.equal(r.data.kind, 'sandbox');
    assert.doesNotMatch(r.markdown, /8453/);
  });

  test('yesterday: live sections from the read model when written', async () => {
    const r = (await t.get('/api/v1/research/reports/2026-11-21-morpho', pro)).json().data;
    assert.equal(r.positionsAtRisk.length, 1);
    assert.equal(r.positionsAtRisk[0].healthFactor, 1.04);
    assert.deepEqual(r.staleOracles, []);
    // listed: its positions are of sandbox data, never `live`
    const listed = (await t.get('/api/v1/research/reports', pro)).json().data;
    const summary = listed.find((x: { id: string }) => x.id === '2026-11-21-morpho');
    assert.equal(summary.live, false);
    assert.equal(summary.data.kind, 'sandbox');
  });

  test('a report written by digest version 1.0.0 (no unpricedLiquidations) is served as stored', async () => {
    const day = Date.parse('2026-11-18T00:00:00Z');
    const report = buildDigest({
      day,
      protocol: 'aave',
      snapshots: [],
      previous: [],
      liquidations: [
        {
          chainId: 1,
          marketKey: a.uniqueKey,
          txHash: `0x${'77'.repeat(32)}`,
          at: day + 1_000,
          borrower: `0x${'b0'.repeat(20)}`,
          debtRepaidUsd: 5,
          collateralSeizedUsd: 6,
          badDebtUsd: 0,
        },
      ],
      ratingChanges: [],
      live: null,
      generatedAt: day + DAY,
    });
    const old = {
      ...report,
      version: '1.0.0',
      chains: report.chains.map(({ unpricedLiquidations: _, ...c }) => c),
    };
    await t.store.appendResearchReports([
      { id: old.id, day, protocol: 'aave', generatedAt: day + DAY, body: JSON.stringify(old) },
    ]);
    const res = await t.get(`/api/v1/research/reports/${old.id}`, pro);
    assert.equal(res.statusCode, 200, res.body);
    const served = res.json().data;
    assert.equal(served.version, '1.0.0');
    assert.equal('unpricedLiquidations' in served.chains[0], false);
    assert.equal(served.chains[0].liquidatedDebtUsd, 5);
  });

  test("a day before the tier's history window is not found by id either; Enterprise reads it", async () => {
    const id = `${new Date(midnight - 200 * DAY).toISOString().slice(0, 10)}-aave`;
    assert.equal((await t.get(`/api/v1/research/reports/${id}`, pro)).json().error, 'REPORT_NOT_FOUND');
    const ent = await t.key('enterprise');
    assert.equal((await t.get(`/api/v1/research/reports/${id}`, ent)).statusCode, 200);
  });

  test('error: unknown id, or a report with no chain in scope, 404 REPORT_NOT_FOUND', async () => {
    const res = await t.get('/api/v1/research/reports/2026-01-01-morpho', pro);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'REPORT_NOT_FOUND');
    assert.equal(
      (await t.get('/api/v1/research/reports/2026-11-20-morpho?chainIds=8453', pro)).json().error,
      'REPORT_NOT_FOUND',
    );
  });
});

describe('listReports', () => {
  test('behavior: a request reads at most SCAN_LIMIT reports; the cursor goes on from the last one read', async () => {
    // 2,500 reports of chain 1, then (oldest) one of chain 8453: a caller of chain 8453 pages through.
    const rows: ResearchReportRow[] = Array.from({ length: 2_501 }, (_, i) => {
      const day = midnight - (i + 1) * DAY;
      const chain = i === 2_500 ? 8453 : 1;
      const report = buildDigest({
        day,
        protocol: 'morpho',
        snapshots: [
          { marketKey: 'm', chainId: chain, pair: 'A/B', supplyUsd: 1, borrowUsd: 0, utilization: 0 },
        ],
        previous: [],
        liquidations: [],
        ratingChanges: [],
        live: null,
        generatedAt: day + DAY,
      });
      return { id: report.id, day, protocol: 'morpho', generatedAt: day + DAY, body: JSON.stringify(report) };
    });
    let read = 0;
    const reader = {
      researchReports: async (
        f: { fromMs: number; toMs: number },
        limit: number,
        after?: { day: number; id: string },
      ) => {
        const page = rows
          .filter((r) => r.day >= f.fromMs && r.day < f.toMs)
          .filter((r) => !after || r.day < after.day || (r.day === after.day && r.id < after.id))
          .slice(0, limit);
        read += page.length;
        return page;
      },
      researchReport: async () => null,
    };
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      read = 0;
      const found = await listReports(live, reader, {
        chainIds: [8453],
        fromMs: 0,
        toMs: NOW,
        cursor,
        limit: 10,
      });
      assert.ok(read <= SCAN_LIMIT, `read ${read}`);
      pages.push(found.items.map((r) => r.id));
      cursor = found.nextCursor;
    } while (cursor);
    assert.deepEqual(pages.flat(), [rows[2_500]!.id]);
    assert.ok(pages.length >= 3);
  });
});
