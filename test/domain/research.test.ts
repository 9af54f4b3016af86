import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildDigest,
  chainText,
  counted,
  type DigestInputs,
  multipleText,
  reportForChains,
  reportMarkdown,
} from '../../src/domain/research.ts';

const DAY = Date.parse('2026-11-24T00:00:00Z');
const snap = (marketKey: string, chainId: number, supplyUsd: number, borrowUsd: number) => ({
  marketKey,
  chainId,
  pair: 'WETH/USDC',
  supplyUsd,
  borrowUsd,
  utilization: borrowUsd / supplyUsd,
});
const liq = (n: number, chainId: number, debtRepaidUsd: number, badDebtUsd = 0) => ({
  chainId,
  marketKey: `morpho-${chainId}-0x${n}`,
  txHash: `0x${n.toString(16).padStart(64, '0')}`,
  at: DAY + n * 60_000,
  borrower: '0x00000000000000000000000000000000000000b0',
  debtRepaidUsd,
  collateralSeizedUsd: debtRepaidUsd * 1.05,
  badDebtUsd,
});

const inputs: DigestInputs = {
  day: DAY,
  protocol: 'morpho',
  // a: 50 % -> 62 % (a 12-point spike); b: 90 % -> 96 % (crosses 95 %); c: flat on Base
  snapshots: [snap('a', 1, 1_000, 620), snap('b', 1, 2_000, 1_920), snap('c', 8453, 500, 100)],
  previous: [snap('a', 1, 800, 400), snap('b', 1, 2_000, 1_800), snap('c', 8453, 500, 100)],
  liquidations: [liq(1, 1, 100), liq(2, 1, 300, 12.5), liq(3, 8453, 50)],
  ratingChanges: [
    {
      kind: 'market',
      subject: 'a',
      chainId: 1,
      grade: 'A',
      score: 70,
      previousGrade: 'AA',
      previousScore: 80,
    },
  ],
  live: null,
  generatedAt: DAY + 86_400_000 + 5_000,
};

describe('buildDigest', () => {
  const r = buildDigest(inputs);
  test('per chain: sums, utilization, supply change, liquidations, hand-checked', () => {
    assert.equal(r.id, '2026-11-24-morpho');
    assert.deepEqual(r.chains, [
      {
        chainId: 1,
        markets: 2,
        supplyUsd: 3_000,
        borrowUsd: 2_540,
        utilization: 0.84666667,
        supplyChange: 0.07142857, // 3,000 / 2,800 - 1
        liquidations: 2,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 400,
        badDebtUsd: 12.5,
        utilizationSpikes: 2,
        staleOracles: null,
      },
      {
        chainId: 8453,
        markets: 1,
        supplyUsd: 500,
        borrowUsd: 100,
        utilization: 0.2,
        supplyChange: 0,
        liquidations: 1,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 50,
        badDebtUsd: 0,
        utilizationSpikes: 0,
        staleOracles: null,
      },
    ]);
  });
  test('spikes: a rise of 10 points or more, or crossing 95 %; largest rise first', () => {
    assert.deepEqual(
      r.utilizationSpikes.map((s) => [s.marketId, s.previousUtilization, s.utilization, s.change]),
      [
        ['a', 0.5, 0.62, 0.12],
        ['b', 0.9, 0.96, 0.06],
      ],
    );
  });
  test('liquidations by debt repaid; highlights name bad debt first; no live sections', () => {
    assert.deepEqual(
      r.notableLiquidations.map((l) => l.debtRepaidUsd),
      [300, 100, 50],
    );
    assert.equal(r.highlights[0], 'Liquidations left $13 of bad debt.');
    assert.equal(r.highlights[1], '3 liquidations repaid $450 of debt; the largest repaid $300 on Ethereum.');
    assert.match(
      r.highlights[2]!,
      /^2 markets saw utilization spike; the largest, WETH\/USDC on Ethereum, went from 50\.0 % to 62\.0 %\.$/,
    );
    assert.equal(r.highlights[3], '1 rating was lowered.');
    assert.equal(r.positionsAtRisk, null);
    assert.equal(r.staleOracles, null);
  });
  test('a liquidation of no known USD value: counted apart, left out of the sums, listed last with its USD values null', () => {
    const unpriced = {
      ...liq(4, 1, 0),
      debtRepaidUsd: null,
      collateralSeizedUsd: null,
      badDebtUsd: null,
    };
    const u = buildDigest({ ...inputs, liquidations: [...inputs.liquidations, unpriced] });
    assert.deepEqual(
      u.chains.map((c) => [
        c.chainId,
        c.liquidations,
        c.unpricedLiquidations,
        c.liquidatedDebtUsd,
        c.badDebtUsd,
      ]),
      [
        [1, 3, 1, 400, 12.5],
        [8453, 1, 0, 50, 0],
      ],
    );
    assert.deepEqual(
      u.notableLiquidations.map((l) => l.debtRepaidUsd),
      [300, 100, 50, null],
    );
    assert.equal(
      u.highlights[1],
      '4 liquidations repaid $450 of debt (1 of no known USD value not included); the largest repaid $300 on Ethereum.',
    );
    assert.match(reportMarkdown(u), /\| `0x0{63}4` \| – \| – \| – \|/);
    // only its collateral of no known USD value: its debt is summed, and it is not counted apart
    const seizedOnly = { ...liq(5, 8453, 20), collateralSeizedUsd: null };
    const s = buildDigest({ ...inputs, liquidations: [...inputs.liquidations, seizedOnly] });
    assert.deepEqual(
      s.chains.map((c) => [c.chainId, c.liquidations, c.unpricedLiquidations, c.liquidatedDebtUsd]),
      [
        [1, 2, 0, 400],
        [8453, 2, 0, 70],
      ],
    );
    // narrowed to a chain: its own count
    assert.equal(
      reportForChains(u, [1]).highlights[1],
      '3 liquidations repaid $400 of debt (1 of no known USD value not included); the largest repaid $300 on Ethereum.',
    );
  });
  test('narrowed to a chain: sections, items and highlights of it only', () => {
    const base = reportForChains(r, [8453]);
    assert.deepEqual(
      base.chains.map((c) => c.chainId),
      [8453],
    );
    assert.deepEqual(base.utilizationSpikes, []);
    assert.deepEqual(base.highlights, ['1 liquidation repaid $50 of debt; the largest repaid $50 on Base.']);
  });
  test('Markdown: title, highlights, a table per section; the same inputs give the same text', () => {
    const md = reportMarkdown(r);
    assert.match(
      md,
      /^# morpho daily risk digest, 2026-11-24\n\n_Market data read from the service's sources \(chains and APIs\)\._\n\n- Liquidations left \$13 of bad debt\./,
    );
    assert.match(md, /\| Ethereum \| 2 \| \$3,000 \| \$2,540 \| 84\.7 % \| 7\.1 % \| 2 \| \$400 \| \$13 \|/);
    assert.match(md, /positions and oracle states are not kept as history/);
    assert.equal(reportMarkdown(buildDigest(inputs)), md);
  });
  test('Markdown: a rating graded again after NR (not graded, no score) shows NR before it', () => {
    const regraded = buildDigest({
      ...inputs,
      ratingChanges: [{ ...inputs.ratingChanges[0]!, previousGrade: 'NR', previousScore: null }],
    });
    assert.match(reportMarkdown(regraded), /\| Ethereum \| `a` \| NR \| A \(70\) \|/);
  });
  test('a report says what data it rests on: sandbox data is named so, in the title too', () => {
    assert.equal(r.data?.kind, 'market');
    const sandbox = buildDigest({ ...inputs, data: { kind: 'sandbox', profile: 'default', seed: 42 } });
    assert.deepEqual(sandbox.data, {
      kind: 'sandbox',
      description:
        'Simulated sandbox data (profile default, seed 42): generated markets, positions and liquidations, not market data.',
    });
    assert.match(sandbox.title, /\(sandbox\)$/);
    assert.match(reportMarkdown(sandbox), /_Simulated sandbox data \(profile default, seed 42\)/);
  });
  test('plain English: plurals, chain names, multiples to 2 significant digits', () => {
    assert.equal(counted(1, 'liquidation'), '1 liquidation');
    assert.equal(counted(4, 'liquidation'), '4 liquidations');
    assert.equal(counted(1648, 'liquidation'), '1,648 liquidations');
    assert.equal(chainText(42161), 'Arbitrum');
    assert.equal(chainText(999_999), 'chain 999999');
    assert.equal(multipleText(1970.6942), '2,000x');
    assert.equal(multipleText(2), '2.0x');
    assert.equal(multipleText(1.04), '1.0x');
    assert.equal(multipleText(0.5123), '0.51x');
    assert.equal(multipleText(13), '13x');
  });
  test('a quiet day says so; a live report lists positions at risk and stale oracles', () => {
    const quiet = buildDigest({ ...inputs, liquidations: [], ratingChanges: [], snapshots: inputs.previous });
    assert.deepEqual(quiet.highlights, ['A quiet day: no liquidation, no utilization spike.']);
    const live = buildDigest({
      ...inputs,
      live: {
        at: DAY + 86_400_000,
        positionsAtRisk: [{ chainId: 1, marketKey: 'a', user: '0x01', healthFactor: 1.02, debtUsd: 5_000 }],
        staleOracles: [
          { chainId: 1, marketKey: 'b', oracle: '0x0f', secondsSinceUpdate: 7_200, stalenessRatio: 2 },
        ],
      },
    });
    assert.equal(live.liveAsOf, '2026-11-25T00:00:00.000Z');
    assert.equal(live.positionsAtRisk![0]!.marketId, 'a');
    assert.ok(
      live.highlights.includes(
        '1 market had a stale oracle; the stalest, on Ethereum, was last updated 2.0x its heartbeat ago.',
      ),
    );
    assert.match(reportMarkdown(live), /## Stale oracles \(as of 2026-11-25T00:00:00\.000Z\)/);
  });
  test('counts are of every item, lists of the 10 largest', () => {
    const stale = Array.from({ length: 12 }, (_, i) => ({
      chainId: 1,
      marketKey: `m${i}`,
      oracle: '0x0f',
      secondsSinceUpdate: 7_200 + i,
      stalenessRatio: 2 + i,
    }));
    const r = buildDigest({
      ...inputs,
      live: { at: DAY + 86_400_000, positionsAtRisk: [], staleOracles: stale },
    });
    assert.equal(r.staleOracles!.length, 10);
    assert.equal(r.staleOracles![0]!.stalenessRatio, 13);
    assert.equal(r.chains[0]!.staleOracles, 12);
    assert.ok(
      r.highlights.includes(
        '12 markets had a stale oracle; the stalest, on Ethereum, was last updated 13x its heartbeat ago.',
      ),
    );
  });
  test('narrowing keeps the largest items of the chains in scope, beyond the 10 largest overall', () => {
    const many = [...Array.from({ length: 11 }, (_, i) => liq(10 + i, 1, 1_000 + i)), liq(99, 8453, 5)];
    const stored = buildDigest({ ...inputs, liquidations: many });
    assert.equal(reportForChains(stored, undefined).notableLiquidations.length, 10);
    const base = reportForChains(stored, [8453]);
    assert.deepEqual(
      base.notableLiquidations.map((l) => l.debtRepaidUsd),
      [5],
    );
    assert.equal(base.highlights[0], '1 liquidation repaid $5 of debt; the largest repaid $5 on Base.');
  });
});
