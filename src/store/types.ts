import type { EventStore } from './ports/events.ts';
import type { StoreHealth } from './ports/health.ts';
import type { HistoryStore } from './ports/history.ts';
import type { IdempotencyStore } from './ports/idempotency.ts';
import type { KeyStore } from './ports/keys.ts';
import type { MarketDataStore } from './ports/market-data.ts';
import type { SourceStore } from './ports/sources.ts';
import type { UsageStore } from './ports/usage.ts';

/** What the HTTP layer reads from the store: its health, keys and accounts, usage history. No writes. */
export type HttpStore = StoreHealth &
  Pick<KeyStore, 'getAccount' | 'getKey' | 'listKeys' | 'keysVersion'> &
  Pick<UsageStore, 'usageByDay'> &
  Pick<SourceStore, 'listSources'>;

/**
 * Persistence for markets, positions, keys, usage, history and source checkpoints: every port
 * (src/store/ports/), plus its life cycle. Two implementations (embedded SQLite, PostgreSQL)
 * share one contract test suite. Consumers hold the narrow port they need, never the whole
 * store: the read models a MarketDataStore, keys a KeyStore, admission a UsageStore, the ingest
 * a HistoryStore and a SourceStore, the HTTP layer only what it reads (HttpStore: no writes).
 * The records the ports take and give are in src/domain/records/.
 */
export interface Store
  extends StoreHealth,
    MarketDataStore,
    KeyStore,
    UsageStore,
    HistoryStore,
    SourceStore,
    IdempotencyStore {
  /** The risk events' outbox: subscriptions, events and webhook deliveries (src/store/ports/events.ts). */
  readonly events: EventStore;
  /** Creates or upgrades the schema; safe to call on every start. */
  migrate(): Promise<void>;
  /**
   * After a large write: gives back the room it left behind. SQLite copies its write-ahead log
   * into the file and truncates it (the folder does not keep the log's high-water mark);
   * PostgreSQL has nothing to do (its autovacuum). Waits for other writers; never throws for a
   * busy file (the next call does it).
   */
  compact(): Promise<void>;
  close(): Promise<void>;
}
