import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  CATEGORIES,
  filterChains,
  loadTiers,
  parseTiers,
  TIER_IDS,
  TierConfigError,
  tierAllowsCategory,
  tierAllowsChain,
} from '../../src/access/tiers.ts';

const SHIPPED = new URL('../../config/tiers.json', import.meta.url).pathname;

/** A valid tier file, with overrides per tier. */
function tierFile(overrides: Partial<Record<string, Record<string, unknown>>> = {}) {
  const base: Record<string, Record<string, unknown>> = {
    free: {
      name: 'Free',
      ratePerSecond: 5,
      dailyQuota: 1000,
      monthlyQuota: 10000,
      resultCap: 100,
      categories: ['core'],
      chains: [1],
      historyDays: 30,
    },
    pro: {
      name: 'Pro',
      ratePerSecond: 20,
      dailyQuota: 10000,
      monthlyQuota: 300000,
      resultCap: 500,
      categories: ['core', 'risk'],
      chains: null,
      historyDays: 90,
    },
    enterprise: {
      name: 'Enterprise',
      ratePerSecond: 100,
      dailyQuota: null,
      monthlyQuota: null,
      resultCap: null,
      categories: [...CATEGORIES],
      chains: null,
      historyDays: null,
    },
  };
  for (const [id, o] of Object.entries(overrides)) base[id] = { ...base[id], ...o };
  return { tiers: base };
}

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof TierConfigError);
    return err.problems;
  }
  assert.fail('expected a TierConfigError');
}

describe('loadTiers', () => {
  test('default: the shipped config/tiers.json is the launch tier table', () => {
    const tiers = loadTiers(SHIPPED);
    assert.deepEqual(Object.keys(tiers), [...TIER_IDS]);
    assert.deepEqual(tiers.free, {
      id: 'free',
      name: 'Free',
      ratePerSecond: 5,
      dailyQuota: 1000,
      monthlyQuota: 10_000,
      resultCap: 100,
      categories: ['core', 'position', 'portfolio'],
      chains: [1],
      historyDays: 30,
      maxKeysPerAccount: 2,
      keyCreationsPerDay: 5,
      maxWebhooksPerAccount: 0,
      maxStreamsPerKey: 0,
    });
    assert.deepEqual(tiers.pro, {
      id: 'pro',
      name: 'Pro',
      ratePerSecond: 20,
      dailyQuota: 10_000,
      monthlyQuota: 300_000,
      resultCap: 500,
      categories: ['core', 'position', 'portfolio', 'risk', 'analytics', 'research', 'ratings'],
      chains: null,
      historyDays: 90,
      maxKeysPerAccount: 10,
      keyCreationsPerDay: 20,
      maxWebhooksPerAccount: 10,
      maxStreamsPerKey: 2,
    });
    assert.deepEqual(tiers.enterprise, {
      id: 'enterprise',
      name: 'Enterprise',
      ratePerSecond: 100,
      dailyQuota: null,
      monthlyQuota: null,
      resultCap: null,
      categories: [...CATEGORIES],
      chains: null,
      historyDays: null,
      maxKeysPerAccount: 100,
      keyCreationsPerDay: 100,
      maxWebhooksPerAccount: 100,
      maxStreamsPerKey: 20,
    });
  });

  test('behavior: the self-service key caps default when left out, and are validated like the quotas', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lrds-tiers-'));
    try {
      const path = join(dir, 'tiers.json');
      writeFileSync(path, JSON.stringify(tierFile()));
      const tiers = loadTiers(path);
      assert.equal(tiers.free.maxKeysPerAccount, 10);
      assert.equal(tiers.free.keyCreationsPerDay, 20);
      writeFileSync(
        path,
        JSON.stringify(tierFile({ free: { maxKeysPerAccount: 0 }, pro: { keyCreationsPerDay: 'many' } })),
      );
      assert.throws(
        () => loadTiers(path),
        (err: TierConfigError) =>
          err.problems.includes('tiers.free.maxKeysPerAccount: must be a positive integer or null, got 0') &&
          err.problems.includes(
            'tiers.pro.keyCreationsPerDay: must be a positive integer or null, got "many"',
          ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('behavior: the table is deeply frozen', () => {
    const tiers = loadTiers(SHIPPED);
    assert.ok(Object.isFrozen(tiers));
    for (const id of TIER_IDS) {
      assert.ok(Object.isFrozen(tiers[id]));
      assert.ok(Object.isFrozen(tiers[id].categories));
    }
    assert.ok(Object.isFrozen(tiers.free.chains));
    assert.throws(() => {
      (tiers.free as { ratePerSecond: number }).ratePerSecond = 1000;
    }, TypeError);
    assert.throws(() => (tiers.free.chains as number[]).push(10), TypeError);
  });

  test('error: a broken file reports every problem in one message, prefixed by the file name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiers-'));
    try {
      const path = join(dir, 'broken.json');
      const broken = tierFile({
        free: {
          ratePerSecond: null,
          dailyQuota: 0,
          categories: ['core', 'admin'],
          chains: [1, -5],
          color: 'blue',
        },
        pro: { monthlyQuota: '300000', resultCap: 2.5, chains: [] },
      });
      delete broken.tiers.enterprise;
      writeFileSync(path, JSON.stringify({ ...broken, version: 2 }));
      let message = '';
      const problems = problemsOf(() => {
        try {
          loadTiers(path);
        } catch (err) {
          message = (err as Error).message;
          throw err;
        }
      });
      assert.deepEqual(problems, [
        'version: unknown field',
        'tiers.free.color: unknown field',
        'tiers.free.ratePerSecond: must be a positive integer (null is not allowed), got null',
        'tiers.free.dailyQuota: must be a positive integer or null, got 0',
        'tiers.free.categories[1]: must be one of core, position, portfolio, risk, analytics, research, ratings, agent, got "admin"',
        'tiers.free.chains[1]: must be a positive integer chain id, got -5',
        'tiers.pro.monthlyQuota: must be a positive integer or null, got "300000"',
        'tiers.pro.resultCap: must be a positive integer or null, got 2.5',
        'tiers.pro.chains: must be a non-empty array of chain ids, or null for all chains, got []',
        'tiers.enterprise: must be an object, missing',
      ]);
      assert.ok(message.startsWith(`${path}: invalid tier configuration:`));
      for (const p of problems) assert.ok(message.includes(p), `message lacks "${p}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('error: unreadable file or invalid JSON', () => {
    assert.throws(
      () => loadTiers('/nonexistent/tiers.json'),
      (err: unknown) => {
        assert.ok(err instanceof TierConfigError);
        assert.match(
          err.message,
          /^\/nonexistent\/tiers\.json: invalid tier configuration:\n {2}- cannot read file/,
        );
        return true;
      },
    );
    const dir = mkdtempSync(join(tmpdir(), 'tiers-'));
    try {
      const path = join(dir, 'tiers.json');
      writeFileSync(path, '{ "tiers": ');
      assert.throws(() => loadTiers(path), /not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseTiers', () => {
  test('default', () => {
    const tiers = parseTiers(tierFile(), 'test.json');
    assert.equal(tiers.pro.ratePerSecond, 20);
    assert.equal(tiers.enterprise.dailyQuota, null);
  });

  test('error: missing fields, unknown tiers, duplicates and a wrong root', () => {
    const file = tierFile({ pro: { categories: ['core', 'core'], chains: [1, 1] } });
    delete file.tiers.free!.historyDays;
    delete file.tiers.free!.name;
    (file.tiers as Record<string, unknown>)['gold'] = {};
    assert.deepEqual(
      problemsOf(() => parseTiers(file, 'x.json')),
      [
        'tiers.gold: unknown tier (expected free, pro, enterprise)',
        'tiers.free.name: must be a non-empty string, missing',
        'tiers.free.historyDays: must be a positive integer or null, missing',
        'tiers.pro.categories[1]: duplicate "core"',
        'tiers.pro.chains[1]: duplicate 1',
      ],
    );
    assert.deepEqual(
      problemsOf(() => parseTiers([], 'x.json')),
      ['(root): must be an object, got []'],
    );
    assert.deepEqual(
      problemsOf(() => parseTiers({}, 'x.json')),
      ['tiers: must be an object with free, pro, enterprise, missing'],
    );
  });
});

describe('tier access helpers', () => {
  const tiers = loadTiers(SHIPPED);

  test('behavior: tierAllowsCategory follows the matrix', () => {
    assert.equal(tierAllowsCategory(tiers.free, 'core'), true);
    assert.equal(tierAllowsCategory(tiers.free, 'risk'), false);
    assert.equal(tierAllowsCategory(tiers.pro, 'risk'), true);
    assert.equal(tierAllowsCategory(tiers.pro, 'agent'), false);
    for (const c of CATEGORIES) assert.equal(tierAllowsCategory(tiers.enterprise, c), true);
  });

  test('behavior: tierAllowsChain: Free is Ethereum only, null chains mean all', () => {
    assert.equal(tierAllowsChain(tiers.free, 1), true);
    assert.equal(tierAllowsChain(tiers.free, 8453), false);
    assert.equal(tierAllowsChain(tiers.pro, 8453), true);
    assert.equal(tierAllowsChain(tiers.enterprise, 534352), true);
  });

  test('behavior: filterChains keeps the allowed ids in the order given', () => {
    assert.deepEqual(filterChains(tiers.free, [8453, 1, 10]), [1]);
    assert.deepEqual(filterChains(tiers.free, [8453, 10]), []);
    assert.deepEqual(filterChains(tiers.pro, [8453, 1, 10]), [8453, 1, 10]);
  });
});
