import type { EventStore } from './ports/events.ts';
import type { HistoryStore } from './ports/history.ts';
import type { IdempotencyStore } from './ports/idempotency.ts';
import type { KeyStore } from './ports/keys.ts';
import type { MarketDataStore } from './ports/market-data.ts';
import type { SourceStore } from './ports/sources.ts';
import type { UsageStore } from './ports/usage.ts';
import type { Store } from './types.ts';

/** The ports a store is made of: one implementation of each, sharing one database. */
export interface StorePorts {
  readonly marketData: MarketDataStore;
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly history: HistoryStore;
  readonly sources: SourceStore;
  readonly idempotency: IdempotencyStore;
  readonly events: EventStore;
}

/**
 * A store made of one implementation per port (src/store/sqlite/ and src/store/postgres/ hold
 * one file per port): each method hands the call to its port's implementation, and the class
 * implements Store, so a port method left out here fails the type check. The dialects' stores
 * extend it with their life cycle (migrate, close, ping); measureStoreCalls wraps the methods
 * here once per dialect.
 *
 * The ports are a plain property, not a #private field: a test may derive an object from a store
 * (Object.create) to replace one method, and the others still reach the ports through it.
 */
export abstract class ComposedStore implements Store {
  abstract readonly kind: Store['kind'];
  readonly events: EventStore;
  protected readonly ports: StorePorts;

  constructor(ports: StorePorts) {
    this.ports = ports;
    this.events = ports.events;
  }

  abstract migrate(): Promise<void>;
  abstract compact(): Promise<void>;
  abstract close(): Promise<void>;

  // ---- MarketDataStore -------------------------------------------------------------

  datasetInfo(...args: Parameters<MarketDataStore['datasetInfo']>) {
    return this.ports.marketData.datasetInfo(...args);
  }

  replaceDataset(...args: Parameters<MarketDataStore['replaceDataset']>) {
    return this.ports.marketData.replaceDataset(...args);
  }

  loadMarkets(...args: Parameters<MarketDataStore['loadMarkets']>) {
    return this.ports.marketData.loadMarkets(...args);
  }

  loadVaults(...args: Parameters<MarketDataStore['loadVaults']>) {
    return this.ports.marketData.loadVaults(...args);
  }

  loadPositions(...args: Parameters<MarketDataStore['loadPositions']>) {
    return this.ports.marketData.loadPositions(...args);
  }

  applyPositionChanges(...args: Parameters<MarketDataStore['applyPositionChanges']>) {
    return this.ports.marketData.applyPositionChanges(...args);
  }

  positionChangesSince(...args: Parameters<MarketDataStore['positionChangesSince']>) {
    return this.ports.marketData.positionChangesSince(...args);
  }

  applyMarketChanges(...args: Parameters<MarketDataStore['applyMarketChanges']>) {
    return this.ports.marketData.applyMarketChanges(...args);
  }

  marketChangesSince(...args: Parameters<MarketDataStore['marketChangesSince']>) {
    return this.ports.marketData.marketChangesSince(...args);
  }

  applyChanges(...args: Parameters<MarketDataStore['applyChanges']>) {
    return this.ports.marketData.applyChanges(...args);
  }

  vaultChangesSince(...args: Parameters<MarketDataStore['vaultChangesSince']>) {
    return this.ports.marketData.vaultChangesSince(...args);
  }

  // ---- KeyStore --------------------------------------------------------------------

  createAccount(...args: Parameters<KeyStore['createAccount']>) {
    return this.ports.keys.createAccount(...args);
  }

  findAccountByName(...args: Parameters<KeyStore['findAccountByName']>) {
    return this.ports.keys.findAccountByName(...args);
  }

  getAccount(...args: Parameters<KeyStore['getAccount']>) {
    return this.ports.keys.getAccount(...args);
  }

  createKey(...args: Parameters<KeyStore['createKey']>) {
    return this.ports.keys.createKey(...args);
  }

  createKeyWithin(...args: Parameters<KeyStore['createKeyWithin']>) {
    return this.ports.keys.createKeyWithin(...args);
  }

  findKeyByHash(...args: Parameters<KeyStore['findKeyByHash']>) {
    return this.ports.keys.findKeyByHash(...args);
  }

  getKey(...args: Parameters<KeyStore['getKey']>) {
    return this.ports.keys.getKey(...args);
  }

  listKeys(...args: Parameters<KeyStore['listKeys']>) {
    return this.ports.keys.listKeys(...args);
  }

  revokeKey(...args: Parameters<KeyStore['revokeKey']>) {
    return this.ports.keys.revokeKey(...args);
  }

  setKeyTier(...args: Parameters<KeyStore['setKeyTier']>) {
    return this.ports.keys.setKeyTier(...args);
  }

  moveKey(...args: Parameters<KeyStore['moveKey']>) {
    return this.ports.keys.moveKey(...args);
  }

  keysVersion(...args: Parameters<KeyStore['keysVersion']>) {
    return this.ports.keys.keysVersion(...args);
  }

  keyChangesSince(...args: Parameters<KeyStore['keyChangesSince']>) {
    return this.ports.keys.keyChangesSince(...args);
  }

  // ---- UsageStore ------------------------------------------------------------------

  recordUsage(...args: Parameters<UsageStore['recordUsage']>) {
    return this.ports.usage.recordUsage(...args);
  }

  usageTotals(...args: Parameters<UsageStore['usageTotals']>) {
    return this.ports.usage.usageTotals(...args);
  }

  accountUsageTotals(...args: Parameters<UsageStore['accountUsageTotals']>) {
    return this.ports.usage.accountUsageTotals(...args);
  }

  reserveUsage(...args: Parameters<UsageStore['reserveUsage']>) {
    return this.ports.usage.reserveUsage(...args);
  }

  usageByDay(...args: Parameters<UsageStore['usageByDay']>) {
    return this.ports.usage.usageByDay(...args);
  }

  // ---- HistoryStore ----------------------------------------------------------------

  appendMarketSnapshots(...args: Parameters<HistoryStore['appendMarketSnapshots']>) {
    return this.ports.history.appendMarketSnapshots(...args);
  }

  appendAssetPrices(...args: Parameters<HistoryStore['appendAssetPrices']>) {
    return this.ports.history.appendAssetPrices(...args);
  }

  appendOracleRounds(...args: Parameters<HistoryStore['appendOracleRounds']>) {
    return this.ports.history.appendOracleRounds(...args);
  }

  appendLiquidations(...args: Parameters<HistoryStore['appendLiquidations']>) {
    return this.ports.history.appendLiquidations(...args);
  }

  marketSnapshots(...args: Parameters<HistoryStore['marketSnapshots']>) {
    return this.ports.history.marketSnapshots(...args);
  }

  latestMarketSnapshot(...args: Parameters<HistoryStore['latestMarketSnapshot']>) {
    return this.ports.history.latestMarketSnapshot(...args);
  }

  assetPrices(...args: Parameters<HistoryStore['assetPrices']>) {
    return this.ports.history.assetPrices(...args);
  }

  oracleRounds(...args: Parameters<HistoryStore['oracleRounds']>) {
    return this.ports.history.oracleRounds(...args);
  }

  liquidations(...args: Parameters<HistoryStore['liquidations']>) {
    return this.ports.history.liquidations(...args);
  }

  dailyMarketTotals(...args: Parameters<HistoryStore['dailyMarketTotals']>) {
    return this.ports.history.dailyMarketTotals(...args);
  }

  dailyLiquidationTotals(...args: Parameters<HistoryStore['dailyLiquidationTotals']>) {
    return this.ports.history.dailyLiquidationTotals(...args);
  }

  pruneHistory(...args: Parameters<HistoryStore['pruneHistory']>) {
    return this.ports.history.pruneHistory(...args);
  }

  dropLiquidationsFrom(...args: Parameters<HistoryStore['dropLiquidationsFrom']>) {
    return this.ports.history.dropLiquidationsFrom(...args);
  }

  dropOracleRoundsFrom(...args: Parameters<HistoryStore['dropOracleRoundsFrom']>) {
    return this.ports.history.dropOracleRoundsFrom(...args);
  }

  historyCounts(...args: Parameters<HistoryStore['historyCounts']>) {
    return this.ports.history.historyCounts(...args);
  }

  appendRatingChanges(...args: Parameters<HistoryStore['appendRatingChanges']>) {
    return this.ports.history.appendRatingChanges(...args);
  }

  ratingChanges(...args: Parameters<HistoryStore['ratingChanges']>) {
    return this.ports.history.ratingChanges(...args);
  }

  latestRatingChanges(...args: Parameters<HistoryStore['latestRatingChanges']>) {
    return this.ports.history.latestRatingChanges(...args);
  }

  ratingChangesBetween(...args: Parameters<HistoryStore['ratingChangesBetween']>) {
    return this.ports.history.ratingChangesBetween(...args);
  }

  daySnapshots(...args: Parameters<HistoryStore['daySnapshots']>) {
    return this.ports.history.daySnapshots(...args);
  }

  appendResearchReports(...args: Parameters<HistoryStore['appendResearchReports']>) {
    return this.ports.history.appendResearchReports(...args);
  }

  researchReports(...args: Parameters<HistoryStore['researchReports']>) {
    return this.ports.history.researchReports(...args);
  }

  researchReport(...args: Parameters<HistoryStore['researchReport']>) {
    return this.ports.history.researchReport(...args);
  }

  lastResearchDay(...args: Parameters<HistoryStore['lastResearchDay']>) {
    return this.ports.history.lastResearchDay(...args);
  }

  // ---- SourceStore -----------------------------------------------------------------

  saveSource(...args: Parameters<SourceStore['saveSource']>) {
    return this.ports.sources.saveSource(...args);
  }

  listSources(...args: Parameters<SourceStore['listSources']>) {
    return this.ports.sources.listSources(...args);
  }

  claimIngestion(...args: Parameters<SourceStore['claimIngestion']>) {
    return this.ports.sources.claimIngestion(...args);
  }

  releaseIngestion(...args: Parameters<SourceStore['releaseIngestion']>) {
    return this.ports.sources.releaseIngestion(...args);
  }

  ingestionHolder(...args: Parameters<SourceStore['ingestionHolder']>) {
    return this.ports.sources.ingestionHolder(...args);
  }

  // ---- IdempotencyStore ------------------------------------------------------------

  claimIdempotencyKey(...args: Parameters<IdempotencyStore['claimIdempotencyKey']>) {
    return this.ports.idempotency.claimIdempotencyKey(...args);
  }

  releaseIdempotencyKey(...args: Parameters<IdempotencyStore['releaseIdempotencyKey']>) {
    return this.ports.idempotency.releaseIdempotencyKey(...args);
  }
}
