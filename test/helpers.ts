import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { LocalAdmission } from '../src/access/admission.ts';
import { Idempotency } from '../src/access/idempotency.ts';
import { KeyService } from '../src/access/keys.ts';
import { loadTiers, parseTiers, type TierId, type TierTable } from '../src/access/tiers.ts';
import type { Settings } from '../src/config.ts';
import { RatingsJob } from '../src/data/ratings-job.ts';
import { buildReadModel, type ReadModel } from '../src/data/read-model.ts';
import type { Clock } from '../src/domain/clock.ts';
import { healthFactor } from '../src/domain/metrics.ts';
import type { DatasetInfo } from '../src/domain/records/dataset.ts';
import type { LiquidationEvent, MarketSnapshot } from '../src/domain/records/history.ts';
import type { KeyMode } from '../src/domain/records/keys.ts';
import type { MarketRecord, OracleRecord, PositionRecord, VaultRecord } from '../src/domain/types.ts';
import { createEventsApi, type EventsApi } from '../src/events/api.ts';
import { SecretBox } from '../src/events/secrets.ts';
import type { Resolver } from '../src/events/ssrf.ts';
import { buildApp } from '../src/http/app.ts';
import type { AppDeps } from '../src/http/context.ts';
import { createService, type Service } from '../src/service.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/types.ts';
import { ManualClock } from './clock.ts';
import { conformanceChecker } from './openapi-conformance.ts';

export const TIERS_FILE = new URL('../config/tiers.json', import.meta.url).pathname;

/** The shipped tier table with per-tier overrides (e.g. a high rate for tests not about limits). */
export function tiersWith(patch: (tiers: Record<string, Record<string, unknown>>) => void): TierTable {
  const json = JSON.parse(readFileSync(TIERS_FILE, 'utf8'));
  patch(json.tiers);
  return parseTiers(json, 'test tiers');
}

/** Settings of a service on the embedded store in `dataDir`: no Redis, the shipped tiers, no simulation ticks. */
export function embeddedSettings(dataDir: string): Settings {
  return {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: null,
    redisUrl: null,
    tiersFile: TIERS_FILE,
    logLevel: 'warn',
    instances: null,
  };
}

/** Launch tiers, but a rate no functional test reaches (the clock of a test does not move). */
export const GENEROUS_TIERS = tiersWith((tiers) => {
  for (const t of Object.values(tiers)) {
    t.ratePerSecond = 1_000_000;
    t.maxKeysPerAccount = null;
    t.keyCreationsPerDay = null;
  }
});

const tempDirs: string[] = [];

/** A fresh temporary folder, removed when the test process exits. */
export function tempDir(prefix = 'lrds-test-'): string {
  if (tempDirs.length === 0) {
    process.once('exit', () => {
      for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

let counter = 0;
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** A plausible oracle: one Chainlink feed updated every 30 min on a 1 h heartbeat. */
export function makeOracle(overrides: Partial<OracleRecord> = {}): OracleRecord {
  return {
    address: `0x${hex(0xabc, 40)}`,
    type: 'ChainlinkOracleV2',
    provider: 'Chainlink',
    feeds: [
      {
        address: `0x${hex(0xfeed, 40)}`,
        description: 'ETH / USD',
        pair: 'ETH/USD',
        heartbeatSeconds: 3600,
        lastUpdateTimestamp: Date.parse('2026-11-22T11:30:00Z') / 1000,
        updateIntervalSeconds: 1800,
      },
    ],
    isComposite: false,
    warnings: null,
    ...overrides,
  };
}

/** A Morpho-style market with round numbers; override what a test is about. */
export function makeMarket(overrides: Partial<MarketRecord> = {}): MarketRecord {
  const n = ++counter;
  const protocol = overrides.protocol ?? 'morpho';
  const chainId = overrides.chainId ?? 1;
  return {
    uniqueKey: `${protocol}-${chainId}-0x${hex(n, 64)}`,
    protocol,
    chainId,
    label: 'wstETH / WETH',
    collateral: 'wstETH',
    collateralName: 'Wrapped liquid staked Ether 2.0',
    collateralAddress: '0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0',
    loan: 'WETH',
    loanName: 'Wrapped Ether',
    loanAddress: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
    collateralPrice: 4000,
    loanPrice: 3300,
    supply: 1_000_000,
    borrow: 800_000,
    supplyApy: 0.02,
    borrowApy: 0.03,
    supplyRewardsApy: 0,
    borrowRewardsApy: 0,
    rewardTokens: [],
    lltv: 0.86,
    vaultSymbol: null,
    vaultAddress: null,
    governor: null,
    oracle: makeOracle(),
    ...overrides,
  };
}

export function makePosition(market: MarketRecord, overrides: Partial<PositionRecord> = {}): PositionRecord {
  const n = ++counter;
  const collateralUsd = overrides.collateralUsd ?? 10_000;
  const borrowUsd = overrides.borrowUsd ?? 8_000;
  return {
    marketKey: market.uniqueKey,
    user: `0x${hex(n, 40)}`,
    collateralUsd,
    borrowUsd,
    supplyUsd: 0,
    healthFactor: healthFactor(collateralUsd, market.lltv, borrowUsd),
    ...overrides,
  };
}

/** A market's daily snapshot (00:00 UTC `at`) with the given supply and borrow; the rest plausible. */
export function daySnapshot(
  m: MarketRecord,
  at: number,
  supplyUsd: number,
  borrowUsd: number,
): MarketSnapshot {
  return {
    marketKey: m.uniqueKey,
    chainId: m.chainId,
    protocol: m.protocol,
    at,
    granularity: 'day',
    supplyUsd,
    borrowUsd,
    utilization: borrowUsd / supplyUsd,
    supplyApy: 0.02,
    borrowApy: 0.04,
    collateralPriceUsd: 4000,
    loanPriceUsd: 3300,
    oraclePrice: 1.2,
  };
}

/** Liquidation number `n` of market `m` at `at`: `repaid` USD of debt, 5 % more of collateral seized, `bad` USD of bad debt. */
export function liquidationOf(
  n: number,
  m: MarketRecord,
  at: number,
  repaid: number,
  bad = 0,
): LiquidationEvent {
  return {
    protocol: m.protocol,
    chainId: m.chainId,
    txHash: `0x${hex(n, 64)}`,
    logIndex: 0,
    block: n,
    at,
    marketKey: m.uniqueKey,
    borrower: `0x${hex(1, 40)}`,
    liquidator: `0x${hex(2, 40)}`,
    collateralSeized: 1,
    collateralSeizedUsd: repaid * 1.05,
    debtRepaid: repaid,
    debtRepaidUsd: repaid,
    badDebt: 0,
    badDebtUsd: bad,
  };
}

/** Writes a one-market dataset to `store`, so a service opened on it does not seed the sandbox. */
export async function seedOneMarket(store: Store): Promise<void> {
  const m = makeMarket();
  await store.replaceDataset({
    kind: 'live',
    profile: 'test',
    seed: null,
    markets: [m],
    positions: [makePosition(m)],
    positionCount: 1,
  });
}

export function datasetInfo(
  markets: number,
  positions: number,
  overrides: Partial<DatasetInfo> = {},
): DatasetInfo {
  return {
    kind: 'sandbox',
    profile: 'test',
    seed: null,
    refreshedAt: Date.parse('2026-11-22T00:00:00Z'),
    marketCount: markets,
    positionCount: positions,
    version: 1,
    changeSeq: 0,
    ...overrides,
  };
}

export function modelOf(
  markets: MarketRecord[],
  positions: PositionRecord[],
  clock: ManualClock,
  vaults: VaultRecord[] = [],
): ReadModel {
  return buildReadModel(
    markets,
    positions,
    datasetInfo(markets.length, positions.length),
    clock.now(),
    vaults,
  );
}

/** A Morpho vault supplying a share of each market given (its asset: the first market's loan token). */
export function makeVault(markets: MarketRecord[], overrides: Partial<VaultRecord> = {}): VaultRecord {
  const n = ++counter;
  const first = markets[0]!;
  return {
    protocol: 'morpho',
    chainId: first.chainId,
    address: `0x${hex(0xa000 + n, 40)}`,
    name: `Curator ${first.loan} ${n}`,
    symbol: `c${first.loan}`,
    assetAddress: first.loanAddress,
    assetSymbol: first.loan,
    curator: 'Curator',
    governor: null,
    fee: 0.1,
    allocations: markets.map((m) => ({ marketKey: m.uniqueKey, supplyShare: 0.5, supplyCapUsd: null })),
    ...overrides,
  };
}

export interface TestApp {
  app: FastifyInstance;
  store: SqliteStore;
  clock: ManualClock;
  keys: KeyService;
  admission: LocalAdmission;
  tiers: TierTable;
  /** The ratings job over the test store and models (rated once before the app is handed out). */
  ratings: RatingsJob;
  /** The webhooks and event streams the app serves. */
  events: EventsApi;
  /** Creates a key on the tier (and account) given and returns the whole key. */
  key(tier: TierId, mode?: KeyMode, account?: string): Promise<string>;
  get(path: string, key?: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  live?: ReadModel;
  /** The sandbox served to test keys; defaults to the live model. */
  sandbox?: ReadModel;
  tiers?: TierTable;
  clock?: ManualClock;
  store?: SqliteStore;
  /** Pino options (logging is off by default). */
  logger?: Record<string, unknown>;
  /**
   * Server timeouts and overload thresholds (app defaults otherwise, but the overload guard is
   * off unless `pressure` is given: a test that blocks the loop, building a sandbox, would
   * otherwise get 503s for what follows on a slow machine).
   */
  server?: AppDeps['server'];
  /** The service's background jobs, for the overload guard. */
  backgroundWork?: AppDeps['backgroundWork'];
  /** The history the routes read; defaults to the store. */
  history?: AppDeps['history'];
  /** The ingestion pass running, as /health shows it (none by default). */
  ingestion?: AppDeps['ingestion'];
  /** The sources file's sources, as /health lists them (none by default). */
  configuredSources?: AppDeps['configuredSources'];
  /** The ratings job; defaults to one over the store and the models, run once before the app is handed out. */
  ratings?: (store: SqliteStore, clock: ManualClock) => RatingsJob;
  /** Where paged lists keep their sets; this app's memory by default. */
  pageSnapshots?: AppDeps['pageSnapshots'];
  /** Webhooks may use http and private addresses (default false, as in production); a resolver for their hosts. */
  events?: {
    allowPrivate?: boolean;
    resolve?: Resolver;
    kick?: () => void;
    keepAliveMs?: number;
    pollMs?: number;
    /** The key webhook secrets are sealed with (a fresh one by default). */
    secrets?: SecretBox;
  };
}

/** The risk events' API over a store, with a fresh secrets key. */
export function testEventsApi(store: Store, clock: Clock, o: TestAppOptions['events'] = {}): EventsApi {
  return createEventsApi({
    store: store.events,
    secrets: o.secrets ?? new SecretBox(randomBytes(32)),
    clock,
    allowPrivate: o.allowPrivate ?? false,
    ...(o.resolve ? { resolve: o.resolve } : {}),
    ...(o.kick ? { kick: o.kick } : {}),
    ...(o.keepAliveMs ? { keepAliveMs: o.keepAliveMs } : {}),
    ...(o.pollMs ? { pollMs: o.pollMs } : {}),
  });
}

/**
 * Server options for tests that are not about overload: no overload guard and no budget of
 * anonymous requests (a test's clock does not move, so no budget would come back). Building a sandbox
 * blocks the loop for a second; with the guard on, the requests right after got 503 whenever
 * other test files loaded the machine.
 */
export const QUIET = { pressure: false, anonymous: false } as const;

/**
 * A GET of the API with a key that must answer 200, as JSON. The service and key are looked up at
 * each call (a suite's `before` sets them); `key` may be given per call.
 */
export function apiGet(current: () => { service: Service | null; key: string }) {
  return async (url: string, key = current().key) => {
    const res = await current().service!.app.inject({
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
}

/**
 * A service over the store in `dataDir` (the sandbox simulation stopped: the data is what
 * ingestion writes) and an Enterprise live key of one account.
 */
export async function liveService(dataDir: string, clock: Clock): Promise<{ service: Service; key: string }> {
  const service = await createService(
    { ...embeddedSettings(dataDir), simulationTickMs: 0 },
    { clock, server: QUIET },
  );
  const account = await service.keys.ensureAccount('fund');
  const { key } = await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' });
  return { service, key };
}

/** The whole app over an in-memory SQLite store, with a manual clock. */
function pathAndQuery(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? new ManualClock();
  const store = options.store ?? new SqliteStore(':memory:');
  await store.migrate();
  const tiers = options.tiers ?? loadTiers(TIERS_FILE);
  const live =
    options.live ??
    (() => {
      const m = makeMarket();
      return modelOf([m], [makePosition(m)], clock);
    })();
  const sandbox = options.sandbox ?? live;
  const keys = new KeyService(store, { clock });
  const admission = new LocalAdmission(store);
  const ratings =
    options.ratings?.(store, clock) ??
    new RatingsJob({ models: () => [live, sandbox], store, clock, writes: true });
  await ratings.runDue();
  const events = testEventsApi(store, clock, options.events);
  const app = await buildApp({
    store,
    tiers,
    keys,
    admission,
    idempotency: new Idempotency(store, clock),
    data: { get: (mode) => (mode === 'test' ? sandbox : live) },
    history: options.history ?? store,
    ratings,
    events,
    clock,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.pageSnapshots ? { pageSnapshots: options.pageSnapshots } : {}),
    ...(options.ingestion ? { ingestion: options.ingestion } : {}),
    ...(options.configuredSources ? { configuredSources: options.configuredSources } : {}),
    server: { ...QUIET, ...options.server },
    ...(options.backgroundWork ? { backgroundWork: options.backgroundWork } : {}),
  });
  await app.ready();
  // Every answer a test receives from this app is checked against the served OpenAPI
  // document: an undocumented status, header or body fails that test.
  const doc = JSON.parse(JSON.stringify(app.swagger()));
  const check = conformanceChecker(doc);
  const inject = app.inject.bind(app);
  (app as { inject: unknown }).inject = async (opts: InjectOptions | string) => {
    const res = await inject(opts as InjectOptions);
    const o = typeof opts === 'string' ? { url: opts, method: 'GET' } : opts;
    // Checked against the route the server saw: inject resolves dot segments (`%2e%2e`) as a
    // browser does, so the answer may be another path's.
    const url = String(o.url ?? o.path ?? '/');
    const problems = check({
      method: String(o.method ?? 'GET'),
      url:
        url.startsWith('/') && URL.canParse(`http://localhost${url}`)
          ? pathAndQuery(`http://localhost${url}`)
          : url,
      statusCode: res.statusCode,
      headers: res.headers,
      rawPayload: res.rawPayload,
    });
    if (problems.length > 0) throw new Error(`answer not as documented:\n  ${problems.join('\n  ')}`);
    return res;
  };
  return {
    app,
    store,
    clock,
    keys,
    admission,
    tiers,
    ratings,
    events,
    async key(tier, mode = 'live', account = 'acme') {
      const acct = await keys.ensureAccount(account);
      return (await keys.create({ accountId: acct.id, tier, mode })).key;
    },
    get(path, key, headers = {}) {
      return app.inject({
        method: 'GET',
        url: path,
        headers: key === undefined ? headers : { authorization: `Bearer ${key}`, ...headers },
      });
    },
    async close() {
      await ratings.stop();
      await events.streams.close();
      await app.close();
      await store.close();
    },
  };
}
