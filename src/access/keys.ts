import { createHash, randomBytes } from 'node:crypto';
import type { AccountRecord, KeyMode, KeyRecord, Store } from '../store/types.ts';
import { BackendUnavailableError } from './admission.ts';
import type { KeyEvents } from './key-events.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `lrds_live_<32 base62>` or `lrds_test_<32 base62>` (DECISIONS D10). */
export const KEY_PATTERN = /^lrds_(live|test)_[0-9A-Za-z]{32}$/;
export const KEY_PREFIX_LENGTH = 14;

/** Uniform base62 characters from the CSPRNG (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateKey(mode: KeyMode): string {
  return `lrds_${mode}_${randomBase62(32)}`;
}

/** Keys are stored and looked up only by this digest; the key itself is never kept. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function newId(prefix: 'key' | 'acct'): string {
  return `${prefix}_${randomBase62(20)}`;
}

export type KeyCheck = { ok: true; key: KeyRecord } | { ok: false };

export interface KeyServiceOptions {
  /** Entries kept in the verification cache (bounded LRU). Default 10,000. */
  cacheSize?: number;
  /** Where key changes are announced to other instances (Redis pub/sub when scaled). */
  events?: KeyEvents;
}

/**
 * Issues, verifies and revokes keys. Verification is by hash lookup, cached in a bounded LRU
 * that is dropped whenever the store's keys version changes (`refresh()`), so a key created
 * anywhere works at once and a revoked or re-tiered one is seen on the next refresh.
 */
export class KeyService {
  private readonly store: Store;
  private readonly events: KeyEvents | undefined;
  private readonly cacheSize: number;
  private readonly cache = new Map<string, KeyRecord | null>();
  private version = -1;
  private generation = 0;

  constructor(store: Store, options: KeyServiceOptions = {}) {
    this.store = store;
    this.events = options.events;
    this.cacheSize = options.cacheSize ?? 10_000;
  }

  /** Drops the cache if any key changed since the last call. Cheap: one counter read. */
  async refresh(): Promise<void> {
    const v = await this.store.keysVersion();
    if (v !== this.version) {
      this.invalidate();
      this.version = v;
    }
  }

  /**
   * Drops the cache. Lookups that started before are not cached when they finish (they may
   * have read a key before its revocation): `generation` tells them apart.
   */
  invalidate(): void {
    this.cache.clear();
    this.generation++;
  }

  async verify(rawKey: string): Promise<KeyCheck> {
    if (!KEY_PATTERN.test(rawKey)) return { ok: false };
    const hash = hashKey(rawKey);
    let record = this.cache.get(hash);
    if (record === undefined) {
      const generation = this.generation;
      try {
        record = await this.store.findKeyByHash(hash);
      } catch (err) {
        // A key not in the cache cannot be checked while the store is down: 503, not 401.
        throw new BackendUnavailableError(`key store unavailable: ${(err as Error).message}`);
      }
      if (generation === this.generation) {
        if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(hash, record);
      }
    } else {
      // least recently used first out: a hit moves the entry to the end
      this.cache.delete(hash);
      this.cache.set(hash, record);
    }
    if (!record || record.revokedAt !== null) return { ok: false };
    return { ok: true, key: record };
  }

  async ensureAccount(name: string, email: string | null = null): Promise<AccountRecord> {
    const existing = await this.store.findAccountByName(name);
    if (existing) return existing;
    const account: AccountRecord = { id: newId('acct'), name, email, createdAt: new Date().toISOString() };
    try {
      await this.store.createAccount(account);
      return account;
    } catch (err) {
      // Another process created it at the same moment.
      const raced = await this.store.findAccountByName(name);
      if (raced) return raced;
      throw err;
    }
  }

  /** Creates a key and returns it with its record: the only time the whole key exists. */
  async create(input: {
    accountId: string;
    tier: string;
    mode: KeyMode;
    name?: string | null;
  }): Promise<{ key: string; record: KeyRecord }> {
    const key = generateKey(input.mode);
    const record: KeyRecord = {
      id: newId('key'),
      accountId: input.accountId,
      hash: hashKey(key),
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      mode: input.mode,
      tier: input.tier,
      name: input.name ?? null,
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    await this.store.createKey(record);
    await this.changed();
    return { key, record };
  }

  async revoke(id: string): Promise<boolean> {
    const done = await this.store.revokeKey(id, new Date().toISOString());
    await this.changed();
    return done;
  }

  async setTier(id: string, tier: string): Promise<boolean> {
    const done = await this.store.setKeyTier(id, tier);
    await this.changed();
    return done;
  }

  /** Drops this instance's cache and tells the others (they drop theirs within a second). */
  private async changed(): Promise<void> {
    this.invalidate();
    await this.events?.publish();
  }
}
