import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ORACLE_PROVIDERS, ORACLE_TYPES, PROTOCOLS } from '../../src/domain/enums.ts';
import { healthFactor } from '../../src/domain/metrics.ts';
import { oracleHealth } from '../../src/domain/oracle.ts';
import type { MarketRecord, PositionRecord } from '../../src/domain/types.ts';
import {
  buildSandbox,
  DEFAULT_SEED,
  generateSandbox,
  SANDBOX_AS_OF,
  SANDBOX_PROFILES,
  type SandboxDataset,
} from '../../src/ingest/sandbox/index.ts';

const KEY_SHAPE = /^(morpho|aave|spark|compound|euler|fluid)-\d+-[0-9a-z_]+$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const REQUIRED_CHAINS = [1, 10, 100, 137, 8453, 42161, 43114];

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of the positions, streamed (JSON of each record, in order). */
function hashPositions(ds: SandboxDataset): { hash: string; count: number } {
  const h = createHash('sha256');
  let count = 0;
  for (const p of ds.positions()) {
    h.update(JSON.stringify(p));
    h.update('\n');
    count++;
  }
  return { hash: h.digest('hex'), count };
}

describe('generateSandbox (default profile)', () => {
  let ds: SandboxDataset;
  let positions: PositionRecord[];
  let byKey: Map<string, MarketRecord>;

  before(() => {
    ds = generateSandbox({ profile: 'default' });
    positions = [...ds.positions()];
    byKey = new Map(ds.markets.map((m) => [m.uniqueKey, m]));
  });

  test('default: seed 42, fixed asOf 2026-11-01T00:00:00Z', () => {
    assert.equal(ds.seed, DEFAULT_SEED);
    assert.equal(ds.seed, 42);
    assert.equal(ds.profile, 'default');
    assert.equal(ds.asOf, SANDBOX_AS_OF);
    assert.equal(SANDBOX_AS_OF, Date.UTC(2026, 10, 1) / 1000);
  });

  test('behavior: same seed and profile give byte-identical markets and positions', () => {
    // Generated afresh (generateSandbox hands out the one it generated last).
    assert.equal(generateSandbox({ profile: 'default', seed: 42 }), ds);
    const again = buildSandbox({ profile: 'default', seed: 42 });
    assert.equal(sha256(JSON.stringify(again.markets)), sha256(JSON.stringify(ds.markets)));
    const a = hashPositions(ds);
    const b = hashPositions(again);
    assert.equal(a.hash, b.hash);
    // positions() starts over on every call
    assert.equal(hashPositions(ds).hash, a.hash);
  });

  test('behavior: another seed gives other numbers', () => {
    const other = generateSandbox({ profile: 'default', seed: 7 });
    assert.notEqual(sha256(JSON.stringify(other.markets)), sha256(JSON.stringify(ds.markets)));
  });

  test('behavior: an explicit reference folder gives the same dataset', () => {
    const dir = fileURLToPath(new URL('../../reference/', import.meta.url));
    const explicit = generateSandbox({ profile: 'default', referenceDir: dir });
    assert.equal(sha256(JSON.stringify(explicit.markets)), sha256(JSON.stringify(ds.markets)));
  });

  test('error: a seed that is not an unsigned 32-bit integer', () => {
    assert.throws(() => generateSandbox({ profile: 'default', seed: -1 }), RangeError);
    assert.throws(() => generateSandbox({ profile: 'default', seed: 1.5 }), RangeError);
  });

  test('sizes: profile counts, at least 2,000 markets and 50,000 positions', () => {
    assert.equal(ds.markets.length, SANDBOX_PROFILES.default.markets);
    assert.ok(ds.markets.length >= 2000);
    assert.equal(ds.positionCount, SANDBOX_PROFILES.default.positions);
    assert.equal(positions.length, ds.positionCount);
    assert.ok(positions.length >= 50_000);
    assert.ok(SANDBOX_PROFILES.large.markets >= 20_000);
    assert.equal(SANDBOX_PROFILES.large.positions, 1_000_000);
  });

  test('coverage: all six protocols and the required chains', () => {
    const protocols = new Set(ds.markets.map((m) => m.protocol));
    assert.deepEqual([...protocols].sort(), [...PROTOCOLS].sort());
    const chains = new Set(ds.markets.map((m) => m.chainId));
    for (const c of REQUIRED_CHAINS) assert.ok(chains.has(c), `chain ${c} missing`);
    assert.ok(chains.size >= 7);
  });

  test('identity: "Market identity" (docs/decisions.md) key shape, matching protocol and chain, unique', () => {
    const keys = new Set<string>();
    for (const m of ds.markets) {
      assert.match(m.uniqueKey, KEY_SHAPE);
      assert.ok(m.uniqueKey.startsWith(`${m.protocol}-${m.chainId}-`), m.uniqueKey);
      assert.equal(m.uniqueKey, m.uniqueKey.toLowerCase());
      keys.add(m.uniqueKey);
    }
    assert.equal(keys.size, ds.markets.length);
  });

  test('invariants: balances, prices, APYs, lltv, addresses', () => {
    for (const m of ds.markets) {
      const where = m.uniqueKey;
      assert.ok(m.supply >= 0 && m.borrow >= 0, where);
      assert.ok(m.borrow <= m.supply, where);
      assert.ok(m.lltv > 0 && m.lltv < 1, where);
      assert.ok(m.collateralPrice > 0 && m.loanPrice > 0, where);
      assert.ok(m.supplyApy >= 0 && m.borrowApy >= 0, where);
      assert.ok(m.supplyApy <= m.borrowApy, where);
      assert.ok(m.supplyRewardsApy >= 0 && m.borrowRewardsApy >= 0, where);
      assert.equal(m.rewardTokens.length > 0, m.supplyRewardsApy > 0 || m.borrowRewardsApy > 0, where);
      assert.match(m.collateralAddress, ADDRESS);
      assert.match(m.loanAddress, ADDRESS);
      assert.ok(m.collateral.length > 0 && m.loan.length > 0 && m.collateralName.length > 0, where);
    }
    const utilizations = ds.markets.filter((m) => m.supply > 0).map((m) => m.borrow / m.supply);
    const mid = utilizations.filter((u) => u >= 0.4 && u <= 0.95).length;
    assert.ok(mid / utilizations.length > 0.7, 'utilization mostly 0.4-0.95');
    assert.ok(
      ds.markets.some((m) => m.supply === 0),
      'some empty markets',
    );
    assert.ok(
      ds.markets.some((m) => m.label === null),
      'some null labels',
    );
  });

  test('invariants: one price per symbol across the dataset', () => {
    const prices = new Map<string, number>();
    for (const m of ds.markets) {
      for (const [symbol, price] of [
        [m.collateral, m.collateralPrice],
        [m.loan, m.loanPrice],
      ] as const) {
        const seen = prices.get(symbol);
        if (seen === undefined) prices.set(symbol, price);
        else assert.equal(price, seen, symbol);
      }
    }
  });

  test('behavior: borrow APY rises with utilization on one curve', () => {
    // The markets of one comet share the comet's configured curve: ordered by utilization,
    // their borrow APYs never decrease.
    const byComet = new Map<string, { u: number; apy: number }[]>();
    for (const m of ds.markets) {
      if (m.protocol !== 'compound' || m.supply === 0) continue;
      const comet = m.uniqueKey.split('_')[0] ?? '';
      const list = byComet.get(comet) ?? [];
      list.push({ u: m.borrow / m.supply, apy: m.borrowApy });
      byComet.set(comet, list);
    }
    let compared = 0;
    for (const list of byComet.values()) {
      list.sort((a, b) => a.u - b.u);
      for (let i = 1; i < list.length; i++) {
        assert.ok((list[i]?.apy ?? 0) >= (list[i - 1]?.apy ?? 0));
        compared++;
      }
    }
    assert.ok(compared > 10);
  });

  test('invariants: vault fields belong to euler markets only', () => {
    for (const m of ds.markets) {
      if (m.protocol === 'euler') {
        assert.match(m.vaultSymbol ?? '', /^e.+-\d+$/, m.uniqueKey);
        assert.match(m.vaultAddress ?? '', ADDRESS, m.uniqueKey);
        assert.ok(m.governor && m.governor.length > 0, m.uniqueKey);
        assert.ok(m.uniqueKey.includes(`${m.vaultAddress}_${m.collateralAddress}`), m.uniqueKey);
      } else {
        assert.equal(m.vaultSymbol, null);
        assert.equal(m.vaultAddress, null);
        assert.equal(m.governor, null);
      }
    }
  });

  test('oracles: enums, feeds, clocks, composites, warnings, staleness', () => {
    let stale = 0;
    let composite = 0;
    let withWarnings = 0;
    let none = 0;
    let stuckFeeds = 0;
    for (const m of ds.markets) {
      const o = m.oracle;
      if (!o) {
        none++;
        continue;
      }
      assert.ok((ORACLE_TYPES as readonly string[]).includes(o.type), o.type);
      assert.ok((ORACLE_PROVIDERS as readonly string[]).includes(o.provider), o.provider);
      assert.match(o.address, ADDRESS);
      assert.ok(o.feeds.length >= 1 && o.feeds.length <= 3, m.uniqueKey);
      assert.equal(o.isComposite, o.feeds.length > 1);
      if (o.isComposite) composite++;
      if (o.warnings) {
        assert.ok(o.warnings.length > 0);
        withWarnings++;
      }
      for (const f of o.feeds) {
        assert.match(f.address, ADDRESS);
        assert.ok(f.heartbeatSeconds > 0 && Number.isInteger(f.heartbeatSeconds));
        assert.ok(f.lastUpdateTimestamp <= ds.asOf);
        if (f.updateIntervalSeconds === null) {
          stuckFeeds++;
          assert.ok(ds.asOf - f.lastUpdateTimestamp > f.heartbeatSeconds, 'a stuck feed is stale');
        } else {
          assert.ok(f.updateIntervalSeconds > 0 && f.updateIntervalSeconds <= f.heartbeatSeconds);
          assert.ok(ds.asOf - f.lastUpdateTimestamp < f.updateIntervalSeconds, 'an updating feed is fresh');
        }
      }
      if (o.provider === 'Pendle') assert.equal(o.type, 'PendlePtOracle');
      if (oracleHealth(o, ds.asOf)?.isStale) stale++;
    }
    assert.ok(stale > 0, 'some stale oracles at asOf');
    assert.ok(stale / ds.markets.length < 0.15, `stale share ${stale / ds.markets.length}`);
    assert.ok(stuckFeeds > 0);
    assert.ok(composite > 0, 'composite oracles exist');
    assert.ok(withWarnings > 0, 'warnings exist');
    assert.ok(none > 0 && none / ds.markets.length < 0.1, `markets without oracle: ${none}`);
  });

  test('rewards: some markets pay rewards in known tokens', () => {
    const rewarded = ds.markets.filter((m) => m.rewardTokens.length > 0);
    assert.ok(rewarded.length > 0);
    assert.ok(rewarded.some((m) => m.borrowRewardsApy > 0));
    const known = new Set(['MORPHO', 'ARB', 'OP', 'EUL', 'COMP', 'FLUID', 'wstETH']);
    for (const m of rewarded) for (const t of m.rewardTokens) assert.ok(known.has(t), t);
  });

  test('positions: consistent with their market', () => {
    const borrowByMarket = new Map<string, number>();
    const pairs = new Set<string>();
    const users = new Map<string, number>();
    let supplying = 0;
    for (const p of positions) {
      const m = byKey.get(p.marketKey);
      assert.ok(m, `unknown market ${p.marketKey}`);
      assert.match(p.user, ADDRESS);
      assert.ok(p.borrowUsd > 0);
      assert.ok(p.collateralUsd > 0);
      assert.ok(p.supplyUsd >= 0);
      if (p.supplyUsd > 0) supplying++;
      assert.equal(p.healthFactor, healthFactor(p.collateralUsd, m.lltv, p.borrowUsd));
      borrowByMarket.set(p.marketKey, (borrowByMarket.get(p.marketKey) ?? 0) + p.borrowUsd);
      const pair = `${p.marketKey}|${p.user}`;
      assert.ok(!pairs.has(pair), `duplicate position ${pair}`);
      pairs.add(pair);
      users.set(p.user, (users.get(p.user) ?? 0) + 1);
    }
    // A market's borrowers are its positions: their debts add up to its borrow, to the cent.
    for (const m of ds.markets) {
      const sum = borrowByMarket.get(m.uniqueKey) ?? 0;
      assert.equal(
        Math.round(sum * 100),
        Math.round(m.borrow * 100),
        `positions and borrow of ${m.uniqueKey}`,
      );
    }
    assert.ok(
      [...users.values()].some((n) => n > 1),
      'a user holds several positions',
    );
    assert.ok(supplying > 0 && supplying / positions.length < 0.5, 'supply mostly 0, sometimes > 0');
  });

  test('positions: health factor distribution', () => {
    const n = positions.length;
    const below11 = positions.filter((p) => p.healthFactor < 1.1).length / n;
    const below1 = positions.filter((p) => p.healthFactor < 1).length;
    const healthy = positions.filter((p) => p.healthFactor >= 1.2 && p.healthFactor < 3).length / n;
    assert.ok(below11 >= 0.01 && below11 <= 0.1, `share below 1.1: ${below11}`);
    assert.equal(below1, 0, 'nothing left unliquidated at the snapshot');
    assert.ok(healthy > 0.6, `share in [1.2, 3): ${healthy}`);
  });

  test('positions: larger markets have more borrowers', () => {
    const counts = new Map<string, number>();
    for (const p of positions) counts.set(p.marketKey, (counts.get(p.marketKey) ?? 0) + 1);
    const sorted = ds.markets.filter((m) => m.borrow > 0).sort((a, b) => b.borrow - a.borrow);
    const top = sorted.slice(0, 50).reduce((s, m) => s + (counts.get(m.uniqueKey) ?? 0), 0);
    const bottom = sorted.slice(-50).reduce((s, m) => s + (counts.get(m.uniqueKey) ?? 0), 0);
    assert.ok(top > bottom);
  });
});
