import { hash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type Clock, systemClock } from '../domain/clock.ts';
import type { IdempotentAnswer } from '../domain/records/idempotency.ts';
import type { AccountRecord, KeyCreation, KeyLimits, KeyMode, KeyRecord } from '../domain/records/keys.ts';
import { processMetrics } from '../metrics.ts';
import type { KeyStore } from '../store/ports/keys.ts';
import { BackendUnavailableError } from './admission.ts';
import type { KeyEvents } from './key-events.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `lrds_live_<32 base62>` or `lrds_test_<32 base62>` (docs/decisions.md "Keys and accounts"). */
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

/**
 * Keys are stored and looked up only by this digest; the key itself is never kept. One-shot
 * `crypto.hash`: a fifth of the CPU of a Hash object, and every authenticated request takes one.
 */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function newId(prefix: 'key' | 'acct'): string {
  return `${prefix}_${randomBase62(20)}`;
}

export interface KeyInput {
  accountId: string;
  tier: string;
  mode: KeyMode;
  name?: string | null;
}

export type KeyCheck = { ok: true; key: KeyRecord } | { ok: false };

export interface KeyServiceOptions {
  /** Entries kept in the verification cache (bounded LRU). Default 10,000. */
  cacheSize?: number;
  /** Where key changes are announced to other instances (Redis pub/sub when scaled). */
  events?: KeyEvents;
  /** Creation and revocation times; default the system clock. */
  clock?: Clock;
}

/** A lookup of a hash in flight; an invalidation of that hash makes its answer stale. */
interface Lookup {
  stale: boolean;
}

/**
 * Issues, verifies and revokes keys. Verification is by hash lookup, cached in a bounded LRU
 * (unknown hashes too). A change drops the keys it concerns, and only those, from every
 * instance's cache: at once where it was made, on the announcement over Redis
 * (`invalidate(hashes)`) elsewhere, and at the next `refresh()` (the keys changed since the
 * store's keys version last read) as the backstop. So a key created anywhere works at once,
 * a revoked or re-tiered one is seen within a refresh, and while the store is unreachable
 * every cached key not named by a change keeps working.
 */
export class KeyService {
  private readonly store: KeyStore;
  private readonly events: KeyEvents | undefined;
  private readonly clock: Clock;
  /** By key hash; `record: null` for a hash no key has. */
  private readonly cache: LRUCache<string, { record: KeyRecord | null }>;
  private readonly lookups = new Map<string, Set<Lookup>>();
  /** The store's keys version the cache is current with; -1 before the first refresh. */
  private version = -1;
  private refreshing: Promise<void> | null = null;
  private refreshAgain: Promise<void> | null = null;

  constructor(store: KeyStore, options: KeyServiceOptions = {}) {
    this.store = store;
    this.events = options.events;
    this.cache = new LRUCache({ max: options.cacheSize ?? 10_000 });
    this.clock = options.clock ?? systemClock();
  }

  /**
   * Drops the keys changed in the store since the last refresh (one indexed read). Rejects
   * when the store cannot be reached, dropping nothing: cached keys keep working. Calls made
   * while one runs share one more run after it, so a caller always gets a read made after
   * its call.
   */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      const run = this.catchUp().finally(() => {
        if (this.refreshing === run) this.refreshing = null;
      });
      this.refreshing = run;
      return run;
    }
    this.refreshAgain ??= this.refreshing
      .catch(() => {})
      .then(() => {
        this.refreshAgain = null;
        return this.refresh();
      });
    return this.refreshAgain;
  }

  private async catchUp(): Promise<void> {
    if (this.version < 0) {
      const version = await this.store.keysVersion();
      // Entries cached before the first refresh were read at an unknown version.
      this.invalidateAll();
      this.version = version;
      return;
    }
    const changes = await this.store.keyChangesSince(this.version);
    // A version that went back: not the store the cache was filled from (restored, replaced).
    if (changes.version < this.version) this.invalidateAll();
    else this.invalidate(changes.hashes);
    this.version = changes.version;
  }

  /**
   * Drops the keys with these hashes, and only them. Lookups of them in flight are not cached
   * when they finish (they may have read a key before its revocation).
   */
  invalidate(hashes: Iterable<string>): void {
    for (const hash of hashes) {
      this.cache.delete(hash);
      for (const lookup of this.lookups.get(hash) ?? []) lookup.stale = true;
    }
  }

  /** Drops every key. */
  invalidateAll(): void {
    this.cache.clear();
    for (const pending of this.lookups.values()) for (const lookup of pending) lookup.stale = true;
  }

  async verify(rawKey: string): Promise<KeyCheck> {
    if (!KEY_PATTERN.test(rawKey)) return { ok: false };
    const hash = hashKey(rawKey);
    let record = this.cache.get(hash)?.record;
    processMetrics().keyLookups.inc({ result: record === undefined ? 'miss' : 'hit' });
    if (record === undefined) {
      const lookup: Lookup = { stale: false };
      let pending = this.lookups.get(hash);
      if (!pending) {
        pending = new Set();
        this.lookups.set(hash, pending);
      }
      pending.add(lookup);
      try {
        record = await this.store.findKeyByHash(hash);
      } catch (err) {
        // A key not in the cache cannot be checked while the store is down: 503, not 401.
        throw new BackendUnavailableError(`key store unavailable: ${(err as Error).message}`);
      } finally {
        pending.delete(lookup);
        if (pending.size === 0) this.lookups.delete(hash);
      }
      if (!lookup.stale) this.cache.set(hash, { record });
    }
    if (!record || record.revokedAt !== null) return { ok: false };
    return { ok: true, key: record };
  }

  async ensureAccount(name: string, email: string | null = null): Promise<AccountRecord> {
    const existing = await this.store.findAccountByName(name);
    if (existing) return existing;
    const account: AccountRecord = {
      id: newId('acct'),
      name,
      email,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
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

  /**
   * Creates an account of its own for one customer: named after its id (`acct_…`), since no
   * name was given. What `lrds keys create` and `lrds keys move` do without `--account`.
   */
  async newAccount(): Promise<AccountRecord> {
    const id = newId('acct');
    const account: AccountRecord = {
      id,
      name: id,
      email: null,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    await this.store.createAccount(account);
    return account;
  }

  /** Creates a key and returns it with its record: the only time the whole key exists. */
  async create(input: KeyInput): Promise<{ key: string; record: KeyRecord }> {
    const { key, record } = this.newKey(input);
    await this.store.createKey(record);
    await this.changed(record.hash);
    return { key, record };
  }

  /**
   * Creates a key only if the account stays within `limits` (self-service caps), checked
   * atomically in the store. `limits.creations.since` is derived from `creationsWindowMs`.
   * `answer`: the answer the request will send, given the new key, stored under the request's
   * Idempotency-Key in the transaction that creates it (see Idempotency).
   */
  async createWithin(
    input: KeyInput,
    limits: { maxActive: number | null; maxCreations: number | null; creationsWindowMs: number },
    answer?: (created: { key: string; record: KeyRecord }) => IdempotentAnswer,
  ): Promise<({ ok: true } & { key: string; record: KeyRecord }) | Exclude<KeyCreation, { ok: true }>> {
    const { key, record } = this.newKey(input);
    const storeLimits: KeyLimits = {
      maxActive: limits.maxActive,
      creations:
        limits.maxCreations === null
          ? null
          : {
              since: new Date(this.clock.now() - limits.creationsWindowMs).toISOString(),
              max: limits.maxCreations,
            },
    };
    const result = await this.store.createKeyWithin(record, storeLimits, answer?.({ key, record }));
    if (!result.ok) return result;
    await this.changed(record.hash);
    return { ok: true, key, record };
  }

  private newKey(input: KeyInput): { key: string; record: KeyRecord } {
    const key = generateKey(input.mode);
    const record: KeyRecord = {
      id: newId('key'),
      accountId: input.accountId,
      hash: hashKey(key),
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      mode: input.mode,
      tier: input.tier,
      name: input.name ?? null,
      createdAt: new Date(this.clock.now()).toISOString(),
      revokedAt: null,
    };
    return { key, record };
  }

  async revoke(id: string): Promise<boolean> {
    // The hash names the key in announcements (a key's hash never changes).
    const key = await this.store.getKey(id);
    if (!key) return false;
    const done = await this.store.revokeKey(id, new Date(this.clock.now()).toISOString());
    if (done) await this.changed(key.hash);
    return done;
  }

  async setTier(id: string, tier: string): Promise<boolean> {
    const key = await this.store.getKey(id);
    if (!key) return false;
    const done = await this.store.setKeyTier(id, tier);
    if (done) await this.changed(key.hash);
    return done;
  }

  /** Moves the key to another account: applies to its next requests, on every instance. */
  async move(id: string, accountId: string): Promise<boolean> {
    const key = await this.store.getKey(id);
    if (!key) return false;
    const done = await this.store.moveKey(id, accountId);
    if (done) await this.changed(key.hash);
    return done;
  }

  /** Drops the key from this instance's cache and tells the others (they drop it at once). */
  private async changed(hash: string): Promise<void> {
    this.invalidate([hash]);
    await this.events?.publish([hash]);
  }
}

/** The account `lrds keys create` put every key in when no `--account` was given, before it gave each its own. */
export const SHARED_DEFAULT_ACCOUNT = 'default';

/**
 * The warning for a store whose account `default` looks shared by several customers: it holds
 * more than one active key of one mode (one customer's live key and test key are not enough).
 * Such keys list and revoke each other and share one quota bound and one creation budget.
 * Null when there is nothing to warn of.
 */
export async function crowdedDefaultWarning(
  store: Pick<KeyStore, 'findAccountByName' | 'listKeys'>,
): Promise<{ account: string; keys: number; message: string } | null> {
  const account = await store.findAccountByName(SHARED_DEFAULT_ACCOUNT);
  if (!account) return null;
  const active = (await store.listKeys(account.id)).filter((k) => k.revokedAt === null);
  const live = active.filter((k) => k.mode === 'live').length;
  const test = active.length - live;
  if (live <= 1 && test <= 1) return null;
  return {
    account: SHARED_DEFAULT_ACCOUNT,
    keys: active.length,
    message:
      `account '${SHARED_DEFAULT_ACCOUNT}' holds ${active.length} active keys (${live} live, ${test} test): ` +
      'keys created without --account by earlier versions all went there, and if they belong to several ' +
      "customers, each of them can list and revoke the others' keys, and they share one quota bound. " +
      `Give each customer's keys an account of their own: for every key but one of 'lrds keys list --account ${SHARED_DEFAULT_ACCOUNT}', ` +
      "run 'lrds keys move KEY_ID' (a new account of its own) or 'lrds keys move KEY_ID --account CUSTOMER' " +
      '(the same CUSTOMER for keys of one customer).',
  };
}
