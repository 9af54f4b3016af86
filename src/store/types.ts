import type { PositionColumns } from '../domain/position-columns.ts';
import type { MarketRecord, PositionRecord } from '../domain/types.ts';

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

export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
}

export type ProgressFn = (done: number, total: number) => void;

/**
 * Persistence for markets, positions, keys and usage. Two implementations (embedded SQLite,
 * PostgreSQL) share one contract test suite.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Creates or upgrades the schema; safe to call on every start. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** Health probe: true when the backend answers (a short timeout, never throws). */
  ping?(): Promise<boolean>;

  datasetInfo(): Promise<DatasetInfo | null>;
  /** Atomically replaces every market and position. Returns the dataset now in the store. */
  replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo>;
  loadMarkets(): Promise<MarketRecord[]>;
  /**
   * Streams positions as blocks of columns, in risk order (health factor ascending, then debt
   * descending) across the whole set; market indexes refer to the order of loadMarkets().
   */
  loadPositions(onBlock: (block: PositionColumns) => void): Promise<void>;

  createAccount(account: AccountRecord): Promise<void>;
  findAccountByName(name: string): Promise<AccountRecord | null>;
  getAccount(id: string): Promise<AccountRecord | null>;
  createKey(key: KeyRecord): Promise<void>;
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeKey(id: string, at: string): Promise<boolean>;
  setKeyTier(id: string, tier: string): Promise<boolean>;
  /** A number that changes whenever any key is created, revoked or changed. */
  keysVersion(): Promise<number>;

  /** Durably records admitted requests. Resolves once they are durable. */
  recordUsage(events: readonly UsageEvent[]): Promise<void>;
  usageTotals(keyId: string, day: string): Promise<UsageTotals>;
  usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]>;
}
