import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  AbiDecodingDataSizeTooSmallError,
  ContractFunctionExecutionError,
  HttpRequestError,
  type PublicClient,
  toEventSelector,
} from 'viem';
import { AccountReads } from '../../src/ingest/chain/account-reads.ts';
import {
  ANSWER_UPDATED,
  type FeedReading,
  readRounds,
  scaled,
  usdPrices,
} from '../../src/ingest/chain/chainlink.ts';
import {
  type ChainRpc,
  eachLogs,
  getLogsAdaptive,
  isContractRefusal,
  isRangeError,
  type SharedLogs,
  throwIfUnread,
} from '../../src/ingest/chain/rpc.ts';
import { tokenText } from '../../src/ingest/chain/tokens.ts';
import type { FeedConfig } from '../../src/ingest/sources-file.ts';

test('default: integer amounts scaled by their decimals, exactly to double precision', () => {
  assert.equal(scaled(1_500_000n, 6), 1.5);
  assert.equal(scaled(123_456_789_012_345_678_901_234n, 18), Number('123456.789012345678901234'));
  assert.equal(scaled(-25n, 1), -2.5);
  assert.equal(scaled(7n, 0), 7);
  assert.equal(scaled(1n, 36), 1e-36);
});

test('property: scaled is the decimal string read as a number, to the bit, small integers and large', () => {
  const decimalRead = (v: bigint, d: number) => {
    const abs = v < 0n ? -v : v;
    const unit = 10n ** BigInt(d);
    const n = Number(`${abs / unit}.${(abs % unit).toString().padStart(d, '0')}`);
    return v < 0n ? -n : n;
  };
  fc.assert(
    fc.property(
      fc.oneof(
        fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
        fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }),
      ),
      fc.integer({ min: 1, max: 36 }),
      (v, d) => Object.is(scaled(v, d), decimalRead(v, d)),
    ),
    { numRuns: 20_000 },
  );
});

function reading(pair: string, answer: number, address = pair): FeedReading {
  const [base, quote] = pair.split('/') as [string, string];
  const feed: FeedConfig = { address, pair, base, quote, heartbeatSeconds: 3600, deviationThreshold: null };
  return {
    feed,
    description: pair,
    decimals: 8,
    roundId: 1n,
    answer,
    updatedAt: 0,
    publisher: { address, phase: null },
  };
}

test('behavior: USD prices from X/USD, X/ETH × ETH/USD, wrapped natives by the native (docs/decisions.md "Real sources")', () => {
  const { priceOf } = usdPrices([
    reading('WSTETH/ETH', 1.2),
    reading('ETH/USD', 3000),
    reading('USDC/USD', 0.9998),
    reading('BAD/USD', 0),
  ]);
  assert.deepEqual(priceOf('WETH'), { usd: 3000, feed: 'ETH/USD', description: 'ETH/USD' });
  assert.deepEqual(priceOf('wstETH'), { usd: 3600, feed: 'WSTETH/ETH', description: 'WSTETH/ETH × ETH/USD' });
  assert.deepEqual(priceOf('USDC.e'), { usd: 0.9998, feed: 'USDC/USD', description: 'USDC/USD' });
  // a feed answering 0 prices nothing (never a price of 0); an unknown token has none
  assert.equal(priceOf('BAD'), null);
  assert.equal(priceOf('PEPE'), null);
});

/** A ChainRpc whose getLogs refuses ranges longer than `max` blocks, recording the ranges asked. */
function fakeRpc(max: bigint, logsAt: Set<bigint>) {
  const asked: [bigint, bigint][] = [];
  const client = {
    async getLogs({ fromBlock, toBlock }: { fromBlock: bigint; toBlock: bigint }) {
      asked.push([fromBlock, toBlock]);
      if (toBlock - fromBlock + 1n > max)
        throw new Error('eth_getLogs block range is too large, max 2000 blocks');
      return [...logsAt].filter((b) => b >= fromBlock && b <= toBlock).map((b) => ({ blockNumber: b }));
    },
  } as unknown as PublicClient;
  const rpc: ChainRpc = {
    chainId: 1,
    client,
    requests: () => asked.length,
    callsAnswered: () => 0,
    walks: new Set(),
    now: Date.now,
    multicallOptions: async () => ({ deployless: true, batchSize: 4096 }),
    multicall: client.multicall,
  };
  return { rpc, asked };
}

test('behavior: log ranges halve on a provider range error and grow again while quiet', async () => {
  const { rpc, asked } = fakeRpc(3000n, new Set([5n, 2500n, 30_000n]));
  const logs = await getLogsAdaptive(rpc, {
    what: 'test',
    address: '0x0000000000000000000000000000000000000001',
    events: [],
    fromBlock: 0n,
    toBlock: 40_000n,
  });
  assert.deepEqual(
    (logs as unknown as { blockNumber: bigint }[]).map((l) => l.blockNumber),
    [5n, 2500n, 30_000n],
  );
  // 10,000 refused, 5,000 refused, 2,500 served; then 5,000 refused again, 2,500 ... every block once
  const served = asked.filter(([f, t]) => t - f + 1n <= 3000n);
  let next = 0n;
  for (const [f, t] of served) {
    assert.equal(f, next);
    next = t + 1n;
  }
  assert.equal(next, 40_001n);
  assert.deepEqual(asked.slice(0, 3), [
    [0n, 9_999n],
    [0n, 4_999n],
    [0n, 2_499n],
  ]);
});

test('behavior: eachLogs hands each answered range on in chain order and keeps none; its walk shows while it runs', async () => {
  const { rpc, asked } = fakeRpc(3000n, new Set([5n, 2500n, 30_000n]));
  const ranges: { blocks: bigint[]; walks: number; reached: number }[] = [];
  await eachLogs(
    rpc,
    {
      what: 'test',
      address: '0x0000000000000000000000000000000000000001',
      events: [],
      fromBlock: 0n,
      toBlock: 40_000n,
    },
    (logs) => {
      const [walk] = rpc.walks;
      ranges.push({
        blocks: (logs as unknown as { blockNumber: bigint }[]).map((l) => l.blockNumber),
        walks: rpc.walks.size,
        reached: walk!.reached,
      });
    },
  );
  // one call per range answered (the refused ones none), every log once, in order
  const served = asked.filter(([f, t]) => t - f + 1n <= 3000n);
  assert.equal(ranges.length, served.length);
  assert.deepEqual(
    ranges.flatMap((r) => r.blocks),
    [5n, 2500n, 30_000n],
  );
  // while a range is handed on, the walk shows the one before it as reached
  assert.deepEqual(
    ranges.map((r) => r.reached),
    [-1, ...served.slice(0, -1).map(([, t]) => Number(t))],
  );
  assert.ok(ranges.every((r) => r.walks === 1));
  assert.equal(rpc.walks.size, 0);
});

test('behavior: a quiet walk grows its ranges up to 100,000 blocks, never past', async () => {
  const { rpc, asked } = fakeRpc(1_000_000n, new Set());
  await getLogsAdaptive(rpc, {
    what: 'test',
    address: '0x0000000000000000000000000000000000000001',
    events: [],
    fromBlock: 0n,
    toBlock: 999_999n,
  });
  const sizes = asked.map(([f, t]) => Number(t - f + 1n));
  assert.deepEqual(sizes.slice(0, 6), [10_000, 20_000, 40_000, 80_000, 100_000, 100_000]);
  assert.ok(sizes.every((n) => n <= 100_000));
});

test('error: a getLogs failure that is not about the range is thrown, not retried smaller', async () => {
  const client = {
    async getLogs() {
      throw new Error('HTTP request failed: connection refused');
    },
  } as unknown as PublicClient;
  const rpc: ChainRpc = {
    chainId: 1,
    client,
    requests: () => 0,
    callsAnswered: () => 0,
    walks: new Set(),
    now: Date.now,
    multicallOptions: async () => ({ deployless: true, batchSize: 4096 }),
    multicall: client.multicall,
  };
  await assert.rejects(
    getLogsAdaptive(rpc, {
      what: 'test',
      address: '0x0000000000000000000000000000000000000001',
      events: [],
      fromBlock: 0n,
      toBlock: 10n,
    }),
    /connection refused/,
  );
  assert.equal(isRangeError(new Error('query returned more than 10000 results')), true);
  assert.equal(isRangeError(new Error('execution reverted')), false);
});

test('behavior: a call the contract answers badly leaves its item out; a failed request fails the pass', () => {
  // a bytes32 symbol (MKR) does not decode as a string: the token's item, not the pass
  const badAnswer = new ContractFunctionExecutionError(
    new AbiDecodingDataSizeTooSmallError({ data: '0x01', params: [], size: 1 }),
    { abi: [], functionName: 'symbol' },
  );
  assert.equal(isContractRefusal(badAnswer), true);
  // the whole batch failed (viem names the batch's call): the chain was not read
  const failedBatch = new ContractFunctionExecutionError(
    new HttpRequestError({ url: 'http://rpc', status: 502 }),
    {
      abi: [],
      functionName: 'aggregate3',
    },
  );
  assert.equal(isContractRefusal(failedBatch), false);
  assert.equal(isContractRefusal(new Error('fetch failed')), false);
  assert.doesNotThrow(() => throwIfUnread([{ status: 'failure', error: badAnswer }, { status: 'success' }]));
  assert.throws(
    () => throwIfUnread([{ status: 'success' }, { status: 'failure', error: failedBatch }]),
    /HTTP request failed/,
  );
});

test("behavior: a token's own text is cleaned and bounded (anyone may deploy a token and its market)", () => {
  assert.equal(tokenText('WETH', 32), 'WETH');
  assert.equal(tokenText(' Wrapped\n\tEther\u0000 ', 64), 'Wrapped Ether');
  assert.equal(tokenText('X'.repeat(1_000_000), 32), 'X'.repeat(32));
  assert.equal(tokenText('\u0001\u0002', 32), '');
});

test("behavior: rounds from shared logs: a publisher's other events are not rounds, and logs that disagree with the feed are not its rounds", async () => {
  const X = '0x00000000000000000000000000000000000000aa';
  const r = { ...reading('ETH/USD', 3000, X), roundId: 5n, publisher: { address: X, phase: null } };
  const answerUpdated = (round: bigint, answer: bigint) => ({
    address: X,
    eventName: 'AnswerUpdated',
    topics: [toEventSelector(ANSWER_UPDATED)],
    args: { current: answer, roundId: round, updatedAt: 1_700_000_000n + round },
  });
  const transfer = {
    address: X,
    eventName: 'Transfer',
    topics: [toEventSelector('event Transfer(address indexed from, address indexed to, uint256 amount)')],
    args: { from: X, to: X, amount: 1n },
  };
  const shared = (logs: SharedLogs['logs']): SharedLogs => ({
    fromBlock: 1n,
    toBlock: 9n,
    addresses: new Set([X]),
    logs,
  });
  const rpc = {} as ChainRpc; // every log comes from the shared read
  const range = { fromBlock: 1n, toBlock: 9n };
  // a Transfer from the same contract (its aggregator() may name any contract) is not a round
  const rounds = await readRounds(
    rpc,
    1,
    [r],
    range,
    shared([answerUpdated(4n, 2990n * 10n ** 8n), transfer, answerUpdated(5n, 3000n * 10n ** 8n)]),
  );
  assert.deepEqual(
    rounds.map((x) => [x.roundId, x.answer]),
    [
      ['4', 2990],
      ['5', 3000],
    ],
  );
  // an aggregator publishing for several feeds (a round id twice), or the feed's latest round with
  // another answer: none of its logs are this feed's rounds
  assert.deepEqual(
    await readRounds(
      rpc,
      1,
      [r],
      range,
      shared([answerUpdated(5n, 3000n * 10n ** 8n), answerUpdated(5n, 1n)]),
    ),
    [],
  );
  assert.deepEqual(await readRounds(rpc, 1, [r], range, shared([answerUpdated(5n, 2n * 10n ** 8n)])), []);
});

test('behavior: accounts read empty are kept until no reorganization can undo them; positions stay', () => {
  const reads = new AccountReads<{ debt: number }>();
  reads.set('m1', '0xa', { debt: 5 }, 10);
  reads.set('m1', '0xb', null, 10);
  reads.set('m2', '0xb', null, 12);
  reads.set('m2', '0xc', { debt: 1 }, 12);
  assert.equal(reads.size, 4);
  assert.deepEqual([...reads.keys()].sort(), ['m1:0xa', 'm1:0xb', 'm2:0xb', 'm2:0xc']);
  assert.deepEqual([...reads.of('m2').keys()], ['0xb', '0xc']);
  assert.equal(reads.of('m3').size, 0);
  // The oldest block a reorganization can roll back to is 11: the empty read at 10 goes.
  reads.settle(11);
  assert.equal(reads.has('m1', '0xb'), false);
  assert.equal(reads.get('m2', '0xb'), null);
  assert.deepEqual(reads.get('m1', '0xa'), { debt: 5 });
  // An account that holds something again is no longer empty: settling keeps it.
  reads.set('m2', '0xb', { debt: 2 }, 13);
  reads.settle(20);
  assert.deepEqual(reads.get('m2', '0xb'), { debt: 2 });
  assert.equal(reads.size, 3);
  // Emptied again, then forgotten by a later settle only.
  reads.set('m1', '0xa', null, 21);
  reads.settle(20);
  assert.equal(reads.get('m1', '0xa'), null);
  reads.settle(21);
  assert.equal(reads.get('m1', '0xa'), undefined);
  assert.deepEqual([...reads.keys()].sort(), ['m2:0xb', 'm2:0xc']);
  // forget: a group's accounts that a predicate selects; an emptied group leaves no trace.
  reads.set('m2', '0xd', null, 30);
  reads.forget('m2', (s) => s !== null);
  assert.deepEqual([...reads.keys()], ['m2:0xd']);
  reads.forget('m2');
  assert.equal(reads.size, 0);
  reads.settle(99);
  assert.equal(reads.size, 0);
});

test('behavior: accounts whose state is marked are listed per group as they are read, emptied, forgotten', () => {
  const reads = new AccountReads<{ supply: number }>((s) => s.supply > 0);
  reads.set('m1', '0xa', { supply: 5 }, 10);
  reads.set('m1', '0xb', { supply: 0 }, 10);
  reads.set('m2', '0xc', { supply: 1 }, 10);
  assert.deepEqual([...reads.markedIn('m1')], ['0xa']);
  assert.deepEqual([...reads.markedIn('m9')], []);
  // Read again: supplying now, or no longer; emptied.
  reads.set('m1', '0xb', { supply: 3 }, 11);
  reads.set('m1', '0xa', null, 11);
  assert.deepEqual([...reads.markedIn('m1')], ['0xb']);
  reads.set('m1', '0xb', { supply: 0 }, 12);
  assert.deepEqual([...reads.markedIn('m1')], []);
  // Forgotten one by one, by a predicate, or all.
  reads.set('m1', '0xd', { supply: 2 }, 13);
  reads.delete('m1', '0xd');
  assert.deepEqual([...reads.markedIn('m1')], []);
  reads.set('m2', '0xe', { supply: 2 }, 13);
  reads.forget('m2', (s) => s?.supply === 1);
  assert.deepEqual([...reads.markedIn('m2')], ['0xe']);
  reads.clear();
  assert.deepEqual([...reads.markedIn('m2')], []);
});
