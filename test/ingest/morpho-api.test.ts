/**
 * The Morpho API source on answers in the API's shape (test/ingest/fixtures/morpho-api.json:
 * composed, not recorded; see its `_source`), served by a fake endpoint that filters and pages
 * as the API does. No network: the source's requests go through an injected fetch.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { MarketRecord } from '../../src/domain/types.ts';
import {
  type FetchFn,
  LIQUIDATION_OVERLAP_SECONDS,
  morphoApiSource,
} from '../../src/ingest/api/morpho-api.ts';
import { configuredSources } from '../../src/ingest/chain/index.ts';
import type { ItemReport, Source } from '../../src/ingest/contract.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import type { Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, liveService, tempDir } from '../helpers.ts';

type Doc = Record<'markets' | 'marketPositions' | 'transactions' | 'vaults', Record<string, any>[]>;
const FIXTURE: Doc = JSON.parse(readFileSync(new URL('./fixtures/morpho-api.json', import.meta.url), 'utf8'));
const URL_ = 'https://api.morpho.example/graphql';
/** The fixture's liquidations are an hour or two before this (unix seconds). */
const NOW_S = 1_795_000_000;
const WBTC_USDC = '0x3a85e619751152991742810df6ec69ce473daef99e28a64ab2340d7b7ccfee49';
const WSTETH_USDC = '0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc';
const CBBTC_USDC = '0x9103c3b4e834476c9a62ea009ba2c884ee42e94e6e314a26f04d312434191836';
const UNPRICED = '0x2ce8b29989e1bd924128fa5976ae6f135b11f3448fe287c5c88de946e97650a2';
const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';

const FIELDS: Record<string, keyof Doc> = {
  Markets: 'markets',
  Positions: 'marketPositions',
  Liquidations: 'transactions',
  Vaults: 'vaults',
};

interface FakeApi {
  fetch: FetchFn;
  calls: { op: string; variables: Record<string, any> }[];
  /** The doc served (a test may change it). */
  doc: Doc;
  /** Pages larger than this are refused as too complex. */
  maxFirst: number;
  /** Answer every request with this HTTP status (and no data), when set. */
  down: number | null;
}

/** An endpoint that answers the four queries from `doc`, filtered by chain (and time) and paged as the API does. */
function fakeApi(doc: Doc = structuredClone(FIXTURE)): FakeApi {
  const api: FakeApi = {
    calls: [],
    doc,
    maxFirst: Number.POSITIVE_INFINITY,
    down: null,
    fetch: async (url, init) => {
      assert.equal(url, URL_);
      const body = JSON.parse(init.body) as { query: string; variables: Record<string, any> };
      const op = /query (\w+)/.exec(body.query)![1]!;
      const v = body.variables;
      api.calls.push({ op, variables: v });
      const answer = (status: number, json: unknown) => ({
        ok: status < 300,
        status,
        json: async () => json,
      });
      if (api.down !== null) return answer(api.down, { message: 'unavailable' });
      if (v.first > api.maxFirst)
        return answer(200, {
          errors: [
            { message: `Query complexity of ${v.first * 1000} exceeds the maximum allowed complexity` },
          ],
          data: null,
        });
      const field = FIELDS[op]!;
      const chainOf = (x: Record<string, any>): number =>
        field === 'markets'
          ? x.morphoBlue.chain.id
          : field === 'marketPositions'
            ? x.market.morphoBlue.chain.id
            : x.chain.id;
      const all = api.doc[field].filter(
        (x) => v.chainIds.includes(chainOf(x)) && (field !== 'transactions' || x.timestamp >= v.since),
      );
      return answer(200, { data: { [field]: { items: all.slice(v.skip, v.skip + v.first) } } });
    },
  };
  return api;
}

const config = (chainIds = [1, 8453], pageSize = 2) => ({ url: URL_, chainIds, pageSize });
const near = (a: number, b: number, what: string, tol = 0.005) =>
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

describe('the Morpho API source, end to end', () => {
  const clock = new ManualClock(NOW_S * 1000);
  const api = fakeApi();
  const source = morphoApiSource(config(), { fetch: api.fetch });
  let dataDir: string;
  let store: Store;
  let service: Service;
  let key: string;
  let firstItems: ItemReport[] = [];
  const get = apiGet(() => ({ service, key }));

  before(async () => {
    dataDir = tempDir('lrds-morpho-api-');
    store = await openStore({ dataDir, databaseUrl: null }, clock);
    const pass = await ingestLive([source], store, clock);
    firstItems = pass.runs[0]!.items;
    assert.equal(pass.runs[0]!.ok, true, pass.runs[0]!.error ?? '');
    assert.deepEqual(
      [pass.runs[0]!.markets, pass.runs[0]!.positions, pass.runs[0]!.vaults, pass.runs[0]!.liquidations],
      [4, 3, 2, 2],
    );
    ({ service, key } = await liveService(dataDir, clock));
  });
  after(async () => {
    await service?.close();
    await store?.close();
  });

  test('default: markets in pages, as the API states them, priced at its USD prices; an unpriced market served with what is known and named, an idle one left out', async () => {
    const first = await store.listSources();
    assert.deepEqual(
      first.map((s) => [s.id, s.kind, s.chainIds]),
      [['morpho-api', 'api', [1, 8453]]],
    );
    const list = (await get('/markets?protocol=morpho')).data as { uniqueKey: string }[];
    assert.deepEqual(
      list.map((m) => m.uniqueKey).sort(),
      [
        `morpho-1-${WBTC_USDC}`,
        `morpho-1-${WSTETH_USDC}`,
        `morpho-8453-${CBBTC_USDC}`,
        `morpho-8453-${UNPRICED}`,
      ].sort(),
    );
    // no USD price of its collateral (docs/decisions.md "Real sources"): that price null, never 0; its loan side as stated
    const u = (await get(`/markets/morpho-8453-${UNPRICED}`)).data;
    assert.equal(u.collateralPrice, null);
    assert.equal(u.loanPrice, 0.9998);
    assert.ok(u.supply > 0 && u.supplyAssets > 0);
    near(u.supply, u.supplyAssets * 0.9998, 'supply at the loan price');
    assert.deepEqual(
      firstItems.filter((i) => i.ok && i.note).map((i) => (i.ok ? i.note : '')),
      [
        `market morpho-8453-${UNPRICED}: the Morpho API has no USD price for its collateral cbBTC 0xcbb7c0000ab88b473b1f5afd9ef808440eed33bf: served with its collateral price null and no position`,
      ],
    );
    const m = (await get(`/markets/morpho-1-${WBTC_USDC}`)).data;
    assert.deepEqual(
      [m.protocol, m.chainId, m.collateral, m.loan, m.lltv, m.collateralPrice, m.loanPrice],
      ['morpho', 1, 'WBTC', 'USDC', 0.86, 90000.5, 0.9998],
    );
    near(m.supply, 150_000_000 * 0.9998, 'supply');
    near(m.borrow, 120_000_000 * 0.9998, 'borrow');
    assert.deepEqual([m.supplyApy, m.borrowApy], [0.041, 0.0535]);
    // rewards: the net APYs' difference (the supply side's 1 %, the borrow side's 0.5 %)
    near(m.supplyRewardsApy, 0.01, 'supply rewards', 1e-8);
    near(m.borrowRewardsApy, 0.005, 'borrow rewards', 1e-8);
    assert.equal(m.oracle.type, 'ChainlinkOracleV2');
    assert.match(m.oracle.warnings[0], /Morpho API does not state/);
    assert.equal((await get(`/markets/morpho-8453-${CBBTC_USDC}`)).data.oracle.type, 'Custom');
    assert.equal((await get(`/markets/morpho-1-${WSTETH_USDC}`)).data.supplyRewardsApy, 0);
    const run = source.lastRun()!;
    // 5 markets in pages of 2 (3 requests), 2 vaults (2: a full page asks again), 5 positions (3), 2 liquidations (2)
    assert.deepEqual(
      [run.requests, run.markets, run.vaults, run.positions, run.liquidations],
      [10, 4, 2, 3, 2],
    );
    const skips = api.calls
      .filter((c) => c.op === 'Markets')
      .map((c) => [c.variables.skip, c.variables.first]);
    assert.deepEqual(skips, [
      [0, 2],
      [2, 2],
      [4, 2],
    ]);
    const health = (await service.app.inject({ url: '/api/v1/health' })).json();
    const s = health.sources.find((x: { id: string }) => x.id === 'morpho-api');
    assert.deepEqual([s.kind, s.chains, s.consecutiveFailures, s.lastError], ['api', [1, 8453], 0, null]);
    assert.equal((await get('/markets?protocol=morpho')).meta.freshness, 'live');
    // no block behind an API's answer: no meta.blocks (not an empty one); its prices are the API's
    const tokens = await get('/tokens?chainIds=8453');
    assert.equal(tokens.meta.blocks, undefined);
    assert.deepEqual(
      tokens.data.map((x: { symbol: string; priceSource: unknown }) => [x.symbol, x.priceSource]),
      [
        ['USDC', { kind: 'api', address: null, description: 'Morpho API priceUsd' }],
        ['cbBTC', { kind: 'api', address: null, description: 'Morpho API priceUsd' }],
      ],
    );
  });

  test('default: borrowers with the API’s health factor (else collateral × lltv / debt); lenders are not positions; a duplicate across pages is kept once', async () => {
    const mine = (await get(`/positions?address=${A}`)).data as {
      market: { uniqueKey: string };
      healthFactor: number;
      state: { collateralUsd: number; borrowAssetsUsd: number };
    }[];
    assert.equal(mine.length, 2);
    const wbtc = mine.find((p) => p.market.uniqueKey === `morpho-1-${WBTC_USDC}`)!;
    assert.equal(wbtc.healthFactor, 1.1049);
    near(wbtc.state.collateralUsd, 90000.5, 'collateral');
    near(wbtc.state.borrowAssetsUsd, 70_000 * 0.9998, 'debt');
    const [b] = (await get(`/positions?address=${B}`)).data;
    near(b.healthFactor, (10 * 4200.25 * 0.86) / (35_000 * 0.9998), 'computed health', 1e-7);
    const atRisk = (await get('/risk/positions-at-risk?chainIds=8453&healthFactorThreshold=1')).data;
    assert.deepEqual(
      atRisk.map((x: { user: { address: string }; healthFactor: number }) => [
        x.user.address,
        x.healthFactor,
      ]),
      [[A, 0.9781]],
    );
  });

  test('default: liquidations at the API’s USD values, else at the market’s price; the next pass reads from the newest one seen', async () => {
    const list = (await get('/liquidations?chainIds=1,8453')).data;
    assert.equal(list.length, 2);
    const base = list.find((l: { chainId: number }) => l.chainId === 8453);
    assert.deepEqual(
      [base.marketId, base.block, base.logIndex, base.collateralSeized, base.debtRepaid, base.debtRepaidUsd],
      [`morpho-8453-${CBBTC_USDC}`, 38_000_000, 12, 0.1, 8500, 8499.5],
    );
    const eth = list.find((l: { chainId: number }) => l.chainId === 1);
    near(eth.collateralSeizedUsd, 0.2 * 90000.5, 'seized USD');
    near(eth.debtRepaidUsd, 15_000 * 0.9998, 'repaid USD');
    near(eth.badDebtUsd, 1_000 * 0.9998, 'bad debt USD');
    assert.equal(eth.borrower, B);
    // a second pass asks from the newest liquidation less the overlap; the same ones are kept once
    clock.advance(60_000);
    api.calls.length = 0;
    const pass = await ingestLive([source], store, clock);
    assert.equal(pass.runs[0]!.ok, true);
    assert.deepEqual(
      api.calls.filter((c) => c.op === 'Liquidations').map((c) => [c.variables.chainIds, c.variables.since]),
      [
        [[1], NOW_S - 3600 - LIQUIDATION_OVERLAP_SECONDS],
        [[8453], NOW_S - 7200 - LIQUIDATION_OVERLAP_SECONDS],
      ],
    );
    await service.models.reloadIfChanged();
    assert.equal((await get('/liquidations?chainIds=1,8453')).data.length, 2);
  });

  test('default: vaults with their allocations as shares of the markets they supply; a cap of uint184’s maximum is no cap', async () => {
    const v = (await get('/vaults/1/0xdd0f28e19c1780eb6396170735d45153d261490d')).data;
    assert.deepEqual(
      [v.protocol, v.name, v.symbol, v.asset.symbol, v.fee, v.curator],
      ['morpho', 'Gauntlet USDC Prime', 'gtUSDC', 'USDC', 0.1, '0xc684c6587712e5e7bdf9fd64415f23bd2b05faec'],
    );
    // 30M of the market's 150M; the empty allocation and the idle market's are left out
    assert.equal(v.allocations.length, 1);
    near(v.allocations[0].supplyUsd, 30_000_000 * 0.9998, 'allocation');
    near(v.allocations[0].supplyCapUsd, 50_000_000 * 0.9998, 'cap');
    assert.equal(v.allocations[0].supplyCap, 50_000_000);
    assert.equal(v.allocations[0].capUsage, 0.6);
    const base = (await get('/vaults/8453/0x586d8a1a7254607e79be7be81e0e17b83bb1af69')).data;
    assert.deepEqual([base.curator, base.allocations[0].supplyCapUsd], [null, null]);
    near(base.totalAssetsUsd, 5_000_000 * 0.9998, 'vault assets');
  });

  test('error: the API down fails the pass; every record is kept, and /health says why', async () => {
    api.down = 503;
    clock.advance(60_000);
    const pass = await ingestLive([source], store, clock);
    api.down = null;
    assert.equal(pass.runs[0]!.ok, false);
    assert.equal(pass.runs[0]!.error, 'Morpho API: HTTP 503');
    await service.models.reloadIfChanged();
    assert.equal((await get('/markets?protocol=morpho')).data.length, 4);
    assert.equal((await get('/vaults?chainIds=1,8453')).data.length, 2);
    assert.equal((await get(`/positions?address=${A}`)).data.length, 2);
    const health = (await service.app.inject({ url: '/api/v1/health' })).json();
    const s = health.sources.find((x: { id: string }) => x.id === 'morpho-api');
    assert.deepEqual([s.consecutiveFailures, s.lastError], [1, 'Morpho API: HTTP 503']);
  });
});

describe('the Morpho API source, by itself', () => {
  const run = (source: Source, previous?: Parameters<Source['run']>[1]) => source.run(NOW_S * 1000, previous);

  test('behavior: a page refused as too complex is asked again at half the size', async () => {
    const api = fakeApi();
    api.maxFirst = 1;
    const source = morphoApiSource(config([1, 8453], 4), { fetch: api.fetch });
    const out = await run(source);
    assert.equal(out.records!.markets.length, 4);
    assert.equal(out.records!.positions.length, 3);
    const markets = api.calls.filter((c) => c.op === 'Markets').map((c) => c.variables.first);
    // 4 refused, 2 refused, then 1 at a time: 5 items and the empty page after them
    assert.deepEqual(markets, [4, 2, 1, 1, 1, 1, 1, 1]);
  });

  test('error: a GraphQL error fails the pass with its message; an item out of shape is left out and named, the others served', async () => {
    const api = fakeApi();
    api.fetch = async () => ({
      ok: true,
      status: 200,
      json: async () => ({ errors: [{ message: 'Cannot query field "x"' }], data: null }),
    });
    await assert.rejects(
      run(morphoApiSource(config(), { fetch: api.fetch })),
      /Morpho API: Cannot query field "x"/,
    );

    const odd = fakeApi();
    odd.doc.marketPositions[1]!.state.borrowAssets = '12.5';
    odd.doc.vaults[0]!.state.fee = 3;
    const out = await run(morphoApiSource(config(), { fetch: odd.fetch }));
    assert.deepEqual(
      out.items.filter((i) => !i.ok).map((i) => (i.ok ? '' : i.error)),
      [
        `position morpho-1-${WSTETH_USDC}:${B}: borrowAssets: not an integer amount ("12.5")`,
        'vault 0xdd0f28e19c1780eb6396170735d45153d261490d: fee 3 is not 0 to 1',
      ],
    );
    assert.equal(out.records!.positions.length, 2);
    assert.equal(out.records!.vaults!.length, 1);
  });

  test('behavior: a market it cannot price keeps what the last pass served of it, with its positions', async () => {
    const api = fakeApi();
    const source = morphoApiSource(config(), { fetch: api.fetch });
    const first = await run(source);
    api.doc.markets[0]!.collateralAsset.priceUsd = null;
    const second = await run(source, {
      state: null,
      markets: first.records!.markets,
      positions: first.records!.positions,
    });
    const key = `morpho-1-${WBTC_USDC}`;
    assert.deepEqual(
      second.records!.markets.find((m) => m.uniqueKey === key),
      first.records!.markets.find((m) => m.uniqueKey === key),
    );
    assert.equal(second.records!.positions.filter((p) => p.marketKey === key).length, 1);
    assert.ok(second.items.some((i) => i.id === `morpho-api:${key}` && !i.ok));
  });

  test('behavior: on a chain the file also reads on-chain, only its vaults are the API’s; each record has one owner whichever fails, and when the file changes', async () => {
    const api = fakeApi();
    const file = (onChain: boolean, vaultFactories?: string[]) =>
      parseSources(
        {
          chains: onChain
            ? [
                {
                  chainId: 1,
                  rpcUrl: 'http://127.0.0.1:1',
                  ...(vaultFactories ? { morpho: { vaultFactories } } : {}),
                },
              ]
            : [],
          morphoApi: { url: URL_, chainIds: [1, 8453], pageSize: 2 },
        },
        't',
      );
    // as the service builds them: chain 1 reads Morpho Blue and its MetaMorpho factory (its address
    // book's), so the API serves neither there
    const [chainReadingVaults, sourceBeside] = configuredSources(file(true), { fetch: api.fetch });
    const beside = await run(sourceBeside!);
    assert.deepEqual(
      beside.records!.vaults!.map((v) => v.chainId),
      [8453],
    );
    assert.deepEqual(api.calls.find((c) => c.op === 'Vaults')!.variables.chainIds, [8453]);
    const chainVault = { ...beside.records!.vaults![0]!, chainId: 1 };
    assert.equal(chainReadingVaults!.owns!(chainVault, 'vault'), true);
    assert.equal(sourceBeside!.owns!(chainVault, 'vault'), false);
    // A chain that reads no factory (`vaultFactories: []`): its vaults are the API's.
    api.calls.length = 0;
    const [chainSource, source] = configuredSources(file(true, []), { fetch: api.fetch });
    assert.equal(chainSource!.owns!(chainVault, 'vault'), false);
    assert.equal(source!.owns!(chainVault, 'vault'), true);
    const out = await run(source!);
    assert.deepEqual(
      out.records!.markets.map((m) => m.uniqueKey),
      [`morpho-8453-${CBBTC_USDC}`, `morpho-8453-${UNPRICED}`],
    );
    assert.equal(out.records!.vaults!.length, 2);
    for (const op of ['Positions', 'Liquidations'])
      assert.deepEqual(api.calls.find((c) => c.op === op)!.variables.chainIds, [8453]);
    assert.ok(out.liquidations!.every((l) => l.chainId === 8453));

    // A stand-in for the chain source (its ownership, its own records: chain 1's WBTC market).
    const chainMarket: MarketRecord = {
      ...(await run(morphoApiSource(config(), { fetch: fakeApi().fetch }))).records!.markets[0]!,
      loanPrice: 1,
    };
    let chainUp = true;
    const chain1: Source = {
      id: 'chain:1',
      kind: 'chain',
      chainIds: [1],
      owns: chainSource!.owns,
      async run() {
        if (!chainUp) throw new Error('RPC down');
        return { records: { markets: [chainMarket], positions: [] }, items: [] };
      },
    };
    const clock = new ManualClock(NOW_S * 1000);
    const store = await openStore({ dataDir: tempDir('lrds-morpho-api-own-'), databaseUrl: null }, clock);
    try {
      const markets = async () =>
        (await store.loadMarkets()).map((m) => `${m.uniqueKey}@${m.loanPrice}`).sort();
      // the file reads the API only: chain 1's markets are the API's
      await ingestLive([configuredSources(file(false), { fetch: api.fetch })[0]!], store, clock);
      const fromApi = await markets();
      assert.equal(fromApi.length, 4);
      // chain 1 added to the file: its Morpho markets are the chain's from its first pass on
      await ingestLive([chain1, source!], store, clock);
      const served = [
        `${chainMarket.uniqueKey}@1`,
        `morpho-8453-${CBBTC_USDC}@0.9998`,
        `morpho-8453-${UNPRICED}@0.9998`,
      ].sort();
      assert.deepEqual(await markets(), served);
      // either failing, or both: the same records, once each
      for (const [chain, apiDown] of [
        [false, null],
        [true, 500],
        [false, 500],
      ] as const) {
        chainUp = chain;
        api.down = apiDown;
        const pass = await ingestLive([chain1, source!], store, clock);
        assert.deepEqual(
          pass.runs.map((r) => r.ok),
          [chain, apiDown === null],
        );
        assert.deepEqual(await markets(), served);
        assert.equal((await store.loadVaults()).length, 2);
      }
    } finally {
      await store.close();
    }
  });

  test('behavior: liquidations are read per chain from each one’s newest, held at one that could not be read', async () => {
    const api = fakeApi();
    // chain 1's indexing a day behind Base's: its liquidation is older
    api.doc.transactions[1]!.timestamp = NOW_S - 86_400;
    const source = morphoApiSource(config(), { fetch: api.fetch });
    const first = await run(source);
    assert.equal(first.liquidations!.length, 2);
    const cursor = JSON.parse(first.cursor!);
    assert.deepEqual(cursor, { liquidationsFrom: { '1': NOW_S - 86_400, '8453': NOW_S - 7200 } });
    // the next pass: each chain from its own, less the overlap
    api.calls.length = 0;
    const state = { cursor: first.cursor! } as NonNullable<Parameters<Source['run']>[1]>['state'];
    await run(source, { state, markets: [], positions: [] });
    assert.deepEqual(
      api.calls.filter((c) => c.op === 'Liquidations').map((c) => [c.variables.chainIds, c.variables.since]),
      [
        [[1], NOW_S - 86_400 - LIQUIDATION_OVERLAP_SECONDS],
        [[8453], NOW_S - 7200 - LIQUIDATION_OVERLAP_SECONDS],
      ],
    );
    // one that cannot be read (an amount out of shape) holds its chain's cursor there
    const late = structuredClone(api.doc.transactions[0]!);
    Object.assign(late, { hash: `0x${'ef'.repeat(32)}`, timestamp: NOW_S - 100 });
    Object.assign(late.data, { seizedAssets: 'lots' });
    api.doc.transactions.push(late);
    const held = await run(source, { state, markets: [], positions: [] });
    assert.ok(held.items.some((i) => !i.ok && /seizedAssets/.test(i.error)));
    assert.equal(JSON.parse(held.cursor!).liquidationsFrom['8453'], NOW_S - 7200);
    // so does one without a USD value in a market the API answered out of shape this pass (its
    // price is read again next pass); one in a market it does not list is recorded, USD unknown
    late.data.seizedAssets = api.doc.transactions[0]!.data.seizedAssets;
    const odd = api.doc.markets.find((m) => m.uniqueKey === late.data.market.uniqueKey)!;
    odd.state.supplyAssets = 'many';
    Object.assign(late.data, { seizedAssetsUsd: null });
    const unserved = await run(source, { state, markets: [], positions: [] });
    assert.ok(
      unserved.items.some(
        (i) => !i.ok && /no USD value \(seizedAssetsUsd\), and its market .* could not be read/.test(i.error),
      ),
    );
    assert.equal(JSON.parse(unserved.cursor!).liquidationsFrom['8453'], NOW_S - 7200);
    odd.state.supplyAssets = '1000';
    late.data.market = { ...late.data.market, uniqueKey: `0x${'99'.repeat(32)}` };
    const unlisted = await run(source, { state, markets: [], positions: [] });
    const recorded = unlisted.liquidations!.find((l) => l.txHash === late.hash)!;
    assert.deepEqual(
      [recorded.marketKey, recorded.collateralSeizedUsd],
      [`morpho-8453-0x${'99'.repeat(32)}`, null],
    );
    assert.equal(JSON.parse(unlisted.cursor!).liquidationsFrom['8453'], NOW_S - 100);
  });

  test('behavior: a liquidation in a market without a USD price is recorded, its amounts in tokens and their unknown USD values null; the cursor moves past it', async () => {
    const api = fakeApi();
    // chain 1's WBTC/USDC market: no USD price of its loan token (so none of its collateral)
    api.doc.markets[0]!.loanAsset.priceUsd = null;
    api.doc.markets[0]!.collateralAsset.priceUsd = null;
    // Base's market whose collateral has no USD price: a liquidation there, its collateral's
    // value not stated by the API, its repayment stated
    const late = structuredClone(api.doc.transactions[0]!);
    Object.assign(late, { hash: `0x${'ef'.repeat(32)}`, timestamp: NOW_S - 100 });
    Object.assign(late.data, { seizedAssetsUsd: null, market: { ...late.data.market, uniqueKey: UNPRICED } });
    api.doc.transactions.push(late);
    const eth = api.doc.transactions.find((t) => t.chain.id === 1)!;
    Object.assign(eth.data, { seizedAssetsUsd: null, repaidAssetsUsd: null, badDebtAssetsUsd: null });
    const out = await run(morphoApiSource(config(), { fetch: api.fetch }));
    assert.deepEqual(
      out.items.filter((i) => !i.ok).map((i) => i.id),
      [],
    );
    const byHash = new Map(out.liquidations!.map((l) => [l.txHash, l]));
    const onBase = byHash.get(`0x${'ef'.repeat(32)}`)!;
    assert.equal(onBase.marketKey, `morpho-8453-${UNPRICED}`);
    assert.equal(onBase.collateralSeizedUsd, null);
    assert.ok(onBase.collateralSeized > 0);
    assert.equal(onBase.debtRepaidUsd, late.data.repaidAssetsUsd);
    const onEth = byHash.get(eth.hash)!;
    assert.deepEqual(
      [
        onEth.collateralSeized,
        onEth.collateralSeizedUsd,
        onEth.debtRepaid,
        onEth.debtRepaidUsd,
        onEth.badDebt,
        onEth.badDebtUsd,
      ],
      [0.2, null, 15_000, null, 1_000, null],
    );
    // recorded: each chain's cursor is its newest liquidation
    assert.equal(JSON.parse(out.cursor!).liquidationsFrom['8453'], NOW_S - 100);
  });

  test('error: a vault whose market could not be read keeps its last record; a cap on a market without a USD price is kept in units of the asset', async () => {
    const api = fakeApi();
    const source = morphoApiSource(config(), { fetch: api.fetch });
    const first = await run(source);
    const before = first.records!.vaults!.find((v) => v.chainId === 8453)!;
    // its market unpriced: the cap is kept in USDC, its USD unknown to the API (the market is
    // served at its last price: the view values the cap at it)
    api.doc.markets[3]!.loanAsset.priceUsd = null;
    api.doc.vaults[1]!.state.allocation[0].supplyCap = '10000000000000';
    const previous = {
      state: null,
      markets: first.records!.markets,
      positions: [],
      vaults: first.records!.vaults,
    };
    const priced = await run(source, previous);
    const capped = priced.records!.vaults!.find((v) => v.chainId === 8453)!;
    // (in USDC alone: the view values it at the market's price as served)
    assert.deepEqual(capped.allocations[0], {
      marketKey: capped.allocations[0]!.marketKey,
      supplyShare: capped.allocations[0]!.supplyShare,
      supplyCap: 10_000_000,
    });
    assert.ok(
      priced.records!.markets.some(
        (m) => m.uniqueKey === capped.allocations[0]!.marketKey && m.loanPrice === 0.9998,
      ),
    );
    // never served priced: the vault is served all the same, its cap in USDC
    const none = await run(source, { ...previous, markets: [] });
    const unpricedCap = none.records!.vaults!.find((v) => v.chainId === 8453)!;
    assert.equal(unpricedCap.allocations[0]!.supplyCap, 10_000_000);
    assert.ok(!none.items.some((i) => !i.ok && i.id === 'morpho-api:vault'));
    // its market out of shape: likewise
    api.doc.markets[3]!.loanAsset.priceUsd = 0.9998;
    api.doc.markets[3]!.state.supplyAssets = 'many';
    const odd = await run(source, previous);
    assert.deepEqual(
      odd.records!.vaults!.find((v) => v.chainId === 8453),
      before,
    );
    assert.ok(odd.items.some((i) => !i.ok && /could not be read/.test(i.error)));
  });

  test('behavior: a market never priced whose loan token has no USD price: served with its amounts in tokens and its USD figures null, without positions', async () => {
    const api = fakeApi();
    api.doc.markets[0]!.loanAsset.priceUsd = null;
    const out = await run(morphoApiSource(config(), { fetch: api.fetch }));
    const key = `morpho-1-${WBTC_USDC}`;
    const m = out.records!.markets.find((x) => x.uniqueKey === key)!;
    assert.deepEqual(
      [m.loanPrice, m.supply, m.borrow, m.supplyAssets, m.borrowAssets, m.loanPriceSource, m.collateralPrice],
      [null, null, null, 150_000_000, 120_000_000, null, 90000.5],
    );
    assert.equal(out.records!.positions.filter((p) => p.marketKey === key).length, 0);
    assert.ok(
      out.items.some((i) => i.ok && i.id === `morpho-api:${key}` && /loan token USDC/.test(i.note ?? '')),
    );
  });

  test('behavior: a vault answered twice (offset pages) is served once; a liquidation of a market kept at its last prices is priced at them', async () => {
    const api = fakeApi();
    api.doc.vaults.push(structuredClone(api.doc.vaults[0]!));
    const source = morphoApiSource(config(), { fetch: api.fetch });
    const first = await run(source);
    assert.equal(first.records!.vaults!.length, 2);
    // chain 1's WBTC market loses its prices; its liquidation has no USD value of its own
    api.doc.markets[0]!.collateralAsset.priceUsd = null;
    const second = await run(source, { state: null, markets: first.records!.markets, positions: [] });
    const l = second.liquidations!.find((x) => x.chainId === 1)!;
    near(l.debtRepaidUsd!, 15_000 * 0.9998, 'repaid at the kept loan price');
    near(l.collateralSeizedUsd!, 0.2 * 90000.5, 'seized at the kept collateral price');
  });

  test('error: an API that does not answer in time, or cannot be reached, fails the pass with that said plainly (no URL)', async () => {
    // A real socket: a server that takes requests and never answers, then a port nobody listens on.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { port } = silent.address() as AddressInfo;
    try {
      const cfg = { ...config(), url: `http://127.0.0.1:${port}/graphql?key=secret` };
      await assert.rejects(run(morphoApiSource(cfg, { timeoutMs: 200 })), (err: Error) => {
        assert.equal(err.message, 'Morpho API: no answer within 0.2 s');
        return true;
      });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
    const cfg = { ...config(), url: `http://127.0.0.1:${port}/graphql?key=secret` };
    await assert.rejects(run(morphoApiSource(cfg, { timeoutMs: 2000 })), (err: Error) => {
      assert.equal(err.message, 'Morpho API: request failed (ECONNREFUSED)');
      return true;
    });
  });

  test('error: an API that ignores skip (the same page again) fails the pass rather than reading forever', async () => {
    const api = fakeApi();
    const inner = api.fetch;
    api.fetch = (url, init) => {
      const body = JSON.parse(init.body);
      body.variables.skip = 0;
      return inner(url, { ...init, body: JSON.stringify(body) });
    };
    await assert.rejects(
      run(morphoApiSource(config(), { fetch: api.fetch })),
      /markets answered the same page twice \(skip ignored\)/,
    );
  });
});
