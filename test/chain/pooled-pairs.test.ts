import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PositionRecord } from '../../src/domain/types.ts';
import { AccountReads } from '../../src/ingest/chain/account-reads.ts';
import { accountPairs, HandedPools, type PairDebts } from '../../src/ingest/chain/pooled-pairs.ts';

/** An account as these tests hold it: its debt per pair (loan tokens over the index), all at one health. */
type Account = Record<string, number>;

const each = (user: string, account: Account | null) => {
  const debts = new Map(Object.entries(account ?? {}));
  const positions: PositionRecord[] = [...debts].map(([marketKey, debt]) => ({
    marketKey,
    user,
    collateralUsd: 2 * debt,
    borrowUsd: debt,
    supplyUsd: 0,
    healthFactor: 1.5,
  }));
  return { positions, debts: debts as PairDebts };
};

test('behavior: a pool in part takes the accounts read out of its pairs and puts them in again; a pair left is handed at zero', () => {
  const whole = accountPairs<Account>(
    [
      ['0xa', { p1: 10, p2: 5 }],
      ['0xb', { p1: 7 }],
      ['0xc', null],
    ],
    undefined,
    each,
  );
  assert.deepEqual(Object.fromEntries(whole.totals), {
    p1: { scaled: 17, holders: 2 },
    p2: { scaled: 5, holders: 1 },
  });
  // 0xa repays p2 and borrows more on p1; 0xb is not read.
  const part = accountPairs<Account>(
    [],
    { accounts: [['0xa', { p1: 12 }]], ...whole, pairs: whole.totals },
    each,
  );
  assert.deepEqual(Object.fromEntries(part.totals), { p1: { scaled: 19, holders: 2 } });
  assert.deepEqual(
    part.positions.map((p) => [p.marketKey, p.user, p.borrowUsd, p.healthFactor]),
    [
      ['p1', '0xa', 12, 1.5],
      ['p2', '0xa', 0, Number.POSITIVE_INFINITY],
    ],
  );
  // The last pass's totals are not touched (a pass that fails leaves them as they were).
  assert.deepEqual(Object.fromEntries(whole.totals).p2, { scaled: 5, holders: 1 });
});

test('behavior: a pool is handed in part while its shape holds and its oracle moves with its records, by one common factor', () => {
  const pools = new HandedPools();
  const ratios = new Map([
    ['weth', 1],
    ['usdc', 1],
  ]);
  const now = { shape: 's', ratios, owed: new Map<string, PairDebts>(), pairs: new Map() };
  pools.begin();
  pools.assembling();
  const partial = new Set<string>();
  pools.hand('pool', null, { markets: [{ uniqueKey: 'm' }], partial }, now);
  assert.equal(partial.size, 0);
  // Not yet: the pass has not succeeded.
  assert.equal(pools.partOf('pool', 's', ratios), null);
  pools.settle();
  assert.notEqual(pools.partOf('pool', 's', ratios), null);
  // A unit of account moving (every ratio by 3 %): still in part.
  const both = new Map([
    ['weth', 1.03],
    ['usdc', 1.03],
  ]);
  assert.notEqual(pools.partOf('pool', 's', both), null);
  // One price apart from its record by 1 part in a million, another shape: whole.
  const apart = new Map([
    ['weth', 1.000001],
    ['usdc', 1],
  ]);
  assert.equal(pools.partOf('pool', 's', apart), null);
  assert.equal(pools.partOf('pool', 't', ratios), null);
  // A pass that reads no state changes nothing; one that assembles without the pool drops it.
  pools.begin();
  pools.settle();
  assert.notEqual(pools.partOf('pool', 's', ratios), null);
  pools.begin();
  pools.assembling();
  pools.settle();
  assert.equal(pools.partOf('pool', 's', ratios), null);
});

test('behavior: the accounts a failed pass read are handed by the next pass that hands the pool', () => {
  const pools = new HandedPools();
  const accounts = new AccountReads<Account>();
  accounts.set('pool', '0xa', { p1: 3 }, 10);
  // A pass reads 0xa (a retry: no later log names it), then fails before it settles.
  pools.begin();
  pools.read(['pool:0xa']);
  // The next pass reads nothing new: 0xa is still among those to hand.
  pools.begin();
  pools.read([]);
  assert.deepEqual(pools.readIn('pool', accounts), [['0xa', { p1: 3 }]]);
  // A pass that reads no state leaves them; one that hands the pools settles them.
  pools.settle();
  assert.equal(pools.readIn('pool', accounts).length, 1);
  pools.begin();
  pools.assembling();
  pools.settle();
  assert.deepEqual(pools.readIn('pool', accounts), []);
});
