import { storeCall, timed } from '../metrics.ts';
import type { Store } from './types.ts';

/** The methods of the store's ports: every call a consumer can make (life cycle included). */
const PORT_METHODS = [
  'ping',
  'migrate',
  'datasetInfo',
  'replaceDataset',
  'loadMarkets',
  'loadPositions',
  'createAccount',
  'findAccountByName',
  'getAccount',
  'createKey',
  'createKeyWithin',
  'findKeyByHash',
  'getKey',
  'listKeys',
  'revokeKey',
  'setKeyTier',
  'keysVersion',
  'keyChangesSince',
  'recordUsage',
  'usageTotals',
  'reserveUsage',
  'usageByDay',
  'appendMarketSnapshots',
  'appendAssetPrices',
  'appendOracleRounds',
  'appendLiquidations',
  'marketSnapshots',
  'latestMarketSnapshot',
  'assetPrices',
  'oracleRounds',
  'liquidations',
  'pruneHistory',
  'dropLiquidationsFrom',
  'dropOracleRoundsFrom',
  'historyCounts',
  'appendRatingChanges',
  'ratingChanges',
  'latestRatingChanges',
  'ratingChangesBetween',
  'dailyMarketTotals',
  'dailyLiquidationTotals',
  'daySnapshots',
  'appendResearchReports',
  'researchReports',
  'researchReport',
  'lastResearchDay',
  'saveSource',
  'listSources',
  'claimIngestion',
  'releaseIngestion',
  'claimIdempotencyKey',
  'releaseIdempotencyKey',
] as const satisfies readonly (keyof Store)[];

type PortMethod = (this: Store, ...args: unknown[]) => Promise<unknown>;

/**
 * Times every call of a store class's port methods, at the port: each is recorded in
 * lrds_store_round_trip_seconds{backend, op} (op: the method's name) and, when it rejects, in
 * lrds_store_errors_total. Applied once to the class, so every instance is measured whoever
 * holds it; for SQLite, whose statements run synchronously inside the call, that is the time the
 * call held the process, and for PostgreSQL its round trips (a transaction's included) and the
 * wait for a pooled connection. A call made by another port method (replaceDataset reading
 * datasetInfo) is counted as well, in its own series.
 */
export function measureStoreCalls(cls: { prototype: Store }, backend: Store['kind']): void {
  const proto = cls.prototype as unknown as Record<(typeof PORT_METHODS)[number], PortMethod>;
  for (const op of PORT_METHODS) {
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
