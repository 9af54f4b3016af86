/**
 * A chain source's pass and checkpoint without a chain: a stand-in RPC that answers blocks only
 * (no protocol configured, no feed), so the pass's head, reorganization check and checkpoint are
 * all that runs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_PENDING, pending, readCheckpoint, writeCheckpoint } from '../../src/ingest/chain/checkpoint.ts';
import { eulerAdapter } from '../../src/ingest/chain/euler-pass.ts';
import { morphoAdapter } from '../../src/ingest/chain/morpho-pass.ts';
import { type ChainRpc, createChainRpc } from '../../src/ingest/chain/rpc.ts';
import { chainSource } from '../../src/ingest/chain/source.ts';
import type { ItemReport, PreviousRun } from '../../src/ingest/contract.ts';
import type { ChainConfig } from '../../src/ingest/sources-file.ts';

const CHAIN: ChainConfig = {
  chainId: 31337,
  rpcUrl: 'http://127.0.0.1:1',
  rpcUrls: ['http://127.0.0.1:1'],
  rpcLimits: {},
  confirmations: 0,
  rpcTimeoutMs: 1000,
  syncBlocks: 500_000,
  stateMaxAgeSeconds: 30,
  morpho: null,
  aave: [],
  compound: [],
  euler: null,
  fluid: null,
  chainlink: [],
};

type Block = { number: bigint; hash: string; parentHash: string; timestamp: bigint };
const hash = (n: number, fork = 0) => `0x${fork}${n.toString(16).padStart(63, '0')}`;
const block = (n: number, fork = 0, parentFork = fork): Block => ({
  number: BigInt(n),
  hash: hash(n, fork),
  parentHash: hash(n - 1, parentFork),
  timestamp: BigInt(1_700_000_000 + n * 12),
});

/** An RPC that knows blocks only: the head, and the blocks of `chain` by number. */
function blocksOnly(chain: Map<number, Block>, head: () => number): ChainRpc {
  return {
    requests: () => 0,
    callsAnswered: () => 0,
    walks: new Set(),
    now: () => 0,
    client: {
      getBlock: async (args: { blockTag?: 'latest'; blockNumber?: bigint }) =>
        chain.get(args.blockNumber === undefined ? head() : Number(args.blockNumber))!,
    },
  } as unknown as ChainRpc;
}

/**
 * A stand-in RPC for Morpho Blue with no market (the blocks of `chain`; multicalls answer zero
 * addresses) whose getLogs calls are noted in `asked`: the shared read, or a reader's own walk.
 */
function morphoOnly(chain: Map<number, Block>, head: number, asked: [string, bigint, bigint][]): ChainRpc {
  const base = blocksOnly(chain, () => head);
  return {
    ...base,
    multicallOptions: async () => ({ deployless: true, batchSize: 4096 }),
    multicall: async ({ contracts }: { contracts: unknown[] }) =>
      contracts.map(() => ({ status: 'success', result: `0x${'0'.repeat(40)}` })),
    client: {
      ...base.client,
      getLogs: async (args: { address: string | string[]; fromBlock: bigint; toBlock: bigint }) => {
        asked.push([Array.isArray(args.address) ? 'shared' : 'own', args.fromBlock, args.toBlock]);
        return [];
      },
    },
  } as unknown as ChainRpc;
}

function previousOf(cursor: string | null | undefined, lastBlock: number): PreviousRun {
  return {
    state: {
      id: 'chain:31337',
      kind: 'chain',
      chainIds: [31337],
      refreshedAt: 0,
      lastBlock: { '31337': lastBlock },
      consecutiveFailures: 0,
      lastError: null,
      updatedAt: 0,
      cursor: cursor ?? null,
    },
    markets: [],
    positions: [],
  };
}

describe('chain source checkpoint', () => {
  test('default: every protocol writes its part, in the stored layout', async () => {
    const chain = new Map([[100, block(100)]]);
    const out = await chainSource(
      CHAIN,
      blocksOnly(chain, () => 100),
    ).run(0);
    assert.equal(
      out.cursor,
      JSON.stringify({
        recent: [[100, hash(100)]],
        morpho: null,
        morphoWalking: null,
        markets: [],
        pending: [],
        vaultFactories: '',
        vaults: [],
        vaultsBeyondLimit: 0,
        vaultCaps: {},
        cometPending: [],
        comets: [],
        cometsTruncated: [],
        euler: null,
        eulerWas: null,
        eulerWalking: null,
        eulerVaults: [],
        eulerPending: [],
        aave: [],
        aaveFrom: {},
        aavePending: [],
        fluid: null,
        fluidVaults: [],
        fluidTruncated: [],
        fluidFactories: [],
        fluidHeld: [],
        fluidUnplaced: [],
      }),
    );
    assert.deepEqual(out.items, []);
    assert.deepEqual(out.blocks, { '31337': 100 });
    assert.equal(out.reorg, undefined);
  });

  test('behavior: a pass resumes after the last block read while its hash is on the chain', async () => {
    const chain = new Map([
      [100, block(100)],
      [101, block(101)],
    ]);
    let head = 100;
    const source = chainSource(
      CHAIN,
      blocksOnly(chain, () => head),
    );
    const first = await source.run(0);
    head = 101;
    const second = await source.run(0, previousOf(first.cursor, 100));
    assert.equal(second.reorg, undefined);
    assert.deepEqual(second.items, []);
    assert.deepEqual(readCheckpoint(second.cursor ?? null).recent, [
      [100, hash(100)],
      [101, hash(101)],
    ]);
  });

  test('behavior: a reorganization past every block kept reads the chain again from its start', async () => {
    const chain = new Map([[100, block(100)]]);
    let head = 100;
    const source = chainSource(
      CHAIN,
      blocksOnly(chain, () => head),
    );
    const first = await source.run(0);
    // Block 100 replaced: 101 on another fork.
    chain.set(100, block(100, 1));
    chain.set(101, block(101, 1));
    head = 101;
    const second = await source.run(0, previousOf(first.cursor, 100));
    assert.deepEqual(second.reorg, { chainId: 31337, fromBlock: 0, fromMs: 0 });
    assert.deepEqual(second.items, [{ id: 'reorg:0', ok: true }]);
    assert.deepEqual(readCheckpoint(second.cursor ?? null).recent, [[101, hash(101, 1)]]);
  });

  test('behavior: the RPC behind the last block read fails the pass, the data stays', async () => {
    const chain = new Map([[100, block(100)]]);
    const source = chainSource(
      CHAIN,
      blocksOnly(chain, () => 100),
    );
    await source.run(0);
    const cursor = writeCheckpoint(
      [
        [100, hash(100)],
        [101, hash(101)],
      ],
      [],
    );
    await assert.rejects(source.run(0, previousOf(cursor, 101)), /behind the last block read \(101\)/);
  });

  test('behavior: a checkpoint of another configuration is not resumed', () => {
    const morpho = morphoAdapter({ ...CHAIN, morpho: { blue: '0xb1', fromBlock: 5, vaultFactories: [] } });
    assert.equal(morpho.sameConfig(readCheckpoint(JSON.stringify({ recent: [], morpho: '0xb1:5' }))), true);
    assert.equal(morpho.sameConfig(readCheckpoint(JSON.stringify({ recent: [], morpho: '0xb1:6' }))), false);
    assert.equal(morpho.sameConfig(readCheckpoint(JSON.stringify({ recent: [] }))), true);
    // (A chain read without Morpho: Morpho added walks its own logs; a walk of another
    // configuration, or of Morpho taken out of the file, reads the chain again.)
    assert.equal(morpho.sameConfig(readCheckpoint(JSON.stringify({ recent: [], morpho: null }))), true);
    const walking = (w: string) =>
      readCheckpoint(JSON.stringify({ recent: [], morpho: null, morphoWalking: w }));
    assert.equal(morpho.sameConfig(walking('0xb1:5')), true);
    assert.equal(morpho.sameConfig(walking('0xb1:6')), false);
    assert.equal(morphoAdapter(CHAIN).sameConfig(walking('0xb1:5')), false);
    // Euler: another EVC than the last ever read; adding it, or leaving it out, is not a change.
    const euler = eulerAdapter({ ...CHAIN, euler: { evc: '0xe1', factory: null, fromBlock: 1 } });
    assert.equal(euler.sameConfig(readCheckpoint(JSON.stringify({ eulerWas: '0xe1:1' }))), true);
    assert.equal(euler.sameConfig(readCheckpoint(JSON.stringify({ eulerWas: '0xe0:1' }))), false);
    assert.equal(euler.sameConfig(readCheckpoint(JSON.stringify({ euler: '0xe0:1' }))), false);
    assert.equal(euler.sameConfig(readCheckpoint(JSON.stringify({ eulerWas: null }))), true);
    assert.equal(
      eulerAdapter(CHAIN).sameConfig(readCheckpoint(JSON.stringify({ eulerWas: '0xe0:1' }))),
      true,
    );
  });

  test('error: a cursor that cannot be read is an empty one', () => {
    for (const cursor of [null, '', '{', 'null', '5', '"x"', '[1]'])
      assert.deepEqual(readCheckpoint(cursor).recent, [], String(cursor));
    assert.deepEqual(readCheckpoint(JSON.stringify({ recent: [[1, 'a'], ['2', 'b'], [3]] })).recent, [
      [1, 'a'],
    ]);
  });

  test('behavior: accounts kept for later are capped, the rest named in an item', () => {
    const items: ItemReport[] = [];
    const pass = { items, maxPending: MAX_PENDING };
    const keys = Array.from({ length: MAX_PENDING + 2 }, (_, i) => `m:${i}`);
    assert.equal(pending(pass, 'morpho', 'accounts of markets not served', keys).length, MAX_PENDING);
    assert.deepEqual(items, [
      {
        id: 'morpho:pending',
        ok: false,
        error: `${MAX_PENDING + 2} accounts of markets not served: the first ${MAX_PENDING} are kept for when they are`,
      },
    ]);
    assert.deepEqual(pending(pass, 'morpho', 'x', ['a:b']), ['a:b']);
    assert.deepEqual(pending({ items, maxPending: 1 }, 'euler', 'x', ['a:b', 'a:c']), ['a:b']);
    assert.equal(items.length, 2);
    assert.deepEqual(items[1]!.error, '2 x: the first 1 are kept for when they are');
  });

  test('error: a chain source keeps a positive whole number of accounts for later, or refuses to start', () => {
    const rpc = createChainRpc(CHAIN.chainId, ['http://127.0.0.1:1']);
    for (const maxPending of [0, -1, 1.5, Number.NaN])
      assert.throws(
        () => chainSource(CHAIN, rpc, undefined, { maxPending }),
        /maxPending must be a positive integer/,
      );
    assert.equal(chainSource(CHAIN, rpc, undefined, { maxPending: 1 }).id, `chain:${CHAIN.chainId}`);
  });
});

describe('a pass over many blocks', () => {
  test("behavior: within one request's range every reader takes its part of one read; over more, each walks its own, range by range", async () => {
    const BLUE = `0x${'b1'.repeat(20)}`;
    const asked: [string, bigint, bigint][] = [];
    const runAfter = async (last: number, head: number) => {
      const chain = new Map([
        [last, block(last)],
        [head, block(head)],
      ]);
      const rpc = morphoOnly(chain, head, asked);
      const source = chainSource({ ...CHAIN, morpho: { blue: BLUE, fromBlock: 0, vaultFactories: [] } }, rpc);
      asked.length = 0;
      await source.run(0, previousOf(writeCheckpoint([[last, hash(last)]], []), last));
      return [...asked];
    };
    // 9,999 blocks: the one read of every contract
    assert.deepEqual(await runAfter(40_000, 49_999), [['shared', 40_001n, 49_999n]]);
    // 20,000 blocks: Morpho walks its own, from its first range on
    assert.deepEqual(await runAfter(30_000, 50_000), [
      ['own', 30_001n, 40_000n],
      ['own', 40_001n, 50_000n],
    ]);
  });
});

describe('a contract added while the chain resumes', () => {
  test('behavior: Morpho added walks its own logs syncBlocks a pass, from where the stored walk stopped, reported as the least advanced sync; a reorganization below it moves it back', async () => {
    const BLUE = `0x${'b1'.repeat(20)}`;
    const config = { ...CHAIN, syncBlocks: 10_000, morpho: { blue: BLUE, fromBlock: 0, vaultFactories: [] } };
    const asked: [string, bigint, bigint][] = [];
    const run = async (cursor: string, last: number, head: number, blocks: Block[] = []) => {
      const chain = new Map<number, Block>([
        [last, block(last)],
        [head, block(head)],
      ]);
      for (const b of blocks) chain.set(Number(b.number), b);
      asked.length = 0;
      const out = await chainSource(config, morphoOnly(chain, head, asked)).run(0, previousOf(cursor, last));
      return { out, asked: [...asked], cursor: JSON.parse(out.cursor!) };
    };
    const key = `morpho:${BLUE}:0`;
    // The chain read through block 50,000 without Morpho; 100 blocks since.
    const without = writeCheckpoint([[50_000, hash(50_000)]], [{ morpho: null }]);
    const first = await run(without, 50_000, 50_100);
    assert.deepEqual(first.asked, [['own', 0n, 9_999n]]);
    assert.deepEqual(first.out.sync, {
      '31337': { fromBlock: 0, throughBlock: 9_999, toBlock: 50_100, startedAt: 0, accounts: 0 },
    });
    assert.deepEqual(first.cursor.walks, { [key]: { fromBlock: 0, throughBlock: 9_999, startedAt: 0 } });
    assert.deepEqual([first.cursor.morpho, first.cursor.morphoWalking], [null, `${BLUE}:0`]);
    // The next pass (a new process) goes on from there.
    const second = await run(first.out.cursor!, 50_100, 50_200);
    assert.deepEqual(second.asked, [['own', 10_000n, 19_999n]]);
    assert.equal(second.out.sync?.['31337']?.throughBlock, 19_999);
    // A reorganization back to block 10,000 (the newest of the checkpoint's recent blocks still on
    // the chain; the walk had gone past it): the walk is read again from there.
    const reorged = writeCheckpoint(
      [
        [10_000, hash(10_000)],
        [50_200, hash(50_200)],
      ],
      [
        {
          morpho: null,
          morphoWalking: `${BLUE}:0`,
          walks: { [key]: { fromBlock: 0, throughBlock: 19_999, startedAt: 0 } },
        },
      ],
    );
    // (Blocks 50,200 and on are another fork now; 10,000 is still on the chain.)
    const back = await run(reorged, 50_200, 50_300, [block(10_000), block(50_200, 1), block(50_300, 1)]);
    assert.ok(
      back.asked.some(([what, from]) => what === 'own' && from === 10_001n),
      JSON.stringify(back.asked.map(String)),
    );
    // Caught up: no sync, Morpho resumes with the others from the next pass on.
    const near = writeCheckpoint(
      [[50_300, hash(50_300)]],
      [
        {
          morpho: null,
          morphoWalking: `${BLUE}:0`,
          walks: { [key]: { fromBlock: 0, throughBlock: 45_000, startedAt: 0 } },
        },
      ],
    );
    const done = await run(near, 50_300, 50_400);
    assert.deepEqual(done.asked, [['own', 45_001n, 50_400n]]);
    assert.deepEqual(done.out.sync, { '31337': null });
    assert.deepEqual(
      [done.cursor.morpho, done.cursor.morphoWalking, done.cursor.walks],
      [`${BLUE}:0`, null, undefined],
    );
  });
});

describe('a contract walking while the chain syncs', () => {
  test("behavior: the least advanced of the two is the chain's sync, reported whole: its own start and pace", async () => {
    const BLUE = `0x${'b1'.repeat(20)}`;
    const config = { ...CHAIN, syncBlocks: 10_000, morpho: { blue: BLUE, fromBlock: 0, vaultFactories: [] } };
    const key = `morpho:${BLUE}:0`;
    // The chain's state read at block 90,000, its logs through 50,300 (a sync begun at block 0,
    // at time 0); Morpho, added at time 7,000, walked its logs from 40,000 through 45,000.
    const cursor = writeCheckpoint(
      [[90_000, hash(90_000)]],
      [
        {
          morpho: null,
          morphoWalking: `${BLUE}:0`,
          walks: { [key]: { fromBlock: 40_000, throughBlock: 45_000, startedAt: 7_000 } },
          sync: { fromBlock: 0, throughBlock: 50_300, toBlock: 90_000, startedAt: 0, accounts: 0 },
        },
      ],
    );
    const chain = new Map([[90_000, block(90_000)]]);
    const asked: [string, bigint, bigint][] = [];
    const out = await chainSource(config, morphoOnly(chain, 90_000, asked)).run(
      9_000,
      previousOf(cursor, 90_000),
    );
    // The chain's logs go on to 60,300, Morpho's to 55,000: Morpho's walk is the sync.
    assert.deepEqual(out.sync, {
      '31337': { fromBlock: 40_000, throughBlock: 55_000, toBlock: 90_000, startedAt: 7_000, accounts: 0 },
    });
    const parts = JSON.parse(out.cursor!);
    assert.equal(parts.sync.throughBlock, 60_300);
    assert.deepEqual(parts.walks[key], { fromBlock: 40_000, throughBlock: 55_000, startedAt: 7_000 });
  });
});

describe("a first sync's progress", () => {
  test('behavior: each log walk shows as it goes (blocks done of blocks to do, logs, an estimate at its pace), and nothing once the run ends', async () => {
    const head = 100_000;
    const chain = new Map([[head, block(head)]]);
    let nowMs = 1_000_000;
    let fail: (err: Error) => void = () => {};
    const asked: bigint[] = [];
    const base = blocksOnly(chain, () => head);
    const rpc = {
      ...base,
      now: () => nowMs,
      multicallOptions: async () => ({ deployless: true, batchSize: 4096 }),
      client: {
        ...base.client,
        // The first range answers at once (no log); the second hangs until the test fails it.
        getLogs: async ({ fromBlock }: { fromBlock: bigint }) => {
          asked.push(fromBlock);
          if (fromBlock === 0n) return [];
          return new Promise((_, reject) => {
            fail = reject;
          });
        },
      },
    } as unknown as ChainRpc;
    const source = chainSource(
      { ...CHAIN, morpho: { blue: `0x${'b1'.repeat(20)}`, fromBlock: 0, vaultFactories: [] } },
      rpc,
    );
    assert.equal(source.progress!(nowMs), null);
    const run = source.run(nowMs);
    while (asked.length < 2) await new Promise((r) => setImmediate(r));
    nowMs += 10_000;
    assert.deepEqual(source.progress!(nowMs), {
      source: 'chain:31337',
      callsAnswered: 0,
      logWalks: [
        {
          what: 'morpho',
          fromBlock: 0,
          toBlock: head,
          reachedBlock: 9_999,
          blocksDone: 10_000,
          blocksTotal: 100_001,
          logs: 0,
          // 90,001 blocks left at 10,000 blocks in 10 s
          estimateSeconds: 91,
        },
      ],
    });
    fail(new Error('HTTP request failed: connection refused'));
    await assert.rejects(run, /connection refused/);
    assert.equal(source.progress!(nowMs), null);
  });
});

describe("a first pass's deployment searches", () => {
  const COMET = `0x${'c0'.repeat(20)}`;
  const POOL = `0x${'a0'.repeat(20)}`;
  /** getCode: the comet's fails at once; the pool's answers after a while, deployed at block 50. */
  function searching(): { rpc: ChainRpc; asked: () => number } {
    const chain = new Map([[100, block(100)]]);
    const rpc = blocksOnly(chain, () => 100);
    let asked = 0;
    (rpc.client as unknown as Record<string, unknown>)['getCode'] = async (args: {
      address: string;
      blockNumber: bigint;
    }) => {
      asked++;
      if (args.address === COMET) throw new Error('HTTP request failed: connection reset');
      await new Promise((r) => setTimeout(r, 5));
      return args.blockNumber >= 50n ? '0x60' : '0x';
    };
    return { rpc, asked: () => asked };
  }

  test('error: one that fails fails the pass once the others have ended: none goes on after it', async () => {
    const { rpc, asked } = searching();
    const config: ChainConfig = {
      ...CHAIN,
      compound: [{ comet: COMET, fromBlock: null, rewards: null }],
      aave: [{ protocol: 'aave', pool: POOL, fromBlock: null }],
    };
    await assert.rejects(chainSource(config, rpc).run(0), /connection reset/);
    const atFailure = asked();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(asked(), atFailure);
    // (The pool's search, to block 50 of 100, went to its end: its first answer, then a bisection.)
    assert.ok(atFailure >= 8, String(atFailure));
  });
});

describe("a pass's protocols, read at once", () => {
  test('error: one whose read fails fails the pass once the others have ended: none goes on after it', async () => {
    const BLUE = `0x${'b1'.repeat(20)}`;
    const COMET = `0x${'c0'.repeat(20)}`;
    const HEAD = 200_000;
    const rpc = blocksOnly(new Map([[HEAD, block(HEAD)]]), () => HEAD);
    let asked = 0;
    const slow = () => new Promise((r) => setTimeout(r, 5));
    Object.assign(rpc, {
      multicallOptions: async () => ({ deployless: true, batchSize: 1024 }),
      // The comet's first read fails at once; Morpho Blue's walk of its logs goes on range by
      // range (none found), then its markets' read fails.
      multicall: async () => {
        asked++;
        throw new Error('the comet refused');
      },
    });
    Object.assign(rpc.client, {
      getLogs: async () => {
        asked++;
        await slow();
        return [];
      },
    });
    const config: ChainConfig = {
      ...CHAIN,
      morpho: { blue: BLUE, fromBlock: 0, vaultFactories: [] },
      compound: [{ comet: COMET, fromBlock: 0, rewards: null }],
    };
    await assert.rejects(chainSource(config, rpc).run(0), /the comet refused/);
    const atFailure = asked;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(asked, atFailure);
    assert.ok(atFailure >= 3, String(atFailure));
  });
});
