import { BackendUnavailableError } from '../access/admission.ts';
import type { PositionColumns } from '../domain/position-columns.ts';
import type { MarketRecord, PositionRecord } from '../domain/types.ts';

/**
 * The store could not be reached, or did not answer in time: nothing was read, and whether a
 * write took effect is unknown. A BackendUnavailableError, so an HTTP request that needed the
 * store is answered 503 SERVICE_UNAVAILABLE with Retry-After, never 500.
 */
export class StoreUnavailableError extends BackendUnavailableError {
  override name = 'StoreUnavailableError';
}

/** Where a dataset came from. `sandbox` data is generated and always served as `snapshot`. */
export type DatasetKind = 'sandbox' | 'live';

export interface DatasetInfo {
  kind: DatasetKind;
  profile: string;
  seed: number | null;
  /** Epoch ms when the data was last refreshed from its source (for sandbox data: when it was seeded). */
  refreshedAt: number;
  marketCount: number;
  positionCount: number;
  /** Bumped each time the dataset is replaced, so read models know when to reload. */
  version: number;
}

export interface DatasetInput {
  kind: DatasetKind;
  profile: string;
  seed: number | null;
  markets: readonly MarketRecord[];
  positions: Iterable<PositionRecord>;
  positionCount: number;
  /**
   * Write only if the store holds no dataset yet, checked under the write lock: several
   * instances starting at once on an empty database seed it once.
   */
  onlyIfEmpty?: boolean;
}

export type KeyMode = 'live' | 'test';

export interface AccountRecord {
  id: string;
  name: string;
  email: string | null;
  createdAt: string;
}

export interface KeyRecord {
  id: string;
  accountId: string;
  /** sha256 hex of the whole key; the key itself is never stored. */
  hash: string;
  /** The first 14 characters of the key, e.g. `lrds_live_AbCd`. */
  prefix: string;
  mode: KeyMode;
  tier: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** Limits checked, atomically with the insert, when an account creates a key for itself. */
export interface KeyLimits {
  /**
   * Active (unrevoked) keys of the new key's tier and mode the account may hold, this one
   * included; null = no limit. Live and test keys are capped apart, so test keys cannot use up
   * the live ones' room.
   */
  maxActive: number | null;
  /** Keys of the new key's mode the account may have created since `since` (ISO 8601), revoked ones included; null = no limit. */
  creations: { since: string; max: number } | null;
}

export type KeyCreation =
  | { ok: true }
  | { ok: false; reason: 'TOO_MANY_KEYS'; active: number }
  /** `freedBy`: the creation time whose leaving the window frees a place. */
  | { ok: false; reason: 'TOO_MANY_CREATIONS'; created: number; freedBy: string };

/** What changed among the keys since a keys version (`Store.keyChangesSince`). */
export interface KeyChanges {
  /** The current keys version: the `since` of the next call. */
  version: number;
  /** Hashes of the keys created, revoked or re-tiered after `since` (each once). */
  hashes: string[];
}

/** One durable count of an admitted request (DECISIONS D7). */
export interface UsageEvent {
  keyId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Route pattern, e.g. `GET /api/v1/markets/:marketId`. */
  endpoint: string;
  /** False when the request was refused by the daily quota (the monthly counter is not touched). */
  countedMonthly: boolean;
}

export interface UsageTotals {
  dayUsed: number;
  monthUsed: number;
}

/** A counted request to decide against its quotas in the store itself (see Store.reserveUsage). */
export interface UsageReservation extends Omit<UsageEvent, 'countedMonthly'> {
  /** Daily and monthly quotas of the key's tier; null = unlimited. */
  daily: number | null;
  monthly: number | null;
}

/** The counts after a reservation: the request included (in the month only if countedMonthly). */
export interface ReservedUsage {
  dayUsed: number;
  monthUsed: number;
  /** False when the daily quota refused it (DECISIONS D7: the month is then not counted). */
  countedMonthly: boolean;
}

export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
}

export type ProgressFn = (done: number, total: number) => void;

/**
 * Persistence for markets, positions, keys and usage. Two implementations (embedded SQLite,
 * PostgreSQL) share one contract test suite. Consumers hold the narrow port they need (below),
 * never the whole store: the read models a MarketDataStore, keys a KeyStore, admission a
 * UsageStore, the HTTP layer only what it reads (HttpStore: no writes).
 */

/** What a probe of the store needs. */
export interface StoreHealth {
  readonly kind: 'sqlite' | 'postgres';
  /** Health probe: true when the backend answers (a short timeout, never throws). */
  ping?(): Promise<boolean>;
}

/** Market data: the dataset and its markets and positions (the read models, seeding). */
export interface MarketDataStore {
  datasetInfo(): Promise<DatasetInfo | null>;
  /** Atomically replaces every market and position. Returns the dataset now in the store. */
  replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo>;
  loadMarkets(): Promise<MarketRecord[]>;
  /**
   * Streams positions as blocks of columns, in risk order (health factor ascending, then debt
   * descending) across the whole set; market indexes refer to the order of loadMarkets().
   */
  loadPositions(onBlock: (block: PositionColumns) => void): Promise<void>;
}

/** Keys and accounts (KeyService, the CLI). */
export interface KeyStore {
  createAccount(account: AccountRecord): Promise<void>;
  findAccountByName(name: string): Promise<AccountRecord | null>;
  getAccount(id: string): Promise<AccountRecord | null>;
  createKey(key: KeyRecord): Promise<void>;
  /**
   * Creates the key only if the account stays within `limits`, checked and written in one
   * transaction serialized per account (two concurrent creations cannot both pass a cap).
   */
  createKeyWithin(key: KeyRecord, limits: KeyLimits): Promise<KeyCreation>;
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeKey(id: string, at: string): Promise<boolean>;
  setKeyTier(id: string, tier: string): Promise<boolean>;
  /** A number that grows whenever any key is created, revoked or changed. */
  keysVersion(): Promise<number>;
  /**
   * The keys changed after keys version `since`, and the current version, read together (so a
   * reader that asks again with `version` misses nothing). A `since` above the current version
   * means the store is not the one `since` came from: the caller must assume every key changed.
   */
  keyChangesSince(since: number): Promise<KeyChanges>;
}

/** Usage counts and quota decisions (admission backends, the client routes' usage). */
export interface UsageStore {
  /**
   * Durably records admitted requests, as batch `batchId` (see newUsageBatchId()): the counts
   * and the id are written in one transaction, and a batch whose id is already recorded is
   * skipped. So a writer that got an error (a deadline passed, the COMMIT may still have
   * happened) retries the same events under the same id, never merged with newer ones, and
   * each request is counted once. Ids are remembered for USAGE_BATCH_RETENTION_MS. Resolves
   * once the batch is durable (applied now or before).
   */
  recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void>;
  usageTotals(keyId: string, day: string): Promise<UsageTotals>;
  /**
   * Counts each request in order and decides it against its quotas as DECISIONS D7 does
   * (daily first; refused daily, the month is not counted), atomically per key with respect
   * to other reservations from any process: the stored counts are the authority, as while
   * Redis is unreachable. Durable once resolved.
   *
   * `batchId` is recorded with the counts, in the same transaction, in the ids of
   * recordUsage(): a reservation that failed without knowing whether it was applied is made
   * good by writing its requests' counts with recordUsage() under the same id (applied only if
   * the reservation was not). A reservation batch already applied changes nothing and answers
   * as replayedReservations() says.
   */
  reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]>;
  usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]>;
}

/** What the HTTP layer reads from the store: its health, keys and accounts, usage history. No writes. */
export type HttpStore = StoreHealth &
  Pick<KeyStore, 'getAccount' | 'getKey' | 'listKeys' | 'keysVersion'> &
  Pick<UsageStore, 'usageByDay'>;

/** The whole store: every port, plus its life cycle. */
export interface Store extends StoreHealth, MarketDataStore, KeyStore, UsageStore {
  /** Creates or upgrades the schema; safe to call on every start. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}
