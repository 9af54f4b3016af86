import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSources, parseSources, SourcesConfigError } from '../../src/ingest/sources-file.ts';
import { tempDir } from '../helpers.ts';

const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';

function problems(json: unknown): string[] {
  try {
    parseSources(json, 'sources.json');
  } catch (err) {
    assert.ok(err instanceof SourcesConfigError);
    return [...err.problems];
  }
  assert.fail('accepted');
}

test('default: a local chain with its addresses; feeds take heartbeats from the file, the reference data or a day', () => {
  const config = parseSources(
    {
      chains: [
        {
          chainId: 31337,
          rpcUrl: 'http://127.0.0.1:8545',
          morpho: { blue: A.toUpperCase().replace('0X', '0x') },
          chainlink: [
            { address: B, pair: 'ETH/USD', heartbeatSeconds: 3600, deviationPercent: 0.5 },
            { address: A, pair: 'wstETH/ETH' },
          ],
        },
      ],
    },
    'test',
    [
      {
        chainId: 31337,
        address: A,
        name: 'x',
        pair: 'WSTETH/ETH',
        baseAsset: null,
        quoteAsset: null,
        heartbeatSeconds: 86400,
        deviationPercent: 0.5,
      },
    ],
  );
  assert.deepEqual(config.chains[0], {
    chainId: 31337,
    rpcUrl: 'http://127.0.0.1:8545',
    rpcUrls: ['http://127.0.0.1:8545'],
    rpcLimits: {},
    confirmations: 0,
    rpcTimeoutMs: 10_000, // the default
    syncBlocks: 500_000, // the default
    stateMaxAgeSeconds: 30, // the default
    morpho: { blue: A, fromBlock: 0, vaultFactories: [] },
    aave: [],
    compound: [],
    euler: null,
    fluid: null,
    chainlink: [
      {
        address: B,
        pair: 'ETH/USD',
        base: 'ETH',
        quote: 'USD',
        heartbeatSeconds: 3600,
        deviationThreshold: 0.005,
      },
      {
        address: A,
        pair: 'wstETH/ETH',
        base: 'WSTETH',
        quote: 'ETH',
        heartbeatSeconds: 86400,
        deviationThreshold: 0.005,
      },
    ],
  });
  // a feed nobody describes: a day
  const bare = parseSources(
    { chains: [{ chainId: 5, rpcUrl: 'https://x', chainlink: [{ address: B, pair: 'X/USD' }] }] },
    't',
  );
  assert.equal(bare.chains[0]!.chainlink[0]!.heartbeatSeconds, 86400);
  assert.equal(bare.chains[0]!.morpho, null);
});

test('behavior: a known chain reads Morpho Blue and its MetaMorpho factory from the address book, each from its deployment block', () => {
  const config = parseSources({ chains: [{ chainId: 1, rpcUrl: 'https://rpc.example/v2/key' }] }, 'test');
  assert.deepEqual(config.chains[0]!.morpho, {
    blue: '0xbbbbbbbbbb9cc5e90e3b3af64bdaf62c37eeffcb',
    fromBlock: 18883124,
    vaultFactories: [
      // MetaMorpho v1.0's (not in the address book), from Blue's deployment; v1.1's from its own
      { address: '0xa9c3d3a366466fa809d1ae982fb2c46e5fc41101', fromBlock: 18883124 },
      { address: '0x1897a8997241c1cd4bd0698647e4eb7213535c24', fromBlock: 21439510 },
    ],
  });
  // Factories named (in any case, twice): a known one from its deployment whatever Blue's
  // fromBlock, another from its deployment found on the chain (null); [] reads none.
  const named = parseSources(
    {
      chains: [
        {
          chainId: 1,
          rpcUrl: 'https://x',
          morpho: {
            fromBlock: 22_000_000,
            vaultFactories: [
              A.toUpperCase().replace('0X', '0x'),
              A,
              '0x1897A8997241C1cD4bD0698647e4EB7213535c24',
            ],
          },
        },
      ],
    },
    'test',
  );
  assert.deepEqual(named.chains[0]!.morpho?.vaultFactories, [
    { address: A, fromBlock: null },
    { address: '0x1897a8997241c1cd4bd0698647e4eb7213535c24', fromBlock: 21439510 },
  ]);
  const none = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://x', morpho: { vaultFactories: [] } }] },
    'test',
  );
  assert.deepEqual(none.chains[0]!.morpho?.vaultFactories, []);
  assert.deepEqual(
    problems({ chains: [{ chainId: 1, rpcUrl: 'https://x', morpho: { vaultFactories: ['0x12'] } }] }),
    ['chains[0].morpho.vaultFactories[0]: must be a 0x address (40 hex digits)'],
  );
});

test('behavior: comets are read as listed; left out on a chain the reference knows, its comets; [] reads none', () => {
  const C = '0xc3d688b66703497daa19211eedff47f25384cdc3';
  const reference = [
    { chainId: 1, comet: C, rewards: '0x1b0e765f6224c21223aea2af16c1c46e38885a40' },
    { chainId: 8453, comet: '0xb125e6687d4313864e53df431d5425969c15eb2f' },
  ];
  const listed = parseSources(
    {
      chains: [
        {
          chainId: 7,
          rpcUrl: 'https://x',
          compound: [{ comet: '0xABCDEF0000000000000000000000000000000001', fromBlock: 12, rewards: B }],
        },
      ],
    },
    't',
    [],
    reference,
  );
  assert.deepEqual(listed.chains[0]!.compound, [
    { comet: '0xabcdef0000000000000000000000000000000001', fromBlock: 12, rewards: B },
  ]);
  const known = parseSources({ chains: [{ chainId: 1, rpcUrl: 'https://x' }] }, 't', [], reference);
  // with its rewards contract from the reference data
  assert.deepEqual(known.chains[0]!.compound, [
    { comet: C, fromBlock: null, rewards: '0x1b0e765f6224c21223aea2af16c1c46e38885a40' },
  ]);
  // listed without its rewards contract, a comet the reference knows takes the reference's
  const named = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://x', compound: [{ comet: C }] }] },
    't',
    [],
    reference,
  );
  assert.equal(named.chains[0]!.compound[0]!.rewards, '0x1b0e765f6224c21223aea2af16c1c46e38885a40');
  const none = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://x', compound: [] }] },
    't',
    [],
    reference,
  );
  assert.deepEqual(none.chains[0]!.compound, []);
  assert.deepEqual(
    problems({
      chains: [{ chainId: 7, rpcUrl: 'https://x', compound: [{ comet: A }, { comet: A }, { comet: 'x' }] }],
    }),
    ['chains[0].compound[2].comet: must be a 0x address (40 hex digits)'],
  );
  assert.throws(
    () =>
      parseSources(
        { chains: [{ chainId: 7, rpcUrl: 'https://x', compound: [{ comet: A }, { comet: A }] }] },
        't',
      ),
    (e: SourcesConfigError) =>
      e.problems.join() === `chains[0].compound[1].comet: duplicate ${A.toLowerCase()}`,
  );
});

test('behavior: a chain may set how long one JSON-RPC request may take (rpcTimeoutMs, 100 ms to 2 minutes)', () => {
  const config = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://rpc.example', rpcTimeoutMs: 2500 }] },
    'test',
  );
  assert.equal(config.chains[0]!.rpcTimeoutMs, 2500);
  assert.deepEqual(problems({ chains: [{ chainId: 1, rpcUrl: 'https://rpc.example', rpcTimeoutMs: 50 }] }), [
    'chains[0].rpcTimeoutMs: must be >= 100',
  ]);
});

test('behavior: a chain may set how many blocks of logs a pass of a sync reads (syncBlocks, at least 1)', () => {
  const config = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://rpc.example', syncBlocks: 2000 }] },
    'test',
  );
  assert.equal(config.chains[0]!.syncBlocks, 2000);
  assert.deepEqual(problems({ chains: [{ chainId: 1, rpcUrl: 'https://rpc.example', syncBlocks: 0 }] }), [
    'chains[0].syncBlocks: must be >= 1',
  ]);
});

test('error: every problem is listed at once, with its path', () => {
  assert.deepEqual(
    problems({
      chains: [
        { chainId: 0, rpcUrl: 'ftp://x', morpho: { blue: 'nope' }, extra: 1 },
        { chainId: 7, rpcUrl: 'https://x', chainlink: [{ address: A, pair: 'ETHUSD', heartbeatSeconds: 0 }] },
      ],
    }).sort(),
    [
      'chains[0].chainId: must be >= 1',
      'chains[0].extra: unknown field',
      'chains[0].morpho.blue: must be a 0x address (40 hex digits)',
      'chains[0].rpcUrl: must be an http:// or https:// URL',
      'chains[1].chainlink[0].heartbeatSeconds: must be >= 1',
      'chains[1].chainlink[0].pair: must be BASE/QUOTE, e.g. ETH/USD',
    ].sort(),
  );
  assert.deepEqual(problems({}), ['chains: at least one chain (or a morphoApi block) to read']);
  assert.deepEqual(problems({ chains: [] }), ['chains: at least one chain (or a morphoApi block) to read']);
  assert.deepEqual(
    problems({
      chains: [
        { chainId: 7, rpcUrl: 'https://x', morpho: {} },
        {
          chainId: 7,
          rpcUrl: 'https://y',
          chainlink: [
            { address: A, pair: 'A/USD' },
            { address: A, pair: 'A/USD' },
          ],
        },
      ],
    }),
    [
      'chains[0].morpho.blue: required on chain 7 (no address book entry)',
      'chains[1].chainId: duplicate 7',
      `chains[1].chainlink[1].address: duplicate ${A}`,
    ],
  );
});

test('the Morpho API: its URL and chains (pages of 500 unless given); chains may be left out; problems listed with the others', () => {
  const api = parseSources(
    { morphoApi: { url: 'https://api.morpho.org/graphql', chainIds: [8453, 1] } },
    't',
  );
  assert.deepEqual(api, {
    chains: [],
    morphoApi: { url: 'https://api.morpho.org/graphql', chainIds: [8453, 1], pageSize: 500 },
  });
  const both = parseSources(
    {
      chains: [{ chainId: 1, rpcUrl: 'https://x', aave: [] }],
      morphoApi: { url: 'https://api', chainIds: [1], pageSize: 100 },
    },
    't',
  );
  assert.deepEqual([both.chains.length, both.morphoApi!.pageSize], [1, 100]);
  assert.deepEqual(
    problems({
      chains: [{ chainId: 1, rpcUrl: 'https://x' }],
      morphoApi: { url: 'ftp://api', chainIds: [], pageSize: 5000, key: 'x' },
    }).sort(),
    [
      'morphoApi.chainIds: must not have fewer than 1 items',
      'morphoApi.key: unknown field',
      'morphoApi.pageSize: must be <= 1000',
      'morphoApi.url: must be an http:// or https:// URL',
    ],
  );
  assert.deepEqual(problems({ morphoApi: { url: 'https://api', chainIds: [1, 1] } }), [
    'morphoApi.chainIds[1]: duplicate 1',
  ]);
});

test('Fluid: its resolvers where it is deployed unless the file names others; null reads none; elsewhere both are required', () => {
  const deployed = parseSources({ chains: [{ chainId: 8453, rpcUrl: 'https://x' }] }, 't');
  assert.deepEqual(deployed.chains[0]!.fluid, {
    vaultResolver: '0xa5c3e16523eeeddcc34706b0e6be88b4c6ea95cc',
    positionsResolver: '0xaa21a86030eaa16546a759d2d10fd3bf9d053bc7',
    fromBlock: 17_391_489,
  });
  const own = parseSources(
    { chains: [{ chainId: 8453, rpcUrl: 'https://x', fluid: { vaultResolver: A, fromBlock: 5 } }] },
    't',
  );
  assert.deepEqual(own.chains[0]!.fluid, {
    vaultResolver: A,
    positionsResolver: '0xaa21a86030eaa16546a759d2d10fd3bf9d053bc7',
    fromBlock: 5,
  });
  // Other resolvers: their factory's block is searched by the source, as is Arbitrum's (not recorded).
  assert.equal(
    parseSources({ chains: [{ chainId: 8453, rpcUrl: 'https://x', fluid: { vaultResolver: A } }] }, 't')
      .chains[0]!.fluid!.fromBlock,
    null,
  );
  assert.equal(
    parseSources({ chains: [{ chainId: 42161, rpcUrl: 'https://x' }] }, 't').chains[0]!.fluid!.fromBlock,
    null,
  );
  assert.equal(
    parseSources({ chains: [{ chainId: 1, rpcUrl: 'https://x', fluid: null }] }, 't').chains[0]!.fluid,
    null,
  );
  assert.equal(
    parseSources({ chains: [{ chainId: 31337, rpcUrl: 'https://x' }] }, 't').chains[0]!.fluid,
    null,
  );
  assert.deepEqual(
    problems({ chains: [{ chainId: 31337, rpcUrl: 'https://x', fluid: { vaultResolver: A } }] }),
    ["chains[0].fluid.positionsResolver: required on chain 31337 (Fluid's is not known there)"],
  );
});

test('behavior: Aave and Spark pools are read as listed; left out on a chain the reference knows, its pools', () => {
  const reference = [
    { chainId: 1, protocol: 'aave' as const, pool: A },
    { chainId: 1, protocol: 'spark' as const, pool: B },
    { chainId: 8453, protocol: 'aave' as const, pool: '0xa238dd80c259a72e81d7e4664a9801593f98d1c5' },
  ];
  const listed = parseSources(
    {
      chains: [
        {
          chainId: 7,
          rpcUrl: 'https://x',
          aave: [{ pool: '0xABCDEF0000000000000000000000000000000001', fromBlock: 12 }],
          spark: [{ pool: B }],
        },
      ],
    },
    't',
    [],
    [],
    reference,
  );
  assert.deepEqual(listed.chains[0]!.aave, [
    { protocol: 'aave', pool: '0xabcdef0000000000000000000000000000000001', fromBlock: 12 },
    { protocol: 'spark', pool: B, fromBlock: null },
  ]);
  const known = parseSources({ chains: [{ chainId: 1, rpcUrl: 'https://x' }] }, 't', [], [], reference);
  assert.deepEqual(known.chains[0]!.aave, [
    { protocol: 'aave', pool: A, fromBlock: null },
    { protocol: 'spark', pool: B, fromBlock: null },
  ]);
  const none = parseSources(
    { chains: [{ chainId: 1, rpcUrl: 'https://x', aave: [], spark: [] }] },
    't',
    [],
    [],
    reference,
  );
  assert.deepEqual(none.chains[0]!.aave, []);
  assert.deepEqual(
    problems({
      chains: [{ chainId: 7, rpcUrl: 'https://x', aave: [{ pool: A }], spark: [{ pool: A }, { pool: 'x' }] }],
    }),
    ['chains[0].spark[1].pool: must be a 0x address (40 hex digits)'],
  );
  assert.deepEqual(
    problems({ chains: [{ chainId: 7, rpcUrl: 'https://x', aave: [{ pool: A }], spark: [{ pool: A }] }] }),
    [`chains[0].spark: duplicate pool ${A}`],
  );
});

test('behavior: Euler v2 is read where its EVC is given (from the EVC deployment unless fromBlock says)', () => {
  const parsed = parseSources(
    {
      chains: [
        { chainId: 7, rpcUrl: 'https://x', euler: { evc: A.toUpperCase().replace('0X', '0x') } },
        { chainId: 8, rpcUrl: 'https://y', euler: { evc: A, factory: B, fromBlock: 12 } },
        { chainId: 9, rpcUrl: 'https://z' },
      ],
    },
    'test',
  );
  assert.deepEqual(
    parsed.chains.map((c) => c.euler),
    [
      { evc: A.toLowerCase(), factory: null, fromBlock: null },
      { evc: A.toLowerCase(), factory: B, fromBlock: 12 },
      null,
    ],
  );
  assert.deepEqual(problems({ chains: [{ chainId: 7, rpcUrl: 'https://x', euler: { vault: A } }] }), [
    'chains[0].euler: must have required properties evc',
    'chains[0].euler.vault: unknown field',
  ]);
});

test('error: an unreadable or malformed file says so', () => {
  const dir = tempDir('lrds-sources-');
  assert.throws(() => loadSources(join(dir, 'missing.json')), /cannot read the file/);
  const file = join(dir, 'bad.json');
  writeFileSync(file, '{ "chains": [');
  assert.throws(() => loadSources(file), /not JSON/);
});

test('behavior: fallback RPC URLs follow rpcUrl in order; the provider limits given are kept, bad ones listed', () => {
  const config = parseSources(
    {
      chains: [
        {
          chainId: 31337,
          rpcUrl: 'https://a.example',
          fallbackRpcUrls: ['https://b.example', 'https://c.example'],
          rpcLimits: { batchCalls: 20, requestsPerSecond: 25 },
          rpcTimeoutMs: 5000,
        },
      ],
    },
    'test',
  );
  assert.deepEqual(config.chains[0]?.rpcUrls, [
    'https://a.example',
    'https://b.example',
    'https://c.example',
  ]);
  assert.deepEqual(config.chains[0]?.rpcLimits, { batchCalls: 20, requestsPerSecond: 25 });
  assert.equal(config.chains[0]?.rpcTimeoutMs, 5000);
  const wrong = problems({
    chains: [
      {
        chainId: 1,
        rpcUrl: 'https://a',
        fallbackRpcUrls: ['ftp://b'],
        rpcLimits: { batchCalls: 0, burst: 3 },
      },
    ],
  });
  assert.ok(
    wrong.some((p) => p.includes('fallbackRpcUrls')),
    wrong.join('\n'),
  );
  assert.ok(
    wrong.some((p) => p.includes('batchCalls')),
    wrong.join('\n'),
  );
  assert.ok(
    wrong.some((p) => p.includes('burst')),
    wrong.join('\n'),
  );
});
