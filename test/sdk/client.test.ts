import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  isApiError,
  LrdsApiError,
  LrdsClient,
  type Market,
  type Meta,
  type PositionAtRisk,
  type Token,
} from '../../sdk/src/index.ts';
import type { MarketRecord, PositionRecord } from '../../src/domain/types.ts';
import { createService, type Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import {
  embeddedSettings,
  makeMarket,
  makePosition,
  makeVault,
  QUIET,
  TIERS_FILE,
  tempDir,
} from '../helpers.ts';

/**
 * The SDK against a real server: the service's composition root on an embedded store,
 * listening on a port, with a small live dataset (30 markets, 60 positions).
 */

let service: Service;
let baseUrl: string;
let proKey: string;
const LIQUIDATIONS = 2_500;
const markets: MarketRecord[] = [];

before(async () => {
  const dataDir = tempDir('lrds-sdk-');
  const positions: PositionRecord[] = [];
  for (let i = 0; i < 30; i++) {
    const btc = i % 3 === 0;
    const m = makeMarket({
      protocol: i % 2 === 0 ? 'morpho' : 'aave',
      supply: 1_000_000 + i * 10_000,
      ...(btc
        ? { label: 'WBTC / USDC', collateral: 'WBTC', collateralName: 'Wrapped BTC', loan: 'USDC' }
        : {}),
    });
    markets.push(m);
    positions.push(makePosition(m, { collateralUsd: 10_000, borrowUsd: 8_000 + i * 10 }));
    positions.push(makePosition(m, { collateralUsd: 20_000, borrowUsd: 2_000 }));
  }
  const store = await openStore({ dataDir, databaseUrl: null });
  await store.replaceDataset({
    kind: 'live',
    profile: 'test',
    seed: null,
    markets,
    positions,
    positionCount: positions.length,
    vaults: [makeVault(markets.slice(0, 3))],
  });
  // 2,500 liquidations, more than two pages of the store's reads (1,000), one a minute back from now.
  const now = Date.now();
  await store.appendLiquidations(
    Array.from({ length: LIQUIDATIONS }, (_, i) => ({
      protocol: markets[i % 30]!.protocol,
      chainId: 1,
      txHash: `0x${(i + 1).toString(16).padStart(64, '0')}`,
      logIndex: 0,
      block: 1000 + i,
      at: now - (i + 1) * 60_000,
      marketKey: markets[i % 30]!.uniqueKey,
      borrower: positions[(2 * i) % 60]!.user,
      liquidator: `0x${'f'.repeat(40)}`,
      collateralSeized: 1,
      collateralSeizedUsd: 3000,
      debtRepaid: 2500,
      debtRepaidUsd: 2500,
      badDebt: 0,
      badDebtUsd: 0,
    })),
  );
  await store.close();
  // Pro keys get a rate no test reaches (the paging test alone sends 20 requests in well under
  // a second); the free tier keeps its 5 per second for the rate-limit test.
  const tiers = JSON.parse(readFileSync(TIERS_FILE, 'utf8'));
  tiers.tiers.pro.ratePerSecond = 1_000_000;
  const tiersFile = join(dataDir, 'tiers.json');
  writeFileSync(tiersFile, JSON.stringify(tiers));
  service = await createService({ ...embeddedSettings(dataDir), tiersFile }, { server: QUIET });
  await service.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = service.app.server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}/api/v1`;
  proKey = await keyOf('pro');
});

after(async () => {
  await service?.close();
});

async function keyOf(tier: 'free' | 'pro' | 'enterprise', account = 'acme'): Promise<string> {
  const acct = await service.keys.ensureAccount(account);
  return (await service.keys.create({ accountId: acct.id, tier, mode: 'live' })).key;
}

const withoutAges = ({ oracleHealth: _ages, ...market }: Market) => market;

const client = (apiKey = proKey) => new LrdsClient({ baseUrl, apiKey });

describe('LrdsClient against a running server', () => {
  test('behavior: typed list, search, detail and positions calls', async () => {
    const c = client();
    const list = await c.listMarkets({ limit: 5 });
    assert.equal(list.data.length, 5);
    assert.equal(list.meta.total, 30);
    const supplies = list.data.map((m: Market) => m.supply);
    assert.deepEqual(
      supplies,
      [...supplies].sort((a, b) => b! - a!),
    );

    const found = await c.searchMarkets({ query: 'WBTC', limit: 50 });
    assert.equal(found.data.length, 10);
    assert.ok(found.data.every((m) => m.collateral === 'WBTC'));
    assert.equal(found.meta.source, 'aave,morpho');

    const key = markets[7]!.uniqueKey;
    const detail = await c.getMarket(key.toUpperCase());
    assert.equal(detail.data.uniqueKey, key);

    const risky = await c.positionsAtRisk({ healthFactorThreshold: 1.1, protocol: 'aave', limit: 200 });
    assert.equal(risky.data.length, 15);
    const hf = risky.data.map((p: PositionAtRisk) => p.healthFactor);
    assert.ok(hf.every((h, i) => h < 1.1 && (i === 0 || hf[i - 1]! <= h)));
  });

  test('behavior: the page iterator walks GET /markets by offset and yields what one big page holds', async () => {
    const c = client();
    const whole = (await c.listMarkets({ limit: 1000 })).data;
    assert.equal(whole.length, 30);
    const sizes: number[] = [];
    for await (const page of c.pages('listMarkets', { limit: 7 })) sizes.push(page.data.length);
    assert.deepEqual(sizes, [7, 7, 7, 7, 2]);
    const items: Market[] = [];
    for await (const m of c.paginate('listMarkets', { limit: 7 })) items.push(m);
    // Oracle ages move with the wall clock between requests; the markets and their order do not.
    assert.deepEqual(items.map(withoutAges), whole.map(withoutAges));
    // Filters are kept on every page.
    const aave: string[] = [];
    for await (const m of c.paginate('listMarkets', { limit: 4, protocol: 'aave' })) aave.push(m.uniqueKey);
    assert.deepEqual(
      aave,
      whole.filter((m) => m.protocol === 'aave').map((m) => m.uniqueKey),
    );
  });

  test('behavior: a list without a next cursor is one page', async () => {
    const c = client();
    const query = { healthFactorThreshold: 10, limit: 200 };
    const whole = (await c.positionsAtRisk(query)).data;
    const items: PositionAtRisk[] = [];
    for await (const p of c.paginate('positionsAtRisk', query)) items.push(p);
    assert.equal(items.length, 60);
    assert.deepEqual(
      items.map((p) => [p.user.address, p.market.uniqueKey, p.healthFactor]),
      whole.map((p) => [p.user.address, p.market.uniqueKey, p.healthFactor]),
    );
  });

  test('behavior: paginate walks the whole set of positions at risk by its cursor', async () => {
    const c = client();
    const query = { healthFactorThreshold: 10, limit: 7 };
    const first = await c.positionsAtRisk(query);
    assert.equal(first.data.length, 7);
    assert.equal(first.meta.total, 60);
    assert.ok(first.meta.nextCursor);
    const items: PositionAtRisk[] = [];
    for await (const p of c.paginate('positionsAtRisk', query)) items.push(p);
    assert.equal(items.length, 60);
    assert.equal(new Set(items.map((p) => `${p.market.uniqueKey}/${p.user.address}`)).size, 60);
    const whole = (await c.positionsAtRisk({ healthFactorThreshold: 10, limit: 200 })).data;
    assert.deepEqual(
      items.map((p) => [p.user.address, p.market.uniqueKey]),
      whole.map((p) => [p.user.address, p.market.uniqueKey]),
    );
  });

  test('behavior: self-service key routes', async () => {
    const c = client(await keyOf('pro', 'sdk-keys'));
    const created = await c.createApiKey({ name: 'from the sdk' });
    assert.match(created.data.key, /^lrds_live_/);
    assert.ok((await c.listApiKeys()).data.some((k) => k.id === created.data.id));
    await c.revokeApiKey(created.data.id);
    const quota = await c.getQuota();
    assert.equal(quota.data.tier.id, 'pro');
  });

  test('error: an invalid parameter is an LrdsApiError with its code and details, not retried', async () => {
    const c = client();
    await assert.rejects(
      () => c.positionsAtRisk({ healthFactorThreshold: 11 }),
      (err: unknown) => {
        assert.ok(isApiError(err, 'INVALID_PARAMETER'));
        assert.equal(err.status, 400);
        assert.equal(err.attempts, 1);
        assert.equal(err.body.details?.[0]?.parameter, 'healthFactorThreshold');
        assert.ok(err.requestId);
        return true;
      },
    );
  });

  test('error: an unknown market, a bad key', async () => {
    await assert.rejects(
      () => client().getMarket('morpho-1-0xdoesnotexist'),
      (err: unknown) => isApiError(err, 'MARKET_NOT_FOUND') && err.status === 404,
    );
    await assert.rejects(
      () => client('lrds_live_nope').listMarkets(),
      (err: unknown) => isApiError(err, 'UNAUTHORIZED') && err.status === 401,
    );
    assert.ok(!isApiError(new Error('x')));
  });

  test('behavior: over the rate a 429 is retried after the wait the server names, up to the bound', async () => {
    // Free tier: 5 requests per second. Ten at once, without retries: some are refused.
    const free = await keyOf('free', 'sdk-rate');
    const noRetry = new LrdsClient({ baseUrl, apiKey: free, retry: false });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => noRetry.listMarkets({ limit: 1 })),
    );
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    assert.ok(refused.length >= 1, `${refused.length} refused`);
    const first = refused[0];
    assert.ok(first instanceof LrdsApiError && first.code === 'RATE_LIMIT_EXCEEDED');
    assert.ok(first.retryAfterMs !== null && first.retryAfterMs > 0 && first.retryAfterMs <= 1000);

    // With retries and a sleep that does not wait, the window is still full at each retry:
    // the client waits as told each time, then gives up with the last refusal.
    const waits: number[] = [];
    const retrying = new LrdsClient({
      baseUrl,
      apiKey: free,
      retry: { maxAttempts: 3 },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await assert.rejects(
      () => retrying.listMarkets({ limit: 1 }),
      (err: unknown) => isApiError(err, 'RATE_LIMIT_EXCEEDED') && err.attempts === 3,
    );
    assert.equal(waits.length, 2);
    assert.ok(waits.every((ms) => ms > 0 && ms <= 1000));
  });

  test('behavior: streamLiquidations reads NDJSON one liquidation at a time, then the meta', async () => {
    // Enterprise: no result cap (Pro's 500 would clamp the limit).
    const c = client(await keyOf('enterprise'));
    const hashes: string[] = [];
    let meta: Meta | null = null;
    for await (const l of c.streamLiquidations({ limit: 500_000 }, { onMeta: (m) => (meta = m) })) {
      hashes.push(l.txHash);
    }
    assert.equal(hashes.length, LIQUIDATIONS);
    // newest first: tx 1 is a minute old, tx 2,500 the oldest
    assert.equal(Number.parseInt(hashes[0]!, 16), 1);
    assert.equal(Number.parseInt(hashes.at(-1)!, 16), LIQUIDATIONS);
    assert.equal(new Set(hashes).size, LIQUIDATIONS);
    assert.ok(meta);
    assert.equal((meta as Meta).source, 'aave,morpho');
    assert.equal((meta as Meta).nextCursor, undefined);
  });

  test('behavior: paginate follows the cursors of liquidations and of tokens', async () => {
    const c = client();
    let n = 0;
    const seen = new Set<string>();
    for await (const l of c.paginate('listLiquidations', { limit: 700 })) {
      n++;
      seen.add(l.txHash);
    }
    assert.equal(n, LIQUIDATIONS);
    assert.equal(seen.size, LIQUIDATIONS);
    const tokens: Token[] = [];
    for await (const t of c.paginate('listTokens', { limit: 1 })) tokens.push(t);
    assert.equal(tokens.length, (await c.listTokens({ limit: 1000 })).meta.total);
  });

  test('behavior: typed calls of tokens, vaults, positions and portfolios', async () => {
    const c = client();
    const weth = await c.getToken(1, markets[1]!.loanAddress);
    assert.equal(weth.data.symbol, 'WETH');
    const vaults = await c.listVaults();
    assert.equal(vaults.data.length, 1);
    const vault = await c.getVault(1, vaults.data[0]!.address);
    assert.equal(vault.data.allocations.length, 3);
    const user =
      markets[0] &&
      (await c.listPositions({ address: (await c.positionsAtRisk({ limit: 1 })).data[0]!.user.address }));
    assert.ok(user && user.data.length >= 1);
    const portfolio = await c.getPortfolio(user.data[0]!.user.address);
    assert.equal(portfolio.data.totals.positions, user.meta.total);
  });

  test('error: a stream that ends without its meta line throws', async () => {
    const cut = new LrdsClient({
      baseUrl,
      apiKey: proKey,
      fetch: async () =>
        new Response('{"protocol":"morpho"}\n', {
          status: 200,
          headers: { 'content-type': 'application/x-ndjson' },
        }),
    });
    await assert.rejects(async () => {
      for await (const _ of cut.streamLiquidations()) {
        // drained
      }
    }, /without its meta line/);
  });
});
