import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  annualizedVolatility,
  concentrationScore,
  dailyCloses,
  estimateVolatility,
  familyVolatility,
  GRADES,
  gradeOf,
  historyScore,
  liquidationScore,
  liquidityScore,
  lltvBufferScore,
  MARKET_WEIGHTS,
  type OracleFacts,
  oracleScore,
  overallScore,
  ratingChanged,
  ratingMethodology,
  ratioLogReturns,
  sizeScore,
  UNKNOWN_SCORE,
  usageScore,
  VAULT_WEIGHTS,
  type VolatilityEstimate,
  vaultScores,
} from '../../src/domain/rating.ts';
import { concentration } from '../../src/domain/stress.ts';

/** Known answers worked out by hand (the arithmetic is in the comments), then properties. */

const DAY = 86_400_000;
const close = (a: number, b: number, digits = 9) => Math.abs(a - b) < 10 ** -digits;

function oracle(over: Partial<OracleFacts> = {}): OracleFacts {
  return {
    provider: 'Chainlink',
    type: 'ChainlinkOracle',
    isComposite: false,
    feeds: 1,
    warnings: 0,
    stalenessRatio: 0.5,
    ...over,
  };
}

/** A volatility given as its daily sigma (annualized = daily x sqrt(365)). */
function daily(sigma: number, source: VolatilityEstimate['source'] = 'history'): VolatilityEstimate {
  return {
    annualized: sigma * Math.sqrt(365),
    source,
    returns: source === 'history' ? 30 : 0,
    families: ['eth', 'usd'],
  };
}

describe('gradeOf', () => {
  test('default: each grade from its floor up, best first', () => {
    const cases: [number, string][] = [
      [100, 'AAA'],
      [90, 'AAA'],
      [89.99, 'AA'],
      [80, 'AA'],
      [79.99, 'A'],
      [70, 'A'],
      [60, 'BBB'],
      [59.99, 'BB'],
      [50, 'BB'],
      [40, 'B'],
      [30, 'CCC'],
      [20, 'CC'],
      [10, 'C'],
      [9.99, 'D'],
      [0, 'D'],
    ];
    for (const [score, grade] of cases) assert.equal(gradeOf(score), grade, String(score));
  });

  test('error: a score that is not a number is D', () => {
    assert.equal(gradeOf(Number.NaN), 'D');
  });
});

describe('oracleScore', () => {
  test('default: the provider base, less each penalty', () => {
    // Chainlink 90, fresh, one feed, no warning
    assert.equal(oracleScore(oracle()).score, 90);
    // 90 - 5 composite
    assert.equal(oracleScore(oracle({ isComposite: true, feeds: 2 })).score, 85);
    // Unknown 40 - 10 Custom - 2 x 10 warnings = 10
    assert.equal(oracleScore(oracle({ provider: 'Unknown', type: 'Custom', warnings: 2 })).score, 10);
    // Pyth 80, 5 warnings: at most 30 off = 50
    assert.equal(oracleScore(oracle({ provider: 'Pyth', warnings: 5 })).score, 50);
    // Redstone 80 - 10 without any feed's freshness = 70
    assert.equal(oracleScore(oracle({ provider: 'Redstone', feeds: 0, stalenessRatio: null })).score, 70);
  });

  test('behavior: stale from past one heartbeat: 25 off, growing to 50 at two heartbeats', () => {
    assert.equal(oracleScore(oracle({ stalenessRatio: 1 })).score, 90, 'exactly one heartbeat is fresh');
    // 90 - (25 + 25 x 0.5)
    assert.equal(oracleScore(oracle({ stalenessRatio: 1.5 })).score, 52.5);
    assert.equal(oracleScore(oracle({ stalenessRatio: 2 })).score, 40);
    assert.equal(oracleScore(oracle({ stalenessRatio: 30 })).score, 40);
    assert.match(
      oracleScore(oracle({ stalenessRatio: 1.5 })).explanation,
      /STALE: stalest feed 1\.50 heartbeats/,
    );
  });

  test('behavior: no oracle scores 0; the penalties never go below 0', () => {
    assert.deepEqual(oracleScore(null), {
      score: 0,
      explanation: 'No oracle data: the price source is unknown.',
    });
    // 40 - 10 - 5 - 30 - 50 < 0
    const worst = oracle({
      provider: 'Unknown',
      type: 'Custom',
      isComposite: true,
      warnings: 3,
      stalenessRatio: 2,
    });
    assert.equal(oracleScore(worst).score, 0);
  });

  test('default: the explanation names the oracle and its freshness', () => {
    assert.equal(
      oracleScore(oracle({ isComposite: true, feeds: 2, stalenessRatio: 0.42 })).explanation,
      'Chainlink ChainlinkOracle (2 feeds, composite), no warning; stalest feed at 0.42 of its heartbeat.',
    );
  });
});

describe('volatility', () => {
  test('default: dailyCloses keeps the last positive price of each UTC day', () => {
    const t = Date.UTC(2026, 10, 1);
    assert.deepEqual(
      dailyCloses([
        { at: t, priceUsd: 10 },
        { at: t + 12 * 3_600_000, priceUsd: 11 },
        { at: t + 23 * 3_600_000, priceUsd: 12 },
        { at: t + DAY, priceUsd: 0 },
        { at: t + DAY + 1, priceUsd: 13 },
        { at: t + 2 * DAY, priceUsd: Number.NaN },
      ]),
      [
        { day: t / DAY, price: 12 },
        { day: t / DAY + 1, price: 13 },
      ],
    );
  });

  test('default: ratioLogReturns of collateral / loan, consecutive days only', () => {
    const c = [100, 110, 99, 99].map((price, day) => ({ day, price }));
    const l = [1, 1, 1.1, 1].map((price, day) => ({ day, price }));
    // ratios 100, 110, 90, 99
    const r = ratioLogReturns(c, l);
    assert.equal(r.length, 3);
    assert.ok(close(r[0]!, Math.log(1.1)));
    assert.ok(close(r[1]!, Math.log(90 / 110)));
    assert.ok(close(r[2]!, Math.log(99 / 90)));
    // day 2 of the loan missing: no return into it nor out of it
    const gap = ratioLogReturns(
      c,
      l.filter((x) => x.day !== 2),
    );
    assert.equal(gap.length, 1);
    assert.ok(close(gap[0]!, Math.log(1.1)));
  });

  test('default: annualizedVolatility is the sample deviation times sqrt(365)', () => {
    // mean 0; squares 1e-4 + 1e-4 + 4e-4 + 4e-4 = 1e-3; / (4 - 1); x 365; sqrt
    assert.ok(close(annualizedVolatility([0.01, -0.01, 0.02, -0.02]), Math.sqrt((0.001 / 3) * 365), 15));
    assert.equal(annualizedVolatility([0.03, 0.03, 0.03]), 0);
    assert.throws(() => annualizedVolatility([0.1]), RangeError);
  });

  test('default: familyVolatility is the peg of a pegged pair, else the larger leg', () => {
    assert.equal(familyVolatility('eth-lst', 'eth'), 0.06);
    assert.equal(familyVolatility('usd', 'usd-yield'), 0.03);
    assert.equal(familyVolatility('btc', 'btc'), 0.04);
    assert.equal(familyVolatility('eth', 'usd'), 0.75);
    assert.equal(familyVolatility('btc', 'eth'), 0.75);
    assert.equal(familyVolatility('pt', 'usd'), 0.1);
    assert.equal(familyVolatility('eur', 'usd'), 0.08);
    assert.equal(familyVolatility('major', 'other'), 1.2);
  });

  test('behavior: 7 daily returns measure the volatility; fewer fall back to the family default', () => {
    const six = [0.01, -0.01, 0.01, -0.01, 0.01, -0.01];
    assert.deepEqual(estimateVolatility(six, 'eth', 'usd'), {
      annualized: 0.75,
      source: 'family',
      returns: 0,
      families: ['eth', 'usd'],
    });
    const seven = [...six, 0.01];
    const v = estimateVolatility(seven, 'eth', 'usd');
    assert.equal(v.source, 'history');
    assert.equal(v.returns, 7);
    assert.equal(v.annualized, annualizedVolatility(seven));
  });
});

describe('lltvBufferScore', () => {
  test('default: coverage (1 - lltv) / (3 sigma) scored 0 at 0.5, 100 at 2.5', () => {
    // sigma 1 %/day: move 3 %; lltv 0.94: buffer 6 %, coverage 2: (2 - 0.5) / 2 = 75
    const s = lltvBufferScore(0.94, daily(0.01));
    assert.ok(close(s.move, 0.03));
    assert.ok(close(s.coverage, 2));
    assert.ok(close(s.score, 75));
    // buffer 1.5 %: coverage 0.5 scores 0; buffer 20 %: coverage 6.7 scores 100
    assert.ok(close(lltvBufferScore(0.985, daily(0.01)).score, 0));
    assert.equal(lltvBufferScore(0.8, daily(0.01)).score, 100);
    // lltv 1: no buffer at all
    assert.equal(lltvBufferScore(1, daily(0.01)).score, 0);
    assert.equal(lltvBufferScore(1, daily(0.01)).coverage, 0);
    // a constant ratio: no move, unbounded coverage
    const flat = lltvBufferScore(0.98, daily(0));
    assert.equal(flat.coverage, Number.POSITIVE_INFINITY);
    assert.equal(flat.score, 100);
  });

  test('default: ETH against USDC at LLTV 86 % on the family default (75 %/yr)', () => {
    // move = 3 x 0.75 / sqrt(365) = 0.117768; coverage = 0.14 / 0.117768 = 1.188764
    const s = lltvBufferScore(0.86, estimateVolatility([], 'eth', 'usd'));
    const move = (3 * 0.75) / Math.sqrt(365);
    assert.ok(close(s.move, move));
    assert.ok(close(s.score, (100 * (0.14 / move - 0.5)) / 2));
    assert.ok(close(s.score, 34.438, 3));
    assert.equal(
      s.explanation,
      'LLTV 86.0 %: buffer 14.0 % against a 3-sigma 1-day move of 11.78 % (volatility 75.0 %/yr, no stored price ' +
        'history: eth/usd family default); coverage 1.19x.',
    );
  });
});

describe('liquidityScore', () => {
  test('default: 0.6 x utilization part + 0.4 x depth part', () => {
    assert.equal(liquidityScore(0.5, 10_000_000).score, 100);
    assert.equal(liquidityScore(0.85, 1e9).score, 100);
    // U = 100 x (1 - 0.075 / 0.15) = 50; A = 100 x (5 - 4) / 3 = 33.33; 30 + 13.33
    assert.ok(close(liquidityScore(0.925, 100_000).score, 30 + 40 / 3));
    assert.equal(liquidityScore(1, 0).score, 0);
    assert.equal(liquidityScore(0.2, 10_000).score, 60, 'USD 10,000 available: depth 0');
    assert.equal(
      liquidityScore(0.925, 100_000).explanation,
      'Utilization 92.5 %, $100,000 available to withdraw.',
    );
  });
});

describe('concentrationScore', () => {
  test('default: 100 x (1 - (top-10 share + Herfindahl) / 2)', () => {
    // one borrower: top 10 owe all, HHI 1
    assert.equal(concentrationScore(concentration([100]), 100).score, 0);
    // 20 equal borrowers: top 10 owe 0.5, HHI 20 x 0.05^2 = 0.05: 100 x (1 - 0.275)
    assert.ok(close(concentrationScore(concentration(Array(20).fill(5)), 100).score, 72.5));
    // 60, 20, 20: top 10 owe all, HHI 0.36 + 0.04 + 0.04 = 0.44: 100 x (1 - 0.72)
    assert.ok(close(concentrationScore(concentration([60, 20, 20]), 100).score, 28));
  });

  test('behavior: no debt scores 100; borrow without a known borrower is unknown', () => {
    assert.equal(concentrationScore(concentration([]), 0).score, 100);
    const unknown = concentrationScore(concentration([]), 1_000);
    assert.equal(unknown.score, UNKNOWN_SCORE);
    assert.match(unknown.explanation, /No borrower position known for \$1,000 of borrow/);
  });
});

describe('liquidationScore', () => {
  test('default: 100 less the repaid and bad-debt penalties', () => {
    assert.equal(liquidationScore({ count: 0, repaidUsd: 0, badDebtUsd: 0 }, 1e6).score, 100);
    // repaid 12.5 % of borrow: 30 x 0.125 / 0.25 = 15
    assert.equal(liquidationScore({ count: 3, repaidUsd: 125_000, badDebtUsd: 0 }, 1e6).score, 85);
    // bad debt 0.5 % of borrow: 70 x 0.005 / 0.01 = 35
    assert.equal(liquidationScore({ count: 1, repaidUsd: 0, badDebtUsd: 5_000 }, 1e6).score, 65);
    // both past their full share: 100 - 30 - 70
    assert.equal(liquidationScore({ count: 9, repaidUsd: 1e6, badDebtUsd: 1e5 }, 1e6).score, 0);
    // liquidations in a market with no borrow left: the full repaid penalty
    assert.equal(liquidationScore({ count: 1, repaidUsd: 10, badDebtUsd: 0 }, 0).score, 70);
    assert.equal(
      liquidationScore({ count: 3, repaidUsd: 125_000, badDebtUsd: 0 }, 1e6).explanation,
      '3 liquidations in the last 90 days repaid $125,000 (12.50 % of borrow); bad debt $0 (0.00 % of borrow).',
    );
  });

  test('behavior: without stored history the record is unknown, and says why', () => {
    const c = liquidationScore(null, 1e6);
    assert.equal(c.score, UNKNOWN_SCORE);
    assert.match(c.unknown ?? '', /no stored liquidation history/);
    assert.equal(liquidationScore({ count: 0, repaidUsd: 0, badDebtUsd: 0 }, 1e6).unknown, undefined);
  });
});

describe('size, usage and history', () => {
  test('default: size on a log scale from the floor to $1B, stating the figures', () => {
    assert.equal(sizeScore(100_000, 100_000, 'supplied').score, 0);
    assert.ok(close(sizeScore(10_000_000, 100_000, 'supplied').score, 50)); // (7 - 5) / (9 - 5)
    assert.equal(sizeScore(5e9, 100_000, 'supplied').score, 100);
    assert.equal(sizeScore(0, 100_000, 'held').score, 0);
    assert.match(sizeScore(10_000_000, 100_000, 'supplied').explanation, /\$10,000,000 supplied/);
  });

  test('default: usage by borrowers, history by days of stored prices', () => {
    assert.equal(usageScore(1).score, 0);
    assert.ok(close(usageScore(10).score, 100 / 3));
    assert.equal(usageScore(5000).score, 100);
    assert.equal(usageScore(0).score, 0);
    assert.ok(close(historyScore(45).score, 50));
    assert.equal(historyScore(120).score, 100);
    assert.match(historyScore(1).explanation, /^1 day of stored prices/);
    assert.ok(historyScore(null).unknown);
  });
});

describe('overallScore and vaultScores', () => {
  test('default: the weighted sum of the components, to 2 decimals', () => {
    // 0.2 x 85 + 0.2 x 100 + 0.15 x 80 + 0.1 x 65.45 + 0.1 x 99.84 + 0.1 x 75 + 0.05 x 53.4 + 0.1 x 100 = 85.699
    const s = overallScore(
      {
        oracle: 85,
        lltvBuffer: 100,
        liquidity: 80,
        concentration: 65.45,
        liquidations: 99.84,
        size: 75,
        usage: 53.4,
        history: 100,
      },
      MARKET_WEIGHTS,
    );
    assert.equal(s, 85.7);
    assert.equal(gradeOf(s), 'AA');
    const weights = Object.values(MARKET_WEIGHTS).reduce((a, b) => a + b, 0);
    assert.ok(close(weights, 1));
  });

  test('default: a vault is 0.7 x its supply-weighted markets + 0.15 x its diversification + 0.15 x its size', () => {
    // shares 0.6 / 0.4: markets 0.6 x 80 + 0.4 x 60 = 72; HHI 0.36 + 0.16 = 0.52: diversification 48
    const v = vaultScores([
      { usd: 600, score: 80 },
      { usd: 400, score: 60 },
      { usd: 0, score: null },
    ]);
    assert.ok(close(v.markets.score, 72));
    assert.ok(close(v.diversification.score, 48));
    assert.ok(close(v.herfindahl, 0.52));
    assert.equal(v.largestShare, 0.6);
    assert.equal(v.rated, 2);
    // 0.7 x 72 + 0.15 x 48 + 0.15 x 40 = 63.6
    assert.equal(overallScore({ markets: 72, diversification: 48, size: 40 }, VAULT_WEIGHTS), 63.6);
    // no USD at all: equal shares
    const idle = vaultScores([
      { usd: 0, score: 80 },
      { usd: 0, score: 40 },
    ]);
    assert.ok(close(idle.markets.score, 60));
    assert.ok(close(idle.diversification.score, 50));
    const none = vaultScores([{ usd: 10, score: null }]);
    assert.equal(none.markets.score, 0);
    assert.equal(none.diversification.score, 0);
    assert.match(none.markets.unknown ?? '', /no allocation to a graded market/);
  });
});

describe('ratingChanged', () => {
  test('default: a grade, a version, or 2 points of score', () => {
    const last = { grade: 'AA', score: 85, methodology: '1.0.0' };
    assert.equal(ratingChanged(last, { ...last, score: 86.99 }), false);
    assert.equal(ratingChanged(last, { ...last, score: 83.01 }), false);
    assert.equal(ratingChanged(last, { ...last, score: 87 }), true);
    assert.equal(ratingChanged(last, { ...last, grade: 'A', score: 84.5 }), true);
    assert.equal(ratingChanged(last, { ...last, methodology: '1.1.0' }), true);
    // 80.1 - 78.1 is 1.9999999999999858 in binary floating point: still 2 points
    assert.equal(ratingChanged({ ...last, score: 80.1 }, { ...last, score: 78.1 }), true);
  });

  test('behavior: into NR and out of it are changes; NR after NR is none, whatever the version', () => {
    const graded = { grade: 'AA', score: 85, methodology: '2.0.0' };
    const nr = { grade: 'NR', score: null, methodology: '2.0.0' };
    assert.equal(ratingChanged(graded, nr), true);
    assert.equal(ratingChanged(nr, graded), true);
    assert.equal(ratingChanged(nr, nr), false);
    assert.equal(ratingChanged(nr, { ...nr, methodology: '2.1.0' }), false);
  });
});

describe('ratingMethodology', () => {
  test('default: the version, the grades and the weights the formulas use', () => {
    const m = ratingMethodology();
    assert.equal(m.version, '2.0.0');
    assert.equal(m.sizeFloorUsd, 100_000);
    assert.equal(ratingMethodology(250_000).sizeFloorUsd, 250_000);
    assert.deepEqual(
      m.grades.map((g) => g.grade),
      [...GRADES],
    );
    assert.deepEqual(
      m.markets.map((c) => [c.name, c.weight]),
      Object.entries(MARKET_WEIGHTS),
    );
    assert.deepEqual(
      m.vaults.map((c) => [c.name, c.weight]),
      Object.entries(VAULT_WEIGHTS),
    );
    const buffer = m.markets.find((c) => c.name === 'lltvBuffer')!;
    assert.equal(buffer.parameters.kSigma, 3);
    assert.equal(buffer.parameters['familyVolatility.eth'], 0.75);
    assert.equal(m.markets.find((c) => c.name === 'oracle')!.parameters['provider.Chainlink'], 90);
  });
});

describe('properties', () => {
  const unit = fc.double({ min: 0, max: 1, noNaN: true });
  const vol = fc.double({ min: 0, max: 5, noNaN: true });
  const usd = fc.double({ min: 0, max: 1e12, noNaN: true });
  const inRange = (s: number) => s >= 0 && s <= 100;

  test('property: every component scores within 0-100', () => {
    fc.assert(
      fc.property(unit, vol, unit, usd, usd, usd, fc.nat(20), (lltv, v, u, a, repaid, bad, n) => {
        const o = oracleScore(oracle({ warnings: n, stalenessRatio: v, isComposite: n % 2 === 0 }));
        return (
          inRange(lltvBufferScore(lltv, daily(v)).score) &&
          inRange(liquidityScore(u, a).score) &&
          inRange(o.score) &&
          inRange(liquidationScore({ count: n, repaidUsd: repaid, badDebtUsd: bad }, a).score)
        );
      }),
    );
  });

  test('property: a higher LLTV or a higher volatility never scores better', () => {
    fc.assert(
      fc.property(unit, unit, vol, vol, (l1, l2, v1, v2) => {
        const [lo, hi] = l1 <= l2 ? [l1, l2] : [l2, l1];
        const [vLo, vHi] = v1 <= v2 ? [v1, v2] : [v2, v1];
        return (
          lltvBufferScore(hi, daily(v1)).score <= lltvBufferScore(lo, daily(v1)).score &&
          lltvBufferScore(l1, daily(vHi)).score <= lltvBufferScore(l1, daily(vLo)).score
        );
      }),
    );
  });

  test('property: higher utilization, less liquidity, a staler oracle, more bad debt never score better', () => {
    fc.assert(
      fc.property(unit, unit, usd, usd, vol, vol, usd, usd, (u1, u2, a1, a2, s1, s2, b1, b2) => {
        const [uLo, uHi] = u1 <= u2 ? [u1, u2] : [u2, u1];
        const [aLo, aHi] = a1 <= a2 ? [a1, a2] : [a2, a1];
        const [sLo, sHi] = s1 <= s2 ? [s1, s2] : [s2, s1];
        const [bLo, bHi] = b1 <= b2 ? [b1, b2] : [b2, b1];
        const rec = (bad: number) => ({ count: 1, repaidUsd: 1000, badDebtUsd: bad });
        return (
          liquidityScore(uHi, a1).score <= liquidityScore(uLo, a1).score &&
          liquidityScore(u1, aLo).score <= liquidityScore(u1, aHi).score &&
          oracleScore(oracle({ stalenessRatio: sHi })).score <=
            oracleScore(oracle({ stalenessRatio: sLo })).score &&
          liquidationScore(rec(bHi), 1e6).score <= liquidationScore(rec(bLo), 1e6).score
        );
      }),
    );
  });

  test('property: the overall score is within 0-100, monotone in each component, and so is its grade', () => {
    const score = fc.double({ min: 0, max: 100, noNaN: true });
    const names = Object.keys(MARKET_WEIGHTS) as (keyof typeof MARKET_WEIGHTS)[];
    fc.assert(
      fc.property(
        fc.array(score, { minLength: 8, maxLength: 8 }),
        fc.constantFrom(...names),
        score,
        (parts, which, bump) => {
          const scores = Object.fromEntries(names.map((n, i) => [n, parts[i]!])) as Record<
            (typeof names)[number],
            number
          >;
          const base = overallScore(scores, MARKET_WEIGHTS);
          const better = overallScore({ ...scores, [which]: Math.max(scores[which], bump) }, MARKET_WEIGHTS);
          const rank = (s: number) => GRADES.indexOf(gradeOf(s));
          return inRange(base) && better >= base && rank(better) <= rank(base);
        },
      ),
    );
  });
});
