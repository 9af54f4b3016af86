import { storeCall, timed } from '../metrics.ts';
import type { Store } from './types.ts';

/**
 * The store's calls: every port method that answers a promise (its round trips), by name;
 * `close` ends the store and is not a call. Synchronous methods (the write-health state a
 * process holds) do no I/O and are not timed.
 */
type StoreMethod = Exclude<
  {
    [K in keyof Store]-?: NonNullable<Store[K]> extends (...args: never[]) => Promise<unknown> ? K : never;
  }[keyof Store],
  'close'
>;

/**
 * Every method of the store's ports, named once. The type makes the list complete: a method
 * added to a port and not named here fails the type check, so no call goes untimed.
 */
const MEASURED: { readonly [K in StoreMethod]: true } = {
  ping: true,
  migrate: true,
  compact: true,
  datasetInfo: true,
  replaceDataset: true,
  loadMarkets: true,
  loadVaults: true,
  loadPositions: true,
  applyPositionChanges: true,
  positionChangesSince: true,
  applyMarketChanges: true,
  marketChangesSince: true,
  applyChanges: true,
  vaultChangesSince: true,
  createAccount: true,
  findAccountByName: true,
  getAccount: true,
  createKey: true,
  createKeyWithin: true,
  findKeyByHash: true,
  moveKey: true,
  accountUsageTotals: true,
  getKey: true,
  listKeys: true,
  revokeKey: true,
  setKeyTier: true,
  keysVersion: true,
  keyChangesSince: true,
  recordUsage: true,
  usageTotals: true,
  reserveUsage: true,
  usageByDay: true,
  appendMarketSnapshots: true,
  appendAssetPrices: true,
  appendOracleRounds: true,
  appendLiquidations: true,
  marketSnapshots: true,
  latestMarketSnapshot: true,
  assetPrices: true,
  oracleRounds: true,
  liquidations: true,
  pruneHistory: true,
  dropLiquidationsFrom: true,
  dropOracleRoundsFrom: true,
  historyCounts: true,
  appendRatingChanges: true,
  ratingChanges: true,
  latestRatingChanges: true,
  ratingChangesBetween: true,
  dailyMarketTotals: true,
  dailyLiquidationTotals: true,
  daySnapshots: true,
  appendResearchReports: true,
  researchReports: true,
  researchReport: true,
  lastResearchDay: true,
  saveSource: true,
  listSources: true,
  claimIngestion: true,
  releaseIngestion: true,
  ingestionHolder: true,
  claimIdempotencyKey: true,
  releaseIdempotencyKey: true,
};

/** The measured methods' names (exported for the test that checks every one is wrapped). */
export const MEASURED_METHODS = Object.keys(MEASURED) as StoreMethod[];

type PortMethod = (this: Store, ...args: unknown[]) => Promise<unknown>;

/**
 * Times every call of a store class's port methods, at the port: each is recorded in
 * lrds_store_round_trip_seconds{backend, op} (op: the method's name) and, when it rejects, in
 * lrds_store_errors_total. Applied once to the class, so every instance is measured whoever
 * holds it; for SQLite, whose statements run synchronously inside the call, that is the time the
 * call held the process, and for PostgreSQL its round trips (a transaction's included) and the
 * wait for a pooled connection. A port implementation's calls to its own methods (replaceDataset
 * reading datasetInfo) are part of the outer call's time, not series of their own.
 */
export function measureStoreCalls(cls: { prototype: Store }, backend: Store['kind']): void {
  const proto = cls.prototype as unknown as Record<StoreMethod, PortMethod>;
  for (const op of MEASURED_METHODS) {
    const call = proto[op];
    // Resolved on first use: importing a store creates no metrics.
    let series: ReturnType<typeof storeCall> | null = null;
    proto[op] = function measured(this: Store, ...args: unknown[]) {
      const start = performance.now();
      series ??= storeCall(backend, op);
      return timed(series, start, call.apply(this, args));
    };
  }
}
